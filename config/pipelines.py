"""The one way to send commands to Redis in bulk: pipelines, scripts and read batches.

- `pipeline_run(build)`: `build(pipe)` queues commands (redis-py's command methods);
  they go in one round trip and the replies come back as a list. Writes use it with
  named builder functions.
- `LuaScript`: a script registered once, run as a bare EVALSHA (alone or queued in
  a pipeline); a server that lost its scripts is sent them again.
- `ReadBatch`: reads that several callers queue (the request's auth check, a page's
  selectors), each with the function that parses its own replies, all sent in one
  round trip by `execute()`. A `Deferred` holds each caller's parsed value and sends
  the batch itself when read before that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import redis
from django.conf import settings
from redis.commands.core import CoreCommands

try:
    import hiredis
except ImportError:  # redis-py works without it, and so do we
    hiredis = None

from config.redis import get_redis, slot_groups

T = TypeVar("T")
Builder = Callable[[Any], None]

_SCRIPTS: list[LuaScript] = []


class LuaScript:
    """A Lua script registered once per client and run with EVALSHA.

    Calling it runs it at once. `queue(pipe, ...)` adds a bare EVALSHA to a pipeline:
    redis-py's own way (`client=pipe`) would ask SCRIPT EXISTS first, one more round
    trip each time. `pipeline_run` loads the scripts and runs again in the rare case
    the server answers NOSCRIPT (after a restart or a SCRIPT FLUSH).
    """

    def __init__(self, source: str):
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        _SCRIPTS.append(self)

    def __call__(self, *, keys: list[str], args: list) -> Any:
        return pipeline_run(lambda pipe: self.queue(pipe, keys=keys, args=args))[0]

    def queue(self, pipe, *, keys: list[str], args: list) -> None:
        pipe.evalsha(self.sha, len(keys), *keys, *args)


def load_scripts(server: redis.Redis) -> None:
    """Load every script of the site into a server (after a NOSCRIPT)."""
    for script in _SCRIPTS:
        server.script_load(script.source)


class _Commands(CoreCommands):
    """What a builder queues commands on: redis-py's command methods, recorded.

    A builder calls the same methods as on a redis-py pipeline (`zadd`, `hmget`,
    `evalsha`, ...); each call is only written down, as (arguments, options).
    `barrier()` orders the commands across Cluster nodes: those after it are sent
    only once every one before it has answered. (Commands to one server, or to one
    node, always run in the order queued.)
    """

    def __init__(self):
        self.stack: list[tuple[tuple, dict]] = []
        self.barriers: list[int] = []

    def execute_command(self, *args, **options) -> None:
        self.stack.append((args, options))

    def barrier(self) -> None:
        if self.stack and (not self.barriers or self.barriers[-1] != len(self.stack)):
            self.barriers.append(len(self.stack))

    def __len__(self) -> int:
        return len(self.stack)


class WriteNotConfirmed(redis.exceptions.RedisError):
    """Fewer replicas than REDIS_WAIT_REPLICAS confirmed a write in time."""


def _reply(client: redis.Redis, connection, name: str, options: dict) -> Any:
    """Read one command's reply, converted as redis-py converts it; an error reply is
    returned, not raised, so that every reply of the round trip is read."""
    try:
        return client.parse_response(connection, name, **options)
    except redis.exceptions.ResponseError as error:
        return error


def _wait_command() -> tuple[tuple, dict] | None:
    replicas = settings.REDIS_WAIT_REPLICAS
    if replicas <= 0:
        return None
    return ("WAIT", replicas, settings.REDIS_WAIT_TIMEOUT_MS), {}


def _confirmed(reply: Any) -> None:
    if isinstance(reply, redis.exceptions.ResponseError):
        raise WriteNotConfirmed(f"WAIT failed: {reply}")
    if isinstance(reply, int) and reply < settings.REDIS_WAIT_REPLICAS:
        raise WriteNotConfirmed(
            f"{reply} of {settings.REDIS_WAIT_REPLICAS} replicas confirmed the write "
            f"within {settings.REDIS_WAIT_TIMEOUT_MS} ms"
        )


_CHUNK = 6000  # bytes per socket write, as redis-py's own packer joins them


def _chunks(packed: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    pending: list[bytes] = []
    size = 0
    for command in packed:
        pending.append(command)
        size += len(command)
        if size > _CHUNK:
            out.append(b"".join(pending))
            pending, size = [], 0
    if pending:
        out.append(b"".join(pending))
    return out


def _pack(connection, stack: list[tuple[tuple, dict]]) -> Any:
    """The commands in Redis's protocol. With hiredis, packed by it directly:
    redis-py's own packer checks and converts every argument in Python first, about
    a fifth of a large fan-out's time in the worker (our arguments are already str,
    int or float, and command names one word)."""
    if hiredis is not None and not any(" " in str(args[0]) for args, _ in stack):
        try:
            return _chunks([hiredis.pack_command(args) for args, _ in stack])
        except TypeError:
            pass  # an argument hiredis does not take: redis-py's packer converts it
    return connection.pack_commands([args for args, _ in stack])


def _exchange(node: redis.Redis, stack: list[tuple[tuple, dict]]) -> Callable[[], list]:
    """Write commands to a server in one write; return the function that reads
    their replies. Several servers' commands are written before any reply is read,
    so a round trip to many Cluster nodes costs about as long as one.

    redis-py's own Pipeline does the same with a retry wrapper and bookkeeping for
    features we do not use; without them a page costs about 4% less CPU under load
    (docs/BENCHMARKS.md, "What each lever gave"). Nothing is resent on a broken
    connection (a write must not run twice): the error reaches the 503 page. A stale
    pooled connection is replaced when it is taken from the pool, as with redis-py.
    """
    pool = node.connection_pool
    connection = pool.get_connection()
    try:
        connection.send_packed_command(_pack(connection, stack))
    except BaseException:
        connection.disconnect()
        pool.release(connection)
        raise

    def read() -> list:
        try:
            return [_reply(node, connection, args[0], opts) for args, opts in stack]
        except BaseException:
            connection.disconnect()  # a reply may be half read: never reuse the socket
            raise
        finally:
            pool.release(connection)

    return read


def _raise_first_error(replies: list) -> list:
    for reply in replies:
        if isinstance(reply, redis.exceptions.ResponseError):
            raise reply
    return replies


def _send(client: redis.Redis, stack: list[tuple[tuple, dict]], confirm: bool) -> list:
    """One server: every command in one write, every reply read: one round trip.

    A server that lost the scripts (a restart, SCRIPT FLUSH) is sent them, and the
    script calls that answered NOSCRIPT, which did not run, are sent again: only
    those, so that no other command of the pipeline runs twice.
    """
    wait = _wait_command() if confirm else None
    replies = _exchange(client, [*stack, wait] if wait else stack)()
    if wait:
        _confirmed(replies.pop())
    lost = [
        i
        for i, reply in enumerate(replies)
        if isinstance(reply, redis.exceptions.NoScriptError)
    ]
    if lost:
        load_scripts(client)
        again = _exchange(client, [stack[i] for i in lost] + ([wait] if wait else []))()
        if wait:
            _confirmed(again.pop())
        for i, reply in zip(lost, again, strict=True):
            replies[i] = reply
    return _raise_first_error(replies)


def pipeline_run(build: Builder, *, confirm: bool = True) -> list:
    """Send the commands `build(pipe)` queues in one round trip; return the replies.

    On a Cluster, one round trip per `barrier()` stage, each sending at most one
    request to each node. With `confirm` (writes) and REDIS_WAIT_REPLICAS set, each
    server also waits for its replicas to confirm before the replies count.
    If the server lost the scripts, they are loaded and the script calls that
    answered NOSCRIPT run again (they had not run; nothing else runs twice).
    """
    commands = _Commands()
    build(commands)
    if not commands.stack:
        return []
    client = get_redis()
    if isinstance(client, redis.RedisCluster):
        from config.cluster import send_stages

        return send_stages(client, commands.stack, commands.barriers, confirm)
    return _send(client, commands.stack, confirm)


class Deferred(Generic[T]):
    """The parsed reply of reads queued in a `ReadBatch`.

    Reading `value` before the batch was sent sends it (with everything else queued).
    """

    __slots__ = ("_batch", "_value", "_error", "done")

    def __init__(self, batch: ReadBatch):
        self._batch = batch
        self._error: BaseException | None = None
        self.done = False

    @property
    def value(self) -> T:
        """The parsed reply; the batch's error again if sending it failed."""
        if self._error is not None:
            raise self._error
        if not self.done:
            self._batch.execute()
        return self._value

    def _resolve(self, value: T) -> None:
        self._value = value
        self.done = True

    def _fail(self, error: BaseException) -> None:
        self._error = error  # `done` stays False: there is no value


