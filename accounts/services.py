"""Writes for accounts: sign-up, log-in, sessions, the login-failure limit and a
deleted account's name (the rest of a deletion is `timeline.services.account_delete`,
which owns the keys of both apps)."""

from __future__ import annotations

import secrets
import time

from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password

from accounts import keys
from accounts.domain import (
    USERNAME_RE,
    USERNAME_RULE,
    Credentials,
    InvalidCredentials,
    InvalidUsername,
    TooManyAttempts,
    User,
    UsernameTaken,
    name_claim_uid,
    name_retired,
)
from accounts.selectors import token_hash
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis

# Store a session and keep the hash small: drop expired devices, then the oldest
# beyond the cap, and let the key itself expire with its last session.
_SESSION_ADD = LuaScript(
    """
local key, field, expiry = KEYS[1], ARGV[1], tonumber(ARGV[2])
local now, cap = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('HSET', key, field, expiry)
local all = redis.call('HGETALL', key)
local live = {}
for i = 1, #all, 2 do
  local exp = tonumber(all[i + 1])
  if exp <= now then
    redis.call('HDEL', key, all[i])
  else
    live[#live + 1] = {all[i], exp}
  end
end
table.sort(live, function(a, b) return a[2] < b[2] end)
for i = 1, #live - cap do
  redis.call('HDEL', key, live[i][1])
end
redis.call('EXPIREAT', key, math.ceil(live[#live][2]))
return #live
"""
)

# Count a failure in a fixed window. One key per call, so it runs on any Cluster node;
# the TTL check also repairs a key that somehow lost its expiry.
_FAILURE_COUNT = LuaScript(
    """
local n = redis.call('INCR', KEYS[1])
if redis.call('TTL', KEYS[1]) < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return n
"""
)

# check_password() against this when the username is unknown, so that a wrong
# username takes as long as a wrong password and timing reveals nothing.
_DUMMY_HASH: str | None = None


def _dummy_hash() -> str:
    global _DUMMY_HASH
    if _DUMMY_HASH is None:
        _DUMMY_HASH = make_password(secrets.token_urlsafe(16))
    return _DUMMY_HASH


def user_create(*, username: str, password: str) -> User:
    """Create an account; the name is claimed atomically, whatever its case."""
    if not USERNAME_RE.match(username):
        raise InvalidUsername(USERNAME_RULE)
    # Through pipeline_run, so that with REDIS_WAIT_REPLICAS a replica holds the
    # counter before the id is used: a failover must never hand it out again.
    (uid,) = pipeline_run(lambda pipe: pipe.incr(keys.user_ids()))
    user = User(id=uid, username=username, created=round(time.time(), 3))
    record = user.to_hash(password_hash=make_password(password))

    def store_then_claim(pipe) -> None:
        # Publish last: the user hash is unreachable until the name points at it,
        # so a crash between the two steps leaves nothing a visitor could see, and
        # SET NX makes the claim itself atomic (two sign-ups of one name: one wins).
        pipe.hset(keys.user(uid), mapping=record)
        seen_stamp_queue(pipe, uid=uid)  # a new user is an active reader
        pipe.barrier()
        pipe.set(keys.username(username), uid, nx=True)

    _, _, claimed = pipeline_run(store_then_claim)
    if not claimed:
        get_redis().delete(keys.user(uid), keys.seen(uid))  # one slot: one command
        raise UsernameTaken(username)
    return user


