"""Bring a store written by an older version to the current key layout.

The store records its layout in `store:layout`. Each process checks it on its first
connection (`layout_check`): an empty store is stamped with LAYOUT, a store of any
other layout is refused until `manage.py upgrade_store` (`store_upgrade`) brought it
forward.

- Layout 2 keeps `follower_names:{<uid>}` beside every `followers:{<uid>}` (the
  profile names the people in common from it) and no longer uses `store:epoch`.
  The upgrade walks the store with SCAN (every master of a Cluster), names every
  follower that has no name yet and deletes the legacy key.
- Layout 3 runs on Redis Cluster: status ids come from 256 id
  shards (`timeline/ids.py`) instead of `statuses:next_id`, and the global timeline
  is partitioned (`timeline:global:{g<p>}`) instead of one `timeline:global`. The
  upgrade moves the global timeline's entries into the partitions and deletes both
  legacy keys; old status ids stay valid (every new id is larger).
- Layout 4 skips inactive readers in the fan-out: a reader is active
  while their `seen:{<uid>}` stamp lives (FANOUT_ACTIVE_DAYS). The upgrade stamps
  every user of the store as seen on the day of the upgrade (SET NX: a stamp the
  site already wrote is kept), so no one's home stops filling because of it.
- Layout 5 finds people by name (`users:names`, the search's
  prefix index). The upgrade adds every user's username and display name to it
  (ZADD of the same member is a no-op, so a repeat or an entry the site wrote
  meanwhile changes nothing).
- Layout 6: on one server the fan-out's push trusts a clear bit in
  `muters` to mean "mutes no one", and reads no `mutes:{<uid>}` for that reader
  (`timeline.fanout._FOLLOWERS_PUSH`). The upgrade sets the bit of every user whose
  `mutes:{<uid>}` exists (SETBIT: a repeat changes nothing; a bit left set for
  someone who unmutes everyone meanwhile only makes the push look, as before).
  `seen:days` needs no step: a stamp it lacks is looked up as before, and the next
  day's stamp writes it. A Cluster has neither key: nothing to do there.
- Layout 7 counts the site's users and statuses as it goes
  (`timeline/counts.py`: `counts:{q<k>}` per slot, changed in the steps that
  change what counts, and `counts:site`, their sum, which a fan-out worker writes
  every SITE_COUNTS_SECONDS and `/api/v1/instance` reads). The upgrade counts them
  from the store (`counts_recount`: the users SCAN finds, each one's `posts`),
  slot by slot, each slot in one script, and writes the sum, so the upgraded
  store answers at once. The store is quiet meanwhile (the new version serves
  once the layout is recorded), so the counts are exact; a run again finds them
  right and changes nothing.
- Layout 8 names every reply's and repost's conversation: the id of
  the status its thread began with, which a reader mutes (`timeline.conversations`).
  Layout 7's version stored `conversation` on new replies and reposts only, taken
  from the parent, and worked out an older one's from the ancestors its `thread`
  names (THREAD_DEPTH levels): in a thread deeper than that, a reply stored before
  it was not muted with the thread's first status, and a new reply below one took
  that ancestor for its first status. The upgrade walks every status hash (SCAN),
  follows each reply's parents up to the first status (a deleted parent is passed
  by the older ancestors its `thread` names; with none left, the walk goes on from
  the conversation it stores while that stands, else the oldest one named stands,
  as before), writes the conversation where it is missing or wrong (and in the
  author's outbox copy, for an author merged at read), and moves each mute recorded
  by such an ancestor to the first status (`conversation_mutes:{<uid>}`), a mute of
  a since-deleted one to where the statuses that named it went.
  A run again finds every conversation right and changes nothing.
- Layout 9 (this version) keeps the members of each user's exclusive lists out of
  their home at fan-out (`timeline.lists`: `list_exclusive:{<uid>}`, derived from
  their lists by the lists' one write script, which the push and every home add
  read). The upgrade builds it for every user who has lists (SCAN of `lists:{*}`,
  the lists' own 'sync' step: one script in the owner's slot, then their members'
  statuses swept out of their home) and, on one server, sets their bit in `muters`
  (layout 6's step, which runs on every run). This version also adds direct
  messages (`timeline.direct`): a status's `to` field, absent on every status of
  an older store, so nothing of it is upgraded; but an older process does not know
  the field, so it must not serve once this one does (above all: stop it first).
  A run again finds every set as the lists say and changes nothing.

Each step runs only for a store recorded below its layout (none recorded: layout 1),
so a run on an upgraded store changes nothing. That matters most for layout 4: its
stamp says "seen today", true only of a store whose version kept no stamps; on a
store that keeps them it would mark every away reader active, and their home would
never be rebuilt when they come back (`timeline.services.reader_seen`). The one
exception is layout 6's step, which runs on every run on one server: a store copied
from a Cluster records the current layout without `muters`, and a bit it sets is
never wrong (at worst the push looks at someone's mutes), so on a store the site
kept it changes nothing.

Stop the old version first: it does not check the layout, and would write the legacy
keys again (a post of it would take ids from the deleted `statuses:next_id`, starting
over at 1). This version refuses the store until the upgrade is done, and the
upgrade is safe while this version serves and safe to repeat: a name is written only
where none is (HSETNX) and only while the follower still follows (checked in the same
script, in the owner's slot), so a follow or unfollow during the walk is never
undone; the global entries are added before the old key is deleted. An interrupted
run is simply run again. The layout is recorded last, once everything is there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from accounts import keys as account_keys
from accounts.domain import User
from accounts.selectors import users_queue
from accounts.services import (
    names_entries,
    names_index_queue,
    seen_day,
    seen_ttl_seconds,
)
from config.pipelines import LuaScript, ReadBatch, pipeline_run
from config.redis import StoreRefused, get_redis, is_cluster, key_count
from timeline import keys, lists
from timeline.counts import SiteCounts, counts_recount
from timeline.domain import Status
from timeline.services import global_add_queue

LAYOUT = 9
SCAN_COUNT = 1000  # keys SCAN examines per round trip
BATCH = 100  # followers zsets whose names are checked per round of round trips
ZSCAN_COUNT = 1000  # followers read per zset per round trip (all of a small one)
# Statuses whose links (parent, original, ancestors) the conversation walk keeps in
# memory before it forgets them all and reads again what it needs (layout 8).
WALK_MEMORY = 500_000

# KEYS: a user's followers zset and follower-names hash. ARGV: uid, name pairs.
# Names each uid that still follows the user and has no name yet; returns how many.
_NAMES_BACKFILL = LuaScript(
    """
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    added = added + redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
return added
"""
)

# KEYS: the layout key. ARGV: a layout. Raises the recorded layout, never lowers it
# (an older upgrade run against a newer store must not mark it old).
_LAYOUT_RAISE = LuaScript(
    """
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if current < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
"""
)


# KEYS: a status hash. ARGV: a conversation id. Names the status's conversation, if
# the status still stands (a deleted one's hash is not made again).
_CONVERSATION_NAME = LuaScript(
    """
