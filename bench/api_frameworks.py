"""Framework-overhead benchmark for a Mastodon-style "list of 30 Statuses" read.

Single-file Django project. Every endpoint returns the SAME JSON body, built per
request by the same plain function (build_body) from simple Python objects; only
the framework/serialization path differs.

It needs Django REST framework and Django Ninja, which the site does not use: run it
in a scratch venv, outside the project (about 4 minutes):

    python3 -m venv /tmp/fwbench && /tmp/fwbench/bin/pip install 'Django>=5.2,<5.3' \
        djangorestframework django-ninja orjson
    cd /tmp && /tmp/fwbench/bin/python <checkout>/bench/api_frameworks.py

Figures and what they decided: docs/BENCHMARKS.md ("Which framework for the client API").
"""

import gc
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY="bench",
    ALLOWED_HOSTS=["testserver"],
    ROOT_URLCONF=__name__,
    DATABASES={},
    INSTALLED_APPS=["rest_framework"],  # no auth / contenttypes
    MIDDLEWARE=[],
    USE_TZ=True,
    REST_FRAMEWORK={
        "DEFAULT_AUTHENTICATION_CLASSES": [],
        "DEFAULT_PERMISSION_CLASSES": [],
        "DEFAULT_THROTTLE_CLASSES": [],
        "UNAUTHENTICATED_USER": None,
        "UNAUTHENTICATED_TOKEN": None,
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
        "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    },
)
django.setup()

import orjson  # noqa: E402
from django.core.serializers.json import DjangoJSONEncoder  # noqa: E402
from django.http import HttpResponse, JsonResponse  # noqa: E402
from django.test import Client, RequestFactory  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import path, resolve  # noqa: E402
from ninja import NinjaAPI, Schema  # noqa: E402
from ninja.renderers import BaseRenderer  # noqa: E402
from rest_framework import serializers  # noqa: E402
from rest_framework.decorators import api_view  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework.views import APIView  # noqa: E402

# --------------------------------------------------------------------------
# Simple Python source objects (what the site would hold) + the plain builder
# --------------------------------------------------------------------------


@dataclass
class Acct:
    id: int
    username: str
    domain: str | None
    display_name: str
    note: str
    created: datetime
    last_status: datetime
    followers: int
    following: int
    statuses: int
    fields: list = field(default_factory=list)


@dataclass
class Post:
    id: int
    author: Acct
    created: datetime
    edited: datetime | None
    html: str
    visibility: str
    language: str
    replies: int
    reblogs: int
    favourites: int
    in_reply_to: int | None
    in_reply_to_account: int | None
    tags: list
    mentions: list  # list[Acct]


BASE = "https://example.social"
T0 = datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)
HTML = (
    '<p>Hello <span class="h-card"><a href="https://example.social/@bob" class="u-url mention">'
    "@<span>bob</span></a></span> this is a status with a "
    '<a href="https://example.social/tags/django" class="mention hashtag" rel="tag">#<span>django</span></a>'
    " tag.</p>"
)  # ~300 chars incl. markup, ~200 of it attribute/markup-heavy HTML

ACCOUNTS = [
    Acct(
        id=100000000000000000 + i,
        username=f"user{i}",
        domain=None if i % 2 else "remote.example",
        display_name=f"User Number {i} \u2728",
        note="<p>Just a person on the fediverse. Likes Python &amp; Django.</p>",
        created=T0 - timedelta(days=400 + i),
        last_status=T0 - timedelta(days=i),
        followers=1234 + i,
        following=321 + i,
        statuses=9876 + i,
        fields=[("Website", f'<a href="https://u{i}.example">u{i}.example</a>', None)],
    )
    for i in range(10)
]
POSTS = [
    Post(
        id=110000000000000000 + i,
        author=ACCOUNTS[i % 10],
        created=T0 + timedelta(minutes=i),
        edited=(T0 + timedelta(minutes=i + 5)) if i % 5 == 0 else None,
        html=HTML,
        visibility="public",
        language="en",
        replies=i,
        reblogs=2 * i,
        favourites=3 * i,
        in_reply_to=(110000000000000000 + i - 1) if i % 3 == 0 and i else None,
        in_reply_to_account=ACCOUNTS[(i - 1) % 10].id if i % 3 == 0 and i else None,
        tags=["django"],
        mentions=[ACCOUNTS[(i + 1) % 10]],
    )
    for i in range(30)
]


