"""Pins: a few of a user's own statuses shown first on their profile (Twitter's
pinned tweet, Mastodon's pinned posts).

A pin is one entry of the user's `pins:{<uid>}` zset (sid -> pin time), in their
own slot beside their `posts:{<uid>}`: the pin's script pins a status only while
`posts` holds it, and the script that unpublishes a status unpins it
(`services._UNPUBLISH`), so a pin never outlives its status, and nothing is
checked then set. A repost is not pinned (Mastodon's rule); at most PINS_MAX are.
The pinned statuses show as the profile's statuses do, to whom the profile shows
them (`selectors.pinned_get`).
"""

from __future__ import annotations

import time

from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript
from config.redis import get_redis
from timeline import keys
from timeline.domain import CannotPin, NotFound
from timeline.social import _valid

PINS_MAX = 5

# KEYS: the user's posts, pins. ARGV: sid, the time (microsecs), the cap. Pins the
# status while the user's posts hold it. Returns 1 when pinned, 0 when it was,
# -1 past the cap, -2 when it is not (or no longer) one of theirs.
_PIN = LuaScript(
    """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -2 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -1 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
"""
)


def status_pin(*, user: User, sid: int, limit: limits.Limit | None = None) -> bool:
    """Pin a status of the user's own to their profile; False if pinned already.
    NotFound when it is gone; CannotPin for another's, a repost, or past
    PINS_MAX; with `limit` (`limits.like`), taken first or refused with
    TooManyAttempts."""
    if limit is not None:
        limits.take(limit)
    if not _valid(sid):
        raise NotFound(sid)
    uid, repost_of, to = get_redis().hmget(keys.status(sid), ["uid", "repost_of", "to"])
    if uid is None:
        raise NotFound(sid)
    if int(uid) != user.id:
        raise CannotPin("Only your own statuses can be pinned.")
    # Neither field ever changes: no race in asking first.
    if repost_of:
        raise CannotPin("A repost cannot be pinned.")
    if to:
        raise CannotPin("A direct message cannot be pinned.")
    pinned = _PIN(
        keys=[keys.posts(user.id), keys.pins(user.id)],
        args=[sid, time.time_ns() // 1000, PINS_MAX],
    )
    if pinned == -2:
        raise NotFound(sid)
    if pinned == -1:
        raise CannotPin(
            f"You have pinned {PINS_MAX} statuses, the most one can. Unpin one first."
        )
    return pinned == 1


def status_unpin(*, user: User, sid: int, limit: limits.Limit | None = None) -> bool:
    """Unpin a status from the user's profile; False if it was not pinned."""
    if limit is not None:
        limits.take(limit)
    if not _valid(sid):
        raise NotFound(sid)
    return bool(get_redis().zrem(keys.pins(user.id), sid))