if redis.call('HEXISTS', KEYS[1], 'uid') == 1 then
  redis.call('HSET', KEYS[1], 'conversation', ARGV[1])
  return 1
end
return 0
"""
)

# KEYS: an author's outbox. ARGV: sid, entry as read, entry to write, ... Writes each
# entry that is still as read; returns how many.
_OUTBOX_REWRITE = LuaScript(
    """
local written = 0
for i = 1, #ARGV, 3 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    written = written + 1
  end
end
return written
"""
)

# KEYS: a reader's muted conversations. ARGV: old id, new id, ... Moves each mute
# recorded by the old id to the new one (the later of the two times, if both);
# returns how many moved.
_MUTES_MOVE = LuaScript(
    """
local moved = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score then
    local there = redis.call('ZSCORE', KEYS[1], ARGV[i + 1])
    if not there or tonumber(there) < tonumber(score) then
      redis.call('ZADD', KEYS[1], score, ARGV[i + 1])
    end
    redis.call('ZREM', KEYS[1], ARGV[i])
    moved = moved + 1
  end
end
return moved
"""
)


class StoreOutdated(StoreRefused):
    """The store's key layout is not the one this version reads and writes."""


def layout_check(client) -> None:
    """Refuse a store of another layout; stamp an empty one with LAYOUT.

    Runs once per process, on its first connection (`config.redis.on_first_connect`).
    """
    recorded = client.get(keys.store_layout())
    if recorded is not None and int(recorded) == LAYOUT:
        return
    if recorded is None and key_count(client) == 0:
        client.set(keys.store_layout(), LAYOUT, nx=True)
        return layout_check(client)  # a concurrent stamp or upgrade may have won
    if recorded is not None and int(recorded) > LAYOUT:
        raise StoreOutdated(
            f"This Redis store has key layout {recorded}, written by a newer "
            f"version of the site; this version reads layout {LAYOUT}. Deploy the "
            "newer version."
        )
    raise StoreOutdated(
        f"This Redis store has key layout {recorded or '1 (none recorded)'}; this "
        f"version reads layout {LAYOUT}. Run `python manage.py upgrade_store` "
        "(`--dry-run` first to see what it does), then start the site again."
    )


