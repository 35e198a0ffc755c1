"""Likes, reposts and replies in the store (issue #12, `timeline.social`): exact
counts, the viewer's state, blocks and private accounts, the reply rule, reposts
once per page, and deletion (of a status, of an account) leaving nothing behind."""

from __future__ import annotations

import random
import threading

import pytest

from accounts.domain import User
from accounts.selectors import PageReads, user_get
from accounts.services import session_create
from tests.helpers import make_user, run_jobs
from timeline import blocks, jobs, keys, privacy, selectors, services, social
from timeline.domain import Forbidden, NotFound, Status


def reads_for(user: User) -> PageReads:
    return PageReads(session_create(uid=user.id))


def home(user: User) -> list[Status]:
    return selectors.home_get(reads=reads_for(user)).page.statuses


def follow(a: User, b: User) -> None:
    services.follow_ask(follower=a, followee_id=b.id)


def post(user: User, text: str = "hello", **kwargs) -> Status:
    return services.status_create(author=user, text=text, **kwargs)


def stored(r, sid: int) -> Status | None:
    return Status.from_fields(sid, r.hmget(keys.status(sid), Status.FIELDS))


@pytest.fixture
def users():
    return {name: make_user(name) for name in ("alice", "bob", "carol", "dave")}


def test_a_like_counts_once_and_its_undo_uncounts(r, users):
    alice, bob = users["alice"], users["bob"]
    status = post(alice)
    assert social.status_like(user=bob, sid=status.id) is True
    assert social.status_like(user=bob, sid=status.id) is False
    assert stored(r, status.id).likes == 1
    assert r.zcard(keys.likes(status.id)) == 1
    assert r.zscore(keys.liked(bob.id), status.id) is not None
    assert social.status_unlike(user=bob, sid=status.id) is True
    assert social.status_unlike(user=bob, sid=status.id) is False
    assert stored(r, status.id).likes == 0
    assert r.zcard(keys.likes(status.id)) == 0
    assert r.zcard(keys.liked(bob.id)) == 0


def test_an_old_hash_without_counts_loads_as_zero(r, users):
    status = post(users["alice"])
    found = stored(r, status.id)
    assert (found.likes, found.reposts, found.replies) == (0, 0, 0)
    assert found.reply_to is None and found.repost_of is None


