"""Lists on the site: a reader groups some of the people they follow and reads them
as a timeline of their own, with the home's rules (blocks, mutes, privacy, keyword
filters) and replies as the list says; someone unfollowed or blocked leaves it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.selectors import PageReads
from accounts.services import session_create
from config.redis import is_cluster
from tests.helpers import (
    PASSWORD,
    body,
    logged_in_client,
    make_user,
    page,
    run_jobs,
)
from tests.roundtrips import RoundTripCounter
from tests.timeline.test_edits import texts
from timeline import blocks, filters, keys, lists, privacy, selectors, services, social
from timeline.domain import NotFound
from timeline.lists import ListRefused, NotFollowed


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    """Bob follows alice and carol, not dave."""
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    run_jobs()
    return alice, bob, carol, dave


def post(user, text: str, reply_to: int | None = None) -> int:
    if reply_to is not None:
        sid = social.status_reply(author=user, sid=reply_to, text=text).id
    else:
        sid = services.status_create(author=user, text=text).id
    run_jobs()
    return sid


def friends(bob, *members) -> int:
    lid = lists.list_create(uid=bob.id, title="Friends").id
    if members:
        lists.members_add(uid=bob.id, lid=lid, member_ids=[m.id for m in members])
    return lid


def shown(client, lid: int, query: str = "") -> list[str]:
    return texts(page(client, f"/lists/{lid}/{query}"))


def members_shown(html: str) -> list[str]:
    return re.findall(r'aria-label="Take @(\w+) off the list"', html)


# The service: lists, members, caps.


def test_a_list_keeps_its_fields_and_ids_are_never_given_twice(r, people):
    _, bob, _, _ = people
    made = lists.list_create(
        uid=bob.id, title="  Close\nfriends ", replies_policy="none"
    )
    assert (made.title, made.replies_policy, made.exclusive) == (
        "Close friends",
        "none",
        False,
    )
    changed = lists.list_update(uid=bob.id, lid=made.id, exclusive=True)
    assert changed.exclusive and changed.title == "Close friends"
    assert lists.lists_get(uid=bob.id) == [changed]
    lists.list_delete(uid=bob.id, lid=made.id)
    assert lists.lists_get(uid=bob.id) == []
    assert lists.list_create(uid=bob.id, title="again").id > made.id
    with pytest.raises(NotFound):
        lists.list_update(uid=bob.id, lid=made.id, title="gone")
    with pytest.raises(NotFound):
        lists.members_add(uid=bob.id, lid=made.id, member_ids=[1])
    with pytest.raises(ListRefused):
        lists.list_create(uid=bob.id, title=" ")
    with pytest.raises(ListRefused):
        lists.list_create(uid=bob.id, title="x", replies_policy="all")


def test_only_people_followed_can_be_added_all_or_none(r, people):
    alice, bob, _, dave = people
    lid = friends(bob)
    with pytest.raises(NotFollowed):
        lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, dave.id])
    assert lists.members_get(uid=bob.id, lid=lid) == ()
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, alice.id])
    assert lists.members_get(uid=bob.id, lid=lid) == (alice.id,)


def test_the_caps_refuse_with_a_message(r, people, monkeypatch):
    alice, bob, carol, _ = people
    monkeypatch.setattr(lists, "LISTS_MAX", 2)
    first, _ = (lists.list_create(uid=bob.id, title=t).id for t in ("a", "b"))
    with pytest.raises(ListRefused, match="2 lists"):
        lists.list_create(uid=bob.id, title="c")
    monkeypatch.setattr(lists, "LIST_MEMBERS_MAX", 1)
    lists.members_add(uid=bob.id, lid=first, member_ids=[alice.id])
    with pytest.raises(ListRefused, match="at most 1 accounts"):
        lists.members_add(uid=bob.id, lid=first, member_ids=[carol.id])
    monkeypatch.setattr(lists, "LIST_MEMBERS_MAX", 10)
    monkeypatch.setattr(lists, "MEMBERSHIPS_MAX", 2)
    lists.members_add(uid=bob.id, lid=first, member_ids=[carol.id])
    second = lists.lists_get(uid=bob.id)[1].id
    with pytest.raises(ListRefused, match="2 members in all"):
        lists.members_add(uid=bob.id, lid=second, member_ids=[alice.id])
    # A deleted list's memberships go with it: room again.
    lists.list_delete(uid=bob.id, lid=first)
    lists.members_add(uid=bob.id, lid=second, member_ids=[alice.id, carol.id])
    assert r.zcard(keys.list_members(bob.id)) == 2


def test_a_full_list_first_drops_those_no_longer_followed(r, people, monkeypatch):
    """An unfollow cut short before its last step leaves entries behind; an add
    that finds the lists full drops them first."""
    alice, bob, carol, _ = people
    monkeypatch.setattr(lists, "MEMBERSHIPS_MAX", 1)
    lid = friends(bob, alice)
    r.zrem(keys.following(bob.id), alice.id)  # the unfollow's first step only
    lists.members_add(uid=bob.id, lid=lid, member_ids=[carol.id])
    assert r.zrange(keys.list_members(bob.id), 0, -1) == [f"{lid}:{carol.id}"]


# Unfollow and block.


def test_unfollow_takes_them_off_the_list_and_its_timeline(r, people):
    alice, bob, carol, _ = people
    lid = friends(bob, alice, carol)
    post(alice, "from alice")
    post(carol, "from carol")
    client = logged_in_client("bob")
    assert shown(client, lid) == ["from carol", "from alice"]
    services.follow_delete(follower=bob, followee_id=alice.id)
    run_jobs()
    assert shown(client, lid) == ["from carol"]
    assert members_shown(page(client, f"/lists/{lid}/")) == ["carol"]
    assert r.zrange(keys.list_members(bob.id), 0, -1) == [f"{lid}:{carol.id}"]
    # Followed again, they are not on the list again by themselves.
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    assert shown(client, lid) == ["from carol"]


def test_an_unfollow_cut_short_is_hidden_at_read(r, people):
    """The entry stays when the last step did not run; no read shows it."""
    alice, bob, carol, _ = people
    lid = friends(bob, alice, carol)
    post(alice, "from alice")
    r.zrem(keys.following(bob.id), alice.id)
    client = logged_in_client("bob")
    assert shown(client, lid) == []
    assert members_shown(page(client, f"/lists/{lid}/")) == ["carol"]
    assert lists.members_get(uid=bob.id, lid=lid) == (carol.id,)


def test_a_block_either_way_takes_them_off(r, people):
    alice, bob, carol, _ = people
    lid = friends(bob, alice, carol)
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    blocks.block_create(blocker=carol, blocked_id=bob.id)
    run_jobs()
    assert r.zcard(keys.list_members(bob.id)) == 0
    assert lists.members_get(uid=bob.id, lid=lid) == ()


def test_the_account_deletion_takes_the_lists(r, people):
    alice, bob, _, _ = people
    friends(bob, alice)
    assert r.exists(keys.lists(bob.id)) and r.exists(keys.list_members(bob.id))
    services.account_delete(user=bob, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert not r.exists(keys.lists(bob.id))
    assert not r.exists(keys.list_members(bob.id))


def test_a_deleted_member_is_never_shown(r, people):
    alice, bob, carol, _ = people
    lid = friends(bob, alice, carol)
    post(alice, "from alice")
    services.account_delete(user=alice, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    client = logged_in_client("bob")
    assert shown(client, lid) == []
    assert members_shown(page(client, f"/lists/{lid}/")) == ["carol"]


# The timeline.


def test_paging_across_members_repeats_and_skips_nothing(r, people, settings):
    alice, bob, carol, dave = people
    settings.TIMELINE_PAGE_SIZE = 4
    services.follow_create(follower=bob, followee_id=dave.id)
    lid = friends(bob, alice, carol, dave)
    authors = [alice, carol, carol, dave, alice, alice, dave, carol, alice, dave]
    for n, author in enumerate(authors):
        post(author, f"status {n}")
    post(make_user("erin"), "not on the list")
    client = logged_in_client("bob")
    seen: list[str] = []
    url = f"/lists/{lid}/"
    while url:
        html = page(client, url)
        seen += texts(html)
        older = re.search(r'href="\?max_id=(\d+)"', html)
        url = f"/lists/{lid}/?max_id={older[1]}" if older else None
    assert seen == [f"status {n}" for n in reversed(range(len(authors)))]


def test_a_repost_of_a_members_status_shows_it_once_where_it_was_posted(
    r, people, settings
):
    """As the home: a member's status reposted by another member shows once, at
    the original's place, on whichever page that falls (not again at the top, nor
    twice across pages); reposted past the falloff, it shows again at the top."""
    alice, bob, carol, _ = people
    settings.TIMELINE_PAGE_SIZE = 2
    lid = friends(bob, alice, carol)
    first = post(alice, "by alice")
    post(carol, "carol 1")
    post(carol, "carol 2")
    social.status_repost(user=carol, sid=first)
    run_jobs()
    client = logged_in_client("bob")
    seen: list[str] = []
    url = f"/lists/{lid}/"
    while url:
        html = page(client, url)
        seen += texts(html)
        older = re.search(r'href="\?max_id=(\d+)"', html)
        url = f"/lists/{lid}/?max_id={older[1]}" if older else None
    assert seen == ["carol 2", "carol 1", "by alice"]
    settings.HOME_REPOST_FALLOFF = 1
    assert shown(client, lid) == ["by alice", "carol 2"]


def test_a_repost_of_a_reply_the_policy_leaves_out_still_shows(r, people):
    alice, bob, carol, dave = people
    lid = friends(bob, alice, carol)
    reply = post(alice, "to dave", reply_to=post(dave, "dave asks"))
    social.status_repost(user=carol, sid=reply)
    run_jobs()
    assert shown(logged_in_client("bob"), lid) == ["to dave"]


def test_replies_as_the_policy_says(r, people):
    alice, bob, carol, dave = people
    lid = friends(bob, alice)
    asks = {u.username: post(u, f"{u.username} asks") for u in (carol, dave, alice)}
    to_bob = post(bob, "bob asks")
    for name, sid in asks.items():
        post(alice, f"reply to {name}", reply_to=sid)
    post(alice, "reply to bob", reply_to=to_bob)
    client = logged_in_client("bob")

    def replies(policy: str) -> list[str]:
        lists.list_update(uid=bob.id, lid=lid, replies_policy=policy)
        return [t.split()[-1] for t in shown(client, lid) if "reply to" in t]

    # To herself and to the owner always; to dave (not followed) never.
    assert replies("none") == ["bob", "alice"]
    assert replies("list") == ["bob", "alice"]
    assert replies("followed") == ["bob", "alice", "carol"]
    lists.members_add(uid=bob.id, lid=lid, member_ids=[carol.id])
    assert replies("list") == ["bob", "alice", "carol"]
    assert "alice asks" in shown(client, lid)  # no reply: always


def test_followed_replies_past_what_the_first_round_trip_reads(r, people, monkeypatch):
    """A reader who follows more than FOLLOWING_READ_MAX: their followees are asked
    about the page's replies in one more round trip, with the same answer."""
    alice, bob, carol, dave = people
    monkeypatch.setattr(lists, "FOLLOWING_READ_MAX", 1)
    lid = lists.list_create(uid=bob.id, title="F", replies_policy="followed").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    post(alice, "reply to carol", reply_to=post(carol, "carol asks"))
    post(alice, "reply to dave", reply_to=post(dave, "dave asks"))
    assert shown(logged_in_client("bob"), lid) == ["reply to carol"]


