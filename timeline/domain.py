"""Timeline domain types and errors, and the status text rule.

The text rule (`normalize_text`, `text_problem`) is the one the service applies to
every post and the site's form shows: a status is at most STATUS_MAX_LENGTH
characters as `text_length` counts them (what a reader sees as one character, a
grapheme cluster, as Mastodon and its apps count; each link URL_LENGTH, as the
client API's instance tells clients: `characters_reserved_per_url`), and at most
RAW_LENGTH_FACTOR times that in code points, written out. static/js/site.js's
compose counter follows it.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import ClassVar

import regex
from django.conf import settings

from accounts.domain import Card, User, UserRef
from config.reverse import url_for
from timeline import richtext

MAX_STATUS_ID = 2**53  # ids are zset scores too: exact in a double up to here


# Characters that show nothing: Unicode's Default_Ignorable_Code_Point (zero-width
# spaces and joiners, bidi controls, the Hangul fillers, variation selectors, tags)
# and the braille blank. Any other format (Cf), space or control character shows
# nothing either. Inside visible text they stay (a joiner makes one emoji of several).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# Control characters other than the line break, and lone surrogates (no UTF-8 form).
_UNWANTED = {"Cc", "Cs"}


def normalize_text(text: str) -> str:
    """The text as stored: Unix line breaks, tabs as spaces, no other control
    character, no surrounding blanks, composed (NFC).

    Composed, so that one text is stored, counted and searched the same however it
    was typed: `café` with its accent apart (NFD, as some keyboards send it) would be
    a tag `cafe` and count one more. (Statuses, names and bios stored before are
    read as they are: nothing compares stored text with new.)"""
    # splitlines() knows every line break: \r\n, \r, \v, \f, U+0085, U+2028, ...
    text = "\n".join(text.replace("\t", " ").splitlines())
    if not text.isprintable():
        text = "".join(
            c for c in text if c == "\n" or unicodedata.category(c) not in _UNWANTED
        )
    # Last: a removed character may have stood between a letter and its accent.
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text.strip()


def _shows_something(text: str) -> bool:
    return any(
        not c.isspace()
        and unicodedata.category(c) not in ("Cf", "Cc", "Cs")
        and not _INVISIBLE.match(c)
        for c in text
    )


def _mentions_from(value: str | None) -> tuple[tuple[str, int], ...]:
    """The (name, uid) pairs of a stored `mentions` field ('' or absent: none)."""
    if not value:
        return ()
    return _mentions_parsed(value)


@functools.lru_cache(maxsize=20_000)
def _mentions_parsed(value: str) -> tuple[tuple[str, int], ...]:
    # A pure function of the stored string (an immutable field): every page of
    # statuses parses the same few again (the client API's and the site's).
    try:
        found = json.loads(value)
        return tuple(sorted((str(name), int(uid)) for name, uid in found.items()))
    except (ValueError, TypeError, AttributeError):
        return ()  # a damaged field links nobody rather than failing the page


def text_shows_something(text: str) -> bool:
    """Whether a normalized text has a visible character (for profile fields too)."""
    return _shows_something(text)


# What a link counts, whatever its length: Mastodon's rule, which its clients apply
# before they offer to post (the client API's `characters_reserved_per_url`).
URL_LENGTH = 23
# Mastodon counts a link as this placeholder, in its place: a mark or joiner that
# clings to a link's edge clings to the placeholder, as it does there.
_URL_PLACEHOLDER = "x" * URL_LENGTH
# A text may be longer in code points, written out (its links in full), up to this
# many times the limit: 280 of the longest emoji Unicode recommends (a kiss with two
# skin tones, ten code points; a family or a flag of Scotland is seven), or several
# long links; and a bound on what one status stores, which a letter under thousands
# of accents (one character as counted) would otherwise escape.
RAW_LENGTH_FACTOR = 10
# An extended grapheme cluster (Unicode's UAX #29): what Mastodon counts (Ruby's
# `each_grapheme_cluster`), as its apps and browsers' `Intl.Segmenter` do. Python's
# own `re` has no such class; the `regex` package keeps it in step with Unicode.
_GRAPHEME = regex.compile(r"\X")


def text_length(text: str) -> int:
    """A normalized status text's length as the limit counts it: what a reader sees as
    one character counts one (a grapheme cluster: a family emoji, a flag, a letter
    with its accents), each link (`richtext.links`) URL_LENGTH, however long, and
    another server's handle, `@user@domain`, as its `@user` (`richtext.countable`)."""
    return _clusters(richtext.countable(text, _URL_PLACEHOLDER))


def _clusters(text: str) -> int:
    """How many grapheme clusters a normalized text holds."""
    if text.isascii():
        # Each ASCII character is a cluster of its own (but \r\n, which a normalized
        # text has not): most statuses need no segmentation, a tenth of the cost.
        return len(text)
    return len(_GRAPHEME.findall(text))


def normalize_spoiler(spoiler: str) -> str:
    """A content warning as stored: as a status text (`normalize_text`), on one line
    (it shows as a line above the text it hides), and empty when it shows nothing:
    a warning of blanks or invisible characters warns of nothing."""
    spoiler = normalize_text(spoiler).replace("\n", " ")
    return spoiler if _shows_something(spoiler) else ""


def spoiler_length(spoiler: str) -> int:
    """A normalized content warning's length as the limit counts it: its grapheme
    clusters, a link as written (Mastodon counts the warning and the text together,
    and only the text's links as URL_LENGTH)."""
    return _clusters(spoiler)


