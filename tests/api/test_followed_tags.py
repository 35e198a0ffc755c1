"""Followed hashtags through the client API (Mastodon's `tags/:id/follow`,
`unfollow`, `followed_tags`): an app follows a tag, its public statuses reach the
home timeline (paged with `max_id`, `since_id`, `min_id` across the merge), and
every Tag says whether the user follows it."""

from __future__ import annotations

import re

import pytest

from config.redis import is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import blocks, keys, services, tagfollows


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    """Bob follows alice; carol is a stranger to him."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob, carol


def post(user, text: str) -> int:
    sid = services.status_create(author=user, text=text).id
    run_jobs()
    return sid


def texts(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [re.sub(r"<[^>]+>", "", s["content"]) for s in response.json()]


def link(response, rel: str) -> str | None:
    found = re.search(rf'<([^>]+)>; rel="{rel}"', response.get("Link", ""))
    return found.group(1) if found else None


def test_follow_and_unfollow_answer_the_tag_with_following(r, people):
    _, bob, _ = people
    client = api_client(token_for(bob))
    followed = client.post("/api/v1/tags/Django/follow")
    assert followed.status_code == 200, followed.content
    assert followed.json()["name"] == "django"
    assert followed.json()["following"] is True
    assert followed.json()["url"].endswith("/tags/django/")
    # A tag no status carries yet is shown to whom follows it.
    assert client.get("/api/v1/tags/django").json()["following"] is True
    assert client.post("/api/v1/tags/django/follow").json()["following"] is True
    gone = client.post("/api/v1/tags/DJANGO/unfollow")
    assert gone.status_code == 200 and gone.json()["following"] is False
    assert client.get("/api/v1/tags/django").status_code == 404
    assert client.post("/api/v1/tags/a%20b/follow").status_code == 404
    assert r.zcard(keys.followed_tags(bob.id)) == 0


def test_following_is_said_on_every_tag_the_api_shows(r, people):
    _, bob, carol = people
    post(carol, "#django #python")
    tagfollows.tag_follow(uid=bob.id, tag="django")
    mine, visitor = api_client(token_for(bob)), api_client()
    assert mine.get("/api/v1/tags/django").json()["following"] is True
    assert mine.get("/api/v1/tags/python").json()["following"] is False
    assert visitor.get("/api/v1/tags/django").json()["following"] is False
    found = mine.get("/api/v2/search?q=django&type=hashtags").json()["hashtags"]
    assert [(t["name"], t["following"]) for t in found] == [("django", True)]
    trending = mine.get("/api/v1/trends/tags").json()
    assert sorted((t["name"], t["following"]) for t in trending) == [
        ("django", True),
        ("python", False),
    ]
    assert not any(t["following"] for t in visitor.get("/api/v1/trends/tags").json())


def test_every_tag_has_its_case_folded_name_for_id(r, people):
    """Mastodon 4.x gives a Tag an `id` (a string; apps key lists by it). The site
    keeps tags by their case-folded name and has no other id: that name is it, the
    same on every Tag the API shows whatever case was asked for. A status's `tags`
    stay Mastodon's name and url alone (its Status::Tag has no id)."""
    _, bob, carol = people
    sid = post(carol, "#Django #python")
    mine = api_client(token_for(bob))
    followed = mine.post("/api/v1/tags/DJANGO/follow").json()
    assert followed["id"] == "django" and followed["name"] == "django"
    assert mine.get("/api/v1/tags/Django").json()["id"] == "django"
    assert api_client().get("/api/v1/tags/python").json()["id"] == "python"
    assert [t["id"] for t in mine.get("/api/v1/followed_tags").json()] == ["django"]
    found = mine.get("/api/v2/search?q=django&type=hashtags").json()["hashtags"]
    assert [t["id"] for t in found] == ["django"]
    trending = mine.get("/api/v1/trends/tags").json()
    assert sorted(t["id"] for t in trending) == ["django", "python"]
    assert all(t["id"] == t["name"] for t in trending)
    gone = mine.post("/api/v1/tags/Django/unfollow").json()
    assert gone["id"] == "django"
    status = mine.get(f"/api/v1/statuses/{sid}").json()
    assert sorted(t["name"] for t in status["tags"]) == ["django", "python"]
    assert all(set(t) == {"name", "url"} for t in status["tags"])


def test_the_scopes_are_mastodons(r, people):
    _, bob, _ = people
    reader = api_client(token_for(bob, scopes=("read",)))
    assert reader.post("/api/v1/tags/django/follow").status_code == 403
    writer = api_client(token_for(bob, scopes=("write:follows",)))
    assert writer.post("/api/v1/tags/django/follow").status_code == 200
    assert writer.get("/api/v1/followed_tags").status_code == 403
    follows = api_client(token_for(bob, scopes=("read:follows",)))
    assert [t["name"] for t in follows.get("/api/v1/followed_tags").json()] == [
        "django"
    ]
    assert api_client().get("/api/v1/followed_tags").status_code == 401