def test_blocks_and_mutes_leave_statuses_out(r, people):
    alice, bob, carol, dave = people
    lid = friends(bob, alice, carol)
    erin = make_user("erin")
    post(alice, "hello @dave")
    original = post(erin, "by erin")
    social.status_repost(user=alice, sid=original)
    run_jobs()
    post(carol, "from carol")
    client = logged_in_client("bob")
    assert shown(client, lid) == ["from carol", "by erin", "hello @dave"]
    blocks.mute_create(user=bob, muted_id=carol.id)
    blocks.block_create(blocker=erin, blocked_id=bob.id)
    blocks.mute_create(user=bob, muted_id=dave.id)
    run_jobs()
    # Carol muted; erin's repost across her block; the status naming dave muted.
    assert shown(client, lid) == []


def test_a_private_member_shows_to_their_approved_follower(r, people):
    alice, bob, _, _ = people
    frank = make_user("frank")
    privacy.account_privacy_set(user=frank, private=True)
    run_jobs()
    assert services.follow_ask(follower=bob, followee_id=frank.id) == "requested"
    lid = friends(bob, alice)
    with pytest.raises(NotFollowed):
        lists.members_add(uid=bob.id, lid=lid, member_ids=[frank.id])
    privacy.follow_request_approve(owner=frank, requester_id=bob.id)
    run_jobs()
    lists.members_add(uid=bob.id, lid=lid, member_ids=[frank.id])
    post(frank, "for my followers")
    assert shown(logged_in_client("bob"), lid) == ["for my followers"]


