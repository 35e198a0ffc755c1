"""Reads of statuses, timelines and the follow graph, queued in the request's reads.

Every page costs two round trips whatever its length: the first carries the auth
check (queued by the middleware) with the page's own reads, the second the statuses'
hashes (or the users' names) that the first named. Selectors return their own data;
the viewer is `request.user`, resolved from the same first round trip.

A repost's row carries its original's text: every page shows it only while the
original's own page would show the original to the viewer (it exists; its author
is public, or the viewer, or has approved them), checked in the round trips the
page takes anyway (`_refused_queue`), not only once the jobs that remove such
reposts have run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import orjson
from django.conf import settings

from accounts import keys as account_keys
from accounts.domain import Card, User, UserRef
from accounts.selectors import (
    PageReads,
    user_confirm_queue,
    user_id_guess,
    users_queue,
)
from config.pipelines import Deferred, LuaScript, ReadBatch, hashes_queue, pipeline_run
from config.redis import get_redis, is_cluster, slot_groups
from timeline import bookmarks, direct, keys, lists, richtext, tagfollows
from timeline.domain import (
    MAX_STATUS_ID,
    AccountStats,
    BlockedAndMuted,
    Context,
    Conversation,
    Conversations,
    FollowRequest,
    FollowRequests,
    Home,
    InCommon,
    Marker,
    Notification,
    NotificationItem,
    Notifications,
    NotificationsWindow,
    Page,
    PeoplePage,
    PeopleRows,
    Profile,
    Reactors,
    Relationship,
    Status,
    Suggested,
    Thread,
)
from timeline.notifications import ACTORS_KEPT, STATUS_KINDS
from timeline.services import THREAD_DEPTH, home_rebuild_job_id, outbox_cap

IN_COMMON_SHOWN = 3

# KEYS: (status hash, likes, reposts) of any number of statuses (each triple in
# its status's slot). ARGV: the viewer's uid ('' for none), how many status fields,
# the field names (`Status.FIELDS`), the positions of the author's id, of a
# repost's original author's id and of its original's id among them, then (one
# server only) the two halves of a user key, a status key and a followers key
# around an id, the user hash's privacy field and the card fields
# (`User.CARD_FIELDS`). Returns the statuses' rows (each with, for a viewer,
# whether they liked and reposted it: `timeline.social`), then uid, card pairs of
# their authors, then (one server only) whether the viewer may see each row
# (`original_seen`: a repost's original checked where the read reaches it), as
# one JSON string (a missing field is null). One command for a page's statuses on
# one server: redis-py's cost per pipelined command was about a fifth of a page's
# time, and one JSON string, parsed by orjson, costs a fraction of the hundreds of
# strings of a nested reply (docs/BENCHMARKS.md).
#
# The authors' cards (display name, avatar) are read here because the authors are
# known only from the statuses, and the page's budget is two round trips. The user
# keys are built in Lua, not declared in KEYS: standalone Redis permits a script to
# read a key it did not declare (this is the one script of the site that does, and
# it only reads). A Cluster does not: a script touches its declared slot only, so
# there it is one call per slot (`slot_groups`) without cards nor checks, and the
# cards cost one more round trip (`_cards_queue`): the Cluster's price for fresh
# names; reposts' originals are checked in it (`_refused_queue`).
# What every script that answers one JSON string starts with: `nulls(row, size)`
# fills a reply's missing fields with JSON's null (Lua's nil would end the array),
# `listed(t)` writes an empty list as `[null]` (cjson writes an empty table as {}).
_JSON_LUA = """
local null = cjson.null
local function nulls(row, size)
  for j = 1, size do
    if not row[j] then row[j] = null end
  end
  return row
end
local function listed(t)
  if #t == 0 then return {null} end
  return t
end
-- The viewer's like and repost of a status, and their choices in its poll:
-- `counts_at(fields)` finds where the likes and reposts counts, the poll and its
-- tally sit in a row of those fields, and `viewer_state(row, n, viewer, at, hash,
-- likes, reposts)` puts, after the row's `n` fields (`nulls` applied), the viewer's
-- score in the status's likes and reposts zsets, or null, then their vote (the
-- `v:<uid>` field of the status's hash, `timeline.polls`), or null. A count and
-- its zset (or a tally and its votes) change in one script (`timeline.social`),
-- so a zero or an absent count (a status nobody liked, a poll nobody voted in, or
-- a status older than likes) is an empty zset: its ZSCORE is not asked.
local function counts_at(fields)
  local at = {}
  for j, name in ipairs(fields) do
    if name == 'likes' then at[1] = j elseif name == 'reposts' then at[2] = j
    elseif name == 'tally' then at[3] = j elseif name == 'poll' then at[4] = j end
  end
  return at
end
local function counted(value)
  return value ~= null and value ~= '0'
end
local function viewer_state(row, n, viewer, at, hash, likes, reposts)
  if viewer == '' then return end
  row[n + 1] = counted(row[at[1]]) and redis.call('ZSCORE', likes, viewer) or null
  row[n + 2] = counted(row[at[2]]) and redis.call('ZSCORE', reposts, viewer) or null
  row[n + 3] = at[3] and row[at[4]] ~= null and counted(row[at[3]])
    and redis.call('HGET', hash, 'v:' .. viewer) or null
end
-- Whether the viewer may see a repost's row, which carries its original's text:
-- `original_seen(exists, user, followers, private, viewer, author)` answers 1 when
-- not (the original is gone, `exists` false, or its author, `user`'s hash, is
-- private and the viewer is neither them nor in their `followers`), 2 when only as
-- the viewer claimed (the author, or an approved follower: trusted once the viewer
-- is proven), 0 when anyone may (`_refusals`).
local function original_seen(exists, user, followers, private, viewer, author)
  if not exists then return 1 end
  if redis.call('HEXISTS', user, private) == 0 then return 0 end
  if viewer == '' then return 1 end
  if viewer == author or redis.call('ZSCORE', followers, viewer) then return 2 end
  return 1
