"""Idempotency-Key for posting: a repeat of a key by the same user within the hour
answers what the first request made (a status, or a scheduled status), and makes
none.

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

A scheduled status (`scheduled_at`) has its own ids, given by the step that stores
it (`timeline.scheduled`), so there is no id to reserve: that step settles the
claim itself (`Claim.receipt`, `<at>:s<n>`: the record says which kind of thing
the key made), in the author's slot like the hash, atomically with the entry. A
repeat after a lost reply finds it settled; one after a request that died before
the step finds the claim unsettled and, past the hold, takes it over and
schedules; a request whose claim was taken over meanwhile writes nothing. So one
status is scheduled, never none once the hold has passed. A repeat answers the
scheduled status while it waits (its id is never given again: the hash's count
stays when it empties); once it has been posted at its time, or cancelled, there
is none to answer (Mastodon answers 404 then too) and nothing is scheduled again.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from api import keys
from config.pipelines import LuaScript
from timeline import selectors
from timeline.domain import Busy
from timeline.scheduled import Receipt

# KEYS: the user's idempotency hash. ARGV: the field (the key's hash), now (unix
# seconds), the TTL, the field count past which expired fields are pruned, how long
# an unsettled claim holds. Returns {0, the field's value} if it is claimed within
# the TTL (`<at>:<sid>` or `<at>:s<n>` settled, `<at>:` or `<at>:p<sid>` under
# way); else claims it for this request and returns {1, the claim's value}:
# `<now>:`, or `<now>:p<sid>` when it takes over a claim never settled within the
# hold (its request died, or failed for an outage, between claim and answer) that
# had reserved its status id: the id goes on with the claim, and a retry is not
# refused for an hour.
_CLAIM = LuaScript(
    """
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local found = redis.call('HGET', KEYS[1], ARGV[1])
local pending = ''
if found then
  local at, kind, id = string.match(found, '^(%d+):([ps]?)(%d*)$')
  at = tonumber(at)
  if at and at + ttl > now then
    if (kind ~= 'p' and id ~= '') or at + tonumber(ARGV[5]) > now then
      return {0, found}
    end
    if kind == 'p' then pending = kind .. id end
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


def _parse(value: str) -> tuple[str, str, int | None]:
    """A claim's value: its time, its kind (`p`: a status id pending; `s`: a
    scheduled status's id; '': a status's id, or none yet), the id (or None)."""
    at, _, rest = value.partition(":")
    kind = rest[:1] if rest[:1] in ("p", "s") else ""
    made = rest.removeprefix(kind)
    return at, kind, int(made) if made else None


@dataclass(frozen=True, slots=True)
class Made:
    """What an earlier request with the key made: a status, or (`scheduled`) one of
    the user's scheduled statuses (`timeline.scheduled.Scheduled.id`)."""

    id: int
    scheduled: bool = False


class Claim:
    """This request's hold on an idempotency key (`claim`); `sid`: the status id
    reserved under it (by a request whose claim this took over), or None."""

    def __init__(self, uid: int, field: str, value: str):
        self.uid, self.field, self.value = uid, field, value
        self.at, _, self.sid = _parse(value)

    def receipt(self) -> Receipt:
        """Settle the claim in the step that schedules the status, with its id."""
        return Receipt(
            key=keys.idempotency(self.uid),
            field=self.field,
            claimed=self.value,
            settled=f"{self.at}:s",
        )

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


def claim(*, uid: int, key: str) -> Claim | Made:
    """Claim `key` for a post by `uid`: a Claim to settle, or what an earlier
    request with this key made (a status settled, or pending and standing; a
    scheduled status). Busy when an earlier request with this key is still
    unsettled after a short wait (under way, or failed for an outage within
    CLAIM_HOLD_SECONDS)."""
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
        _, kind, made = _parse(value)
        if made is not None and kind == "s":
            return Made(made, scheduled=True)
        if made is not None and (
            kind == "" or selectors.status_published(author_id=uid, sid=made)
        ):
            return Made(made)
        if wait is None:
            raise Busy(
                "A request with this Idempotency-Key is under way, or ended without "
                "knowing whether its status was saved: check before posting again"
            )
        time.sleep(wait)
    raise AssertionError("unreachable")
