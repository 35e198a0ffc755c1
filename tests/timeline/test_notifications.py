"""Notifications (issue #12): grouped, told once, hidden across blocks, mutes and
deletions, marked read only by a POST, and a page of two round trips."""

from __future__ import annotations

import re
import threading

import pytest
import redis
from django.test import Client

from accounts.selectors import user_get_by_username
from config.pipelines import pipeline_run
from config.redis import is_cluster
from tests.helpers import (
    body,
    logged_in_client,
    make_user,
    page,
    run_jobs,
    store_snapshot,
)
from tests.helpers import (
    notifications_shown as shown,
)
from tests.roundtrips import RoundTripCounter
from timeline import blocks, jobs, keys, notifications, privacy, services, social
from timeline.domain import Notification
from timeline.notifications import DAY_MS

T0 = 1_800_000_000_000  # a fixed time (ms), mid-day UTC


def groups(r, uid: int) -> list[Notification]:
    """The recipient's stored groups, newest first."""
    rows = r.zrevrange(keys.notifications(uid), 0, -1, withscores=True)
    return [
        Notification.from_json(g, p, r.hget(keys.notification_groups(uid), g))
        for g, p in rows
    ]


def tell(recipient, kind, actor, sid=None, at=T0) -> bool:
    return notifications.notify(
        recipient=recipient.id, kind=kind, actor=actor.id, sid=sid, at_ms=at
    )


def untell(recipient, kind, actor, sid=None) -> int:
    (changed,) = pipeline_run(
        lambda pipe: notifications.unnotify_queue(
            pipe, recipient=recipient.id, kind=kind, actor=actor.id, sid=sid
        )
    )
    return changed


def badge(html: str) -> str | None:
    found = re.search(r"data-notifications-badge>([^<]*)<", html)
    return found.group(1) if found else None


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol", "dave", "erin")}


@pytest.fixture
def alice_status(people):
    return services.status_create(author=people["alice"], text="hello world")


def test_likes_of_one_status_are_one_group_and_each_liker_counts_once(
    r, people, alice_status
):
    alice, sid = people["alice"], alice_status.id
    for i, name in enumerate(("bob", "carol", "dave", "erin")):
        assert tell(alice, "like", people[name], sid, at=T0 + i)
    assert not tell(alice, "like", people["bob"], sid, at=T0 + 9)  # a repeat
    (group,) = groups(r, alice.id)
    assert (group.kind, group.sid, group.count) == ("like", sid, 4)
    assert shown(logged_in_client("alice")) == [
        "@erin, @dave, @carol and 1 other liked your status. hello world"
    ]


def test_reposts_group_apart_from_likes_and_a_new_event_moves_its_group_on_top(
    r, people, alice_status
):
    alice, sid = people["alice"], alice_status.id
    other = services.status_create(author=people["bob"], text="@alice look")
    tell(alice, "like", people["bob"], sid, at=T0)
    tell(alice, "repost", people["carol"], sid, at=T0 + 1)
    tell(alice, "mention", people["bob"], other.id, at=T0 + 2)
    assert [g.kind for g in groups(r, alice.id)] == ["mention", "repost", "like"]
    tell(alice, "like", people["dave"], sid, at=T0 + 3)
    assert shown(logged_in_client("alice")) == [
        "@dave and @bob liked your status. hello world",
        "@bob mentioned you. @alice look",
        "@carol reposted your status. hello world",
    ]


def test_an_older_event_still_lands_on_top_so_it_is_unread(r, people, alice_status):
    alice = people["alice"]
    tell(alice, "follow", people["bob"], at=T0)
    notifications.notifications_mark_read(user=alice, up_to=10 * T0)
    # A job delivering late: its event is older than what alice has read.
    tell(alice, "like", people["carol"], alice_status.id, at=T0 - 5000)
    assert [g.kind for g in groups(r, alice.id)] == ["like", "follow"]
    assert badge(page(logged_in_client("alice"), "/")) == "1"


