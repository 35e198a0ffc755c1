"""Benchmarks: pages under load, round trips, fan-out, memory and seeding.

    .venv/bin/python bench/run.py            # the full run (about 8 minutes)
    .venv/bin/python bench/run.py --tiny     # end to end on a tiny data set (seconds)
    .venv/bin/python bench/run.py --cluster  # the same on a local 3-master cluster

Starts its own redis-server (AOF everysec, as in production) and the site with
production settings under the server the README deploys (granian; `--server`), plus
gunicorn's sync workers for the reference trivial view, seeds data with `timeline.seeding.seed` in this
process, waits until every gunicorn worker has loaded the site, warms every page with
a short wrk run, then drives pages with wrk at 100 concurrent connections in
interleaved rounds and compares each page with a trivial Django view (`/healthz/`,
no Redis) measured on the same server in the same rounds. Prints a Markdown report and writes it to bench/out/report.md, with every
figure in bench/out/report.json. Needs Debian's wrk (and redis-benchmark from
redis-tools for the ZADD ceiling).

The parts: bench/servers.py starts and stops the servers, bench/pages.py says what is
asked of the site, bench/load.py drives wrk, bench/store.py reads figures from Redis,
bench/report.py turns the collected data into the report.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    # Run as a script: import the project (and `bench` as a package), not bench/'s
    # modules by their bare names.
    sys.path[0] = str(ROOT)

from bench import load, pages, report, servers, store  # noqa: E402


def collect(args: argparse.Namespace, stack: contextlib.ExitStack) -> dict:
    """Start the servers, seed, measure; return every figure as plain data."""
    tmp = Path(tempfile.mkdtemp(prefix="retwis-bench-"))
    stack.callback(shutil.rmtree, tmp, ignore_errors=True)
    redis_dir = tmp / "redis"
    cluster = None
    if args.cluster:
        from tests.cluster import start_cluster

        cluster = start_cluster(masters=3, persist=True)
        stack.callback(cluster.stop)
        redis_url = cluster.url
    else:
        redis_url, redis_proc = servers.start_redis(redis_dir)
        stack.callback(servers.stop, redis_proc)
    env = servers.site_env(
        redis_url=redis_url, static_root=tmp / "static", cluster=args.cluster
    )
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management.base import OutputWrapper

    from timeline.management.commands.seed import DEMO_PASSWORD
    from timeline.seeding import Progress, seed

    data: dict = {
        "environment": {
            "machine": platform.platform(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "redis_version": store.redis_version(),
            "workers": args.workers,
            "server": args.server,
            "redis": "3-master cluster" if args.cluster else "one server",
            "connections": args.connections,
            "seconds": args.duration,
            "rounds": args.runs,
            "warm_up_seconds": min(load.WARM_UP_SECONDS, args.duration),
        }
    }
    seeded = seed(
        users=args.users,
        follows_per_user=args.follows,
        statuses_per_user=args.statuses,
        password=DEMO_PASSWORD,
        random_seed=42,
        progress=Progress(OutputWrapper(sys.stderr)),
    )
    data["seed"] = seeded.as_dict()
    people = pages.pick_people(users=args.users, follows_per_user=args.follows)
    data["memory"] = store.memory(  # before the load adds statuses
        users=args.users, statuses_per_user=args.statuses
    )

    servers.collectstatic(env=env, cwd=ROOT)
    gunicorn, reference_url = servers.start_gunicorn(
        app="config.wsgi", workers=args.workers, env=env, cwd=ROOT, run_dir=tmp
    )
    stack.callback(servers.stop, gunicorn)
    # Posts reach followers through a fan-out worker, as in production.
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "fanout_worker"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    stack.callback(servers.stop, worker)
    urls = {"reference": reference_url, "site": reference_url}
    if args.server == "granian":
        granian, urls["site"] = servers.start_granian(
            app="config.wsgi:application", workers=args.workers, env=env, cwd=ROOT
        )
        stack.callback(servers.stop, granian)

    def run(page: load.Page, seconds: int) -> dict:
        cpu_before = store.redis_cpu_seconds()
        result = load.wrk_run(
            urls[page.server],
            page,
            seconds=seconds,
            connections=args.connections,
            workdir=tmp,
        )
        used = store.redis_cpu_seconds() - cpu_before
        result["redis_cpu_us_per_req"] = used / max(result["requests"], 1) * 1e6
        return result

    data["trivial"] = pages.TRIVIAL
    data["pages"] = load.measure_pages(
        pages.load_pages(people), run, rounds=args.runs, seconds=args.duration
    )
    data["round_trips"] = pages.count_round_trips(people)
    data["fanout"] = store.fanout(args.fanout)
    data["zadd_ceiling"] = store.zadd_ceiling(
        max(args.fanout),
        redis_socket=None if cluster else redis_dir / "redis.sock",
        cluster_port=cluster.nodes[0].port if cluster else None,
    )
    return data


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--users", type=int, default=20_000, help="users to seed")
    parser.add_argument(
        "--follows", type=int, default=20, help="average follows per user"
    )
    parser.add_argument("--statuses", type=int, default=10, help="statuses per user")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument(
        "--connections", type=int, default=100, help="wrk's concurrent connections"
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="interleaved rounds over all pages"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2 * (os.cpu_count() or 1) + 1,
        help="worker processes of each server (2 x cores + 1, as gunicorn advises)",
    )
    parser.add_argument(
        "--server",
        choices=["granian", "gunicorn"],
        default="granian",
        help="what serves the site's pages (the README deploys granian); the "
        "trivial view's reference is always gunicorn's sync workers",
    )
    parser.add_argument(
        "--fanout",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[10, 1000, 10_000, 100_000],
        help="follower counts to time one post's fan-out for, comma-separated",
    )
    parser.add_argument(
        "--out",
        default=str(ROOT / "bench" / "out" / "report.md"),
        help="where the Markdown report goes (its data beside it, as .json)",
    )
    parser.add_argument(
        "--tiny", action="store_true", help="a seconds-long end-to-end smoke run"
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="run the site on a local 3-master Redis Cluster (REDIS_CLUSTER=true) "
        "instead of one server",
    )
    args = parser.parse_args(argv)
    if args.tiny:
        args.users, args.duration, args.runs = 60, 1, 1
        args.connections, args.fanout = 10, [10, 100]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not shutil.which("wrk"):
        print("wrk not found: apt-get install wrk", file=sys.stderr)
        return 2
    # A plain SIGTERM would skip the cleanup that stops our servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.ExitStack() as stack:
        data = collect(args, stack)
    text = report.render(data)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(data, indent=2, default=str))
    out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
