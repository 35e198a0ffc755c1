"""Writes for statuses, follows and timelines: post, delete, follow, unfollow, fan-out.

Steps that span users are single-slot steps, each idempotent, ordered so that a
crash between two of them never shows a visitor something half-made:

- post: the status hash first (unreachable), then, atomically in the author's slot,
  the author's `posts` zset (now it exists) with the fan-out job that owes it to the
  followers' homes (`timeline.jobs`, run by `timeline.fanout`);
- delete: the hash first (every reference to it stops rendering at once), then the
  author's references with the job that removes it from the followers' homes (and
  the mentioned users' notifications of it);
- follow/unfollow: the follower's `following` zset is the truth, changed atomically
  with a job that completes the rest; the request completes the followee's
  `followers` zset and the follower's home itself, under a per-user lock, and
  cancels the job, which runs only if the request died midway. The followee's
  side is a gate (`_FOLLOWER_ADD`): a private account files a follow request
  instead of admitting a follower it has not approved (`timeline.privacy`). An
  unfollow sweeps the followee's statuses from the home by what the home holds
  (`home_statuses_of`), however old.

- account deletion: in the user's slot, atomically, the password and sessions go,
  the hash is marked `deleted` (every page finds no user from then on), their
  own pending fan-outs are cancelled and the `account` job is recorded; then the
  name is retired for its grace period. The job (`timeline.fanout.run_account`)
  does the rest. A deleted user's slot refuses new statuses and follows (`_LIVE`),
  and a followee's slot refuses a new follower once deleted, so nothing arrives
  behind the job's walks.

A timeline add is conditional, atomically in the reader's own slot: a status lands in
`home:{f}` only while `following:{f}` still holds its author. So a fan-out racing an
unfollow can never leave the unfollowed author's post behind.
"""

from __future__ import annotations

import heapq
import secrets
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

from accounts import keys as account_keys
from accounts import limits
from accounts.domain import User, name_claim_uid
from accounts.selectors import user_get
from accounts.services import (
    active_queue,
    password_confirm,
    seen_day,
    seen_days_args,
    seen_ttl_seconds,
    username_retire,
)
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, is_cluster, slot_groups
from timeline import counts, jobs, keys, lists, notifications, richtext, suggestions
from timeline import direct as direct_messages
from timeline.domain import (
    Blocked,
    Busy,
    CannotFollowSelf,
    FollowRequestsFull,
    Forbidden,
    InvalidStatus,
    NotFound,
    Poll,
    Quote,
    Status,
    normalize_spoiler,
    normalize_text,
    text_problem,
)
from timeline.ids import status_ids_from, status_ids_queue

# KEYS: (home, following, seen, mutes, list_exclusive) of one or more readers (on a
# Cluster), or none (one server). ARGV: author uid, cap, the author's own home key,
# whether to skip inactive readers (1/0), the uid the statuses reply to and that
# user's home key ('' and '': not replies), how many status ids, the ids; then, on one
# server only, the text before and after the uid in a home, following, seen, mutes and
# list_exclusive key (10 strings) and the readers' uids. Adds the statuses to each
# home whose owner is the author, or still follows the author, has not muted them,
# has them on none of their exclusive lists (`timeline.lists`: Mastodon's
# `FeedManager#filter_from_home`, by whose status it is, so a member's repost stays
# out and another's repost of a member's status goes in) and (when asked) was seen
# within FANOUT_ACTIVE_DAYS, then trims it to the cap. One reader's check-and-add is
# atomic in that reader's slot; a call carries several readers only where they share
# a slot (Cluster) or the server is a single node. Blocks need no check of their own: a
# block ends the follow both ways atomically with its record in each side's slot,
# and a follow across a block is refused (`_FOLLOW_SET`), so `following` never holds
# a blocked or blocking author (`timeline.blocks`). A reply reaches a home the
# Mastodon way (`timeline.social`): only when it answers its own author (a thread),
# the reader, or someone the reader follows too (`Status.reply_follow_decides`
# states it in Python).
#
# Cost: the fan-out's time is mostly this script's Redis CPU (docs/BENCHMARKS.md), so
# four calls per reader who mutes no one, with cheap replies. ZRANK asks whether the
# reader follows: an integer reply, where ZSCORE would format the follow time with
# printf (about a tenth of a reader's cost). EXISTS counts a key once per mention,
# so `EXISTS seen seen mutes excl excl excl excl` answers "active" (bit 2), "mutes
# anyone" (bit 1) and "has an exclusive list's members" (bit 4) in one call, as
# atomically as before; only a reader who mutes someone, or has members on an
# exclusive list, is asked about the author. On one server the keys are built here
# from the uids: one argument per reader instead of five keys to parse and copy into
# KEYS. Declaring keys is what lets a Cluster route a script and check it stays in
# one slot; one server holds every key, so nothing else reads the declaration (the
# site uses no ACL key patterns). On a Cluster the keys are passed, as before.
#
# A home that gained a status tells its user's open streams (`api.streaming`): while
# the user's presence key exists, `add` publishes `home` on their channel, both named
# from the home's (`keys.home_streamed`, `keys.stream_user`: ARGV 7 and 8). A caller
# that knows the reader has no stream open passes `listening` false: one server's
# push asks `streamers` for its whole step at once (`timeline.fanout`): an EXISTS per
# home written cost about 0.35 us of Redis CPU each (4% of a push's 8-9 us a home),
# the index 0.05-0.2 (docs/BENCHMARKS.md). On a Cluster the presence key is not
# declared but sits in the declared home's slot, which Redis allows (it refuses a key
# of another slot only).
#
# HOME_ADD_LUA is the part other scripts share: the arguments up to the status ids
# and `add`, whose `following` may be false where the caller knows the reader
# follows the author in the same atomic step (`timeline.fanout._FOLLOWERS_PUSH`,
# which reads them from the author's followers); a reply's rule still reads it.
# Likewise `seen` false: the caller knows the reader is active, and `mutes` and
# `excl` false (both or neither): the caller knows they have no home skips, neither
# mutes nor exclusive lists' members (the push, from `seen:days` and `muters`).
HOME_ADD_LUA = """
local author, cap, own = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local active_only = ARGV[4] == '1'
local to, to_home = ARGV[5], ARGV[6]
local streamed, channel = ARGV[7], ARGV[8]
local last_sid = 9 + tonumber(ARGV[9])
local function add(home, following, seen, mutes, excl, listening)
  if home ~= own then
    if following and not redis.call('ZRANK', following, author) then return 0 end
    if seen then
      local found = mutes and redis.call(
          'EXISTS', seen, seen, mutes, excl, excl, excl, excl)
        or 2 * redis.call('EXISTS', seen)
      if active_only and found % 4 < 2 then return 0 end
      if found % 2 == 1 and redis.call('ZRANK', mutes, author) then return 0 end
      if found >= 4 and redis.call('ZRANK', excl, author) then return 0 end
    elseif mutes and (redis.call('ZRANK', mutes, author)
                      or redis.call('ZRANK', excl, author)) then
      return 0
    end
    if not (to == '' or to == author or home == to_home
            or redis.call('ZRANK', following, to)) then
      return 0
    end
  end
  local added = 0
  for j = 10, last_sid do
    added = added + redis.call('ZADD', home, ARGV[j], ARGV[j])
  end
  if redis.call('ZCARD', home) > cap then
    redis.call('ZREMRANGEBYRANK', home, 0, -(cap + 1))
  end
  if added > 0 and listening ~= false
      and redis.call('EXISTS', home .. streamed) == 1 then
    redis.call('PUBLISH', channel .. home, 'home')
  end
  return added
end
"""
_TIMELINE_ADD = LuaScript(
    HOME_ADD_LUA
    + """
local added = 0
if #KEYS > 0 then
  for i = 1, #KEYS, 5 do
    added = added + add(KEYS[i], KEYS[i + 1], KEYS[i + 2], KEYS[i + 3], KEYS[i + 4])
  end
else
  local p = last_sid + 1
  local h, h_, f, f_, s, s_, m, m_, x, x_ = unpack(ARGV, p, p + 9)
  for i = p + 10, #ARGV do
    local u = ARGV[i]
    added = added + add(h .. u .. h_, f .. u .. f_, s .. u .. s_, m .. u .. m_,
                        x .. u .. x_)
  end
end
return added
"""
)


