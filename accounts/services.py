"""Writes for accounts: sign-up, log-in, passwords, sessions (devices), the abuse
limits on log-in, and a deleted account's name (the rest of a deletion is
`timeline.services.account_delete`, which owns the keys of both apps)."""

from __future__ import annotations

import secrets
import time

from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password

from accounts import keys, limits
from accounts.avatars import avatar_encode
from accounts.domain import (
    DEVICE_ID_RE,
    USERNAME_RE,
    AppGrant,
    BearerCredentials,
    Credentials,
    Device,
    InvalidCredentials,
    InvalidProfile,
    InvalidUsername,
    User,
    UsernameTaken,
    name_claim_uid,
    name_retired,
    username_problem,
)
from accounts.selectors import token_hash
from accounts.useragent import device_label
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, is_cluster
from timeline import counts
from timeline import keys as timeline_keys
from timeline.domain import normalize_text, text_shows_something

# Store a session and its device's metadata, and keep both hashes small and in step:
# drop expired devices, then the oldest beyond the cap, then any metadata left
# without its session, and let both keys expire with their last session. Shared by
# the scripts that start a session (Lua scripts cannot call each other).
_SESSION_ADD_FUNCTION = """
local function session_add(sessions, devices, field, expiry, metadata, now, cap)
  redis.call('HSET', sessions, field, expiry)
  redis.call('HSET', devices, field, metadata)
  local all = redis.call('HGETALL', sessions)
  local live = {}
  for i = 1, #all, 2 do
    local exp = tonumber(all[i + 1])
    if exp <= now then
      redis.call('HDEL', sessions, all[i])
    else
      live[#live + 1] = {all[i], exp}
    end
  end
  table.sort(live, function(a, b) return a[2] < b[2] end)
  for i = 1, #live - cap do
    redis.call('HDEL', sessions, live[i][1])
  end
  for _, f in ipairs(redis.call('HKEYS', devices)) do
    if redis.call('HEXISTS', sessions, f) == 0 then
      redis.call('HDEL', devices, f)
    end
  end
  local last = math.ceil(live[#live][2])
  redis.call('EXPIREAT', sessions, last)
  redis.call('EXPIREAT', devices, last)
  return math.min(#live, cap)
end
"""

# KEYS: sessions, devices. ARGV: the session's arguments (`_session_args`).
_SESSION_ADD = LuaScript(
    _SESSION_ADD_FUNCTION
    + """
return session_add(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[3],
                   tonumber(ARGV[4]), tonumber(ARGV[5]))
"""
)

# Start the session of a log-in only if the password it checked is still the one
# stored: a password change (or an account deletion, which removes the password)
# that lands while the hash is being checked wins, and the login is refused, so no
# session outlives the change it raced. KEYS: user, sessions, devices. ARGV:
# password field, checked hash, deleted field, then the session's arguments.
# Returns 0 when refused.
_SESSION_LOGIN = LuaScript(
    _SESSION_ADD_FUNCTION
    + """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2]
   or redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1 then
  return 0
end
session_add(KEYS[2], KEYS[3], ARGV[4], tonumber(ARGV[5]), ARGV[6],
            tonumber(ARGV[7]), tonumber(ARGV[8]))
return 1
"""
)