def data_keys(client) -> int:
    """How many keys the store holds besides its layout stamp (every master)."""
    return key_count(client) - client.exists(keys.store_layout())


def layout_stamp(client) -> None:
    """Record LAYOUT in a store that was just emptied (seed --flush)."""
    client.set(keys.store_layout(), LAYOUT)


@dataclass
class UpgradeReport:
    """What an upgrade found and wrote (with `dry_run`, what it would write)."""

    dry_run: bool
    layout_before: int | None = None  # None: no layout recorded (layout 1)
    followers_sets: int = 0  # followers zsets checked
    follows: int = 0  # entries in them
    names_added: int = 0  # follower names written
    unnamed: int = 0  # follows left unnamed: the follower's user hash is gone
    global_entries_moved: int = 0  # entries of the one global timeline, partitioned
    readers_stamped: int = 0  # users given a last-seen stamp (layout 4)
    names_indexed: int = 0  # entries added to the people search's index (layout 5)
    muters_marked: int = 0  # users given their bit in `muters` (layout 6)
    counted: SiteCounts | None = None  # the site's counts (layout 7), if counted
    conversations_named: int = 0  # replies and reposts given theirs (layout 8)
    outbox_entries_named: int = 0  # outbox copies of them given theirs too
    conversation_mutes_moved: int = 0  # mutes moved to their first status
    exclusive_synced: int = 0  # users whose exclusive lists' set was built (layout 9)
    legacy_keys_deleted: int = 0
    layout_recorded: bool = False  # store:layout raised to LAYOUT by this run


def store_upgrade(
    *,
    dry_run: bool = False,
    batch: int = BATCH,
    progress: Callable[[UpgradeReport], None] | None = None,
) -> UpgradeReport:
    """Upgrade the store to LAYOUT; with `dry_run`, only count what that would do.

    `progress(report)` is called after each batch of followers zsets.
    """
    r = get_redis()
    recorded = r.get(keys.store_layout())
    report = UpgradeReport(
        dry_run=dry_run, layout_before=int(recorded) if recorded else None
    )
    # No layout recorded: layout 1 (an empty store has nothing for a step to walk).
    before = report.layout_before or 1

    def due(layout: int) -> bool:
        """Whether the store predates `layout`, so its step is to run."""
        return before < layout

    if due(2):
        owners: list[int] = []
        for key in r.scan_iter(match=keys.followers_pattern(), count=SCAN_COUNT):
            uid = keys.followers_owner(key)
            if uid is not None:
                owners.append(uid)
            if len(owners) >= batch:
                _follower_names_backfill(owners, report)
                owners = []
                if progress:
                    progress(report)
        if owners:
            _follower_names_backfill(owners, report)
            if progress:
                progress(report)

    if due(3):
        _global_partition(report)
    if due(4):
        _readers_stamp(report, batch=batch * 10)
    if due(5):
        _names_index(report, batch=batch * 10)
    if due(7):
        report.counted = counts_recount(write=not dry_run).site
    if due(8):
        roots = _Roots()
        _conversations_name(report, roots, batch=batch * 10)
        _conversation_mutes_move(report, roots, batch=batch)
    if due(9):
        _exclusive_build(report, batch=batch)
    # Whatever the layout (see the module docstring): a store copied from a Cluster
    # records the current layout without one server's `muters`. After layout 9's
    # step, whose sets it reads.
    _muters_mark(report, batch=batch * 10)
    legacy = (
        [
            account_keys.legacy_store_epoch(),
            keys.legacy_status_ids(),
            keys.legacy_global_timeline(),
        ]
        if due(3)
        else []
    )
    if dry_run:
        report.legacy_keys_deleted = sum(r.exists(key) for key in legacy)
        report.layout_recorded = (report.layout_before or 0) < LAYOUT
    else:
        # One key per command: on a Cluster the keys live in different slots.
        report.legacy_keys_deleted = sum(r.delete(key) for key in legacy)
        report.layout_recorded = bool(
            _LAYOUT_RAISE(keys=[keys.store_layout()], args=[LAYOUT])
        )
    return report


