"""Durable jobs in Redis: the work a post, a delete or a follow change owes to others.

Why our own small queue and not Streams or a job library: a job must be recorded in
the same atomic step as the change that owes it (a post's entry in `posts:{uid}`), so
its record must live in that user's Cluster slot. Redis Streams with consumer groups
would need one stream per slot, each with its group created before use and polled
with XREADGROUP one slot at a time; the Python job libraries (RQ, Celery, Dramatiq,
Huey) keep their queues in a few fixed keys, outside the owner's slot. What we need is
three commands' worth of Lua around sorted sets:

- **a queue per slot**, `jobs:{q<k>}` (`timeline.keys.job_queue`): job id -> when it is
  due, in milliseconds. The owner's script adds the job (`ENQUEUE`, below) atomically
  with the change itself. Job ids name the work (`post:<uid>:<sid>`), so queuing the
  same work twice queues it once. Queued again while it waits or while a worker
  holds it, a job keeps its place and lease, but its next run starts from the
  beginning, and the `done` of the run in progress queues that next run instead of
  removing the job: what the new change owes is never lost to a run that read the
  state before it. An id queued anew (one that failed for good before recurs)
  starts afresh: no attempts, cursor or error carry over.
- **a lease**: `claim` hands a due job to one worker, moving its due time to the end
  of the lease and giving it a fresh token. A worker that dies (kill -9, a lost
  machine) simply lets the lease run out; the job is due again and another worker
  resumes it from its recorded **cursor**. A worker that lost its lease (it was too
  slow) finds out at its next `progress` or `done`, whose token no longer matches,
  and stops. So a job runs at least once, and its steps must be idempotent.
- **retries with a limit**: a job that raised is due again after a backoff; after
  JOB_MAX_ATTEMPTS it moves to `jobs:failed:{q<k>}` with its last error, where
  `timelines check` reports it and `timelines repair` runs it again. It leaves that
  list when it runs again: repaired, or its id queued anew by a later change.
- **waiting**: a job that must let other work finish first raises `Deferred`; it is
  due again later, from its cursor, and the wait is not counted as an attempt.
- **wake-up calls**: after the atomic step, the writer adds the slot to one of 16
  `jobs:ready:{r<n>}` zsets; idle workers pop them (on one server they wait on all
  16 at once, `wakeup_wait`; on a Cluster, where the shards lie on different nodes,
  a thread per shard waits on it, `shard_wait`). Losing
  one (its node failed just then) only delays the job to the next **sweep**, which
  every worker runs every JOB_SWEEP_SECONDS over the 16,384 slot queues: one round
  trip per server or Cluster node (`due_slots`).

Nothing here knows what a job does: `timeline.fanout` runs them.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass

import redis
from django.conf import settings

from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, is_cluster
from timeline import keys

log = logging.getLogger(__name__)

# A job's bookkeeping, the fields `<id>#<f>` of its slot's `jobdata` hash: s when it
# was queued (ms), a attempts, t the lease's token, c cursor, e last error, q queued
# again after its current run began (the due time that asked for, ms), o the nonce of
# the request that queued it anew, where that request may take it back
# (`cancel_unless_again_queue`; absent in jobs queued before it existed). Scripts name
# the fields they use; the lists of them all (FORGET, ENQUEUE's fresh start) come
# from here, so a field added here is never left behind.
_FIELDS = ("s", "a", "t", "c", "e", "q", "o")


def _hdel(fields: tuple[str, ...]) -> str:
    """Lua that deletes these fields of job `id` from the hash `data`."""
    named = ", ".join(f"id .. '#{f}'" for f in fields)
    return f"redis.call('HDEL', data, {named})"


# A Lua function that scripts owning a change embed to queue the work it owes:
# enqueue(queue key, data key, job id, due ms, now ms[, owner nonce: recorded when
# the job is queued anew]). Safe to repeat: a job already
# queued keeps its place (held by a worker, its lease), attempts and cursor, but is
# marked queued again (`#q`, the earliest due asked for): the worker that holds it
# may have read what this change altered, or even be past its last step, so its
# next run starts from the beginning, and its `done` queues that run instead of
# removing the job. A job added anew starts afresh: its id may have failed for good
# before (`home:<uid>`, `follow:<a>:<b>` recur), and what that run left (attempts
# past the limit, a cursor, an error) must not carry over; it leaves the failed
# jobs when it is next claimed.
ENQUEUE = f"""
local function enqueue(queue, data, id, due, now, owner)
  if redis.call('ZADD', queue, 'NX', due, id) == 1 then
    {_hdel(tuple(f for f in _FIELDS if f != "s"))}
    redis.call('HSET', data, id .. '#s', now)
    if owner and owner ~= '' then redis.call('HSET', data, id .. '#o', owner) end
  else
    local again = redis.call('HGET', data, id .. '#q')
    if not again or tonumber(due) < tonumber(again) then
      redis.call('HSET', data, id .. '#q', due)
    end
  end
