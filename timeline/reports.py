"""Reports: a person flags an account, and some of its statuses, to the people who
run the site (Mastodon's reports); operators read and settle them with
`manage.py reports`.

A report is a hash (`keys.report`) listed in the open zset, oldest first, until an
operator settles it; it then moves to the settled zset, which keeps the newest
REPORTS_SETTLED_MAX (the oldest settled go with their hashes). Every report key
carries the tag `{reports}`: one slot, so filing one is two short scripts (its id
from the counter under the open zset's cap; then the hash and its entry, the cap
checked again, never over a report of that id), and settling one is another
(then the oldest settled past the cap go, in a script naming their hashes).
One slot for all reports is fine: they are rare (RATE_LIMIT_REPORT a user) and read
by operators only, unlike statuses, which every page reads.

A report keeps a copy of each status it flags as it stood when filed (text, content
warning, time): the author may edit or delete it since, and the operator must still
read what was reported. The copy is read in one round trip before the script (the
statuses live in their own slots); a status deleted in between is still copied as
it was read. At most REPORT_STATUSES_MAX statuses a report; the open zset holds at
most REPORTS_OPEN_MAX: past it, a report is refused with a message, never dropped.

Deleting an account deletes none of this: reports it filed and reports about it
stay (the names are kept in the report; the listing says who is gone since).

Categories: Mastodon's `spam`, `legal` and `other`. Its `violation` names the
server's rules (`rule_ids`), and this site has none (`/api/v1/instance/rules` is
empty): a report may not claim one (`CategoryRefused`), as Mastodon refuses a
violation without valid rules.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from django.conf import settings

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from accounts.selectors import user_get
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis
from timeline import keys
from timeline.domain import MAX_STATUS_ID, NotFound, Profile, Refused, Status

CATEGORIES = ("spam", "legal", "other")
# Mastodon's Report::COMMENT_SIZE_LIMIT.
COMMENT_MAX = 1000


class ReportRefused(Refused):
    """A report refused for what it asks: the message says why."""


class CannotReportSelf(ReportRefused):
    pass


class ReportsFull(ReportRefused):
    pass


class ReportIdTaken(RuntimeError):
    """The id counter gave an id a report has: an operator's fault (the counter was
    lost), never a person's; nothing is written over."""


@dataclass(frozen=True, slots=True)
class FlaggedStatus:
    """A flagged status as it stood when reported."""

    id: int
    text: str
    spoiler: str
    created: float

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "text": self.text,
            "spoiler": self.spoiler,
            "created": self.created,
        }

    @classmethod
    def from_dict(cls, value: dict) -> FlaggedStatus:
        return cls(
            id=int(value["id"]),
            text=str(value.get("text", "")),
            spoiler=str(value.get("spoiler", "")),
            created=float(value.get("created", 0)),
        )


@dataclass(frozen=True, slots=True)
class Report:
    """A report. The one owner of the `report:{reports}:<id>` hash layout."""

    id: int
    reporter_id: int
    reporter: str
    target_id: int
    target: str
    category: str
    comment: str
    created: float  # unix seconds
    statuses: tuple[FlaggedStatus, ...] = ()
    settled: float | None = None
    note: str = ""

    @property
    def status_ids(self) -> tuple[int, ...]:
        return tuple(s.id for s in self.statuses)

    def to_hash(self) -> dict[str, str]:
        """The fields a new report is written with (its id is the script's)."""
        return {
            "reporter": str(self.reporter_id),
            "reporter_name": self.reporter,
            "target": str(self.target_id),
            "target_name": self.target,
            "category": self.category,
            "comment": self.comment,
            "created": str(int(self.created * 1000)),
            "statuses": json.dumps(
                [s.to_dict() for s in self.statuses], separators=(",", ":")
            ),
        }

    @classmethod
    def from_hash(cls, values: dict[str, str]) -> Report | None:
        if not values or "id" not in values:
            return None
        settled = values.get("settled")
        return cls(
            id=int(values["id"]),
            reporter_id=int(values.get("reporter", 0)),
            reporter=values.get("reporter_name", ""),
            target_id=int(values.get("target", 0)),
            target=values.get("target_name", ""),
            category=values.get("category", "other"),
            comment=values.get("comment", ""),
            created=int(values.get("created", 0)) / 1000,
            statuses=tuple(
                FlaggedStatus.from_dict(s)
                for s in json.loads(values.get("statuses") or "[]")
            ),
            settled=int(settled) / 1000 if settled else None,
            note=values.get("note", ""),
        )


# Filing is two scripts, each declaring every key it touches (a Cluster's rule; the
# report's key is known only once its id is). First the id: KEYS: the open zset,
# the id counter; ARGV: the open cap. -1 past the cap (no id is spent), else the
# next id. Then the report: KEYS: the open zset, the report's hash; ARGV: the open
# cap, its id, the time (ms), then the hash's fields and values. -1 past the cap (a
# report filed in between filled it), -2 when a report has that id already (the
# counter was lost: never written over), else the id. Between the two, only an id
# may be spent: nothing is half written.
_NEXT_ID = LuaScript(
    """
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
return redis.call('INCR', KEYS[2])
"""
)
_FILE = LuaScript(
    """
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -2 end
redis.call('HSET', KEYS[2], 'id', ARGV[2], unpack(ARGV, 4))
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
return tonumber(ARGV[2])
"""
)

