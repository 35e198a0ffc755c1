"""Lists in a real browser: a reader makes a list from the navigation (a mistake
first: the form keeps what was typed), adds someone they follow from that person's
profile, reads the list's timeline, makes it exclusive (its members leave the home),
takes them off, renames the list and deletes it."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating, path_of
from tests.helpers import make_user, run_jobs
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_reader_keeps_a_list_of_people_they_follow(new_page):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    services.status_create(author=alice, text="Alice on the list")
    services.status_create(author=carol, text="Carol, home only")
    run_jobs()
    page = new_page()
    log_in(page, "bob")
    navigating(page, page.get_by_role("link", name="Lists", exact=True).click)
    assert path_of(page) == "/lists/"
    assert page.get_by_text("No lists yet.").is_visible()
    # A mistake first: no title. The choice of replies stays as it was made.
    page.get_by_label("Show replies").select_option("none")
    navigating(page, page.get_by_role("button", name="Make the list").click)
    assert page.get_by_text("This field is required.").is_visible()
    assert page.get_by_label("Show replies").input_value() == "none"
    page.get_by_label("Title").fill("Close friends")
    navigating(page, page.get_by_role("button", name="Make the list").click)
    assert page.get_by_text("List \u201cClose friends\u201d made.").is_visible()
    # Add alice from her profile.
    page.goto("/u/alice/")
    page.get_by_label("Add @alice to a list").select_option(label="Close friends")
    navigating(page, page.get_by_role("button", name="Add", exact=True).click)
    assert page.get_by_text("Added @alice to the list.").is_visible()
    # The list's page: her status, not carol's; her name among the members.
    page.goto("/lists/")
    navigating(page, page.get_by_role("link", name="Close friends").click)
    assert page.get_by_text("Alice on the list").is_visible()
    assert page.get_by_text("Carol, home only").count() == 0
    # Exclusive: alice's statuses leave the home, and stay on the list.
    page.goto("/")
    assert page.get_by_text("Alice on the list").is_visible()
    page.goto("/lists/")
    page.get_by_text("Rename or change it").click()
    page.locator("details").get_by_label("Leave its members out of your home").check()
    navigating(
        page, page.get_by_role("button", name="Save the list Close friends").click
    )
    assert page.get_by_text("Exclusive: not in your home").is_visible()
    page.goto("/")
    assert page.get_by_text("Carol, home only").is_visible()
    assert page.get_by_text("Alice on the list").count() == 0
    page.goto("/lists/")
    navigating(page, page.get_by_role("link", name="Close friends").click)
    assert page.get_by_text("Alice on the list").is_visible()
    page.get_by_text("1 member").click()
    navigating(page, page.get_by_role("button", name="Take @alice off the list").click)
    assert page.get_by_text("Taken off the list.").is_visible()
    assert page.get_by_text("Alice on the list").count() == 0
    # Rename it, then delete it.
    page.goto("/lists/")
    page.get_by_text("Rename or change it").click()
    page.locator("details").get_by_label("Title").fill("Friends")
    navigating(
        page, page.get_by_role("button", name="Save the list Close friends").click
    )
    assert page.get_by_text("List saved.").is_visible()
    assert page.get_by_role("link", name="Friends", exact=True).is_visible()
    navigating(page, page.get_by_role("button", name="Delete the list Friends").click)
    assert page.get_by_text("No lists yet.").is_visible()