# KEYS: a reader's home, and a set of the authors kept out of it (their `mutes`, or
# their exclusive lists' members: `list_exclusive`). ARGV: an author's uid, status
# ids. Removes them from the home while the author is in the set (a change in
# between that took them out keeps them): a mute's sweep, an exclusive list's.
HOME_DROP_KEPT_OUT = LuaScript(
    """
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local n = 0
for i = 2, #ARGV, 1000 do
  n = n + redis.call('ZREM', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return n
"""
)


def _around_uid(key: Callable[[int], str]) -> tuple[str, str]:
    """The text before and after the uid in a per-user key (`home:{` and `}` for
    `keys.home`): what `_TIMELINE_ADD` builds one server's keys from."""
    before, tag, after = key(0).partition("{0}")
    assert tag, "a per-user key carries the uid as its hash tag"
    return before + "{", "}" + after


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


def global_remove_queue(pipe, *, sids: list[int]) -> None:
    """Queue the removal of statuses from the global timeline's partitions."""
    by_partition: dict[str, list[int]] = {}
    for sid in sids:
        by_partition.setdefault(keys.global_partition(sid), []).append(sid)
    for partition, group in by_partition.items():
        pipe.zrem(partition, *group)


# A Lua function: live(user hash, username field, deleted field) says whether the
# account exists and is not being deleted. Scripts that add to a user's own keys
# embed it, so that nothing is added behind an account deletion's job.
_LIVE = """
local function live(user, name_field, deleted_field)
  return redis.call('HEXISTS', user, name_field) == 1
    and redis.call('HEXISTS', user, deleted_field) == 0
end
"""


def _live_args() -> list[str]:
    return [User.USERNAME_FIELD, User.DELETED_FIELD]


# KEYS: one lock. ARGV: its token. Release only a lock we still own.
_UNLOCK = LuaScript(
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
)


# KEYS: the author's posts, home, job queue, job data, outbox, fan-out mode, user
# hash, the slot's counts and the author's scheduled statuses (all in the author's
# slot). ARGV: sid, home cap, the fan-out job's id, now (ms), the status as JSON, the
# outbox cap, the user hash's username, deleted, private and unindexed fields, the
# scheduled status it posts ('' for none), the stream parts (`_stream_parts`: the
# author's own open streams hear of their post). A scheduled status's entry goes in the
# same step (`timeline.scheduled`); one gone already was posted by another run of
# its job, and nothing is published again (returns 3). Publishes a status and records
# the fan-out it owes in one atomic step: no crash separates the two; a status new
# to `posts` is counted in the same step, once the author's sign-up is
# (`timeline.counts`). An author not pushed (any mode set) also gets the status in
# their outbox, where homes read it. An author being deleted publishes nothing
# (returns 0): their deletion job has read, or will read, what they posted. Returns
# 2 for a private author (their statuses stay out of the global timeline,
# `timeline.privacy`), else 1.
_PUBLISH = LuaScript(
    jobs.ENQUEUE
    + _LIVE
    + counts.COUNT_LUA
    + """
if not live(KEYS[7], ARGV[7], ARGV[8]) then return 0 end
if ARGV[11] ~= '' and redis.call('HDEL', KEYS[9], ARGV[11]) == 0 then return 3 end
local sid, cap = ARGV[1], tonumber(ARGV[2])
local added = redis.call('ZADD', KEYS[1], sid, sid)
if redis.call('HEXISTS', KEYS[7], ARGV[10]) == 0 then count(KEYS[8], 0, added) end
if redis.call('ZADD', KEYS[2], sid, sid) == 1
    and redis.call('EXISTS', KEYS[2] .. ARGV[12]) == 1 then
  redis.call('PUBLISH', ARGV[13] .. KEYS[2], 'home')
end
if redis.call('ZCARD', KEYS[2]) > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(cap + 1))
end
if redis.call('EXISTS', KEYS[6]) == 1 then
  local outbox_cap = tonumber(ARGV[6])
  redis.call('HSET', KEYS[5], sid, ARGV[5])
  if redis.call('HLEN', KEYS[5]) > outbox_cap then
    local old = redis.call('ZREVRANGE', KEYS[1], outbox_cap, outbox_cap + 99)
    if #old > 0 then redis.call('HDEL', KEYS[5], unpack(old)) end
  end
end
enqueue(KEYS[3], KEYS[4], ARGV[3], ARGV[4], ARGV[4])
if redis.call('HEXISTS', KEYS[7], ARGV[9]) == 1 then return 2 end
return 1
"""
)

# KEYS: the author's posts, home, job queue, data, outbox, pins, user hash and the
# slot's counts. ARGV: sid, the fan-out job's id, the removal job's id, now (ms),
# the unlink job's id (`timeline.social`), the user hash's username, deleted and
# unindexed fields. Unpublishes a status (unpinned with it: `timeline.pins`)
# and records the removal from followers' homes and the
# removal of its likes, reposts and reply link that it owes. A fan-out of it still
# queued is cancelled; one a worker holds cannot renew its lease any more, and the
# removal waits until that lease has ended, so it runs after the last home that
# fan-out could still write. A status that leaves a counted author's `posts` is
# counted out in the same step (a closed account's were when it closed,
# `timeline.counts`).
_UNPUBLISH = LuaScript(
    jobs.ENQUEUE
    + jobs.FORGET
    + _LIVE
    + counts.COUNT_LUA
    + """
local sid, fanout, removal, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local removed = redis.call('ZREM', KEYS[1], sid)
local counted = live(KEYS[7], ARGV[6], ARGV[7])
if counted and redis.call('HEXISTS', KEYS[7], ARGV[8]) == 0 then
  count(KEYS[8], 0, -removed)
end
redis.call('ZREM', KEYS[2], sid)
redis.call('HDEL', KEYS[5], sid)
redis.call('ZREM', KEYS[6], sid)
local due = now
local pending = redis.call('ZSCORE', KEYS[3], fanout)
if pending then
  due = math.max(now, tonumber(pending))
  redis.call('ZREM', KEYS[3], fanout)
  forget(KEYS[4], fanout)
end
enqueue(KEYS[3], KEYS[4], removal, due, now)
enqueue(KEYS[3], KEYS[4], ARGV[5], due, now)
return removed
"""
)


