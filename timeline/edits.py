"""Edited statuses (Mastodon's edits): an author changes a status's text and content
warning after posting it; every page shows the new version, marked "Edited", and its
earlier versions stay readable (`status_history`).

**One atomic step, then a durable job.** The edit is one script in the status's
slot (`_EDIT`): it checks that the status stands, is the editor's and is not a
repost, keeps the version it replaces at the end of `edits:{status:<sid>}`, writes
the new text, warning, mentions and `edited` time into the hash, and queues the
status's `edit:<sid>` job beside them, so no crash separates the edit from the work
it owes. Every page that reads the hash (the status's page, every home it was pushed
to, profiles, tag pages) shows the new version at once. The job brings the copies in
line (`edit_job_run`): the author's outbox entry (an author merged at read), each
repost's hash and its reposter's outbox entry, each quote's copy of it
(`timeline.quotes`: the quoted text and warning its embed shows) in the quote's
hash, its author's outbox entry, its reposts' hashes and their reposters' outbox
entries (`quote_copies_write`), the tag timelines (a tag edited out leaves its
page and its trend; one edited in joins, for a public status) and the
"mentioned you" of people no longer mentioned. It reads the hash as it is when it
runs and writes what it reads, so it is idempotent; an edit made while it runs
queues it again (`timeline.jobs`), and the last run writes the last version.

**Who is told**, as Mastodon's: each person who reposted the status, "edited a
status you reposted" (`update`, once per edit: an edit again tells them again, a
rerun of the job does not). Nobody else: a name added by an edit is linked, but its
owner gets no notification (an edit is no way to ping people). **What an edit does
not do**: it keeps the status's place (id, time, replies, likes, reposts), and cannot
change what it replies to or whether it is unlisted. A repost carries its
original's current version, `edited` too; it cannot be edited itself.

**Caps.** EDITS_MAX versions are kept per status (past it the edit is refused with
a message, as Twitter caps edits); the key goes with the status (its unlink job).
An edit is taken from the author's posting budget.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, slot_of
from timeline import jobs, keys, notifications, richtext, services
from timeline.domain import (
    MAX_STATUS_ID,
    Forbidden,
    InvalidStatus,
    NotFound,
    Quote,
    Status,
    normalize_spoiler,
    normalize_text,
    text_problem,
)

EDITS_MAX = 20  # earlier versions kept per status; past it, edits are refused
EDIT_BATCH = 500  # reposts brought in line per round of the job


def _capped() -> InvalidStatus:
    return InvalidStatus(
        f"This status was edited {EDITS_MAX} times, as many as a status may be."
    )


@dataclass(frozen=True, slots=True)
class StatusVersion:
    """One version of a status: its text, content warning and mentions, and since
    when it was the status's (its posting, or the edit that made it)."""

    text: str
    spoiler: str
    mentions: tuple[tuple[str, int], ...]
    at: float

    @classmethod
    def from_json(cls, value: str) -> StatusVersion:
        row = json.loads(value)
        mentions = json.loads(row["mentions"]) if row.get("mentions") else {}
        return cls(
            text=row["text"],
            spoiler=row.get("spoiler") or "",
            mentions=tuple(sorted(mentions.items())),
            at=float(row["at"]),
        )

    @classmethod
    def of(cls, status: Status) -> StatusVersion:
        """A status's current version."""
        return cls(
            text=status.text,
            spoiler=status.spoiler,
            mentions=status.mentions,
            at=status.edited if status.edited is not None else status.created,
        )


# Lua: set_or_clear(hash, field, value) writes an optional field of a status hash
# (absent: none), or deletes it for ''.
_SET_OR_CLEAR = """
local function set_or_clear(hash, field, value)
  if value == '' then
    redis.call('HDEL', hash, field)
  else
    redis.call('HSET', hash, field, value)
  end
end
"""

