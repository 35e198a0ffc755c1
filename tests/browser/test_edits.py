"""Editing a status in a real browser: from its page, the form starts with its text
and warning, counts as the compose box does, and saves; every page shows the new
version marked "Edited", whose link opens the edit history."""

from __future__ import annotations

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.test_journeys import log_in, navigating, path_of, post
from tests.helpers import make_user, run_jobs
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_edit_a_status_and_read_its_history(new_page):
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    author, reader = new_page(), new_page()
    log_in(author, "alice")
    post(author, "Meet at noon")
    navigating(author, author.locator("li.status a.permalink").first.click)
    navigating(author, author.get_by_role("link", name="Edit", exact=True).click)
    box = author.get_by_label("Your status", exact=True)
    assert box.input_value() == "Meet at noon"
    # The counter counts the text as the compose box does.
    limit = settings.STATUS_MAX_LENGTH
    box.fill("x" * (limit + 2))
    expect(author.locator("#edit-counter")).to_have_text("2 characters too many")
    box.fill("Meet at one, not noon")
    author.get_by_label("Add a content warning").check()
    author.get_by_label("Content warning", exact=True).fill("Plans")
    navigating(author, author.get_by_role("button", name="Save").click)
    assert author.get_by_text("Edited.", exact=True).is_visible()
    row = author.locator("li.status").first
    assert row.locator(".spoiler-text").inner_text() == "Plans"
    row.locator("summary").click()
    assert row.locator(".status-text").inner_text() == "Meet at one, not noon"
    run_jobs()
    log_in(reader, "bob")
    reader.goto("/")
    assert reader.locator("li.status .spoiler-text").all_inner_texts() == ["Plans"]
    navigating(reader, reader.locator("li.status a.edited").click)
    assert path_of(reader).endswith("/history/")
    versions = reader.locator("ol.versions li.version")
    assert versions.count() == 2
    assert "Current version" in versions.nth(0).inner_text()
    assert "Content warning: Plans" in versions.nth(0).inner_text()
    assert versions.nth(1).locator(".status-text").inner_text() == "Meet at noon"
