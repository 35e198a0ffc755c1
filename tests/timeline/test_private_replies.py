"""A private reply: a direct message that answers a public status (Mastodon lets a
reply's visibility be `direct` whatever it answers). It reaches the status's author
and the people it mentions, as a conversation and a notification; the public thread
it answers does not list it, nor count it, for anyone; its own page shows, to its
audience only, the status it answers above it."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings

from accounts.selectors import user_get_by_username
from tests.api.helpers import api_client, token_for
from tests.helpers import (
    body,
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
    status_ids,
)
from tests.timeline.test_direct import conversations
from timeline import jobs, privacy, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


@pytest.fixture
def people():
    """Carol follows alice and bob; dan follows no one."""
    alice, bob, carol, dan = (make_user(n) for n in ("alice", "bob", "carol", "dan"))
    services.follow_create(follower=carol, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=bob.id)
    run_jobs()
    return alice, bob, carol, dan


def test_a_private_reply_reaches_the_author_and_the_mentioned_only(people):
    alice, bob, carol, dan = people
    public = services.status_create(author=bob, text="lunch anyone?").id
    run_jobs()
    reply = social.status_reply(
        author=alice, sid=public, text="@dan let us go, just us", direct=True
    )
    run_jobs()
    assert reply.direct and reply.reply_to == public
    assert set(reply.to) == {bob.id, dan.id}
    bo, ca, da = (logged_in_client(n) for n in ("bob", "carol", "dan"))
    # Bob, whose status it answers, and dan, whom it names: a conversation each,
    # and a notification.
    for client in (bo, da):
        assert [c[1] for c in conversations(client)] == ["@dan let us go, just us"]
        assert any("alice" in n for n in notifications_shown(client))
        own = page(client, f"/s/{reply.id}/")
        assert "let us go, just us" in own and "lunch anyone?" in own
    # Carol follows both: neither her home, nor the public thread, nor its page.
    assert reply.id not in status_ids(page(ca, "/"))
    assert ca.get(f"/s/{reply.id}/").status_code == 404
    assert "just us" not in page(ca, f"/s/{public}/")
    assert conversations(ca) == []
    # The public thread lists it for no one and counts it for no one.
    for client in (bo, ca, da):
        thread = page(client, f"/s/{public}/")
        assert reply.id not in status_ids(thread)
        assert re.search(r"<strong>0</strong> repl", thread)
    # Bob's answer stays private, to alice and dan.
    answer = social.status_reply(author=bob, sid=reply.id, text="count me in")
    run_jobs()
    assert answer.direct and set(answer.to) == {alice.id, dan.id}
    assert "count me in" in page(logged_in_client("alice"), f"/s/{reply.id}/")


def test_the_reply_form_under_a_public_status_can_send_it_privately(people):
    _, bob, _, _ = people
    public = services.status_create(author=bob, text="thoughts?").id
    run_jobs()
    ali = logged_in_client("alice")
    form = page(ali, f"/s/{public}/")
    assert re.search(r'id="reply".*name="direct"', form, re.S)
    sent = ali.post(f"/s/{public}/reply/", {"text": "only for you", "direct": "on"})
    assert sent.status_code == 302
    run_jobs()
    bo = logged_in_client("bob")
    assert [c[1] for c in conversations(bo)] == ["only for you"]
    assert "only for you" not in page(bo, f"/s/{public}/")
    # Unticked, a reply to a public status is public as before.
    ali.post(f"/s/{public}/reply/", {"text": "for everyone"})
    run_jobs()
    assert "for everyone" in page(logged_in_client("carol"), f"/s/{public}/")


def test_a_private_reply_with_no_one_but_oneself_is_refused(people):
    alice, _, _, _ = people
    own = services.status_create(author=alice, text="note to self").id
    run_jobs()
    ali = logged_in_client("alice")
    refused = ali.post(f"/s/{own}/reply/", {"text": "just me", "direct": "on"})
    assert refused.status_code == 400
    html = body(refused)
    assert "Mention the people it is for" in html and "just me" in html


def test_the_api_sends_a_private_reply_and_its_context_keeps_it_private(people):
    alice, bob, carol, _ = people
    bo = api_client(token_for(bob))
    public = bo.post(
        "/api/v1/statuses",
        json.dumps({"status": "out loud"}),
        content_type="application/json",
    ).json()["id"]
    ali = api_client(token_for(alice))
    answer = ali.post(
        "/api/v1/statuses",
        json.dumps(
            {"status": "@bob psst", "visibility": "direct", "in_reply_to_id": public}
        ),
        content_type="application/json",
    )
    run_jobs()
    assert answer.status_code == 200, answer.content
    sent = answer.json()
    assert sent["visibility"] == "direct" and sent["in_reply_to_id"] == public
    ca = api_client(token_for(carol))
    assert ca.get(f"/api/v1/statuses/{sent['id']}").status_code == 404
    for client in (bo, ca):
        context = client.get(f"/api/v1/statuses/{public}/context").json()
        assert sent["id"] not in [s["id"] for s in context["descendants"]]
        assert client.get(f"/api/v1/statuses/{public}").json()["replies_count"] == 0
    # Bob reads it as a conversation, with the status it answers as its ancestor.
    (conversation,) = bo.get("/api/v1/conversations").json()
    assert conversation["last_status"]["id"] == sent["id"]
    ancestors = bo.get(f"/api/v1/statuses/{sent['id']}/context").json()["ancestors"]
    assert [s["id"] for s in ancestors] == [public]


def test_two_private_replies_in_one_public_thread_are_two_conversations(people):
    """Alice and dan each answer bob's public status privately: bob has two
    conversations, one with each (as Mastodon keeps them apart), not one "with
    alice and dan" whose reply would reach only whoever wrote last."""
    alice, bob, _, dan = people
    public = services.status_create(author=bob, text="ask me anything").id
    run_jobs()
    social.status_reply(author=alice, sid=public, text="alice asks", direct=True)
    run_jobs()
    social.status_reply(author=dan, sid=public, text="dan asks", direct=True)
    run_jobs()
    bo = logged_in_client("bob")
    assert [c[:2] for c in conversations(bo)] == [
        ("With @dan", "dan asks"),
        ("With @alice", "alice asks"),
    ]
    found = api_client(token_for(bob)).get("/api/v1/conversations").json()
    assert [[a["acct"] for a in c["accounts"]] for c in found] == [["dan"], ["alice"]]
    # Each asker's conversation is theirs and bob's alone.
    for name, text in (("alice", "alice asks"), ("dan", "dan asks")):
        assert [c[:2] for c in conversations(logged_in_client(name))] == [
            ("With @bob", text)
        ]


