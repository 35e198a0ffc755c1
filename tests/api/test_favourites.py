"""The statuses a user liked, through the client API (Mastodon's
`/api/v1/favourites`, Tusky's and Elk's "Favourites"): newest like first, paged
by Link, only likes that stand on statuses the viewer may still see."""

from __future__ import annotations

import re

import pytest

from config.redis import get_redis, is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import get_round_trips
from timeline import blocks, keys, privacy, services, social


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


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [int(s["id"]) for s in response.json()]


def test_the_likes_are_listed_newest_like_first_and_page_by_link():
    alice, bob = make_user("alice"), make_user("bob")
    sids = [_post(alice, f"status {i}") for i in range(5)]
    client = _api(bob)
    for sid in [*sids[1:], sids[0]]:
        assert client.post(f"/api/v1/statuses/{sid}/favourite").status_code == 200
    seen: list[int] = []
    url: str | None = "/api/v1/favourites?limit=2"
    while url is not None:
        response = client.get(url)
        assert all(s["favourited"] for s in response.json())
        seen += _ids(response)
        found = re.search(r'<([^>]+)>; rel="next"', response.get("Link", ""))
        url = found[1] if found else None
        assert len(seen) <= 5
    assert seen == [sids[0], sids[4], sids[3], sids[2], sids[1]]
    # Nobody else's: alice liked nothing.
    assert _ids(_api(alice).get("/api/v1/favourites")) == []


def test_an_undone_like_a_deleted_status_and_a_hidden_one_leave_the_list():
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    kept, undone, deleted = _post(alice, "kept"), _post(alice, "undone"), _post(alice)
    blocked, private = _post(carol, "carol's"), _post(dave, "dave's")
    for sid in (kept, undone, deleted, blocked, private):
        social.status_like(user=bob, sid=sid)
    social.status_unlike(user=bob, sid=undone)
    services.status_delete(user=alice, sid=deleted)
    blocks.block_create(blocker=bob, blocked_id=carol.id)
    privacy.account_privacy_set(user=dave, private=True)
    run_jobs()
    assert _ids(_api(bob).get("/api/v1/favourites")) == [kept]
    # Dave approves bob: his status is back.
    services.follow_ask(follower=bob, followee_id=dave.id)
    privacy.follow_request_approve(owner=dave, requester_id=bob.id)
    run_jobs()
    assert _ids(_api(bob).get("/api/v1/favourites")) == [private, kept]


def test_a_record_a_crash_left_without_its_like_is_not_listed():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(alice)
    # The liker's record is written first (`timeline.social`): a crash before the
    # status's side leaves it alone.
    get_redis().zadd(keys.liked(bob.id), {sid: 1_700_000_000_000_000})
    assert _ids(_api(bob).get("/api/v1/favourites")) == []


def test_favourites_take_their_scope():
    bob = make_user("bob")
    reader = api_client(token_for(bob, scopes=("read:statuses",)))
    assert reader.get("/api/v1/favourites").status_code == 403
    allowed = api_client(token_for(bob, scopes=("read:favourites",)))
    assert allowed.get("/api/v1/favourites").status_code == 200
    assert api_client().get("/api/v1/favourites").status_code == 401


@pytest.mark.real_redis
def test_the_list_costs_two_round_trips_three_with_a_private_author():
    alice, bob, dave = make_user("alice"), make_user("bob"), make_user("dave")
    for i in range(12):
        social.status_like(user=bob, sid=_post(alice, f"status {i}"))
    client = _api(bob)
    assert get_round_trips(client, "/api/v1/favourites?limit=40") == (
        4 if is_cluster() else 2
    )
    services.follow_ask(follower=bob, followee_id=dave.id)
    social.status_like(user=bob, sid=_post(dave, "mine"))
    privacy.account_privacy_set(user=dave, private=True)
    run_jobs()
    assert get_round_trips(client, "/api/v1/favourites?limit=40") == (
        4 if is_cluster() else 3
    )
    assert len(client.get("/api/v1/favourites?limit=40").json()) == 13
