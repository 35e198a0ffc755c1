"""Likes, reposts and replies (issue #12): services, kept apart from
`timeline.services`, whose post and delete machinery they reuse.

Each relation lives in the status's own Cluster slot (`likes:{status:<sid>}`,
`reposts:{status:<sid>}`, `replies:{status:<sid>}` share the slot of `status:<sid>`),
and its count is a field of the status hash, changed in the same script as the
zset (`_COUNTED_ADD`, `_COUNTED_REMOVE`), and only while the hash exists: so a
count equals its zset's size under any concurrency, and a page reads counts with
the status itself.

- **A like** is two single-slot steps: the liker's own record first
  (`liked:{<uid>}`, which only its owner sees, each entry listed while its like
  stands: `selectors.favourites_window`; the account's deletion walks it), then the
  status's side, which queues the like's job (`like:<liker>:<sid>`) in the
  status's slot in the same script. A crash between leaves an entry in `liked`
  that points at no like (undone by nothing, harmful to nothing); the retry
  completes it. The author's "liked your status" is in the author's slot: the
  request tells them, and the job, due JOB_FOLLOW_GRACE_SECONDS later, tells them
  again (idempotent), so a request cut short after the like still tells them; a
  request that finished takes its job back (`jobs.cancel_unless_again_queue`:
  unless another change or a worker needs its run), so a like costs no worker
  anything. An unlike goes the other way
  round: the status's side first, queuing the same job, then takes the
  notification back itself, then the job; each telling checks afterwards that
  the like still stands (`like_tell`), so a late one never outlives the unlike it
  raced, and the unlike checks afterwards that none stands again, so its late
  untelling (a request stalled past the grace) never outlives a newer like.
- **A repost** is a status of the reposter's (`services.status_create` with
  `repost_of`): it reaches homes through the ordinary fan-out, and is linked to the
  original in `reposts:{status:<original>}` (reposter -> the repost's id) by the
  request and again by its fan-out job (`link_posted`): idempotent, so a crash
  between the two still links it. A second repost by the same person, or one of an
  original deleted meanwhile, is removed by whichever finds it. An undo deletes
  the repost status. A private author's statuses cannot be reposted (Mastodon).
- **A reply** names its parent in its hash (`reply_to`, `reply_uid`, `thread`); the
  parent's `replies` zset and count are written by the request and again by the
  fan-out job. Its fan-out follows the reply rule (`services._TIMELINE_ADD`).
- **Deletion** of a status queues `unlink:<author>:<sid>:<parent>:<original>`,
  then the uids it mentioned (`status_unlink`): its link in the parent's replies
  and in the original's reposts go, the notifications it caused, each liker's
  record of it, and every repost of it (each removed as its own deletion). Its
  replies stay, shown as replies to a deleted status; its quotes stay, showing it
  is unavailable (its `quotes` zset goes). A quote's job is
  `unlinkq:<author>:<sid>:<parent>:0:<quoted>:<quoted author>` then the uids: its
  link in the quoted status's `quotes` goes too, and its "quoted your post".
- **A quote** (`timeline.quotes`) is linked to the status it quotes in
  `quotes:{status:<quoted>}` by the request and again by its post job
  (`link_posted`), as a reply to its parent.

Every refusal to see a status (a block either way, a private author who has not
approved the viewer) refuses acting on it too (`status_target`).
"""

from __future__ import annotations

import secrets
import time

from django.conf import settings

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, slot_of
from timeline import direct as direct_messages
from timeline import edits, jobs, keys, notifications, services
from timeline.domain import (
    MAX_STATUS_ID,
    Forbidden,
    InvalidStatus,
    NotFound,
    Poll,
    Quote,
    Status,
)

# KEYS: a status hash, one of its zsets, the job queue and data of the status's slot
# (same slot). ARGV: member, score, the count field, a job's id ('' for none), now
# (ms), when the job is due (ms), the job's owner (a request's nonce). Adds the
# member while the status exists, counting it once, and queues the job when it
# added it (a like's notification: `like_job_run`), in the same step. Returns 1
# when added, 0 when it was there, -1 when the status is gone.
_COUNTED_ADD = LuaScript(
    jobs.ENQUEUE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[3], 1)
  if ARGV[4] ~= '' then
    enqueue(KEYS[3], KEYS[4], ARGV[4], ARGV[6], ARGV[5], ARGV[7])
  end
  return 1
