"""The fan-out benchmark: what a post costs and how soon it reaches its followers.

    .venv/bin/python bench/fanout.py             # one server (about 6 minutes)
    .venv/bin/python bench/fanout.py --cluster   # a local 3-master Redis Cluster
    .venv/bin/python bench/fanout.py --tiny      # end to end in seconds

Starts its own Redis (AOF everysec, as in production), the site under the server the
README deploys (granian; `--server gunicorn` for gunicorn's sync workers) and
FANOUT_WORKERS `manage.py fanout_worker` processes, all with production
settings and FANOUT_PUSH_MAX above every author measured (so every author is
pushed), then measures:

1. **Post latency and time to home against follower count** (10 ... 1,000,000
   synthetic followers, every one active): `POST /post/` over HTTP, then a sample of
   200 followers' homes (spread over the follow order) read every 10 ms until each
   holds the status: time to home p50/p99 from the post's answer, fan-out
   inserts/s (followers / time until the last home) and Redis CPU per home.
2. **The same under load**: wrk reads other users' home pages (seeded users) while
   10 posters post in a loop and one 100,000-follower author posts; post latency
   p50/p99, home p99 against the same wrk run without the posts (idle). Three
   runs: the home saturated (wrk as fast as answered) with posters back to back,
   then pausing 200 ms; and the home offered `--home-load` (0.5) of what it served
   saturated (the median of those runs' four idle readings), the posters pausing:
   a site with headroom, the same load offered idle and busy, so its p99s compare
   the fan-out's cost, not a longer queue.
3. **A home's cost against the pulled authors it merges** (0, 1, 5, 10, 20): wrk on
   the home of readers who follow that many authors in pull mode; req/s and Redis
   CPU per page.
4. **The ceiling**: `redis-benchmark -P 16` ZADDs on the same server (per second
   and Redis CPU per ZADD).

Prints a Markdown report and writes it (and its data as JSON) to bench/out/fanout.md.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path[0] = str(ROOT)

from bench import load, servers, store, traffic  # noqa: E402

SYNTHETIC = 10_000_000  # first uid of the synthetic followers, far above real users
SAMPLE = 200
CSRF = "b" * 32


def synthetic_followers(author_id: int, count: int) -> list[int]:
    """The first `count` synthetic readers follow the author; each is active. These
    setup writes are then rewritten out of the AOF (`store.persistence_settled`), so
    that they fork no rewrite inside the windows the benchmark times."""
    from accounts.services import seen_stamp_queue
    from config.pipelines import pipeline_run
    from timeline import keys

    uids = list(range(SYNTHETIC, SYNTHETIC + count))
    for start in range(0, count, 2000):
        chunk = uids[start : start + 2000]

        def write(pipe, chunk=chunk) -> None:
            pipe.zadd(keys.followers(author_id), {u: 1 for u in chunk})
            for u in chunk:
                pipe.zadd(keys.following(u), {author_id: 1})
                seen_stamp_queue(pipe, uid=u)

        pipeline_run(write, confirm=False)
    store.persistence_settled()
    return uids


def login_cookie(uid: int) -> str:
    from django.conf import settings

    from accounts.services import session_create

    credentials = session_create(uid=uid)
    return f"{settings.AUTH_COOKIE_NAME}={credentials.cookie_value()}; csrftoken={CSRF}"


def http_post(base: str, cookie: str, text: str) -> float:
    """POST a status over HTTP; return how long the answer took (seconds)."""
    body = f"csrfmiddlewaretoken={CSRF}&text={urllib.request.quote(text)}".encode()
    request = urllib.request.Request(
        base + "/post/",
        data=body,
        headers={
            "Cookie": cookie,
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    started = time.perf_counter()
    try:
        opener.open(request, timeout=30)
        code = 200
    except urllib.error.HTTPError as answer:
        code = answer.code
    took = time.perf_counter() - started
    if code != 302:
        raise RuntimeError(f"POST /post/ answered {code}")
    return took


def newest_status(author_id: int) -> int:
    from config.redis import get_redis
    from timeline import keys

    return int(get_redis().zrevrange(keys.posts(author_id), 0, 0)[0])


def time_to_homes(sid: int, sample: list[int], since: float, timeout: float) -> list:
    """Seconds from `since` until each sampled home held the status (None: never).

    The sample is in the order the fan-out walks (the followers zset's), so each
    read asks only for the next 20 homes not yet reached: asking for all 200 every
    10 ms took a tenth of a core from the machine for as long as the fan-out ran.
    A home reached ahead of its turn is timed when its turn comes (later, never
    earlier, than it was reached)."""
    from config.pipelines import pipeline_run
    from timeline import keys

    reached: dict[int, float] = {}
    deadline = since + timeout
    while len(reached) < len(sample) and time.perf_counter() < deadline:
        waiting = [u for u in sample if u not in reached][:20]
        replies = pipeline_run(
            lambda pipe, w=waiting: [pipe.zscore(keys.home(u), sid) for u in w],
            confirm=False,
        )
        now = time.perf_counter()
        for uid, score in zip(waiting, replies, strict=True):
            if score is not None:
                reached[uid] = now - since
        time.sleep(0.01)
    return [reached.get(u) for u in sample]


def spread(uids: list[int], n: int) -> list[int]:
    """About `n` of the uids, evenly spaced, the first and the last among them."""
    step = max(1, len(uids) // n)
    return list(dict.fromkeys([*uids[::step][: n - 1], uids[-1]]))


def one_post(base: str, author, followers: list[int], *, timeout: float) -> dict:
    """One post's latency and time to home, and the Redis CPU it took per follower
    until the last sampled home held it (the sampler's reads included: a few
    hundredths of a microsecond per follower at 100,000). A post whose sampled
    homes were not all reached has no rate, and no CPU figure either."""
    cookie = login_cookie(author.id)
    cpu = store.redis_cpu_seconds()
    latency = http_post(base, cookie, f"to {len(followers)} followers")
    answered = time.perf_counter()
    sid = newest_status(author.id)
    times = time_to_homes(sid, spread(followers, SAMPLE), answered, timeout)
    cpu = store.redis_cpu_seconds() - cpu
    done = [t for t in times if t is not None]
    last = max(done) if len(done) == len(times) else None
    return {
        "followers": len(followers),
        "post_ms": latency * 1000,
        "home_p50_s": traffic.pct(done, 50),
        "home_p99_s": traffic.pct(done, 99),
        "all_homes_s": last,
        "missed": len(times) - len(done),
        "inserts_per_s": len(followers) / last if last else None,
        "redis_cpu_us_per_home": cpu / len(followers) * 1e6 if last else None,
    }


def post_latency_by_size(
    base: str, sizes: list[int], posts: int, ceiling: Callable[[], dict]
) -> list[dict]:
    """Each size's posts; from 100,000 followers on, each post is followed by a
    `ceiling()` (`redis-benchmark -P 16` ZADD) in the same seconds, so that the
    fan-out's rate is compared with the server's as the machine was then, and its
    Redis CPU per home with the server's per ZADD (on a shared machine, CPU time
    varies less from one minute to the next than a rate does)."""
    from accounts.services import user_create

    rows = []
    for size in sizes:
        author = user_create(username=f"big{size}", password="x" * 12)
        followers = synthetic_followers(author.id, size)
        runs = []
        for _ in range(posts if size < 1_000_000 else 1):
            forks = store.redis_forks()
            run = one_post(base, author, followers, timeout=max(60.0, size / 5000))
            run["forks"] = store.redis_forks() - forks
            if size >= 100_000:
                p16 = ceiling()
                run["zadd_p16_per_s"] = p16["rate"]
                run["vs_p16"] = (
                    run["inserts_per_s"] / p16["rate"]
                    if p16["rate"] and run["inserts_per_s"]
                    else None
                )
                run["zadd_p16_cpu_us"] = p16["cpu_us"]
                run["vs_p16_cpu"] = (
                    p16["cpu_us"] / run["redis_cpu_us_per_home"]
                    if p16["cpu_us"] and run["redis_cpu_us_per_home"]
                    else None
                )
            runs.append(run)
        row = {
            "followers": size,
            "post_ms_median": statistics.median(r["post_ms"] for r in runs),
            "post_ms_max": max(r["post_ms"] for r in runs),
            "home_p50_s": statistics.median(r["home_p50_s"] or 0 for r in runs),
            "home_p99_s": statistics.median(r["home_p99_s"] or 0 for r in runs),
            "missed": sum(r["missed"] for r in runs),
            "inserts_per_s": statistics.median(r["inserts_per_s"] or 0 for r in runs),
            "vs_p16": statistics.median(ratios)
            if (ratios := [r["vs_p16"] for r in runs if r.get("vs_p16")])
            else None,
            "redis_cpu_us_per_home": statistics.median(cpus)
            if (cpus := [c for r in runs if (c := r["redis_cpu_us_per_home"])])
            else None,
            "vs_p16_cpu": statistics.median(ratios)
            if (ratios := [r["vs_p16_cpu"] for r in runs if r.get("vs_p16_cpu")])
            else None,
            "runs": runs,
        }
        rows.append(row)
        print(f"  {size:>9,} followers: {json.dumps(row['runs'])}", file=sys.stderr)
    return rows


def under_load(
    base: str,
    workdir: Path,
    big,
    big_followers: list[int],
    readers,
    *,
    pause: float = 0.0,
    warm: bool = True,
    home_rate: float | None = None,
):
    """Home p99 idle and while 10 posters (each pausing `pause` s between posts)
    and one big author post. The home is read as fast as wrk's 20 connections
    can (the server saturated), or, with `home_rate`, requested that many times a
    second whatever the answers take (`bench.traffic.open_loop`): the same load
    offered idle and busy, on a site with headroom, as one is run. The posters are
    timed by `bench.traffic.posters`. The idle home is measured before the posts and
    again once the big post reached its sampled homes: on a shared machine the idle
    figure itself can move by several times within a minute, and a busy p99 read
    against one idle run alone would report that as the fan-out's cost."""
    from bench.load import Page
    from bench.pages import WRK_GET

    cookie = login_cookie(readers[0]).split(";")[0]
    home = Page("home", "/", WRK_GET.format(cookie=cookie))
    seconds = 10

    def home_load() -> dict:
        forks = store.redis_forks()
        if home_rate:
            run = traffic.run_in_process(
                traffic.open_loop, base, "/", cookie, home_rate, seconds
            )()
        else:
            run = load.wrk_run(
                base, home, seconds=seconds, connections=20, workdir=workdir
            )
        # A snapshot or an AOF rewrite in the window: its child took a core.
        return {**run, "forks": store.redis_forks() - forks}

    if warm:
        home_load()
    idle = home_load()
    posts = traffic.run_in_process(
        traffic.posters,
        base,
        [login_cookie(uid) for uid in readers[1:11]],
        CSRF,
        pause,
        seconds,
    )
    result: dict = {}

    def big_post() -> None:
        time.sleep(2)
        result.update(one_post(base, big, big_followers, timeout=60))

    big_thread = threading.Thread(target=big_post, daemon=True)
    big_thread.start()
    busy = home_load()
    posted = posts()
    big_thread.join(timeout=90)
    if set(posted["codes"]) != {"302"}:
        raise RuntimeError(f"posters were answered {posted['codes']}")
    idle_after = home_load()
    return {
        "pause_s": pause,
        "home_rate": home_rate,
        "home_idle": idle,
        "home_idle_after": idle_after,
        "home_busy": busy,
        "posts": posted["requests"],
        "post_p50_ms": posted["p50_ms"],
        "post_p99_ms": posted["p99_ms"],
        "post_max_ms": posted["max_ms"],
        "big_post": result,
    }