@pytest.mark.real_redis
def test_concurrent_likes_and_unlikes_keep_the_count_exact(r, users):
    status = post(users["alice"])
    likers = [make_user(f"liker{i}") for i in range(12)]
    final: dict[int, bool] = {}

    def churn(user: User, seed: int) -> None:
        rng = random.Random(seed)
        liked = False
        for _ in range(25):
            if rng.random() < 0.6:
                social.status_like(user=user, sid=status.id)
                liked = True
            else:
                social.status_unlike(user=user, sid=status.id)
                liked = False
        final[user.id] = liked

    threads = [
        threading.Thread(target=churn, args=(u, i)) for i, u in enumerate(likers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sum(final.values())
    assert stored(r, status.id).likes == r.zcard(keys.likes(status.id)) == expected
    for user in likers:
        assert (r.zscore(keys.liked(user.id), status.id) is not None) == final[user.id]


def test_pages_show_counts_and_the_viewers_own_state(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    follow(bob, alice)
    status = post(alice)
    run_jobs()
    social.status_like(user=bob, sid=status.id)
    social.status_like(user=carol, sid=status.id)
    social.status_repost(user=carol, sid=status.id)
    post(carol, "a reply", reply_to=status)
    (row,) = home(bob)
    assert (row.likes, row.reposts, row.replies) == (2, 1, 0)  # link by the job
    assert row.liked is True and row.reposted is False
    run_jobs()
    (row,) = home(bob)
    assert row.replies == 1
    assert [s.liked for s in home(alice)] == [False]


def test_the_viewers_state_is_their_own_whatever_the_counts_say(r, users):
    # A page asks a status's likes and reposts about the viewer only where its
    # count says someone is there: a status liked by others, one liked and then
    # unliked (count 0), one never liked (no count field at all, as in a hash
    # older than likes).
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    follow(bob, alice)
    liked, others, undone, old = (post(alice, t) for t in "abcd")
    run_jobs()
    r.hdel(keys.status(old.id), "likes", "reposts", "replies")
    social.status_like(user=bob, sid=liked.id)
    social.status_like(user=carol, sid=others.id)
    social.status_repost(user=carol, sid=others.id)
    social.status_like(user=bob, sid=undone.id)
    social.status_unlike(user=bob, sid=undone.id)
    run_jobs()

    def state(user: User) -> dict[str, tuple]:
        rows = home(user)
        return {
            s.text: (s.likes, s.reposts, s.liked, s.reposted)
            for s in rows
            if s is not None and s.repost_of is None
        }

    assert state(bob) == {
        "a": (1, 0, True, False),
        "b": (1, 1, False, False),
        "c": (0, 0, False, False),
        "d": (0, 0, False, False),
    }
    # The old hash gains its counts with its first like, and shows it.
    social.status_like(user=bob, sid=old.id)
    assert state(bob)["d"] == (1, 0, True, False)
    social.status_repost(user=bob, sid=undone.id)
    run_jobs()
    shown = selectors.global_page(reads=reads_for(bob)).statuses
    (row,) = [s for s in shown if s is not None and s.id == undone.id]
    assert (row.reposts, row.reposted, row.liked) == (1, True, False)
    assert [s.liked for s in home(alice) if s is not None] == [False] * 4


def test_a_like_is_refused_across_a_block_either_way(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    status = post(alice)
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    blocks.block_create(blocker=carol, blocked_id=alice.id)
    for user in (bob, carol):
        for act in (social.status_like, social.status_repost):
            with pytest.raises(NotFound):
                act(user=user, sid=status.id)
        with pytest.raises(NotFound):
            social.status_reply(author=user, sid=status.id, text="hi")
    assert r.zcard(keys.likes(status.id)) == 0
    assert r.zcard(keys.reposts(status.id)) == 0
    assert r.zcard(keys.replies(status.id)) == 0


def test_a_private_authors_status_takes_likes_from_approved_followers_only(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    privacy.account_privacy_set(user=alice, private=True)
    alice = user_get(uid=alice.id)
    status = post(alice)
    follow(bob, alice)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    with pytest.raises(NotFound):
        social.status_like(user=carol, sid=status.id)
    with pytest.raises(NotFound):
        social.status_reply(author=carol, sid=status.id, text="hi")
    assert social.status_like(user=bob, sid=status.id) is True
    social.status_reply(author=bob, sid=status.id, text="approved reply")
    # Nobody reposts a private account's status, not even an approved follower.
    with pytest.raises(Forbidden):
        social.status_repost(user=bob, sid=status.id)
    assert r.zcard(keys.reposts(status.id)) == 0


def test_a_repost_reaches_followers_homes_but_not_the_global_timeline(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    follow(carol, bob)
    status = post(alice, "original")
    repost = social.status_repost(user=bob, sid=status.id)
    assert social.status_repost(user=bob, sid=status.id) is None  # once only
    run_jobs()
    assert stored(r, status.id).reposts == 1
    (row,) = home(carol)
    assert row.id == repost.id and row.repost_of == status.id
    assert row.repost_author == "alice" and row.text == "original"
    assert row.author == "bob" and row.original_id == status.id
    shown = selectors.global_page(reads=PageReads()).statuses
    assert [s.id for s in shown] == [status.id]
    # Acting on the repost acts on the original.
    social.status_like(user=carol, sid=repost.id)
    assert r.zscore(keys.likes(status.id), carol.id) is not None
    assert social.status_unrepost(user=bob, sid=repost.id) is True
    run_jobs()
    assert r.exists(keys.status(repost.id)) == 0
    assert home(carol) == []
    assert stored(r, status.id).reposts == 0
    assert r.zcard(keys.posts(bob.id)) == 0


def test_a_home_shows_an_original_once_however_often_it_is_reposted(r, users):
    alice, bob, carol, dave = (users[n] for n in ("alice", "bob", "carol", "dave"))
    for other in (alice, bob, carol):
        follow(dave, other)
    status = post(alice, "popular")
    older = post(carol, "older")
    for reposter, sid in ((bob, status.id), (carol, status.id), (bob, older.id)):
        social.status_repost(user=reposter, sid=sid)
    run_jobs()
    rows = home(dave)
    # Each where its original came: the home holds the originals just below the
    # reposts (`HOME_REPOST_FALLOFF`; tests/timeline/test_reposts_across_pages.py).
    assert [s.id for s in rows] == [older.id, status.id]
    assert r.zcard(keys.home(dave.id)) == 5  # the home keeps them all
    # Reposts of a status whose author the reader does not follow: shown once, at
    # the newest.
    erin = make_user("erin")
    unfollowed = post(erin, "from afar")
    first = social.status_repost(user=bob, sid=unfollowed.id)
    second = social.status_repost(user=carol, sid=unfollowed.id)
    run_jobs()
    rows = home(dave)
    assert [s.original_id for s in rows] == [unfollowed.id, older.id, status.id]
    assert rows[0].id == max(first.id, second.id)  # ids are ordered per author


def test_a_muted_or_blocked_authors_reposted_status_is_left_out(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    follow(carol, bob)
    status = post(alice)
    social.status_repost(user=bob, sid=status.id)
    run_jobs()
    assert len(home(carol)) == 1
    blocks.mute_create(user=carol, muted_id=alice.id)
    assert home(carol) == []
    blocks.mute_delete(user=carol, muted_id=alice.id)
    blocks.block_create(blocker=alice, blocked_id=carol.id)
    assert home(carol) == []


def test_a_reply_is_linked_to_its_parent_and_counted(r, users):
    alice, bob = users["alice"], users["bob"]
    parent = post(alice)
    reply = social.status_reply(author=bob, sid=parent.id, text="@alice yes")
    again = social.status_reply(author=alice, sid=reply.id, text="@bob ok")
    assert stored(r, reply.id).reply_to == parent.id
    assert stored(r, reply.id).reply_uid == alice.id
    assert stored(r, again.id).thread == ((parent.id, alice.id),)
    assert stored(r, parent.id).replies == 1
    assert r.zrange(keys.replies(parent.id), 0, -1) == [f"{reply.id}:{bob.id}"]
    run_jobs()  # the fan-out links it again: still once
    assert stored(r, parent.id).replies == 1


def test_a_reply_the_request_did_not_link_is_linked_by_its_fan_out(r, users):
    alice, bob = users["alice"], users["bob"]
    parent = post(alice)
    reply = post(bob, "@alice late", reply_to=parent)  # as if the request died
    assert r.zcard(keys.replies(parent.id)) == 0
    run_jobs()
    assert r.zrange(keys.replies(parent.id), 0, -1) == [f"{reply.id}:{bob.id}"]
    assert stored(r, parent.id).replies == 1


def test_replies_reach_homes_the_mastodon_way(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    follow(alice, bob)
    to_carol = social.status_reply(author=bob, sid=post(carol).id, text="@carol x")
    to_alice = social.status_reply(author=bob, sid=post(alice).id, text="@alice x")
    thread = social.status_reply(author=bob, sid=post(bob).id, text="more")
    run_jobs()
    ids = {s.id for s in home(alice)}
    assert to_carol.id not in ids  # to someone alice does not follow
    assert {to_alice.id, thread.id} <= ids  # to alice herself; bob's own thread
    follow(alice, carol)
    to_carol_again = social.status_reply(author=bob, sid=to_carol.id, text="@carol")
    run_jobs()
    assert to_carol_again.id in {s.id for s in home(alice)}
    assert to_carol.id in {s.id for s in home(bob)}  # the author's own home


def test_the_thread_shows_ancestors_and_replies_oldest_first(r, users, settings):
    settings.TIMELINE_PAGE_SIZE = 2
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    root = post(alice, "root")
    middle = social.status_reply(author=bob, sid=root.id, text="middle")
    replies = [
        social.status_reply(author=carol, sid=middle.id, text=f"r{i}") for i in range(3)
    ]
    blocks.block_create(blocker=alice, blocked_id=carol.id)
    thread = selectors.thread_get(reads=reads_for(bob), sid=middle.id)
    assert [s.id for s in thread.ancestors] == [root.id]
    assert [s.id for s in thread.replies] == [replies[0].id, replies[1].id]
    more = selectors.thread_get(
        reads=reads_for(bob), sid=middle.id, after=thread.next_after
    )
    assert [s.id for s in more.replies] == [replies[2].id]
    assert more.next_after is None
    # Alice blocked carol: carol's replies are not shown to her.
    seen = selectors.thread_get(reads=reads_for(alice), sid=middle.id)
    assert seen.replies == []


def test_deleting_a_status_removes_its_likes_reposts_and_reply_link(r, users):
    alice, bob, carol, dave = (users[n] for n in ("alice", "bob", "carol", "dave"))
    follow(dave, bob)
    parent = post(carol)
    status = social.status_reply(author=alice, sid=parent.id, text="@carol liked")
    social.status_like(user=bob, sid=status.id)
    repost = social.status_repost(user=bob, sid=status.id)
    reply = social.status_reply(author=carol, sid=status.id, text="@alice stays")
    run_jobs()
    assert [s.id for s in home(dave)] == [repost.id]
    assert stored(r, parent.id).replies == 1
    services.status_delete(user=alice, sid=status.id)
    run_jobs()
    assert r.exists(keys.likes(status.id), keys.reposts(status.id)) == 0
    assert r.exists(keys.replies(status.id)) == 0
    assert r.zcard(keys.liked(bob.id)) == 0
    assert r.exists(keys.status(repost.id)) == 0
    assert r.zcard(keys.posts(bob.id)) == 0
    assert home(dave) == []
    assert stored(r, parent.id).replies == 0
    assert r.zcard(keys.replies(parent.id)) == 0
    # Its reply stays, replying to a deleted status.
    thread = selectors.thread_get(reads=reads_for(carol), sid=reply.id)
    assert thread.status.id == reply.id and thread.ancestors[-1] is None


def test_a_like_of_a_deleted_status_is_refused_and_leaves_no_record(r, users):
    alice, bob = users["alice"], users["bob"]
    status = post(alice)
    services.status_delete(user=alice, sid=status.id)
    with pytest.raises(NotFound):
        social.status_like(user=bob, sid=status.id)
    assert r.zcard(keys.liked(bob.id)) == 0
    assert r.exists(keys.status(status.id)) == 0  # no count brought it back


def test_account_deletion_undoes_likes_reposts_and_replies(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    status = post(alice)
    theirs = post(bob)
    social.status_like(user=bob, sid=status.id)
    social.status_repost(user=bob, sid=status.id)
    social.status_reply(author=bob, sid=status.id, text="@alice bye")
    social.status_like(user=carol, sid=theirs.id)
    run_jobs()
    assert (stored(r, status.id).likes, stored(r, status.id).reposts) == (1, 1)
    services.account_close(user=bob)
    run_jobs()
    after = stored(r, status.id)
    assert (after.likes, after.reposts, after.replies) == (0, 0, 0)
    for key in (keys.likes, keys.reposts, keys.replies):
        assert r.zcard(key(status.id)) == 0
    assert r.exists(keys.liked(bob.id), keys.posts(bob.id)) == 0
    # Carol's like of bob's status went with it.
    assert r.zcard(keys.liked(carol.id)) == 0
    assert r.exists(keys.likes(theirs.id)) == 0


def test_turning_private_takes_back_others_reposts(r, users, settings):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    follow(carol, bob)
    status = post(alice, "public for now")
    repost = social.status_repost(user=bob, sid=status.id)
    run_jobs()
    assert [s.id for s in home(carol)] == [repost.id]
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs(now=jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1)
    assert home(carol) == []
    assert r.exists(keys.status(repost.id)) == 0
    assert r.zcard(keys.reposts(status.id)) == 0
    assert stored(r, status.id).reposts == 0


def test_a_like_cut_short_after_the_likers_record_is_completed_by_a_retry(
    r, users, monkeypatch
):
    alice, bob = users["alice"], users["bob"]
    status = post(alice)

    def outage(*args, **kwargs):
        raise ConnectionError("the server went away")

    with monkeypatch.context() as m:
        m.setattr(social, "_counted_add", outage)
        with pytest.raises(ConnectionError):
            social.status_like(user=bob, sid=status.id)
    # Only bob's own record was written: no page shows a like.
    assert r.zscore(keys.liked(bob.id), status.id) is not None
    assert stored(r, status.id).likes == 0
    assert home(alice)[0].likes == 0
    assert social.status_like(user=bob, sid=status.id) is True
    assert stored(r, status.id).likes == r.zcard(keys.likes(status.id)) == 1


def test_an_unlink_run_again_changes_nothing(r, users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    parent = post(carol)
    status = social.status_reply(author=alice, sid=parent.id, text="@carol x")
    social.status_like(user=bob, sid=status.id)
    social.status_repost(user=bob, sid=status.id)
    services.status_delete(user=alice, sid=status.id)
    run_jobs()
    before = {k: r.dump(k) for k in r.scan_iter() if not k.startswith("limit:")}
    social.status_unlink(
        author_id=alice.id, sid=status.id, parent=parent.id, original=None
    )
    run_jobs()
    after = {k: r.dump(k) for k in r.scan_iter() if not k.startswith("limit:")}
    assert after == before
    assert stored(r, parent.id).replies == 0


def test_an_outbox_entry_of_a_plain_status_keeps_its_old_form(users):
    status = post(users["alice"], "plain")
    assert status.to_json() == (
        f'["{users["alice"].id}", "alice", "plain", "{status.created:.3f}"]'
    )
    reply = post(users["bob"], "re", reply_to=status)
    assert Status.from_json(reply.id, reply.to_json()) == reply


def test_the_thread_shows_a_private_authors_part_to_approved_followers_only(r, users):
    alice, bob, carol, dave = (users[n] for n in ("alice", "bob", "carol", "dave"))
    privacy.account_privacy_set(user=dave, private=True)
    dave = user_get(uid=dave.id)
    follow(bob, dave)
    privacy.follow_request_approve(owner=dave, requester_id=bob.id)
    root = post(alice, "public root")
    hidden = social.status_reply(author=dave, sid=root.id, text="@alice private")
    answer = social.status_reply(author=bob, sid=hidden.id, text="@dave public")
    for viewer, sees in ((bob, True), (dave, True), (carol, False), (alice, False)):
        thread = selectors.thread_get(reads=reads_for(viewer), sid=root.id)
        assert [s.id for s in thread.replies] == ([hidden.id] if sees else [])
        below = selectors.thread_get(reads=reads_for(viewer), sid=answer.id)
        parent, grandparent = below.ancestors[1], below.ancestors[0]
        assert (parent is not None) == sees and grandparent.id == root.id
    assert selectors.thread_get(reads=PageReads(), sid=hidden.id) is None
