"""Direct messages through the client API: `visibility=direct`, the status only its
author and audience can read, and Mastodon's conversations (list, read, remove)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from api import idempotency
from config.redis import get_redis
from tests.api.helpers import api_client, token_for
from tests.api.test_scheduled import iso_in, run_at
from tests.helpers import cut_short, make_user, run_jobs
from timeline import keys, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    """Carol follows alice."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    return alice, bob, carol


def post(client, **data):
    response = client.post(
        "/api/v1/statuses", json.dumps(data), content_type="application/json"
    )
    run_jobs()
    return response


def test_a_direct_status_is_for_its_author_and_whom_it_mentions(people):
    alice, bob, carol = people
    ali, bo, caro = (api_client(token_for(u)) for u in (alice, bob, carol))
    made = post(ali, status="@bob a secret", visibility="direct")
    assert made.status_code == 200, made.content
    status = made.json()
    assert status["visibility"] == "direct"
    assert [m["acct"] for m in status["mentions"]] == ["bob"]
    sid = status["id"]
    for client in (ali, bo):
        shown = client.get(f"/api/v1/statuses/{sid}")
        assert shown.status_code == 200 and shown.json()["visibility"] == "direct"
    for client in (caro, api_client()):
        assert client.get(f"/api/v1/statuses/{sid}").status_code == 404
        assert client.get(f"/api/v1/statuses/{sid}/context").status_code == 404
    assert caro.post(f"/api/v1/statuses/{sid}/favourite").status_code == 404
    # In no timeline, not even its author's or recipient's home, nor a profile.
    for client in (ali, bo, caro):
        for url in (
            "/api/v1/timelines/home",
            "/api/v1/timelines/public",
            f"/api/v1/accounts/{alice.id}/statuses",
        ):
            assert all(s["id"] != sid for s in client.get(url).json()), url
    assert bo.post(f"/api/v1/statuses/{sid}/reblog").status_code == 403
    # Bob is told: a mention.
    (told,) = bo.get("/api/v1/notifications").json()
    assert (told["type"], told["status"]["id"]) == ("mention", sid)


def test_what_direct_refuses(people):
    alice, bob, _ = people
    ali = api_client(token_for(alice))
    nobody = post(ali, status="no one named", visibility="direct")
    assert nobody.status_code == 422
    assert "Mention the people it is for" in nobody.json()["error"]
    later = post(
        ali,
        status="@bob later",
        visibility="direct",
        scheduled_at="2099-01-01T00:00:00Z",
    )
    assert later.status_code == 422
    assert "cannot be scheduled" in later.json()["error"]
    dm = post(ali, status="@bob only us", visibility="direct").json()["id"]
    bo = api_client(token_for(bob))
    loud = post(bo, status="@alice everyone!", visibility="public", in_reply_to_id=dm)
    assert loud.status_code == 422
    assert "A reply to a direct message is a direct message too" in loud.json()["error"]
    # Without a visibility, a reply to a direct message is one (as apps expect).
    quiet = post(bo, status="@alice ok", in_reply_to_id=dm)
    assert quiet.status_code == 200 and quiet.json()["visibility"] == "direct"


