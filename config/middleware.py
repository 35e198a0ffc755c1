"""Turn a Redis outage into a clear 503 page instead of a traceback."""

from __future__ import annotations

import logging

import redis
from django.http import HttpResponse
from django.template.loader import render_to_string

from config.context_processors import assets
from config.redis import StoreRefused

logger = logging.getLogger(__name__)

# What a server or cluster that does not answer raises (redis-py's cluster errors
# such as SlotNotCoveredError are not RedisErrors).
REDIS_OUTAGES = (redis.RedisError, redis.exceptions.RedisClusterException)


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
        html = render_to_string(template, {"viewer": None, **assets(request)})
        response = HttpResponse(html, status=503)
        response["Retry-After"] = "30"
        return response
