"""How an API endpoint answers: bearer auth and scopes, JSON, errors, limits, CORS.

Plain Django views, one wrapper (`endpoint`): no framework's request parsing or
serializers sit between a request and the selectors (docs/BENCHMARKS.md measures why).
Each method of a route names its handler, the scope it needs and whether it needs a
signed-in token:

    status = endpoint(
        GET=Op(status_show, scope="read:statuses", auth=OPTIONAL),
        DELETE=Op(status_remove, scope="write:statuses"),
    )

A handler takes the request (and the route's arguments) and returns what goes in
the JSON body, or a `Reply` with a status and headers; it raises `ApiError` (or a
domain error, mapped here) for anything else.

The token is checked in the request's read batch (`accounts.middleware`), queued
first, with the API's request budget. A read (GET) runs its handler first, so its
own reads ride in the same round trip as the check, and the check is enforced before
anything is answered; a write checks first, then runs. The budget is enforced before
the token (429 before 401 or 403, as Mastodon's throttle runs before its
controllers): a proven token's own, else the client address's (`_admit`). A token
that proves invalid thus spends its address's budget, in one more round trip taken
by such requests only; its GET's reads have run by then, as an anonymous GET's past
its budget have: checking every token before the handler's reads would cost every
valid request a round trip.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from django.http import HttpResponse, QueryDict
from django.http.multipartparser import MultiPartParserError
from django.views.decorators.csrf import csrf_exempt

from accounts import limits
from accounts.domain import AccountError, BearerCredentials, TooManyAttempts
from accounts.selectors import token_hash
from api import scopes
from config.http import client_ip
from config.middleware import REDIS_OUTAGES
from config.pipelines import Deferred
from config.redis import StoreRefused
from timeline.domain import (
    Blocked,
    Busy,
    CannotBlock,
    CannotFollowSelf,
    FollowRequestsFull,
    Forbidden,
    InvalidStatus,
    NotFound,
    Refused,
    TimelineError,
)

log = logging.getLogger(__name__)

REQUIRED = "required"  # a token that names a user
OPTIONAL = "optional"  # public data; a token adds the viewer's state
NONE = "none"  # no token read at all (the OAuth token endpoint, the instance)

SAFE = ("GET", "HEAD", "OPTIONS")
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": (
        "Link, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, "
        "X-Request-Id, Idempotency-Key"
    ),
}
PREFLIGHT_HEADERS = {
    "Access-Control-Allow-Headers": "Authorization, Content-Type, Idempotency-Key",
    "Access-Control-Max-Age": "86400",
}


class ApiError(Exception):
    """An error answered as Mastodon does: `{"error": "..."}` with a status."""

    def __init__(
        self,
        status: int,
        error: str,
        *,
        description: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(status, error)
        self.status = status
        self.error = error
        self.description = description
        self.headers = headers or {}


def not_found() -> ApiError:
    return ApiError(404, "Record not found")


OWN_ID_DIGITS = 12  # an id an account counts itself: more digits are none of ours


def own_id(value: str) -> int:
    """An id of one of the viewer's own things (a filter, keyword, list, scheduled
    status: their account's own count); else 404, as an unknown one is."""
    if not value.isdecimal() or len(value) > OWN_ID_DIGITS:
        raise not_found()
    return int(value)


def unprocessable(message: str) -> ApiError:
    return ApiError(422, f"Validation failed: {message}")


@dataclass(frozen=True, slots=True)
class Reply:
    """A handler's answer when it is not a plain 200 with a JSON body."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Op:
    """One method of a route: its handler, the scope(s) it needs (any of a tuple),
    and whether it needs a user's token (`REQUIRED`), takes one (`OPTIONAL`) or
    reads none (`NONE`)."""

    handler: Callable[..., Any]
    scope: str | tuple[str, ...] | None = None
    auth: str = REQUIRED


def json_response(body: Any, status: int = 200) -> HttpResponse:
    response = HttpResponse(
        orjson.dumps(body), status=status, content_type="application/json"
    )
    return response


def error_response(error: ApiError) -> HttpResponse:
    body = {"error": error.error}
    if error.description is not None:
        body["error_description"] = error.description
    response = json_response(body, error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response


def iso(moment: float) -> str:
    """A time as Mastodon writes it: ISO 8601 in UTC, milliseconds, `Z`."""
    at = datetime.fromtimestamp(moment, tz=UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def _domain_error(error: Exception) -> ApiError | None:
    """A service's error as the status and message Mastodon gives for it."""
    if isinstance(error, TooManyAttempts):
        # The refusing budget described as the API budget's is (`_budget_headers`):
        # a pacing client reads when to try again from X-RateLimit-Reset.
        headers = {
            "Retry-After": str(error.retry_after),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": iso(time.time() + error.retry_after),
        }
        if error.limit is not None:
            headers["X-RateLimit-Limit"] = str(error.limit)
        return ApiError(429, "Too many requests", headers=headers)
    if isinstance(error, NotFound):
        return not_found()
    if isinstance(error, Refused):
        return ApiError(422, error.api_error or f"Validation failed: {error}")
    if isinstance(error, InvalidStatus):
        return unprocessable(str(error) or "Text can't be blank")
    if isinstance(error, CannotFollowSelf | Blocked | Forbidden):
        return ApiError(403, "This action is not allowed")
    if isinstance(error, FollowRequestsFull | CannotBlock):
        return ApiError(422, str(error) or "This action is not allowed")
    if isinstance(error, Busy):
        return ApiError(409, "Another change of this account is in progress; try again")
    if isinstance(error, TimelineError | AccountError):
        return ApiError(422, str(error) or "Validation failed")
    return None


