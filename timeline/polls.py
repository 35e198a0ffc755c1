"""Polls: a status that asks its readers to choose among two to four options.

**What one is.** A poll is made with its status and never changes (`Poll`: its
options, when it closes, whether a voter may choose several, whether the totals
stay hidden until it closes), stored on the status hash as its `poll` field, so
every read of the status reads it, outbox copies and reposts included. Mastodon's
limits (`POLL_OPTIONS_MAX` options of `POLL_OPTION_MAX_CHARS` characters, open
`POLL_EXPIRES_MIN` to `POLL_EXPIRES_MAX` seconds) are what its apps read from the
instance.

**Votes.** A vote is one script on the status hash (`_VOTE`): it refuses a status
with no poll (or gone), a closed poll and a second vote, records the voter's
choices in the hash's `v:<uid>` field (`HSETNX`: claimed once, atomically) and
adds them to the `tally` field (`<voters> <votes of option 0> ...`), which the
status's reads take with its counts; the viewer's own choices are read with their
like and repost state (`selectors._JSON_LUA`). The hash gains one field a voter,
as a status's likes zset gains one member a liker, and both go with the status;
a deleted voter's vote still counts, as Mastodon's does. The author does not vote
in their own poll (Mastodon counts them as having voted: they see the results).

**When it closes** its voters and its author are told (Mastodon's `poll`
notification): the status's post job queues its `poll:<sid>` job, due when the
poll closes, in the status's slot (`poll_end_queue`); the job tells the author,
then walks the voters (`poll_voters:{status:<sid>}`, written by the vote script
with the `v:` field), a batch a round trip, resumable from its cursor; each
telling is idempotent, and the job is queued once a status (its `poll_job`
field), so a post job run again after it finished tells nothing again. Both
the vote script and the job decide "closed" by one clock, the `TIME` of the
server that holds the status: a web server's or a worker's clock that runs off
would let in a vote after the voters were walked. A private author's voters are
told only while they follow her (a direct message's audience always): a voter who
does not may no longer see the status, and the page leaves out what was told
before she turned private, as it does a private author's mentions. A deleted
status tells nothing more: its `unlink` job walks the voters to take back what
was told (`timeline.social.status_unlink`), and a batch told while it was being
deleted is taken back by the job itself.
"""

from __future__ import annotations

import time
from dataclasses import replace

from accounts import limits
from accounts.domain import User
from accounts.selectors import user_get
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis
from timeline import jobs, keys, notifications, social
from timeline.domain import (
    POLL_EXPIRES_MAX,
    POLL_EXPIRES_MIN,
    POLL_OPTION_MAX_CHARS,
    POLL_OPTIONS_MAX,
    POLL_OPTIONS_MIN,
    NotFound,
    Poll,
    Refused,
    Status,
    normalize_spoiler,
    spoiler_length,
)


class PollRefused(Refused):
    """A poll that cannot be made, or a vote that cannot be cast (the message
    says why)."""


def poll_make(
    options: list[str],
    expires_in: float,
    *,
    multiple: bool = False,
    hide_totals: bool = False,
    now: float | None = None,
) -> Poll:
    """A new poll from what its author gave, or PollRefused saying what is wrong:
    each option on one line (`normalize_spoiler`'s rule), none blank nor twice."""
    cleaned = [normalize_spoiler(str(o)) for o in options]
    if any(not o for o in cleaned):
        raise PollRefused("A poll's options cannot be blank.")
    if len(cleaned) < POLL_OPTIONS_MIN:
        raise PollRefused(f"A poll needs at least {POLL_OPTIONS_MIN} options.")
    if len(cleaned) > POLL_OPTIONS_MAX:
        raise PollRefused(f"A poll has at most {POLL_OPTIONS_MAX} options.")
    for option in cleaned:
        if spoiler_length(option) > POLL_OPTION_MAX_CHARS:
            raise PollRefused(
                f"A poll's option is at most {POLL_OPTION_MAX_CHARS} characters."
            )
    if len({o.casefold() for o in cleaned}) < len(cleaned):
        raise PollRefused("A poll's options must all differ.")
    if not POLL_EXPIRES_MIN <= expires_in <= POLL_EXPIRES_MAX:
        raise PollRefused(
            f"A poll stays open between 5 minutes and {POLL_EXPIRES_MAX // 86400} days."
        )
    now = time.time() if now is None else now
    return Poll(
        options=tuple(cleaned),
        expires=round(now + expires_in, 3),
        multiple=multiple,
        hide_totals=hide_totals,
    )