def _each_owners(pattern: str, batch: int, run: Callable[[list[int]], None]) -> None:
    """Run `run` on the owners (uids; sids of status hashes) of the keys SCAN finds
    for a per-user (per-status) pattern, `batch` at a time."""
    uids: list[int] = []
    for key in get_redis().scan_iter(match=pattern, count=SCAN_COUNT):
        uid = keys.key_owner(key, pattern)
        if uid is not None:
            uids.append(uid)
        if len(uids) >= batch:
            run(uids)
            uids = []
    if uids:
        run(uids)


def _readers_stamp(report: UpgradeReport, *, batch: int) -> None:
    """Stamp every user without a last-seen stamp as seen today (layout 4)."""
    pattern = account_keys.user_pattern()

    def stamp(uids: list[int]) -> None:
        if report.dry_run:
            found = pipeline_run(
                lambda pipe: [pipe.exists(account_keys.seen(u)) for u in uids],
                confirm=False,
            )
            report.readers_stamped += sum(not n for n in found)
            return
        replies = pipeline_run(
            lambda pipe: [
                pipe.set(
                    account_keys.seen(u), seen_day(), ex=seen_ttl_seconds(), nx=True
                )
                for u in uids
            ]
        )
        report.readers_stamped += sum(bool(reply) for reply in replies)

    _each_owners(pattern, batch, stamp)


def _names_index(report: UpgradeReport, *, batch: int) -> None:
    """Add every user's names to the people search's index (layout 5)."""
    r = get_redis()
    pattern = account_keys.user_pattern()
    fields = [User.USERNAME_FIELD, User.NAME_FIELD, User.DELETED_FIELD]

    def index(uids: list[int]) -> None:
        rows = pipeline_run(
            lambda pipe: [pipe.hmget(account_keys.user(u), fields) for u in uids],
            confirm=False,
        )
        users = [
            User(id=u, username=name, created=0, name=display or "")
            for u, (name, display, deleted) in zip(uids, rows, strict=True)
            if name is not None and deleted is None
        ]
        if not users:
            return
        if report.dry_run:
            entries = [entry for user in users for entry in names_entries(user)]
            scores = r.zmscore(account_keys.names_index(), entries)
            report.names_indexed += sum(score is None for score in scores)
            return
        replies = pipeline_run(
            lambda pipe: [names_index_queue(pipe, user=user) for user in users]
        )
        report.names_indexed += sum(int(reply) for reply in replies)

    _each_owners(pattern, batch, index)


def _muters_mark(report: UpgradeReport, *, batch: int) -> None:
    """Set the `muters` bit of everyone who mutes anyone (layout 6, one server), or
    has anyone on an exclusive list (`list_exclusive`: the bit says "has home
    skips"). A dry run counts someone with both twice."""
    if is_cluster():
        return

    def mark(uids: list[int]) -> None:
        if report.dry_run:
            bits = pipeline_run(
                lambda pipe: [pipe.getbit(keys.muters(), u) for u in uids],
                confirm=False,
            )
            report.muters_marked += sum(not bit for bit in bits)
            return
        before = pipeline_run(
            lambda pipe: [pipe.setbit(keys.muters(), u, 1) for u in uids]
        )
        report.muters_marked += sum(not bit for bit in before)

    _each_owners(keys.mutes_pattern(), batch, mark)
    _each_owners(keys.list_exclusive_pattern(), batch, mark)


