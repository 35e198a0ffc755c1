"""The client API's notifications: one per event from the site's groups, Mastodon's
types and paging, dismiss and clear as the page and badge then show them."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from tests.helpers import notifications_shown as shown
from tests.roundtrips import RoundTripCounter
from timeline import blocks, notifications, privacy, services, social

T0 = 1_800_000_000_000  # a fixed time (ms)


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    for name in ("POST", "LIKE", "FOLLOW", "REPOST"):
        setattr(settings, f"RATE_LIMIT_{name}", "off")


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol", "dave", "erin")}


def tell(recipient, kind, actor, sid=None, at=T0) -> bool:
    return notifications.notify(
        recipient=recipient.id, kind=kind, actor=actor.id, sid=sid, at_ms=at
    )


def listed(client, query: str = "") -> list[dict]:
    response = client.get("/api/v1/notifications" + query)
    assert response.status_code == 200, response.content
    return response.json()


def summary(items: list[dict]) -> list[tuple]:
    return [
        (n["type"], n["account"]["username"], (n.get("status") or {}).get("id"))
        for n in items
    ]


def links(response) -> dict[str, str]:
    """rel -> the query of its URL."""
    found = re.findall(r'<[^?>]*\?([^>]*)>; rel="(\w+)"', response.get("Link", ""))
    return {rel: query for query, rel in found}


def badge(html: str) -> str | None:
    found = re.search(r"data-notifications-badge>([^<]*)<", html)
    return found.group(1) if found else None


def test_each_event_has_its_type_account_and_status(people):
    alice, bob, carol, dave, erin = (people[n] for n in people)
    status = services.status_create(author=alice, text="hello world")
    social.status_like(user=bob, sid=status.id)
    social.status_repost(user=carol, sid=status.id)
    reply = social.status_reply(author=dave, sid=status.id, text="@alice nice")
    mention = services.status_create(author=erin, text="hi @alice")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    client = api_client(token_for(alice))
    items = listed(client)
    assert sorted(summary(items)) == sorted(
        [
            ("favourite", "bob", str(status.id)),
            ("reblog", "carol", str(status.id)),
            ("mention", "dave", str(reply.id)),
            ("mention", "erin", str(mention.id)),
            ("follow", "bob", None),
        ]
    )
    follow = next(n for n in items if n["type"] == "follow")
    assert "status" not in follow
    assert follow["account"]["id"] == str(bob.id)
    assert follow["created_at"].endswith("Z")
    liked = next(n for n in items if n["type"] == "favourite")
    assert liked["status"]["account"]["username"] == "alice"
    assert liked["status"]["favourites_count"] == 1
    assert liked["group_key"] == f"favourite-{status.id}"
    # Newest first, ids are strings that sort as the list does.
    ids = [int(n["id"]) for n in items]
    assert ids == sorted(ids, reverse=True)
    assert all(isinstance(n["id"], str) for n in items)
    # One of them by id, as the list showed it.
    one = client.get(f"/api/v1/notifications/{liked['id']}")
    assert one.status_code == 200
    assert one.json() == liked


def test_a_follow_request_is_a_follow_request_and_an_approval_is_not_listed(people):
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=alice, private=True)
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    assert summary(listed(api_client(token_for(alice)))) == [
        ("follow_request", "bob", None)
    ]
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    run_jobs()
    assert listed(api_client(token_for(alice))) == []
    # Bob's "alice approved your follow request" has no Mastodon type.
    assert shown(logged_in_client("bob")) == ["@alice approved your follow request"]
    assert listed(api_client(token_for(bob))) == []


def test_types_and_exclude_types_choose_what_is_listed(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    status = services.status_create(author=alice, text="hello")
    other = services.status_create(author=carol, text="@alice look")
    tell(alice, "like", bob, status.id, at=T0)
    tell(alice, "repost", carol, status.id, at=T0 + 1)
    tell(alice, "follow", carol, at=T0 + 2)
    tell(alice, "mention", carol, other.id, at=T0 + 3)
    client = api_client(token_for(alice))
    kinds = [n["type"] for n in listed(client)]
    assert kinds == ["mention", "follow", "reblog", "favourite"]
    only = listed(client, "?types[]=favourite&types[]=follow")
    assert [n["type"] for n in only] == ["follow", "favourite"]
    assert [n["type"] for n in listed(client, "?types=mention")] == ["mention"]
    without = listed(client, "?exclude_types[]=mention&exclude_types[]=reblog")
    assert [n["type"] for n in without] == ["follow", "favourite"]
    # A known type the site never sends matches nothing; an unknown one is ignored.
    assert listed(client, "?types[]=poll") == []
    assert len(listed(client, "?types[]=nonsense")) == 4
    by_carol = listed(client, f"?account_id={carol.id}")
    assert [n["type"] for n in by_carol] == ["mention", "follow", "reblog"]


def test_paging_is_exact_across_sixty_notifications(people):
    alice = people["alice"]
    likers = [people[n] for n in ("bob", "carol", "dave")]
    for i in range(20):
        status = services.status_create(author=alice, text=f"status {i}")
        for j, liker in enumerate(likers):
            tell(alice, "like", liker, status.id, at=T0 + 10 * i + j)
    client = api_client(token_for(alice))
    everything = listed(client, "?limit=80")
    assert len(everything) == 60
    ids = [n["id"] for n in everything]
    assert len(set(ids)) == 60
    # Down with max_id, 20 at a time: each page cuts inside a group of three.
    pages, query = [], "?limit=20"
    responses = []
    while query is not None:
        response = client.get("/api/v1/notifications" + query)
        responses.append(response)
        pages.append([n["id"] for n in response.json()])
        following = links(response).get("next")
        query = f"?{following}" if following else None
    assert [len(p) for p in pages] == [20, 20, 20]
    assert [i for p in pages for i in p] == ids
    assert "limit=20" in links(responses[0])["next"]
    # And back up with min_id from the last page: the same pages again.
    back, query = [], "?" + links(responses[-1])["prev"]
    while query is not None:
        response = client.get("/api/v1/notifications" + query)
        got = [n["id"] for n in response.json()]
        if not got:
            break
        back.append(got)
        query = "?" + links(response)["prev"]
    assert back == pages[:2][::-1]
    # min_id below everything: the oldest twenty; since_id: the newest twenty.
    oldest = listed(client, f"?limit=20&min_id={int(ids[-1]) - 1}")
    assert [n["id"] for n in oldest] == ids[40:]
    newest = listed(client, f"?limit=20&since_id={int(ids[-1]) - 1}")
    assert [n["id"] for n in newest] == ids[:20]
    between = listed(client, f"?max_id={ids[10]}&min_id={ids[15]}")
    assert [n["id"] for n in between] == ids[11:15]
    assert listed(client, "?limit=500") == everything  # clamped to 80


def test_dismiss_and_clear_show_on_the_page_and_the_badge(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    status = services.status_create(author=alice, text="hello")
    tell(alice, "like", bob, status.id, at=T0)
    tell(alice, "like", carol, status.id, at=T0 + 1)
    tell(alice, "follow", carol, at=T0 + 2)
    client = api_client(token_for(alice))
    browser = logged_in_client("alice")
    assert badge(page(browser, "/")) == "2"
    items = listed(client)
    bobs = next(n for n in items if n["account"]["username"] == "bob")
    answer = client.post(f"/api/v1/notifications/{bobs['id']}/dismiss")
    assert answer.status_code == 200
    assert answer.json() == {}
    assert shown(browser) == ["@carol followed you", "@carol liked your status. hello"]
    assert badge(page(browser, "/")) == "2"
    assert client.get(f"/api/v1/notifications/{bobs['id']}").status_code == 404
    again = client.post(f"/api/v1/notifications/{bobs['id']}/dismiss")
    assert again.status_code == 404
    follow = next(n for n in items if n["type"] == "follow")
    client.post(f"/api/v1/notifications/{follow['id']}/dismiss")
    assert shown(browser) == ["@carol liked your status. hello"]
    assert badge(page(browser, "/")) == "1"
    cleared = client.post("/api/v1/notifications/clear")
    assert cleared.status_code == 200
    assert cleared.json() == {}
    assert shown(browser) == []
    assert badge(page(browser, "/")) is None
    assert listed(client) == []
    # What comes next is unread again, even from before the cleared ones.
    tell(alice, "follow", bob, at=T0 - 5000)
    assert badge(page(browser, "/")) == "1"
    assert summary(listed(client)) == [("follow", "bob", None)]


def test_mutes_and_blocks_hide_as_on_the_page(people):
    alice, bob, carol, dave = (people[n] for n in ("alice", "bob", "carol", "dave"))
    status = services.status_create(author=alice, text="hello")
    for i, who in enumerate((bob, carol, dave)):
        tell(alice, "like", who, status.id, at=T0 + i)
    client = api_client(token_for(alice))
    assert [n["account"]["username"] for n in listed(client)] == [
        "dave",
        "carol",
        "bob",
    ]
    blocks.mute_create(user=alice, muted_id=bob.id)
    blocks.block_create(blocker=carol, blocked_id=alice.id)
    run_jobs()
    assert [n["account"]["username"] for n in listed(client)] == ["dave"]
    assert shown(logged_in_client("alice")) == ["@dave liked your status. hello"]
    hidden = int(listed(client)[0]["id"]) - dave.id + bob.id
    assert client.get(f"/api/v1/notifications/{hidden}").status_code == 404
    blocks.block_create(blocker=alice, blocked_id=dave.id)
    run_jobs()
    assert listed(client) == []


def test_a_deleted_status_and_a_deleted_actor_leave_the_list(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    gone = services.status_create(author=alice, text="soon gone")
    kept = services.status_create(author=alice, text="kept")
    tell(alice, "like", bob, gone.id, at=T0)
    tell(alice, "like", bob, kept.id, at=T0 + 1)
    tell(alice, "like", carol, kept.id, at=T0 + 2)
    client = api_client(token_for(alice))
    assert len(listed(client)) == 3
    services.status_delete(user=alice, sid=gone.id)
    services.account_close(user=carol)
    run_jobs()
    assert summary(listed(client)) == [("favourite", "bob", str(kept.id))]


def test_a_private_authors_mention_is_listed_only_once_followed(people):
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=bob, private=True)
    status = services.status_create(author=bob, text="@alice secret")
    tell(alice, "mention", bob, status.id)
    client = api_client(token_for(alice))
    assert listed(client) == []
    services.follow_create(follower=alice, followee_id=bob.id)
    privacy.follow_request_approve(owner=bob, requester_id=alice.id)
    run_jobs()
    assert summary(listed(client)) == [("mention", "bob", str(status.id))]
    assert shown(logged_in_client("alice")) == [
        "@bob approved your follow request",
        "@bob mentioned you. @alice secret",
    ]


def test_unknown_and_others_notifications_are_404_and_scopes_apply(people):
    alice, bob = people["alice"], people["bob"]
    tell(alice, "follow", bob, at=T0)
    client = api_client(token_for(alice))
    (item,) = listed(client)
    assert client.get("/api/v1/notifications/12345").json() == {
        "error": "Record not found"
    }
    assert client.get("/api/v1/notifications/12345").status_code == 404
    assert api_client(token_for(bob)).get(
        f"/api/v1/notifications/{item['id']}"
    ).status_code == (404)
    bobs = api_client(token_for(bob))
    assert bobs.post(f"/api/v1/notifications/{item['id']}/dismiss").status_code == 404
    assert len(listed(client)) == 1
    read_only = api_client(token_for(alice, scopes=("read",)))
    assert read_only.post("/api/v1/notifications/clear").status_code == 403
    no_notifications = api_client(token_for(alice, scopes=("read:statuses",)))
    assert no_notifications.get("/api/v1/notifications").status_code == 403
    assert api_client().get("/api/v1/notifications").status_code == 401
    assert len(listed(client)) == 1


@pytest.mark.real_redis
def test_a_page_costs_three_round_trips(people):
    alice = people["alice"]
    for i in range(30):
        status = services.status_create(author=alice, text=f"status {i}")
        tell(alice, "like", people["bob"], status.id, at=T0 + 2 * i)
        tell(alice, "repost", people["carol"], status.id, at=T0 + 2 * i + 1)
    mention = services.status_create(author=people["dave"], text="@alice hi")
    tell(alice, "mention", people["dave"], mention.id, at=T0 + 100)
    tell(alice, "follow", people["erin"], at=T0 + 101)
    client = api_client(token_for(alice))
    url = "/api/v1/notifications?limit=80"
    assert len(client.get(url).json()) == 62
    with RoundTripCounter() as counter:
        response = client.get(url)
    assert response.status_code == 200
    assert counter.most_per_node <= 1
    assert counter.count == 3
    nid = response.json()[5]["id"]
    with RoundTripCounter() as counter:
        assert client.get(f"/api/v1/notifications/{nid}").status_code == 200
    assert counter.count == 3
