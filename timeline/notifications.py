"""Notifications (issue #12): what others did that concerns a user, grouped, in the
user's own slot. Writes here; the page's reads are in `timeline.selectors`.

**The store.** All of one recipient's keys carry their `{uid}` tag
(`timeline.keys`): `notifications:{u}` places each *group* (newest on top),
`notification:{u}` holds the group as JSON (`timeline.domain.Notification`),
`notification_actors:{u}` remembers who is in each group (`<group>|<actor>`, read by
lex ranges), `notification_follows:{u}` which follow group holds a follower (those
group by day), and `notifications_read:{u}` the place up to which the user has read
(their apps' notifications marker too: `timeline.markers`).

**Groups.** Likes of one status form one group (`like:<sid>`: "alice and 3 others
liked your status"), as do reposts (`repost:<sid>`); a mention or a reply is one
group per status (`mention:<sid>`, `reply:<sid>`: its one actor is the author); new
followers and follow requests group by UTC day (`follow:<day>`); an approved follow
request tells the requester once per approver (`follow_approved:<owner>`). A new
event moves its group on top: its place becomes its time, raised to one above the
top when the top is as new, so places are unique (a page's cursor is the place
alone) and anything that arrives after the user read is above their mark (unread),
even if its event time is older. The shown time is the newest event's.

**Delivery.** `notify_queue`, `unnotify_queue` and `notifications_forget_status_queue`
each queue one script in the recipient's slot, atomic and safe to repeat, so a
durable job may run them again: the same actor repeating the same event counts
once; nothing is recorded when the actor is the recipient, when either blocks the
other (`blocks:{r}`, `blocked_by:{r}` are in the recipient's slot), when the
recipient mutes the actor or muted the status's conversation
(`conversation_mutes:{r}`, `timeline.conversations`), or when the recipient is
deleted. Past
NOTIFICATIONS_CAP groups the oldest go, with their rows and actors, in the same
step. Callers decide who may be told: a status's notification should reach only a
recipient who may see it (`timeline.privacy`); the page leaves out again whatever
a block, a mute, a deletion or a private author hides at read.

A follow notifies from inside the followee's gate (`services._FOLLOWER_ADD`): once,
atomically with the follower's arrival, so the request and the follow job (which
runs the same gate again) can never tell it twice; a private account's new follow
request notifies the same way, and its notification goes with the request
however it ends: approved, denied or cancelled (`timeline.privacy`), ended by a
block either way (each side's script in `timeline.blocks` drops the request filed
in its slot and, with `unnotify`, its notification), or by a follow the gate
admits (same script). A follow its owner approved tells the owner nothing (they
approved it) and tells the requester, from the approval's last step, only while
the follow stands in their slot (`if_following`).

A like tells its status's author from the request and again from the like's job,
queued with the like in the status's slot (the author's store is in another), so a
request cut short still tells them; the unlike queues the same job, which takes the
notification back, and each telling checks afterwards that the like still stands
(`timeline.social.like_tell`).

A deleted status's groups go from the stores that may hold one, its author's, its
parent's author's and each mentioned user's, because the unread count
(`timeline.selectors`) counts groups, shown or not: by its unlink job
(`timeline.social.status_unlink`, whose id names the mentioned users, as nothing
else does once the hash is gone; an account's deletion queues one per status
too), and the mentions at once by the delete itself
(`timeline.services.status_remove`).
"""

from __future__ import annotations

import time

from django.conf import settings

from accounts import keys as account_keys
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from timeline import keys, markers

KINDS = (
    "mention",
    "reply",
    "like",
    "repost",
    "update",
    "follow",
    "follow_request",
    "follow_approved",
    "poll",
    "quote",
)
# About one status (`sid`). `update`: a status the recipient reposted was edited
# (Mastodon's): told again on each edit (`notify_queue`'s `again`). `poll`: a poll
# the recipient voted in, or asked (its one actor is its author, the recipient
# too then), has closed (`timeline.polls`).
# `quote`: a status quoted the recipient's (`timeline.quotes`; `sid`: the quote).
STATUS_KINDS = ("mention", "reply", "like", "repost", "update", "poll", "quote")
FOLLOW_KINDS = ("follow", "follow_request")  # grouped by day, no status
# The rest (follow_approved: "alice approved your follow request") is one group per
# actor: told once per approver.
# How many of a group's actors are remembered: below it, counts are exact and
# repeats and undos are recognised; past it an actor is counted, not remembered (an
# undo of one of those lowers the count while it is above the remembered).
GROUP_ACTORS_MAX = 1000
# How many of a group's newest actors its row names (the page shows three; the
# rest stand in for those a block, mute or deletion hides at read).
ACTORS_KEPT = 6
DAY_MS = 86_400_000

