"""Abuse figures: floods of posts, follows, sign-ups and password guesses, with the
abuse limits off and on, in one run.

    .venv/bin/python bench/abuse.py           # about 2 minutes
    .venv/bin/python bench/abuse.py --tiny    # the same, smaller, in seconds

Starts its own redis-server and the site under granian with production settings
(PBKDF2 password hashing), as behind a proxy that sets X-Forwarded-For
(TRUSTED_PROXY_HEADER), so that each simulated visitor has an address of their own.
Each scenario runs against an emptied store, first with every RATE_LIMIT_* off, then
with the defaults (config/settings.py). Prints a Markdown table and writes every
figure to bench/out/abuse.json.
"""

from __future__ import annotations

import argparse
import contextlib
import http.cookiejar
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path[0] = str(ROOT)

from bench import servers  # noqa: E402

OFF = {
    "RATE_LIMIT_POST": "off",
    "RATE_LIMIT_FOLLOW": "off",
    "RATE_LIMIT_SIGNUP": "off",
    "RATE_LIMIT_LOGIN_PAIR": "off",
    "RATE_LIMIT_LOGIN_CLIENT": "off",
}
_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Visitor:
    """A browser of one address: cookies, CSRF tokens, no redirects followed."""

    def __init__(self, base: str, address: str):
        self.base, self.address = base, address
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )
        self.token = ""

    def get(self, path: str) -> tuple[int, str]:
        status, body = self._send(urllib.request.Request(self.base + path))
        found = _TOKEN.search(body)
        if found:
            self.token = found[1]
        return status, body

    def post(self, path: str, data: dict | None = None) -> int:
        if not self.token:
            self.get("/login/")
        fields = {"csrfmiddlewaretoken": self.token, **(data or {})}
        request = urllib.request.Request(
            self.base + path,
            data=urllib.parse.urlencode(fields).encode(),
            headers={"Referer": self.base + "/"},
        )
        return self._send(request)[0]

    def _send(self, request) -> tuple[int, str]:
        request.add_header("X-Forwarded-For", self.address)
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def logged_in(base: str, username: str, password: str, address: str) -> Visitor:
    visitor = Visitor(base, address)
    status = visitor.post("/login/", {"username": username, "password": password})
    assert status == 302, f"login of {username} answered {status}"
    visitor.get("/")
    return visitor


def counted(statuses: list[int]) -> dict[str, int]:
    return {str(code): statuses.count(code) for code in sorted(set(statuses))}


def post_flood(base: str, n: int, password: str) -> dict:
    """One user posts `n` statuses from 8 connections; then, how many of the global
    timeline's kept entries are the flood's?"""
    flooder = logged_in(base, "user1", password, "10.1.0.1")
    others = [logged_in(base, f"user{u}", password, f"10.1.0.{u}") for u in (2, 3, 4)]
    for i, other in enumerate(others):
        for k in range(10):
            other.post("/post/", {"text": f"ordinary status {i}.{k}"})
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        statuses = list(
            pool.map(lambda i: flooder.post("/post/", {"text": f"flood {i}"}), range(n))
        )
    elapsed = time.monotonic() - started
    from config.redis import get_redis
    from timeline import keys

    r = get_redis()
    kept = [sid for key in keys.global_partitions() for sid in r.zrange(key, 0, -1)]
    texts = [r.hget(keys.status(int(sid)), "text") or "" for sid in kept if sid != "0"]
    flood = [text for text in texts if text.startswith("flood ")]
    return {
        "answers": counted(statuses),
        "seconds": round(elapsed, 2),
        "global_kept": len(texts),
        "global_by_flooder": len(flood),
    }


def follow_flood(base: str, n: int, password: str) -> dict:
    """One user follows `n` people from 8 connections."""
    follower = logged_in(base, "user1", password, "10.2.0.1")
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        statuses = list(
            pool.map(lambda u: follower.post(f"/u/user{u}/follow/"), range(2, n + 2))
        )
    return {
        "answers": counted(statuses),
        "seconds": round(time.monotonic() - started, 2),
    }


def global_latency(base: str, stop: threading.Event, out: list[float]) -> None:
    reader = Visitor(base, "10.3.9.9")
    while not stop.is_set():
        started = time.perf_counter()
        reader.get("/timeline/")
        out.append(time.perf_counter() - started)
        time.sleep(0.02)


def signup_flood(base: str, n: int) -> dict:
    """`n` sign-ups from one address, 4 at a time, while someone reads the global
    timeline; its median latency against the same reads idle."""
    idle: list[float] = []
    stop = threading.Event()
    reader = threading.Thread(target=global_latency, args=(base, stop, idle))
    reader.start()
    time.sleep(2)
    stop.set()
    reader.join()
    during: list[float] = []
    stop = threading.Event()
    reader = threading.Thread(target=global_latency, args=(base, stop, during))
    reader.start()

    def sign_up(i: int) -> int:
        visitor = Visitor(base, "10.3.0.1")
        visitor.get("/signup/")
        password = f"flood-password-{i}-x"
        return visitor.post(
            "/signup/",
            {"username": f"flood{i}", "password": password, "password2": password},
        )

    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        statuses = list(pool.map(sign_up, range(n)))
    elapsed = time.monotonic() - started
    stop.set()
    reader.join()
    return {
        "answers": counted(statuses),
        "seconds": round(elapsed, 2),
        "global_median_ms_idle": round(statistics.median(idle) * 1000, 1),
        "global_median_ms_during": round(statistics.median(during) * 1000, 1),
    }


