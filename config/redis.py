"""The one owner of the Redis connection, on one server or on a Redis Cluster.

`get_redis()` builds one client per process, lazily, from `settings.REDIS_URL` (or
from the embedded server when that is empty): a `redis.RedisCluster` when
`REDIS_CLUSTER` is true, a `redis.Redis` otherwise. This is the only module that
reads that setting; everything else asks `is_cluster()` or `slot_groups()` where
the difference matters, and the key layout is the same on both. Tests swap the
client through `set_redis()`; nothing else creates a client.

`get_redis_bytes()` is the same connection for binary values (an uploaded avatar):
a second client without `decode_responses`, built lazily from the first one's own
connection settings, so it follows whatever `set_redis()` installed.

Apps register checks to run once per process on a freshly built client
(`on_first_connect`): the store-layout check refuses a store an older version
wrote until `manage.py upgrade_store` brought it forward.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

import redis
from django.conf import settings
from redis.crc import key_slot

T = TypeVar("T")
Client = redis.Redis | redis.RedisCluster

_client: Client | None = None
_bytes_client: Client | None = None
_bytes_source: Client | None = None  # the client `_bytes_client` was built from
_lock = threading.Lock()
_first_connect: list[Callable[[Client], None]] = []
_checks_enabled = True


def get_redis() -> Client:
    """Return this process's Redis client, creating it on first use."""
    global _client
    client = _client
    if client is not None:
        return client
    with _lock:
        if _client is None:
            built = _build_client()
            if _checks_enabled:
                for check in _first_connect:
                    check(built)
            _client = built
        return _client


def set_redis(client: Client | None) -> None:
    """Replace the process's client (the test suite's seam); None forgets it."""
    global _client, _bytes_client, _bytes_source
    with _lock:
        _client = client
        if _bytes_client is not None:
            _bytes_client.close()
        _bytes_client = _bytes_source = None


def get_redis_bytes() -> Client:
    """A client to the same Redis that returns replies as bytes (binary values)."""
    global _bytes_client, _bytes_source
    source = get_redis()
    with _lock:
        if _bytes_client is None or _bytes_source is not source:
            _bytes_client, _bytes_source = _bytes_twin(source), source
        return _bytes_client


def _bytes_twin(client: Client) -> Client:
    # The same server(s) and options as `client`, without decoding replies.
    if isinstance(client, redis.RedisCluster):
        node = client.get_default_node()
        return redis.RedisCluster(
            host=node.host,
            port=node.port,
            decode_responses=False,
            socket_timeout=settings.REDIS_SOCKET_TIMEOUT,
            socket_connect_timeout=settings.REDIS_SOCKET_TIMEOUT,
        )
    options = dict(client.connection_pool.connection_kwargs)
    options["decode_responses"] = False
    pool = type(client.connection_pool)(
        connection_class=client.connection_pool.connection_class, **options
    )
    return type(client)(connection_pool=pool)


class StoreRefused(RuntimeError):
    """A first-connect check refused the store (say, a layout an upgrade must fix)."""


def on_first_connect(check: Callable[[Client], None]) -> None:
    """Run `check(client)` on each client this process builds, before first use.

    A check that raises keeps the client unbuilt: the next use tries again.
    """
    _first_connect.append(check)


def skip_first_connect_checks() -> None:
    """For the commands that repair what the checks refuse (`upgrade_store`)."""
    global _checks_enabled
    _checks_enabled = False


def is_cluster(client: Client | None = None) -> bool:
    """Whether the client (by default the process's) talks to a Redis Cluster."""
    return isinstance(client if client is not None else get_redis(), redis.RedisCluster)


def key_count(client: Client | None = None) -> int:
    """How many keys the store holds: on a Cluster, summed over every master
    (redis-py's DBSIZE asks one node)."""
    client = client if client is not None else get_redis()
    if isinstance(client, redis.RedisCluster):
        return int(client.dbsize(target_nodes=redis.RedisCluster.PRIMARIES))
    return int(client.dbsize())


def slot_of(key: str) -> int:
    """The Cluster hash slot of a key (honouring `{hash tags}`)."""
    return key_slot(key.encode())


def slot_groups(
    items: Iterable[T], key: Callable[[T], str], size: int
) -> list[list[T]]:
    """Split items into groups of at most `size` that one script call may carry.

    On a cluster a script may touch one hash slot only, so each group also holds
    items whose `key(item)` share a slot; on one server any items may go together.
    """
    groups: list[list[T]] = []
    if not is_cluster():
        items = list(items)
        return [items[i : i + size] for i in range(0, len(items), size)]
    by_slot: dict[int, list[T]] = {}
    for item in items:
        group = by_slot.setdefault(slot_of(key(item)), [])
        group.append(item)
        if len(group) >= size:
            groups.append(group)
            by_slot[slot_of(key(item))] = []
    groups.extend(group for group in by_slot.values() if group)
    return groups


def _forget_after_fork() -> None:
    # A forked worker must not share its parent's sockets: it builds its own client.
    # (Checked once at fork, not with a getpid() on every call.)
    global _client, _bytes_client, _bytes_source, _lock
    _client = _bytes_client = _bytes_source = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def client_for_url(url: str, *, cluster: bool) -> Client:
    """A client as the site configures it, for `url` (a server, or a cluster node)."""
    options = {
        "decode_responses": True,
        "socket_timeout": settings.REDIS_SOCKET_TIMEOUT,
        "socket_connect_timeout": settings.REDIS_SOCKET_TIMEOUT,
    }
    if cluster:
        # Commands sent one at a time through the client are retried once after a
        # topology change; pipelines (`config.pipelines`) route and redirect
        # themselves and never resend a write.
        return redis.RedisCluster.from_url(
            url, retry=redis.retry.Retry(redis.backoff.NoBackoff(), 1), **options
        )
    return redis.Redis.from_url(url, health_check_interval=30, **options)


def _build_client() -> Client:
    url = settings.REDIS_URL
    if not url:
        from config.embedded import ensure_embedded_redis

        url = ensure_embedded_redis(settings.REDIS_EMBEDDED_DIR)
    return client_for_url(url, cluster=settings.REDIS_CLUSTER)
