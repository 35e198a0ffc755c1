from __future__ import annotations

import contextlib
import threading

import pytest

from accounts import keys as account_keys
from accounts.domain import User
from accounts.selectors import PageReads, user_get_by_username
from accounts.services import SEEN_DAYS_MAX_UID, session_create
from config.redis import is_cluster, slot_groups, slot_of
from tests.helpers import make_away, make_user, run_jobs
from timeline import blocks, fanout, jobs, keys, selectors, services
from timeline.domain import Busy, CannotFollowSelf, Forbidden, InvalidStatus, NotFound


def homes_holding(r, readers: dict[str, User], status) -> set[str]:
    """The names of the readers whose home zset holds the status."""
    return {
        name
        for name, reader in readers.items()
        if r.zscore(keys.home(reader.id), status.id) is not None
    }


def home_ids(user: User) -> list[int]:
    reads = reads_for(user)
    home = selectors.home_get(reads=reads)
    assert reads.viewer.value == user
    return [s.id for s in home.page.statuses]


def reads_for(user: User) -> PageReads:
    """A request's reads for this user, logged in."""
    return PageReads(session_create(uid=user.id))


def follow(a: User, b: User) -> bool:
    return services.follow_create(follower=a, followee_id=b.id)


def unfollow(a: User, b: User) -> bool:
    return services.follow_delete(follower=a, followee_id=b.id)


def post(user: User, text: str = "hello"):
    return services.status_create(author=user, text=text)


@pytest.fixture
def users():
    return {name: make_user(name) for name in ("alice", "bob", "carol", "dave")}


def test_post_is_stored_once_with_author_text_and_time(r, users):
    status = post(users["alice"], "  first post\r\nsecond line  ")
    stored = r.hgetall(keys.status(status.id))
    assert stored["text"] == "first post\nsecond line"
    assert stored["author"] == "alice" and int(stored["uid"]) == users["alice"].id
    assert float(stored["created"]) == status.created


def test_post_ids_are_unique_and_increasing(users):
    ids = [post(users["alice"], f"n{i}").id for i in range(5)]
    assert ids == sorted(set(ids))


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "x" * 281])
def test_blank_or_long_status_refused_and_nothing_stored(r, users, text):
    with pytest.raises(InvalidStatus):
        post(users["alice"], text)
    assert not list(r.scan_iter(match="status:*"))
    assert r.zcard(keys.posts(users["alice"].id)) == 0


INVISIBLE = [
    "\u200b",  # zero width space
    "\u3164",  # Hangul filler
    "\ufeff",  # byte order mark
    "\u2060",  # word joiner
    "\u00ad",  # soft hyphen
    "\u200b \u200c\u200d\u200e\u200f\u2800\u180e\u115f\u1160\uffa0",
    "\u202e\u2061\u034f\ufe0f\U000e0020",
    " \u3000\u00a0\u2028\u2029\x85\x0b\x0c\t",
    "\x00\x07\x1b\x7f\u200b",
]


@pytest.mark.parametrize("text", INVISIBLE)
def test_status_of_invisible_characters_only_refused_and_nothing_stored(r, users, text):
    with pytest.raises(InvalidStatus, match="Write something first."):
        post(users["alice"], text)
    assert not list(r.scan_iter(match="status:*"))


def test_control_characters_are_stripped_line_breaks_kept(r, users):
    status = post(users["alice"], "a\x00b\x07c\x1b[31md\x7f\te\r\nf\rg\u2028h\x85i")
    stored = r.hget(keys.status(status.id), "text")
    assert stored == "abc[31md e\nf\ng\nh\ni"
    assert status.text == stored


def test_joiners_inside_visible_text_are_kept(r, users):
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one emoji, joined
    status = post(users["alice"], f"hi {family}\ufe0f")
    assert r.hget(keys.status(status.id), "text") == f"hi {family}\ufe0f"


def test_280_emoji_count_as_280_characters(users):
    status = post(users["alice"], "😀" * 280)
    assert len(status.text) == 280