# Replace a password, log out every device and start this device's new session, in
# one step: no old token works for a moment under the new password. The stored hash
# must still be the one the caller checked the current password against (a change
# made meanwhile wins; this one is refused). Apps' access tokens go too: a password
# changed because it leaked leaves no way in. KEYS: user, sessions, devices, app
# tokens. ARGV:
# password field, checked hash, new hash, then the session's arguments.
_PASSWORD_CHANGE = LuaScript(
    _SESSION_ADD_FUNCTION
    + """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3], ARGV[9], ARGV[10])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
session_add(KEYS[2], KEYS[3], ARGV[4], tonumber(ARGV[5]), ARGV[6],
            tonumber(ARGV[7]), tonumber(ARGV[8]))
return 1
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
    problem = username_problem(username)
    if problem:
        raise InvalidUsername(problem)
    if limit is not None:
        limits.take(limit)
    # Through pipeline_run, so that with REDIS_WAIT_REPLICAS a replica holds the
    # counter before the id is used: a failover must never hand it out again.
    (uid,) = pipeline_run(lambda pipe: pipe.incr(keys.user_ids()))
    user = User(id=uid, username=username, created=round(time.time(), 3))
    # The search entries owed, recorded with the hash (see below).
    record = {
        **user.to_hash(password_hash=make_password(password)),
        User.UNINDEXED_FIELD: "1",
    }

    def store_then_claim(pipe) -> None:
        # Publish last: the user hash is unreachable until the name points at it,
        # so a crash between the two steps leaves nothing a visitor could see, and
        # SET NX makes the claim itself atomic (two sign-ups of one name: one wins).
        pipe.hset(keys.user(uid), mapping=record)
        seen_stamp_queue(pipe, uid=uid)  # a new user is an active reader
        pipe.barrier()
        pipe.set(keys.username(username), uid, nx=True)

    claimed = pipeline_run(store_then_claim)[-1]
    if not claimed:
        get_redis().delete(keys.user(uid), keys.seen(uid))  # one slot: one command
        raise UsernameTaken(username)
    # Findable once it exists. The index is another slot, and an entry written
    # before the claim would show a user no name leads to (search reads the hash it
    # names, not the claim), so it follows. A crash or a lost reply before this
    # leaves the hash's mark of the entries owed: the next log-in writes them
    # (`session_login`; the sign-up answered 503, so a log-in is what comes next).
    names_index_owed(user=user)
    return user


def _name_entry(user: User) -> str:
    return keys.names_member(user.username, user.id)


def _display_name_entry(user: User, name: str) -> str | None:
    """The search index's entry of a display name; None when there is none or it
    is the username's own entry."""
    entry = keys.names_member(name, user.id) if name else None
    return entry if entry != _name_entry(user) else None


def names_entries(user: User) -> list[str]:
    """The search index's entries of a user: their username, their display name."""
    entry = _display_name_entry(user, user.name)
    return [_name_entry(user), *([entry] if entry else [])]


def names_index_queue(pipe, *, user: User) -> None:
    """Queue the search index's entries of a user (idempotent: one reply, how
    many were new)."""
    pipe.zadd(keys.names_index(), dict.fromkeys(names_entries(user), 0))


# KEYS: the user hash, their posts, the slot's counts. ARGV: the unindexed, username
# and deleted fields, the counts' JOINED field. Drops the mark of a sign-up's search
# entries owed; if it was there (the sign-up completes now) and the account lives,
# counts the user and their statuses in, and the sign-up in JOINED
# (`timeline.counts`).
_SIGNUP_DONE = LuaScript(
    counts.COUNT_LUA
    + """
local user = KEYS[1]
if redis.call('HDEL', user, ARGV[1]) == 1
   and redis.call('HEXISTS', user, ARGV[2]) == 1
   and redis.call('HEXISTS', user, ARGV[3]) == 0 then
  count(KEYS[3], 1, redis.call('ZCARD', KEYS[2]))
  redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
end
return 0
"""
)


def names_index_owed(*, user: User) -> None:
    """Write the search index's entries a sign-up owes, then drop the user hash's
    mark of the debt (`User.UNINDEXED_FIELD`): in that order, so a crash between
    leaves the mark, and the next log-in writes them again (idempotent). Dropping
    the mark completes the sign-up: the site counts the user from then on."""
    slot = timeline_keys.slot_of_user(user.id)

    def index(pipe) -> None:
        names_index_queue(pipe, user=user)
        active_queue(pipe, uid=user.id)  # a new user is active, once signed up
        pipe.barrier()
        _SIGNUP_DONE.queue(
            pipe,
            keys=[
                keys.user(user.id),
                timeline_keys.posts(user.id),
                *counts.slot_keys(slot),
            ],
            args=[
                User.UNINDEXED_FIELD,
                User.USERNAME_FIELD,
                User.DELETED_FIELD,
                counts.JOINED,
            ],
        )

    pipeline_run(index)


def names_unindex_queue(pipe, *, uid: int, username: str, name: str) -> None:
    """Queue the removal of a user's entries from the search index."""
    pipe.zrem(
        keys.names_index(),
        keys.names_member(username, uid),
        *([keys.names_member(name, uid)] if name else []),
    )


DISPLAY_NAME_MAX_LENGTH = 50
BIO_MAX_LENGTH = 300


# Bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069): invisible,
# and one left open in a display name carried its direction past the name, so that
# the handle "@laiciffo_etak" beside it read "kate_official@" (made to look like
# another's). Dropped from names and bios as they come in, silently: nothing
# the person can see changes, and a field they cannot see into could not be fixed
# from an error. Pages isolate a name as well (`<bdi>`), for names stored before.
# The marks (U+200E, U+200F, U+061C) stay: a right-to-left name may need them, and
# they set no direction beyond themselves.
_BIDI_CONTROLS = dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def profile_clean(*, name: str, bio: str) -> tuple[str, str]:
    """The display name and bio as stored (normalized, a name on one line, without
    bidi controls), or InvalidProfile saying what is wrong. Lengths are in code
    points; blank means none, but text of only invisible characters is refused."""
    name = " ".join(normalize_text(name.translate(_BIDI_CONTROLS)).split())
    bio = normalize_text(bio.translate(_BIDI_CONTROLS))
    for field, text, limit, label in (
        ("name", name, DISPLAY_NAME_MAX_LENGTH, "A display name"),
        ("bio", bio, BIO_MAX_LENGTH, "A bio"),
    ):
        if text and not text_shows_something(text):
            raise InvalidProfile(field, f"{label} must show something, or be empty.")
        if len(text) > limit:
            raise InvalidProfile(
                field,
                f"{label} is at most {limit} characters (this one has {len(text)}).",
            )
    return name, bio


# KEYS: the user hash. ARGV: the deleted, name and bio fields, the new name and bio
# (empty: remove). Returns nil for no such account, else the old display name.
_PROFILE_SET = LuaScript(
    """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
then return nil end
local old = redis.call('HGET', KEYS[1], ARGV[2]) or ''
for i = 2, 3 do
  if ARGV[i + 2] == '' then redis.call('HDEL', KEYS[1], ARGV[i])
  else redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2]) end
end
return old
"""
)


def profile_update(*, user: User, name: str, bio: str) -> User:
    """Set the user's display name and bio (InvalidProfile when refused,
    InvalidCredentials when the account is gone); the search index follows the
    display name (its entries written again by each save). Returns the user as now
    stored."""
    name, bio = profile_clean(name=name, bio=bio)
    old = _PROFILE_SET(
        keys=[keys.user(user.id)],
        args=[User.DELETED_FIELD, User.NAME_FIELD, User.BIO_FIELD, name, bio],
    )
    if old is None:
        raise InvalidCredentials()  # the account is gone
    saved = User(
        id=user.id,
        username=user.username,
        created=user.created,
        private=user.private,
        name=name,
        bio=bio,
        avatar=user.avatar,
    )
    old_entry = _display_name_entry(user, old)

    # The index is another slot: its entries follow the hash in a second step,
    # written after every save, not only when the name changed: a save whose
    # reply was lost after the hash changed (a 503) finds the old name equal to
    # the new one when sent again, and must still index it. (A crash between
    # leaves a stale entry, which search checks against the user it names.)
    def reindex(pipe) -> None:
        if old_entry and old_entry not in names_entries(saved):
            pipe.zrem(keys.names_index(), old_entry)
        names_index_queue(pipe, user=saved)

    pipeline_run(reindex)
    return saved


# KEYS: the user hash, the avatar hash. ARGV: the deleted and avatar fields, the new
# version, the image bytes (none: remove the avatar). Returns 0 for no such account.
_AVATAR_SET = LuaScript(
    """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
then return 0 end
if ARGV[4] then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  redis.call('HSET', KEYS[2], 'v', ARGV[3], 'img', ARGV[4])
else
  redis.call('HDEL', KEYS[1], ARGV[2])
  redis.call('DEL', KEYS[2])
end
return 1
"""
)


def avatar_set(*, user: User, data: bytes, limit: limits.Limit | None = None) -> str:
    """Store an uploaded avatar, re-encoded (InvalidAvatar when refused), under a
    new version; return the version (the avatar's URL changes with it).
    InvalidCredentials when the account is gone.

    With `limit` (the user's posting budget: decoding an image is work) it is taken
    first, or refused with TooManyAttempts.
    """
    return avatar_store(user=user, image=avatar_prepare(data=data, limit=limit))


def avatar_prepare(*, data: bytes, limit: limits.Limit | None = None) -> bytes:
    """An upload decoded and re-encoded as stored (InvalidAvatar when refused),
    nothing written: what a change of several fields checks before it writes any
    (`api.views.accounts.update_credentials`). `limit`: as `avatar_set`'s."""
    if limit is not None:
        limits.take(limit)
    return avatar_encode(data)


def avatar_store(*, user: User, image: bytes) -> str:
    """Store an avatar `avatar_prepare` made, under a new version; return it."""
    version = secrets.token_hex(8)
    done = _AVATAR_SET(
        keys=[keys.user(user.id), keys.avatar(user.id)],
        args=[User.DELETED_FIELD, User.AVATAR_FIELD, version, image],
    )
    if not done:
        raise InvalidCredentials()
    return version


def avatar_remove(*, user: User) -> None:
    """Go back to the generated avatar (InvalidCredentials: the account is gone)."""
    done = _AVATAR_SET(
        keys=[keys.user(user.id), keys.avatar(user.id)],
        args=[User.DELETED_FIELD, User.AVATAR_FIELD, ""],
    )
    if not done:
        raise InvalidCredentials()


def seen_day() -> int:
    """Days since 1970-01-01 (UTC): the unit of the last-seen stamp."""
    return int(time.time() // 86400)


def seen_ttl_seconds() -> int:
    return settings.FANOUT_ACTIVE_DAYS * 86400


# `seen:days` holds 2 bytes per uid up to this one (64 MiB); a larger uid's stamp is
# looked up by the fan-out as it is without the copy.
SEEN_DAYS_MAX_UID = 2**25 - 1


def seen_days_args(*, uid: int, day: int) -> list | None:
    """On one server, the offset and the two bytes that record `day` as the user's
    last stamp in `seen:days` (SETRANGE); None on a Cluster, or for a uid past
    SEEN_DAYS_MAX_UID."""
    if uid > SEEN_DAYS_MAX_UID or is_cluster():
        return None
    return [2 * uid, day.to_bytes(2, "big")]


def seen_alive_since() -> int:
    """The first day whose stamp is alive for sure: a stamp lives
    FANOUT_ACTIVE_DAYS days from when it was written, one day less here for clocks a
    little apart (the fan-out looks up an older one, `timeline.fanout`)."""
    return seen_day() - settings.FANOUT_ACTIVE_DAYS + 2


# The v2 instance's `active_month`: the users seen within this many days, today's
# included (Mastodon counts four weeks of log-ins).
ACTIVE_MONTH_DAYS = 30


def active_queue(pipe, *, uid: int) -> None:
    """Queue the note that the user was active today, for the site's count of its
    active users (`keys.active_day`: PFADD, idempotent; kept a day past the month)."""
    key = keys.active_day(seen_day())
    pipe.pfadd(key, uid)
    pipe.expire(key, (ACTIVE_MONTH_DAYS + 1) * 86400)


def seen_stamp_queue(pipe, *, uid: int) -> None:
    """Queue the stamp that says the user was seen today (active for fan-out), and
    its copy in `seen:days` on one server."""
    day = seen_day()
    pipe.set(keys.seen(uid), day, ex=seen_ttl_seconds())
    days = seen_days_args(uid=uid, day=day)
    if days is not None:
        pipe.setrange(keys.seen_days(), *days)


def _session_args(*, user_agent: str, client: str) -> tuple[str, list]:
    """A fresh 256-bit token and the arguments that store its session (hashed)."""
    token = secrets.token_urlsafe(32)
    now = time.time()
    expiry = now + settings.AUTH_TOKEN_TTL_DAYS * 86400
    metadata = Device.metadata(
        signed_in=now, label=device_label(user_agent), address=client
    )
    args = [
        token_hash(token),
        f"{expiry:.0f}",
        metadata,
        f"{now:.0f}",
        settings.AUTH_MAX_DEVICES,
    ]
    return token, args


def session_create(*, uid: int, user_agent: str = "", client: str = "") -> Credentials:
    """Start a session on a new device: a fresh token, stored only hashed, and what
    the device was at sign-in (its browser's label and address)."""
    token, args = _session_args(user_agent=user_agent, client=client)
    _SESSION_ADD(keys=[keys.sessions(uid), keys.devices(uid)], args=args)
    return Credentials(uid=uid, token=token)


def session_revoke(*, credentials: Credentials) -> None:
    """Log this device out: its token stops working at once (confirmed by a replica
    with REDIS_WAIT_REPLICAS, so a failover cannot bring it back)."""
    session_revoke_device(uid=credentials.uid, device_id=token_hash(credentials.token))


def session_revoke_device(*, uid: int, device_id: str) -> bool:
    """Log out one of this user's devices, named by its token's hash; False when it
    was not logged in (or the id is malformed)."""
    if not DEVICE_ID_RE.match(device_id):
        return False

    def forget_device(pipe) -> None:
        # The session first: its metadata alone is harmless, and the next sign-in
        # drops any left behind.
        pipe.hdel(keys.sessions(uid), device_id)
        pipe.hdel(keys.devices(uid), device_id)

    removed, _ = pipeline_run(forget_device)
    return bool(removed)


# KEYS: sessions, devices, app tokens, the user hash. ARGV: the apps-revoked field,
# now. Ends every session and app token, and stamps when, so that an authorization
# code issued before gives no token either (`app_token_create`): one step.
_REVOKE_ALL = LuaScript(
    """
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
end
return 1
"""
)


def session_revoke_all(*, uid: int) -> None:
    """Log the user out on every device, apps included (and codes not yet redeemed)."""
    _REVOKE_ALL(
        keys=[
            keys.sessions(uid),
            keys.devices(uid),
            keys.app_tokens(uid),
            keys.user(uid),
        ],
        args=[User.APPS_REVOKED_FIELD, f"{time.time():.6f}"],
    )


# KEYS: the user's app tokens, the user hash. ARGV: the new token's hash, its
# grant's JSON, the cap, the deleted field. Adds it and drops the oldest grants past
# the cap (by their `created`), in one step: a user never holds more than the cap.
# Returns how many were dropped; -1, adding nothing, when the account is gone or
# being deleted (a code redeemed late must not leave a key behind its deletion job).
_APP_TOKEN_ADD = LuaScript(
    """
if redis.call('EXISTS', KEYS[2]) == 0 or redis.call('HEXISTS', KEYS[2], ARGV[4]) == 1
then return -1 end
local revoked = tonumber(redis.call('HGET', KEYS[2], ARGV[5]) or '0')
if revoked >= tonumber(ARGV[6]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local cap = tonumber(ARGV[3])
local n = redis.call('HLEN', KEYS[1])
if n <= cap then return 0 end
local all = redis.call('HGETALL', KEYS[1])
local grants = {}
for i = 1, #all, 2 do
  local ok, grant = pcall(cjson.decode, all[i + 1])
  local created = ok and type(grant) == 'table' and tonumber(grant.created) or 0
  grants[#grants + 1] = {all[i], created}
end
table.sort(grants, function(a, b) return a[2] < b[2] end)
local dropped = 0
for i = 1, #grants - cap do
  if grants[i][1] ~= ARGV[1] then
    redis.call('HDEL', KEYS[1], grants[i][1])
    dropped = dropped + 1
  end
end
return dropped
"""
)


def app_token_create(
    *,
    uid: int,
    client_id: str,
    app: str,
    website: str,
    scopes: tuple[str, ...],
    authorized_at: float | None = None,
) -> tuple[BearerCredentials, AppGrant]:
    """Issue an API access token to an app for this user: stored only hashed, with
    what it allows; the oldest past AUTH_MAX_APP_TOKENS stop working.
    InvalidCredentials when the account is gone, or when the user revoked every
    app's access (`session_revoke_all`, a password change) after `authorized_at`
    (when they authorized it; default now)."""
    credentials = BearerCredentials(uid=uid, token=secrets.token_urlsafe(32))
    grant = AppGrant(
        id=token_hash(credentials.token),
        client_id=client_id,
        app=app,
        scopes=scopes,
        created=time.time(),
        website=website,
    )
    dropped = _APP_TOKEN_ADD(
        keys=[keys.app_tokens(uid), keys.user(uid)],
        args=[
            grant.id,
            grant.to_json(),
            settings.AUTH_MAX_APP_TOKENS,
            User.DELETED_FIELD,
            User.APPS_REVOKED_FIELD,
            f"{authorized_at if authorized_at is not None else time.time():.6f}",
        ],
    )
    if dropped == -1:
        raise InvalidCredentials()
    return credentials, grant


def app_token_revoke(*, credentials: BearerCredentials) -> bool:
    """Revoke an access token; False when it was not (or no longer) valid."""
    return app_token_revoke_grant(
        uid=credentials.uid, grant_id=token_hash(credentials.token)
    )


def app_token_revoke_grant(*, uid: int, grant_id: str) -> bool:
    """Revoke one of the user's app tokens named by its hash (the devices page)."""
    if not DEVICE_ID_RE.match(grant_id):
        return False
    return bool(get_redis().hdel(keys.app_tokens(uid), grant_id))


def password_change(
    *,
    credentials: Credentials,
    username: str,
    current_password: str,
    new_password: str,
    user_agent: str,
    client: str,
) -> Credentials:
    """Replace a password, log out every device and give this one a fresh token.

    A wrong current password counts as a failed login (InvalidCredentials, then
    TooManyAttempts like the login page).
    """
    uid = credentials.uid
    stored = _password_check(
        uid=uid, username=username, password=current_password, client=client
    )
    token, session = _session_args(user_agent=user_agent, client=client)
    changed = _PASSWORD_CHANGE(
        keys=[
            keys.user(uid),
            keys.sessions(uid),
            keys.devices(uid),
            keys.app_tokens(uid),
        ],
        args=[
            User.PASSWORD_FIELD,
            stored,
            make_password(new_password),
            *session,
            User.APPS_REVOKED_FIELD,
            f"{time.time():.6f}",
        ],
    )
    if not changed:
        raise InvalidCredentials()  # changed meanwhile: the checked one is not current
    return Credentials(uid=uid, token=token)


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
    *, username: str, password: str, client: str, user_agent: str = ""
) -> tuple[User, Credentials]:
    """Check a username (any case) and password and start a session for that device.

    Raises InvalidCredentials without saying which part was wrong, and TooManyAttempts
    when this name from this client, or this client, failed too often lately. The
    session starts only while the checked password is still the stored one, in one
    step (`_SESSION_LOGIN`): a password change or an account deletion that lands
    during the check refuses the login (InvalidCredentials). A log-in completes a
    sign-up cut short: the people-search entries it still owes are written.
    """
    taken = login_attempt_take(username=username, client=client)
    r = get_redis()
    uid = (
        name_claim_uid(r.get(keys.username(username)))
        if USERNAME_RE.match(username)
        else None
    )
    fields = (*User.FIELDS, User.PASSWORD_FIELD, User.UNINDEXED_FIELD)
    stored = r.hmget(keys.user(int(uid)), fields) if uid else [None] * len(fields)
    user = User.from_fields(int(uid), stored[:-2]) if uid else None
    password_hash, unindexed = stored[-2:]
    if user is None or password_hash is None:
        check_password(password, _dummy_hash())
        raise InvalidCredentials()
    if not check_password(password, password_hash):
        raise InvalidCredentials()
    token, session = _session_args(user_agent=user_agent, client=client)
    started = _SESSION_LOGIN(
        keys=[keys.user(user.id), keys.sessions(user.id), keys.devices(user.id)],
        args=[User.PASSWORD_FIELD, password_hash, User.DELETED_FIELD, *session],
    )
    if not started:
        # The password changed (or the account went) while it was checked: the one
        # given is no longer right. Still a failed attempt, as it would be now.
        raise InvalidCredentials()
    login_attempt_refund(taken)
    if unindexed is not None:
        # A sign-up cut short after its name claim (`user_create`): its person is
        # not in people search yet.
        names_index_owed(user=user)
    return user, Credentials(uid=user.id, token=token)


def password_confirm(*, user: User, password: str, client: str) -> None:
    """Check the signed-in user's password again before a grave change.

    A wrong one counts as a failed login of that name and client, and the same
    limit applies (TooManyAttempts): a stolen cookie cannot guess the password here.
    """
    _password_check(
        uid=user.id, username=user.username, password=password, client=client
    )


def _password_check(*, uid: int, username: str, password: str, client: str) -> str:
    """Check a signed-in user's password as a login attempt (InvalidCredentials,
    TooManyAttempts); return the stored hash it matched."""
    taken = login_attempt_take(username=username, client=client)
    stored = get_redis().hget(keys.user(uid), User.PASSWORD_FIELD)
    matches = check_password(password, stored or _dummy_hash())
    if stored is None or not matches:
        raise InvalidCredentials()
    login_attempt_refund(taken)
    return stored


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
