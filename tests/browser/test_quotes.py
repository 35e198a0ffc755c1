"""Quote posts in a real browser: a reader quotes a status from everyone's posts
(an empty text first: the error, and the quoted status still above the box), sees
it embedded under their own on their home, and the quoted author is told, then
revokes the quote from their status's quotes page: the quote no longer shows
their post."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating, path_of
from tests.helpers import make_user, run_jobs
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_reader_quotes_a_status_and_its_author_is_told(new_page):
    alice, _ = make_user("alice"), make_user("bob")
    original = services.status_create(author=alice, text="Worth quoting, this")
    run_jobs()
    page = new_page()
    log_in(page, "bob")
    page.goto("/timeline/")
    row = page.locator(f'li.status[data-status-id="{original.id}"]')
    navigating(page, row.get_by_role("link", name="Quote").click)
    assert path_of(page) == f"/s/{original.id}/quote/"
    assert page.get_by_text("Worth quoting, this").is_visible()
    # Nothing typed: the error, and the quoted status still there.
    navigating(page, page.get_by_role("button", name="Post", exact=True).click)
    assert page.locator(".field-errors").is_visible()
    assert page.get_by_text("Worth quoting, this").is_visible()
    page.get_by_label("What's happening?").fill("So true")
    navigating(page, page.get_by_role("button", name="Post", exact=True).click)
    assert page.get_by_text("Posted.").is_visible()
    run_jobs()
    page.goto("/")
    embed = page.locator("blockquote.quote-embed")
    assert embed.get_by_text("Worth quoting, this").is_visible()
    assert page.get_by_text("So true").is_visible()
    navigating(page, embed.locator("a.quote-link").click)
    assert path_of(page) == f"/s/{original.id}/"
    assert page.get_by_role("link", name="1 quote").is_visible()
    # Alice is told.
    page.context.clear_cookies()
    log_in(page, "alice")
    page.goto("/notifications/")
    assert page.get_by_text("quoted your post.").is_visible()
    # She revokes it from her post's quotes: said so, and bob's quote shows
    # nothing of her post any more.
    page.goto(f"/s/{original.id}/")
    navigating(page, page.get_by_role("link", name="1 quote").click)
    assert path_of(page) == f"/s/{original.id}/quotes/"
    row = page.locator("li.status", has_text="So true")
    navigating(page, row.get_by_role("button", name="Revoke quote").click)
    assert path_of(page) == f"/s/{original.id}/quotes/"
    assert page.get_by_text(
        "Quote revoked: the post by @bob no longer shows yours."
    ).is_visible()
    assert page.get_by_text("No quotes yet.").is_visible()
    page.context.clear_cookies()
    log_in(page, "bob")
    page.goto("/")
    assert page.get_by_text("This post is unavailable.").is_visible()
    assert not page.get_by_text("Worth quoting, this").is_visible()