end
"""

# A Lua function: forget(data key, job id) deletes a job's bookkeeping fields; scripts
# that remove a job embed it.
FORGET = f"""
local function forget(data, id)
  {_hdel(_FIELDS)}
end
"""

# KEYS: one slot's queue, data, failed. ARGV: now, lease ms, how many, token, max
# attempts, failed cap. Returns id, cursor, attempts of each job this call leased. A
# job queued again since its last run began (`#q`) starts from the beginning; one
# leased is no longer among the failed jobs (its id failed for good before and was
# queued anew). A failure dropped past the cap takes its fields along, unless its
# id is queued anew (they are the new job's now). A job leased is no request's to take
# back any more (`#o`): even once its run failed and waits for a retry.
_CLAIM = LuaScript(
    FORGET
    + """
local now, lease, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local token, max_attempts, cap = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)
local out = {}
for _, id in ipairs(due) do
  local attempts = redis.call('HINCRBY', KEYS[2], id .. '#a', 1)
  redis.call('HDEL', KEYS[2], id .. '#o')  -- a worker's now: no request takes it back
  if attempts > max_attempts then
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id .. '#t')
    redis.call('ZADD', KEYS[3], now, id)
    if redis.call('ZCARD', KEYS[3]) > cap then
      local gone = redis.call('ZRANGE', KEYS[3], 0, 0)
      redis.call('ZREMRANGEBYRANK', KEYS[3], 0, 0)
      if not redis.call('ZSCORE', KEYS[1], gone[1]) then forget(KEYS[2], gone[1]) end
    end
  else
    redis.call('ZADD', KEYS[1], now + lease, id)
    redis.call('HSET', KEYS[2], id .. '#t', token)
    redis.call('ZREM', KEYS[3], id)
    if redis.call('HEXISTS', KEYS[2], id .. '#q') == 1 then
      redis.call('HDEL', KEYS[2], id .. '#c', id .. '#q')
    end
    out[#out + 1] = id
    out[#out + 1] = redis.call('HGET', KEYS[2], id .. '#c') or '0'
    out[#out + 1] = attempts
  end
end
return out
"""
)

# KEYS: queue, data. ARGV: id, token, cursor, the new lease end (ms). Returns 0 when
# the token is no longer this worker's.
_PROGRESS = LuaScript(
    """
local id, token = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[2], id .. '#t') ~= token then return 0 end
redis.call('HSET', KEYS[2], id .. '#c', ARGV[3])
redis.call('ZADD', KEYS[1], 'XX', ARGV[4], id)
return 1
"""
)

# KEYS: queue, data. ARGV: id, token, now (ms). Removes a finished job. One queued
# again while it ran (`#q`) stays instead, as the new job that was asked for: due
# when that asked, free of this run's lease, attempts and error, created now, and
# started from the beginning by the next claim. Returns 0 when the token is no
# longer this worker's.
_DONE = LuaScript(
    FORGET
    + """
local id, token = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[2], id .. '#t') ~= token then return 0 end
local again = redis.call('HGET', KEYS[2], id .. '#q')
if again then
  redis.call('HDEL', KEYS[2], id .. '#t', id .. '#a', id .. '#e')
  redis.call('HSET', KEYS[2], id .. '#s', ARGV[3])
  redis.call('ZADD', KEYS[1], 'XX', again, id)
  return 1
end
redis.call('ZREM', KEYS[1], id)
forget(KEYS[2], id)
return 1
"""
)

# KEYS: queue, data. ARGV: id, token, due ms, error text. A job that raised waits for
# its retry; its cursor stays, so the retry resumes where it stopped.
_RETRY = LuaScript(
    """
local id, token = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[2], id .. '#t') ~= token then return 0 end
redis.call('HDEL', KEYS[2], id .. '#t')
redis.call('HSET', KEYS[2], id .. '#e', ARGV[4])
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], id)
return 1
"""
)

# KEYS: queue, data. ARGV: id, token, due ms. A job that must wait for other work
# (not a failure): due again later, its cursor kept, this attempt not counted; but
# no later than a change that queued it again meanwhile asked (`#q`: its next run
# starts from the beginning, as that change needs).
_DEFER = LuaScript(
    """
