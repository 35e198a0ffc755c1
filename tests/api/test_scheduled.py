"""Scheduled statuses through the client API (Mastodon's): `scheduled_at` on a post
schedules it (it answered 422), and `/api/v1/scheduled_statuses` lists, shows,
moves and cancels them."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest
from django.test import Client

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


def _keyed(user, key: str) -> Client:
    return Client(
        headers={"Authorization": f"Bearer {token_for(user)}", "Idempotency-Key": key}
    )


def test_a_repeated_idempotency_key_answers_the_same_scheduled_status():
    """A client that retries a scheduling request with its key (Mastodon's) gets
    the ScheduledStatus the first one made, and one status waits; the record says
    it is a ScheduledStatus, so a repeat without `scheduled_at` answers it too."""
    alice = make_user("alice")
    client = _keyed(alice, "sched-1")
    body = {"status": "later, once", "scheduled_at": iso_in(30)}
    first = client.post("/api/v1/statuses", body)
    assert first.status_code == 200, first.content
    again = client.post("/api/v1/statuses", body)
    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    bare = client.post("/api/v1/statuses", {"status": "later, once"})
    assert bare.json() == first.json()
    listed = api_client(token_for(alice)).get("/api/v1/scheduled_statuses").json()
    assert [e["id"] for e in listed] == [first.json()["id"]]
    bob = make_user("bob")  # a key is its user's: bob's schedules his own
    assert _keyed(bob, "sched-1").post("/api/v1/statuses", body).status_code == 200
    assert len(api_client(token_for(bob)).get("/api/v1/scheduled_statuses").json())


def test_a_key_first_used_for_a_post_answers_the_status_when_repeated_scheduled():
    alice = make_user("alice")
    client = _keyed(alice, "post-then-schedule")
    posted = client.post("/api/v1/statuses", {"status": "now"}).json()
    again = client.post(
        "/api/v1/statuses", {"status": "now", "scheduled_at": iso_in(30)}
    )
    assert again.status_code == 200
    assert again.json()["id"] == posted["id"]
    assert "content" in again.json()  # a Status, not a ScheduledStatus
    assert api_client(token_for(alice)).get("/api/v1/scheduled_statuses").json() == []


def test_a_repeat_after_the_scheduled_status_was_cancelled_or_posted_is_a_404():
    """The ScheduledStatus the key made is gone: cancelled, or posted at its time.
    A repeat answers 404, as Mastodon's (`scheduled_statuses.find`), and schedules
    nothing again: a cancelled status stays cancelled, a posted one is posted
    once."""
    alice = make_user("alice")
    reader = api_client(token_for(alice))
    cancelled = _keyed(alice, "to-cancel")
    body = {"status": "cancel me", "scheduled_at": iso_in(30)}
    entity = cancelled.post("/api/v1/statuses", body).json()
    assert reader.delete(f"/api/v1/scheduled_statuses/{entity['id']}").json() == {}
    gone = cancelled.post("/api/v1/statuses", body)
    assert gone.status_code == 404
    assert "cancelled" in gone.json()["error"]
    assert reader.get("/api/v1/scheduled_statuses").json() == []

    posted = _keyed(alice, "to-post")
    when = iso_in(20)
    body = {"status": "post me", "scheduled_at": when}
    assert posted.post("/api/v1/statuses", body).status_code == 200
    run_at(when)
    assert len(reader.get(f"/api/v1/accounts/{alice.id}/statuses").json()) == 1
    gone = posted.post("/api/v1/statuses", body)
    assert gone.status_code == 404
    assert "posted" in gone.json()["error"]
    assert reader.get("/api/v1/scheduled_statuses").json() == []
    run_at(iso_in(40))
    assert len(reader.get(f"/api/v1/accounts/{alice.id}/statuses").json()) == 1


def test_a_refused_schedule_gives_its_idempotency_key_back():
    """Too soon is a 422 that scheduled nothing: the same key with a time that
    suits schedules."""
    alice = make_user("alice")
    client = _keyed(alice, "fix-the-time")
    soon = client.post("/api/v1/statuses", {"status": "x", "scheduled_at": iso_in(1)})
    assert soon.status_code == 422
    fixed = client.post("/api/v1/statuses", {"status": "x", "scheduled_at": iso_in(30)})
    assert fixed.status_code == 200
    assert "scheduled_at" in fixed.json()


def test_a_move_answers_the_time_it_kept():
    """A time finer than the millisecond is kept to it: the move answers what a
    read of the scheduled status answers afterwards."""
    client = api_client(token_for(make_user("alice")))
    made = client.post(
        "/api/v1/statuses",
        {"status": "later", "scheduled_at": iso_in(30)},
        content_type="application/json",
    ).json()
    later = datetime.fromtimestamp(int(time.time()) + 5400, tz=UTC)
    moved = client.put(
        f"/api/v1/scheduled_statuses/{made['id']}",
        {"scheduled_at": later.replace(microsecond=900).isoformat()},
        content_type="application/json",
    )
    assert moved.status_code == 200, moved.content
    shown = client.get(f"/api/v1/scheduled_statuses/{made['id']}").json()
    assert moved.json() == shown


@pytest.mark.real_redis
def test_requests_with_one_key_at_the_same_instant_schedule_one_status():
    """Eight requests with one key at once (an app's retries racing): one claims
    the key and schedules, the others wait for it and answer what it made."""
    alice = make_user("alice")
    body = {"status": "once", "scheduled_at": iso_in(30)}
    start = threading.Barrier(8)
    answers = []

    def send() -> None:
        client = _keyed(alice, "raced")
        start.wait()
        answer = client.post("/api/v1/statuses", body)
        answers.append((answer.status_code, answer.json()))

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    listed = api_client(token_for(alice)).get("/api/v1/scheduled_statuses").json()
    assert len(listed) == 1, "the key scheduled more than one status"
    assert answers == [(200, listed[0])] * 8
