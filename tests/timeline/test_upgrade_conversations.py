"""`manage.py upgrade_store` to layout 8: every reply and repost stored before
conversations (layout 7's version stored one on new ones only) is given the
conversation it is part of, the first status of its thread however deep, so muting a
thread from any of its statuses covers all of it; replies that version stored
inside such a thread with an ancestor for its first status are corrected, and the
mutes it recorded by such an ancestor are moved to the first status."""

from __future__ import annotations

import json

import pytest

from tests.helpers import (
    logged_in_client,
    make_user,
    page,
    run_jobs,
)
from tests.timeline.test_muted_conversations import told
from tests.timeline.test_upgrades import snapshot, upgrade
from timeline import conversations, ids, keys, services, social, upgrades
from timeline.domain import Status


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


def muted_on_its_page(user, sid: int) -> bool:
    html = page(logged_in_client(user.username), f"/s/{sid}/")
    return "Conversation muted" in html


def strip(r, *statuses: Status) -> None:
    """As layout 7's version found them: stored before conversations, none named."""
    for status in statuses:
        r.hdel(keys.status(status.id), "conversation")


@pytest.fixture
def old_thread(r):
    """alice's thread seven replies deep, stored before conversations; then, as
    layout 7's version went on with it: a reply at the bottom (its conversation
    taken from its parent's oldest named ancestor, not the first status), a repost of
    a deep reply, and carol's mute made from the bottom (recorded by that ancestor)."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    root = services.status_create(author=alice, text="a hot take")
    chain = [root]
    for n in range(7):
        author = bob if n % 2 == 0 else alice
        other = "alice" if author is bob else "bob"
        chain.append(
            social.status_reply(
                author=author, sid=chain[-1].id, text=f"@{other} level {n}"
            )
        )
    repost = social.status_repost(user=carol, sid=chain[5].id)
    strip(r, *chain[1:], repost)
    r.set(keys.store_layout(), 7)
    later = social.status_reply(author=bob, sid=chain[-1].id, text="@alice later")
    assert later.conversation not in (None, root.id)  # the layout 7 version's slip
    conversations.conversation_mute(user=carol, sid=later.id)
    assert r.zrange(keys.conversation_mutes(carol.id), 0, -1) != [str(root.id)]
    run_jobs()
    return {
        "alice": alice,
        "bob": bob,
        "carol": carol,
        "root": root,
        "chain": chain,
        "later": later,
        "repost": repost,
    }


def test_before_the_upgrade_a_mute_from_the_top_misses_the_deep_replies(old_thread):
    """What the upgrade is for: the first status's mute does not reach a reply stored
    before conversations deeper than its `thread` names."""
    bob, root, chain = old_thread["bob"], old_thread["root"], old_thread["chain"]
    conversations.conversation_mute(user=bob, sid=root.id)
    assert not muted_on_its_page(bob, chain[-1].id)


def test_after_the_upgrade_a_mute_from_the_top_covers_every_reply(r, old_thread):
    alice, bob = old_thread["alice"], old_thread["bob"]
    root, chain, later = old_thread["root"], old_thread["chain"], old_thread["later"]
    output = upgrade()
    assert "Conversations: gave 9 replies and reposts" in output, output
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    client = logged_in_client("bob")
    client.post(f"/s/{root.id}/mute/")
    for status in (*chain, later, old_thread["repost"]):
        assert muted_on_its_page(bob, status.id), status
    before = told(bob)
    social.status_reply(author=alice, sid=later.id, text="@bob deeper still")
    social.status_like(user=alice, sid=chain[1].id)  # bob's, six levels up
    assert told(bob) == before
    # Unmuted from the bottom, the thread tells him again.
    client.post(f"/s/{later.id}/unmute/")
    assert not muted_on_its_page(bob, root.id)
    social.status_reply(author=alice, sid=later.id, text="@bob told now")
    assert len(told(bob)) == len(before) + 1


def test_a_mute_recorded_by_an_ancestor_is_moved_to_the_first_status(r, old_thread):
    carol, root, chain = old_thread["carol"], old_thread["root"], old_thread["chain"]
    output = upgrade()
    assert "moved 1 muted conversation to its first status" in output, output
    assert r.zrange(keys.conversation_mutes(carol.id), 0, -1) == [str(root.id)]
    # Still muted wherever she looks, and told nothing of the thread.
    for status in (root, chain[2], old_thread["later"]):
        assert muted_on_its_page(carol, status.id)
    before = told(carol)
    social.status_reply(author=old_thread["bob"], sid=root.id, text="@carol hello")
    assert told(carol) == before


def test_a_pulled_authors_outbox_entries_get_their_conversation(r, settings):
    """An author past FANOUT_PUSH_MAX keeps copies in their outbox (merged into
    homes at read): the copies are given the conversation too."""
    settings.FANOUT_PUSH_MAX = 1
    star, fan0, fan1 = (make_user(n) for n in ("star", "fan0", "fan1"))
    for fan in (fan0, fan1):
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    root = services.status_create(author=star, text="a thread")
    chain = [root]
    for n in range(6):
        chain.append(social.status_reply(author=star, sid=chain[-1].id, text=f"{n}"))
    run_jobs()
    strip(r, *chain[1:])
    for status in chain[1:]:
        entry = json.loads(r.hget(keys.outbox(star.id), status.id))
        r.hset(keys.outbox(star.id), status.id, json.dumps(entry[:14]))
    r.set(keys.store_layout(), 7)
    upgrade()
    for status in chain:
        stored = Status.from_json(status.id, r.hget(keys.outbox(star.id), status.id))
        assert stored.conversation_id == root.id
        assert stored.text == status.text
    conversations.conversation_mute(user=fan0, sid=root.id)
    assert muted_on_its_page(fan0, chain[-1].id)


def test_a_reply_whose_parent_was_deleted_finds_the_first_status_past_it(r):
    alice, bob = make_user("alice"), make_user("bob")
    root = services.status_create(author=alice, text="root")
    chain = [root]
    for n in range(6):
        chain.append(social.status_reply(author=bob, sid=chain[-1].id, text=f"{n}"))
    services.status_delete(user=bob, sid=chain[4].id)
    run_jobs()
    strip(r, *chain[1:])
    r.set(keys.store_layout(), 7)
    upgrade()
    for status in (chain[5], chain[6]):
        assert r.hget(keys.status(status.id), "conversation") == str(root.id)


def test_dry_run_writes_nothing_and_a_second_run_changes_nothing(r, old_thread):
    before = snapshot(r)
    output = upgrade("--dry-run")
    assert "Conversations: would give 9 replies and reposts" in output, output
    assert "would move 1 muted conversation" in output, output
    assert snapshot(r) == before
    upgrade()
    after = snapshot(r)
    r.set(keys.store_layout(), 7)  # as if the layout had not been recorded
    output = upgrade()
    assert "Conversations: every reply and repost names its own." in output, output
    assert snapshot(r) == after


def test_a_reply_whose_id_is_smaller_than_its_parents_is_followed_up(r):
    """Ids follow time only across shards' clocks: a shard that ran ahead (a burst
    borrows ticks) gives a thread larger ids than a reply from another shard has
    (found on a seeded store: the walk had taken smaller ids for its parents)."""
    alice, bob = make_user("alice"), make_user("bob")
    assert ids.shard_of(alice.id) != ids.shard_of(bob.id)
    services.status_create(author=bob, text="bob's clock")
    now = int(r.get(keys.status_clock(ids.shard_of(bob.id))))
    r.set(keys.status_clock(ids.shard_of(alice.id)), now + 10**6)  # 2 minutes on
    root = services.status_create(author=alice, text="root")
    chain = [root]
    for n in range(6):
        chain.append(social.status_reply(author=alice, sid=chain[-1].id, text=f"{n}"))
    below = social.status_reply(author=bob, sid=chain[-1].id, text="@alice behind")
    assert below.id < root.id
    strip(r, *chain[1:], below)
    r.set(keys.store_layout(), 7)
    upgrade()
    for status in (*chain[1:], below):
        assert r.hget(keys.status(status.id), "conversation") == str(root.id)