def poll_draft(
    options: list[str],
    expires_in: float,
    *,
    multiple: bool = False,
    hide_totals: bool = False,
) -> Poll:
    """A poll to ask later (a scheduled status's, `timeline.scheduled`): the rules
    of `poll_make`, its `expires` how many seconds it stays open once asked
    (`poll_asked`), as Mastodon counts a scheduled poll's from its posting."""
    return poll_make(
        options, expires_in, multiple=multiple, hide_totals=hide_totals, now=0.0
    )


def poll_asked(draft: Poll, now: float | None = None) -> Poll:
    """A drafted poll (`poll_draft`), asked now: open its seconds from now."""
    now = time.time() if now is None else now
    return replace(draft, expires=round(now + draft.expires, 3))


# KEYS: the status hash, its voters. ARGV: the voter's uid, their choices (option
# indexes, ascending, space-separated). Returns 1 once voted, -1 when the status
# has no poll (or is gone: nothing is written then), -2 when the poll has closed,
# -3 when the voter has voted already. Closed by the clock of the server that
# holds the status (`TIME`), which its closing job reads too (`_CLOSING_READ`):
# a web server's clock running behind would let in a vote after the job walked
# the voters, never told of the closing. (TIME before a write: Redis 5+ replicate
# a script's effects, not the script.)
_VOTE = LuaScript(
    """
local poll = redis.call('HGET', KEYS[1], 'poll')
if not poll then return -1 end
local ok, found = pcall(cjson.decode, poll)
if not ok or type(found) ~= 'table' or type(found.o) ~= 'table' then return -1 end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- In whole ms, as the job rounds it: one instant for both.
if math.floor(tonumber(found.x) * 1000 + 0.5) <= now_ms then return -2 end
if redis.call('HSETNX', KEYS[1], 'v:' .. ARGV[1], ARGV[2]) == 0 then return -3 end
local tally, old = {}, redis.call('HGET', KEYS[1], 'tally')
if old then
  for n in string.gmatch(old, '%d+') do tally[#tally + 1] = tonumber(n) end
end
for i = #tally + 1, #found.o + 1 do tally[i] = 0 end
tally[1] = tally[1] + 1
for n in string.gmatch(ARGV[2], '%d+') do
  local at = tonumber(n) + 2
  tally[at] = tally[at] + 1
end
for i = 1, #tally do tally[i] = string.format('%d', tally[i]) end
redis.call('HSET', KEYS[1], 'tally', table.concat(tally, ' '))
redis.call('ZADD', KEYS[2], now_ms, ARGV[1])
return 1
"""
)


def choices_clean(poll: Poll, choices: list) -> list[int]:
    """The option indexes a voter chose, ascending, each once; PollRefused when
    none, one out of range, or several in a poll of one choice."""
    try:
        picked = sorted({int(c) for c in choices})
    except (TypeError, ValueError):
        raise PollRefused("Choose among the poll's options.") from None
    if not picked:
        raise PollRefused("Choose an option to vote.")
    if picked[0] < 0 or picked[-1] >= len(poll.options):
        raise PollRefused("Choose among the poll's options.")
    if len(picked) > 1 and not poll.multiple:
        raise PollRefused("This poll takes one choice.")
    return picked


def poll_vote(
    *,
    user: User,
    sid: int,
    choices: list,
    limit: limits.Limit | None = None,
    through_repost: bool = True,
) -> Status:
    """Vote in the poll of status `sid` (a repost's original, unless not
    `through_repost`: the client API's, where a reblog's id is no poll's, as
    Mastodon's): the status voted in. NotFound when it is gone, has no poll, the
    user may not see it, or it is a repost and not `through_repost`;
    PollRefused when the choices are wrong, the poll has closed, the user wrote
    it or voted already; with `limit` (`limits.like`), taken first or refused with
    TooManyAttempts."""
    if limit is not None:
        limits.take(limit)
    target = social.status_target(user=user, sid=sid)
    poll = target.poll
    if poll is None or (target.id != sid and not through_repost):
        raise NotFound(sid)
    if target.author_id == user.id:
        raise PollRefused("You cannot vote in your own poll.")
    picked = choices_clean(poll, choices)
    done = _VOTE(
        keys=[keys.status(target.id), keys.poll_voters(target.id)],
        args=[user.id, " ".join(map(str, picked))],
    )
    if done == -1:
        raise NotFound(sid)
    if done == -2:
        raise PollRefused("This poll has closed.")
    if done == -3:
        raise PollRefused("You have already voted in this poll.")
    return target


POLL_JOB_BATCH = 500  # voters told a round trip


def poll_job_id(sid: int) -> str:
    return jobs.job_id("poll", sid)