def test_a_repost_of_an_original_gone_private_is_left_out(r, people):
    alice, bob, _, _ = people
    erin = make_user("erin")
    lid = friends(bob, alice)
    original = post(erin, "erin, public for now")
    social.status_repost(user=alice, sid=original)
    post(alice, "alice own")
    client = logged_in_client("bob")
    assert shown(client, lid) == ["alice own", "erin, public for now"]
    # Before the sweep that removes such reposts has run, the page leaves it out.
    privacy.account_privacy_set(user=erin, private=True)
    assert shown(client, lid) == ["alice own"]


def test_home_keyword_filters_apply(r, people):
    alice, bob, _, _ = people
    lid = friends(bob, alice)
    filters.filter_create(
        uid=bob.id,
        title="Dragons",
        context=["home"],
        action="hide",
        keywords=[filters.KeywordChange("dragon")],
    )
    post(alice, "a dragon!")
    post(alice, "a cat")
    assert shown(logged_in_client("bob"), lid) == ["a cat"]


@pytest.mark.real_redis
def test_a_list_page_costs_two_round_trips_on_one_server(r, people, redis_backend):
    alice, bob, carol, _ = people
    lid = friends(bob, alice, carol)
    post(alice, "one")
    post(carol, "two")
    client = logged_in_client("bob")
    client.get(f"/lists/{lid}/")
    with RoundTripCounter() as counter:
        assert shown(client, lid) == ["two", "one"]
    if redis_backend == "real":
        assert counter.count == 2
    else:
        # A Cluster: the members' ids (with their names), the statuses, the cards.
        assert counter.count == 4
        assert counter.most_per_node <= 1


