"""Timeline domain types and errors."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import ClassVar

from django.conf import settings

from accounts.domain import Card, User, UserRef
from config.reverse import url_for

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
    character, no surrounding blanks."""
    # splitlines() knows every line break: \r\n, \r, \v, \f, U+0085, U+2028, ...
    text = "\n".join(text.replace("\t", " ").splitlines())
    if not text.isprintable():
        text = "".join(
            c for c in text if c == "\n" or unicodedata.category(c) not in _UNWANTED
        )
    return text.strip()


def _shows_something(text: str) -> bool:
    return any(
        not c.isspace()
        and unicodedata.category(c) not in ("Cf", "Cc", "Cs")
        and not _INVISIBLE.match(c)
        for c in text
    )


def text_shows_something(text: str) -> bool:
    """Whether a normalized text has a visible character (for profile fields too)."""
    return _shows_something(text)


def text_problem(text: str) -> str | None:
    """What is wrong with a normalized status text, for the person who wrote it.

    Characters are Unicode code points (an emoji counts one).
    """
    limit = settings.STATUS_MAX_LENGTH
    if not _shows_something(text):
        return "Write something first."
    if len(text) > limit:
        return f"A status is at most {limit} characters (this one has {len(text)})."
    return None


@dataclass(frozen=True, slots=True)
class Status:
    """A status. The one owner of the `status:<sid>` hash layout."""

    id: int
    author_id: int
    author: str
    text: str
    created: float

    FIELDS: ClassVar[tuple[str, ...]] = ("uid", "author", "text", "created")

    @classmethod
    def from_fields(cls, sid: int, values: list[str | None]) -> Status | None:
        """The status from an HMGET of `FIELDS`; None when it does not exist."""
        uid, author, text, created = values
        if uid is None or text is None:
            return None
        return cls(
            id=sid,
            author_id=int(uid),
            author=author or "",
            text=text,
            created=float(created or 0),
        )

    def to_hash(self) -> dict[str, str | int]:
        return {
            "uid": self.author_id,
            "author": self.author,
            "text": self.text,
            "created": f"{self.created:.3f}",
        }

    def to_json(self) -> str:
        """The hash's fields as one JSON string (an author's outbox entry)."""
        return json.dumps([str(self.to_hash()[f]) for f in self.FIELDS])

    @classmethod
    def from_json(cls, sid: int, value: str) -> Status | None:
        return cls.from_fields(sid, json.loads(value))

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)

    @property
    def url(self) -> str:
        return url_for("timeline:status_detail", self.id)

    @property
    def author_url(self) -> str:
        return url_for("timeline:profile", self.author)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a timeline, newest first; `next_max_id` cursors the older page."""

    statuses: list[Status]
    next_max_id: int | None
    # The authors' display names and avatars (uid -> Card), read fresh with the
    # page: never part of a status's cached markup (`timeline.rendering`).
    cards: dict[int, Card] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Home:
    """A page of the viewer's home; people to follow when its first page is empty."""

    page: Page
    suggestions: list[User]
    # The reader is back after a long absence and their home is being rebuilt.
    catching_up: bool = False


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

    @property
    def blocked(self) -> bool:
        return self.viewer_blocks or self.blocks_viewer


class TimelineError(Exception):
    """Base of the errors the timeline services raise for the user to see."""


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
