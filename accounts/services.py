"""Writes for accounts: sign-up, log-in, sessions and the login-failure limit."""

from __future__ import annotations

import secrets
import time

from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password

from accounts import keys, limits
from accounts.domain import (
    USERNAME_RE,
    USERNAME_RULE,
    Credentials,
    InvalidCredentials,
    InvalidUsername,
    User,
    UsernameTaken,
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

# check_password() against this when the username is unknown, so that a wrong
# username takes as long as a wrong password and timing reveals nothing.
_DUMMY_HASH: str | None = None


def _dummy_hash() -> str:
    global _DUMMY_HASH
    if _DUMMY_HASH is None:
        _DUMMY_HASH = make_password(secrets.token_urlsafe(16))
    return _DUMMY_HASH


def user_create(
    *, username: str, password: str, limit: limits.Limit | None = None
) -> User:
    """Create an account; the name is claimed atomically, whatever its case.

    With `limit` (a request's: its client's sign-up budget, `limits.signup`) the
    sign-up is taken from it before the password is hashed, or refused with
    TooManyAttempts.
    """
    if not USERNAME_RE.match(username):
        raise InvalidUsername(USERNAME_RULE)
    if limit is not None:
        limits.take(limit)
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


def login_attempt_take(*, username: str, client: str) -> tuple[limits.Limit, ...]:
    """Take one password attempt from the name-and-client pair's budget and the
    client's, before the password is checked (so parallel guesses cannot pass the
    limit); raise TooManyAttempts when either is spent. Give the attempt back with
    `login_attempt_refund` when the password was right: only failures count."""
    # A name that cannot exist gets no budget of its own (and never reaches a key).
    pair = (limits.login_pair(username, client),) if USERNAME_RE.match(username) else ()
    taken = (*pair, limits.login_client(client))
    limits.take(*taken)
    return taken


def login_attempt_refund(taken: tuple[limits.Limit, ...]) -> None:
    """Give back an attempt `login_attempt_take` took: the password was right."""
    limits.give_back(*taken)


def session_login(
    *, username: str, password: str, client: str
) -> tuple[User, Credentials]:
    """Check a username (any case) and password and start a session for that device.

    Raises InvalidCredentials without saying which part was wrong, and TooManyAttempts
    when this name from this client, or this client, failed too often lately.
    """
    taken = login_attempt_take(username=username, client=client)
    r = get_redis()
    uid = r.get(keys.username(username)) if USERNAME_RE.match(username) else None
    fields = (*User.FIELDS, User.PASSWORD_FIELD)
    stored = r.hmget(keys.user(int(uid)), fields) if uid else [None] * len(fields)
    user = User.from_fields(int(uid), stored[:-1]) if uid else None
    password_hash = stored[-1]
    if user is None or password_hash is None:
        check_password(password, _dummy_hash())
        raise InvalidCredentials()
    if not check_password(password, password_hash):
        raise InvalidCredentials()
    login_attempt_refund(taken)
    return user, session_create(uid=user.id)