def test_fanout_reaches_followers_only(users):
    follow(users["bob"], users["alice"])
    run_jobs()  # the follow's own (bob's suggestions: `timeline.suggestions`)
    status = post(users["alice"], "to my followers")
    assert status.id in home_ids(users["alice"])
    assert status.id not in home_ids(users["bob"])  # the fan-out job's work
    assert run_jobs() == 1
    assert status.id in home_ids(users["bob"])
    assert status.id not in home_ids(users["carol"])


def test_global_timeline_has_everyone(users):
    a = post(users["alice"])
    c = post(users["carol"])
    page = selectors.global_page(reads=PageReads())
    assert [s.id for s in page.statuses] == [c.id, a.id]


def test_home_timeline_capped(r, users, settings):
    settings.HOME_TIMELINE_CAP = 5
    follow(users["bob"], users["alice"])
    ids = [post(users["alice"], f"n{i}").id for i in range(8)]
    run_jobs()
    assert r.zcard(keys.home(users["bob"].id)) == 5
    assert home_ids(users["bob"]) == ids[::-1][:5]
    # The author's own record is not a cache: all 8 stay on the profile.
    assert r.zcard(keys.posts(users["alice"].id)) == 8


def test_global_timeline_capped(r, users, settings):
    settings.GLOBAL_TIMELINE_CAP = 3
    ids = [post(users["alice"], f"n{i}").id for i in range(5)]
    # Three statuses and the marker of where the partition now ends.
    assert r.zrange(keys.global_partition(ids[0]), 0, -1) == ["0", *map(str, ids[2:])]
    page = selectors.global_page(reads=PageReads())
    assert [s.id for s in page.statuses] == ids[::-1][:3]
    assert page.next_max_id is None


def test_global_timeline_merges_its_partitions_in_id_order(r, users, settings):
    settings.TIMELINE_PAGE_SIZE = 4
    authors = list(users.values())
    ids = [post(authors[i % 4], f"n{i}").id for i in range(12)]
    assert len({keys.global_partition(sid) for sid in ids}) == 4
    # Newest first by id: posts of one millisecond are ordered by their id shard.
    newest = sorted(ids, reverse=True)
    first = selectors.global_page(reads=PageReads())
    assert [s.id for s in first.statuses] == newest[:4]
    second = selectors.global_page(reads=PageReads(), max_id=first.next_max_id)
    assert [s.id for s in second.statuses] == newest[4:8]
    third = selectors.global_page(reads=PageReads(), max_id=second.next_max_id)
    assert [s.id for s in third.statuses] == newest[8:12]
    assert third.next_max_id is None


def test_global_pages_read_deep_into_the_one_partition_that_has_the_newest(
    users, settings
):
    settings.TIMELINE_PAGE_SIZE = 4
    authors = list(users.values())
    older = [post(author, "older").id for author in authors[1:4]]
    busy = [post(authors[0], f"n{i}").id for i in range(12)]
    # A page reads each partition a few statuses at a time: the one that holds all
    # of a page's statuses is read again until the page is full.
    pages, max_id = [], None
    while True:
        page = selectors.global_page(reads=PageReads(), max_id=max_id)
        pages.append([s.id for s in page.statuses])
        if (max_id := page.next_max_id) is None:
            break
    newest = sorted(older + busy, reverse=True)  # the global order: by id
    assert pages == [newest[i : i + 4] for i in range(0, 15, 4)]
    assert set(newest[:8]) <= set(busy)  # two pages from one partition alone


def test_global_pages_stop_where_a_full_partition_dropped_statuses(users, settings):
    settings.TIMELINE_PAGE_SIZE = 10
    settings.GLOBAL_TIMELINE_CAP = 2
    quiet = post(users["bob"], "old, in a partition nobody else writes").id
    busy = [post(users["alice"], f"n{i}").id for i in range(5)]
    page = selectors.global_page(reads=PageReads())
    # alice's partition dropped her 3 oldest: bob's status is older than what it
    # kept, so showing it would skip hers without saying so.
    assert [s.id for s in page.statuses] == busy[::-1][:2]
    assert quiet < busy[3]


def test_follow_backfills_newest_statuses(users, settings):
    settings.FOLLOW_BACKFILL = 3
    ids = [post(users["alice"], f"n{i}").id for i in range(5)]
    follow(users["bob"], users["alice"])
    assert home_ids(users["bob"]) == ids[::-1][:3]