# KEYS: the open zset, the settled zset, the report. ARGV: its id, the time (ms),
# the operator's note. Returns -1 when there is no such report, 0 when settled
# already, 1 when settled now.
_SETTLE = LuaScript(
    """
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[3], 'settled', ARGV[2], 'note', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
"""
)

# KEYS: the settled zset, then the hashes of the reports ARGV names (ids), those
# past REPORTS_SETTLED_MAX when read. Each still settled leaves the zset with its
# hash (a report another settle's drop took already is skipped). Returns how many
# went. Its own script after `_SETTLE`: the keys it drops are known only once the
# zset is read, and a script declares every key it touches.
_DROP_SETTLED = LuaScript(
    """
local gone = 0
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('DEL', KEYS[i + 1])
    gone = gone + 1
  end
end
return gone
"""
)


def _flagged(*, reporter: User, target: User, sids: list[int]) -> list[Status]:
    """The statuses `sids` as `reporter` may see them, each of `target`'s own (no
    repost); else NotFound (Mastodon's 404 for a status not among the account's
    visible ones). One round trip."""
    if not sids:
        return []
    author = target.id

    def read(pipe) -> None:
        for sid in sids:
            pipe.hmget(keys.status(sid), Status.IMMUTABLE)
        pipe.zscore(keys.blocked_by(reporter.id), author)
        pipe.hexists(account_keys.user(author), User.PRIVATE_FIELD)
        pipe.zscore(keys.followers(author), reporter.id)

    replies = pipeline_run(read, confirm=False)
    blocked_by, private, admitted = replies[len(sids) :]
    found = []
    for sid, values in zip(sids, replies, strict=False):
        status = Status.from_fields(sid, values)
        if status is None or status.author_id != author:
            raise NotFound(sid)
        if status.repost_of is not None:
            # Another's words (whom the reporter may not see: a repost carries its
            # original's text), never the target's own: as the site's form, which
            # offers none; the original's author is the one to report.
            raise NotFound(sid)
        if not status.visible_to(reporter.id):
            raise NotFound(sid)  # another's direct message
        # Blocked by them: hidden (Mastodon's AccountStatusesFilter). Blocking
        # them hides nothing: block, then report their threats.
        if blocked_by is not None:
            raise NotFound(sid)
        if private and admitted is None and not status.direct:
            raise NotFound(sid)
        found.append(status)
    return found


def status_queue(reads, sid: int | None):
    """Queue the read of status `sid` as filed (its own hash, no check: the caller
    applies the profile's, read in the same round trip), for the report form's
    `?status=` older than the profile's first page. None for no id."""
    if sid is None or not 0 < sid < MAX_STATUS_ID:
        return None
    return reads.queue(
        lambda pipe: pipe.hmget(keys.status(sid), Status.IMMUTABLE),
        lambda replies: Status.from_fields(sid, replies[0]),
    )


def offered(found: Profile, extra: Status | None, viewer: int) -> list[Status]:
    """The statuses the report form offers to tick: the profile's first page of
    the owner's own (no reposts), and `extra` (`status_queue`) first when it is
    theirs too, not among them, and the profile shows the viewer their statuses
    (no block either way, not a private account they do not follow) and it is not
    another's direct message."""
    owner = found.user.id
    shown = [s for s in found.page.statuses if s.author_id == owner and not s.repost_of]
    hidden = found.viewer_blocks or found.blocks_viewer or found.protected
    if (
        extra is not None
        and not hidden
        and extra.author_id == owner
        and extra.repost_of is None
        and extra.visible_to(viewer)
        and extra.id not in {s.id for s in shown}
    ):
        shown.insert(0, extra)
    return shown


