"""Idempotency-Key when a post fails midway: what a client retrying with its key
sees, and how many statuses the account ends up with (`api.idempotency`)."""

from __future__ import annotations

import pytest
import redis
from django.test import Client

from api import idempotency
from config.redis import get_redis
from tests.api.helpers import token_for
from tests.helpers import cut_short, make_user
from timeline import keys


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