def offered_rate(saturated: list[dict], share: float) -> dict:
    """`share` of what the home served saturated and idle: of the median of the
    readings in `saturated` (`under_load`'s results, before and after each run's
    posts). One reading moves by a third from run to run on a shared machine, and
    half of a high one offered more than the cores had left (docs/BENCHMARKS.md)."""
    readings = sorted(
        run[window]["rps"]
        for run in saturated
        for window in ("home_idle", "home_idle_after")
        if run.get(window) and run[window]["rps"] > 0
    )
    if not readings:
        raise RuntimeError("the saturated home served nothing: no rate to offer")
    return {"rate": share * statistics.median(readings), "readings": readings}


def pulled_home_cost(
    base: str, workdir: Path, counts: list[int], seconds: int, rounds: int
) -> list[dict]:
    """Req/s of the home of readers who follow `k` authors in pull mode."""
    from accounts.services import user_create
    from bench.load import Page
    from bench.pages import WRK_GET
    from config.redis import get_redis
    from timeline import fanout, keys, services

    r = get_redis()
    stars = []
    for i in range(max(counts)):
        star = user_create(username=f"pulled{i}", password="x" * 12)
        for n in range(40):
            services.status_create(author=star, text=f"pulled {i} status {n}")
        r.set(keys.fanout_mode(star.id), "pull")
        fanout._outbox_fill(star.id)
        stars.append(star)
    pages = []
    for k in counts:
        reader = user_create(username=f"merges{k}", password="x" * 12)
        pushed = user_create(username=f"pushed{k}", password="x" * 12)
        services.follow_create(follower=reader, followee_id=pushed.id)
        for n in range(40):
            services.status_create(author=pushed, text=f"pushed status {n}")
        for star in stars[:k]:
            services.follow_create(follower=reader, followee_id=star.id)
            r.zadd(keys.pulls(reader.id), {star.id: 1})
        cookie = login_cookie(reader.id).split(";")[0]
        pages.append((k, Page(f"home merging {k}", "/", WRK_GET.format(cookie=cookie))))
    fanout.run_pending(sweep=True)
    runs: dict[int, list[dict]] = {k: [] for k in counts}
    for _, page in pages:
        load.wrk_run(base, page, seconds=2, connections=20, workdir=workdir)
    for _ in range(rounds):
        for k, page in pages:
            cpu = store.redis_cpu_seconds()
            result = load.wrk_run(
                base, page, seconds=seconds, connections=20, workdir=workdir
            )
            result["redis_cpu_us_per_req"] = (
                (store.redis_cpu_seconds() - cpu) / max(result["requests"], 1) * 1e6
            )
            runs[k].append(result)
    return [
        {
            "pulled": k,
            "rps": statistics.median(x["rps"] for x in runs[k]),
            "p99_ms": statistics.median(x["p99_ms"] for x in runs[k]),
            "redis_cpu_us_per_req": statistics.median(
                x["redis_cpu_us_per_req"] for x in runs[k]
            ),
            "non_2xx_3xx": sum(x["non_2xx_3xx"] for x in runs[k]),
        }
        for k in counts
    ]


