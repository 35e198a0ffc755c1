"""The one owner of the Redis connection.

`get_redis()` builds one client per process, lazily, from `settings.REDIS_URL` (or
from the embedded server when that is empty). Tests swap the client through
`set_redis()`; nothing else creates a client.
"""

from __future__ import annotations

import os
import threading

import redis
from django.conf import settings

_client: redis.Redis | None = None
_lock = threading.Lock()


def get_redis() -> redis.Redis:
    """Return this process's Redis client, creating it on first use."""
    global _client
    client = _client
    if client is not None:
        return client
    with _lock:
        if _client is None:
            _client = _build_client()
        return _client


def set_redis(client: redis.Redis | None) -> None:
    """Replace the process's client (the test suite's seam); None forgets it."""
    global _client
    with _lock:
        _client = client


def _forget_after_fork() -> None:
    # A forked worker must not share its parent's sockets: it builds its own client.
    # (Checked once at fork, not with a getpid() on every call.)
    global _client, _lock
    _client = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def _build_client() -> redis.Redis:
    url = settings.REDIS_URL
    if not url:
        from config.embedded import ensure_embedded_redis

        url = ensure_embedded_redis(settings.REDIS_EMBEDDED_DIR)
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
        socket_connect_timeout=settings.REDIS_SOCKET_TIMEOUT,
        health_check_interval=30,
    )
