"""Batched equivalents of the services, for `manage.py seed`.

They write exactly the keys and values `accounts.services` and `timeline.services`
write (same key builders, same scores, hashes built by `User.to_hash` and
`Status.to_hash`, a `follower_names` entry beside every `followers` one), many at a
time, so seeded data is indistinguishable from data made through the site. Home
timelines are filled as if every status had been fanned out when it was posted: each
holds the newest HOME_TIMELINE_CAP statuses of its owner and of the people they
follow.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.management.base import OutputWrapper

from accounts import keys as account_keys
from accounts.domain import User
from accounts.services import active_queue, names_index_queue, seen_stamp_queue
from config.pipelines import pipeline_run
from config.redis import get_redis
from timeline import keys, notifications, polls
from timeline.counts import counts_recount
from timeline.domain import (
    POLL_EXPIRES_MAX,
    POLL_EXPIRES_MIN,
    POLL_OPTIONS_MAX,
    POLL_OPTIONS_MIN,
    Poll,
    Status,
)
from timeline.ids import shard_of, tick_block_reserve
from timeline.services import POPULAR_CAP, global_add_queue

WORDS = [
    "redis",
    "django",
    "timeline",
    "follow",
    "post",
    "status",
    "coffee",
    "morning",
    "deploy",
    "cluster",
    "weekend",
    "music",
    "rain",
    "sunny",
    "train",
    "book",
    "reading",
    "shipping",
    "bug",
    "fix",
    "release",
    "party",
    "cat",
    "dog",
    "garden",
    "lunch",
    "run",
    "bike",
    "code",
    "review",
    "test",
    "green",
    "fast",
    "memory",
    "listpack",
    "pipeline",
    "lua",
    "atomic",
    "slot",
    "hash",
    "tag",
    "cache",
    "queue",
    "fan",
    "out",
    "home",
    "profile",
    "friend",
    "idea",
    "today",
    "tomorrow",
    "city",
    "river",
    "mountain",
    "sea",
    "night",
    "moon",
    "star",
    "tea",
    "pizza",
    "game",
    "movie",
]

DAY = 86400

# Polls (`timeline.polls`): one status in SEED_POLL_SHARE asks one, at most
# SEED_POLLS_MAX a run, every other one still open; each takes the votes of up to
# SEED_POLL_VOTERS_MAX of its author's followers.
SEED_POLL_SHARE = 20
SEED_POLLS_MAX = 2000
SEED_POLL_VOTERS_MAX = 12


@dataclass
class SeedReport:
    """What a seeding run wrote, and how long each phase took (seconds)."""

    users: int = 0
    follows: int = 0
    statuses: int = 0
    polls: int = 0
    home_entries: int = 0
    commands: int = 0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def commands_per_second(self) -> float:
        return self.commands / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict:
        """Every figure as plain data, the rate included (the benchmark's report)."""
        return {**asdict(self), "commands_per_second": self.commands_per_second}


class _Writer:
    """Queue commands (redis-py's command methods) and send them every `batch`
    commands, each batch in one round trip through `pipeline_run`."""

    def __init__(self, report: SeedReport, batch: int = 2000):
        self.queued: list[tuple[str, tuple, dict]] = []
        self.report = report
        self.batch = batch

    def __getattr__(self, name):
        def queued(*args, **kwargs):
            self.queued.append((name, args, kwargs))
            if len(self.queued) >= self.batch:
                self.flush()

        return queued

    def flush(self) -> None:
        commands, self.queued = self.queued, []
        if not commands:
            return

        def write(pipe) -> None:
            for name, args, kwargs in commands:
                getattr(pipe, name)(*args, **kwargs)

        self.report.commands += len(commands)
        pipeline_run(write)


class Progress:
    """Seeding progress: a bar redrawn in place on a terminal, else a line per phase.

    Writes to a management command's output (`self.stdout`, a Django OutputWrapper);
    `Progress()` writes nothing.
    """

    WIDTH = 30

    def __init__(self, out: OutputWrapper | None = None):
        self.out = out
        self.tty = out is not None and out.isatty()

    def update(self, phase: str, done: int, total: int) -> None:
        if not self.tty:
            return
        filled = self.WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._write(f"\r{phase:<10} [{bar}] {done}/{total}")

    def finish(self, phase: str, total: int, seconds: float) -> None:
        if self.out is None:
            return
        # On a terminal, the line overwrites the bar (and blanks what it leaves).
        start, blank = ("\r", " " * (self.WIDTH + 20)) if self.tty else ("", "")
        self._write(f"{start}{phase:<10} {total} in {seconds:.1f}s{blank}\n")

    def _write(self, text: str) -> None:
        self.out.write(text, ending="")
        self.out.flush()


def _power_law_picker(n: int, rng: random.Random, alpha: float) -> Callable[[], int]:
    """Pick indexes 0..n-1 with probability ~ 1/(rank+1)^alpha, ranks shuffled."""
    ranks = list(range(n))
    rng.shuffle(ranks)  # the most followed users are spread over the id range
    cumulative = list(itertools.accumulate(1.0 / (r + 1) ** alpha for r in range(n)))
    total = cumulative[-1]

    def pick() -> int:
        return ranks[bisect.bisect_left(cumulative, rng.random() * total)]

    return pick


def _text(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(3, 24))
    text = " ".join(words).capitalize()
    return text[: settings.STATUS_MAX_LENGTH]


def seed(
    *,
    users: int,
    follows_per_user: int,
    statuses_per_user: int,
    password: str,
    random_seed: int,
    days: int = 28,
    alpha: float = 1.0,
    progress: Progress | None = None,
) -> SeedReport:
    """Create users, a power-law follow graph and statuses; fill home timelines.

    Each user follows at least one other, `follows_per_user` on average (0: no
    follows at all). `users` >= 2, `days` >= 1 and the other counts >= 0 (the
    command checks them before anything is written).
    """
    if users < 2 or days < 1 or min(follows_per_user, statuses_per_user) < 0:
        raise ValueError("seed: users >= 2, days >= 1, counts >= 0")
    progress = progress or Progress()
    rng = random.Random(random_seed)
    report = SeedReport()
    started = time.monotonic()
    r = get_redis()
    now = time.time()
    home_cap = settings.HOME_TIMELINE_CAP

    # --- users: ids reserved in one INCRBY, names claimed with SET NX -------------
    phase_start = time.monotonic()
    last_uid = int(r.incrby(account_keys.user_ids(), users))
    uids = list(range(last_uid - users + 1, last_uid + 1))
    password_hash = make_password(password)  # one hash: every seeded user shares it
    people: dict[int, User] = {}
    writer = _Writer(report)
    for i, uid in enumerate(uids):
        created = now - days * DAY - rng.random() * DAY
        user = User(id=uid, username=f"user{uid}", created=created)
        writer.hset(
            account_keys.user(uid), mapping=user.to_hash(password_hash=password_hash)
        )
        seen_stamp_queue(writer, uid=uid)
        active_queue(writer, uid=uid)
        people[uid] = user
        if i % 5000 == 0:
            progress.update("users", i, users)
    writer.flush()
    _claim_names(people, password_hash, report, rng)
    seeded = list(people.values())
    for start in range(0, len(seeded), 1000):  # findable by name, as a sign-up is
        batch = seeded[start : start + 1000]
        pipeline_run(
            lambda pipe, batch=batch: [names_index_queue(pipe, user=u) for u in batch]
        )
        report.commands += len(batch)
    names = {uid: user.username for uid, user in people.items()}
    report.users = users
    progress.finish("users", users, time.monotonic() - phase_start)
    report.phases["users"] = time.monotonic() - phase_start

    # --- follows: power-law popularity, distinct microsecond times ------------------
    phase_start = time.monotonic()
    pick = _power_law_picker(users, rng, alpha)
    following: dict[int, list[int]] = {}
    for i, uid in enumerate(uids):
        want = (
            min(users - 1, max(1, int(rng.expovariate(1 / follows_per_user))))
            if follows_per_user
            else 0
        )
        chosen: set[int] = set()
        for _ in range(want * 3):
            if len(chosen) >= want:
                break
            other = uids[pick()]
            if other != uid:
                chosen.add(other)
        following[uid] = sorted(chosen)
        if i % 5000 == 0:
            progress.update("follows", i, users)
    followers: dict[int, dict[int, int]] = {}
    start_us = int((now - days * DAY) * 1_000_000)
    span_us = days * DAY * 1_000_000
    writer = _Writer(report)
    tick = itertools.count()
    for uid, followees in following.items():
        if not followees:
            continue
        scores: dict[int, int] = {}
        for followee in followees:
            # Distinct times: a random instant plus a unique tie-breaker.
            scores[followee] = start_us + rng.randrange(span_us) + next(tick) % 997
            followers.setdefault(followee, {})[uid] = scores[followee]
        writer.zadd(keys.following(uid), scores)
        report.follows += len(scores)
    for followee, by in followers.items():
        writer.zadd(keys.followers(followee), by)
        writer.hset(keys.follower_names(followee), mapping={f: names[f] for f in by})
    popular = heapq.nlargest(POPULAR_CAP, followers.items(), key=lambda kv: len(kv[1]))
    if popular:
        writer.zadd(keys.popular_users(), {uid: len(by) for uid, by in popular})
    writer.flush()
    progress.finish("follows", report.follows, time.monotonic() - phase_start)
    report.phases["follows"] = time.monotonic() - phase_start

    # --- statuses: times spread over the past weeks, ids in time order --------------
    phase_start = time.monotonic()
    total = users * statuses_per_user
    times = sorted(now - rng.random() * days * DAY for _ in range(total))
    first_tick = tick_block_reserve(total) if total else 0
    authors = [uids[rng.randrange(users)] for _ in range(total)]
    by_author: dict[int, list[int]] = {}
    by_partition: dict[str, list[int]] = {}
    writer = _Writer(report)
    # A random of its own: the rest of the data stays what this seed gave before.
    poll_rng = random.Random(random_seed + 1)
    asking = set(
        poll_rng.sample(range(total), min(total // SEED_POLL_SHARE, SEED_POLLS_MAX))
    )
    asked: list[Status] = []
    for i, (created, author) in enumerate(zip(times, authors, strict=True)):
        sid = (first_tick + i) * keys.ID_SHARDS + shard_of(author)
        status = Status(
            id=sid,
            author_id=author,
            author=names[author],
            text=_text(rng),
            created=created,
            poll=_poll(poll_rng, created, now, len(asked)) if i in asking else None,
        )
        if status.poll is not None:
            asked.append(status)
        writer.hset(keys.status(sid), mapping=status.to_hash())
        by_author.setdefault(author, []).append(sid)
        by_partition.setdefault(keys.global_partition(sid), []).append(sid)
        if i % 20000 == 0:
            progress.update("statuses", i, total)
    writer.flush()  # every hash is written before anything references it
    for author, sids in by_author.items():
        for start in range(0, len(sids), 1000):
            chunk = sids[start : start + 1000]
            writer.zadd(keys.posts(author), {sid: sid for sid in chunk})
    writer.flush()
    # One past the cap per partition: a partition that had more is trimmed and
    # marked as it would have been by posting (`global_add_queue`).
    newest = [
        sid
        for sids in by_partition.values()
        for sid in sids[-settings.GLOBAL_TIMELINE_CAP - 1 :]
    ]
    for start in range(0, len(newest), 2000):
        chunk = newest[start : start + 2000]
        pipeline_run(lambda pipe, chunk=chunk: global_add_queue(pipe, sids=chunk))
    writer.flush()
    report.statuses = total
    progress.finish("statuses", total, time.monotonic() - phase_start)
    report.phases["statuses"] = time.monotonic() - phase_start

    # --- polls: votes, and what their closing did or will do ------------------------
    phase_start = time.monotonic()
    writer = _Writer(report, batch=500)
    for status in asked:
        _votes(writer, poll_rng, status, followers.get(status.author_id, {}), now)
    writer.flush()
    report.polls = len(asked)
    progress.finish("polls", len(asked), time.monotonic() - phase_start)
    report.phases["polls"] = time.monotonic() - phase_start

    # --- homes: what fan-out would have left, newest HOME_TIMELINE_CAP -------------
    phase_start = time.monotonic()
    writer = _Writer(report, batch=200)
    for i, uid in enumerate(uids):
        sources = [by_author.get(a, ()) for a in (uid, *following.get(uid, ()))]
        merged = heapq.merge(*(reversed(s) for s in sources if s), reverse=True)
        home = list(itertools.islice(merged, home_cap))
        if home:
            writer.zadd(keys.home(uid), {sid: sid for sid in home})
            report.home_entries += len(home)
        if i % 2000 == 0:
            progress.update("homes", i, users)
    writer.flush()
    progress.finish("homes", report.home_entries, time.monotonic() - phase_start)
    report.phases["homes"] = time.monotonic() - phase_start

    # --- the site's counts (`timeline.counts`) and their sum, as the site keeps them
    counts_recount(write=True)

    report.seconds = time.monotonic() - started
    return report


def _poll(rng: random.Random, created: float, now: float, n: int) -> Poll:
    """A poll asked at `created`: two to four options, open from five minutes to
    a week; every other one (`n`: how many were asked before) still open now, when
    its status is recent enough for that, else closed."""
    options = rng.sample(WORDS, rng.randint(POLL_OPTIONS_MIN, POLL_OPTIONS_MAX))
    age = now - created
    if n % 2 == 0 and age + 3600 <= POLL_EXPIRES_MAX:
        seconds = age + rng.uniform(3600, min(3 * DAY, POLL_EXPIRES_MAX - age))
    elif age > POLL_EXPIRES_MIN + 1:
        seconds = rng.uniform(POLL_EXPIRES_MIN, min(7 * DAY, age - 1))
    else:  # too recent to have closed: open a while yet
        seconds = POLL_EXPIRES_MIN + rng.uniform(0, 3600)
    return Poll(
        options=tuple(o.capitalize() for o in options),
        expires=round(created + seconds, 3),
        multiple=rng.random() < 0.25,
        hide_totals=rng.random() < 0.2,
    )


def _votes(
    writer: _Writer,
    rng: random.Random,
    status: Status,
    followers: dict[int, int],
    now: float,
) -> None:
    """Queue a poll's votes (a few of its author's followers), as the vote script
    writes them (`timeline.polls._VOTE`: `v:<uid>`, `tally`, `poll_voters`), and
    what its closing owes: an open poll's job, due when it closes
    (`polls.poll_end_queue`, which marks it queued), a closed one's notifications
    to its author and voters, as that job tells them, and its mark."""
    poll = status.poll
    assert poll is not None
    pool = sorted(followers)
    voters = rng.sample(pool, rng.randint(0, min(len(pool), SEED_POLL_VOTERS_MAX)))
    tally = [0] * (len(poll.options) + 1)
    start_ms = int(status.created * 1000)
    end_ms = int(min(poll.expires, now) * 1000) - 1
    fields: dict[str, str] = {}
    voted: dict[int, int] = {}
    for uid in voters:
        if poll.multiple:
            picked = sorted(
                rng.sample(range(len(poll.options)), rng.randint(1, len(poll.options)))
            )
        else:
            picked = [rng.randrange(len(poll.options))]
        fields[f"v:{uid}"] = " ".join(map(str, picked))
        tally[0] += 1
        for choice in picked:
            tally[choice + 1] += 1
        voted[uid] = rng.randint(start_ms, max(start_ms, end_ms))
    if voters:
        fields["tally"] = " ".join(map(str, tally))
        writer.hset(keys.status(status.id), mapping=fields)
        writer.zadd(keys.poll_voters(status.id), voted)
    if poll.expires > now:
        polls.poll_end_queue(writer, status=status)
        return
    writer.hset(keys.status(status.id), Status.POLL_JOB_FIELD, "1")
    at_ms = round(poll.expires * 1000)
    for uid in (status.author_id, *voters):
        notifications.notify_queue(
            writer,
            recipient=uid,
            kind="poll",
            actor=status.author_id,
            sid=status.id,
            at_ms=at_ms,
            conversation=status.conversation_id,
        )


def _claim_names(
    people: dict[int, User],
    password_hash: str,
    report: SeedReport,
    rng: random.Random,
) -> None:
    """Point each name at its id with SET NX; a name already taken gets a suffix.

    A renamed user's hash is written again whole (`User.to_hash`) and `people`
    updated, so the later phases use the name that was actually claimed.
    """
    r = get_redis()
    pending = list(people.values())
    while pending:

        def claim(pipe, pending=pending) -> None:
            for user in pending:
                pipe.set(account_keys.username(user.username), user.id, nx=True)

        claimed = pipeline_run(claim)
        report.commands += len(pending)
        taken = [user for user, ok in zip(pending, claimed, strict=True) if not ok]
        pending = []
        for user in taken:
            fresh = f"{user.username[:22]}_{rng.randrange(10**6)}"
            renamed = replace(user, username=fresh)
            r.hset(
                account_keys.user(user.id),
                mapping=renamed.to_hash(password_hash=password_hash),
            )
            people[user.id] = renamed
            pending.append(renamed)
