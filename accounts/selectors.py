"""Reads of users, sessions and devices, and the request's read batch (`PageReads`)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable

from accounts import keys, names
from accounts.domain import (
    ANONYMOUS,
    USERNAME_RE,
    AnonymousUser,
    AppGrant,
    BearerCredentials,
    Credentials,
    Device,
    User,
    name_claim_uid,
)
from config.pipelines import Deferred, ReadBatch, hashes_queue
from config.redis import get_redis, get_redis_bytes


def token_hash(token: str) -> str:
    """What Redis stores of a token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


def _viewer_queue(
    reads: ReadBatch, credentials: Credentials | None
) -> Deferred[User | AnonymousUser]:
    """Queue the check of a request's session credentials: a User, or ANONYMOUS."""
    if credentials is None:
        return reads.queue(lambda pipe: None, lambda replies: ANONYMOUS)
    uid = credentials.uid

    def build(pipe) -> None:
        pipe.hget(keys.sessions(uid), token_hash(credentials.token))
        pipe.hmget(keys.user(uid), User.FIELDS)

    def parse(replies) -> User | AnonymousUser:
        expiry, values = replies
        if expiry is None or float(expiry) <= time.time():
            return ANONYMOUS
        return User.from_fields(uid, values) or ANONYMOUS

    return reads.queue(build, parse)


def _bearer_queue(
    reads: ReadBatch, credentials: BearerCredentials
) -> Deferred[tuple[User | AnonymousUser, AppGrant | None]]:
    """Queue the check of an API access token: the User and what the token allows,
    or (ANONYMOUS, None). One read in the user's slot, as a session's check."""
    uid = credentials.uid
    grant_id = token_hash(credentials.token)

    def build(pipe) -> None:
        pipe.hget(keys.app_tokens(uid), grant_id)
        pipe.hmget(keys.user(uid), User.FIELDS)

    def parse(replies) -> tuple[User | AnonymousUser, AppGrant | None]:
        stored, values = replies
        grant = AppGrant.from_json(grant_id, stored)
        user = User.from_fields(uid, values) if grant is not None else None
        if user is None:
            return ANONYMOUS, None
        return user, grant

    return reads.queue(build, parse)


class _Part:
    """One part of a Deferred's tuple value (the viewer of a token's check), read
    like a Deferred."""

    __slots__ = ("_whole", "_index")

    def __init__(self, whole: Deferred, index: int):
        self._whole = whole
        self._index = index

    @property
    def value(self):
        return self._whole.value[self._index]

    @property
    def done(self) -> bool:
        return self._whole.done


class PageReads(ReadBatch):
    """The reads of one request, the viewer's auth check queued first.

    The auth middleware makes one per request (`request.reads`); selectors queue
    their reads in it, so a page's first round trip carries the auth check too.
    Reads about the viewer (their home, whom they follow) are queued for the id the
    cookie *claims* (`claimed_uid`) and trusted only once `viewer` proved it.
    """

    def __init__(self, credentials: Credentials | BearerCredentials | None = None):
        super().__init__()
        self.claimed_uid = credentials.uid if credentials is not None else None
        # When the first round trip, the one that checks the credentials, was sent
        # (unix seconds; None until then): what the viewer does on the strength of
        # that check counts from then, so that a revocation landing after the
        # check also ends it (`api.services.authorization_code_create`).
        self.checked_at: float | None = None
        # What an API token allows (`accounts.domain.AppGrant`); None for a session.
        self.grant: Deferred[AppGrant | None] | None = None
        # The claimed viewer's keyword filters, queued behind the auth check by
        # `timeline.middleware.FiltersMiddleware` (`timeline.filters`).
        self.filters: Deferred | None = None
        if isinstance(credentials, BearerCredentials):
            checked = _bearer_queue(self, credentials)
            self.viewer = _Part(checked, 0)
            self.grant = _Part(checked, 1)
        else:
            self.viewer = _viewer_queue(self, credentials)
        # The day the claimed viewer was last seen (None: never, or too long ago),
        # for the once-a-day stamp (`timeline.middleware`).
        uid = self.claimed_uid
        self.seen_day: Deferred[int | None] | None = (
            self.queue(
                lambda pipe: pipe.get(keys.seen(uid)),
                lambda replies: int(replies[0]) if replies[0] else None,
            )
            if uid is not None
            else None
        )

    def execute(self) -> None:
        if self.checked_at is None:
            self.checked_at = time.time()
        super().execute()

    def proven_uid(self) -> int | None:
        """The viewer's id once the credentials are proven (sends the batch if due)."""
        viewer = self.viewer.value
        return viewer.id if viewer.is_authenticated else None