local id, token = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[2], id .. '#t') ~= token then return 0 end
redis.call('HDEL', KEYS[2], id .. '#t')
redis.call('HINCRBY', KEYS[2], id .. '#a', -1)
local due = tonumber(ARGV[3])
local again = redis.call('HGET', KEYS[2], id .. '#q')
if again and tonumber(again) < due then due = tonumber(again) end
redis.call('ZADD', KEYS[1], 'XX', due, id)
return 1
"""
)

# KEYS: queue, data, failed. ARGV: now, ids. Queue failed jobs again, attempts reset.
_REQUEUE = LuaScript(
    """
local n = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', KEYS[3], id) == 1 then
    redis.call('HDEL', KEYS[2], id .. '#a', id .. '#t')
    redis.call('ZADD', KEYS[1], ARGV[1], id)
    n = n + 1
  end
end
return n
"""
)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Job:
    """A job a worker holds: what to do (`id`), where it stopped, the lease's token."""

    slot: int
    id: str
    cursor: str
    token: str
    attempts: int = 1

    @property
    def kind(self) -> str:
        return self.id.split(":", 1)[0]

    @property
    def args(self) -> list[int]:
        return [int(part) for part in self.id.split(":")[1:]]


class LeaseLost(Exception):
    """Another worker holds the job now (this one was too slow), or it was cancelled."""


def job_id(kind: str, *args: int) -> str:
    return ":".join([kind, *(str(a) for a in args)])


def slot_keys(slot: int) -> list[str]:
    """The keys a script that queues a job in `slot` takes: queue, data."""
    return [keys.job_queue(slot), keys.job_data(slot)]


_ENQUEUE_ONE = LuaScript(
    ENQUEUE
    + """
enqueue(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[2])
return 1
"""
)


def enqueue(*, slot: int, jid: str) -> None:
    """Queue a job on its own, due now, and wake a worker (operators' repairs: a
    job's owner queues it in its own atomic step)."""

    def queue(pipe) -> None:
        _ENQUEUE_ONE.queue(pipe, keys=slot_keys(slot), args=[jid, now_ms()])
        wake_queue(pipe, slot=slot)

    pipeline_run(queue)


def enqueue_queue(pipe, *, slot: int, jid: str, due: int | None = None) -> None:
    """Queue the queuing of a job, due now (the caller wakes a worker after), or
    at `due` (ms; recorded as made then, as a scheduled status's: it is no stuck
    job while it waits, and the sweep finds it when it is due)."""
    _ENQUEUE_ONE.queue(
        pipe, keys=slot_keys(slot), args=[jid, now_ms() if due is None else due]
    )


