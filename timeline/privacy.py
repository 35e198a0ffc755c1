"""Private accounts (issue #11): follow requests, their approval, and keeping a
private account's statuses to the followers it approved.

**Where the truth lives.** A user's privacy is a field of their hash
(`accounts.domain.User.PRIVATE_FIELD`), in their slot. A follow of anyone passes one
gate, atomically in the followee's slot (`services._FOLLOWER_ADD`, run by every
`follow_sync`): a public account, or a private one that already has the follower or
is approving them, admits them into `followers:{owner}`; a private one files a
follow request in `follow_requests:{owner}` (the truth of a request) instead, and
the follow ends on the follower's side, where `requested:{follower}` records the
other side. So a user turning private while someone follows them is one order or
the other in the owner's slot: the follower was admitted before (and stays, as
every follower does when an account turns private), or their follow becomes a
request. Nothing of a private account reaches a home before the gate admits: the
fan-out walks `followers:{owner}`, a pulled outbox is merged only once admitted,
and a home rebuild skips a private followee whose followers lack the reader.

**Approving** R's request to O, each step idempotent:

1. In O's slot, one script: the request leaves `follow_requests:{O}` and the job
   `approve:<O>:<R>` is recorded. While it is queued, O's gate admits R.
2. Under R's follow lock, R's follow is made as any follow is (`following:{R}`,
   the truth, with its follow job; then `follow_sync`: the gate admits R, the
   backfill comes, `requested:{R}` loses O), and the approval job is cancelled.

A request that dies after step 1 leaves the job, which does step 2 after
JOB_FOLLOW_GRACE_SECONDS. A cancel that comes after step 1 is too late: the
approval stands (R can unfollow). **Denying** and **cancelling** remove the truth,
then the other side (a crash between leaves a `requested` entry that no page shows:
pages read the truth; `timelines repair` removes it).

**Visibility.** Pages ask the owner's slot whether the viewer is among
`followers:{owner}` (the admitted ones): a profile of a private account shows a
non-follower its counts and a lock line, no statuses; its followers and following
lists are hidden the same way (who follows a protected account is the owner's to
show, as on Twitter); a status's page answers 404. The global timeline never
holds a private author's statuses: the publish step says, from the author's own
hash, whether the author is private, and the request adds the status to the global
timeline only when not (taking it back when the account turned private meanwhile);
the post job checks again. When an account turns private, the job `private:<uid>`
(due at once, so the public pages lose them within a worker's wake-up, and again
JOB_FOLLOW_GRACE_SECONDS later, when any post that raced the switch has finished
its own writes) removes its statuses from the global timeline's partitions. Tag
pages, when they come, are to apply the same rule as the global timeline: nothing
of a private author is added to one, and the same job sweeps them. Turning public
again: new statuses reach the global timeline; older ones are not added back (the
global timeline is everyone's newest, and they are not new), and pending requests
stay for the owner to approve or deny (they asked this owner, who chose whom to let
in; now anyone, them included, may simply follow, which also ends their request
and its notification, in the gate's step).
"""

from __future__ import annotations

import time

from django.conf import settings

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis
from timeline import jobs, keys, notifications, services, social
from timeline.domain import Blocked


def privacy_job_id(uid: int) -> str:
    """The job that takes a newly private account's statuses out of the global
    timeline (`timeline.fanout.run_private`)."""
    return jobs.job_id("private", uid)


# KEYS: the user hash, job queue, job data (the user's slot). ARGV: the private
# field, when it turned private (unix seconds) or '' to make it public, the username
# and deleted fields, the privacy job's id, when it is due (ms), now (ms). Sets the
# account's privacy; a turn to private records the job that sweeps the global
# timeline, due at once. Returns whether it changed (0 for no such live user).
_PRIVACY_SET = LuaScript(
    jobs.ENQUEUE
    + services._LIVE
    + """
if not live(KEYS[1], ARGV[3], ARGV[4]) then return 0 end
if ARGV[2] == '' then return redis.call('HDEL', KEYS[1], ARGV[1]) end
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
enqueue(KEYS[2], KEYS[3], ARGV[5], ARGV[6], ARGV[7])
-- A job still waiting (an earlier switch's second sweep) is due at once again;
-- one a worker holds is queued again (#q), which its wait honours (`jobs._DEFER`).
if redis.call('HEXISTS', KEYS[3], ARGV[5] .. '#t') == 0 then
  redis.call('ZADD', KEYS[2], 'LT', ARGV[6], ARGV[5])
end
return 1
"""
)