def test_conversations_list_read_and_remove(people):
    alice, bob, carol = people
    ali, bo = (api_client(token_for(u)) for u in (alice, bob))
    first = post(ali, status="@bob one", visibility="direct").json()["id"]
    post(api_client(token_for(carol)), status="@bob from carol", visibility="direct")
    answer = post(bo, status="@alice two", in_reply_to_id=first).json()["id"]
    found = bo.get("/api/v1/conversations").json()
    assert [(c["last_status"]["id"], c["unread"]) for c in found] == [
        (answer, False),  # bob wrote the newest: read
        (found[1]["last_status"]["id"], True),
    ]
    assert [a["acct"] for a in found[0]["accounts"]] == ["alice"]
    assert [a["acct"] for a in found[1]["accounts"]] == ["carol"]
    assert found[0]["id"] == first
    (alices,) = ali.get("/api/v1/conversations").json()
    assert (alices["unread"], alices["last_status"]["id"]) == (True, answer)
    read = ali.post(f"/api/v1/conversations/{first}/read")
    assert read.status_code == 200 and read.json()["unread"] is False
    assert ali.get("/api/v1/conversations").json()[0]["unread"] is False
    # Paged by the newest messages' ids.
    page = bo.get("/api/v1/conversations", {"limit": 1})
    assert len(page.json()) == 1 and 'rel="next"' in page.headers["Link"]
    max_id = page.headers["Link"].split("max_id=")[1].split(">")[0]
    older = bo.get("/api/v1/conversations", {"limit": 1, "max_id": max_id}).json()
    assert [a["acct"] for a in older[0]["accounts"]] == ["carol"]
    # Removed: off the list, its messages still there.
    assert bo.delete(f"/api/v1/conversations/{first}").status_code == 200
    assert [c["id"] for c in bo.get("/api/v1/conversations").json()] != [first]
    assert bo.get(f"/api/v1/statuses/{answer}").status_code == 200
    assert bo.delete(f"/api/v1/conversations/{first}").status_code == 404
    # Someone else's conversation is none of yours.
    caro = api_client(token_for(carol))
    assert caro.post(f"/api/v1/conversations/{first}/read").status_code == 404


def test_conversations_need_their_scopes(people):
    alice, _, _ = people
    reader = api_client(token_for(alice, scopes=("read:statuses",)))
    assert reader.get("/api/v1/conversations").status_code == 200
    assert reader.delete("/api/v1/conversations/1").status_code == 403
    assert api_client().get("/api/v1/conversations").status_code == 401


def _publishes_direct_for(uid: int):
    """A predicate: the round trip that publishes a direct message of `uid` (the
    script that adds it to their direct messages)."""
    direct = keys.direct(uid)
    return lambda commands: any(
        str(c[0]).upper() == "EVALSHA" and direct in c for c in commands
    )


def test_a_direct_message_retried_with_its_key_after_a_503_answers_the_one_it_made(
    people, monkeypatch
):
    """The store published the direct message but its reply was lost: a retry with
    the same Idempotency-Key answers the message made, as a post's does, rather
    than a 409 'under way' (and, past the hold, posting it again)."""
    alice, bob, _ = people
    monkeypatch.setattr(idempotency.time, "sleep", lambda seconds: None)
    client = Client(
        headers={
            "Authorization": f"Bearer {token_for(alice)}",
            "Idempotency-Key": "dm-once",
        },
        raise_request_exception=False,
    )
    data = {"status": "@bob only once", "visibility": "direct"}
    with cut_short(_publishes_direct_for(alice.id)) as fired:
        first = client.post("/api/v1/statuses", data)
    assert fired and first.status_code == 503
    (made,) = get_redis().zrange(keys.direct(alice.id), 0, -1)
    again = client.post("/api/v1/statuses", data)
    assert again.status_code == 200, again.content
    assert again.json()["id"] == made and again.json()["visibility"] == "direct"


def test_a_reply_to_a_direct_message_cannot_be_scheduled(people):
    """A direct message cannot be scheduled, nor a reply to one (which is one): a
    scheduled reply would be posted on its own, in the open, once the message it
    answers was deleted, and its entity would say `public` meanwhile."""
    alice, bob, carol = people
    ali, bo = (api_client(token_for(u)) for u in (alice, bob))
    dm = post(ali, status="@bob only us", visibility="direct").json()["id"]
    when = iso_in(30)
    later = post(
        bo, status="@alice my secret answer", in_reply_to_id=dm, scheduled_at=when
    )
    assert later.status_code == 422, later.content
    assert "cannot be scheduled" in later.json()["error"]
    assert bo.get("/api/v1/scheduled_statuses").json() == []
    # Whatever had been scheduled, nothing of it reaches anyone once it is due.
    ali.delete(f"/api/v1/statuses/{dm}")
    run_at(when)
    caro = api_client(token_for(carol))
    for url in ("/api/v1/timelines/public", f"/api/v1/accounts/{bob.id}/statuses"):
        assert caro.get(url).json() == [], url