def wake_queue(pipe, *, slot: int) -> None:
    """Queue the wake-up call for a job just queued in `slot` (after its barrier)."""
    pipe.zadd(keys.job_ready(slot), {slot: now_ms()}, lt=True)


def wake_again(slots) -> None:
    """Announce these slots again (a stopping worker's calls not acted on)."""

    def wake(pipe) -> None:
        for slot in sorted(slots):
            wake_queue(pipe, slot=slot)

    pipeline_run(wake)


def wakeups_pop(*, count: int = 8) -> list[int]:
    """Take up to `count` wake-up calls from every shard: slots with work, maybe."""

    def pop(pipe) -> None:
        for shard in keys.job_ready_shards():
            pipe.zpopmin(shard, count)

    replies = pipeline_run(pop)
    return sorted({int(member) for reply in replies for member, _ in reply})


def wakeup_wait(*, timeout: float) -> list[int]:
    """One server: wait up to `timeout` s for a wake-up call on any shard (one
    blocking pop over all of them); the slot it announces, or [] if none came. An
    idle worker waits here rather than asking the shards every 20 ms, which cost
    it 4% of a core doing nothing (docs/BENCHMARKS.md). A Cluster's shards lie on
    different nodes, where one blocking pop cannot wait on them all (`shard_wait`)."""
    reply = get_redis().bzpopmin(keys.job_ready_shards(), timeout=timeout)
    return [int(reply[1])] if reply else []


def shard_wait(shard: str, *, timeout: float) -> tuple[int, float] | None:
    """Wait up to `timeout` s for a wake-up call on one shard (a Cluster's idle
    worker waits on each shard in a thread of its own: `fanout.ShardListeners`);
    the slot it announces and when it was queued (ms), or None."""
    reply = get_redis().bzpopmin(shard, timeout=timeout)
    return (int(reply[1]), reply[2]) if reply else None


def wakeup_return(shard: str, *, slot: int, queued: float) -> None:
    """Put back a wake-up call taken by a worker that went busy before it could
    use it, as it was (unless the shard got an earlier one meanwhile), so that
    another worker takes it."""
    get_redis().zadd(shard, {slot: queued}, lt=True)


# KEYS: slot queues (a chunk of them, on one server). ARGV: now (ms). The positions
# (from 1) of the queues that hold a job due by then: one script call reads a
# thousand queues, where a pipelined read cost the worker a parsed reply each.
_DUE_QUEUES = LuaScript(
    """
if redis.call('EXISTS', unpack(KEYS)) == 0 then return {} end  -- most are empty
local due = {}
for i, queue in ipairs(KEYS) do
  if redis.call('ZCOUNT', queue, '-inf', ARGV[1]) > 0 then due[#due + 1] = i end
end
return due
"""
)
# A Cluster's version: ARGV: now (ms), then the queues of slots one node serves.
# A script may read any key its node serves when it declares none (declared keys
# must share a slot): a key the node does not serve (its slot moved) is an error,
# never a silent miss. One command per queue: a command's keys share a slot.
_DUE_ON_NODE = LuaScript(
    """
local due = {}
for i = 2, #ARGV do
  if redis.call('ZCOUNT', ARGV[i], '-inf', ARGV[1]) > 0 then due[#due + 1] = i - 1 end
end
return due
"""
)
SWEEP_CHUNK = 1024  # queues per script call: about a millisecond of Redis's time


