"""The one owner of the Redis connection.

`get_redis()` builds one client per process, lazily, from `settings.REDIS_URL` (or
from the embedded server when that is empty). Tests swap the client through
`set_redis()`; nothing else creates a client.
"""

from __future__ import annotations

import hashlib
import os
import threading

import redis
from django.conf import settings

_client: redis.Redis | None = None
_client_pid: int | None = None
_lock = threading.Lock()


def get_redis() -> redis.Redis:
    """Return this process's Redis client, creating it on first use."""
    global _client, _client_pid
    client = _client
    # A forked worker must not share its parent's sockets: rebuild after fork.
    if client is not None and _client_pid == os.getpid():
        return client
    with _lock:
        if _client is None or _client_pid != os.getpid():
            _client = _build_client()
            _client_pid = os.getpid()
        return _client


_on_change: list = []


def on_client_change(callback) -> None:
    """Call `callback()` whenever the client is replaced (process caches reset)."""
    _on_change.append(callback)


def set_redis(client: redis.Redis | None) -> None:
    """Replace the process's client (the test suite's seam); None forgets it."""
    global _client, _client_pid
    with _lock:
        _client = client
        _client_pid = os.getpid() if client is not None else None
    for callback in _on_change:
        callback()


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


_SCRIPTS: list[LuaScript] = []


class LuaScript:
    """A Lua script registered once per client and run with EVALSHA.

    Calling it runs it on the client at once. In a pipeline, `queue()` adds a bare
    EVALSHA: redis-py's own way (`client=pipe`) would ask SCRIPT EXISTS first, one
    more round trip each time. `pipeline_run` (and so `Batch`) loads the scripts and
    runs again in the rare case the server answers NOSCRIPT (after a restart).
    """

    def __init__(self, source: str):
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self._script: redis.commands.core.Script | None = None
        _SCRIPTS.append(self)

    def __call__(self, *, keys: list[str], args: list, client=None):
        owner = get_redis()
        if self._script is None or self._script.registered_client is not owner:
            self._script = owner.register_script(self.source)
        return self._script(
            keys=keys, args=args, client=client if client is not None else owner
        )

    def queue(self, pipe, *, keys: list[str], args: list) -> None:
        pipe.evalsha(self.sha, len(keys), *keys, *args)


def load_scripts() -> None:
    """Load every script of the site into the server (after a NOSCRIPT)."""
    client = get_redis()
    for script in _SCRIPTS:
        client.script_load(script.source)


def pipeline_run(build) -> list:
    """Send the commands `build(pipe)` queues in one round trip and return the replies.

    Scripts go as bare EVALSHA (`LuaScript.queue`); if the server lost them, they are
    loaded and the whole pipeline runs again, so only idempotent steps belong here.
    """

    def run() -> list:
        pipe = get_redis().pipeline(transaction=False)
        build(pipe)
        return pipe.execute() if len(pipe) else []

    try:
        return run()
    except redis.exceptions.NoScriptError:
        load_scripts()
        return run()


class Deferred:
    """The parsed result of reads queued in a `Batch`, available after `execute()`."""

    __slots__ = ("value",)


class Batch:
    """Queue reads from several selectors into one pipeline: one round trip for all.

    Each `queue()` call gets a function that adds commands to the pipeline and a
    function that turns exactly those commands' replies into a value.
    """

    def __init__(self):
        self._pending: list[tuple[object, object, Deferred]] = []

    def queue(self, build, parse) -> Deferred:
        deferred = Deferred()
        self._pending.append((build, parse, deferred))
        return deferred

    def execute(self) -> None:
        spans: list[tuple[int, int]] = []

        def build(pipe) -> None:
            spans.clear()
            for queue_commands, _, _ in self._pending:
                start = len(pipe)
                queue_commands(pipe)
                spans.append((start, len(pipe) - start))

        replies = pipeline_run(build)
        for (_, parse, deferred), (start, n) in zip(self._pending, spans, strict=True):
            deferred.value = parse(replies[start : start + n])
