"""The client API's grouped notifications (`/api/v2/notifications`, Mastodon 4.3):
the site's own groups, each whole, with its full count; the instance says 4.3, so
clients that group (Phanpy, Mastodon's own web app) read these, and they were a
404."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import blocks, notifications, services, social

T0 = 1_800_000_000_000  # a fixed time (ms)


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    for name in ("POST", "LIKE", "FOLLOW", "REPOST"):
        setattr(settings, f"RATE_LIMIT_{name}", "off")


def grouped(client, query: str = "") -> tuple[dict, dict[str, str]]:
    response = client.get("/api/v2/notifications" + query)
    assert response.status_code == 200, response.content
    found = re.findall(r'<[^?>]*\?([^>]*)>; rel="(\w+)"', response.get("Link", ""))
    return response.json(), {rel: q for q, rel in found}


def test_a_status_liked_by_twelve_is_one_group_that_counts_them_all():
    """v1 lists one notification per remembered actor (the six newest), so a
    client lost the other six; a group says 12 and names the newest."""
    alice = make_user("alice")
    status = services.status_create(author=alice, text="popular")
    likers = [make_user(f"liker{i:02d}") for i in range(12)]
    likers.reverse()  # the newest like by the oldest account: ids don't say
    for user in likers:
        social.status_like(user=user, sid=status.id)
    run_jobs()
    body, _ = grouped(api_client(token_for(alice)))
    (group,) = body["notification_groups"]
    assert group["type"] == "favourite"
    assert group["group_key"] == f"favourite-{status.id}"
    assert group["notifications_count"] == 12
    assert group["status_id"] == str(status.id)
    newest = [str(u.id) for u in reversed(likers)]
    assert group["sample_account_ids"] == newest[: len(group["sample_account_ids"])]
    assert len(group["sample_account_ids"]) >= 6
    assert group["most_recent_notification_id"] != group["page_max_id"]
    assert int(group["page_min_id"]) <= int(group["most_recent_notification_id"])
    assert int(group["most_recent_notification_id"]) <= int(group["page_max_id"])
    assert group["latest_page_notification_at"].endswith("Z")
    accounts = {a["id"] for a in body["accounts"]}
    assert set(group["sample_account_ids"]) <= accounts
    assert [s["id"] for s in body["statuses"]] == [str(status.id)]


def test_a_new_like_moves_its_group_up_and_nothing_shows_twice():
    """v1 sent an older like again with a new id when its group gained one; a
    group is one entry, newest first, wherever it moves."""
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    s1 = services.status_create(author=alice, text="one")
    s2 = services.status_create(author=alice, text="two")
    for actor, sid, at in ((bob, s1.id, T0), (carol, s2.id, T0 + 1000)):
        notifications.notify(
            recipient=alice.id, kind="like", actor=actor.id, sid=sid, at_ms=at
        )
    client = api_client(token_for(alice))
    body, links = grouped(client)
    keys = [g["group_key"] for g in body["notification_groups"]]
    assert keys == [f"favourite-{s2.id}", f"favourite-{s1.id}"]
    top = body["notification_groups"][0]["page_max_id"]
    notifications.notify(
        recipient=alice.id, kind="like", actor=dave.id, sid=s1.id, at_ms=T0 + 2000
    )
    newer, _ = grouped(client, f"?min_id={top}")
    assert [
        (g["group_key"], g["notifications_count"]) for g in newer["notification_groups"]
    ] == [(f"favourite-{s1.id}", 2)]
    again, _ = grouped(client)
    assert [g["group_key"] for g in again["notification_groups"]] == [
        f"favourite-{s1.id}",
        f"favourite-{s2.id}",
    ]


def test_pages_follow_the_link_header_each_group_once_and_types_filter():
    alice = make_user("alice")
    people = [make_user(f"user{i:02d}") for i in range(7)]
    sids = []
    for i, user in enumerate(people):
        sid = services.status_create(author=alice, text=f"s{i}").id
        sids.append(sid)
        notifications.notify(
            recipient=alice.id, kind="like", actor=user.id, sid=sid, at_ms=T0 + i * 1000
        )
    mention = services.status_create(author=people[0], text="hi @alice")
    run_jobs()
    client = api_client(token_for(alice))
    seen, query, pages = [], "?limit=3", 0
    while query is not None:
        body, links = grouped(client, query)
        seen += [g["group_key"] for g in body["notification_groups"]]
        query = "?" + links["next"] if "next" in links else None
        pages += 1
        assert pages < 10
    assert seen[0] == f"ungrouped-{seen[0].split('-')[1]}"  # the mention, newest
    assert seen[1:] == [f"favourite-{sid}" for sid in reversed(sids)]
    assert len(set(seen)) == len(seen) == 8
    only, _ = grouped(client, "?types[]=mention")
    (group,) = only["notification_groups"]
    assert group["type"] == "mention" and group["status_id"] == str(mention.id)
    assert group["notifications_count"] == 1
    without, _ = grouped(client, "?exclude_types[]=favourite")
    assert [g["type"] for g in without["notification_groups"]] == ["mention"]


def test_follow_requests_are_not_grouped_unless_asked_and_blocked_people_leave():
    """Mastodon groups likes, reposts and follows; a follow request is one entry
    per person unless `grouped_types[]` asks for it. A group leaves out whom the
    viewer blocks, and its count with them."""
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    for i, actor in enumerate((bob, carol)):
        notifications.notify(
            recipient=alice.id, kind="follow_request", actor=actor.id, at_ms=T0 + i
        )
    for i, actor in enumerate((carol, dave)):
        notifications.notify(
            recipient=alice.id, kind="follow", actor=actor.id, at_ms=T0 + 10 + i
        )
    client = api_client(token_for(alice))
    body, _ = grouped(client)
    summary = [
        (g["type"], g["notifications_count"], g["sample_account_ids"])
        for g in body["notification_groups"]
    ]
    assert summary == [
        ("follow", 2, [str(dave.id), str(carol.id)]),
        ("follow_request", 1, [str(carol.id)]),
        ("follow_request", 1, [str(bob.id)]),
    ]
    keys = [g["group_key"] for g in body["notification_groups"]]
    assert keys[1].startswith("ungrouped-") and keys[1] != keys[2]
    asked, _ = grouped(client, "?grouped_types[]=follow_request")
    assert [
        (g["type"], g["notifications_count"]) for g in asked["notification_groups"]
    ] == [("follow", 1), ("follow", 1), ("follow_request", 2)]
    blocks.block_create(blocker=alice, blocked_id=dave.id)
    after, _ = grouped(client)
    follow = after["notification_groups"][0]
    assert follow["type"] == "follow"
    assert follow["sample_account_ids"] == [str(carol.id)]


def test_unread_count_counts_the_groups_above_the_read_mark():
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    status = services.status_create(author=alice, text="x")
    social.status_like(user=bob, sid=status.id)
    social.status_like(user=carol, sid=status.id)
    services.status_create(author=bob, text="@alice hi")
    run_jobs()
    client = api_client(token_for(alice))
    response = client.get("/api/v2/notifications/unread_count")
    assert response.status_code == 200
    assert response.json() == {"count": 2}
    assert api_client().get("/api/v2/notifications").status_code == 401
    reader = api_client(token_for(alice, scopes=("read:statuses",)))
    assert reader.get("/api/v2/notifications").status_code == 403


def _unread(client, query: str = "") -> int:
    response = client.get("/api/v2/notifications/unread_count" + query)
    assert response.status_code == 200, response.content
    return response.json()["count"]


def _three_kinds_unread(alice):
    """alice's unread groups: a like, a mention (a reply too) and a follow."""
    bob, carol = make_user("bob"), make_user("carol")
    status = services.status_create(author=alice, text="x")
    notifications.notify(
        recipient=alice.id, kind="like", actor=bob.id, sid=status.id, at_ms=T0
    )
    notifications.notify(
        recipient=alice.id, kind="like", actor=carol.id, sid=status.id, at_ms=T0 + 1
    )
    hi = services.status_create(author=bob, text="@alice hi")
    notifications.notify(
        recipient=alice.id, kind="mention", actor=bob.id, sid=hi.id, at_ms=T0 + 2
    )
    notifications.notify(
        recipient=alice.id, kind="follow", actor=carol.id, at_ms=T0 + 3
    )


