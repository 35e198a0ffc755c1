"""What the benchmark asks of the site: whose pages, which requests, and their round trips.

Needs Django set up (`bench/run.py` does it): paths come from `reverse()`, the viewer's
login from `accounts.services`.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.load import Page

# The reference every page is compared with: Django's own overhead, a view that touches
# no Redis, served by gunicorn's sync workers. The site's pages are served by the
# server the README deploys (`--server`), which also serves the trivial view once.
TRIVIAL = "trivial view (/healthz/, no Redis)"
SITE_TRIVIAL = "trivial view on the site's server"

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
  return wrk.format(nil, "{post}", nil, "csrfmiddlewaretoken={csrf}&text=bench+status+" .. n)
end
"""
)

WRK_FOLLOW = (
    WRK_FORM
    + """
request = function()
  n = n + 1
  local path = (n % 2 == 1) and "{follow}" or "{unfollow}"
  return wrk.format(nil, path, nil, "csrfmiddlewaretoken={csrf}")
end
"""
)

WRK_GET = """
wrk.headers["Cookie"] = "{cookie}"
"""

# A client app's request: its bearer token, never a cookie.
WRK_API = """
wrk.headers["Authorization"] = "Bearer {bearer}"
"""


@dataclass(frozen=True)
class People:
    """The viewer the pages are seen by, a status on their home, the most followed."""

    viewer_id: int
    viewer_name: str
    celebrity_name: str
    status_id: int  # the newest status on the viewer's home
    cookie: str  # the viewer's auth cookie, `name=value`
    bearer: str  # an access token of the viewer's for a client app (the API)
    tag: str = "bench"  # a tag with a full page of statuses
    csrf: str = "b" * 32