def report_file(
    *,
    reporter: User,
    target_id: int,
    category: str = "other",
    comment: str = "",
    status_ids: list[int] | tuple[int, ...] = (),
    limit: limits.Limit | None = None,
) -> Report:
    """File a report of user `target_id` (and some of their statuses) for the
    operators. NotFound for an unknown account or a status not theirs or not
    visible to the reporter; ReportRefused for oneself, a bad category, a comment
    past COMMENT_MAX, too many statuses or a full queue; with `limit`
    (`limits.report`), taken once the rest is checked (a refusal costs none) or
    refused with TooManyAttempts."""
    if target_id == reporter.id:
        raise CannotReportSelf("You cannot report yourself.")
    if category not in CATEGORIES:
        raise ReportRefused(
            "Choose why: spam, legal or other (this site has no rules to cite)."
        )
    if len(comment) > COMMENT_MAX:
        raise ReportRefused(
            f"The comment is {len(comment):,} characters; at most {COMMENT_MAX:,}."
        )
    sids = list(dict.fromkeys(status_ids))
    most = settings.REPORT_STATUSES_MAX
    if len(sids) > most:
        raise ReportRefused(f"A report may flag at most {most} statuses.")
    target = user_get(uid=target_id)
    if target is None:
        raise NotFound(target_id)
    flagged = _flagged(reporter=reporter, target=target, sids=sids)
    # Taken once the report is known good: a refused one (a ticked status deleted
    # since) costs no attempt. A full queue still does: it is checked as it is
    # written.
    if limit is not None:
        limits.take(limit)
    now = time.time()
    report = Report(
        id=0,
        reporter_id=reporter.id,
        reporter=reporter.username,
        target_id=target.id,
        target=target.username,
        category=category,
        comment=comment,
        created=int(now * 1000) / 1000,
        statuses=tuple(
            FlaggedStatus(
                id=s.id, text=s.text, spoiler=s.spoiler, created=float(s.created)
            )
            for s in flagged
        ),
    )
    fields = [v for pair in report.to_hash().items() for v in pair]
    cap = settings.REPORTS_OPEN_MAX
    given = int(_NEXT_ID(keys=[keys.reports_open(), keys.report_ids()], args=[cap]))
    rid = given
    if given > 0:
        rid = _FILE(
            keys=[keys.reports_open(), keys.report(given)],
            args=[cap, given, int(report.created * 1000), *fields],
        )
    if rid == -2:
        raise ReportIdTaken(
            f"Report #{given} exists already: the counter {keys.report_ids()} is "
            "behind the reports; set it to the highest report id."
        )
    if rid < 0:
        raise ReportsFull(
            "The people who run this site have too many reports to read just now; "
            "please try again later."
        )
    return Report(**{**_as_dict(report), "id": int(rid)})


def _as_dict(report: Report) -> dict:
    return {name: getattr(report, name) for name in Report.__slots__}


def report_get(*, rid: int) -> Report | None:
    """Report `rid`, open or settled; None when there is none (or no more)."""
    return Report.from_hash(get_redis().hgetall(keys.report(rid)))


def reports_list(*, settled: bool = False, limit: int = 100) -> list[Report]:
    """The open reports, oldest first (settled: the settled, newest first): one
    round trip for the ids, one for the hashes (all in one slot)."""
    r = get_redis()
    if settled:
        ids = r.zrevrange(keys.reports_settled(), 0, limit - 1)
    else:
        ids = r.zrange(keys.reports_open(), 0, limit - 1)
    if not ids:
        return []
    rows = pipeline_run(
        lambda pipe: [pipe.hgetall(keys.report(int(i))) for i in ids], confirm=False
    )
    return [found for row in rows if (found := Report.from_hash(row)) is not None]


def reports_count(*, settled: bool = False) -> int:
    """How many reports are open (settled: kept settled)."""
    key = keys.reports_settled() if settled else keys.reports_open()
    return int(get_redis().zcard(key))


@dataclass(frozen=True, slots=True)
class Standing:
    """What is left now of a report's people and statuses."""

    users: frozenset[int]  # of its reporters and targets, those still here
    statuses: frozenset[int]  # of its flagged statuses, those still standing


def standing_get(reports: list[Report]) -> Standing:
    """Which of the reports' people and statuses still exist: one round trip."""
    uids = sorted({u for r in reports for u in (r.reporter_id, r.target_id)})
    sids = sorted({s for r in reports for s in r.status_ids})

    def read(pipe) -> None:
        for uid in uids:
            pipe.hmget(account_keys.user(uid), User.FIELDS)
        for sid in sids:
            pipe.exists(keys.status(sid))

    replies = pipeline_run(read, confirm=False) if uids or sids else []
    users = frozenset(
        uid
        for uid, values in zip(uids, replies[: len(uids)], strict=True)
        if User.from_fields(uid, values) is not None
    )
    statuses = frozenset(
        sid for sid, there in zip(sids, replies[len(uids) :], strict=True) if there
    )
    return Standing(users=users, statuses=statuses)


SETTLED = 1
ALREADY = 0
UNKNOWN = -1


def report_settle(*, rid: int, note: str = "") -> int:
    """Settle report `rid`: it leaves the open reports for the settled ones, with
    the operator's note; SETTLED, ALREADY (settled before) or UNKNOWN."""
    outcome = int(
        _SETTLE(
            keys=[keys.reports_open(), keys.reports_settled(), keys.report(rid)],
            args=[rid, time.time_ns() // 1_000_000, note],
        )
    )
    if outcome == SETTLED:
        settled_trim()
    return outcome


def settled_trim() -> int:
    """Drop the oldest settled reports past REPORTS_SETTLED_MAX, with their hashes:
    one read, then one script (skipped when none are past it). A settle that
    stopped before this leaves the zset one over, until the next settle's trim."""
    cap = settings.REPORTS_SETTLED_MAX
    past = [int(i) for i in get_redis().zrange(keys.reports_settled(), 0, -cap - 1)]
    if not past:
        return 0
    return int(
        _DROP_SETTLED(
            keys=[keys.reports_settled(), *(keys.report(i) for i in past)],
            args=past,
        )
    )