def test_unread_count_counts_only_the_types_asked_for():
    """Mastodon's v2 unread count takes `types[]` and `exclude_types[]`, as the
    list does (an app's badge for mentions alone); they were ignored here, so a
    badge of mentions counted likes and follows too."""
    alice = make_user("alice")
    _three_kinds_unread(alice)
    client = api_client(token_for(alice))
    assert _unread(client) == 3
    assert _unread(client, "?types[]=mention") == 1
    assert _unread(client, "?types[]=favourite&types[]=follow") == 2
    assert _unread(client, "?exclude_types[]=favourite") == 2
    assert _unread(client, "?types[]=mention&exclude_types[]=mention") == 0
    # A type the site never sends matches nothing; an unknown one is ignored.
    assert _unread(client, "?types[]=admin.sign_up") == 0
    assert _unread(client, "?types[]=nonsense") == 3
    # The list agrees: the groups it shows for the same filter.
    listed, _ = grouped(client, "?types[]=mention")
    assert [g["type"] for g in listed["notification_groups"]] == ["mention"]
    # Still from the read mark.
    notifications.notifications_mark_read(user=alice, up_to=T0 + 2)
    assert _unread(client, "?types[]=mention") == 0
    assert _unread(client, "?exclude_types[]=mention") == 1


@pytest.mark.real_redis
def test_unread_count_with_types_costs_what_it_did_without():
    alice = make_user("alice")
    _three_kinds_unread(alice)
    client = api_client(token_for(alice))
    _unread(client)
    with RoundTripCounter() as plain:
        assert _unread(client) == 3
    with RoundTripCounter() as typed:
        assert _unread(client, "?types[]=mention&exclude_types[]=follow") == 1
    assert plain.most_per_node <= 1 and typed.most_per_node <= 1
    assert typed.count == plain.count