end
return 0
"""
)

# KEYS: a status hash, one of its zsets, the job queue and data of the status's slot.
# ARGV: member, the count field, the score the member must have ('' for any), a
# job's id ('' for none), now (ms), when the job is due (ms), the job's owner (a
# request's nonce, `jobs.cancel_unless_again_queue`). Removes the member, uncounting
# it while the status exists, and queues the job. Returns 1 when removed.
_COUNTED_REMOVE = LuaScript(
    jobs.ENQUEUE
    + """
if ARGV[3] ~= '' then
  local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if not score or tonumber(score) ~= tonumber(ARGV[3]) then return 0 end
end
-- The job is queued even when there is nothing to remove: the caller's next steps
-- (an unlike's) run all the same, and a like that lands between them queues the
-- job again, so that its request does not take it back (its run is owed).
if ARGV[4] ~= '' then enqueue(KEYS[3], KEYS[4], ARGV[4], ARGV[6], ARGV[5], ARGV[7]) end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], -1)
end
return 1
"""
)


# KEYS: the quoted status's hash and its quotes (same slot). ARGV: the quote's
# member, its score, QUOTES_MAX, the count field. Adds the quote while the quoted
# status stands, counting it once; returns 1 when added, 0 when it was there, -1
# when the quoted status is gone, -2 when it has QUOTES_MAX quotes already.
_QUOTE_ADD = LuaScript(
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -2 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[1], ARGV[4], 1)
return 1
"""
)

# How many quotes of one status are kept (`quotes:{status:<sid>}`): past it, a
# new quote is refused with a message.
QUOTES_MAX = 10_000


class QuotesFull(InvalidStatus):
    """The quoted status has QUOTES_MAX quotes: the new one was taken back."""


def reply_member(sid: int, author_id: int) -> str:
    """A reply's member in its parent's `replies` zset: its id and its author's."""
    return f"{sid}:{author_id}"


def _valid(sid: int) -> bool:
    return 0 < sid < MAX_STATUS_ID


def original_read(sid: int) -> Status:
    """The status (a repost's original), whoever may see it; NotFound when it does
    not exist."""
    if not _valid(sid):
        raise NotFound(sid)
    r = get_redis()
    found = Status.from_fields(sid, r.hmget(keys.status(sid), Status.IMMUTABLE))
    if found is not None and found.repost_of is not None:
        sid = found.repost_of
        found = Status.from_fields(sid, r.hmget(keys.status(sid), Status.IMMUTABLE))
    if found is None:
        raise NotFound(sid)
    return found


def status_target(*, user: User, sid: int) -> Status:
    """The status a like, repost or reply by `user` acts on (a repost's original),
    or NotFound when it does not exist or `user` may not see it (a block either
    way, a private author who has not approved them, unless `user` is in a direct
    message's audience; another's direct message)."""
    found = original_read(sid)
    if found.author_id == user.id:
        return found
    if not found.visible_to(user.id):
        raise NotFound(sid)  # a direct message for others
    author = found.author_id

    def check(pipe) -> None:
        pipe.zscore(keys.blocks(user.id), author)
        pipe.zscore(keys.blocked_by(user.id), author)
        pipe.hexists(account_keys.user(author), User.PRIVATE_FIELD)
        pipe.zscore(keys.followers(author), user.id)

    blocks, blocked_by, private, admitted = pipeline_run(check, confirm=False)
    if blocks is not None or blocked_by is not None:
        raise NotFound(sid)
    # A direct message is for its audience whoever they follow: its author chose
    # them (`timeline.direct`).
    if private and admitted is None and not found.direct:
        raise NotFound(sid)
    return found


def _status_slot(sid: int) -> int:
    """The Cluster slot of status `sid`'s keys (`status:<sid>`, and the zsets tagged
    `{status:<sid>}`): its jobs are queued there, in the same step as its change."""
    return slot_of(keys.status(sid))


def _counted_add(
    sid: int,
    zset: str,
    member: int | str,
    score: int,
    field: str,
    *,
    job: str | None = None,
    owner: str = "",
) -> int:
    """Add a member to one of the status's zsets, counted (`_COUNTED_ADD`); with
    `job`, queue that job in the status's slot if it was added (`_job_due`)."""
    slot = _status_slot(sid)
    now = jobs.now_ms()
    return _COUNTED_ADD(
        keys=[keys.status(sid), zset, *jobs.slot_keys(slot)],
        args=[member, score, field, job or "", now, _job_due(now), owner],
    )


