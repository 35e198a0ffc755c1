"""Bookmarks through the client API (Mastodon's): bookmark and unbookmark a
status, the viewer's `bookmarked` on every status they read, the list of their
bookmarks paged by Link, the scopes it takes, at a bounded number of round trips."""

from __future__ import annotations

import re

import pytest

from config.redis import is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import get_round_trips
from timeline import bookmarks, privacy, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


def _api(user):
    return api_client(token_for(user))


def _post(user, text="hello") -> int:
    return services.status_create(author=user, text=text).id


def _next(response) -> str | None:
    found = re.search(r'<([^>]+)>; rel="next"', response.get("Link", ""))
    return found[1] if found else None


def test_bookmark_and_unbookmark_answer_the_status_with_its_state():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(alice)
    client = _api(bob)
    response = client.post(f"/api/v1/statuses/{sid}/bookmark")
    assert response.status_code == 200, response.content
    assert response.json()["id"] == str(sid)
    assert response.json()["bookmarked"] is True
    assert client.get(f"/api/v1/statuses/{sid}").json()["bookmarked"] is True
    # Nobody else's: alice sees her status unbookmarked.
    assert _api(alice).get(f"/api/v1/statuses/{sid}").json()["bookmarked"] is False
    again = client.post(f"/api/v1/statuses/{sid}/bookmark")
    assert again.status_code == 200 and again.json()["bookmarked"] is True
    undone = client.post(f"/api/v1/statuses/{sid}/unbookmark")
    assert undone.status_code == 200 and undone.json()["bookmarked"] is False
    assert client.get("/api/v1/bookmarks").json() == []


def test_a_status_that_cannot_be_seen_is_a_404_and_nothing_is_saved():
    alice, bob = make_user("alice"), make_user("bob")
    privacy.account_privacy_set(user=alice, private=True)
    sid = _post(alice, "followers only")
    client = _api(bob)
    assert client.post(f"/api/v1/statuses/{sid}/bookmark").status_code == 404
    assert client.post("/api/v1/statuses/99999999/bookmark").status_code == 404
    assert client.get("/api/v1/bookmarks").json() == []


def test_bookmarked_is_on_every_row_the_viewer_reads():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    saved, other = _post(alice, "saved #t"), _post(alice, "not saved #t")
    repost = social.status_repost(user=carol, sid=saved)
    run_jobs()
    bookmarks.status_bookmark(user=bob, sid=saved)
    client = _api(bob)
    for path in (
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        "/api/v1/timelines/tag/t",
        f"/api/v1/accounts/{alice.id}/statuses",
    ):
        rows = client.get(path).json()
        plain = {s["id"]: s["bookmarked"] for s in rows if s["reblog"] is None}
        assert plain[str(saved)] is True, path
        assert plain[str(other)] is False, path
    home = client.get("/api/v1/timelines/home").json()
    # The home shows the repost once, as its original; carol's profile shows it.
    shown = client.get(f"/api/v1/accounts/{carol.id}/statuses").json()
    reposted = next(s for s in shown if s["id"] == str(repost.id))
    assert reposted["reblog"]["bookmarked"] is True
    assert reposted["bookmarked"] is True
    assert any(s["bookmarked"] for s in home)
    # Someone else reads the same rows without bob's bookmarks.
    for row in _api(carol).get(f"/api/v1/accounts/{carol.id}/statuses").json():
        assert row["bookmarked"] is False
    for row in api_client().get("/api/v1/timelines/public").json():
        assert row["bookmarked"] is False


def test_the_list_is_newest_bookmark_first_and_pages_by_link():
    alice, bob = make_user("alice"), make_user("bob")
    sids = [_post(alice, f"status {i}") for i in range(5)]
    client = _api(bob)
    for sid in [*sids[1:], sids[0]]:
        assert client.post(f"/api/v1/statuses/{sid}/bookmark").status_code == 200
    expected = [sids[0], sids[4], sids[3], sids[2], sids[1]]
    seen: list[int] = []
    url: str | None = "/api/v1/bookmarks?limit=2"
    while url is not None:
        response = client.get(url)
        assert response.status_code == 200
        page = response.json()
        assert all(s["bookmarked"] for s in page)
        seen += [int(s["id"]) for s in page]
        url = _next(response)
        assert len(seen) <= 5
    assert seen == expected
    # The prev link of the first page leads to what was bookmarked after it.
    first = client.get("/api/v1/bookmarks?limit=2")
    prev = re.search(r'<([^>]+)>; rel="prev"', first["Link"])[1]
    newest = _post(alice, "newest")
    client.post(f"/api/v1/statuses/{newest}/bookmark")
    assert [s["id"] for s in client.get(prev).json()] == [str(newest)]


