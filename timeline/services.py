"""Writes for statuses, follows and timelines: post, delete, follow, unfollow, fan-out.

Steps that span users are single-slot steps, each idempotent, ordered so that a
crash between two of them never shows a visitor something half-made:

- post: the status hash first (unreachable), then the author's `posts` zset (now it
  exists), then fan-out to homes and the global timeline;
- delete: the hash first (every reference to it stops rendering at once), then the
  references;
- follow/unfollow: the follower's `following` zset is the truth; the followee's
  `followers` zset and the follower's home follow it, under a per-user lock.

A timeline add is conditional, atomically in the reader's own slot: a status lands in
`home:{f}` only while `following:{f}` still holds its author. So a fan-out racing an
unfollow can never leave the unfollowed author's post behind.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable

from django.conf import settings

from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, slot_groups
from timeline import keys
from timeline.domain import (
    Busy,
    CannotFollowSelf,
    Forbidden,
    InvalidStatus,
    NotFound,
    Status,
    normalize_text,
    text_problem,
)
from timeline.ids import status_ids_take

# KEYS: (home, following) of one or more readers. ARGV: author uid, cap, the author's
# own home key, sid... Adds the statuses to each home whose owner is the author or
# still follows the author, then trims it to the cap. One reader's check-and-add is
# atomic in that reader's slot; a call carries several readers only where they share
# a slot (Cluster) or the server is a single node.
_TIMELINE_ADD = LuaScript(
    """
local author, cap, own = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local added = 0
for i = 1, #KEYS, 2 do
  local home = KEYS[i]
  if home == own or redis.call('ZSCORE', KEYS[i + 1], author) then
    for j = 4, #ARGV do
      added = added + redis.call('ZADD', home, ARGV[j], ARGV[j])
    end
    if redis.call('ZCARD', home) > cap then
      redis.call('ZREMRANGEBYRANK', home, 0, -(cap + 1))
    end
  end
end
return added
"""
)

# KEYS: one partition of the global timeline. ARGV: its cap, then status ids. Adds
# the ids; past the cap, drops the oldest and marks where the partition now ends: the
# member 0 (never a status id) scored one below the oldest id kept, so a reader that
# reaches it knows nothing older is kept (`timeline.selectors.global_page`).
_GLOBAL_ADD = LuaScript(
    """
local key, cap = KEYS[1], tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', key, ARGV[i], ARGV[i])
end
local marked = redis.call('ZSCORE', key, 0) and 1 or 0
local kept = redis.call('ZCARD', key) - marked
if kept > cap then
  redis.call('ZREM', key, 0)
  redis.call('ZREMRANGEBYRANK', key, 0, kept - cap - 1)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  redis.call('ZADD', key, tonumber(oldest[2]) - 1, 0)
end
return kept
"""
)


def global_add_queue(pipe, *, sids: list[int]) -> None:
    """Queue the addition of statuses to the global timeline's partitions."""
    by_partition: dict[str, list[int]] = {}
    for sid in sids:
        by_partition.setdefault(keys.global_partition(sid), []).append(sid)
    for partition, group in by_partition.items():
        _GLOBAL_ADD.queue(
            pipe, keys=[partition], args=[settings.GLOBAL_TIMELINE_CAP, *group]
        )


# KEYS: one lock. ARGV: its token. Release only a lock we still own.
_UNLOCK = LuaScript(
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
)