def seen_day() -> int:
    """Days since 1970-01-01 (UTC): the unit of the last-seen stamp."""
    return int(time.time() // 86400)


def seen_ttl_seconds() -> int:
    return settings.FANOUT_ACTIVE_DAYS * 86400


def seen_stamp_queue(pipe, *, uid: int) -> None:
    """Queue the stamp that says the user was seen today (active for fan-out)."""
    pipe.set(keys.seen(uid), seen_day(), ex=seen_ttl_seconds())


def session_create(*, uid: int) -> Credentials:
    """Start a session on a new device: a fresh 256-bit token, stored only hashed."""
    token = secrets.token_urlsafe(32)
    now = time.time()
    expiry = now + settings.AUTH_TOKEN_TTL_DAYS * 86400
    _SESSION_ADD(
        keys=[keys.sessions(uid)],
        args=[
            token_hash(token),
            f"{expiry:.0f}",
            f"{now:.0f}",
            settings.AUTH_MAX_DEVICES,
        ],
    )
    return Credentials(uid=uid, token=token)


def session_revoke(*, credentials: Credentials) -> None:
    """Log this device out: its token stops working at once (confirmed by a replica
    with REDIS_WAIT_REPLICAS, so a failover cannot bring it back)."""
    pipeline_run(
        lambda pipe: pipe.hdel(
            keys.sessions(credentials.uid), token_hash(credentials.token)
        )
    )


def session_revoke_all(*, uid: int) -> None:
    """Log the user out on every device."""
    pipeline_run(lambda pipe: pipe.delete(keys.sessions(uid)))


def _failure_keys(username: str, client: str) -> list[str]:
    # A name that cannot exist gets no counter of its own (and never reaches a key).
    names = [keys.login_failures_user(username)] if USERNAME_RE.match(username) else []
    return [*names, keys.login_failures_client(client)]


def login_throttle_check(*, username: str, client: str) -> None:
    """Raise TooManyAttempts while the name or the client is over the failure limit."""

    def read_counts(pipe) -> None:
        for key in _failure_keys(username, client):
            pipe.get(key)
            pipe.ttl(key)

    replies = pipeline_run(read_counts, confirm=False)
    waits = [
        max(ttl, 1)
        for count, ttl in zip(replies[::2], replies[1::2], strict=True)
        if count is not None and int(count) >= settings.LOGIN_FAILURE_LIMIT
    ]
    if waits:
        raise TooManyAttempts(retry_after=max(waits))


def login_failure_record(*, username: str, client: str) -> None:
    """Count a failed login against the name and the client."""
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS

    def count_failures(pipe) -> None:
        for key in _failure_keys(username, client):
            _FAILURE_COUNT.queue(pipe, keys=[key], args=[window])

    pipeline_run(count_failures)


def session_login(
    *, username: str, password: str, client: str
) -> tuple[User, Credentials]:
    """Check a username (any case) and password and start a session for that device.

    Raises InvalidCredentials without saying which part was wrong, and TooManyAttempts
    when this name or client failed too often lately.
    """
    login_throttle_check(username=username, client=client)
    r = get_redis()
    uid = (
        name_claim_uid(r.get(keys.username(username)))
        if USERNAME_RE.match(username)
        else None
    )
    fields = (*User.FIELDS, User.PASSWORD_FIELD)
    stored = r.hmget(keys.user(int(uid)), fields) if uid else [None] * len(fields)
    user = User.from_fields(int(uid), stored[:-1]) if uid else None
    password_hash = stored[-1]
    if user is None or password_hash is None:
        check_password(password, _dummy_hash())
        login_failure_record(username=username, client=client)
        raise InvalidCredentials()
    if not check_password(password, password_hash):
        login_failure_record(username=username, client=client)
        raise InvalidCredentials()
    r.delete(keys.login_failures_user(username))
    return user, session_create(uid=user.id)


def password_confirm(*, user: User, password: str, client: str) -> None:
    """Check the signed-in user's password again before a grave change.

    A wrong one counts as a failed login of that name and client, and the same
    limit applies (TooManyAttempts): a stolen cookie cannot guess the password here.
    """
    login_throttle_check(username=user.username, client=client)
    stored = get_redis().hget(keys.user(user.id), User.PASSWORD_FIELD)
    if stored is None or not check_password(password, stored):
        login_failure_record(username=user.username, client=client)
        raise InvalidCredentials()


# KEYS: the name's claim. ARGV: the deleted account's uid, the retired value, the
# grace period (s). Retires the name only while it still names that account, so a
# repeat (the deletion job does it again) neither extends the grace period nor
# touches a name someone claimed after it.
_NAME_RETIRE = LuaScript(
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0
"""
)


def username_retire(*, uid: int, username: str) -> bool:
    """Keep a deleted account's name from being claimed until ACCOUNT_NAME_GRACE_DAYS
    have passed (sign-up says it is taken; profiles and log-in find no one)."""
    return bool(
        _NAME_RETIRE(
            keys=[keys.username(username)],
            args=[uid, name_retired(uid), settings.ACCOUNT_NAME_GRACE_DAYS * 86400],
        )
    )
