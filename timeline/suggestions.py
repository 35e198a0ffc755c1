"""Who to follow: people followed by the people you follow (friends of friends).

Each user has a small ranked list, `suggestions:{<uid>}` (candidate -> how many of
the user's followees follow them), rebuilt by a durable job (`suggest:<uid>`) after
the user's follows change: follows made while one is queued add none (its id names
the user, and a queued job keeps its place). The work is bounded: the
user's SAMPLE_FOLLOWEES newest followees, SAMPLE_FOLLOWS newest follows of each.

The job is queued after the follow change, not inside its atomic step: the list
is derived data, and an enqueue lost to a crash only leaves it stale until the
next change. It never holds the user, the people they follow, nor anyone they
block, are blocked by or mute; a page checks the follows and blocks again when it
shows the list (they may have changed since), and leaves out deleted accounts.

A user may dismiss a suggestion (the page's Dismiss, Mastodon's `DELETE
/api/v1/suggestions/:id`): the person joins `suggestions_dismissed:{<uid>}`, in the
user's slot, and leaves `suggestions:{<uid>}` in the same script; a rebuild never
puts them back, and every read of suggestions leaves them out, the most followed
too (`timeline.selectors._suggestions_queue`, in the round trip that asks whom the
viewer follows). The dismissals are capped (SUGGESTION_DISMISSALS_MAX): past it the
oldest goes, and that person may be suggested again; a refusal would leave the
user no way on, as no page lists what they dismissed. Only an account that exists
is stored: ids are counted up, so a made-up id could otherwise dismiss someone who
signs up later (as Mastodon's, whose dismissal of nobody stores nothing). A
dismissed account deleted since stays in the set until the cap pushes it out: its
id is never given again.
"""

from __future__ import annotations

import time
from collections import Counter

from django.conf import settings

from accounts import keys as account_keys
from accounts.domain import User
from accounts.selectors import user_get
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis
from timeline import jobs, keys

SAMPLE_FOLLOWEES = 50
SAMPLE_FOLLOWS = 100
SUGGESTIONS_CAP = 50

_ENQUEUE = LuaScript(
    jobs.ENQUEUE
    + """
enqueue(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
return 1
"""
)

# KEYS: the user's suggestions, following, blocks, blocked_by, mutes, user hash,
# dismissed suggestions.
# ARGV: the user's uid, the cap, the deleted field, then candidate, score pairs.
# Replaces the list with the candidates the user does not follow, block, is blocked
# by, mutes or dismissed (checked here, atomically in the user's slot), the best
# `cap` of them; an account gone or being deleted keeps none.
_SUGGESTIONS_SET = LuaScript(
    """
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[6]) == 0 or redis.call('HEXISTS', KEYS[6], ARGV[3]) == 1
then return 0 end
for i = 4, #ARGV, 2 do
  local c = ARGV[i]
  if c ~= ARGV[1] and not redis.call('ZSCORE', KEYS[2], c)
     and not redis.call('ZSCORE', KEYS[3], c) and not redis.call('ZSCORE', KEYS[4], c)
     and not redis.call('ZSCORE', KEYS[5], c)
     and not redis.call('ZSCORE', KEYS[7], c) then
    redis.call('ZADD', KEYS[1], ARGV[i + 1], c)
  end
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
return redis.call('ZCARD', KEYS[1])
"""
)


def suggestions_job_id(uid: int) -> str:
    return jobs.job_id("suggest", uid)


def suggestions_refresh_queue(*, uid: int) -> None:
    """Queue the rebuild of the user's suggestions (once, however often called
    before it runs)."""
    slot = keys.slot_of_user(uid)
    now = jobs.now_ms()

    def queue(pipe) -> None:
        _ENQUEUE.queue(
            pipe,
            keys=jobs.slot_keys(slot),
            args=[suggestions_job_id(uid), now, now],
        )
        jobs.wake_queue(pipe, slot=slot)

    pipeline_run(queue)


def suggestions_rebuild(*, uid: int) -> int:
    """Rebuild the user's suggestions from their followees' follows; how many."""
    followees = [
        int(f)
        for f in get_redis().zrevrange(keys.following(uid), 0, SAMPLE_FOLLOWEES - 1)
    ]
    counts: Counter[int] = Counter()
    if followees:
        replies = pipeline_run(
            lambda pipe: [
                pipe.zrevrange(keys.following(f), 0, SAMPLE_FOLLOWS - 1)
                for f in followees
            ],
            confirm=False,
        )
        for follows in replies:
            counts.update(int(c) for c in follows)
    best = counts.most_common(SUGGESTIONS_CAP + len(followees) + 1)
    return int(
        _SUGGESTIONS_SET(
            keys=[
                keys.suggestions(uid),
                keys.following(uid),
                keys.blocks(uid),
                keys.blocked_by(uid),
                keys.mutes(uid),
                account_keys.user(uid),
                keys.suggestions_dismissed(uid),
            ],
            args=[
                uid,
                SUGGESTIONS_CAP,
                User.DELETED_FIELD,
                *(x for pair in best for x in pair),
            ],
        )
    )


# KEYS: the user's dismissed suggestions, their suggestions. ARGV: the dismissed
# uid, the time (microsecs), the cap. Records the dismissal (a repeat keeps its
# first time and is not new), the oldest going past the cap, and takes the person
# out of the suggestions. Returns 1 when new, else 0.
_DISMISS = LuaScript(
    """
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""
)


def suggestion_dismiss(*, user: User, dismissed_id: int) -> bool:
    """Never suggest this person to the user again (past SUGGESTION_DISMISSALS_MAX
    the oldest dismissal goes); False, with nothing stored, when they were
    dismissed already, are the user, or do not exist."""
    if dismissed_id == user.id or user_get(uid=dismissed_id) is None:
        return False
    return bool(
        _DISMISS(
            keys=[keys.suggestions_dismissed(user.id), keys.suggestions(user.id)],
            args=[
                dismissed_id,
                time.time_ns() // 1000,
                settings.SUGGESTION_DISMISSALS_MAX,
            ],
        )
    )
