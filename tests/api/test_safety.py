"""The client API's safety endpoints: blocks, mutes, follow requests."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs, status_ids
from tests.roundtrips import RoundTripCounter
from timeline import blocks, privacy, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_FOLLOW = "off"


def client_of(user, scopes=("read", "write", "follow", "push")):
    return api_client(token_for(user, scopes=scopes))


def links(response) -> dict[str, str]:
    return {
        rel: url
        for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', response.get("Link", ""))
    }


def relationship(api, uid: int) -> dict:
    return api.get("/api/v1/accounts/relationships", {"id": uid}).json()[0]


# blocks


def test_block_ends_follows_both_ways_and_shows_on_both_sides():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=alice, followee_id=bob.id)
    services.follow_create(follower=bob, followee_id=alice.id)
    sid = services.status_create(author=bob, text="bob speaks").id
    run_jobs()
    site = logged_in_client("alice")
    assert sid in status_ids(page(site, "/"))
    response = client_of(alice).post(f"/api/v1/accounts/{bob.id}/block")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["id"] == str(bob.id)
    assert (data["blocking"], data["following"], data["followed_by"]) == (
        True,
        False,
        False,
    )
    bobs = relationship(client_of(bob), alice.id)
    assert (bobs["blocked_by"], bobs["blocking"], bobs["following"]) == (
        True,
        False,
        False,
    )
    run_jobs()
    assert sid not in status_ids(page(site, "/"))
    # The site's profile of the blocked person offers Unblock.
    assert "Unblock" in page(site, "/u/bob/")


def test_a_blocked_user_cannot_follow_either_way():
    alice, bob = make_user("alice"), make_user("bob")
    client_of(alice).post(f"/api/v1/accounts/{bob.id}/block")
    refused = client_of(bob).post(f"/api/v1/accounts/{alice.id}/follow")
    assert refused.status_code == 403
    assert refused.json() == {"error": "This action is not allowed"}
    assert client_of(alice).post(f"/api/v1/accounts/{bob.id}/follow").status_code == 403
    assert relationship(client_of(bob), alice.id)["following"] is False


def test_unblock_and_the_blocks_list():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    api = client_of(alice)
    api.post(f"/api/v1/accounts/{bob.id}/block")
    api.post(f"/api/v1/accounts/{carol.id}/block")
    listed = api.get("/api/v1/blocks")
    assert listed.status_code == 200
    assert [a["username"] for a in listed.json()] == ["carol", "bob"]
    data = api.post(f"/api/v1/accounts/{bob.id}/unblock").json()
    assert data["blocking"] is False
    assert [a["username"] for a in api.get("/api/v1/blocks").json()] == ["carol"]
    # Unblocked: following works again, and nobody follows anybody by itself.
    assert data["following"] is False
    assert api.post(f"/api/v1/accounts/{bob.id}/follow").json()["following"] is True


def test_block_codes():
    alice = make_user("alice")
    api = client_of(alice)
    for path in ("block", "unblock", "mute", "unmute"):
        missing = api.post(f"/api/v1/accounts/999999/{path}")
        assert missing.status_code == 404, path
        assert missing.json() == {"error": "Record not found"}
    self_block = api.post(f"/api/v1/accounts/{alice.id}/block")
    assert self_block.status_code == 422
    assert self_block.json() == {"error": "You cannot block yourself."}
    bob = make_user("bob")
    read_only = client_of(alice, scopes=("read",))
    assert read_only.post(f"/api/v1/accounts/{bob.id}/block").status_code == 403
    assert read_only.post(f"/api/v1/accounts/{bob.id}/mute").status_code == 403
    assert (
        client_of(alice, scopes=("write:blocks",))
        .post(f"/api/v1/accounts/{bob.id}/block")
        .status_code
        == 200
    )
    assert api_client().get("/api/v1/blocks").status_code == 401
    assert (
        client_of(alice, scopes=("read:mutes",)).get("/api/v1/blocks").status_code
        == 403
    )
    assert client_of(alice, scopes=("follow",)).get("/api/v1/blocks").status_code == 200


def test_block_answers_429_past_the_follow_budget(settings):
    settings.RATE_LIMIT_FOLLOW = "1/1h"
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    api = client_of(alice)
    assert api.post(f"/api/v1/accounts/{bob.id}/block").status_code == 200
    assert api.post(f"/api/v1/accounts/{carol.id}/mute").status_code == 429
    assert api.get("/api/v1/mutes").json() == []


def test_blocks_paged_with_link_headers():
    alice = make_user("alice")
    others = [make_user(f"user{i}") for i in range(5)]
    api = client_of(alice)
    for other in others:
        api.post(f"/api/v1/accounts/{other.id}/block")
    first = api.get("/api/v1/blocks", {"limit": 2})
    assert [a["username"] for a in first.json()] == ["user4", "user3"]
    second = api.get(links(first)["next"])
    assert [a["username"] for a in second.json()] == ["user2", "user1"]
    last = api.get(links(second)["next"])
    assert [a["username"] for a in last.json()] == ["user0"]
    assert "next" not in links(last)
    back = api.get(links(last)["prev"])
    assert [a["username"] for a in back.json()] == ["user2", "user1"]


# mutes


def test_mute_hides_their_statuses_from_the_home_until_unmuted():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=alice, followee_id=bob.id)
    sid = services.status_create(author=bob, text="noisy").id
    run_jobs()
    site = logged_in_client("alice")
    api = client_of(alice)
    data = api.post(f"/api/v1/accounts/{bob.id}/mute").json()
    assert (data["muting"], data["muting_notifications"], data["following"]) == (
        True,
        True,
        True,
    )
    assert sid not in status_ids(page(site, "/"))
    muted = api.get("/api/v1/mutes").json()
    assert [a["username"] for a in muted] == ["bob"]
    assert muted[0]["mute_expires_at"] is None
    # Mutes are one-sided: bob sees nothing of it.
    assert relationship(client_of(bob), alice.id)["muting"] is False
    assert api.post(f"/api/v1/accounts/{bob.id}/unmute").json()["muting"] is False
    assert sid in status_ids(page(site, "/"))
    assert api.get("/api/v1/mutes").json() == []


# follow requests


def test_follow_requests_listed_paged_authorized_and_rejected():
    owner = make_user("olga")
    privacy.account_privacy_set(user=owner, private=True)
    fans = [make_user(f"fan{i}") for i in range(3)]
    for fan in fans:
        assert (
            client_of(fan)
            .post(f"/api/v1/accounts/{owner.id}/follow")
            .json()["requested"]
        )
    api = client_of(owner)
    first = api.get("/api/v1/follow_requests", {"limit": 2})
    assert first.status_code == 200
    assert [a["username"] for a in first.json()] == ["fan2", "fan1"]
    rest = api.get(links(first)["next"])
    assert [a["username"] for a in rest.json()] == ["fan0"]
    authorized = api.post(f"/api/v1/follow_requests/{fans[0].id}/authorize")
    assert authorized.status_code == 200
    assert (authorized.json()["followed_by"], authorized.json()["requested_by"]) == (
        True,
        False,
    )
    rejected = api.post(f"/api/v1/follow_requests/{fans[1].id}/reject")
    assert rejected.status_code == 200
    assert rejected.json()["followed_by"] is False
    assert rejected.json()["requested_by"] is False
    assert [a["username"] for a in api.get("/api/v1/follow_requests").json()] == [
        "fan2"
    ]
    assert relationship(client_of(fans[0]), owner.id)["following"] is True
    denied = relationship(client_of(fans[1]), owner.id)
    assert (denied["following"], denied["requested"]) == (False, False)
    # The site's requests page agrees.
    assert "fan2" in page(logged_in_client("olga"), "/settings/requests/")
    assert "fan1" not in page(logged_in_client("olga"), "/settings/requests/")
    # Nothing asked: 404 either way.
    for answer in ("authorize", "reject"):
        assert (
            api.post(f"/api/v1/follow_requests/{fans[1].id}/{answer}").status_code
            == 404
        )
        assert api.post(f"/api/v1/follow_requests/999999/{answer}").status_code == 404


def test_an_approved_follower_sees_the_private_account_statuses():
    owner, fan = make_user("olga"), make_user("fan")
    privacy.account_privacy_set(user=owner, private=True)
    sid = services.status_create(author=owner, text="for friends").id
    client_of(fan).post(f"/api/v1/accounts/{owner.id}/follow")
    site = logged_in_client("fan")
    assert sid not in status_ids(page(site, "/u/olga/"))
    client_of(owner).post(f"/api/v1/follow_requests/{fan.id}/authorize")
    run_jobs()
    assert sid in status_ids(page(site, "/u/olga/"))
    assert sid in status_ids(page(site, "/"))


def test_a_block_withdraws_a_pending_request():
    owner, fan = make_user("olga"), make_user("fan")
    privacy.account_privacy_set(user=owner, private=True)
    client_of(fan).post(f"/api/v1/accounts/{owner.id}/follow")
    client_of(owner).post(f"/api/v1/accounts/{fan.id}/block")
    assert client_of(owner).get("/api/v1/follow_requests").json() == []
    assert relationship(client_of(fan), owner.id)["requested"] is False


# round trips


def count_round_trips(api, url: str) -> int:
    api.get(url)
    with RoundTripCounter() as counter:
        response = api.get(url)
        assert response.status_code == 200, response.content
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_safety_lists_cost_two_round_trips():
    alice = make_user("alice")
    privacy.account_privacy_set(user=alice, private=True)
    for i in range(4):
        other = make_user(f"user{i}")
        blocks.block_create(blocker=alice, blocked_id=other.id)
        other_fan = make_user(f"fan{i}")
        blocks.mute_create(user=alice, muted_id=other_fan.id)
        services.follow_ask(follower=make_user(f"asker{i}"), followee_id=alice.id)
    api = client_of(alice)
    for url in ("/api/v1/blocks", "/api/v1/mutes", "/api/v1/follow_requests"):
        assert count_round_trips(api, url) == 2, url