def test_pages_go_on_past_a_read_whose_groups_are_all_hidden():
    """A read of `limit + 1` groups that are all hidden (a muted actor's) is an
    empty page that still links on, down and up: without the links a client took
    it for the end, or polled the same hidden groups for ever (review)."""
    alice, bob, mal = (make_user(n) for n in ("alice", "bob", "mal"))
    sids = [services.status_create(author=alice, text=f"s{i}").id for i in range(5)]
    notifications.notify(
        recipient=alice.id, kind="like", actor=bob.id, sid=sids[0], at_ms=T0
    )
    for i in (1, 2, 3):
        notifications.notify(
            recipient=alice.id, kind="like", actor=mal.id, sid=sids[i], at_ms=T0 + i
        )
    blocks.mute_create(user=alice, muted_id=mal.id)
    client = api_client(token_for(alice))
    body, links = grouped(client, "?limit=2")
    seen = [g["group_key"] for g in body["notification_groups"]]
    for _ in range(5):
        if "next" not in links:
            break
        body, links = grouped(client, "?" + links["next"])
        seen += [g["group_key"] for g in body["notification_groups"]]
    assert seen == [f"favourite-{sids[0]}"]
    top = 0
    for i in (1, 2, 3):
        notifications.notify(
            recipient=alice.id,
            kind="like",
            actor=mal.id,
            sid=sids[i],
            at_ms=T0 + 10 + i,
        )
    notifications.notify(
        recipient=alice.id, kind="like", actor=bob.id, sid=sids[4], at_ms=T0 + 20
    )
    body, links = grouped(client, f"?limit=2&min_id={top}")
    found = [g["group_key"] for g in body["notification_groups"]]
    for _ in range(5):
        if f"favourite-{sids[4]}" in found or "prev" not in links:
            break
        body, links = grouped(client, "?" + links["prev"])
        found += [g["group_key"] for g in body["notification_groups"]]
    assert f"favourite-{sids[4]}" in found


