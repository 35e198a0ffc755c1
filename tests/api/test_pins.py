"""Pins through the client API (Mastodon's): pin and unpin one's own statuses,
`pinned` on them wherever they are read, and an account's pinned statuses
(`?pinned=true`), which clients show above its other statuses."""

from __future__ import annotations

import pytest

from config.redis import is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import get_round_trips
from timeline import pins, privacy, services, social


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


def _pinned(client, uid: int) -> list[int]:
    response = client.get(f"/api/v1/accounts/{uid}/statuses?pinned=true")
    assert response.status_code == 200, response.content
    return [int(s["id"]) for s in response.json()]


def test_pin_and_unpin_answer_the_status_and_list_it_first():
    alice = make_user("alice")
    older, newer = _post(alice, "older"), _post(alice, "newer")
    client = _api(alice)
    response = client.post(f"/api/v1/statuses/{older}/pin")
    assert response.status_code == 200, response.content
    assert response.json()["pinned"] is True
    assert client.post(f"/api/v1/statuses/{newer}/pin").json()["pinned"] is True
    assert _pinned(client, alice.id) == [newer, older]
    # Anyone sees the list; only its owner reads `pinned` true.
    assert _pinned(api_client(), alice.id) == [newer, older]
    for row in (
        api_client().get(f"/api/v1/accounts/{alice.id}/statuses?pinned=true").json()
    ):
        assert row["pinned"] is False
    own = client.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    assert {int(s["id"]): s["pinned"] for s in own} == {newer: True, older: True}
    assert client.get(f"/api/v1/statuses/{older}").json()["pinned"] is True
    home = client.get("/api/v1/timelines/home").json()
    assert all(s["pinned"] for s in home if int(s["id"]) in (older, newer))
    undone = client.post(f"/api/v1/statuses/{older}/unpin")
    assert undone.status_code == 200 and undone.json()["pinned"] is False
    assert _pinned(client, alice.id) == [newer]


def test_refusals_say_why():
    alice, bob = make_user("alice"), make_user("bob")
    hers = _post(alice)
    client = _api(bob)
    refused = client.post(f"/api/v1/statuses/{hers}/pin")
    assert refused.status_code == 422
    assert refused.json()["error"] == "Only your own statuses can be pinned."
    repost = social.status_repost(user=bob, sid=hers)
    refused = client.post(f"/api/v1/statuses/{repost.id}/pin")
    assert refused.status_code == 422
    assert refused.json()["error"] == "A repost cannot be pinned."
    assert client.post("/api/v1/statuses/987654321/pin").status_code == 404
    for i in range(5):
        assert (
            client.post(f"/api/v1/statuses/{_post(bob, f'{i}')}/pin").status_code == 200
        )
    refused = client.post(f"/api/v1/statuses/{_post(bob, 'sixth')}/pin")
    assert refused.status_code == 422
    assert "You have pinned 5 statuses" in refused.json()["error"]
    assert len(_pinned(client, bob.id)) == 5


