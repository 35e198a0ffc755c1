"""Two checkouts served side by side: the CPU each served request costs.

    .venv/bin/python bench/served_cpu.py --base HEAD~1 [--rounds 12] [--seconds 4]
        [--pages trivial,home,global,profile]

Serves this checkout (the change) and a base (`--base`: a git revision, checked out
in a temporary worktree, or the path of another checkout) under granian with one
worker each, as the README deploys it, on one Redis with one seeded site
(`manage.py seed`, the shape of the Retwis comparison: 1,000 users x 50 follows x 20
statuses). Logged in over HTTP as a seeded user whose home fills a page, it drives
each page with wrk (1 thread, 4 connections), the two servers alternated round by
round, and reads from /proc the CPU that each server's processes and Redis spent on
the round's requests.

It prints, for each page, the median CPU per request of each side and the median of
the rounds' change/base ratios. On a shared machine a page's CPU per request swings
by a third from one round to the next; alternating rounds and comparing in pairs is
what makes a few percent visible. It measures what a served request costs: the test
client of `bench/inprocess.py` runs its own code around each request (it connects
and disconnects signal handlers, for one) and misses some of the server's.

Both checkouts read the one store: a change of key layout cannot be measured so.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import Page, wrk_run  # noqa: E402
from bench.pages import WRK_GET  # noqa: E402
from bench.servers import (  # noqa: E402
    collectstatic,
    site_env,
    start_granian,
    start_redis,
    stop,
)

PASSWORD = "retwis-demo-password"  # manage.py seed's default
PAGES = {
    "trivial": "/healthz/",
    "home": "/",
    "global": "/timeline/",
    "profile": None,  # a seeded user's whose profile fills a page (`_login`)
}
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a process and its descendants now alive (granian's
    main process and its worker), from /proc."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1]
            children = Path(f"/proc/{current}/task/{current}/children").read_text()
        except FileNotFoundError:
            if current == pid:
                raise
            continue  # a process that ended in between
        total += sum(int(x) for x in fields.split()[11:13]) / TICKS  # utime, stime
        pending += [int(c) for c in children.split()]
    return total


def _has_children(pid: int) -> bool:
    return bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())


def _login(url: str, users: int) -> tuple[str, str]:
    """The cookie of a seeded user whose home fills a page, and a profile that does."""

    def count(html: str) -> int:
        return len(re.findall(r'data-status-id="', html))

    def page(path: str, cookie: str) -> str:
        request = urllib.request.Request(url + path, headers={"Cookie": cookie})
        with urllib.request.urlopen(request) as response:
            return response.read().decode()

    for n in range(users // 2, users + 1):
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        form = opener.open(url + "/login/").read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)[1]
        data = urllib.parse.urlencode(
            {"csrfmiddlewaretoken": token, "username": f"user{n}", "password": PASSWORD}
        ).encode()
        opener.open(
            urllib.request.Request(
                url + "/login/", data=data, headers={"Referer": url + "/login/"}
            )
        )
        cookie = "; ".join(
            f"{c.name}={c.value}"
            for c in jar
            if c.name not in ("csrftoken", "messages")
        )
        if count(page("/", cookie)) >= 10:
            break
    else:
        raise RuntimeError("no seeded user has a full home")
    for m in range(n + 1, users + 1):
        if count(page(f"/u/user{m}/", cookie)) >= 10:
            return cookie, f"user{m}"
    raise RuntimeError("no seeded user has a full profile")


def _wrk(url: str, path: str, cookie: str, seconds: int, workdir: Path) -> int:
    """Requests answered in one wrk run (1 thread, 4 connections); a run with
    failures or none stops the benchmark (an error page is not the page)."""
    page = Page(name=path, path=path, script=WRK_GET.format(cookie=cookie))
    run = wrk_run(url, page, seconds=seconds, connections=4, workdir=workdir, threads=1)
    if run["non_2xx_3xx"] or any(run["socket_errors"].values()) or not run["requests"]:
        raise RuntimeError(f"{url}{path}: not every request answered 2xx: {run}")
    return run["requests"]


def _checkout(base: str, workdir: Path) -> Path:
    if Path(base).is_dir():
        return Path(base).resolve()
    path = workdir / "base"
    added = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), base],
        capture_output=True, text=True,
    )  # fmt: skip
    if added.returncode:
        raise RuntimeError(f"cannot check out {base!r}: {added.stderr.strip()}")
    return path


def _stop_on_sigterm(*_) -> None:
    raise SystemExit(143)  # so that `finally` stops the servers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="a git revision or a checkout")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--pages", default="trivial,home,global,profile")
    parser.add_argument("--users", type=int, default=1000)
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        parser.error("needs wrk (apt-get install wrk)")
    names = args.pages.split(",")
    if unknown := sorted(set(names) - set(PAGES)):
        parser.error(f"unknown pages {unknown}; known: {', '.join(PAGES)}")
    if args.rounds < 1 or args.seconds < 1 or args.users < 20:
        parser.error("--rounds and --seconds at least 1, --users at least 20")
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    workdir = Path(tempfile.mkdtemp(prefix="bench-served-"))
    base_root = None
    redis_proc = None
    servers = {}
    try:
        base_root = _checkout(args.base, workdir)
        redis_url, redis_proc = start_redis(workdir / "redis")
        env = site_env(redis_url=redis_url, static_root=workdir / "static")
        env["TIMELINE_PAGE_SIZE"] = "10"  # the Retwis comparison's home and profile
        subprocess.run(
            [sys.executable, "manage.py", "seed", "--users", str(args.users),
             "--follows-per-user", "50", "--statuses-per-user", "20", "--quiet"],
            cwd=ROOT, env=env, check=True,
        )  # fmt: skip
        for side, root in (("base", base_root), ("change", ROOT)):
            # Each side's own static files (their manifest names what it links).
            side_env = {**env, "STATIC_ROOT": str(workdir / f"static-{side}")}
            collectstatic(env=side_env, cwd=root)
            servers[side] = start_granian(
                app="config.wsgi:application", workers=1, env=side_env, cwd=root
            )
            if not _has_children(servers[side][0].pid):
                raise RuntimeError("granian's worker is not a child of its process")
        cookie, profile = _login(servers["change"][1], args.users)
        paths = {**PAGES, "profile": f"/u/{profile}/"}
        for side in servers:  # warm every worker on every page
            for name in names:
                _wrk(servers[side][1], paths[name], cookie, 2, workdir)
        cpu: dict[tuple[str, str], list[float]] = {}
        for n in range(args.rounds):
            order = ["base", "change"] if n % 2 == 0 else ["change", "base"]
            for name in names:
                for side in order:
                    proc, url = servers[side]
                    site, store = _cpu_seconds(proc.pid), _cpu_seconds(redis_proc.pid)
                    done = _wrk(url, paths[name], cookie, args.seconds, workdir)
                    site = _cpu_seconds(proc.pid) - site
                    store = _cpu_seconds(redis_proc.pid) - store
                    cpu.setdefault((name, side), []).append((site + store) / done * 1e6)
        print(
            f"CPU per served request (granian's processes + Redis), {args.rounds} "
            f"alternated rounds of {args.seconds:g} s; base {args.base}"
        )
        for name in names:
            base, change = cpu[(name, "base")], cpu[(name, "change")]
            pairs = [c / b for b, c in zip(base, change, strict=True)]
            lower = sum(c < b for b, c in zip(base, change, strict=True))
            print(
                f"{name:8} base {statistics.median(base):6.0f} us, change "
                f"{statistics.median(change):6.0f} us, change/base "
                f"{statistics.median(pairs):.3f} (median of the rounds' ratios; "
                f"change lower in {lower} of {len(pairs)})"
            )
    finally:
        for proc, _ in servers.values():
            stop(proc)
        if redis_proc is not None:
            stop(redis_proc)
        if base_root is not None and base_root.parent == workdir:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force",
                 str(base_root)],
                check=False, capture_output=True,
            )  # fmt: skip
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