# Exclusive lists (Mastodon's `exclusive`): their members leave the home.


def home_texts(client, query: str = "") -> list[str]:
    return texts(page(client, f"/{query}"))


def test_an_exclusive_lists_members_leave_the_home_but_stay_on_the_list(r, people):
    """An exclusive list's members' statuses, and their reposts, show on the list's
    page and not in the home; someone else's repost of one shows (Mastodon's rule:
    by whose status it is); the owner's own statuses stay; taking `exclusive` off
    brings them back at once."""
    alice, bob, carol, dave = people
    lid = friends(bob, alice)
    other = lists.list_create(uid=bob.id, title="Also alice").id
    lists.members_add(uid=bob.id, lid=other, member_ids=[alice.id])
    post(carol, "by carol")
    post(alice, "by alice")
    social.status_repost(user=alice, sid=post(dave, "daves"))
    post(bob, "by bob")
    run_jobs()
    client = logged_in_client("bob")
    everything = ["by bob", "daves", "by alice", "by carol"]
    assert home_texts(client) == everything  # no list is exclusive yet
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    assert home_texts(client) == ["by bob", "by carol"]
    assert shown(client, lid) == ["daves", "by alice"]
    assert shown(client, other) == ["daves", "by alice"]
    social.status_repost(user=carol, sid=post(alice, "alice again"))
    run_jobs()
    assert home_texts(client) == ["alice again", "by bob", "by carol"]
    lists.list_update(uid=bob.id, lid=lid, exclusive=False)
    assert home_texts(client) == ["alice again", *everything]


