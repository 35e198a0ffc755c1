"""Edited statuses through the client API (Mastodon's): `PUT /api/v1/statuses/:id`
edits one's own status, every Status says `edited_at`, and
`/api/v1/statuses/:id/history` and `/source` give its versions and its text as
written."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from timeline import blocks, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_API = "off"


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob


def put(client, sid, body: dict):
    return client.put(f"/api/v1/statuses/{sid}", body, content_type="application/json")


def test_an_app_edits_and_everyone_reads_the_new_version(people):
    alice, bob = people
    client = api_client(token_for(alice))
    sid = client.post("/api/v1/statuses", {"status": "teh news"}).json()["id"]
    assert client.get(f"/api/v1/statuses/{sid}").json()["edited_at"] is None
    response = put(client, sid, {"status": "the news", "spoiler_text": "Big"})
    assert response.status_code == 200, response.content
    entity = response.json()
    assert (entity["id"], entity["content"]) == (sid, "<p>the news</p>")
    assert (entity["spoiler_text"], entity["sensitive"]) == ("Big", True)
    assert entity["edited_at"] is not None
    assert entity["edited_at"] >= entity["created_at"]
    run_jobs()
    (home,) = api_client(token_for(bob)).get("/api/v1/timelines/home").json()
    assert (home["content"], home["edited_at"]) == (
        "<p>the news</p>",
        entity["edited_at"],
    )
    history = client.get(f"/api/v1/statuses/{sid}/history").json()
    assert [(v["content"], v["spoiler_text"]) for v in history] == [
        ("<p>teh news</p>", ""),
        ("<p>the news</p>", "Big"),
    ]
    assert history[0]["created_at"] == entity["created_at"]
    assert history[1]["created_at"] == entity["edited_at"]
    assert {v["account"]["id"] for v in history} == {str(alice.id)}
    source = client.get(f"/api/v1/statuses/{sid}/source").json()
    assert source == {"id": sid, "text": "the news", "spoiler_text": "Big"}


def test_what_is_not_sent_is_kept(people):
    """A parameter left out keeps its value (Mastodon.py sends no `spoiler_text`
    unless given one). Mastodon clears a warning left out: kept here, so an app
    that edits the text alone strips no warning (`status_update`)."""
    alice, _ = people
    client = api_client(token_for(alice))
    sid = client.post("/api/v1/statuses", {"status": "x", "spoiler_text": "CW"}).json()[
        "id"
    ]
    kept = put(client, sid, {"status": "y"}).json()
    assert (kept["content"], kept["spoiler_text"]) == ("<p>y</p>", "CW")
    unwarned = put(client, sid, {"spoiler_text": ""}).json()
    assert (unwarned["content"], unwarned["spoiler_text"]) == ("<p>y</p>", "")


def test_refusals(people):
    alice, bob = people
    client = api_client(token_for(alice))
    sid = client.post("/api/v1/statuses", {"status": "mine"}).json()["id"]
    bobs = api_client(token_for(bob))
    assert put(bobs, sid, {"status": "hijacked"}).status_code == 404
    reblog = bobs.post(f"/api/v1/statuses/{sid}/reblog").json()["id"]
    assert put(bobs, reblog, {"status": "a reblog's own"}).status_code == 403
    limit = django_settings.STATUS_MAX_LENGTH
    too_long = put(client, sid, {"status": "z" * (limit + 1)})
    assert too_long.status_code == 422
    assert too_long.json() == {
        "error": f"Validation failed: Text character limit of {limit} exceeded"
    }
    assert put(client, sid, {"status": ""}).json() == {
        "error": "Validation failed: Text can't be blank"
    }
    media = put(client, sid, {"status": "pic", "media_ids": ["1"]})
    assert media.status_code == 422
    read_only = api_client(token_for(alice, ("read",)))
    assert put(read_only, sid, {"status": "nope"}).status_code == 403
    assert client.get(f"/api/v1/statuses/{sid}").json()["content"] == "<p>mine</p>"
    assert client.get(f"/api/v1/statuses/{sid}").json()["edited_at"] is None


def test_history_and_source_of_a_hidden_status_are_not_found(people):
    alice, bob = people
    sid = services.status_create(author=alice, text="v0").id
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    bobs = api_client(token_for(bob))
    assert bobs.get(f"/api/v1/statuses/{sid}/history").status_code == 404
    assert bobs.get(f"/api/v1/statuses/{sid}/source").status_code == 404
    anonymous = api_client()
    assert len(anonymous.get(f"/api/v1/statuses/{sid}/history").json()) == 1


def test_a_reblog_says_its_originals_edit(people):
    alice, bob = people
    sid = services.status_create(author=alice, text="v0").id
    social.status_repost(user=bob, sid=sid)
    client = api_client(token_for(alice))
    put(client, sid, {"status": "v1"})
    run_jobs()
    (shown,) = client.get(f"/api/v1/accounts/{bob.id}/statuses").json()
    assert shown["edited_at"] is None  # the reblog's own: never edited
    assert shown["reblog"]["content"] == "<p>v1</p>"
    assert shown["reblog"]["edited_at"] is not None


def test_a_reblogger_is_told_of_the_edit_as_mastodons_update(people):
    alice, bob = people
    sid = services.status_create(author=alice, text="v0").id
    social.status_repost(user=bob, sid=sid)
    put(api_client(token_for(alice)), sid, {"status": "v1"})
    run_jobs()
    bobs = api_client(token_for(bob))
    (latest, *_) = bobs.get("/api/v1/notifications").json()
    assert (latest["type"], latest["account"]["id"]) == ("update", str(alice.id))
    assert (latest["status"]["id"], latest["status"]["content"]) == (
        str(sid),
        "<p>v1</p>",
    )
    only = bobs.get("/api/v1/notifications", {"types[]": "update"}).json()
    assert [n["type"] for n in only] == ["update"]


def test_a_version_naming_a_deleted_account_links_it_no_more(people):
    """As a Status's `content`: the name of an account deleted since is text (it
    may belong to someone else by now), in every version of the history."""
    alice, _ = people
    carol = make_user("carol")
    client = api_client(token_for(alice))
    sid = client.post("/api/v1/statuses", {"status": "hi @carol"}).json()["id"]
    put(client, sid, {"status": "hi @carol again"})
    services.account_close(user=carol)
    run_jobs()
    history = client.get(f"/api/v1/statuses/{sid}/history").json()
    assert [v["content"] for v in history] == [
        "<p>hi @carol</p>",
        "<p>hi @carol again</p>",
    ]