end
-- Whether the viewer may see the status a row quotes (`timeline.quotes`), whose
-- copy the row carries in its `quote` field (`Quote.to_field`: it starts with the
-- quoted id and its author's): `quote_seen(value, viewer, sp, ss, up, us, fp, fs,
-- private, bp, bs, cp, cs, mp, ms)` answers as `original_seen` (0 for no quote),
-- but 3 when the quoted status is gone, 1 too when its author blocked the viewer,
-- and, when the viewer may see it otherwise, 4 when the viewer blocked its author
-- and 5 when they muted them (Mastodon's `blocked_account`, `muted_account`: the
-- halves of a status, user, followers, blocks, blocked_by and mutes key around an
-- id). A row's check is `original_seen`'s answer plus 3 times this one
-- (`_refusals`, `_quote_states`).
local function quote_seen(value, viewer, sp, ss, up, us, fp, fs, private, bp, bs,
    cp, cs, mp, ms)
  if not value or value == null then return 0 end
  local sid, author = string.match(value, '^{"i":(%d+),"u":(%d+),')
  if not sid then return 3 end
  if redis.call('EXISTS', sp .. sid .. ss) == 0 then return 3 end
  local other = viewer ~= '' and viewer ~= author
  if other and redis.call('ZSCORE', cp .. viewer .. cs, author) then return 1 end
  local seen = original_seen(true, up .. author .. us, fp .. author .. fs, private,
    viewer, author)
  if seen == 1 or not other then return seen end
  if redis.call('ZSCORE', bp .. viewer .. bs, author) then return 4 end
  if redis.call('ZSCORE', mp .. viewer .. ms, author) then return 5 end
  return seen
end
local function quote_at(fields)
  for j, name in ipairs(fields) do
    if name == 'quote' then return j end
  end
end
"""

# The rows of `_STATUSES_READ` and `_WINDOW_READ`: `read_rows(keys, a)` reads the
# statuses whose (hash, likes, reposts) keys `keys` lists, with the statuses-read
# arguments starting at ARGV[a].
_ROWS_LUA = (
    _JSON_LUA
    + """
local function read_rows(keys, a)
  local viewer, n = ARGV[a], tonumber(ARGV[a + 1])
  local fields = {unpack(ARGV, a + 2, a + n + 1)}
  local authors_at = {tonumber(ARGV[a + n + 2]), tonumber(ARGV[a + n + 3])}
  local original_at = tonumber(ARGV[a + n + 4])
  local prefix, suffix = ARGV[a + n + 5], ARGV[a + n + 6]
  local sp, ss, fp, fs, private, bp, bs, cp, cs, mp, ms =
    unpack(ARGV, a + n + 7, a + n + 17)
  local card_fields = {unpack(ARGV, a + n + 18)}
  local at, q_at = counts_at(fields), quote_at(fields)
  local rows, cards, seen, checks = {}, {}, {}, {}
  for i = 1, #keys, 3 do
    local row = nulls(redis.call('HMGET', keys[i], unpack(fields)), n)
    local original, author = row[original_at], row[authors_at[2]]
    if author == null then author = '0' end
    if prefix then
      checks[#checks + 1] = (original == null and 0 or original_seen(
        redis.call('EXISTS', sp .. original .. ss) == 1,
        prefix .. author .. suffix, fp .. author .. fs, private, viewer, author))
        + 3 * quote_seen(row[q_at], viewer, sp, ss, prefix, suffix, fp, fs, private,
          bp, bs, cp, cs, mp, ms)
    end
    for _, at in ipairs(authors_at) do
      local author = row[at]
      if prefix and author ~= null and not seen[author] then
        seen[author] = true
        cards[#cards + 1] = author
        cards[#cards + 1] = nulls(
          redis.call('HMGET', prefix .. author .. suffix, unpack(card_fields)),
          #card_fields)
      end
    end
    -- A quote's author's card, for the name its embed shows (`timeline.quotes`).
    local quoted = prefix and row[q_at] ~= null
      and string.match(row[q_at], '^{"i":%d+,"u":(%d+),')
    if quoted and not seen[quoted] then
      seen[quoted] = true
      cards[#cards + 1] = quoted
      cards[#cards + 1] = nulls(
        redis.call('HMGET', prefix .. quoted .. suffix, unpack(card_fields)),
        #card_fields)
    end
    viewer_state(row, n, viewer, at, keys[i], keys[i + 1], keys[i + 2])
    rows[#rows + 1] = row
  end
  return listed(rows), listed(cards), listed(checks)
end
"""
)

_STATUSES_READ = LuaScript(
    _ROWS_LUA
    + """
local rows, cards, checks = read_rows(KEYS, 1)
return cjson.encode({rows, cards, checks})
"""
)

# KEYS: a timeline's zsets (one, or the global timeline's partitions; one server
# only: the statuses' keys are built in Lua, as `_STATUSES_READ` builds its user
# keys), or a home and its owner's followed tags (`timeline.tagfollows`). ARGV: the
# window's top and low scores, how many ids, how many of their statuses; the halves
# of a status's hash, likes and reposts keys around its id; a home's repost falloff
# (`_AGAIN_LUA`; '' for any other timeline); the halves of a tag's timeline key
# around its tag ('' '' but for a home with its followed tags: then the timelines
# of the tags KEYS[2] names are merged with the home, read undeclared as the
# statuses are); then `_STATUSES_READ`'s arguments. Returns, as one JSON string,
# the newest ids (merged as `_global_merged` merges a downward read of partitions:
# nothing below the highest trim marker; an id in several zsets once), the rows,
# cards and checks of the first ones, and (a
# home's) the reposts among them that the home shows as their originals: a page's
# window and its statuses in the request's first round trip, read for the claimed
# viewer, used once the auth check in the same round trip proved them.
# The window's part runs first and leaves the ids in `ids` and the (hash, likes,
# reposts) keys of the statuses to read in `keys` (`_WINDOW_RELATED_READ` reads
# them as the client API does).
_WINDOW_IDS_LUA = """
local top, low = ARGV[1], ARGV[2]
local count, wanted = tonumber(ARGV[3]), tonumber(ARGV[4])
local zsets = KEYS
if ARGV[12] ~= '' then
  zsets = {KEYS[1]}
  for _, tag in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    zsets[#zsets + 1] = ARGV[12] .. tag .. ARGV[13]
  end
end
local ids
if #zsets == 1 then
  ids = redis.call('ZREVRANGEBYSCORE', zsets[1], top, low, 'LIMIT', 0, count)
else
  -- Each partition's newest, merged newest first (ids are below 2^53: exact as
  -- Lua numbers), nothing below the highest marker. A partition is read a few at
  -- a time, more only when the merge reaches the end of what was read: the newest
  -- `count` of 8 partitions are about `count` / 8 of each, not `count` of each.
  local lists, numbers, at, offset, more, floor = {}, {}, {}, {}, {}, 0
  local chunk = math.ceil(count / #zsets) + 2
  local function fill(k)
    local got = redis.call(
      'ZREVRANGEBYSCORE', zsets[k], top, low, 'LIMIT', offset[k], chunk)
    offset[k], more[k] = offset[k] + #got, #got == chunk
    local list, nums = lists[k], numbers[k]
    for _, sid in ipairs(got) do
      if sid ~= '0' then
        list[#list + 1] = sid
        nums[#nums + 1] = tonumber(sid)
      end
    end
  end
  for k, key in ipairs(zsets) do
    lists[k], numbers[k], at[k], offset[k] = {}, {}, 1, 0
    fill(k)
    -- Only the global timeline's partitions mark where a trim ends (a home and
    -- the tags' timelines merged with it have no marker: not asked).
    if ARGV[12] == '' then
      local marker = redis.call('ZSCORE', key, 0)
      if marker then floor = math.max(floor, tonumber(marker) + 1) end
    end
  end
  ids = {}
  local last
  while #ids < count do
    local best, from = nil, nil
    for k = 1, #lists do
      while numbers[k][at[k]] == nil and more[k] do fill(k) end
      local n = numbers[k][at[k]]
      if n and (best == nil or n > best) then best, from = n, k end
    end
    if best == nil or best < floor then break end
    -- A status in two of them (a home's and a followed tag's) once.
    if best ~= last then ids[#ids + 1] = lists[from][at[from]] end
    last = best
    at[from] = at[from] + 1
  end
end
local sp, ss, lp, ls, rp, rs = unpack(ARGV, 5, 10)
local keys = {}
for i = 1, math.min(#ids, wanted) do
  local sid = ids[i]
  keys[#keys + 1] = sp .. sid .. ss
  keys[#keys + 1] = lp .. sid .. ls
  keys[#keys + 1] = rp .. sid .. rs
end
-- A home's (ARGV[11], its falloff, else ''): `again(rows, a)`, once the rows are
-- read (with the row arguments at ARGV[a]), lists the reposts among them whose
-- original the home (or a followed tag's timeline merged with it) holds at most
-- that many entries below (`_AGAIN_LUA`).
local function again(rows, a)
  local falloff = tonumber(ARGV[11])
  if not falloff then return {null} end
  local original_at = tonumber(ARGV[a + tonumber(ARGV[a + 1]) + 4])
  local tags = {unpack(zsets, 2)}
  local out = {}
  for i, row in ipairs(rows) do
    if type(row) == 'table' and row[original_at] ~= null
        and seen_below(KEYS[1], tags, ids[i], row[original_at], falloff) then
      out[#out + 1] = ids[i]
    end
  end
  return listed(out)
end
"""

# A repost shown where its original came before: `seen_below(home, tags, sid,
# original, falloff)` answers whether the home holds the original at most
# `falloff` entries below the repost `sid` (Mastodon's REBLOG_FALLOFF): then the
# home shows the original there and leaves the repost out, so a status reposted by
# people the reader follows shows once, on whichever page the original falls, and
# one older than the falloff shows again, at the top. An original the home lacks
# but one of `tags` (the timelines of its owner's followed tags, merged with it)
# holds counts as held, its distance the entries between the two in the home and
# each of those timelines (one status in several counted in each: a bound). So
# does one that the outbox of a pulled author the home merges keeps (`pulled`,
# nil: none; `pulled.outbox[author]`, the outbox of the original's `author` if
# pulled), its distance counted in every pulled author's posts too
# (`pulled.posts`, with their outboxes `pulled.boxes`), the entries the merge
# shows only (`shown_between`), if the merge shows it: a reply to someone other
# than its author and the reader (`pulled.viewer`) only while the reader follows
# them (`pulled.following`; the reply rule, `Status.reply_follow_decides`), so the
# repost of one the home leaves out shows and one the home shows is left out. A
# damaged entry is not held. The window's script knows no pulled author (nil); nor
# does a Cluster's `_AGAIN`, whose caller asks the outbox apart, each pulled
# author's entries with `_SHOWN_BETWEEN`, and applies the rule (`_again_queue`).
# `reply_to(entry, uid_at, reply_at, viewer)`: '' when the merge shows an outbox
# entry whatever the reader follows, the user whose follow decides (the rule), or
# nil for a damaged entry (the merge shows nothing).
# `shown_between(posts, outbox, low, high, budget, to)`: how many of a pulled
# author's statuses between the two the merge shows, reading at most `budget` of
# their outbox entries (the oldest; the rest counted as shown, as is one the outbox
# no longer keeps: a bound), each entry's deciding user given to `to(user)`, which
# answers whether it counts; and how many entries it read.
REPOST_FALLOFF_SCAN = 2  # a repost's check reads this many times the falloff at most
_AGAIN_LUA = """
local function reply_to(entry, uid_at, reply_at, viewer)
  local ok, fields = pcall(cjson.decode, entry)
  local author = ok and type(fields) == 'table' and fields[uid_at]
  if type(author) ~= 'string' then return nil end
  local to = fields[reply_at]
  if type(to) ~= 'string' or to == '' or to == '0' or to == author
      or to == viewer then
    return ''
  end
  return to
end

local function follows(pulled, to)
  return to == '' or redis.call('ZSCORE', pulled.following, to) ~= false
end

local function merge_shows(entry, pulled)
  local to = reply_to(entry, pulled.uid_at, pulled.reply_at, pulled.viewer)
  return to ~= nil and follows(pulled, to)
end

local function shown_between(posts, outbox, low, high, budget, to)
  local total = redis.call('ZCOUNT', posts, low, high)
  if total == 0 or budget < 1 then return total, 0 end
  local ids = redis.call('ZRANGEBYSCORE', posts, low, high, 'LIMIT', 0, budget)
  local entries = redis.call('HMGET', outbox, unpack(ids))
  local n = total - #ids
  for i = 1, #ids do
    if not entries[i] or to(entries[i]) then n = n + 1 end
  end
  return n, #ids
end

local function seen_below(home, tags, sid, original, falloff, author, pulled)
  local low, high = '(' .. original, '(' .. sid
  if redis.call('ZSCORE', home, original) then
    return redis.call('ZCOUNT', home, low, high) < falloff
  end
  local held = false
  for _, tag in ipairs(tags) do
    if redis.call('ZSCORE', tag, original) then held = true break end
  end
  local posts = {}
  if not held and pulled and pulled.outbox[author] then
    local entry = redis.call('HGET', pulled.outbox[author], original)
    held, posts = entry and merge_shows(entry, pulled), pulled.posts
  end
  if not held then return false end
  local n = redis.call('ZCOUNT', home, low, high)
  for _, key in ipairs(tags) do
    if n >= falloff then return false end
    n = n + redis.call('ZCOUNT', key, low, high)
  end
  local budget = SCAN * falloff
  local function shows(entry) return merge_shows(entry, pulled) end
  for i, key in ipairs(posts) do
    if n >= falloff then return false end
    local shown, read = shown_between(key, pulled.boxes[i], low, high, budget, shows)
    n, budget = n + shown, budget - read
  end
  return n < falloff
end
""".replace("SCAN", str(REPOST_FALLOFF_SCAN))

_WINDOW_READ = LuaScript(
    _ROWS_LUA
    + _AGAIN_LUA
    + _WINDOW_IDS_LUA
    + """
local rows, cards, checks = read_rows(keys, 14)
return cjson.encode({listed(ids), rows, cards, checks, again(rows, 14)})
"""
)

# KEYS: the owner's followers zset and follower-names hash. ARGV: how many names to
# return, how many candidates to check, then either the viewer's following zset (one
# server only: a key the script reads undeclared, as `_STATUSES_READ` does; its
# newest are the candidates) or '' and the candidate uids (the viewer's newest
# followees, one past the scan read already). Returns the number of candidates who
# follow the owner, how many candidates there were (one past the scan: more), then
# uid, name pairs of the first few of them.
_IN_COMMON = LuaScript(
    """
local shown, scan, from = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local candidates
if from ~= '' then
  candidates = redis.call('ZREVRANGE', from, 0, scan)
else
  candidates = {unpack(ARGV, 4)}
end
local n, out = 0, {0, #candidates}
if #candidates > scan then table.remove(candidates) end
if #candidates == 0 then return out end
local scores = redis.call('ZMSCORE', KEYS[1], unpack(candidates))
for i, score in ipairs(scores) do
  if score then
    n = n + 1
    if n <= shown then
      local uid = candidates[i]
      out[#out + 1] = uid
      out[#out + 1] = redis.call('HGET', KEYS[2], uid)
    end
  end
end
out[1] = n
return out
"""
)


# KEYS: an author's posts, outbox and fan-out mode. ARGV: the newest id wanted
# (or +inf), how many, the lowest id wanted (or -inf), and 'asc' to read the oldest
# above it rather than the newest below the top, how many batches to skip at most,
# and how many statuses an outbox keeps. Returns 0 when the author is pushed (a
# stale merge entry: read nothing); else 1, the id below which the outbox keeps
# nothing the posts hold (0: none) as this read met it, the newest status the
# outbox no longer keeps whatever the read (0: none), then sid, JSON pairs of the
# statuses read from the outbox (the outbox keeps the newest: read upwards, what it
# lacks comes first and is skipped, a batch at a time, at most ARGV[5] batches).
_OUTBOX_READ = LuaScript(
    """
if redis.call('EXISTS', KEYS[3]) == 0 then return {0} end
local cap = tonumber(ARGV[6])
local lacked = redis.call('ZREVRANGE', KEYS[1], cap, cap)[1] or 0
local n, out = tonumber(ARGV[2]), {1, 0, lacked}
if ARGV[4] ~= 'asc' then
  local ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[3],
                         'LIMIT', 0, n)
  for _, sid in ipairs(ids) do
    local row = redis.call('HGET', KEYS[2], sid)
    if not row then out[2] = sid break end
    out[#out + 1] = sid
    out[#out + 1] = row
  end
  return out
end
-- Upwards: what the outbox no longer keeps comes first; skip it, a batch at a
-- time (a bounded number), to the first it keeps.
local low = ARGV[3]
for _ = 1, tonumber(ARGV[5]) do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], low, ARGV[1], 'LIMIT', 0, n)
  for _, sid in ipairs(ids) do
    local row = redis.call('HGET', KEYS[2], sid)
    if not row then
      out[2] = sid
    else
      out[#out + 1] = sid
      out[#out + 1] = row
    end
  end
  if #out > 3 or #ids < n then break end
  low = '(' .. ids[#ids]
end
return out
"""
)


OUTBOX_SKIP_BATCHES = 64  # read upwards, at most this many batches lacked


def _pulled_queue(
    reads: ReadBatch,
    authors: list[int],
    max_id: int | None,
    size: int,
    low: str = "-inf",
    ascending: bool = False,
) -> Deferred[tuple[int, list[Status], int]]:
    """Queue reads of the newest statuses of pulled authors from their outboxes:
    one script call per author, in the same round trip. The value: the floor this
    read met (statuses below it may be missing: an outbox keeps only its newest),
    the statuses, and the floor of all their outboxes whatever the read (one past
    the newest status one of them no longer keeps; 0: they keep all)."""
    top = max_id if max_id is not None else "+inf"
    cap = outbox_cap()

    def build(pipe) -> None:
        for author in authors:
            _OUTBOX_READ.queue(
                pipe,
                keys=[
                    keys.posts(author),
                    keys.outbox(author),
                    keys.fanout_mode(author),
                ],
                args=[
                    top,
                    size + 1,
                    low,
                    "asc" if ascending else "desc",
                    OUTBOX_SKIP_BATCHES,
                    cap,
                ],
            )

    def parse(replies: list) -> tuple[int, list[Status], int]:
        floor = kept_from = 0
        statuses: list[Status] = []
        for reply in replies:
            if not reply[0]:
                continue
            floor = max(floor, int(reply[1]) + 1 if int(reply[1]) else 0)
            kept_from = max(kept_from, int(reply[2]) + 1 if int(reply[2]) else 0)
            for sid, row in zip(reply[3::2], reply[4::2], strict=True):
                # A damaged entry is left out rather than failing the page.
                status = _outbox_status(int(sid), row)
                if status is not None:
                    statuses.append(status)
        return floor, statuses, kept_from

    return reads.queue(build, parse)


def _outbox_status(sid: int, row: str) -> Status | None:
    """A pulled author's status from its outbox entry; None if it is damaged (not
    the JSON list `Status.to_json` writes), as a damaged field fails no page."""
    try:
        return Status.from_json(sid, row)
    except (ValueError, TypeError, AttributeError):
        return None


def _merged(
    ids: list[int],
    found: list[Status | None],
    pulled: tuple[int, list[Status]],
    size: int | None = None,
    ascending: bool = False,
    left_out: Iterable[int] = (),
) -> tuple[list[int], list[Status | None]]:
    """Merge a home page's ids (one past the size) with pulled authors' statuses.

    Each source gave its newest statuses up to the cursor, one past the page size,
    so the newest of their union are exact; a status in both (pushed before its
    author was pulled) shows once; nothing below an outbox's floor is shown, so a
    page never skips a pulled status that an outbox no longer keeps. Read upwards
    (`ascending`, above a `min_id`), the oldest of the union are the exact ones.
    `left_out`: pulled statuses read but not shown (the reply rule,
    `_pulled_checked`), None in the merge: they take their place in the union, so
    one past the page still says there is more and the next page starts below them.
    """
    floor, statuses = pulled
    left_out = list(left_out)
    if not statuses and not floor and not left_out:
        return ids, found
    by_id: dict[int, Status | None] = dict(zip(ids, found, strict=True))
    for sid in left_out:
        by_id.setdefault(sid, None)  # one the home holds was let in by the fan-out
    for status in statuses:
        by_id[status.id] = status
    size = settings.TIMELINE_PAGE_SIZE if size is None else size
    merged = sorted((sid for sid in by_id if sid >= floor), reverse=not ascending)
    merged = merged[: size + 1]
    if ascending:
        merged.reverse()
    return merged, [by_id[sid] for sid in merged]


def _ids_queue(
    reads: ReadBatch,
    key: str,
    max_id: int | None,
    size: int,
    low: str = "-inf",
    ascending: bool = False,
) -> Deferred[list[int]]:
    """Queue a read of a timeline's ids from `max_id` down to `low`, one past the
    page size, newest first; `ascending`: the oldest ones above `low`."""
    top = max_id if max_id is not None else "+inf"

    def build(pipe) -> None:
        if ascending:
            pipe.zrangebyscore(key, low, top, start=0, num=size + 1)
        else:
            pipe.zrevrangebyscore(key, top, low, start=0, num=size + 1)

    def parse(replies: list) -> list[int]:
        found = [int(sid) for sid in replies[0]]
        return found[::-1] if ascending else found

    return reads.queue(build, parse)


@dataclass(frozen=True, slots=True)
class _Found:
    """Statuses read by id (None for each one gone), and their authors' cards:
    None when the read could not carry them (a Cluster: `_with_cards`)."""

    statuses: list[Status | None]
    cards: dict[int, Card] | None
    # With `related` (the client API, one server): the authors with their counts,
    # and reposts' originals with theirs and the viewer's state.
    accounts: dict[int, AccountStats] | None = None
    originals: dict[int, Status] | None = None
    # The reposts among `statuses` whose originals the read could not check (a
    # Cluster's: `_refused_queue` checks them in a later round trip).
    unchecked: tuple[Status, ...] = ()
    # With `related`: the users the statuses' and originals' texts mention but
    # their authors, each uid -> its username (None: the account is gone), for
    # their Mentions (`api.entities.related_get`).
    named: dict[int, str | None] | None = None


def _for_viewer(
    statuses: list[Status | None], viewer: int | None
) -> list[Status | None]:
    """The statuses, None in place of each direct message the (proven) viewer is
    not party to (`timeline.direct`): every read of statuses by id goes through
    here, so no page, thread or API answer shows one to anyone else."""
    return [s if s is None or s.visible_to(viewer) else None for s in statuses]


def _refusals(sids: list[int], checks: list, trusted: bool) -> set[int]:
    """Which of the statuses `sids` the viewer may not see, from `original_seen`'s
    answers for them (`_JSON_LUA`: `[None]` when the read could not check them);
    `trusted`: whether the viewer the read was made for is proven."""
    if checks == [None]:
        return set()
    return {
        sid
        for sid, seen in zip(sids, checks, strict=True)
        if seen % 3 == 1 or (seen % 3 == 2 and not trusted)
    }


def _quote_states(
    sids: list[int], checks: list, trusted: bool
) -> dict[int, str] | None:
    """The states of the statuses' quotes that are not "accepted"
    (`Status.quote_state`: "deleted", "unauthorized", "blocked_account",
    "muted_account") from `quote_seen`'s answers (a row's check over 3); None when
    the read could not check them (a Cluster's: `_refused_queue` does). What holds
    only for the viewer claimed is "unauthorized" until they are proven."""
    if checks == [None]:
        return None
    states = {}
    for sid, seen in zip(sids, checks, strict=True):
        state = _QUOTE_SEEN[seen // 3]
        if state is not None and not (state == "accepted" and trusted):
            states[sid] = state if trusted or state == "deleted" else "unauthorized"
    return states


# `quote_seen`'s answers: the state each says (an "accepted" one counts only once
# the viewer is proven), None for no quote or one anyone may see.
_QUOTE_SEEN = (None, "unauthorized", "accepted", "deleted", "blocked_account",
               "muted_account")  # fmt: skip


def _quote_checked(status: Status, states: dict[int, str]) -> Status:
    """A status that quotes another with its quote's state (`Status.quote_state`):
    revoked, else as `states` says, else "accepted"."""
    assert status.quote is not None
    if status.quote.revoked:
        return replace(status, quote_state="revoked")
    return replace(status, quote_state=states.get(status.id, "accepted"))


def _quotes_checked(
    statuses: list[Status | None], states: dict[int, str] | None
) -> list[Status | None]:
    """The statuses, those quoting another with their quotes' states from a read
    that checked them (`_quote_states`; None: not checked, left unsaid). A plain
    loop: a page without quotes pays one pass over its rows."""
    if states is None:
        return statuses
    for i, status in enumerate(statuses):
        if status is not None and status.quote is not None:
            statuses[i] = _quote_checked(status, states)
    return statuses


def _rows_args(reads: ReadBatch, cluster: bool) -> tuple[int | None, list]:
    """The claimed viewer (whose like and repost state is read, and trusted once
    proven: the auth check is parsed first, queued first in this round trip or an
    earlier one) and `_STATUSES_READ`'s arguments."""
    viewer = reads.claimed_uid if isinstance(reads, PageReads) else None
    args = [
        "" if viewer is None else viewer,
        len(Status.FIELDS),
        *Status.FIELDS,
        Status.FIELDS.index("uid") + 1,
        Status.FIELDS.index("repost_uid") + 1,  # a repost's row shows its author
        Status.FIELDS.index("repost_of") + 1,
    ]
    if not cluster:
        args += [
            *account_keys.user_prefix(),
            *keys.around_id(keys.status),
            *keys.around_id(keys.followers),
            User.PRIVATE_FIELD,
            *keys.around_id(keys.blocks),
            *keys.around_id(keys.blocked_by),
            *keys.around_id(keys.mutes),
            *User.CARD_FIELDS,
        ]
    return viewer, args


def _found_from(
    reads: ReadBatch,
    viewer: int | None,
    sids: list[int],
    replies: list[tuple[list[int], list, list]],
    cluster: bool,
) -> _Found:
    """The statuses `sids` (None for each one gone, or a repost the viewer may not
    see: `_refusals`) from the rows, cards and checks of script replies, each (its
    sids, its rows, its cards, its checks) as `_ROWS_LUA` returns them."""
    n = len(Status.FIELDS)
    trusted = viewer is not None and reads.proven_uid() == viewer
    rows: dict[int, list] = {}
    cards: dict[int, Card] = {}
    refused: set[int] = set()
    quote_states: dict[int, str] | None = None if cluster else {}
    for group, group_rows, group_cards, checks in replies:
        if group:
            rows.update(zip(group, group_rows, strict=True))
            refused |= _refusals(group, checks, trusted)
            if quote_states is not None:
                quote_states |= _quote_states(group, checks, trusted) or {}
        if group_cards == [None]:
            continue
        for uid, values in zip(group_cards[::2], group_cards[1::2], strict=True):
            card = Card.from_read(int(uid), values)
            if card is not None:
                cards[card.id] = card
    statuses = _for_viewer(
        _quotes_checked(
            [
                None
                if sid in refused
                else Status.from_read(
                    sid, rows[sid][:n], viewer=rows[sid][n:] if trusted else None
                )
                for sid in sids
            ],
            quote_states,
        ),
        viewer if trusted else None,
    )
    return _Found(
        statuses=statuses,
        cards=None if cluster else cards,
        unchecked=tuple(
            s for s in statuses if s is not None and (s.repost_of or s.quote)
        )
        if cluster
        else (),
    )


def _statuses_queue(
    reads: ReadBatch, sids: list[int], related: bool = False
) -> Deferred[_Found]:
    """Queue a read of these statuses, their counts and, for a proven viewer,
    whether they liked and reposted each (None in place of each one that is gone),
    and, on one server, their authors' cards (`related`: their authors' accounts
    and reposts' originals instead, `_statuses_related_queue`)."""
    cluster = is_cluster()
    if related and not cluster:
        return _statuses_related_queue(reads, sids)
    groups = slot_groups(sids, keys.status, max(len(sids), 1))
    viewer, args = _rows_args(reads, cluster)

    def build(pipe) -> None:
        for group in groups:
            _STATUSES_READ.queue(
                pipe,
                keys=[
                    k
                    for sid in group
                    for k in (keys.status(sid), keys.likes(sid), keys.reposts(sid))
                ],
                args=args,
            )

    def parse(replies: list) -> _Found:
        return _found_from(
            reads,
            viewer,
            sids,
            [
                (group, *orjson.loads(reply))
                for group, reply in zip(groups, replies, strict=True)
            ],
            cluster,
        )

    return reads.queue(build, parse)


@dataclass(frozen=True, slots=True)
class _Window:
    """A timeline's newest ids, and the statuses of the first ones
    (`_WINDOW_READ`)."""

    ids: list[int]
    found: _Found
    # A home's: the reposts among the statuses that it shows as their originals.
    again: frozenset[int] = frozenset()


def _window_queue(
    reads: ReadBatch,
    zsets: list[str],
    max_id: int | None,
    *,
    count: int,
    wanted: int,
    low: str = "-inf",
    related: bool = False,
    home: bool = False,
    tags: str | None = None,
) -> Deferred[_Window]:
    """Queue a read of a timeline's newest `count` ids from `max_id` down to `low`
    (of several partitions: merged as `_global_merged`) with the statuses of the
    first `wanted` of them, in one command (one server only): a page's statuses
    ride in the round trip that proves the viewer, rather than in one more
    (`related`: as the client API reads them, `_statuses_related_queue`;
    `home`: with the reposts it shows as their originals, `_AGAIN_LUA`; `tags`, a
    home's owner's followed tags: their timelines merged with it)."""
    if related:
        viewer = reads.claimed_uid if isinstance(reads, PageReads) else None
        args = _related_args(viewer)
        script = _WINDOW_RELATED_READ
    else:
        viewer, args = _rows_args(reads, cluster=False)
        script = _WINDOW_READ
    halves = [
        part
        for f in (keys.status, keys.likes, keys.reposts)
        for part in keys.around_id(f)
    ]
    top = max_id if max_id is not None else "+inf"
    falloff = settings.HOME_REPOST_FALLOFF if home else ""

    tag_halves = keys.around_id(keys.tag_timeline) if tags is not None else ("", "")
    zsets = [*zsets, tags] if tags is not None else zsets

    def build(pipe) -> None:
        script.queue(
            pipe,
            keys=zsets,
            args=[top, low, count, wanted, *halves, falloff, *tag_halves, *args],
        )

    def parse(replies: list) -> _Window:
        ids, *reply, again = orjson.loads(replies[0])
        ids = [] if ids == [None] else [int(sid) for sid in ids]
        read = ids[:wanted]
        shown_before = frozenset(int(sid) for sid in again if sid is not None)
        if related:
            found = _related_found(reads, viewer, read, *reply)
        else:
            found = _found_from(reads, viewer, read, [(read, *reply)], cluster=False)
        return _Window(ids=ids, found=found, again=shown_before)

    return reads.queue(build, parse)


def _window_or_ids_queue(
    reads: ReadBatch,
    key: str,
    max_id: int | None,
    size: int,
    low: str,
    ascending: bool,
    related: bool,
    home: bool = False,
    tags: str | None = None,
) -> tuple[Deferred[_Window] | None, Deferred[list[int]] | None]:
    """Queue a timeline's window read downwards on one server with its statuses, in
    this round trip (`_window_queue`, `tags` merged); else (upwards, `min_id`, or a
    Cluster) its ids alone (`_ids_queue`), the statuses read once they are known.
    One of the two is None."""
    if not ascending and not is_cluster():
        window = _window_queue(
            reads,
            [key],
            max_id,
            count=size + 1,
            wanted=size,
            low=low,
            related=related,
            home=home,
            tags=tags,
        )
        return window, None
    return None, _ids_queue(reads, key, max_id, size, low, ascending)


def _cards_queue(reads: ReadBatch, uids: Iterable[int]) -> Deferred[dict[int, Card]]:
    """Queue a read of these users' cards (those of deleted users are left out)."""
    return hashes_queue(
        reads, sorted(set(uids)), account_keys.user, User.CARD_FIELDS, Card.from_fields
    )


def _with_cards(reads: PageReads, found: _Found) -> dict[int, Card]:
    """The cards of the authors of `found`: read with them on one server; on a
    Cluster, read now, in one more round trip (but the viewer's own, known)."""
    return _cards_later(reads, found)()


def _cards_later(reads: PageReads, found: _Found) -> Callable[[], dict[int, Card]]:
    """`_with_cards`, its read (a Cluster's) queued now and sent with the next
    round trip: what the returned function gives once called."""
    if found.cards is not None:
        cards = found.cards
        return lambda: dict(cards)
    viewer = reads.viewer.value
    own = {viewer.id: viewer.card} if viewer.is_authenticated else {}
    shown = {s.shown_author_id for s in found.statuses if s is not None}
    # A quote's author too, for the name its embed shows (`timeline.quotes`).
    shown |= {s.quote.author_id for s in found.statuses if s and s.quote}
    authors = shown - own.keys()
    read = _cards_queue(reads, authors) if authors else None
    return lambda: {**own, **(read.value if read is not None else {})}


def _page(
    ids: list[int],
    found: list[Status | None],
    size: int,
    *,
    read: int | None = None,
    cards: dict[int, Card] | None = None,
) -> Page:
    """Cut a page from ids read `read` at most (one past its size unless said),
    without the deleted or hidden ones (None in `found`).

    A reference to a deleted status (a delete whose removal from the homes has not
    finished) is skipped, not swept: a GET writes nothing. Removing such references
    is the delete's own work. At most `size` statuses are shown; the next page
    starts below the last id considered, shown or skipped, so paging repeats and
    skips nothing; the last id of a full read only tells that there are more.
    """
    limit = read or size + 1
    considered = 0
    statuses: list[Status] = []
    for status in found[: limit - 1]:
        considered += 1
        if status is not None:
            statuses.append(status)
            if len(statuses) == size:
                break
    more = considered < len(ids)
    return Page(
        statuses=statuses,
        next_max_id=ids[considered - 1] - 1 if more else None,
        cards=cards or {},
    )


# Blocks and mutes at read (`timeline.blocks`): a page reads the viewer's sets in its
# first round trip, in the viewer's slot, and leaves out the statuses of the people
# in them. A set longer than HIDE_READ_MAX is not read whole: the page asks it about
# its own statuses' authors in one more round trip (only such viewers pay it).
HIDE_READ_MAX = 1000


@dataclass(frozen=True, slots=True)
class _Hidden:
    authors: frozenset[int]
    unread: tuple[str, ...]  # sets longer than HIDE_READ_MAX
    # Whom the viewer blocks or mutes (read with `mutes`): a home leaves out the
    # statuses that name them too (`_without_hidden`), as Mastodon's does.
    silenced: frozenset[int] = frozenset()


def _hidden_queue(reads: PageReads, *, mutes: bool) -> Deferred[_Hidden] | None:
    """Queue a read of whom the claimed viewer blocks, is blocked by and (with
    `mutes`) mutes. Trusted only once the viewer is proven (`_hidden_authors`)."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    sets = [keys.blocks(vid), keys.blocked_by(vid)]
    if mutes:
        sets.append(keys.mutes(vid))

    def build(pipe) -> None:
        for key in sets:
            pipe.zrange(key, 0, HIDE_READ_MAX)  # one past: is there more?

    def parse(replies: list) -> _Hidden:
        unread = tuple(
            key
            for key, members in zip(sets, replies, strict=True)
            if len(members) > HIDE_READ_MAX
        )
        authors = frozenset(int(m) for members in replies for m in members)
        silenced = frozenset(
            int(m)
            for key, members in zip(sets, replies, strict=True)
            if key != keys.blocked_by(vid)
            for m in members
        )
        return _Hidden(authors=authors, unread=unread, silenced=silenced)

    return reads.queue(build, parse)


def _hidden_known(reads: PageReads, hidden: Deferred[_Hidden] | None) -> _Hidden:
    """What the first round trip told of whom the proven viewer does not see."""
    if hidden is None or reads.proven_uid() is None:
        return _Hidden(authors=frozenset(), unread=())
    return hidden.value


def _hidden_authors(
    reads: PageReads, hidden: Deferred[_Hidden] | None, authors: Iterable[int]
) -> frozenset[int]:
    """Of these authors, and those the first round trip named, whom the proven
    viewer must not see (one more round trip only past HIDE_READ_MAX)."""
    known = _hidden_known(reads, hidden)
    # Nobody blocks or mutes themself: the viewer's own statuses need no question.
    ask = sorted(set(authors) - known.authors - {reads.proven_uid()})
    if not known.unread or not ask:
        return known.authors
    more = reads.queue(
        lambda pipe: [pipe.zmscore(key, ask) for key in known.unread],
        lambda replies: {
            author
            for reply in replies
            for author, score in zip(ask, reply, strict=True)
            if score is not None
        },
    )
    return known.authors | more.value


def _authors(status: Status) -> tuple[int, ...]:
    """Whom a row shows: its author, and a repost's original author."""
    if status.repost_uid is None:
        return (status.author_id,)
    return (status.author_id, status.repost_uid)


def _without_hidden(
    reads: PageReads,
    hidden: Deferred[_Hidden] | None,
    found: list[Status | None],
    *,
    mentions: bool = False,
) -> list[Status | None]:
    """The statuses, None in place of those whose author (or, for a repost, the
    original's author) the viewer does not see; with `mentions` (a home, as
    Mastodon's), also those that name someone the viewer blocks or mutes (of the
    first HIDE_READ_MAX of each set: past them, only authors are asked about)."""
    if hidden is None:
        return found
    authors = {a for status in found if status is not None for a in _authors(status)}
    hide = _hidden_authors(reads, hidden, authors)
    silenced = _hidden_known(reads, hidden).silenced if mentions else frozenset()
    if not hide and not silenced:
        return found
    viewer = reads.proven_uid()
    return [
        s
        if s is None
        or (
            hide.isdisjoint(_authors(s))
            # The viewer's own statuses stay, whomever they name (as Mastodon's).
            and (s.author_id == viewer or silenced.isdisjoint(s.mentioned_ids))
        )
        else None
        for s in found
    ]


# Reposts of originals the viewer may no longer see. A repost's row carries its
# original's text, so it is shown only while the original's own page would be: a
# deleted original's reposts go with its unlink job, a newly private author's with
# the sweep (`timeline.privacy`), and until then the page leaves them out. On one
# server the read scripts check each repost's original as they read its row
# (`original_seen`); on a Cluster they cannot reach the original's slot nor its
# author's, and `_refused_queue` checks them in the round trip that reads the
# authors' cards (or the client API's accounts and originals), as it does for a
# pulled author's statuses, read from an outbox, on any server.


def _hidden_by_privacy(
    author: int, private: bool, viewer: int | None, approved: bool
) -> bool:
    """Whether a private author's statuses are hidden from the (proven) viewer:
    they show only to the author and the followers they approved
    (`timeline.privacy`; the row scripts' `original_seen` says it in Lua)."""
    return private and author != viewer and not approved


def _refused_queue(
    reads: PageReads, statuses: Iterable[Status]
) -> Deferred[frozenset[int]] | None:
    """Queue the check of these statuses' reposts whose originals their read did
    not check; the value: the ids of those the viewer may not see (`original_seen`'s
    rule; trusted once the viewer is proven). None: no repost to check."""
    reposts = [s for s in statuses if s.repost_of]
    quoting = [s for s in statuses if s.quote is not None]
    if not reposts and not quoting:
        return None
    vid = reads.claimed_uid
    originals = sorted(
        {s.repost_of or 0 for s in reposts}
        | {s.quote.id for s in quoting if s.quote is not None}
    )
    authors = sorted(
        {s.repost_uid or 0 for s in reposts}
        | {s.quote.author_id for s in quoting if s.quote is not None}
    )
    # Quoted authors are refused across a block either way too (`quote_seen`).
    quoted = sorted({s.quote.author_id for s in quoting if s.quote is not None})
    asked = vid is not None and bool(quoted)

    def build(pipe) -> None:
        for sid in originals:
            pipe.exists(keys.status(sid))
        for uid in authors:
            pipe.hexists(account_keys.user(uid), User.PRIVATE_FIELD)
            if vid is not None:
                pipe.zscore(keys.followers(uid), vid)
        if asked:
            pipe.zmscore(keys.blocks(vid), quoted)
            pipe.zmscore(keys.blocked_by(vid), quoted)
            pipe.zmscore(keys.mutes(vid), quoted)

    def parse(replies: list) -> frozenset[int]:
        found = replies[: len(originals)]
        gone = {sid for sid, n in zip(originals, found, strict=True) if not n}
        answers = iter(replies[len(originals) :])
        trusted = vid is not None and reads.proven_uid() == vid
        refused: set[int] = set()
        for uid in authors:
            private = bool(next(answers))
            admitted = next(answers) is not None if vid is not None else False
            if _hidden_by_privacy(
                uid, private, vid if trusted else None, trusted and admitted
            ):
                refused.add(uid)
        # The quoted authors the viewer blocked, who blocked them, they muted.
        marked: list[set[int]] = [set(), set(), set()]
        if asked:
            for found in marked:
                found |= {
                    uid
                    for uid, score in zip(quoted, next(answers), strict=True)
                    if score is not None and uid != vid
                }
        blocking, blocked, muting = marked
        out = _Refused(
            s.id
            for s in reposts
            if s.repost_of in gone or (s.repost_uid or 0) in refused
        )
        out.quotes = {
            s.id: _quote_state_of(
                s.quote.author_id,
                gone=s.quote.id in gone,
                hidden=s.quote.author_id in refused or s.quote.author_id in blocked,
                trusted=trusted,
                blocking=blocking,
                muting=muting,
            )
            for s in quoting
            if s.quote is not None
        }
        return out

    return reads.queue(build, parse)


def _quote_state_of(
    author: int,
    *,
    gone: bool,
    hidden: bool,
    trusted: bool,
    blocking: set[int],
    muting: set[int],
) -> str:
    """A quote's state from a Cluster's check (`quote_seen`'s rule, in order)."""
    if gone:
        return "deleted"
    if hidden:
        return "unauthorized"
    if author in blocking or author in muting:
        if not trusted:
            return "unauthorized"
        return "blocked_account" if author in blocking else "muted_account"
    return "accepted"


class _Refused(frozenset):
    """`_refused_queue`'s answer: the reposts refused, and the states of the
    quotes of the statuses it checked that quote another (`quotes`: sid ->
    `Status.quote_state`), which `_without_refused` says on each."""

    quotes: dict[int, str] = {}  # noqa: RUF012 (a default, never changed)


# KEYS: a home and its owner's following zset. ARGV: its repost falloff, how many
# followed tags' timelines follow and their keys, how many pulled authors the home
# merges and their uids, the halves of a posts key and of an outbox key around a
# uid, the home's owner and where an outbox entry holds its author's uid and its
# `reply_uid` (the tags' timelines and the authors' keys one server only: read
# undeclared, as `_STATUSES_READ` reads its user keys; none on a Cluster), then
# 'pairs' and the sid of each repost, of its original and of the original's
# author, or (one server only: the status keys built in Lua) 'ids', the halves of
# a status key around its id, the status hash's `repost_of` and `repost_uid`
# fields, then statuses' ids. Returns the reposts among them that the home shows
# as their originals (`_AGAIN_LUA`): for the statuses that a window's script did
# not check.
_AGAIN = LuaScript(
    _AGAIN_LUA
    + """
local home, falloff, out = KEYS[1], tonumber(ARGV[1]), {}
local t = tonumber(ARGV[2])
local tags = {unpack(ARGV, 3, 2 + t)}
local p = tonumber(ARGV[3 + t])
local pulled
if p > 0 then
  local pp, ps, bp, bs, viewer, uid_at, reply_at = unpack(ARGV, 4 + t + p, 10 + t + p)
  pulled = {
    posts = {}, boxes = {}, outbox = {}, following = KEYS[2], viewer = viewer,
    uid_at = tonumber(uid_at), reply_at = tonumber(reply_at),
  }
  for i = 4 + t, 3 + t + p do
    pulled.posts[#pulled.posts + 1] = pp .. ARGV[i] .. ps
    pulled.boxes[#pulled.boxes + 1] = bp .. ARGV[i] .. bs
    pulled.outbox[ARGV[i]] = pulled.boxes[#pulled.boxes]
  end
end
local a = 11 + t + p
local function check(sid, original, author)
  if seen_below(home, tags, sid, original, falloff, author, pulled) then
    out[#out + 1] = sid
  end
end
if ARGV[a] == 'ids' then
  local sp, ss = ARGV[a + 1], ARGV[a + 2]
  local fields = {ARGV[a + 3], ARGV[a + 4]}
  for i = a + 5, #ARGV do
    local row = redis.call('HMGET', sp .. ARGV[i] .. ss, unpack(fields))
    if row[1] then check(ARGV[i], row[1], row[2]) end
  end
else
  for i = a + 1, #ARGV, 3 do
    check(ARGV[i], ARGV[i + 1], ARGV[i + 2])
  end
end
return out
"""
)


# A Cluster's read, in one pulled author's slot, of their statuses between a
# repost and its original (`shown_between`'s, the budget applied by the caller,
# `_again_apart`, across the authors in order, as the one server's script does).
# KEYS: the author's posts and outbox. ARGV: the bounds, how many entries to read
# at most (the whole budget: the authors before may have left it all), where a
# row's author and the user it answers sit, the reader. Returns how many there
# are, then one mark an entry read, oldest first: '' when the merge shows it
# whatever the reader follows (an entry the outbox no longer keeps too), '-' for a
# damaged one (shown nowhere), else the user whose follow decides it.
_SHOWN_BETWEEN = LuaScript(
    _AGAIN_LUA
    + """
local uid_at, reply_at, viewer = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local total = redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[2])
local out = {total}
if total == 0 or tonumber(ARGV[3]) < 1 then return out end
local ids = redis.call(
  'ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local entries = redis.call('HMGET', KEYS[2], unpack(ids))
for i = 1, #ids do
  if not entries[i] then
    out[#out + 1] = ''
  else
    out[#out + 1] = reply_to(entries[i], uid_at, reply_at, viewer) or '-'
  end
end
return out
"""
)


@dataclass(frozen=True, slots=True)
class _Deciding:
    """A Cluster's repost whose place the reader's follows decide: left out when
    its original is held (`to`, the user the original, a pulled author's reply
    held by its outbox alone, answers, is followed; None: held whatever) and fewer
    than `room` of the pulled replies between the two that `users` answer are
    shown (one an entry, each shown while its user is followed)."""

    sid: int
    to: int | None
    room: int
    users: tuple[int, ...] = ()

    def left_out(self, followed: Callable[[int], bool]) -> bool:
        held = self.to is None or followed(self.to)
        return held and sum(1 for u in self.users if followed(u)) < self.room


@dataclass(frozen=True, slots=True)
class _Again:
    """What `_again_queue` found: the reposts the home shows as their originals,
    and (a Cluster's) those whose place the reader's follows decide, asked by
    `_again_known`."""

    shown: frozenset[int]
    deciding: tuple[_Deciding, ...] = ()


def _again_queue(
    reads: ReadBatch,
    uid: int,
    *,
    statuses: Iterable[Status] = (),
    sids: Iterable[int] = (),
    tags: Iterable[str] = (),
    pulled: Iterable[int] = (),
) -> Deferred[_Again] | None:
    """Queue the check of which reposts the home of `uid` shows as their originals
    (`_AGAIN_LUA`), among these statuses, or (one server only) among the statuses
    of these ids, read by the script; `tags`: the timelines (keys) of the followed
    tags the home merges, and `pulled`: the pulled authors it merges, whose
    statuses count as the home's where the merge shows them (a pulled reply to
    someone other than its author and the reader only while the reader follows
    them, `Status.reply_follow_decides`: else its repost shows). None: nothing to
    check. On a Cluster the tags' timelines and the authors' keys, in other slots,
    are asked in the same round trip, command by command (`_again_apart`; each
    pulled author's entries between a repost and its original by
    `_SHOWN_BETWEEN`), and the follows that decide a pulled reply's place, and
    whether the replies between count, once the entries are read (`_again_known`)."""
    home = [keys.home(uid), keys.following(uid)]
    falloff = settings.HOME_REPOST_FALLOFF
    triples = [(s.id, s.repost_of, s.repost_uid or 0) for s in statuses if s.repost_of]
    ids = list(sids)
    tags = list(tags)
    authors = list(pulled)
    apart = is_cluster() and bool(tags or authors)
    # Where an outbox entry's author and the user it answers sit (`reply_to`).
    fields_at = [Status.IMMUTABLE.index(f) + 1 for f in ("uid", "reply_uid")]
    inline_tags, inline_authors = ([], []) if apart else (tags, authors)
    if triples:
        mode = ["pairs", *(sid for triple in triples for sid in triple)]
    elif ids:
        fields = ["repost_of", "repost_uid"]
        mode = ["ids", *keys.around_id(keys.status), *fields, *ids]
    else:
        return None
    args = [
        falloff,
        len(inline_tags),
        *inline_tags,
        len(inline_authors),
        *inline_authors,
        *keys.around_id(keys.posts),
        *keys.around_id(keys.outbox),
        uid,
        *fields_at,
        *mode,
    ]
    # On a Cluster, a repost whose original a tag's timeline or its author's
    # outbox (pulled) may hold: asked apart (one the home holds: by the script).
    pulled_set = set(authors)
    asked = [t for t in triples if tags or t[2] in pulled_set] if apart else []
    # The entries a repost's check reads, shared by the pulled authors in order
    # (`shown_between`): each author's script reads up to all of it.
    scan = REPOST_FALLOFF_SCAN * falloff
    rule = [*fields_at, uid]  # `_SHOWN_BETWEEN`'s reply rule

    def build(pipe) -> None:
        _AGAIN.queue(pipe, keys=home, args=args)
        for sid, original, author in asked:
            pipe.zscore(home[0], original)
            pipe.zcount(home[0], f"({original}", f"({sid}")
            for tag in tags:
                pipe.zscore(tag, original)
                pipe.zcount(tag, f"({original}", f"({sid}")
            if author in pulled_set:
                pipe.hget(keys.outbox(author), original)
                for each in authors:
                    _SHOWN_BETWEEN.queue(
                        pipe,
                        keys=[keys.posts(each), keys.outbox(each)],
                        args=[f"({original}", f"({sid}", scan, *rule],
                    )

    def parse(replies: list) -> _Again:
        shown = {int(sid) for sid in replies[0]}
        deciding: list[_Deciding] = []
        apart = _again_apart(asked, replies[1:], len(tags), pulled_set, falloff)
        for sid, (row, counted, users) in apart.items():
            status = _outbox_status(0, row) if row is not None else None
            if row is not None and status is None:
                continue  # a damaged entry: not held (the merge shows nothing)
            # The reply rule, as `_pulled_checked` applies it to the merge.
            decides = status.reply_follow_decides(uid) if status is not None else None
            if decides is None and not users:
                shown.add(sid)
            else:
                deciding.append(_Deciding(sid, decides, falloff - counted, users))
        return _Again(frozenset(shown), tuple(deciding))

    return reads.queue(build, parse)


def _again_known(
    reads: PageReads,
    uid: int,
    again: list[Deferred[_Again] | Deferred[frozenset[int]] | frozenset[int] | None],
    among: Iterable[int],
) -> list[Deferred[frozenset[int]] | frozenset[int]]:
    """The reposts each check found the home of `uid` shows as their originals
    (the window's script's, `_again_queue`'s), for `_without_again`, with those
    whose place follows decide (a Cluster's: `_Again.deciding`)
    queued for the next round trip: one the client API takes anyway when the
    checks are known before it (`_related_checked`), else one more, only for a
    page with such a repost (`among`: the page's ids, the merge's cut done; one
    read but cut needs no answer). Again on its own answer: the same."""
    known: list[Deferred[frozenset[int]] | frozenset[int]] = []
    deciding: list[_Deciding] = []
    for part in again:
        value = part.value if isinstance(part, Deferred) else part
        if isinstance(value, _Again):
            known.append(value.shown)
            deciding += [d for d in value.deciding if d.sid in among]
        elif value is not None:
            known.append(part if isinstance(part, Deferred) else value)
    if deciding:
        ask = sorted(
            {d.to for d in deciding if d.to is not None}
            | {u for d in deciding for u in d.users}
        )

        def parse(replies: list) -> frozenset[int]:
            followed = {
                u for u, score in zip(ask, replies[0], strict=True) if score is not None
            }
            return frozenset(
                d.sid for d in deciding if d.left_out(followed.__contains__)
            )

        known.append(
            reads.queue(lambda pipe: pipe.zmscore(keys.following(uid), ask), parse)
        )
    return known


def _again_apart(
    triples: list[tuple[int, int, int]],
    replies: list,
    tags: int,
    pulled: set[int],
    falloff: int,
) -> dict[int, tuple[str | None, int, tuple[int, ...]]]:
    """`seen_below`'s answer through followed tags and pulled authors
    (`_AGAIN_LUA`), from a Cluster's replies: for each (repost, original, its
    author), the home's score of the original and count between the two, then
    each tag timeline's, then (the original's author pulled) the original's outbox
    entry and each pulled author's `_SHOWN_BETWEEN`. The value: the reposts that
    may be seen below, each with None or (held by an outbox alone) that entry, how
    many entries between the two the home shows whatever the reader follows, and
    the users whose follows decide the others (`_Deciding`)."""
    out: dict[int, tuple[str | None, int, tuple[int, ...]]] = {}
    replies = iter(replies)
    for sid, _original, author in triples:
        scored = [next(replies) for _ in range(2 * (tags + 1))]
        scores, counts = scored[0::2], scored[1::2]
        row = next(replies) if author in pulled else None
        posts = [next(replies) for _ in range(len(pulled))] if author in pulled else []
        tagged = any(score is not None for score in scores[1:])
        if scores[0] is not None or not (tagged or row):
            continue
        counted = sum(int(c) for c in counts)
        users: tuple[int, ...] = ()
        if not tagged:
            # The one server's `seen_below`: a budget of entries read, shared by
            # the authors in order; past it, an author's entries count as shown.
            budget, deciding = REPOST_FALLOFF_SCAN * falloff, []
            for total, *marks in posts:
                read = marks[: max(budget, 0)]
                counted += int(total) - len(read) + read.count("")
                deciding += [int(u) for u in read if u not in ("", "-")]
                budget -= len(read)
            users = tuple(deciding)
        if counted < falloff:
            out[sid] = (None if tagged else row, counted, users)
    return out


def _without_again(
    found: list[Status | None],
    *again: Deferred[frozenset[int]] | frozenset[int] | None,
    floor: int = 0,
    unshown: frozenset[int] = frozenset(),
) -> list[Status | None]:
    """The statuses, None in place of the reposts that the home shows as their
    originals (`_again_queue`, `_Window.again`), but those whose original is below
    `floor`: a home merging pulled authors never shows what is below the newest
    status an outbox lacks (`_merged`), so there the repost stays; and those whose
    original is by one of `unshown` (an exclusive list's member), which the home
    holds but does not show."""
    left_out: set[int] = set()
    for part in again:
        if part is not None:
            left_out |= part.value if isinstance(part, Deferred) else part
    if not left_out:
        return found
    return [
        None
        if s is not None
        and s.id in left_out
        and (s.repost_of or 0) >= floor
        and s.repost_uid not in unshown
        else s
        for s in found
    ]


def _without_refused(
    found: list[Status | None], refused: Deferred[frozenset[int]] | None
) -> list[Status | None]:
    """The statuses, None in place of the reposts `_refused_queue` refused, and
    those quoting another with whether it may be shown (`Status.quote_state`)."""
    if refused is None:
        return found
    value = refused.value
    quotes = getattr(value, "quotes", {})
    if not value and not quotes:
        return found
    return [
        None
        if s is not None and s.id in value
        else _quote_checked(s, quotes)
        if s is not None and s.id in quotes and s.quote is not None
        else s
        for s in found
    ]


def _quotes_settled(
    reads: PageReads, statuses: list[Status | None]
) -> list[Status | None]:
    """The statuses, those quoting another that their read left unchecked (a
    Cluster's rows, `_Found.unchecked`, where a page reads them in its last round
    trip: a thread's replies, bookmarks, favourites, a context, notifications,
    conversations) with their quotes checked (`_refused_queue`): one round trip
    more, on a Cluster only and only when such a status is there; unchecked, the
    embed would say "This post is unavailable." of one the reader may see. One
    server's row script checked them: unchanged."""
    unchecked = [
        s
        for s in statuses
        if s is not None and s.quote is not None and s.quote_state is None
    ]
    if not unchecked:
        return statuses
    return _without_refused(statuses, _refused_queue(reads, unchecked))


def _related_checked(
    reads: PageReads,
    found: _Found,
    statuses: list[Status | None],
    refused: Deferred[frozenset[int]] | None,
) -> tuple[list[Status | None], _Found]:
    """For the client API: the statuses without the reposts `_refused_queue`
    refused, and `found` with its authors' accounts and reposts' originals.

    A read that did not bring these (a Cluster's) reads them with the check, in one
    round trip: the one the client API would spend on them next
    (`api.entities.related_get`, which then finds nothing missing), so the check
    costs none."""
    if refused is None or found.accounts is not None:
        return _without_refused(statuses, refused), found
    shown = [s for s in statuses if s is not None]
    accounts = accounts_queue(reads, {a for s in shown for a in _authors(s)})
    # Reposts' originals, and statuses read without their counts (from an outbox).
    wanted = {s.repost_of for s in shown if s.repost_of} | {
        s.id for s in shown if not s.repost_of and s.likes is None
    }
    originals = statuses_by_id_queue(reads, sorted(wanted))
    # The viewer's bookmarks and pins too, which such a read does not say either:
    # else `related_get` would ask in a round trip of its own.
    marked = bookmarked_queue(reads, shown)
    pinned = pinned_queue(reads, shown)
    muted = muted_queue(reads, shown)
    asked = {s.conversation_id for s in shown}

    def said(status: Status | None) -> Status | None:
        return _marked(
            status,
            marked.value if marked is not None else None,
            pinned.value if pinned is not None else frozenset(),
            # An original whose conversation was not asked about (a repost's stored
            # before conversations names none): left unsaid, for `related_get`.
            muted.value
            if muted is not None
            and status is not None
            and status.conversation_id in asked
            else None,
        )

    kept = [said(s) for s in _without_refused(statuses, refused)]
    return kept, replace(
        found,
        accounts=accounts.value,
        originals={s.id: said(s) for s in originals.value.statuses if s is not None},
    )


def _marked(
    status: Status | None,
    marks: frozenset[str] | None,
    pins: frozenset[int],
    muted: frozenset[int] | None = None,
) -> Status | None:
    """The status with whether the viewer bookmarked it (`bookmarked_queue`'s
    members; None: not asked), pinned it (`pinned_queue`'s ids: those of the
    viewer's own that they pinned) and muted its conversation (`muted_queue`'s
    conversations; None: not asked), unless it is a repost (whose original says)."""
    if status is None or status.repost_of is not None:
        return status
    return replace(
        status,
        bookmarked=bookmarks.status_member(status) in marks
        if marks is not None
        else status.bookmarked,
        pinned=status.id in pins,
        muted=status.conversation_id in muted if muted is not None else status.muted,
    )


def _reposts_once(found: list[Status | None]) -> list[Status | None]:
    """The statuses (newest first), None in place of every older row of an original
    already shown: however many people repost it, and whether the original itself
    is there too, a page shows it once, at its newest (`timeline.social`)."""
    seen: set[int] = set()
    kept: list[Status | None] = []
    for status in found:
        if status is not None:
            if status.original_id in seen:
                status = None
            else:
                seen.add(status.original_id)
        kept.append(status)
    return kept


# A home page or window whose statuses were all left out (a pulled author's replies
# to people the reader does not follow keep their places in the merge, `_merged`)
# reads on past them, at most this many more times (each its round trips, only for
# such a page): an app takes an empty window for the end of the home, as Mastodon's
# holds only what it shows.
HOME_EMPTY_READS = 4


def home_get(*, reads: PageReads, max_id: int | None = None) -> Home | None:
    """The viewer's home timeline (and, when its first page is empty, people to
    follow); None when the request proves no viewer.

    The home key comes from the cookie's claim; its statuses are read only once the
    first round trip proved that claim. The popular people ride in the first round
    trip too, so an empty home still costs two.
    """
    read = _home_read(
        reads,
        size=settings.TIMELINE_PAGE_SIZE,
        max_id=max_id,
        suggest=max_id is None,
    )
    if read is None:
        return None
    page = _page(read.ids, read.found, read.size, cards=read.cards())
    listed = read.listed
    # A page all left out (a pulled author's replies, `_merged`) reads on below.
    for _ in range(HOME_EMPTY_READS):
        if page.statuses or page.next_max_id is None:
            break
        below = _home_read(reads, size=read.size, max_id=page.next_max_id)
        if below is None:
            break
        page = _page(below.ids, below.found, below.size, cards=below.cards())
        listed = listed or below.listed
    return Home(
        page=page,
        suggestions=read.suggestions,
        catching_up=read.catching_up,
        listed=listed,
    )


@dataclass(frozen=True, slots=True)
class _HomeRead:
    """A home's ids (one past `size`, newest first) and their statuses (None for
    those gone or hidden), pulled authors merged; their cards are read on demand
    (`cards()`: on a Cluster, one more round trip); `read`: the home's own
    statuses as read (with `related`, their authors' accounts and originals)."""

    ids: list[int]
    found: list[Status | None]
    size: int
    cards: Callable[[], dict[int, Card]]
    suggestions: list[User]
    catching_up: bool
    read: _Found
    # Whether it left out statuses of the members of the viewer's exclusive lists
    # (or did not merge a pulled author on them).
    listed: bool = False


def _home_read(
    reads: PageReads,
    *,
    size: int,
    max_id: int | None,
    low: str = "-inf",
    ascending: bool = False,
    suggest: bool = False,
    related: bool = False,
) -> _HomeRead | None:
    """Read a home's window (`_ids_queue`'s bounds) with every rule of the home
    page: pulled authors merged, followed tags' timelines merged (each status once:
    in the window's script on one server, else `_ids_union`, with the tags' ids
    read in one more round trip once the first named the tags), blocks and mutes
    left out, a repost left out where the home holds its original just below
    (`_AGAIN_LUA`), else shown once and only while its original's page would be
    (`_refused_queue`)."""
    if reads.claimed_uid is None:
        return None
    uid = reads.claimed_uid
    window, ids = _window_or_ids_queue(
        reads,
        keys.home(uid),
        max_id,
        size,
        low,
        ascending,
        related,
        home=True,
        tags=keys.followed_tags(uid),
    )
    # The followed tags ride in this round trip: read by ids (upwards, or a
    # Cluster), their timelines are read once the tags are known (one more round
    # trip, only for a home that has some); a window's script merged them itself,
    # yet a pulled author's reposts are checked against them (`_again_queue`).
    followed = tagfollows.followed_tags_queue(reads, uid)
    popular = _candidates_queue(reads, SUGGESTIONS) if suggest else None
    pulls = reads.queue(
        lambda pipe: pipe.zrange(keys.pulls(uid), 0, -1),
        lambda replies: [int(a) for a in replies[0]],
    )
    rebuilding = reads.queue(
        lambda pipe: pipe.zscore(
            keys.job_queue(keys.slot_of_user(uid)), home_rebuild_job_id(uid)
        ),
        lambda replies: replies[0] is not None,
    )
    hidden = _hidden_queue(reads, mutes=True)
    exclusive = lists.exclusive_queue(reads, uid)
    if reads.proven_uid() is None:
        return None
    # A blocked or muted pulled author is not read at all (a block ends the follow,
    # so only a race or a mute leaves one in `pulls`).
    hide = _hidden_known(reads, hidden).authors
    listed = exclusive.value - {uid}
    pulled_authors = [a for a in pulls.value if a not in hide and a not in listed]
    # A pulled member is not read at all: whether they had statuses here is unknown,
    # but an empty page says where such statuses go (`Home.listed`).
    unmerged = any(a in listed for a in pulls.value if a not in hide)
    pulled = (
        _pulled_queue(reads, pulled_authors, max_id, size, low, ascending)
        if pulled_authors
        else None
    )
    # Their authors are known already: their cards ride in this round trip too.
    pulled_cards = _cards_queue(reads, pulled_authors) if pulled_authors else None
    all_ids = window.value.ids if window is not None else ids.value
    tag_keys = [keys.tag_timeline(tag.name) for tag in followed.value]
    # The followed tags' timelines, when read by ids (a window's script read them).
    if tag_keys and window is None:
        tagged = _members_ids_queue(reads, tag_keys, max_id, size, low, ascending)
        all_ids = _ids_union(all_ids, tagged.value, size, ascending)
    # The id one past the page tells only that there is more (`_page` never shows
    # it): its status is not read.
    read_ids = all_ids
    if len(read_ids) > size:
        read_ids = read_ids[1:] if ascending else read_ids[:size]
    found = _statuses_queue(reads, read_ids, related) if window is None else None
    # Which reposts the home shows as their originals: a window's script says it;
    # read by ids, one server asks with the statuses, a Cluster once they are read.
    again = [window.value.again] if window is not None else []
    if window is None and not is_cluster():
        again.append(
            _again_queue(
                reads, uid, sids=read_ids, tags=tag_keys, pulled=pulled_authors
            )
        )
    elif window is not None and pulled_authors:
        # The window's script knew no pulled author: its reposts of their statuses
        # are checked against their outboxes in the round trip that reads these.
        merged = set(pulled_authors)
        again.append(
            _again_queue(
                reads,
                uid,
                statuses=[
                    s
                    for s in window.value.found.statuses
                    if s is not None and s.repost_uid in merged
                ],
                tags=tag_keys,
                pulled=pulled_authors,
            )
        )
    # Nobody is offered to follow across a block (or a mute) either way.
    suggestions = (
        _suggestions_queue(reads, [u for u in popular.value.uids if u not in hide])
        if popular is not None and not all_ids
        else None
    )
    read = own = found.value if found is not None else window.value.found
    page_ids, page_found = all_ids, read.statuses
    if len(read_ids) < len(page_ids):
        page_found = [None, *page_found] if ascending else [*page_found, None]
    more_cards: Deferred[dict[int, Card]] | None = None
    refused = None
    kept_from = 0  # no outbox: every status the home holds may show
    if window is None and is_cluster():
        again.append(
            _again_queue(
                reads,
                uid,
                statuses=filter(None, own.statuses),
                tags=tag_keys,
                pulled=pulled_authors,
            )
        )
    if pulled is None:
        refused = _refused_queue(reads, own.unchecked)
    else:
        # `kept_from`: nothing below it shows, on whichever page reaches it
        # (`_merged`), so a repost of an original below it stays (`_without_again`).
        floor, pulled_statuses, kept_from = pulled.value
        if ascending and floor - 1 > (-1 if low == "-inf" else int(low[1:])):
            # Read upwards from below what an outbox keeps: nothing below its floor
            # is shown, so the window starts at the floor (two more round trips,
            # only for such a window).
            return _home_read(
                reads,
                size=size,
                max_id=max_id,
                low=f"({floor - 1}",
                ascending=True,
                related=related,
            )
        # An outbox holds no counts: for the client API (one server) they are read
        # by id, with their authors' accounts, in the round trip the pulled
        # statuses' checks take anyway.
        fresh = (
            _statuses_queue(reads, [s.id for s in pulled_statuses], related=True)
            if related and pulled_statuses and not is_cluster()
            else None
        )
        # An outbox's reposts were read without their originals: checked in that
        # round trip too (with a Cluster's own reposts).
        refused = _refused_queue(reads, [*own.unchecked, *pulled_statuses])
        again.append(
            _again_queue(
                reads,
                uid,
                statuses=pulled_statuses,
                tags=tag_keys,
                pulled=pulled_authors,
            )
        )
        pulled_statuses, replies_out, more_cards = _pulled_checked(
            reads, uid, pulled_statuses, set(pulled_authors)
        )
        if fresh is not None:
            counted = {s.id: s for s in fresh.value.statuses if s is not None}
            pulled_statuses = [counted.get(s.id, s) for s in pulled_statuses]
            read = _Found(
                statuses=own.statuses,
                cards=None,
                accounts={**(own.accounts or {}), **(fresh.value.accounts or {})},
                originals={**(own.originals or {}), **(fresh.value.originals or {})},
                named={**(own.named or {}), **(fresh.value.named or {})},
            )
        page_ids, page_found = _merged(
            page_ids,
            page_found,
            (floor, pulled_statuses),
            size,
            ascending,
            left_out=replies_out,
        )
    # A Cluster's check of reposts rides with its cards, or with the client API's
    # accounts and originals (`_related_checked`).
    own_cards = _cards_later(reads, own) if not related else None
    # The follows that decide a Cluster's pulled replies ride with the client
    # API's accounts when the checks are in already (sending nothing early).
    on_page = set(page_ids)
    if all(not isinstance(part, Deferred) or part.done for part in again):
        again = _again_known(reads, uid, again, on_page)
    if related:
        page_found, read = _related_checked(reads, read, page_found, refused)
    else:
        page_found = _without_refused(page_found, refused)
    page_found = _without_again(
        page_found,
        *_again_known(reads, uid, again, on_page),
        floor=kept_from,
        unshown=listed,
    )
    # Fan-out keeps them out of the home; what raced a block or mute goes here.
    page_found = _without_hidden(reads, hidden, page_found, mentions=True)
    # Statuses of the members of the viewer's exclusive lists (`timeline.lists`),
    # their reposts too: Mastodon's rule goes by whose status it is. The fan-out
    # keeps them out of the home; what a sweep cut short left goes here. Whether it
    # left any out is told of the page's own: not of the one past it (read upwards,
    # the first), which a merge may have read and the next page leaves out.
    considered = page_found[-size:] if ascending else page_found[:size]
    left_out = bool(listed) and any(
        s is not None and s.author_id in listed for s in considered
    )
    if listed:
        page_found = [
            None if s is not None and s.author_id in listed else s for s in page_found
        ]
    page_found = _reposts_once(page_found)

    def cards() -> dict[int, Card]:
        found_cards = own_cards() if own_cards is not None else {}
        if pulled_cards is not None:
            found_cards.update(pulled_cards.value)
        if more_cards is not None:
            found_cards.update(more_cards.value)
        return found_cards

    return _HomeRead(
        ids=page_ids,
        found=page_found,
        size=size,
        cards=cards,
        suggestions=suggestions.value if suggestions is not None else [],
        # No stamp: away too long, the rebuild is queued after this page.
        catching_up=rebuilding.value or reads.seen_day.value is None,
        read=read,
        listed=left_out or unmerged,
    )


def _ids_union(
    ids: list[int], more: list[int], size: int, ascending: bool
) -> list[int]:
    """Two reads of ids within the same bounds (each one past `size`, newest
    first) as one: the newest (read upwards, the oldest) one past `size` of their
    union, each id once, newest first. Each gave its own up to the bound, so these
    are exact."""
    merged = sorted(set(ids) | set(more), reverse=not ascending)[: size + 1]
    return merged[::-1] if ascending else merged


def _pulled_checked(
    reads: PageReads, vid: int, statuses: list[Status], carded: set[int]
) -> tuple[list[Status], set[int], Deferred[dict[int, Card]] | None]:
    """Pulled authors' statuses as the fan-out would have let them in: a reply to
    someone the viewer does not follow (not the author, not the viewer) stays out
    (`Status.reply_follow_decides`, Mastodon's rule); with the ids of those left
    out (`_merged` keeps their places). Asking whom the viewer follows, and
    reading the cards of the authors reposted there, cost one more round trip,
    only for a home that merges such statuses."""
    deciding = [s.reply_follow_decides(vid) for s in statuses]
    ask = sorted({uid for uid in deciding if uid is not None})
    followed = (
        reads.queue(
            lambda pipe: pipe.zmscore(keys.following(vid), ask),
            lambda replies: {
                a for a, score in zip(ask, replies[0], strict=True) if score is not None
            },
        )
        if ask
        else None
    )
    missing = {s.shown_author_id for s in statuses} - carded
    cards = _cards_queue(reads, missing) if missing else None
    if followed is None:
        return statuses, set(), cards
    kept: list[Status] = []
    left_out: set[int] = set()
    for s, uid in zip(statuses, deciding, strict=True):
        if uid is None or uid in followed.value:
            kept.append(s)
        else:
            left_out.add(s.id)
    return kept, left_out, cards


# A list's timeline (`timeline.lists`): the newest statuses of the members the
# owner still follows, merged from their own records (`posts:{<member>}`, their
# statuses, replies and reposts: complete, whatever their fan-out mode), with the
# home's rules: blocks and mutes left out (and statuses naming whom the viewer
# blocks or mutes), reposts shown once and only while their originals' pages would
# be (`_refused_queue`), a repost of a member's status left out where the list
# holds the original just below (`_list_again_queue`, the home's falloff), replies
# as the list's policy says. Privacy needs no more:
# a member is followed, so an approved follower of a private member; a repost's
# original is checked as on every page.


def _members_ids_queue(
    reads: ReadBatch,
    zsets: list[str],
    max_id: int | None,
    size: int,
    low: str,
    ascending: bool,
) -> Deferred[list[int]]:
    """Queue a read of each member's ids (one past the page size each, one range
    read per member, pipelined: one round trip however many nodes), merged newest
    first: the newest (read upwards, the oldest) one past `size` of the union are
    exact, as each source gave its own."""
    top = max_id if max_id is not None else "+inf"

    def build(pipe) -> None:
        for key in zsets:
            if ascending:
                pipe.zrangebyscore(key, low, top, start=0, num=size + 1)
            else:
                pipe.zrevrangebyscore(key, top, low, start=0, num=size + 1)

    def parse(replies: list) -> list[int]:
        merged = sorted(
            {int(sid) for reply in replies for sid in reply}, reverse=not ascending
        )[: size + 1]
        return merged[::-1] if ascending else merged

    return reads.queue(build, parse)


@dataclass(frozen=True, slots=True)
class _ListRead:
    """A list's window: as `_HomeRead`, with the list and its followed members."""

    list: lists.List
    members: tuple[int, ...]
    ids: list[int]
    found: list[Status | None]
    cards: Callable[[], dict[int, Card]]
    read: _Found


def _list_read(
    reads: PageReads,
    *,
    lid: int,
    size: int,
    max_id: int | None,
    low: str = "-inf",
    ascending: bool = False,
    related: bool = False,
    queue_members: Callable[[tuple[int, ...]], Any] | None = None,
) -> _ListRead | None:
    """Read a window of one of the viewer's lists (`_ids_queue`'s bounds); None
    when the request proves no viewer, or the viewer has no such list.

    On one server two round trips read downwards: the list, its members checked
    against `following`, the viewer's blocks and mutes with the auth check; then
    the members' statuses merged in one script (`_window_queue`, as the global
    timeline's partitions). Upwards (`min_id`) and on a Cluster the members' ids
    are read in one round trip, pipelined, and merged here, the statuses in the
    next (a Cluster's cards, or the client API's accounts, and the reposts' check
    in one more). A `followed` list whose owner follows more than
    FOLLOWING_READ_MAX asks about its replies in one more, and a page holding a
    repost of an author's own status asks whether the list shows the original
    instead (`_list_again_queue`) in one more. `queue_members(uids)`
    queues what the caller reads of the members, sent with the statuses."""
    if reads.claimed_uid is None:
        return None
    uid = reads.claimed_uid
    listed = lists.list_queue(reads, uid, lid)
    hidden = _hidden_queue(reads, mutes=True)
    if reads.proven_uid() != uid or listed.value is None:
        return None
    found_list = listed.value
    hide = _hidden_known(reads, hidden).authors
    authors = [m for m in found_list.members if m not in hide]
    if queue_members is not None:
        queue_members(found_list.members)
    zsets = [keys.posts(a) for a in authors]
    window = ids_d = None
    if not zsets:
        all_ids: list[int] = []
    elif not ascending and not is_cluster():
        window = _window_queue(
            reads,
            zsets,
            max_id,
            count=size + 1,
            wanted=size,
            low=low,
            related=related,
        ).value
        all_ids = window.ids
    else:
        ids_d = _members_ids_queue(reads, zsets, max_id, size, low, ascending)
        all_ids = ids_d.value
    read_ids = all_ids
    if len(read_ids) > size:
        read_ids = read_ids[1:] if ascending else read_ids[:size]
    if window is not None:
        read = window.found
    else:
        read = _statuses_queue(reads, read_ids, related).value
    page_found = read.statuses
    if len(read_ids) < len(all_ids):
        page_found = [None, *page_found] if ascending else [*page_found, None]
    page_found = _list_replies(reads, found_list, uid, page_found)
    again = _list_again_queue(reads, found_list, uid, authors, page_found)
    refused = _refused_queue(reads, read.unchecked)
    own_cards = _cards_later(reads, read) if not related else None
    if related:
        page_found, read = _related_checked(reads, read, page_found, refused)
    else:
        page_found = _without_refused(page_found, refused)
    page_found = _without_again(page_found, again)
    page_found = _reposts_once(
        _without_hidden(reads, hidden, page_found, mentions=True)
    )
    return _ListRead(
        list=found_list.list,
        members=found_list.members,
        ids=all_ids,
        found=page_found,
        cards=own_cards if own_cards is not None else dict,
        read=read,
    )


def _list_replies(
    reads: PageReads,
    found_list: lists.ListRead,
    owner: int,
    found: list[Status | None],
) -> list[Status | None]:
    """The statuses, None in place of the replies the list's policy leaves out
    (`List.shows_reply`). A `followed` list asks whom the owner follows of the
    page's replies in one more round trip only when the first did not read them
    all (past FOLLOWING_READ_MAX)."""
    members = set(found_list.members)
    the_list = found_list.list
    followed = found_list.following
    if the_list.replies_policy == "followed" and followed is None:
        ask = sorted(
            {
                s.reply_uid
                for s in found
                if s is not None and s.reply_uid and s.repost_of is None
            }
        )
        if ask:
            followed = following_among_queue(reads, ask).value
    known = followed or frozenset()
    return [
        s
        if s is None
        or s.repost_of is not None
        or the_list.shows_reply(
            author=s.author_id,
            to=s.reply_uid,
            owner=owner,
            members=members,
            followed=known.__contains__,
        )
        else None
        for s in found
    ]


def _list_again_queue(
    reads: PageReads,
    found_list: lists.ListRead,
    owner: int,
    authors: list[int],
    found: list[Status | None],
) -> Deferred[frozenset[int]] | None:
    """Queue the check of which reposts the list shows as their originals, as the
    home does (`_AGAIN_LUA`): a repost of a status by one of the list's authors
    that the list holds at most HOME_REPOST_FALLOFF entries below it (counted
    across every author's record), and that the list's policy shows; the list
    shows the original there and leaves the repost out, so paging shows it once.
    None: no such repost on the page. One more round trip, only for such a page.

    The original is a status of an author on the list: its id is its score in
    their `posts`, so each author's count between the two is one ZCOUNT."""
    own = set(authors)
    pairs = [
        (s.id, s.repost_of, s.repost_uid)
        for s in found
        if s is not None and s.repost_of and s.repost_uid in own
    ]
    if not pairs:
        return None
    zsets = [keys.posts(a) for a in authors]
    falloff = settings.HOME_REPOST_FALLOFF

    def build(pipe) -> None:
        for sid, original, author in pairs:
            pipe.zscore(keys.posts(author), original)
            pipe.hget(keys.status(original), "reply_uid")
            for key in zsets:
                pipe.zcount(key, f"({original}", f"({sid}")

    def parse(replies: list) -> frozenset[int]:
        members = set(found_list.members)
        # Past FOLLOWING_READ_MAX whom the owner follows is unknown here: such an
        # original counts as left out, and its repost stays (shown, not lost).
        followed = found_list.following or frozenset()
        left_out: set[int] = set()
        at = 0
        for sid, _original, author in pairs:
            held, to, *counts = replies[at : at + 2 + len(zsets)]
            at += 2 + len(zsets)
            if held is None or sum(counts) >= falloff:
                continue
            if found_list.list.shows_reply(
                author=author,
                to=int(to) if to and int(to) else None,
                owner=owner,
                members=members,
                followed=followed.__contains__,
            ):
                left_out.add(sid)
        return frozenset(left_out)

    return reads.queue(build, parse)


@dataclass(frozen=True, slots=True)
class ListPage:
    """A list's page on the site: the list, its members' cards (those the owner
    follows, by username), and its statuses."""

    list: lists.List
    members: list[User]
    page: Page


def list_page(
    *, reads: PageReads, lid: int, max_id: int | None = None
) -> ListPage | None:
    """A page of one of the viewer's lists with its members (read with the
    statuses, in the second round trip); None: no such list of theirs."""
    members: list[Deferred[dict[int, User]]] = []
    read = _list_read(
        reads,
        lid=lid,
        size=settings.TIMELINE_PAGE_SIZE,
        max_id=max_id,
        queue_members=lambda uids: members.append(users_queue(reads, uids=uids)),
    )
    if read is None:
        return None
    people = members[0].value if members else {}
    return ListPage(
        list=read.list,
        members=sorted(people.values(), key=lambda u: u.username.casefold()),
        page=_page(
            read.ids, read.found, settings.TIMELINE_PAGE_SIZE, cards=read.cards()
        ),
    )


def _global_ids_queue(
    reads: ReadBatch,
    max_id: int | None,
    size: int,
    low: str = "-inf",
    ascending: bool = False,
) -> Deferred[list[int]]:
    """Queue a read of the global timeline's ids from `max_id` down, one past the
    page size, merged from its partitions (one plain range read each).

    A partition that dropped old statuses ends with a marker (the member 0,
    `timeline.services._GLOBAL_ADD`), read in the same round trip: ids of any
    partition below the highest marker are cut, so a page never skips what a
    partition dropped, even for a cursor older than the drop. `low` and
    `ascending` bound the read as `_ids_queue`'s (upwards, `_global_ids_up`).
    """
    return reads.queue(
        _global_read(max_id, size, low, ascending),
        lambda replies: _global_merged(replies, size, ascending)[0],
    )


def _global_read(
    max_id: int | None, size: int, low: str, ascending: bool
) -> Callable[[Any], None]:
    """The builder of `_global_ids_queue`'s read: each partition's range and its
    marker."""
    top = max_id if max_id is not None else "+inf"

    def build(pipe) -> None:
        for partition in keys.global_partitions():
            if ascending:
                pipe.zrangebyscore(partition, low, top, start=0, num=size + 1)
            else:
                pipe.zrevrangebyscore(partition, top, low, start=0, num=size + 1)
            pipe.zscore(partition, 0)

    return build


def _global_merged(
    replies: list, size: int, ascending: bool
) -> tuple[list[int], int | None]:
    """The merged ids (newest first, one past `size`) of `_global_read`'s replies,
    and, read upwards, the floor to read again from when they are not exact.

    Read upwards, each partition gave its oldest ids above the low bound; those
    below the floor (the highest marker) are cut. A partition that gave all it
    was asked for may hold more, unread, above its last id: when the cut leaves
    fewer than one past `size` up to the lowest such last id, the window would
    jump over them, and the read must start again at the floor.
    """
    floor = 0
    merged: list[int] = []
    unread_above: int | None = None  # the lowest last id of a partition read full
    for reply, marker in zip(replies[::2], replies[1::2], strict=True):
        if marker is not None:
            # The partition keeps nothing below its marker: ids under it may
            # have been dropped (even above an old cursor), so none is shown.
            floor = max(floor, int(marker) + 1)
        read = [int(x) for x in reply]
        if ascending and len(read) == size + 1:
            last = max(read)
            unread_above = last if unread_above is None else min(unread_above, last)
        merged.extend(sid for sid in read if sid != 0)
    merged.sort(reverse=not ascending)
    # Below the floor is at the end of a downward read: cutting it first or
    # last is the same there; read upwards it must go first.
    kept = [sid for sid in merged if sid >= floor][: size + 1]
    if not ascending:
        return kept, None
    exact = [sid for sid in kept if unread_above is None or sid <= unread_above]
    again = floor if len(exact) < size + 1 and unread_above is not None else None
    return exact[::-1], again


def _global_ids_up(
    reads: ReadBatch, max_id: int | None, size: int, low: str
) -> list[int]:
    """The global timeline's oldest ids above `low` (`_global_ids_queue` upwards),
    read now. A read that began below a partition's floor and missed ids above it
    (`_global_merged`) starts again at the floor: one more round trip, only for
    such a window; a drop between the two reads leaves the second's exact part."""

    def read(bound: str) -> tuple[list[int], int | None]:
        return reads.queue(
            _global_read(max_id, size, bound, True),
            lambda replies: _global_merged(replies, size, True),
        ).value

    ids, again = read(low)
    if again is not None and again - 1 > (-1 if low == "-inf" else int(low[1:])):
        ids, _ = read(f"({again - 1}")
    return ids


def global_page(*, reads: PageReads, max_id: int | None = None) -> Page:
    """Everyone's newest statuses, but those of people the viewer blocks or is
    blocked by (mutes do not apply here).

    For a signed-in viewer twice a page of ids is read in the first round trip, so
    that a page stays about full when some are left out: a viewer who blocks
    nobody and whom nobody blocks reads the statuses of one page, as a visitor.
    """
    return _public_page(
        reads,
        lambda size: _global_ids_queue(reads, max_id, size),
        keys.global_partitions(),
        max_id,
    )


def tag_page(*, reads: PageReads, tag: str, max_id: int | None = None) -> Page | None:
    """The newest public statuses with `#tag` (any case), but those of people the
    viewer blocks or is blocked by, as the global timeline; None: not a tag."""
    wanted = richtext.tag_wanted(tag)
    if wanted is None:
        return None
    key = keys.tag_timeline(wanted)
    return _public_page(
        reads, lambda size: _ids_queue(reads, key, max_id, size), [key], max_id
    )


def _public_page(
    reads: PageReads,
    ids_queue: Callable[[int], Deferred[list[int]]],
    zsets: list[str],
    max_id: int | None,
) -> Page:
    """A page of a timeline everyone may read (`ids_queue(n)` queues the read of
    one past n ids, from `zsets`), without what the viewer must not see: two round
    trips; on one server, one for a viewer who blocks nobody and whom nobody
    blocks (`_public_window_read`)."""
    size = settings.TIMELINE_PAGE_SIZE
    if is_cluster():
        ids, statuses, read, found = _public_read(
            reads, lambda n: ids_queue(n).value, size
        )
    else:
        ids, statuses, read, found = _public_window_read(reads, zsets, max_id, size)
    # A Cluster's reposts are checked with their authors' cards: one round trip.
    refused = _refused_queue(reads, found.unchecked)
    cards = _cards_later(reads, found)
    statuses = _without_refused(statuses, refused)
    return _page(ids, statuses, size, read=read, cards=cards())


def _public_window_read(
    reads: PageReads,
    zsets: list[str],
    max_id: int | None,
    size: int,
    low: str = "-inf",
    related: bool = False,
) -> tuple[list[int], list[Status | None], int, _Found]:
    """`_public_read` for a page on one server (a window read downwards): the
    window's ids and their statuses in one command of the first round trip; a
    viewer who blocks or is blocked reads a window twice as long, so that the page
    stays about full, in one more (only when the first was full)."""
    hidden = _hidden_queue(reads, mutes=False)
    read = size + 1

    def window_read(count: int, wanted: int) -> _Window:
        return _window_queue(
            reads, zsets, max_id, count=count, wanted=wanted, low=low, related=related
        ).value

    window = window_read(read, size)
    known = _hidden_known(reads, hidden)
    if (known.authors or known.unread) and len(window.ids) == read:
        read = 2 * size + 1
        window = window_read(read, read)
    found = window.found
    return window.ids, _without_hidden(reads, hidden, found.statuses), read, found


def _public_read(
    reads: PageReads,
    ids_read: Callable[[int], list[int]],
    size: int,
    ascending: bool = False,
    related: bool = False,
) -> tuple[list[int], list[Status | None], int, _Found]:
    """The ids, statuses (None for those hidden or gone), how many ids were asked
    for, and the read, of a window of `size` of a timeline everyone may read
    (`ids_read(n)` reads one past n ids now, with the reads queued before it).
    A Cluster's reposts are left unchecked (`_Found.unchecked`) but for the client
    API (`related`), whose check rides with its accounts (`_related_checked`)."""
    hidden = _hidden_queue(reads, mutes=False)
    read = size + 1 if hidden is None else 2 * size + 1
    ids = ids_read(read - 1)
    known = _hidden_known(reads, hidden)
    if not known.authors and not known.unread:
        read = size + 1
        # Newest first: a window read upwards keeps its oldest ones.
        ids = ids[-read:] if ascending else ids[:read]
    found = _statuses_queue(reads, ids, related).value
    statuses = _without_hidden(reads, hidden, found.statuses)
    if related:
        statuses, found = _related_checked(
            reads, found, statuses, _refused_queue(reads, found.unchecked)
        )
    return ids, statuses, read, found


# Of the client API's familiar followers: how many are named for one account.
FAMILIAR_SHOWN = 40


def familiar_followers_get(
    *, reads: PageReads, uids: list[int]
) -> dict[int, list[int]]:
    """For each of these users, whom the viewer follows who follow them (Mastodon's
    familiar followers; the profile's "Followed by"): among the viewer's newest
    PROFILE_IN_COMMON_SCAN follows, the first FAMILIAR_SHOWN. Nobody for the
    viewer themself, across a block either way, or for a private account that has
    not approved the viewer (who follows it is its own to show, as its followers
    list). {} when the request proves no viewer. With the auth check on one
    server; a Cluster reads the viewer's follows first, then asks each user's slot.
    """
    vid = reads.claimed_uid
    if vid is None:
        return {}
    others = [uid for uid in dict.fromkeys(uids) if uid != vid]
    one_server = not is_cluster()
    private = reads.queue(
        lambda pipe: [
            pipe.hexists(account_keys.user(uid), User.PRIVATE_FIELD) for uid in others
        ],
        lambda replies: dict(zip(others, map(bool, replies), strict=True)),
    )
    admitted = {uid: _admitted_queue(reads, uid) for uid in others}
    between = {uid: _between_queue(reads, uid) for uid in others}
    checks = (
        {
            uid: _in_common_queue(reads, uid, viewer=vid, shown=FAMILIAR_SHOWN)
            for uid in others
        }
        if one_server
        else None
    )
    candidates = None if one_server or not others else _in_common_candidates(reads, 0)
    if reads.proven_uid() != vid:
        return {}
    told = [
        uid
        for uid in others
        if not any(between[uid].value[:2])
        and not (private.value[uid] and not admitted[uid].value)
    ]
    if checks is None:
        followees = candidates.value if candidates is not None else []
        checks = {
            uid: _in_common_queue(reads, uid, followees, shown=FAMILIAR_SHOWN)
            for uid in (told if followees else ())
        }
    found: dict[int, list[int]] = {uid: [] for uid in uids}
    for uid in told:
        if uid in checks:
            found[uid] = [person.id for person in checks[uid].value.shown]
    return found


def _admitted_queue(reads: PageReads, owner_id: int) -> Deferred[bool] | None:
    """Queue the read, in the owner's slot, of whether the claimed viewer is among
    the owner's followers: those a private account admitted (`timeline.privacy`).
    Trusted only once the viewer is proven."""
    vid = reads.claimed_uid
    if vid is None or vid == owner_id:
        return None
    return reads.queue(
        lambda pipe: pipe.zscore(keys.followers(owner_id), vid),
        lambda replies: replies[0] is not None,
    )


def _protected(reads: PageReads, owner: User, admitted: Deferred[bool] | None) -> bool:
    """Whether the owner's statuses are hidden from the proven viewer: the account
    is private and the viewer is neither its owner nor an approved follower."""
    if not owner.private:
        return False
    vid = reads.proven_uid()
    if vid is None or vid != reads.claimed_uid:
        return True
    return not (vid == owner.id or (admitted is not None and admitted.value))


def status_published(*, author_id: int, sid: int) -> bool:
    """Whether status `sid` stands among its author's statuses or direct messages
    (`timeline.direct`: its post went through; not since deleted): one round trip
    (both keys are in the author's slot)."""
    replies = pipeline_run(
        lambda pipe: [
            pipe.zscore(keys.posts(author_id), sid),
            pipe.zscore(keys.direct(author_id), sid),
        ],
        confirm=False,
    )
    return any(reply is not None for reply in replies)


def status_get(*, reads: PageReads, sid: int) -> Status | None:
    """One status, or None (also when the viewer blocks its author or is blocked by
    them, or when its author is private and the viewer is not an approved
    follower): two round trips, the second asking the author's slot."""
    found = status_page_get(reads=reads, sid=sid)
    return found.statuses[0] if found is not None else None


def status_page_get(*, reads: PageReads, sid: int) -> Page | None:
    """One status as a page (with its author's card), or None as `status_get`.

    A repost is seen only by who may see its original too: until the sweep of a
    newly private account's reposts has run, the repost still exists, and its
    row carries the original's text (`timeline.privacy`)."""
    hidden = _hidden_queue(reads, mutes=False)
    read = _statuses_queue(reads, [sid] if 0 < sid < MAX_STATUS_ID else []).value
    found = _without_hidden(reads, hidden, read.statuses)
    status = found[0] if found else None
    if status is None:
        return None
    vid = reads.proven_uid()
    cards = {vid: reads.viewer.value.card} if vid is not None else {}
    # A repost's original: gone, or hidden from the viewer (on one server its read
    # checked it; a Cluster's is checked in the second round trip).
    refused = _refused_queue(reads, read.unchecked)
    # Whose privacy the viewer must pass: the author, and a repost's original's.
    owners = [uid for uid in dict.fromkeys(_authors(status)) if uid != vid]
    users = users_queue(reads, uids=owners) if owners else None
    admitted = {uid: _admitted_queue(reads, uid) for uid in owners}
    if refused is not None and status.id in refused.value:
        return None
    status = _without_refused([status], refused)[0] or status  # a Cluster's quote
    for uid in owners:
        owner = users.value.get(uid) if users is not None else None
        if owner is None or (
            not status.direct and _protected(reads, owner, admitted[uid])
        ):
            return None
        cards[uid] = owner.card
    return Page(statuses=[status], next_max_id=None, cards=cards)


def _named_user(
    reads: ReadBatch, username: str, queue_more: Callable[[int], Any]
) -> tuple[User | None, Any]:
    """Read the user a name names together with `queue_more(uid)`'s reads.

    The name's id is this process's guess when it has seen the name (no round trip);
    a guess the store does not confirm costs one more round trip (`accounts.names`).
    """
    for fresh in (False, True):
        uid = user_id_guess(username=username, fresh=fresh)
        if uid is None:
            return None, None
        owner = user_confirm_queue(reads, uid=uid, username=username)
        more = queue_more(uid)
        if owner.value is not None:
            return owner.value, more
    return None, None


def _in_common_candidates(reads: PageReads, owner_id: int) -> Deferred[list] | None:
    """Queue a read of the viewer's newest follows (one past the scan), if any."""
    vid = reads.claimed_uid
    if vid is None or vid == owner_id:
        return None
    scan = settings.PROFILE_IN_COMMON_SCAN
    return reads.queue(
        lambda pipe: pipe.zrevrange(keys.following(vid), 0, scan),
        lambda replies: replies[0],
    )


def _in_common_queue(
    reads: ReadBatch,
    owner_id: int,
    candidates: list | None = None,
    *,
    viewer: int | None = None,
    shown: int = IN_COMMON_SHOWN,
) -> Deferred[InCommon]:
    """Queue the check of which candidates follow the owner, in the owner's slot:
    the given ones, or (one server only) the `viewer`'s newest follows, read by the
    same script, in the round trip that proves the viewer; the first `shown` of
    them are named.

    Its cost is bounded by PROFILE_IN_COMMON_SCAN however many the viewer follows.
    """
    scan = settings.PROFILE_IN_COMMON_SCAN
    source = (
        [keys.following(viewer)]
        if viewer is not None
        else ["", *(candidates or [])[: scan + 1]]
    )

    def build(pipe) -> None:
        _IN_COMMON.queue(
            pipe,
            keys=[keys.followers(owner_id), keys.follower_names(owner_id)],
            args=[shown, scan, *source],
        )

    def parse(replies) -> InCommon:
        count, candidates_read, *pairs = replies[0]
        shown = [
            UserRef(id=int(uid), username=name)
            for uid, name in zip(pairs[::2], pairs[1::2], strict=True)
            if name is not None
        ]
        return InCommon(
            shown=shown,
            count=int(count),
            scanned=min(int(candidates_read), scan),
            partial=int(candidates_read) > scan,
        )

    return reads.queue(build, parse)


def profile_get(
    *, reads: PageReads, username: str, max_id: int | None = None
) -> Profile | None:
    """A profile: counts, a page of statuses, follow state and people in common.

    Two round trips once this process has seen the name (one more the first time).
    """
    size = settings.TIMELINE_PAGE_SIZE
    one_server = not is_cluster()

    def queue_profile(uid: int) -> dict[str, Deferred]:
        def counts(pipe) -> None:
            pipe.zcard(keys.posts(uid))
            pipe.zcard(keys.followers(uid))
            pipe.zcard(keys.following(uid))

        vid = reads.claimed_uid
        return {
            "counts": reads.queue(counts, lambda replies: [int(n) for n in replies]),
            # One server: the page's statuses and the people in common are read
            # with the auth check (used once it proved the viewer): one round trip.
            "window": _window_queue(
                reads, [keys.posts(uid)], max_id, count=size + 1, wanted=size
            )
            if one_server
            else None,
            "ids": None
            if one_server
            else _ids_queue(reads, keys.posts(uid), max_id, size),
            "follows": reads.queue(
                lambda pipe: pipe.zscore(keys.following(vid), uid),
                lambda replies: replies[0] is not None,
            )
            if vid is not None and vid != uid
            else None,
            # Whether the owner follows the viewer, from the viewer's own slot.
            "follows_viewer": reads.queue(
                lambda pipe: pipe.zscore(keys.followers(vid), uid),
                lambda replies: replies[0] is not None,
            )
            if vid is not None and vid != uid
            else None,
            "candidates": None if one_server else _in_common_candidates(reads, uid),
            "in_common": _in_common_queue(reads, uid, viewer=vid)
            if one_server and vid is not None and vid != uid
            else None,
            "blocks": _between_queue(reads, uid),
            "admitted": _admitted_queue(reads, uid),
            "requested": reads.queue(
                lambda pipe: pipe.zscore(keys.follow_requests(uid), vid),
                lambda replies: replies[0] is not None,
            )
            if vid is not None and vid != uid
            else None,
            "requests": reads.queue(
                lambda pipe: pipe.zcard(keys.follow_requests(uid)),
                lambda replies: int(replies[0]),
            )
            if vid == uid
            else None,
            # The first page shows the pinned statuses above the others.
            "pins": _pins_queue(reads, uid) if max_id is None else None,
        }

    # Others' statuses reposted here: none of someone blocked either way.
    hidden = _hidden_queue(reads, mutes=False)
    owner, more = _named_user(reads, username, queue_profile)
    if owner is None:
        return None
    proven = reads.proven_uid() == reads.claimed_uid
    viewer_blocks, blocks_viewer, viewer_mutes = (
        more["blocks"].value if more["blocks"] and proven else (False, False, False)
    )
    # Blocked either way: no statuses, no people in common (`timeline.blocks`);
    # the same for a private account's non-followers (`timeline.privacy`).
    protected = _protected(reads, owner, more["admitted"])
    hide = viewer_blocks or blocks_viewer or protected
    pins = [] if hide or more["pins"] is None else more["pins"].value
    # Read with whatever the page reads next: its second round trip.
    pinned_d = _statuses_queue(reads, pins) if pins else None
    if more["window"] is not None:
        window = more["window"].value
        ids, found = (
            ([], _Found(statuses=[], cards={})) if hide else (window.ids, window.found)
        )
        in_common = more["in_common"] if more["in_common"] and proven else None
        if hide or (in_common is not None and not in_common.value.scanned):
            in_common = None  # a viewer who follows nobody is told nothing
    else:
        ids = [] if hide else more["ids"].value
        found_d = _statuses_queue(reads, ids)
        candidates = more["candidates"].value if more["candidates"] and proven else []
        candidates = [] if hide else candidates
        in_common = (
            _in_common_queue(reads, owner.id, candidates) if candidates else None
        )
        found = found_d.value  # with the people in common: one round trip
    statuses, followers, following = more["counts"].value
    shown = _without_hidden(reads, hidden, found.statuses)
    # The owner's card is read already (fresh: it is the page's own user); on a
    # Cluster the reposted authors' cards cost one more round trip (`_with_cards`),
    # and the reposts' originals are checked in it (`_refused_queue`).
    refused = _refused_queue(reads, found.unchecked)
    cards = dict(found.cards or {})
    if found.cards is None:
        reposted = {s.shown_author_id for s in shown if s is not None} - {owner.id}
        # Quoted authors' too, for their embeds' names, in the round trip that
        # checks the quotes (`_refused_queue`).
        reposted |= {s.quote.author_id for s in shown if s and s.quote} - {owner.id}
        if reposted:
            cards.update(_cards_queue(reads, reposted).value)
    shown = _without_refused(shown, refused)
    cards[owner.id] = owner.card
    pinned = pinned_d.value.statuses if pinned_d is not None else []
    return Profile(
        pinned=[s for s in pinned if s is not None and s.author_id == owner.id],
        user=owner,
        statuses=statuses,
        followers=followers,
        following=following,
        viewer_follows=bool(more["follows"] and proven and more["follows"].value),
        follows_viewer=bool(
            more["follows_viewer"] and proven and more["follows_viewer"].value
        ),
        in_common=in_common.value if in_common is not None else None,
        page=_page(ids, shown, size, cards=cards),
        viewer_blocks=viewer_blocks,
        blocks_viewer=blocks_viewer,
        viewer_mutes=viewer_mutes,
        protected=protected,
        viewer_requested=bool(more["requested"] and proven and more["requested"].value),
        requests=more["requests"].value if more["requests"] and proven else 0,
    )


def _pins_queue(reads: ReadBatch, uid: int) -> Deferred[list[int]]:
    """Queue the read of the ids of the statuses user `uid` pinned, newest pin
    first (`timeline.pins`)."""
    return reads.queue(
        lambda pipe: pipe.zrevrange(keys.pins(uid), 0, -1),
        lambda replies: [int(sid) for sid in replies[0]],
    )


def _between_queue(
    reads: PageReads, owner_id: int
) -> Deferred[tuple[bool, bool, bool]] | None:
    """Queue the reads, in the claimed viewer's slot, of whether they block the
    owner, are blocked by them, mute them."""
    vid = reads.claimed_uid
    if vid is None or vid == owner_id:
        return None

    def build(pipe) -> None:
        pipe.zscore(keys.blocks(vid), owner_id)
        pipe.zscore(keys.blocked_by(vid), owner_id)
        pipe.zscore(keys.mutes(vid), owner_id)

    def parse(replies: list) -> tuple[bool, bool, bool]:
        blocks, blocked_by, mutes = (reply is not None for reply in replies)
        return blocks, blocked_by, mutes

    return reads.queue(build, parse)


def blocked_and_muted_get(
    *,
    reads: PageReads,
    blocked_cursor: int | None = None,
    muted_cursor: int | None = None,
) -> BlockedAndMuted | None:
    """The viewer's blocked and muted people, newest first, a page of each; None when
    the request proves no viewer. Cursors are the times below which a page starts."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    size = settings.TIMELINE_PAGE_SIZE

    def rows_queue(key: str, cursor: int | None) -> Deferred[list[tuple[int, int]]]:
        top = cursor if cursor is not None else "+inf"
        return reads.queue(
            lambda pipe: pipe.zrevrangebyscore(
                key, top, "-inf", start=0, num=size + 1, withscores=True
            ),
            lambda replies: [(int(m), int(s)) for m, s in replies[0]],
        )

    blocked = rows_queue(keys.blocks(vid), blocked_cursor)
    muted = rows_queue(keys.mutes(vid), muted_cursor)
    if reads.proven_uid() is None:
        return None
    shown_blocked, shown_muted = blocked.value[:size], muted.value[:size]
    found = users_queue(
        reads, uids=[u for u, _ in shown_blocked] + [u for u, _ in shown_muted]
    ).value

    def cursor(rows: list[tuple[int, int]], shown: list[tuple[int, int]]):
        return shown[-1][1] - 1 if len(rows) > size else None

    return BlockedAndMuted(
        blocked=[found[u] for u, _ in shown_blocked if u in found],
        muted=[found[u] for u, _ in shown_muted if u in found],
        blocked_cursor=cursor(blocked.value, shown_blocked),
        muted_cursor=cursor(muted.value, shown_muted),
    )


def follow_requests_count_queue(reads: PageReads) -> Deferred[int]:
    """Queue the count of the claimed viewer's pending follow requests (0 for a
    visitor); trust it once the viewer is proven."""
    vid = reads.claimed_uid
    if vid is None:
        return reads.queue(lambda pipe: None, lambda replies: 0)
    return reads.queue(
        lambda pipe: pipe.zcard(keys.follow_requests(vid)),
        lambda replies: int(replies[0]),
    )


def follow_requests_get(
    *, reads: PageReads, cursor: int | None = None
) -> FollowRequests | None:
    """The viewer's pending follow requests, newest first, a page of them; None when
    the request proves no viewer. The cursor is the time (microseconds) below which
    the page starts."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    size = settings.TIMELINE_PAGE_SIZE
    top = cursor if cursor is not None else "+inf"

    def build(pipe) -> None:
        key = keys.follow_requests(vid)
        pipe.zrevrangebyscore(key, top, "-inf", start=0, num=size + 1, withscores=True)
        pipe.zcard(key)

    rows_d = reads.queue(
        build,
        lambda replies: ([(int(m), int(s)) for m, s in replies[0]], int(replies[1])),
    )
    if reads.proven_uid() is None:
        return None
    rows, total = rows_d.value
    shown = rows[:size]
    found = users_queue(reads, uids=[u for u, _ in shown]).value
    return FollowRequests(
        # A requester deleted meanwhile is not listed (their job withdraws it).
        requests=[
            FollowRequest(user=found[u], requested=t / 1_000_000)
            for u, t in shown
            if u in found
        ],
        total=total,
        cursor=shown[-1][1] - 1 if len(rows) > size else None,
    )


# KEYS: a user's followers or following zset (one server only: the user keys and
# the viewer's are built or named here, read undeclared as `_STATUSES_READ` reads
# its cards). ARGV: the window's top score, how many to read (one past the page),
# the halves of a user key around a uid, the claimed viewer's following and
# requested keys ('' for a visitor), then `User.FIELDS`. Returns, as one JSON
# string, the window's uid, score pairs, then for each of the page's people their
# user row, whether the viewer follows them and whether they asked to: a people
# page in the request's first round trip, used once the auth check in the same
# round trip proved the viewer (and their privacy rules let them see it).
_PEOPLE_WINDOW = LuaScript(
    _JSON_LUA
    + """
local rows = redis.call(
  'ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'WITHSCORES', 'LIMIT', 0, ARGV[2])
local up, us, following, requested = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local fields = {unpack(ARGV, 7)}
local users, follows, asked = {}, {}, {}
for i = 1, math.min(#rows / 2, tonumber(ARGV[2]) - 1) do
  local uid = rows[2 * i - 1]
  users[i] = nulls(redis.call('HMGET', up .. uid .. us, unpack(fields)), #fields)
  if following ~= '' then
    follows[i] = redis.call('ZSCORE', following, uid) ~= false
    asked[i] = redis.call('ZSCORE', requested, uid) ~= false
  end
end
return cjson.encode({listed(rows), listed(users), listed(follows), listed(asked)})
"""
)


@dataclass(frozen=True, slots=True)
class _People:
    """A window of a people list: (uid, follow time) pairs, one past the page; and,
    when read with it (one server), the page's users and the claimed viewer's
    follows and requests among them."""

    rows: list[tuple[int, int]]
    users: dict[int, User] | None = None
    follows: set[int] | None = None
    requested: set[int] | None = None


def _people_queue(
    reads: PageReads, key: str, top: int | str, size: int
) -> Deferred[_People]:
    """Queue the read of a people list's window; on one server its people and the
    claimed viewer's follow states ride with it (`_PEOPLE_WINDOW`)."""
    if is_cluster():
        return reads.queue(
            lambda pipe: pipe.zrevrangebyscore(
                key, top, "-inf", start=0, num=size + 1, withscores=True
            ),
            lambda replies: _People(rows=[(int(m), int(s)) for m, s in replies[0]]),
        )
    vid = reads.claimed_uid
    viewer_keys = (
        ("", "") if vid is None else (keys.following(vid), keys.requested(vid))
    )
    args = [top, size + 1, *account_keys.user_prefix(), *viewer_keys, *User.FIELDS]

    def parse(replies: list) -> _People:
        flat, users, follows, asked = orjson.loads(replies[0])
        flat = flat if flat != [None] else []
        rows = [
            (int(m), int(float(t))) for m, t in zip(flat[::2], flat[1::2], strict=True)
        ]
        found: dict[int, User] = {}
        # One row for each of the page's people (not the one past it).
        for (uid, _), values in zip(rows, users, strict=False):
            if (user := User.from_fields(uid, values)) is not None:
                found[uid] = user
        listed = [uid for uid, _ in rows]
        return _People(
            rows=rows,
            users=found,
            follows={u for u, f in zip(listed, follows, strict=False) if f is True},
            requested={u for u, f in zip(listed, asked, strict=False) if f is True},
        )

    return reads.queue(
        lambda pipe: _PEOPLE_WINDOW.queue(pipe, keys=[key], args=args), parse
    )


def people_page(
    *, reads: PageReads, username: str, relation: str, cursor: int | None = None
) -> PeoplePage | None:
    """A page of a user's followers or followees, newest follow first; None: no user.

    The cursor is the follow time (microseconds) below which the next page starts.
    A private account's lists are shown only to its owner and approved followers
    (`protected` otherwise: one round trip, no names shown). On one server the
    page's people are read in the first round trip too.
    """
    key_of = {"followers": keys.followers, "following": keys.following}[relation]
    size = settings.TIMELINE_PAGE_SIZE
    top = cursor if cursor is not None else "+inf"

    def queue_rows(uid: int):
        people = _people_queue(reads, key_of(uid), top, size)
        return people, _admitted_queue(reads, uid), _hidden_queue(reads, mutes=False)

    owner, more = _named_user(reads, username, queue_rows)
    if owner is None:
        return None
    people_d, admitted, hidden = more
    if _protected(reads, owner, admitted):
        return PeoplePage(owner=owner, users=[], next_cursor=None, protected=True)
    people = people_d.value
    rows = people.rows
    shown = rows[:size]
    listed = [m for m, _ in shown]
    vid = reads.proven_uid()
    if people.users is None:
        # A Cluster: the people and the Follow buttons' states (whom of them the
        # viewer follows or asked to, in the viewer's slot) in a second round trip.
        found = users_queue(reads, uids=listed)
        states = _follow_states_queue(reads, listed)
    # Nobody blocked either way gets a button.
    blocked = _hidden_authors(reads, hidden, listed)
    if people.users is None:
        follows, requested = states.value if states is not None else (set(), set())
        people = _People(rows, found.value, follows, requested)
    # On one server read with the window for the claimed viewer: the proven one.
    buttons = vid is not None and bool(listed)
    users = people.users
    follows = people.follows if buttons else set()
    requested = people.requested if buttons else set()
    return PeoplePage(
        owner=owner,
        users=[users[m] for m in listed if m in users],
        next_cursor=shown[-1][1] - 1 if len(rows) > size else None,
        buttons=buttons,
        viewer_follows=frozenset(follows),
        viewer_requested=frozenset(requested),
        no_button=frozenset(blocked) | {vid},
    )


def _follow_states_queue(
    reads: PageReads, uids: list[int]
) -> Deferred[tuple[set[int], set[int]]] | None:
    """Queue the reads, in the proven viewer's slot, of which of these people they
    follow and which they asked to follow; None for a visitor."""
    vid = reads.proven_uid()
    if vid is None or not uids:
        return None

    def build(pipe) -> None:
        pipe.zmscore(keys.following(vid), uids)
        pipe.zmscore(keys.requested(vid), uids)

    def parse(replies: list) -> tuple[set[int], set[int]]:
        follows, requested = (
            {u for u, score in zip(uids, reply, strict=True) if score is not None}
            for reply in replies
        )
        return follows, requested

    return reads.queue(build, parse)


SUGGESTIONS = 5


@dataclass(frozen=True, slots=True)
class _Candidates:
    """People to suggest, best first (`uids`), and which of them the viewer's
    followees follow (`friends`: `timeline.suggestions`) or are among the most
    followed (`popular`)."""

    uids: list[int]
    friends: frozenset[int]
    popular: frozenset[int]


def _candidates_queue(reads: PageReads, shown: int) -> Deferred[_Candidates]:
    """Queue a read of people to suggest: first those the claimed viewer's followees
    follow most (`timeline.suggestions`), then the most followed (a few more than
    are shown: some are followed already)."""
    vid = reads.claimed_uid

    def build(pipe) -> None:
        if vid is not None:
            pipe.zrevrange(keys.suggestions(vid), 0, 4 * shown)
        pipe.zrevrange(keys.popular_users(), 0, 4 * shown)

    def parse(replies: list) -> _Candidates:
        lists = [[int(uid) for uid in reply] for reply in replies]
        return _Candidates(
            uids=list(dict.fromkeys(uid for found in lists for uid in found)),
            friends=frozenset(lists[0]) if len(lists) > 1 else frozenset(),
            popular=frozenset(lists[-1]),
        )

    return reads.queue(build, parse)


def _suggestions_queue(
    reads: PageReads,
    candidates: list[int],
    shown: int = SUGGESTIONS,
    *,
    skip: int = 0,
    accounts: bool = False,
) -> Deferred[list]:
    """Queue the check of which candidates the proven viewer neither follows nor
    dismissed (`timeline.suggestions`): the one rule of every list of suggestions,
    in the viewer's slot, in the round trip that reads the people. The value: the
    `shown` after the first `skip` of them, as Users (`accounts`: AccountStats)."""
    vid = reads.proven_uid()
    top = [uid for uid in candidates if uid != vid]
    if vid is None or not top:
        return reads.queue(lambda pipe: None, lambda replies: [])

    def build(pipe) -> None:
        pipe.zmscore(keys.following(vid), top)
        pipe.zmscore(keys.suggestions_dismissed(vid), top)

    fresh = reads.queue(
        build,
        lambda replies: [
            uid
            for uid, followed, dismissed in zip(top, *replies, strict=True)
            if followed is None and dismissed is None
        ],
    )
    found = accounts_queue(reads, top) if accounts else users_queue(reads, uids=top)

    def pick(_) -> list:
        people = found.value
        return [people[u] for u in fresh.value if u in people][skip : skip + shown]

    return reads.queue(lambda pipe: None, pick)


def suggestions_get(*, reads: PageReads, shown: int = SUGGESTIONS) -> list[User]:
    """People the viewer may want to follow (friends of friends first, then the
    most followed) whom they do not follow yet, nor dismissed, and nobody blocked
    or muted either way; two round trips."""
    candidates = _candidates_queue(reads, shown)
    hidden = _hidden_queue(reads, mutes=True)
    hide = _hidden_authors(reads, hidden, candidates.value.uids)
    fresh = [uid for uid in candidates.value.uids if uid not in hide]
    return _suggestions_queue(reads, fresh, shown).value


def suggested_accounts_get(
    *, reads: PageReads, limit: int, offset: int = 0
) -> list[Suggested] | None:
    """`suggestions_get`'s people for the client API: `limit` of them after the
    first `offset`, with their counts and why each is suggested; None when the
    request proves no viewer. Two round trips."""
    candidates = _candidates_queue(reads, offset + limit)
    hidden = _hidden_queue(reads, mutes=True)
    if reads.proven_uid() is None:
        return None
    found = candidates.value
    hide = _hidden_authors(reads, hidden, found.uids)
    fresh = [uid for uid in found.uids if uid not in hide]
    picked = _suggestions_queue(reads, fresh, limit, skip=offset, accounts=True)
    return [
        Suggested(
            account=stats,
            friends=stats.user.id in found.friends,
            popular=stats.user.id in found.popular,
        )
        for stats in picked.value
    ]


SEARCH_SHOWN = 20
SEARCH_QUERY_MAX = 50


def people_search(*, reads: PageReads, query: str) -> list[User]:
    """Up to SEARCH_SHOWN people whose username or display name starts with the
    query (any case; a leading @ ignored), in the index's order; never someone
    blocked either way by the signed-in viewer. Two round trips: the index's
    entries (with the auth check), then the people they name."""
    prefix = query.strip().removeprefix("@").strip().casefold()[:SEARCH_QUERY_MAX]
    if not prefix or "\x00" in prefix:
        return []
    low = prefix.encode()
    # Every entry is `<text>NUL<uid>`: those of the prefix sort between these two
    # (0xff never appears in UTF-8).
    entries = reads.queue(
        lambda pipe: pipe.zrangebylex(
            account_keys.names_index(),
            b"[" + low,
            b"(" + low + b"\xff",
            start=0,
            num=3 * SEARCH_SHOWN,
        ),
        lambda replies: [entry.rpartition("\x00") for entry in replies[0]],
    )
    hidden = _hidden_queue(reads, mutes=False)
    uids: list[int] = []
    for _, _, uid in entries.value:
        if uid.isdigit() and int(uid) not in uids:
            uids.append(int(uid))
    hide = _hidden_authors(reads, hidden, uids)
    uids = [uid for uid in uids if uid not in hide][: 2 * SEARCH_SHOWN]
    found = users_queue(reads, uids=uids).value
    # An entry a rename left behind (`accounts.services.profile_update`) names a
    # user whose names no longer match: left out.
    matches = [
        found[uid]
        for uid in uids
        if uid in found
        and any(
            text.casefold().startswith(prefix)
            for text in (found[uid].username, found[uid].name)
        )
    ]
    return matches[:SEARCH_SHOWN]


# Notifications (`timeline.notifications`). KEYS: the viewer's groups, rows and read
# mark. ARGV: the highest place wanted ('+inf', or '(<place>' below a cursor), how
# many. Returns the read mark, the top group's place ('' for none), then group,
# place, row triples, newest first: a page's groups with their rows in one call.
_NOTIFICATIONS_READ = LuaScript(
    """
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf',
                        'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local out = {redis.call('GET', KEYS[3]) or '0', top[2] or ''}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], rows[i]) or ''
end
return out
"""
)

# One server only: `_NOTIFICATIONS_READ`'s groups and, for each group's actors and
# status, what the page shows of them, read in the same script (user and status keys
# built here and read undeclared, as `_STATUSES_READ` reads its cards). KEYS: as
# `_NOTIFICATIONS_READ`. ARGV: its two, the halves of a user key and of a status key
# around an id, the claimed viewer's following key, how many user fields, the user
# fields, then the status fields. Returns one JSON string: the read mark, the newest
# place ('' for none), the group, place, row triples, then uid, row pairs of the
# groups' actors, sid, row pairs of their statuses, and those authors of mentions,
# replies and poll ends whom the viewer follows: the page in the request's first
# round trip, used once the auth check in the same round trip proved the viewer.
_NOTIFICATIONS_PAGE = LuaScript(
    _JSON_LUA
    + """
local rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf',
                        'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local top = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local up, us, sp, ss, following = ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local nu = tonumber(ARGV[8])
local user_fields, status_fields = {unpack(ARGV, 9, 8 + nu)}, {unpack(ARGV, 9 + nu)}
local function hash_row(key, fields)
  return nulls(redis.call('HMGET', key, unpack(fields)), #fields)
end
local function id_of(x)  -- rows hold ids as strings; an old one may hold a number
  if type(x) == 'number' then return string.format('%d', x) end
  if type(x) == 'string' and x ~= '' then return x end
end
local groups, users, statuses, follows = {}, {}, {}, {}
local seen = {}
for i = 1, #rows, 2 do
  local row = redis.call('HGET', KEYS[2], rows[i]) or ''
  groups[#groups + 1] = rows[i]
  groups[#groups + 1] = rows[i + 1]
  groups[#groups + 1] = row
  local ok, g = pcall(cjson.decode, row)
  if ok and type(g) == 'table' then
    local sid = id_of(g.s)
    if sid and not seen['s' .. sid] then
      seen['s' .. sid] = true
      statuses[#statuses + 1] = sid
      statuses[#statuses + 1] = hash_row(sp .. sid .. ss, status_fields)
    end
    local says = g.k == 'mention' or g.k == 'reply' or g.k == 'poll'  -- _AUTHORED
    for _, actor in ipairs(type(g.a) == 'table' and g.a or {}) do
      local uid = id_of(actor)
      if uid and not seen['u' .. uid] then
        seen['u' .. uid] = true
        users[#users + 1] = uid
        users[#users + 1] = hash_row(up .. uid .. us, user_fields)
      end
      if uid and says and not seen['f' .. uid] then
        seen['f' .. uid] = true
        if redis.call('ZSCORE', following, uid) then
          follows[#follows + 1] = uid
        end
      end
    end
  end
end
return cjson.encode({redis.call('GET', KEYS[3]) or '0', top[2] or '',
                     listed(groups), listed(users), listed(statuses), listed(follows)})
"""
)


def _notifications_page_queue(
    reads: PageReads, store: list[str], vid: int, top: str, size: int
) -> Deferred[tuple[tuple[int, int | None, list[Notification]], _NotificationData]]:
    """Queue `_NOTIFICATIONS_PAGE` on the claimed viewer's `store` (its groups, rows
    and read mark) for the claimed viewer (one server)."""
    fields = [len(User.FIELDS), *User.FIELDS, *Status.IMMUTABLE]
    args = [
        top,
        size + 1,
        *account_keys.user_prefix(),
        *keys.around_id(keys.status),
        keys.following(vid),
        *fields,
    ]

    def parse(replies: list):
        mark, newest, flat, users, statuses, follows = orjson.loads(replies[0])
        flat = flat if flat != [None] else []
        rows = _notification_rows([[mark, newest, *flat]])
        people: dict[int, User] = {}
        if users != [None]:
            for uid, values in zip(users[::2], users[1::2], strict=True):
                if (user := User.from_fields(int(uid), values)) is not None:
                    people[user.id] = user
        found: dict[int, Status] = {}
        if statuses != [None]:
            for sid, values in zip(statuses[::2], statuses[1::2], strict=True):
                if (status := Status.from_read(int(sid), values)) is not None:
                    found[status.id] = status
        followed = {int(uid) for uid in follows if uid is not None}
        return rows, _NotificationData(people, found, followed)

    return reads.queue(
        lambda pipe: _NOTIFICATIONS_PAGE.queue(pipe, keys=store, args=args), parse
    )


@dataclass(frozen=True, slots=True)
class _NotificationData:
    """What a notifications page shows of its groups' actors and statuses, read
    with the groups (`_NOTIFICATIONS_PAGE`): users and statuses by id, and the
    authors of mentions, replies and poll ends whom the viewer follows."""

    people: dict[int, User]
    found: dict[int, Status]
    followed: set[int]


# KEYS: the groups, the read mark. How many groups are above the mark (unread).
_NOTIFICATIONS_UNREAD = LuaScript(
    """
local mark = redis.call('GET', KEYS[2]) or '0'
return redis.call('ZCOUNT', KEYS[1], '(' .. mark, '+inf')
"""
)

# KEYS: the places, the groups, the read mark. ARGV: at most how many, `all` when
# no kind is left out (a damaged row then counts one, as the badge counts it), the
# actor whose events alone count ('' for everyone's: a group then counts one if it
# names them, as the v1 list with `account_id` shows it), then a kind and how its
# group counts (`1`: as one; `n`: as its every event, older
# actors too), for each kind counted. How many there are above the mark, up to
# that many: the client API's unread counts, v1's (events) and v2's (groups, but a
# type `grouped_types[]` leaves out: its events, as its list shows them), of the
# types they ask. Reads the groups oldest first, a batch at a time (the places are
# unique: the next batch starts above the last one read), and stops once it
# reached that many: a group that counts nothing (a kind no Mastodon type lists, a
# row gone) takes no place of the limit. O(unread groups) at most, at most
# NOTIFICATIONS_CAP.
_NOTIFICATIONS_UNREAD_COUNTED = LuaScript(
    """
local most, all, actor = tonumber(ARGV[1]), ARGV[2] == 'all', ARGV[3]
local how = {}
for i = 4, #ARGV - 1, 2 do how[ARGV[i]] = ARGV[i + 1] end
local function names(g)
  if type(g.a) ~= 'table' then return false end
  for _, a in ipairs(g.a) do
    if tostring(a) == actor then return true end
  end
  return false
end
local above = '(' .. (redis.call('GET', KEYS[3]) or '0')
local batch = math.max(1, math.min(most, 256))
local n = 0
while true do
  local found = redis.call(
    'ZRANGEBYSCORE', KEYS[1], above, '+inf', 'WITHSCORES', 'LIMIT', 0, batch)
  if #found == 0 then return n end
  local groups = {}
  for i = 1, #found, 2 do groups[#groups + 1] = found[i] end
  for _, row in ipairs(redis.call('HMGET', KEYS[2], unpack(groups))) do
    if row then
      local ok, g = pcall(cjson.decode, row)
      if ok and type(g) == 'table' then
        local counts = how[g.k]
        if counts and actor ~= '' then
          if names(g) then n = n + 1 end
        elseif counts == '1' then
          n = n + 1
        elseif counts == 'n' then
          n = n + math.max(1, tonumber(g.n) or 1)
        end
      elseif all and actor == '' then
        n = n + 1
      end
      if n >= most then return most end
    end
  end
  if #groups < batch then return n end
  above = '(' .. found[#found]
end
"""
)

NOTIFICATION_ACTORS_SHOWN = 3


def notifications_unread_counted_queue(
    reads: PageReads,
    *,
    most: int,
    counts: dict[str, bool],
    every_kind: bool,
    actor: int | None = None,
) -> Deferred[int] | None:
    """Queue how many unread notifications the claimed viewer has, at most `most`
    (None for a visitor): of the kinds in `counts` only, each group counted as
    one or (`counts[kind]` True) as its every event; `every_kind` when no kind is
    left out; with `actor`, that account's events alone (one a group that names
    them). Trust it once the viewer is proven. One script call in their slot,
    O(unread groups) at most."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    args: list = [int(most), "all" if every_kind else "", actor or ""]
    for kind, each in sorted(counts.items()):
        args += [kind, "n" if each else "1"]
    return reads.queue(
        lambda pipe: _NOTIFICATIONS_UNREAD_COUNTED.queue(
            pipe,
            keys=[
                keys.notifications(vid),
                keys.notification_groups(vid),
                keys.notifications_read(vid),
            ],
            args=args,
        ),
        lambda replies: int(replies[0]),
    )


def notifications_unread_queue(reads: PageReads) -> Deferred[int] | None:
    """Queue the count of the claimed viewer's unread notification groups (None for
    a visitor); trust it once the viewer is proven. One script call, O(log n)."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    return reads.queue(
        lambda pipe: _NOTIFICATIONS_UNREAD.queue(
            pipe,
            keys=[keys.notifications(vid), keys.notifications_read(vid)],
            args=[],
        ),
        lambda replies: int(replies[0]),
    )


