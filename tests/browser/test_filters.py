"""Keyword filters in a real browser: a reader makes one from Settings, finds the
status that has the word folded under the filter's title on their home, opens it
with one click (no script needed), then makes the filter hide it."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating, path_of
from tests.helpers import make_user, run_jobs
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_reader_folds_then_hides_a_word(new_page):
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.status_create(author=alice, text="The dragon dies in the finale")
    services.status_create(author=alice, text="Lunch was good")
    run_jobs()
    page = new_page()
    log_in(page, "bob")
    page.goto("/settings/")
    navigating(page, page.get_by_role("link", name="Your filters").click)
    assert path_of(page) == "/filters/"
    # A mistake first: the form says what is wrong and keeps what was typed.
    page.get_by_label("Keywords or phrases, one per line").fill("dragon")
    navigating(page, page.get_by_role("button", name="Save filter").click)
    assert page.get_by_text("This field is required.").is_visible()
    assert page.get_by_label("Keywords or phrases, one per line").input_value() == (
        "dragon"
    )
    page.get_by_label("Title", exact=True).fill("Finale spoilers")
    navigating(page, page.get_by_role("button", name="Save filter").click)
    assert page.get_by_text("Filter saved.").is_visible()
    assert page.locator(".filter-list").get_by_text("Finale spoilers").is_visible()
    page.goto("/")
    folded = page.locator("li.status.filtered")
    assert folded.count() == 1
    assert (
        folded.locator("summary").inner_text().startswith("Filtered: Finale spoilers")
    )
    text = folded.locator(".status-text")
    assert not text.is_visible()
    assert page.get_by_text("Lunch was good").is_visible()
    folded.locator("summary").click()
    assert text.is_visible()
    assert text.inner_text() == "The dragon dies in the finale"
    # Now hide it altogether.
    page.goto("/filters/")
    navigating(page, page.get_by_role("link", name="Edit").click)
    page.get_by_label("Hide the status completely").check()
    navigating(page, page.get_by_role("button", name="Save filter").click)
    page.goto("/")
    assert page.locator("li.status").all_inner_texts()[0].count("Lunch was good") == 1
    assert page.get_by_text("The dragon dies").count() == 0
    # And delete it: the status is back as it was.
    page.goto("/filters/")
    navigating(page, page.get_by_role("button", name="Delete the filter").click)
    page.goto("/")
    assert page.locator("li.status.filtered").count() == 0
    assert page.get_by_text("The dragon dies in the finale").is_visible()
