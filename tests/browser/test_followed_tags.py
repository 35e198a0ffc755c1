"""Followed hashtags in a real browser: a reader follows a tag from its page (a
link in a stranger's status leads there), finds the stranger's tagged status in
their home, unfollows the tag from the followed-tags page, and it is gone."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating, path_of
from tests.helpers import make_user, run_jobs
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_reader_follows_a_tag_and_unfollows_it(new_page):
    make_user("bob")
    stranger = make_user("carol")
    services.status_create(author=stranger, text="Spring is here #Gardening")
    services.status_create(author=stranger, text="Carol, untagged")
    run_jobs()
    page = new_page()
    log_in(page, "bob")
    assert page.get_by_text("Spring is here").count() == 0
    # To the tag's page through a link in the status, on everyone's posts.
    page.goto("/timeline/")
    navigating(page, page.get_by_role("link", name="#Gardening", exact=True).click)
    assert path_of(page) == "/tags/gardening/"
    navigating(page, page.get_by_role("button", name="Follow #gardening").click)
    assert page.get_by_text("You follow #gardening").is_visible()
    assert page.get_by_role("button", name="Unfollow #gardening").is_visible()
    # The stranger's tagged status is in the home, the untagged one is not.
    navigating(page, page.get_by_role("link", name="Home", exact=True).click)
    assert page.get_by_text("Spring is here").is_visible()
    assert page.get_by_text("Carol, untagged").count() == 0
    # Unfollow it from the followed tags' page, reached from the settings.
    navigating(page, page.get_by_role("link", name="Settings", exact=True).click)
    navigating(page, page.get_by_role("link", name="Followed hashtags").click)
    assert path_of(page) == "/settings/tags/"
    assert page.get_by_role("link", name="#gardening").is_visible()
    navigating(page, page.get_by_role("button", name="Unfollow #gardening").click)
    assert path_of(page) == "/settings/tags/"
    assert page.get_by_text("You follow no hashtag.").is_visible()
    navigating(page, page.get_by_role("link", name="Home", exact=True).click)
    assert page.get_by_text("Spring is here").count() == 0
