"""Every HTML page's cost in-process: no server, no network but Redis's socket.

    .venv/bin/python bench/inprocess.py [--requests 200] [--runs 3] [--pages home,profile]
    .venv/bin/python bench/inprocess.py --profile home     # cProfile 200 of one page

Starts its own redis-server (`config.embedded`, a Unix socket, no persistence) and
seeds a small site through the services: a viewer who follows 40 authors whose 110
statuses carry mentions, tags, links, likes and reposts; every author follows
`author1` and the viewer; the authors mention, like, repost and follow the viewer, so
the viewer has a full page of notifications. Then it times each page through Django's
test client with production settings, the pages alternated request by request after a
warm-up, and prints the median of each run with the page's size and round trips.
With `--cpu` it prints the CPU time each request cost instead, the site's process
and the Redis server's (less disturbed than times on a shared, noisy machine).
With `--spoilers` every seeded status carries a content warning (its row folds the
text behind it; a checkout without them cannot take the option). With `--edited`
every seeded status was edited once (its row is marked "Edited"; likewise). With
`--polls` each of the authors' 90 statuses asks a poll of three options, every other
one voted in by the viewer (its row shows the results, the others a form; likewise).
With
`--filters N` the viewer keeps N keyword filters of 5 keywords each, in every context,
the first of which also folds the strangers' statuses (the rest match nothing, as
most of a reader's keywords do on most pages). With `--followed-tags N` the viewer
follows N tags, each carried by 10 newer statuses of someone they do not follow, which
their home merges (a checkout without followed tags cannot take the option). With `--trends N` each of the last TRENDS_HOURS hours also counts N tags, as a busy
site's do (the global page shows the top ten). The trending tags are then added up
once, as a running fan-out worker keeps them (`timeline.trends.refresh`; the sum is
made to outlive the run); a checkout without that step (`--root`) adds them up on
every global page, as the change does with `--no-sum` (no worker running). (Both are
keyed to the hour the run starts in: a run that crosses into the next hour adds them
up on every global page from then on.)

What it measures is the site's own Python and Redis time per page (no WSGI server, no
kernel, no load generator): the figure to compare before and after a change to the
read path or the rendering, in the same run of two checkouts (`--root`). Pages under
load are `bench/run.py`'s.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PAGES = {
    "trivial": "/healthz/",
    "home": "/",
    "global": "/timeline/",
    "tag": "/tags/bench/",
    "profile": "/u/author1/",
    "status": None,  # one of author1's statuses, found on the profile
    "list": None,  # the viewer's list of 10 of the authors they follow (`_list`)
    "messages": "/messages/",  # 30 conversations of direct messages (`_messages`)
    "followers": "/u/author1/followers/",
    "following": "/u/viewer/following/",
    "notifications": "/notifications/",
}


def _seed(
    count: int, spoilers: bool = False, edited: bool = False, polled: bool = False
) -> str:
    """The viewer's session cookie value."""
    from accounts import services as account_services
    from timeline import fanout, services, social

    def user(name: str):
        return account_services.user_create(username=name, password="x" * 12)

    # A content warning on every status, when asked (`--spoilers`).
    warned = {"spoiler": "A content warning"} if spoilers else {}
    viewer = user("viewer")
    authors = [user(f"author{i}") for i in range(count)]
    stranger = user("stranger")
    for author in authors:
        services.follow_create(follower=viewer, followee_id=author.id)
        services.follow_create(follower=author, followee_id=viewer.id)
        if author.id != authors[1].id:
            services.follow_create(follower=author, followee_id=authors[1].id)
    fanout.run_pending()
    for i in range(20):  # a full profile page
        services.status_create(
            author=authors[1], text=f"Profile status {i} #bench", **warned
        )
    own = [
        services.status_create(
            author=viewer, text=f"Viewer's status {i} #bench", **warned
        ).id
        for i in range(10)
    ]
    for i in range(90):
        author = authors[i % count]
        mention = "@viewer" if i % 2 else f"@author{(i + 1) % count}"
        text = (
            f"Status {i} for {mention} about #bench and #t{i % 7}, "
            f"see https://example.com/{i} <b>&</b>"
        )
        if polled:
            # A poll on every status, when asked (`--polls`): the viewer voted in
            # every other one (its results show, the rest a form).
            from timeline import polls

            asked = polls.poll_make(["Tea", "Coffee", "Water"], 86400)
            sid = services.status_create(
                author=author, text=text, poll=asked, **warned
            ).id
            if i % 2:
                polls.poll_vote(user=viewer, sid=sid, choices=[i % 3])
        else:
            sid = services.status_create(author=author, text=text, **warned).id
        if i % 3 == 0:
            social.status_like(user=authors[(i + 2) % count], sid=sid)
        if i % 6 == 0:
            # Of someone the viewer does not follow: the repost shows (a followee's
            # status shows once, as itself or as one of its reposts).
            other = services.status_create(author=stranger, text=f"Stranger {i} #t")
            social.status_repost(user=authors[(i + 5) % count], sid=other.id)
        social.status_like(user=author, sid=own[i % len(own)])
        if i % 4 == 0:
            social.status_repost(user=author, sid=own[i % len(own)])
    fanout.run_pending()
    if edited:
        # Every status edited once, when asked (`--edited`): its row is marked.
        from accounts.selectors import user_get
        from config.redis import get_redis
        from timeline import edits, keys

        for uid in [viewer.id, *(a.id for a in authors)]:
            user_of = user_get(uid=uid)
            for sid in get_redis().zrange(keys.posts(uid), 0, -1):
                text = get_redis().hget(keys.status(int(sid)), "text")
                if get_redis().hexists(keys.status(int(sid)), "repost_of"):
                    continue
                edits.status_edit(
                    user=user_of, sid=int(sid), text=f"{text} (edited)", **warned
                )
        fanout.run_pending()
    return account_services.session_create(uid=viewer.id).cookie_value()


