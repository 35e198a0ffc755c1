"""Muted conversations (Mastodon's "Mute conversation"): a reader who mutes a thread
is told nothing more of it (replies, mentions, likes and reposts of their statuses
in it), however deep it goes and from whichever of its statuses they muted it;
other threads, and what they were told before, stay."""

from __future__ import annotations

import pytest

from tests.helpers import (
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from timeline import conversations, keys, services, social
from timeline.domain import NotFound


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def reply(author, parent, text: str):
    return social.status_reply(author=author, sid=parent.id, text=text)


def told(user) -> list[str]:
    run_jobs()
    return notifications_shown(logged_in_client(user.username))


def test_a_muted_thread_tells_nothing_more_however_deep(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    root = services.status_create(author=alice, text="a hot take")
    first = reply(bob, root, "@alice no way")
    assert len(told(alice)) == 1  # told before the mute: it stays
    # Muted from a reply deep down: the whole thread is muted.
    deep = first
    for n in range(6):  # deeper than a status's `thread` names its ancestors
        deep = reply(carol if n % 2 else bob, deep, f"@alice level {n}")
    assert conversations.conversation_mute(user=alice, sid=deep.id).id == deep.id
    before = told(alice)
    reply(bob, root, "@alice one more")
    reply(carol, deep, "@alice deeper still")
    social.status_like(user=bob, sid=root.id)
    social.status_repost(user=carol, sid=root.id)
    assert told(alice) == before
    # Another thread still tells her.
    other = services.status_create(author=alice, text="something else")
    reply(bob, other, "@alice about that")
    social.status_like(user=carol, sid=other.id)
    assert len(told(alice)) == len(before) + 2
    # Unmuted, the thread tells her again.
    assert conversations.conversation_unmute(user=alice, sid=root.id) is True
    reply(bob, deep, "@alice back")
    assert told(alice)[0] == "@bob mentioned you. @alice back"


def test_each_reader_mutes_for_themself(people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    root = services.status_create(author=alice, text="a question for @bob")
    conversations.conversation_mute(user=bob, sid=root.id)
    answer = reply(carol, root, "@alice @bob an answer")
    assert not any("an answer" in line for line in told(bob))
    assert any("an answer" in line for line in told(alice))
    # Muting a repost mutes its original's conversation.
    repost = social.status_repost(user=carol, sid=answer.id)
    conversations.conversation_mute(user=alice, sid=repost.id)
    reply(bob, answer, "@alice @carol and another")
    assert not any("and another" in line for line in told(alice))


def test_only_a_status_one_may_see_is_muted(people, monkeypatch, r):
    alice, bob = people["alice"], people["bob"]
    hidden = services.status_create(author=bob, text="mine")
    from timeline import blocks

    blocks.block_create(blocker=bob, blocked_id=alice.id)
    with pytest.raises(NotFound):
        conversations.conversation_mute(user=alice, sid=hidden.id)
    with pytest.raises(NotFound):
        conversations.conversation_mute(user=alice, sid=10**15)


def test_past_the_cap_the_oldest_mute_makes_room(people, monkeypatch, r):
    """The list has no page of its own, and a conversation whose statuses are all
    deleted can no longer be named to unmute it: past the cap, the mute made
    longest ago goes (refusing, the site would ask for an unmute nobody can make;
    found in review)."""
    alice, bob = people["alice"], people["bob"]
    monkeypatch.setattr(conversations, "CONVERSATION_MUTES_MAX", 2)
    mine = [services.status_create(author=alice, text=f"s{n}") for n in range(3)]
    conversations.conversation_mute(user=alice, sid=mine[0].id)
    services.status_delete(user=alice, sid=mine[0].id)  # its mute: not undoable now
    conversations.conversation_mute(user=alice, sid=mine[1].id)
    conversations.conversation_mute(user=alice, sid=mine[1].id)  # again: no change
    conversations.conversation_mute(user=alice, sid=mine[2].id)
    held = r.zrange(keys.conversation_mutes(alice.id), 0, -1)
    assert held == [str(mine[1].id), str(mine[2].id)]
    # Both still muted: a reply in either tells her nothing.
    for status in mine[1:]:
        reply(bob, status, "@alice hi")
    assert told(alice) == []


def test_the_status_page_mutes_and_unmutes_with_a_post(people):
    alice, bob = people["alice"], people["bob"]
    root = services.status_create(author=alice, text="a thread")
    client = logged_in_client("alice")
    html = page(client, f"/s/{root.id}/")
    assert "Mute this conversation" in html
    assert client.get(f"/s/{root.id}/mute/").status_code == 405  # a GET changes nothing
    answer = client.post(f"/s/{root.id}/mute/", {"next": f"/s/{root.id}/"})
    assert answer.status_code == 302
    html = page(client, f"/s/{root.id}/")
    assert "Conversation muted: its notifications stop." in html
    assert 'aria-pressed="true">Conversation muted</button>' in html
    reply(bob, root, "@alice hello")
    assert told(alice) == []
    client.post(f"/s/{root.id}/unmute/", {"next": f"/s/{root.id}/"})
    assert 'aria-pressed="false">Mute this conversation' in page(
        client, f"/s/{root.id}/"
    )
    # A visitor sees no button.
    from django.test import Client

    assert "Mute this conversation" not in page(Client(), f"/s/{root.id}/")


def test_the_account_job_deletes_the_mutes(people, r):
    from tests.helpers import PASSWORD

    alice = people["alice"]
    root = services.status_create(author=people["bob"], text="hi")
    conversations.conversation_mute(user=alice, sid=root.id)
    assert r.exists(keys.conversation_mutes(alice.id))
    services.account_delete(user=alice, password=PASSWORD, client="test")
    run_jobs()
    assert not r.exists(keys.conversation_mutes(alice.id))


def test_an_older_reposts_page_says_its_conversation_is_muted(people, r):
    """A repost stored before conversations names none: its page asks about its
    original's (here a reply's: its thread's first status)."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    root = services.status_create(author=alice, text="a thread")
    answer = reply(bob, root, "@alice an answer")
    repost = social.status_repost(user=carol, sid=answer.id)
    r.hdel(keys.status(repost.id), "conversation")  # as stored before
    conversations.conversation_mute(user=alice, sid=root.id)
    client = logged_in_client("alice")
    for sid in (answer.id, repost.id):
        html = page(client, f"/s/{sid}/")
        assert 'aria-pressed="true">Conversation muted</button>' in html, sid
