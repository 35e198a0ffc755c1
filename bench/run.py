"""Benchmarks: pages under load, round trips, fan-out, memory and seeding.

    .venv/bin/python bench/run.py            # the full run (about 10 minutes)
    .venv/bin/python bench/run.py --tiny     # end to end on a tiny data set (seconds)

Starts its own redis-server (AOF everysec, as in production) and the site under
gunicorn with production settings, seeds data with `manage.py seed`, drives pages
with wrk at 100 concurrent connections and compares each page with a trivial Django
view (`/healthz/`, no Redis) measured on the same server in the same run. Prints a
Markdown report and writes it to bench/out/report.md. Needs Debian's wrk (and
redis-benchmark from redis-tools for the ZADD ceiling).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable

# A logged-in form POST: the auth cookie and a CSRF cookie the body's token matches.
WRK_FORM = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Cookie"] = "{cookie}; csrftoken={csrf}"
local n = 0
"""

WRK_POST = (
    WRK_FORM
    + """
request = function()
  n = n + 1
  return wrk.format(nil, "/post/", nil, "csrfmiddlewaretoken={csrf}&text=bench+status+" .. n)
end
"""
)

WRK_FOLLOW = (
    WRK_FORM
    + """
request = function()
  n = n + 1
  local action = (n % 2 == 1) and "follow" or "unfollow"
  return wrk.format(nil, "/u/{target}/" .. action .. "/", nil, "csrfmiddlewaretoken={csrf}")
end
"""
)

