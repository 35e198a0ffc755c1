"""Timeline domain types and errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from accounts.domain import User

MAX_STATUS_ID = 2**53  # ids are zset scores too: exact in a double up to here


@dataclass(frozen=True, slots=True)
class Status:
    id: int
    author_id: int
    author: str
    text: str
    created: float

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a timeline, newest first; `next_max_id` cursors the older page."""

    statuses: list[Status]
    next_max_id: int | None


@dataclass(frozen=True, slots=True)
class PeoplePage:
    users: list[User]
    next_cursor: int | None


@dataclass(frozen=True, slots=True)
class Profile:
    user: User
    statuses: int
    followers: int
    following: int
    viewer_follows: bool
    in_common: list[User]
    in_common_count: int
    page: Page

    @property
    def in_common_others(self) -> int:
        return self.in_common_count - len(self.in_common)


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