def text_problem(text: str, spoiler: str = "") -> str | None:
    """What is wrong with a normalized status text and its normalized content warning
    (`normalize_spoiler`, '' for none), for the person who wrote them.

    The one status length rule (the service's and the form's): at most
    STATUS_MAX_LENGTH as `text_length` and `spoiler_length` count, the two together
    (as Mastodon counts), RAW_LENGTH_FACTOR times that in code points, written out.
    """
    limit = settings.STATUS_MAX_LENGTH
    if not _shows_something(text):
        return "Write something first."
    what = "A status and its content warning are" if spoiler else "A status is"
    together = " together" if spoiler else ""
    raw = len(text) + len(spoiler)
    # The written-out bound first: the links of a huge text are not worth finding
    # (whether it may hold one is enough to word the reason). Only the text's: a
    # link in the warning counts as written both ways (`spoiler_length`), as the
    # compose counter words it.
    if raw > RAW_LENGTH_FACTOR * limit:
        counted = (
            "with its links written out in full"
            if "://" in text or "www." in text.lower()
            else "counting each part of an emoji or accent on its own"
        )
        return (
            f"{what} at most {limit} characters{together}, and "
            f"{RAW_LENGTH_FACTOR * limit} {counted} (this one has {raw})."
        )
    length = text_length(text)
    warned = spoiler_length(spoiler) if spoiler else 0
    if length + warned > limit:
        links = f", a link counting as {URL_LENGTH}" if richtext.links(text) else ""
        parts = f": {warned} in the warning" if spoiler else ""
        return (
            f"{what} at most {limit} characters{together}{links} "
            f"(this one has {length + warned}{parts})."
        )
    return None


def _thread_from(value: str) -> tuple[tuple[int, int], ...]:
    """The (sid, uid) pairs of a stored `thread` field ("sid:uid sid:uid")."""
    return tuple(
        (int(s), int(u)) for s, _, u in (pair.partition(":") for pair in value.split())
    )


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value else None


# Polls (`timeline.polls`): Mastodon's limits, which its apps read from the instance.
POLL_OPTIONS_MAX = 4
POLL_OPTIONS_MIN = 2
POLL_OPTION_MAX_CHARS = 50
POLL_EXPIRES_MIN = 300  # seconds
POLL_EXPIRES_MAX = 30 * 86400


