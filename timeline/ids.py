"""Status ids without one global counter: unique, time-ordered, below 2**53.

An id is `tick * ID_SHARDS + shard`. The author's id picks the shard (so one
author's ids only grow); each shard's clock key (`statuses:clock:{c<n>}`) hands out
ticks atomically: the server's time in 1/TICKS_PER_MS milliseconds since EPOCH, or
one past the shard's last tick if that is higher (a burst of more than
TICKS_PER_MS posts in a millisecond borrows from the next one). So

- ids never repeat: two shards never share the remainder, one shard's ticks grow;
- ids follow time across shards to within the servers' clock skew, so a timeline
  sorted by id is sorted by posting time;
- a post writes one of 256 clock keys, spread over the Cluster's nodes, not one key
  that every post writes (`statuses:next_id` before layout 3);
- the largest id in 2095 is below 2**52, exact as a zset score (a double) and as a
  JavaScript number; ids of older stores (1, 2, 3...) are all smaller.
"""

from __future__ import annotations

from config.pipelines import LuaScript, pipeline_run
from timeline import keys

EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z, in unix seconds
TICKS_PER_MS = 8

# KEYS: one shard's clock. ARGV: how many ticks, the epoch, ticks per ms. Returns the
# first of `count` consecutive ticks reserved for the caller.
_TICKS_TAKE = LuaScript(
    """
local count, epoch, per_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local ms = (tonumber(t[1]) - epoch) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now = ms * per_ms
local first = math.max(tonumber(redis.call('GET', KEYS[1]) or '0') + 1, now)
redis.call('SET', KEYS[1], string.format('%d', first + count - 1))
return string.format('%d', first)
"""
)


def first_id_at(unix_us: int) -> int:
    """The smallest status id a post made at this time (microseconds) can have."""
    ms = max(0, unix_us // 1000 - EPOCH * 1000)
    return ms * TICKS_PER_MS * keys.ID_SHARDS


def created_of(sid: int) -> float:
    """When a status with this id was posted (unix seconds, to the millisecond); ids
    of stores older than layout 3 (small counters) read as the epoch."""
    return EPOCH + sid // keys.ID_SHARDS // TICKS_PER_MS / 1000


def shard_of(author_id: int) -> int:
    return author_id % keys.ID_SHARDS


def status_ids_take(*, author_id: int, count: int = 1) -> list[int]:
    """Reserve `count` new status ids for a status of this author: one round trip."""
    (first,) = pipeline_run(
        lambda pipe: status_ids_queue(pipe, author_id=author_id, count=count)
    )
    return status_ids_from(first, author_id=author_id, count=count)


def status_ids_queue(pipe, *, author_id: int, count: int = 1) -> None:
    """Queue the reservation of `count` new status ids (in a caller's round trip);
    `status_ids_from` turns its reply into the ids."""
    _TICKS_TAKE.queue(
        pipe,
        keys=[keys.status_clock(shard_of(author_id))],
        args=[count, EPOCH, TICKS_PER_MS],
    )


def status_ids_from(reply, *, author_id: int, count: int = 1) -> list[int]:
    """The ids a `status_ids_queue` reply reserved."""
    first, shard = int(reply), shard_of(author_id)
    return [(first + i) * keys.ID_SHARDS + shard for i in range(count)]


# KEYS: one shard's clock. ARGV: the first tick of a block, its length. Reserves the
# block unless the shard already handed out a tick in it (then returns 0).
_BLOCK_RESERVE = LuaScript(
    """
local base, count = tonumber(ARGV[1]), tonumber(ARGV[2])
if tonumber(redis.call('GET', KEYS[1]) or '0') >= base then return 0 end
redis.call('SET', KEYS[1], string.format('%d', base + count - 1))
return 1
"""
)


RESERVE_MARGIN_TICKS = 1000 * TICKS_PER_MS


def tick_block_reserve(count: int) -> int:
    """Reserve `count` consecutive ticks on every shard (the seeder's bulk ids).

    Returns the first tick: the i-th status in time order gets the id
    `(first + i) * ID_SHARDS + shard_of(author)`, so the block's ids follow its
    statuses' order and every id posted after the block is larger. Three round
    trips: the block starts RESERVE_MARGIN_TICKS (one second) past every clock, so a
    post made while it is being reserved takes a tick below it, and the reservation
    does not have to start over (when it does, the shards that reserved already moved
    past a whole block, and a busy site could keep it going).
    """
    clocks = [keys.status_clock(shard) for shard in range(keys.ID_SHARDS)]
    while True:
        now = int(
            _TICKS_TAKE(keys=[keys.status_clock(0)], args=[1, EPOCH, TICKS_PER_MS])
        )
        last = pipeline_run(
            lambda pipe: [pipe.get(clock) for clock in clocks], confirm=False
        )
        base = RESERVE_MARGIN_TICKS + max(
            [now + 1, *(int(v) + 1 for v in last if v is not None)]
        )

        def reserve(pipe, base=base) -> None:
            for clock in clocks:
                _BLOCK_RESERVE.queue(pipe, keys=[clock], args=[base, count])

        if all(pipeline_run(reserve)):
            return base
