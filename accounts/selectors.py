"""Reads of users and sessions. Every Redis hash becomes a `User` in `_user()` only."""

from __future__ import annotations

import hashlib
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


# Usernames and ids never change once claimed, so a process may remember which id a
# name points to and skip a round trip on profile pages. Callers check the name in the
# user hash they read anyway (`user_id_forget` on a mismatch), so a store replaced
# under a running site cannot serve a wrong profile.
_UID_BY_NAME: dict[str, int] = {}
_UID_CACHE_MAX = 100_000
on_client_change(_UID_BY_NAME.clear)


def user_id_by_username(*, username: str) -> int | None:
    """The id claimed by this username (any case), or None."""
    if not USERNAME_RE.match(username):
        return None
    name = username.lower()
    cached = _UID_BY_NAME.get(name)
    if cached is not None:
        return cached
    uid = get_redis().get(keys.username(name))
    if not uid:
        return None
    if len(_UID_BY_NAME) >= _UID_CACHE_MAX:
        _UID_BY_NAME.clear()
    _UID_BY_NAME[name] = int(uid)
    return int(uid)


def user_id_forget(*, username: str) -> None:
    """Drop a remembered name -> id mapping that turned out wrong."""
    _UID_BY_NAME.pop(username.lower(), None)


def user_get_by_username(*, username: str) -> User | None:
    """The user with this username (any case), or None."""
    uid = user_id_by_username(username=username)
    if uid is None:
        return None
    user = user_get(uid=uid)
    if user is None or user.username.lower() != username.lower():
        user_id_forget(username=username)
        uid = user_id_by_username(username=username)
        user = user_get(uid=uid) if uid else None
    return user


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


def session_count(*, uid: int) -> int:
    """How many devices hold a live session for this user."""
    now = time.time()
    return sum(1 for v in get_redis().hvals(keys.sessions(uid)) if float(v) > now)