def test_past_the_cap_a_follow_is_a_422(r, people, settings):
    _, bob, _ = people
    settings.FOLLOWED_TAGS_MAX = 1
    client = api_client(token_for(bob))
    client.post("/api/v1/tags/one/follow")
    refused = client.post("/api/v1/tags/two/follow")
    assert refused.status_code == 422
    assert "You follow 1 hashtags" in refused.json()["error"]


def test_follows_take_from_the_follow_budget(r, people, settings):
    _, bob, _ = people
    settings.RATE_LIMIT_FOLLOW = "1/1m"
    client = api_client(token_for(bob))
    assert client.post("/api/v1/tags/one/follow").status_code == 200
    refused = client.post("/api/v1/tags/two/follow")
    assert refused.status_code == 429 and "error" in refused.json()


def test_followed_tags_are_paged_newest_follow_first_with_links(r, people):
    _, bob, _ = people
    names = [f"tag{i}" for i in range(5)]
    for name in names:
        tagfollows.tag_follow(uid=bob.id, tag=name)
    client = api_client(token_for(bob))
    assert [t["name"] for t in client.get("/api/v1/followed_tags").json()] == names[
        ::-1
    ]
    first = client.get("/api/v1/followed_tags?limit=2")
    assert [t["name"] for t in first.json()] == ["tag4", "tag3"]
    assert all(t["following"] for t in first.json())
    second = client.get(link(first, "next"))
    assert [t["name"] for t in second.json()] == ["tag2", "tag1"]
    third = client.get(link(second, "next"))
    assert [t["name"] for t in third.json()] == ["tag0"]
    back = client.get(link(second, "prev"))
    assert [t["name"] for t in back.json()] == ["tag4", "tag3"]
    assert client.get("/api/v1/followed_tags?limit=500").status_code == 200


def test_the_home_timeline_merges_followed_tags_with_exact_cursors(r, people):
    alice, bob, carol = people
    tagfollows.tag_follow(uid=bob.id, tag="one")
    tagfollows.tag_follow(uid=bob.id, tag="two")
    expected = []
    for i in range(4):
        post(alice, f"alice {i}")
        post(carol, f"carol {i} #one")
        post(carol, f"carol {i} #one #two")
        post(alice, f"alice {i} #two")
        expected += [f"alice {i}", f"carol {i} #one", f"carol {i} #one #two"]
        expected.append(f"alice {i} #two")
    expected.reverse()
    client = api_client(token_for(bob))
    # Down with max_id.
    seen, url = [], "/api/v1/timelines/home?limit=3"
    while url:
        response = client.get(url)
        seen += texts(response)
        url = link(response, "next") if response.json() else None
    assert seen == expected
    # Up with min_id from the oldest: catching up, oldest page first.
    oldest = client.get("/api/v1/timelines/home?limit=40").json()[-1]["id"]
    up, url = [], f"/api/v1/timelines/home?limit=3&min_id={oldest}"
    while url:
        response = client.get(url)
        got = texts(response)
        up = got + up
        url = link(response, "prev") if got else None
    assert up == expected[:-1]
    # since_id: the newest page above.
    newest = client.get("/api/v1/timelines/home?limit=40").json()
    since = client.get(f"/api/v1/timelines/home?limit=2&since_id={newest[5]['id']}")
    assert texts(since) == expected[:2]


def test_the_home_timeline_leaves_out_whom_the_user_blocks(r, people):
    _, bob, carol = people
    dave = make_user("dave")
    tagfollows.tag_follow(uid=bob.id, tag="one")
    post(carol, "carol #one")
    post(dave, "dave #one")
    blocks.block_create(blocker=bob, blocked_id=dave.id)
    run_jobs()
    client = api_client(token_for(bob))
    assert texts(client.get("/api/v1/timelines/home")) == ["carol #one"]


@pytest.mark.real_redis
def test_a_home_window_with_followed_tags_costs_one_round_trip_on_one_server(r, people):
    alice, bob, carol = people
    post(alice, "from alice")
    tagfollows.tag_follow(uid=bob.id, tag="one")
    post(carol, "carol #one")
    client = api_client(token_for(bob))
    client.get("/api/v1/timelines/home")
    with RoundTripCounter() as counter:
        assert len(texts(client.get("/api/v1/timelines/home"))) == 2
    # One server: one script with the token's check. A Cluster: the home's ids
    # and followed tags, the tags' ids, the statuses, then their accounts.
    assert counter.count == (4 if is_cluster() else 1)