def _authorize(request, op: Op) -> None:
    """Raise ApiError unless the request's token may run `op`."""
    reads = request.reads
    claimed = request.credentials is not None
    viewer = reads.viewer.value
    if claimed and not viewer.is_authenticated:
        raise ApiError(401, "The access token is invalid")
    if op.auth == REQUIRED and not viewer.is_authenticated:
        raise ApiError(401, "The access token is invalid")
    if viewer.is_authenticated and op.scope is not None:
        grant = reads.grant.value if reads.grant is not None else None
        needed = (op.scope,) if isinstance(op.scope, str) else op.scope
        if grant is None or not any(scopes.allows(grant.scopes, s) for s in needed):
            raise ApiError(403, "This action is outside the authorized scopes")


def _budget_headers(budget: limits.Budget | None) -> dict[str, str]:
    if budget is None:
        return {}
    return {
        "X-RateLimit-Limit": str(budget.limit),
        "X-RateLimit-Remaining": str(budget.remaining),
        "X-RateLimit-Reset": iso(budget.reset_at),
    }


def _check_budget(budget: limits.Budget | None) -> None:
    if budget is not None and budget.wait:
        raise ApiError(
            429,
            "Too many requests",
            headers={**_budget_headers(budget), "Retry-After": str(budget.wait)},
        )


def _preflight(methods: dict[str, Op]) -> HttpResponse:
    response = HttpResponse(status=200)
    response["Access-Control-Allow-Methods"] = ", ".join([*methods, "OPTIONS"])
    for name, value in PREFLIGHT_HEADERS.items():
        response[name] = value
    return response


def _admit(
    request, op: Op, budget: Deferred[limits.Budget | None]
) -> limits.Budget | None:
    """The budget that governs the request, taken; raise 429 once it is spent, then
    ApiError unless the token may run `op` (`_authorize`).

    A token's own budget governs only once the token is proven: a token that proves
    nothing (never issued, revoked) spends its address's instead, as a request
    without one does, so fresh made-up tokens get no fresh budgets. That take is one
    more round trip, for such requests only; what the first one took from the
    made-up token's budget (queued with the check, before anything was proven)
    serves nobody and is gone within one interval of its rate."""
    spent = budget.value
    if request.credentials is not None and request.reads.proven_uid() is None:
        address = limits.api(None, client_ip(request))
        spent = limits.take_counted_queue(request.reads, address).value
    _check_budget(spent)
    _authorize(request, op)
    return spent


def _answer(request, op: Op, args: dict) -> tuple[HttpResponse, dict[str, str]]:
    """Run the handler within the budget and the auth check; its response and the
    budget's headers."""
    budget = None
    spent = None
    if op.auth != NONE:
        credentials = request.credentials
        if request.headers.get("Authorization") and credentials is None:
            raise ApiError(401, "The access token is invalid")
        grant_id = (
            token_hash(credentials.token)
            if isinstance(credentials, BearerCredentials)
            else None
        )
        budget = limits.take_counted_queue(
            request.reads, limits.api(grant_id, client_ip(request))
        )
        if op.auth == REQUIRED and credentials is None:
            raise ApiError(401, "The access token is invalid")
        if request.method not in SAFE:
            spent = _admit(request, op, budget)
    try:
        result = op.handler(request, **args)
    finally:
        if budget is not None and request.method in SAFE:
            # Before any of it is answered: the handler's reads rode with the check.
            spent = _admit(request, op, budget)
    headers = _budget_headers(spent)
    if isinstance(result, HttpResponse):
        return result, headers
    if isinstance(result, Reply):
        response = json_response(result.body, result.status)
        for name, value in result.headers.items():
            response[name] = value
        return response, headers
    return json_response(result), headers


