"""Content warnings through the client API: `spoiler_text` is posted (it answered 422
before), kept and said on every Status (with `sensitive`, as Mastodon's), counted
toward the length with the text, and given back with the text on delete."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from django.test import Client

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import services


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


def _warned(entity: dict) -> tuple[str, bool]:
    return entity["spoiler_text"], entity["sensitive"]


def test_a_warning_posted_by_an_app_is_said_wherever_the_status_shows(people):
    alice, bob = people
    writer = api_client(token_for(alice))
    response = writer.post(
        "/api/v1/statuses", {"status": "it was a dream", "spoiler_text": "Ending"}
    )
    assert response.status_code == 200, response.content
    made = response.json()
    assert _warned(made) == ("Ending", True)
    plain = writer.post("/api/v1/statuses", {"status": "hello"}).json()
    assert _warned(plain) == ("", False)
    run_jobs()
    reader = api_client(token_for(bob))
    for path in (
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        f"/api/v1/accounts/{alice.id}/statuses",
    ):
        shown = reader.get(path).json()
        assert [_warned(s) for s in shown] == [("", False), ("Ending", True)], path
    assert _warned(reader.get(f"/api/v1/statuses/{made['id']}").json()) == (
        "Ending",
        True,
    )
    # And the site folds it.
    assert '<bdi class="spoiler-text">Ending</bdi>' in page(Client(), "/u/alice/")


def test_a_reblog_says_the_warning_inside_not_on_itself(people):
    alice, bob = people
    made = api_client(token_for(alice)).post(
        "/api/v1/statuses", {"status": "the twist", "spoiler_text": "Plot"}
    )
    reader = api_client(token_for(bob))
    reblog = reader.post(f"/api/v1/statuses/{made.json()['id']}/reblog").json()
    assert _warned(reblog) == ("", False)
    assert _warned(reblog["reblog"]) == ("Plot", True)
    run_jobs()
    (mine,) = reader.get(f"/api/v1/accounts/{bob.id}/statuses").json()
    assert _warned(mine["reblog"]) == ("Plot", True)


def test_the_warning_counts_toward_the_limit_and_a_refusal_posts_nothing(people):
    alice, _ = people
    client = api_client(token_for(alice))
    limit = django_settings.STATUS_MAX_LENGTH
    response = client.post(
        "/api/v1/statuses", {"status": "x" * (limit - 4), "spoiler_text": "12345"}
    )
    assert response.status_code == 422
    assert response.json() == {
        "error": f"Validation failed: Text character limit of {limit} exceeded"
    }
    assert client.get(f"/api/v1/accounts/{alice.id}/statuses").json() == []
    fits = client.post(
        "/api/v1/statuses", {"status": "x" * (limit - 4), "spoiler_text": "1234"}
    )
    assert fits.status_code == 200
    # A warning of blanks warns of nothing; a JSON body's is taken too.
    blank = client.post(
        "/api/v1/statuses",
        {"status": "no warning", "spoiler_text": "  \n "},
        content_type="application/json",
    )
    assert _warned(blank.json()) == ("", False)
    json_one = client.post(
        "/api/v1/statuses",
        {"status": "warned", "spoiler_text": "CW", "sensitive": True},
        content_type="application/json",
    )
    assert _warned(json_one.json()) == ("CW", True)


def test_a_reply_from_an_app_keeps_its_own_warning(people):
    alice, bob = people
    parent = services.status_create(author=alice, text="question", spoiler="Q")
    reply = api_client(token_for(bob)).post(
        "/api/v1/statuses",
        {"status": "@alice answer", "in_reply_to_id": parent.id, "spoiler_text": "A"},
    )
    assert reply.status_code == 200, reply.content
    assert _warned(reply.json()) == ("A", True)
    context = api_client(token_for(alice)).get(f"/api/v1/statuses/{parent.id}/context")
    assert [_warned(s) for s in context.json()["descendants"]] == [("A", True)]


def test_delete_gives_back_the_text_and_its_warning_for_a_redraft(people):
    alice, _ = people
    client = api_client(token_for(alice))
    made = client.post(
        "/api/v1/statuses", {"status": "draft me", "spoiler_text": "Politics"}
    ).json()
    gone = client.delete(f"/api/v1/statuses/{made['id']}").json()
    assert (gone["text"], gone["spoiler_text"]) == ("draft me", "Politics")
    assert client.get(f"/api/v1/statuses/{made['id']}").status_code == 404


def test_a_warning_from_the_site_is_said_to_apps(people):
    alice, bob = people
    logged_in_client("alice").post(
        "/post/", {"text": "site post", "cw": "on", "spoiler": "Meta"}
    )
    run_jobs()
    (shown,) = api_client(token_for(bob)).get("/api/v1/timelines/home").json()
    assert _warned(shown) == ("Meta", True)
    assert "site post" in shown["content"]


def test_a_json_false_warning_is_none_and_a_true_one_is_refused(people):
    """JSON clients send `"spoiler_text": false` for "no warning" (Mastodon reads it
    as none, `|| ''`): it posts no warning, rather than the word "false"; `true`
    names no text at all, and is refused with nothing posted."""
    alice, _ = people
    client = api_client(token_for(alice))
    unwarned = client.post(
        "/api/v1/statuses",
        {"status": "plain", "spoiler_text": False},
        content_type="application/json",
    )
    assert unwarned.status_code == 200, unwarned.content
    assert _warned(unwarned.json()) == ("", False)
    refused = client.post(
        "/api/v1/statuses",
        {"status": "odd", "spoiler_text": True},
        content_type="application/json",
    )
    assert refused.status_code == 422
    assert refused.json() == {"error": "Validation failed: spoiler_text must be text"}
    shown = client.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    assert [s["content"] for s in shown] == ["<p>plain</p>"]