class ReadBatch:
    """Reads queued by several callers, sent together: one round trip per `execute()`.

    `queue(build, parse)` takes a function that adds commands to the pipeline and one
    that turns exactly those commands' replies into a value. Reads queued after an
    `execute()` go in the next round trip.
    """

    def __init__(self):
        self._pending: list[tuple[Builder, Callable[[list], Any], Deferred]] = []

    def queue(self, build: Builder, parse: Callable[[list], T]) -> Deferred[T]:
        deferred: Deferred[T] = Deferred(self)
        self._pending.append((build, parse, deferred))
        return deferred

    def execute(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        spans: list[tuple[int, int]] = []

        def build(pipe) -> None:
            for queue_commands, _, _ in pending:
                start = len(pipe)
                queue_commands(pipe)
                spans.append((start, len(pipe)))

        try:
            replies = pipeline_run(build, confirm=False)
        except BaseException as error:
            # Every read of this round trip fails the same way, however often read.
            for _, _, deferred in pending:
                deferred._fail(error)
            raise
        for (_, parse, deferred), (start, end) in zip(pending, spans, strict=True):
            deferred._resolve(parse(replies[start:end]))


_HASHES_READ = LuaScript(
    """
local rows = {}
for i, key in ipairs(KEYS) do rows[i] = redis.call('HMGET', key, unpack(ARGV)) end
return rows
"""
)


def hashes_queue(
    reads: ReadBatch,
    ids: list[int],
    key: Callable[[int], str],
    fields: tuple[str, ...],
    make: Callable[[int, list], T | None],
) -> Deferred[dict[int, T]]:
    """Queue a read of these fields of the hashes `key(id)`, one script call (one
    reply to parse) per slot rather than an HMGET each; the value maps each id to
    `make(id, values)`, but where that is None (a hash that does not exist)."""
    groups = slot_groups(ids, key, max(len(ids), 1))
    args = list(fields)

    def build(pipe) -> None:
        for group in groups:
            _HASHES_READ.queue(pipe, keys=[key(i) for i in group], args=args)

    def parse(replies: list) -> dict[int, T]:
        found = {}
        for group, rows in zip(groups, replies, strict=True):
            for i, values in zip(group, rows, strict=True):
                if (made := make(i, values)) is not None:
                    found[i] = made
        return found

    return reads.queue(build, parse)