def _counted_remove_queue(
    pipe,
    sid: int,
    zset: str,
    member: int | str,
    field: str,
    score: int | None = None,
    *,
    job: str | None = None,
    owner: str = "",
) -> None:
    """Queue the counted removal of a member (`_COUNTED_REMOVE`); with `job`, that
    job is queued in the status's slot, removed or not (`_job_due`)."""
    now = jobs.now_ms()
    _COUNTED_REMOVE.queue(
        pipe,
        keys=[keys.status(sid), zset, *jobs.slot_keys(_status_slot(sid))],
        args=[
            member,
            field,
            "" if score is None else score,
            job or "",
            now,
            _job_due(now),
            owner,
        ],
    )


def _job_due(now: int) -> int:
    """When a like's or an unlike's job is due: after its request had time to do
    the job's work itself and take the job back (`jobs.cancel_unless_again_queue`),
    as a follow's request does. Only a request cut short leaves it to a worker:
    each like cost a worker's job before (docs/BENCHMARKS.md)."""
    return now + settings.JOB_FOLLOW_GRACE_SECONDS * 1000


def like_job_id(liker: int, sid: int) -> str:
    """The job that brings the author's notification in line with a like or an
    unlike (`like_job_run`), queued in the status's slot with the change."""
    return jobs.job_id("like", liker, sid)


def status_like(*, user: User, sid: int, limit: limits.Limit | None = None) -> bool:
    """Like a status (a repost's original); False if already liked. NotFound when
    it is gone or the user may not see it; with `limit` (`limits.like`), taken
    first or refused with TooManyAttempts. The author is told at once and again by
    the like's job, queued with the like: a request cut short still tells them."""
    if limit is not None:
        limits.take(limit)
    target = status_target(user=user, sid=sid)
    now = time.time_ns() // 1000
    # The liker's record first: alone it shows nothing (the account's deletion walks
    # `liked`, and its owner's list shows an entry only while its like stands), so a
    # crash here leaves nothing wrong in sight.
    get_redis().zadd(keys.liked(user.id), {target.id: now}, nx=True)
    added = _counted_add(
        target.id,
        keys.likes(target.id),
        user.id,
        now,
        "likes",
        job=like_job_id(user.id, target.id),
        owner=(owner := secrets.token_hex(8)),
    )
    if added < 0:
        get_redis().zrem(keys.liked(user.id), target.id)
        raise NotFound(target.id)
    if added == 1:
        like_tell(
            liker=user.id,
            sid=target.id,
            author=target.author_id,
            at_ms=now // 1000,
            conversation=target.conversation_id,
            done=owner,
        )
    return added == 1


# How often a telling that found its like (or repost) undone, or an untelling that
# found one again, turns round. Past it the notification is left as the last turn
# made it, which is wrong only when the like flipped that many times between
# consecutive round trips of one chain: the next change tells or untells again.
RETELLS = 3


def like_tell(
    *,
    liker: int,
    sid: int,
    author: int,
    at_ms: int,
    conversation: int,
    done: str = "",
    again: int = RETELLS,
) -> None:
    """Tell the author of status `sid` that `liker` liked it (idempotent), then
    check that the like still stands: an unlike or a deletion that came between
    the two slots' steps takes the notification back (theirs may have run first).
    With `done` (the like's request: its nonce), the like's job is taken back with
    that check, if that request queued it anew and nothing since needs its run
    (`jobs.cancel_unless_again_queue`). `again`: how many more times a telling and
    an untelling may answer each other's check (`RETELLS`). `conversation`: the
    status's (`Status.conversation_id`: the author may have muted it)."""

    def tell(pipe) -> None:
        notifications.notify_queue(
            pipe,
            recipient=author,
            kind="like",
            actor=liker,
            sid=sid,
            at_ms=at_ms,
            conversation=conversation,
        )
        pipe.barrier()
        pipe.zscore(keys.likes(sid), liker)
        pipe.exists(keys.status(sid))
        if done:
            jobs.cancel_unless_again_queue(
                pipe, slot=_status_slot(sid), jid=like_job_id(liker, sid), owner=done
            )

    _, standing, exists, *_ = pipeline_run(tell)
    if standing is None or not exists:
        _like_untell(
            liker=liker,
            sid=sid,
            author=author,
            conversation=conversation,
            again=again - 1,
        )