# KEYS: the status hash, its versions, the job queue and data of its slot. ARGV: the
# editor's uid, the new text, warning ('' none), mentions as stored ('' none), the
# edit's time (unix s, as stored), EDITS_MAX, the edit job's id, now (ms). Returns
# 1 (edited: the replaced version kept, the job queued), 2 (nothing changed), 0 (no
# such status), -1 (another's), -2 (a repost), -3 (EDITS_MAX reached).
_EDIT = LuaScript(
    jobs.ENQUEUE
    + _SET_OR_CLEAR
    + """
local uid = redis.call('HGET', KEYS[1], 'uid')
if not uid then return 0 end
if uid ~= ARGV[1] then return -1 end
if redis.call('HEXISTS', KEYS[1], 'repost_of') == 1 then return -2 end
local old = redis.call(
  'HMGET', KEYS[1], 'text', 'spoiler', 'mentions', 'edited', 'created')
if old[1] == ARGV[2] and (old[2] or '') == ARGV[3] then return 2 end
if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[6]) then return -3 end
redis.call('RPUSH', KEYS[2], cjson.encode({
  text = old[1], spoiler = old[2] or '', mentions = old[3] or '',
  at = old[4] or old[5]}))
redis.call('HSET', KEYS[1], 'text', ARGV[2], 'edited', ARGV[5])
set_or_clear(KEYS[1], 'spoiler', ARGV[3])
set_or_clear(KEYS[1], 'mentions', ARGV[4])
enqueue(KEYS[3], KEYS[4], ARGV[7], ARGV[8], ARGV[8])
return 1
"""
)


# KEYS: a repost's hash. ARGV: its original's id, then the original's editable
# fields' values ('' for none), in Status.EDITABLE's order. Copies them, while the
# hash stands and is that original's repost; returns 1 when it did.
_REPOST_COPY = LuaScript(
    _SET_OR_CLEAR
    + """
if redis.call('HGET', KEYS[1], 'repost_of') ~= ARGV[1] then return 0 end
for i, field in ipairs({'text', 'spoiler', 'mentions', 'edited'}) do
  set_or_clear(KEYS[1], field, ARGV[1 + i])
end
return 1
"""
)

# KEYS: an outbox. ARGV: sid, entry. Rewrites the entry if the outbox holds one (an
# author merged at read); returns 1 when it did.
_OUTBOX_SET = LuaScript(
    """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""
)


# KEYS: a quoting status's hash. ARGV: its `quote` field as read, the field with
# the quoted status's current version. Writes it while the hash holds what was
# read (its quote's id and author never change: only an edit's copy does); returns
# 1 when it did.
_QUOTE_COPY = LuaScript(
    """
if redis.call('HGET', KEYS[1], 'quote') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'quote', ARGV[2])
return 1
"""
)


def edit_job_id(sid: int) -> str:
    """The job that brings an edited status's copies in line (`edit_job_run`)."""
    return jobs.job_id("edit", sid)