def status_create(
    *,
    author: User,
    text: str,
    limit: limits.Limit | None = None,
    reply_to: Status | None = None,
    repost_of: Status | None = None,
    reserved_id: int | None = None,
    unlisted: bool = False,
    spoiler: str = "",
    scheduled_entry: int | None = None,
    direct: bool = False,
    poll: Poll | None = None,
    quote: Quote | None = None,
) -> Status:
    """Post a status: store it, publish it with its fan-out job, wake a worker.

    Costs the same whoever posts: the followers' homes are the job's work
    (`timeline.fanout`), not the request's. With `limit` (a request's: the author's
    posting budget, `accounts.limits.post`) the post is taken from it in the same
    round trip as its id, or refused with TooManyAttempts. A reply (`reply_to`: the
    parent, which the caller checked the author may see) or a repost (`repost_of`:
    the original) is linked to it by `timeline.social`; a repost stays out of the
    global timeline, as Mastodon's public timelines leave reblogs out.
    `reserved_id`: an id reserved beforehand (`timeline.ids.status_ids_take`) by a
    caller that must know it before the post can fail (the client API's
    Idempotency-Key): posting an id again writes the same keys, so a post retried
    with it is made once. `unlisted`: kept off the public timelines
    (`Status.unlisted`; a repost is, whatever its original). `spoiler`: a content
    warning (`Status.spoiler`; a repost carries its original's).
    `scheduled_entry`: the author's scheduled status this posts (its job's, with
    its `reserved_id`), dropped in the publishing step (`_PUBLISH`). `direct`: a
    direct message, for the people it mentions (`timeline.direct`; a reply to one
    is one whatever is asked); DirectRefused when it names nobody, or answers a
    status that is no direct message. `poll`: its poll (`timeline.polls.poll_make`;
    a repost carries its original's). `quote`: the status it quotes, which the
    caller checked the author may quote (`timeline.quotes.quote_target`; a repost
    carries its original's); linked to it by `timeline.social.link_posted`.
    """
    text = normalize_text(text)
    spoiler = repost_of.spoiler if repost_of else normalize_spoiler(spoiler)
    problem = text_problem(text, spoiler)
    if problem:
        raise InvalidStatus(problem)
    budget = (limit,) if limit is not None else ()
    names = richtext.mentioned_names(text)

    def take(pipe) -> None:
        # The mentioned names' ids ride in the same round trip as the status id.
        mentions_queue(pipe, names)
        limits.take_queue(pipe, *budget)
        if reserved_id is None:
            status_ids_queue(pipe, author_id=author.id)

    replies = pipeline_run(take)
    claims, taken = replies[: len(names)], replies[len(names) :]
    sid = reserved_id
    if sid is None:
        *taken, first = taken
        (sid,) = status_ids_from(first, author_id=author.id)
    limits.check(taken, *budget)
    mentions = mentions_from(names, claims)
    direct = repost_of is None and (
        direct or (reply_to is not None and reply_to.direct)
    )
    to = (
        direct_messages.audience(
            author_id=author.id, mentioned=list(mentions.values()), reply_to=reply_to
        )
        if direct
        else ()
    )
    status = Status(
        id=sid,
        author_id=author.id,
        author=author.username,
        text=text,
        created=round(time.time(), 3),
        mentions=repost_of.mentions if repost_of else tuple(sorted(mentions.items())),
        reply_to=reply_to.id if reply_to else None,
        reply_uid=reply_to.author_id if reply_to else None,
        reply_author=reply_to.author if reply_to else "",
        thread=((reply_to.reply_to, reply_to.reply_uid or 0), *reply_to.thread)[
            : THREAD_DEPTH - 1
        ]
        if reply_to and reply_to.reply_to is not None
        else (),
        repost_of=repost_of.id if repost_of else None,
        repost_uid=repost_of.author_id if repost_of else None,
        repost_author=repost_of.author if repost_of else "",
        unlisted=unlisted and repost_of is None and not direct,
        spoiler=spoiler,
        conversation=repost_of.conversation_id
        if repost_of
        else sid  # a private reply begins a conversation of its own
        if direct and reply_to is not None and not reply_to.direct
        else reply_to.conversation_id
        if reply_to
        else None,
        edited=repost_of.edited if repost_of else None,
        to=to,
        poll=repost_of.poll if repost_of else poll,
        quote=repost_of.quote if repost_of else quote,
    )
    public = (
        not author.private
        and repost_of is None
        and not status.unlisted
        and not status.direct
    )
    slot = keys.slot_of_user(author.id)

    def store(pipe) -> None:
        # In this order: the hash (unreachable until referenced); then, atomically in
        # the author's slot, the author's posts (now it exists), home and the fan-out
        # job, with the global timeline beside them; then the wake-up call. One round
        # trip on one server; on a Cluster each barrier is one more.
        pipe.hset(keys.status(status.id), mapping=status.to_hash())
        pipe.barrier()
        if status.direct:
            direct_messages.publish_queue(
                pipe, status=status, job=fanout_job_id(author.id, sid)
            )
            pipe.barrier()
            jobs.wake_queue(pipe, slot=slot)
            return
        now = jobs.now_ms()
        _PUBLISH.queue(
            pipe,
            keys=[
                keys.posts(author.id),
                keys.home(author.id),
                *jobs.slot_keys(slot),
                keys.outbox(author.id),
                keys.fanout_mode(author.id),
                account_keys.user(author.id),
                *counts.slot_keys(slot),
                keys.scheduled(author.id),
            ],
            args=[
                sid,
                settings.HOME_TIMELINE_CAP,
                fanout_job_id(author.id, sid),
                now,
                status.to_json(),
                outbox_cap(),
                *_live_args(),
                User.PRIVATE_FIELD,
                User.UNINDEXED_FIELD,
                "" if scheduled_entry is None else scheduled_entry,
                *_STREAM_PARTS,
            ],
        )
        if public:
            # As the request knows the author; the publish step reads the truth
            # in the author's slot, and a status of an account that turned private
            # meanwhile is taken back below. (An account that turned public
            # meanwhile reaches the global timeline from its next status.)
            global_add_queue(pipe, sids=[sid])
        pipe.barrier()
        jobs.wake_queue(pipe, slot=slot)

    _, published, *_ = pipeline_run(store)
    if published == 3:
        return status  # a scheduled status another run of its job posted
    if published == 2 and public:
        pipeline_run(lambda pipe: global_remove_queue(pipe, sids=[sid]))
    if not published:
        # The author's account was deleted while they posted: take back what this
        # request wrote, the hash first (a crash between leaves a reference to a
        # deleted status, which `timelines repair` removes).
        def take_back(pipe) -> None:
            pipe.delete(keys.status(sid))
            pipe.barrier()
            global_remove_queue(pipe, sids=[sid])

        pipeline_run(take_back)
        raise InvalidStatus("This account is deleted.")
    return status


def mentions_queue(pipe, names: list[str]) -> None:
    """Queue the reads of the accounts these `@names` name (`mentions_from`)."""
    for name in names:
        pipe.get(account_keys.username(name))


def mentions_from(names: list[str], claims: list) -> dict[str, int]:
    """A text's mentions, name -> uid, from `mentions_queue`'s replies. A name no
    one holds, or a deleted account's (retired), resolves to nothing: who was meant
    is decided now, and a later owner of the name is not linked."""
    return {
        name: uid
        for name, claim in zip(names, claims, strict=True)
        if (uid := name_claim_uid(claim)) is not None
    }


# How many of a reply's ancestors its hash names (`Status.thread`), so a status
# page shows that much of the thread in its round trips.
THREAD_DEPTH = 4


def outbox_cap() -> int:
    """How many of an author's newest statuses their outbox keeps (pull mode)."""
    return settings.HOME_TIMELINE_CAP


def fanout_job_id(author_id: int, sid: int) -> str:
    """The job that adds status `sid` to its author's followers' homes."""
    return jobs.job_id("post", author_id, sid)


def unlink_job_id(author_id: int, status: Status) -> str:
    """The job that removes deleted status's likes and reposts, its link in the
    parent's replies and the original's reposts, and the notifications of its
    mentions (`timeline.social.status_unlink`): the mentioned uids end the id, as
    nothing names them once the hash is gone (none for a repost, which tells no one
    of its original's)."""
    if status.quote is not None and status.repost_of is None:
        # A quote's names the quoted status and its author after the original
        # (`unlinkq`: its own kind, so the ids of `unlink` jobs queued before
        # quotes read as they did).
        return jobs.job_id(
            "unlinkq",
            author_id,
            status.id,
            status.reply_to or 0,
            0,
            status.quote.id,
            status.quote.author_id,
            *status.told_ids,
        )
    return jobs.job_id(
        "unlink",
        author_id,
        status.id,
        status.reply_to or 0,
        status.repost_of or 0,
        *status.told_ids,
    )


def removal_job_id(author_id: int, sid: int) -> str:
    """The job that removes deleted status `sid` from its author's followers' homes."""
    return jobs.job_id("delete", author_id, sid)


def mode_job_id(author_id: int) -> str:
    """The job that moves an author between pushed and pulled (`timeline.fanout`)."""
    return jobs.job_id("mode", author_id)


def follow_job_id(follower_id: int, followee_id: int) -> str:
    """The job that brings the rest of the store in line with whether the follower
    follows the followee (`following:{follower}` is the truth)."""
    return jobs.job_id("follow", follower_id, followee_id)


def homes_add_queue(
    pipe,
    *,
    readers: list[int],
    author_id: int,
    sids: list[int],
    reply_uid: int | None = None,
):
    """Queue the addition of statuses to the homes of those readers who follow the
    author and are active, by slot (the fan-out); replies to `reply_uid` only where
    the reply rule lets them (`_TIMELINE_ADD`)."""
    for group in slot_groups(readers, keys.home, settings.FANOUT_GROUP):
        _timeline_add(
            pipe,
            readers=group,
            author_id=author_id,
            sids=sids,
            active_only=True,
            reply_uid=reply_uid,
        )


def _timeline_add(
    pipe,
    *,
    readers: list[int],
    author_id: int,
    sids: list[int],
    active_only: bool = False,
    reply_uid: int | None = None,
) -> None:
    # Backfills and rebuilds pass no reply_uid: they add a followee's replies
    # unchecked (reading each status first would cost them a round trip).
    args = _home_add_args(
        author_id=author_id, sids=sids, active_only=active_only, reply_uid=reply_uid
    )
    if is_cluster():
        _TIMELINE_ADD.queue(
            pipe,
            keys=[key(reader) for reader in readers for key in _PER_READER],
            args=args,
        )
    else:
        _TIMELINE_ADD.queue(pipe, keys=[], args=[*args, *_key_parts(), *readers])


