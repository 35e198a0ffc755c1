"""Muted conversations through the client API (Mastodon's): mute and unmute the
conversation of a status, the viewer's `muted` on every status they read (it was
always false), the scope it takes, at no round trip more on timelines."""

from __future__ import annotations

import pytest

from config.redis import is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import get_round_trips
from timeline import blocks, conversations, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


def _api(user, scopes: tuple[str, ...] | None = None):
    return api_client(token_for(user) if scopes is None else token_for(user, scopes))


def test_mute_and_unmute_answer_the_status_and_stop_its_notifications():
    alice, bob = make_user("alice"), make_user("bob")
    root = services.status_create(author=alice, text="a thread")
    answer = social.status_reply(author=bob, sid=root.id, text="@alice first")
    client = _api(alice)
    response = client.post(f"/api/v1/statuses/{answer.id}/mute")
    assert response.status_code == 200, response.content
    assert (response.json()["id"], response.json()["muted"]) == (str(answer.id), True)
    # The whole conversation: its first status says so too, and tells no more.
    assert client.get(f"/api/v1/statuses/{root.id}").json()["muted"] is True
    run_jobs()
    count = len(client.get("/api/v1/notifications").json())
    social.status_reply(author=bob, sid=answer.id, text="@alice second")
    social.status_like(user=bob, sid=root.id)
    run_jobs()
    assert len(client.get("/api/v1/notifications").json()) == count
    # Nobody else's: bob's view of it is not muted.
    assert _api(bob).get(f"/api/v1/statuses/{root.id}").json()["muted"] is False
    undone = client.post(f"/api/v1/statuses/{root.id}/unmute")
    assert undone.status_code == 200 and undone.json()["muted"] is False
    social.status_reply(author=bob, sid=answer.id, text="@alice third")
    run_jobs()
    assert len(client.get("/api/v1/notifications").json()) == count + 1


def test_muted_is_on_every_row_the_viewer_reads():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    root = services.status_create(author=alice, text="root #t")
    deep = root
    for n in range(5):  # past what a status's `thread` names
        deep = social.status_reply(author=alice, sid=deep.id, text=f"level {n} #t")
    other = services.status_create(author=alice, text="other #t")
    repost = social.status_repost(user=carol, sid=deep.id)
    run_jobs()
    conversations.conversation_mute(user=bob, sid=root.id)
    client = _api(bob)
    for path in (
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        "/api/v1/timelines/tag/t",
        f"/api/v1/accounts/{alice.id}/statuses",
    ):
        rows = {s["id"]: s["muted"] for s in client.get(path).json() if not s["reblog"]}
        assert rows[str(root.id)] is True, path
        assert rows[str(deep.id)] is True, path
        assert rows[str(other.id)] is False, path
    shown = client.get(f"/api/v1/accounts/{carol.id}/statuses").json()
    (reblog,) = [s for s in shown if s["id"] == str(repost.id)]
    assert reblog["muted"] is True and reblog["reblog"]["muted"] is True
    context = client.get(f"/api/v1/statuses/{deep.id}/context").json()
    assert {s["muted"] for s in context["ancestors"]} == {True}
    # Others read the same rows unmuted.
    for row in _api(carol).get("/api/v1/timelines/public").json():
        assert row["muted"] is False
    for row in api_client().get("/api/v1/timelines/public").json():
        assert row["muted"] is False


def test_muting_takes_the_mutes_scope_and_a_hidden_status_is_a_404():
    alice, bob = make_user("alice"), make_user("bob")
    sid = services.status_create(author=alice, text="hi").id
    reader = _api(bob, scopes=("read", "write:statuses"))
    assert reader.post(f"/api/v1/statuses/{sid}/mute").status_code == 403
    assert _api(bob).post("/api/v1/statuses/99999999/mute").status_code == 404


def test_unmuting_a_status_hidden_from_the_viewer_is_a_404_that_changes_nothing():
    """As Mastodon's (the status must be shown to the viewer first): a 404 says the
    status is not there for them, so their mute is left as it was."""
    alice, bob = make_user("alice"), make_user("bob")
    sid = services.status_create(author=alice, text="hi").id
    client = _api(bob)
    assert client.post(f"/api/v1/statuses/{sid}/mute").status_code == 200
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    assert client.post(f"/api/v1/statuses/{sid}/unmute").status_code == 404
    blocks.block_delete(blocker=alice, blocked_id=bob.id)
    assert client.get(f"/api/v1/statuses/{sid}").json()["muted"] is True


def test_mutes_cost_no_round_trip_on_timelines():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    sids = [services.status_create(author=alice, text=f"s {i}").id for i in range(12)]
    social.status_repost(user=carol, sid=sids[0])
    run_jobs()
    for sid in sids[::3]:
        conversations.conversation_mute(user=bob, sid=sid)
    client = _api(bob)
    # As before: one round trip on one server, three on a Cluster (the mutes ride
    # with the bookmarks and pins in the viewer's slot).
    assert get_round_trips(client, "/api/v1/timelines/home?limit=30") == (
        3 if is_cluster() else 1
    )
    rows = client.get("/api/v1/timelines/home?limit=30").json()
    assert sum(s["muted"] for s in rows) == 4


def test_a_reply_posted_before_conversations_is_muted_with_its_thread(r):
    """A reply stored before conversations has no `conversation`: its thread's first
    status, as its `thread` names it, stands for it, in the window's script and in
    Python alike (the notification's check)."""
    from timeline import keys

    alice, bob = make_user("alice"), make_user("bob")
    root = services.status_create(author=alice, text="old root")
    older = social.status_reply(author=bob, sid=root.id, text="@alice old reply")
    deeper = social.status_reply(author=alice, sid=older.id, text="@bob older still")
    for sid in (older.id, deeper.id):
        r.hdel(keys.status(sid), "conversation")  # as stored before
    conversations.conversation_mute(user=bob, sid=deeper.id)
    client = _api(bob)
    rows = {
        s["id"]: s["muted"]
        for s in client.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    }
    assert rows == {str(deeper.id): True, str(root.id): True}
    assert client.get(f"/api/v1/statuses/{older.id}").json()["muted"] is True


def test_a_repost_posted_before_conversations_says_its_originals_mute(r):
    """A repost stored before conversations names none: it is muted as its original
    is (a reply's conversation: its thread's first status), on every path, on one
    server as on a Cluster."""
    from timeline import keys

    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    root = services.status_create(author=bob, text="a thread")
    answer = social.status_reply(author=alice, sid=root.id, text="@bob an answer")
    repost = social.status_repost(user=carol, sid=answer.id)
    run_jobs()
    r.hdel(keys.status(repost.id), "conversation")  # as stored before
    conversations.conversation_mute(user=bob, sid=root.id)
    client = _api(bob)
    assert client.get(f"/api/v1/statuses/{answer.id}").json()["muted"] is True
    by_id = client.get(f"/api/v1/statuses/{repost.id}").json()
    assert (by_id["muted"], by_id["reblog"]["muted"]) == (True, True)
    (shown,) = client.get(f"/api/v1/accounts/{carol.id}/statuses").json()
    assert (shown["muted"], shown["reblog"]["muted"]) == (True, True)