def status_edit(
    *,
    user: User,
    sid: int,
    text: str,
    spoiler: str = "",
    limit: limits.Limit | None = None,
) -> Status:
    """Edit a status of the user's own: its text and content warning (the length
    rule of a new status); the status as edited. NotFound when it does not exist,
    Forbidden for another's or a repost, InvalidStatus for a refused text or past
    EDITS_MAX; with `limit` (the posting budget), taken or TooManyAttempts, only by
    an edit that changes the status: one that changes nothing records nothing."""
    text = normalize_text(text)
    spoiler = normalize_spoiler(spoiler)
    problem = text_problem(text, spoiler)
    if problem:
        raise InvalidStatus(problem)
    names = richtext.mentioned_names(text)

    def read(pipe) -> None:
        services.mentions_queue(pipe, names)
        pipe.hmget(keys.status(sid), Status.FIELDS)
        pipe.llen(keys.edits(sid))

    *claims, row, versions = pipeline_run(read, confirm=False)
    # What the atomic step refuses, refused before the posting budget is taken:
    # only an edit that changes the status pays for one (the step checks again).
    found = Status.from_fields(sid, row)
    if found is None:
        raise NotFound(sid)
    if found.author_id != user.id:
        raise Forbidden("Only its author can edit a status.")
    if found.repost_of is not None:
        raise Forbidden("A repost cannot be edited: edit the original.")
    if (found.text, found.spoiler) == (text, spoiler):
        return found
    if versions >= EDITS_MAX:
        raise _capped()
    if limit is not None:
        limits.take(limit)
    mentions = services.mentions_from(names, claims)
    stored = (
        json.dumps(mentions, separators=(",", ":"), ensure_ascii=False)
        if mentions
        else ""
    )
    slot = slot_of(keys.status(sid))

    def edit(pipe) -> None:
        _EDIT.queue(
            pipe,
            keys=[keys.status(sid), keys.edits(sid), *jobs.slot_keys(slot)],
            args=[
                user.id,
                text,
                spoiler,
                stored,
                f"{time.time():.3f}",
                EDITS_MAX,
                edit_job_id(sid),
                jobs.now_ms(),
            ],
        )
        pipe.barrier()
        jobs.wake_queue(pipe, slot=slot)
        pipe.hmget(keys.status(sid), Status.FIELDS)

    done, *_, row = pipeline_run(edit)
    if done == 0:
        raise NotFound(sid)
    if done == -1:
        raise Forbidden("Only its author can edit a status.")
    if done == -2:
        raise Forbidden("A repost cannot be edited: edit the original.")
    if done == -3:
        raise _capped()
    status = Status.from_fields(sid, row)
    if status is None:  # deleted right after the edit
        raise NotFound(sid)
    # Open streams that may show it read it again (`api.streaming`).
    get_redis().publish(keys.stream_edited(), sid)
    return status


def status_history(sid: int) -> list[StatusVersion]:
    """The versions of a status, oldest first, the current one last (one version
    for a status never edited); [] when it does not exist."""

    def read(pipe) -> None:
        pipe.hmget(keys.status(sid), Status.IMMUTABLE)
        pipe.lrange(keys.edits(sid), 0, -1)

    row, earlier = pipeline_run(read, confirm=False)
    status = Status.from_fields(sid, row)
    if status is None:
        return []
    if status.repost_of is not None:
        return status_history(status.repost_of)
    return [StatusVersion.from_json(v) for v in earlier] + [StatusVersion.of(status)]


def edit_job_run(job: jobs.Job) -> None:
    """Run an `edit` job (`edit_job_id`): bring the copies of the status's current
    version in line, its tags' timelines and the notifications of who it no longer
    mentions (see the module's docstring)."""
    (sid,) = job.args
    r = get_redis()
    row, earlier = pipeline_run(
        lambda pipe: [
            pipe.hmget(keys.status(sid), Status.IMMUTABLE),
            pipe.lrange(keys.edits(sid), 0, -1),
        ],
        confirm=False,
    )
    status = Status.from_fields(sid, row)
    if status is None or status.repost_of is not None:
        return  # deleted since: its unlink job removes what is left
    if status.direct:
        # No copies, no tag, no trend; its audience, told when it was posted,
        # stays as it was (`timeline.direct`).
        return
    versions = [StatusVersion.from_json(v) for v in earlier]
    author = status.author_id
    private = r.hexists(account_keys.user(author), User.PRIVATE_FIELD)
    was_named = {uid for v in versions for _, uid in v.mentions}
    unnamed = was_named - set(status.mentioned_ids) - {author}
    old_tags = {tag for v in versions for tag in richtext.filed_tags(v.text)}
    dropped = sorted(old_tags - set(richtext.hashtags(status.text)))

    def first(pipe) -> None:
        _OUTBOX_SET.queue(
            pipe, keys=[keys.outbox(author)], args=[sid, status.to_json()]
        )
        for uid in sorted(unnamed):
            notifications.unnotify_queue(
                pipe, recipient=uid, kind="mention", actor=author, sid=sid
            )
        if dropped:
            # Out of the pages of the tags it no longer carries, and out of their
            # trends for good (`services.tags_remove_queue`'s rule, tag by tag).
            for tag in dropped:
                pipe.zrem(keys.tag_timeline(tag), sid)
            if not status.unlisted:
                services.trends_count_queue(
                    pipe, status=status, tags=dropped, up=False, final=True
                )

    pipeline_run(first)
    if not status.unlisted and not private:
        # Into the pages of the tags it carries now (those it had stay); the
        # global timeline keeps it where it is (an old status of an account that
        # turned public again stays out of it, as `timeline.privacy` has it).
        services.status_publish(status=status, everyone=False)
    # Every run, whatever the reposts' cursor: a quote already in line is only
    # read (`quotes_copy`), at most QUOTES_MAX of them.
    quotes_copy(status)
    _reposts_copy(job, status)


