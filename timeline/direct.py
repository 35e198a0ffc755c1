"""Direct messages (Mastodon's `direct` visibility): a status for the people it
names, read as conversations.

**Who sees one.** A direct message's audience is fixed when it is posted and
stored on it (`Status.to`): the people its text mentions and, for a reply, the
audience and the author of the status it answers (so everyone who sees a
message sees every reply to it: a thread of direct messages only grows). A reply
to a direct message is direct, so no direct thread lists a public reply. A direct
reply to a status that is none (a private reply, as Mastodon allows) reaches that
status's author and whom it names, and is linked to nothing: the public thread it
answers neither lists nor counts it for anyone (`social.link_posted`), and its own
page shows its audience the status it answers above it. It begins a conversation
of its own (its `conversation` is its id, not the public thread's root), so two
people's private replies in one thread are two conversations, each with its own
audience, and muting the public thread does not mute it. Only its
author and its audience see it (`Status.visible_to`, applied wherever statuses
are read by id: `timeline.selectors`), act on it (`social.status_target`) or are
told of it; blocks apply as to any status. It reaches no timeline: no home, no
profile, no list, not everyone's posts, no tag page, no trend; it is never
reposted or pinned. An edit changes its text, not its audience.

**Where it is kept.** The author's `direct:{<uid>}` (their direct messages, by id:
what their account's deletion deletes); each participant's conversations, in
their own slot: `conversations:{<uid>}` (a conversation's id, the id of the
direct message it began with, scored by its newest message they may see),
`conversation_sids:{<uid>}` (conversation -> its newest CONVERSATION_SIDS_KEPT
message ids, ascending: where a page finds the newest that still stands; and the
others who took part) and
`conversations_unread:{<uid>}` (those with a message they have not read).

**How it travels.** Posting stores the hash, then one script in the author's slot
(`_PUBLISH`) records it among theirs, in their own conversation (read), and the
post's fan-out job, which then links a reply to its parent, tells the audience
(a mention; a reply to its parent's author) and adds the message to each
recipient's conversation, unread (`deliver`): idempotent, each recipient one
script in their slot, skipped across a block either way. Deleting removes the
hash first (every page skips it at once), then the author's entry, and queues
`undirect`, which takes it out of every participant's conversation (a
conversation left with none goes). A conversation past CONVERSATIONS_MAX drops
the one whose newest message is oldest (its messages stay, on their pages). A
message reaches at most AUDIENCE_MAX people besides its author (refused with a
message past it: a thread's audience only grows).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from accounts import keys as account_keys
from accounts.domain import User
from config.pipelines import Deferred, LuaScript, ReadBatch, pipeline_run
from config.redis import get_redis
from timeline import jobs, keys
from timeline.domain import InvalidStatus, Status

CONVERSATIONS_MAX = 1000  # per user; past it the least recent one goes
# Per message, besides its author: past it, refused with a message (a thread's
# audience only grows, so each reply's deliveries, notifications and job ids would).
AUDIENCE_MAX = 100
CONVERSATION_SIDS_KEPT = 50  # per conversation: what a deleted newest falls back on


class DirectRefused(InvalidStatus):
    """A direct message that cannot be posted (the message says why)."""


def audience(
    *, author_id: int, mentioned: list[int], reply_to: Status | None
) -> tuple[int, ...]:
    """Who besides its author sees a direct message: those it mentions and, of a
    reply, the audience (a direct message's) and author of what it answers, so
    that a private reply to a public status reaches that status's author;
    DirectRefused for none, or for more than AUDIENCE_MAX."""
    to = set(mentioned)
    if reply_to is not None:
        to |= {*reply_to.to, reply_to.author_id}
    to.discard(author_id)
    if not to:
        raise DirectRefused(
            "Mention the people it is for: a direct message goes to the @names in it."
        )
    if len(to) > AUDIENCE_MAX:
        raise DirectRefused(
            f"A direct message goes to at most {AUDIENCE_MAX} people; this one "
            f"would reach {len(to)}. Name fewer, or write a new one to some of them."
        )
    return tuple(sorted(to))


# The Lua of a conversation's change, in one user's slot. A conversation's field in
# `conversation_sids` is '<its message ids, ascending>|<the other participants>'.
# `conv_add(conversations, sids, unread, conv, sid, people, owner, is_unread, cap,
# kept)` adds a message (idempotent: one already there changes nothing) and its
# participants (`people`, space-separated, the owner left out), keeps the newest
# `kept` ids, scores the conversation by its newest, marks it unread when asked and
# the message is its newest, and drops the least recent conversations past `cap`;
# `conv_remove(conversations, sids, unread, conv, sid)` takes a message out, and
# the conversation with its last one.
_CONVERSATION_LUA = """
local function conv_read(sids_key, conv)
  local found, people = {}, {}
  local value = redis.call('HGET', sids_key, conv) or '|'
  local ids, uids = string.match(value, '^([^|]*)|(.*)$')
  for s in string.gmatch(ids or '', '%d+') do found[#found + 1] = s end
  for u in string.gmatch(uids or '', '%d+') do people[#people + 1] = u end
  return found, people
end
local function conv_write(sids_key, conv, found, people)
  redis.call('HSET', sids_key, conv,
    table.concat(found, ' ') .. '|' .. table.concat(people, ' '))
end
local function conv_add(conversations, sids_key, unread, conv, sid, people_in, owner,
    is_unread, cap, kept)
  local found, people = conv_read(sids_key, conv)
  for _, s in ipairs(found) do
    if s == sid then return 0 end
  end
  found[#found + 1] = sid
  table.sort(found, function(a, b) return tonumber(a) < tonumber(b) end)
  while #found > kept do table.remove(found, 1) end
  local known = {}
  for _, u in ipairs(people) do known[u] = true end
  for u in string.gmatch(people_in, '%d+') do
    if u ~= owner and not known[u] then
      known[u] = true
      people[#people + 1] = u
    end
  end
  conv_write(sids_key, conv, found, people)
  local newest = found[#found]
  redis.call('ZADD', conversations, newest, conv)
  if is_unread and newest == sid then redis.call('SADD', unread, conv) end
  local n = redis.call('ZCARD', conversations)
  if n > cap then
    local old = redis.call('ZRANGE', conversations, 0, n - cap - 1)
    redis.call('ZREM', conversations, unpack(old))
    redis.call('HDEL', sids_key, unpack(old))
    redis.call('SREM', unread, unpack(old))
  end
  return 1
end
local function conv_remove(conversations, sids_key, unread, conv, sid)
  local found, people = conv_read(sids_key, conv)
  local left = {}
  for _, s in ipairs(found) do
    if s ~= sid then left[#left + 1] = s end
  end
  if #left == #found then return 0 end
  if #left == 0 then
    redis.call('HDEL', sids_key, conv)
    redis.call('ZREM', conversations, conv)
    redis.call('SREM', unread, conv)
  else
    conv_write(sids_key, conv, left, people)
    redis.call('ZADD', conversations, left[#left], conv)
  end
  return 1
end
"""


def conversation_keys(uid: int) -> list[str]:
    """One user's conversation keys, in the order the scripts take them."""
    return [
        keys.conversations(uid),
        keys.conversation_sids(uid),
        keys.conversations_unread(uid),
    ]


def _caps() -> list[int]:
    return [CONVERSATIONS_MAX, CONVERSATION_SIDS_KEPT]


# KEYS: the author's direct messages, their three conversation keys, the job queue
# and data of their slot, their user hash. ARGV: sid, its conversation, the post
# job's id, now (ms), CONVERSATIONS_MAX, CONVERSATION_SIDS_KEPT, the user hash's
# username and deleted fields, its participants, the author, their stream channel
# (KEYS 8: their presence key, `keys.home_streamed`). Publishes a direct message with
# the job that delivers it, in one step (the conversation is read by whoever writes
# in it), and tells the author's open streams; 0 (nothing) for an author being
# deleted.
_PUBLISH = LuaScript(
    jobs.ENQUEUE
    + _CONVERSATION_LUA
    + """
if redis.call('HEXISTS', KEYS[7], ARGV[7]) == 0
    or redis.call('HEXISTS', KEYS[7], ARGV[8]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
conv_add(KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[1], ARGV[9], ARGV[10], false,
  tonumber(ARGV[5]), tonumber(ARGV[6]))
-- Whoever writes in a conversation has read it (Mastodon's).
redis.call('SREM', KEYS[4], ARGV[2])
if redis.call('EXISTS', KEYS[8]) == 1 then
  redis.call('PUBLISH', ARGV[11], 'conversation')
end
enqueue(KEYS[5], KEYS[6], ARGV[3], ARGV[4], ARGV[4])
return 1
"""
)


def publish_queue(pipe, *, status: Status, job: str) -> None:
    """Queue the step that publishes a direct message (its hash is written)."""
    author = status.author_id
    slot = keys.slot_of_user(author)
    now = jobs.now_ms()
    _PUBLISH.queue(
        pipe,
        keys=[
            keys.direct(author),
            *conversation_keys(author),
            *jobs.slot_keys(slot),
            account_keys.user(author),
            keys.home_streamed(author),
        ],
        args=[
            status.id,
            status.conversation_id,
            job,
            now,
            *_caps(),
            User.USERNAME_FIELD,
            User.DELETED_FIELD,
            _people(status),
            author,
            keys.stream_user(author),
        ],
    )


def _people(status: Status) -> str:
    """A direct message's participants: its author and audience."""
    return " ".join(map(str, (status.author_id, *status.to)))


# KEYS: a recipient's three conversation keys, their user hash, blocks, blocked_by
# and presence key (`keys.home_streamed`). ARGV: sid, its conversation, its author,
# CONVERSATIONS_MAX, CONVERSATION_SIDS_KEPT, the user hash's username and deleted
# fields, its participants, the recipient, their stream channel. Adds the message to
# the recipient's conversation, unread, and tells their open streams; nothing for a
# recipient gone or across a block either way (0).
_DELIVER = LuaScript(
    _CONVERSATION_LUA
    + """
if redis.call('HEXISTS', KEYS[4], ARGV[6]) == 0
    or redis.call('HEXISTS', KEYS[4], ARGV[7]) == 1
    or redis.call('ZSCORE', KEYS[5], ARGV[3])
    or redis.call('ZSCORE', KEYS[6], ARGV[3]) then
  return 0
end
local added = conv_add(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[1], ARGV[8], ARGV[9],
  true, tonumber(ARGV[4]), tonumber(ARGV[5]))
if added == 1 and redis.call('EXISTS', KEYS[7]) == 1 then
  redis.call('PUBLISH', ARGV[10], 'conversation')
end
return added
"""
)


def deliver(*, status: Status) -> None:
    """Add a direct message to its recipients' conversations (its post job's:
    idempotent), one script in each recipient's slot, in one round trip."""

    def build(pipe) -> None:
        for uid in status.to:
            _DELIVER.queue(
                pipe,
                keys=[
                    *conversation_keys(uid),
                    account_keys.user(uid),
                    keys.blocks(uid),
                    keys.blocked_by(uid),
                    keys.home_streamed(uid),
                ],
                args=[
                    status.id,
                    status.conversation_id,
                    status.author_id,
                    *_caps(),
                    User.USERNAME_FIELD,
                    User.DELETED_FIELD,
                    _people(status),
                    uid,
                    keys.stream_user(uid),
                ],
            )

    pipeline_run(build)


def undirect_job_id(status: Status) -> str:
    """The job that takes a deleted direct message out of its participants'
    conversations: the hash is gone when it runs, so its id names them all."""
    return jobs.job_id(
        "undirect",
        status.author_id,
        status.id,
        status.conversation_id,
        *status.to,
    )


# KEYS: the author's direct messages, the job queue and data of their slot. ARGV:
# sid, its post job's id, its undirect job's id, its unlink job's id, now (ms).
# Unpublishes a direct message (its hash is gone): out of the author's messages,
# its post job cancelled (one a worker holds cannot renew its lease: the jobs
# wait until it ended), its undirect and unlink jobs queued.
_UNPUBLISH = LuaScript(
    jobs.ENQUEUE
    + jobs.FORGET
    + """
local now = tonumber(ARGV[5])
redis.call('ZREM', KEYS[1], ARGV[1])
local due = now
local pending = redis.call('ZSCORE', KEYS[2], ARGV[2])
if pending then
  due = math.max(now, tonumber(pending))
  redis.call('ZREM', KEYS[2], ARGV[2])
  forget(KEYS[3], ARGV[2])
end
enqueue(KEYS[2], KEYS[3], ARGV[3], due, now)
enqueue(KEYS[2], KEYS[3], ARGV[4], due, now)
return 1
"""
)


def unpublish_queue(pipe, *, status: Status, post_job: str, unlink_job: str) -> None:
    """Queue the author's step of a direct message's deletion (its hash is gone)."""
    slot = keys.slot_of_user(status.author_id)
    _UNPUBLISH.queue(
        pipe,
        keys=[keys.direct(status.author_id), *jobs.slot_keys(slot)],
        args=[status.id, post_job, undirect_job_id(status), unlink_job, jobs.now_ms()],
    )


# KEYS: one participant's three conversation keys. ARGV: sid, its conversation.
_REMOVE = LuaScript(
    _CONVERSATION_LUA
    + """
return conv_remove(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[1])
"""
)


def undirect_job_run(job: jobs.Job) -> None:
    """Run an `undirect` job (`undirect_job_id`): the message leaves each
    participant's conversation, one script in each one's slot (idempotent)."""
    author, sid, conv, *to = job.args

    def build(pipe) -> None:
        for uid in (author, *to):
            _REMOVE.queue(pipe, keys=conversation_keys(uid), args=[sid, conv])

    pipeline_run(build)


def conversations_forget(*, uid: int, gone: list[tuple[int, int]]) -> None:
    """Take these (conversation, message) pairs, of messages deleted, out of user
    `uid`'s conversations (`timelines repair`: what a delete cut short left)."""
    pipeline_run(
        lambda pipe: [
            _REMOVE.queue(pipe, keys=conversation_keys(uid), args=[sid, conv])
            for conv, sid in gone
        ]
    )


def conversation_sids_of(value: str) -> list[int]:
    """The message ids of a `conversation_sids` field."""
    return [int(s) for s in value.partition("|")[0].split()]


# Reads.


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """One of a user's conversations as stored: its id, its messages' ids (newest
    first, as many as kept), the others in it, whether it is unread, and the id
    it is scored by (its newest message's, as written)."""

    id: int
    sids: tuple[int, ...]
    people: tuple[int, ...]
    unread: bool
    newest: int


# KEYS: the viewer's three conversation keys. ARGV: the highest score wanted (a
# ZRANGEBYSCORE bound: '+inf' or '(<id>'), the lowest ('-inf' or '(<id>'), how
# many, 'asc' to read the oldest above the lowest. Returns one JSON string: the
# conversations read, each [id, newest, its sids, unread (0/1)].
_READ = LuaScript(
    """
local rows
if ARGV[4] == 'asc' then
  rows = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[1], 'WITHSCORES',
    'LIMIT', 0, tonumber(ARGV[3]))
else
  rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2], 'WITHSCORES',
    'LIMIT', 0, tonumber(ARGV[3]))
end
local out = {}
for i = 1, #rows, 2 do
  local conv = rows[i]
  out[#out + 1] = {conv, rows[i + 1], redis.call('HGET', KEYS[2], conv) or '',
    redis.call('SISMEMBER', KEYS[3], conv)}
end
if #out == 0 then return '[]' end
return cjson.encode(out)
"""
)


def conversations_queue(
    reads: ReadBatch,
    uid: int,
    *,
    size: int,
    top: str = "+inf",
    low: str = "-inf",
    ascending: bool = False,
) -> Deferred[list[ConversationRow]]:
    """Queue the read of a window of user `uid`'s conversations, newest message
    first (ascending: the oldest above `low` first), `size` of them; trust it once
    the viewer is proven."""

    def parse(replies: list) -> list[ConversationRow]:
        return [
            _row(int(conv), int(newest), value, bool(unread))
            for conv, newest, value, unread in orjson.loads(replies[0])
        ]

    return reads.queue(
        lambda pipe: _READ.queue(
            pipe,
            keys=conversation_keys(uid),
            args=[top, low, size, "asc" if ascending else "desc"],
        ),
        parse,
    )


def conversation_queue(
    reads: ReadBatch, uid: int, conversation: int
) -> Deferred[ConversationRow | None]:
    """Queue the read of one of user `uid`'s conversations (None: not theirs)."""
    ckeys = conversation_keys(uid)

    def build(pipe) -> None:
        pipe.zscore(ckeys[0], conversation)
        pipe.hget(ckeys[1], conversation)
        pipe.sismember(ckeys[2], conversation)

    def parse(replies: list) -> ConversationRow | None:
        newest, value, unread = replies
        if newest is None or value is None:
            return None
        return _row(conversation, int(newest), value, bool(unread))

    return reads.queue(build, parse)


def _row(conv: int, newest: int, value: str, unread: bool) -> ConversationRow:
    sids, _, people = value.partition("|")
    return ConversationRow(
        id=conv,
        sids=tuple(sorted((int(s) for s in sids.split()), reverse=True)),
        people=tuple(int(u) for u in people.split()),
        unread=unread,
        newest=newest,
    )


def unread_count_queue(reads: ReadBatch, uid: int) -> Deferred[int]:
    """Queue the count of user `uid`'s unread conversations (the navigation's)."""
    return reads.queue(
        lambda pipe: pipe.scard(keys.conversations_unread(uid)),
        lambda replies: int(replies[0]),
    )


# Writes of one's own conversations.


# KEYS: a user's conversations and unread ones. ARGV: conversation, newest message
# id pairs, as a page showed them. Marks each read unless a newer message came
# since the page was shown (it stays unread for that one).
_READ_MARK = LuaScript(
    """
for i = 1, #ARGV, 2 do
  local newest = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if not newest or tonumber(newest) <= tonumber(ARGV[i + 1]) then
    redis.call('SREM', KEYS[2], ARGV[i])
  end
end
return 1
"""
)


def conversations_read(*, uid: int, seen: list[tuple[int, int]]) -> None:
    """Mark user `uid`'s conversations read as a page showed them: each
    (conversation, the newest message id shown), left unread if a newer came."""
    if seen:
        _READ_MARK(
            keys=[keys.conversations(uid), keys.conversations_unread(uid)],
            args=[v for pair in seen for v in pair],
        )


def conversation_read(*, uid: int, conversation: int) -> None:
    """Mark one of user `uid`'s conversations read (the client API's)."""
    get_redis().srem(keys.conversations_unread(uid), conversation)


# KEYS: a user's three conversation keys. ARGV: a conversation. Removes it from
# their list (its messages stay; a new one in it brings it back). 1 if it was there.
_FORGET = LuaScript(
    """
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
"""
)


def conversation_remove(*, uid: int, conversation: int) -> bool:
    """Take a conversation off user `uid`'s list (Mastodon's DELETE
    conversation); False if it was not on it."""
    return bool(_FORGET(keys=conversation_keys(uid), args=[conversation]))