def lockout(base: str, password: str) -> dict:
    """A stranger tries 12 wrong passwords for user5; then the owner logs in from
    their own address."""
    stranger = Visitor(base, "10.4.0.66")
    wrong = [
        stranger.post("/login/", {"username": "user5", "password": f"guess{i}"})
        for i in range(12)
    ]
    owner = Visitor(base, "10.4.0.5")
    right = owner.post("/login/", {"username": "user5", "password": password})
    return {"stranger_answers": counted(wrong), "owner_answer": right}


def parallel_guesses(base: str, n: int) -> dict:
    """`n` wrong passwords for user6 at once from one address."""
    guesser = Visitor(base, "10.5.0.66")
    guesser.get("/login/")
    barrier = threading.Barrier(n)

    def guess(i: int) -> int:
        barrier.wait()
        return guesser.post("/login/", {"username": "user6", "password": f"no{i}"})

    with ThreadPoolExecutor(n) as pool:
        statuses = list(pool.map(guess, range(n)))
    return {"answers": counted(statuses), "checked": statuses.count(400)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="small floods, seconds")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = parser.parse_args()
    sizes = (
        {"posts": 60, "follows": 80, "signups": 12, "guesses": 30}
        if args.tiny
        else {"posts": 1000, "follows": 5000, "signups": 120, "guesses": 30}
    )
    with contextlib.ExitStack() as stack:
        tmp = Path(tempfile.mkdtemp(prefix="retwis-abuse-"))
        stack.callback(shutil.rmtree, tmp, ignore_errors=True)
        redis_url, redis_proc = servers.start_redis(tmp / "redis")
        stack.callback(servers.stop, redis_proc)
        env = servers.site_env(redis_url=redis_url, static_root=tmp / "static")
        env = {**env, "TRUSTED_PROXY_HEADER": "X-Forwarded-For"}
        for name in OFF:
            env.pop(name, None)
        os.environ.update(env)
        import django

        django.setup()
        from config.redis import get_redis
        from timeline.management.commands.seed import DEMO_PASSWORD
        from timeline.seeding import seed
        from timeline.upgrades import layout_stamp

        servers.collectstatic(env=env, cwd=ROOT)
        results: dict = {"sizes": sizes}
        for mode, overrides in (("off", OFF), ("on", {})):
            site, base = servers.start_granian(
                app="config.wsgi:application",
                workers=2,
                env={**env, **overrides},
                cwd=ROOT,
            )
            worker = subprocess.Popen(
                [sys.executable, "manage.py", "fanout_worker"],
                cwd=ROOT,
                env={**env, **overrides},
                stdout=subprocess.DEVNULL,
            )
            figures: dict = {}
            scenarios = {
                "posts": (post_flood, sizes["posts"], DEMO_PASSWORD),
                "follows": (follow_flood, sizes["follows"], DEMO_PASSWORD),
                "signups": (signup_flood, sizes["signups"]),
                "lockout": (lockout, DEMO_PASSWORD),
                "guesses": (parallel_guesses, sizes["guesses"]),
            }
            try:
                for name, (scenario, *scenario_args) in scenarios.items():
                    get_redis().flushall()
                    layout_stamp(get_redis())
                    seed(
                        users=sizes["follows"] + 2,
                        follows_per_user=2,
                        statuses_per_user=1,
                        password=DEMO_PASSWORD,
                        random_seed=7,
                    )
                    figures[name] = scenario(base, *scenario_args)
                    print(f"limits {mode}: {name}: {figures[name]}", flush=True)
            finally:
                servers.stop(worker)
                servers.stop(site)
            results[mode] = figures
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "abuse.json").write_text(json.dumps(results, indent=2))
    print()
    print(report(results))


def report(results: dict) -> str:
    sizes = results["sizes"]
    rows = [
        "| flood | limits off | limits on |",
        "|---|---|---|",
    ]

    def both(fmt) -> str:
        return f"{fmt(results['off'])} | {fmt(results['on'])}"

    rows.append(
        f"| {sizes['posts']} posts by one user, 8 connections | "
        + both(
            lambda f: (
                f"{f['posts']['answers'].get('302', 0)} posted in "
                f"{f['posts']['seconds']} s; {f['posts']['global_by_flooder']} of the "
                f"global timeline's {f['posts']['global_kept']} entries theirs"
            )
        )
        + " |"
    )
    rows.append(
        f"| {sizes['follows']} follows by one user | "
        + both(
            lambda f: (
                f"{f['follows']['answers'].get('302', 0)} made in "
                f"{f['follows']['seconds']} s"
            )
        )
        + " |"
    )
    rows.append(
        f"| {sizes['signups']} sign-ups from one address, 4 at a time | "
        + both(
            lambda f: (
                f"{f['signups']['answers'].get('302', 0)} accounts in "
                f"{f['signups']['seconds']} s; global page median "
                f"{f['signups']['global_median_ms_idle']} -> "
                f"{f['signups']['global_median_ms_during']} ms"
            )
        )
        + " |"
    )
    rows.append(
        "| 12 wrong passwords for a user from a stranger, then the owner | "
        + both(
            lambda f: (
                f"stranger {f['lockout']['stranger_answers']}; owner answered "
                f"{f['lockout']['owner_answer']}"
            )
        )
        + " |"
    )
    rows.append(
        f"| {sizes['guesses']} wrong passwords at once from one address | "
        + both(
            lambda f: f"{f['guesses']['checked']} checked; {f['guesses']['answers']}"
        )
        + " |"
    )
    return "\n".join(rows)


if __name__ == "__main__":
    main()
