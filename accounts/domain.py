"""Accounts' domain types and errors: what selectors return and services raise."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

USERNAME_RE = re.compile(r"^[A-Za-z0-9_]{3,30}$", re.ASCII)
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}$", re.ASCII)
UID_RE = re.compile(r"^[1-9][0-9]{0,17}$", re.ASCII)


@dataclass(frozen=True, slots=True)
class User:
    id: int
    username: str
    created: float

    is_authenticated = True

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)


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