def endpoint(**methods: Op) -> Callable[..., HttpResponse]:
    """A view that runs the handler of the request's method (see the module doc)."""

    @csrf_exempt
    def view(request, **args) -> HttpResponse:
        if request.method == "OPTIONS":
            response = _preflight(methods)
        elif request.method not in methods and not (
            request.method == "HEAD" and "GET" in methods
        ):
            response = error_response(ApiError(405, "Method not allowed"))
            response["Allow"] = ", ".join(methods)
        else:
            op = methods.get(request.method) or methods["GET"]
            headers: dict[str, str] = {}
            try:
                response, headers = _answer(request, op, args)
            except ApiError as error:
                response = error_response(error)
            except StoreRefused as error:
                log.error(
                    "Store refused for %s %s: %s", request.method, request.path, error
                )
                response = error_response(
                    ApiError(
                        503,
                        "The site is down for maintenance",
                        headers={"Retry-After": "30"},
                    )
                )
            except REDIS_OUTAGES as error:
                log.error(
                    "Redis unavailable for %s %s",
                    request.method,
                    request.path,
                    exc_info=error,
                )
                message = (
                    "The data store is unavailable: nothing was changed"
                    if request.method in SAFE
                    else "The data store is unavailable: this change may or may not "
                    "have been saved; check before sending it again"
                )
                response = error_response(
                    ApiError(503, message, headers={"Retry-After": "30"})
                )
            except (TimelineError, AccountError) as error:
                mapped = _domain_error(error)
                if mapped is None:
                    raise
                response = error_response(mapped)
            for name, value in headers.items():
                response.setdefault(name, value)
        for name, value in CORS_HEADERS.items():
            response[name] = value
        return response

    view.api_methods = methods
    return view


@csrf_exempt
def unrouted(request) -> HttpResponse:
    """Any API path no route matches (an endpoint the site leaves out, an id that
    is not one): Mastodon's JSON 404, not the site's HTML page."""
    response = error_response(not_found())
    for name, value in CORS_HEADERS.items():
        response[name] = value
    return response


def _json_body(request) -> dict:
    try:
        body = orjson.loads(request.body or b"{}")
    except orjson.JSONDecodeError as error:
        raise ApiError(400, "The request body is not valid JSON") from error
    if not isinstance(body, dict):
        raise ApiError(400, "The request body must be a JSON object")
    return body


def params(request) -> QueryDict | dict:
    """The request's parameters: the query string of a GET (or, without one, its
    JSON body: Mastodon.py sends some reads' parameters so, and Rails reads them
    as a query); a POST's, PUT's or PATCH's form or JSON body (clients send
    either)."""
    content_type = request.content_type or ""
    if request.method in SAFE:
        if content_type == "application/json" and request.body and not request.GET:
            return _json_body(request)
        return request.GET
    if content_type == "application/json":
        return _json_body(request)
    if request.method == "POST":
        try:
            return request.POST
        except MultiPartParserError as error:
            raise ApiError(400, "The request body is not valid multipart") from error
    # Django parses forms of POSTs only: PATCH, PUT and DELETE bodies here.
    if content_type.startswith("multipart/"):
        request.method, method = "POST", request.method
        try:
            request._load_post_and_files()
        except MultiPartParserError as error:
            raise ApiError(400, "The request body is not valid multipart") from error
        finally:
            request.method = method
        return request.POST
    return QueryDict(request.body, encoding="utf-8")


def param(values, name: str) -> str | None:
    """One parameter as a string (a JSON body's numbers and booleans too)."""
    value = values.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise ApiError(422, f"Validation failed: {name} must be a single value")


def text_param(values, name: str) -> str | None:
    """A text parameter (a status, its warning): JSON's `false` is none, as
    Mastodon reads it (`|| ''`), rather than the word "false"; `true` is refused."""
    value = values.get(name)
    if value is False:
        return None
    if value is True:
        raise ApiError(422, f"Validation failed: {name} must be text")
    return param(values, name)


def param_list(values, name: str) -> list[str]:
    """A list parameter, sent as `name[]=a&name[]=b`, `name=a`, or a JSON array."""
    if isinstance(values, dict) and not isinstance(values, QueryDict):
        found = values.get(name, values.get(f"{name}[]"))
        if found is None:
            return []
        return [str(v) for v in (found if isinstance(found, list) else [found])]
    return [*values.getlist(f"{name}[]"), *values.getlist(name)]


def flag(values, name: str, default: bool = False) -> bool:
    """A boolean parameter as Rails reads one (`true`, `1`, `on`...)."""
    value = param(values, name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "t", "on", "yes")