def iso(dt):
    if dt is None:
        return None
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def acct_str(a):
    return a.username if a.domain is None else f"{a.username}@{a.domain}"


def account_dict(a):  # 26 fields
    url = f"{BASE}/@{acct_str(a)}"
    return {
        "id": str(a.id),
        "username": a.username,
        "acct": acct_str(a),
        "display_name": a.display_name,
        "locked": False,
        "bot": False,
        "discoverable": True,
        "indexable": True,
        "group": False,
        "hide_collections": False,
        "noindex": False,
        "created_at": iso(a.created),
        "note": a.note,
        "url": url,
        "uri": f"{BASE}/users/{a.username}",
        "avatar": f"{BASE}/avatars/{a.id}.png",
        "avatar_static": f"{BASE}/avatars/{a.id}.png",
        "header": f"{BASE}/headers/{a.id}.png",
        "header_static": f"{BASE}/headers/{a.id}.png",
        "followers_count": a.followers,
        "following_count": a.following,
        "statuses_count": a.statuses,
        "last_status_at": a.last_status.date().isoformat(),
        "emojis": [],
        "fields": [
            {"name": n, "value": v, "verified_at": iso(t)} for n, v, t in a.fields
        ],
        "roles": [],
    }


def status_dict(p):  # 35 fields
    return {
        "id": str(p.id),
        "uri": f"{BASE}/users/{p.author.username}/statuses/{p.id}",
        "url": f"{BASE}/@{acct_str(p.author)}/{p.id}",
        "created_at": iso(p.created),
        "edited_at": iso(p.edited),
        "account": account_dict(p.author),
        "content": p.html,
        "text": None,
        "visibility": p.visibility,
        "sensitive": False,
        "spoiler_text": "",
        "media_attachments": [],
        "application": {"name": "Web", "website": None},
        "mentions": [
            {
                "id": str(m.id),
                "username": m.username,
                "url": f"{BASE}/@{acct_str(m)}",
                "acct": acct_str(m),
            }
            for m in p.mentions
        ],
        "tags": [{"name": t, "url": f"{BASE}/tags/{t}"} for t in p.tags],
        "emojis": [],
        "reblogs_count": p.reblogs,
        "favourites_count": p.favourites,
        "replies_count": p.replies,
        "quotes_count": 0,
        "in_reply_to_id": str(p.in_reply_to) if p.in_reply_to else None,
        "in_reply_to_account_id": str(p.in_reply_to_account)
        if p.in_reply_to_account
        else None,
        "reblog": None,
        "poll": None,
        "card": None,
        "language": p.language,
        "favourited": False,
        "reblogged": False,
        "muted": False,
        "bookmarked": False,
        "pinned": False,
        "filtered": [],
        "quote": None,
        "quote_approval": {
            "automatic": ["public"],
            "manual": [],
            "current_user": "automatic",
        },
        "local_only": False,
    }


def build_body():
    return [status_dict(p) for p in POSTS]


# --------------------------------------------------------------------------
# 1/2: plain Django
# --------------------------------------------------------------------------


def v_plain_orjson(request):
    return HttpResponse(orjson.dumps(build_body()), content_type="application/json")


def v_plain_jsonresponse(request):
    return JsonResponse(build_body(), safe=False)


# --------------------------------------------------------------------------
# 3: DRF
# --------------------------------------------------------------------------


class DRFPlainView(APIView):
    def get(self, request):
        return Response(build_body())


@api_view(["GET"])
def drf_plain_fn(request):
    return Response(build_body())


class FieldSerializer(serializers.Serializer):
    name = serializers.CharField()
    value = serializers.CharField()
    verified_at = serializers.CharField(allow_null=True)


