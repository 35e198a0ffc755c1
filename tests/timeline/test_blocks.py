"""Blocks and mutes (issue #11), as people see them: a block ends the follows both
ways and hides each side's statuses from the other on every page; a mute hides
someone from your home only."""

from __future__ import annotations

import re

import pytest
import redis
from django.test import Client

from accounts.selectors import user_get_by_username
from config.redis import is_cluster
from tests.helpers import (
    body,
    logged_in_client,
    make_away,
    make_user,
    page,
    run_jobs,
    status_ids,
    store_snapshot,
)
from tests.roundtrips import RoundTripCounter
from timeline import blocks, jobs, keys, selectors, services


def post(client, text: str) -> int:
    assert client.post("/post/", {"text": text}).status_code == 302
    return max(status_ids(page(client, "/timeline/")))


@pytest.fixture
def alice():
    make_user("alice")
    return logged_in_client("alice")


@pytest.fixture
def bob():
    make_user("bob")
    return logged_in_client("bob")


def uid(name: str) -> int:
    return user_get_by_username(username=name).id


def befriend(alice, bob) -> None:
    """Alice and bob follow each other and have each posted twice."""
    alice.post("/u/bob/follow/")
    bob.post("/u/alice/follow/")
    for i in range(2):
        alice.post("/post/", {"text": f"alice {i}"})
        bob.post("/post/", {"text": f"bob {i}"})
    run_jobs()
    assert len(status_ids(page(alice, "/"))) == 4
    assert len(status_ids(page(bob, "/"))) == 4


def texts(html: str) -> list[str]:
    return re.findall(r'<p class="status-text">(.*?)</p>', html, re.S)


def test_a_block_ends_the_follows_both_ways_and_clears_both_homes(r, alice, bob):
    befriend(alice, bob)
    answer = alice.post("/u/bob/block/", follow=True)
    assert "You blocked @bob." in body(answer)
    a, b = uid("alice"), uid("bob")
    assert r.zscore(keys.following(a), b) is None
    assert r.zscore(keys.following(b), a) is None
    assert r.zscore(keys.followers(a), b) is None
    assert r.zscore(keys.followers(b), a) is None
    assert texts(page(alice, "/")) == ["alice 1", "alice 0"]
    assert texts(page(bob, "/")) == ["bob 1", "bob 0"]
    assert "<strong>0</strong> followers" in page(alice, "/u/alice/")
    assert jobs.stats().depth == 0  # the request did it all: no job left


def test_new_statuses_never_cross_a_block(alice, bob):
    befriend(alice, bob)
    alice.post("/u/bob/block/")
    bob.post("/post/", {"text": "bob after"})
    alice.post("/post/", {"text": "alice after"})
    run_jobs()
    assert "bob after" not in page(alice, "/")
    assert "alice after" not in page(bob, "/")


