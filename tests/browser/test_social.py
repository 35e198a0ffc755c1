"""Replies, likes and reposts in a real browser (issue #12)."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating, path_of, post, statuses
from tests.helpers import make_user, run_jobs

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_reply_to_a_status_see_the_thread_then_like_and_repost_and_undo(
    new_page,
):
    make_user("alice")
    make_user("bob")
    alice, bob = new_page(), new_page()
    log_in(alice, "alice")
    log_in(bob, "bob")
    post(alice, "Anyone up for tea?")
    run_jobs()
    bob.goto("/u/alice/")
    navigating(bob, bob.locator("li.status a.permalink").first.click)
    status_url = path_of(bob)
    reply_box = bob.get_by_label("Your reply")
    assert reply_box.input_value().startswith("@alice ")
    reply_box.fill("@alice Always.")
    navigating(bob, bob.get_by_role("button", name="Reply", exact=True).click)
    # Bob lands on his reply, under the status it answers.
    assert statuses(bob) == ["Anyone up for tea?", "@alice Always."]
    assert bob.get_by_text("Replying to").is_visible()
    alice.goto(status_url)
    assert statuses(alice) == ["Anyone up for tea?", "@alice Always."]

    bob.goto(status_url)
    like = bob.locator("li.status").first.locator("button.like")
    assert like.get_attribute("aria-pressed") == "false"
    navigating(bob, like.click)
    like = bob.locator("li.status").first.locator("button.like")
    assert like.get_attribute("aria-pressed") == "true"
    assert like.inner_text() == "Like 1"
    repost = bob.locator("li.status").first.locator("button.repost")
    navigating(bob, repost.click)
    repost = bob.locator("li.status").first.locator("button.repost")
    assert repost.get_attribute("aria-pressed") == "true"
    run_jobs()
    bob.goto("/u/bob/")
    assert bob.get_by_text("@bob reposted").count() == 1
    bob.goto(status_url)
    navigating(bob, bob.locator("li.status").first.locator("button.like").click)
    navigating(bob, bob.locator("li.status").first.locator("button.repost").click)
    first = bob.locator("li.status").first
    assert first.locator("button.like").get_attribute("aria-pressed") == "false"
    assert first.locator("button.repost").get_attribute("aria-pressed") == "false"
    run_jobs()
    bob.goto("/u/bob/")
    assert bob.get_by_text("@bob reposted").count() == 0


def test_bookmark_a_status_find_it_from_the_navigation_and_pin_ones_own(new_page):
    make_user("alice")
    make_user("bob")
    alice, bob = new_page(), new_page()
    log_in(alice, "alice")
    log_in(bob, "bob")
    post(alice, "A recipe worth keeping")
    post(alice, "Old news")
    run_jobs()
    bob.goto("/u/alice/")
    navigating(bob, bob.locator("li.status a.permalink").nth(1).click)
    bookmark = bob.locator("form.bookmark-form button")
    assert bookmark.inner_text() == "Bookmark"
    navigating(bob, bookmark.click)
    assert bob.get_by_text("Bookmarked.").is_visible()
    assert bob.locator("form.bookmark-form button").get_attribute("aria-pressed") == (
        "true"
    )
    navigating(bob, bob.get_by_role("link", name="Bookmarks", exact=True).click)
    assert statuses(bob) == ["A recipe worth keeping"]
    # Alice pins her other status from its page; her profile shows it first.
    alice.goto("/u/alice/")
    navigating(alice, alice.locator("li.status a.permalink").first.click)
    navigating(alice, alice.get_by_role("button", name="Pin to your profile").click)
    assert alice.get_by_text("Pinned to your profile.").is_visible()
    bob.goto("/u/alice/")
    pinned = bob.locator("section.pinned li.status .status-text")
    assert pinned.all_inner_texts() == ["Old news"]