def _exclusive_build(report: UpgradeReport, *, batch: int) -> None:
    """Build `list_exclusive` for every user who has lists (layout 9): the lists'
    own sync step, one script in their slot, their members' statuses then swept
    out of their home. A dry run counts the users it would look at."""

    def build(uids: list[int]) -> None:
        report.exclusive_synced += len(uids)
        if not report.dry_run:
            for uid in uids:
                lists.exclusive_sync(uid=uid)

    _each_owners(keys.lists_pattern(), batch, build)


def _global_partition(report: UpgradeReport) -> None:
    """Add the one global timeline's entries to the partitions (layouts 1-2)."""
    r = get_redis()
    entries = [int(sid) for sid in r.zrange(keys.legacy_global_timeline(), 0, -1)]
    report.global_entries_moved = len(entries)
    if report.dry_run or not entries:
        return
    for start in range(0, len(entries), 1000):
        chunk = entries[start : start + 1000]
        pipeline_run(lambda pipe, chunk=chunk: global_add_queue(pipe, sids=chunk))


def _follower_names_backfill(owners: list[int], report: UpgradeReport) -> None:
    """Name the unnamed followers of these users, ZSCAN_COUNT followers at a time.

    ZSCAN (not a rank range) returns every follower present for the whole scan,
    even while others follow or unfollow.
    """
    cursors = dict.fromkeys(owners, 0)  # SCAN may return a key twice
    report.followers_sets += len(cursors)
    while cursors:
        current, cursors = cursors, {}

        def read_followers(pipe, current=current) -> None:
            for uid, cursor in current.items():
                pipe.zscan(keys.followers(uid), cursor, count=ZSCAN_COUNT)

        chunk: dict[int, list[int]] = {}
        replies = pipeline_run(read_followers, confirm=False)
        for uid, (cursor, members) in zip(current, replies, strict=True):
            chunk[uid] = [int(member) for member, _score in members]
            if int(cursor):
                cursors[uid] = int(cursor)
        _follower_names_fill(chunk, report)


