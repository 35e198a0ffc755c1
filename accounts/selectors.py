"""Reads of users and sessions. Every Redis hash becomes a `User` in `_user()` only."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Iterable

from accounts import keys
from accounts.domain import ANONYMOUS, USERNAME_RE, AnonymousUser, Credentials, User
from config.redis import Batch, Deferred, get_redis, on_client_change

USER_FIELDS = ("username", "created")


def token_hash(token: str) -> str:
    """What Redis stores of a token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


def _user(uid: int, values: list[str | None]) -> User | None:
    username, created = values
    if username is None:
        return None
    return User(id=uid, username=username, created=float(created or 0))


def user_get(*, uid: int) -> User | None:
    """The user with this id, or None."""
    return _user(uid, get_redis().hmget(keys.user(uid), USER_FIELDS))


class _Remembered:
    """What this process remembers of the store: usernames <-> ids.

    Usernames and ids never change once claimed, so remembering them saves profile
    pages a round trip. A page that relies on them reads the store's epoch (a token
    set when the store gets its first user) in its first round trip; `remembered_valid`
    drops everything learned under another epoch, so a store flushed or replaced
    under a running site is noticed at once.
    """

    MAX = 100_000

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        self.epoch: str | None = None
        self.uid_by_name: dict[str, int] = {}
        self.name_by_uid: dict[int, str] = {}

    def learn(self, users: Iterable[User]) -> None:
        if self.epoch is None:
            return
        if len(self.name_by_uid) >= self.MAX:
            epoch = self.epoch
            self.clear()
            self.epoch = epoch
        for user in users:
            self.uid_by_name[user.username.lower()] = user.id
            self.name_by_uid[user.id] = user.username


_REMEMBERED = _Remembered()
on_client_change(_REMEMBERED.clear)


def epoch_queue(batch: Batch) -> Deferred:
    """Queue a read of the store's epoch, for `remembered_valid`."""
    return batch.queue(
        lambda pipe: pipe.get(keys.store_epoch()), lambda replies: replies[0]
    )


def remembered_valid(epoch: str | None) -> bool:
    """Whether what the process remembers belongs to the store with this epoch.

    When it does not, everything remembered is dropped and learning starts again
    under this epoch.
    """
    if epoch is not None and epoch == _REMEMBERED.epoch:
        return True
    _REMEMBERED.clear()
    if epoch is None:  # a store from before epochs: give it one (once)
        get_redis().set(keys.store_epoch(), secrets.token_hex(8), nx=True)
    _REMEMBERED.epoch = epoch
    return False


def remember_users(users: Iterable[User]) -> None:
    """Remember these users' names and ids (under the epoch last validated)."""
    _REMEMBERED.learn(users)


def remembered_uid(username: str) -> int | None:
    return _REMEMBERED.uid_by_name.get(username.lower())


def remembered_usernames(uids: Iterable[int]) -> dict[int, str]:
    known = _REMEMBERED.name_by_uid
    return {uid: known[uid] for uid in uids if uid in known}


def user_id_by_username(*, username: str) -> int | None:
    """The id claimed by this username (any case), or None: one round trip."""
    if not USERNAME_RE.match(username):
        return None
    uid = get_redis().get(keys.username(username))
    return int(uid) if uid else None


def user_get_by_username(*, username: str) -> User | None:
    """The user with this username (any case), or None."""
    uid = user_id_by_username(username=username)
    return user_get(uid=uid) if uid else None


def users_queue(batch: Batch, *, uids: Iterable[int]) -> Deferred:
    """Queue a read of several users; the value is a {uid: User} of those that exist."""
    uids = list(uids)

    def build(pipe):
        for uid in uids:
            pipe.hmget(keys.user(uid), USER_FIELDS)

    def parse(replies):
        found = (_user(uid, values) for uid, values in zip(uids, replies, strict=True))
        return {user.id: user for user in found if user is not None}

    return batch.queue(build, parse)


def viewer_queue(batch: Batch, *, credentials: Credentials | None) -> Deferred:
    """Queue the check of a request's credentials; the value is a User or ANONYMOUS.

    Both commands address the user's own slot, so a page can add its first read of
    that user's keys to the same round trip.
    """
    if credentials is None:
        return batch.queue(lambda pipe: None, lambda replies: ANONYMOUS)
    uid = credentials.uid

    def build(pipe):
        pipe.hget(keys.sessions(uid), token_hash(credentials.token))
        pipe.hmget(keys.user(uid), USER_FIELDS)

    def parse(replies) -> User | AnonymousUser:
        expiry, values = replies
        if expiry is None or float(expiry) <= time.time():
            return ANONYMOUS
        return _user(uid, values) or ANONYMOUS

    return batch.queue(build, parse)


def viewer_get(*, credentials: Credentials | None) -> User | AnonymousUser:
    """The user these credentials prove, or ANONYMOUS: one round trip."""
    if credentials is None:
        return ANONYMOUS
    batch = Batch()
    viewer = viewer_queue(batch, credentials=credentials)
    batch.execute()
    return viewer.value