def test_a_home_page_an_exclusive_list_empties_reads_on_below_it(
    r, people, settings, monkeypatch
):
    """The fan-out keeps members out, and making a list exclusive sweeps the home;
    a sweep cut short (a crash between the two steps) leaves statuses that the home
    read leaves out: a page they were all of reads on below them (an empty page
    reads as the home's end)."""
    alice, bob, carol, _ = people
    settings.TIMELINE_PAGE_SIZE = 2
    lid = friends(bob, alice)
    post(carol, "carol 1")
    post(carol, "carol 2")
    post(alice, "alice 1")
    post(alice, "alice 2")
    monkeypatch.setattr(lists, "_home_sync", lambda uid, *, came, left: None)
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    client = logged_in_client("bob")
    html = page(client, "/")
    assert texts(html) == ["carol 2", "carol 1"]


def test_entries_written_by_hand_break_no_home(r, people):
    """A member entry that names no account, or a list no page can read (no
    title), as a hand edit might leave them: the home still shows, and leaves out
    only the members of the exclusive lists its owner can see (and undo)."""
    alice, bob, carol, _ = people
    lid = friends(bob, alice)
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    r.zadd(keys.list_members(bob.id), {f"{lid}:someone": 0})
    r.hset(keys.lists(bob.id), "7", '{"exclusive":true}')
    r.zadd(keys.list_members(bob.id), {f"7:{carol.id}": 0})
    post(carol, "by carol")
    post(alice, "by alice")
    client = logged_in_client("bob")
    assert [entry.id for entry in lists.lists_get(uid=bob.id)] == [lid]
    assert home_texts(client) == ["by carol"]
    assert shown(client, lid) == ["by alice"]


@pytest.mark.real_redis
def test_an_exclusive_list_costs_the_home_no_round_trip(r, people, redis_backend):
    alice, bob, carol, _ = people
    post(alice, "one")
    post(carol, "two")
    client = logged_in_client("bob")
    client.get("/")
    with RoundTripCounter() as plain:
        assert home_texts(client) == ["two", "one"]
    lists.list_update(uid=bob.id, lid=friends(bob, alice), exclusive=True)
    client.get("/")
    with RoundTripCounter() as exclusive:
        assert home_texts(client) == ["two"]
    assert exclusive.count == plain.count
    assert plain.count == (1 if redis_backend == "real" else 3)


# The pages.


def test_make_rename_and_delete_lists_on_the_lists_page(r, people):
    _, bob, _, _ = people
    client = logged_in_client("bob")
    assert "No lists yet." in page(client, "/lists/")
    made = client.post("/lists/new/", {"title": "Friends", "replies_policy": "none"})
    assert made.status_code == 302
    (entry,) = lists.lists_get(uid=bob.id)
    assert (entry.title, entry.replies_policy) == ("Friends", "none")
    html = page(client, "/lists/")
    assert "Friends" in html and "No replies to others" in html
    renamed = client.post(
        f"/lists/{entry.id}/edit/",
        {f"list{entry.id}-title": "Pals", f"list{entry.id}-replies_policy": "list"},
    )
    assert renamed.status_code == 302
    assert lists.lists_get(uid=bob.id)[0].title == "Pals"
    assert client.post(f"/lists/{entry.id}/delete/").status_code == 302
    assert lists.lists_get(uid=bob.id) == []


