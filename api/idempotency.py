"""Idempotency-Key for posting: a repeat of a key by the same user within the hour
answers the status the first request made, and makes none.

The key is claimed atomically in the user's slot before the post (a placeholder
without a status id), then given the status's id. A post refused (a domain error:
nothing of it stands) releases its claim, so a corrected repeat may post. A post
that fails otherwise (a Redis error, a dying worker) keeps it: its status may stand
(the server ran the publish and the reply was lost), and a repeat must not post it
twice. A repeat that finds the placeholder waits a moment for the first request to
finish, then answers that it has not (`Busy`). A placeholder older than
CLAIM_HOLD_SECONDS belongs to a request that ended without an answer, and a repeat
takes it over and posts: if that request's status does stand, it is posted twice.
Closing that gap needs the status's id recorded in the claim before the publish,
which `timeline.services.status_create` cannot take from its caller yet.
"""

from __future__ import annotations

import hashlib
import time

from api import keys
from config.pipelines import LuaScript
from timeline.domain import Busy

# KEYS: the user's idempotency hash. ARGV: the field (the key's hash), now (unix
# seconds), the TTL, the field count past which expired fields are pruned, how long
# an unsettled claim holds. Returns the field's value if it is claimed within the
# TTL (`<at>:<sid>`, `<at>:` while under way); else claims it for this request
# (`<now>:`) and returns false. A claim never settled within the hold (its request
# died, or failed for an outage, between claim and answer) is taken over: a retry
# is not refused for an hour.
_CLAIM = LuaScript(
    """
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local found = redis.call('HGET', KEYS[1], ARGV[1])
if found then
  local at, sid = string.match(found, '^(%d+):(%d*)$')
  at = tonumber(at)
  if at and at + ttl > now and (sid ~= '' or at + tonumber(ARGV[5]) > now) then
    return found
  end
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local at = tonumber(string.match(all[i + 1], '^(%d+):'))
    if not at or at + ttl <= now then redis.call('HDEL', KEYS[1], all[i]) end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':')
redis.call('EXPIRE', KEYS[1], ttl)
return false
"""
)

# KEYS: the hash. ARGV: the field, the claim's value, the new value ('' to release).
# Changes the field only if it still holds this request's claim.
_SETTLE = LuaScript(
    """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return 1
"""
)

WAITS = (0.05, 0.1, 0.2, 0.4, 0.8)  # a concurrent repeat's patience: 1.55 s
# An unsettled claim older than this is a request that died or failed for an
# outage (a post answers in milliseconds; the server's own request timeout is
# 30 s): a retry takes it over.
CLAIM_HOLD_SECONDS = 60


class Claim:
    """This request's hold on an idempotency key (`claim`)."""

    def __init__(self, uid: int, field: str, value: str):
        self.uid, self.field, self.value = uid, field, value

    def done(self, sid: int) -> None:
        """Record the status the post made under this key."""
        _SETTLE(
            keys=[keys.idempotency(self.uid)],
            args=[self.field, self.value, f"{self.value}{sid}"],
        )

    def release(self) -> None:
        """Give the key up (the post was refused, nothing of it stands): a repeat
        may post."""
        _SETTLE(keys=[keys.idempotency(self.uid)], args=[self.field, self.value, ""])


def claim(*, uid: int, key: str) -> Claim | int:
    """Claim `key` for a post by `uid`: a Claim to settle, or the id of the status
    an earlier request with this key made. Busy when an earlier request with this
    key is still unsettled after a short wait (under way, or failed for an outage
    within CLAIM_HOLD_SECONDS)."""
    field = hashlib.sha256(key.encode()).hexdigest()
    for wait in (*WAITS, None):
        now = str(int(time.time()))
        found = _CLAIM(
            keys=[keys.idempotency(uid)],
            args=[
                field,
                now,
                keys.IDEMPOTENCY_SECONDS,
                keys.IDEMPOTENCY_PRUNE_AT,
                CLAIM_HOLD_SECONDS,
            ],
        )
        if not found:
            return Claim(uid, field, f"{now}:")
        sid = found.partition(":")[2]
        if sid:
            return int(sid)
        if wait is None:
            raise Busy(
                "A request with this Idempotency-Key is under way, or ended without "
                "knowing whether its status was saved: check before posting again"
            )
        time.sleep(wait)
    raise AssertionError("unreachable")
