"""Accounts' domain types and errors: what selectors return and services raise."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

from config.reverse import url_for

USERNAME_MAX_LENGTH = 30
USERNAME_RE = re.compile(rf"^[A-Za-z0-9_]{{3,{USERNAME_MAX_LENGTH}}}$", re.ASCII)
USERNAME_RULE = f"Use 3 to {USERNAME_MAX_LENGTH} letters, digits or underscores."
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}$", re.ASCII)
UID_RE = re.compile(r"^[1-9][0-9]{0,17}$", re.ASCII)


@dataclass(frozen=True, slots=True)
class User:
    """A user as pages see it. The one owner of the `user:{<uid>}` hash layout.

    The hash holds `username`, `created` and `password` (a Django password hash,
    read only by the login service through `PASSWORD_FIELD`). An account being
    deleted has lost its password and gained `deleted` (`DELETED_FIELD`, unix
    seconds) until its deletion job removes the hash: every read through `FIELDS`
    sees no user from that moment on.
    """

    id: int
    username: str
    created: float

    is_authenticated: ClassVar[bool] = True
    FIELDS: ClassVar[tuple[str, ...]] = ("username", "created", "deleted")
    PASSWORD_FIELD: ClassVar[str] = "password"
    USERNAME_FIELD: ClassVar[str] = "username"
    DELETED_FIELD: ClassVar[str] = "deleted"

    @classmethod
    def from_fields(cls, uid: int, values: list[str | None]) -> User | None:
        """The user from an HMGET of `FIELDS`; None when the hash does not exist or
        the account is being deleted."""
        username, created, deleted = values
        if username is None or deleted is not None:
            return None
        return cls(id=uid, username=username, created=float(created or 0))

    def to_hash(self, *, password_hash: str) -> dict[str, str]:
        return {
            "username": self.username,
            "created": f"{self.created:.3f}",
            self.PASSWORD_FIELD: password_hash,
        }

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)

    @property
    def url(self) -> str:
        return url_for("timeline:profile", self.username)


# What `username:<name>` holds once its account is deleted, until the name's grace
# period ends: never a number, so no reader takes it for a user id.
NAME_RETIRED_PREFIX = "deleted:"


def name_claim_uid(value: str | None) -> int | None:
    """The user id a `username:<name>` value names; None for none or a retired name."""
    if value is None or not UID_RE.match(value):
        return None
    return int(value)


def name_retired(uid: int) -> str:
    """The value a deleted account's name keeps during its grace period."""
    return f"{NAME_RETIRED_PREFIX}{uid}"


@dataclass(frozen=True, slots=True)
class UserRef:
    """A user known by id and name only: enough to link to their profile."""

    id: int
    username: str

    @property
    def url(self) -> str:
        return url_for("timeline:profile", self.username)


@dataclass(frozen=True, slots=True)
class AnonymousUser:
    id: None = None
    username: str = ""
    is_authenticated = False


ANONYMOUS = AnonymousUser()


@dataclass(frozen=True, slots=True)
class Credentials:
    """What the auth cookie claims: a user id and a token, not yet checked."""

    uid: int
    token: str

    @classmethod
    def parse(cls, raw: str | None) -> Credentials | None:
        """Parse `<uid>:<token>`; None for anything malformed."""
        if not raw or raw.count(":") != 1:
            return None
        uid, token = raw.split(":")
        if not UID_RE.match(uid) or not TOKEN_RE.match(token):
            return None
        return cls(uid=int(uid), token=token)

    def cookie_value(self) -> str:
        return f"{self.uid}:{self.token}"


class AccountError(Exception):
    """Base of the errors the accounts services raise for the user to see."""


class UsernameTaken(AccountError):
    pass


class InvalidUsername(AccountError):
    pass


class InvalidCredentials(AccountError):
    pass


class TooManyAttempts(AccountError):
    def __init__(self, retry_after: int):
        super().__init__(retry_after)
        self.retry_after = retry_after