def due_slots(*, now: int | None = None) -> list[int]:
    """The slots whose queue holds a due job (the sweep).

    Every queue is read by scripts, SWEEP_CHUNK queues a call, in one round trip
    per server; between calls Redis serves other clients. The 16,384 queues read
    by as many pipelined commands cost a worker about 250 ms of CPU a sweep (a reply
    to parse each), every JOB_SWEEP_SECONDS, beside the pages (docs/BENCHMARKS.md).
    On a Cluster each primary reads the queues of the slots it serves
    (`_DUE_ON_NODE`); a node whose slots moved since this worker last asked is
    read as before, a command a queue, redirected where the queues now are.
    """
    at = now if now is not None else now_ms()
    queues = keys.job_queues()
    client = get_redis()
    if not is_cluster(client):
        starts = range(0, keys.CLUSTER_SLOTS, SWEEP_CHUNK)

        def sweep(pipe) -> None:
            for start in starts:
                _DUE_QUEUES.queue(
                    pipe, keys=queues[start : start + SWEEP_CHUNK], args=[at]
                )

        replies = pipeline_run(sweep, confirm=False)
        return [
            start + position - 1
            for start, due in zip(starts, replies, strict=True)
            for position in due
        ]
    from config.cluster import node_send, primaries_slots

    found: list[int] = []
    for node, slots in primaries_slots(client):
        chunks = [slots[i : i + SWEEP_CHUNK] for i in range(0, len(slots), SWEEP_CHUNK)]
        stack = [
            (("EVALSHA", _DUE_ON_NODE.sha, 0, at, *(queues[s] for s in chunk)), {})
            for chunk in chunks
        ]
        try:
            replies = node_send(client, node, stack)
        except redis.exceptions.ResponseError as error:  # a slot moved, or is moving
            log.warning("sweep: %s read queue by queue (%s)", node.name, error)
            found += _due_by_command(slots, at)
            continue
        found += [
            chunk[position - 1]
            for chunk, due in zip(chunks, replies, strict=True)
            for position in due
        ]
    return sorted(found)


def _due_by_command(slots: list[int], at: int) -> list[int]:
    """The sweep of these slots' queues by one pipelined read each (a Cluster
    sends each to the node that serves it now)."""

    def read(pipe) -> None:
        for slot in slots:
            pipe.zrangebyscore(keys.job_queue(slot), "-inf", at, start=0, num=1)

    replies = pipeline_run(read, confirm=False)
    return [slot for slot, reply in zip(slots, replies, strict=True) if reply]


def claim(*, slot: int, limit: int, now: int | None = None) -> list[Job]:
    """Lease up to `limit` due jobs of one slot to this worker."""
    token = secrets.token_hex(8)
    reply = _CLAIM(
        keys=[*slot_keys(slot), keys.job_failed(slot)],
        args=[
            now if now is not None else now_ms(),
            settings.JOB_LEASE_SECONDS * 1000,
            limit,
            token,
            settings.JOB_MAX_ATTEMPTS,
            settings.JOB_FAILED_CAP,
        ],
    )
    return [
        Job(slot=slot, id=jid, cursor=cursor, token=token, attempts=int(attempts))
        for jid, cursor, attempts in zip(
            reply[::3], reply[1::3], reply[2::3], strict=True
        )
    ]


def progress_queue(pipe, job: Job, *, cursor: str) -> None:
    """Queue the record of how far the job got, renewing its lease (one command)."""
    lease_end = now_ms() + settings.JOB_LEASE_SECONDS * 1000
    _PROGRESS.queue(
        pipe, keys=slot_keys(job.slot), args=[job.id, job.token, cursor, lease_end]
    )


def progress(job: Job, *, cursor: str) -> None:
    """Record how far the job got; LeaseLost if the job is no longer this worker's."""
    if not pipeline_run(lambda pipe: progress_queue(pipe, job, cursor=cursor))[0]:
        raise LeaseLost(job.id)


def done(job: Job) -> bool:
    """Remove a finished job; False if it was no longer this worker's.

    A job queued again while it ran stays queued, to run again from the beginning
    (due when that asked; the worker that ran it revisits its slot, the sweep
    finds a later one): the work it owes may postdate what this run read.
    """
    return bool(_DONE(keys=slot_keys(job.slot), args=[job.id, job.token, now_ms()]))