def notifications_top_queue(reads: PageReads) -> Deferred[int | None] | None:
    """Queue the place of the claimed viewer's newest notification group, shown or
    not (None when there is none; the call None for a visitor); trust it once the
    viewer is proven. One command in their slot."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    return reads.queue(
        lambda pipe: (pipe.zrevrange(keys.notifications(vid), 0, 0, withscores=True),),
        lambda replies: int(replies[0][0][1]) if replies[0] else None,
    )


def markers_queue(reads: PageReads) -> Deferred[dict[str, Marker]] | None:
    """Queue a read of the claimed viewer's markers (`timeline.markers`), by
    timeline, those saved (None for a visitor); trust it once the viewer is
    proven. One HMGET and one GET in their slot, nothing written."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    return reads.queue(
        lambda pipe: (
            pipe.hmget(keys.markers(vid), Marker.FIELDS),
            pipe.get(keys.notifications_read(vid)),
        ),
        lambda replies: Marker.from_fields(replies[0], replies[1]),
    )


# Parsed once a process (lru_cache: thread-safe, bounded), as `domain` parses
# mentions and `rendering` builds markup: each key is the whole stored value (no
# entry can go stale), and the page parses the same values on every visit.
@lru_cache(maxsize=4096)
def _notification_parsed(group: str, place: str, row: str) -> Notification | None:
    # A pure function of what the store holds (the group, its place, its row): a
    # reader's every visit parses the same groups again, but those an event moved.
    return Notification.from_json(group, float(place), row)