def test_unfollow_removes_posts_from_home(users):
    follow(users["bob"], users["alice"])
    follow(users["bob"], users["carol"])
    for i in range(3):
        post(users["alice"], f"a{i}")
    kept = post(users["carol"], "stays")
    own = post(users["bob"], "mine")
    run_jobs()
    assert len(home_ids(users["bob"])) == 5
    unfollow(users["bob"], users["alice"])
    # (Two posts within a millisecond may come in either order.)
    assert set(home_ids(users["bob"])) == {own.id, kept.id}


def test_unfollow_removes_older_statuses_a_home_kept_while_its_reader_was_away(
    r, users, settings
):
    """Bob was away while alice posted a capful: back, his home got only her newest
    FOLLOW_BACKFILL and kept her older statuses; an unfollow removes those too
    (the sweep looks at what the home holds, not at her newest capful)."""
    settings.HOME_TIMELINE_CAP = 10
    settings.FOLLOW_BACKFILL = 2
    alice, bob = users["alice"], users["bob"]
    follow(bob, alice)
    old = post(alice, "an old status")
    run_jobs()
    make_away(r, bob.id)
    for i in range(settings.HOME_TIMELINE_CAP):
        post(alice, f"while away {i}")
    run_jobs()
    assert services.reader_seen(uid=bob.id)  # back: the home is rebuilt
    run_jobs()
    assert old.id in home_ids(bob) and len(home_ids(bob)) == 3
    own = post(bob, "mine")
    unfollow(bob, alice)
    assert home_ids(bob) == [own.id]
    assert r.zrange(keys.home(bob.id), 0, -1) == [str(own.id)]


def test_unfollow_removes_older_statuses_of_an_author_who_posted_a_capful_pulled(
    r, users, settings
):
    """Alice moved to pull mode and posted a capful that never reached bob's home,
    where her older pushed statuses stay; an unfollow removes them too."""
    settings.HOME_TIMELINE_CAP = 10
    settings.FANOUT_PUSH_MAX = 2
    alice, bob = users["alice"], users["bob"]
    follow(bob, alice)
    old = post(alice, "an old status")
    run_jobs()
    assert r.zscore(keys.home(bob.id), old.id) is not None
    follow(users["carol"], alice)
    follow(users["dave"], alice)
    run_jobs()
    assert r.get(keys.fanout_mode(alice.id)) == "pull"
    for i in range(settings.HOME_TIMELINE_CAP):
        post(alice, f"pulled {i}")
    run_jobs()
    unfollow(bob, alice)
    assert home_ids(bob) == []
    assert r.zcard(keys.home(bob.id)) == 0


def test_follow_and_unfollow_are_idempotent(r, users):
    assert follow(users["bob"], users["alice"]) is True
    assert follow(users["bob"], users["alice"]) is False
    assert r.zcard(keys.followers(users["alice"].id)) == 1
    assert unfollow(users["bob"], users["alice"]) is True
    assert unfollow(users["bob"], users["alice"]) is False
    assert r.zcard(keys.followers(users["alice"].id)) == 0
    assert r.zcard(keys.following(users["bob"].id)) == 0


def test_follow_self_refused(r, users):
    with pytest.raises(CannotFollowSelf):
        follow(users["alice"], users["alice"])
    assert r.zcard(keys.following(users["alice"].id)) == 0


def test_delete_removes_status_everywhere(r, users):
    follow(users["bob"], users["alice"])
    status = post(users["alice"], "oops")
    run_jobs()
    assert r.zscore(keys.home(users["bob"].id), status.id) is not None
    services.status_delete(user=users["alice"], sid=status.id)
    # Gone from every page at once; the removal job then clears the homes.
    assert not r.exists(keys.status(status.id))
    assert status.id not in home_ids(users["bob"])
    assert run_jobs() == 2  # the removal from homes, the unlink (timeline.social)
    for key in (
        keys.home(users["alice"].id),
        keys.home(users["bob"].id),
        keys.posts(users["alice"].id),
        keys.global_partition(status.id),
    ):
        assert r.zscore(key, status.id) is None
    assert selectors.status_get(reads=PageReads(), sid=status.id) is None


