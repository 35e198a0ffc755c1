"""The client API's home against the site's HTML home, in-process.

    .venv/bin/python bench/api_home.py [--requests 300] [--runs 3] [--saved N] [--muted N]

Starts its own redis-server (`config.embedded`, a Unix socket, no persistence), seeds a viewer who follows
40 people whose statuses carry mentions, tags, links, likes and reposts, then times
`GET /api/v1/timelines/home?limit=30` and `GET /` (30 statuses) through Django's test
client with production settings, alternated request by request after a warm-up; prints
the medians of each run and the round trips of each request. `--saved N`: the viewer
has bookmarked the newest N statuses of the home (the rows' state); `--muted N`: the
viewer has muted the conversations of the newest N.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _seed(count: int) -> tuple[str, str]:
    """The viewer's bearer token and session cookie value."""
    from accounts import services as account_services
    from api.scopes import parse  # noqa: F401  (the app's modules load)
    from timeline import fanout, services, social

    viewer = account_services.user_create(username="viewer", password="x" * 12)
    authors = [
        account_services.user_create(username=f"author{i}", password="x" * 12)
        for i in range(count)
    ]
    stranger = account_services.user_create(username="stranger", password="x" * 12)
    for author in authors:
        services.follow_create(follower=viewer, followee_id=author.id)
    fanout.run_pending()
    for i in range(90):
        author = authors[i % count]
        text = (
            f"Status {i} for @author{(i + 1) % count} about #bench and #t{i % 7}, "
            f"see https://example.com/{i} <b>&</b>"
        )
        sid = services.status_create(author=author, text=text).id
        if i % 3 == 0:
            social.status_like(user=authors[(i + 2) % count], sid=sid)
        if i % 6 == 0:
            # Of someone the viewer does not follow: the repost shows (a followee's
            # status shows once, as itself or as one of its reposts).
            other = services.status_create(author=stranger, text=f"Stranger {i} #t")
            social.status_repost(user=authors[(i + 5) % count], sid=other.id)
    fanout.run_pending()
    credentials, _ = account_services.app_token_create(
        uid=viewer.id, client_id="bench", app="bench", website="", scopes=("read",)
    )
    session = account_services.session_create(uid=viewer.id)
    return credentials.access_token, session.cookie_value()


def _save(count: int) -> None:
    """The viewer bookmarks the newest `count` statuses of their home: their state
    rides on every API row (`bookmarked`), read by the window's script."""
    from accounts.selectors import user_get_by_username
    from config.redis import get_redis
    from timeline import bookmarks, keys

    viewer = user_get_by_username(username="viewer")
    for sid in get_redis().zrevrange(keys.home(viewer.id), 0, count - 1):
        bookmarks.status_bookmark(user=viewer, sid=int(sid))


def _mute(count: int) -> None:
    """The viewer mutes the conversations of the newest `count` statuses of their
    home: their state rides on every API row (`muted`), read by the window's
    script."""
    from accounts.selectors import user_get_by_username
    from config.redis import get_redis
    from timeline import conversations, keys

    viewer = user_get_by_username(username="viewer")
    for sid in get_redis().zrevrange(keys.home(viewer.id), 0, count - 1):
        conversations.conversation_mute(user=viewer, sid=int(sid))


def _time(client, path: str) -> float:
    start = time.perf_counter()
    response = client.get(path, secure=True)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, (path, response.status_code)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--authors", type=int, default=40, help="whom the viewer follows"
    )
    parser.add_argument(
        "--profile", help="cProfile this many API requests instead", type=int
    )
    parser.add_argument(
        "--saved",
        type=int,
        default=0,
        help="statuses of the home the viewer bookmarked",
    )
    parser.add_argument(
        "--muted",
        type=int,
        default=0,
        help="statuses of the home whose conversations the viewer muted",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from config.embedded import start_server

    url, server = start_server(
        Path(tempfile.mkdtemp(prefix="bench-api-")), persist=False, daemonize=False
    )
    try:
        os.environ.update(
            REDIS_URL=url,
            DEBUG="false",
            SECRET_KEY="bench-" + "k" * 50,
            ALLOWED_HOSTS="testserver",
            # As served: each API request takes from its token's budget (one that
            # never runs out here).
            RATE_LIMIT_API="100000000/1h",
            DJANGO_SETTINGS_MODULE="config.settings",
            STATIC_ROOT=tempfile.mkdtemp(prefix="bench-static-"),
        )
        import django

        django.setup()
        from django.core.management import call_command

        call_command("collectstatic", interactive=False, verbosity=0)
        from django.conf import settings
        from django.test import Client

        from tests.roundtrips import RoundTripCounter

        token, cookie = _seed(args.authors)
        if args.saved:
            _save(args.saved)
        if args.muted:
            _mute(args.muted)
        api = Client(headers={"Authorization": f"Bearer {token}"})
        html = Client()
        html.cookies[settings.AUTH_COOKIE_NAME] = cookie
        pages = {
            "API /api/v1/timelines/home?limit=30": (
                api,
                "/api/v1/timelines/home?limit=30",
            ),
            "HTML / (30 statuses)": (html, "/"),
        }
        first = api.get("/api/v1/timelines/home?limit=30", secure=True)
        assert first.status_code == 200, (first.status_code, first.content[:600])
        print(f"the API's home shows {len(first.json())} statuses")
        for name, (client, path) in pages.items():
            for _ in range(30):
                _time(client, path)
            with RoundTripCounter() as counter:
                _time(client, path)
            print(f"{name}: {counter.count} round trips")
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.profile):
                _time(api, "/api/v1/timelines/home?limit=30")
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
            return 0
        for run in range(args.runs):
            times: dict[str, list[float]] = {name: [] for name in pages}
            for _ in range(args.requests):
                for name, (client, path) in pages.items():
                    times[name].append(_time(client, path))
            print(
                f"run {run + 1}: "
                + ", ".join(
                    f"{name} {statistics.median(t) * 1000:.2f} ms"
                    for name, t in times.items()
                )
            )
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
