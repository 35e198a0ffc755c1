"""Turn a Redis outage into a clear 503 page instead of a traceback."""

from __future__ import annotations

import logging

import redis
from django.http import HttpResponse
from django.template.loader import render_to_string

from config.context_processors import assets

logger = logging.getLogger(__name__)


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
        if not isinstance(exception, redis.RedisError):
            return None
        logger.error(
            "Redis unavailable for %s %s",
            request.method,
            request.path,
            exc_info=exception,
        )
        # Rendered without the request: the page must not need Redis (no viewer).
        html = render_to_string("503.html", {"viewer": None, **assets(request)})
        response = HttpResponse(html, status=503)
        response["Retry-After"] = "30"
        return response