def test_delete_by_someone_else_forbidden(users):
    status = post(users["alice"])
    with pytest.raises(Forbidden):
        services.status_delete(user=users["bob"], sid=status.id)
    with pytest.raises(NotFound):
        services.status_delete(user=users["alice"], sid=status.id + 100)


def test_stale_id_never_renders_and_the_read_writes_nothing(r, users):
    kept = post(users["bob"], "real")
    r.zadd(keys.home(users["bob"].id), {999: 999})  # a reference to nothing
    before = r.zrange(keys.home(users["bob"].id), 0, -1)
    assert home_ids(users["bob"]) == [kept.id]
    assert r.zrange(keys.home(users["bob"].id), 0, -1) == before


def test_pagination_never_repeats_or_skips_while_posting(users, settings):
    settings.TIMELINE_PAGE_SIZE = 4
    alice = users["alice"]
    made = [post(alice, f"old{i}").id for i in range(10)]
    seen: list[int] = []
    max_id = None
    while True:
        page = selectors.global_page(reads=PageReads(), max_id=max_id)
        seen += [s.id for s in page.statuses]
        post(alice, "new arrival between pages")
        if page.next_max_id is None:
            break
        max_id = page.next_max_id
    assert seen == made[::-1]


def test_counts_equal_true_set_sizes(r, users):
    for name in ("bob", "carol", "dave"):
        follow(users[name], users["alice"])
    follow(users["alice"], users["bob"])
    unfollow(users["dave"], users["alice"])
    post(users["alice"])
    profile = selectors.profile_get(reads=PageReads(), username="alice")
    assert profile.followers == r.zcard(keys.followers(users["alice"].id)) == 2
    assert profile.following == r.zcard(keys.following(users["alice"].id)) == 1
    assert profile.statuses == r.zcard(keys.posts(users["alice"].id)) == 1


def test_people_pages_newest_first(users, settings):
    settings.TIMELINE_PAGE_SIZE = 2
    for name in ("bob", "carol", "dave"):
        follow(users[name], users["alice"])
    first = selectors.people_page(
        reads=PageReads(), username="alice", relation="followers"
    )
    assert first.owner.username == "alice"
    assert [u.username for u in first.users] == ["dave", "carol"]
    second = selectors.people_page(
        reads=PageReads(),
        username="alice",
        relation="followers",
        cursor=first.next_cursor,
    )
    assert [u.username for u in second.users] == ["bob"]
    assert second.next_cursor is None


def test_repeated_follow_completes_a_half_done_one(r, users):
    # A crash after the follower's side was written: the followee's side is missing.
    r.zadd(keys.following(users["bob"].id), {users["alice"].id: 1})
    post(users["alice"], "backfilled on repair")
    follow(users["bob"], users["alice"])
    assert r.zscore(keys.followers(users["alice"].id), users["bob"].id) is not None
    assert len(home_ids(users["bob"])) == 1


def test_a_fanout_run_twice_adds_nothing_twice(r, users, settings):
    # A worker wrote every home, then died before recording the job done: once its
    # lease ends the job runs again from its cursor.
    follow(users["bob"], users["alice"])
    run_jobs()  # the follow's own (bob's suggestions)
    status = post(users["alice"])
    (job,) = jobs.claim(slot=keys.slot_of_user(users["alice"].id), limit=1)
    fanout.run_post(job)
    assert run_jobs() == 0  # leased: nobody else takes it yet
    later = jobs.now_ms() + settings.JOB_LEASE_SECONDS * 1000 + 1
    assert run_jobs(now=later, sweep=True) == 1
    assert r.zrange(keys.home(users["bob"].id), 0, -1) == [str(status.id)]
    assert r.zcard(keys.global_partition(status.id)) == 1
    assert jobs.stats().depth == 0


def test_user_cache_notices_a_replaced_store(r, users):
    assert user_get_by_username(username="alice").id == users["alice"].id
    r.flushall()
    make_user("zed")  # takes id 1, which the process remembered as alice's
    assert user_get_by_username(username="alice") is None
    assert selectors.profile_get(reads=PageReads(), username="alice") is None


