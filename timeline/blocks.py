"""Writes for blocks and mutes (issue #11): services, kept apart from
`timeline.services`, whose follow machinery they reuse.

A **block** of B by A removes the follows both ways and hides each side's statuses
from the other everywhere (home, profile, global timeline, a status's page; later
notifications, by the same sets). Its steps, each single-slot and idempotent:

1. In A's slot, under A's follow lock, one script: `blocks:{A}` gets B (the truth),
   A's follow of B ends (`following`, `pulls`), and the jobs that complete the rest
   are recorded: `block:<A>:<B>` and, when A followed B, `follow:<A>:<B>`. Then
   `follow_sync` takes A out of B's followers and B's statuses out of A's home.
2. In B's slot, under B's follow lock, the truth read again, then one script:
   `blocked_by:{B}` gets A and B's follow of A ends, with `follow:<B>:<A>`
   recorded; `follow_sync` takes A's statuses out of B's home.
3. The block job is cancelled (only if the truth is still what step 2 saw).

Follow requests between the two (`timeline.privacy`) go in the same two steps, each
side's in its own slot's script: a request either way is refused once the block is
in the owner's slot (the gate checks `blocks` and `blocked_by` there), and one filed
before goes with that side's step, its "asked to follow you" with it (the owner's
notifications are in the owner's slot). A sweep of statuses from a home (steps 1-2,
through `follow_sync`, and a mute) looks at every id the home holds
(`services.home_statuses_of`), not at the author's newest only.

A request that dies midway leaves the block job, which runs `block_sync` (both steps
again) after JOB_FOLLOW_GRACE_SECONDS. An unblock is the same walk with the truth
removed: `blocked_by` loses the entry; nobody follows anybody again.

Why fan-out needs no block check of its own: a status reaches `home:{f}` only while
`following:{f}` holds its author (`services._TIMELINE_ADD`), and each side's follow
ends in the same atomic step that records the block in that side's slot; a follow
across a block is refused atomically in the follower's slot, which holds
`blocks:{follower}` and `blocked_by:{follower}` (`services._FOLLOW_SET`). What was in
a home before is swept by steps 1-2, and pages leave out whatever raced them
(`timeline.selectors`: the viewer's sets ride in the page's first round trip).

A **mute** of B by A hides B's statuses from A's home only (and from notifications,
once there are some, by the same `mutes:{A}`): one atomic add to `mutes:{A}`, which
the fan-out's add checks in A's slot, then B's statuses in A's home are swept out,
checked again in A's slot. No job: a sweep cut short leaves statuses that every
home page leaves out anyway. An unmute backfills B's newest FOLLOW_BACKFILL
statuses, as a follow does, if A follows B.
"""

from __future__ import annotations

import time

from django.conf import settings

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, is_cluster
from timeline import jobs, keys, notifications, services
from timeline.domain import CannotBlock

BLOCKS_MAX = 10_000
MUTES_MAX = 10_000


def block_job_id(blocker_id: int, blocked_id: int) -> str:
    """The job that brings the blocked person's side in line with `blocks:{blocker}`
    (and ends the follows both ways while it holds them)."""
    return jobs.job_id("block", blocker_id, blocked_id)