def _filters(count: int) -> None:
    """The viewer's `count` keyword filters (`--filters`), 5 keywords each."""
    from accounts.selectors import user_id_by_username
    from timeline import filters

    uid = user_id_by_username(username="viewer")
    for n in range(count):
        words = [f"word{n}x{k}" for k in range(5 if n else 4)]
        if n == 0:
            words.append("Stranger")
        filters.filter_create(
            uid=uid,
            title=f"Filter {n}",
            context=filters.CONTEXTS,
            keywords=[filters.KeywordChange(w) for w in words],
        )


def _followed_tags(count: int) -> None:
    """The viewer follows `count` tags (`--followed-tags`), each carried by 10
    statuses of someone they do not follow, posted after the seed's: their home
    merges the tags' timelines, whose statuses fill its first page."""
    from accounts import services as account_services
    from accounts.selectors import user_id_by_username
    from timeline import fanout, services, tagfollows

    viewer = user_id_by_username(username="viewer")
    poster = account_services.user_create(username="tagger", password="x" * 12)
    for n in range(count):
        tagfollows.tag_follow(uid=viewer, tag=f"followed{n}")
        for i in range(10):
            services.status_create(author=poster, text=f"Tagged {i} #followed{n}")
    fanout.run_pending()


def _list() -> str:
    """A list of the viewer's: 10 of the 40 authors they follow (a checkout without
    lists has no such page)."""
    from accounts.selectors import user_id_by_username
    from timeline import lists

    uid = user_id_by_username(username="viewer")
    made = lists.list_create(uid=uid, title="Ten authors")
    members = [user_id_by_username(username=f"author{n}") for n in range(1, 11)]
    lists.members_add(uid=uid, lid=made.id, member_ids=members)
    return f"/lists/{made.id}/"


def _messages() -> None:
    """30 conversations of the viewer's direct messages, each begun by one of the
    authors, the viewer answering every other one (a checkout without direct
    messages has no such page)."""
    from accounts.selectors import user_get, user_id_by_username
    from timeline import fanout, services, social

    viewer = user_get(uid=user_id_by_username(username="viewer"))
    for i in range(30):
        author = user_get(uid=user_id_by_username(username=f"author{i % 40}"))
        sid = services.status_create(
            author=author, text=f"@viewer a word in private {i}", direct=True
        ).id
        if i % 2:
            social.status_reply(author=viewer, sid=sid, text=f"@author{i} sure {i}")
    fanout.run_pending()