# Lua functions the notification scripts embed (`_FOLLOWER_ADD` too). `k` names the
# recipient's keys: z (groups by place), h (rows), actors, follows, blocks,
# blocked_by, mutes. `notify(k, args, i)` reads NOTIFY_ARGS arguments from args[i]:
# recipient, kind, group, actor, sid ('' for none), time (ms), cap of groups,
# GROUP_ACTORS_MAX, ACTORS_KEPT, the follow index member ('' for status kinds),
# the group's day ('' for status kinds). Returns 1 when it recorded something.
# `unnotify(k, args, i)` reads UNNOTIFY_ARGS arguments from args[i]: the group (''
# for a follow kind: the follow index finds it), the actor, the kind, the follow
# index member ('' for status kinds), ACTORS_KEPT. It undoes one event: the actor
# leaves the group, an emptied group goes; it uses only k's z, h, actors and
# follows, so a script that ends what an event was about (a follow request) can
# end its notification in the same atomic step. Returns 1 when it changed
# something.
NOTIFY_ARGS = 11  # also in the Lua below, for scripts that read two in a row
UNNOTIFY_ARGS = 5
NOTIFY = """
local NOTIFY_ARGS = 11
local function group_range(group)
  return '[' .. group .. '|', '(' .. group .. '}'
end

local function group_drop(k, group)
  local lo, hi = group_range(group)
  local row = redis.call('HGET', k.h, group)
  if row then
    local g = cjson.decode(row)
    if g.d and g.d ~= '' then
      for _, m in ipairs(redis.call('ZRANGEBYLEX', k.actors, lo, hi)) do
        local f = g.k .. '|' .. string.match(m, '[^|]*$')
        local day = redis.call('ZSCORE', k.follows, f)
        if day and tonumber(day) == tonumber(g.d) then
          redis.call('ZREM', k.follows, f)
        end
      end
    end
  end
  redis.call('ZREMRANGEBYLEX', k.actors, lo, hi)
  redis.call('HDEL', k.h, group)
  return redis.call('ZREM', k.z, group)
end

local function notify(k, args, i)
  local recipient, kind, group, actor = args[i], args[i + 1], args[i + 2], args[i + 3]
  local sid, at, cap = args[i + 4], tonumber(args[i + 5]), tonumber(args[i + 6])
  local actors_max, kept = tonumber(args[i + 7]), tonumber(args[i + 8])
  local follow, day = args[i + 9], args[i + 10]
  if actor == recipient and kind ~= 'poll' then return 0 end
  if redis.call('ZSCORE', k.blocks, actor) or redis.call('ZSCORE', k.blocked_by, actor)
      or redis.call('ZSCORE', k.mutes, actor) then
    return 0
  end
  local member = group .. '|' .. actor
  if redis.call('ZSCORE', k.actors, member) then return 0 end
  local row = redis.call('HGET', k.h, group)
  local g
  if row then
    g = cjson.decode(row)
  else
    g = {k = kind, s = sid, a = {}, n = 0, t = at, d = day}
  end
  local lo, hi = group_range(group)
  if redis.call('ZLEXCOUNT', k.actors, lo, hi) < actors_max then
    redis.call('ZADD', k.actors, 0, member)
    if follow ~= '' then redis.call('ZADD', k.follows, day, follow) end
  end
  g.n = tonumber(g.n) + 1
  local shown = {actor}
  for _, x in ipairs(g.a) do
    if x ~= actor and #shown < kept then shown[#shown + 1] = x end
  end
  g.a = shown
  if at > tonumber(g.t) then g.t = at end
  local place = at
  local top = redis.call('ZREVRANGE', k.z, 0, 0, 'WITHSCORES')
  if top[2] and tonumber(top[2]) >= place then place = tonumber(top[2]) + 1 end
  redis.call('ZADD', k.z, place, group)
  redis.call('HSET', k.h, group, cjson.encode(g))
  local over = redis.call('ZCARD', k.z) - cap
  if over > 0 then
    for _, old in ipairs(redis.call('ZRANGE', k.z, 0, over - 1)) do
      group_drop(k, old)
    end
  end
  if k.live and redis.call('EXISTS', k.live) == 1 then
    redis.call('PUBLISH', k.channel, 'notification')
  end
  return 1
end

local function unnotify(k, args, i)
  local group, actor, kind, follow = args[i], args[i + 1], args[i + 2], args[i + 3]
  local kept = tonumber(args[i + 4])
  if follow ~= '' then
    local day = redis.call('ZSCORE', k.follows, follow)
    if not day then return 0 end
    redis.call('ZREM', k.follows, follow)
    group = kind .. ':' .. day
  end
  local row = redis.call('HGET', k.h, group)
  if not row then return 0 end
  local g = cjson.decode(row)
  local lo, hi = group_range(group)
  if redis.call('ZREM', k.actors, group .. '|' .. actor) == 0
      and tonumber(g.n) <= redis.call('ZLEXCOUNT', k.actors, lo, hi) then
    return 0
  end
  g.n = tonumber(g.n) - 1
  if g.n <= 0 then
    group_drop(k, group)
    return 1
  end
  local shown, seen = {}, {}
  for _, x in ipairs(g.a) do
    if x ~= actor then shown[#shown + 1] = x seen[x] = true end
  end
  if #shown < kept then
    for _, m in ipairs(redis.call('ZRANGEBYLEX', k.actors, lo, hi, 'LIMIT', 0, kept)) do
      local x = string.match(m, '[^|]*$')
      if #shown < kept and not seen[x] then shown[#shown + 1] = x seen[x] = true end
    end
  end
  g.a = shown
  redis.call('HSET', k.h, group, cjson.encode(g))
  return 1
end
"""