def retry_later(job: Job, *, error: str) -> None:
    """Give a job that raised back to the queue, due after a backoff that doubles
    with each attempt (2 s, 4 s, ... up to JOB_RETRY_MAX_SECONDS)."""
    delay = min(settings.JOB_RETRY_MAX_SECONDS, 2 ** min(job.attempts, 16))
    _RETRY(
        keys=slot_keys(job.slot),
        args=[job.id, job.token, now_ms() + delay * 1000, error[:500]],
    )


class Deferred(Exception):
    """Raised by a job that must wait for other work: it is due again at `due` (ms),
    resumed from its cursor, and the wait is not counted as a failed attempt."""

    def __init__(self, due: int):
        super().__init__(due)
        self.due = due


def defer(job: Job, *, due: int) -> None:
    """Give a job that must wait back to the queue, due at `due` (ms)."""
    _DEFER(keys=slot_keys(job.slot), args=[job.id, job.token, due])


def queued_ids(*, slot: int, prefix: str) -> list[tuple[str, int]]:
    """(id, due ms) of the jobs queued in `slot` whose id starts with `prefix`."""
    queued = get_redis().zrange(keys.job_queue(slot), 0, -1, withscores=True)
    return [(jid, int(due)) for jid, due in queued if jid.startswith(prefix)]


@dataclass(frozen=True)
class QueueStats:
    depth: int  # every queued job
    leased: int  # held by a worker: a lease token, and the lease still runs
    scheduled: int  # due later and held by no one (a retry's backoff, a wait)
    oldest_age_s: float | None
    failed: int
    failed_ids: list[str]


def stats() -> QueueStats:
    """Queue depth, jobs held by workers, jobs scheduled later, the oldest job's age,
    failures: by a sweep.

    A job due later is held only when it carries a lease token: one waiting out its
    retry's backoff or a `Deferred` wait (a private account's sweep after the grace)
    has none. A token whose lease ran out (its worker died) leaves the job due now,
    counted as neither.
    """
    at = now_ms()
    slots = list(range(keys.CLUSTER_SLOTS))

    def read(pipe) -> None:
        for slot in slots:
            pipe.zcard(keys.job_queue(slot))
            pipe.zrange(keys.job_failed(slot), 0, 9)
            pipe.zcard(keys.job_failed(slot))

    replies = pipeline_run(read, confirm=False)
    depth = failed = 0
    failed_ids: list[str] = []
    busy: list[int] = []
    for i, slot in enumerate(slots):
        n, some_failed, n_failed = replies[3 * i : 3 * i + 3]
        depth += n
        failed += n_failed
        failed_ids.extend(some_failed)
        if n:
            busy.append(slot)

    leased = scheduled = 0
    oldest = None
    if busy:

        def queued_read(pipe) -> None:
            for slot in busy:
                pipe.zrange(keys.job_queue(slot), 0, -1, withscores=True)

        queued = pipeline_run(queued_read, confirm=False)
        pairs = [(slot, q) for slot, q in zip(busy, queued, strict=True) if q]

        def data_read(pipe) -> None:
            # Each job's creation time and lease token, one HMGET per slot.
            for slot, q in pairs:
                fields = [f"{jid}#{f}" for jid, _ in q for f in ("s", "t")]
                pipe.hmget(keys.job_data(slot), fields)

        data = pipeline_run(data_read, confirm=False)
        made: list[int] = []
        for (_, q), fields in zip(pairs, data, strict=True):
            for (_, due), created, token in zip(
                q, fields[::2], fields[1::2], strict=True
            ):
                # A scheduled status's job starts when it is due (`#s`, in the
                # future): it is waiting, not old.
                if created is not None and int(created) <= at:
                    made.append(int(created))
                if due > at:
                    if token is not None:
                        leased += 1
                    else:
                        scheduled += 1
        oldest = (at - min(made)) / 1000 if made else None
    return QueueStats(
        depth=depth,
        leased=leased,
        scheduled=scheduled,
        oldest_age_s=oldest,
        failed=failed,
        failed_ids=failed_ids,
    )