@dataclass(frozen=True, slots=True)
class Poll:
    """A status's poll: its options, when it closes (unix seconds), whether a voter
    may choose several options, and whether its totals stay hidden until it
    closes. Made with its status and never changed (`timeline.polls`); stored as
    compact JSON in the status hash's `poll` field (`to_field`). Its tally is a
    count of the status (`Status.votes`), not part of it."""

    options: tuple[str, ...]
    expires: float
    multiple: bool = False
    hide_totals: bool = False

    def expired(self, now: float) -> bool:
        return self.expires <= now

    @property
    def expires_at(self) -> datetime:
        return datetime.fromtimestamp(self.expires, tz=UTC)

    def to_field(self) -> str:
        row: dict = {"o": list(self.options), "x": round(self.expires, 3)}
        if self.multiple:
            row["m"] = 1
        if self.hide_totals:
            row["h"] = 1
        return json.dumps(row, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_field(cls, value: str | None) -> Poll | None:
        """The poll a `poll` field holds; None for none (or a damaged one: the
        status reads as a plain one rather than failing its page)."""
        if not value:
            return None
        try:
            row = json.loads(value)
            options = tuple(str(o) for o in row["o"])
            expires = float(row["x"])
        except (ValueError, KeyError, TypeError):
            return None
        if not options:
            return None
        return cls(
            options=options,
            expires=expires,
            multiple=bool(row.get("m")),
            hide_totals=bool(row.get("h")),
        )


# The quote states whose quoted status the reader gets (`Status.quote_state`):
# "accepted", and Mastodon 4.5's two for an author they blocked or muted (the
# site folds the embed under "Show anyway", the API answers the status for the
# app to fold it). A keyword filter matches its text in each (`timeline.filters`).
QUOTE_SHOWN = frozenset({"accepted", "blocked_account", "muted_account"})


@dataclass(frozen=True, slots=True)
class Quote:
    """The status a status quotes (Mastodon 4.5's quote posts, `timeline.quotes`): its
    id and a copy of what its embed shows, its author's id and name, text, content
    warning and time, and the id of the status it quotes in turn (shown as a link
    only: one level is embedded, as Mastodon's). Stored as compact JSON in the
    quoting status's `quote` field (`to_field`); the id and author never change,
    the text and warning are refreshed by the quoted status's edit job
    (`timeline.edits`), and a page checks the quoted status still stands and may
    be seen by its reader in the round trip that reads the row
    (`Status.quote_state`)."""

    id: int
    author_id: int
    author: str
    text: str
    created: float
    spoiler: str = ""
    quote_of: int | None = None
    # Kept off the public timelines (`Status.unlisted`: its visibility never
    # changes), for the API's `quoted_status.visibility`.
    unlisted: bool = False
    # When the quoted status was last edited (`Status.edited`), copied with its
    # text by its edit job, for the API's `quoted_status.edited_at`.
    edited_at: float | None = None
    # Revoked by the quoted status's author (Mastodon's `revoke`): the copy keeps
    # nothing of the quoted status but its id and author, and never shows.
    revoked: bool = False
    # The status it quoted in turn was deleted (`quote_of` then None): written by
    # that deletion's unlink job (`edits.quotes_copy`), for the API's nested
    # ShallowQuote `deleted`, as Mastodon's says.
    quote_deleted: bool = False

    @classmethod
    def of(cls, status: Status) -> Quote:
        """The quote of `status` (not a repost: the caller quotes its original)."""
        return cls(
            id=status.id,
            author_id=status.author_id,
            author=status.author,
            text=status.text,
            created=status.created,
            spoiler=status.spoiler,
            quote_of=status.quote.id if status.quote is not None else None,
            unlisted=status.unlisted,
            edited_at=status.edited,
        )

    def to_field(self) -> str:
        row: dict = {
            "i": self.id,
            "u": self.author_id,
            "a": self.author,
            "t": self.text,
            "c": round(self.created, 3),
        }
        if self.spoiler:
            row["s"] = self.spoiler
        if self.quote_of is not None:
            row["q"] = self.quote_of
        if self.unlisted:
            row["l"] = 1
        if self.edited_at is not None:
            row["e"] = round(self.edited_at, 3)
        if self.revoked:
            row["x"] = 1
        if self.quote_deleted:
            row["g"] = 1
        return json.dumps(row, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_field(cls, value: str | None) -> Quote | None:
        """The quote a `quote` field holds; None for none (or a damaged one: the
        status reads as one without a quote rather than failing its page)."""
        if not value:
            return None
        try:
            row = json.loads(value)
            return cls(
                id=int(row["i"]),
                author_id=int(row["u"]),
                author=str(row["a"]),
                text=str(row["t"]),
                created=float(row["c"]),
                spoiler=str(row.get("s") or ""),
                quote_of=int(row["q"]) if row.get("q") else None,
                unlisted=bool(row.get("l")),
                edited_at=float(row["e"]) if row.get("e") else None,
                revoked=bool(row.get("x")),
                quote_deleted=bool(row.get("g")),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def edited(self, status: Status, *, inner_deleted: bool = False) -> Quote:
        """This quote with the quoted status's current text, warning and time of
        edit, and the status it quotes in turn while that quote stands (one its
        quoted author revoked is named no more; one deleted, `inner_deleted`, is
        named no more and said deleted); a revoked one stays as it is."""
        if self.revoked:
            return self
        inner = status.quote
        deleted = self.quote_deleted or (inner_deleted and self.quote_of is not None)
        return replace(
            self,
            text=status.text,
            spoiler=status.spoiler,
            edited_at=status.edited,
            quote_of=None
            if deleted or (inner is not None and inner.revoked)
            else self.quote_of,
            quote_deleted=deleted,
        )

    def revoke(self) -> Quote:
        """This quote revoked: nothing of the quoted status's text kept."""
        return replace(
            self, text="", spoiler="", quote_of=None, quote_deleted=False, revoked=True
        )

    @property
    def url(self) -> str:
        return url_for("timeline:status_detail", self.id)

    @property
    def author_url(self) -> str:
        return url_for("timeline:profile", self.author)

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)


def _tally_from(value: str | None, options: int) -> tuple[int, tuple[int, ...]]:
    """A poll's voters and each option's votes from its `tally` field (`<voters>
    <votes of option 0> ...`, written by `timeline.polls`'s vote script; absent:
    nobody voted)."""
    counts = [int(v) for v in _NUMBERS.findall(value)] if value else []
    counts += [0] * (options + 1 - len(counts))
    return counts[0], tuple(counts[1 : options + 1])


def _choices_from(value: str | None) -> tuple[int, ...]:
    return tuple(int(v) for v in _NUMBERS.findall(value)) if value else ()


# The numbers of a `tally` or a `v:<uid>` field, as the vote script reads them
# (Lua's `%d+`): a damaged field reads as the script counts on from, never fails
# the pages that show the status (as a damaged `poll` reads as none).
_NUMBERS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Status:
    """A status. The one owner of the `status:<sid>` hash layout.

    A reply names its parent (`reply_to`), the parent's author and the parent's own
    ancestors with their authors (`thread`: (sid, uid) pairs, nearest first), so a
    status page reads the whole thread, and asks about its authors, in one round
    trip. A repost is a status of the reposter's that carries the
    original's author and text (`repost_of`: the original's id), so a page renders
    it without reading the original. The counts change after the status is made:
    they take no part in equality (nor in `timeline.rendering`'s memo); None when
    not read (a status from an outbox, a repost's row); `liked`, `reposted`,
    `bookmarked` and `pinned` are the viewer's state, None when not read (the last
    two by the client API's reads only: `timeline.bookmarks`, `timeline.pins`).

    `mentions`: the `@names` of the text that named a user when it was posted, as
    (lowercase name, uid) pairs, stored as compact JSON `{"name": uid}` in the
    `mentions` field (absent when none: hashes and outbox entries from before it
    read as no mentions, so no migration is needed).

    `unlisted` (Mastodon's visibility): a public author's status kept off the
    public timelines (everyone's posts, tag pages, trends), shown wherever else
    their statuses show; the field is `1`, absent for any other status (so hashes
    and outbox entries from before it read as listed, with no migration).

    `spoiler` (Mastodon's `spoiler_text`): a content warning, shown in place of the
    text until the reader asks for it (`normalize_spoiler`; the field is absent
    when there is none, so hashes and outbox entries from before it read as none).
    A repost carries its original's, as it carries its text.

    `edited`: when its author last edited it (unix seconds; absent: never), as
    Mastodon's `edited_at`. An edit changes the text, the content warning and the
    mentions (`timeline.edits`); its earlier versions are kept apart
    (`StatusVersion`). A repost carries its original's, as it carries its text.

    `to` (Mastodon's `direct` visibility): a direct message's audience, the users
    besides its author who may see it, fixed when it was posted (`timeline.direct`):
    those its text mentioned, and of a reply those of the direct message it answers
    and its author. Stored as the uids with spaces in the `to` field, absent for
    every other status (so hashes from before it read as not direct).

    `quote`: the status it quotes (`Quote`, `timeline.quotes`), a copy of what its
    embed shows, stored as JSON in the `quote` field (absent without one, so
    hashes and outbox entries from before it read as none, no migration); a
    repost carries its original's. `quotes` counts the statuses quoting it (a
    count, as `replies`).

    `conversation`: the id of the status a reply's thread began with (Mastodon's
    conversation; a repost's: its original's; a private reply's, a direct message
    answering a status that is none, its own: it begins a conversation of direct
    messages, kept apart from others' in the same thread), which a reader may mute
    (`timeline.conversations`); stored on every reply and repost (`upgrade_store`'s
    layout 8 named those posted before; `conversation_id` still works one out,
    as far as its `thread` goes back, for a status written meanwhile by an older
    process).
    """

    id: int
    author_id: int
    author: str
    text: str
    created: float
    mentions: tuple[tuple[str, int], ...] = ()
    reply_to: int | None = None
    reply_uid: int | None = None
    reply_author: str = ""
    thread: tuple[tuple[int, int], ...] = ()
    repost_of: int | None = None
    repost_uid: int | None = None
    repost_author: str = ""
    unlisted: bool = False
    spoiler: str = ""
    conversation: int | None = None
    edited: float | None = None
    to: tuple[int, ...] = ()
    poll: Poll | None = None
    quote: Quote | None = None
    # Whether the reader may see the quoted status (`quote`), as the read that
    # brought the row checked it (`timeline.selectors`), in Mastodon's Quote
    # states: "accepted" shows the embed; "blocked_account" and "muted_account"
    # (the reader blocked or muted its author) fold it under "Show anyway";
    # "deleted" (it is gone), "unauthorized" (its author blocked the reader, a
    # private author) and "revoked" (its author detached the quote:
    # `Quote.revoked`) show "unavailable",
    # and so does None (not checked): a read that did not check shows nothing of
    # the quoted status. Part of equality, so a rendered row's memo
    # (`timeline.rendering`) tells a shown embed from a withheld one.
    quote_state: str | None = None
    likes: int | None = field(default=None, compare=False)
    reposts: int | None = field(default=None, compare=False)
    replies: int | None = field(default=None, compare=False)
    quotes: int | None = field(default=None, compare=False)
    liked: bool | None = field(default=None, compare=False)
    reposted: bool | None = field(default=None, compare=False)
    bookmarked: bool | None = field(default=None, compare=False)
    pinned: bool | None = field(default=None, compare=False)
    muted: bool | None = field(default=None, compare=False)
    # A poll's tally (None: not read, or no poll): how many people voted, each
    # option's votes, and the viewer's own choices (() when they have not voted).
    voters: int | None = field(default=None, compare=False)
    votes: tuple[int, ...] | None = field(default=None, compare=False)
    voted: tuple[int, ...] | None = field(default=None, compare=False)

    # The fields a status is made with (its hash, its outbox entry: all but the
    # text, the warning, the mentions and `edited` are kept as made, and those
    # change only by an edit, `timeline.edits`), then the counts
    # (`timeline.social`), which only the hash holds.
    IMMUTABLE: ClassVar[tuple[str, ...]] = (
        "uid",
        "author",
        "text",
        "created",
        "reply_to",
        "reply_uid",
        "reply_author",
        "thread",
        "repost_of",
        "repost_uid",
        "repost_author",
        "mentions",
        "unlisted",
        "spoiler",
        "conversation",
        "edited",
        "to",
        "poll",
        "quote",
    )
    # What an edit changes (`timeline.edits`), in the hash and in every copy.
    EDITABLE: ClassVar[tuple[str, ...]] = ("text", "spoiler", "mentions", "edited")
    COUNTS: ClassVar[tuple[str, ...]] = (
        "likes",
        "reposts",
        "replies",
        "tally",
        "quotes",
    )
    # `1` once its poll's closing job was queued (`timeline.polls.poll_end_queue`):
    # queued once, however often its post job runs.
    POLL_JOB_FIELD: ClassVar[str] = "poll_job"
    FIELDS: ClassVar[tuple[str, ...]] = IMMUTABLE + COUNTS

    @classmethod
    def from_fields(
        cls, sid: int, values: list[str | None], *, viewer: list | None = None
    ) -> Status | None:
        """The status from an HMGET of `FIELDS` (or a prefix of them: an outbox
        entry, a hash older than the field); None when it does not exist. `viewer`:
        the viewer's like and repost of it (scores or None), their choices in its
        poll (`_choices_from`'s field, None: none), and their bookmark, pin and
        conversation mute of it when read too (scores or None), when read."""
        counted = len(values) >= len(cls.FIELDS)
        values = list(values) + [None] * (len(cls.FIELDS) - len(values))
        uid, author, text, created, reply_to, reply_uid, reply_author = values[:7]
        thread, repost_of, repost_uid, repost_author, mentions = values[7:12]
        unlisted, spoiler, conversation, edited, to, poll, quote = values[12:19]
        likes, reposts, replies, tally, quotes = values[19:]
        if uid is None or text is None:
            return None
        reposted_row = bool(repost_of)
        found_poll = Poll.from_field(poll)
        voters = votes = voted = None
        if found_poll is not None and counted and not reposted_row:
            voters, votes = _tally_from(tally, len(found_poll.options))
            if viewer and len(viewer) > 2:
                voted = _choices_from(viewer[2])
        return cls(
            id=sid,
            author_id=int(uid),
            author=author or "",
            text=text,
            created=float(created or 0),
            mentions=_mentions_from(mentions),
            reply_to=_int_or_none(reply_to),
            reply_uid=_int_or_none(reply_uid),
            reply_author=reply_author or "",
            thread=_thread_from(thread) if thread else (),
            repost_of=_int_or_none(repost_of),
            repost_uid=_int_or_none(repost_uid),
            repost_author=repost_author or "",
            unlisted=bool(unlisted),
            spoiler=spoiler or "",
            conversation=_int_or_none(conversation),
            edited=float(edited) if edited else None,
            to=tuple(int(uid) for uid in to.split()) if to else (),
            poll=found_poll,
            quote=Quote.from_field(quote),
            quotes=int(quotes or 0) if counted and not reposted_row else None,
            # A repost row's own counts are not the original's: not shown.
            likes=int(likes or 0) if counted and not reposted_row else None,
            reposts=int(reposts or 0) if counted and not reposted_row else None,
            replies=int(replies or 0) if counted and not reposted_row else None,
            liked=viewer[0] is not None if viewer and not reposted_row else None,
            reposted=viewer[1] is not None if viewer and not reposted_row else None,
            bookmarked=viewer[3] is not None
            if viewer and len(viewer) > 3 and not reposted_row
            else None,
            pinned=viewer[4] is not None
            if viewer and len(viewer) > 4 and not reposted_row
            else None,
            muted=viewer[5] is not None
            if viewer and len(viewer) > 5 and not reposted_row
            else None,
            voters=voters,
            votes=votes,
            voted=voted,
        )

    @classmethod
    def from_read(
        cls, sid: int, values: list[str | None], *, viewer: list | None = None
    ) -> Status | None:
        """`from_fields`, memoized on the row as read (`_status_read`)."""
        return _status_read(
            sid, tuple(values), None if viewer is None else tuple(viewer)
        )

    def to_hash(self) -> dict[str, str | int]:
        """The immutable fields as stored (the counts start absent: 0)."""
        row: dict[str, str | int] = {
            "uid": self.author_id,
            "author": self.author,
            "text": self.text,
            "created": f"{self.created:.3f}",
        }
        if self.reply_to is not None:
            row.update(
                reply_to=self.reply_to,
                reply_uid=self.reply_uid or 0,
                reply_author=self.reply_author,
            )
            if self.thread:
                row["thread"] = " ".join(f"{s}:{u}" for s, u in self.thread)
        if self.repost_of is not None:
            row.update(
                repost_of=self.repost_of,
                repost_uid=self.repost_uid or 0,
                repost_author=self.repost_author,
            )
        if self.mentions:
            row["mentions"] = json.dumps(
                dict(self.mentions), separators=(",", ":"), ensure_ascii=False
            )
        if self.unlisted:
            row["unlisted"] = 1
        if self.spoiler:
            row["spoiler"] = self.spoiler
        if self.conversation is not None:
            row["conversation"] = self.conversation
        if self.edited is not None:
            row["edited"] = f"{self.edited:.3f}"
        if self.to:
            row["to"] = " ".join(map(str, self.to))
        if self.poll is not None:
            row["poll"] = self.poll.to_field()
        if self.quote is not None:
            row["quote"] = self.quote.to_field()
        return row

    def to_json(self) -> str:
        """The immutable fields as one JSON string (an author's outbox entry)."""
        row = self.to_hash()
        values = [row.get(f) for f in self.IMMUTABLE]
        while values[-1] is None:  # a plain status's entry stays as short as before
            values.pop()
        return json.dumps(["" if v is None else str(v) for v in values])

    @classmethod
    def from_json(cls, sid: int, value: str) -> Status | None:
        return cls.from_fields(sid, json.loads(value))

    def reply_follow_decides(self, reader: int) -> int | None:
        """The reply rule (Mastodon's): a reply reaches a reader's home only when it
        answers its own author, the reader, or someone the reader follows too. The
        user whose follow by the reader decides that, or None when nothing does
        (no reply, or one to its author or the reader). The one statement of the
        rule in Python (pages that merge pulled authors, `timelines check`); the
        fan-out applies it in Lua (`services.HOME_ADD_LUA`)."""
        to = self.reply_uid
        return to if to and to not in (self.author_id, reader) else None

    @property
    def direct(self) -> bool:
        """Whether it is a direct message: for its author and `to` only."""
        return bool(self.to)

    def visible_to(self, viewer: int | None) -> bool:
        """Whether a (proven) viewer may see it as far as its audience goes: any
        status but a direct message, which only its author and `to` see (blocks and
        private accounts are checked where it is read, as for any status)."""
        return not self.to or (
            viewer is not None and (viewer == self.author_id or viewer in self.to)
        )

    @property
    def mentioned_ids(self) -> tuple[int, ...]:
        """The users the text mentions (resolved when it was posted), each once.

        Blocks are not applied here: a mention is text. Whoever acts on it (a
        notification) leaves out people blocked either way (`timeline.blocks`).
        """
        return tuple(dict.fromkeys(uid for _, uid in self.mentions))

    @property
    def told_ids(self) -> tuple[int, ...]:
        """Whom its posting told (of a mention: their notification goes with it): a
        direct message's audience, an original's mentions; a repost carries its
        original's mentions but tells no one of them."""
        if self.to:
            return self.to
        return self.mentioned_ids if self.repost_of is None else ()

    @property
    def conversation_id(self) -> int:
        """The conversation the status is part of, as a reader mutes it: the id of
        the status its thread began with (a repost's: its original's). Stored on
        replies and reposts posted since conversations (`conversation`); an older
        reply's is the oldest ancestor its `thread` names (THREAD_DEPTH levels up
        at most)."""
        if self.conversation is not None:
            return self.conversation
        if self.repost_of is not None:
            return self.repost_of  # an older repost's: as if its original began one
        if self.thread:
            return self.thread[-1][0]
        return self.reply_to if self.reply_to is not None else self.id

    @property
    def shown_author_id(self) -> int:
        """Whose card (name, avatar) the status's row shows: a repost's original
        author, else its own."""
        if self.repost_of is not None and self.repost_uid:
            return self.repost_uid
        return self.author_id

    @property
    def original_id(self) -> int:
        """The status the like, repost and reply buttons act on: a repost's original."""
        return self.repost_of if self.repost_of is not None else self.id

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)

    @property
    def edited_at(self) -> datetime | None:
        if self.edited is None:
            return None
        return datetime.fromtimestamp(self.edited, tz=UTC)

    @property
    def history_url(self) -> str:
        """Its versions' page (a repost's: its original's)."""
        return url_for("timeline:status_history", self.original_id)

    @property
    def url(self) -> str:
        return url_for("timeline:status_detail", self.id)

    @property
    def author_url(self) -> str:
        return url_for("timeline:profile", self.author)

    @property
    def original_url(self) -> str:
        return url_for("timeline:status_detail", self.original_id)

    @property
    def reply_url(self) -> str:
        """Where a reply's "Replying to" line leads: its own page, at the statuses
        it answers (`#in-reply-to`), which shows a deleted or hidden parent as gone
        where the parent's own address would answer 404."""
        return f"{self.original_url}#in-reply-to"


# A page reads the same rows on every visit (a home's window moves by a few statuses
# between two), and parsing 30 rows into `Status` was a tenth of a page's Python: a
# row parsed once is kept, keyed on every value read (its counts and the viewer's
# like and repost included), so a changed count or state is a new row, never a stale
# one; the `Status` is frozen, so a page can share it with the next.
@functools.lru_cache(maxsize=10_000)
def _status_read(
    sid: int, values: tuple[str | None, ...], viewer: tuple | None
) -> Status | None:
    return Status.from_fields(sid, values, viewer=viewer)


@dataclass(frozen=True, slots=True)
class AccountStats:
    """A user with their counts, as the client API's Account shows them: statuses
    (reposts included), followers, following, and the newest status's id (None:
    none)."""

    user: User
    statuses: int
    followers: int
    following: int
    last_status_id: int | None

    @classmethod
    def from_reply(
        cls, uid: int, values: list, posts, followers, following, newest
    ) -> AccountStats | None:
        """From a read of the user hash (`User.FIELDS`), the ZCARDs of their posts,
        followers and following, and their newest status id (false: none); None
        for no such user."""
        user = User.from_fields(uid, values)
        if user is None:
            return None
        return cls(
            user=user,
            statuses=int(posts),
            followers=int(followers),
            following=int(following),
            last_status_id=int(newest) if newest else None,
        )


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a timeline, newest first; `next_max_id` cursors the older page."""

    statuses: list[Status]
    next_max_id: int | None
    # The authors' display names and avatars (uid -> Card), read fresh with the
    # page: never part of a status's cached markup (`timeline.rendering`).
    cards: dict[int, Card] = field(default_factory=dict)
    # Some entries of the page could not be shown (a list of what the viewer saved,
    # whose statuses were deleted or hidden since): an empty page is not "none yet".
    left_out: bool = False
    # The statuses the viewer's keyword filters fold (sid -> the filters' titles:
    # `timeline.filters`), set by the page's view.
    filtered: dict[int, str] = field(default_factory=dict)
    # How many of the page's statuses the viewer's `hide` filters left out: a page
    # they emptied says so, not "none yet".
    hidden: int = 0


@dataclass(frozen=True, slots=True)
class Conversation:
    """One of a reader's conversations of direct messages (`timeline.direct`): its
    id (the id of the message it began with), its newest message the reader may
    see, the others in it (uid -> User, those who still exist), whether it has a
    message they have not read, and the id its list is paged by."""

    id: int
    last: Status
    people: dict[int, User]
    unread: bool
    at: int

    @property
    def others(self) -> list[User]:
        """The others in it, by name."""
        return sorted(self.people.values(), key=lambda u: u.username.casefold())


@dataclass(frozen=True, slots=True)
class Conversations:
    """A page of a reader's conversations, the most recent first; `next_max_id`
    cursors the older page (`prev_min_id`, for the client API, the newer one).
    `unread`: (conversation, newest message id) of each unread one the page read,
    shown or not (one whose messages a block or a deletion hides shows nothing,
    yet counts in the badge until the page marks it read)."""

    conversations: list[Conversation]
    next_max_id: int | None
    cards: dict[int, Card] = field(default_factory=dict)
    prev_min_id: int | None = None
    unread: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Trend:
    """A tag (case folded) and how many public statuses of the last hours carry it."""

    tag: str
    count: int

    @property
    def url(self) -> str:
        return url_for("timeline:tag", self.tag)


@dataclass(frozen=True, slots=True)
class Suggested:
    """Someone suggested to follow, with their counts (the client API's Account),
    and why: followed by people the viewer follows (`friends`), among the most
    followed (`popular`), or both."""

    account: AccountStats
    friends: bool
    popular: bool


@dataclass(frozen=True, slots=True)
class Home:
    """A page of the viewer's home; people to follow when its first page is empty."""

    page: Page
    suggestions: list[User]
    # The reader is back after a long absence and their home is being rebuilt.
    catching_up: bool = False
    # The page left out statuses of people on the reader's exclusive lists (or did
    # not merge a pulled author on them).
    listed: bool = False


@dataclass(frozen=True, slots=True)
class PeoplePage:
    """One page of a user's followers or followees, newest follow first."""

    owner: User
    users: list[User]
    next_cursor: int | None
    # The owner's account is private and the viewer is not an approved follower:
    # the list is not shown (`timeline.privacy`).
    protected: bool = False
    # The signed-in viewer's Follow buttons: whom of the listed they follow, asked
    # to follow, and who gets no button (themself, anyone blocked either way).
    # A visitor: no buttons at all (`buttons` is False).
    buttons: bool = False
    viewer_follows: frozenset[int] = frozenset()
    viewer_requested: frozenset[int] = frozenset()
    no_button: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class InCommon:
    """People the viewer follows who follow a profile's owner.

    Counted among the viewer's newest `scanned` follows (all of them for nearly
    everyone; `partial` when the viewer follows more than a profile view checks).
    """

    shown: list[UserRef]
    count: int
    scanned: int
    partial: bool

    @property
    def others(self) -> int:
        return self.count - len(self.shown)


@dataclass(frozen=True, slots=True)
class Profile:
    user: User
    statuses: int
    followers: int
    following: int
    viewer_follows: bool
    in_common: InCommon | None
    page: Page
    # Blocks and mutes between the viewer and the owner (`timeline.blocks`): either
    # block hides the statuses and replaces the Follow button.
    viewer_blocks: bool = False
    blocks_viewer: bool = False
    viewer_mutes: bool = False
    # A private account (`timeline.privacy`): `protected` when the viewer is neither
    # its owner nor an approved follower (no statuses shown); `viewer_requested`
    # when the viewer's follow request waits; `requests`, for the owner, how many.
    protected: bool = False
    viewer_requested: bool = False
    requests: int = 0
    # The owner follows the viewer ("Follows you").
    follows_viewer: bool = False
    # The statuses the owner pinned, newest pin first, shown above the first page
    # (`timeline.pins`); none where the page shows no statuses.
    pinned: list[Status] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return self.viewer_blocks or self.blocks_viewer


class TimelineError(Exception):
    """Base of the errors the timeline services raise for the user to see."""


class Refused(TimelineError):
    """A change refused for what it asks (a cap, a blank title, a rule): the
    message says why; the client API answers it as a 422, "Validation failed:
    <message>" (`api_error`, when set: Mastodon's own words)."""

    api_error: str | None = None


class InvalidStatus(TimelineError):
    pass


class NotFound(TimelineError):
    pass


class Forbidden(TimelineError):
    pass


class CannotFollowSelf(TimelineError):
    pass


class Busy(TimelineError):
    """Another follow change of the same user is in progress; try again."""


class Blocked(TimelineError):
    """A follow across a block (either way), refused."""


class FollowRequestsFull(TimelineError):
    """A follow request refused: too many are pending (`FOLLOW_REQUESTS_MAX`)."""


class CannotBlock(TimelineError):
    """A block or mute refused: of oneself, or past BLOCKS_MAX / MUTES_MAX."""


class CannotPin(TimelineError):
    """A pin refused: another's status, a repost, or past `pins.PINS_MAX`."""


class BookmarksFull(TimelineError):
    """A bookmark refused: the list holds `bookmarks.BOOKMARKS_MAX` already."""


@dataclass(frozen=True, slots=True)
class FollowRequest:
    """A pending follow request, as its owner's requests page lists it."""

    user: User
    requested: float  # unix seconds

    @property
    def requested_at(self) -> datetime:
        return datetime.fromtimestamp(self.requested, tz=UTC)


@dataclass(frozen=True, slots=True)
class FollowRequests:
    """A page of the viewer's pending follow requests, newest first; `cursor` (the
    time, in microseconds, below which the next page starts) when there are more."""

    requests: list[FollowRequest]
    total: int
    cursor: int | None


@dataclass(frozen=True, slots=True)
class BlockedAndMuted:
    """The viewer's blocked and muted people, newest first, one page of each;
    `*_cursor` (the time below which the next page starts) when there are more."""

    blocked: list[User]
    muted: list[User]
    blocked_cursor: int | None
    muted_cursor: int | None


@dataclass(frozen=True, slots=True)
class Notification:
    """One group of a user's notifications, as `notification:{uid}` holds it: the
    one owner of its JSON (written by the scripts of `timeline.notifications`).
    `actors` are the newest first; `count` is how many in all; `at` the newest
    event's time (unix ms); `place` its place in `notifications:{uid}`."""

    group: str
    kind: str
    sid: int | None
    actors: tuple[int, ...]
    count: int
    at: int
    place: int

    @classmethod
    def from_json(cls, group: str, place: float, value: str) -> Notification | None:
        """The group from its row; None for a row that does not parse."""
        try:
            row = json.loads(value)
            actors = row.get("a") or []  # Lua's JSON writes an empty list as {}
            return cls(
                group=group,
                kind=str(row["k"]),
                sid=int(row["s"]) if row.get("s") not in (None, "") else None,
                actors=tuple(int(a) for a in actors),
                count=int(float(row["n"])),
                at=int(float(row["t"])),
                place=int(place),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


@dataclass(frozen=True, slots=True)
class NotificationItem:
    """A group as the page shows it: the actors the viewer may see (newest first,
    at most three), how many others, the status it is about (None for follows)."""

    kind: str
    actors: list[User]
    others: int
    status: Status | None
    at: int  # unix ms
    place: int
    unread: bool

    @property
    def at_time(self) -> datetime:
        return datetime.fromtimestamp(self.at / 1000, tz=UTC)


@dataclass(frozen=True, slots=True)
class Notifications:
    """A page of the viewer's notifications, newest first. `cursor`: the place below
    which the next page starts; `newest`: the top group's place (what "mark all as
    read" marks up to), None when there is none; `read_up_to`: the read mark."""

    items: list[NotificationItem]
    cursor: int | None
    newest: int | None
    read_up_to: int

    @property
    def any_unread(self) -> bool:
        return self.newest is not None and self.newest > self.read_up_to


@dataclass(frozen=True, slots=True)
class Marker:
    """Where a user stopped reading one of their timelines (Mastodon's Marker): the
    one owner of `markers:{uid}`'s fields (written by `timeline.markers`).

    `position`: for `home` the id of the last status read, as an app saved it; for
    `notifications` the place of the read mark (`notifications_read:{uid}`, 0 for
    none), which the notifications page moves too. `version` counts the saves that
    moved it, from 0 at the first (Mastodon's `lock_version`); `at` is when it last
    moved (unix ms)."""

    TIMELINES: ClassVar[tuple[str, ...]] = ("home", "notifications")
    # The hash's fields: home's position, then each timeline's version and time.
    FIELDS: ClassVar[tuple[str, ...]] = (
        "home",
        "home_version",
        "home_at",
        "notifications_version",
        "notifications_at",
    )

    timeline: str
    position: int
    version: int
    at: int

    @classmethod
    def from_fields(
        cls, values: list[str | None], mark: str | None
    ) -> dict[str, Marker]:
        """The saved markers by timeline, from FIELDS' values and the read mark; a
        timeline never saved (or a value that does not parse) is left out."""
        home, home_version, home_at, version, at = values
        found: dict[str, Marker] = {}
        for timeline, position, saves, when in (
            ("home", home, home_version, home_at),
            ("notifications", mark or "0", version, at),
        ):
            try:
                found[timeline] = cls(
                    timeline=timeline,
                    position=int(position),
                    version=int(saves),
                    at=int(when),
                )
            except (TypeError, ValueError):
                continue
        return found


@dataclass(frozen=True, slots=True)
class Thread:
    """A status with what it replies to (`ancestors`, oldest first: None for one
    deleted or hidden from the viewer) and a page of its replies, oldest first;
    `next_after` cursors the next page (the last reply id shown)."""

    status: Status
    ancestors: list[Status | None]
    replies: list[Status]
    next_after: int | None
    # The authors' display names and avatars (`Page.cards`).
    cards: dict[int, Card] = field(default_factory=dict)
    # Whether the viewer bookmarked the status (a repost's: its original), and
    # (their own) pinned it to their profile.
    bookmarked: bool = False
    pinned: bool = False
    # Whether the viewer muted the conversation it is part of.
    muted: bool = False


@dataclass(frozen=True, slots=True)
class Context:
    """A status with its thread as the client API shows a conversation: what it
    replies to (`ancestors`, oldest first) and the replies below it
    (`descendants`, depth-first: each followed by its own replies, oldest
    first), those the viewer may see."""

    status: Status
    ancestors: list[Status]
    descendants: list[Status]


@dataclass(frozen=True, slots=True)
class Reactors:
    """Who liked or reposted a status (`relation`), newest first, a page of them;
    `next_cursor` is the score below which the next page starts."""

    status: Status
    relation: str
    users: list[User]
    next_cursor: int | None


@dataclass(frozen=True, slots=True)
class Relationship:
    """What stands between the viewer and another user, from the viewer's side:
    whether each follows the other, a follow request either way, a block either
    way, the viewer's mute (the client API's Relationship)."""

    id: int
    following: bool
    followed_by: bool
    requested: bool
    requested_by: bool
    blocking: bool
    blocked_by: bool
    muting: bool


@dataclass(frozen=True, slots=True)
class PeopleRows:
    """A window of a user's followers or followees: (uid, follow time in
    microseconds) newest first; empty and `protected` when the owner's account is
    private and the viewer is not an approved follower (`timeline.privacy`)."""

    owner: User
    rows: list[tuple[int, int]]
    protected: bool = False


@dataclass(frozen=True, slots=True)
class NotificationsWindow:
    """Groups of the viewer's notifications between two places, in the order asked,
    as the viewer may see them (`items`, naming every remembered actor shown);
    `read`: how many groups the read matched before the rules of what is shown
    (when it is the number asked for, more may follow); `last_place`: the place
    of the last of them (None when none)."""

    items: list[NotificationItem]
    read: int
    last_place: int | None
