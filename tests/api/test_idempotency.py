"""Idempotency-Key when a post fails midway: what a client retrying with its key
sees, and how many statuses the account ends up with (`api.idempotency`)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
import redis
from django.test import Client

from api import idempotency
from api.views import statuses as statuses_views
from config.redis import get_redis
from tests.api.helpers import token_for
from tests.helpers import cut_short, make_user
from timeline import keys, scheduled


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings, monkeypatch):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    # A repeat's short wait for the first request changes nothing here.
    monkeypatch.setattr(idempotency.time, "sleep", lambda seconds: None)


def _publishes_for(uid: int):
    """A predicate: the round trip that publishes a status of `uid` (the script
    that adds it to their posts)."""
    posts = keys.posts(uid)
    return lambda commands: any(
        str(c[0]).upper() == "EVALSHA" and posts in c for c in commands
    )


def _client(user, key: str) -> Client:
    return Client(
        headers={"Authorization": f"Bearer {token_for(user)}", "Idempotency-Key": key},
        raise_request_exception=False,
    )


def test_a_post_retried_with_its_key_after_a_503_answers_the_status_it_made(
    monkeypatch,
):
    """The store published the status but its reply was lost: the client gets the
    503 ("may or may not have been saved") and retries with the same key at once.
    The retry answers the status the first request made (its id was recorded
    with the key before the post), and the account has the one status."""
    alice = make_user("alice")
    client = _client(alice, "retry-me")
    with cut_short(_publishes_for(alice.id)) as fired:
        first = client.post("/api/v1/statuses", {"status": "only once"})
    assert fired
    assert first.status_code == 503
    assert "may or may not have been saved" in first.json()["error"]
    (posted,) = get_redis().zrange(keys.posts(alice.id), 0, -1)  # it was published

    again = client.post("/api/v1/statuses", {"status": "only once"})
    assert again.status_code == 200, again.content
    assert again.json()["id"] == posted
    assert get_redis().zcard(keys.posts(alice.id)) == 1, "the post was made twice"


def test_a_post_whose_request_died_is_made_once_by_a_late_retry(monkeypatch):
    """The request died after the server published (no answer at all), and the
    client retries past the claim's hold: the retry takes the claim over with the
    id it recorded, finds the status standing and answers it."""
    alice = make_user("alice")
    client = _client(alice, "late")
    with cut_short(_publishes_for(alice.id)):
        assert client.post("/api/v1/statuses", {"status": "once"}).status_code == 503
    (posted,) = get_redis().zrange(keys.posts(alice.id), 0, -1)
    later = idempotency.time.time() + idempotency.CLAIM_HOLD_SECONDS + 1
    monkeypatch.setattr(idempotency.time, "time", lambda: later)
    again = client.post("/api/v1/statuses", {"status": "once"})
    assert again.status_code == 200, again.content
    assert again.json()["id"] == posted
    assert get_redis().zcard(keys.posts(alice.id)) == 1, "the post was made twice"


def test_a_post_that_never_reached_the_store_is_made_by_a_late_retry(monkeypatch):
    """The request died before its post was sent: a retry past the hold posts it,
    with the id the first one recorded, once."""
    alice = make_user("alice")
    client = _client(alice, "never")

    def dead(*args, **kwargs):
        raise redis.ConnectionError("the worker died before the post")

    monkeypatch.setattr("timeline.services.status_create", dead)
    assert client.post("/api/v1/statuses", {"status": "hello"}).status_code == 503
    monkeypatch.undo()
    monkeypatch.setattr(idempotency.time, "sleep", lambda seconds: None)
    assert get_redis().zcard(keys.posts(alice.id)) == 0
    busy = client.post("/api/v1/statuses", {"status": "hello"})
    assert busy.status_code == 409  # within the hold: the first may be under way
    later = idempotency.time.time() + idempotency.CLAIM_HOLD_SECONDS + 1
    monkeypatch.setattr(idempotency.time, "time", lambda: later)
    again = client.post("/api/v1/statuses", {"status": "hello"})
    assert again.status_code == 200, again.content
    assert get_redis().zcard(keys.posts(alice.id)) == 1


def test_a_post_refused_by_the_posting_budget_gives_its_key_back(settings):
    """A 429 wrote nothing that stands: once the budget allows, the same key
    posts."""
    alice = make_user("alice")
    settings.RATE_LIMIT_POST = "1/5m"
    first = _client(alice, "a").post("/api/v1/statuses", {"status": "one"})
    assert first.status_code == 200
    refused = _client(alice, "b").post("/api/v1/statuses", {"status": "two"})
    assert refused.status_code == 429
    settings.RATE_LIMIT_POST = "off"
    retried = _client(alice, "b").post("/api/v1/statuses", {"status": "two"})
    assert retried.status_code == 200
    assert get_redis().zcard(keys.posts(alice.id)) == 2


def _schedules_for(uid: int):
    """A predicate: the round trip that schedules a status of `uid` (the script
    that stores its entry)."""
    scheduled = keys.scheduled(uid)
    return lambda commands: any(
        str(c[0]).upper() == "EVALSHA" and scheduled in c for c in commands
    )


def _in(minutes: int) -> dict:
    at = datetime.fromtimestamp(time.time() + minutes * 60, tz=UTC)
    return {"status": "later", "scheduled_at": at.isoformat()}


def _waiting(user) -> list[str]:
    client = Client(headers={"Authorization": f"Bearer {token_for(user)}"})
    return [e["id"] for e in client.get("/api/v1/scheduled_statuses").json()]


def test_a_schedule_retried_with_its_key_after_a_503_answers_the_one_it_made():
    """The store scheduled the status but its reply was lost: the retry answers
    that ScheduledStatus (its record was written in the same step) and one status
    waits."""
    alice = make_user("alice")
    client = _client(alice, "sched-503")
    body = _in(30)
    with cut_short(_schedules_for(alice.id)) as fired:
        first = client.post("/api/v1/statuses", body)
    assert fired
    assert first.status_code == 503
    (made,) = _waiting(alice)  # it was scheduled
    again = client.post("/api/v1/statuses", body)
    assert again.status_code == 200, again.content
    assert again.json()["id"] == made
    assert _waiting(alice) == [made], "the status was scheduled twice"


def test_a_schedule_whose_request_died_before_it_is_made_once_after_the_hold(
    monkeypatch,
):
    """The request claimed the key and died before its schedule reached the store:
    within the hold a retry answers 409 (the first may be under way); past it, a
    retry schedules the status, once: never zero, never two."""
    alice = make_user("alice")
    client = _client(alice, "sched-died")
    body = _in(30)
    with cut_short(_schedules_for(alice.id), after=False) as fired:
        assert client.post("/api/v1/statuses", body).status_code == 503
    assert fired
    assert _waiting(alice) == []
    assert client.post("/api/v1/statuses", body).status_code == 409
    later = idempotency.time.time() + idempotency.CLAIM_HOLD_SECONDS + 1
    monkeypatch.setattr(idempotency.time, "time", lambda: later)
    again = client.post("/api/v1/statuses", body)
    assert again.status_code == 200, again.content
    assert _waiting(alice) == [again.json()["id"]]
    repeat = client.post("/api/v1/statuses", body)
    assert repeat.json()["id"] == again.json()["id"]
    assert len(_waiting(alice)) == 1


def test_a_slow_schedule_whose_claim_was_taken_over_schedules_nothing(monkeypatch):
    """The first request stalls past the hold; a retry takes the key over and
    schedules. When the first one's schedule reaches the store, its claim is no
    longer there: it writes nothing, and answers what the retry made."""
    alice = make_user("alice")
    client = _client(alice, "sched-slow")
    body = _in(30)
    original = scheduled.status_schedule
    stalls, retried = [], []

    def stalled(**kwargs):
        if not stalls:  # the first request; the retry goes straight through
            stalls.append(kwargs)
            later = time.time() + idempotency.CLAIM_HOLD_SECONDS + 1
            monkeypatch.setattr(idempotency.time, "time", lambda: later)
            retried.append(_client(alice, "sched-slow").post("/api/v1/statuses", body))
        return original(**kwargs)

    monkeypatch.setattr(scheduled, "status_schedule", stalled)
    first = client.post("/api/v1/statuses", body)
    (retry,) = retried
    assert retry.status_code == 200, retry.content
    assert first.status_code == 200, first.content
    assert first.json()["id"] == retry.json()["id"]
    assert _waiting(alice) == [retry.json()["id"]]


def test_a_repeat_answers_the_scheduled_at_the_first_answer_gave():
    """A time given finer than the millisecond is kept to the millisecond; the
    first answer says the time kept, as a repeat (and the list) then does."""
    alice = make_user("alice")
    client = _client(alice, "sched-ms")
    at = datetime.fromtimestamp(int(time.time()) + 1800, tz=UTC)
    body = {"status": "later", "scheduled_at": at.replace(microsecond=900).isoformat()}
    first = client.post("/api/v1/statuses", body)
    assert first.status_code == 200, first.content
    again = client.post("/api/v1/statuses", body)
    assert again.json() == first.json()
    listed = Client(headers={"Authorization": f"Bearer {token_for(alice)}"})
    (shown,) = listed.get("/api/v1/scheduled_statuses").json()
    assert shown["scheduled_at"] == first.json()["scheduled_at"]


def test_a_stalled_post_whose_key_a_scheduling_retry_took_over_is_made_once(
    monkeypatch,
):
    """The first request (to post now) reserved its status's id and stalled past
    the hold; a retry with the same key asks to schedule instead. The key is the
    post's: the retry posts it with that id, so the stalled request's post is the
    same status, and nothing is scheduled besides."""
    alice = make_user("alice")
    original = statuses_views._post
    stalls, retried = [], []

    def stalled(*args, **kwargs):
        if not stalls:  # the first request; the retry goes straight through
            stalls.append(args)
            later = time.time() + idempotency.CLAIM_HOLD_SECONDS + 1
            monkeypatch.setattr(idempotency.time, "time", lambda: later)
            retry = _client(alice, "post-stalled").post("/api/v1/statuses", _in(30))
            retried.append(retry)
        return original(*args, **kwargs)

    monkeypatch.setattr(statuses_views, "_post", stalled)
    first = _client(alice, "post-stalled").post("/api/v1/statuses", {"status": "x"})
    (retry,) = retried
    assert first.status_code == 200, first.content
    assert retry.status_code == 200, retry.content
    assert retry.json()["id"] == first.json()["id"]
    assert _waiting(alice) == [], "one key made a status and a scheduled status"
    assert get_redis().zcard(keys.posts(alice.id)) == 1
