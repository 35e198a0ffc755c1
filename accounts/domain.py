"""Accounts' domain types and errors: what selectors return and services raise."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

from config.reverse import url_for

USERNAME_MAX_LENGTH = 30
# Patterns here end in `\Z`, not `$`, which also matches before a final newline
# ("bob\n" is no name).
USERNAME_RE = re.compile(rf"^[A-Za-z0-9_]{{3,{USERNAME_MAX_LENGTH}}}\Z", re.ASCII)
USERNAME_RULE = (
    f"Use 3 to {USERNAME_MAX_LENGTH} letters (a-z or A-Z, without accents), digits "
    "or underscores."
)
# Names that look like the site speaking (a page, a role, a service), whatever their
# case. Checked when an account is made, never when one is used: an account made
# before its name was reserved keeps logging in and its profile keeps working.
# A word list, kept as words (ruff's SIM905 would make it one name a line).
RESERVED_USERNAMES = frozenset(
    """
    about abuse account accounts admin administrator anonymous api app auth blog
    contact dashboard delete docs edit everyone explore favicon follow followers
    following healthz help home hostmaster info legal login logout me media
    moderator new news noc notifications null oauth official owner password post
    postmaster privacy register retwis robots root s search security settings
    signin signup site staff static status statuses support system tags terms
    timeline u unfollow user users webmaster www
    """.split()  # noqa: SIM905
)
USERNAME_RESERVED = "That username is reserved."


def username_problem(username: str) -> str | None:
    """What is wrong with a name for a new account, for the person choosing it."""
    if not USERNAME_RE.match(username):
        return USERNAME_RULE
    if username.lower() in RESERVED_USERNAMES:
        return USERNAME_RESERVED
    return None


TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}\Z", re.ASCII)
UID_RE = re.compile(r"^[1-9][0-9]{0,17}\Z", re.ASCII)
# A device is named by its token's SHA-256 (hex): a field of `sessions:{<uid>}`.
DEVICE_ID_RE = re.compile(r"^[0-9a-f]{64}\Z", re.ASCII)
# An API access token as clients hold it: `<uid>.<43 URL-safe characters>`. The id
# names the slot of the token's grant, so the check is one read in the user's slot,
# with the user's hash, like a session's; clients treat the whole as opaque.
BEARER_RE = re.compile(r"^([1-9][0-9]{0,17})\.([A-Za-z0-9_-]{43})\Z", re.ASCII)


@dataclass(frozen=True, slots=True)
class User:
    """A user as pages see it. The one owner of the `user:{<uid>}` hash layout.

    The hash holds `username`, `created` and `password` (a Django password hash,
    read only by the login service through `PASSWORD_FIELD`). An account being
    deleted has lost its password and gained `deleted` (`DELETED_FIELD`, unix
    seconds) until its deletion job removes the hash: every read through `FIELDS`
    sees no user from that moment on. A private account (`PRIVATE_FIELD`: when it
    turned private, unix seconds) lets only the followers it approved see its
    statuses (`timeline.privacy`); a hash without the field (every user made before
    it existed) is a public account, so no migration is needed.

    The profile's face: `name` (a display name) and `bio`, absent until set; and
    `avatar`, the version of an uploaded avatar (`avatar:{<uid>}`), absent for the
    generated one. A hash without them (every user made before they existed) shows
    the username and the generated avatar: no migration either. `CARD_FIELDS` are
    what a status row shows of its author, read fresh on every page. `unindexed`
    (`UNINDEXED_FIELD`) marks a new account the people search may not hold yet.
    """

    id: int
    username: str
    created: float
    private: bool = False
    name: str = ""
    bio: str = ""
    avatar: str = ""

    is_authenticated: ClassVar[bool] = True
    FIELDS: ClassVar[tuple[str, ...]] = (
        "username",
        "created",
        "deleted",
        "private",
        "name",
        "bio",
        "avatar",
    )
    PASSWORD_FIELD: ClassVar[str] = "password"
    USERNAME_FIELD: ClassVar[str] = "username"
    DELETED_FIELD: ClassVar[str] = "deleted"
    PRIVATE_FIELD: ClassVar[str] = "private"
    NAME_FIELD: ClassVar[str] = "name"
    BIO_FIELD: ClassVar[str] = "bio"
    AVATAR_FIELD: ClassVar[str] = "avatar"
    # When the user last revoked every app's access (unix seconds; absent: never):
    # an authorization code issued before gives no token (`app_token_create`).
    APPS_REVOKED_FIELD: ClassVar[str] = "apps_revoked"
    # Written by the sign-up with the hash, deleted once the people search's index
    # holds the user (`accounts.services.user_create`): while present, each log-in
    # writes the entries. Absent in every hash made before it (all indexed).
    UNINDEXED_FIELD: ClassVar[str] = "unindexed"
    # A card's: what a row shows of its author, and whether they are private
    # (the row then offers "Quote" to them alone, `timeline.rendering`).
    CARD_FIELDS: ClassVar[tuple[str, ...]] = (
        "username",
        "name",
        "avatar",
        "deleted",
        "private",
    )

    @classmethod
    def from_fields(cls, uid: int, values: list[str | None]) -> User | None:
        """The user from an HMGET of `FIELDS`; None when the hash does not exist or
        the account is being deleted."""
        username, created, deleted, private, name, bio, avatar = values
        if username is None or deleted is not None:
            return None
        return cls(
            id=uid,
            username=username,
            created=float(created or 0),
            private=private is not None,
            name=name or "",
            bio=bio or "",
            avatar=avatar or "",
        )

    def to_hash(self, *, password_hash: str) -> dict[str, str]:
        fields = {
            "username": self.username,
            "created": f"{self.created:.3f}",
            self.PASSWORD_FIELD: password_hash,
        }
        if self.private:
            fields[self.PRIVATE_FIELD] = f"{int(self.created)}"
        return fields

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)

    @property
    def url(self) -> str:
        return url_for("timeline:profile", self.username)

    @property
    def display_name(self) -> str:
        return self.name or self.username

    @property
    def avatar_url(self) -> str:
        return avatar_url(self.id, self.avatar)

    @property
    def card(self) -> Card:
        return Card(
            id=self.id, name=self.name, avatar=self.avatar, private=self.private
        )


AVATAR_VERSION_RE = re.compile(r"^[0-9a-f]{16}\Z", re.ASCII)


def avatar_url(
    uid: int,
    version: str,
    url: Callable[..., str] = url_for,
    *,
    raster: bool = False,
) -> str:
    """An uploaded avatar's versioned URL, or the generated one's (no version): its
    SVG for the site's pages, its PNG when `raster` (API clients draw no SVG; an
    upload is raster already). `url`: `url_for`, or a response's
    `config.reverse.url_maker()`."""
    if version:
        return url("accounts:avatar", uid, version)
    if raster:
        return url("accounts:avatar_generated_png", uid)
    return url("accounts:avatar_generated", uid)


@dataclass(frozen=True, slots=True)
class Card:
    """What a status row shows of its author beside the username: their display
    name and avatar, and whether they are private (`User.CARD_FIELDS`), read fresh
    on every page, never cached with the status, so an edit shows on old statuses
    too."""

    id: int
    name: str = ""
    avatar: str = ""
    # A private account (`timeline.privacy`): its statuses are quoted by it alone.
    private: bool = False

    @classmethod
    def from_fields(cls, uid: int, values: list[str | None]) -> Card | None:
        """The card from an HMGET of `User.CARD_FIELDS`; None for no such user."""
        username, name, avatar, deleted, private = values
        if username is None or deleted is not None:
            return None
        return cls(
            id=uid, name=name or "", avatar=avatar or "", private=private is not None
        )

    @classmethod
    def from_read(cls, uid: int, values: list[str | None]) -> Card | None:
        """`from_fields`, memoized on the values as read (`_card_read`)."""
        return _card_read(uid, tuple(values))

    @property
    def avatar_url(self) -> str:
        return avatar_url(self.id, self.avatar)


# A card is read with every status row: parsed once per distinct value (an edited
# name or avatar is a new key), shared, as frozen, by the pages that read it again.
@functools.lru_cache(maxsize=10_000)
def _card_read(uid: int, values: tuple[str | None, ...]) -> Card | None:
    return Card.from_fields(uid, values)


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


@dataclass(frozen=True, slots=True)
class BearerCredentials:
    """What an API request's `Authorization: Bearer` header claims: a user id and
    an access token, not yet checked. Never read from a cookie."""

    uid: int
    token: str

    @classmethod
    def parse(cls, header: str | None) -> BearerCredentials | None:
        """Parse `Bearer <uid>.<token>`; None for anything else."""
        if not header:
            return None
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return cls.from_token(value.strip())

    @classmethod
    def from_token(cls, value: str) -> BearerCredentials | None:
        match = BEARER_RE.match(value)
        if not match:
            return None
        return cls(uid=int(match[1]), token=match[2])

    @property
    def access_token(self) -> str:
        """The token as the client holds it."""
        return f"{self.uid}.{self.token}"


@dataclass(frozen=True, slots=True)
class AppGrant:
    """What an API access token allows: the app it was issued to and its scopes.

    The one owner of the `apptokens:{<uid>}` layout: each field (the token's
    SHA-256, as sessions store theirs) holds the JSON of `to_json()`.
    """

    id: str  # the token's hash: the devices page's handle to revoke it
    client_id: str
    app: str
    scopes: tuple[str, ...]
    created: float
    website: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {
                "client": self.client_id,
                "app": self.app,
                "scopes": " ".join(self.scopes),
                "created": round(self.created),
                "website": self.website,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, grant_id: str, value: str | None) -> AppGrant | None:
        """The grant from its stored JSON; None for none (or anything unreadable)."""
        if not value:
            return None
        try:
            found = json.loads(value)
        except ValueError:
            return None
        if not isinstance(found, dict):
            return None
        return cls(
            id=grant_id,
            client_id=str(found.get("client", "")),
            app=str(found.get("app", "")),
            scopes=tuple(str(found.get("scopes", "")).split()),
            created=float(found.get("created") or 0),
            website=str(found.get("website", "")),
        )

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created, tz=UTC)


@dataclass(frozen=True, slots=True)
class Device:
    """A logged-in device (a session) as the settings page lists it.

    The one owner of the `devices:{<uid>}` layout: each field (the token's hash, as
    in `sessions:{<uid>}`) holds the JSON that `metadata()` makes at sign-in. A
    session made before that hash existed has none: `label` and `signed_in` are None.
    """

    id: str
    expires: float
    signed_in: float | None = None
    label: str | None = None
    address: str | None = None
    current: bool = False

    UNKNOWN_LABEL: ClassVar[str] = "Unknown device"

    @staticmethod
    def metadata(*, signed_in: float, label: str, address: str) -> str:
        """The JSON stored for a device at sign-in."""
        return json.dumps(
            {"created": round(signed_in), "label": label, "ip": address},
            separators=(",", ":"),
        )

    @classmethod
    def from_fields(
        cls, device_id: str, expiry: str, metadata: str | None, *, current: bool
    ) -> Device:
        """The device from its session's expiry and its metadata (None: none)."""
        try:
            found = json.loads(metadata) if metadata else {}
        except ValueError:
            found = {}
        if not isinstance(found, dict):
            found = {}
        created, label, ip = found.get("created"), found.get("label"), found.get("ip")
        return cls(
            id=device_id,
            expires=float(expiry),
            signed_in=float(created) if isinstance(created, int | float) else None,
            label=label if isinstance(label, str) else None,
            address=ip if isinstance(ip, str) else None,
            current=current,
        )

    @property
    def name(self) -> str:
        return self.label or self.UNKNOWN_LABEL

    @property
    def signed_in_at(self) -> datetime | None:
        if self.signed_in is None:
            return None
        return datetime.fromtimestamp(self.signed_in, tz=UTC)

    @property
    def expires_at(self) -> datetime:
        return datetime.fromtimestamp(self.expires, tz=UTC)