def zadd_p16(redis_socket: Path | None, run: int = 0) -> dict:
    """`redis-benchmark -P 16` ZADDs on the same server: per second ("rate") and
    the server's CPU per ZADD ("cpu_us"; every master's on a cluster, where only one
    works), on the server on `redis_socket`, or (None) the cluster master of one
    hash tag, all keys in it. Each `run` writes keys of its own: fresh sorted sets,
    as a fan-out's synthetic homes are (adding to an existing set costs less than
    creating one). None for both without `redis-benchmark`."""
    if not shutil.which("redis-benchmark"):
        return {"rate": None, "cpu_us": None}
    if redis_socket:
        target, key = ["-s", str(redis_socket)], f"bench:p16:{run}:__rand_int__"
    else:
        from config.redis import get_redis

        node = get_redis().get_node_from_key("bench:p16:{q0}")
        target = ["-h", node.host, "-p", str(node.port)]
        key = f"bench:p16:{{q0}}:{run}:__rand_int__"
    count = 1_000_000
    cpu = store.redis_cpu_seconds()
    out = subprocess.run(
        ["redis-benchmark", *target, "-n", str(count), "-P", "16", "-r", "1000000",
         "--csv", "zadd", key, "1", "__rand_int__"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    cpu = store.redis_cpu_seconds() - cpu
    rows = list(csv.DictReader(out.splitlines()))
    rate = rows[-1].get("rps") if rows else None
    _forget(key.replace("__rand_int__", "*"))
    return {"rate": float(rate) if rate else None, "cpu_us": cpu / count * 1e6}


def _forget(pattern: str) -> None:
    """Delete a ceiling's keys (about 630,000 sorted sets), so that the next post's
    fan-out meets the dataset as the fan-outs left it: a keyspace a few times larger,
    with snapshots and AOF rewrites to match, slowed the posts measured after it."""
    from config.redis import get_redis, is_cluster

    client = get_redis()
    options = {"match": pattern, "count": 10_000}
    if is_cluster(client):  # every key of a ceiling is in one slot ({q0})
        options["target_nodes"] = client.get_node_from_key(pattern.split("*")[0])
    batch: list[str] = []
    for key in client.scan_iter(**options):
        batch.append(key)
        if len(batch) == 10_000:
            client.unlink(*batch)
            batch.clear()
    if batch:
        client.unlink(*batch)


def start_fanout_workers(env: dict, count: int, stack: contextlib.ExitStack) -> None:
    """Workers at a lower CPU priority than the web server, as the README's service
    unit runs them (Nice=10): background work yields the CPU to pages."""
    for _ in range(count):
        proc = subprocess.Popen(
            ["nice", "-n", "10", sys.executable, "manage.py", "fanout_worker"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        stack.callback(servers.stop, proc)


def collect(args: argparse.Namespace, stack: contextlib.ExitStack) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="retwis-fanout-"))
    stack.callback(shutil.rmtree, tmp, ignore_errors=True)
    cluster = None
    if args.cluster:
        from tests.cluster import start_cluster

        cluster = start_cluster(masters=3, persist=True)
        stack.callback(cluster.stop)
        redis_url = cluster.url
    else:
        redis_url, redis_proc = servers.start_redis(tmp / "redis")
        stack.callback(servers.stop, redis_proc)
    env = {
        **servers.site_env(
            redis_url=redis_url, static_root=tmp / "static", cluster=args.cluster
        ),
        "FANOUT_PUSH_MAX": str(10 * max(args.sizes)),
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management.base import OutputWrapper

    from timeline.seeding import Progress, seed

    seed(
        users=args.users,
        follows_per_user=20,
        statuses_per_user=10,
        password="bench-password",
        random_seed=7,
        progress=Progress(OutputWrapper(sys.stderr)),
    )
    readers = list(range(1, 12))
    servers.collectstatic(env=env, cwd=ROOT)
    if args.server == "granian":
        web, base = servers.start_granian(
            app="config.wsgi:application", workers=args.workers, env=env, cwd=ROOT
        )
    else:
        web, base = servers.start_gunicorn(
            app="config.wsgi", workers=args.workers, env=env, cwd=ROOT, run_dir=tmp
        )
    stack.callback(servers.stop, web)
    start_fanout_workers(env, args.fanout_workers, stack)
    data: dict = {
        "environment": {
            "redis": "3-master cluster" if args.cluster else "one server",
            "redis_version": store.redis_version(),
            "cores": os.cpu_count(),
            "web_workers": args.workers,
            "server": args.server,
            "fanout_workers": args.fanout_workers,
            "batch": settings.FANOUT_BATCH,
        }
    }
    from accounts.services import user_create

    warm = user_create(username="warm", password="x" * 12)
    for n in range(4 * args.workers):  # every web worker has loaded the post path
        http_post(base, login_cookie(warm.id), f"warm {n}")
    print("post latency by follower count...", file=sys.stderr)
    socket = None if cluster else tmp / "redis" / "redis.sock"
    ceilings = iter(range(1, 1000))
    data["by_size"] = post_latency_by_size(
        base, args.sizes, args.posts, lambda: zadd_p16(socket, next(ceilings))
    )
    print("under load...", file=sys.stderr)
    data["under_load"] = []
    for n, pause in enumerate((0.0, 0.2)):
        big = user_create(username=f"loaded{n}", password="x" * 12)
        big_followers = synthetic_followers(big.id, args.load_followers)
        data["under_load"].append(
            under_load(base, tmp, big, big_followers, readers, pause=pause, warm=n == 0)
        )
    if args.home_load:
        # The same paced posters, the home offered a share of what it served idle
        # and saturated in this run (the median of its readings).
        offered = offered_rate(data["under_load"], args.home_load)
        big = user_create(username="loaded_paced", password="x" * 12)
        big_followers = synthetic_followers(big.id, args.load_followers)
        data["under_load"].append(
            under_load(
                base,
                tmp,
                big,
                big_followers,
                readers,
                pause=0.2,
                warm=False,
                home_rate=offered["rate"],
            )  # fmt: skip
        )
        data["under_load"][-1]["saturated_rps"] = offered["readings"]
    print("pulled authors on a home...", file=sys.stderr)
    data["pulled"] = pulled_home_cost(
        base, tmp, args.pulled, seconds=args.seconds, rounds=args.rounds
    )
    p16 = zadd_p16(socket)
    data["zadd_p16_per_s"], data["zadd_p16_cpu_us"] = p16["rate"], p16["cpu_us"]
    return data


_SERVERS = {"granian": "granian", "gunicorn": "gunicorn sync"}


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def render(data: dict) -> str:
    env = data["environment"]
    lines = [
        "# Fan-out",
        "",
        f"{env['redis']} (Redis {env['redis_version']}), {env['cores']} cores, "
        f"{env['web_workers']} {_SERVERS[env.get('server', 'gunicorn')]} workers, "
        f"{env['fanout_workers']} fan-out "
        f"workers, FANOUT_BATCH {env['batch']}; every author pushed, every follower "
        "active.",
        "",
        "## Post latency and time to home by follower count",
        "",
        "| followers | POST /post/ median (ms) | max (ms) | to home p50 (s) | p99 (s) "
        "| homes missed | inserts/s | vs `redis-benchmark -P 16` ZADD right after "
        "| Redis CPU per home (us) | its ZADD's CPU / a home's |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in data["by_size"]:
        ratio, cpu_ratio = row.get("vs_p16"), row.get("vs_p16_cpu")
        lines.append(
            f"| {row['followers']:,} | {row['post_ms_median']:.1f} | "
            f"{row['post_ms_max']:.1f} | {row['home_p50_s']:.3f} | "
            f"{row['home_p99_s']:.3f} | {row['missed']} | "
            f"{row['inserts_per_s']:,.0f} | "
            f"{f'{ratio:.2f}x' if ratio else '-'} | "
            f"{_fmt(row['redis_cpu_us_per_home'], '.2f')} | "
            f"{f'{cpu_ratio:.2f}x' if cpu_ratio else '-'} |"
        )
    p16 = data.get("zadd_p16_per_s")
    biggest = max(data["by_size"], key=lambda row: row["followers"])
    lines += [
        "",
        f"`redis-benchmark -P 16` ZADD on the same server, at the end of the run: "
        f"{p16:,.0f}/s, {_fmt(data.get('zadd_p16_cpu_us'), '.2f')} us of Redis CPU "
        f"each; fan-out at {biggest['followers']:,} followers: "
        f"{biggest['inserts_per_s'] / p16:.2f}x of its rate. The table compares each "
        "post with a ceiling measured right after it (the medians): its rate, and "
        "(the last column) the Redis CPU of one of its ZADDs against the fan-out's "
        "per home, which a busy machine moves less than it moves a rate."
        if p16 and biggest["inserts_per_s"]
        else "`redis-benchmark -P 16`: no figure.",
    ]
    forked = [run for row in data["by_size"] for run in row["runs"] if run.get("forks")]
    posts = sum(len(row["runs"]) for row in data["by_size"])
    lines += [
        "",
        f"Redis forked (a snapshot or an AOF rewrite, whose child takes a core) "
        f"during {len(forked)} of these {posts} posts.",
    ]
    lines += ["", "## Under load", ""]
    for load_ in data["under_load"]:
        big = load_["big_post"]
        idle, busy = load_["home_idle"], load_["home_busy"]
        after = load_.get("home_idle_after")
        idle_after = (
            f"; idle again after the big post {after['p99_ms']:.1f} ms "
            f"(busy {busy['p99_ms'] / after['p99_ms']:.2f}x of it)"
            if after and after["p99_ms"]
            else ""
        )
        how = (
            f"each pausing {load_['pause_s'] * 1000:.0f} ms between posts"
            if load_["pause_s"]
            else "each posting again as soon as answered"
        )
        readings = ", ".join(f"{rps:,.0f}" for rps in load_.get("saturated_rps", []))
        pace = (
            f"at {load_['home_rate']:,.0f} requests/s, each timed from when it was "
            "due (half of the median of what it served saturated above: "
            f"{readings} req/s)"
            if load_.get("home_rate")
            else "(20 connections, as fast as they are answered)"
        )
        lines += [
            f"wrk reads a seeded user's home {pace} for 10 s while 10 posters "
            f"post ({how}) and an author with {big.get('followers', 0):,} followers "
            "posts once:",
            "",
            f"- posts: {load_['posts']}, POST p50 {load_['post_p50_ms']:.1f} ms, "
            f"p99 {load_['post_p99_ms']:.1f} ms, max {load_['post_max_ms']:.1f} ms",
            f"- the big post: answered in {big.get('post_ms', 0):.1f} ms; to home "
            f"p50 {big.get('home_p50_s') or 0:.3f} s, p99 "
            f"{big.get('home_p99_s') or 0:.3f} s, homes missed {big.get('missed')}",
            f"- home page p99: idle {idle['p99_ms']:.1f} ms, under the posts "
            f"{busy['p99_ms']:.1f} ms ({busy['p99_ms'] / idle['p99_ms']:.2f}x)"
            f"{idle_after}; req/s {idle['rps']:,.0f} -> {busy['rps']:,.0f}",
            "- Redis forked (a snapshot or an AOF rewrite, whose child takes a core) "
            + ", ".join(
                f"{run.get('forks', '?')} times {when}"
                for run, when in (
                    (idle, "while idle"),
                    (busy, "under the posts"),
                    (after or {}, "idle after"),
                )
            ),
            "",
        ]
    lines += [
        "## A home merging pulled authors",
        "",
        "| pulled authors followed | req/s | vs 0 | p99 (ms) | Redis CPU us/page | "
        "failed |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    base = data["pulled"][0]["rps"]
    for row in data["pulled"]:
        lines.append(
            f"| {row['pulled']} | {row['rps']:,.0f} | {row['rps'] / base:.2f}x | "
            f"{row['p99_ms']:.1f} | {row['redis_cpu_us_per_req']:.0f} | "
            f"{row['non_2xx_3xx']} |"
        )
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    sizes = [10, 1000, 10_000, 100_000, 1_000_000]
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        default=sizes,
        help="follower counts, comma-separated",
    )
    parser.add_argument("--posts", type=int, default=5, help="posts per size")
    parser.add_argument("--load-followers", type=int, default=100_000)
    parser.add_argument(
        "--pulled",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[0, 1, 5, 10, 20],
    )
    parser.add_argument("--users", type=int, default=2000, help="seeded users")
    parser.add_argument("--workers", type=int, default=5, help="web workers")
    parser.add_argument(
        "--server",
        choices=["granian", "gunicorn"],
        default="granian",
        help="what serves the site (the README deploys granian)",
    )
    parser.add_argument("--fanout-workers", type=int, default=2)
    parser.add_argument(
        "--home-load",
        type=float,
        default=0.5,
        help="under load, also with the home offered this share of what it served "
        "saturated (0: skip)",
    )
    parser.add_argument("--seconds", type=int, default=5, help="per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "fanout.md"))
    args = parser.parse_args(argv)
    if args.tiny:
        args.sizes, args.posts, args.load_followers = [10, 100], 2, 200
        args.pulled, args.users, args.seconds, args.rounds = [0, 1], 60, 1, 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.ExitStack() as stack:
        data = collect(args, stack)
    text = render(data)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(data, indent=2, default=str))
    out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
