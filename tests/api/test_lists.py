"""Lists through the client API (Mastodon's lists and list timelines): an app makes
a list, puts people the user follows on it, reads its timeline, and finds each
account's lists; another user's list is a 404."""

from __future__ import annotations

import json
import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import lists, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    """Bob follows alice and carol, not dave."""
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    run_jobs()
    return alice, bob, carol, dave


def as_json(client, method: str, url: str, data: dict | None = None):
    return getattr(client, method)(
        url, json.dumps(data or {}), content_type="application/json"
    )


def post(user, text: str, reply_to: int | None = None) -> int:
    if reply_to is not None:
        sid = social.status_reply(author=user, sid=reply_to, text=text).id
    else:
        sid = services.status_create(author=user, text=text).id
    run_jobs()
    return sid


def contents(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [s["content"] for s in response.json()]


def test_an_app_makes_lists_changes_and_deletes_them(people):
    _, bob, _, _ = people
    client = api_client(token_for(bob))
    made = as_json(client, "post", "/api/v1/lists", {"title": "Friends"})
    assert made.status_code == 200, made.content
    entity = made.json()
    assert entity == {
        "id": entity["id"],
        "title": "Friends",
        "replies_policy": "list",
        "exclusive": False,
    }
    lid = entity["id"]
    # A form body, as many clients send.
    other = client.post(
        "/api/v1/lists", {"title": "Work", "replies_policy": "none", "exclusive": "1"}
    ).json()
    assert other["replies_policy"] == "none" and other["exclusive"] is True
    assert [e["title"] for e in client.get("/api/v1/lists").json()] == [
        "Friends",
        "Work",
    ]
    changed = as_json(
        client,
        "put",
        f"/api/v1/lists/{lid}",
        {"title": "Close friends", "replies_policy": "followed"},
    ).json()
    assert changed["title"] == "Close friends"
    assert changed["replies_policy"] == "followed"
    assert client.get(f"/api/v1/lists/{lid}").json() == changed
    assert client.delete(f"/api/v1/lists/{lid}").json() == {}
    assert client.get(f"/api/v1/lists/{lid}").status_code == 404
    assert [e["title"] for e in client.get("/api/v1/lists").json()] == ["Work"]
    # Ids are never given again.
    again = as_json(client, "post", "/api/v1/lists", {"title": "Again"}).json()
    assert int(again["id"]) > int(other["id"])


def test_what_is_refused(people):
    _, bob, _, _ = people
    client = api_client(token_for(bob))
    blank = as_json(client, "post", "/api/v1/lists", {"title": "  "})
    assert blank.status_code == 422
    assert "title" in blank.json()["error"]
    policy = as_json(
        client, "post", "/api/v1/lists", {"title": "x", "replies_policy": "all"}
    )
    assert policy.status_code == 422
    assert client.get("/api/v1/lists/99").status_code == 404
    assert as_json(client, "put", "/api/v1/lists/99", {"title": "x"}).status_code == 404
    assert client.delete("/api/v1/lists/99").status_code == 404


def test_another_users_list_is_not_found(people):
    alice, bob, _, _ = people
    lid = lists.list_create(uid=bob.id, title="Mine").id
    theirs = api_client(token_for(alice))
    for url in (
        f"/api/v1/lists/{lid}",
        f"/api/v1/lists/{lid}/accounts",
        f"/api/v1/timelines/list/{lid}",
    ):
        assert theirs.get(url).status_code == 404, url
    assert theirs.delete(f"/api/v1/lists/{lid}").status_code == 404
    add = theirs.post(f"/api/v1/lists/{lid}/accounts", {"account_ids[]": [bob.id]})
    assert add.status_code == 404
    assert lists.lists_get(uid=bob.id)[0].title == "Mine"


def test_accounts_added_must_be_followed(people):
    alice, bob, carol, dave = people
    client = api_client(token_for(bob))
    lid = lists.list_create(uid=bob.id, title="Friends").id
    url = f"/api/v1/lists/{lid}/accounts"
    refused = client.post(url, {"account_ids[]": [alice.id, dave.id]})
    assert refused.status_code == 422
    assert refused.json()["error"] == "You must follow this account"
    assert client.get(url).json() == []  # all or none
    assert client.post(url, {"account_ids[]": [999]}).status_code == 404
    added = client.post(url, {"account_ids[]": [alice.id, carol.id]})
    assert added.status_code == 200 and added.json() == {}
    # Newest account first.
    assert [a["username"] for a in client.get(url).json()] == ["carol", "alice"]
    # Mastodon.py sends a DELETE's parameters in its body.
    gone = client.delete(
        url,
        f"account_ids[]={carol.id}",
        content_type="application/x-www-form-urlencoded",
    )
    assert gone.status_code == 200
    assert [a["username"] for a in client.get(url).json()] == ["alice"]


def test_list_accounts_are_paged_by_account(people):
    alice, bob, carol, _ = people
    client = api_client(token_for(bob))
    lid = lists.list_create(uid=bob.id, title="Friends").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, carol.id])
    url = f"/api/v1/lists/{lid}/accounts"
    first = client.get(url, {"limit": 1})
    assert [a["username"] for a in first.json()] == ["carol"]
    assert f"max_id={carol.id}" in first.headers["Link"]
    second = client.get(url, {"limit": 1, "max_id": carol.id})
    assert [a["username"] for a in second.json()] == ["alice"]
    every = client.get(url, {"limit": 0})
    assert [a["username"] for a in every.json()] == ["carol", "alice"]
    assert "Link" not in every.headers