# KEYS: the blocker's blocks, following, pulls, job queue, job data, user hash, follow
# requests, requested, then their notification keys (groups, rows, actors, follows).
# ARGV: the blocked uid, the block's time (us), '' to unblock or '=' to keep the
# truth as it is, the cap, the block job's id, the follow job's id, when jobs are due
# (ms), now (ms), the user hash's username and deleted fields, then `unnotify`'s
# arguments for the blocked person's follow request. Sets the truth and, while it
# holds a block, ends the blocker's follow (with the follow job that completes it)
# and any follow request between the two in the blocker's slot, with the blocked
# person's "asked to follow you", in one atomic step; records the block job unless
# keeping the truth. Returns whether the truth changed (-1: refused, the cap) and
# the block's time now (nil: no block). A blocker being deleted blocks no one new
# (as `_FOLLOW_SET`): their deletion job may have walked their blocks already.
_BLOCK_SET = LuaScript(
    jobs.ENQUEUE
    + services._LIVE
    + notifications.NOTIFY
    + """
local b, t, cap = ARGV[1], ARGV[2], tonumber(ARGV[3])
if t ~= '' and t ~= '=' and not live(KEYS[6], ARGV[8], ARGV[9]) then return {0} end
local changed = 0
if t == '' then
  changed = redis.call('ZREM', KEYS[1], b)
elseif t ~= '=' then
  if not redis.call('ZSCORE', KEYS[1], b) and redis.call('ZCARD', KEYS[1]) >= cap then
    return {-1}
  end
  changed = redis.call('ZADD', KEYS[1], 'NX', t, b)
end
local since = redis.call('ZSCORE', KEYS[1], b)
if since then
  redis.call('ZREM', KEYS[7], b)
  redis.call('ZREM', KEYS[8], b)
  unnotify({z = KEYS[9], h = KEYS[10], actors = KEYS[11], follows = KEYS[12]},
           ARGV, 10)
end
if since and redis.call('ZREM', KEYS[2], b) == 1 then
  redis.call('ZREM', KEYS[3], b)
  enqueue(KEYS[4], KEYS[5], ARGV[5], ARGV[6], ARGV[7])
end
if t ~= '=' then enqueue(KEYS[4], KEYS[5], ARGV[4], ARGV[6], ARGV[7]) end
return {changed, since}
"""
)

# KEYS: the blocked person's blocked_by, following, pulls, job queue, job data,
# follow requests, requested, then their notification keys (groups, rows, actors,
# follows). ARGV: the blocker's uid, the block's time (us) or '' (no block), the
# follow job's id, when it is due (ms), now (ms), then `unnotify`'s arguments for
# the blocker's follow request. The other side of a block, atomically in the
# blocked person's slot: the entry, the end of their follow of the blocker (with
# the follow job that completes it) and of any follow request between the two in
# this slot, with the blocker's "asked to follow you".
_BLOCKED_BY_SET = LuaScript(
    jobs.ENQUEUE
    + notifications.NOTIFY
    + """
if ARGV[2] == '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
local changed = redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('ZREM', KEYS[7], ARGV[1])
unnotify({z = KEYS[8], h = KEYS[9], actors = KEYS[10], follows = KEYS[11]}, ARGV, 6)
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('ZREM', KEYS[3], ARGV[1])
  enqueue(KEYS[4], KEYS[5], ARGV[3], ARGV[4], ARGV[5])
end
return changed
"""
)

# KEYS: the blocker's blocks, job queue, job data. ARGV: the blocked uid, the block's
# time the other side was brought in line with ('' for none), the block job's id.
# Cancels the job only while the truth is still that: a block or unblock that came
# in between keeps the job that completes it.
_BLOCK_DONE = LuaScript(
    jobs.FORGET
    + """
local since = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (since and tonumber(since) or '') ~= (tonumber(ARGV[2]) or '') then return 0 end
redis.call('ZREM', KEYS[2], ARGV[3])
forget(KEYS[3], ARGV[3])
return 1
"""
)


def _due(now: int) -> int:
    """When a job a request records is due: after the request had time to finish."""
    return now + settings.JOB_FOLLOW_GRACE_SECONDS * 1000