def test_mentions_and_replies_are_one_group_per_status(r, people):
    alice = people["alice"]
    one = services.status_create(author=people["bob"], text="@alice one")
    two = services.status_create(author=people["carol"], text="@alice two")
    reply = services.status_create(author=people["dave"], text="@alice a reply")
    tell(alice, "mention", people["bob"], one.id, at=T0)
    tell(alice, "mention", people["carol"], two.id, at=T0 + 1)
    tell(alice, "reply", people["dave"], reply.id, at=T0 + 2)
    assert shown(logged_in_client("alice")) == [
        "@dave replied to you. @alice a reply",
        "@carol mentioned you. @alice two",
        "@bob mentioned you. @alice one",
    ]


def test_followers_group_by_day(r, people):
    alice = people["alice"]
    tell(alice, "follow", people["bob"], at=T0)
    tell(alice, "follow", people["carol"], at=T0 + 1)
    tell(alice, "follow", people["dave"], at=T0 + DAY_MS)
    assert shown(logged_in_client("alice")) == [
        "@dave followed you",
        "@carol and @bob followed you",
    ]


def test_nothing_is_told_of_oneself_across_a_block_either_way_or_from_the_muted(
    r, people, alice_status
):
    alice, bob, carol, dave = (people[n] for n in ("alice", "bob", "carol", "dave"))
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    blocks.block_create(blocker=carol, blocked_id=alice.id)
    blocks.mute_create(user=alice, muted_id=dave.id)
    sid = alice_status.id
    assert not tell(alice, "like", alice, sid)
    assert not tell(alice, "like", bob, sid)
    assert not tell(alice, "like", carol, sid)
    assert not tell(alice, "like", dave, sid)
    assert r.exists(keys.notifications(alice.id)) == 0
    assert tell(alice, "like", people["erin"], sid)