def _follower_names_fill(chunk: dict[int, list[int]], report: UpgradeReport) -> None:
    """Name the followers in `chunk` (owner -> followers) that have no name yet.

    Three round trips: which names are missing, the missing followers' users, the
    writes (one script call per owner, each in the owner's slot).
    """
    chunk = {uid: followers for uid, followers in chunk.items() if followers}
    report.follows += sum(len(followers) for followers in chunk.values())

    def read_names(pipe) -> None:
        for uid, followers in chunk.items():
            pipe.hmget(keys.follower_names(uid), followers)

    missing: dict[int, list[int]] = {}
    for (uid, followers), names in zip(
        chunk.items(), pipeline_run(read_names, confirm=False), strict=True
    ):
        unnamed = [f for f, name in zip(followers, names, strict=True) if name is None]
        if unnamed:
            missing[uid] = unnamed
    if not missing:
        return
    wanted = sorted({f for followers in missing.values() for f in followers})
    users = users_queue(ReadBatch(), uids=wanted).value
    to_write: dict[int, list[str | int]] = {}
    for uid, followers in missing.items():
        report.unnamed += sum(1 for f in followers if f not in users)
        args = [
            value for f in followers if f in users for value in (f, users[f].username)
        ]
        if args:
            to_write[uid] = args
    if report.dry_run:
        report.names_added += sum(len(args) // 2 for args in to_write.values())
        return

    def name_followers(pipe) -> None:
        for uid, args in to_write.items():
            _NAMES_BACKFILL.queue(
                pipe, keys=[keys.followers(uid), keys.follower_names(uid)], args=args
            )

    if to_write:
        report.names_added += sum(pipeline_run(name_followers))


@dataclass(frozen=True)
class _Links:
    """What the conversation walk needs of a status (layout 8)."""

    uid: int
    reply_to: int | None
    repost_of: int | None
    ancestors: tuple[int, ...]  # older than the parent, nearest first (`thread`)
    conversation: int | None  # as stored


class _Unread(Exception):
    """The walk needs a status not read yet."""

    def __init__(self, sid: int):
        super().__init__(sid)
        self.sid = sid


class _Roots:
    """Each status's conversation, found by walking up its parents (layout 8).

    Read in rounds: a walk that reaches a status not read yet stops, the round's
    missing statuses are read in one pipeline, and the walks start again (each
    round goes one level further up, and what is known is kept).
    """

    def __init__(self) -> None:
        self.links: dict[int, _Links | None] = {}  # None: no such status
        self.roots: dict[int, int] = {}
        # The conversation a reply or repost was muted by before (its stored one,
        # else what `Status.conversation_id` worked out) -> the one it now names:
        # a mute of a since-deleted status follows it (never forgotten).
        self.renamed: dict[int, int] = {}

    def read(self, sids: list[int]) -> None:
        wanted = [sid for sid in dict.fromkeys(sids) if sid not in self.links]
        if len(self.links) + len(wanted) > WALK_MEMORY:
            # Forget everything, and read all that is asked for again.
            self.links.clear()
            self.roots.clear()
            wanted = list(dict.fromkeys(sids))
        if not wanted:
            return
        rows = pipeline_run(
            lambda pipe: [
                pipe.hmget(keys.status(sid), Status.IMMUTABLE) for sid in wanted
            ],
            confirm=False,
        )
        for sid, row in zip(wanted, rows, strict=True):
            status = Status.from_fields(sid, row)  # the one reader of the hash
            self.links[sid] = (
                None
                if status is None
                else _Links(
                    uid=status.author_id,
                    reply_to=status.reply_to,
                    repost_of=status.repost_of,
                    ancestors=tuple(ancestor for ancestor, _ in status.thread),
                    conversation=status.conversation,
                )
            )

    def _get(self, sid: int) -> _Links | None:
        if sid not in self.links:
            raise _Unread(sid)
        return self.links[sid]

    def _step(self, sid: int, links: _Links) -> tuple[int | None, int]:
        """Where the walk goes from a status: (the next status up, None) while there
        is one, else (None, the conversation it ends at)."""
        if links.repost_of is not None:
            up = [links.repost_of]
        elif links.reply_to is not None:
            up = [links.reply_to, *links.ancestors]
        else:
            return None, sid  # a thread's first status
        for above in up:
            if self._get(above) is not None:
                return above, 0
        # Every status named above is gone: the stored conversation (followed up
        # while it stands), else the oldest named (what `Status.conversation_id`
        # says of it).
        if links.conversation is not None:
            if links.conversation != sid and self._get(links.conversation):
                return links.conversation, 0
            return None, links.conversation
        return None, up[-1]

    def root(self, sid: int) -> int:
        """The conversation of a status that stands; _Unread for a status to read."""
        path: list[int] = []
        walked: set[int] = set()
        at = sid
        while True:
            if at in self.roots:
                found = self.roots[at]
                break
            links = self._get(at)
            assert links is not None
            path.append(at)
            walked.add(at)
            above, found = self._step(at, links)
            if above is None:
                break
            if above in walked:  # a loop (no status the site wrote makes one)
                found = min(path)
                break
            at = above
        for each in path:
            self.roots[each] = found
        return found

    def resolve(self, sids: list[int]) -> dict[int, int]:
        """The conversation of each status of `sids` that stands."""
        missing: list[int] = []
        while True:
            self.read(sids + missing)
            found: dict[int, int] = {}
            missing = []
            for sid in sids:
                if self.links[sid] is None:
                    continue
                try:
                    found[sid] = self.root(sid)
                except _Unread as unread:
                    missing.append(unread.sid)
            if not missing:
                return found


def _conversation_before(links: _Links) -> int | None:
    """The conversation a status named before the upgrade (`Status.conversation_id`
    as read then); None for a thread's first status."""
    if links.conversation is not None:
        return links.conversation
    if links.repost_of is not None:
        return links.repost_of
    if links.ancestors:
        return links.ancestors[-1]
    return links.reply_to


def _sid_member(member: str) -> int | None:
    """A `conversation_mutes` member's sid: a plain decimal number, as written."""
    if member.isascii() and member.isdigit() and str(int(member)) == member:
        return int(member)
    return None


def _conversations_name(report: UpgradeReport, roots: _Roots, *, batch: int) -> None:
    """Name the conversation of every reply and repost where it is missing or wrong,
    in its hash and its outbox copy (layout 8)."""
    r = get_redis()
    if not report.dry_run:
        # A run cut short recorded these: what it renamed before it stopped.
        for before, root in r.hscan_iter(keys.upgrade_conversations()):
            roots.renamed.setdefault(int(before), int(root))

    def name(chunk: list[int]) -> None:
        found = roots.resolve(chunk)
        renamed: dict[int, int] = {}
        for sid, root in found.items():
            links = roots.links[sid]
            before = _conversation_before(links) if links else None
            if before is not None and before != root and before not in roots.renamed:
                renamed[before] = roots.renamed[before] = root
        if renamed and not report.dry_run:
            # Kept in the store before any status names its new conversation: a
            # run cut short finds them there again (`_conversation_mutes_move`).
            r.hset(keys.upgrade_conversations(), mapping=renamed)
        owed = {
            sid: root
            for sid, root in found.items()
            if (links := roots.links.get(sid)) is not None
            and (links.reply_to is not None or links.repost_of is not None)
            and links.conversation != root
        }
        if not owed:
            return
        report.conversations_named += len(owed)
        authors = {sid: roots.links[sid].uid for sid in owed}
        entries = pipeline_run(
            lambda pipe: [
                pipe.hget(keys.outbox(uid), sid) for sid, uid in authors.items()
            ],
            confirm=False,
        )
        rewrites: dict[int, list] = {}
        for (sid, uid), entry in zip(authors.items(), entries, strict=True):
            stored = Status.from_json(sid, entry) if entry else None
            if stored is None:
                continue
            named = replace(stored, conversation=owed[sid]).to_json()
            rewrites.setdefault(uid, []).extend([sid, entry, named])
        report.outbox_entries_named += sum(len(v) // 3 for v in rewrites.values())
        if report.dry_run:
            return

        def write(pipe) -> None:
            # The outbox copies first: a run cut short between finds the hash still
            # to name, and writes both again.
            for uid, args in rewrites.items():
                _OUTBOX_REWRITE.queue(pipe, keys=[keys.outbox(uid)], args=args)
            pipe.barrier()
            for sid, root in owed.items():
                _CONVERSATION_NAME.queue(pipe, keys=[keys.status(sid)], args=[root])

        pipeline_run(write)
        # What the walk knows of them now, for the mutes' walk.
        for sid, root in owed.items():
            roots.links[sid] = replace(roots.links[sid], conversation=root)

    _each_owners(keys.status_pattern(), batch, name)


def _conversation_mutes_move(
    report: UpgradeReport, roots: _Roots, *, batch: int
) -> None:
    """Move each mute recorded by a status that is not its thread's first to the
    first status (layout 8)."""

    def move(uids: list[int]) -> None:
        mutes = pipeline_run(
            lambda pipe: [
                pipe.zrange(keys.conversation_mutes(uid), 0, -1) for uid in uids
            ],
            confirm=False,
        )
        sids = {sid for members in mutes for m in members if (sid := _sid_member(m))}
        found = roots.resolve(list(sids))
        moves: dict[int, list[int]] = {}
        for uid, members in zip(uids, mutes, strict=True):
            for member in members:
                sid = _sid_member(member)
                if sid is None:
                    continue
                # A deleted status's mute: where the statuses that named it went.
                root = found[sid] if sid in found else roots.renamed.get(sid, sid)
                if root != sid:
                    moves.setdefault(uid, []).extend([sid, root])
        if report.dry_run:
            report.conversation_mutes_moved += sum(len(v) // 2 for v in moves.values())
            return
        replies = pipeline_run(
            lambda pipe: [
                _MUTES_MOVE.queue(pipe, keys=[keys.conversation_mutes(uid)], args=args)
                for uid, args in moves.items()
            ]
        )
        report.conversation_mutes_moved += sum(int(n) for n in replies)

    _each_owners(keys.conversation_mutes_pattern(), batch, move)
    if not report.dry_run:
        get_redis().delete(keys.upgrade_conversations())
