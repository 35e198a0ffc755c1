"""A status's thread through the client API (`GET /api/v1/statuses/:id/context`):
every ancestor and descendant up to Mastodon's limits, depth-first, as clients
(Tusky, Ivory, Elk) show a conversation from it."""

from __future__ import annotations

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import blocks, privacy, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def _root(author, text: str = "root") -> int:
    return services.status_create(author=author, text=text).id


def _reply(author, parent: int, text: str = "reply") -> int:
    return social.status_reply(author=author, sid=parent, text=text).id


def _chain(authors, length: int) -> list[int]:
    """A status and `length - 1` replies, each to the one before, by turns."""
    chain = [_root(authors[0])]
    for i in range(1, length):
        chain.append(_reply(authors[i % len(authors)], chain[-1], f"reply {i}"))
    return chain


def _context(sid: int, viewer=None) -> tuple[list[int], list[int]]:
    """The ids of a status's ancestors and descendants, in the order answered."""
    client = api_client(token_for(viewer) if viewer is not None else None)
    response = client.get(f"/api/v1/statuses/{sid}/context")
    assert response.status_code == 200, response.content
    body = response.json()
    return (
        [int(s["id"]) for s in body["ancestors"]],
        [int(s["id"]) for s in body["descendants"]],
    )


def test_a_long_chain_shows_every_ancestor_and_descendant():
    """A reply stores only its nearest ancestors (`THREAD_DEPTH`): the rest are
    read through them, and the replies of replies level by level, 20 levels
    below the status (Mastodon's DESCENDANTS_DEPTH_LIMIT): the rest of a longer
    chain is in the context of a reply along it."""
    alice, bob = make_user("alice"), make_user("bob")
    chain = _chain([alice, bob], 25)
    assert _context(chain[-1]) == (chain[:-1], [])
    assert _context(chain[0]) == ([], chain[1:21])
    assert _context(chain[4]) == (chain[:4], chain[5:])
    assert _context(chain[12], viewer=bob) == (chain[:12], chain[13:])


def test_every_direct_reply_is_a_descendant_oldest_first():
    alice, bob = make_user("alice"), make_user("bob")
    root = _root(alice)
    replies = [_reply(bob, root, f"answer {i}") for i in range(34)]
    assert _context(root) == ([], replies)


def test_descendants_are_depth_first():
    """Each reply is followed by its own replies, as a client nests them."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    root = _root(alice)
    a = _reply(bob, root, "a")
    b = _reply(carol, root, "b")
    a1 = _reply(alice, a, "a1")
    b1 = _reply(bob, b, "b1")
    a2 = _reply(carol, a1, "a2")
    assert _context(root) == ([], [a, a1, a2, b, b1])
    assert _context(a2) == ([root, a, a1], [])
    assert _context(a) == ([root], [a1, a2])


def test_a_hidden_reply_is_left_out_and_its_replies_shown():
    """As Mastodon, which walks the tree whoever wrote each status and then leaves
    out those the viewer may not see: a blocked or private author's reply goes,
    the replies to it by others stay."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    dave, erin = make_user("dave"), make_user("erin")
    root = _root(alice)
    a = _reply(bob, root, "a")
    a1 = _reply(carol, a, "a1")
    b = _reply(erin, root, "b")
    b1 = _reply(carol, b, "b1")
    b2 = _reply(alice, b1, "b2")
    blocks.block_create(blocker=dave, blocked_id=bob.id)
    privacy.account_privacy_set(user=erin, private=True)
    run_jobs()
    assert _context(root, viewer=dave) == ([], [a1, b1, b2])
    assert _context(b2, viewer=dave) == ([root, b1], [])
    # Others see them all (erin's to her approved followers only).
    assert _context(root, viewer=alice) == ([], [a, a1, b1, b2])
    assert _context(root, viewer=erin) == ([], [a, a1, b, b1, b2])


def test_a_deleted_reply_is_left_out_with_its_replies():
    """A deleted reply goes at once; its replies hang from the thread until its
    unlink job has run, as in Mastodon until its removal worker has destroyed
    the status (which nullifies its replies' `in_reply_to_id`)."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    root = _root(alice)
    a = _reply(bob, root, "a")
    a1 = _reply(carol, a, "a1")
    b = _reply(carol, root, "b")
    services.status_delete(user=bob, sid=a)
    assert _context(root)[1] == [a1, b]
    run_jobs()
    assert _context(root)[1] == [b]


def test_ancestors_stop_at_the_nearest_40_and_descendants_at_20_levels():
    alice, bob = make_user("alice"), make_user("bob")
    chain = _chain([alice, bob], 45)
    assert _context(chain[-1]) == (chain[4:44], [])
    assert _context(chain[0]) == ([], chain[1:21])


def test_descendants_stop_at_60_in_depth_first_order():
    """The first 60 of the thread as read depth-first: a reply's own replies
    come before the replies after it, however many."""
    alice, bob = make_user("alice"), make_user("bob")
    root = _root(alice)
    a = _reply(bob, root, "a")
    b = _reply(bob, root, "b")
    below_a = [_reply(alice, a, f"a{i}") for i in range(62)]
    assert b not in _context(root)[1]
    assert _context(root) == ([], [a, *below_a[:59]])
    assert _context(a) == ([root], below_a[:60])


@pytest.mark.real_redis
def test_a_thread_costs_a_round_trip_a_level():
    """A status's context costs its first round trip (which reads its direct
    replies), one for each level of replies below it (the same round trips each
    read four more ancestors past the four a reply names), one for the statuses
    and one for their accounts: however many replies a level holds. On a
    Cluster each round trip sends one request to a node."""
    alice, bob = make_user("alice"), make_user("bob")
    chain = _chain([alice, bob], 8)
    root = chain[0]
    for i in range(40):
        _reply(bob if i % 2 else alice, root, f"wide {i}")
    client = api_client(token_for(bob))
    client.get(f"/api/v1/statuses/{root}/context")  # warm: scripts, connections
    with RoundTripCounter() as counter:
        assert client.get(f"/api/v1/statuses/{root}/context").status_code == 200
    # Seven levels of replies: their replies asked for, level by level.
    assert counter.count == 1 + 7 + 2
    assert counter.most_per_node <= 1
    with RoundTripCounter() as counter:
        assert client.get(f"/api/v1/statuses/{chain[-1]}/context").status_code == 200
    # Seven ancestors: the stored four, then one hop for three more.
    assert counter.count == 1 + 1 + 2
    assert counter.most_per_node <= 1
