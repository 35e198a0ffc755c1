"""The streaming API over Server-Sent Events (`/api/v1/streaming/*`).

Each stream is a sync generator (`api.streaming.Stream.frames`) in a
`StreamingHttpResponse`: one web-server thread per open stream (see the README's
deploy section). Every stream needs a token, sent as `Authorization: Bearer` or as
the `access_token` parameter (EventSource sends no header), with a read scope of
its kind, as Mastodon's streaming server asks (4.x: no anonymous stream, public
ones included); refused: 401 with Mastodon's JSON error. Past STREAMS_MAX open
streams in the process: 503. The WebSocket endpoint is left out (docs/API.md).
"""

from __future__ import annotations

import logging

from django.http import HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.selectors import PageReads
from api import scopes, streaming
from api.http import (
    CORS_HEADERS,
    OWN_ID_DIGITS,
    PREFLIGHT_HEADERS,
    ApiError,
    error_response,
)
from config.middleware import REDIS_OUTAGES

log = logging.getLogger(__name__)

# The scope each stream needs (or `read`, which holds them all).
_SCOPES = {
    "user": "read:statuses",
    "user:notification": "read:notifications",
    "public": "read:statuses",
    "public:local": "read:statuses",
    "public:remote": "read:statuses",
    "hashtag": "read:statuses",
    "hashtag:local": "read:statuses",
    "list": "read:lists",
    "direct": "read:statuses",
}


def _with_cors(response: HttpResponse) -> HttpResponse:
    for name, value in CORS_HEADERS.items():
        response[name] = value
    return response


@csrf_exempt
def health(request) -> HttpResponse:
    """`OK`: the streaming endpoints are served here."""
    return _with_cors(HttpResponse("OK", content_type="text/plain"))


def _reader(request, kind: str) -> int:
    """The proven reader's id; ApiError unless their token may open `kind`."""
    credentials = streaming.credentials_of(request)
    if credentials is None:
        sent = "Authorization" in request.headers or "access_token" in request.GET
        raise ApiError(401, "Invalid access token" if sent else "Missing access token")
    if credentials is not request.credentials:
        request.credentials = credentials
        request.reads = PageReads(credentials)
    uid = request.reads.proven_uid()
    if uid is None:
        raise ApiError(401, "Invalid access token")
    grant = request.reads.grant.value if request.reads.grant is not None else None
    if grant is None or not scopes.allows(grant.scopes, _SCOPES[kind]):
        raise ApiError(401, "Access token does not cover required scopes")
    return uid


def _stream(kind: str):
    @csrf_exempt
    def view(request) -> HttpResponse:
        if request.method == "OPTIONS":
            # A client that sends the token as a header asks first (CORS).
            response = HttpResponse(status=200)
            response["Access-Control-Allow-Methods"] = "GET, OPTIONS"
            for name, value in PREFLIGHT_HEADERS.items():
                response[name] = value
            return _with_cors(response)
        if request.method != "GET":
            # HEAD too: a stream has no end for a body-less answer to wait for.
            response = error_response(ApiError(405, "Method not allowed"))
            response["Allow"] = "GET"
            return _with_cors(response)
        tag = None
        if kind.startswith("hashtag"):
            tag = (request.GET.get("tag") or "").strip().lstrip("#")
            if not tag:
                return _with_cors(
                    error_response(ApiError(400, "No tag for stream provided"))
                )
        lid = None
        if kind == "list":
            raw = request.GET.get("list") or ""
            if not raw.isdecimal() or len(raw) > OWN_ID_DIGITS:
                return _with_cors(
                    error_response(ApiError(400, "Missing list parameter"))
                )
            lid = int(raw)
        try:
            uid = _reader(request, kind)
            if lid is not None and not streaming.list_owned(request, lid=lid):
                raise ApiError(401, "Not authorized to stream this list")
            stream = streaming.stream_open(
                request, kind=kind, uid=uid, tag=tag, lid=lid
            )
        except ApiError as error:
            return _with_cors(error_response(error))
        except streaming.StreamsFull:
            return _with_cors(
                error_response(
                    ApiError(
                        503,
                        "Too many streams open here: try again later",
                        headers={"Retry-After": "30"},
                    )
                )
            )
        except REDIS_OUTAGES as error:
            log.error("Redis unavailable for stream %s", kind, exc_info=error)
            return _with_cors(
                error_response(
                    ApiError(
                        503,
                        "The data store is unavailable",
                        headers={"Retry-After": "30"},
                    )
                )
            )
        response = StreamingHttpResponse(
            stream.frames(), content_type="text/event-stream"
        )
        response._resource_closers.append(stream.close)
        response["Cache-Control"] = "private, no-store"
        # nginx would buffer the stream and hold its events back.
        response["X-Accel-Buffering"] = "no"
        return _with_cors(response)

    return view


user = _stream("user")
user_notification = _stream("user:notification")
public = _stream("public")
public_local = _stream("public:local")
public_remote = _stream("public:remote")
hashtag = _stream("hashtag")
hashtag_local = _stream("hashtag:local")
list_ = _stream("list")
direct = _stream("direct")
