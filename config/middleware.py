"""Turn a Redis outage into a clear 503 page instead of a traceback."""

from __future__ import annotations

import logging

import redis
from django.shortcuts import render

logger = logging.getLogger(__name__)


class RedisUnavailableMiddleware:
    """Catch `redis.RedisError` raised by a view and answer 503 with a Retry-After.

    Services never swallow Redis errors (Redis is the only copy of the data), so the
    error travels up to here, once, at the edge.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, redis.RedisError):
            return None
        logger.error(
            "Redis unavailable for %s %s: %r", request.method, request.path, exception
        )
        # The page must not need Redis itself: render it for an anonymous visitor.
        from accounts.domain import ANONYMOUS

        request.user = ANONYMOUS
        response = render(request, "503.html", status=503)
        response["Retry-After"] = "30"
        return response