def quotes_copy(status: Status, *, inner_deleted: bool = False) -> None:
    """Copy the status's current text and warning (and whether its own quote
    stands: `Quote.edited`; `inner_deleted`: the status it quotes was deleted, its
    unlink job's call, `quotes_inner_deleted`) into each status quoting it
    (`timeline.quotes`) and
    the copies of that quote (`quote_copies_write`: its
    author's outbox entry, its reposts and their reposters' outbox entries),
    EDIT_BATCH at a time (at most QUOTES_MAX). A quote whose hash is in line
    already has its copies written again: a run cut short between the hash and
    its copies left them behind, and a rerun completes them (idempotent). Its
    edit job runs it, and a revoke of its quote (`quotes.quote_revoke`)."""
    r = get_redis()
    cursor = 0
    while True:
        cursor, rows = r.zscan(keys.quotes(status.id), cursor, count=EDIT_BATCH)
        sids = [int(score) for _, score in rows]
        if sids:
            found = [
                q
                for q in services.statuses_read(sids)
                if q.quote is not None and q.quote.id == status.id
            ]
            new = {
                q.id: q.quote.edited(status, inner_deleted=inner_deleted) for q in found
            }
            stale = [q for q in found if new[q.id] != q.quote]

            def copy(pipe, stale=stale, new=new) -> None:
                for q in stale:
                    assert q.quote is not None
                    _QUOTE_COPY.queue(
                        pipe,
                        keys=[keys.status(q.id)],
                        args=[q.quote.to_field(), new[q.id].to_field()],
                    )

            written = dict(
                zip(
                    [q.id for q in stale],
                    pipeline_run(copy) if stale else [],
                    strict=True,
                )
            )
            # Those the hash holds now (one deleted or revoked meanwhile: not).
            copied = [
                replace(q, quote=new[q.id])
                for q in found
                if q.quote is not None and written.get(q.id, 1)
            ]
            quote_copies_write(copied)
            # A revoke writes its hash, then its copies: one whose hash changed
            # since this job read it has its copies written again, as the hash
            # holds it now, so neither order leaves a copy the revoke emptied
            # holding the quoted text.
            now = {q.id: q for q in services.statuses_read([q.id for q in copied])}
            quote_copies_write(
                [
                    now[q.id]
                    for q in copied
                    if q.id in now and now[q.id].quote != q.quote
                ]
            )
        if cursor == 0:
            return


def quotes_inner_deleted(sid: int) -> None:
    """The deleted status `sid`'s unlink job's walk two levels up: each status
    quoting a status that quotes it says, in its copy of that quote, that the
    status it quoted is deleted (`Quote.quote_deleted`: the API's nested
    ShallowQuote; the site's embed links it no more). The first level needs
    nothing: a page checks the quoted status stands as it reads the row. At most
    QUOTES_MAX quotes of it, each walked as `quotes_copy` walks (at most QUOTES_MAX
    each), EDIT_BATCH at a time; idempotent (a rerun finds them in line)."""
    r = get_redis()
    cursor = 0
    while True:
        cursor, rows = r.zscan(keys.quotes(sid), cursor, count=EDIT_BATCH)
        quoting = [int(score) for _, score in rows]
        for q in services.statuses_read(quoting) if quoting else []:
            if q.quote is not None and q.quote.id == sid and q.repost_of is None:
                quotes_copy(q, inner_deleted=True)
        if cursor == 0:
            return