def _like_untell(
    *, liker: int, sid: int, author: int, conversation: int, again: int = RETELLS
) -> None:
    """Take the author's notification of a like back, then check that no like
    stands (again): one made since may have told them before this landed, its
    request and job both over (this one stalled past the grace), so it is told
    again (`like_tell`, which checks in turn)."""

    def untell(pipe) -> None:
        notifications.unnotify_queue(
            pipe, recipient=author, kind="like", actor=liker, sid=sid
        )
        pipe.barrier()
        pipe.zscore(keys.likes(sid), liker)
        pipe.exists(keys.status(sid))

    _, liked_at, exists = pipeline_run(untell)
    if liked_at is not None and exists and again > 0:
        like_tell(
            liker=liker,
            sid=sid,
            author=author,
            at_ms=int(liked_at) // 1000,
            conversation=conversation,
            again=again,
        )


def like_job_run(job: jobs.Job) -> None:
    """Run a `like` job (`like_job_id`): the status's author is told of the like
    while it stands, and untold once it is undone (an unlike queues the job too, so
    the last run reads the last change). Nothing for a status gone: its unlink job
    forgets its notifications. Blocks, mutes and a deleted author are the
    notification's own checks, in the author's slot."""
    liker, sid = job.args
    row, liked_at = pipeline_run(
        lambda pipe: [
            pipe.hmget(keys.status(sid), Status.IMMUTABLE),
            pipe.zscore(keys.likes(sid), liker),
        ],
        confirm=False,
    )
    status = Status.from_fields(sid, row)
    if status is None:
        return
    told = {
        "liker": liker,
        "sid": sid,
        "author": status.author_id,
        "conversation": status.conversation_id,
    }
    if liked_at is None:
        _like_untell(**told)
    else:
        like_tell(**told, at_ms=int(liked_at) // 1000)


def status_unlike(*, user: User, sid: int, limit: limits.Limit | None = None) -> bool:
    """Undo a like (of a repost's original); False if there was none."""
    if limit is not None:
        limits.take(limit)
    target = _original_id(sid)

    found = Status.from_fields(
        target, get_redis().hmget(keys.status(target), Status.IMMUTABLE)
    )
    author = found.author_id if found is not None else None
    owner = secrets.token_hex(8)

    def unlike(pipe) -> None:
        # The like's job again, with the undo: it takes back a notification of the
        # like that lands after this one's (`like_tell` checks too).
        _counted_remove_queue(
            pipe,
            target,
            keys.likes(target),
            user.id,
            "likes",
            job=like_job_id(user.id, target),
            owner=owner,
        )
        pipe.barrier()
        pipe.zrem(keys.liked(user.id), target)
        if author is not None:
            # The like leaves the author's notifications with it.
            notifications.unnotify_queue(
                pipe, recipient=int(author), kind="like", actor=user.id, sid=target
            )
        pipe.barrier()
        # Done: the job is taken back, unless a like or a worker needs its run;
        # and a like that stands after the notification went is told again.
        jobs.cancel_unless_again_queue(
            pipe,
            slot=_status_slot(target),
            jid=like_job_id(user.id, target),
            owner=owner,
        )
        pipe.zscore(keys.likes(target), user.id)

    removed, *_, liked_at = pipeline_run(unlike)
    if liked_at is not None and found is not None:
        # A like came after this unlike's first step and told the author before
        # its second took "the" notification back: this request may have stalled
        # past the grace, when the job it queued has run already and the like took
        # back its own, so nobody else would tell them again.
        like_tell(
            liker=user.id,
            sid=target,
            author=found.author_id,
            at_ms=int(liked_at) // 1000,
            conversation=found.conversation_id,
        )
    return bool(removed)


def _original_id(sid: int) -> int:
    """The id an undo acts on: a repost's original, else the id itself (also for a
    status gone: undoing what is left of it is allowed)."""
    if not _valid(sid):
        raise NotFound(sid)
    original = get_redis().hget(keys.status(sid), "repost_of")
    return int(original) if original else sid


def status_repost(
    *, user: User, sid: int, limit: limits.Limit | None = None
) -> Status | None:
    """Repost a status (a repost's original): a new status of the user's that their
    followers' homes get; None if already reposted. Forbidden for a private
    author's status; NotFound when it is gone or hidden from the user."""
    if limit is not None:
        limits.take(limit)
    original = status_target(user=user, sid=sid)
    if original.direct:
        raise Forbidden("A direct message cannot be reposted.")
    if get_redis().hexists(account_keys.user(original.author_id), User.PRIVATE_FIELD):
        raise Forbidden("This account is private: its statuses cannot be reposted.")
    if get_redis().zscore(keys.reposts(original.id), user.id) is not None:
        return None
    repost = services.status_create(author=user, text=original.text, repost_of=original)
    if not link_posted(status=repost):
        return None
    edits.repost_copy_check(original=original)
    return repost


def status_unrepost(*, user: User, sid: int, limit: limits.Limit | None = None) -> bool:
    """Undo the user's repost of a status (or of a repost's original): the repost
    status is deleted; False if there was none."""
    if limit is not None:
        limits.take(limit)
    original = _original_id(sid)
    r = get_redis()
    repost_id = r.zscore(keys.reposts(original), user.id)
    if repost_id is None:
        return False
    repost_id = int(repost_id)
    row = r.hmget(keys.status(repost_id), Status.IMMUTABLE)
    repost = Status.from_fields(repost_id, row)
    if repost is not None:
        services.status_remove(author_id=user.id, status=repost)
    told = repost.repost_uid if repost is not None else None

    def finish(pipe) -> None:
        if told:
            # Before the link goes: while it stands no second repost is made, so
            # none can be told before this lands (but one whose undo stalled here).
            notifications.unnotify_queue(
                pipe, recipient=told, kind="repost", actor=user.id, sid=original
            )
            pipe.barrier()
        # At once for the pages; the repost's unlink job does it again if this is
        # lost. Then whether a newer repost stands.
        _counted_remove_queue(
            pipe, original, keys.reposts(original), user.id, "reposts", repost_id
        )
        pipe.zscore(keys.reposts(original), user.id)

    *_, newer = pipeline_run(finish)
    if told:
        _repost_tell_again(original=original, actor=user.id, author=told, newer=newer)
    return True


def _repost_tell_again(
    *, original: int, actor: int, author: int, newer: float | None
) -> None:
    """After taking back `actor`'s "reposted your status" from `author` (an undo,
    a deleted repost's unlink job): `newer` is the repost of `original` that
    `actor` has now (its id in the original's `reposts`, read after the
    untelling). One made since told the author before "the" notification went,
    and its request and job may both be over (the undo stalled, the unlink job
    ran late), so it is told again. Then, as `like_tell`, the telling checks that
    what it told of still stands: an undo or a delete removes the status's hash
    before it takes its notification back, and the original's unlink job
    forgets its notifications after its hash went, so a telling that finds both
    hashes came before any such undo's; one that does not takes itself back and
    looks again (`RETELLS` times at most)."""
    for _ in range(RETELLS):
        if newer is None:
            return
        sid = int(newer)
        row = get_redis().hmget(keys.status(sid), Status.IMMUTABLE)
        status = Status.from_fields(sid, row)
        if status is None or status.repost_of != original:
            return
        status_notify(status=status)
        standing, exists = pipeline_run(
            lambda pipe, sid=sid: [
                pipe.exists(keys.status(sid)),
                pipe.exists(keys.status(original)),
            ],
            confirm=False,
        )
        if standing and exists:
            return

        def untell(pipe) -> None:
            notifications.unnotify_queue(
                pipe, recipient=author, kind="repost", actor=actor, sid=original
            )
            pipe.barrier()
            pipe.zscore(keys.reposts(original), actor)

        _, newer = pipeline_run(untell)


def _is_direct(sid: int) -> bool:
    """Whether status `sid` is a direct message (its audience, `to`, is fixed when
    it is posted); False once it is gone. One read, for a direct reply's link."""
    return bool(get_redis().hexists(keys.status(sid), "to"))


def link_posted(*, status: Status) -> bool:
    """Link a new reply to its parent, a new repost to its original (the request,
    then its fan-out job again: idempotent). A repost that lost to another of the
    same person's, or whose original is gone, is removed: returns False. A
    private reply (a direct message answering a status that is none) is linked to
    nothing: its parent's thread neither lists nor counts it for anyone, as
    Mastodon counts no direct reply; its audience reads it as a conversation."""
    if status.reply_to is not None and (
        not status.direct or _is_direct(status.reply_to)
    ):
        parent = status.reply_to
        # A parent deleted meanwhile keeps no link: the reply shows it is gone.
        member = reply_member(status.id, status.author_id)
        _counted_add(parent, keys.replies(parent), member, status.id, "replies")
    if status.repost_of is not None:
        original = status.repost_of
        added = _counted_add(
            original, keys.reposts(original), status.author_id, status.id, "reposts"
        )
        if added == 0:
            kept = get_redis().zscore(keys.reposts(original), status.author_id)
            added = 1 if kept is not None and int(kept) == status.id else 0
        if added != 1:
            services.status_remove(author_id=status.author_id, status=status)
            return False
    if (
        status.quote is not None
        and status.repost_of is None
        and not status.quote.revoked  # its quoted author detached it
    ):
        quoted = status.quote.id
        added = _QUOTE_ADD(
            keys=[keys.status(quoted), keys.quotes(quoted)],
            args=[
                reply_member(status.id, status.author_id),
                status.id,
                QUOTES_MAX,
                "quotes",
            ],
        )
        # A quoted status deleted meanwhile keeps no link: the quote shows it is
        # unavailable. One quoted QUOTES_MAX times takes no more.
        if added == -2:
            services.status_remove(author_id=status.author_id, status=status)
            return False
        if added == 1:
            # A revoke writes the quote's hash, then unlinks it: one that came
            # after this status was read is seen now and unlinked here, so in
            # either order no revoked quote stays linked (one more round trip,
            # for a quote's first link only).
            raw = get_redis().hget(keys.status(status.id), "quote")
            now = Quote.from_field(raw)
            if now is not None and now.revoked:
                quote_unlink(
                    quoted=quoted, quoting=status.id, author_id=status.author_id
                )
            elif now is not None and now.quote_of is not None:
                # Linked, it is among those a deletion of the status it quotes in
                # turn walks (`edits.quotes_inner_deleted`); one deleted before
                # is told here (one round trip more, for a quote of a quote only).
                edits.quote_inner_gone(status, raw)
    status_notify(status=status)
    return True


def quote_unlink(*, quoted: int, quoting: int, author_id: int) -> None:
    """Take quote `quoting` (by `author_id`) out of status `quoted`'s quotes, its
    count with it (a revoke; a deleted quote's job does it too): idempotent."""
    pipeline_run(
        lambda pipe: _counted_remove_queue(
            pipe,
            quoted,
            keys.quotes(quoted),
            reply_member(quoting, author_id),
            "quotes",
        )
    )


def _may_see(author_id: int, uids: list[int]) -> set[int]:
    """Of these users, those who may see the author's statuses: all of them, unless
    the author is private (then their approved followers only)."""
    r = get_redis()
    if not uids or not r.hexists(account_keys.user(author_id), User.PRIVATE_FIELD):
        return set(uids)
    scores = r.zmscore(keys.followers(author_id), uids)
    return {uid for uid, score in zip(uids, scores, strict=True) if score is not None}


def status_notify(*, status: Status) -> None:
    """Tell the people a new status concerns (`timeline.notifications`): the author
    of what it replies to, the people it mentions (resolved when it was posted), the
    author of what it reposts. Idempotent: the request and the status's fan-out
    job may both run it. Blocks and mutes are applied in each recipient's slot; a
    private author's reply or mention reaches only their approved followers."""
    events: list[tuple[int, str, int]] = []
    if status.repost_of is not None:
        if status.repost_uid:
            events.append((status.repost_uid, "repost", status.repost_of))
    elif status.direct:
        # Its whole audience, whoever they follow (blocks applied in their slots);
        # the author of what it answers is told of a reply.
        events += [
            (uid, "reply" if uid == status.reply_uid else "mention", status.id)
            for uid in status.to
        ]
    else:
        # An edit before the post job ran tells nobody new (`timeline.edits`):
        # only those the first version named and the current one still does.
        first = edits.first_named(status)
        named = [uid for uid in status.mentioned_ids if first is None or uid in first]
        told = set(named) | ({status.reply_uid} - {None, 0})
        may = _may_see(status.author_id, sorted(told - {status.author_id}))
        if status.reply_uid in may:
            events.append((status.reply_uid, "reply", status.id))
        events += [
            (uid, "mention", status.id)
            for uid in named
            if uid in may and uid != status.reply_uid
        ]
        quoted = (
            status.quote.author_id
            if status.quote is not None and not status.quote.revoked
            else None
        )
        if (
            quoted
            and quoted != status.author_id
            and quoted not in told
            and quoted in _may_see(status.author_id, [quoted])
        ):
            events.append((quoted, "quote", status.id))
    if not events:
        return
    at = int(status.created * 1000)
    pipeline_run(
        lambda pipe: [
            notifications.notify_queue(
                pipe,
                recipient=recipient,
                kind=kind,
                actor=status.author_id,
                sid=sid,
                at_ms=at,
                conversation=status.conversation_id,
            )
            for recipient, kind, sid in events
        ]
    )


def unlink_job_run(job: jobs.Job) -> None:
    """Run an `unlink` job (`services.unlink_job_id`): `status_unlink`; an
    `unlinkq` job names the quoted status and its author after the original."""
    quoted = quoted_uid = None
    if job.kind == "unlinkq":
        author_id, sid, parent, original, quoted, quoted_uid, *mentioned = job.args
    else:
        # Ids queued before mentions were named in them end at the original.
        author_id, sid, parent, original, *mentioned = job.args
    if get_redis().exists(keys.status(sid)):
        # Queued by an account deletion before the hash went: its turn comes after.
        raise jobs.Deferred(jobs.now_ms() + 1000)
    status_unlink(
        author_id=author_id,
        sid=sid,
        parent=parent or None,
        original=original or None,
        mentioned=tuple(mentioned),
        quoted=(quoted, quoted_uid) if quoted else None,
    )


UNLINK_BATCH = 500


def status_unlink(
    *,
    author_id: int,
    sid: int,
    parent: int | None,
    original: int | None,
    mentioned: tuple[int, ...] = (),
    quoted: tuple[int, int] | None = None,
) -> None:
    """Remove everything that links to or from deleted status `sid`: its link in
    the parent's replies and the original's reposts (`quoted`: the status it
    quoted and its author: its link in that one's quotes, and the "quoted your
    post" it told), the notifications it caused
    (`mentioned`: the users it mentioned; its poll's voters), each liker's record
    of it, its reposts (each deleted as a status). Idempotent and resumable: each
    walk consumes its zset."""
    r = get_redis()

    # The notifications it caused: the likes and reposts of it in its author's
    # store, the reply in its parent's author's, the repost in its original's
    # author's, the mentions in the mentioned users' (the delete forgot them at
    # once; again here, after a post job that notified late).
    told = {
        kind: int(uid)
        for kind, other in (("reply", parent), ("repost", original))
        if other is not None and (uid := r.hget(keys.status(other), "uid"))
    }

    def forget(pipe) -> None:
        notifications.notifications_forget_status_queue(
            pipe, recipient=author_id, sid=sid
        )
        for uid in mentioned:
            notifications.notifications_forget_status_queue(
                pipe, recipient=uid, sid=sid
            )
        if "reply" in told:
            notifications.notifications_forget_status_queue(
                pipe, recipient=told["reply"], sid=sid
            )
        if "repost" in told:
            notifications.unnotify_queue(
                pipe,
                recipient=told["repost"],
                kind="repost",
                actor=author_id,
                sid=original,
            )
        if quoted is not None:
            notifications.notifications_forget_status_queue(
                pipe, recipient=quoted[1], sid=sid
            )
            pipe.barrier()
            _counted_remove_queue(
                pipe,
                quoted[0],
                keys.quotes(quoted[0]),
                reply_member(sid, author_id),
                "quotes",
            )
        # Then its links (a repost's last: while it stands no second repost of
        # the author's is made), and whether a newer repost stands.
        if parent is not None or original is not None:
            pipe.barrier()
        if parent is not None:
            _counted_remove_queue(
                pipe,
                parent,
                keys.replies(parent),
                reply_member(sid, author_id),
                "replies",
            )
        if original is not None:
            _counted_remove_queue(
                pipe, original, keys.reposts(original), author_id, "reposts", sid
            )
            pipe.zscore(keys.reposts(original), author_id)

    *_, newer = pipeline_run(forget)
    if "repost" in told:
        _repost_tell_again(
            original=original, actor=author_id, author=told["repost"], newer=newer
        )
    while likers := [int(u) for u in r.zrange(keys.likes(sid), 0, UNLINK_BATCH - 1)]:

        def forget(pipe, likers=likers) -> None:
            for liker in likers:
                pipe.zrem(keys.liked(liker), sid)
            pipe.barrier()  # the status's side last: a rerun finds them again
            pipe.zrem(keys.likes(sid), *likers)

        pipeline_run(forget)
    # Its voters' "poll has ended" (`timeline.polls`), then its voters.
    while voters := [
        int(u) for u in r.zrange(keys.poll_voters(sid), 0, UNLINK_BATCH - 1)
    ]:
        pipeline_run(
            lambda pipe, voters=voters: [
                notifications.notifications_forget_status_queue(
                    pipe, recipient=voter, sid=sid
                )
                for voter in voters
            ]
        )
        r.zrem(keys.poll_voters(sid), *voters)
    while rows := r.zrange(keys.reposts(sid), 0, UNLINK_BATCH - 1, withscores=True):
        _reposts_delete(rows)
        # Their "edited a status you reposted" of it (`timeline.edits`) go too.
        pipeline_run(
            lambda pipe, rows=rows: [
                notifications.notifications_forget_status_queue(
                    pipe, recipient=int(reposter), sid=sid
                )
                for reposter, _ in rows
            ]
        )
        r.zrem(keys.reposts(sid), *[reposter for reposter, _ in rows])
    edits.versions_unlink(sid)  # what its earlier versions filed and told
    # The quotes of its quotes name it deleted (their embeds' ShallowQuote).
    edits.quotes_inner_deleted(sid)
    # One slot: the status's. Its quotes stay, showing it is unavailable.
    r.delete(keys.replies(sid), keys.edits(sid), keys.quotes(sid))


def likes_undo_queue(pipe, *, uid: int, sids: list[int]) -> None:
    """Queue the removal of a deleted account's likes of these statuses (their
    count goes down with each)."""
    for sid in sids:
        _counted_remove_queue(pipe, sid, keys.likes(sid), uid, "likes")


def status_reply(
    *,
    author: User,
    sid: int,
    text: str,
    limit: limits.Limit | None = None,
    reserved_id: int | None = None,
    unlisted: bool = False,
    spoiler: str = "",
    scheduled_entry: int | None = None,
    direct: bool | None = None,
    poll: Poll | None = None,
) -> Status:
    """Post a reply to a status (a repost's original): NotFound when it is gone or
    hidden from the author; else as `services.status_create` (`reserved_id`: the
    reply's own id, reserved beforehand; `scheduled_entry`: the scheduled status it
    posts; `direct`: a direct message (None: as the parent is; a reply to a direct
    message is one, and DirectRefused when asked to be anything else); `poll`: its
    poll, `timeline.polls.poll_make`'s)."""
    parent = status_target(user=author, sid=sid)
    if direct is False and parent.direct:
        raise direct_messages.DirectRefused(
            "A reply to a direct message is a direct message too: only the people "
            "in its conversation see it."
        )
    reply = services.status_create(
        author=author,
        text=text,
        limit=limit,
        reply_to=parent,
        reserved_id=reserved_id,
        unlisted=unlisted,
        spoiler=spoiler,
        scheduled_entry=scheduled_entry,
        direct=bool(direct),
        poll=poll,
    )
    link_posted(status=reply)
    return reply


def reposts_remove(*, author_id: int) -> int:
    """Remove every repost of an author's statuses (their account turned private:
    nobody reposts a private account's statuses, and theirs must not show to
    non-followers through others' reposts); returns how many. Idempotent."""
    r = get_redis()
    sids = [int(s) for s in r.zrange(keys.posts(author_id), 0, -1)]
    removed = 0
    for start in range(0, len(sids), UNLINK_BATCH):
        part = sids[start : start + UNLINK_BATCH]
        rows = pipeline_run(
            lambda pipe, part=part: [
                pipe.zrange(keys.reposts(sid), 0, -1, withscores=True) for sid in part
            ],
            confirm=False,
        )
        removed += _reposts_delete([row for found in rows for row in found])
    return removed


def _reposts_delete(rows: list[tuple[str, float]]) -> int:
    """Delete these reposts ((reposter, repost sid) rows of a `reposts` zset), their
    hashes read in one round trip; returns how many were still there."""
    reposter_of = {int(repost_id): int(reposter) for reposter, repost_id in rows}
    found = services.statuses_read(list(reposter_of))
    for repost in found:
        services.status_remove(author_id=reposter_of[repost.id], status=repost)
    return len(found)