@pytest.mark.real_redis
def test_unfollow_arriving_during_a_follow_waits_for_it(r, users, monkeypatch):
    alice, bob = users["alice"], users["bob"]
    post(alice, "before")
    run = services.pipeline_run
    other: list[threading.Thread] = []
    waited: list[bool] = []

    def pipeline_run_with_an_unfollow_arriving(build):
        if not other:  # the follow's first write, with its lock held
            thread = threading.Thread(target=unfollow, args=(bob, alice))
            other.append(thread)
            thread.start()
            thread.join(timeout=0.5)
            waited.append(thread.is_alive())
        return run(build)

    monkeypatch.setattr(
        services, "pipeline_run", pipeline_run_with_an_unfollow_arriving
    )
    follow(bob, alice)
    other[0].join()
    assert waited == [True], "the unfollow ran in the middle of the follow"
    # The unfollow came second: nothing of the follow is left on either side.
    assert r.zscore(keys.following(bob.id), alice.id) is None
    assert r.zscore(keys.followers(alice.id), bob.id) is None
    alices = {int(s) for s in r.zrange(keys.posts(alice.id), 0, -1)}
    assert not alices & {int(s) for s in r.zrange(keys.home(bob.id), 0, -1)}


@pytest.mark.cluster
def test_fanout_racing_an_unfollow_leaves_nothing_behind(r, users, monkeypatch):
    # On a Cluster the fan-out reads a batch of followers, then writes their homes
    # in their own slots: an unfollow can land between the two. (One server reads
    # and writes in one script: the test below has the unfollow's own steps.)
    alice, bob = users["alice"], users["bob"]
    follow(bob, alice)
    run_jobs()  # the follow's own (bob's suggestions: `timeline.suggestions`)
    write = services.homes_add_queue

    def unfollow_then_write(pipe, **kwargs):
        assert bob.id in kwargs["readers"]  # the fan-out saw bob...
        unfollow(bob, alice)  # ...and bob unfollows before it writes
        return write(pipe, **kwargs)

    monkeypatch.setattr(services, "homes_add_queue", unfollow_then_write)
    status = post(alice, "racing")
    assert run_jobs() == 2  # the post's, then bob's suggestions after his unfollow
    assert r.zscore(keys.home(bob.id), status.id) is None
    assert r.zscore(keys.following(bob.id), alice.id) is None


@pytest.mark.real_redis
@pytest.mark.parametrize(
    "step",
    [
        "unlink",  # bob's follow has ended; he is still among alice's followers
        "finish_unlink",  # he has left them; alice's statuses not yet swept out
    ],
)
def test_fanout_between_the_steps_of_an_unfollow_leaves_nothing_behind(
    r, users, monkeypatch, step
):
    alice, bob = users["alice"], users["bob"]
    follow(bob, alice)
    run_jobs()
    status = post(alice, "racing")
    run = services.pipeline_run
    ran: list[int] = []

    def pipeline_run_with_the_fanout_first(build):
        if build.__name__ == step and not ran:
            ran.append(run_jobs())  # the post's job runs here, whole
        return run(build)

    monkeypatch.setattr(services, "pipeline_run", pipeline_run_with_the_fanout_first)
    unfollow(bob, alice)
    monkeypatch.undo()
    assert ran and ran[0] >= 1, "the post's job ran inside the unfollow"
    run_jobs()
    assert r.zscore(keys.home(bob.id), status.id) is None
    assert r.zscore(keys.following(bob.id), alice.id) is None
    assert r.zscore(keys.followers(alice.id), bob.id) is None