# KEYS: the recipient's groups, rows, actors, follows, blocks, blocked_by, mutes and
# user hash. The recipient's keys, as the embedded functions name them.
_KEYS_TABLE = """
local k = {z = KEYS[1], h = KEYS[2], actors = KEYS[3], follows = KEYS[4],
           blocks = KEYS[5], blocked_by = KEYS[6], mutes = KEYS[7]}
"""

# KEYS 9: the recipient's following zset. ARGV: the user hash's username and deleted
# fields, a followee the recipient must follow ('' for no such condition), then
# `notify`'s arguments. Records one event (see NOTIFY); nothing for a recipient
# deleted or being deleted (as `services._LIVE`: their deletion job may have deleted
# these keys already), nor when the condition does not hold.
# The checks both scripts make before they record: a recipient deleted or being
# deleted (as `services._LIVE`: their deletion job may have deleted these keys
# already), a condition that does not hold, a conversation the recipient muted
# (`timeline.conversations`) tell nothing.
_TELLABLE = """
if redis.call('HEXISTS', KEYS[8], ARGV[1]) == 0
    or redis.call('HEXISTS', KEYS[8], ARGV[2]) == 1 then
  return 0
end
if ARGV[3] ~= '' and not redis.call('ZSCORE', KEYS[9], ARGV[3]) then return 0 end
if ARGV[4] ~= '' and redis.call('ZSCORE', KEYS[10], ARGV[4]) then return 0 end
"""
# KEYS 11 and ARGV 16: the recipient's presence key and channel (`keys.home_streamed`,
# `keys.stream_user`): a recipient with a stream open hears of what was recorded.
_STREAMED = """
k.live, k.channel = KEYS[11], ARGV[16]
"""
_NOTIFY = LuaScript(
    NOTIFY + _KEYS_TABLE + _STREAMED + _TELLABLE + "return notify(k, ARGV, 5)"
)

# KEYS and ARGV: as `_NOTIFY`. An event that happens again (a status edited again):
# its group, recorded for an older time, goes and is recorded anew at the top; one
# already recorded for this time (or later) is left as it is, so a repeat tells
# nothing twice.
_NOTIFY_AGAIN = LuaScript(
    NOTIFY
    + _KEYS_TABLE
    + _STREAMED
    + _TELLABLE
    + """
local group, at = ARGV[7], tonumber(ARGV[10])
local row = redis.call('HGET', k.h, group)
if row then
  if tonumber(cjson.decode(row).t) >= at then return 0 end
  group_drop(k, group)
end
return notify(k, ARGV, 5)
"""
)