# The keys `add` (HOME_ADD_LUA) takes for each reader, in its order.
_PER_READER = (
    keys.home,
    keys.following,
    account_keys.seen,
    keys.mutes,
    keys.list_exclusive,
)


def _home_add_args(
    *, author_id: int, sids: list[int], active_only: bool, reply_uid: int | None
) -> list:
    """HOME_ADD_LUA's arguments, up to the status ids."""
    return [
        author_id,
        settings.HOME_TIMELINE_CAP,
        keys.home(author_id),
        1 if active_only else 0,
        reply_uid if reply_uid is not None else "",
        keys.home(reply_uid) if reply_uid is not None else "",
        *_STREAM_PARTS,
        len(sids),
        *sids,
    ]


def _stream_parts() -> tuple[str, str]:
    """What HOME_ADD_LUA builds a reader's presence key and channel from, given
    their home's name: the presence key's suffix, the channel's prefix
    (`keys.home_streamed`, `keys.stream_user`)."""
    home = keys.home(0)
    streamed, channel = keys.home_streamed(0), keys.stream_user(0)
    assert streamed.startswith(home) and channel.endswith(home)
    return streamed.removeprefix(home), channel.removesuffix(home)


_STREAM_PARTS = _stream_parts()


def _key_parts() -> list[str]:
    """On one server, the 10 strings HOME_ADD_LUA's callers build a reader's keys
    from: the text before and after the uid in each of `_PER_READER`."""
    return [part for key in _PER_READER for part in _around_uid(key)]


def homes_push_args(*, author_id: int, sids: list[int], reply_uid: int | None) -> list:
    """On one server, the arguments of a script that runs HOME_ADD_LUA's `add` on
    readers it finds itself (the fan-out's, `timeline.fanout._FOLLOWERS_PUSH`):
    active readers only, then the key parts."""
    return [
        *_home_add_args(
            author_id=author_id, sids=sids, active_only=True, reply_uid=reply_uid
        ),
        *_key_parts(),
    ]


def status_delete(*, user: User, sid: int) -> None:
    """Delete a status of the user's own: gone from every page at once (its hash
    goes first), and from the followers' homes by its removal job."""
    found = Status.from_fields(sid, get_redis().hmget(keys.status(sid), Status.FIELDS))
    if found is None:
        raise NotFound(sid)
    if found.author_id != user.id:
        raise Forbidden("Only its author can delete a status.")
    status_remove(author_id=user.id, status=found)


def status_remove(*, author_id: int, status: Status) -> None:
    """Remove a status as its deletion does (a repost undone or refused, too): the
    hash first, then its author's references with its removal and unlink jobs,
    and the notifications of its mentions."""
    sid = status.id
    slot = keys.slot_of_user(author_id)
    mentioned = status.told_ids

    def unpublish(pipe) -> None:
        # The hash goes first: from then on every stale reference is skipped.
        pipe.delete(keys.status(sid))
        pipe.barrier()
        if status.direct:
            direct_messages.unpublish_queue(
                pipe,
                status=status,
                post_job=fanout_job_id(author_id, sid),
                unlink_job=unlink_job_id(author_id, status),
            )
            for uid in mentioned:
                notifications.notifications_forget_status_queue(
                    pipe, recipient=uid, sid=sid
                )
            pipe.barrier()
            jobs.wake_queue(pipe, slot=slot)
            return
        _UNPUBLISH.queue(
            pipe,
            keys=[
                keys.posts(author_id),
                keys.home(author_id),
                *jobs.slot_keys(slot),
                keys.outbox(author_id),
                keys.pins(author_id),
                account_keys.user(author_id),
                *counts.slot_keys(slot),
            ],
            args=[
                sid,
                fanout_job_id(author_id, sid),
                removal_job_id(author_id, sid),
                jobs.now_ms(),
                unlink_job_id(author_id, status),
                *_live_args(),
                User.UNINDEXED_FIELD,
            ],
        )
        global_remove_queue(pipe, sids=[sid])
        # Its "mentioned you" go from the mentioned users' stores, each in its own
        # slot: the page skips them, but the unread badge counts groups. At once
        # here; the unlink job, which names them in its id, forgets them again
        # after the post job's lease (a crash before this step, or a post job
        # that read the hash just before it went and notifies after).
        for uid in mentioned:
            notifications.notifications_forget_status_queue(
                pipe, recipient=uid, sid=sid
            )
        # After the hash: a fan-out adding it to a tag meanwhile checks the hash
        # once its adds are done and takes them back (`status_publish`).
        tags_remove_queue(pipe, statuses=[status])
        pipe.barrier()
        jobs.wake_queue(pipe, slot=slot)
        # Open streams that showed it take it back (`api.streaming`).
        pipe.publish(keys.stream_deleted(), sid)

    pipeline_run(unpublish)


# KEYS: a tag's timeline. ARGV: its cap, a status id. Adds the status, drops the
# oldest past the cap; returns 1 when the status was not there yet.
_TAG_ADD = LuaScript(
    """
local cap = tonumber(ARGV[1])
local added = redis.call('ZADD', KEYS[1], ARGV[2], ARGV[2])
if redis.call('ZCARD', KEYS[1]) > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(cap + 1))
end
return added
"""
)


def status_publish(*, status: Status, everyone: bool = True) -> list[str]:
    """Add a public status to the global timeline and to the timelines of its tags,
    and count it in its hour's trends; returns the tags it was new to. One round
    trip, and one more to count it (on every run: each status counts once per tag,
    `_TREND_COUNT`, so a rerun counts nothing, a run that died before its count is
    counted by its retry, and a status that left its tags before is never counted).

    Run by the post's fan-out job (`timeline.fanout.run_post`), with the status it
    read, not by the request: the job is durable, so a crash cannot skip a tag,
    and the count is taken where it can be taken once. A status deleted meanwhile
    is taken back out of its tags (the delete removes it from its tags after its
    hash is gone; this checks the hash after its adds, so whichever runs second
    removes it) and out of the global timeline by its removal's job. Likewise a
    status edited meanwhile leaves the tags its text no longer carries (the edit's
    job, `timeline.edits`, takes it out of them; whichever runs second does).
    Without `everyone` (an edit's job), the global timeline is left as it is.
    """
    sid = status.id
    tags = richtext.hashtags(status.text)

    def add(pipe) -> None:
        if everyone:
            global_add_queue(pipe, sids=[sid])
        for tag in tags:
            _TAG_ADD.queue(
                pipe,
                keys=[keys.tag_timeline(tag)],
                args=[settings.TAG_TIMELINE_CAP, sid],
            )
        if everyone:
            # Public and tag streams read it for their readers (`api.streaming`),
            # once it is in their timelines: in this round trip, after the adds.
            pipe.publish(keys.stream_public(), " ".join([str(sid), *tags]))
        if tags:
            pipe.barrier()
            pipe.hget(keys.status(sid), "text")

    replies = pipeline_run(add)
    if everyone:
        del replies[1 + len(tags)]  # the publish's
    if not tags:
        return []
    *added, text = replies[1:] if everyone else replies
    if text is None:
        pipeline_run(lambda pipe: tags_remove_queue(pipe, statuses=[status]))
        return []
    if text != status.text:
        # Edited since this read: the tags it no longer carries go again.
        gone = sorted(set(tags) - set(richtext.hashtags(text)))
        if gone:

            def drop(pipe) -> None:
                for tag in gone:
                    pipe.zrem(keys.tag_timeline(tag), sid)
                trends_count_queue(pipe, status=status, tags=gone, up=False)

            pipeline_run(drop)
        tags = [tag for tag in tags if tag not in gone]
        added = [True] * len(tags)  # not reported: the edit's job counts them
    # Every tag, on every run: counted once (`_TREND_COUNT`), so a run that died
    # after its adds is counted by its retry, and not at all once the status left.
    pipeline_run(
        lambda pipe: trends_count_queue(pipe, status=status, tags=tags, up=True)
    )
    return [tag for tag, was_added in zip(tags, added, strict=True) if was_added]


def statuses_read(
    sids: list[int], fields: tuple[str, ...] = Status.IMMUTABLE
) -> list[Status]:
    """These statuses (those still there), read in one round trip: for jobs and
    sweeps that walk many (pages read theirs in `timeline.selectors`)."""
    rows = pipeline_run(
        lambda pipe: [pipe.hmget(keys.status(sid), fields) for sid in sids],
        confirm=False,
    )
    return [
        status
        for sid, row in zip(sids, rows, strict=True)
        if (status := Status.from_fields(sid, row)) is not None
    ]