def _notification_rows(replies: list) -> tuple[int, int | None, list[Notification]]:
    mark, top, *rows = replies[0]
    groups = [
        found
        for group, place, row in zip(rows[::3], rows[1::3], rows[2::3], strict=True)
        if (found := _notification_parsed(group, place, row)) is not None
    ]
    return int(float(mark)), int(float(top)) if top else None, groups


def notifications_get(
    *, reads: PageReads, cursor: int | None = None
) -> Notifications | None:
    """A page of the viewer's notifications, newest first; None when the request
    proves no viewer. One round trip on one server (`_NOTIFICATIONS_PAGE`: the
    groups, their actors' names and their statuses, beside the auth check and the
    viewer's blocks and mutes); on a Cluster two: the groups, then the actors'
    names and the statuses. Groups about a status that is gone, and actors who are
    deleted, blocked either way or muted, are left out at read (a GET writes
    nothing); so are mentions, replies and poll ends by a private author the viewer
    does not follow (`_AUTHORED`)."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    size = settings.TIMELINE_PAGE_SIZE
    top = f"({cursor}" if cursor is not None else "+inf"
    store = [
        keys.notifications(vid),
        keys.notification_groups(vid),
        keys.notifications_read(vid),
    ]
    page = (
        _notifications_page_queue(reads, store, vid, top, size)
        if not is_cluster()
        else None
    )
    rows = (
        reads.queue(
            lambda pipe: _NOTIFICATIONS_READ.queue(
                pipe, keys=store, args=[top, size + 1]
            ),
            _notification_rows,
        )
        if page is None
        else None
    )
    hidden = _hidden_queue(reads, mutes=True)
    if reads.proven_uid() != vid:
        return None
    (mark, newest, groups), data = (rows.value, None) if page is None else page.value
    shown = groups[:size]
    items = _notification_items(
        reads,
        hidden,
        shown,
        mark=mark,
        named=NOTIFICATION_ACTORS_SHOWN,
        counted=False,
        data=data,
    )
    return Notifications(
        items=items,
        cursor=shown[-1].place if len(groups) > size else None,
        newest=newest,
        read_up_to=mark,
    )


def _authors_visible_queue(
    reads: PageReads, authors: set[int]
) -> tuple[Callable[[int], bool], Callable[[], dict[int, Card]]]:
    """Queue the reads that tell which of these authors the proven viewer may see:
    not a private account that has not approved them (`timeline.privacy`), not a
    deleted one. Once sent: whether an author's statuses may be shown (`direct`:
    a direct message, which its audience sees whoever they follow; that the viewer
    is in it was checked at its read, `_for_viewer`), and the authors' cards (the
    viewer's own included), read with them on any server."""
    vid = reads.proven_uid()
    ask = sorted(authors - {vid})
    users = users_queue(reads, uids=ask) if ask else None
    admitted = (
        reads.queue(
            lambda pipe: [pipe.zscore(keys.followers(a), vid) for a in ask],
            lambda replies: {a for a, s in zip(ask, replies, strict=True) if s},
        )
        if vid is not None and ask
        else None
    )

    def visible(author: int, direct: bool = False) -> bool:
        if author == vid:
            return True
        owner = users.value.get(author) if users is not None else None
        if owner is None:
            return False
        if direct:
            return True
        approved = admitted is not None and author in admitted.value
        return not _hidden_by_privacy(author, owner.private, vid, approved)

    def cards() -> dict[int, Card]:
        viewer = reads.viewer.value
        own = {viewer.id: viewer.card} if viewer.is_authenticated else {}
        found = users.value if users is not None else {}
        return {**own, **{uid: user.card for uid, user in found.items()}}

    return visible, cards


