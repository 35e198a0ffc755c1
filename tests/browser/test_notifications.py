"""Notifications in a real browser: the badge, the page, and the page's own script
marking them read (issue #12)."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating
from tests.helpers import logged_in_client, make_user
from timeline import keys

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_new_follower_shows_as_a_badge_until_the_page_is_seen(r, new_page):
    alice = make_user("alice")
    make_user("bob")
    logged_in_client("bob").post("/u/alice/follow/")
    page = new_page()
    log_in(page, "alice")
    badge = page.locator("[data-notifications-badge]")
    assert " ".join(badge.inner_text().split()) == "1 unread"
    navigating(page, page.get_by_role("link", name="Notifications").click)
    item = page.locator("li.notification").first
    assert " ".join(item.locator("p").inner_text().split()).startswith(
        "@bob followed you."
    )
    # The page's script posts the mark once shown; the badge goes without a reload.
    badge.wait_for(state="detached")
    assert r.get(keys.notifications_read(alice.id)) is not None
    page.goto("/")
    assert page.locator("[data-notifications-badge]").count() == 0
    page.goto("/notifications/")
    assert "unread" not in (
        page.locator("li.notification").first.get_attribute("class") or ""
    )