def _due(now: int) -> int:
    """When a job a request records is due: after the request had time to finish."""
    return now + settings.JOB_FOLLOW_GRACE_SECONDS * 1000


def account_privacy_set(*, user: User, private: bool) -> bool:
    """Make the user's account private (only followers they approve see their
    statuses from now on; those who follow them already stay) or public again;
    False if it already was."""
    slot = keys.slot_of_user(user.id)

    def change(pipe) -> None:
        now = jobs.now_ms()
        _PRIVACY_SET.queue(
            pipe,
            keys=[account_keys.user(user.id), *jobs.slot_keys(slot)],
            args=[
                User.PRIVATE_FIELD,
                str(int(time.time())) if private else "",
                *services._live_args(),
                privacy_job_id(user.id),
                now,  # at once; it runs again after the grace (`private_job_run`)
                now,
            ],
        )
        pipe.barrier()
        jobs.wake_queue(pipe, slot=slot)

    changed, *_ = pipeline_run(change)
    return bool(changed)


def _tags_sweep(uid: int) -> None:
    """Take a private account's statuses out of the timelines of their tags and
    their trends: every status is read (a quiet tag keeps old ones), 500 a round
    trip."""
    sids = [int(s) for s in get_redis().zrange(keys.posts(uid), 0, -1)]
    for start in range(0, len(sids), 500):
        found = services.statuses_read(sids[start : start + 500])
        pipeline_run(
            lambda pipe, found=found: services.tags_remove_queue(
                pipe, statuses=found, final=False
            )
        )


def private_sweep(*, uid: int) -> int:
    """Take a private account's statuses out of the global timeline and their
    tags' timelines, and others' reposts of them out of every home; returns how
    many were in the global timeline. Nothing when the account is public (again)
    or gone.

    Only statuses at least as new as the oldest the global timeline keeps can be
    in it, so only those of the author's are read (one read; idempotent, so a
    sweep cut short is simply run again)."""
    if not get_redis().hexists(account_keys.user(uid), User.PRIVATE_FIELD):
        return 0
    _tags_sweep(uid)
    # Others' reposts of them go too (`timeline.social`): nobody reposts a private
    # account's statuses.
    social.reposts_remove(author_id=uid)
    oldest = pipeline_run(
        lambda pipe: [
            pipe.zrange(partition, 0, 0, withscores=True)
            for partition in keys.global_partitions()
        ],
        confirm=False,
    )
    floor = min((int(rows[0][1]) for rows in oldest if rows), default=None)
    sids = (
        []
        if floor is None
        else [int(s) for s in get_redis().zrangebyscore(keys.posts(uid), floor, "+inf")]
    )
    removed = 0
    for start in range(0, len(sids), 1000):
        replies = pipeline_run(
            lambda pipe, part=sids[start : start + 1000]: services.global_remove_queue(
                pipe, sids=part
            )
        )
        removed += sum(replies)
    return removed


def private_job_run(job: jobs.Job) -> None:
    """Run the `private:<uid>` job (`privacy_job_id`), queued due at once by the
    switch, so the public pages lose the account's statuses within a worker's
    wake-up: `private_sweep`. A first run within JOB_FOLLOW_GRACE_SECONDS of the
    switch waits (`jobs.Deferred`, its cursor marking the first sweep done) to
    sweep again after them: a post or a post job that read the account as public
    just before the switch may add to the global timeline or a tag after the
    first sweep (each checks the hash again first, so only one stalled past its
    check can)."""
    (uid,) = job.args
    since = get_redis().hget(account_keys.user(uid), User.PRIVATE_FIELD)
    if since is None:
        return  # public again, or gone
    private_sweep(uid=uid)
    # The switch's second, as recorded: the grace runs from its start.
    again = (int(since) + settings.JOB_FOLLOW_GRACE_SECONDS) * 1000
    if job.cursor == "0" and again > jobs.now_ms():
        jobs.progress(job, cursor="1")
        raise jobs.Deferred(again)


# KEYS: the owner's follow requests, job queue, job data. ARGV: the requester, the
# approval job's id, when it is due (ms), now (ms). Step 1 of an approval: the
# request goes and the job that completes it is recorded (while it is queued the
# owner's gate admits the requester). Returns 0 when there was no such request.
_REQUEST_APPROVE = LuaScript(
    jobs.ENQUEUE
    + """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
enqueue(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[4])
return 1
"""
)