def test_the_lists_page_makes_a_list_exclusive_and_back(r, people):
    _, bob, _, _ = people
    client = logged_in_client("bob")
    html = page(client, "/lists/")
    assert 'name="exclusive"' in html and "Leave its members out of your home" in html
    made = client.post(
        "/lists/new/", {"title": "Work", "replies_policy": "list", "exclusive": "on"}
    )
    assert made.status_code == 302
    (entry,) = lists.lists_get(uid=bob.id)
    assert entry.exclusive
    html = page(client, "/lists/")
    assert "Exclusive: not in your home" in html
    assert re.search(rf'name="list{entry.id}-exclusive"[^>]*checked', html)
    saved = client.post(
        f"/lists/{entry.id}/edit/",
        {f"list{entry.id}-title": "Work", f"list{entry.id}-replies_policy": "list"},
    )
    assert saved.status_code == 302
    assert not lists.lists_get(uid=bob.id)[0].exclusive
    assert "Exclusive: not in your home" not in page(client, "/lists/")


def test_errors_keep_what_was_typed(r, people, monkeypatch):
    _, bob, _, _ = people
    client = logged_in_client("bob")
    blank = client.post("/lists/new/", {"title": "", "replies_policy": "followed"})
    assert blank.status_code == 400
    assert 'value="followed" selected' in body(blank)
    lid = friends(bob)
    long = "x" * 101
    failed = client.post(
        f"/lists/{lid}/edit/",
        {f"list{lid}-title": long, f"list{lid}-replies_policy": "none"},
    )
    assert failed.status_code == 400
    assert f'value="{long}"' in body(failed)
    assert lists.lists_get(uid=bob.id)[0].title == "Friends"
    monkeypatch.setattr(lists, "LISTS_MAX", 1)
    full = client.post("/lists/new/", {"title": "Second <b>", "replies_policy": "list"})
    assert full.status_code == 400
    assert "1 lists, the most" in body(full)
    assert 'value="Second &lt;b&gt;"' in body(full)


def test_the_list_page_shows_members_and_takes_one_off(r, people):
    alice, bob, carol, _ = people
    lid = friends(bob, alice, carol)
    client = logged_in_client("bob")
    assert members_shown(page(client, f"/lists/{lid}/")) == ["alice", "carol"]
    removed = client.post(f"/lists/{lid}/members/{alice.id}/remove/")
    assert removed.status_code == 302
    assert members_shown(page(client, f"/lists/{lid}/")) == ["carol"]


def test_another_users_list_is_not_found_and_visitors_log_in(r, people):
    alice, bob, _, _ = people
    lid = friends(bob, alice)
    assert logged_in_client("alice").get(f"/lists/{lid}/").status_code == 404
    assert logged_in_client("bob").get("/lists/99/").status_code == 404
    visitor = Client().get(f"/lists/{lid}/")
    assert visitor.status_code == 302 and "/login/" in visitor["Location"]
    assert Client().get("/lists/").status_code == 302


def test_add_from_a_profile_only_while_following(r, people):
    alice, bob, _, dave = people
    client = logged_in_client("bob")
    assert "Make a list" in page(client, "/u/alice/")
    assert "Add @alice to a list" not in page(client, "/u/alice/")
    lid = friends(bob)
    html = page(client, "/u/alice/")
    assert "Add @alice to a list" in html and f'<option value="{lid}">' in html
    assert "to a list" not in page(client, "/u/dave/")
    assert "to a list" not in page(client, "/u/bob/")
    added = client.post("/u/alice/lists/add/", {"list": str(lid)})
    assert added.status_code == 302
    assert lists.members_get(uid=bob.id, lid=lid) == (alice.id,)
    # Not followed (a form kept open in another tab): refused with a message.
    refused = client.post("/u/dave/lists/add/", {"list": str(lid)}, follow=True)
    assert "You must follow this account" in body(refused)
    assert lists.members_get(uid=bob.id, lid=lid) == (alice.id,)


def test_every_change_is_a_csrf_protected_post(r, people):
    alice, bob, _, _ = people
    lid = friends(bob, alice)
    client = logged_in_client("bob", enforce_csrf_checks=True)
    for url in (
        "/lists/new/",
        f"/lists/{lid}/edit/",
        f"/lists/{lid}/delete/",
        f"/lists/{lid}/members/{alice.id}/remove/",
        "/u/alice/lists/add/",
    ):
        assert client.post(url, {"title": "x", "list": lid}).status_code == 403, url
        assert client.get(url).status_code == 405, url
    assert len(lists.lists_get(uid=bob.id)) == 1
    assert lists.members_get(uid=bob.id, lid=lid) == (alice.id,)


