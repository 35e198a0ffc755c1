"""The fan-out worker: runs the jobs that posts, deletes and follow changes record.

`python manage.py fanout_worker` runs one (several may run at once, on any machine);
the development `runserver` starts one in a thread. Every job is idempotent and
resumable (`timeline.jobs`):

- `post:<author>:<sid>`: the global timeline and the status's tags (a public
  author's), then every follower's home, FANOUT_BATCH followers at a time, in the
  followers zset's order. The last follower reached is the cursor, recorded once
  the batch's homes were written, so a job cut short (a killed worker, a restarted
  server, a failover) resumes after the last batch recorded (or writes one or two
  again: harmless, the add is idempotent). A home gets the status only while its
  owner follows the author (on one server a step reads the followers and writes
  their homes in one script, `_FOLLOWERS_PUSH`; on a Cluster the follow is
  checked atomically in the reader's slot), so a fan-out racing an unfollow leaves
  nothing behind. While the worker's machine is busy, steps are paced (`_Pace`).
- `delete:<author>:<sid>`: the same walk, removing the status from every home.
- `unlink:<author>:<sid>:<parent>:<original>[:<mentioned>...]`: removes a deleted
  status's likes (and each liker's record of them), its reposts, its link in its
  parent's replies or its original's reposts, and the notifications it caused
  (`social.status_unlink`).
- `edit:<sid>`: brings an edited status's copies (outbox entries, reposts), its
  tags' timelines and the notifications of who it no longer mentions in line with
  its hash (`edits.edit_job_run`).
- `schedule:<uid>:<n>`: posts a scheduled status at its time, once
  (`scheduled.schedule_job_run`).
- `like:<liker>:<sid>`: tells a status's author of a like while it stands, or
  takes the notification back once it is undone (`social.like_job_run`).
- `mode:<author>`: moves an author past FANOUT_PUSH_MAX followers to pull mode
  (their statuses stay in their outbox and homes merge them at read time), or back
  (`run_mode`).
- `home:<uid>`: rebuilds the home of a reader back after FANOUT_ACTIVE_DAYS away
  (fan-out skipped them meanwhile) from the newest statuses of everyone they follow.
- `follow:<follower>:<followee>`: brings the followee's side and the follower's home
  in line with `following:{follower}` (`services.follow_sync`).
- `account:<uid>`: removes everything of a deleted account: their statuses, both
  sides of their follows, their statuses from followers' homes, their own keys
  (`run_account`).
- `block:<blocker>:<blocked>`: brings both sides of a block (or unblock) in line with
  `blocks:{blocker}`, ending the follows both ways (`blocks.block_sync`).
- `approve:<owner>:<requester>`: completes the approval of a follow request to a
  private account: the requester follows (`privacy.approval_complete`).
- `private:<uid>`: takes a newly private account's statuses out of the global
  timeline and their tags' (`privacy.private_job_run`): at once, and again after
  the grace.

Besides its jobs, every worker has two periodic duties, each done by one worker an
interval: the sum of the trending tags (`timeline.trends.refresh`, every
TRENDS_REFRESH_SECONDS) and of the site's counts for `/api/v1/instance`
(`timeline.counts.site_sum`, every SITE_COUNTS_SECONDS).
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import math
import os
import threading
import time
from collections.abc import Callable

import redis
from django.conf import settings

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from accounts.services import (
    SEEN_DAYS_MAX_UID,
    names_unindex_queue,
    seen_alive_since,
    seen_days_args,
    username_retire,
)
from api import keys as api_keys
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, is_cluster, slot_groups, slot_of
from timeline import (
    blocks,
    counts,
    direct,
    edits,
    jobs,
    keys,
    notifications,
    polls,
    privacy,
    scheduled,
    services,
    social,
    suggestions,
    trends,
)
from timeline.domain import Status

log = logging.getLogger(__name__)

OUTAGES = (redis.RedisError, redis.exceptions.RedisClusterException)


# KEYS: a followers zset. ARGV: the cursor's score and member ('' from the start), how
# many. Returns up to that many followers that come after the cursor in the zset's
# own order (score, then member), then the last one's score: the next cursor
# (nothing when none comes after). Only that one score: Redis formats every score it
# returns with printf, which cost a walk as much per follower as a home's follow
# check did. A cursor whose member has left (an unfollow) is placed by a binary
# search among the members of its score. Unlike a ZSCAN cursor, which means nothing
# to a restarted server or a promoted replica (their hash tables are seeded afresh),
# this cursor holds across restarts and failovers, and no follower present
# throughout the walk is skipped.
_AFTER_LUA = """
local function after(key, s, m, n)
  local start = 0
  if m ~= '' then
    local rank = redis.call('ZRANK', key, m)
    local score = redis.call('ZSCORE', key, m)
    if rank and tonumber(score) == tonumber(s) then
      start = rank + 1
    else
      local lo = redis.call('ZCOUNT', key, '-inf', '(' .. s)
      local hi = redis.call('ZCOUNT', key, '-inf', s)
      while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if redis.call('ZRANGE', key, mid, mid)[1] <= m then
          lo = mid + 1
        else
          hi = mid
        end
      end
      start = lo
    end
  end
  local page = redis.call('ZRANGE', key, start, start + n - 1)
  if #page == 0 then return page, nil end
  return page, redis.call('ZSCORE', key, page[#page])
end
"""
_FOLLOWERS_AFTER = LuaScript(
    _AFTER_LUA
    + """
local page, score = after(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]))
if score then page[#page + 1] = score end
return page
"""
)

# One server only. KEYS: the author's followers, the author's user hash, `seen:days`,
# `muters`, `streamers`. ARGV: `services.homes_push_args` (HOME_ADD_LUA's arguments,
# then the 10 key parts), then a cursor's score and member ('' from the start), how
# many, the user hash's username and deleted fields, the first day whose stamp is
# alive for sure (`accounts.services.seen_alive_since`), the last uid `seen:days`
# records (`accounts.services.SEEN_DAYS_MAX_UID`), how many readers one read of the
# indexes takes (`_INDEX_READ`) and now (ms: a reader in `streamers` until a later
# time has a stream open, and only they are asked for their presence key and told).
# Nothing while the author is being deleted:
# their account's job ends each follower's follow and sweeps the home before it empties
# the followers zset, and a post job held past its lease may still run a step in between
# (`run_account`). Otherwise the next that many followers after the cursor (as
# `_FOLLOWERS_AFTER` finds them) get the statuses in their homes, in one atomic step
# with that read: so a reader is known to follow the author here, and `add` asks only
# whether they are active and skip the author (a mute, or an exclusive list of theirs:
# a reply's rule still reads their follows), and asks Redis neither question where
# one server's indexes answer it: a reader whose last stamp in `seen:days` is recent
# enough is active (`seen_alive_since`: their `seen:{uid}` lives for sure), and one
# whose bit in `muters` is clear has no home skips: mutes no one and has no one on an
# exclusive list (`timeline.blocks._MUTE_SET`, `timeline.lists._WRITE` keep the
# bit). Those two reads touch two small keys that stay in the CPU's caches, where each
# reader's own `seen` and `mutes` keys are two lookups that miss them: the lookups were
# about a third of the push's Redis time (docs/BENCHMARKS.md). Each index is read for
# the whole step at once, one BITFIELD of GETs per `_INDEX_READ` readers (Lua's
# `unpack` passes 8,000 values at most, three a reader): read per reader (a GETRANGE
# and a GETBIT, each a call from Lua into Redis), they made a step a fifth slower
# (docs/BENCHMARKS.md). (BITFIELD_RO would say read-only better; fakeredis, which
# the tests also run on, lacks it, and a BITFIELD of GETs writes nothing, so nothing
# of it reaches the AOF.) An unfollow takes the reader out of the followers first
# and then sweeps the author's statuses from the home
# (`services.follow_sync`), so a push either comes before the sweep or no longer finds
# the reader. Returns how many followers it reached, the last one and their score (the
# next cursor), and how many homes gained a status. A Cluster cannot read the followers
# and write the homes in one step (their slots differ): it walks with `_FOLLOWERS_AFTER`
# and checks each reader's follow in the reader's slot (`services._TIMELINE_ADD`).
_FOLLOWERS_PUSH = LuaScript(
    services.HOME_ADD_LUA
    + services._LIVE
    + _AFTER_LUA
    + """
local p = last_sid + 1
if not live(KEYS[2], ARGV[p + 13], ARGV[p + 14]) then return {0, '', '', 0} end
local h, h_, f, f_, s, s_, m, m_, x, x_ = unpack(ARGV, p, p + 9)
local page, score = after(KEYS[1], ARGV[p + 10], ARGV[p + 11], tonumber(ARGV[p + 12]))
local reply = to ~= ''
local since, max_uid = tonumber(ARGV[p + 15]), ARGV[p + 16]
local per_read = 3 * tonumber(ARGV[p + 17])
local now = tonumber(ARGV[p + 18])
-- Each reader's field in an index (u1: their bit in `muters`, u16: their day in
-- `seen:days`), 0 past its end. One table of GETs serves both reads, with the type
-- changed, and with '#0' for a uid past what `seen:days` records (a read at 2**28
-- and beyond is past Redis's bit offsets): such a reader's day reads 0.
local n = 3 * #page
local function fields(key, kind, gets)
  for j = 2, n, 3 do gets[j] = kind end
  if n <= per_read then
    return n > 0 and redis.call('BITFIELD', key, unpack(gets, 1, n)) or {}
  end
  local out, k = {}, 0
  for first = 1, n, per_read do
    local last = math.min(n, first + per_read - 1)
    local got = redis.call('BITFIELD', key, unpack(gets, first, last))
    for j = 1, #got do out[k + j] = got[j] end
    k = k + #got
  end
  return out
end
local gets, past = {}, {}
for i = 1, #page do
  local u = page[i]  -- decimal, no leading zero: longer is larger; else by digits
  gets[3 * i - 2], gets[3 * i - 1], gets[3 * i] = 'GET', 'u1', '#' .. u
  if #u > #max_uid or (#u == #max_uid and u > max_uid) then past[#past + 1] = i end
end
local muting = fields(KEYS[4], 'u1', gets)
for _, i in ipairs(past) do gets[3 * i] = '#0' end
local day = fields(KEYS[3], 'u16', gets)
for _, i in ipairs(past) do day[i] = 0 end
-- Who of the page has a stream open (`streamers`): one ZMSCORE a chunk of readers.
local listening = {}
for first = 1, #page, per_read do
  local last = math.min(#page, first + per_read - 1)
  local until_ = redis.call('ZMSCORE', KEYS[5], unpack(page, first, last))
  for j = first, last do
    local t = until_[j - first + 1]
    listening[j] = (t and tonumber(t) > now) or false
  end
end
local added = 0
for i = 1, #page do
  local u = page[i]
  local following = reply and (f .. u .. f_)
  local seen = day[i] < since and (s .. u .. s_)
  local skips = muting[i] == 1
  added = added + add(h .. u .. h_, following, seen, skips and (m .. u .. m_),
                      skips and (x .. u .. x_), listening[i])
end
return {#page, page[#page] or '', score or '', added}
"""
)

# Readers per BITFIELD in `_FOLLOWERS_PUSH`: three values each, within the 8,000 that
# Lua's `unpack` passes.
_INDEX_READ = 2000


def _walk_followers(
    job: jobs.Job, author_id: int, write: Callable[[object, list[int]], None]
) -> None:
    """Call `write(pipe, batch)` for every follower of the author, from the job's
    cursor on, recording the cursor once each batch's writes have answered.

    One round trip per batch (two stages on a Cluster): a batch's writes travel with
    the read of the next batch, and its cursor is recorded after the writes.
    """
    start = job.cursor if job.cursor != "0" else ""
    _walk(job, keys.followers(author_id), write, start=start)


def _walk(
    job: jobs.Job,
    zset: str,
    write: Callable[[object, list[int]], None],
    *,
    start: str,
    phase: str = "",
) -> None:
    """`_walk_followers` over any zset of uids or status ids, from `start` ("score
    member" or "" for the beginning); the cursor recorded is `phase` + "score member"
    (a job of several walks says which one it is in)."""
    score, _, member = start.partition(" ")
    size = settings.FANOUT_BATCH
    reply = _FOLLOWERS_AFTER(keys=[zset], args=[score or "0", member, size])
    while True:
        batch = [int(uid) for uid in reply[:-1]]
        if not batch:
            return
        member, score = reply[-2], str(int(float(reply[-1])))
        last = len(batch) < size

        def step(pipe, batch=batch, cursor=f"{score} {member}", last=last) -> None:
            write(pipe, batch)
            if not last:
                _FOLLOWERS_AFTER.queue(pipe, keys=[zset], args=[*cursor.split(), size])
            pipe.barrier()  # the cursor moves only once the writes answered
            jobs.progress_queue(pipe, job, cursor=phase + cursor)

        started = time.perf_counter()
        replies = pipeline_run(step)
        _leave_redis(time.perf_counter() - started)
        if not replies[-1]:
            raise jobs.LeaseLost(job.id)
        if last:
            return
        reply = replies[-2]


class _Pace:
    """Whether this process's fan-out steps go slowed (`slowed(took)`), decided
    every 50 ms from this machine's idle CPU (/proc/stat, whose counts move in 10
    ms ticks) and the steps' own use of Redis in that time: they go at full speed
    only while the machine would keep SPARE_CORES idle with them at full speed.
    Redis runs a script on one core, so the steps take at most one core, of which
    they used `used` (the seconds they took in the window, per second): full speed
    would take 1 - used more. (Looking at the idle CPU alone let a job start at full
    speed on a machine whose pages left a core idle, and a slowed job speed up on
    the CPU it left idle: pages queued behind every burst.) Where /proc/stat cannot
    be read (not Linux), steps go at full speed."""

    WINDOW = 0.05
    SPARE_CORES = 0.5

    def __init__(self, *, ticks=None, clock=time.monotonic, cores=None):
        self.ticks = ticks or _cpu_ticks
        self.clock = clock
        self.cores = cores or os.cpu_count() or 1
        self.lock = threading.Lock()
        self.read_at = -math.inf  # the first step reads
        self.counts: tuple[int, int] | None = None
        self.took = 0.0
        self.slow = True

    def slowed(self, took: float) -> bool:
        with self.lock:
            self.took += took
            now = self.clock()
            if now - self.read_at < self.WINDOW:
                return self.slow
            ticks = self.ticks()
            if ticks is None:  # asked again a window later, not on every step
                self.read_at, self.slow = now, False
                return False
            idle, total = ticks[3] + ticks[4], sum(ticks)  # idle and iowait, of all
            if self.counts is not None and total > self.counts[1]:
                idle_share = (idle - self.counts[0]) / (total - self.counts[1])
                used = min(1.0, self.took / (now - self.read_at))
                self.slow = self.cores * idle_share - (1 - used) < self.SPARE_CORES
            self.counts, self.read_at, self.took = (idle, total), now, 0.0
            return self.slow


def _cpu_ticks() -> list[int] | None:
    """The machine's CPU time so far by kind (user, nice, system, idle, iowait,
    irq, softirq, steal: /proc/stat's first line), None where there is none."""
    try:
        with open("/proc/stat") as stat:
            return [int(x) for x in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None


_pace = _Pace()


def _leave_redis(took: float) -> None:
    """After a step that kept Redis at work for about `took` seconds: while this
    machine has CPU to spare, go on at once; while it is busy (`_Pace`), wait so
    that the steps take FANOUT_REDIS_SHARE of the worker's time.

    Other clients' commands run between the steps in any case; what a busy
    machine lacks is the CPU that Redis spends on the steps, where Redis shares its
    cores with the web servers (as on one machine): pages offered half of what they
    serve queued behind a 100,000-follower push (`bench/fanout.py`). A worker on a
    machine of its own sees only that machine; FANOUT_REDIS_SHARE 1 turns this off.
    """
    share = settings.FANOUT_REDIS_SHARE
    if 0 < share < 1 and _pace.slowed(took):
        time.sleep(took * (1 - share) / share)


def _post_state_queue(pipe, *, author_id: int, sid: int) -> None:
    """Queue what a post job reads first: the status, whether its author is
    private, and how the author's statuses reach homes (pushed or pulled)."""
    pipe.hmget(keys.status(sid), Status.IMMUTABLE)
    pipe.hexists(account_keys.user(author_id), User.PRIVATE_FIELD)
    pipe.get(keys.fanout_mode(author_id))


def _step_size() -> int:
    """Followers a push step carries: FANOUT_BATCH, or FANOUT_BATCH_SLOWED while
    the steps are slowed (`_leave_redis`). Redis runs a step's script whole while
    the pages' commands wait behind it: on a busy machine a quarter of the step
    keeps those waits a quarter as long, for about a quarter more Redis CPU per
    home (docs/BENCHMARKS.md); with CPU to spare, the larger step is faster."""
    size = settings.FANOUT_BATCH
    share = settings.FANOUT_REDIS_SHARE
    if 0 < share < 1 and _pace.slow:
        size = min(size, settings.FANOUT_BATCH_SLOWED)  # never larger when slowed
    return max(1, size)


def run_post(job: jobs.Job) -> None:
    author_id, sid = job.args
    fields, private, mode = pipeline_run(
        lambda pipe: _post_state_queue(pipe, author_id=author_id, sid=sid),
        confirm=False,
    )
    status = Status.from_fields(sid, fields)
    if status is None:
        # Deleted (its hash goes first; it existed before this job was recorded):
        # nothing of it is published again. Its removal job sweeps what got out.
        return
    # A reply's link to its parent, a repost's to its original, in case the
    # request died before it (`timeline.social`); a repost that loses is gone.
    if job.cursor == "0" and not social.link_posted(status=status):
        return
    if job.cursor == "0" and status.poll is not None and status.repost_of is None:
        # Its closing is told to its voters and author (`timeline.polls`).
        pipeline_run(lambda pipe: polls.poll_end_queue(pipe, status=status))
    if status.direct:
        # A direct message reaches no timeline: its audience's conversations.
        direct.deliver(status=status)
        return
    public = status.repost_of is None and not status.unlisted and not private
    if job.cursor == "0" and public:
        # A private author's statuses stay out of the global timeline and out of
        # tag pages (a turn to private after this read is swept by its own job,
        # due once this one had time to finish), and reposts and unlisted
        # statuses too (`services.status_create`).
        services.status_publish(status=status)
    if mode == "pull":
        # Every follower's home merges the author's outbox instead; their open
        # streams hear of it on the author's channel (`api.streaming`).
        if job.cursor == "0":
            get_redis().publish(keys.stream_author(author_id), sid)
        return
    reply_uid = status.reply_uid

    if not is_cluster():
        _push_walk(job, author_id, sid=sid, reply_uid=reply_uid)
        return

    def add(pipe, batch: list[int]) -> None:
        services.homes_add_queue(
            pipe, readers=batch, author_id=author_id, sids=[sid], reply_uid=reply_uid
        )

    _walk_followers(job, author_id, add)


def _push_walk(job: jobs.Job, author_id: int, *, sid: int, reply_uid) -> None:
    """On one server, the post job's walk: each step reads the next FANOUT_BATCH
    followers and writes their homes in one script (`_FOLLOWERS_PUSH`), and the
    cursor it reached is recorded in the next step's round trip, ahead of that
    step's script (one server runs them in order). A job cut short resumes from
    the cursor recorded, writing at most two steps' homes again (idempotent)."""
    score, _, member = (job.cursor if job.cursor != "0" else "").partition(" ")
    args = services.homes_push_args(
        author_id=author_id, sids=[sid], reply_uid=reply_uid
    )
    reached = ""  # the cursor written and not yet recorded

    def step(pipe) -> None:
        if reached:
            jobs.progress_queue(pipe, job, cursor=reached)
        _FOLLOWERS_PUSH.queue(
            pipe,
            keys=[
                keys.followers(author_id),
                account_keys.user(author_id),
                account_keys.seen_days(),
                keys.muters(),
                keys.streamers(),
            ],
            args=[
                *args,
                score or "0",
                member,
                size,
                *services._live_args(),
                seen_alive_since(),
                SEEN_DAYS_MAX_UID,
                _INDEX_READ,
                jobs.now_ms(),
            ],
        )

    while True:
        size = _step_size()  # each step's, read by `step`
        started = time.perf_counter()
        replies = pipeline_run(step)
        _leave_redis(time.perf_counter() - started)
        if reached and not replies[0]:
            raise jobs.LeaseLost(job.id)
        count, last, last_score, _ = replies[-1]
        if int(count) < size:
            return
        score, member = str(int(float(last_score))), last
        reached = f"{score} {member}"


def run_delete(job: jobs.Job) -> None:
    author_id, sid = job.args
    if job.cursor == "0":

        def unpublish(pipe) -> None:
            pipe.zrem(keys.global_partition(sid), sid)
            pipe.zrem(keys.home(author_id), sid)

        pipeline_run(unpublish)

    def remove(pipe, batch: list[int]) -> None:
        for follower in batch:
            pipe.zrem(keys.home(follower), sid)

    _walk_followers(job, author_id, remove)


def run_follow(job: jobs.Job) -> None:
    follower_id, followee_id = job.args
    with services._FollowLock(follower_id, wait=30.0):
        services.follow_sync(follower_id=follower_id, followee_id=followee_id)


def run_suggest(job: jobs.Job) -> None:
    (uid,) = job.args
    suggestions.suggestions_rebuild(uid=uid)


def run_block(job: jobs.Job) -> None:
    blocker_id, blocked_id = job.args
    blocks.block_sync(blocker_id=blocker_id, blocked_id=blocked_id)


def run_approve(job: jobs.Job) -> None:
    owner_id, requester_id = job.args
    # Not cancelled here: the gate admits the requester while the job is queued,
    # and finishing it removes it.
    privacy.approval_complete(
        owner_id=owner_id, requester_id=requester_id, cancel=False
    )


def run_private(job: jobs.Job) -> None:
    privacy.private_job_run(job)


# KEYS: (following, pulls) of one or more readers. ARGV: the author's uid. Each
# reader who still follows the author merges the author's outbox from now on.
_PULLS_ADD = LuaScript(
    """
for i = 1, #KEYS, 2 do
  local since = redis.call('ZSCORE', KEYS[i], ARGV[1])
  if since then redis.call('ZADD', KEYS[i + 1], since, ARGV[1]) end
end
return 1
"""
)

# KEYS: the author's fan-out mode and outbox. ARGV: the transition, what follows it
# ('' for push: the mode and the outbox go). Ends a transition unless another began.
_MODE_END = LuaScript(
    """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1], KEYS[2])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1
"""
)


def _outbox_fill(author_id: int) -> None:
    """Copy the author's newest statuses into their outbox (before homes read it)."""
    newest = [
        int(sid)
        for sid in get_redis().zrevrange(
            keys.posts(author_id), 0, services.outbox_cap() - 1
        )
    ]
    for start in range(0, len(newest), 500):
        chunk = newest[start : start + 500]
        rows = pipeline_run(
            lambda pipe, chunk=chunk: [
                pipe.hmget(keys.status(sid), Status.FIELDS) for sid in chunk
            ],
            confirm=False,
        )
        statuses = {
            sid: status
            for sid, row in zip(chunk, rows, strict=True)
            if (status := Status.from_fields(sid, row)) is not None
        }
        if not statuses:
            continue

        def fill(pipe, statuses=statuses) -> None:
            pipe.hset(
                keys.outbox(author_id),
                mapping={sid: status.to_json() for sid, status in statuses.items()},
            )
            pipe.barrier()
            # Then whether any was edited since its read: an edit's job that ran
            # before this write found no entry to bring in line (`timeline.edits`).
            for sid in statuses:
                pipe.hget(keys.status(sid), "edited")

        _, *edited = pipeline_run(fill)
        for (sid, status), now in zip(statuses.items(), edited, strict=True):
            if now is not None and (
                status.edited is None or float(now) != status.edited
            ):
                jobs.enqueue(slot=slot_of(keys.status(sid)), jid=edits.edit_job_id(sid))


# Status adds that one script call of a move back to push carries at most (the
# FANOUT_GROUP homes times FOLLOW_BACKFILL statuses it used to): a call runs alone on
# Redis's core, and an outbox's worth for each home of a group is five times that.
_MERGED_ADDS_PER_CALL = 50_000


def _merged_of(author_id: int, batch: list[int]) -> list[tuple[list[int], list[int]]]:
    """What the homes of these readers show of a pulled author's statuses while
    merging their outbox, as (readers, status ids) to add, in calls of at most
    _MERGED_ADDS_PER_CALL adds: the statuses the outbox keeps (the author's newest
    `services.outbox_cap()`), and of those, in a full home, only the ones newer
    than its oldest entry (older ones would be trimmed at once). Read with the
    batch, so a status deleted since the job began is not added back."""
    cap = settings.HOME_TIMELINE_CAP

    def read(pipe) -> None:
        pipe.zrevrange(keys.posts(author_id), 0, services.outbox_cap() - 1)
        for reader in batch:
            pipe.zcard(keys.home(reader))
            pipe.zrange(keys.home(reader), 0, 0)

    newest, *homes = pipeline_run(read, confirm=False)
    ascending = [int(sid) for sid in reversed(newest)]
    by_count: dict[int, list[int]] = {}  # how many of the newest -> readers
    for reader, size, oldest in zip(batch, homes[::2], homes[1::2], strict=True):
        floor = int(oldest[0]) if size >= cap and oldest else 0
        count = len(ascending) - bisect.bisect_right(ascending, floor)
        if count:
            by_count.setdefault(count, []).append(reader)
    calls = []
    for count, readers in by_count.items():
        sids = ascending[-count:][::-1]
        step = max(1, _MERGED_ADDS_PER_CALL // count)
        calls += [(readers[i : i + step], sids) for i in range(0, len(readers), step)]
    return calls


def run_mode(job: jobs.Job) -> None:
    """Move an author between push and pull mode without a follower losing or
    seeing twice any of their statuses.

    To pull: the outbox is filled first, then each follower's home starts merging
    it; meanwhile new statuses are still pushed as well (a home that has them from
    both shows each once). To push: each active follower's home gets what its
    merge showed of the author, every status the outbox keeps (that a full home
    has room for: `_merged_of`; replies unchecked, as a follow's backfill adds
    them), then stops merging the outbox; new statuses are pushed meanwhile. (An
    inactive follower's home is rebuilt when they come back, as after any time
    away.)
    """
    (author_id,) = job.args
    mode = get_redis().get(keys.fanout_mode(author_id))
    if mode == "pulling":
        if job.cursor == "0":
            _outbox_fill(author_id)

        def start_merging(pipe, batch: list[int]) -> None:
            for group in slot_groups(batch, keys.pulls, settings.FANOUT_GROUP):
                _PULLS_ADD.queue(
                    pipe,
                    keys=[k for r in group for k in (keys.following(r), keys.pulls(r))],
                    args=[author_id],
                )

        _walk_followers(job, author_id, start_merging)
        _MODE_END(
            keys=[keys.fanout_mode(author_id), keys.outbox(author_id)],
            args=["pulling", "pull"],
        )
    elif mode == "pushing":

        def stop_merging(pipe, batch: list[int]) -> None:
            for readers, sids in _merged_of(author_id, batch):
                services.homes_add_queue(
                    pipe, readers=readers, author_id=author_id, sids=sids
                )
            for reader in batch:
                pipe.zrem(keys.pulls(reader), author_id)

        _walk_followers(job, author_id, stop_merging)
        _MODE_END(
            keys=[keys.fanout_mode(author_id), keys.outbox(author_id)],
            args=["pushing", ""],
        )


def run_home(job: jobs.Job) -> None:
    (uid,) = job.args
    services.home_rebuild(uid=uid)


# KEYS: (following, pulls, home) of one or more readers. ARGV: the author's uid, then
# the author's newest status ids. Ends each reader's follow of the author (a deleted
# account) and removes the author's statuses from the home, atomically in the
# reader's slot: no fan-out adds one after (the add checks `following`), and one
# added before is removed here. Reads each home (capped) once against the ids
# passed once per call, so a call costs the home's size, not ids x readers.
_FOLLOWS_END = LuaScript(
    """
local author, theirs, low = ARGV[1], {}, nil
for i = 2, #ARGV do
  theirs[ARGV[i]] = true
  local sid = tonumber(ARGV[i])
  if not low or sid < low then low = sid end
end
local dropped = 0
for i = 1, #KEYS, 3 do
  redis.call('ZREM', KEYS[i], author)
  redis.call('ZREM', KEYS[i + 1], author)
  if low then
    local gone = {}
    for _, sid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[i + 2], low, '+inf')) do
      if theirs[sid] then gone[#gone + 1] = sid end
    end
    for j = 1, #gone, 1000 do
      dropped = dropped + redis.call('ZREM', KEYS[i + 2],
                                     unpack(gone, j, math.min(j + 999, #gone)))
    end
  end
end
return dropped
"""
)


def _account_keys(uid: int) -> list[str]:
    """Every key a user owns (all in their slot): what their deletion job deletes."""
    return [
        account_keys.user(uid),
        account_keys.sessions(uid),
        account_keys.devices(uid),
        account_keys.app_tokens(uid),
        account_keys.seen(uid),
        account_keys.avatar(uid),
        # Their posting and follow budgets (they expire anyway; one slot, so here).
        *limits.post(uid).keys(),
        *limits.follow(uid).keys(),
        *limits.like(uid).keys(),
        *limits.report(uid).keys(),
        keys.home(uid),
        keys.home_streamed(uid),
        keys.posts(uid),
        keys.followers(uid),
        keys.following(uid),
        keys.follower_names(uid),
        keys.pulls(uid),
        keys.fanout_mode(uid),
        keys.outbox(uid),
        keys.follow_lock(uid),
        keys.blocks(uid),
        keys.blocked_by(uid),
        keys.mutes(uid),
        keys.follow_requests(uid),
        keys.requested(uid),
        *notifications.store_keys(uid),
        keys.notifications_read(uid),
        keys.markers(uid),
        keys.liked(uid),
        keys.bookmarks(uid),
        keys.pins(uid),
        keys.conversation_mutes(uid),
        keys.scheduled(uid),
        keys.filters(uid),
        keys.lists(uid),
        keys.list_members(uid),
        keys.list_exclusive(uid),
        keys.direct(uid),
        *direct.conversation_keys(uid),
        keys.followed_tags(uid),
        keys.suggestions(uid),
        keys.suggestions_dismissed(uid),
        api_keys.idempotency(uid),  # the client API's Idempotency-Keys
    ]


def run_account(job: jobs.Job) -> None:
    """Remove everything of a deleted account, in phases, each a resumable walk.

    The cursor names the phase: `0` retire the name and wait out the user's own
    follow change in progress; `s` their statuses (each one's unlink job and their
    tags' timelines, the hashes, then the global timeline: `timeline.social`); `d`
    their direct messages (each one's unlink and undirect jobs, the hashes); `l`
    their likes; `f` their followers (each follow ends in the follower's slot and
    their statuses leave that home, as an unfollow); `g` whom they follow (each
    followee's followers, names and count); `b` whom they blocked (the other side,
    `blocked_by`); `c` who blocked them (those blocks); `r` the follow requests
    they sent (each private account's `follow_requests`); `q` those sent to them
    (each requester's `requested`); `e` their own keys (and on one server their
    entries in `seen:days` and `muters`). Their likes, follows and follow
    requests leave the notifications they made (`l`, `g`, `r`); their other
    notifications in others' stores stay, left out at read (no index leads to
    them). Others' mutes of them stay (no index leads to them; a deleted id is never
    handed out again, and the list of one's mutes skips people who are gone).
    Reports they filed and reports about them stay (`timeline.reports`: they are
    the operators', in their own slot, and name both people as they were). The
    posts and the followers, following and block zsets are kept until `e`, so every
    walk's order holds and a rerun finds the same members; every step is idempotent.
    """
    (uid,) = job.args
    cursor = job.cursor
    if cursor == "0":
        name = get_redis().hget(account_keys.user(uid), User.USERNAME_FIELD)
        if name is not None:
            username_retire(uid=uid, username=name)
        # A follow change of theirs that began before the account closed finishes
        # under their lock; any later one is refused (`services._FOLLOW_SET`).
        with services._FollowLock(uid, wait=30.0):
            pass
        cursor = "s"
        jobs.progress(job, cursor=cursor)
    phase, _, start = cursor.partition(" ")
    if phase == "s":

        def unpublish(pipe, sids: list[int]) -> None:
            # Each status's unlink job and its tags' timelines first, while the hash
            # still says what it replies to, reposts and is tagged with (the job
            # waits for the hash to go; a rerun reads the hashes again).
            found = services.statuses_read(sids)
            for status in found:
                jobs.enqueue_queue(
                    pipe, slot=job.slot, jid=services.unlink_job_id(uid, status)
                )
            services.tags_remove_queue(pipe, statuses=found)  # and their trends
            pipe.barrier()
            # The hashes next: from then on every reference is skipped on read.
            for sid in sids:
                pipe.delete(keys.status(sid))
            pipe.barrier()
            services.global_remove_queue(pipe, sids=sids)
            jobs.wake_queue(pipe, slot=job.slot)

        _walk(job, keys.posts(uid), unpublish, start=start, phase="s ")
        phase, start = "d", ""
        jobs.progress(job, cursor=phase)
    if phase == "d":

        def undirect(pipe, sids: list[int]) -> None:
            # As their statuses: each message's unlink job and the job that takes
            # it out of its participants' conversations, then the hashes.
            found = services.statuses_read(sids)
            for status in found:
                for jid in (
                    services.unlink_job_id(uid, status),
                    direct.undirect_job_id(status),
                ):
                    jobs.enqueue_queue(pipe, slot=job.slot, jid=jid)
            pipe.barrier()
            for sid in sids:
                pipe.delete(keys.status(sid))
            pipe.barrier()
            jobs.wake_queue(pipe, slot=job.slot)

        _walk(job, keys.direct(uid), undirect, start=start, phase="d ")
        phase, start = "l", ""
        jobs.progress(job, cursor=phase)
    if phase == "l":

        def unlike(pipe, sids: list[int]) -> None:
            # Each like leaves its author's notification too, as an unlike does
            # (`social.status_unlike`): else "and N others" still counts them. A
            # status gone has taken its notifications with it.
            liked = services.statuses_read(sids)
            social.likes_undo_queue(pipe, uid=uid, sids=sids)
            for status in liked:
                notifications.unnotify_queue(
                    pipe,
                    recipient=status.author_id,
                    kind="like",
                    actor=uid,
                    sid=status.id,
                )

        _walk(job, keys.liked(uid), unlike, start=start, phase="l ")
        phase, start = "f", ""
        jobs.progress(job, cursor=phase)
    if phase == "f":
        # Posts gain nothing once closed, so these are the newest a home can hold.
        newest = get_redis().zrevrange(
            keys.posts(uid), 0, settings.HOME_TIMELINE_CAP - 1
        )

        def end_follows(pipe, batch: list[int]) -> None:
            for group in slot_groups(batch, keys.home, settings.FANOUT_GROUP):
                _FOLLOWS_END.queue(
                    pipe,
                    keys=[
                        k
                        for r in group
                        for k in (keys.following(r), keys.pulls(r), keys.home(r))
                    ],
                    args=[uid, *newest],
                )

        _walk(job, keys.followers(uid), end_follows, start=start, phase="f ")
        phase, start = "g", ""
        jobs.progress(job, cursor=phase)
    if phase == "g":

        def unfollow(pipe, batch: list[int]) -> None:
            def unlink(p) -> None:
                for followee in batch:
                    p.zrem(keys.followers(followee), uid)
                    p.hdel(keys.follower_names(followee), uid)
                    p.zcard(keys.followers(followee))
                    p.get(keys.fanout_mode(followee))

            replies = pipeline_run(unlink)
            for i, followee in enumerate(batch):
                count, mode = replies[4 * i + 2], replies[4 * i + 3]
                services._popularity_queue(pipe, followee, count)
                # They leave the followee's "followed you" (the walk is here).
                notifications.unnotify_queue(
                    pipe, recipient=followee, kind="follow", actor=uid, sid=None
                )
                if mode == "pull":  # fewer followers may move it back to push
                    services.mode_check_queue(pipe, author_id=followee)

        _walk(job, keys.following(uid), unfollow, start=start, phase="g ")
        phase, start = "b", ""
        jobs.progress(job, cursor=phase)
    # Two-sided relations whose other side is in someone else's slot: walk the
    # account's side, and take the account out of each other side.
    # A request they sent also leaves the owner's "asked to follow you".
    others = (
        ("b", keys.blocks, keys.blocked_by, None),  # whom they blocked
        ("c", keys.blocked_by, keys.blocks, None),  # who blocked them
        ("r", keys.requested, keys.follow_requests, "follow_request"),  # they sent
        ("q", keys.follow_requests, keys.requested, None),  # sent to them
    )
    for i, (step, own_key, other_key, told) in enumerate(others):
        if phase != step:
            continue

        def forget(pipe, batch: list[int], other_key=other_key, told=told) -> None:
            for other in batch:
                pipe.zrem(other_key(other), uid)
                if told:
                    notifications.unnotify_queue(
                        pipe, recipient=other, kind=told, actor=uid, sid=None
                    )

        _walk(job, own_key(uid), forget, start=start, phase=f"{step} ")
        phase, start = others[i + 1][0] if i + 1 < len(others) else "e", ""
        jobs.progress(job, cursor=phase)
    if phase == "e":
        # A status delete of theirs walks their followers: it ends before they go.
        waiting = jobs.queued_ids(slot=job.slot, prefix=f"delete:{uid}:")
        if waiting:
            raise jobs.Deferred(max(due for _, due in waiting) + 1)

        username, name = get_redis().hmget(
            account_keys.user(uid), [User.USERNAME_FIELD, User.NAME_FIELD]
        )

        def forget_user(pipe) -> None:
            if username is not None:  # out of search first: a rerun reads it again
                names_unindex_queue(pipe, uid=uid, username=username, name=name or "")
                pipe.barrier()
            pipe.delete(*_account_keys(uid))
            # One server's fan-out indexes: their seen day and muter bit (after the
            # stamp and the mutes are gone; no push reaches them any more).
            days = seen_days_args(uid=uid, day=0)
            if days is not None:
                pipe.setrange(account_keys.seen_days(), *days)
            if not is_cluster():  # `muters` has no uid cap, unlike `seen:days`
                pipe.setbit(keys.muters(), uid, 0)
            pipe.barrier()  # their count goes after their followers (an unfollow
            # racing this step sets it from the followers zset)
            pipe.zrem(keys.popular_users(), uid)

        pipeline_run(forget_user)


HANDLERS: dict[str, Callable[[jobs.Job], None]] = {
    "account": run_account,
    "approve": run_approve,
    "block": run_block,
    "private": run_private,
    "home": run_home,
    "mode": run_mode,
    "post": run_post,
    "delete": run_delete,
    "unlink": social.unlink_job_run,
    "unlinkq": social.unlink_job_run,
    "undirect": direct.undirect_job_run,
    "edit": edits.edit_job_run,
    "schedule": scheduled.schedule_job_run,
    "like": social.like_job_run,
    "poll": polls.poll_job_run,
    "follow": run_follow,
    "suggest": run_suggest,
}


def job_run(job: jobs.Job) -> bool:
    """Run one leased job to its end; True when it finished (removed, or due again
    when it was queued again meanwhile: `timeline.jobs`).

    A job that raises goes back to its queue for a retry (after a backoff, resumed
    from its cursor); one that lost its lease is left to whoever holds it now.
    """
    handler = HANDLERS.get(job.kind)
    try:
        if handler is None:
            raise ValueError(f"no such job kind: {job.kind}")
        handler(job)
        return jobs.done(job)
    except jobs.LeaseLost:
        log.info("job %s: lease lost, left to the worker that holds it", job.id)
        return False
    except jobs.Deferred as wait:
        jobs.defer(job, due=wait.due)
        return False
    except Exception as error:
        log.warning("job %s failed: %r", job.id, error)
        # If Redis is out too, the lease runs out and the job is due again.
        with contextlib.suppress(*OUTAGES):
            jobs.retry_later(job, error=repr(error))
        return False


def run_pending(*, now: int | None = None, sweep: bool = False) -> int:
    """Run the jobs that wake-up calls announce until none is left; returns how many
    finished. With `sweep`, also every due job of every queue (`timelines repair`,
    tests of lost wake-ups); `now` (ms) runs jobs recorded to be due later."""
    finished = 0
    while True:
        slots = set(jobs.wakeups_pop(count=64))
        if sweep:
            slots |= set(jobs.due_slots(now=now))
        if not slots:
            return finished
        for slot in sorted(slots):
            while claimed := jobs.claim(slot=slot, limit=1, now=now):
                finished += sum(job_run(job) for job in claimed)


class Worker:
    """A loop that takes wake-up calls, sweeps the queues now and then, adds up the
    trending tags (`timeline.trends.refresh`) and the site's counts
    (`timeline.counts.site_sum`), and runs the jobs it leases, one at a time, until
    `stop` is set."""

    def __init__(self, *, stop: threading.Event | None = None):
        self.stop = stop or threading.Event()
        self.finished = 0
        self.listeners: ShardListeners | None = None  # a Cluster's, once idle

    def run(self) -> None:
        unhandled: set[int] = set()
        try:
            unhandled = self._loop()
        finally:
            if self.listeners is not None:
                self.listeners.close()
            if unhandled:
                # Wake-up calls taken and not acted on: announced again, for
                # another worker now rather than the next sweep.
                with contextlib.suppress(*OUTAGES):
                    jobs.wake_again(unhandled)

    def _loop(self) -> set[int]:
        """Run until `stop`; return the slots announced and not yet looked at."""
        next_sweep = next_trends = next_counts = 0.0
        revisit: set[int] = set()
        while not self.stop.is_set():
            try:
                slots = set(jobs.wakeups_pop()) | revisit
                revisit = set()
                if time.monotonic() >= next_sweep:
                    slots |= set(jobs.due_slots())
                    next_sweep = time.monotonic() + settings.JOB_SWEEP_SECONDS
                if time.monotonic() >= next_trends:
                    # Asked four times an interval, so the sum is written again
                    # soon after it is an interval old (one worker writes it).
                    next_trends = time.monotonic() + settings.TRENDS_REFRESH_SECONDS / 4
                    _trends_refresh()
                if time.monotonic() >= next_counts:
                    # As the trends: asked four times an interval, done by the one
                    # worker that claims the interval's turn (0: never, and no
                    # shorter idle wait for it).
                    quarter = settings.SITE_COUNTS_SECONDS / 4
                    next_counts = (
                        time.monotonic() + quarter if quarter > 0 else math.inf
                    )
                    _site_sum()
                ordered = sorted(slots)
                for i, slot in enumerate(ordered):
                    if self.stop.is_set():
                        return set(ordered[i:]) | revisit
                    for job in jobs.claim(slot=slot, limit=1):
                        self.finished += job_run(job)
                        revisit.add(slot)  # more may be due there
                if not slots:
                    revisit = self._idle(min(next_sweep, next_trends, next_counts))
            except OUTAGES as error:
                log.warning("fan-out worker: Redis is not answering (%r)", error)
                self.stop.wait(1.0)
        return revisit

    # The longest an idle worker waits for a wake-up call at a time: a stop (it
    # cannot interrupt the wait) comes within it.
    WAIT_MAX = 1.0

    def _wait_max(self) -> float:
        return min(self.WAIT_MAX, settings.REDIS_SOCKET_TIMEOUT / 2)

    def _idle(self, until: float) -> set[int]:
        """Wait for work until the monotonic time `until` (the next sweep, sum of
        the trends or of the site's counts), for a wake-up call, within the
        client's socket timeout: on one server with one blocking pop over every
        shard (`jobs.wakeup_wait`); on a Cluster, whose shards lie on different
        nodes, through `ShardListeners`. The slots announced meanwhile."""
        timeout = min(self._wait_max(), max(0.01, until - time.monotonic()))
        if is_cluster():
            if self.listeners is None:
                self.listeners = ShardListeners(self.stop, wait=self._wait_max())
            return self.listeners.wait(timeout)
        return set(jobs.wakeup_wait(timeout=timeout))


class ShardListeners:
    """A Cluster's idle worker waits for wake-up calls with a thread per shard, each
    in a blocking pop on its own shard (one pop cannot wait on keys of different
    slots): asking the 16 shards every 20 ms instead cost an idle worker about 5%
    of a core (docs/BENCHMARKS.md). The threads wait only while the worker is idle
    (`wait`); a call one of them takes just as the worker went busy, or that the
    worker has not used when it stops (`close`), is put back for another worker
    (`jobs.wakeup_return`). While a node does not answer, every thread pauses,
    a second and then longer, up to JOB_SWEEP_SECONDS, and one logs it (the sweep
    still finds every job)."""

    def __init__(self, stop: threading.Event, *, wait: float):
        self.stop = stop
        self.seconds = wait
        self.idle = threading.Event()
        self.lock = threading.Lock()
        self.ready = threading.Condition(self.lock)
        self.taken: dict[int, tuple[str, float]] = {}  # slot -> shard, queued
        self.quiet_until = 0.0  # monotonic: no thread asks before then
        self.pause = 1.0
        self.threads = [
            threading.Thread(
                target=self._listen, args=(shard,), name=f"wake-{shard}", daemon=True
            )
            for shard in keys.job_ready_shards()
        ]
        for thread in self.threads:
            thread.start()

    def wait(self, timeout: float) -> set[int]:
        """Wait up to `timeout` s for wake-up calls; the slots they announce."""
        with self.ready:
            if not self.taken:
                self.idle.set()
                self.ready.wait(timeout)
                self.idle.clear()
            taken, self.taken = set(self.taken), {}
        return taken

    def close(self) -> None:
        """Once `stop` is set: wait for the threads to end (within `wait` s), and
        put back the calls taken and not used."""
        for thread in self.threads:
            thread.join()
        with self.ready:
            taken, self.taken = self.taken, {}
        with contextlib.suppress(*OUTAGES):  # else the sweep finds the jobs
            for slot, (shard, queued) in taken.items():
                jobs.wakeup_return(shard, slot=slot, queued=queued)

    def _listen(self, shard: str) -> None:
        while not self.stop.is_set():
            quiet = self.quiet_until - time.monotonic()
            if quiet > 0:
                self.stop.wait(quiet)
                continue
            if not self.idle.wait(self.seconds):
                continue
            try:
                call = jobs.shard_wait(shard, timeout=self.seconds)
            except OUTAGES as error:
                self._outage(error)
                continue
            except Exception:  # a bug: said, and the thread goes on
                log.exception("fan-out worker: waiting on %s failed", shard)
                self._outage(None)
                continue
            self.pause = 1.0
            if call is not None:
                self.hand_over(shard, *call)

    def _outage(self, error: BaseException | None) -> None:
        """Pause every thread; the first to find the outage says so."""
        with self.lock:
            now = time.monotonic()
            if now < self.quiet_until:
                return  # another thread found it
            self.quiet_until = now + self.pause
            self.pause = min(2 * self.pause, max(1.0, settings.JOB_SWEEP_SECONDS))
        if error is not None:
            log.warning("fan-out worker: no wake-up calls (%r)", error)

    def hand_over(self, shard: str, slot: int, queued: float) -> None:
        """Give the worker a wake-up call taken from `shard`, or, if it is no
        longer waiting, put the call back where another worker finds it."""
        with self.ready:
            if self.idle.is_set() and not self.stop.is_set():
                self.taken[slot] = (shard, queued)
                self.ready.notify()
                return
        with contextlib.suppress(*OUTAGES):  # else the sweep finds the job
            jobs.wakeup_return(shard, slot=slot, queued=queued)


def _trends_refresh() -> None:
    """Add the trending tags up (`timeline.trends.refresh`). The sum is derived from
    counts that stay, so a failure is logged and left for the next time: it never
    keeps the worker from its jobs."""
    try:
        trends.refresh()
    except OUTAGES as error:
        # A refusal (OOM, a script error) is worth its traceback; an outage is not.
        outage = isinstance(error, redis.ConnectionError | redis.TimeoutError)
        log.warning(
            "fan-out worker: trending tags not added up (%r)",
            error,
            exc_info=not outage,
        )


def _site_sum() -> None:
    """Add the site's counts up (`timeline.counts.site_sum`), if it is this worker's
    turn. Derived from counts that stay: a failure is logged and left for the next
    turn (the claim runs out), never in the way of the jobs."""
    try:
        counts.site_sum()
    except OUTAGES as error:
        outage = isinstance(error, redis.ConnectionError | redis.TimeoutError)
        log.warning(
            "fan-out worker: site counts not added up (%r)", error, exc_info=not outage
        )


def start_thread() -> tuple[threading.Thread, threading.Event]:
    """Run a worker in a daemon thread of this process (the development server)."""
    stop = threading.Event()
    thread = threading.Thread(
        target=Worker(stop=stop).run, name="fanout-worker", daemon=True
    )
    thread.start()
    return thread, stop
