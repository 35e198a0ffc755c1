"""Quote posts (Mastodon 4.5's): a status that quotes another shows it embedded
under its own text.

**What may be quoted.** A status the poster may see (`social.status_target`: not
across a block either way, not a private author's they are not approved for, not
another's direct message), public or unlisted; a private account's statuses only
by their own author, direct messages by no one, not even their author (Mastodon's
`quote_approval_policy`: public statuses quote automatically, others are refused;
the embed's check at read knows nothing of a direct message's people). A repost
is not quoted: its original is.

**What is stored.** The quoting status carries a copy of what its embed shows
(`Quote`: the quoted status's id, author, text, content warning, time, and the
id it quotes in turn) in its hash's `quote` field, as a repost carries its
original: every page renders the embed from the row it reads anyway, and checks
in the same round trip that the quoted status still stands and that the reader
may see it (`timeline.selectors`, `quote_seen`), showing "This post is
unavailable." and nothing of it otherwise; one whose author the reader blocked
or muted is folded under "Show anyway" (Mastodon's `blocked_account`,
`muted_account`). The quoted status's `quotes:{status:<sid>}` lists its quotes
(with a `quotes` count in its hash), written by the quote's request and again by
its post job (`social.link_posted`: the two statuses' slots differ, and the job
is the durable second step), removed by the quote's `unlinkq` job when it is
deleted, deleted whole by the quoted status's `unlink` job (its quotes stay,
unavailable; the quotes of its quotes are told it is deleted, their copy naming
it no more: `edits.quotes_inner_deleted`, since a page checks one level only).
An edit of the quoted status reaches the copies through its edit job
(`timeline.edits`), which walks `quotes`.

**Revoking.** The quoted status's author may detach a quote of it (Mastodon's
`revoke`, `quote_revoke`): the quote's copy is emptied and marked revoked (its
embed then says "This post is unavailable.", the API's Quote `revoked`), in its
hash, its author's outbox entry and its reposts', the statuses quoting it no
longer name the status it quoted (`edits.quotes_copy`), then it leaves the quoted
status's `quotes`. Two slots, so two steps, each idempotent: a revoke cut short
between them leaves the quote listed but showing nothing, and is completed by
asking again.

**Who is told.** The quoted author: "quoted your post" (`quote`), unless blocked
or muted (as for a mention, `timeline.notifications`); deleting the quote takes it
back.
"""

from __future__ import annotations

from dataclasses import replace

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript
from config.redis import get_redis
from timeline import edits, keys, services, social
from timeline.domain import MAX_STATUS_ID, Forbidden, NotFound, Poll, Quote, Status
from timeline.social import QUOTES_MAX, QuotesFull

__all__ = ["QUOTES_MAX", "QuotesFull", "quote_revoke", "quote_target", "status_quote"]

# KEYS: a status hash. ARGV: its `quote` field as read, the revoked one. Writes it
# while the hash holds what was read; returns 1 when it did.
_QUOTE_SET = LuaScript(
    """
if redis.call('HGET', KEYS[1], 'quote') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'quote', ARGV[2])
return 1
"""
)


def quote_target(*, user: User, sid: int) -> Status:
    """The status `user` would quote with `sid` (a repost's original): NotFound
    when it is gone or hidden from them, Forbidden when it may not be quoted (a
    direct message, by anyone; a private account's, but by its author)."""
    found = social.status_target(user=user, sid=sid)
    if found.direct:
        # Not even by its author (Mastodon's: private mentions are never quoted;
        # the API's `quote_approval` says `denied` to all): the quote's embed is
        # checked at read for the quoted author's privacy and blocks only, so a
        # public quote would show the message to everyone.
        raise Forbidden("A direct message cannot be quoted.")
    if found.author_id == user.id:
        return found
    if get_redis().hexists(account_keys.user(found.author_id), User.PRIVATE_FIELD):
        raise Forbidden("This account is private: its posts cannot be quoted.")
    return found