def _seen(
    reads: PageReads,
    hidden: Deferred[_Hidden] | None,
    visible: Callable[[int, bool], bool],
    found: list[Status | None],
) -> list[Status | None]:
    """A thread's statuses, None in place of each gone or hidden from the viewer:
    by a block either way (`_without_hidden`; mutes do not hide a thread), or by
    its author's privacy or deletion (`visible`, `_authors_visible_queue`)."""
    shown = _without_hidden(reads, hidden, found)
    return [
        s if s is not None and visible(s.author_id, s.direct) else None for s in shown
    ]


@dataclass(frozen=True, slots=True)
class QuotesPage:
    """A page of the statuses quoting one (`timeline.quotes`), newest first, with
    their authors' cards; `next_max_id`: where the next (older) page starts (None:
    the last); `prev_min_id`: where a newer page starts (None on an empty page)."""

    status: Status
    statuses: list[Status]
    next_max_id: int | None
    cards: dict[int, Card]
    prev_min_id: int | None = None


def quotes_get(
    *,
    reads: PageReads,
    sid: int,
    max_id: int | None = None,
    floor: int | None = None,
    from_oldest: bool = False,
    limit: int = 0,
) -> QuotesPage | None:
    """The statuses quoting status `sid` that the viewer may see, newest first,
    below `max_id` and above `floor` (the API's `since_id`: the newest page above
    it; with `from_oldest`, its `min_id`: the page just above it), `limit`: how
    many, else TIMELINE_PAGE_SIZE; None when the status is gone or hidden from the
    viewer (as `thread_get`).

    Two round trips, as a status page: the first reads the status and the page's
    quote ids with their authors (`social.reply_member`'s members), the second
    their statuses with whether each author is private and has approved the viewer
    (quotes of a private account are for its approved followers, as its other
    statuses). A page that leaves some out is shorter, never a round trip more."""
    size = limit or settings.TIMELINE_PAGE_SIZE
    hidden = _hidden_queue(reads, mutes=False)
    valid = 0 < sid < MAX_STATUS_ID
    found_d = _statuses_queue(reads, [sid] if valid else [])
    top = f"({max_id}" if max_id is not None else "+inf"
    bottom = f"({floor}" if floor is not None else "-inf"

    def parse(replies: list) -> list[tuple[int, int]]:
        if not valid:
            return []
        pairs = (member.partition(":") for member in replies[0])
        found = [(int(q), int(u or 0)) for q, _, u in pairs]
        # Read upwards from `floor`: the page just above it, newest first; one
        # more read above it says whether there is a newer page.
        return found[::-1] if from_oldest else found

    def read(pipe) -> None:
        if not valid:
            return None
        if from_oldest:
            return pipe.zrangebyscore(
                keys.quotes(sid), bottom, top, start=0, num=size + 1
            )
        return pipe.zrevrangebyscore(
            keys.quotes(sid), top, bottom, start=0, num=size + 1
        )

    quotes_d = reads.queue(read, parse)
    found = _without_hidden(reads, hidden, found_d.value.statuses)
    status = found[0] if found else None
    if status is None or status.repost_of is not None:
        return None
    rows = quotes_d.value
    more = len(rows) > size
    if from_oldest:
        rows = rows[-size:]  # the newest read is the one past the page
    refused = _refused_queue(reads, found_d.value.unchecked)
    visible, cards = _authors_visible_queue(
        reads, {status.author_id} | {uid for _, uid in rows[:size]}
    )
    others = _statuses_queue(reads, [q for q, _ in rows[:size]]) if rows else None
    vid = reads.claimed_uid
    # A Cluster's rows are unchecked: whether the viewer muted this status's
    # author (one server's row script reads it, `quote_seen`), in this round trip.
    muting = (
        reads.queue(
            lambda pipe: pipe.zscore(keys.mutes(vid), status.author_id),
            lambda replies: replies[0],
        )
        if rows and vid is not None and vid != status.author_id and is_cluster()
        else None
    )
    if not visible(status.author_id, status.direct):
        return None
    if refused is not None and status.id in refused.value:
        return None
    shown = _seen(reads, hidden, visible, others.value.statuses) if others else []
    # Each quotes this status, which the viewer may see (a block either way hides
    # it): a Cluster's read, which could not check, says so, or that they muted
    # its author (one server's checked it in its script).
    said = "accepted"
    if muting is not None and muting.value is not None:
        said = "muted_account" if reads.proven_uid() == vid else "unauthorized"
    quoting = [
        replace(s, quote_state=said)
        if s.quote_state is None
        and s.quote is not None
        and s.quote.id == sid
        and not s.quote.revoked
        else s
        for s in shown
        if s is not None
    ]
    page = rows[:size]
    return QuotesPage(
        status=status,
        statuses=quoting,
        # Read upwards, a page below this one is known to be there when it read
        # from a floor; read downwards, when it read one past the page.
        next_max_id=page[-1][0] if page and (more or from_oldest) else None,
        prev_min_id=page[0][0] if page else None,
        cards=cards(),
    )


