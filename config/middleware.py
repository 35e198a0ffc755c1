"""Turn a Redis outage into a clear 503 page, and an unreadable form into a 400,
instead of a traceback."""

from __future__ import annotations

import codecs
import logging

import redis
from django.conf import settings
from django.http import HttpResponse, HttpResponseBadRequest
from django.template.loader import render_to_string

from config.context_processors import assets
from config.redis import StoreRefused

logger = logging.getLogger(__name__)

# What a server or cluster that does not answer raises (redis-py's cluster errors
# such as SlotNotCoveredError are not RedisErrors).
REDIS_OUTAGES = (redis.RedisError, redis.exceptions.RedisClusterException)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


class RedisUnavailableMiddleware:
    """Catch `redis.RedisError` raised by a view and answer 503 with a Retry-After.

    Services never swallow Redis errors (Redis is the only copy of the data), so the
    error travels up to here, once, at the edge, and is logged with its traceback.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, StoreRefused):
            # The operator's message goes to the log; visitors learn only that the
            # site is down for maintenance.
            logger.error(
                "Store refused for %s %s: %s", request.method, request.path, exception
            )
            template = "503_upgrade.html"
        elif isinstance(exception, REDIS_OUTAGES):
            logger.error(
                "Redis unavailable for %s %s",
                request.method,
                request.path,
                exc_info=exception,
            )
            template = "503.html"
        else:
            return None
        # Rendered without the request: the page must not need Redis (no viewer).
        # A read changed nothing; what a POST sent may be stored in part.
        sent = request.method not in SAFE_METHODS
        context = {"viewer": None, "sent": sent, **assets(request)}
        html = render_to_string(template, context)
        response = HttpResponse(html, status=503)
        response["Retry-After"] = "30"
        return response


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class FormCharsetMiddleware:
    """Refuse, with a short 400 and one log line, a form that says it is not UTF-8.

    Django reads forms as UTF-8 only and raises BadRequest for any other charset it
    knows, from wherever `request.POST` is first read (the CSRF check), which its own
    400 handler then reads again: a 500 and a 40 KB traceback per request. Refused
    here, before anything reads the body; a multipart form too, whose fields Django
    would decode in that charset. A name Python does not know is ignored by Django
    (read as UTF-8), and so is it here; `utf8` is UTF-8 by another name.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        charset = request.content_params.get("charset")
        # Only a POST's body is read as a form (request.POST).
        if charset and request.method == "POST" and request.content_type in FORM_TYPES:
            try:
                known = codecs.lookup(charset).name
            except LookupError:
                known = None
            if known == "utf-8":
                request.encoding = "utf-8"  # the one spelling Django accepts
            elif known is not None:
                logger.warning(
                    "Refused a form in charset %.40r for %s %s (forms are UTF-8)",
                    charset,
                    request.method,
                    request.path,
                )
                return bad_request_response(
                    request, reason=f"This form was sent as {charset[:40]}, not UTF-8."
                )
        return self.get_response(request)


def bad_request_response(request, *, reason: str = "") -> HttpResponse:
    """The 400 page. Rendered without the request: reading the request again (its
    form, its viewer) is what failed."""
    html = render_to_string(
        "400.html", {"viewer": None, "reason": reason, **assets(request)}
    )
    return HttpResponseBadRequest(html)


class SecurityHeadersMiddleware:
    """Send `settings.CONTENT_SECURITY_POLICY` and `PERMISSIONS_POLICY` with every
    response, error pages included (it is first in MIDDLEWARE, so every other
    layer's answer, a 500 too, passes through it).

    A middleware rather than django-csp: the policy is one constant string (no
    nonces: the templates carry no inline script or style), and django-csp would not
    send the Permissions-Policy anyway.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.headers = {
            "Content-Security-Policy": settings.CONTENT_SECURITY_POLICY,
            "Permissions-Policy": settings.PERMISSIONS_POLICY,
        }

    def __call__(self, request):
        response = self.get_response(request)
        for name, value in self.headers.items():
            if value:
                response.headers.setdefault(name, value)
        return response