@pytest.mark.real_redis
def test_a_stalled_post_job_adds_nothing_after_its_author_is_deleted(
    r, users, monkeypatch
):
    # A worker holds the fan-out of alice's last post and stalls past its lease;
    # she deletes her account. The account job ends each follower's follow and
    # sweeps her statuses from their homes, keeping her followers zset until its
    # last step (so its walks can be run again). The stalled step lands then.
    alice, bob = users["alice"], users["bob"]
    follow(bob, alice)
    run_jobs()
    status = post(alice, "last words")
    (held,) = jobs.claim(slot=keys.slot_of_user(alice.id), limit=1)
    services.account_close(user=alice)
    walk = fanout._walk

    def walk_with_the_stalled_worker(job, zset, write, *, start, phase=""):
        if phase == "g ":  # the followers' homes are swept
            with contextlib.suppress(jobs.LeaseLost):
                fanout.run_post(held)
        return walk(job, zset, write, start=start, phase=phase)

    monkeypatch.setattr(fanout, "_walk", walk_with_the_stalled_worker)
    run_jobs(now=jobs.now_ms() + 10**9, sweep=True)
    assert not r.exists(keys.followers(alice.id)), "the account job finished"
    assert r.zscore(keys.home(bob.id), status.id) is None


@pytest.mark.real_redis
def test_a_stalled_post_job_publishes_nothing_of_a_deleted_status(r, users):
    alice, bob = users["alice"], users["bob"]
    follow(bob, alice)
    run_jobs()
    status = post(alice, "soon gone")
    (held,) = jobs.claim(slot=keys.slot_of_user(alice.id), limit=1)
    services.status_delete(user=alice, sid=status.id)
    run_jobs(now=jobs.now_ms() + 10**9, sweep=True)  # the removal's jobs
    with contextlib.suppress(jobs.LeaseLost):
        fanout.run_post(held)  # the stalled worker's step lands after them
    assert r.zscore(keys.global_partition(status.id), status.id) is None
    assert r.zscore(keys.home(bob.id), status.id) is None