def failed_ids() -> list[str]:
    """Every job kept as failed, oldest failure first (a sweep of every slot)."""
    slots = list(range(keys.CLUSTER_SLOTS))
    replies = pipeline_run(
        lambda pipe: [pipe.zrange(keys.job_failed(s), 0, -1) for s in slots],
        confirm=False,
    )
    return [jid for ids in replies for jid in ids]


def older_than(*, age_ms: int) -> list[tuple[int, str]]:
    """(slot, job id) of every queued job created more than `age_ms` ago."""
    slots = list(range(keys.CLUSTER_SLOTS))
    queued = pipeline_run(
        lambda pipe: [pipe.zrange(keys.job_queue(s), 0, -1) for s in slots],
        confirm=False,
    )
    busy = [(slot, ids) for slot, ids in zip(slots, queued, strict=True) if ids]
    if not busy:
        return []
    created = pipeline_run(
        lambda pipe: [
            pipe.hmget(keys.job_data(slot), [f"{jid}#s" for jid in ids])
            for slot, ids in busy
        ],
        confirm=False,
    )
    cutoff = now_ms() - age_ms
    return [
        (slot, jid)
        for (slot, ids), made in zip(busy, created, strict=True)
        for jid, at in zip(ids, made, strict=True)
        if at is not None and int(at) < cutoff
    ]


def requeue(pairs: list[tuple[int, str]]) -> None:
    """Make these queued jobs due now, taken from whoever held them (stuck jobs)."""

    def due_now(pipe) -> None:
        for slot, jid in pairs:
            pipe.zadd(keys.job_queue(slot), {jid: now_ms()}, xx=True)
            pipe.hdel(keys.job_data(slot), f"{jid}#t")

    pipeline_run(due_now)


def failed_requeue() -> int:
    """Queue every failed job again, attempts reset; returns how many."""
    slots = list(range(keys.CLUSTER_SLOTS))
    replies = pipeline_run(
        lambda pipe: [pipe.zrange(keys.job_failed(s), 0, -1) for s in slots],
        confirm=False,
    )
    n = 0
    for slot, ids in zip(slots, replies, strict=True):
        if ids:
            n += _REQUEUE(
                keys=[*slot_keys(slot), keys.job_failed(slot)], args=[now_ms(), *ids]
            )
            pipeline_run(lambda pipe, slot=slot: wake_queue(pipe, slot=slot))
    return n


# KEYS: queue, data. ARGV: id, and an owner or none. Without an owner, remove a job
# whatever its state (its owner finished the work itself, or made it pointless).
# With one, only if that request queued the job anew (its nonce in `#o`, which a
# worker's claim clears: a run taken, even one that failed, is owed) and no change
# queued it again since (`#q`: its request may not have finished its own part).
# Returns 1 when removed.
_CANCEL = LuaScript(
    FORGET
    + """
if ARGV[2] then
  if redis.call('HGET', KEYS[2], ARGV[1] .. '#o') ~= ARGV[2] then return 0 end
  if redis.call('HEXISTS', KEYS[2], ARGV[1] .. '#q') == 1 then return 0 end
end
redis.call('ZREM', KEYS[1], ARGV[1])
forget(KEYS[2], ARGV[1])
return 1
"""
)


def cancel_queue(pipe, *, slot: int, jid: str) -> None:
    """Queue the removal of a job whose work its owner has finished itself."""
    _CANCEL.queue(pipe, keys=slot_keys(slot), args=[jid])


def cancel_unless_again_queue(pipe, *, slot: int, jid: str, owner: str) -> None:
    """Queue the removal of a job whose work the request that queued it anew
    (`owner`: its nonce, given to ENQUEUE) has finished itself, unless another
    change queued it again meanwhile or a worker took it (requests that share a
    job id with no lock between them: a like and an unlike)."""
    _CANCEL.queue(pipe, keys=slot_keys(slot), args=[jid, owner])