# KEYS: an hour's tag counts, its record (`keys.trends_counted`). ARGV: 1 to count a
# status, -1 to count it down for good (deleted), 0 to count it down (hidden: its
# account turned private, which can be undone), the tag, the status id, when the
# hour's keys expire (unix s). Each status counts once per tag, whatever runs first
# and however often, and a deleted one leaves a mark that keeps any later count
# out (a late or retried post job). Returns 1 when the count changed.
_TREND_COUNT = LuaScript(
    """
local tag, at = ARGV[2], ARGV[4]
local counted, left = '+' .. ARGV[3] .. ' ' .. tag, '-' .. ARGV[3] .. ' ' .. tag
local changed = 0
if ARGV[1] == '1' then
  if redis.call('SISMEMBER', KEYS[2], left) == 0
      and redis.call('SADD', KEYS[2], counted) == 1 then
    redis.call('ZINCRBY', KEYS[1], 1, tag)
    changed = 1
  end
else
  if redis.call('SREM', KEYS[2], counted) == 1 then
    if tonumber(redis.call('ZINCRBY', KEYS[1], -1, tag)) <= 0 then
      redis.call('ZREM', KEYS[1], tag)
    end
    changed = 1
  end
  if ARGV[1] == '-1' then redis.call('SADD', KEYS[2], left) end
end
redis.call('EXPIREAT', KEYS[1], at)
redis.call('EXPIREAT', KEYS[2], at)
return changed
"""
)