def test_account_id_keeps_that_account_s_events_only():
    """As Mastodon filters before grouping: the group names that account alone and
    counts only theirs (review: it named everyone and counted the whole group)."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    status = services.status_create(author=alice, text="x")
    social.status_like(user=bob, sid=status.id)
    social.status_like(user=carol, sid=status.id)
    run_jobs()
    body, _ = grouped(api_client(token_for(alice)), f"?account_id={bob.id}")
    (group,) = body["notification_groups"]
    assert group["sample_account_ids"] == [str(bob.id)]
    assert group["notifications_count"] == 1
    assert [a["id"] for a in body["accounts"]] == [str(bob.id)]


def test_one_group_is_read_its_accounts_listed_and_dismissed_whole():
    """A group by its key (`/api/v2/notifications/:group_key`), its accounts, and
    its dismissal, which takes the whole group out, on the page too (Mastodon.py's
    grouped_notification, grouped_notification_accounts and
    dismiss_grouped_notification; they were 404s)."""
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    status = services.status_create(author=alice, text="liked")
    social.status_like(user=bob, sid=status.id)
    social.status_like(user=carol, sid=status.id)
    mention = services.status_create(author=dave, text="hi @alice")
    run_jobs()
    client = api_client(token_for(alice))
    body, _ = grouped(client)
    keys = [g["group_key"] for g in body["notification_groups"]]
    liked = f"favourite-{status.id}"
    (single,) = [k for k in keys if k.startswith("ungrouped-")]
    one = client.get(f"/api/v2/notifications/{liked}")
    assert one.status_code == 200
    (group,) = one.json()["notification_groups"]
    assert (group["group_key"], group["notifications_count"]) == (liked, 2)
    assert {a["id"] for a in one.json()["accounts"]} == {str(bob.id), str(carol.id)}
    accounts = client.get(f"/api/v2/notifications/{liked}/accounts")
    assert [a["id"] for a in accounts.json()] == [str(carol.id), str(bob.id)]
    mentioned = client.get(f"/api/v2/notifications/{single}").json()
    assert mentioned["notification_groups"][0]["status_id"] == str(mention.id)
    assert client.post(f"/api/v2/notifications/{liked}/dismiss").json() == {}
    assert client.get(f"/api/v2/notifications/{liked}").status_code == 404
    after, _ = grouped(client)
    assert [g["group_key"] for g in after["notification_groups"]] == [single]
    assert client.post(f"/api/v2/notifications/{single}/dismiss").status_code == 200
    assert grouped(client)[0]["notification_groups"] == []
    for bad in ("favourite-1", "nonsense-1", "ungrouped-5"):
        assert client.get(f"/api/v2/notifications/{bad}").status_code == 404
    # Someone else's group is not yours to read or dismiss.
    other = api_client(token_for(bob))
    social.status_like(user=alice, sid=services.status_create(author=bob, text="b").id)
    run_jobs()
    theirs = grouped(other)[0]["notification_groups"][0]["group_key"]
    assert client.get(f"/api/v2/notifications/{theirs}").status_code == 404


def test_a_dismissal_answers_as_mastodon_and_keeps_later_events_unread():
    """Dismiss answers `{}` however often it is asked, and tells nothing of a
    group hidden from the viewer (a 404 there said a muted account had liked);
    once the top group goes, an event told later is unread, whatever its time
    (review: the read mark stayed at the dismissed group's place)."""
    alice, bob, carol, mal = (make_user(n) for n in ("alice", "bob", "carol", "mal"))
    s = services.status_create(author=alice, text="x")
    notifications.notify(
        recipient=alice.id, kind="like", actor=bob.id, sid=s.id, at_ms=T0
    )
    notifications.notify(
        recipient=alice.id, kind="follow", actor=carol.id, at_ms=T0 + 10
    )
    client = api_client(token_for(alice))
    body, _ = grouped(client)
    follow_key = body["notification_groups"][0]["group_key"]
    notifications.notifications_mark_read(user=alice, up_to=T0 + 10)
    for _ in range(2):
        answer = client.post(f"/api/v2/notifications/{follow_key}/dismiss")
        assert (answer.status_code, answer.json()) == (200, {})
    notifications.notify(
        recipient=alice.id, kind="repost", actor=bob.id, sid=s.id, at_ms=T0 + 5
    )
    assert client.get("/api/v2/notifications/unread_count").json() == {"count": 1}
    # A muted liker's group: dismissing it says no more than reading it does.
    t = services.status_create(author=alice, text="y")
    notifications.notify(
        recipient=alice.id, kind="like", actor=mal.id, sid=t.id, at_ms=T0 + 20
    )
    blocks.mute_create(user=alice, muted_id=mal.id)
    hidden = f"favourite-{t.id}"
    assert client.get(f"/api/v2/notifications/{hidden}").status_code == 404
    assert client.post(f"/api/v2/notifications/{hidden}/dismiss").status_code == 200
    assert client.post("/api/v2/notifications/favourite-1/dismiss").status_code == 200
    assert client.get(f"/api/v2/notifications/{hidden}/accounts").json() == []


def test_v1_unread_count_counts_the_unread_events():
    """`/api/v1/notifications/unread_count` (Mastodon 4.3, Mastodon.py's
    notifications_unread_count; it was a 404): the events of the groups above
    the read mark, each group's older actors too, at most `limit` (100, at most
    1000)."""
    alice = make_user("alice")
    status = services.status_create(author=alice, text="x")
    for i in range(9):
        liker = make_user(f"liker{i}")
        notifications.notify(
            recipient=alice.id, kind="like", actor=liker.id, sid=status.id, at_ms=T0 + i
        )
    client = api_client(token_for(alice))
    assert client.get("/api/v1/notifications/unread_count").json() == {"count": 9}
    assert client.get("/api/v1/notifications/unread_count?limit=4").json() == {
        "count": 4
    }
    notifications.notifications_mark_read(user=alice, up_to=T0 + 100)
    assert client.get("/api/v1/notifications/unread_count").json() == {"count": 0}
    assert api_client().get("/api/v1/notifications/unread_count").status_code == 401


def _v1_unread(client, query: str = "") -> int:
    response = client.get("/api/v1/notifications/unread_count" + query)
    assert response.status_code == 200, response.content
    return response.json()["count"]


def test_v1_unread_count_counts_only_the_types_asked_for_up_to_limit():
    """Mastodon's v1 count takes `types[]`, `exclude_types[]` and `limit`, as its
    list does: they were ignored but `limit`, so a badge of mentions counted
    every like and follow."""
    alice = make_user("alice")
    _three_kinds_unread(alice)  # two likes of one status, a mention, a follow
    client = api_client(token_for(alice))
    assert _v1_unread(client) == 4
    assert _v1_unread(client, "?types[]=mention") == 1
    assert _v1_unread(client, "?types[]=favourite") == 2
    assert _v1_unread(client, "?exclude_types[]=favourite") == 2
    assert _v1_unread(client, "?types[]=favourite&types[]=follow&limit=2") == 2
    assert _v1_unread(client, "?exclude_types[]=mention&limit=1") == 1
    assert _v1_unread(client, "?types[]=admin.sign_up") == 0
    assert _v1_unread(client, "?limit=3") == 3
    # The v1 list agrees: the events it shows for the same filter.
    listed = client.get("/api/v1/notifications?exclude_types[]=favourite").json()
    assert len(listed) == 2
    notifications.notifications_mark_read(user=alice, up_to=T0 + 2)
    assert _v1_unread(client, "?types[]=mention") == 0
    assert _v1_unread(client, "?types[]=follow") == 1


def test_v1_unread_count_takes_account_id_as_its_list_does():
    """Mastodon's v1 count counts what its list would show from the marker, and
    the list takes `account_id` (that account's events alone): the count ignored
    it, so an app's count of one account's notifications counted everyone's."""
    alice = make_user("alice")
    _three_kinds_unread(alice)  # bob: a like and a mention; carol: a like, a follow
    client = api_client(token_for(alice))
    listed = client.get("/api/v1/notifications").json()
    by = {n["account"]["username"]: n["account"]["id"] for n in listed}
    for name, count in (("bob", 2), ("carol", 2)):
        query = f"?account_id={by[name]}"
        assert _v1_unread(client, query) == count, name
        assert len(client.get("/api/v1/notifications" + query).json()) == count
    assert _v1_unread(client, f"?account_id={by['bob']}&types[]=favourite") == 1
    assert _v1_unread(client, f"?account_id={by['bob']}&limit=1") == 1
    assert _v1_unread(client, "?account_id=nobody") == 0


def test_v2_unread_count_takes_limit_and_grouped_types_as_the_list_groups():
    """Mastodon's v2 count counts the entries its list would show from the mark:
    a group of a type `grouped_types[]` leaves out counts its every event, and
    it stops at `limit` (100 unless said, at most 1000). Both were ignored."""
    alice = make_user("alice")
    _three_kinds_unread(alice)
    client = api_client(token_for(alice))
    for query, count in (
        ("", 3),
        ("?limit=2", 2),
        ("?grouped_types[]=follow", 4),  # the two likes each an entry
        ("?grouped_types[]=favourite", 3),
        ("?grouped_types[]=follow&types[]=favourite", 2),
        ("?grouped_types[]=reblog&limit=3", 3),
    ):
        assert _unread(client, query) == count, query
        if "limit" not in query:
            listed, _ = grouped(client, query)
            assert len(listed["notification_groups"]) == count, query


def test_unread_counts_reach_their_limit_past_a_group_no_type_lists():
    """ "Bob approved your follow request" has no Mastodon type: neither list shows
    it, so neither count counts it, nor may it take a place of `limit`: with it
    the oldest unread, then a like, `limit=1` counts the like (it counted 0, the
    groups read stopping at `limit` whatever they counted)."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    status = services.status_create(author=alice, text="x")
    notifications.notify(
        recipient=alice.id, kind="follow_approved", actor=bob.id, at_ms=T0
    )
    notifications.notify(
        recipient=alice.id, kind="like", actor=carol.id, sid=status.id, at_ms=T0 + 1
    )
    client = api_client(token_for(alice))
    assert _unread(client) == 1
    assert _v1_unread(client) == 1
    assert _unread(client, "?limit=1") == 1
    assert _v1_unread(client, "?limit=1") == 1


@pytest.mark.real_redis
def test_unread_counts_with_limit_and_grouping_cost_what_they_did_without():
    alice = make_user("alice")
    _three_kinds_unread(alice)
    client = api_client(token_for(alice))
    _unread(client)
    with RoundTripCounter() as plain:
        assert _unread(client) == 3
    with RoundTripCounter() as v2:
        assert _unread(client, "?grouped_types[]=follow&limit=3") == 3
    with RoundTripCounter() as v1:
        assert _v1_unread(client, "?types[]=favourite&limit=5") == 2
    for counted in (plain, v2, v1):
        assert counted.most_per_node <= 1
        assert counted.count == plain.count
