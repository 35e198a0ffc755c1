"""Review: paging exactness of the client API's timelines (min_id)."""

from __future__ import annotations

import time

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from timeline import keys, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def _post(user, text: str) -> int:
    return services.status_create(author=user, text=text).id


def _walk_up(client, path: str) -> list[int]:
    """Catch up with min_id as a client does: every page's newest is the next
    min_id, until a page is empty."""
    seen: list[int] = []
    for _ in range(50):
        response = client.get(path)
        assert response.status_code == 200, response.content
        page = [int(s["id"]) for s in response.json()]
        if not page:
            return seen
        seen.extend(page)
        path = path.split("&min_id=")[0] + f"&min_id={max(page)}"
    raise AssertionError("never ended")


def test_public_min_id_catch_up_skips_nothing_after_a_partition_dropped(settings):
    """A client catching up on the public timeline with min_id from before what a
    partition dropped must see every status the public page still shows."""
    settings.GLOBAL_TIMELINE_CAP = 10
    alice, bob = make_user("alice"), make_user("bob")
    assert keys.global_partition(alice.id) != keys.global_partition(bob.id)
    old_b = [_post(bob, f"b{i}") for i in range(8)]
    time.sleep(0.05)  # bob's partition: 8, no drop
    a = [_post(alice, f"a{i}") for i in range(4)]  # alice's: a0..a3
    time.sleep(0.05)  # ids follow the clock: each shard's burst runs ahead of it
    b_late = _post(bob, "b late")
    time.sleep(0.05)  # between a3 and a4: bob's 9th, still no drop
    a += [_post(alice, f"a{i}") for i in range(4, 13)]  # alice drops a0, a1, a2
    run_jobs()
    assert max(old_b) < a[3] < b_late < a[4]
    client = api_client(token_for(alice))
    # Sanity: the newest-first walk (the site's rule) shows bob's late status.
    newest = [
        int(s["id"]) for s in client.get("/api/v1/timelines/public?limit=40").json()
    ]
    assert b_late in newest
    caught_up = _walk_up(client, "/api/v1/timelines/public?limit=2&min_id=1")
    missing = set(newest) - set(caught_up)
    assert not missing, f"min_id paging skipped {sorted(missing)} (b_late={b_late})"


def _walk_prev(client, path: str) -> list[int]:
    """Follow `rel="prev"` links up as a client catching up does (Mastodon.py's
    fetch_previous), until a page has none."""
    import re

    seen: list[int] = []
    for _ in range(50):
        response = client.get(path)
        assert response.status_code == 200, response.content
        seen.extend(int(s["id"]) for s in response.json())
        found = re.search(
            r'<http://testserver([^>]*)>; rel="prev"', response.get("Link", "")
        )
        if found is None:
            return seen
        path = found[1]
    raise AssertionError("never ended")


def test_public_min_id_catch_up_gets_past_a_run_of_hidden_statuses():
    """A run of statuses the viewer does not see (a blocked account's, longer than
    the window's read) above `min_id` must not end the catching up: the status
    posted after it is reached (as the newest-first page shows it)."""
    from timeline import blocks

    alice, bob, eve = make_user("alice"), make_user("bob"), make_user("eve")
    start = _post(bob, "before")
    blocks.block_create(blocker=alice, blocked_id=eve.id)
    for i in range(12):
        _post(eve, f"spam {i}")
    after = _post(bob, "after")
    run_jobs()
    client = api_client(token_for(alice))
    newest = [int(s["id"]) for s in client.get("/api/v1/timelines/public").json()]
    assert after in newest  # the site's page shows it
    caught_up = _walk_prev(client, f"/api/v1/timelines/public?limit=2&min_id={start}")
    assert after in caught_up, caught_up


def test_account_statuses_min_id_gets_past_a_run_of_replies_excluded():
    """`exclude_replies` with `min_id`: a run of replies longer than the window
    must not end the catching up (the same cut as the public timeline's)."""
    from timeline import social

    alice, bob = make_user("alice"), make_user("bob")
    start = _post(alice, "before")
    other = _post(bob, "bob's")
    for i in range(8):
        social.status_reply(author=alice, sid=other, text=f"reply {i}")
    after = _post(alice, "after")
    run_jobs()
    client = api_client(token_for(bob))
    path = f"/api/v1/accounts/{alice.id}/statuses?exclude_replies=true&limit=2"
    newest = [int(s["id"]) for s in client.get(path).json()]
    assert after in newest
    caught_up = _walk_prev(client, f"{path}&min_id={start}")
    assert after in caught_up, caught_up