def _blocker_side(blocker_id: int, blocked_id: int, when: str) -> int:
    """Step 1 under the blocker's follow lock: set the truth (`when`: a time, '' or
    '='), end the blocker's follow and sweep the blocked person's statuses from
    their home. Returns whether the truth changed."""
    slot = keys.slot_of_user(blocker_id)
    follow_job = services.follow_job_id(blocker_id, blocked_id)
    with services._FollowLock(blocker_id, wait=30.0 if when == "=" else 3.0):
        now = jobs.now_ms()
        changed, *since = _BLOCK_SET(
            keys=[
                keys.blocks(blocker_id),
                keys.following(blocker_id),
                keys.pulls(blocker_id),
                *jobs.slot_keys(slot),
                account_keys.user(blocker_id),
                keys.follow_requests(blocker_id),
                keys.requested(blocker_id),
                *notifications.store_keys(blocker_id),
            ],
            args=[
                blocked_id,
                when,
                BLOCKS_MAX,
                block_job_id(blocker_id, blocked_id),
                follow_job,
                _due(now),
                now,
                *services._live_args(),
                *notifications.unnotify_args(
                    kind="follow_request", actor=blocked_id, sid=None
                ),
            ],
        )
        if int(changed) < 0:
            raise CannotBlock(
                f"You block {BLOCKS_MAX:,} people, the most one can. "
                "Unblock someone first."
            )
        if since and since[0] is not None:
            services.follow_sync(
                follower_id=blocker_id,
                followee_id=blocked_id,
                follows=None,
                then=lambda pipe: jobs.cancel_queue(pipe, slot=slot, jid=follow_job),
            )
    return int(changed)


def _blocked_side(blocker_id: int, blocked_id: int) -> float | None:
    """Step 2 under the blocked person's follow lock: their side in line with the
    truth, read here (so whichever step 2 runs last sees the last change). Returns
    the block's time it found (None: no block)."""
    slot = keys.slot_of_user(blocked_id)
    follow_job = services.follow_job_id(blocked_id, blocker_id)
    with services._FollowLock(blocked_id, wait=30.0):
        since = get_redis().zscore(keys.blocks(blocker_id), blocked_id)
        now = jobs.now_ms()
        _BLOCKED_BY_SET(
            keys=[
                keys.blocked_by(blocked_id),
                keys.following(blocked_id),
                keys.pulls(blocked_id),
                *jobs.slot_keys(slot),
                keys.follow_requests(blocked_id),
                keys.requested(blocked_id),
                *notifications.store_keys(blocked_id),
            ],
            args=[
                blocker_id,
                "" if since is None else int(since),
                follow_job,
                _due(now),
                now,
                *notifications.unnotify_args(
                    kind="follow_request", actor=blocker_id, sid=None
                ),
            ],
        )
        if since is not None:
            services.follow_sync(
                follower_id=blocked_id,
                followee_id=blocker_id,
                follows=None,
                then=lambda pipe: jobs.cancel_queue(pipe, slot=slot, jid=follow_job),
            )
    return since


def block_sync(*, blocker_id: int, blocked_id: int) -> None:
    """Bring both sides in line with `blocks:{blocker}`: the block job after a
    request that died midway, and `timelines repair`. Idempotent."""
    _blocker_side(blocker_id, blocked_id, "=")
    _blocked_side(blocker_id, blocked_id)


def _block_change(
    *, user: User, other_id: int, when: str, limit: limits.Limit | None
) -> bool:
    if user.id == other_id:
        raise CannotBlock("You cannot block yourself.")
    if limit is not None:
        limits.take(limit)
    changed = _blocker_side(user.id, other_id, when)
    since = _blocked_side(user.id, other_id)
    _BLOCK_DONE(
        keys=[keys.blocks(user.id), *jobs.slot_keys(keys.slot_of_user(user.id))],
        args=[
            other_id,
            "" if since is None else int(since),
            block_job_id(user.id, other_id),
        ],
    )
    return bool(changed)