def thread_get(
    *, reads: PageReads, sid: int, after: int | None = None
) -> Thread | None:
    """A status page: the status (as `status_get`), what it replies to, and a page
    of its replies, oldest first, from after reply id `after`; None when the status
    is gone or hidden from the viewer.

    Two round trips: the first reads the status and its replies' ids with their
    authors (`social.reply_member`); its hash names its ancestors and theirs, so
    the second reads their statuses with whether each author is private and has
    approved the viewer, and whether the viewer bookmarked (or, theirs, pinned)
    the status.
    """
    size = settings.TIMELINE_PAGE_SIZE
    hidden = _hidden_queue(reads, mutes=False)
    valid = 0 < sid < MAX_STATUS_ID
    found_d = _statuses_queue(reads, [sid] if valid else [])
    low = f"({after}" if after is not None else "-inf"

    def parse_replies(replies: list) -> list[tuple[int, int]]:
        if not valid:
            return []
        pairs = (member.partition(":") for member in replies[0])
        return [(int(s), int(u or 0)) for s, _, u in pairs]

    replies_d = reads.queue(
        lambda pipe: (
            pipe.zrangebyscore(keys.replies(sid), low, "+inf", start=0, num=size + 1)
            if valid
            else None
        ),
        parse_replies,
    )
    found = _without_hidden(reads, hidden, found_d.value.statuses)
    status = found[0] if found else None
    if status is None:
        return None
    around = (
        [(status.reply_to, status.reply_uid or 0), *status.thread]
        if status.reply_to is not None
        else []
    )
    replies = replies_d.value
    rows = around + replies[:size]
    # A repost's page shows its original's author: asked about, and carded, too;
    # a Cluster checks here that its original is there (`_refused_queue`).
    refused = _refused_queue(reads, found_d.value.unchecked)
    visible, cards = _authors_visible_queue(
        reads,
        {status.author_id, status.shown_author_id} | {uid for _, uid in rows},
    )
    others = _statuses_queue(reads, [s for s, _ in rows]) if rows else None
    marked = bookmarked_queue(reads, [status])
    pinned = pinned_queue(reads, [status])
    # A repost stored before conversations names none: its original's, read first
    # (one round trip more, for such a repost only).
    older = status.repost_of is not None and status.conversation is None
    original = _statuses_queue(reads, [status.repost_of]) if older else None
    muted = muted_queue(reads, [status]) if not older else None
    if not visible(status.author_id, status.direct) or not visible(
        status.shown_author_id, status.direct
    ):
        return None
    if original is not None:
        muted = muted_queue(reads, [s for s in original.value.statuses if s])
    if refused is not None and status.id in refused.value:
        return None
    status = _without_refused([status], refused)[0] or status  # a Cluster's quote
    shown = _seen(reads, hidden, visible, others.value.statuses) if others else []
    shown = _quotes_settled(reads, shown)  # a Cluster's, one round trip more
    return Thread(
        status=status,
        ancestors=list(reversed(shown[: len(around)])),
        replies=[s for s in shown[len(around) :] if s is not None],
        next_after=replies[size - 1][0] if len(replies) > size else None,
        bookmarked=marked is not None and bool(marked.value),
        pinned=pinned is not None and bool(pinned.value),
        muted=muted is not None and bool(muted.value),
        cards=cards(),
    )


# A status's context in the client API stops where Mastodon's does for a signed-out
# viewer (`Api::V1::Statuses::ContextsController`: the nearest 40 ancestors, the
# first 60 descendants depth-first, 20 levels deep); here for every viewer, which
# bounds a request's round trips (Mastodon gives a signed-in one up to 4,096 from
# one SQL query; each level here is a round trip).
CONTEXT_ANCESTORS = 40
CONTEXT_DESCENDANTS = 60
CONTEXT_DEPTH = 20
# The reads of ancestors past those a status's hash names: each hop reads the
# farthest known one, whose hash names THREAD_DEPTH more (fewer found when some of
# them are deleted: the walk stops there rather than spend more round trips).
CONTEXT_HOPS = (CONTEXT_ANCESTORS - 1) // THREAD_DEPTH


def _replies_queue(
    reads: ReadBatch, wanted: dict[int, int]
) -> Deferred[dict[int, list[tuple[int, int]]]]:
    """Queue a read of the oldest replies of these statuses (sid -> how many),
    each as (reply sid, its author), oldest first (`keys.replies`: scored by id,
    as Mastodon orders a thread)."""
    asked = list(wanted)

    def build(pipe) -> None:
        for sid in asked:
            pipe.zrange(keys.replies(sid), 0, wanted[sid] - 1)

    def parse(replies: list) -> dict[int, list[tuple[int, int]]]:
        out = {}
        for sid, members in zip(asked, replies, strict=True):
            pairs = (member.partition(":") for member in members)
            out[sid] = [(int(s), int(u or 0)) for s, _, u in pairs]
        return out

    return reads.queue(build, parse)


def _depth_first(root: int, children: dict[int, list[tuple[int, int]]]) -> list[int]:
    """The statuses below `root` depth-first (each followed by its own replies),
    the first CONTEXT_DESCENDANTS of them: Mastodon's order (its query sorts by
    the path of ids from the root) and its cut (made before the viewer's
    filter)."""
    order: list[int] = []
    stack = [sid for sid, _ in reversed(children.get(root, []))]
    while stack and len(order) < CONTEXT_DESCENDANTS:
        sid = stack.pop()
        order.append(sid)
        stack.extend(child for child, _ in reversed(children.get(sid, [])))
    return order


def _chain_of(status: Status) -> list[tuple[int, int]]:
    """What a status's hash names of its ancestors, nearest first, with their
    authors: its parent and the parent's own (THREAD_DEPTH in all, fewer near
    the root)."""
    if status.reply_to is None:
        return []
    return [(status.reply_to, status.reply_uid or 0), *status.thread]


def context_get(*, reads: PageReads, sid: int) -> Context | None:
    """A status (as `status_get`) with its thread for the client API: its nearest
    CONTEXT_ANCESTORS ancestors and its first CONTEXT_DESCENDANTS descendants, at
    most CONTEXT_DEPTH levels below it, those the viewer may see (`_seen`, as
    `thread_get`); None when the status is gone or hidden from the viewer.

    Ancestors and descendants are walked whoever wrote each (as Mastodon's tree
    queries do): a hidden reply is left out and the replies to it are shown. A
    deleted one's replies no longer hang from it once its unlink job has run
    (Mastodon nullifies their `in_reply_to_id`).

    Round trips: the first reads the status and its direct replies; then one a
    level of replies below (each reads all of a level's reply sets at once, their
    oldest first, only as many as can be among the first CONTEXT_DESCENDANTS),
    each also reading the ancestors known so far: the farthest one's hash names
    THREAD_DEPTH more; then one for the statuses not read yet and their
    authors' privacy. At most 1 + max(CONTEXT_DEPTH - 1, CONTEXT_HOPS) + 1
    (21): the ancestors' CONTEXT_HOPS (9) ride in the levels' round trips, and
    take their own where there are fewer levels (a leaf with 40 ancestors: 11);
    `_without_hidden` adds one (each time it is asked) for a viewer whose blocks
    are too many to read whole. A level reads at
    most CONTEXT_DESCENDANTS of its statuses' replies each (fewer the later a
    status comes in the order), about 1,800 members at worst.
    """
    hidden = _hidden_queue(reads, mutes=False)
    valid = 0 < sid < MAX_STATUS_ID
    found_d = _statuses_queue(reads, [sid] if valid else [])
    level_d = _replies_queue(reads, {sid: CONTEXT_DESCENDANTS}) if valid else None
    found = _without_hidden(reads, hidden, found_d.value.statuses)
    status = found[0] if found else None
    if status is None or level_d is None:
        return None
    # Whether the viewer may see the status itself rides in the next round trip;
    # the walk stops there when not.
    own_visible, _ = _authors_visible_queue(
        reads, {status.author_id, status.shown_author_id}
    )
    refused = _refused_queue(reads, found_d.value.unchecked)

    def shown() -> bool:
        if refused is not None and status.id in refused.value:
            return False
        return own_visible(status.author_id, status.direct) and own_visible(
            status.shown_author_id, status.direct
        )

    # Ancestors, nearest first: a hash names THREAD_DEPTH of them; fewer when
    # they reach the root.
    chain = _chain_of(status)[:CONTEXT_ANCESTORS]
    complete = len(chain) < THREAD_DEPTH
    read: dict[int, Status | None] = {}
    # Descendants: each status's replies read so far, and the newest level's.
    children: dict[int, list[tuple[int, int]]] = dict(level_d.value)
    level = [reply for reply, _ in children[sid]]
    depth, hops = 1, 0
    while True:
        hop, hop_sids = None, [a for a, _ in chain if a not in read]
        if not complete and len(chain) < CONTEXT_ANCESTORS and hops < CONTEXT_HOPS:
            hop = _statuses_queue(reads, hop_sids)
            hops += 1
        below = None
        if level and depth < CONTEXT_DEPTH:
            # A reply can be among the first CONTEXT_DESCENDANTS only with fewer
            # than that before it: its parent's place, and its older siblings.
            place = {s: i for i, s in enumerate(_depth_first(sid, children))}
            wanted = {
                s: CONTEXT_DESCENDANTS - 1 - place[s]
                for s in level
                if place.get(s, CONTEXT_DESCENDANTS) < CONTEXT_DESCENDANTS - 1
            }
            below = _replies_queue(reads, wanted) if wanted else None
        if hop is None and below is None:
            break
        if not shown():  # sends this round trip
            return None
        if hop is not None:
            read.update(zip(hop_sids, hop.value.statuses, strict=True))
            chain, complete = _chain_longer(chain, read)
        if below is not None:
            children.update(below.value)
            level = [r for s in below.value for r, _ in below.value[s]]
            depth += 1
        else:
            level = []
    descendants = _depth_first(sid, children)
    unread = [a for a, _ in chain if a not in read] + descendants
    author_of = {r: uid for replies in children.values() for r, uid in replies}
    authors = {uid for _, uid in chain} | {author_of[s] for s in descendants}
    visible, _ = _authors_visible_queue(reads, authors)
    rest = _statuses_queue(reads, unread) if unread else None
    if not shown():  # sends the last round trip
        return None
    if rest is not None:
        read.update(zip(unread, rest.value.statuses, strict=True))
    both = _quotes_settled(  # a Cluster's, one round trip more
        reads,
        _seen(
            reads,
            hidden,
            visible,
            [read[a] for a, _ in chain] + [read[s] for s in descendants],
        ),
    )
    ancestors, below_shown = both[: len(chain)], both[len(chain) :]
    return Context(
        status=status,
        ancestors=[s for s in reversed(ancestors) if s is not None],
        descendants=[s for s in below_shown if s is not None],
    )


def _chain_longer(
    chain: list[tuple[int, int]], read: dict[int, Status | None]
) -> tuple[list[tuple[int, int]], bool]:
    """The ancestors known, nearest first, made longer by the farthest one read
    that still stands (its hash names the next THREAD_DEPTH), and whether they
    now reach the root (or a run of deleted ones that hides the rest)."""
    for i in range(len(chain) - 1, -1, -1):
        found = read.get(chain[i][0])
        if found is None:
            continue
        above = _chain_of(found)
        longer = [*chain[: i + 1], *above][:CONTEXT_ANCESTORS]
        if len(longer) <= len(chain):
            return chain, True
        return longer, len(above) < THREAD_DEPTH
    return chain, True


def reactors_page(
    *,
    reads: PageReads,
    sid: int,
    relation: str,
    cursor: int | None = None,
    size: int | None = None,
) -> Reactors | None:
    """Who liked (`relation` "likes") or reposted ("reposts") a status, newest first,
    from below `cursor`, `size` of them (a page's, TIMELINE_PAGE_SIZE, by default),
    without the people the viewer blocks or is blocked by; None when the status is
    gone or hidden from the viewer. Two round trips."""
    key_of = {"likes": keys.likes, "reposts": keys.reposts}[relation]
    size = size or settings.TIMELINE_PAGE_SIZE
    top = cursor if cursor is not None else "+inf"
    hidden = _hidden_queue(reads, mutes=False)
    valid = 0 < sid < MAX_STATUS_ID
    found_d = _statuses_queue(reads, [sid] if valid else [])
    rows_d = reads.queue(
        lambda pipe: (
            pipe.zrevrangebyscore(
                key_of(sid), top, "-inf", start=0, num=size + 1, withscores=True
            )
            if valid
            else None
        ),
        lambda replies: [(int(m), int(s)) for m, s in replies[0]] if valid else [],
    )
    found = _without_hidden(reads, hidden, found_d.value.statuses)
    status = found[0] if found else None
    if status is None:
        return None
    rows = rows_d.value
    shown = rows[:size]
    # Whose privacy the viewer must pass: the author, and a repost's original's.
    owners = [
        uid for uid in dict.fromkeys(_authors(status)) if uid != reads.proven_uid()
    ]
    users = users_queue(reads, uids={m for m, _ in shown} | set(owners))
    admitted = {uid: _admitted_queue(reads, uid) for uid in owners}
    refused = _refused_queue(reads, found_d.value.unchecked)  # a Cluster's repost
    if refused is not None and status.id in refused.value:
        return None
    for uid in owners:
        owner = users.value.get(uid)
        if owner is None or (
            not status.direct and _protected(reads, owner, admitted[uid])
        ):
            return None
    hide = _hidden_authors(reads, hidden, [m for m, _ in shown])
    return Reactors(
        status=status,
        relation=relation,
        users=[users.value[m] for m, _ in shown if m in users.value and m not in hide],
        next_cursor=shown[-1][1] - 1 if len(rows) > size else None,
    )


