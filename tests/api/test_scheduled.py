"""Scheduled statuses through the client API (Mastodon's): `scheduled_at` on a post
schedules it (it answered 422), and `/api/v1/scheduled_statuses` lists, shows,
moves and cancels them."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from timeline import fanout, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def iso_in(minutes: float) -> str:
    moment = datetime.fromtimestamp(time.time() + minutes * 60, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def run_at(iso: str) -> None:
    due = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    fanout.run_pending(now=int(due * 1000) + 1, sweep=True)


def test_an_app_schedules_lists_moves_and_its_status_is_posted_then():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    client = api_client(token_for(alice))
    when = iso_in(30)
    made = client.post(
        "/api/v1/statuses",
        {"status": "at half past", "scheduled_at": when, "spoiler_text": "CW"},
        content_type="application/json",
    )
    assert made.status_code == 200, made.content
    entity = made.json()
    assert entity["scheduled_at"] == when
    assert entity["params"]["text"] == "at half past"
    assert entity["params"]["spoiler_text"] == "CW"
    assert entity["params"]["visibility"] == "public"
    assert entity["media_attachments"] == []
    listed = client.get("/api/v1/scheduled_statuses").json()
    assert [e["id"] for e in listed] == [entity["id"]]
    shown = client.get(f"/api/v1/scheduled_statuses/{entity['id']}").json()
    assert shown == entity
    later = iso_in(90)
    moved = client.put(
        f"/api/v1/scheduled_statuses/{entity['id']}",
        {"scheduled_at": later},
        content_type="application/json",
    ).json()
    assert moved["scheduled_at"] == later
    run_at(when)  # its first time: moved, so nothing yet
    assert client.get(f"/api/v1/accounts/{alice.id}/statuses").json() == []
    run_at(later)
    (posted,) = client.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    assert (posted["content"], posted["spoiler_text"]) == ("<p>at half past</p>", "CW")
    (home,) = api_client(token_for(bob)).get("/api/v1/timelines/home").json()
    assert home["id"] == posted["id"]
    assert client.get("/api/v1/scheduled_statuses").json() == []
    assert client.get(f"/api/v1/scheduled_statuses/{entity['id']}").status_code == 404


def test_refusals_and_cancel():
    alice, bob = make_user("alice"), make_user("bob")
    client = api_client(token_for(alice))
    soon = client.post(
        "/api/v1/statuses", {"status": "now-ish", "scheduled_at": iso_in(1)}
    )
    assert soon.status_code == 422
    assert "5 minutes" in soon.json()["error"]
    bad = client.post("/api/v1/statuses", {"status": "x", "scheduled_at": "soon"})
    assert bad.status_code == 422
    gone = client.post(
        "/api/v1/statuses",
        {"status": "x", "scheduled_at": iso_in(30), "in_reply_to_id": "12345"},
    )
    assert gone.status_code == 404
    entity = client.post(
        "/api/v1/statuses", {"status": "cancelled", "scheduled_at": iso_in(30)}
    ).json()
    others = api_client(token_for(bob))
    assert others.get(f"/api/v1/scheduled_statuses/{entity['id']}").status_code == 404
    assert (
        others.delete(f"/api/v1/scheduled_statuses/{entity['id']}").status_code == 404
    )
    read_only = api_client(token_for(alice, ("read",)))
    assert (
        read_only.delete(f"/api/v1/scheduled_statuses/{entity['id']}").status_code
        == 403
    )
    assert client.delete(f"/api/v1/scheduled_statuses/{entity['id']}").json() == {}
    assert (
        client.delete(f"/api/v1/scheduled_statuses/{entity['id']}").status_code == 404
    )
    run_at(iso_in(31))
    assert client.get(f"/api/v1/accounts/{alice.id}/statuses").json() == []


def test_the_list_pages_newest_id_first():
    alice = make_user("alice")
    client = api_client(token_for(alice))
    made = [
        client.post(
            "/api/v1/statuses", {"status": f"s{n}", "scheduled_at": iso_in(30 + n)}
        ).json()["id"]
        for n in range(5)
    ]
    first = client.get("/api/v1/scheduled_statuses", {"limit": 2})
    assert [e["id"] for e in first.json()] == made[::-1][:2]
    assert 'rel="next"' in first["Link"]
    older = client.get(
        "/api/v1/scheduled_statuses", {"limit": 2, "max_id": made[3]}
    ).json()
    assert [e["id"] for e in older] == [made[2], made[1]]