class AccountSerializer(serializers.Serializer):
    id = serializers.CharField()
    username = serializers.CharField()
    acct = serializers.CharField()
    display_name = serializers.CharField()
    locked = serializers.BooleanField()
    bot = serializers.BooleanField()
    discoverable = serializers.BooleanField(allow_null=True)
    indexable = serializers.BooleanField()
    group = serializers.BooleanField()
    hide_collections = serializers.BooleanField(allow_null=True)
    noindex = serializers.BooleanField(allow_null=True)
    created_at = serializers.CharField()
    note = serializers.CharField()
    url = serializers.CharField()
    uri = serializers.CharField()
    avatar = serializers.CharField()
    avatar_static = serializers.CharField()
    header = serializers.CharField()
    header_static = serializers.CharField()
    followers_count = serializers.IntegerField()
    following_count = serializers.IntegerField()
    statuses_count = serializers.IntegerField()
    last_status_at = serializers.CharField(allow_null=True)
    emojis = serializers.ListField(child=serializers.DictField())
    fields = FieldSerializer(many=True)
    roles = serializers.ListField(child=serializers.DictField())


class MentionSerializer(serializers.Serializer):
    id = serializers.CharField()
    username = serializers.CharField()
    url = serializers.CharField()
    acct = serializers.CharField()