def test_the_navigation_links_to_lists(r, people):
    assert 'href="/lists/">Lists</a>' in page(logged_in_client("bob"), "/")
    assert 'href="/lists/"' not in page(Client(), "/")


def test_two_changes_of_a_list_at_once_keep_both(r, people, monkeypatch):
    """One request renames a list while another changes its replies: the second,
    made from what it read before the first wrote, must not write the old title
    back (the step wrote the whole list it had read)."""
    _, bob, _, _ = people
    lid = friends(bob)
    write = lists._write
    raced: list[int] = []

    def racing(uid, op, lid_, value="", uids=()):
        if op == "set" and not raced:
            raced.append(1)  # the other request lands between read and write
            other = lists.List(lid, "Renamed", "list", False).own_json()
            write(uid, "set", lid, other)
        return write(uid, op, lid_, value, uids)

    monkeypatch.setattr(lists, "_write", racing)
    lists.list_update(uid=bob.id, lid=lid, replies_policy="none")
    (found,) = lists.lists_get(uid=bob.id)
    assert (found.title, found.replies_policy) == ("Renamed", "none")


# Exclusive lists at fan-out (Mastodon's `FeedManager#filter_from_home`): members'
# statuses never enter the home, so they take none of its cap.


def home_ids(r, user) -> set[int]:
    return {int(sid) for sid in r.zrange(keys.home(user.id), 0, -1)}


def test_a_busy_exclusive_member_pushes_nobody_out_of_the_home(r, people, settings):
    """Mastodon leaves an exclusive list's members out of a home as it inserts
    statuses, so the home's cap holds only what it shows: a news account put on an
    exclusive list no longer empties the home it was to leave."""
    alice, bob, carol, _ = people
    settings.HOME_TIMELINE_CAP = 10
    lid = friends(bob, alice)
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    post(carol, "by carol")
    for n in range(10):
        post(alice, f"news {n}")
    client = logged_in_client("bob")
    assert home_texts(client) == ["by carol"]
    assert len(shown(client, lid)) == 10


def test_the_fanout_keeps_members_and_their_reposts_out_of_the_home(r, people):
    """Pushed to every follower but the owner of an exclusive list with the author
    on it (on one server by the followers' walk, on a Cluster by each reader's
    slot); a member's repost stays out, another's repost of a member's status goes
    in (by whose status it is); the owner's other followers get everything."""
    alice, bob, carol, dave = people
    services.follow_create(follower=dave, followee_id=alice.id)
    services.follow_create(follower=dave, followee_id=carol.id)
    run_jobs()
    lid = friends(bob, alice)
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    by_alice = post(alice, "by alice")
    alice_repost = social.status_repost(user=alice, sid=post(carol, "by carol")).id
    run_jobs()
    carol_repost = social.status_repost(user=carol, sid=by_alice).id
    run_jobs()
    held = home_ids(r, bob)
    assert by_alice not in held and alice_repost not in held
    assert carol_repost in held
    assert {by_alice, alice_repost, carol_repost} <= home_ids(r, dave)
    assert home_texts(logged_in_client("bob")) == ["by alice", "by carol"]


def test_making_a_list_exclusive_sweeps_the_home_and_undoing_it_backfills(r, people):
    alice, bob, carol, _ = people
    lid = friends(bob, alice)
    first = post(alice, "alice 1")
    second = post(alice, "alice 2")
    by_carol = post(carol, "by carol")
    assert {first, second, by_carol} <= home_ids(r, bob)
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    assert home_ids(r, bob) == {by_carol}
    lists.list_update(uid=bob.id, lid=lid, exclusive=False)
    assert home_ids(r, bob) == {first, second, by_carol}


