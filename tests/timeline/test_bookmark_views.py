"""Bookmarks as people use them on the site: the status page's Bookmark button,
the Bookmarks page (theirs alone, newest first, paged), the buttons' POST with
CSRF and a login, and the message past the cap."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.helpers import body, logged_in_client, make_user, page, run_jobs, status_ids
from tests.roundtrips import get_round_trips
from timeline import bookmarks, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


def bookmark_button(html: str) -> tuple[str, str, str]:
    """The status page's bookmark form: its action, aria-pressed and label."""
    found = re.search(
        r'<form method="post" action="([^"]+)" class="bookmark-form">.*?'
        r'aria-pressed="(\w+)">([^<]+)</button>',
        html,
        flags=re.S,
    )
    assert found, "no bookmark button"
    return found[1], found[2], found[3]


@pytest.fixture
def alice():
    return make_user("alice")


def test_bookmark_from_the_status_page_then_find_it_on_the_bookmarks_page(alice):
    sid = services.status_create(author=alice, text="read this later").id
    make_user("bob")
    bob = logged_in_client("bob")
    assert bookmark_button(page(bob, f"/s/{sid}/")) == (
        f"/s/{sid}/bookmark/",
        "false",
        "Bookmark",
    )
    assert "Nothing bookmarked yet" in page(bob, "/bookmarks/")
    answer = bob.post(f"/s/{sid}/bookmark/", {"next": f"/s/{sid}/"}, follow=True)
    html = body(answer)
    assert answer.redirect_chain == [(f"/s/{sid}/", 302)]
    assert "Bookmarked." in html
    assert bookmark_button(html) == (f"/s/{sid}/unbookmark/", "true", "Bookmarked")
    listed = page(bob, "/bookmarks/")
    assert status_ids(listed) == [sid] and "read this later" in listed
    # Only bob's: alice's own list is empty, and her status page offers the button.
    alice_client = logged_in_client("alice")
    assert status_ids(page(alice_client, "/bookmarks/")) == []
    assert bookmark_button(page(alice_client, f"/s/{sid}/"))[1] == "false"
    answer = bob.post(f"/s/{sid}/unbookmark/", {"next": f"/s/{sid}/"}, follow=True)
    assert "Bookmark removed." in body(answer)
    assert bookmark_button(body(answer))[1] == "false"
    assert status_ids(page(bob, "/bookmarks/")) == []


def test_a_repost_s_page_bookmarks_its_original(alice):
    original = services.status_create(author=alice, text="worth keeping").id
    make_user("carol")
    carol = logged_in_client("carol")
    carol.post(f"/s/{original}/repost/")
    run_jobs()
    repost = max(status_ids(page(carol, "/u/carol/")))
    assert repost != original
    make_user("bob")
    bob = logged_in_client("bob")
    action, _, _ = bookmark_button(page(bob, f"/s/{repost}/"))
    assert action == f"/s/{original}/bookmark/"
    bob.post(action)
    assert bookmark_button(page(bob, f"/s/{repost}/"))[1] == "true"
    assert status_ids(page(bob, "/bookmarks/")) == [original]