def pick_people(*, users: int, follows_per_user: int) -> People:
    """A viewer with a full-enough home and a typical following; the most followed."""
    from django.conf import settings

    from accounts.selectors import user_get
    from accounts.services import app_token_create, session_create
    from config.redis import get_redis
    from timeline import keys

    sample = range(1, users + 1, max(1, users // 2000))
    pipe = get_redis().pipeline(transaction=False)
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
    rows.sort(key=lambda row: (row[3] < 30, abs(row[2] - follows_per_user)))
    viewer = next(row[0] for row in rows if row[0] != celebrity)
    newest = get_redis().zrevrange(keys.home(viewer), 0, 0)
    if not newest:
        raise RuntimeError(f"user {viewer} has an empty home: seed more statuses")
    _conversation(viewer, sample)
    credentials = session_create(uid=viewer)
    bearer, _ = app_token_create(
        uid=viewer,
        client_id="bench",
        app="Benchmark",
        website="",
        scopes=("read", "write", "follow"),
    )
    return People(
        viewer_id=viewer,
        viewer_name=user_get(uid=viewer).username,
        celebrity_name=user_get(uid=celebrity).username,
        status_id=int(newest[0]),
        cookie=f"{settings.AUTH_COOKIE_NAME}={credentials.cookie_value()}",
        bearer=bearer.access_token,
    )


def _conversation(viewer: int, sample: range) -> None:
    """Give the tag page and the viewer's notifications a full page each: 40 people
    post with the bench's tag, mentioning the viewer, and like and repost one of
    the viewer's statuses (through the services, as people do; jobs run here)."""
    from accounts.selectors import user_get
    from timeline import services, social
    from timeline.fanout import run_pending

    own = services.status_create(
        author=user_get(uid=viewer), text="the viewer's status, liked and reposted"
    )
    others = [uid for uid in sample if uid != viewer][:40]
    for uid in others:
        author = user_get(uid=uid)
        services.status_create(
            author=author,
            text=f"#bench a status with a tag, for @{user_get(uid=viewer).username}",
        )
        social.status_like(user=author, sid=own.id)
    for uid in others[:10]:
        social.status_repost(user=user_get(uid=uid), sid=own.id)
    run_pending()


def _paths(people: People) -> dict[str, str]:
    from django.urls import reverse

    celebrity = {"username": people.celebrity_name}
    return {
        "trivial": reverse("healthz"),
        "home": reverse("timeline:home"),
        "profile": reverse("timeline:profile", kwargs=celebrity),
        "status": reverse("timeline:status_detail", kwargs={"sid": people.status_id}),
        "followers": reverse("timeline:followers", kwargs=celebrity),
        "following": reverse(
            "timeline:following", kwargs={"username": people.viewer_name}
        ),
        "global": reverse("timeline:global_timeline"),
        "tag": reverse("timeline:tag", kwargs={"tag": people.tag}),
        "notifications": reverse("timeline:notifications"),
        # The client API asks for the HTML home's 30 statuses (Mastodon's paths).
        "api_home": "/api/v1/timelines/home?limit=30",
        "api_public": "/api/v1/timelines/public?limit=30",
        "post": reverse("timeline:post_status"),
        "follow": reverse("timeline:follow", kwargs=celebrity),
        "unfollow": reverse("timeline:unfollow", kwargs=celebrity),
    }


# The GET pages: their names in the report, and which path each one asks for.
GET_PAGES = [
    ("home (logged in)", "home"),
    ("profile (most followed user)", "profile"),
    ("status (newest on the viewer's home)", "status"),
    ("followers (most followed user)", "followers"),
    ("following (the viewer)", "following"),
    ("global timeline (logged in)", "global"),
    ("tag page (logged in)", "tag"),
    ("notifications (the viewer)", "notifications"),
]
# The client API's reads, with the viewer's bearer token.
API_PAGES = [
    ("API home, 30 statuses (JSON)", "api_home"),
    ("API public timeline, 30 statuses (JSON)", "api_public"),
]


def load_pages(people: People) -> list[Page]:
    """The requests measured under load, the trivial view first."""
    paths = _paths(people)
    fmt = {"cookie": people.cookie, "csrf": people.csrf, **paths}
    get = WRK_GET.format(**fmt)
    return [
        Page(TRIVIAL, paths["trivial"], server="reference"),
        Page(SITE_TRIVIAL, paths["trivial"]),
        *(Page(name, paths[key], get) for name, key in GET_PAGES),
        *(
            Page(name, paths[key], WRK_API.format(bearer=people.bearer))
            for name, key in API_PAGES
        ),
        Page("post a status", paths["post"], WRK_POST.format(**fmt)),
        Page("follow + unfollow", paths["home"], WRK_FOLLOW.format(**fmt)),
    ]


def count_round_trips(people: People) -> dict[str, int]:
    """Redis round trips of one request per page, served in this process."""
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from tests.roundtrips import RoundTripCounter

    setup_test_environment()
    paths = _paths(people)
    login = reverse("accounts:login")
    client = Client(HTTP_HOST="127.0.0.1")
    client.cookies.load(people.cookie)
    requests = [
        *((name, "get", paths[key], None) for name, key in GET_PAGES),
        ("post a status", "post", paths["post"], {"text": "counted"}),
        ("follow", "post", paths["follow"], None),
        ("unfollow", "post", paths["unfollow"], None),
    ]
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {people.bearer}")
    requests += [(name, "api", paths[key], None) for name, key in API_PAGES]

    def send(method: str, path: str, data):
        if method == "api":
            return api.get(path)
        return getattr(client, method)(path, data or {})

    # Count on a warm process, as the one serving the load is.
    for _, method, path, data in requests:
        send(method, path, data)
    counts = {}
    for name, method, path, data in requests:
        with RoundTripCounter() as counter:
            response = send(method, path, data)
        redirect = response.get("Location", "")
        if response.status_code not in (200, 302) or redirect.startswith(login):
            raise RuntimeError(f"{method.upper()} {path}: {response.status_code}")
        counts[name] = counter.count
    return counts