def test_the_global_page_leaves_out_both_sides_of_a_block(alice, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    for client, text in ((alice, "from alice"), (bob, "from bob"), (carol, "hi")):
        client.post("/post/", {"text": text})
    bob.post("/u/alice/block/")  # bob blocks alice this time
    assert texts(page(alice, "/timeline/")) == ["hi", "from alice"]
    assert texts(page(bob, "/timeline/")) == ["hi", "from bob"]
    assert texts(page(carol, "/timeline/")) == ["hi", "from bob", "from alice"]
    assert texts(page(Client(), "/timeline/")) == ["hi", "from bob", "from alice"]


def test_a_profile_across_a_block_shows_no_statuses_and_says_why(alice, bob):
    alice.post("/post/", {"text": "alice secret"})
    bob.post("/post/", {"text": "bob secret"})
    alice.post("/u/bob/block/")
    seen_by_bob = page(bob, "/u/alice/")
    assert "@alice blocked you" in seen_by_bob
    assert status_ids(seen_by_bob) == [] and "alice secret" not in seen_by_bob
    assert 'action="/u/alice/follow/"' not in seen_by_bob
    seen_by_alice = page(alice, "/u/bob/")
    assert "You blocked @bob" in seen_by_alice
    assert status_ids(seen_by_alice) == []
    assert 'action="/u/bob/unblock/"' in seen_by_alice
    assert 'action="/u/bob/follow/"' not in seen_by_alice
    # Everyone else still sees both.
    assert "alice secret" in page(Client(), "/u/alice/")


def test_a_status_page_across_a_block_is_not_available(alice, bob):
    sid = post(alice, "only for some")
    bob.post("/u/alice/block/")
    assert bob.get(f"/s/{sid}/").status_code == 404
    assert alice.get(f"/s/{sid}/").status_code == 200  # her own, whoever blocks
    other = post(bob, "by bob")
    assert alice.get(f"/s/{other}/").status_code == 404
    assert Client().get(f"/s/{sid}/").status_code == 200


def test_a_follow_across_a_block_is_refused_both_ways(r, alice, bob):
    alice.post("/u/bob/block/")
    answer = alice.post("/u/bob/follow/", follow=True)
    assert "You blocked this person" in body(answer)
    answer = bob.post("/u/alice/follow/", follow=True)
    assert "This person blocked you" in body(answer)
    assert r.zcard(keys.following(uid("alice"))) == 0
    assert r.zcard(keys.following(uid("bob"))) == 0
    assert r.zcard(keys.followers(uid("alice"))) == 0
    assert jobs.stats().depth == 0  # a refused follow records no job


def test_an_unblock_restores_what_each_sees_but_not_the_follow(r, alice, bob):
    befriend(alice, bob)
    alice.post("/u/bob/block/")
    answer = alice.post("/u/bob/unblock/", follow=True)
    assert "You unblocked @bob." in body(answer)
    a, b = uid("alice"), uid("bob")
    for key in (keys.blocks(a), keys.blocked_by(b)):
        assert r.zcard(key) == 0
    assert r.zscore(keys.following(a), b) is None  # no refollow
    assert texts(page(bob, "/u/alice/")) == ["alice 1", "alice 0"]
    assert "bob 1" in page(alice, "/timeline/")
    assert 'action="/u/alice/follow/"' in page(bob, "/u/alice/")
    bob.post("/u/alice/follow/")  # following again is allowed
    alice.post("/post/", {"text": "alice again"})
    run_jobs()
    assert "alice again" in page(bob, "/")


def test_blocking_back_keeps_both_hidden_until_both_unblock(r, alice, bob):
    alice.post("/post/", {"text": "from alice"})
    alice.post("/u/bob/block/")
    assert 'action="/u/alice/block/"' in page(bob, "/u/alice/")  # may block back
    bob.post("/u/alice/block/")
    alice.post("/u/bob/unblock/")
    seen = page(bob, "/u/alice/")
    assert "You blocked @alice" in seen and status_ids(seen) == []
    answer = alice.post("/u/bob/follow/", follow=True)
    assert "This person blocked you" in body(answer)


def test_a_mute_hides_someone_from_the_home_only(r, alice, bob):
    bob.post("/u/alice/follow/")
    alice.post("/post/", {"text": "before the mute"})
    run_jobs()
    assert "before the mute" in page(bob, "/")
    answer = bob.post("/u/alice/mute/", follow=True)
    assert "You muted @alice" in body(answer)
    alice.post("/post/", {"text": "during the mute"})
    run_jobs()
    home = page(bob, "/")
    assert "before the mute" not in home and "during the mute" not in home
    assert r.zcard(keys.home(uid("bob"))) == 0  # swept, not only hidden
    assert texts(page(bob, "/timeline/")) == ["during the mute", "before the mute"]
    profile = page(bob, "/u/alice/")
    assert texts(profile) == ["during the mute", "before the mute"]
    assert "You muted @alice" in profile
    assert 'action="/u/alice/unmute/"' in profile
    assert r.zscore(keys.following(uid("bob")), uid("alice")) is not None


@pytest.mark.parametrize("action", ["block", "mute"])
def test_a_block_or_a_mute_sweeps_older_statuses_a_home_kept_while_away(
    r, alice, bob, settings, action
):
    """Bob was away while alice posted a capful: back, his home got only her newest
    FOLLOW_BACKFILL and kept her older statuses; a block or a mute takes those out
    of it too, not only the ones among her newest capful."""
    settings.HOME_TIMELINE_CAP = 10
    settings.FOLLOW_BACKFILL = 2
    author = user_get_by_username(username="alice")
    bob.post("/u/alice/follow/")
    services.status_create(author=author, text="an old status")
    run_jobs()
    make_away(r, uid("bob"))
    for i in range(settings.HOME_TIMELINE_CAP):
        services.status_create(author=author, text=f"while away {i}")
    run_jobs()
    page(bob, "/")  # back: a job rebuilds the home
    run_jobs()
    assert texts(page(bob, "/")) == ["while away 9", "while away 8", "an old status"]
    bob.post(f"/u/alice/{action}/")
    assert texts(page(bob, "/")) == []
    assert r.zcard(keys.home(uid("bob"))) == 0  # swept, not only hidden


def test_an_unmute_brings_back_existing_and_new_statuses(alice, bob, settings):
    bob.post("/u/alice/follow/")
    bob.post("/u/alice/mute/")
    for i in range(3):
        alice.post("/post/", {"text": f"muted {i}"})
    run_jobs()
    assert texts(page(bob, "/")) == []
    bob.post("/u/alice/unmute/")
    # Backfilled as a follow is (the newest FOLLOW_BACKFILL of them).
    assert texts(page(bob, "/")) == ["muted 2", "muted 1", "muted 0"]
    alice.post("/post/", {"text": "after"})
    run_jobs()
    assert texts(page(bob, "/"))[0] == "after"


def test_an_unmute_of_someone_not_followed_adds_nothing(alice, bob):
    alice.post("/post/", {"text": "hi"})
    bob.post("/u/alice/mute/")
    bob.post("/u/alice/unmute/")
    assert texts(page(bob, "/")) == []


def test_what_raced_a_block_or_a_mute_is_left_out_when_read(r, alice, bob):
    # A status that reached the home just before the block's sweep (or any leftover)
    # is never shown: the page checks the viewer's sets too.
    sid = post(alice, "raced")
    bob.post("/u/alice/mute/")
    r.zadd(keys.home(uid("bob")), {sid: sid})
    assert "raced" not in page(bob, "/")
    bob.post("/u/alice/unmute/")
    bob.post("/u/alice/block/")
    r.zadd(keys.home(uid("bob")), {sid: sid})
    assert "raced" not in page(bob, "/")


def test_a_muted_pulled_author_is_not_merged_into_the_home(r, alice, bob, settings):
    settings.FANOUT_PUSH_MAX = 0  # every author with a follower is pulled
    bob.post("/u/alice/follow/")
    run_jobs()  # alice moves to pull mode
    assert r.get(keys.fanout_mode(uid("alice"))) == "pull"
    alice.post("/post/", {"text": "pulled"})
    run_jobs()
    assert "pulled" in page(bob, "/")
    bob.post("/u/alice/mute/")
    assert "pulled" not in page(bob, "/")
    bob.post("/u/alice/unmute/")
    assert "pulled" in page(bob, "/")


def test_global_pages_across_a_block_repeat_and_skip_nothing(alice, bob, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    make_user("carol")
    carol = logged_in_client("carol")
    expected = []
    for i in range(12):
        author = bob if i % 3 else carol  # mostly bob
        author.post("/post/", {"text": f"n{i}"})
        if author is carol:
            expected.append(f"n{i}")
    alice.post("/post/", {"text": "alice own"})
    alice.post("/u/bob/block/")
    seen: list[str] = []
    url = "/timeline/"
    for _ in range(20):
        html = page(alice, url)
        shown = texts(html)
        assert len(shown) <= 3
        seen += shown
        more = re.search(r'href="\?max_id=(\d+)"', html)
        if not more:
            break
        url = f"/timeline/?max_id={more.group(1)}"
    assert seen == ["alice own", *reversed(expected)]
    # A page reads twice its size when its viewer hides someone: 2 of these 3
    # statuses are bob's, and the first page still shows more than its first 3 ids.
    assert len(texts(page(alice, "/timeline/"))) == 2


def test_the_blocked_and_muted_page_lists_both_with_buttons(alice, bob):
    for name in ("carol", "dave"):
        make_user(name)
    alice.post("/u/bob/block/")
    alice.post("/u/carol/mute/")
    html = page(alice, "/settings/blocked/")
    assert 'href="/u/bob/"' in html and 'action="/u/bob/unblock/"' in html
    assert 'href="/u/carol/"' in html and 'action="/u/carol/unmute/"' in html
    assert "@dave" not in html
    answer = alice.post("/u/bob/unblock/", {"next": "/settings/blocked/"})
    assert answer["Location"] == "/settings/blocked/"
    assert "You have blocked nobody." in page(alice, "/settings/blocked/")
    assert 'href="/settings/blocked/"' in page(alice, "/settings/")
    anonymous = Client().get("/settings/blocked/")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_the_blocked_list_pages_by_cursor(alice, settings):
    settings.TIMELINE_PAGE_SIZE = 2
    names = [f"user{i}" for i in range(5)]
    for name in names:
        make_user(name)
        alice.post(f"/u/{name}/block/")
    seen: list[str] = []
    url = "/settings/blocked/"
    for _ in range(10):
        html = page(alice, url)
        seen += re.findall(r'<a href="/u/(user\d)/">', html)
        more = re.search(r'href="\?blocked=(\d+)"', html)
        if not more:
            break
        url = f"/settings/blocked/?blocked={more.group(1)}"
    assert seen == list(reversed(names))


def test_blocking_or_muting_oneself_is_refused(alice):
    answer = alice.post("/u/alice/block/", follow=True)
    assert "You cannot block yourself." in body(answer)
    answer = alice.post("/u/alice/mute/", follow=True)
    assert "You cannot mute yourself." in body(answer)
    assert alice.post("/u/nobody/block/").status_code == 404


def test_blocks_past_the_cap_are_refused_with_a_message(r, alice, monkeypatch):
    monkeypatch.setattr(blocks, "BLOCKS_MAX", 2)
    monkeypatch.setattr(blocks, "MUTES_MAX", 1)
    for name in ("carol", "dave", "erin"):
        make_user(name)
    alice.post("/u/carol/block/")
    alice.post("/u/dave/block/")
    answer = alice.post("/u/erin/block/", follow=True)
    assert "You block 2 people, the most one can." in body(answer)
    assert r.zcard(keys.blocks(uid("alice"))) == 2
    alice.post("/u/carol/block/")  # already blocked: no refusal, no change
    assert "the most one can" not in body(alice.get("/"))
    alice.post("/u/carol/mute/")
    answer = alice.post("/u/dave/mute/", follow=True)
    assert "You mute 1 people, the most one can." in body(answer)


def test_a_get_changes_nothing_and_each_change_needs_post_and_csrf(r, alice, bob):
    alice.post("/post/", {"text": "hi"})
    alice.get("/")
    bob.get("/")  # today's last-seen stamps written
    strict = logged_in_client("bob", enforce_csrf_checks=True)
    before = store_snapshot(r)
    for action in ("block", "unblock", "mute", "unmute"):
        assert bob.get(f"/u/alice/{action}/").status_code == 405
    for url in ("/", "/timeline/", "/u/alice/", "/settings/blocked/"):
        page(bob, url)
    assert store_snapshot(r) == before
    for action in ("block", "mute"):
        assert strict.post(f"/u/alice/{action}/").status_code == 403
    assert store_snapshot(r) == before


def test_blocks_take_from_the_follow_budget(alice, bob, settings):
    settings.RATE_LIMIT_FOLLOW = "2/1h"
    alice.post("/u/bob/mute/")
    alice.post("/u/bob/block/")
    refused = alice.post("/u/bob/unblock/")
    assert refused.status_code == 429 and "Retry-After" in refused


def count_round_trips(client: Client, url: str) -> int:
    client.get(url)  # warm: connections open, scripts loaded, the name cache filled
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_pages_with_blocks_and_mutes_still_cost_two_round_trips(alice, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    bob.post("/u/carol/follow/")
    for client in (alice, bob, carol):
        for i in range(5):
            client.post("/post/", {"text": f"status {i}"})
    run_jobs()
    bob.post("/u/alice/block/")
    bob.post("/u/carol/mute/")
    sid = max(status_ids(page(carol, "/u/carol/")))
    # Others' statuses show their authors' cards: on a Cluster one more round trip
    # (bob's home holds only his own: his card is known).
    others = 3 if is_cluster() else 2
    # On one server a home's statuses ride with the auth check, and so do the
    # global timeline's: a window of fewer than a page is read whole at once, so
    # blocks and mutes cost no second round trip.
    home = 2 if is_cluster() else 1
    trips = {"/": home, "/timeline/": home if not is_cluster() else others}
    trips.update({"/u/carol/": home, "/settings/blocked/": 2})
    for url, expected in trips.items():
        assert count_round_trips(bob, url) == expected, url
    # Across a block a profile reads no statuses: one round trip.
    assert count_round_trips(bob, "/u/alice/") == 1
    assert count_round_trips(alice, "/u/bob/") == 1
    # A status's page asks its author's slot about privacy in a second.
    assert count_round_trips(bob, f"/s/{sid}/") == 2


@pytest.mark.real_redis
def test_a_viewer_blocked_by_very_many_pays_one_more_round_trip_not_more(
    alice, bob, monkeypatch
):
    monkeypatch.setattr(selectors, "HIDE_READ_MAX", 2)
    alice.post("/post/", {"text": "from alice"})
    bob.post("/post/", {"text": "from bob"})
    for name in ("carol", "dave", "erin"):
        make_user(name)
        logged_in_client(name).post("/u/bob/block/")
    # Bob is blocked by 4: the page reads the 3 oldest blocks, and asks about alice.
    alice.post("/u/bob/block/")
    assert texts(page(bob, "/timeline/")) == ["from bob"]
    # (On a Cluster the authors' cards cost one more; the viewer's own is known.
    # On one server the statuses come with the window.)
    assert count_round_trips(bob, "/timeline/") == (4 if is_cluster() else 2)
    # Nothing to ask about (own statuses): on one server, read with the auth check.
    assert count_round_trips(bob, "/") == (2 if is_cluster() else 1)


def test_a_block_cut_short_is_completed_by_its_job(r, alice, bob, monkeypatch):
    from django.conf import settings

    befriend(alice, bob)

    def outage(*args, **kwargs):
        raise redis.ConnectionError("Redis stopped answering")

    monkeypatch.setattr(blocks, "_blocked_side", outage)
    assert alice.post("/u/bob/block/").status_code == 503
    monkeypatch.undo()
    a, b = uid("alice"), uid("bob")
    # Half done: alice's side only; bob still follows her and sees her statuses.
    assert r.zscore(keys.blocks(a), b) is not None
    assert r.zscore(keys.blocked_by(b), a) is None
    assert r.zscore(keys.following(b), a) is not None
    # Pages already hide what the blocker's side records.
    assert texts(page(alice, "/")) == ["alice 1", "alice 0"]
    assert run_jobs(sweep=True) == 0  # within the grace period: not yet
    later = jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1
    assert run_jobs(now=later, sweep=True) == 1
    assert r.zscore(keys.blocked_by(b), a) is not None
    assert r.zscore(keys.following(b), a) is None
    assert r.zscore(keys.followers(a), b) is None
    assert texts(page(bob, "/")) == ["bob 1", "bob 0"]
    assert jobs.stats().depth == 0
    answer = bob.post("/u/alice/follow/", follow=True)
    assert "This person blocked you" in body(answer)


def test_block_services_are_idempotent(r, alice, bob):
    a = user_get_by_username(username="alice")
    b = uid("bob")
    assert blocks.block_create(blocker=a, blocked_id=b) is True
    assert blocks.block_create(blocker=a, blocked_id=b) is False
    blocks.block_sync(blocker_id=a.id, blocked_id=b)
    assert r.zcard(keys.blocked_by(b)) == 1
    assert blocks.block_delete(blocker=a, blocked_id=b) is True
    assert blocks.block_delete(blocker=a, blocked_id=b) is False
    blocks.block_sync(blocker_id=a.id, blocked_id=b)
    assert r.zcard(keys.blocked_by(b)) == 0
    assert services.follow_create(follower=a, followee_id=b) is True


def test_timelines_repair_completes_a_one_sided_block(r, alice, bob):
    from tests.timeline.test_timelines_command import assert_repaired

    befriend(alice, bob)
    a, b = uid("alice"), uid("bob")
    # What a crash between the two sides (and a lost job) would leave.
    r.zadd(keys.blocks(a), {b: 1})
    r.zrem(keys.following(a), b)
    services.follow_sync(follower_id=a, followee_id=b)
    assert_repaired(r, "One-sided blocks: 1")
    assert r.zscore(keys.blocked_by(b), a) is not None
    assert r.zscore(keys.following(b), a) is None
    assert "alice" not in " ".join(texts(page(bob, "/")))


def test_timelines_repair_drops_a_blocked_by_without_its_block(r, alice, bob):
    from tests.timeline.test_timelines_command import assert_repaired

    a, b = uid("alice"), uid("bob")
    r.zadd(keys.blocked_by(b), {a: 1})
    assert_repaired(r, "One-sided blocks: 1")
    assert r.zcard(keys.blocked_by(b)) == 0
    bob.post("/u/alice/follow/")
    assert r.zscore(keys.following(b), a) is not None


def test_timelines_repair_ends_a_follow_that_survived_a_block(r, alice, bob):
    from tests.timeline.test_timelines_command import assert_repaired

    befriend(alice, bob)
    a, b = uid("alice"), uid("bob")
    alice.post("/u/bob/block/")
    r.zadd(keys.following(b), {a: 1})  # a bug let bob's follow of alice survive
    r.zadd(keys.followers(a), {b: 1})
    r.hset(keys.follower_names(a), b, "bob")
    assert_repaired(r, "Follows across blocks: 1")
    assert r.zscore(keys.following(b), a) is None
    assert r.zscore(keys.followers(a), b) is None


def test_a_muted_followees_statuses_are_not_missing_from_the_home(r, alice, bob):
    from tests.timeline.test_timelines_command import timelines

    bob.post("/u/alice/follow/")
    bob.post("/u/alice/mute/")
    alice.post("/post/", {"text": "muted"})
    run_jobs()
    output, failed = timelines("check")
    assert not failed and "No problems found." in output, output


@pytest.mark.real_redis
def test_a_follow_racing_a_block_never_survives_it(r):
    import contextlib
    import threading

    from timeline.domain import Blocked

    alice, bob = make_user("alice"), make_user("bob")
    services.status_create(author=alice, text="from alice")
    for _ in range(10):
        barrier = threading.Barrier(2)

        def follow(barrier=barrier) -> None:
            barrier.wait()
            # Refused across the block, or done before it: either is fine.
            with contextlib.suppress(Blocked):
                services.follow_create(follower=bob, followee_id=alice.id)

        def block(barrier=barrier) -> None:
            barrier.wait()
            blocks.block_create(blocker=alice, blocked_id=bob.id)

        threads = [threading.Thread(target=follow), threading.Thread(target=block)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        run_jobs()
        assert r.zscore(keys.following(bob.id), alice.id) is None
        assert r.zscore(keys.followers(alice.id), bob.id) is None
        assert r.zscore(keys.blocked_by(bob.id), alice.id) is not None
        assert r.zcard(keys.home(bob.id)) == 0
        blocks.block_delete(blocker=alice, blocked_id=bob.id)
        assert r.zcard(keys.blocked_by(bob.id)) == 0


def test_an_empty_home_suggests_no_one_across_a_block(alice, bob):
    make_user("carol")
    make_user("dave")
    for follower, followees in (("carol", "alice bob dave"), ("dave", "alice bob")):
        client = logged_in_client(follower)
        for followee in followees.split():
            client.post(f"/u/{followee}/follow/")
    run_jobs()
    assert "/u/alice/" in page(bob, "/") and "/u/bob/" in page(alice, "/")
    alice.post("/u/bob/block/")
    # Neither is offered the other to follow; the others are still offered.
    assert "/u/alice/" not in page(bob, "/") and "/u/dave/" in page(bob, "/")
    assert "/u/bob/" not in page(alice, "/") and "/u/dave/" in page(alice, "/")


def test_the_home_leaves_out_statuses_that_mention_whom_you_block_or_mute(
    r, alice, bob
):
    """As Mastodon's home: a followee's status naming someone you block or mute is
    left out of your home (found by exploratory testing), on the page and in the
    client API; their author's profile still shows it, and naming someone who
    blocks you hides nothing."""
    from tests.api.helpers import api_client, token_for

    def plain(html: str) -> list[str]:
        return [re.sub(r"<[^>]+>", "", t) for t in texts(html)]

    for name in ("carol", "dave", "erin", "frank"):
        make_user(name)
    alice.post("/u/bob/follow/")
    alice.post("/u/carol/block/")
    alice.post("/u/dave/mute/")
    logged_in_client("frank").post("/u/alice/block/")
    for who in ("carol", "dave", "erin", "frank"):
        bob.post("/post/", {"text": f"hey @{who}"})
    run_jobs()
    assert plain(page(alice, "/")) == ["hey @frank", "hey @erin"]
    home = api_client(token_for(user_get_by_username(username="alice")))
    shown = home.get("/api/v1/timelines/home").json()
    assert [re.sub(r"<[^>]+>", "", s["content"]) for s in shown] == [
        "hey @frank",
        "hey @erin",
    ]
    assert len(plain(page(alice, "/u/bob/"))) == 4
    # Your own statuses stay, whomever they name (Mastodon's home exempts them).
    alice.post("/post/", {"text": "please stop @dave"})
    run_jobs()
    assert plain(page(alice, "/"))[0] == "please stop @dave"
