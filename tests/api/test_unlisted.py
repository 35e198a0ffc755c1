"""Unlisted statuses (Mastodon's `visibility: unlisted`): a public account's status
kept off the public timelines (everyone's posts, tag pages, trends) and shown
wherever else its author's statuses show: their profile, their followers' homes,
its own page. Through the client API and the site's compose box."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob


def _texts(client, path: str) -> list[str]:
    return [s["content"] for s in client.get(path).json()]


def test_an_unlisted_post_from_a_client_stays_off_the_public_timelines(people):
    alice, bob = people
    client = api_client(token_for(alice))
    listed = client.post("/api/v1/statuses", {"status": "listed #news"}).json()
    response = client.post(
        "/api/v1/statuses", {"status": "quiet #news", "visibility": "unlisted"}
    )
    assert response.status_code == 200, response.content
    quiet = response.json()
    assert (quiet["visibility"], listed["visibility"]) == ("unlisted", "public")
    run_jobs()
    reader = api_client(token_for(bob))
    assert [s["id"] for s in reader.get("/api/v1/timelines/public").json()] == [
        listed["id"]
    ]
    assert [s["id"] for s in reader.get("/api/v1/timelines/tag/news").json()] == [
        listed["id"]
    ]
    home = reader.get("/api/v1/timelines/home").json()
    assert [(s["id"], s["visibility"]) for s in home] == [
        (quiet["id"], "unlisted"),
        (listed["id"], "public"),
    ]
    profile = reader.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    assert [s["id"] for s in profile] == [quiet["id"], listed["id"]]
    shown = reader.get(f"/api/v1/statuses/{quiet['id']}").json()
    assert shown["visibility"] == "unlisted"
    # Trends count only what the public timelines show.
    trends = Client().get("/api/v1/trends/tags").json()
    assert [(t["name"], t["history"][0]["uses"]) for t in trends] == [("news", "1")]


def test_an_unlisted_reply_stays_off_them_too(people):
    alice, bob = people
    parent = services.status_create(author=bob, text="a question")
    reply = api_client(token_for(alice)).post(
        "/api/v1/statuses",
        {"status": "an answer", "visibility": "unlisted", "in_reply_to_id": parent.id},
    )
    assert reply.status_code == 200, reply.content
    assert reply.json()["visibility"] == "unlisted"
    run_jobs()
    public = Client().get("/api/v1/timelines/public").json()
    assert [s["content"] for s in public] == ["<p>a question</p>"]


def test_the_compose_box_posts_unlisted_and_keeps_the_choice_after_an_error(people):
    alice, bob = people
    client = logged_in_client("alice")
    too_long = "x" * 2000
    answer = client.post("/post/", {"text": too_long, "unlisted": "on"})
    assert answer.status_code == 400  # the text is refused, kept, and the choice
    html = answer.content.decode()
    assert too_long in html
    assert 'name="unlisted" id="id_unlisted" checked' in html
    assert client.post("/post/", {"text": "quiet one #news", "unlisted": "on"})
    assert client.post("/post/", {"text": "loud one #news"})
    run_jobs()
    visitor = Client()
    assert "loud one" in page(visitor, "/timeline/")
    assert "quiet one" not in page(visitor, "/timeline/")
    assert "quiet one" not in page(visitor, "/tags/news/")
    assert "quiet one" in page(visitor, "/u/alice/")
    home = page(logged_in_client("bob"), "/")
    assert "quiet one" in home and "loud one" in home
    # The row says so, on its own page too.
    assert "Unlisted" in page(visitor, "/u/alice/")


def test_check_and_repair_take_an_unlisted_status_out_of_the_global_timeline(r, people):
    """A worker still running the release before unlisted statuses publishes one
    (it reads no such field): `timelines check` reports it with the private
    statuses found there, and repair takes it out."""
    from timeline import keys, repair

    alice, _ = people
    quiet = services.status_create(author=alice, text="quiet", unlisted=True)
    loud = services.status_create(author=alice, text="loud")
    run_jobs()
    services.global_add_queue(r, sids=[quiet.id])  # as the old worker would
    found = repair.timelines_check()
    assert found.private_in_global == [quiet.id]
    repair.timelines_repair(found)
    held = {int(s) for p in keys.global_partitions() for s in r.zrange(p, 0, -1)}
    assert quiet.id not in held and loud.id in held
    assert repair.timelines_check().problems() == 0