def test_an_accounts_lists(people):
    alice, bob, carol, dave = people
    client = api_client(token_for(bob))
    one = lists.list_create(uid=bob.id, title="One").id
    two = lists.list_create(uid=bob.id, title="Two").id
    lists.members_add(uid=bob.id, lid=one, member_ids=[alice.id])
    lists.members_add(uid=bob.id, lid=two, member_ids=[alice.id, carol.id])
    assert [
        e["title"] for e in client.get(f"/api/v1/accounts/{alice.id}/lists").json()
    ] == [
        "One",
        "Two",
    ]
    assert [
        e["id"] for e in client.get(f"/api/v1/accounts/{carol.id}/lists").json()
    ] == [str(two)]
    assert client.get(f"/api/v1/accounts/{dave.id}/lists").json() == []
    assert client.get("/api/v1/accounts/999/lists").status_code == 404
    # Someone else's lists are not the viewer's.
    assert (
        api_client(token_for(carol)).get(f"/api/v1/accounts/{alice.id}/lists").json()
        == []
    )


def test_the_list_timeline_pages_like_the_home(people):
    alice, bob, carol, _ = people
    client = api_client(token_for(bob))
    lid = lists.list_create(uid=bob.id, title="Friends").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, carol.id])
    sids = []
    for n in range(7):
        sids.append(post(alice if n % 2 else carol, f"status {n}"))
    url = f"/api/v1/timelines/list/{lid}"
    seen: list[str] = []
    response = client.get(url, {"limit": 3})
    while True:
        page = contents(response)
        if not page:
            break
        seen += page
        link = response.headers.get("Link", "")
        if 'rel="next"' not in link:
            break
        max_id = link.split("max_id=")[1].split(">")[0]
        response = client.get(url, {"limit": 3, "max_id": max_id})
    assert seen == [f"<p>status {n}</p>" for n in reversed(range(7))]
    # Catching up from below: min_id reads the window just above.
    above = client.get(url, {"min_id": sids[2], "limit": 2})
    assert contents(above) == ["<p>status 4</p>", "<p>status 3</p>"]
    since = client.get(url, {"since_id": sids[4]})
    assert contents(since) == ["<p>status 6</p>", "<p>status 5</p>"]


def test_an_exclusive_lists_members_leave_the_home_timeline(people):
    """`exclusive` (Mastodon's): the list's members' statuses leave the home
    timeline, paged without them, and stay on the list's timeline."""
    alice, bob, carol, _ = people
    client = api_client(token_for(bob))
    made = as_json(
        client, "post", "/api/v1/lists", {"title": "Alice", "exclusive": True}
    )
    assert made.json()["exclusive"] is True
    lid = made.json()["id"]
    lists.members_add(uid=bob.id, lid=int(lid), member_ids=[alice.id])
    for n in range(6):
        post(alice if n % 2 else carol, f"status {n}")
    seen: list[str] = []
    response = client.get("/api/v1/timelines/home", {"limit": 2})
    while page := contents(response):
        seen += page
        link = response.headers.get("Link", "")
        if 'rel="next"' not in link:
            break
        max_id = link.split("max_id=")[1].split(">")[0]
        response = client.get("/api/v1/timelines/home", {"limit": 2, "max_id": max_id})
    assert seen == ["<p>status 4</p>", "<p>status 2</p>", "<p>status 0</p>"]
    on_list = contents(client.get(f"/api/v1/timelines/list/{lid}"))
    assert on_list == ["<p>status 5</p>", "<p>status 3</p>", "<p>status 1</p>"]
    as_json(client, "put", f"/api/v1/lists/{lid}", {"exclusive": False})
    assert len(contents(client.get("/api/v1/timelines/home"))) == 6