class TagSerializer(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.CharField()


class ApplicationSerializer(serializers.Serializer):
    name = serializers.CharField()
    website = serializers.CharField(allow_null=True)


class QuoteApprovalSerializer(serializers.Serializer):
    automatic = serializers.ListField(child=serializers.CharField())
    manual = serializers.ListField(child=serializers.CharField())
    current_user = serializers.CharField()


class StatusSerializer(serializers.Serializer):
    id = serializers.CharField()
    uri = serializers.CharField()
    url = serializers.CharField(allow_null=True)
    created_at = serializers.CharField()
    edited_at = serializers.CharField(allow_null=True)
    account = AccountSerializer()
    content = serializers.CharField()
    text = serializers.CharField(allow_null=True)
    visibility = serializers.CharField()
    sensitive = serializers.BooleanField()
    spoiler_text = serializers.CharField()
    media_attachments = serializers.ListField(child=serializers.DictField())
    application = ApplicationSerializer(allow_null=True)
    mentions = MentionSerializer(many=True)
    tags = TagSerializer(many=True)
    emojis = serializers.ListField(child=serializers.DictField())
    reblogs_count = serializers.IntegerField()
    favourites_count = serializers.IntegerField()
    replies_count = serializers.IntegerField()
    quotes_count = serializers.IntegerField()
    in_reply_to_id = serializers.CharField(allow_null=True)
    in_reply_to_account_id = serializers.CharField(allow_null=True)
    reblog = serializers.DictField(allow_null=True)
    poll = serializers.DictField(allow_null=True)
    card = serializers.DictField(allow_null=True)
    language = serializers.CharField(allow_null=True)
    favourited = serializers.BooleanField()
    reblogged = serializers.BooleanField()
    muted = serializers.BooleanField()
    bookmarked = serializers.BooleanField()
    pinned = serializers.BooleanField()
    filtered = serializers.ListField(child=serializers.DictField())
    quote = serializers.DictField(allow_null=True)
    quote_approval = QuoteApprovalSerializer()
    local_only = serializers.BooleanField()


class DRFSerializerView(APIView):
    def get(self, request):
        return Response(StatusSerializer(build_body(), many=True).data)


# --------------------------------------------------------------------------
# 4: Django Ninja
# --------------------------------------------------------------------------


class FieldSchema(Schema):
    name: str
    value: str
    verified_at: str | None


class AccountSchema(Schema):
    id: str
    username: str
    acct: str
    display_name: str
    locked: bool
    bot: bool
    discoverable: bool | None
    indexable: bool
    group: bool
    hide_collections: bool | None
    noindex: bool | None
    created_at: str
    note: str
    url: str
    uri: str
    avatar: str
    avatar_static: str
    header: str
    header_static: str
    followers_count: int
    following_count: int
    statuses_count: int
    last_status_at: str | None
    emojis: list[dict[str, Any]]
    fields: list[FieldSchema]
    roles: list[dict[str, Any]]


class MentionSchema(Schema):
    id: str
    username: str
    url: str
    acct: str


class TagSchema(Schema):
    name: str
    url: str


class ApplicationSchema(Schema):
    name: str
    website: str | None


class QuoteApprovalSchema(Schema):
    automatic: list[str]
    manual: list[str]
    current_user: str


class StatusSchema(Schema):
    id: str
    uri: str
    url: str | None
    created_at: str
    edited_at: str | None
    account: AccountSchema
    content: str
    text: str | None
    visibility: str
    sensitive: bool
    spoiler_text: str
    media_attachments: list[dict[str, Any]]
    application: ApplicationSchema | None
    mentions: list[MentionSchema]
    tags: list[TagSchema]
    emojis: list[dict[str, Any]]
    reblogs_count: int
    favourites_count: int
    replies_count: int
    quotes_count: int
    in_reply_to_id: str | None
    in_reply_to_account_id: str | None
    reblog: dict[str, Any] | None
    poll: dict[str, Any] | None
    card: dict[str, Any] | None
    language: str | None
    favourited: bool
    reblogged: bool
    muted: bool
    bookmarked: bool
    pinned: bool
    filtered: list[dict[str, Any]]
    quote: dict[str, Any] | None
    quote_approval: QuoteApprovalSchema
    local_only: bool


class ORJSONRenderer(BaseRenderer):
    media_type = "application/json"

    def render(self, request, data, *, response_status):
        return orjson.dumps(data)


ninja_api = NinjaAPI(urls_namespace="ninja_default")
ninja_orjson_api = NinjaAPI(urls_namespace="ninja_orjson", renderer=ORJSONRenderer())


@ninja_api.get("/statuses-noschema")
def ninja_noschema(request):
    return build_body()


@ninja_api.get("/statuses-schema", response=list[StatusSchema])
def ninja_schema(request):
    return build_body()


@ninja_orjson_api.get("/statuses-noschema")
def ninja_orjson_noschema(request):
    return build_body()


@ninja_orjson_api.get("/statuses-schema", response=list[StatusSchema])
def ninja_orjson_schema(request):
    return build_body()


# --------------------------------------------------------------------------
urlpatterns = [
    path("plain/orjson", v_plain_orjson),
    path("plain/jsonresponse", v_plain_jsonresponse),
    path("drf/apiview", DRFPlainView.as_view()),
    path("drf/api_view", drf_plain_fn),
    path("drf/serializer", DRFSerializerView.as_view()),
    path("ninja/", ninja_api.urls),
    path("ninjaorjson/", ninja_orjson_api.urls),
]

VARIANTS = [
    ("1  plain Django + orjson HttpResponse", "/plain/orjson"),
    ("2  plain Django + JsonResponse (stdlib json)", "/plain/jsonresponse"),
    ("3a DRF APIView + Response(dicts)", "/drf/apiview"),
    ("3b DRF @api_view + Response(dicts)", "/drf/api_view"),
    ("3c DRF APIView + nested Serializer(many=True)", "/drf/serializer"),
    ("4a Ninja, no response schema", "/ninja/statuses-noschema"),
    ("4b Ninja, response=list[StatusSchema]", "/ninja/statuses-schema"),
    ("4c Ninja + orjson renderer, no schema", "/ninjaorjson/statuses-noschema"),
    (
        "4d Ninja + orjson renderer, response=list[StatusSchema]",
        "/ninjaorjson/statuses-schema",
    ),
]

WARMUP = 200
ROUNDS = 7
N = 500


def run_rounds(callables):
    """callables: list of (name, fn). Warm each up, then ROUNDS rounds of N calls,
    interleaved round by round (order rotated each round). Returns name -> list of us/call."""
    for _, fn in callables:
        for _ in range(WARMUP):
            fn()
    res = {name: [] for name, _ in callables}
    k = len(callables)
    for r in range(ROUNDS):
        order = callables[r % k :] + callables[: r % k]
        for name, fn in order:
            gc.collect()
            t = time.perf_counter_ns()
            for _ in range(N):
                fn()
            res[name].append((time.perf_counter_ns() - t) / N / 1000)
    return res


def report(title, res, base_name):
    base = statistics.median(res[base_name])
    print(f"\n## {title}\n")
    print("| variant | median us/req | ratio to 1 | min..max of round medians (us) |")
    print("|---|---:|---:|---|")
    for name, xs in res.items():
        m = statistics.median(xs)
        print(f"| {name} | {m:.0f} | {m / base:.2f} | {min(xs):.0f}..{max(xs):.0f} |")


def main():
    setup_test_environment()
    client = Client()
    ref = build_body()
    ref_bytes = orjson.dumps(ref)
    print(
        f"Python {sys.version.split()[0]}; body: {len(ref)} statuses, "
        f"{len(ref[0])} Status fields, {len(ref[0]['account'])} Account fields, "
        f"content {len(ref[0]['content'])} chars, {len(ref_bytes)} bytes (orjson)"
    )

    # Correctness: every endpoint returns 200 + a body equal to the reference.
    for name, p in VARIANTS:
        r = client.get(p)
        assert r.status_code == 200, (name, r.status_code, r.content[:300])
        assert r["Content-Type"].startswith("application/json"), (
            name,
            r["Content-Type"],
        )
        got = json.loads(r.content)
        assert got == ref, f"{name}: body differs from reference"
        print(f"ok  {name:60s} {len(r.content):6d} bytes  {r['Content-Type']}")

    # A. Full in-process request via django.test.Client
    calls = [(name, (lambda p=p: client.get(p))) for name, p in VARIANTS]
    res = run_rounds(calls)
    report(
        f"A. django.test.Client().get(path): warmup {WARMUP}, {ROUNDS} rounds x {N}, interleaved",
        res,
        VARIANTS[0][0],
    )

    # B. Same views called directly with a RequestFactory request (no Client/handler
    #    overhead); response rendered (DRF TemplateResponse) and .content read.
    rf = RequestFactory()

    def direct(p):
        view = resolve(p).func

        def call():
            resp = view(rf.get(p))
            if hasattr(resp, "render"):
                resp.render()
            return resp.content

        return call

    res_b = run_rounds([(name, direct(p)) for name, p in VARIANTS])
    report(
        "B. view called directly (RequestFactory; no Client/handler/middleware)",
        res_b,
        VARIANTS[0][0],
    )

    # C. Serialization only, of a prebuilt body
    body = build_body()
    ser = [
        ("body build only: build_body()", build_body),
        ("orjson.dumps(body)", lambda: orjson.dumps(body)),
        ("json.dumps(body) (stdlib defaults)", lambda: json.dumps(body)),
        (
            "json.dumps(body, cls=DjangoJSONEncoder) (= JsonResponse)",
            lambda: json.dumps(body, cls=DjangoJSONEncoder),
        ),
        (
            "StatusSerializer(body, many=True).data (DRF, no render)",
            lambda: StatusSerializer(body, many=True).data,
        ),
        (
            "pydantic list[StatusSchema] validate+dump (Ninja-style, no render)",
            lambda: [StatusSchema.model_validate(d).model_dump() for d in body],
        ),
    ]
    res_c = run_rounds(ser)
    base = statistics.median(res_c["orjson.dumps(body)"])
    print(
        f"\n## C. Serialization / body-building only (prebuilt body), {ROUNDS} rounds x {N}\n"
    )
    print("| operation | median us/call | ratio to orjson.dumps |")
    print("|---|---:|---:|")
    for name, xs in res_c.items():
        m = statistics.median(xs)
        print(f"| {name} | {m:.1f} | {m / base:.1f} |")


if __name__ == "__main__":
    main()
