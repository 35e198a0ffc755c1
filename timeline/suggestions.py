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
"""

from __future__ import annotations

from collections import Counter

from accounts import keys as account_keys
from accounts.domain import User
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

# KEYS: the user's suggestions, following, blocks, blocked_by, mutes, user hash.
# ARGV: the user's uid, the cap, the deleted field, then candidate, score pairs.
# Replaces the list with the candidates the user does not follow, block, is blocked
# by or mutes (checked here, atomically in the user's slot), the best `cap` of them;
# an account gone or being deleted keeps none.
_SUGGESTIONS_SET = LuaScript(
    """
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[6]) == 0 or redis.call('HEXISTS', KEYS[6], ARGV[3]) == 1
then return 0 end
for i = 4, #ARGV, 2 do
  local c = ARGV[i]
  if c ~= ARGV[1] and not redis.call('ZSCORE', KEYS[2], c)
     and not redis.call('ZSCORE', KEYS[3], c) and not redis.call('ZSCORE', KEYS[4], c)
     and not redis.call('ZSCORE', KEYS[5], c) then
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
            ],
            args=[
                uid,
                SUGGESTIONS_CAP,
                User.DELETED_FIELD,
                *(x for pair in best for x in pair),
            ],
        )
    )