def trends_count_queue(
    pipe, *, status: Status, tags: list[str], up: bool, final: bool = True
) -> None:
    """Queue the count (`up`) or the count-down of a status in its hour's trends,
    for each of these tags (`_TREND_COUNT`; `final`: for good, as for a deleted
    status); nothing once the hour has left the window the trends read."""
    hour = int(status.created // 3600)
    # The hour's counts live until it leaves the window the global page reads.
    expires = (hour + settings.TRENDS_HOURS + 1) * 3600
    if expires <= time.time():
        return
    for tag in tags:
        _TREND_COUNT.queue(
            pipe,
            keys=[keys.trends(hour), keys.trends_counted(hour)],
            args=[1 if up else (-1 if final else 0), tag, status.id, expires],
        )


def tags_remove_queue(pipe, *, statuses: list[Status], final: bool = True) -> None:
    """Queue the removal of statuses from the timelines of their tags (every tag a
    status may be filed under, `richtext.filed_tags`, as older rules filed), and
    from their hours' trends (`trends_count_queue`: a deleted or hidden status stops
    making its tags trend; `final` but for a status hidden by a turn to private,
    which can be undone). Reposts and unlisted statuses were never counted."""
    by_tag: dict[str, list[int]] = {}
    for status in statuses:
        for tag in richtext.filed_tags(status.text):
            by_tag.setdefault(tag, []).append(status.id)
        if status.repost_of is None and not status.unlisted:
            trends_count_queue(
                pipe,
                status=status,
                tags=richtext.hashtags(status.text),
                up=False,
                final=final,
            )
    for tag, sids in by_tag.items():
        pipe.zrem(keys.tag_timeline(tag), *sids)


# KEYS: one lock. ARGV: our token, its time to live (ms). Takes the lock, or finds it
# already ours: so a call whose reply was lost and that is sent again (by a client
# retrying after a timeout) does not wait for the lock it holds.
_LOCK = LuaScript(
    """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0
"""
)


class _FollowLock:
    """Serialize one user's follow changes (a few ms each) with a token-owned lock."""

    def __init__(self, uid: int, *, wait: float = 3.0, ttl_ms: int = 10_000):
        self.key = keys.follow_lock(uid)
        self.token = secrets.token_hex(16)
        self.wait = wait
        self.ttl_ms = ttl_ms

    def __enter__(self):
        deadline = time.monotonic() + self.wait
        while not _LOCK(keys=[self.key], args=[self.token, self.ttl_ms]):
            if time.monotonic() > deadline:
                raise Busy("Another follow change is in progress. Try again.")
            time.sleep(0.005)
        return self

    def __exit__(self, *exc):
        _UNLOCK(keys=[self.key], args=[self.token])


# KEYS: the follower's following zset, job queue, job data, pulls, user hash, blocks,
# blocked_by (the follower's slot). ARGV: followee uid, follow time (us) or "" to
# unfollow, the job id, when the job is due (ms), now (ms), the user hash's username
# and deleted fields. Changes the truth and records the job that completes the rest
# in one atomic step. Returns whether it changed anything (1/0) and the follow's
# time now (nil: not following); a follow across a block is refused, changing
# nothing: -1 (the follower blocks the followee) or -2 (the followee blocks the
# follower). An unfollow also stops the home merging the followee's outbox, in the
# same step. A follower being deleted follows no one new.
_FOLLOW_SET = LuaScript(
    jobs.ENQUEUE
    + _LIVE
    + """
if ARGV[2] ~= '' and not live(KEYS[5], ARGV[6], ARGV[7]) then return {0} end
local changed
if ARGV[2] ~= '' and redis.call('ZSCORE', KEYS[6], ARGV[1]) then return {-1} end
if ARGV[2] ~= '' and redis.call('ZSCORE', KEYS[7], ARGV[1]) then return {-2} end
if ARGV[2] == '' then
  changed = redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
else
  changed = redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
end
enqueue(KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[5])
return {changed, redis.call('ZSCORE', KEYS[1], ARGV[1])}
"""
)

# KEYS: the reader's home and following zset. ARGV: the author's uid, status ids.
# Removes them from the home unless the reader follows the author (again).
_HOME_DROP = LuaScript(
    """
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local n = 0
for i = 2, #ARGV, 1000 do
  n = n + redis.call('ZREM', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return n
"""
)


def home_statuses_of(*, held: list[str], author_id: int) -> list[str]:
    """Of the status ids a home holds (read whole: at most HOME_TIMELINE_CAP), those
    the author posted, asked of their `posts` in one round trip (ZMSCORE).

    What a sweep of one author's statuses from a home (an unfollow, a block, a
    mute) removes: the home's own ids, not the author's newest, which miss older
    ones the home still holds whenever a capful of the author's never reached it
    (a reader away, whose return backfills FOLLOW_BACKFILL each; an author in pull
    mode). Bounded as before, by a home's size; it costs the sweep one round trip
    more, as the posts are asked about what the home was read to hold (in
    different slots on a Cluster, so no one script can do both).
    """
    if not held:
        return []
    scores = get_redis().zmscore(keys.posts(author_id), held)
    return [sid for sid, score in zip(held, scores, strict=True) if score is not None]


def _follow_set(
    follower_id: int, followee_id: int, now_us: int | None
) -> tuple[int, float | None]:
    """Set the truth (`following:{follower}`) and record the job that completes it;
    return whether it changed and the follow's time now (None: not following).
    A follow across a block raises Blocked and changes nothing."""
    slot = keys.slot_of_user(follower_id)
    now = jobs.now_ms()
    reply = _FOLLOW_SET(
        keys=[
            keys.following(follower_id),
            *jobs.slot_keys(slot),
            keys.pulls(follower_id),
            account_keys.user(follower_id),
            keys.blocks(follower_id),
            keys.blocked_by(follower_id),
        ],
        args=[
            followee_id,
            "" if now_us is None else now_us,
            follow_job_id(follower_id, followee_id),
            now + settings.JOB_FOLLOW_GRACE_SECONDS * 1000,
            now,
            *_live_args(),
        ],
    )
    changed, *since = reply  # no follow time: nil, or no element at all
    if int(changed) < 0:
        raise Blocked(
            "You blocked this person: unblock them first to follow them."
            if int(changed) == -1
            else "This person blocked you: you cannot follow them."
        )
    return int(changed), float(since[0]) if since and since[0] is not None else None


# KEYS: the followee's followers zset, follower names, user hash, follow requests,
# job queue, blocks, blocked_by (the followee's slot). ARGV: the follower's uid, the
# follow time (us), the follower's name, the user hash's username, deleted and
# private fields, the approval job's id, the cap of pending requests. The gate of
# every follow, atomic with the followee's privacy: adds the follower (1) when the
# account is public, already has them, or is approving them (its approval job is
# queued: `timeline.privacy`); a private account files a follow request instead (2;
# -3: too many pending) unless a block stands either way (-1). Returns 0 when the
# followee is deleted (or being deleted). Anything but 1 means the follow must end
# on the follower's side: their deletion job may have walked the followers already,
# or the account is private. Then KEYS: the followee's notification keys (groups,
# rows, actors, follows), mutes, presence (`keys.home_streamed`); ARGV from 9:
# `notify`'s arguments for a follow, then for a follow request, then `unnotify`'s
# for that follow request, then the followee's stream channel (`keys.stream_user`).
# A follower who arrives (not one already there, nor one the owner approved) and a
# request newly filed notify the followee, atomically with their arrival
# (`timeline.notifications`): so told once, however often the request and the
# follow job run this. An admitted follower's request (one filed while the account
# was private) ends with its "asked to follow you" in the same step.
_FOLLOWER_ADD = LuaScript(
    _LIVE
    + notifications.NOTIFY
    + """
if not live(KEYS[3], ARGV[4], ARGV[5]) then return 0 end
local k = {z = KEYS[8], h = KEYS[9], actors = KEYS[10], follows = KEYS[11],
           blocks = KEYS[6], blocked_by = KEYS[7], mutes = KEYS[12],
           live = KEYS[13], channel = ARGV[#ARGV]}
local r = ARGV[1]
local approving = redis.call('ZSCORE', KEYS[5], ARGV[7])
if redis.call('ZSCORE', KEYS[1], r) or redis.call('HEXISTS', KEYS[3], ARGV[6]) == 0
    or approving then
  if redis.call('ZADD', KEYS[1], ARGV[2], r) == 1 and not approving then
    notify(k, ARGV, 9)
  end
  redis.call('HSET', KEYS[2], r, ARGV[3])
  redis.call('ZREM', KEYS[4], r)
  unnotify(k, ARGV, 9 + 2 * NOTIFY_ARGS)
  return 1
end
if redis.call('ZSCORE', KEYS[6], r) or redis.call('ZSCORE', KEYS[7], r) then
  return -1
end
if not redis.call('ZSCORE', KEYS[4], r)
    and redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[8]) then
  return -3
end
if redis.call('ZADD', KEYS[4], 'NX', ARGV[2], r) == 1 then
  notify(k, ARGV, 9 + NOTIFY_ARGS)
end
return 2
"""
)

# The most follow requests one private account holds pending (and one person has
# sent): past it a new one is refused with a message. None is dropped to make room:
# each has its other side in the requester's slot, which a drop would leave behind.
FOLLOW_REQUESTS_MAX = 10_000

# What `_follow_sync` found: the follow stands, there is none, it became a follow
# request (the followee is private), or the gate refused it (a block, too many
# pending requests).
FOLLOWS, NOT_FOLLOWING, REQUESTED, REFUSED_BLOCK, REFUSED_FULL = (
    "follows",
    "none",
    "requested",
    "blocked",
    "full",
)
_GATE = {2: REQUESTED, -1: REFUSED_BLOCK, -3: REFUSED_FULL, 0: NOT_FOLLOWING}


def approval_job_id(owner_id: int, requester_id: int) -> str:
    """The job that completes the approval of a follow request (`timeline.privacy`):
    while it is queued, the owner's gate admits the requester."""
    return jobs.job_id("approve", owner_id, requester_id)


_UNREAD = object()


def follow_sync(
    *,
    follower_id: int,
    followee_id: int,
    username: str | None = None,
    follows: Any = _UNREAD,
    then: Callable[[Any], None] | None = None,
) -> bool:
    """Bring the followee's side and the follower's home in line with the truth;
    return whether the follower follows the followee now.

    Idempotent, whichever state it finds: a follow gets its followers entry, its
    name and its backfill; an unfollow loses them and the followee's statuses leave
    the home. The request does it at once; the follow job does it again after a
    request that died midway. Call under the follower's follow lock. `follows` is
    the follow's time as `following:{follower}` holds it (None: not following),
    when the caller just read it; `then(pipe)` queues what must follow the last
    write, in its round trip.
    """
    return (
        _follow_sync(
            follower_id=follower_id,
            followee_id=followee_id,
            username=username,
            follows=follows,
            then=then,
        )
        == FOLLOWS
    )


def _follow_sync(
    *,
    follower_id: int,
    followee_id: int,
    username: str | None = None,
    follows: Any = _UNREAD,
    then: Callable[[Any], None] | None = None,
) -> str:
    """`follow_sync`, saying what it found: FOLLOWS, NOT_FOLLOWING, or, when the
    followee's gate did not admit the follower, REQUESTED (a follow request is
    filed in its place: the follower's side records it), REFUSED_BLOCK or
    REFUSED_FULL; then the follow has ended on the follower's side."""
    outcome = NOT_FOLLOWING
    if follows is _UNREAD:
        follows = get_redis().zscore(keys.following(follower_id), followee_id)
    home = keys.home(follower_id)
    if follows is not None and username is None:
        follower = user_get(uid=follower_id)
        if follower is None:
            # A follower being deleted (or gone): their deletion job ends their
            # follows; this one ends here, the same way.
            follows = None
        else:
            username = follower.username
    if follows is not None:

        def link(pipe) -> None:
            _FOLLOWER_ADD.queue(
                pipe,
                keys=[
                    keys.followers(followee_id),
                    keys.follower_names(followee_id),
                    account_keys.user(followee_id),
                    keys.follow_requests(followee_id),
                    keys.job_queue(keys.slot_of_user(followee_id)),
                    keys.blocks(followee_id),
                    keys.blocked_by(followee_id),
                    *notifications.store_keys(followee_id),
                    keys.mutes(followee_id),
                    keys.home_streamed(followee_id),
                ],
                args=[
                    follower_id,
                    int(follows),
                    username or "",
                    *_live_args(),
                    User.PRIVATE_FIELD,
                    approval_job_id(followee_id, follower_id),
                    FOLLOW_REQUESTS_MAX,
                    *(
                        arg
                        for kind in ("follow", "follow_request")
                        for arg in notifications.notify_args(
                            recipient=followee_id,
                            kind=kind,
                            actor=follower_id,
                            sid=None,
                            at_ms=jobs.now_ms(),
                        )
                    ),
                    *notifications.unnotify_args(
                        kind="follow_request", actor=follower_id, sid=None
                    ),
                    keys.stream_user(followee_id),
                ],
            )
            pipe.zcard(keys.followers(followee_id))
            pipe.zrevrange(keys.posts(followee_id), 0, settings.FOLLOW_BACKFILL - 1)
            pipe.get(keys.fanout_mode(followee_id))
            mode_check_queue(pipe, author_id=followee_id)

        added, count, newest, mode, *_ = pipeline_run(link)
        if int(added) != 1:
            # The followee is deleted, or private and not approving this follower:
            # the follow ends on the follower's side too (under the follower's lock,
            # as every follow change), then as any unfollow: their statuses leave
            # the home (none came: nothing reaches a home before the gate). A
            # request the gate filed gets its other side here.
            outcome = _GATE[int(added)]
            at = int(follows)
            follows = None

            def end(pipe) -> None:
                pipe.zrem(keys.following(follower_id), followee_id)
                pipe.zrem(keys.pulls(follower_id), followee_id)
                if outcome == REQUESTED:
                    pipe.zadd(keys.requested(follower_id), {followee_id: at})

            pipeline_run(end)

    if follows is not None:

        def finish(pipe) -> None:
            _popularity_queue(pipe, followee_id, count)
            # A request the gate just granted (or a public account's) is done.
            pipe.zrem(keys.requested(follower_id), followee_id)
            if mode in PULLED_MODES:
                # The home merges the followee's outbox (the follower's lock keeps an
                # unfollow out; a stale entry of a pushed author is ignored on read).
                pipe.zadd(keys.pulls(follower_id), {followee_id: int(follows)})
                # The follower's open streams hear the followee's channel from now
                # on (`api.streaming`), not from their next heartbeat. In this
                # round trip; a publish with nobody subscribed costs next to
                # nothing (follows are few next to the posts the check saves).
                pipe.publish(keys.stream_user(follower_id), "pulls")
            if newest:
                sids = [int(sid) for sid in newest]
                _timeline_add(
                    pipe, readers=[follower_id], author_id=followee_id, sids=sids
                )
            if then is not None:
                pipe.barrier()
                then(pipe)

        pipeline_run(finish)
        return FOLLOWS

    def unlink(pipe) -> None:
        pipe.zrem(keys.followers(followee_id), follower_id)
        pipe.hdel(keys.follower_names(followee_id), follower_id)
        pipe.zcard(keys.followers(followee_id))
        # Read once no push can add to it (`following`, then `followers`, lost the
        # followee): what it holds now is all a sweep has to look at.
        pipe.zrange(home, 0, -1)
        # The follower leaves the followee's "followed you" (an unfollow, a block).
        notifications.unnotify_queue(
            pipe, recipient=followee_id, kind="follow", actor=follower_id, sid=None
        )
        mode_check_queue(pipe, author_id=followee_id)

    _, _, count, held, *_ = pipeline_run(unlink)
    theirs = home_statuses_of(held=held, author_id=followee_id)

    def finish_unlink(pipe) -> None:
        _popularity_queue(pipe, followee_id, count)
        if theirs:
            _HOME_DROP.queue(
                pipe,
                keys=[home, keys.following(follower_id)],
                args=[followee_id, *theirs],
            )
        # Off the follower's lists too (`timeline.lists`: a read checks `following`
        # meanwhile, and a rerun of this step, the follow job's, does it again).
        lists.forget_queue(pipe, owner_id=follower_id, member_id=followee_id)
        if then is not None:
            pipe.barrier()
            then(pipe)

    pipeline_run(finish_unlink)
    return outcome


PULLED_MODES = ("pulling", "pull", "pushing")

# KEYS: the author's followers, fan-out mode, job queue, job data, user hash. ARGV:
# the push limit, the count below which a pulled author is pushed again, the mode
# job's id, now (ms), the user hash's username and deleted fields. Starts the move
# of an author past the limit to pull mode (or back below the lower count to push
# mode): sets the transition's mode and records its job, in one atomic step. The gap
# between the two counts keeps an author near the limit from moving back and forth.
# Returns 1 when a move started. An author being deleted is not moved.
_MODE_CHECK = LuaScript(
    jobs.ENQUEUE
    + _LIVE
    + """
if not live(KEYS[5], ARGV[5], ARGV[6]) then return 0 end
local n, mode = redis.call('ZCARD', KEYS[1]), redis.call('GET', KEYS[2])
local move
if not mode and n > tonumber(ARGV[1]) then move = 'pulling'
elseif mode == 'pull' and n < tonumber(ARGV[2]) then move = 'pushing'
else return 0 end
redis.call('SET', KEYS[2], move)
enqueue(KEYS[3], KEYS[4], ARGV[3], ARGV[4], ARGV[4])
return 1
"""
)


def mode_check_queue(pipe, *, author_id: int) -> None:
    """Queue the check that starts moving an author between push and pull mode."""
    slot = keys.slot_of_user(author_id)
    _MODE_CHECK.queue(
        pipe,
        keys=[
            keys.followers(author_id),
            keys.fanout_mode(author_id),
            *jobs.slot_keys(slot),
            account_keys.user(author_id),
        ],
        args=[
            settings.FANOUT_PUSH_MAX,
            settings.FANOUT_PUSH_MAX * 9 // 10,
            mode_job_id(author_id),
            jobs.now_ms(),
            *_live_args(),
        ],
    )
    pipe.barrier()
    jobs.wake_queue(pipe, slot=slot)


def _follow_change(
    *,
    follower: User,
    followee_id: int,
    now_us: int | None,
    limit: limits.Limit | None,
) -> tuple[bool, str]:
    """Change a follow; return whether the truth changed and what `_follow_sync`
    found. A follow the followee's gate refused raises Blocked or FollowRequestsFull
    (nothing is left of it)."""
    if limit is not None:
        limits.take(limit)
    with _FollowLock(follower.id):
        changed, since = _follow_set(follower.id, followee_id, now_us)
        outcome = _follow_sync(
            follower_id=follower.id,
            followee_id=followee_id,
            username=follower.username,
            follows=since,
            # Done: the job that would complete it after a crash is not needed.
            then=lambda pipe: jobs.cancel_queue(
                pipe,
                slot=keys.slot_of_user(follower.id),
                jid=follow_job_id(follower.id, followee_id),
            ),
        )
    if changed and outcome in (FOLLOWS, NOT_FOLLOWING):
        # Whom to suggest changes with whom they follow (not with a request).
        suggestions.suggestions_refresh_queue(uid=follower.id)
    if outcome == REFUSED_BLOCK:
        raise Blocked("One of you blocked the other: you cannot follow this person.")
    if outcome == REFUSED_FULL:
        raise FollowRequestsFull(
            "This account has too many follow requests waiting. Try again later."
        )
    return bool(changed), outcome


def follow_ask(
    *, follower: User, followee_id: int, limit: limits.Limit | None = None
) -> str:
    """Follow a user, or ask to when their account is private; return FOLLOWS (a
    follow stands: their newest statuses are backfilled), REQUESTED (a follow
    request waits for their approval, `timeline.privacy`) or NOT_FOLLOWING (they
    were deleted meanwhile).

    Safe to repeat: a second call completes whatever a first one left undone, and
    the follow job completes it if the request died midway (filing the request, for
    a private account). With `limit` (the follower's budget,
    `accounts.limits.follow`) it is taken first, or refused with TooManyAttempts.
    Raises FollowRequestsFull when the private account has FOLLOW_REQUESTS_MAX
    pending, or the follower has sent as many.
    """
    if follower.id == followee_id:
        raise CannotFollowSelf("You cannot follow yourself.")
    if get_redis().zcard(keys.requested(follower.id)) >= FOLLOW_REQUESTS_MAX:
        # Read under no lock: only this user adds to their own requests, a few a
        # minute at most (the follow budget), so the cap holds to within a few.
        raise FollowRequestsFull(
            "You have too many follow requests waiting: cancel some first."
        )
    _, outcome = _follow_change(
        follower=follower,
        followee_id=followee_id,
        now_us=time.time_ns() // 1000,
        limit=limit,
    )
    return outcome


def follow_create(
    *, follower: User, followee_id: int, limit: limits.Limit | None = None
) -> bool:
    """Follow a user and backfill their newest statuses; False if already following
    (or if it became a follow request: their account is private, `follow_ask`)."""
    if follower.id == followee_id:
        raise CannotFollowSelf("You cannot follow yourself.")
    changed, outcome = _follow_change(
        follower=follower,
        followee_id=followee_id,
        now_us=time.time_ns() // 1000,
        limit=limit,
    )
    # A follow of an account deleted meanwhile changed the truth, then ended.
    return changed and outcome == FOLLOWS


def follow_delete(
    *, follower: User, followee_id: int, limit: limits.Limit | None = None
) -> bool:
    """Unfollow a user and drop their statuses from the home; False if not following.

    From the first step on no fan-out adds the followee's statuses to this home (the
    add checks `following` atomically), so one sweep removes them for good; the
    follow job sweeps again if the request died before it.
    """
    changed, outcome = _follow_change(
        follower=follower, followee_id=followee_id, now_us=None, limit=limit
    )
    return changed and outcome != FOLLOWS


# KEYS: the reader's seen stamp, job queue and data. ARGV: today, the stamp's TTL
# (s), the home rebuild job's id, now (ms). Stamps the reader as seen today; a reader
# who had no stamp (inactive: fan-out skipped them) also gets the job that rebuilds
# their home. Returns 1 when it queued that job.
# KEYS: the reader's seen stamp, their slot's job queue and job data, on one server
# `seen:days`. ARGV: today, the stamp's TTL, the rebuild job's id, now (ms), on one
# server the stamp's offset and bytes in `seen:days` (`seen_days_args`).
_SEEN = LuaScript(
    jobs.ENQUEUE
    + """
local was = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if KEYS[4] then redis.call('SETRANGE', KEYS[4], ARGV[5], ARGV[6]) end
if was then return 0 end
enqueue(KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[4])
return 1
"""
)


def home_rebuild_job_id(uid: int) -> str:
    """The job that rebuilds a returning reader's home from the people they follow."""
    return jobs.job_id("home", uid)


def reader_seen(*, uid: int) -> bool:
    """Record that the reader was seen today (at most once a day, the one write a
    GET makes); a reader back after FANOUT_ACTIVE_DAYS away gets their home rebuilt.
    Returns True when a rebuild was queued."""
    slot = keys.slot_of_user(uid)

    day = seen_day()
    days = seen_days_args(uid=uid, day=day)

    def stamp(pipe) -> None:
        _SEEN.queue(
            pipe,
            keys=[
                account_keys.seen(uid),
                *jobs.slot_keys(slot),
                *([account_keys.seen_days()] if days else []),
            ],
            args=[
                day,
                seen_ttl_seconds(),
                home_rebuild_job_id(uid),
                jobs.now_ms(),
                *(days or []),
            ],
        )
        active_queue(pipe, uid=uid)
        pipe.barrier()
        jobs.wake_queue(pipe, slot=slot)

    return bool(pipeline_run(stamp)[0])


def home_rebuild(*, uid: int) -> int:
    """Fill a reader's home with the newest statuses of everyone they follow (up to
    FOLLOW_BACKFILL each, HOME_TIMELINE_CAP in all); returns how many were added.

    Idempotent: each add checks, in the reader's slot, that they still follow.
    """
    followees = [int(f) for f in get_redis().zrange(keys.following(uid), 0, -1)]
    newest: list[tuple[int, int]] = []  # (sid, author)
    cap = settings.HOME_TIMELINE_CAP
    for start in range(0, len(followees), 500):
        chunk = followees[start : start + 500]

        def newest_of(pipe, chunk=chunk) -> None:
            for f in chunk:
                pipe.zrevrange(keys.posts(f), 0, settings.FOLLOW_BACKFILL - 1)
                # A private followee's only for an approved follower: `following`
                # holds a followee for a moment before their gate answers.
                pipe.hexists(account_keys.user(f), User.PRIVATE_FIELD)
                pipe.zscore(keys.followers(f), uid)

        replies = pipeline_run(newest_of, confirm=False)
        found = [
            (int(sid), f)
            for f, sids, private, admitted in zip(
                chunk, replies[::3], replies[1::3], replies[2::3], strict=True
            )
            if not private or admitted is not None
            for sid in sids
        ]
        newest = heapq.nlargest(cap, [*newest, *found])
    by_author: dict[int, list[int]] = {}
    for sid, author in newest:
        by_author.setdefault(author, []).append(sid)
    added = 0
    authors = list(by_author.items())
    for start in range(0, len(authors), 200):

        def add(pipe, part=authors[start : start + 200]) -> None:
            for author, sids in part:
                _timeline_add(pipe, readers=[uid], author_id=author, sids=sids)

        added += sum(pipeline_run(add))
    return added


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


def account_job_id(uid: int) -> str:
    """The job that removes everything of a deleted account (`timeline.fanout`)."""
    return jobs.job_id("account", uid)


def _own_pointless_jobs(uid: int) -> list[str]:
    """The user's own jobs that their deletion makes pointless, as ids or id prefixes
    (ending in ':'): fan-outs of their statuses, moves between push and pull, a home
    rebuild, their scheduled statuses. Their deletes and follow changes are not
    among them: those run to the end (harmless once the account is marked), so no
    home or follower list keeps what they were removing."""
    return [
        f"post:{uid}:",
        jobs.job_id("mode", uid),
        home_rebuild_job_id(uid),
        f"schedule:{uid}:",  # their scheduled statuses (`timeline.scheduled`)
    ]


# KEYS: the user hash, sessions, outbox, fan-out mode, then the job queue, data and
# failed jobs of the user's slot, their posts and the slot's counts. ARGV: the
# username, deleted and password fields, now (s), the account job's id, now (ms),
# the unindexed field, then the ids or id prefixes (ending in ':') of the user's own
# jobs to cancel. Closes an account in one atomic step (and counts the user and
# their statuses out, if their sign-up counted them: `timeline.counts`): the
# password and every session go (every device is logged out), the hash is marked
# deleted (pages find no such user from now on), the outbox and fan-out mode go (no
# home merges their statuses any more), their pointless jobs are cancelled and the
# account job is recorded. It is due once every cancelled job a worker still holds
# has lost its lease, so it runs after the last write such a job could make (as a
# status delete waits for its fan-out). Scans the slot's queue: it holds only the
# pending jobs of the users of one slot. Returns 0 when there is no such live user.
_ACCOUNT_CLOSE = LuaScript(
    jobs.ENQUEUE
    + jobs.FORGET
    + _LIVE
    + counts.COUNT_LUA
    + """
local user, queue, data, failed = KEYS[1], KEYS[5], KEYS[6], KEYS[7]
if not live(user, ARGV[1], ARGV[2]) then return 0 end
if redis.call('HEXISTS', user, ARGV[7]) == 0 then
  count(KEYS[9], -1, -redis.call('ZCARD', KEYS[8]))
end
local now = tonumber(ARGV[6])
redis.call('HDEL', user, ARGV[3])
redis.call('HSET', user, ARGV[2], ARGV[4])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
local function ours(id)
  for i = 8, #ARGV do
    local p = ARGV[i]
    if id == p or (string.sub(p, -1) == ':' and string.sub(id, 1, #p) == p) then
      return true
    end
  end
  return false
end
local due = now
local queued = redis.call('ZRANGE', queue, 0, -1, 'WITHSCORES')
for i = 1, #queued, 2 do
  local id = queued[i]
  if ours(id) then
    if redis.call('HEXISTS', data, id .. '#t') == 1 then
      due = math.max(due, tonumber(queued[i + 1]))
    end
    redis.call('ZREM', queue, id)
    forget(data, id)
  end
end
for _, id in ipairs(redis.call('ZRANGE', failed, 0, -1)) do
  if ours(id) then
    redis.call('ZREM', failed, id)
    forget(data, id)
  end
end
enqueue(queue, data, ARGV[5], due, now)
return 1
"""
)


def account_close(*, user: User) -> bool:
    """Close an account at once (one atomic step in the user's slot, then the name
    is retired) and leave the rest to its `account` job; False if already closed.

    After this no page shows the user, their cookies and password no longer work,
    and their name is taken until ACCOUNT_NAME_GRACE_DAYS have passed. A crash
    before the name's step leaves it naming a deleted user (no one to see); the
    job retires it again.
    """
    slot = keys.slot_of_user(user.id)

    def close(pipe) -> None:
        _ACCOUNT_CLOSE.queue(
            pipe,
            keys=[
                account_keys.user(user.id),
                account_keys.sessions(user.id),
                keys.outbox(user.id),
                keys.fanout_mode(user.id),
                *jobs.slot_keys(slot),
                keys.job_failed(slot),
                keys.posts(user.id),
                *counts.slot_keys(slot),
            ],
            args=[
                User.USERNAME_FIELD,
                User.DELETED_FIELD,
                User.PASSWORD_FIELD,
                int(time.time()),
                account_job_id(user.id),
                jobs.now_ms(),
                User.UNINDEXED_FIELD,
                *_own_pointless_jobs(user.id),
            ],
        )
        # What the settings page lists of the devices just logged out (their job
        # deletes it again if this step is lost).
        pipe.delete(account_keys.devices(user.id))

    closed, _ = pipeline_run(close)
    username_retire(uid=user.id, username=user.username)
    pipeline_run(lambda pipe: jobs.wake_queue(pipe, slot=slot))
    return bool(closed)


def account_delete(*, user: User, password: str, client: str) -> None:
    """Delete the signed-in user's account once their password is confirmed: gone
    from every page at once, everything else by its job (`account_close`).

    Raises InvalidCredentials for a wrong password (a failed login) and
    TooManyAttempts past the login failure limit; then nothing changes.
    """
    password_confirm(user=user, password=password, client=client)
    account_close(user=user)


def stream_presence_set(*, uid: int) -> None:
    """Say user `uid` has a stream open (`api.streaming`), for
    STREAM_PRESENCE_SECONDS: their home's and notifications' writers publish their
    signals meanwhile. One server also records it in `streamers` (the push's index),
    dropping the expired there."""
    seconds = settings.STREAM_PRESENCE_SECONDS
    if is_cluster():
        get_redis().set(keys.home_streamed(uid), 1, ex=seconds)
        return
    now = jobs.now_ms()
    with get_redis().pipeline(transaction=True) as pipe:
        pipe.set(keys.home_streamed(uid), 1, ex=seconds)
        pipe.zadd(keys.streamers(), {uid: now + seconds * 1000})
        pipe.zremrangebyscore(keys.streamers(), "-inf", now)
        pipe.execute()