def block_create(
    *, blocker: User, blocked_id: int, limit: limits.Limit | None = None
) -> bool:
    """Block a user: the follows both ways end, and each side's statuses leave the
    other's home; False if already blocked. With `limit` (the blocker's follow
    budget, `accounts.limits.follow`) it is taken first, or TooManyAttempts."""
    return _block_change(
        user=blocker,
        other_id=blocked_id,
        when=str(time.time_ns() // 1000),
        limit=limit,
    )


def block_delete(
    *, blocker: User, blocked_id: int, limit: limits.Limit | None = None
) -> bool:
    """Unblock a user (nobody follows anybody again); False if not blocked."""
    return _block_change(user=blocker, other_id=blocked_id, when="", limit=limit)


# KEYS: the user's mutes, user hash, list_exclusive, on one server `muters`. ARGV: the
# muted uid, the mute's time (us) or '' to unmute, the cap, the user hash's username
# and deleted fields, the user's uid. Returns whether it changed (-1: refused, the
# cap). A user being deleted mutes no one new. On one server the user's bit in
# `muters` says, in the same step, whether they have home skips now: mute anyone, or
# have anyone on an exclusive list (`timeline.lists`; the fan-out trusts a clear bit).
_MUTE_SET = LuaScript(
    services._LIVE
    + """
local changed
if ARGV[2] == '' then
  changed = redis.call('ZREM', KEYS[1], ARGV[1])
else
  if not live(KEYS[2], ARGV[4], ARGV[5]) then return 0 end
  if not redis.call('ZSCORE', KEYS[1], ARGV[1])
      and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
    return -1
  end
  changed = redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
end
if KEYS[4] then
  local skips = redis.call('EXISTS', KEYS[1], KEYS[3]) > 0 and 1 or 0
  redis.call('SETBIT', KEYS[4], ARGV[6], skips)
end
return changed
"""
)


def _mute_set(user: User, other_id: int, when: str, limit: limits.Limit | None):
    if user.id == other_id:
        raise CannotBlock("You cannot mute yourself.")
    if limit is not None:
        limits.take(limit)
    home = keys.home(user.id)
    cluster = is_cluster()

    def mute(pipe) -> None:
        _MUTE_SET.queue(
            pipe,
            keys=[
                keys.mutes(user.id),
                account_keys.user(user.id),
                keys.list_exclusive(user.id),
                *([] if cluster else [keys.muters()]),
            ],
            args=[other_id, when, MUTES_MAX, *services._live_args(), user.id],
        )
        if when:
            # Read after the mute holds, in its slot: no add of theirs reaches the
            # home from then on, so what it holds now is all a sweep looks at.
            pipe.zrange(home, 0, -1)

    changed, *held = pipeline_run(mute)
    if int(changed) < 0:
        raise CannotBlock(
            f"You mute {MUTES_MAX:,} people, the most one can. Unmute someone first."
        )
    return int(changed), held[0] if held else []


def mute_create(
    *, user: User, muted_id: int, limit: limits.Limit | None = None
) -> bool:
    """Mute a user: their statuses leave the home and no new one reaches it (they
    stay on their profile and the global timeline); False if already muted."""
    changed, held = _mute_set(user, muted_id, str(time.time_ns() // 1000), limit)
    theirs = services.home_statuses_of(held=held, author_id=muted_id)
    if theirs:
        services.HOME_DROP_KEPT_OUT(
            keys=[keys.home(user.id), keys.mutes(user.id)], args=[muted_id, *theirs]
        )
    return bool(changed)


def mute_delete(
    *, user: User, muted_id: int, limit: limits.Limit | None = None
) -> bool:
    """Unmute a user: if followed, their newest statuses come back to the home (as a
    follow backfills them) and new ones reach it; False if not muted."""
    changed, _ = _mute_set(user, muted_id, "", limit)
    newest = get_redis().zrevrange(
        keys.posts(muted_id), 0, settings.FOLLOW_BACKFILL - 1
    )
    if newest:
        # Checked in the reader's slot: only while they follow and do not mute.
        pipeline_run(
            lambda pipe: services._timeline_add(
                pipe,
                readers=[user.id],
                author_id=muted_id,
                sids=[int(sid) for sid in newest],
            )
        )
    return bool(changed)