WRK_GET = """
wrk.headers["Cookie"] = "{cookie}"
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_wrk(output: str) -> dict:
    def seconds(value: str) -> float:
        number, unit = re.match(r"([\d.]+)(\w+)", value).groups()
        return float(number) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = seconds(re.search(r"\s50%\s+(\S+)", output).group(1))
    p99 = seconds(re.search(r"\s99%\s+(\S+)", output).group(1))
    total = int(re.search(r"(\d+) requests in", output).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    return {
        "rps": rps,
        "p50_ms": p50 * 1000,
        "p99_ms": p99 * 1000,
        "requests": total,
        "non_2xx_3xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1).strip() if errors else "",
    }


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="retwis-bench-"))
        self.procs: list[subprocess.Popen] = []
        self.report: list[str] = []
        self.figures: dict = {}

    # --- setup ------------------------------------------------------------------------
    def start_redis(self) -> None:
        from config.embedded import start_server

        self.redis_dir = self.tmp / "redis"
        self.redis_url, proc = start_server(
            self.redis_dir, persist=True, daemonize=False
        )
        self.procs.append(proc)
        self.sock = str(self.redis_dir / "redis.sock")
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "REDIS_URL": self.redis_url,
            "DEBUG": "false",
            "SECRET_KEY": "bench-" + "x" * 50,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "AUTH_COOKIE_SECURE": "false",
            "CSRF_COOKIE_SECURE": "false",
            "SESSION_COOKIE_SECURE": "false",
            "STATIC_ROOT": str(self.tmp / "static"),
        }
        os.environ.update(self.env)
        import django

        django.setup()

    def seed(self) -> None:
        a = self.args
        out = subprocess.run(
            [PYTHON, "manage.py", "seed", "--quiet", "--users", str(a.users),
             "--follows-per-user", str(a.follows), "--statuses-per-user", str(a.statuses)],
            cwd=ROOT, env=self.env, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        self.seed_summary = out.strip().splitlines()[0]
        m = re.search(r"in ([\d.]+)s: (\d+) Redis commands, ([\d,]+) commands/s", out)
        self.figures["seed"] = {
            "users": a.users,
            "seconds": float(m.group(1)),
            "commands": int(m.group(2)),
            "commands_per_s": int(m.group(3).replace(",", "")),
            "summary": self.seed_summary,
        }

    def pick_people(self) -> None:
        from accounts import keys as akeys
        from accounts.services import session_create
        from config.redis import get_redis
        from timeline import keys

        r = get_redis()
        n = self.args.users
        sample = range(1, n + 1, max(1, n // 2000))
        pipe = r.pipeline(transaction=False)
        for uid in sample:
            pipe.zcard(keys.followers(uid))
            pipe.zcard(keys.following(uid))
            pipe.zcard(keys.home(uid))
        replies = pipe.execute()
        rows = [
            (uid, replies[3 * i], replies[3 * i + 1], replies[3 * i + 2])
            for i, uid in enumerate(sample)
        ]
        celebrity = max(rows, key=lambda row: row[1])[0]
        # The viewer: a user with a full-enough home and a typical following count.
        rows.sort(key=lambda row: (row[3] < 30, abs(row[2] - self.args.follows)))
        viewer = next(row[0] for row in rows if row[0] != celebrity)
        self.viewer_uid = viewer
        self.viewer_name = r.hget(akeys.user(viewer), "username")
        self.celebrity_name = r.hget(akeys.user(celebrity), "username")
        creds = session_create(uid=viewer)
        self.cookie = f"{self.env_cookie_name()}={creds.cookie_value()}"
        self.csrf = "b" * 32

    @staticmethod
    def env_cookie_name() -> str:
        from django.conf import settings

        return settings.AUTH_COOKIE_NAME

    def start_gunicorn(self) -> None:
        subprocess.run(
            [PYTHON, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT, env=self.env, check=True,
        )  # fmt: skip
        self.port = free_port()
        proc = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "config.wsgi", "--workers", str(self.args.workers),
             "--bind", f"127.0.0.1:{self.port}", "--log-level", "warning"],
            cwd=ROOT, env=self.env,
        )  # fmt: skip
        self.procs.append(proc)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("gunicorn did not start")

    # --- measurements --------------------------------------------------------------------
    def redis_cpu(self) -> float:
        from config.redis import get_redis

        info = get_redis().info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    def wrk(self, path: str, script: str) -> dict:
        script_file = self.tmp / "wrk.lua"
        script_file.write_text(script)
        cpu_before = self.redis_cpu()
        out = subprocess.run(
            ["wrk", "-t", "2", "-c", str(self.args.connections), "-d",
             f"{self.args.duration}s", "--latency", "-s", str(script_file),
             self.base + path],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        result = parse_wrk(out)
        used = self.redis_cpu() - cpu_before
        result["redis_cpu_us_per_req"] = used / max(result["requests"], 1) * 1e6
        return result

    def pages(self) -> None:
        fmt = {
            "cookie": self.cookie,
            "csrf": self.csrf,
            "target": self.celebrity_name,
        }
        pages = {
            "trivial view (/healthz/, no Redis)": ("/healthz/", ""),
            "home (logged in)": ("/", WRK_GET.format(**fmt)),
            "profile (most followed user)": (
                f"/u/{self.celebrity_name}/",
                WRK_GET.format(**fmt),
            ),
            "global timeline (logged in)": ("/timeline/", WRK_GET.format(**fmt)),
            "post a status": ("/post/", WRK_POST.format(**fmt)),
            "follow + unfollow": ("/", WRK_FOLLOW.format(**fmt)),
        }
        runs: dict[str, list[dict]] = {name: [] for name in pages}
        for _ in range(self.args.runs):
            for name, (path, script) in pages.items():
                runs[name].append(self.wrk(path, script))
        self.figures["pages"] = runs

    def round_trips(self) -> None:
        from django.test import Client
        from django.test.utils import setup_test_environment

        from tests.roundtrips import RoundTripCounter

        setup_test_environment()
        client = Client(HTTP_HOST="127.0.0.1")
        client.cookies.load(self.cookie)
        client.get(f"/u/{self.celebrity_name}/")  # warm the process' name cache
        client.post(f"/u/{self.celebrity_name}/follow/")
        client.post(f"/u/{self.celebrity_name}/unfollow/")
        counts = {}
        for name, method, path, data in [
            ("home (logged in)", "get", "/", None),
            ("profile (most followed user)", "get", f"/u/{self.celebrity_name}/", None),
            ("global timeline (logged in)", "get", "/timeline/", None),
            ("post a status", "post", "/post/", {"text": "counted"}),
            ("follow", "post", f"/u/{self.celebrity_name}/follow/", None),
            ("unfollow", "post", f"/u/{self.celebrity_name}/unfollow/", None),
        ]:
            with RoundTripCounter() as counter:
                response = getattr(client, method)(path, data or {})
            assert response.status_code in (200, 302), (path, response.status_code)
            if response.status_code == 302:
                assert not response["Location"].startswith("/login/"), path
            counts[name] = counter.count
        self.figures["round_trips"] = counts

    def fanout(self) -> None:
        from accounts.services import user_create
        from config.redis import get_redis
        from timeline import keys
        from timeline.services import status_create

        r = get_redis()
        results = []
        base_uid = 10_000_000  # synthetic followers, far above the seeded ids
        for size in self.args.fanout:
            author = user_create(
                username=f"fan_{size}_{os.getpid() % 1000}", password="x" * 12
            )
            followers = list(range(base_uid, base_uid + size))
            base_uid += size
            pipe = r.pipeline(transaction=False)
            for start in range(0, size, 1000):
                chunk = followers[start : start + 1000]
                pipe.zadd(
                    keys.followers(author.id), {f: i for i, f in enumerate(chunk)}
                )
                for f in chunk:
                    pipe.zadd(keys.following(f), {author.id: 1})
                pipe.execute()
            times = []
            for i in range(3):
                started = time.perf_counter()
                status_create(author=author, text=f"fan-out {size} #{i}")
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            results.append(
                {
                    "followers": size,
                    "seconds": median,
                    "inserts_per_s": (size + 1) / median,
                }
            )
            # The synthetic followers' keys go again (they are not users).
            for start in range(0, size, 5000):
                chunk = followers[start : start + 5000]
                r.delete(
                    *[keys.home(f) for f in chunk], *[keys.following(f) for f in chunk]
                )
        self.figures["fanout"] = results
        self.figures["zadd_ceiling"] = self.zadd_ceiling(max(self.args.fanout))

    def zadd_ceiling(self, size: int) -> dict:
        from config.redis import get_redis

        r = get_redis()
        pipe = r.pipeline(transaction=False)
        started = time.perf_counter()
        for i in range(size):
            pipe.zadd(f"bench:zadd:{i}", {1: 1})
            if len(pipe) >= 1000:
                pipe.execute()
        pipe.execute()
        python_rate = size / (time.perf_counter() - started)
        for start in range(0, size, 5000):
            r.delete(
                *[f"bench:zadd:{i}" for i in range(start, min(size, start + 5000))]
            )
        ceiling = {"python_pipelined_zadd_per_s": python_rate}
        if shutil.which("redis-benchmark"):
            out = subprocess.run(
                ["redis-benchmark", "-s", self.sock, "-n", str(max(size, 100_000)),
                 "-P", "64", "-r", "100000", "-q", "zadd", "bench:rb:__rand_int__", "1",
                 "__rand_int__"],
                check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            rate = re.findall(r"([\d.]+) requests per second", out)
            ceiling["redis_benchmark_zadd_p64_per_s"] = (
                float(rate[-1]) if rate else None
            )
            keys_rb = list(r.scan_iter(match="bench:rb:*", count=10_000))
            for start in range(0, len(keys_rb), 5000):
                r.delete(*keys_rb[start : start + 5000])
        return ceiling

    def memory(self) -> None:
        from accounts import keys as akeys
        from config.redis import get_redis
        from timeline import keys

        r = get_redis()
        n = self.args.users
        sample = list(range(1, n + 1, max(1, n // 500)))

        def usage(key_list):
            pipe = r.pipeline(transaction=False)
            for key in key_list:
                pipe.memory_usage(key, samples=0)
            return [u or 0 for u in pipe.execute()]

        def sizes(key_list):
            pipe = r.pipeline(transaction=False)
            for key in key_list:
                pipe.zcard(key)
            return pipe.execute()

        user_bytes = sum(usage([akeys.user(u) for u in sample])) + sum(
            usage([akeys.username(f"user{u}") for u in sample])
        )
        sids = list(range(1, self.args.users * self.args.statuses + 1, 97))[:500]
        status_bytes = sum(usage([keys.status(s) for s in sids]))
        posts_bytes = sum(usage([keys.posts(u) for u in sample]))
        posts_count = sum(sizes([keys.posts(u) for u in sample]))
        edge_keys = [keys.following(u) for u in sample] + [
            keys.followers(u) for u in sample
        ]
        edge_bytes = sum(usage(edge_keys))
        edges = sum(sizes([keys.following(u) for u in sample]))
        home_keys = [keys.home(u) for u in sample]
        home_bytes = sum(usage(home_keys))
        home_entries = sum(sizes(home_keys))
        pipe = r.pipeline(transaction=False)
        for key in home_keys:
            pipe.object("encoding", key)
        encodings: dict[str, int] = {}
        for enc in pipe.execute():
            encodings[str(enc)] = encodings.get(str(enc), 0) + 1
        info = r.info("memory")
        self.figures["memory"] = {
            "used_memory": info["used_memory"],
            "allocator": info.get("mem_allocator"),
            "per_user": user_bytes / len(sample),
            "per_status": status_bytes / len(sids) + posts_bytes / max(posts_count, 1),
            "per_follow_edge": edge_bytes / max(edges, 1),
            "per_timeline_entry": home_bytes / max(home_entries, 1),
            "home_encodings": encodings,
            "home_entries_sampled": home_entries,
        }

    # --- report ----------------------------------------------------------------------------
    def write_report(self) -> str:
        f = self.figures
        a = self.args
        lines = [
            "# Benchmark report",
            "",
            f"- Machine: {platform.platform()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}",
            f"- Redis: {self.redis_version} ({f['memory']['allocator']}), "
            "AOF everysec, Unix socket",
            f"- Site: gunicorn {a.workers} sync workers, DEBUG=false",
            f"- Data: {f['seed']['summary']}",
            f"- Load: wrk -t2 -c{a.connections} -d{a.duration}s, {a.runs} run(s) per "
            "page, pages interleaved; medians shown",
            "",
            "## Pages under load",
            "",
            "| page | req/s | ratio to trivial | p50 ms | p99 ms | Redis CPU µs/req "
            "| non-2xx/3xx |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        trivial = f["pages"]["trivial view (/healthz/, no Redis)"]
        for name, runs in f["pages"].items():
            ratios = [
                run["rps"] / base["rps"]
                for run, base in zip(runs, trivial, strict=True)
            ]
            lines.append(
                f"| {name} | {statistics.median(r['rps'] for r in runs):,.0f} "
                f"| {statistics.median(ratios):.2f}x "
                f"| {statistics.median(r['p50_ms'] for r in runs):.1f} "
                f"| {statistics.median(r['p99_ms'] for r in runs):.1f} "
                f"| {statistics.median(r['redis_cpu_us_per_req'] for r in runs):.0f} "
                f"| {sum(r['non_2xx_3xx'] for r in runs)} |"
            )
        lines += ["", "## Redis round trips per request", "", "| request | round trips |",
                  "|---|---:|"]  # fmt: skip
        lines += [f"| {k} | {v} |" for k, v in f["round_trips"].items()]
        lines += [
            "",
            "## Fan-out",
            "",
            "| followers | time for one post (median of 3) | timeline inserts/s |",
            "|---:|---:|---:|",
        ]
        lines += [
            f"| {x['followers']:,} | {x['seconds'] * 1000:.1f} ms | {x['inserts_per_s']:,.0f} |"
            for x in f["fanout"]
        ]
        c = f["zadd_ceiling"]
        lines += [
            "",
            f"Ceilings on the same server: redis-py pipelined ZADD (1000 per pipeline) "
            f"{c['python_pipelined_zadd_per_s']:,.0f}/s"
            + (
                f"; redis-benchmark ZADD -P 64 {c['redis_benchmark_zadd_p64_per_s']:,.0f}/s"
                if c.get("redis_benchmark_zadd_p64_per_s")
                else ""
            )
            + ".",
        ]
        fan_best = max(x["inserts_per_s"] for x in f["fanout"])
        lines.append(
            f"Largest fan-out rate / redis-py pipelined ZADD: "
            f"{fan_best / c['python_pipelined_zadd_per_s']:.2f}x."
        )
        m = f["memory"]
        lines += [
            "",
            "## Memory (MEMORY USAGE on a sample)",
            "",
            f"- used_memory: {m['used_memory'] / 2**20:,.1f} MiB",
            f"- per user (hash + name claim): {m['per_user']:.0f} bytes",
            f"- per status (hash + its entry in the author's posts): {m['per_status']:.0f} bytes",
            f"- per follow edge (both sides): {m['per_follow_edge']:.1f} bytes",
            f"- per home timeline entry: {m['per_timeline_entry']:.1f} bytes "
            f"({m['home_entries_sampled']:,} entries sampled)",
            f"- home timeline encodings: {m['home_encodings']}",
            "",
            "## Seeding",
            "",
            f"- {f['seed']['summary']}",
        ]
        text = "\n".join(lines) + "\n"
        out = Path(a.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        out.with_suffix(".json").write_text(json.dumps(f, indent=2, default=str))
        return text

    def run(self) -> str:
        try:
            self.start_redis()
            from config.redis import get_redis

            self.redis_version = get_redis().info("server")["redis_version"]
            self.seed()
            self.pick_people()
            self.memory()  # before the load adds statuses
            self.start_gunicorn()
            self.pages()
            self.round_trips()
            self.fanout()
            return self.write_report()
        finally:
            for proc in reversed(self.procs):
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
            shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--follows", type=int, default=20)
    parser.add_argument("--statuses", type=int, default=10)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--workers",
        type=int,
        default=2 * (os.cpu_count() or 1) + 1,
        help="gunicorn sync workers (default: 2 x cores + 1, as gunicorn advises)",
    )
    parser.add_argument(
        "--fanout", type=lambda s: [int(x) for x in s.split(",")],
        default=[10, 1000, 10_000, 100_000],
    )  # fmt: skip
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "report.md"))
    parser.add_argument("--tiny", action="store_true", help="seconds-long smoke run")
    args = parser.parse_args(argv)
    if args.tiny:
        args.users, args.duration, args.runs = 60, 1, 1
        args.connections, args.fanout = 10, [10, 100]
    # A plain SIGTERM would skip the cleanup that stops our servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if not shutil.which("wrk"):
        print("wrk not found: apt-get install wrk", file=sys.stderr)
        return 2
    print(Bench(args).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