# Beyond the review: every window reports what it considered, both ways.


def _walk_next(client, path: str) -> list[int]:
    """Follow `rel="next"` links down (Mastodon.py's fetch_next) until none."""
    import re

    seen: list[int] = []
    for _ in range(50):
        response = client.get(path)
        assert response.status_code == 200, response.content
        seen.extend(int(s["id"]) for s in response.json())
        found = re.search(
            r'<http://testserver([^>]*)>; rel="next"', response.get("Link", "")
        )
        if found is None:
            return seen
        path = found[1]
    raise AssertionError("never ended")


def test_home_pages_get_past_a_run_of_muted_statuses_both_ways():
    from config.redis import get_redis
    from timeline import blocks

    alice, bob, eve = make_user("alice"), make_user("bob"), make_user("eve")
    for followee in (alice, eve):
        services.follow_create(follower=bob, followee_id=followee.id)
    run_jobs()
    start = _post(alice, "before")
    noise = [_post(eve, f"noise {i}") for i in range(12)]
    after = _post(alice, "after")
    run_jobs()
    blocks.mute_create(user=bob, muted_id=eve.id)
    # Fan-out jobs that raced the mute put them back: left out at read.
    get_redis().zadd(keys.home(bob.id), {sid: sid for sid in noise})
    client = api_client(token_for(bob))
    path = "/api/v1/timelines/home?limit=2"
    assert _walk_prev(client, f"{path}&min_id={start - 1}") == [start, after]
    # Down from the newest, an empty window's next link goes on below the read.
    assert _walk_next(client, path) == [after, start]


def test_tag_min_id_catch_up_gets_past_a_run_of_a_blocked_accounts():
    from timeline import blocks

    alice, bob, eve = make_user("alice"), make_user("bob"), make_user("eve")
    start = _post(bob, "before #news")
    blocks.block_create(blocker=alice, blocked_id=eve.id)
    for i in range(12):
        _post(eve, f"#news {i}")
    after = _post(bob, "after #news")
    run_jobs()
    client = api_client(token_for(alice))
    path = "/api/v1/timelines/tag/news?limit=2"
    assert _walk_prev(client, f"{path}&min_id={start}") == [after]
    assert _walk_next(client, path) == [after, start]


def test_an_empty_answer_has_a_prev_link_only_with_something_above():
    alice = make_user("alice")
    sids = [_post(alice, f"s{i}") for i in range(3)]
    run_jobs()
    client = api_client(token_for(alice))
    path = "/api/v1/timelines/public?limit=2"
    # Caught up: nothing above, no link up (nor down: nothing was read).
    top = client.get(f"{path}&min_id={sids[-1]}")
    assert top.json() == [] and "Link" not in top
    # Paged past the oldest: the way back up starts at the top of what was asked.
    bottom = client.get(f"{path}&max_id={sids[0]}")
    assert bottom.json() == []
    assert bottom["Link"] == (
        f'<http://testserver{path}&min_id={sids[0] - 1}>; rel="prev"'
    )
    assert sorted(_walk_prev(client, f"{path}&min_id={sids[0] - 1}")) == sids


def _round_trips(client, path: str) -> int:
    from tests.roundtrips import RoundTripCounter

    client.get(path)  # warm: connections, scripts
    with RoundTripCounter() as counter:
        assert client.get(path).status_code == 200
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_a_public_min_id_read_restarted_at_a_floor_costs_one_more_round_trip(
    settings,
):
    from config.redis import is_cluster

    settings.GLOBAL_TIMELINE_CAP = 4
    alice, bob = make_user("alice"), make_user("bob")
    for i in range(6):
        _post(bob, f"b{i}")  # bob's partition: 6 of them, none dropped
    time.sleep(0.05)
    for i in range(6):
        _post(alice, f"a{i}")  # alice's: 2 dropped, a floor above all of bob's
    run_jobs()
    client = api_client()
    one_more = 4 if is_cluster() else 3
    # From below the floor, bob's oldest read are all under it: read again.
    assert _round_trips(client, "/api/v1/timelines/public?limit=2&min_id=1") == (
        one_more
    )
    shown = [int(s["id"]) for s in client.get("/api/v1/timelines/public").json()]
    above = f"/api/v1/timelines/public?limit=2&min_id={min(shown)}"
    assert _round_trips(client, above) == one_more - 1