def status_create(*, author: User, text: str) -> Status:
    """Post a status: store it once, then fan it out to every follower's home."""
    text = normalize_text(text)
    problem = text_problem(text)
    if problem:
        raise InvalidStatus(problem)
    (sid,) = status_ids_take(author_id=author.id)
    status = Status(
        id=sid,
        author_id=author.id,
        author=author.username,
        text=text,
        created=round(time.time(), 3),
    )

    def store(pipe) -> None:
        # In this order: the hash (unreachable until referenced), then the author's
        # posts (now it exists) and the start of the fan-out. One round trip on one
        # server; on a Cluster the barrier makes it two.
        pipe.hset(keys.status(status.id), mapping=status.to_hash())
        pipe.barrier()
        pipe.zadd(keys.posts(author.id), {status.id: status.id})
        _fanout_head(pipe, author_id=author.id, sid=status.id)

    replies = pipeline_run(store)
    _fanout_write(author_id=author.id, sid=status.id, first_followers=replies[-1])
    return status


def status_fanout(*, author_id: int, sid: int) -> int:
    """Add a status to the global timeline and the homes of the author and followers.

    Idempotent: running it again (say, after an interrupted post) adds nothing twice.
    Returns the number of homes written to.
    """

    def head(pipe) -> None:
        _fanout_head(pipe, author_id=author_id, sid=sid)

    *_, first_followers = pipeline_run(head)
    return _fanout_write(author_id=author_id, sid=sid, first_followers=first_followers)


def _fanout_head(pipe, *, author_id: int, sid: int) -> None:
    """Queue the global timeline, the author's own home and a first read of followers.

    The read asks for one more follower than a batch: when fewer come back, that one
    command saw them all and no scan is needed (most authors have few followers).
    """
    global_add_queue(pipe, sids=[sid])
    _timeline_add(pipe, readers=[author_id], author_id=author_id, sids=[sid])
    pipe.zrange(keys.followers(author_id), 0, settings.FANOUT_BATCH)


def _fanout_write(*, author_id: int, sid: int, first_followers: list) -> int:
    """Add the status to every follower's home, FANOUT_BATCH homes per round trip."""
    if len(first_followers) <= settings.FANOUT_BATCH:
        batches: Iterable[list[int]] = [[int(f) for f in first_followers]]
    else:
        batches = _follower_batches(author_id)
    homes = 1
    for batch in batches:
        if not batch:
            continue

        def add_to_homes(pipe, batch=batch) -> None:
            for group in slot_groups(batch, keys.home, settings.FANOUT_GROUP):
                _timeline_add(pipe, readers=group, author_id=author_id, sids=[sid])

        pipeline_run(add_to_homes)
        homes += len(batch)
    return homes


def _follower_batches(uid: int) -> Iterable[list[int]]:
    """The user's followers, about FANOUT_BATCH at a time.

    ZSCAN returns every follower present for the whole scan even while others follow
    or unfollow (a rank range would skip one when an earlier entry left); a follower
    seen twice is written twice, which the idempotent add makes harmless.
    """
    size = settings.FANOUT_BATCH
    batch: list[int] = []
    for member, _score in get_redis().zscan_iter(keys.followers(uid), count=size):
        batch.append(int(member))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _timeline_add(pipe, *, readers: list[int], author_id: int, sids: list[int]) -> None:
    _TIMELINE_ADD.queue(
        pipe,
        keys=[
            k for reader in readers for k in (keys.home(reader), keys.following(reader))
        ],
        args=[author_id, settings.HOME_TIMELINE_CAP, keys.home(author_id), *sids],
    )


def status_delete(*, user: User, sid: int) -> None:
    """Delete a status of the user's own: gone from every timeline and page at once."""
    found = Status.from_fields(sid, get_redis().hmget(keys.status(sid), Status.FIELDS))
    if found is None:
        raise NotFound(sid)
    if found.author_id != user.id:
        raise Forbidden("Only its author can delete a status.")

    def unpublish(pipe) -> None:
        # The hash goes first: from then on every stale reference is skipped.
        pipe.delete(keys.status(sid))
        pipe.barrier()
        pipe.zrem(keys.posts(user.id), sid)
        pipe.zrem(keys.global_partition(sid), sid)
        pipe.zrem(keys.home(user.id), sid)

    pipeline_run(unpublish)
    for batch in _follower_batches(user.id):

        def remove_from_homes(pipe, batch=batch) -> None:
            for follower in batch:
                pipe.zrem(keys.home(follower), sid)

        pipeline_run(remove_from_homes)