@pytest.mark.real_redis
def test_concurrent_posts_all_reach_every_follower(r, users):
    alice = users["alice"]
    readers = [users["bob"], users["carol"], users["dave"]]
    for reader in readers:
        follow(reader, alice)
    run_jobs()  # the follows' own (the readers' suggestions)
    made: list[int] = []
    lock = threading.Lock()

    def burst() -> None:
        for i in range(20):
            sid = post(alice, f"p{i}").id
            with lock:
                made.append(sid)

    threads = [threading.Thread(target=burst) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == len(set(made)) == 120
    assert r.zcard(keys.posts(alice.id)) == 120
    assert run_jobs() == 120
    for reader in readers:
        assert {int(s) for s in r.zrange(keys.home(reader.id), 0, -1)} == set(made)


def test_popularity_ranking_holds_true_follower_counts(r, users):
    follow(users["bob"], users["alice"])
    follow(users["carol"], users["alice"])
    follow(users["carol"], users["bob"])
    follow(users["carol"], users["bob"])  # repeated: counted once
    assert r.zrevrange(keys.popular_users(), 0, -1, withscores=True) == [
        (str(users["alice"].id), 2.0),
        (str(users["bob"].id), 1.0),
    ]
    unfollow(users["carol"], users["bob"])
    assert r.zscore(keys.popular_users(), users["bob"].id) is None
    suggested = selectors.suggestions_get(reads=reads_for(users["dave"]))
    assert [u.username for u in suggested] == ["alice"]
    assert selectors.suggestions_get(reads=reads_for(users["bob"])) == []


def test_fanout_in_groups_reaches_every_follower(r, settings):
    settings.FANOUT_GROUP = 3
    settings.FANOUT_BATCH = 7
    author = make_user("author")
    readers = [make_user(f"reader{i}") for i in range(20)]
    for reader in readers:
        follow(reader, author)
    unfollow(readers[5], author)
    status = post(author, "to all")
    run_jobs()
    for i, reader in enumerate(readers):
        expected = None if i == 5 else float(status.id)
        assert r.zscore(keys.home(reader.id), status.id) == expected


@pytest.mark.parametrize("index_read", [2000, 2])
def test_one_fanout_call_checks_each_readers_follow_mutes_and_activity(
    r, monkeypatch, index_read
):
    # Readers in every state the home write tells apart, in one script call (one
    # per slot on a cluster): muting someone else, or being inactive, changes only
    # what it should. One server reads its two indexes for a whole step at once, in
    # reads of `_INDEX_READ` readers: 2 puts these readers in three reads each.
    monkeypatch.setattr(fanout, "_INDEX_READ", index_read)
    author, other = make_user("author"), make_user("other")
    names = ("plain", "mutes_other", "mutes_author", "away", "away_muting", "gone")
    readers = {name: make_user(name) for name in names}
    for reader in readers.values():
        follow(reader, author)
    blocks.mute_create(user=readers["mutes_other"], muted_id=other.id)
    blocks.mute_create(user=readers["mutes_author"], muted_id=author.id)
    blocks.mute_create(user=readers["away_muting"], muted_id=other.id)
    for name in ("away", "away_muting"):
        make_away(r, readers[name].id)
    unfollow(readers["gone"], author)
    run_jobs()
    status = post(author, "to all")
    run_jobs()
    reached = homes_holding(r, readers, status)
    assert reached == {"plain", "mutes_other"}
    assert r.zscore(keys.home(author.id), status.id) is not None


def test_a_reader_whose_stamp_is_not_copied_to_seen_days_is_still_reached(r):
    # A stamp written by an older version or the upgrade has no copy in one
    # server's `seen:days`, and one stamped anew by hand has an old copy: the push
    # looks such a reader's stamp up itself, and reaches them while it lives.
    author = make_user("author")
    readers = [make_user(f"reader{i}") for i in range(3)]
    for reader in readers:
        follow(reader, author)
    run_jobs()
    r.delete(account_keys.seen_days())
    make_away(r, readers[2].id)
    r.set(account_keys.seen(readers[2].id), 1, ex=3600)
    status = post(author, "to all")
    run_jobs()
    for reader in readers:
        assert r.zscore(keys.home(reader.id), status.id) is not None


def test_readers_past_the_uids_seen_days_records_are_reached_unless_away(r):
    # `seen:days` records uids up to SEEN_DAYS_MAX_UID; past it, one server's push
    # looks the reader's stamp up itself. A field read at 2**28 and beyond would be
    # past what Redis's bit offsets reach (2**32 bits): the push does not read it.
    author = make_user("author")
    readers = {"away": make_user("away")}
    for name, uid in (
        ("near", SEEN_DAYS_MAX_UID + 1),
        ("far", 2**28 + 1),
        ("far_away", 2**28 + 2),
    ):
        r.set(account_keys.user_ids(), uid - 1)
        readers[name] = make_user(name)
        assert readers[name].id == uid
    for reader in readers.values():
        follow(reader, author)
    make_away(r, readers["away"].id)
    make_away(r, readers["far_away"].id)
    run_jobs()
    status = post(author, "to all")
    run_jobs()
    reached = homes_holding(r, readers, status)
    assert reached == {"near", "far"}


def test_seen_days_decides_for_uids_up_to_its_limit_and_not_past_it(r, monkeypatch):
    # Four readers seen today (so `seen:days` holds a recent day for each) whose
    # stamps then went, all but one: on one server the push trusts the day up to
    # the last uid it records (lowered here to 149, where uids are 3 digits long),
    # and past it asks the stamp. A Cluster has no `seen:days`: the stamp decides.
    monkeypatch.setattr(fanout, "SEEN_DAYS_MAX_UID", 149)
    author = make_user("author")
    r.set(account_keys.user_ids(), 147)
    names = ("below", "right_at", "past", "past_stamped")
    readers = {name: make_user(name) for name in names}
    assert [reader.id for reader in readers.values()] == [148, 149, 150, 151]
    for reader in readers.values():
        follow(reader, author)
    run_jobs()
    for name in ("below", "right_at", "past"):
        r.delete(account_keys.seen(readers[name].id))
    status = post(author, "to all")
    run_jobs()
    reached = homes_holding(r, readers, status)
    assert reached == (
        {"past_stamped"} if is_cluster() else {"below", "right_at", "past_stamped"}
    )


def test_a_reader_who_unmutes_one_of_two_still_misses_the_other(r):
    # One server's push trusts a clear bit in `muters` for "mutes no one": each
    # mute and unmute keeps it true in the same step (a Cluster asks each reader's
    # mutes itself).
    reader, bob, carol = (make_user(name) for name in ("reader", "bob", "carol"))
    follow(reader, bob)
    follow(reader, carol)
    run_jobs()
    blocks.mute_create(user=reader, muted_id=bob.id)
    blocks.mute_create(user=reader, muted_id=carol.id)
    blocks.mute_delete(user=reader, muted_id=carol.id)
    from_bob, from_carol = post(bob, "muted"), post(carol, "unmuted")
    run_jobs()
    # The home zset itself: pages leave muted authors out at read anyway, but one
    # pushed in would take a place among the home's HOME_TIMELINE_CAP.
    assert r.zscore(keys.home(reader.id), from_bob.id) is None
    assert r.zscore(keys.home(reader.id), from_carol.id) is not None
    blocks.mute_delete(user=reader, muted_id=bob.id)
    again = post(bob, "unmuted too")
    run_jobs()
    assert r.zscore(keys.home(reader.id), again.id) is not None


def test_script_groups_hold_one_hash_slot_each_on_a_cluster(r):
    readers = list(range(1, 5000))
    groups = slot_groups(readers, keys.home, 250)
    assert sorted(u for g in groups for u in g) == readers
    assert all(len(group) <= 250 for group in groups)
    slots_per_group = {
        len({slot_of(k) for u in group for k in (keys.home(u), keys.following(u))})
        for group in groups
    }
    if is_cluster():
        assert slots_per_group == {1}
    else:
        assert len(groups) == 20  # any readers go together on one server


def test_a_resumed_fanout_skips_no_follower_even_when_its_cursor_left(r, settings):
    # Twelve followers who followed at the same moment (as seeded ones do): the walk
    # orders them by id. A worker recorded reader 5 as its cursor, then reader 5
    # unfollowed; the resumed walk starts right after where reader 5 was.
    settings.FANOUT_BATCH = 4
    author = make_user("author")
    readers = [make_user(f"reader{i:02}") for i in range(12)]
    for reader in readers:
        r.zadd(keys.following(reader.id), {author.id: 7})
        r.zadd(keys.followers(author.id), {reader.id: 7})
    status = post(author, "resumed")
    (job,) = jobs.claim(slot=keys.slot_of_user(author.id), limit=1)
    in_order = sorted(readers, key=lambda u: str(u.id))
    jobs.progress(job, cursor=f"7 {in_order[5].id}")
    unfollow(in_order[5], author)
    fanout.run_post(
        jobs.Job(
            slot=job.slot, id=job.id, cursor=f"7 {in_order[5].id}", token=job.token
        )
    )
    reached = [r.zscore(keys.home(u.id), status.id) is not None for u in in_order]
    assert reached == [False] * 6 + [True] * 6


def test_an_older_cursor_never_skips_what_a_partition_dropped_since(users, settings):
    # Page 1 is read, then alice's partition drops her older statuses: page 2 must
    # stop rather than show bob's older status as if alice had none in between.
    settings.TIMELINE_PAGE_SIZE = 2
    settings.GLOBAL_TIMELINE_CAP = 2
    alice, bob = users["alice"], users["bob"]
    assert keys.global_partition(alice.id) != keys.global_partition(bob.id)
    b1 = post(bob, "b1").id
    post(alice, "a1")
    b2 = post(bob, "b2").id
    a2 = post(alice, "a2").id
    first = selectors.global_page(reads=PageReads())
    assert [s.id for s in first.statuses] == sorted([a2, b2], reverse=True)
    post(alice, "a3")
    post(alice, "a4")  # a1 and a2 are dropped from alice's partition
    second = selectors.global_page(reads=PageReads(), max_id=first.next_max_id)
    assert b1 not in [s.id for s in second.statuses]
    assert second.next_max_id is None


def test_a_follow_lock_taken_again_by_its_owner_does_not_wait(r):
    # A lock request whose reply was lost and that is sent again must not find its
    # own lock held by "someone else" and time out.
    lock = services._FollowLock(42, wait=0.05)
    lock.__enter__()
    assert lock.__enter__() is lock
    with pytest.raises(Busy):
        services._FollowLock(42, wait=0.05).__enter__()
    lock.__exit__(None, None, None)
    with services._FollowLock(42, wait=0.05):
        pass