def test_a_home_window_an_exclusive_list_empties_links_on(people, monkeypatch):
    """A window of statuses a sweep cut short left (the list made exclusive, its
    home not yet swept) reads on below them: an app takes an empty window for the
    end of the home."""
    alice, bob, carol, _ = people
    client = api_client(token_for(bob))
    lid = lists.list_create(uid=bob.id, title="Alice").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    post(carol, "carol")
    post(alice, "alice 1")
    post(alice, "alice 2")
    monkeypatch.setattr(lists, "_home_sync", lambda uid, *, came, left: None)
    as_json(client, "put", f"/api/v1/lists/{lid}", {"exclusive": True})
    response = client.get("/api/v1/timelines/home", {"limit": 2})
    assert contents(response) == ["<p>carol</p>"]


def test_a_repost_of_a_members_status_is_not_paged_twice(people):
    alice, bob, carol, _ = people
    client = api_client(token_for(bob))
    lid = lists.list_create(uid=bob.id, title="Friends").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, carol.id])
    first = post(alice, "by alice")
    post(carol, "carol 1")
    social.status_repost(user=carol, sid=first)
    run_jobs()
    url = f"/api/v1/timelines/list/{lid}"
    seen: list[str] = []
    response = client.get(url, {"limit": 1})
    # A window whose one status was left out is empty, and links on.
    for _ in range(10):
        assert response.status_code == 200, response.content
        seen += [(s["reblog"] or s)["content"] for s in response.json()]
        link = response.headers.get("Link", "")
        if 'rel="next"' not in link:
            break
        max_id = link.split("max_id=")[1].split(">")[0]
        response = client.get(url, {"limit": 1, "max_id": max_id})
    assert seen == ["<p>carol 1</p>", "<p>by alice</p>"]
    # Catching up from below shows it once too.
    above = client.get(url, {"min_id": first - 1})
    assert [(s["reblog"] or s)["content"] for s in above.json()] == [
        "<p>carol 1</p>",
        "<p>by alice</p>",
    ]


def test_the_list_timeline_needs_read_lists(people):
    _, bob, _, _ = people
    lid = lists.list_create(uid=bob.id, title="Friends").id
    statuses_only = api_client(token_for(bob, scopes=("read:statuses",)))
    assert statuses_only.get(f"/api/v1/timelines/list/{lid}").status_code == 403
    assert statuses_only.get("/api/v1/lists").status_code == 403
    read_only = api_client(token_for(bob, scopes=("read",)))
    assert read_only.get(f"/api/v1/timelines/list/{lid}").status_code == 200
    assert read_only.post("/api/v1/lists", {"title": "x"}).status_code == 403
    assert api_client().get("/api/v1/lists").status_code == 401


def test_replies_as_the_list_policy_says(people):
    alice, bob, carol, dave = people
    client = api_client(token_for(bob))
    lid = lists.list_create(uid=bob.id, title="Friends").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    by_carol = post(carol, "carol asks")
    by_dave = post(dave, "dave asks")
    by_alice = post(alice, "alice asks")
    post(alice, "to carol", reply_to=by_carol)
    post(alice, "to dave", reply_to=by_dave)
    post(alice, "to herself", reply_to=by_alice)
    url = f"/api/v1/timelines/list/{lid}"

    def shown(policy: str) -> list[str]:
        as_json(client, "put", f"/api/v1/lists/{lid}", {"replies_policy": policy})
        texts = [re.sub(r"<[^>]+>", "", c) for c in contents(client.get(url))]
        return [t.split()[-1] for t in texts if " to " in f" {t}"]

    # Replies to herself always; to carol (followed, not on the list) by policy;
    # to dave (not followed) never.
    assert shown("list") == ["herself"]
    assert shown("followed") == ["herself", "carol"]
    assert shown("none") == ["herself"]
    lists.members_add(uid=bob.id, lid=lid, member_ids=[carol.id])
    assert shown("list") == ["herself", "carol"]
    # Everything else is there whatever the policy.
    assert "alice asks" in [
        re.sub(r"<[^>]+>", "", c) for c in contents(client.get(url))
    ]


@pytest.mark.real_redis
def test_a_list_timeline_costs_two_round_trips_on_one_server(people, redis_backend):
    alice, bob, carol, _ = people
    lid = lists.list_create(uid=bob.id, title="Friends").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, carol.id])
    post(alice, "one")
    post(carol, "two")
    client = api_client(token_for(bob))
    url = f"/api/v1/timelines/list/{lid}"
    client.get(url)
    with RoundTripCounter() as counter:
        assert contents(client.get(url)) == ["<p>two</p>", "<p>one</p>"]
    if redis_backend == "real":
        assert counter.count == 2
    else:
        # A Cluster: the members' ids, their statuses, their accounts and checks.
        assert counter.count == 4
        assert counter.most_per_node <= 1