@pytest.mark.real_redis
def test_concurrent_likes_and_repeats_count_each_liker_exactly_once(
    r, people, alice_status
):
    alice, sid = people["alice"], alice_status.id
    likers = list(range(1000, 1040))  # ids are enough: nothing is read about them

    def burst(offset: int) -> None:
        for i in range(len(likers)):
            liker = likers[(i + offset) % len(likers)]
            notifications.notify(
                recipient=alice.id, kind="like", actor=liker, sid=sid, at_ms=T0 + i
            )
            if liker % 4 == offset % 4:  # some take it back, and like again
                pipeline_run(
                    lambda pipe, liker=liker: notifications.unnotify_queue(
                        pipe, recipient=alice.id, kind="like", actor=liker, sid=sid
                    )
                )
                notifications.notify(
                    recipient=alice.id, kind="like", actor=liker, sid=sid, at_ms=T0
                )

    threads = [threading.Thread(target=burst, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (group,) = groups(r, alice.id)
    assert group.count == len(likers)
    assert r.zcard(keys.notification_actors(alice.id)) == len(likers)


def test_a_block_or_mute_after_the_fact_hides_at_read_and_shrinks_the_count(
    r, people, alice_status
):
    alice, sid = people["alice"], alice_status.id
    for i, name in enumerate(("bob", "carol", "dave", "erin")):
        tell(alice, "like", people[name], sid, at=T0 + i)
    tell(alice, "follow", people["bob"], at=T0 + 10)
    blocks.block_create(blocker=people["bob"], blocked_id=alice.id)
    blocks.mute_create(user=alice, muted_id=people["erin"].id)
    assert shown(logged_in_client("alice")) == [
        "@dave and @carol liked your status. hello world"
    ]


def test_a_deleted_actor_is_left_out_at_read(r, people, alice_status):
    alice, sid = people["alice"], alice_status.id
    tell(alice, "like", people["bob"], sid, at=T0)
    tell(alice, "like", people["carol"], sid, at=T0 + 1)
    tell(alice, "follow", people["carol"], at=T0 + 2)
    services.account_close(user=people["carol"])
    assert shown(logged_in_client("alice")) == ["@bob liked your status. hello world"]
    run_jobs()  # the deletion job leaves others' stores as they were
    assert shown(logged_in_client("alice")) == ["@bob liked your status. hello world"]


def test_a_deleted_followers_follow_and_request_leave_the_groups(r, people):
    alice, carol = people["alice"], people["carol"]
    logged_in_client("carol").post("/settings/privacy/", {"private": "on"})
    erin = logged_in_client("erin")
    erin.post("/u/alice/follow/")
    erin.post("/u/carol/follow/")  # a request: carol is private
    logged_in_client("bob").post("/u/alice/follow/")
    assert shown(logged_in_client("carol")) == [
        "@erin asked to follow you: follow requests"
    ]
    services.account_close(user=people["erin"])
    run_jobs()
    (group,) = groups(r, alice.id)
    assert (group.count, group.actors) == (1, (people["bob"].id,))
    assert r.exists(keys.notifications(carol.id)) == 0


def test_a_deleted_likers_like_leaves_the_group_and_its_count(r, people):
    """Eight people like alice's status and the oldest liker deletes their
    account: the status says 7 likes, and so does the notification."""
    alice = people["alice"]
    status = services.status_create(author=alice, text="hello world")
    likers = [make_user(f"liker{i}") for i in range(8)]
    for user in likers:
        social.status_like(user=user, sid=status.id)
    services.account_close(user=likers[0])
    run_jobs()
    a = logged_in_client("alice")
    assert "<strong>7</strong> likes" in page(a, f"/s/{status.id}/")
    assert shown(a) == [
        "@liker7, @liker6, @liker5 and 4 others liked your status. hello world"
    ]
    (group,) = groups(r, alice.id)
    assert group.count == 7 and likers[0].id not in group.actors


def test_an_undo_takes_the_actor_out_and_an_emptied_group_goes(r, people, alice_status):
    alice, sid = people["alice"], alice_status.id
    tell(alice, "like", people["bob"], sid, at=T0)
    tell(alice, "like", people["carol"], sid, at=T0 + 1)
    tell(alice, "follow", people["dave"], at=T0 + 2)
    assert untell(alice, "like", people["bob"], sid) == 1
    assert untell(alice, "like", people["bob"], sid) == 0  # safe to repeat
    assert shown(logged_in_client("alice")) == [
        "@dave followed you",
        "@carol liked your status. hello world",
    ]
    untell(alice, "like", people["carol"], sid)
    untell(alice, "follow", people["dave"])
    assert not [k for k in r.scan_iter() if k.startswith("notification")]


def test_an_undo_refills_the_names_shown(r, people, alice_status):
    alice, sid = people["alice"], alice_status.id
    for i, name in enumerate(("bob", "carol", "dave", "erin")):
        tell(alice, "like", people[name], sid, at=T0 + i)
    untell(alice, "like", people["erin"], sid)
    untell(alice, "like", people["dave"], sid)
    (group,) = groups(r, alice.id)
    assert group.count == 2 and set(group.actors) == {
        people["bob"].id,
        people["carol"].id,
    }


def test_a_deleted_status_takes_every_group_about_it_along(r, people, alice_status):
    alice, sid = people["alice"], alice_status.id
    tell(alice, "like", people["bob"], sid, at=T0)
    tell(alice, "repost", people["carol"], sid, at=T0 + 1)
    tell(alice, "follow", people["dave"], at=T0 + 2)
    services.status_delete(user=alice, sid=sid)
    # Left out at read at once, before anyone forgot it.
    assert shown(logged_in_client("alice")) == ["@dave followed you"]
    (gone,) = pipeline_run(
        lambda pipe: notifications.notifications_forget_status_queue(
            pipe, recipient=alice.id, sid=sid
        )
    )
    assert gone == 2
    assert [g.kind for g in groups(r, alice.id)] == ["follow"]
    assert r.zcard(keys.notification_actors(alice.id)) == 1


def test_a_deleted_mention_leaves_no_notification_and_no_unread_badge(r, people):
    """Bob mentioned alice and carol, then deleted the status: their
    notifications of it go, so no badge counts what no page shows."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    status = services.status_create(author=bob, text="hey @alice and @carol")
    run_jobs()
    a = logged_in_client("alice")
    assert badge(page(a, "/")) == "1"
    services.status_delete(user=bob, sid=status.id)
    run_jobs()
    assert shown(a) == []
    assert badge(page(a, "/")) is None
    assert r.exists(keys.notifications(alice.id), keys.notifications(carol.id)) == 0


def test_a_deleted_mentions_notifications_go_even_if_the_request_missed_them(
    r, people, monkeypatch
):
    """The delete's unlink job forgets the mentions too: a request cut short
    before its own forgetting (or a post job that notified after it) leaves
    nothing once the job has run."""
    alice, bob = people["alice"], people["bob"]
    status = services.status_create(author=bob, text="hey @alice")
    run_jobs()
    a = logged_in_client("alice")
    assert badge(page(a, "/")) == "1"
    # The request's own forgetting does not happen, as if it died before it.
    monkeypatch.setattr(
        services.notifications, "notifications_forget_status_queue", _nothing
    )
    services.status_delete(user=bob, sid=status.id)
    monkeypatch.undo()
    assert badge(page(a, "/")) == "1"
    run_jobs()
    assert badge(page(a, "/")) is None
    assert r.exists(keys.notifications(alice.id)) == 0


def _nothing(*args, **kwargs) -> None:
    pass


def test_past_the_cap_the_oldest_groups_go_with_their_actors(r, people, settings):
    settings.NOTIFICATIONS_CAP = 3
    alice = people["alice"]
    sids = [services.status_create(author=alice, text=f"s{i}").id for i in range(3)]
    tell(alice, "follow", people["bob"], at=T0)
    tell(alice, "follow", people["carol"], at=T0 + DAY_MS)
    for i, sid in enumerate(sids):
        tell(alice, "like", people["dave"], sid, at=T0 + 2 * DAY_MS + i)
    assert [g.group for g in groups(r, alice.id)] == [
        f"like:{sids[2]}",
        f"like:{sids[1]}",
        f"like:{sids[0]}",
    ]
    assert r.hlen(keys.notification_groups(alice.id)) == 3
    assert r.zcard(keys.notification_actors(alice.id)) == 3
    assert r.zcard(keys.notification_follows(alice.id)) == 0
    # An unfollow of a follow whose group went changes nothing.
    assert untell(alice, "follow", people["bob"]) == 0


def test_the_read_mark_never_goes_back_and_the_count_is_of_groups_above_it(
    r, people, alice_status
):
    alice, sid = people["alice"], alice_status.id
    tell(alice, "follow", people["bob"], at=T0)
    tell(alice, "like", people["carol"], sid, at=T0 + 1)
    client = logged_in_client("alice")
    assert badge(page(client, "/")) == "2"
    places = [g.place for g in groups(r, alice.id)]
    assert (
        notifications.notifications_mark_read(user=alice, up_to=places[1])
        == (places[1])
    )
    assert badge(page(client, "/")) == "1"
    assert notifications.notifications_mark_read(user=alice, up_to=T0 - 1) == places[1]
    # Never beyond the top group: what arrives later is unread.
    assert notifications.notifications_mark_read(user=alice, up_to=2**52) == places[0]
    assert badge(page(client, "/")) is None
    tell(alice, "like", people["dave"], sid, at=T0 + 2)
    assert badge(page(client, "/")) == "1"


def test_the_badge_stops_counting_at_99(r, people):
    alice = people["alice"]
    pipeline_run(
        lambda pipe: [
            notifications.notify_queue(
                pipe,
                recipient=alice.id,
                kind="follow",
                actor=people["bob"].id,
                sid=None,
                at_ms=T0 + i * DAY_MS,  # a group a day
            )
            for i in range(100)
        ]
    )
    client = logged_in_client("alice")
    assert badge(page(client, "/")) == "99+"
    notifications.notifications_mark_read(user=alice, up_to=T0 + 50 * DAY_MS)
    assert badge(page(client, "/")) == "49"


def test_pages_follow_the_cursor_without_repeats_or_gaps(r, people, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    settings.RATE_LIMIT_POST = "off"
    alice = people["alice"]
    made = []
    for i in range(8):
        status = services.status_create(author=alice, text=f"status {i}")
        # Several in one millisecond: places stay unique all the same.
        tell(alice, "like", people["bob"], status.id, at=T0)
        made.append(f"@bob liked your status. status {i}")
    client = logged_in_client("alice")
    seen: list[str] = []
    url = "/notifications/"
    while url:
        html = page(client, url)
        items = re.findall(r"status (\d)</a>", html)
        seen.extend(f"@bob liked your status. status {i}" for i in items)
        found = re.search(r'href="\?cursor=(\d+)"', html)
        url = f"/notifications/?cursor={found.group(1)}" if found else None
    assert seen == made[::-1]


def test_a_follow_notifies_the_followee_and_an_unfollow_takes_it_back(r, people):
    bob = logged_in_client("bob")
    bob.post("/u/alice/follow/")
    logged_in_client("carol").post("/u/alice/follow/")
    alice = logged_in_client("alice")
    assert badge(page(alice, "/")) == "1"
    assert shown(alice) == ["@carol and @bob followed you"]
    bob.post("/u/alice/unfollow/")
    assert shown(alice) == ["@carol followed you"]
    # Following again is a new event: told again.
    bob.post("/u/alice/follow/")
    assert shown(alice) == ["@bob and @carol followed you"]
    run_jobs(sweep=True, now=jobs.now_ms() + 60_000)
    assert groups(r, people["alice"].id)[0].count == 2


def test_a_follow_whose_request_died_is_told_once_by_its_job(
    r, people, monkeypatch, settings
):
    alice, bob = people["alice"], people["bob"]

    def outage(**kwargs):
        raise redis.ConnectionError("Redis stopped answering")

    monkeypatch.setattr(services, "_follow_sync", outage)
    with pytest.raises(redis.ConnectionError):
        services.follow_create(follower=bob, followee_id=alice.id)
    monkeypatch.undo()
    assert r.exists(keys.notifications(alice.id)) == 0
    later = jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1
    assert run_jobs(now=later, sweep=True) == 1
    # The job, and a second run of the same step, tell it once.
    services.follow_sync(follower_id=bob.id, followee_id=alice.id)
    (group,) = groups(r, alice.id)
    assert (group.kind, group.count, group.actors) == ("follow", 1, (bob.id,))


def test_a_follow_request_notifies_and_goes_with_the_request(r, people):
    alice, bob = logged_in_client("alice"), logged_in_client("bob")
    alice.post("/settings/privacy/", {"private": "on"})
    bob.post("/u/alice/follow/")
    assert shown(alice) == ["@bob asked to follow you: follow requests"]
    alice.post("/settings/requests/bob/approve/")
    # Approved by alice herself: nothing to tell her, and the request is done.
    assert shown(alice) == []
    assert r.zscore(keys.followers(people["alice"].id), people["bob"].id)
    # Bob is told, once, however often the approval's step runs.
    assert shown(bob) == ["@alice approved your follow request"]
    privacy.approval_complete(
        owner_id=people["alice"].id, requester_id=people["bob"].id, cancel=True
    )
    assert groups(r, people["bob"].id)[0].count == 1


@pytest.mark.parametrize("blocker", ["alice", "bob"])
def test_a_block_either_way_takes_a_follow_requests_notification_along(
    r, people, blocker
):
    """Bob asked to follow private alice; once either blocks the other the request
    is gone, and so is "@bob asked to follow you": her badge stops counting it,
    and an unblock does not bring it back."""
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=alice, private=True)
    assert services.follow_ask(follower=bob, followee_id=alice.id) == services.REQUESTED
    a = logged_in_client("alice")
    assert shown(a) == ["@bob asked to follow you: follow requests"]
    assert badge(page(a, "/")) == "1"
    one, other = (alice, bob) if blocker == "alice" else (bob, alice)
    blocks.block_create(blocker=one, blocked_id=other.id)
    assert badge(page(a, "/")) is None
    assert r.exists(keys.notifications(alice.id)) == 0
    blocks.block_delete(blocker=one, blocked_id=other.id)
    run_jobs(now=jobs.now_ms() + 60_000)
    assert "@bob" not in page(a, "/settings/requests/")
    assert shown(a) == []
    assert badge(page(a, "/")) is None


def test_a_follow_request_ended_by_a_follow_takes_its_notification_along(r, people):
    """Alice turned public with bob's request pending, and bob simply followed: she
    is told "@bob followed you", and no longer that he asked to."""
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=alice, private=True)
    services.follow_ask(follower=bob, followee_id=alice.id)
    privacy.account_privacy_set(user=alice, private=False)
    assert services.follow_ask(follower=bob, followee_id=alice.id) == services.FOLLOWS
    run_jobs(now=jobs.now_ms() + 60_000)
    a = logged_in_client("alice")
    assert "@bob" not in page(a, "/settings/requests/")
    assert shown(a) == ["@bob followed you"]
    assert badge(page(a, "/")) == "1"
    assert [g.kind for g in groups(r, alice.id)] == ["follow"]


def test_an_approval_a_block_overtook_tells_nothing(r, people):
    alice, bob = people["alice"], people["bob"]
    logged_in_client("alice").post("/settings/privacy/", {"private": "on"})
    logged_in_client("bob").post("/u/alice/follow/")
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    privacy.approval_complete(owner_id=alice.id, requester_id=bob.id, cancel=True)
    assert r.exists(keys.notifications(bob.id)) == 0


def test_a_private_authors_mention_reaches_only_a_follower(r, people):
    alice, bob = people["alice"], people["bob"]
    logged_in_client("bob").post("/settings/privacy/", {"private": "on"})
    status = services.status_create(author=bob, text="@alice secret")
    tell(alice, "mention", bob, status.id)
    assert shown(logged_in_client("alice")) == []
    r.zadd(keys.following(alice.id), {bob.id: 1})  # as an approved follow holds it
    assert shown(logged_in_client("alice")) == ["@bob mentioned you. @alice secret"]


def test_an_account_deletion_takes_its_notifications_along(r, people, alice_status):
    alice = people["alice"]
    tell(alice, "follow", people["bob"], at=T0)
    tell(alice, "like", people["bob"], alice_status.id, at=T0 + 1)
    notifications.notifications_mark_read(user=alice, up_to=T0)
    services.account_close(user=alice)
    run_jobs()
    assert not [k for k in r.scan_iter() if k.endswith(f"{{{alice.id}}}")]


def test_the_status_snippet_is_escaped(r, people):
    text = '<script>alert("x")</script>'
    status = services.status_create(author=people["bob"], text=text)
    tell(people["alice"], "mention", people["bob"], status.id)
    html = page(logged_in_client("alice"), "/notifications/")
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html


def test_a_group_reads_as_a_sentence_with_its_time_and_its_status_cut_at_a_word(
    r, people
):
    alice = people["alice"]
    status = services.status_create(author=alice, text="word " * 40 + "end")
    tell(alice, "like", people["bob"], status.id, at=T0)
    tell(alice, "like", people["carol"], status.id, at=T0 + 1)
    html = page(logged_in_client("alice"), "/notifications/")
    assert shown(logged_in_client("alice"))[0].startswith(
        "@carol and @bob liked your status. word word"
    )
    assert (
        '<time class="muted" datetime="2027-01-15T08:00:00.001000+00:00" '
        "data-relative>15 January 2027, 08:00 UTC</time>"
    ) in html
    # 140 characters at most, cut before the word that does not fit.
    assert f'">{"word " * 26}word...</a></blockquote>' in html


# --- The page and the mark ---------------------------------------------------------


def test_a_visitor_is_asked_to_log_in(people):
    response = Client().get("/notifications/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_reading_the_page_writes_nothing(r, people, alice_status):
    tell(people["alice"], "like", people["bob"], alice_status.id)
    client = logged_in_client("alice")
    page(client, "/")  # today's last-seen stamp: the one write a GET may make
    before = store_snapshot(r)
    html = page(client, "/notifications/")
    assert 'class="notification unread"' in html
    page(client, "/notifications/?cursor=1")
    assert store_snapshot(r) == before
    assert 'class="notification unread"' in page(client, "/notifications/")


def test_marking_read_is_a_post_with_the_csrf_token(r, people, alice_status):
    tell(people["alice"], "like", people["bob"], alice_status.id)
    client = logged_in_client("alice", enforce_csrf_checks=True)
    html = page(client, "/notifications/")
    assert badge(html) == "1" and "Mark all as read" in html
    up_to = re.search(r'name="up_to" value="(\d+)"', html).group(1)
    refused = client.post("/notifications/read/", {"up_to": up_to})
    assert refused.status_code == 403
    assert client.get("/notifications/read/").status_code == 405
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    done = client.post(
        "/notifications/read/", {"up_to": up_to, "csrfmiddlewaretoken": token}
    )
    assert done.status_code == 302
    html = page(client, "/notifications/")
    assert badge(html) is None
    assert 'class="notification unread"' not in html
    # Nothing left to mark: no button, and no mark for the script to post.
    assert "Mark all as read" not in html and "data-notifications-read" not in html
    assert shown(client) == ["@bob liked your status. hello world"]


def test_a_bad_position_marks_nothing(r, people, alice_status):
    tell(people["alice"], "like", people["bob"], alice_status.id)
    client = logged_in_client("alice")
    answer = client.post("/notifications/read/", {"up_to": "soon"}, follow=True)
    assert "Nothing was marked read" in body(answer)
    assert badge(body(answer)) == "1"


def count_round_trips(client: Client, url: str) -> int:
    client.get(url)  # warm: connections open, scripts loaded
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_the_page_and_the_badge_cost_no_extra_round_trip(r, people, settings):
    settings.RATE_LIMIT_POST = "off"
    alice = people["alice"]
    for i in range(40):
        status = services.status_create(author=alice, text=f"status {i}")
        tell(alice, "like", people["bob"], status.id, at=T0 + i)
        tell(alice, "repost", people["carol"], status.id, at=T0 + i)
    mention = services.status_create(author=people["dave"], text="@alice hi")
    tell(alice, "mention", people["dave"], mention.id, at=T0 + 100)
    tell(alice, "follow", people["erin"], at=T0 + 101)
    client = logged_in_client("alice")
    assert badge(page(client, "/")) == "82"
    # One server: the groups' names and statuses ride with the auth check too.
    pages = ("/notifications/", "/notifications/?cursor=" + str(T0 + 20))
    for url in pages:
        assert count_round_trips(client, url) == (2 if is_cluster() else 1), url
    # One server: a home's statuses ride with the auth check.
    assert count_round_trips(client, "/") == (2 if is_cluster() else 1)
    assert count_round_trips(client, "/u/alice/") == (2 if is_cluster() else 1)
    assert user_get_by_username(username="alice").id == alice.id
