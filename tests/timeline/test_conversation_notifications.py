"""What people are told of the conversation (issue #12): a mention, a reply, a like
and a repost reach the notifications of the person they concern, once, never
across a block or a mute, never from a private account to someone it has not
approved; undoing one takes it back; a deleted status takes its notifications."""

from __future__ import annotations

import pytest

from tests.helpers import logged_in_client, make_user, run_jobs
from tests.helpers import notifications_shown as shown
from timeline import blocks, privacy, services, social


@pytest.fixture
def people(settings):
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_POST = "off"
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def test_a_mention_reaches_the_mentioned_once_the_status_is_out(people):
    alice = people["alice"]
    services.status_create(author=alice, text="hi @bob and @nobody")
    run_jobs()
    run_jobs()  # a second run of its job tells nothing twice
    told = shown(logged_in_client("bob"))
    assert len(told) == 1 and "@alice" in told[0] and "mentioned you" in told[0]
    assert shown(logged_in_client("alice")) == []


def test_a_reply_tells_the_author_replied_to_and_not_as_a_mention_too(people):
    alice, bob = people["alice"], people["bob"]
    parent = services.status_create(author=alice, text="question")
    social.status_reply(author=bob, sid=parent.id, text="@alice answer")
    run_jobs()
    told = shown(logged_in_client("alice"))
    assert len(told) == 1 and "@bob" in told[0] and "replied" in told[0]


def test_likes_and_reposts_are_told_and_their_undo_takes_them_back(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    status = services.status_create(author=alice, text="likeable")
    social.status_like(user=bob, sid=status.id)
    social.status_like(user=carol, sid=status.id)
    social.status_repost(user=bob, sid=status.id)
    run_jobs()
    told = shown(logged_in_client("alice"))
    assert any("@bob" in t and "@carol" in t and "liked" in t for t in told)
    assert any("@bob" in t and "reposted" in t for t in told)
    social.status_unlike(user=bob, sid=status.id)
    social.status_unlike(user=carol, sid=status.id)
    social.status_unrepost(user=bob, sid=status.id)
    run_jobs()
    assert shown(logged_in_client("alice")) == []


def test_nothing_is_told_across_a_block_or_to_someone_who_muted_the_actor(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    blocks.mute_create(user=carol, muted_id=alice.id)
    services.status_create(author=alice, text="hey @bob @carol")
    run_jobs()
    assert shown(logged_in_client("bob")) == []
    assert shown(logged_in_client("carol")) == []


def test_a_private_account_mentions_only_the_people_it_approved(people):
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs()
    services.follow_create(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    run_jobs()
    services.status_create(author=alice, text="friends only @bob @carol")
    run_jobs()
    assert any("mentioned you" in t for t in shown(logged_in_client("bob")))
    assert shown(logged_in_client("carol")) == []


def test_a_deleted_status_takes_its_notifications_with_it(people):
    alice, bob = people["alice"], people["bob"]
    status = services.status_create(author=alice, text="soon gone @bob")
    social.status_like(user=bob, sid=status.id)
    reply = social.status_reply(author=bob, sid=status.id, text="replying")
    run_jobs()
    assert len(shown(logged_in_client("alice"))) == 2  # the like and the reply
    services.status_delete(user=bob, sid=reply.id)
    services.status_delete(user=alice, sid=status.id)
    run_jobs()
    assert shown(logged_in_client("alice")) == []
    assert shown(logged_in_client("bob")) == []