def test_members_added_are_swept_and_members_taken_off_come_back(r, people):
    """Adding to an exclusive list sweeps; taking off, or deleting the list, brings
    their newest back, but not while they are on another exclusive list or
    muted."""
    alice, bob, carol, _ = people
    lid = lists.list_create(uid=bob.id, title="News", exclusive=True).id
    by_alice, by_carol = post(alice, "by alice"), post(carol, "by carol")
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id, carol.id])
    assert home_ids(r, bob) == set()
    other = lists.list_create(uid=bob.id, title="Also", exclusive=True).id
    lists.members_add(uid=bob.id, lid=other, member_ids=[alice.id])
    lists.members_remove(uid=bob.id, lid=lid, member_ids=[alice.id, carol.id])
    assert home_ids(r, bob) == {by_carol}  # alice is on "Also" still
    blocks.mute_create(user=bob, muted_id=alice.id)
    lists.list_delete(uid=bob.id, lid=other)
    assert home_ids(r, bob) == {by_carol}  # muted: not brought back
    blocks.mute_delete(user=bob, muted_id=alice.id)
    assert home_ids(r, bob) == {by_alice, by_carol}


def test_backfills_and_rebuilds_skip_the_members(r, people):
    """A follow's backfill run again (the follow job, a repair), the rebuild of a
    returning reader's home and an unmute's backfill all leave members out."""
    alice, bob, carol, _ = people
    by_alice, by_carol = post(alice, "by alice"), post(carol, "by carol")
    lid = friends(bob, alice)
    lists.list_update(uid=bob.id, lid=lid, exclusive=True)
    services.follow_sync(follower_id=bob.id, followee_id=alice.id)
    assert home_ids(r, bob) == {by_carol}
    r.delete(keys.home(bob.id))
    services.home_rebuild(uid=bob.id)
    assert home_ids(r, bob) == {by_carol}
    blocks.mute_create(user=bob, muted_id=alice.id)
    blocks.mute_delete(user=bob, muted_id=alice.id)
    assert home_ids(r, bob) == {by_carol}
    assert by_alice not in home_ids(r, bob)


def test_list_exclusive_follows_every_change_of_the_lists(r, people):
    """The derived set holds exactly the members of the exclusive lists (each
    once), through every write; on one server the owner's bit in `muters` says
    whether it, or their mutes, holds anyone."""
    alice, bob, carol, _ = people

    def listed() -> set[int]:
        return {int(u) for u in r.zrange(keys.list_exclusive(bob.id), 0, -1)}

    def bit() -> int | None:
        return None if is_cluster() else r.getbit(keys.muters(), bob.id)

    lid = lists.list_create(uid=bob.id, title="One", exclusive=True).id
    other = friends(bob, alice, carol)
    assert listed() == set() and bit() in (None, 0)
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    assert listed() == {alice.id} and bit() in (None, 1)
    lists.list_update(uid=bob.id, lid=other, exclusive=True)
    assert listed() == {alice.id, carol.id}
    lists.list_update(uid=bob.id, lid=other, title="Renamed")
    assert listed() == {alice.id, carol.id}
    lists.list_delete(uid=bob.id, lid=other)
    assert listed() == {alice.id}
    services.follow_delete(follower=bob, followee_id=alice.id)
    run_jobs()
    assert listed() == set() and bit() in (None, 0)
    blocks.mute_create(user=bob, muted_id=carol.id)
    assert bit() in (None, 1)


def test_members_take_no_place_in_the_reposts_falloff(r, people, settings):
    """A repost is shown as its original when the home holds that original at most
    HOME_REPOST_FALLOFF entries below it: a member's statuses kept out of the home
    count for nothing there, so a busy member does not make it show twice."""
    alice, bob, carol, dave = people
    services.follow_create(follower=bob, followee_id=dave.id)
    run_jobs()
    settings.HOME_REPOST_FALLOFF = 3
    lists.list_update(uid=bob.id, lid=friends(bob, alice), exclusive=True)
    original = post(carol, "the original")
    for n in range(5):
        post(alice, f"news {n}")
    social.status_repost(user=dave, sid=original)
    run_jobs()
    home = selectors.home_get(reads=PageReads(session_create(uid=bob.id)), max_id=None)
    # The original at its place, not dave's repost of it at the top.
    assert [s.id for s in home.page.statuses] == [original]
