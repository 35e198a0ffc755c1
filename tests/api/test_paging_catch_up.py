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