def _quote_of(quoted: Status) -> Quote:
    """The copy a new quote of `quoted` carries: one of a quote whose own quoted
    status is deleted says so (`Quote.quote_deleted`), as that deletion's job
    writes into the quotes it finds (`edits.quotes_inner_deleted`): one round
    trip more, for a quote of a quote only."""
    quote = Quote.of(quoted)
    if quote.quote_of is not None and not get_redis().exists(
        keys.status(quote.quote_of)
    ):
        return replace(quote, quote_of=None, quote_deleted=True)
    return quote


def status_quote(
    *,
    author: User,
    sid: int,
    text: str,
    limit: limits.Limit | None = None,
    reserved_id: int | None = None,
    unlisted: bool = False,
    spoiler: str = "",
    direct: bool = False,
    poll: Poll | None = None,
    reply_to: int | None = None,
) -> Status:
    """Post a status quoting status `sid` (`quote_target`'s rules: NotFound,
    Forbidden); else as `services.status_create` (`reply_to`: a reply too, as
    `social.status_reply`, NotFound for its parent as for the quoted status).
    QuotesFull when the quoted status has QUOTES_MAX quotes (the new status is
    taken back)."""
    quoted = quote_target(user=author, sid=sid)
    parent = (
        social.status_target(user=author, sid=reply_to)
        if reply_to is not None
        else None
    )
    if parent is not None and parent.direct:
        direct = True  # a reply to a direct message is one (`services`)
    status = services.status_create(
        reply_to=parent,
        author=author,
        text=text,
        limit=limit,
        reserved_id=reserved_id,
        unlisted=unlisted,
        spoiler=spoiler,
        direct=direct,
        poll=poll,
        quote=_quote_of(quoted),
    )
    if not social.link_posted(status=status):
        raise QuotesFull(
            f"This post was quoted {QUOTES_MAX:,} times, as many as a post may be."
        )
    # Edited since it was read: its edit job copies the version now.
    edits.repost_copy_check(original=quoted)
    return replace(status, quote_state="accepted")  # as `quote_target` found it


def quote_revoke(
    *, user: User, sid: int, quoting_id: int, limit: limits.Limit | None = None
) -> Status:
    """Detach status `quoting_id`'s quote of status `sid`, the user's own (Mastodon's
    `revoke`): the quote as it stands now, revoked. NotFound when `sid` is gone or
    hidden from the user or `quoting_id` does not quote it; Forbidden when `sid`
    is another's (Mastodon's QuotePolicy: only the quoted author revokes). With
    `limit` (the site's: `limits.like`), taken first or refused with
    TooManyAttempts. Idempotent."""
    if limit is not None:
        limits.take(limit)
    if not (0 < sid < MAX_STATUS_ID and 0 < quoting_id < MAX_STATUS_ID):
        raise NotFound(sid)
    found = {s.id: s for s in services.statuses_read([sid, quoting_id])}
    quoted, quoting = found.get(sid), found.get(quoting_id)
    if quoted is None or quoted.repost_of is not None:
        raise NotFound(sid)
    if quoted.author_id != user.id:
        social.status_target(user=user, sid=sid)  # NotFound: hidden from them
    if (
        quoting is None
        or quoting.quote is None
        or quoting.quote.id != sid
        or quoting.repost_of is not None  # a repost's copy follows its original's
    ):
        raise NotFound(quoting_id)
    if quoted.author_id != user.id:
        raise Forbidden("Only the quoted post's author may revoke a quote of it.")
    if not quoting.quote.revoked:
        revoked = quoting.quote.revoke()
        done = _QUOTE_SET(
            keys=[keys.status(quoting_id)],
            args=[quoting.quote.to_field(), revoked.to_field()],
        )
        if not done:
            raise NotFound(quoting_id)  # deleted or edited meanwhile: ask again
        quoting = replace(quoting, quote=revoked)
    edits.quote_copies_write([quoting])  # its outbox entry, its reposts
    # The statuses quoting it name the status it quoted no more (`Quote.edited`).
    edits.quotes_copy(quoting)
    # Then it leaves the quoted status's quotes (its count with it).
    social.quote_unlink(quoted=sid, quoting=quoting_id, author_id=quoting.author_id)
    return replace(quoting, quote_state="revoked")
