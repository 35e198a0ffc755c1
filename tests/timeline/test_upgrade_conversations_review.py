"""Review of upgrade_store's layout 8 (conversations): cases the first tests left
out. A mute made before the upgrade must still cover the replies it covered, and
odd data in a `conversation_mutes` zset must not stop the upgrade."""

from __future__ import annotations

import pytest

from accounts.selectors import user_get
from tests.helpers import make_user, run_jobs
from tests.timeline.test_upgrade_conversations import muted_on_its_page, strip
from tests.timeline.test_upgrades import snapshot, upgrade
from timeline import conversations, keys, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


@pytest.fixture
def deep(r):
    """alice's thread seven replies deep, stored before conversations, then a
    reply `later` stored by layout 7's version below it (its conversation: its
    parent's oldest named ancestor, chain[3]), and carol's mute made from `later`
    (recorded as chain[3])."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    root = services.status_create(author=alice, text="a hot take")
    chain = [root]
    for n in range(7):
        author = bob if n % 2 == 0 else alice
        other = "alice" if author is bob else "bob"
        chain.append(
            social.status_reply(author=author, sid=chain[-1].id, text=f"@{other} {n}")
        )
    strip(r, *chain[1:])
    r.set(keys.store_layout(), 7)
    later = social.status_reply(author=bob, sid=chain[-1].id, text="@alice later")
    assert later.conversation == chain[3].id
    conversations.conversation_mute(user=carol, sid=later.id)
    assert r.zrange(keys.conversation_mutes(carol.id), 0, -1) == [str(chain[3].id)]
    assert muted_on_its_page(carol, later.id)
    run_jobs()
    return {"alice": alice, "bob": bob, "carol": carol, "chain": chain, "later": later}


def upgraded_twice(r) -> None:
    """Upgrade; a dry run before writes nothing and a run again changes nothing."""
    before = snapshot(r)
    upgrade("--dry-run")
    assert snapshot(r) == before
    upgrade()
    after = snapshot(r)
    r.set(keys.store_layout(), 7)
    upgrade()
    assert snapshot(r) == after


def delete(*statuses) -> None:
    for status in statuses:
        services.status_delete(user=user_get(uid=status.author_id), sid=status.id)
    run_jobs()


def test_a_mute_recorded_by_a_since_deleted_ancestor_still_covers_its_thread(r, deep):
    """carol's mute names chain[3], deleted since: before the upgrade it covered
    `later` (which named chain[3]); the upgrade renames `later`'s conversation to
    the first status, so her mute must follow it there."""
    carol, chain, later = deep["carol"], deep["chain"], deep["later"]
    delete(chain[3])
    assert muted_on_its_page(carol, later.id)  # before the upgrade
    upgraded_twice(r)
    assert r.hget(keys.status(later.id), "conversation") == str(chain[0].id)
    assert muted_on_its_page(carol, later.id)


def test_a_reply_whose_named_ancestors_are_gone_follows_its_conversation_up(r, deep):
    """Every status `later` names is deleted, but the conversation it stores
    (chain[3], a reply) stands: the walk stops there, while carol's mute of
    chain[3] moves to the first status, so `later` is no longer muted for her."""
    carol, chain, later = deep["carol"], deep["chain"], deep["later"]
    delete(chain[7], chain[6], chain[5], chain[4])
    assert muted_on_its_page(carol, later.id)  # before the upgrade
    upgraded_twice(r)
    assert muted_on_its_page(carol, later.id)
    assert r.hget(keys.status(later.id), "conversation") == str(chain[0].id)


@pytest.mark.parametrize("odd", ["\u00b2", "\u0661\u0662", "zero-padded"])
def test_an_odd_conversation_mutes_member_neither_crashes_nor_miscounts(r, deep, odd):
    """A member that is not a plain decimal number is left alone ('²' and
    Arabic-Indic digits pass str.isdigit; a zero-padded reply id is int() of one),
    and the dry run says what the run does."""
    carol = deep["carol"]
    member = f"0{deep['chain'][5].id}" if odd == "zero-padded" else odd
    r.zadd(keys.conversation_mutes(carol.id), {member: 1})
    dry = upgrade("--dry-run")
    done = upgrade()
    moved = [line for line in done.splitlines() if line.startswith("Muted conv")]
    would = [line for line in dry.splitlines() if line.startswith("Muted conv")]
    assert would == [line.replace("moved", "would move") for line in moved]
    assert member in r.zrange(keys.conversation_mutes(carol.id), 0, -1)


def test_a_run_cut_short_before_the_mutes_moves_them_when_run_again(
    r, deep, monkeypatch
):
    """The run renamed the statuses' conversations, then stopped before the mutes:
    run again, it finds every status named right, and still moves carol's mute of
    the since-deleted chain[3] to the first status (what the first run renamed is
    kept in the store until the step ends)."""
    from timeline import upgrades

    carol, chain, later = deep["carol"], deep["chain"], deep["later"]
    delete(chain[3])

    def cut_short(*args, **kwargs):
        raise ConnectionError("the operator's terminal closed")

    with monkeypatch.context() as patched:
        patched.setattr(upgrades, "_conversation_mutes_move", cut_short)
        with pytest.raises(ConnectionError):
            upgrade()
    assert r.hget(keys.status(later.id), "conversation") == str(chain[0].id)
    assert r.get(keys.store_layout()) == "7"  # recorded last: not yet
    upgrade()
    assert r.zrange(keys.conversation_mutes(carol.id), 0, -1) == [str(chain[0].id)]
    assert muted_on_its_page(carol, later.id)
    assert not r.exists(keys.upgrade_conversations())