def user_get(*, uid: int) -> User | None:
    """The user with this id, or None."""
    return User.from_fields(uid, get_redis().hmget(keys.user(uid), User.FIELDS))


def user_id_by_username(*, username: str) -> int | None:
    """The id claimed by this username (any case), or None (also for the name of a
    deleted account in its grace period): one round trip."""
    if not USERNAME_RE.match(username):
        return None
    return name_claim_uid(get_redis().get(keys.username(username)))


def user_get_by_username(*, username: str) -> User | None:
    """The user with this username (any case), or None."""
    uid = user_id_by_username(username=username)
    return user_get(uid=uid) if uid else None


def users_queue(reads: ReadBatch, *, uids: Iterable[int]) -> Deferred[dict[int, User]]:
    """Queue a read of several users; the value maps uid -> User for those found."""
    return hashes_queue(reads, list(uids), keys.user, User.FIELDS, User.from_fields)


def user_id_guess(*, username: str, fresh: bool = False) -> int | None:
    """The id this name (any case) names: remembered by the process, else looked up.

    A remembered id is a guess until `user_confirm_queue` confirms it; `fresh=True`
    skips the memory (one round trip) and remembers what the store says.
    """
    if not fresh:
        uid = names.remembered_id(username)
        if uid is not None:
            return uid
    uid = user_id_by_username(username=username)
    if uid is not None:
        names.remember(username, uid)
    return uid


def user_confirm_queue(
    reads: ReadBatch, *, uid: int, username: str
) -> Deferred[User | None]:
    """Queue a read of user `uid`; the value is that User if it is named `username`.

    None means the guess was wrong (or the user is gone): the name is forgotten.
    """

    def build(pipe) -> None:
        pipe.hmget(keys.user(uid), User.FIELDS)

    def parse(replies) -> User | None:
        user = User.from_fields(uid, replies[0])
        if names.confirms(user, username):
            return user
        names.forget(username)
        return None

    return reads.queue(build, parse)


def devices_get(*, reads: PageReads, credentials: Credentials) -> list[Device]:
    """The viewer's logged-in devices, this one (`credentials`) first, then the most
    recent sign-ins; [] when the request proves no viewer.

    Queued in the request's batch for the claimed id and used only once proven.
    """
    uid = reads.claimed_uid
    if uid is None:
        return []
    this_device = token_hash(credentials.token)

    def build(pipe) -> None:
        pipe.hgetall(keys.sessions(uid))
        pipe.hgetall(keys.devices(uid))

    def parse(replies) -> list[Device]:
        sessions, metadata = replies
        now = time.time()
        devices = [
            Device.from_fields(
                device_id,
                expiry,
                metadata.get(device_id),
                current=device_id == this_device,
            )
            for device_id, expiry in sessions.items()
            if float(expiry) > now
        ]
        return sorted(devices, key=lambda d: (not d.current, -d.expires))

    devices = reads.queue(build, parse)
    return devices.value if reads.proven_uid() == uid else []


def avatar_get(*, uid: int, version: str) -> bytes | None:
    """The uploaded avatar's image if it is still this version, else None."""
    stored, image = get_redis_bytes().hmget(keys.avatar(uid), ["v", "img"])
    if stored is None or stored.decode() != version:
        return None
    return image


def app_grants_queue(reads: PageReads) -> Deferred[list[AppGrant]]:
    """Queue a read of the apps the viewer authorized (their access tokens'
    grants), newest first; the value is [] unless the request proves the viewer."""
    uid = reads.claimed_uid
    if uid is None:
        return reads.queue(lambda pipe: None, lambda replies: [])

    def parse(replies) -> list[AppGrant]:
        if reads.proven_uid() != uid:
            return []
        found = (AppGrant.from_json(g, value) for g, value in replies[0].items())
        return sorted(
            (grant for grant in found if grant is not None),
            key=lambda grant: -grant.created,
        )

    return reads.queue(lambda pipe: pipe.hgetall(keys.app_tokens(uid)), parse)


def app_grant_get(*, credentials: BearerCredentials) -> AppGrant | None:
    """What this access token allows, or None when it is not (or no longer) valid."""
    grant_id = token_hash(credentials.token)
    stored = get_redis().hget(keys.app_tokens(credentials.uid), grant_id)
    return AppGrant.from_json(grant_id, stored)