def test_a_private_account_s_pins_are_for_approved_followers():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(alice, "friends only")
    pins.status_pin(user=alice, sid=sid)
    privacy.account_privacy_set(user=alice, private=True)
    assert _pinned(_api(bob), alice.id) == []
    assert _pinned(api_client(), alice.id) == []
    services.follow_ask(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    run_jobs()
    assert _pinned(_api(bob), alice.id) == [sid]


def test_a_deleted_status_leaves_the_pins_and_an_unknown_account_is_a_404():
    alice = make_user("alice")
    sid = _post(alice)
    client = _api(alice)
    client.post(f"/api/v1/statuses/{sid}/pin")
    assert client.delete(f"/api/v1/statuses/{sid}").status_code == 200
    assert _pinned(client, alice.id) == []
    missing = client.get("/api/v1/accounts/987654321/statuses?pinned=true")
    assert missing.status_code == 404


def test_pins_take_write_accounts():
    alice = make_user("alice")
    sid = _post(alice)
    writer = api_client(token_for(alice, scopes=("read", "write:statuses")))
    assert writer.post(f"/api/v1/statuses/{sid}/pin").status_code == 403
    allowed = api_client(token_for(alice, scopes=("read", "write:accounts")))
    assert allowed.post(f"/api/v1/statuses/{sid}/pin").status_code == 200


@pytest.mark.real_redis
def test_pinned_rides_in_the_rounds_a_window_takes_anyway():
    """On one server the window's script says `pinned`; on a Cluster a window
    with reposts reads it with the reposts' checks, accounts and originals: no
    round trip of its own either way."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    own = [_post(bob, f"mine {i}") for i in range(3)]
    pins.status_pin(user=bob, sid=own[1])
    social.status_repost(user=carol, sid=_post(make_user("dave"), "reposted"))
    for i in range(6):
        _post(alice, f"hers {i}")
    run_jobs()
    client = _api(bob)
    rows = client.get("/api/v1/timelines/home?limit=30").json()
    assert {int(s["id"]): s["pinned"] for s in rows if int(s["id"]) in own} == {
        own[0]: False,
        own[1]: True,
        own[2]: False,
    }
    assert any(s["reblog"] for s in rows)
    path = "/api/v1/timelines/home?limit=30"
    assert get_round_trips(client, path) == (3 if is_cluster() else 1)
    path = f"/api/v1/accounts/{bob.id}/statuses?limit=30"
    assert get_round_trips(client, path) == (3 if is_cluster() else 1)


def test_a_reblog_of_one_s_pinned_status_says_its_original_is_pinned():
    """Clients offer Pin or Unpin from the status a reblog carries (its `reblog`):
    `pinned` there is the owner's pin, however the reblog is read."""
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=alice, followee_id=bob.id)
    sid = _post(alice, "pinned, then reblogged")
    pins.status_pin(user=alice, sid=sid)
    repost = social.status_repost(user=bob, sid=sid)
    run_jobs()
    client = _api(alice)
    assert client.get(f"/api/v1/statuses/{repost.id}").json()["reblog"]["pinned"]
    rows = client.get(f"/api/v1/accounts/{bob.id}/statuses").json()
    (reblog,) = [s for s in rows if s["reblog"]]
    assert reblog["pinned"] is False and reblog["reblog"]["pinned"] is True
    own = client.post(f"/api/v1/statuses/{sid}/reblog").json()
    assert own["pinned"] is False and own["reblog"]["pinned"] is True
    # Anyone else reads it unpinned.
    other = _api(bob).get(f"/api/v1/statuses/{repost.id}").json()
    assert other["reblog"]["pinned"] is False


def test_the_pinned_list_keeps_to_the_window_a_client_asks_for():
    """As Mastodon's: `max_id`, `since_id`/`min_id` (status ids) and `limit` bound
    the pinned list too, so a client that pages by the last id it holds gets an
    empty page after the pins, not the same pins again and again."""
    alice = make_user("alice")
    sids = [_post(alice, f"pinned {i}") for i in range(3)]
    for sid in sids:
        pins.status_pin(user=alice, sid=sid)
    client = _api(alice)
    path = f"/api/v1/accounts/{alice.id}/statuses?pinned=true"
    newest_pin_first = sids[::-1]
    assert _ids(client, path) == newest_pin_first
    assert _ids(client, f"{path}&max_id={min(sids)}") == []
    assert _ids(client, f"{path}&max_id={sids[2]}") == [sids[1], sids[0]]
    assert _ids(client, f"{path}&since_id={max(sids)}") == []
    assert _ids(client, f"{path}&min_id={sids[0]}") == [sids[2], sids[1]]
    assert _ids(client, f"{path}&limit=1") == [sids[2]]


def _ids(client, path: str) -> list[int]:
    response = client.get(path)
    assert response.status_code == 200, response.content
    return [int(s["id"]) for s in response.json()]