def quote_inner_gone(quoting: Status, raw: str) -> None:
    """A quote of a quote, just linked into its quoted status's quotes (`raw`: its
    hash's `quote` field as read after): when the status that one quotes in turn
    is gone, its copy says so (`Quote.quote_deleted`), as the deletion's walk
    (`quotes_inner_deleted`) would have, had it found it linked. Its request's
    check (`quotes.status_quote`) could find it standing and the walk come before
    the link: in either order one of the two sees the other. Idempotent."""
    r = get_redis()
    for _ in range(3):  # an edit's copy written meanwhile: read again
        quote = Quote.from_field(raw)
        if quote is None or quote.revoked or quote.quote_of is None:
            return
        if r.exists(keys.status(quote.quote_of)):
            return
        new = replace(quote, quote_of=None, quote_deleted=True)
        if _QUOTE_COPY(keys=[keys.status(quoting.id)], args=[raw, new.to_field()]):
            quote_copies_write([replace(quoting, quote=new)])
            return
        raw = r.hget(keys.status(quoting.id), "quote")


# KEYS: a repost's hash. ARGV: its original's id, the original's `quote` field.
# Copies it while the hash stands and is that original's repost.
_REPOST_QUOTE_SET = LuaScript(
    """
if redis.call('HGET', KEYS[1], 'repost_of') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'quote', ARGV[2])
return 1
"""
)


def quote_copies_write(quotings: list[Status]) -> None:
    """Bring the copies of these statuses' quotes (each as its hash holds it: an
    edit's, a revoke's, `timeline.quotes`) in line: its author's outbox entry, its
    reposts' hashes and their reposters' outbox entries (each a page may show).
    Two round trips and one for each's reposts; idempotent."""
    if not quotings:
        return
    listed = pipeline_run(
        lambda pipe: [
            pipe.zrange(keys.reposts(q.id), 0, -1, withscores=True) for q in quotings
        ]
    )
    # repost sid -> (reposter uid, the quoting status)
    reposts = {
        int(repost): (int(reposter), q)
        for q, rows in zip(quotings, listed, strict=True)
        for reposter, repost in rows
    }

    def copy(pipe) -> None:
        for q in quotings:
            _OUTBOX_SET.queue(
                pipe, keys=[keys.outbox(q.author_id)], args=[q.id, q.to_json()]
            )
        for repost, (_, q) in reposts.items():
            assert q.quote is not None
            _REPOST_QUOTE_SET.queue(
                pipe, keys=[keys.status(repost)], args=[q.id, q.quote.to_field()]
            )
        pipe.barrier()
        for repost in reposts:
            pipe.hmget(keys.status(repost), Status.IMMUTABLE)

    rows = pipeline_run(copy)[len(quotings) + len(reposts) :]
    copies = [
        found
        for repost, row in zip(reposts, rows, strict=True)
        if (found := Status.from_fields(repost, row)) is not None
    ]
    if copies:
        pipeline_run(
            lambda pipe: [
                _OUTBOX_SET.queue(
                    pipe,
                    keys=[keys.outbox(reposts[c.id][0])],
                    args=[c.id, c.to_json()],
                )
                for c in copies
            ]
        )