def approval_complete(*, owner_id: int, requester_id: int, cancel: bool) -> bool:
    """Step 2 of an approval: the requester follows the owner (their newest
    statuses are backfilled into the requester's home) unless a block came in
    between; with `cancel`, the approval job goes once done. Idempotent: the
    approval job runs it after a request that died midway. Returns whether the
    requester follows the owner now."""
    owner_slot = keys.slot_of_user(owner_id)
    slot = keys.slot_of_user(requester_id)
    approval = services.approval_job_id(owner_id, requester_id)
    follow_job = services.follow_job_id(requester_id, owner_id)

    def done(pipe) -> None:
        pipe.zrem(keys.requested(requester_id), owner_id)
        # "Approved": told in the requester's slot only while the follow stands
        # there (this runs after a refused follow too), before the job that would
        # tell it again is done.
        notifications.notify_queue(
            pipe,
            recipient=requester_id,
            kind="follow_approved",
            actor=owner_id,
            sid=None,
            at_ms=jobs.now_ms(),
            if_following=owner_id,
        )
        jobs.cancel_queue(pipe, slot=slot, jid=follow_job)
        if cancel:
            pipe.barrier()  # the gate needs the job until the follow is in
            jobs.cancel_queue(pipe, slot=owner_slot, jid=approval)

    with services._FollowLock(requester_id, wait=30.0):
        try:
            _, since = services._follow_set(
                requester_id, owner_id, time.time_ns() // 1000
            )
        except Blocked:
            # A block came after the request: nobody follows anybody.
            pipeline_run(done)
            return False
        follows = services.follow_sync(
            follower_id=requester_id, followee_id=owner_id, follows=since, then=done
        )
    return follows


def follow_request_approve(
    *, owner: User, requester_id: int, limit: limits.Limit | None = None
) -> bool:
    """Approve a follow request: the requester follows the owner from now on (and
    sees their statuses, the newest backfilled into their home). False if there
    was no such request. With `limit` (the owner's follow budget) it is taken
    first, or refused with TooManyAttempts."""
    if limit is not None:
        limits.take(limit)
    slot = keys.slot_of_user(owner.id)

    def approve(pipe) -> None:
        now = jobs.now_ms()
        _REQUEST_APPROVE.queue(
            pipe,
            keys=[keys.follow_requests(owner.id), *jobs.slot_keys(slot)],
            args=[
                requester_id,
                services.approval_job_id(owner.id, requester_id),
                _due(now),
                now,
            ],
        )
        _request_unnotify_queue(pipe, owner.id, requester_id)

    approved, *_ = pipeline_run(approve)
    if not approved:
        return False
    approval_complete(owner_id=owner.id, requester_id=requester_id, cancel=True)
    return True


def _request_unnotify_queue(pipe, owner_id: int, requester_id: int) -> None:
    """Queue the end of the owner's "asked to follow you" for this requester: it is
    about a pending request, so it goes with it (approved, denied or cancelled;
    a block and a follow the gate admits end it in their own scripts)."""
    notifications.unnotify_queue(
        pipe,
        recipient=owner_id,
        kind="follow_request",
        actor=requester_id,
        sid=None,
    )


def _request_drop(owner_id: int, requester_id: int) -> bool:
    """The request goes: the truth (the owner's slot), then the requester's side."""

    def drop(pipe) -> None:
        pipe.zrem(keys.follow_requests(owner_id), requester_id)
        _request_unnotify_queue(pipe, owner_id, requester_id)
        pipe.barrier()
        pipe.zrem(keys.requested(requester_id), owner_id)

    removed, *_ = pipeline_run(drop)
    return bool(removed)


def follow_request_deny(*, owner: User, requester_id: int) -> bool:
    """Deny a follow request (the requester is not told); False if there was none."""
    return _request_drop(owner.id, requester_id)


def follow_request_cancel(
    *, requester: User, owner_id: int, limit: limits.Limit | None = None
) -> bool:
    """Cancel one's own follow request; False if there was none (an approval that
    began first stands: the requester follows, and may unfollow). With `limit`
    (the requester's follow budget) it is taken first."""
    if limit is not None:
        limits.take(limit)
    with services._FollowLock(requester.id):
        return _request_drop(owner_id, requester.id)