# KEYS: the status hash, then the job queue and data of its slot (`jobs.slot_keys`).
# ARGV: the status hash's field that records the queuing (`Status.POLL_JOB_FIELD`),
# the job id, when it is due (ms). Queues the closing job once a status: the post
# job runs at least once, and run again from its start after the closing job
# finished (its id gone, so queued anew: from its start) it would tell every voter
# and the author again, among them those who dismissed it. Nothing for a status
# gone (HSETNX would make its hash anew). Returns 1 when queued.
_POLL_END_QUEUE = LuaScript(
    jobs.ENQUEUE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], ARGV[1], '1') == 0 then return 0 end
enqueue(KEYS[2], KEYS[3], ARGV[2], ARGV[3], ARGV[3])
return 1
"""
)


def poll_end_queue(pipe, *, status: Status) -> None:
    """Queue the job that tells the poll's voters and author it has closed, due
    then, in the status's slot: once a status, however often this is asked."""
    assert status.poll is not None
    _POLL_END_QUEUE.queue(
        pipe,
        keys=[
            keys.status(status.id),
            *jobs.slot_keys(social._status_slot(status.id)),
        ],
        args=[
            Status.POLL_JOB_FIELD,
            poll_job_id(status.id),
            round(status.poll.expires * 1000),
        ],
    )


# KEYS: the status hash. ARGV: the fields read (`Status.IMMUTABLE`). Returns the
# server's time (ms) and the fields: the closing job decides the poll closed by
# the clock the vote script refuses votes by, the one of the server holding the
# status (a worker's clock running ahead would walk the voters while votes are
# still taken; a call in the status's slot reads that server's on a Cluster).
_CLOSING_READ = LuaScript(
    """
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {string.format('%d', now_ms), redis.call('HMGET', KEYS[1], unpack(ARGV))}
"""
)


def poll_job_run(job: jobs.Job) -> None:
    """Run a `poll` job (`poll_job_id`): tell the author and every voter that the
    poll has closed, once it has; a batch of voters a round trip, the cursor (how
    many were told) recorded with it. A status deleted meanwhile tells no more,
    and what the last batch told is taken back (its `unlink` job may have walked
    the voters before that batch was told)."""
    (sid,) = job.args
    r = get_redis()
    server_ms, fields = _CLOSING_READ(keys=[keys.status(sid)], args=Status.IMMUTABLE)
    status = Status.from_fields(sid, fields)
    if status is None or status.poll is None:
        return
    at = round(status.poll.expires * 1000)
    if (early := at - int(server_ms)) > 0:
        # Due again when the server's clock reaches the close: the queue runs on
        # the workers' clocks, so that moment on this one's.
        raise jobs.Deferred(jobs.now_ms() + early)
    author = user_get(uid=status.author_id)
    if author is None:
        return  # a deleted account's statuses go with it: nothing to tell
    # A private author's status is for her followers (a direct message: for its
    # audience, who alone could vote in it): a voter who no longer follows her
    # may not see it, so is not told of it (`selectors`, the page's rule, hides
    # what was told before she turned private).
    followers_only = author.private and not status.direct
    told = int(job.cursor)
    if told == 0 and not _told(status, [status.author_id], at):
        return
    while voters := [
        int(uid)
        for uid in r.zrange(keys.poll_voters(sid), told, told + POLL_JOB_BATCH - 1)
    ]:
        told += len(voters)
        if not _told(
            status, voters, at, followers_only=followers_only, job=job, cursor=told
        ):
            return


def _told(
    status: Status,
    recipients: list[int],
    at: int,
    *,
    followers_only: bool = False,
    job: jobs.Job | None = None,
    cursor: int = 0,
) -> bool:
    """Tell `recipients` that the poll of `status` closed (with `job`, recording
    `cursor` with it: LeaseLost when the job is no longer this worker's), then
    whether the status still stands. When it does not (deleted since the job read
    it: its unlink job may have walked the voters before this telling), take back
    what was told, from them and the author, and answer False."""

    def tell(pipe) -> None:
        for uid in recipients:
            notifications.notify_queue(
                pipe,
                recipient=uid,
                kind="poll",
                actor=status.author_id,
                sid=status.id,
                at_ms=at,
                conversation=status.conversation_id,
                # A private author's: only to those who follow her at that moment
                # (checked in each one's slot).
                if_following=status.author_id if followers_only else None,
            )
        pipe.barrier()
        if job is not None:
            jobs.progress_queue(pipe, job, cursor=str(cursor))
        pipe.exists(keys.status(status.id))

    *_, kept, standing = pipeline_run(tell)
    if job is not None and not kept:
        raise jobs.LeaseLost(job.id)
    if standing:
        return True
    pipeline_run(
        lambda pipe: [
            notifications.notifications_forget_status_queue(
                pipe, recipient=uid, sid=status.id
            )
            for uid in dict.fromkeys([status.author_id, *recipients])
        ]
    )
    return False