# KEYS: as `_NOTIFY`. ARGV: `unnotify`'s arguments. The actor leaves the group (an
# unlike, an undone repost, an unfollow); an emptied group goes. Returns 1 when it
# changed something.
_UNNOTIFY = LuaScript(NOTIFY + _KEYS_TABLE + "return unnotify(k, ARGV, 1)")

# KEYS: as `_NOTIFY`, then the read mark. ARGV: groups (a deleted status's, or one
# a client dismisses). They go; then a read mark above the new top comes down to
# it (nothing left: it goes), so whatever arrives later is placed above the mark,
# unread, as always: it stayed at a dropped top group's place, under which a later
# event with an older time was placed, read.
_FORGET_GROUPS = LuaScript(
    NOTIFY
    + _KEYS_TABLE
    + """
local n = 0
for i = 1, #ARGV do n = n + group_drop(k, ARGV[i]) end
if n > 0 then
  local mark = tonumber(redis.call('GET', KEYS[9]) or '0')
  local top = redis.call('ZREVRANGE', k.z, 0, 0, 'WITHSCORES')
  if not top[2] then
    redis.call('DEL', KEYS[9])
  elseif mark > tonumber(top[2]) then
    redis.call('SET', KEYS[9], top[2])
  end
end
return n
"""
)


def store_keys(recipient: int) -> list[str]:
    """The recipient's own notification keys, as `notify` names them (z, h, actors,
    follows), for scripts that embed it; deleted with the account."""
    return [
        keys.notifications(recipient),
        keys.notification_groups(recipient),
        keys.notification_actors(recipient),
        keys.notification_follows(recipient),
    ]


def _recipient_keys(recipient: int) -> list[str]:
    return [
        *store_keys(recipient),
        keys.blocks(recipient),
        keys.blocked_by(recipient),
        keys.mutes(recipient),
    ]


def _group(kind: str, sid: int | None, actor: int, at_ms: int) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown notification kind {kind!r}")
    if kind in STATUS_KINDS:
        if sid is None:
            raise ValueError(f"a {kind} notification names its status")
        return f"{kind}:{int(sid)}"
    if kind in FOLLOW_KINDS:
        return f"{kind}:{at_ms // DAY_MS}"
    return f"{kind}:{int(actor)}"


def notify_args(
    *, recipient: int, kind: str, actor: int, sid: int | None, at_ms: int
) -> list:
    """The NOTIFY_ARGS arguments of the embedded `notify` for one event."""
    follows = kind in FOLLOW_KINDS
    return [
        int(recipient),
        kind,
        _group(kind, sid, actor, at_ms),
        int(actor),
        "" if sid is None else int(sid),
        int(at_ms),
        settings.NOTIFICATIONS_CAP,
        GROUP_ACTORS_MAX,
        ACTORS_KEPT,
        f"{kind}|{int(actor)}" if follows else "",
        at_ms // DAY_MS if follows else "",
    ]


def notify_queue(
    pipe,
    *,
    recipient: int,
    kind: str,
    actor: int,
    sid: int | None,
    at_ms: int,
    if_following: int | None = None,
    conversation: int | None = None,
    again: bool = False,
) -> None:
    """Queue the notification of one event: `actor` did `kind` (mention, reply,
    like, repost: about status `sid`, part of `conversation`, its
    `Status.conversation_id`; follow, follow_request, follow_approved: `sid` None)
    at `at_ms` (unix ms). One idempotent script in the recipient's slot; its reply
    is 1 when recorded, 0 when skipped (a repeat, the recipient themself, a block
    either way, a mute, a muted conversation, a deleted recipient, or, with
    `if_following`, a recipient who does not follow that user at that moment).
    With `again`, an event the group was told of at an older time is told anew, on
    top (`_NOTIFY_AGAIN`)."""
    if kind in STATUS_KINDS and conversation is None:
        raise ValueError(f"a {kind} notification names its conversation")
    (_NOTIFY_AGAIN if again else _NOTIFY).queue(
        pipe,
        keys=[
            *_recipient_keys(recipient),
            account_keys.user(recipient),
            keys.following(recipient),
            keys.conversation_mutes(recipient),
            keys.home_streamed(recipient),
        ],
        args=[
            User.USERNAME_FIELD,
            User.DELETED_FIELD,
            "" if if_following is None else int(if_following),
            "" if conversation is None else int(conversation),
            *notify_args(
                recipient=recipient, kind=kind, actor=actor, sid=sid, at_ms=at_ms
            ),
            keys.stream_user(recipient),
        ],
    )