class AccountError(Exception):
    """Base of the errors the accounts services raise for the user to see."""


class UsernameTaken(AccountError):
    pass


class InvalidUsername(AccountError):
    pass


class InvalidProfile(AccountError):
    """A display name or bio refused: `field` says which, the message why."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class InvalidAvatar(AccountError):
    """An uploaded avatar refused (not an image, too large, too many pixels)."""


class InvalidCredentials(AccountError):
    pass


class TooManyAttempts(AccountError):
    """An abuse limit refused the action (`accounts.limits`): `action` names which
    (post, follow, signup, login), `retry_after` says in how many seconds, `limit`
    how many actions the refusing rate allows in its period (None: not known)."""

    def __init__(
        self, retry_after: int, action: str = "login", limit: int | None = None
    ):
        super().__init__(retry_after, action)
        self.retry_after = retry_after
        self.action = action
        self.limit = limit

    @property
    def wait(self) -> str:
        """How long to wait, for people: "40 seconds", "3 minutes", "2 hours"."""
        seconds = max(self.retry_after, 1)
        for unit, size in (("hour", 3600), ("minute", 60)):
            if seconds >= size * (2 if unit == "hour" else 1):
                n = -(-seconds // size)
                return f"{n} {unit}{'s' if n != 1 else ''}"
        return f"{seconds} second{'s' if seconds != 1 else ''}"
