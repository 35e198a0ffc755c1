"""Idempotency-Key for posting: a repeat of a key by the same user within the hour
answers the status the first request made, and makes none.

The key is claimed atomically in the user's slot before the post (`<at>:`), then
given the id the status will have, reserved before the post (`<at>:p<sid>`,
pending), then settled with it (`<at>:<sid>`). A post refused (a domain error:
nothing of it stands) releases its claim, so a corrected repeat may post. A post
that fails otherwise (a Redis error, a dying worker) keeps it: its status may stand
(the server ran the publish and the reply was lost). A repeat that finds a pending
claim asks whether that id stands among the user's statuses: if so it answers it
(and the post was made once); if not, it waits a moment for the first request,
then answers that it has not finished (`Busy`). A claim unsettled for
CLAIM_HOLD_SECONDS belongs to a request that ended without an answer: a repeat
takes it over and posts with the same id, which writes the same keys, so the
status is made once whichever of them ran. (A status posted, answered by an
outage, then deleted by its author on the site before the repeat, would be posted
again by it: the store keeps no trace of a deleted status to tell it from one
never posted.)
"""

from __future__ import annotations

import hashlib
import time

from api import keys
from config.pipelines import LuaScript
from timeline import selectors
from timeline.domain import Busy

# KEYS: the user's idempotency hash. ARGV: the field (the key's hash), now (unix
# seconds), the TTL, the field count past which expired fields are pruned, how long
# an unsettled claim holds. Returns {0, the field's value} if it is claimed within
# the TTL (`<at>:<sid>` settled, `<at>:` or `<at>:p<sid>` under way); else claims it
# for this request and returns {1, the claim's value}: `<now>:`, or `<now>:p<sid>`
# when it takes over a claim never settled within the hold (its request died, or
# failed for an outage, between claim and answer) that had reserved its status id:
# the id goes on with the claim, and a retry is not refused for an hour.
_CLAIM = LuaScript(
    """
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local found = redis.call('HGET', KEYS[1], ARGV[1])
local pending = ''
if found then
  local at, p, sid = string.match(found, '^(%d+):(p?)(%d*)$')
  at = tonumber(at)
  if at and at + ttl > now then
    if (p == '' and sid ~= '') or at + tonumber(ARGV[5]) > now then
      return {0, found}
    end
    if p ~= '' then pending = p .. sid end
  end
end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local at = tonumber(string.match(all[i + 1], '^(%d+):'))
    if not at or at + ttl <= now then redis.call('HDEL', KEYS[1], all[i]) end
  end
end
local value = ARGV[2] .. ':' .. pending
redis.call('HSET', KEYS[1], ARGV[1], value)
redis.call('EXPIRE', KEYS[1], ttl)
return {1, value}
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


def _parse(value: str) -> tuple[str, bool, int | None]:
    """A claim's value: its time, whether its id is pending, the id (or None)."""
    at, _, rest = value.partition(":")
    pending = rest.startswith("p")
    sid = rest.removeprefix("p")
    return at, pending, int(sid) if sid else None


class Claim:
    """This request's hold on an idempotency key (`claim`); `sid`: the status id
    reserved under it (by a request whose claim this took over), or None."""

    def __init__(self, uid: int, field: str, value: str):
        self.uid, self.field, self.value = uid, field, value
        self.at, _, self.sid = _parse(value)

    def reserve(self, sid: int) -> None:
        """Record the id the post will have, before it is posted."""
        value = f"{self.at}:p{sid}"
        _SETTLE(keys=[keys.idempotency(self.uid)], args=[self.field, self.value, value])
        self.value, self.sid = value, sid

    def done(self, sid: int) -> None:
        """Record the status the post made under this key."""
        _SETTLE(
            keys=[keys.idempotency(self.uid)],
            args=[self.field, self.value, f"{self.at}:{sid}"],
        )

    def release(self) -> None:
        """Give the key up (the post was refused, nothing of it stands): a repeat
        may post."""
        _SETTLE(keys=[keys.idempotency(self.uid)], args=[self.field, self.value, ""])


def claim(*, uid: int, key: str) -> Claim | int:
    """Claim `key` for a post by `uid`: a Claim to settle, or the id of the status
    an earlier request with this key made (settled, or pending and standing). Busy
    when an earlier request with this key is still unsettled after a short wait
    (under way, or failed for an outage within CLAIM_HOLD_SECONDS)."""
    field = hashlib.sha256(key.encode()).hexdigest()
    for wait in (*WAITS, None):
        now = str(int(time.time()))
        new, value = _CLAIM(
            keys=[keys.idempotency(uid)],
            args=[
                field,
                now,
                keys.IDEMPOTENCY_SECONDS,
                keys.IDEMPOTENCY_PRUNE_AT,
                CLAIM_HOLD_SECONDS,
            ],
        )
        if int(new):
            return Claim(uid, field, value)
        _, pending, sid = _parse(value)
        if sid is not None and (
            not pending or selectors.status_published(author_id=uid, sid=sid)
        ):
            return sid
        if wait is None:
            raise Busy(
                "A request with this Idempotency-Key is under way, or ended without "
                "knowing whether its status was saved: check before posting again"
            )
        time.sleep(wait)
    raise AssertionError("unreachable")