def test_a_status_deleted_since_leaves_the_list():
    alice, bob = make_user("alice"), make_user("bob")
    kept, gone = _post(alice, "kept"), _post(alice, "gone")
    client = _api(bob)
    for sid in (kept, gone):
        client.post(f"/api/v1/statuses/{sid}/bookmark")
    services.status_delete(user=alice, sid=gone)
    run_jobs()
    assert [s["id"] for s in client.get("/api/v1/bookmarks").json()] == [str(kept)]


def test_bookmarks_take_their_scopes():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(alice)
    reader = api_client(token_for(bob, scopes=("read:statuses", "write:statuses")))
    assert reader.get("/api/v1/bookmarks").status_code == 403
    assert reader.post(f"/api/v1/statuses/{sid}/bookmark").status_code == 403
    allowed = api_client(token_for(bob, scopes=("read:bookmarks", "write:bookmarks")))
    assert allowed.post(f"/api/v1/statuses/{sid}/bookmark").status_code == 200
    assert allowed.get("/api/v1/bookmarks").status_code == 200
    assert api_client().get("/api/v1/bookmarks").status_code == 401


def test_past_the_cap_a_bookmark_is_a_422_that_says_why(monkeypatch):
    monkeypatch.setattr(bookmarks, "BOOKMARKS_MAX", 1)
    alice, bob = make_user("alice"), make_user("bob")
    first, second = _post(alice), _post(alice, "more")
    client = _api(bob)
    assert client.post(f"/api/v1/statuses/{first}/bookmark").status_code == 200
    refused = client.post(f"/api/v1/statuses/{second}/bookmark")
    assert refused.status_code == 422
    assert "You have 1 bookmarks" in refused.json()["error"]


@pytest.mark.real_redis
def test_bookmarks_cost_no_round_trip_on_timelines_and_two_for_the_list():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    sids = [_post(alice, f"status {i}") for i in range(12)]
    social.status_repost(user=carol, sid=sids[0])
    run_jobs()
    for sid in sids[::2]:
        bookmarks.status_bookmark(user=bob, sid=sid)
    client = _api(bob)
    # As before bookmarks: a timeline's window on one server is one round trip; a
    # Cluster reads the viewer's bookmarks with the accounts, in their round trip.
    assert get_round_trips(client, "/api/v1/timelines/home?limit=30") == (
        3 if is_cluster() else 1
    )
    # The list: the bookmarks with the token's check, then their statuses with
    # whether their authors may be seen (a Cluster: the accounts in one more).
    assert get_round_trips(client, "/api/v1/bookmarks?limit=40") == (
        3 if is_cluster() else 2
    )


@pytest.mark.real_redis
def test_a_window_with_reposts_reads_the_bookmarks_with_its_checks(settings):
    # A Cluster checks a window's reposts in the round trip that reads its accounts
    # and originals (`selectors._related_checked`): the bookmarks ride in it too,
    # so bookmarks cost a timeline no round trip there either (they took one more).
    settings.FANOUT_PUSH_MAX = 2
    alice, bob, carol, star = (make_user(n) for n in ("alice", "bob", "carol", "star"))
    services.follow_create(follower=bob, followee_id=carol.id)
    for fan in [bob, *(make_user(f"fan{i}") for i in range(3))]:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    saved = _post(alice, "saved")
    repost = social.status_repost(user=carol, sid=saved)
    pulled, other = _post(star, "pulled"), _post(star, "not saved")
    run_jobs()
    for sid in (saved, pulled):
        bookmarks.status_bookmark(user=bob, sid=sid)
    client = _api(bob)
    rows = {s["id"]: s for s in client.get("/api/v1/timelines/home").json()}
    assert rows[str(repost.id)]["bookmarked"] is True
    assert rows[str(repost.id)]["reblog"]["bookmarked"] is True
    assert rows[str(pulled)]["bookmarked"] is True
    assert rows[str(other)]["bookmarked"] is False
    # As before bookmarks: a home with a repost and a pulled author costs three
    # round trips, on one server (the outbox, then its checks) as on a Cluster.
    assert get_round_trips(client, "/api/v1/timelines/home") == 3
    shown = client.get(f"/api/v1/accounts/{carol.id}/statuses").json()
    assert [s["bookmarked"] for s in shown] == [True]
    assert get_round_trips(client, f"/api/v1/accounts/{carol.id}/statuses") == (
        3 if is_cluster() else 1
    )