def test_a_private_reply_naming_a_stranger_shows_them_no_private_parent(people):
    """Bob's account is private; carol, his follower, answers his status privately
    and names dan, who does not follow bob: dan reads carol's reply, never bob's
    status (not on the reply's page, its context, nor his Messages)."""
    _, bob, carol, _ = people
    privacy.account_privacy_set(user=bob, private=True)
    run_jobs(now=jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1)
    bob = user_get_by_username(username="bob")
    secret = services.status_create(author=bob, text="secret plans").id
    run_jobs()
    reply = social.status_reply(
        author=carol, sid=secret, text="@dan look at this", direct=True
    )
    run_jobs()
    da = logged_in_client("dan")
    assert "look at this" in page(da, f"/s/{reply.id}/")
    assert "secret plans" not in page(da, f"/s/{reply.id}/")
    assert "secret plans" not in page(da, "/messages/")
    dan_api = api_client(token_for(user_get_by_username(username="dan")))
    context = dan_api.get(f"/api/v1/statuses/{reply.id}/context").json()
    assert context["ancestors"] == []


def test_muting_a_private_reply_mutes_its_conversation_not_the_public_one(people):
    """Bob mutes the conversation from alice's private reply's page: her next
    message in it tells him nothing; a public reply in his thread still does."""
    alice, bob, carol, _ = people
    public = services.status_create(author=bob, text="open question").id
    run_jobs()
    first = social.status_reply(author=alice, sid=public, text="@bob hm", direct=True)
    run_jobs()
    bo = logged_in_client("bob")
    assert bo.post(f"/s/{first.id}/mute/").status_code == 302
    told = len(notifications_shown(bo))
    social.status_reply(author=alice, sid=first.id, text="still there?")
    social.status_reply(author=carol, sid=public, text="in the open")
    run_jobs()
    shown = notifications_shown(bo)
    assert len(shown) == told + 1 and "carol" in shown[0]