# KEYS: per user, their hash, posts, followers and following (one slot each).
# ARGV: the user hash's fields (`User.FIELDS`). Returns per user their fields, then
# the three counts and the newest status's id (false: none): a page's authors in
# one command on one server (one a slot on a Cluster), not five each.
_ACCOUNTS_READ = LuaScript(
    """
local out = {}
for i = 1, #KEYS, 4 do
  local newest = redis.call('ZREVRANGE', KEYS[i + 1], 0, 0)[1] or false
  out[#out + 1] = {
    redis.call('HMGET', KEYS[i], unpack(ARGV)),
    redis.call('ZCARD', KEYS[i + 1]),
    redis.call('ZCARD', KEYS[i + 2]),
    redis.call('ZCARD', KEYS[i + 3]),
    newest,
  }
end
return out
"""
)


def accounts_queue(
    reads: ReadBatch, uids: Iterable[int]
) -> Deferred[dict[int, AccountStats]]:
    """Queue a read of these users with their counts (the client API's Account);
    the value maps uid -> AccountStats for those that exist."""
    uids = sorted(set(uids))
    groups = slot_groups(uids, account_keys.user, max(len(uids), 1))

    def build(pipe) -> None:
        for group in groups:
            _ACCOUNTS_READ.queue(
                pipe,
                keys=[
                    k
                    for uid in group
                    for k in (
                        account_keys.user(uid),
                        keys.posts(uid),
                        keys.followers(uid),
                        keys.following(uid),
                    )
                ],
                args=list(User.FIELDS),
            )

    def parse(replies: list) -> dict[int, AccountStats]:
        found: dict[int, AccountStats] = {}
        for group, rows in zip(groups, replies, strict=True):
            for uid, row in zip(group, rows, strict=True):
                stats = AccountStats.from_reply(uid, *row)
                if stats is not None:
                    found[uid] = stats
        return found

    return reads.queue(build, parse)


def statuses_by_id_queue(reads: ReadBatch, sids: list[int]) -> Deferred[_Found]:
    """Queue a read of these statuses with their counts and, for a proven viewer,
    whether they liked and reposted each (`.statuses`: None for each one gone): the
    client API's originals of reposts, and any status it names by id."""
    return _statuses_queue(reads, sids)


def _rows_window_queue(
    reads: ReadBatch,
    key: str,
    *,
    max_id: int | None,
    since_id: int | None,
    min_id: int | None,
    limit: int,
    member: Callable[[str], Any] = int,
) -> Deferred[list[tuple[Any, int]]]:
    """Queue a read of a zset of uid -> time (microseconds), newest first: below
    `max_id`, above `since_id` (the newest `limit` of those) or above `min_id` (the
    `limit` just above it, read oldest first), each bound exclusive. `member`:
    what a member reads as (a uid: `int`)."""
    top = f"({max_id}" if max_id is not None else "+inf"
    floor = min_id if min_id is not None else since_id
    bottom = f"({floor}" if floor is not None else "-inf"
    oldest_first = min_id is not None

    def build(pipe) -> None:
        if oldest_first:
            pipe.zrangebyscore(key, bottom, top, start=0, num=limit, withscores=True)
        else:
            pipe.zrevrangebyscore(key, top, bottom, start=0, num=limit, withscores=True)

    def parse(replies: list) -> list[tuple[int, int]]:
        rows = [(member(m), int(score)) for m, score in replies[0]]
        return rows[::-1] if oldest_first else rows

    return reads.queue(build, parse)


def _own_saved_read(
    reads: PageReads,
    key_of: Callable[[int], str],
    *,
    max_id: int | None,
    since_id: int | None,
    min_id: int | None,
    limit: int,
    member: Callable[[str], Any] = int,
) -> tuple[Deferred[_Hidden] | None, list[tuple[Any, int]]] | None:
    """The first round trip of a list of what the viewer saved (`key_of` their id:
    their bookmarks, their likes): a window of its (member, time) rows
    (`_rows_window_queue`) with the auth check and the viewer's blocks (queued
    for `_seen`); None when the request proves no viewer."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    hidden = _hidden_queue(reads, mutes=False)
    rows = _rows_window_queue(
        reads,
        key_of(vid),
        max_id=max_id,
        since_id=since_id,
        min_id=min_id,
        limit=limit,
        member=member,
    )
    if reads.proven_uid() != vid:
        return None
    return hidden, rows.value


@dataclass(frozen=True, slots=True)
class _Bookmarked:
    """A window of the viewer's bookmarks: (sid, bookmark time) newest first as
    read, and each one's status (None: gone or hidden from the viewer now)."""

    rows: list[tuple[int, int]]
    statuses: list[Status | None]
    found: _Found
    cards: Callable[[], dict[int, Card]]


def _bookmarks_read(
    reads: PageReads,
    *,
    max_id: int | None,
    since_id: int | None = None,
    min_id: int | None = None,
    limit: int,
    related: bool,
) -> _Bookmarked | None:
    """Read a window of the viewer's bookmarks (`timeline.bookmarks`) by bookmark
    time, and their statuses, each left out once gone, or hidden from the viewer by
    a block either way or by its author's privacy or deletion (`_seen`, as a
    thread's); None when the request proves no viewer. Two round trips: the
    bookmarks with the auth check and the viewer's blocks, then the statuses (as
    the client API reads them: `related`) with whether the viewer may see their
    authors, whom the members name."""
    own = _own_saved_read(
        reads,
        keys.bookmarks,
        max_id=max_id,
        since_id=since_id,
        min_id=min_id,
        limit=limit,
        member=bookmarks.member_read,
    )
    if own is None:
        return None
    hidden, marked = own
    found_d = _statuses_queue(reads, [sid for (sid, _), _ in marked], related=related)
    visible, cards = _authors_visible_queue(reads, {uid for (_, uid), _ in marked})
    found = found_d.value
    shown = _quotes_settled(reads, _seen(reads, hidden, visible, found.statuses))
    return _Bookmarked(
        rows=[(sid, at) for (sid, _), at in marked],
        statuses=[
            s if s is not None and s.author_id == author else None
            for s, ((_, author), _) in zip(shown, marked, strict=True)
        ],
        found=found,
        cards=cards,
    )


def bookmarked_queue(
    reads: PageReads, statuses: Iterable[Status]
) -> Deferred[frozenset[str]] | None:
    """Queue the read of which of these statuses (a repost's: its original) the
    proven viewer bookmarked, as members (`bookmarks.status_member`), for those
    whose read did not say (`Status.bookmarked` None: a Cluster's, an outbox's, one
    read by id); None when there is nothing to ask or no viewer. Sent with the
    next round trip."""
    vid = reads.proven_uid()
    members = sorted({bookmarks.status_member(s) for s in statuses})
    if vid is None or not members:
        return None
    return _held_queue(reads, keys.bookmarks(vid), members)


def _held_queue(reads: PageReads, key: str, members: list) -> Deferred[frozenset]:
    """Queue the read of which of `members` the zset `key` holds (one ZMSCORE),
    sent with the next round trip."""
    return reads.queue(
        lambda pipe: pipe.zmscore(key, members),
        lambda replies: frozenset(
            m for m, score in zip(members, replies[0], strict=True) if score
        ),
    )


def pinned_queue(
    reads: PageReads, statuses: Iterable[Status]
) -> Deferred[frozenset[int]] | None:
    """Queue the read of which of these statuses of the proven viewer's own (a
    repost's: its original, which the repost names with its author) they pinned
    (`timeline.pins`), for those whose read did not say; None when there is
    nothing to ask. Sent with the next round trip."""
    vid = reads.proven_uid()
    sids = sorted(
        {s.repost_of for s in statuses if s.repost_of and s.repost_uid == vid}
        | {s.id for s in statuses if not s.repost_of and s.author_id == vid}
    )
    if vid is None or not sids:
        return None
    return _held_queue(reads, keys.pins(vid), sids)


def muted_queue(
    reads: PageReads, statuses: Iterable[Status]
) -> Deferred[frozenset[int]] | None:
    """Queue the read of which of these statuses' conversations
    (`Status.conversation_id`) the proven viewer muted (`timeline.conversations`), as
    conversation ids; None when there is nothing to ask or no viewer. Sent with the
    next round trip."""
    vid = reads.proven_uid()
    ids = sorted({s.conversation_id for s in statuses})
    if vid is None or not ids:
        return None
    return _held_queue(reads, keys.conversation_mutes(vid), ids)


# Of a conversation whose newest message is gone or hidden, how many before it a
# page reads (in one more round trip) for the newest that still stands.
CONVERSATION_READ = 3