def _reposts_copy(job: jobs.Job, status: Status) -> None:
    """Copy the status's current version into each of its reposts and their
    reposters' outbox entries, EDIT_BATCH at a time, the reposts zset walked by
    ZSCAN from the job's cursor."""
    r = get_redis()
    values = [
        "" if (value := status.to_hash().get(f)) is None else value
        for f in Status.EDITABLE
    ]
    cursor = int(job.cursor or 0)
    while True:
        cursor, rows = r.zscan(keys.reposts(status.id), cursor, count=EDIT_BATCH)
        reposts = {int(score): int(reposter) for reposter, score in rows}

        def copy(pipe, reposts=reposts) -> None:
            for repost in reposts:
                _REPOST_COPY.queue(
                    pipe, keys=[keys.status(repost)], args=[status.id, *values]
                )
            pipe.barrier()
            for repost in reposts:
                pipe.hmget(keys.status(repost), Status.IMMUTABLE)

        if reposts:
            rows_after = pipeline_run(copy)[len(reposts) :]
            copies = [
                found
                for repost, fields in zip(reposts, rows_after, strict=True)
                if (found := Status.from_fields(repost, fields)) is not None
            ]

            def tell(pipe, copies=copies, reposts=reposts) -> None:
                # The reposters' outbox entries, and "edited a status you
                # reposted" (Mastodon's `update`), once per edit.
                for copy in copies:
                    _OUTBOX_SET.queue(
                        pipe,
                        keys=[keys.outbox(reposts[copy.id])],
                        args=[copy.id, copy.to_json()],
                    )
                    notifications.notify_queue(
                        pipe,
                        recipient=reposts[copy.id],
                        kind="update",
                        actor=status.author_id,
                        sid=status.id,
                        at_ms=int((status.edited or status.created) * 1000),
                        conversation=status.conversation_id,
                        again=True,
                    )

            pipeline_run(tell)
        if cursor == 0:
            return
        jobs.progress(job, cursor=str(cursor))


def versions_unlink(sid: int) -> None:
    """After status `sid` was deleted (its `unlink` job, before its versions go):
    take it out of what its earlier versions filed and told. The delete reads the
    current version only (its tags, its mentions), and an edit's job that finds
    the status gone stops, so a status edited then deleted before that job ran
    would stay on the pages and in the trends of the tags it had, and in the
    notifications of the people it named, before the edit."""
    earlier = get_redis().lrange(keys.edits(sid), 0, -1)
    if not earlier:
        return
    versions = [StatusVersion.from_json(v) for v in earlier]
    tags = sorted({tag for v in versions for tag in richtext.filed_tags(v.text)})
    named = sorted({uid for v in versions for _, uid in v.mentions})
    # The first version's time is the status's (its trends' hour).
    gone = Status(id=sid, author_id=0, author="", text="", created=versions[0].at)

    def unfile(pipe) -> None:
        for tag in tags:
            pipe.zrem(keys.tag_timeline(tag), sid)
        services.trends_count_queue(pipe, status=gone, tags=tags, up=False)
        for uid in named:
            notifications.notifications_forget_status_queue(
                pipe, recipient=uid, sid=sid
            )

    pipeline_run(unfile)


def first_named(status: Status) -> set[int] | None:
    """The users an edited status's first version named (an edit tells nobody new,
    so a post job that runs after an edit tells only them); None for a status
    never edited."""
    if status.edited is None or status.repost_of is not None:
        return None
    first = get_redis().lindex(keys.edits(status.id), 0)
    if first is None:
        return set()  # deleted since: nobody
    return {uid for _, uid in StatusVersion.from_json(first).mentions}


def repost_copy_check(*, original: Status) -> None:
    """After a repost of `original` was made from its version as read: if the
    original was edited since (a repost made while its edit job walked the reposts
    may have been missed), queue that job again, which copies the version now."""
    r = get_redis()
    edited = r.hget(keys.status(original.id), "edited")
    now = float(edited) if edited else None
    if now != original.edited:
        jobs.enqueue(
            slot=slot_of(keys.status(original.id)), jid=edit_job_id(original.id)
        )


def editable_get(*, user: User, sid: int) -> Status:
    """A status `user` may edit (their own, not a repost), as it stands; NotFound
    for any other (their edit page does not tell whose a status is)."""
    if not 0 < sid < MAX_STATUS_ID:
        raise NotFound(sid)
    found = Status.from_fields(sid, get_redis().hmget(keys.status(sid), Status.FIELDS))
    if found is None or found.author_id != user.id or found.repost_of is not None:
        raise NotFound(sid)
    return found