def unnotify_queue(
    pipe, *, recipient: int, kind: str, actor: int, sid: int | None
) -> None:
    """Queue the undo of one event (an unlike, an undone repost, an unfollow, a
    cancelled follow request): the actor leaves its group, an emptied group goes.
    Idempotent; its reply is 1 when something changed."""
    _UNNOTIFY.queue(
        pipe,
        keys=[*_recipient_keys(recipient), account_keys.user(recipient)],
        args=unnotify_args(kind=kind, actor=actor, sid=sid),
    )


def unnotify_args(*, kind: str, actor: int, sid: int | None) -> list:
    """The UNNOTIFY_ARGS arguments of the embedded `unnotify` for one event."""
    follows = kind in FOLLOW_KINDS
    return [
        "" if follows else _group(kind, sid, actor, 0),
        int(actor),
        kind,
        f"{kind}|{int(actor)}" if follows else "",
        ACTORS_KEPT,
    ]


def notifications_forget_status_queue(pipe, *, recipient: int, sid: int) -> None:
    """Queue the removal of every group of the recipient's about status `sid` (it
    was deleted). Idempotent; its reply is how many groups went."""
    _FORGET_GROUPS.queue(
        pipe,
        keys=[
            *_recipient_keys(recipient),
            account_keys.user(recipient),
            keys.notifications_read(recipient),
        ],
        args=[_group(kind, sid, 0, 0) for kind in STATUS_KINDS],
    )


def notify(
    *,
    recipient: int,
    kind: str,
    actor: int,
    sid: int | None = None,
    at_ms: int | None = None,
    conversation: int | None = None,
) -> bool:
    """Notify one event now (`notify_queue` in a round trip of its own); True when
    it was recorded. A status's event names its conversation, else the status
    is taken to begin one."""
    at = at_ms if at_ms is not None else time.time_ns() // 1_000_000
    if conversation is None and kind in STATUS_KINDS:
        conversation = sid
    (recorded,) = pipeline_run(
        lambda pipe: notify_queue(
            pipe,
            recipient=recipient,
            kind=kind,
            actor=actor,
            sid=sid,
            at_ms=at,
            conversation=conversation,
        )
    )
    return bool(recorded)


def notifications_mark_read(*, user: User, up_to: int) -> int:
    """Mark the user's notifications read up to place `up_to` (what their page
    showed on top), never beyond the top group's place and never lowering the
    mark: a save of their notifications marker (`timeline.markers`), so their apps
    read where the page left off. Returns the mark now
    (0 for a user deleted or being deleted: nothing is saved)."""
    saved = markers.markers_save(user=user, notifications=up_to)
    found = saved.get("notifications")
    return found.position if found is not None else 0  # 0: the user is deleted


def notification_dismiss(
    *, user: User, kind: str, actor: int, sid: int | None = None
) -> bool:
    """Take one event out of the user's notifications (the client API's dismiss):
    the actor leaves its group, as by an undo (`unnotify_queue`: a follow's group is
    the one its index names), and an emptied group goes. One script in the user's
    slot; True when something changed."""
    (changed,) = pipeline_run(
        lambda pipe: unnotify_queue(
            pipe, recipient=user.id, kind=kind, actor=actor, sid=sid
        )
    )
    return bool(changed)


def notification_group_dismiss(*, user: User, kind: str, name: str) -> bool:
    """Take a whole group out of the user's notifications (the client API's group
    dismiss): `kind` and `name` as its key names it (`like` and a status id,
    `follow` and a day). One script in the user's slot; True when it was there."""
    group = f"{kind}:{name}"
    (dropped,) = pipeline_run(
        lambda pipe: _FORGET_GROUPS.queue(
            pipe,
            keys=[
                *_recipient_keys(user.id),
                account_keys.user(user.id),
                keys.notifications_read(user.id),
            ],
            args=[group],
        )
    )
    return bool(dropped)


def notifications_clear(*, user: User) -> None:
    """Delete all of the user's notifications, with the read mark (nothing is left
    to be read; whatever comes next is unread): one DEL in the user's slot."""
    pipeline_run(
        lambda pipe: pipe.delete(*store_keys(user.id), keys.notifications_read(user.id))
    )
