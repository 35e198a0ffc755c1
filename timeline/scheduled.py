"""Scheduled statuses (Mastodon's): a status written now, posted at a time its author
picks, by a durable job; until then its author sees it on their list of scheduled
statuses, and may move or cancel it.

**One atomic step, then a job due at its time.** Scheduling is one script in the
author's slot (`_SCHEDULE`): it checks the account stands and the caps, keeps the
status in `scheduled:{<uid>}` (id -> JSON: its text, warning, visibility, what it
replies to, when) and queues the `schedule:<uid>:<n>` job due at that time, beside
it. The job's recorded start (`#s`, `timeline.jobs`) is its due time, so neither the
queue's oldest age nor `timelines repair`'s stuck jobs count a status waiting for
its time. Workers find it due by their sweep (JOB_SWEEP_SECONDS) and post it as its
author would have: the same rules, the same fan-out (`schedule_job_run`).

**Posted once.** The job first reserves the status's id and records it as its cursor,
then posts with that id; the entry goes in the step that publishes it
(`services._PUBLISH`, in the same slot). A job cut short before that step posts
again with the same id, which writes the same keys; one cut short after it finds no
entry, and posts nothing (not even a status its author deleted since). From the
reservation on, the status is its job's: a move or a cancel is refused. The id is
taken when it is posted, not when it was scheduled: ids follow time, and a status's
place in every timeline is its id.

**What it checks when.** The text, the warning and what it replies to are checked
when it is scheduled (a refusal then keeps what was typed), against the posting
budget too (a scheduled status is a post). At its time it is posted without the
budget; a reply whose status is gone or hidden from its author by then is posted
as a status of its own (its text is not lost); the names it mentions are resolved
then, as a post's are. Caps, as Mastodon's: SCHEDULED_MAX waiting per account,
SCHEDULED_PER_DAY due on one UTC day, at least SCHEDULE_LEAD_SECONDS ahead. A
deleted account's scheduled statuses go with it (its deletion cancels their jobs
and deletes the key: `timeline.fanout`).

**A receipt, in the same step.** A caller that must know afterwards what a request
scheduled (the client API's Idempotency-Key, `api.idempotency`) passes a `Receipt`:
a field of a hash in the author's slot that holds the request's claim. The step
refuses (ReceiptLost, nothing written) unless the field still holds it, and
otherwise writes the new status's id into it with the entry: a request whose reply
was lost has its record, and one whose claim a retry took over writes nothing, so
the status is scheduled once.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from accounts.selectors import user_get
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis
from timeline import ids, jobs, keys, polls, services, social
from timeline.direct import DirectRefused
from timeline.domain import (
    InvalidStatus,
    NotFound,
    Poll,
    TimelineError,
    normalize_spoiler,
    normalize_text,
    text_problem,
)

log = logging.getLogger(__name__)

SCHEDULED_MAX = 300  # waiting per account (Mastodon's)
SCHEDULED_PER_DAY = 25  # due on one UTC day (Mastodon's)
SCHEDULE_LEAD_SECONDS = 300  # at least this far ahead (Mastodon's five minutes)
SCHEDULE_HORIZON_SECONDS = 2 * 366 * 86400  # at most about two years ahead
DAY = 86400
_NEXT = "next"  # the field of `scheduled:{<uid>}` that counts its ids


class ScheduleRefused(TimelineError):
    """A time, or a cap, refuses a scheduled status (the message says which)."""


class ReceiptLost(TimelineError):
    """The receipt's field no longer holds the caller's claim (another request took
    it over): nothing was scheduled."""


@dataclass(frozen=True, slots=True)
class Receipt:
    """Where the scheduling step records the id it gives the status: `field` of the
    hash `key` (in the author's slot), which must still hold `claimed`, becomes
    `settled` followed by the id."""

    key: str
    field: str
    claimed: str
    settled: str


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A status waiting for its time: `id` is its author's own count (1, 2, ...)."""

    id: int
    at: float  # when it is to be posted (unix seconds)
    text: str
    spoiler: str = ""
    unlisted: bool = False
    reply_to: int | None = None
    # Its poll, as drafted (`polls.poll_draft`: `expires` is how many seconds it
    # stays open once posted).
    poll: Poll | None = None

    @property
    def poll_open_label(self) -> str:
        """How long its poll stays open once posted ("1 hour", "3 days")."""
        seconds = int(self.poll.expires) if self.poll is not None else 0
        for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
            if seconds >= size and seconds % size == 0:
                n = seconds // size
                return f"{n} {unit}{'s' if n != 1 else ''}"
        return f"{seconds} seconds"

    @property
    def at_iso(self) -> str:
        return datetime.fromtimestamp(self.at, tz=UTC).isoformat()

    @property
    def at_label(self) -> str:
        """Its time as the page says it without script: UTC, to the minute."""
        return datetime.fromtimestamp(self.at, tz=UTC).strftime(
            "%a %d %b %Y, %H:%M UTC"
        )

    def to_json(self) -> str:
        row = {
            "at": kept_time(self.at),
            "text": self.text,
            "spoiler": self.spoiler,
            "unlisted": self.unlisted,
            "reply_to": self.reply_to,
        }
        if self.poll is not None:
            row["poll"] = self.poll.to_field()
        return json.dumps(row, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, n: int, value: str) -> Scheduled:
        row = json.loads(value)
        return cls(
            id=n,
            at=float(row["at"]),
            text=row["text"],
            spoiler=row.get("spoiler") or "",
            unlisted=bool(row.get("unlisted")),
            reply_to=row.get("reply_to"),
            poll=Poll.from_field(row.get("poll")),
        )


def schedule_job_id(uid: int, n: int) -> str:
    """The job that posts scheduled status `n` of user `uid` (`schedule_job_run`)."""
    return jobs.job_id("schedule", uid, n)


# Lua: waiting_count(scheduled hash, day start, day end, an id to leave out or '')
# says how many statuses wait, and how many of them are due that UTC day.
_WAITING = """
local function waiting_count(hash, day_start, day_end, skip)
  local entries = redis.call('HGETALL', hash)
  local waiting, that_day = 0, 0
  day_start, day_end = tonumber(day_start), tonumber(day_end)
  for i = 1, #entries, 2 do
    if entries[i] ~= 'next' and entries[i] ~= skip then
      waiting = waiting + 1
      local at = tonumber(cjson.decode(entries[i + 1]).at)
      if at >= day_start and at < day_end then that_day = that_day + 1 end
    end
  end
  return waiting, that_day
end
"""

# KEYS: the author's scheduled statuses, user hash, and their slot's job queue and
# data; with a receipt, its hash. ARGV: the user hash's username and deleted
# fields, the author's uid, the entry (JSON), when it is due (ms), SCHEDULED_MAX,
# SCHEDULED_PER_DAY, the start and end of its UTC day (unix s); with a receipt, its
# field, the claim it must hold and its settled value's prefix. Returns its id; 0
# for an account deleted or being deleted, -1 past SCHEDULED_MAX, -2 past
# SCHEDULED_PER_DAY, -3 when the receipt's field holds another claim.
_SCHEDULE = LuaScript(
    jobs.ENQUEUE
    + _WAITING
    + """
if KEYS[5] and redis.call('HGET', KEYS[5], ARGV[10]) ~= ARGV[11] then
  return -3
end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0
    or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then
  return 0
end
local waiting, that_day = waiting_count(KEYS[1], ARGV[8], ARGV[9], '')
if waiting >= tonumber(ARGV[6]) then return -1 end
if that_day >= tonumber(ARGV[7]) then return -2 end
local n = redis.call('HINCRBY', KEYS[1], 'next', 1)
redis.call('HSET', KEYS[1], n, ARGV[4])
-- Its recorded start is its due time: it waits for that, not stuck.
enqueue(KEYS[3], KEYS[4], 'schedule:' .. ARGV[3] .. ':' .. n, ARGV[5], ARGV[5])
if KEYS[5] then redis.call('HSET', KEYS[5], ARGV[10], ARGV[12] .. n) end
return n
"""
)

# Lua: whether job `id` has started (`#t`: a worker holds it, or held it and died;
# `#c`: it reserved its status's id, and may have posted it before it raised):
# from then on it is its job's to post, and no move or cancel may change that.
_STARTED = """
local function started(data, id)
  return redis.call('HEXISTS', data, id .. '#t') == 1
    or redis.call('HEXISTS', data, id .. '#c') == 1
end
"""

# KEYS: the author's scheduled statuses, their slot's job queue and data. ARGV: the
# status's id, its entry as read, its entry moved, its job's id, the new due time
# (ms), SCHEDULED_PER_DAY, the start and end of the new time's UTC day (unix s).
# Moves a status still waiting as read (its job queued, not started); returns 1,
# 0 when it is no longer as read (posted, cancelled, moved meanwhile), -1 when its
# job has started to post it, -2 past SCHEDULED_PER_DAY on the new day (the
# status itself not counted).
_RESCHEDULE = LuaScript(
    _STARTED
    + _WAITING
    + """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if not redis.call('ZSCORE', KEYS[2], ARGV[4]) or started(KEYS[3], ARGV[4]) then
  return -1
end
local _, that_day = waiting_count(KEYS[1], ARGV[7], ARGV[8], ARGV[1])
if that_day >= tonumber(ARGV[6]) then return -2 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], 'XX', ARGV[5], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[4] .. '#s', ARGV[5])
return 1
"""
)

# KEYS: the author's scheduled statuses, their slot's job queue, data and failed
# jobs. ARGV: the status's id, its job's id. Cancels a status still waiting: its
# entry and its job go (from the failed jobs too). Returns 1; 0 when it is not
# waiting (posted, cancelled); -1 when its job has started to post it.
_CANCEL = LuaScript(
    jobs.FORGET
    + _STARTED
    + """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if started(KEYS[3], ARGV[2]) then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
forget(KEYS[3], ARGV[2])
return 1
"""
)

_BEING_POSTED = "It is being posted right now."


def _all_full() -> str:
    return (
        f"You have {SCHEDULED_MAX} statuses waiting, as many as may wait: cancel "
        "some first."
    )


def _day_full() -> str:
    return (
        f"{SCHEDULED_PER_DAY} statuses are scheduled on that day already, as many "
        "as one day may have: pick another."
    )


def _when_problem(at: float, now: float) -> str | None:
    if at < now + SCHEDULE_LEAD_SECONDS:
        minutes = SCHEDULE_LEAD_SECONDS // 60
        return f"Pick a time at least {minutes} minutes from now."
    if at > now + SCHEDULE_HORIZON_SECONDS:
        return "Pick a time within two years."
    return None


def kept_time(at: float) -> float:
    """A time as an entry keeps it (`Scheduled.to_json`: to the millisecond), so
    what a schedule or a move answers is what a read of the entry answers later
    (an Idempotency-Key's repeat, the list)."""
    return round(at, 3)


def _day_of(at: float) -> tuple[int, int]:
    start = int(at // DAY * DAY)
    return start, start + DAY


def status_schedule(
    *,
    author: User,
    text: str,
    at: float,
    spoiler: str = "",
    unlisted: bool = False,
    reply_to: int | None = None,
    limit: limits.Limit | None = None,
    receipt: Receipt | None = None,
    poll: Poll | None = None,
) -> Scheduled:
    """Schedule a status to be posted at `at` (unix seconds): the rules of a new
    status now (InvalidStatus), a time and the caps (ScheduleRefused), what it
    replies to while its author may see it (NotFound) and no direct message
    (DirectRefused: a reply to one is one, and none is scheduled); with `limit`
    (the posting budget), taken or TooManyAttempts; with `receipt`, its id
    recorded in the same step, or ReceiptLost; `poll`: its poll, drafted
    (`polls.poll_draft`: open its seconds once posted). The status as
    scheduled."""
    text = normalize_text(text)
    spoiler = normalize_spoiler(spoiler)
    problem = text_problem(text, spoiler)
    if problem:
        raise InvalidStatus(problem)
    at = kept_time(at)
    problem = _when_problem(at, time.time())
    if problem:
        raise ScheduleRefused(problem)
    if reply_to is not None:
        parent = social.status_target(user=author, sid=reply_to)
        if parent.direct:
            # A reply to a direct message is one, and none is scheduled: posted
            # later on its own (its parent deleted meanwhile), it would be public.
            raise DirectRefused(
                "A reply to a direct message cannot be scheduled: post it now."
            )
        reply_to = parent.id
    # The caps before the posting budget: a refusal costs nothing (the atomic step
    # checks them again).
    waiting = scheduled_list(user=author)
    if len(waiting) >= SCHEDULED_MAX:
        raise ScheduleRefused(_all_full())
    day_start, day_end = _day_of(at)
    if sum(day_start <= e.at < day_end for e in waiting) >= SCHEDULED_PER_DAY:
        raise ScheduleRefused(_day_full())
    if limit is not None:
        limits.take(limit)
    entry = Scheduled(
        id=0,
        at=at,
        text=text,
        spoiler=spoiler,
        unlisted=unlisted,
        reply_to=reply_to,
        poll=poll,
    )
    slot = keys.slot_of_user(author.id)
    receipt_keys, receipt_args = [], []
    if receipt is not None:
        receipt_keys = [receipt.key]
        receipt_args = [receipt.field, receipt.claimed, receipt.settled]

    def schedule(pipe) -> None:
        _SCHEDULE.queue(
            pipe,
            keys=[
                keys.scheduled(author.id),
                account_keys.user(author.id),
                *jobs.slot_keys(slot),
                *receipt_keys,
            ],
            args=[
                User.USERNAME_FIELD,
                User.DELETED_FIELD,
                author.id,
                entry.to_json(),
                int(at * 1000),
                SCHEDULED_MAX,
                SCHEDULED_PER_DAY,
                day_start,
                day_end,
                *receipt_args,
            ],
        )

    (n,) = pipeline_run(schedule)
    if n == -3:
        raise ReceiptLost()
    if n == 0:
        raise InvalidStatus("This account is deleted.")
    if n == -1:
        raise ScheduleRefused(_all_full())
    if n == -2:
        raise ScheduleRefused(_day_full())
    return replace(entry, id=int(n))


def scheduled_list(*, user: User) -> list[Scheduled]:
    """The user's statuses waiting for their time, soonest first."""
    rows = get_redis().hgetall(keys.scheduled(user.id))
    found = [
        Scheduled.from_json(int(n), value)
        for n, value in rows.items()
        if n != _NEXT and n.isdigit()
    ]
    return sorted(found, key=lambda s: (s.at, s.id))


def scheduled_get(*, user: User, n: int) -> Scheduled:
    """One of the user's scheduled statuses; NotFound when there is none (posted,
    cancelled, another's)."""
    value = get_redis().hget(keys.scheduled(user.id), n)
    if value is None:
        raise NotFound(n)
    return Scheduled.from_json(n, value)


def scheduled_cancel(*, user: User, n: int) -> bool:
    """Cancel a scheduled status: it will not be posted; False if it was not
    waiting (posted already, or cancelled); ScheduleRefused when its job has
    started to post it (a worker holds it, or it reserved its id and waits for a
    retry): it will be posted."""
    slot = keys.slot_of_user(user.id)
    done = _CANCEL(
        keys=[keys.scheduled(user.id), *jobs.slot_keys(slot), keys.job_failed(slot)],
        args=[n, schedule_job_id(user.id, n)],
    )
    if done == -1:
        raise ScheduleRefused(_BEING_POSTED)
    return bool(done)


def scheduled_move(*, user: User, n: int, at: float) -> Scheduled:
    """Move a scheduled status to another time (the same rules as scheduling it,
    the day's cap too); NotFound when it is not waiting any more; ScheduleRefused
    for the time, the day's cap, or when its job has started to post it."""
    at = kept_time(at)
    problem = _when_problem(at, time.time())
    if problem:
        raise ScheduleRefused(problem)
    r = get_redis()
    value = r.hget(keys.scheduled(user.id), n)
    if value is None:
        raise NotFound(n)
    old = Scheduled.from_json(n, value)
    moved = replace(old, at=at)  # its poll too: open its time from its posting
    slot = keys.slot_of_user(user.id)
    day_start, day_end = _day_of(at)
    done = _RESCHEDULE(
        keys=[keys.scheduled(user.id), *jobs.slot_keys(slot)],
        args=[
            n,
            value,
            moved.to_json(),
            schedule_job_id(user.id, n),
            int(at * 1000),
            SCHEDULED_PER_DAY,
            day_start,
            day_end,
        ],
    )
    if done == 0:
        raise NotFound(n)
    if done == -1:
        raise ScheduleRefused(_BEING_POSTED)
    if done == -2:
        raise ScheduleRefused(_day_full())
    return moved


def schedule_job_run(job: jobs.Job) -> None:
    """Run a `schedule` job (`schedule_job_id`): post the status, once (see the
    module's docstring), then drop it from the waiting list."""
    uid, n = job.args
    r = get_redis()
    value = r.hget(keys.scheduled(uid), n)
    if value is None:
        return  # cancelled, or posted by a run that stopped before the job's end
    entry = Scheduled.from_json(n, value)
    author = user_get(uid=uid)
    if author is None:
        r.hdel(keys.scheduled(uid), n)  # a deleted account posts nothing
        return
    if job.cursor == "0":
        (sid,) = ids.status_ids_take(author_id=uid)
        jobs.progress(job, cursor=str(sid))
    else:
        sid = int(job.cursor)
    post = {
        "author": author,
        "text": entry.text,
        "reserved_id": sid,
        "unlisted": entry.unlisted,
        "spoiler": entry.spoiler,
        # Its entry goes in the step that publishes it: a run again finds it gone
        # (even once its author deleted the status: it is not posted again).
        "scheduled_entry": n,
        # Its poll, open its seconds from now (Mastodon's, from its posting).
        "poll": polls.poll_asked(entry.poll) if entry.poll is not None else None,
    }
    try:
        if not (entry.reply_to is not None and _replied(entry.reply_to, post)):
            services.status_create(**post)
    except InvalidStatus as error:
        # The account was deleted meanwhile, or the rules changed: nothing to post.
        log.info("scheduled status %s of user %s not posted: %s", n, uid, error)
    r.hdel(keys.scheduled(uid), n)


def _replied(parent: int, post: dict) -> bool:
    """Post a scheduled reply; False when what it replies to is gone or hidden from
    its author since (it is then posted on its own: its text is not lost)."""
    try:
        social.status_reply(sid=parent, **post)
    except NotFound:
        return False
    return True