class _FollowLock:
    """Serialize one user's follow changes (a few ms each) with a token-owned lock."""

    def __init__(self, uid: int, *, wait: float = 3.0, ttl_ms: int = 10_000):
        self.key = keys.follow_lock(uid)
        self.token = secrets.token_hex(16)
        self.wait = wait
        self.ttl_ms = ttl_ms

    def __enter__(self):
        r = get_redis()
        deadline = time.monotonic() + self.wait
        while not r.set(self.key, self.token, nx=True, px=self.ttl_ms):
            if time.monotonic() > deadline:
                raise Busy("Another follow change is in progress. Try again.")
            time.sleep(0.005)
        return self

    def __exit__(self, *exc):
        _UNLOCK(keys=[self.key], args=[self.token])


def follow_create(*, follower: User, followee_id: int) -> bool:
    """Follow a user and backfill their newest statuses; False if already following.

    Safe to repeat: a second call completes whatever a first one left undone.
    """
    if follower.id == followee_id:
        raise CannotFollowSelf("You cannot follow yourself.")
    now_us = time.time_ns() // 1000

    def link(pipe) -> None:
        pipe.zadd(keys.following(follower.id), {followee_id: now_us}, nx=True)
        pipe.zadd(keys.followers(followee_id), {follower.id: now_us}, nx=True)
        pipe.hset(keys.follower_names(followee_id), follower.id, follower.username)
        pipe.zcard(keys.followers(followee_id))
        pipe.zrevrange(keys.posts(followee_id), 0, settings.FOLLOW_BACKFILL - 1)

    with _FollowLock(follower.id):
        added, _, _, count, newest = pipeline_run(link)

        def finish(pipe) -> None:
            _popularity_queue(pipe, followee_id, count)
            if newest:
                sids = [int(sid) for sid in newest]
                _timeline_add(
                    pipe, readers=[follower.id], author_id=followee_id, sids=sids
                )

        pipeline_run(finish)
    return bool(added)


def follow_delete(*, follower: User, followee_id: int) -> bool:
    """Unfollow a user and drop their statuses from the home; False if not following."""
    home = keys.home(follower.id)

    def unlink(pipe) -> None:
        pipe.zrem(keys.following(follower.id), followee_id)
        pipe.zrem(keys.followers(followee_id), follower.id)
        pipe.hdel(keys.follower_names(followee_id), follower.id)
        pipe.zcard(keys.followers(followee_id))
        pipe.zrange(home, 0, 0, withscores=True)

    with _FollowLock(follower.id):
        removed, _, _, count, oldest = pipeline_run(unlink)
        # From here no fan-out can add the followee's statuses to this home (the add
        # checks `following` atomically), so one sweep removes them for good.
        theirs = (
            get_redis().zrangebyscore(keys.posts(followee_id), oldest[0][1], "+inf")
            if oldest
            else []
        )

        def finish(pipe) -> None:
            _popularity_queue(pipe, followee_id, count)
            for start in range(0, len(theirs), 1000):
                pipe.zrem(home, *theirs[start : start + 1000])

        pipeline_run(finish)
    return bool(removed)


POPULAR_CAP = 100


def _popularity_queue(pipe, uid: int, count: int) -> None:
    """Record the user's true follower count in the capped popularity ranking.

    Setting the count just read with ZCARD (not incrementing) makes the step
    idempotent and self-correcting: a count a race left stale is fixed by the next
    follow or unfollow of that user.
    """
    if count:
        pipe.zadd(keys.popular_users(), {uid: count})
        pipe.zremrangebyrank(keys.popular_users(), 0, -(POPULAR_CAP + 1))
    else:
        pipe.zrem(keys.popular_users(), uid)