def conversations_get(
    *,
    reads: PageReads,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> Conversations | None:
    """A page of the viewer's conversations of direct messages (`timeline.direct`),
    the most recent first, paged by their newest messages' ids as Mastodon pages
    them (`max_id`, `since_id`, `min_id`); None when the request proves no viewer.

    Two round trips: the conversations with the auth check, then their newest
    messages with the others in them (whose cards are their authors': a message is
    by the viewer or by one of them). A message by someone the viewer blocks or is
    blocked by is passed over for the one before it; a conversation with none to
    show is left out (its messages deleted, their jobs still to come)."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    top, low, ascending = _bounds(max_id, since_id, min_id)
    rows_d = direct.conversations_queue(
        reads,
        vid,
        size=size + 1,
        top="+inf" if top is None else str(top),
        low=low,
        ascending=ascending,
    )
    hidden = _hidden_queue(reads, mutes=False)
    if reads.proven_uid() != vid:
        return None
    rows = rows_d.value
    more = len(rows) > size
    rows = rows[:size]
    if ascending:
        rows.reverse()
    conversations, cards = _conversations(reads, rows, hidden)
    return Conversations(
        conversations=conversations,
        next_max_id=rows[-1].newest if rows and (more or ascending) else None,
        prev_min_id=rows[0].newest if rows else None,
        cards=cards,
        unread=tuple((row.id, row.newest) for row in rows if row.unread),
    )


def conversation_get(*, reads: PageReads, conversation: int) -> Conversation | None:
    """One of the viewer's conversations (as `conversations_get` shows it), or
    None: not theirs, nothing in it to show, or no viewer proven."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    row = direct.conversation_queue(reads, vid, conversation)
    hidden = _hidden_queue(reads, mutes=False)
    if reads.proven_uid() != vid or row.value is None:
        return None
    found, _ = _conversations(reads, [row.value], hidden)
    return found[0] if found else None


def _conversations(
    reads: PageReads, rows: list[direct.ConversationRow], hidden
) -> tuple[list[Conversation], dict[int, Card]]:
    """The conversations these rows show, each with its newest message that still
    stands and the viewer may see, and the cards of everyone in them: one round
    trip, and one more only when a newest message is gone or hidden (a delete
    whose job has not run yet, a block since), for the CONVERSATION_READ before
    it."""
    people = users_queue(reads, uids={u for row in rows for u in row.people})
    shown: dict[int, Status | None] = {}
    for depth in (slice(0, 1), slice(1, 1 + CONVERSATION_READ)):
        sids = [
            sid
            for row in rows
            if not any(shown.get(s) for s in row.sids[: depth.start])
            for sid in row.sids[depth]
        ]
        if not sids:
            break
        found = _statuses_queue(reads, sids).value.statuses
        shown.update(zip(sids, _without_hidden(reads, hidden, found), strict=True))
    users = people.value
    # A Cluster's quotes, one round trip more (`_quotes_settled`).
    settled = _quotes_settled(reads, list(shown.values()))
    shown = dict(zip(shown, settled, strict=True))
    cards = {uid: user.card for uid, user in users.items()}
    cards[reads.proven_uid()] = reads.viewer.value.card
    conversations = []
    for row in rows:
        last = next(
            (shown[s] for s in row.sids[: 1 + CONVERSATION_READ] if shown.get(s)),
            None,
        )
        if last is not None:
            conversations.append(
                Conversation(
                    id=row.id,
                    last=last,
                    people={u: users[u] for u in row.people if u in users},
                    unread=row.unread,
                    at=row.newest,
                )
            )
    return conversations, cards


def bookmarks_get(*, reads: PageReads, max_id: int | None = None) -> Page | None:
    """A page of the viewer's bookmarks, newest bookmark first (`_bookmarks_read`);
    `next_max_id` is a bookmark time. None when the request proves no viewer."""
    size = settings.TIMELINE_PAGE_SIZE
    read = _bookmarks_read(reads, max_id=max_id, limit=size + 1, related=False)
    if read is None:
        return None
    return Page(
        statuses=[s for s in read.statuses[:size] if s is not None],
        next_max_id=read.rows[size - 1][1] if len(read.rows) > size else None,
        cards=read.cards(),
        left_out=None in read.statuses[:size],
    )


def bookmarks_window(
    *,
    reads: PageReads,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow | None:
    """A window of the viewer's bookmarks for the client API, paged by bookmark
    time as Mastodon's by bookmark id: `older` after a full window, `newer` at the
    newest read. None when the request proves no viewer."""
    read = _bookmarks_read(
        reads,
        max_id=max_id,
        since_id=since_id,
        min_id=min_id,
        limit=size,
        related=True,
    )
    if read is None:
        return None
    return StatusWindow(
        statuses=[s for s in read.statuses if s is not None],
        older=read.rows[-1][1] if len(read.rows) >= size else None,
        newer=read.rows[0][1] if read.rows else None,
        accounts=read.found.accounts,
        originals=read.found.originals,
        named=read.found.named,
    )


def favourites_window(
    *,
    reads: PageReads,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow | None:
    """A window of the statuses the viewer liked, newest like first, paged by the
    time of each (Mastodon's favourites, by the favourite's id), for the client
    API; None when the request proves no viewer.

    The viewer's `liked` zset names the statuses; a status is listed while its
    like stands (an entry a crash left without its like is not: `timeline.social`)
    and the viewer may see it (as `_bookmarks_read`). Two round trips on one
    server: the likes with the auth check and the viewer's blocks, then the
    statuses with their authors' accounts; one more when one of those authors is
    private (whether they approved the viewer), and on a Cluster (whether each
    may be seen)."""
    own = _own_saved_read(
        reads,
        keys.liked,
        max_id=max_id,
        since_id=since_id,
        min_id=min_id,
        limit=size,
    )
    if own is None:
        return None
    hidden, rows = own
    found = _statuses_queue(reads, [sid for sid, _ in rows], related=True).value
    authors = {s.author_id for s in found.statuses if s is not None}
    known = found.accounts
    # What a read on one server says of the authors: only the private ones' approval
    # is left to ask (a deleted author has no account: their statuses are left out).
    ask = (
        authors
        if known is None
        else {a for a in authors if a in known and known[a].user.private}
    )
    visible = _authors_visible_queue(reads, ask)[0] if ask else None
    shown = _seen(
        reads,
        hidden,
        lambda author, direct: (
            visible is None or author not in ask or visible(author, direct)
        ),
        found.statuses,
    )
    shown = _quotes_settled(reads, shown)  # a Cluster's, one round trip more
    return StatusWindow(
        statuses=[s for s in shown if s is not None and s.liked],
        older=rows[-1][1] if len(rows) >= size else None,
        newer=rows[0][1] if rows else None,
        accounts=found.accounts,
        originals=found.originals,
        named=found.named,
    )


def people_rows_get(
    *,
    reads: PageReads,
    uid: int,
    relation: str,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
    limit: int,
) -> PeopleRows | None:
    """A window of user `uid`'s followers or followees (`relation`) by follow time,
    newest first (`_rows_window_queue`); None: no such user. One round trip, with
    the auth check. A private account's lists are shown only to its owner and
    approved followers, as on `people_page`."""
    key_of = {"followers": keys.followers, "following": keys.following}[relation]
    owner = users_queue(reads, uids=[uid])
    rows = _rows_window_queue(
        reads,
        key_of(uid),
        max_id=max_id,
        since_id=since_id,
        min_id=min_id,
        limit=limit,
    )
    admitted = _admitted_queue(reads, uid)
    user = owner.value.get(uid)
    if user is None:
        return None
    if _protected(reads, user, admitted):
        return PeopleRows(owner=user, rows=[], protected=True)
    return PeopleRows(owner=user, rows=rows.value)


def own_rows_get(
    *,
    reads: PageReads,
    relation: str,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
    limit: int,
) -> list[tuple[int, int]] | None:
    """A window of the viewer's blocks, mutes or pending follow requests
    (`relation`): (uid, time in microseconds) newest first; None when the request
    proves no viewer. One round trip, with the auth check."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    key_of = {
        "blocks": keys.blocks,
        "mutes": keys.mutes,
        "follow_requests": keys.follow_requests,
    }[relation]
    rows = _rows_window_queue(
        reads,
        key_of(vid),
        max_id=max_id,
        since_id=since_id,
        min_id=min_id,
        limit=limit,
    )
    if reads.proven_uid() != vid:
        return None
    return rows.value


def relationships_queue(
    reads: PageReads, other_ids: Iterable[int]
) -> Deferred[dict[int, Relationship]]:
    """Queue the reads, in the claimed viewer's slot, of what stands between them
    and each of these users (follows, requests and blocks either way, mutes), with
    whether each user exists; the value maps uid -> Relationship for those that do.
    Trusted only once the viewer is proven (the auth check rides along)."""
    vid = reads.claimed_uid
    others = list(dict.fromkeys(other_ids))
    if vid is None or not others:
        return reads.queue(lambda pipe: None, lambda replies: {})
    sets = (
        keys.following,
        keys.followers,
        keys.requested,
        keys.follow_requests,
        keys.blocks,
        keys.blocked_by,
        keys.mutes,
    )

    def build(pipe) -> None:
        for key_of in sets:
            pipe.zmscore(key_of(vid), others)
        for uid in others:
            pipe.exists(account_keys.user(uid))
            pipe.hexists(account_keys.user(uid), User.DELETED_FIELD)

    def parse(replies: list) -> dict[int, Relationship]:
        scores, existence = replies[: len(sets)], replies[len(sets) :]
        found = {}
        for i, uid in enumerate(others):
            exists, deleted = existence[2 * i : 2 * i + 2]
            if not exists or deleted:
                continue
            (
                following,
                followed_by,
                requested,
                requested_by,
                blocking,
                blocked_by,
                muting,
            ) = (reply[i] is not None for reply in scores)
            found[uid] = Relationship(
                id=uid,
                following=following,
                followed_by=followed_by,
                requested=requested,
                requested_by=requested_by,
                blocking=blocking,
                blocked_by=blocked_by,
                muting=muting,
            )
        return found

    return reads.queue(build, parse)


def account_by_name_get(*, reads: PageReads, username: str) -> AccountStats | None:
    """The user this name names (any case), with their counts; None: nobody. One
    round trip with the auth check once this process has seen the name."""
    owner, found = _named_user(
        reads, username, lambda uid: accounts_queue(reads, [uid])
    )
    if owner is None:
        return None
    return found.value.get(owner.id)


# KEYS: hashes. ARGV: fields. Each hash's values of those fields (an HMGET each):
# the rows of a page in one script call on one server (`slot_groups`: one call
# per slot on a Cluster), not a command per row.
def _notification_data_queue(
    reads: PageReads, shown: list[Notification], actors: list[int], *, counted: bool
) -> Deferred[_NotificationData]:
    """Queue the reads of the groups' actors, their statuses (with their counts and
    the viewer's state when `counted`), and whom the viewer follows among the
    authors of mentions, replies and poll ends."""
    vid = reads.proven_uid()
    sids = sorted({g.sid for g in shown if g.sid is not None})
    users = users_queue(reads, uids=actors)
    if counted:
        with_counts = _statuses_queue(reads, sids)
    else:
        rows = hashes_queue(
            reads,
            sids,
            keys.status,
            Status.IMMUTABLE,
            Status.from_read,
        )
    authors = sorted({a for g in shown if g.kind in _AUTHORED for a in g.actors})
    follows = (
        reads.queue(
            lambda pipe: pipe.zmscore(keys.following(vid), authors),
            lambda replies: {
                a for a, s in zip(authors, replies[0], strict=True) if s is not None
            },
        )
        if authors
        else None
    )

    def made(_) -> _NotificationData:
        if counted:
            found = {s.id: s for s in with_counts.value.statuses if s is not None}
        else:
            found = rows.value
        followed = follows.value if follows is not None else set()
        return _NotificationData(users.value, found, followed)

    return reads.queue(lambda pipe: None, made)


# The kinds whose actor is the author of the status they are about: shown only to
# those who may see it when the author is private (a poll's end: its author).
_AUTHORED = ("mention", "reply", "poll", "quote")


def _notification_items(
    reads: PageReads,
    hidden: Deferred[_Hidden] | None,
    shown: list[Notification],
    *,
    mark: int,
    named: int,
    counted: bool,
    data: _NotificationData | None = None,
) -> list[NotificationItem]:
    """The groups as the proven viewer may see them, in their order, each naming at
    most `named` actors: one round trip (the actors' names, the statuses, whom the
    viewer follows among mentioning authors). Groups about a status that is gone,
    and actors who are deleted, blocked either way or muted, are left out; so are
    mentions, replies and poll ends by a private author the viewer does not follow. The
    statuses come with their counts and the viewer's state when `counted` (the
    client API shows them); else their rows alone (the page shows their text)."""
    actors = sorted({a for g in shown for a in g.actors})
    queued = (
        _notification_data_queue(reads, shown, actors, counted=counted)
        if data is None
        else None
    )
    hide = _hidden_authors(reads, hidden, actors)
    if queued is not None:
        data = queued.value
    people, found, followed = data.people, data.found, data.followed
    if counted:  # the client API's Status.quote: a Cluster's, one round trip more
        found = dict(zip(found, _quotes_settled(reads, [*found.values()]), strict=True))
    items = []
    for g in shown:
        status = found.get(g.sid) if g.sid is not None else None
        if status is None and g.kind in STATUS_KINDS:
            continue  # the status is gone
        visible = [people[a] for a in g.actors if a in people and a not in hide]
        if not visible:
            continue
        if status is not None and g.kind in _AUTHORED:
            author = people.get(status.author_id)
            if author is None or (
                author.private
                and author.id not in followed
                and author.id != reads.proven_uid()
                and not (status.direct and status.visible_to(reads.proven_uid()))
            ):
                # A private author's status, for their followers only (a direct
                # message: for its audience, whoever they follow; her own poll's
                # end: for her).
                continue
        names = visible[:named]
        others = g.count - (len(g.actors) - len(visible)) - len(names)
        items.append(
            NotificationItem(
                kind=g.kind,
                actors=names,
                others=max(others, 0),
                status=status,
                at=g.at,
                place=g.place,
                unread=g.place > mark,
            )
        )
    return items


# KEYS: the viewer's groups, rows and read mark. ARGV: 'desc' (newest first) or
# 'asc', the highest and lowest places wanted (inclusive; '+inf', '-inf'), how many
# groups, an actor the groups must name ('' for any), then the kinds wanted (none:
# any). Returns the read mark, then group, place, row triples of the first groups
# in that order that match: the groups are capped (NOTIFICATIONS_CAP), so the walk
# over those that do not match is bounded.
_NOTIFICATIONS_WINDOW = LuaScript(
    """
local desc, high, low = ARGV[1] == 'desc', ARGV[2], ARGV[3]
local want, actor = tonumber(ARGV[4]), ARGV[5]
local kinds, any_kind = {}, #ARGV < 6
for i = 6, #ARGV do kinds[ARGV[i]] = true end
local out = {redis.call('GET', KEYS[3]) or '0'}
local found, offset, chunk = 0, 0, want + 16
while found < want do
  local rows
  if desc then
    rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], high, low, 'WITHSCORES',
                      'LIMIT', offset, chunk)
  else
    rows = redis.call('ZRANGEBYSCORE', KEYS[1], low, high, 'WITHSCORES',
                      'LIMIT', offset, chunk)
  end
  for i = 1, #rows, 2 do
    local row = redis.call('HGET', KEYS[2], rows[i])
    local parsed, g = false, nil
    if row and found < want then parsed, g = pcall(cjson.decode, row) end
    if parsed and type(g) == 'table' then
      local ok = any_kind or kinds[g.k]
      if ok and actor ~= '' then
        ok = false
        for _, a in ipairs(g.a or {}) do
          if tostring(a) == actor then ok = true end
        end
      end
      if ok then
        found = found + 1
        out[#out + 1] = rows[i]
        out[#out + 1] = rows[i + 1]
        out[#out + 1] = row
      end
    end
  end
  if #rows < 2 * chunk then break end
  offset = offset + chunk
end
return out
"""
)


def _window_rows(replies: list) -> tuple[int, int, list[Notification]]:
    mark, *rows = replies[0]
    groups = [
        found
        for group, place, row in zip(rows[::3], rows[1::3], rows[2::3], strict=True)
        if (found := _notification_parsed(group, place, row)) is not None
    ]
    return int(float(mark)), len(rows) // 3, groups


def notification_place_queue(
    reads: PageReads, *, kind: str, name: str
) -> Deferred[int | None] | None:
    """Queue the read of the place of the claimed viewer's group `kind:name` (None:
    no such group); None for a visitor. Trust it once the viewer is proven."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    return reads.queue(
        lambda pipe: pipe.zscore(keys.notifications(vid), f"{kind}:{name}"),
        lambda replies: int(replies[0]) if replies[0] is not None else None,
    )


def notifications_window(
    *,
    reads: PageReads,
    high: int | None = None,
    low: int | None = None,
    size: int,
    oldest_first: bool = False,
    kinds: Iterable[str] | None = None,
    actor: int | None = None,
) -> NotificationsWindow | None:
    """Up to `size` groups of the viewer's notifications with places from `high`
    down to `low` (inclusive; None: no bound), newest first (or, `oldest_first`,
    the oldest of them first), only of `kinds` and naming `actor` when given, with
    the page's rules (`_notification_items`); None when the request proves no
    viewer. Two round trips, as the page: the client API's notifications."""
    vid = reads.claimed_uid
    if vid is None:
        return None
    wanted = [] if kinds is None else sorted(set(kinds))
    if kinds is not None and not wanted:
        nothing = NotificationsWindow(items=[], read=0, last_place=None)
        return nothing if reads.proven_uid() == vid else None
    rows = reads.queue(
        lambda pipe: _NOTIFICATIONS_WINDOW.queue(
            pipe,
            keys=[
                keys.notifications(vid),
                keys.notification_groups(vid),
                keys.notifications_read(vid),
            ],
            args=[
                "asc" if oldest_first else "desc",
                "+inf" if high is None else int(high),
                "-inf" if low is None else int(low),
                size,
                "" if actor is None else int(actor),
                *wanted,
            ],
        ),
        _window_rows,
    )
    hidden = _hidden_queue(reads, mutes=True)
    if reads.proven_uid() != vid:
        return None
    mark, read, groups = rows.value
    items = _notification_items(
        reads, hidden, groups, mark=mark, named=ACTORS_KEPT, counted=True
    )
    return NotificationsWindow(
        items=items,
        read=read,
        last_place=groups[-1].place if groups else None,
    )


def tag_exists_queue(reads: ReadBatch, tag: str) -> Deferred[bool]:
    """Queue whether a tag (as stored: `richtext.tag_wanted`) has a timeline: some
    public status still carries it. One command in the tag's slot."""
    return reads.queue(
        lambda pipe: pipe.exists(keys.tag_timeline(tag)),
        lambda replies: bool(replies[0]),
    )


def following_among_queue(reads: PageReads, uids: Iterable[int]) -> Deferred[set[int]]:
    """Queue which of these users the claimed viewer follows (trusted once the
    viewer is proven; none for a visitor). One command in the viewer's slot."""
    vid = reads.claimed_uid
    ask = sorted(set(uids))

    def build(pipe) -> None:
        if vid is not None and ask:
            pipe.zmscore(keys.following(vid), ask)

    def parse(replies: list) -> set[int]:
        if vid is None or not ask or reads.proven_uid() != vid:
            return set()
        return {uid for uid, s in zip(ask, replies[0], strict=True) if s is not None}

    return reads.queue(build, parse)


# Windows of timelines for the client API (Mastodon's `max_id`, `since_id`,
# `min_id`, `limit`): the same reads and rules as the pages above, any size, with
# a floor, read upwards for `min_id`. Ids here are exclusive bounds, as Mastodon's.


@dataclass(frozen=True, slots=True)
class StatusWindow:
    """Statuses of a window of a timeline, newest first; `older`: the exclusive
    `max_id` of the window below (None: nothing older was seen); `newer`: the
    exclusive `min_id` of the window above (None: nothing is above the window).

    Both come from the ids the window considered, shown or not (hidden, filtered,
    gone), as Mastodon's Link headers: a window whose read was all left out still
    names the windows past it, so paging either way never stalls nor skips.
    """

    statuses: list[Status]
    older: int | None
    newer: int | None = None
    # Read with the statuses on one server (`_Found`): their authors' accounts and
    # reposts' originals; None when not read (a Cluster).
    accounts: dict[int, AccountStats] | None = None
    originals: dict[int, Status] | None = None
    # With them: the usernames of the users their texts mention but their authors
    # (uid -> None: the account is gone).
    named: dict[int, str | None] | None = None


def _bounds(
    max_id: int | None, since_id: int | None, min_id: int | None
) -> tuple[int | None, str, bool]:
    """The inclusive top, the low bound and the direction of a window's read."""
    top = max_id - 1 if max_id is not None else None
    floor = min_id if min_id is not None else since_id
    low = f"({floor}" if floor is not None else "-inf"
    return top, low, min_id is not None


def _window(
    ids: list[int],
    found: list[Status | None],
    size: int,
    *,
    ascending: bool,
    top: int | None,
    read: int | None = None,
    related: _Found | None = None,
) -> StatusWindow:
    """Cut a window as `_page` cuts a page; read upwards, its oldest shown ones.

    The window above starts at the highest id considered (for a read that found
    nothing, at the inclusive `top` asked for; without one, nothing is above); the
    one below at the lowest considered, when a read downwards saw more or a read
    upwards saw any (what is below it, the client has or was not shown)."""
    known = {
        "accounts": related.accounts if related is not None else None,
        "originals": related.originals if related is not None else None,
        "named": related.named if related is not None else None,
    }
    if not ascending:
        page = _page(ids, found, size, read=read)
        older = page.next_max_id + 1 if page.next_max_id is not None else None
        newer = ids[0] if ids else top
        return StatusWindow(statuses=page.statuses, older=older, newer=newer, **known)
    page = _page(ids[::-1], found[::-1], size, read=read)
    # Upwards, `_page`'s next is above the highest considered; with no next, every
    # id read was considered.
    if page.next_max_id is not None:
        newer = page.next_max_id + 1
    else:
        newer = ids[0] if ids else top
    return StatusWindow(
        statuses=page.statuses[::-1],
        older=ids[-1] if ids else None,
        newer=newer,
        **known,
    )


def home_window(
    *,
    reads: PageReads,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow | None:
    """A window of the viewer's home with every rule of the home page
    (`_home_read`); None when the request proves no viewer. On one server one
    round trip read downwards, two upwards (three with followed tags: their
    timelines' ids); two more for a home that merges pulled authors' statuses
    (their outboxes, then their checks)."""
    top, low, ascending = _bounds(max_id, since_id, min_id)
    read = _home_read(
        reads, size=size, max_id=top, low=low, ascending=ascending, related=True
    )
    if read is None:
        return None
    window = _window(
        read.ids, read.found, size, ascending=ascending, top=top, related=read.read
    )
    # A window all left out reads on past it (`HOME_EMPTY_READS`): downwards from
    # its `older`, upwards from its `newer` when it read one past its size; the
    # cursor on the near side stays the first read's.
    for _ in range(HOME_EMPTY_READS):
        if window.statuses or len(read.ids) <= size:
            break
        if ascending:
            top, low = _bounds(max_id, None, window.newer)[:2]
        else:
            top = _bounds(window.older, since_id, None)[0]
        read = _home_read(
            reads, size=size, max_id=top, low=low, ascending=ascending, related=True
        )
        if read is None:
            break
        further = _window(
            read.ids, read.found, size, ascending=ascending, top=top, related=read.read
        )
        near = {"older": window.older} if ascending else {"newer": window.newer}
        window = replace(further, **near)
    return window


def list_window(
    *,
    reads: PageReads,
    lid: int,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow | None:
    """A window of one of the viewer's lists with every rule of its page
    (`_list_read`); None when the request proves no viewer or the viewer has no
    such list."""
    top, low, ascending = _bounds(max_id, since_id, min_id)
    read = _list_read(
        reads,
        lid=lid,
        size=size,
        max_id=top,
        low=low,
        ascending=ascending,
        related=True,
    )
    if read is None:
        return None
    return _window(
        read.ids, read.found, size, ascending=ascending, top=top, related=read.read
    )


def global_window(
    *,
    reads: PageReads,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow:
    """A window of everyone's statuses, as `global_page`."""
    top, low, ascending = _bounds(max_id, since_id, min_id)
    if not ascending and not is_cluster():
        ids, found, read, statuses = _public_window_read(
            reads, keys.global_partitions(), top, size, low, related=True
        )
        return _window(
            ids, found, size, ascending=False, top=top, read=read, related=statuses
        )
    ids, found, read, statuses = _public_read(
        reads,
        lambda n: (
            _global_ids_up(reads, top, n, low)
            if ascending
            else _global_ids_queue(reads, top, n, low).value
        ),
        size,
        ascending,
        related=True,
    )
    return _window(
        ids, found, size, ascending=ascending, top=top, read=read, related=statuses
    )


def tag_window(
    *,
    reads: PageReads,
    tag: str,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow | None:
    """A window of a tag's statuses, as `tag_page`; None: not a tag."""
    wanted = richtext.tag_wanted(tag)
    if wanted is None:
        return None
    key = keys.tag_timeline(wanted)
    top, low, ascending = _bounds(max_id, since_id, min_id)
    if not ascending and not is_cluster():
        ids, found, read, statuses = _public_window_read(
            reads, [key], top, size, low, related=True
        )
        return _window(
            ids, found, size, ascending=False, top=top, read=read, related=statuses
        )
    ids, found, read, statuses = _public_read(
        reads,
        lambda n: _ids_queue(reads, key, top, n, low, ascending).value,
        size,
        ascending,
        related=True,
    )
    return _window(
        ids, found, size, ascending=ascending, top=top, read=read, related=statuses
    )


def pinned_window(
    *,
    reads: PageReads,
    uid: int,
    size: int = 40,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
) -> StatusWindow | None:
    """The statuses user `uid` pinned, newest pin first, to whom their profile
    shows statuses (as `account_statuses_window`); None: no such user. As
    Mastodon's, the window's bounds (status ids, each exclusive) and `size` keep
    to the list, so a client paging by the last id it holds finds its end. Two
    round trips on one server: the pins with the owner and the checks, then the
    statuses with their accounts."""
    owner_d = users_queue(reads, uids=[uid])
    pins_d = _pins_queue(reads, uid)
    between = _between_queue(reads, uid)
    admitted = _admitted_queue(reads, uid)
    owner = owner_d.value.get(uid)
    if owner is None:
        return None
    proven = reads.proven_uid() == reads.claimed_uid
    blocks, blocked_by, _ = (
        between.value if between is not None and proven else (False, False, False)
    )
    if blocks or blocked_by or _protected(reads, owner, admitted):
        return StatusWindow(statuses=[], older=None)
    floor = min_id if min_id is not None else since_id
    sids = [
        sid
        for sid in pins_d.value
        if (max_id is None or sid < max_id) and (floor is None or sid > floor)
    ][:size]
    found = _statuses_queue(reads, sids, related=True).value
    return StatusWindow(
        statuses=[s for s in found.statuses if s is not None and s.author_id == uid],
        older=None,
        accounts=found.accounts,
        originals=found.originals,
        named=found.named,
    )


def account_statuses_window(
    *,
    reads: PageReads,
    uid: int,
    size: int,
    max_id: int | None = None,
    since_id: int | None = None,
    min_id: int | None = None,
    exclude_replies: bool = False,
    exclude_reblogs: bool = False,
    tagged: str | None = None,
) -> StatusWindow | None:
    """A window of a user's statuses as their profile shows them (nothing across a
    block either way, nothing of a private account but to its owner and approved
    followers, no reposts of people blocked either way); None: no such user.

    `exclude_replies` leaves out replies to others (one's own threads stay, as
    Mastodon's), `exclude_reblogs` reposts, `tagged` statuses without that tag: a
    window may show fewer than `size`, its `older` still pages on. On one server
    one round trip read downwards, two upwards.
    """
    top, low, ascending = _bounds(max_id, since_id, min_id)
    hidden = _hidden_queue(reads, mutes=False)
    owner_d = users_queue(reads, uids=[uid])
    # Its statuses used only once the viewer is proven and may see them (as a
    # profile).
    window, ids_d = _window_or_ids_queue(
        reads, keys.posts(uid), top, size, low, ascending, related=True
    )
    between = _between_queue(reads, uid)
    admitted = _admitted_queue(reads, uid)
    owner = owner_d.value.get(uid)
    if owner is None:
        return None
    proven = reads.proven_uid() == reads.claimed_uid
    blocks, blocked_by, _ = (
        between.value if between is not None and proven else (False, False, False)
    )
    if blocks or blocked_by or _protected(reads, owner, admitted):
        return StatusWindow(statuses=[], older=None)
    wanted = richtext.tag_wanted(tagged) if tagged else None
    if tagged and wanted is None:
        return StatusWindow(statuses=[], older=None)
    if window is not None:
        ids, statuses = window.value.ids, window.value.found
    else:
        ids = ids_d.value
        statuses = _statuses_queue(reads, ids, related=True).value
    found = _without_hidden(reads, hidden, statuses.statuses)
    found, statuses = _related_checked(
        reads, statuses, found, _refused_queue(reads, statuses.unchecked)
    )

    def kept(status: Status) -> bool:
        if exclude_reblogs and status.repost_of is not None:
            return False
        if exclude_replies and status.reply_uid not in (None, status.author_id):
            return False
        return wanted is None or wanted in richtext.hashtags(status.text)

    found = [s if s is not None and kept(s) else None for s in found]
    return _window(ids, found, size, ascending=ascending, top=top, related=statuses)


def repost_id_queue(reads: ReadBatch, *, uid: int, original_id: int) -> Deferred[int]:
    """Queue the read of the id of `uid`'s repost of a status (None: none), in the
    original's slot (`timeline.social`'s reposts zset)."""
    return reads.queue(
        lambda pipe: pipe.zscore(keys.reposts(original_id), uid),
        lambda replies: int(replies[0]) if replies[0] is not None else None,
    )


# The statuses of a client API page with their authors' accounts (with counts) and
# reposts' originals (with counts and the viewer's state), in one command: as
# `_STATUSES_READ`, it builds the keys beyond its own in Lua, so one server only (a
# Cluster reads them in one more round trip, `api.entities.related_get`, or
# `_related_checked`).
# `read_related(keys, a)` reads the statuses whose (status hash, likes, reposts)
# keys `keys` lists, with these arguments starting at ARGV[a]: the viewer's uid (''
# for none), how many status fields, the field names, the positions of the
# author's id, of a repost's original author's id, of the original's id, of the
# mentions, of the conversation, thread and reply_to among them, then the text
# before and after an id in a user hash, posts, followers, following, status,
# likes, reposts, bookmarks, pins and conversation mutes key (`keys.around_id`),
# then the user hash's privacy field and the user fields (`User.FIELDS`). It
# returns the rows (as `_STATUSES_READ`'s, with the viewer's bookmark, pin and
# conversation mute after their like, repost and vote; a repost's without the viewer's
# state), then uid,
# fields, posts, followers, following, newest status id (null: none) of each
# author, then sid, row of each original, then whether the viewer may see each row
# (`original_seen`), then uid, user fields of each user that a shown text (a row
# but a repost, an original) mentions and that is not an author: their Mentions'
# usernames, in the same round trip (a deleted one's fields say it is gone). For
# one JSON string, as `_ROWS_LUA`'s (a missing field is null, an empty list
# `[null]`).
_RELATED_LUA = (
    _JSON_LUA
    + """
local function read_related(keys, a)
  local viewer, n = ARGV[a], tonumber(ARGV[a + 1])
  local fields = {unpack(ARGV, a + 2, a + n + 1)}
  local uid_at, ruid_at, orig_at, mentions_at =
    tonumber(ARGV[a + n + 2]), tonumber(ARGV[a + n + 3]), tonumber(ARGV[a + n + 4]),
    tonumber(ARGV[a + n + 5])
  local conv_at, thread_at, reply_at =
    tonumber(ARGV[a + n + 6]), tonumber(ARGV[a + n + 7]), tonumber(ARGV[a + n + 8])
  local t = a + n + 9
  local up, us, pp, ps, fp, fs, gp, gs, sp, ss, lp, ls, rp, rs, bp, bs, np, ns, cp, cs =
    unpack(ARGV, t, t + 19)
  local private = ARGV[t + 20]
  local xp, xs, yp, ys, zp, zs = unpack(ARGV, t + 21, t + 26)
  local ufields = {unpack(ARGV, t + 27)}
  local q_at = quote_at(fields)
  local nu = #ufields
  local rows, accounts, originals, checks, texts = {}, {}, {}, {}, {}
  local seen, seen_original = {}, {}
  local function account(uid)
    if not uid or seen[uid] then return end
    seen[uid] = true
    local posts, at = pp .. uid .. ps, #accounts
    accounts[at + 1] = uid
    accounts[at + 2] = nulls(
      redis.call('HMGET', up .. uid .. us, unpack(ufields)), nu)
    accounts[at + 3] = redis.call('ZCARD', posts)
    accounts[at + 4] = redis.call('ZCARD', fp .. uid .. fs)
    accounts[at + 5] = redis.call('ZCARD', gp .. uid .. gs)
    accounts[at + 6] = redis.call('ZREVRANGE', posts, 0, 0)[1] or null
  end
  local at = counts_at(fields)
  -- The viewer's bookmarks (`timeline.bookmarks`: members `<sid>:<author>`) and
  -- pins (`timeline.pins`: their own statuses), not asked about when none.
  local marks = viewer ~= '' and bp .. viewer .. bs
  if marks and redis.call('EXISTS', marks) == 0 then marks = false end
  local pins = viewer ~= '' and np .. viewer .. ns
  if pins and redis.call('EXISTS', pins) == 0 then pins = false end
  -- And the conversations they muted (`timeline.conversations`), likewise.
  local muted = viewer ~= '' and cp .. viewer .. cs
  if muted and redis.call('EXISTS', muted) == 0 then muted = false end
  local function given(value) return value and value ~= null and value ~= '' end
  -- A status's conversation, as `Status.conversation_id` (not a repost's row).
  local function conversation_of(row, sid)
    if given(row[conv_at]) then return row[conv_at] end
    if given(row[thread_at]) then
      local oldest = string.match(row[thread_at], '(%d+):%d+%s*$')
      if oldest then return oldest end
    end
    if given(row[reply_at]) then return row[reply_at] end
    return sid
  end
  local function state(row, hash, likes, reposts, sid)
    viewer_state(row, n, viewer, at, hash, likes, reposts)
    if viewer == '' then return end
    local author = row[uid_at]
    row[n + 4] = marks and author ~= null
      and redis.call('ZSCORE', marks, sid .. ':' .. author) or null
    row[n + 5] = pins and author == viewer and redis.call('ZSCORE', pins, sid) or null
    row[n + 6] = muted and author ~= null
      and redis.call('ZSCORE', muted, conversation_of(row, sid)) or null
  end
  for i = 1, #keys, 3 do
    local row = redis.call('HMGET', keys[i], unpack(fields))
    account(row[uid_at])
    account(row[ruid_at])
    -- A quote's author, for its Quote entity (`quote_seen` checks it below).
    if row[q_at] then account(string.match(row[q_at], '^{"i":%d+,"u":(%d+),')) end
    local original = row[orig_at]
    if original and seen_original[original] == nil then
      local found = nulls(redis.call('HMGET', sp .. original .. ss, unpack(fields)), n)
      seen_original[original] = found[uid_at] ~= null  -- false: it is gone
      state(found, sp .. original .. ss, lp .. original .. ls, rp .. original .. rs,
        original)
      originals[#originals + 1] = original
      originals[#originals + 1] = found
      texts[#texts + 1] = found[mentions_at]
    end
    local author = row[ruid_at] or '0'
    nulls(row, n)
    checks[#checks + 1] = (not original and 0 or original_seen(
      seen_original[original], up .. author .. us, fp .. author .. fs, private,
      viewer, author))
      + 3 * quote_seen(row[q_at], viewer, sp, ss, up, us, fp, fs, private, xp, xs,
        yp, ys, zp, zs)
    -- A repost row's own state is not shown (`Status.from_fields`): its original's.
    if not original then
      state(row, keys[i], keys[i + 1], keys[i + 2],
        string.sub(keys[i], #sp + 1, #keys[i] - #ss))
      texts[#texts + 1] = row[mentions_at]
    end
    rows[#rows + 1] = row
  end
  -- The mentioned users but the authors (whose names come with their accounts).
  local named, asked = {}, {}
  for _, mentions in ipairs(texts) do
    -- A damaged field names nobody (`Status` reads it so) rather than failing.
    local ok, decoded = false, nil
    if mentions ~= null and mentions ~= '' then
      ok, decoded = pcall(cjson.decode, mentions)
    end
    if ok and type(decoded) == 'table' then
      for _, value in pairs(decoded) do
        local number = tonumber(value)
        local uid = number and string.format('%d', number)
        if uid and not seen[uid] and not asked[uid] then
          asked[uid] = true
          named[#named + 1] = uid
          named[#named + 1] = nulls(
            redis.call('HMGET', up .. uid .. us, unpack(ufields)), nu)
        end
      end
    end
  end
  return listed(rows), listed(accounts), listed(originals), listed(checks),
    listed(named)
end
"""
)

# KEYS: (status hash, likes, reposts) of each status. ARGV: `read_related`'s.
_STATUSES_RELATED_READ = LuaScript(
    _RELATED_LUA
    + """
local rows, accounts, originals, checks, named = read_related(KEYS, 1)
return cjson.encode({rows, accounts, originals, checks, named})
"""
)


# KEYS and ARGV: `_WINDOW_READ`'s, with `read_related`'s arguments in place of
# `read_rows`'. Returns, as one JSON string, the window's ids, then the rows,
# accounts, originals, checks and mentioned users of the first ones, and (a home's)
# the reposts among them that the home shows as their originals: a client API
# window and its statuses in the request's first round trip (one server only).
_WINDOW_RELATED_READ = LuaScript(
    _RELATED_LUA
    + _AGAIN_LUA
    + _WINDOW_IDS_LUA
    + """
local rows, accounts, originals, checks, named = read_related(keys, 14)
return cjson.encode(
  {listed(ids), rows, accounts, originals, checks, named, again(rows, 14)})
"""
)


def _related_args(viewer: int | None) -> list:
    """`read_related`'s arguments (`_RELATED_LUA`) for the claimed viewer."""
    return [
        "" if viewer is None else viewer,
        len(Status.FIELDS),
        *Status.FIELDS,
        Status.FIELDS.index("uid") + 1,
        Status.FIELDS.index("repost_uid") + 1,
        Status.FIELDS.index("repost_of") + 1,
        Status.FIELDS.index("mentions") + 1,
        Status.FIELDS.index("conversation") + 1,
        Status.FIELDS.index("thread") + 1,
        Status.FIELDS.index("reply_to") + 1,
        *account_keys.user_prefix(),
        *(
            part
            for key_of in (
                keys.posts,
                keys.followers,
                keys.following,
                keys.status,
                keys.likes,
                keys.reposts,
                keys.bookmarks,
                keys.pins,
                keys.conversation_mutes,
            )
            for part in keys.around_id(key_of)
        ),
        User.PRIVATE_FIELD,
        *keys.around_id(keys.blocks),
        *keys.around_id(keys.blocked_by),
        *keys.around_id(keys.mutes),
        *User.FIELDS,
    ]


# Parsed once a process (lru_cache: thread-safe, bounded), as `Status.from_read`
# parses statuses: each key is the whole row read, counts included, so no entry can
# go stale, and a client polling its timelines reads the same rows again and again;
# what is kept is frozen, shared safely between requests and threads.
@lru_cache(maxsize=20_000)
def _account_read(
    uid: int, values: tuple[str | None, ...], posts, followers, following, newest
) -> AccountStats | None:
    return AccountStats.from_reply(uid, values, posts, followers, following, newest)


def _related_found(
    reads: ReadBatch,
    viewer: int | None,
    sids: list[int],
    rows: list,
    account_rows: list,
    original_rows: list,
    checks: list,
    named_rows: list,
) -> _Found:
    """The statuses `sids` (None for a repost the viewer may not see: `_refusals`),
    their authors' accounts, reposts' originals and the usernames of the users
    they mention from `read_related`'s reply (the viewer's state kept once the
    viewer is proven)."""
    if not sids:
        return _Found(statuses=[], cards=None, accounts={}, originals={}, named={})
    n = len(Status.FIELDS)
    trusted = viewer is not None and reads.proven_uid() == viewer
    refused = _refusals(sids, checks, trusted)
    quote_states = _quote_states(sids, checks, trusted)
    accounts: dict[int, AccountStats] = {}
    if account_rows != [None]:
        for at in range(0, len(account_rows), 6):
            uid, values, *counts = account_rows[at : at + 6]
            stats = _account_read(int(uid), tuple(values), *counts)
            if stats is not None:
                accounts[stats.user.id] = stats
    originals: dict[int, Status] = {}
    if original_rows != [None]:
        for sid, row in zip(original_rows[::2], original_rows[1::2], strict=True):
            original = Status.from_read(
                int(sid), row[:n], viewer=row[n:] if trusted else None
            )
            if original is not None:
                originals[original.id] = original
    named: dict[int, str | None] = {}
    if named_rows != [None]:
        for uid, values in zip(named_rows[::2], named_rows[1::2], strict=True):
            user = User.from_fields(int(uid), values)
            named[int(uid)] = user.username if user is not None else None
    return _Found(
        statuses=_for_viewer(
            _quotes_checked(
                [
                    None
                    if sid in refused
                    else Status.from_read(
                        sid, row[:n], viewer=row[n:] if trusted else None
                    )
                    for sid, row in zip(sids, rows, strict=True)
                ],
                quote_states,
            ),
            viewer if trusted else None,
        ),
        cards=None,
        accounts=accounts,
        originals=originals,
        named=named,
    )


def _statuses_related_queue(reads: ReadBatch, sids: list[int]) -> Deferred[_Found]:
    """Queue a read of these statuses (as `_statuses_queue`) with their authors'
    accounts and reposts' originals: one command, one server only."""
    viewer = reads.claimed_uid if isinstance(reads, PageReads) else None
    args = _related_args(viewer)

    def build(pipe) -> None:
        if sids:
            _STATUSES_RELATED_READ.queue(
                pipe,
                keys=[
                    k
                    for sid in sids
                    for k in (keys.status(sid), keys.likes(sid), keys.reposts(sid))
                ],
                args=args,
            )

    def parse(replies: list) -> _Found:
        if not sids:
            return _related_found(reads, viewer, sids, [], [], [], [], [])
        return _related_found(reads, viewer, sids, *orjson.loads(replies[0]))

    return reads.queue(build, parse)


def pulled_authors(*, uid: int) -> list[int]:
    """The followees of user `uid` whose statuses their home merges at read (pull
    mode, `pulls:{uid}`): one round trip."""
    return [int(a) for a in get_redis().zrange(keys.pulls(uid), 0, -1)]