def test_the_bookmarks_page_is_newest_first_and_pages_on(alice, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    sids = [services.status_create(author=alice, text=f"s{i}").id for i in range(4)]
    make_user("bob")
    bob = logged_in_client("bob")
    for sid in sids:
        bob.post(f"/s/{sid}/bookmark/")
    html = page(bob, "/bookmarks/")
    assert status_ids(html) == sids[::-1][:3]
    older = re.search(r'rel="next" class="button secondary" href="([^"]+)"', html)
    assert older, "no Older link"
    rest = page(bob, "/bookmarks/" + older[1])
    assert status_ids(rest) == [sids[0]]
    assert 'rel="next"' not in rest


def test_visitors_are_sent_to_log_in_and_get_no_button(alice):
    sid = services.status_create(author=alice, text="public").id
    answer = Client().get("/bookmarks/")
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")
    assert 'class="bookmark-form"' not in page(Client(), f"/s/{sid}/")
    refused = Client().post(f"/s/{sid}/bookmark/")
    assert refused.status_code == 302 and refused["Location"].startswith("/login/")


def test_the_buttons_need_a_post_with_csrf(alice):
    sid = services.status_create(author=alice, text="public").id
    make_user("bob")
    assert logged_in_client("bob").get(f"/s/{sid}/bookmark/").status_code == 405
    strict = logged_in_client("bob", enforce_csrf_checks=True)
    assert strict.post(f"/s/{sid}/bookmark/").status_code == 403
    assert status_ids(page(logged_in_client("bob"), "/bookmarks/")) == []


def test_past_the_cap_the_page_says_so_and_keeps_every_bookmark(alice, monkeypatch):
    monkeypatch.setattr(bookmarks, "BOOKMARKS_MAX", 1)
    first, second = (
        services.status_create(author=alice, text=text).id for text in ("a", "b")
    )
    make_user("bob")
    bob = logged_in_client("bob")
    bob.post(f"/s/{first}/bookmark/")
    answer = bob.post(f"/s/{second}/bookmark/", {"next": f"/s/{second}/"}, follow=True)
    assert "You have 1 bookmarks, the most one can keep. Remove some first." in body(
        answer
    )
    assert status_ids(page(bob, "/bookmarks/")) == [first]


def test_a_status_hidden_since_leaves_the_page(alice):
    sid = services.status_create(author=alice, text="soon hidden").id
    make_user("bob")
    bob = logged_in_client("bob")
    bob.post(f"/s/{sid}/bookmark/")
    logged_in_client("alice").post("/u/bob/block/")
    run_jobs()
    assert status_ids(page(bob, "/bookmarks/")) == []


@pytest.mark.real_redis
def test_the_pages_cost_two_round_trips(alice):
    sids = [services.status_create(author=alice, text=f"s{i}").id for i in range(12)]
    make_user("bob")
    bob = logged_in_client("bob")
    for sid in sids[::2]:
        bob.post(f"/s/{sid}/bookmark/")
    # The bookmarks with the auth check, then their statuses with whether their
    # authors may be seen, and their cards.
    assert get_round_trips(bob, "/bookmarks/") == 2
    # The status page reads whether it is bookmarked in its second round trip.
    assert get_round_trips(bob, f"/s/{sids[0]}/") == 2
    own = services.status_create(author=make_user("carol"), text="mine").id
    assert get_round_trips(logged_in_client("carol"), f"/s/{own}/") == 2


def test_a_page_of_hidden_bookmarks_does_not_say_there_are_none(alice, settings):
    settings.TIMELINE_PAGE_SIZE = 2
    kept = services.status_create(author=alice, text="kept").id
    hidden = [
        services.status_create(author=make_user(f"carol{i}"), text=f"c{i}").id
        for i in range(2)
    ]
    make_user("bob")
    bob = logged_in_client("bob")
    for sid in (kept, *hidden):
        bob.post(f"/s/{sid}/bookmark/")
    for i in range(2):
        logged_in_client(f"carol{i}").post("/u/bob/block/")
    run_jobs()
    html = page(bob, "/bookmarks/")
    # The newest two are hidden from bob now: the page shows none of them, and
    # says so rather than that nothing was ever bookmarked, above its Older link.
    assert status_ids(html) == []
    assert "Nothing bookmarked yet" not in html
    assert "None of these bookmarks can be shown" in html
    older = re.search(r'rel="next" class="button secondary" href="([^"]+)"', html)
    assert status_ids(page(bob, "/bookmarks/" + older[1])) == [kept]


def test_a_first_page_of_hidden_bookmarks_alone_does_not_say_there_are_none(alice):
    """No Older link either: the only bookmarks are of statuses hidden since."""
    sid = services.status_create(author=alice, text="hidden soon").id
    make_user("bob")
    bob = logged_in_client("bob")
    bob.post(f"/s/{sid}/bookmark/")
    logged_in_client("alice").post("/u/bob/block/")
    run_jobs()
    html = page(bob, "/bookmarks/")
    assert status_ids(html) == []
    assert "Nothing bookmarked yet" not in html
    assert "None of these bookmarks can be shown" in html
