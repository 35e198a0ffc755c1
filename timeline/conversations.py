"""Muted conversations (Mastodon's "Mute conversation"): a reader stops being told
of anything in a thread, its replies and mentions and the likes and reposts of
their own statuses in it, without unfollowing or muting anyone.

A conversation is named by the id of the status its thread began with
(`Status.conversation_id`: stored on every reply, `conversation`, from its parent's).
A mute is one entry of the reader's own `conversation_mutes:{<uid>}` zset, scored
by when it was made: one key in the reader's slot, beside their notifications, so
the script that records a notification (`timeline.notifications`) looks it up in the
same atomic step and records nothing for a muted conversation. Only what arrives
after the mute is held back, as Mastodon's: the notifications already there stay.

A status is muted as it is liked: a repost's original, and only while the reader
may see it (`social.status_target`); an unmute likewise, as Mastodon's, so a status
hidden from the reader answers "not found" and changes nothing (any status of the
thread they may see unmutes it: they all name the same conversation). The list is
capped (CONVERSATION_MUTES_MAX): past it the mute made longest ago goes, in the same
step. A refusal would ask for an unmute nobody could make: the list has no page of
its own, and a conversation whose statuses were all deleted can no longer be named.
The account's deletion deletes the key (`timeline.fanout._account_keys`).
"""

from __future__ import annotations

import time

from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript
from config.redis import get_redis
from timeline import keys
from timeline.domain import Status
from timeline.social import status_target

CONVERSATION_MUTES_MAX = 10_000

# KEYS: the user's conversation mutes. ARGV: the conversation, the time (microsecs),
# the cap. Adds it unless there, the oldest going first when the list holds the
# cap already. Returns 1 when added, 0 when it was there.
_MUTE = LuaScript(
    """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""
)


def conversation_mute(
    *, user: User, sid: int, limit: limits.Limit | None = None
) -> Status:
    """Mute the conversation a status (a repost's original) is part of; the status.
    NotFound when it is gone or the user may not see it; past
    CONVERSATION_MUTES_MAX, the oldest mute goes; with `limit` (`limits.like`),
    taken first or refused with TooManyAttempts."""
    if limit is not None:
        limits.take(limit)
    target = status_target(user=user, sid=sid)
    _MUTE(
        keys=[keys.conversation_mutes(user.id)],
        args=[target.conversation_id, time.time_ns() // 1000, CONVERSATION_MUTES_MAX],
    )
    return target


def conversation_unmute(
    *, user: User, sid: int, limit: limits.Limit | None = None
) -> bool:
    """Unmute the conversation a status (a repost's original) is part of; False if
    it was not muted. NotFound, with nothing changed, for a status that does not
    exist (a deleted one's conversation cannot be named) or that the user may not
    see (as Mastodon's: shown to them first)."""
    if limit is not None:
        limits.take(limit)
    found = status_target(user=user, sid=sid)
    return bool(
        get_redis().zrem(keys.conversation_mutes(user.id), found.conversation_id)
    )