def _busy_trends(tags: int) -> None:
    """Each of the last TRENDS_HOURS hours counts `tags` tags, 1 to 50 uses each."""
    from django.conf import settings

    from config.redis import get_redis
    from timeline import keys

    hour = int(time.time() // 3600)
    for h in range(hour - settings.TRENDS_HOURS + 1, hour + 1) if tags else ():
        counts = {f"tag{i}": 1 + (i * 7919 + h) % 50 for i in range(tags)}
        get_redis().zadd(keys.trends(h), counts)


def _sum_trends() -> None:
    """Add the trending tags up as a running fan-out worker does (where the checkout
    measured has that step)."""
    try:
        from timeline.trends import refresh
    except ImportError:
        return
    refresh()


def _get(client, path: str) -> float:
    start = time.perf_counter()
    response = client.get(path, secure=True)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, (path, response.status_code)
    return elapsed


def _redis_cpu() -> float:
    from config.redis import get_redis

    info = get_redis().info("cpu")
    return info["used_cpu_user"] + info["used_cpu_sys"]


def _cpu_runs(client, paths: dict, names: list[str], args) -> None:
    """CPU per request rather than time: this process's (the site's Python) and
    the Redis server's, each page's requests in a block. On a shared machine CPU
    time moves far less with the other load than the time a request takes."""
    for run in range(args.runs):
        figures = []
        for name in names:
            python, redis_cpu = time.process_time(), _redis_cpu()
            for _ in range(args.requests):
                _get(client, paths[name])
            python = (time.process_time() - python) / args.requests * 1000
            redis_cpu = (_redis_cpu() - redis_cpu) / args.requests * 1000
            figures.append(
                f"{name} {python + redis_cpu:.3f} ms ({python:.3f} + {redis_cpu:.3f})"
            )
        print(f"run {run + 1} (CPU per request, site + Redis): " + ", ".join(figures))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated")
    parser.add_argument("--profile", metavar="PAGE", help="cProfile this page instead")
    parser.add_argument("--sort", default="tottime", help="cProfile's sort key")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="CPU per request (the site's and Redis's) rather than time",
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the checkout to measure"
    )
    parser.add_argument(
        "--trends",
        type=int,
        default=0,
        metavar="N",
        help="tags counted in each of the last hours, as on a busy site",
    )
    parser.add_argument(
        "--spoilers",
        action="store_true",
        help="every seeded status carries a content warning",
    )
    parser.add_argument(
        "--edited",
        action="store_true",
        help="every seeded status was edited once",
    )
    parser.add_argument(
        "--polls",
        action="store_true",
        help="every seeded status of the authors carries a poll",
    )
    parser.add_argument(
        "--filters",
        type=int,
        default=0,
        metavar="N",
        help="the viewer keeps N keyword filters (the first folds some statuses)",
    )
    parser.add_argument(
        "--followed-tags",
        type=int,
        default=0,
        metavar="N",
        help="the viewer follows N tags, whose statuses their home merges",
    )
    parser.add_argument(
        "--no-sum",
        action="store_true",
        help="no worker's sum of the trends: every global page adds them up",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root))
    os.chdir(args.root)
    from config.embedded import start_server

    url, server = start_server(
        Path(tempfile.mkdtemp(prefix="bench-inprocess-")),
        persist=False,
        daemonize=False,
    )
    try:
        os.environ.update(
            REDIS_URL=url,
            DEBUG="false",
            SECRET_KEY="bench-" + "k" * 50,
            ALLOWED_HOSTS="testserver",
            RATE_LIMIT_POST="off",
            RATE_LIMIT_FOLLOW="off",
            RATE_LIMIT_LIKE="off",
            DJANGO_SETTINGS_MODULE="config.settings",
            STATIC_ROOT=tempfile.mkdtemp(prefix="bench-static-"),
            # The worker's sum of the trending tags outlives the run (`_sum_trends`).
            TRENDS_REFRESH_SECONDS="86400",
        )
        import django

        django.setup()
        from django.core.management import call_command

        call_command("collectstatic", interactive=False, verbosity=0)
        from django.conf import settings
        from django.test import Client

        from tests.roundtrips import RoundTripCounter

        client = Client()
        client.cookies[settings.AUTH_COOKIE_NAME] = _seed(
            40, args.spoilers, args.edited, args.polls
        )
        if args.filters:
            _filters(args.filters)
        if args.followed_tags:
            _followed_tags(args.followed_tags)
        _busy_trends(args.trends)
        if not args.no_sum:
            _sum_trends()
        paths = dict(PAGES)
        profile = client.get(paths["profile"], secure=True).content
        sid = re.search(rb'href="/s/(\d+)/"', profile)[1].decode()
        paths["status"] = f"/s/{sid}/"
        names = [args.profile] if args.profile else args.pages.split(",")
        if "list" in names:
            paths["list"] = _list()
        if "messages" in names:
            _messages()
        for name in names:
            for _ in range(30):
                _get(client, paths[name])
            with RoundTripCounter() as counter:
                size = len(client.get(paths[name], secure=True).content)
            print(f"{name}: {paths[name]}, {size:,} bytes, {counter.count} round trips")
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.requests):
                _get(client, paths[args.profile])
            profiler.disable()
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)
            return 0
        if args.cpu:
            _cpu_runs(client, paths, names, args)
            return 0
        for run in range(args.runs):
            times: dict[str, list[float]] = {name: [] for name in names}
            for _ in range(args.requests):
                for name in names:
                    times[name].append(_get(client, paths[name]))
            print(
                f"run {run + 1}: "
                + ", ".join(
                    f"{name} {statistics.median(t) * 1000:.3f} ms"
                    for name, t in times.items()
                )
            )
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
