"""Hashtags and links in a real browser: post a status with a tag and a link, follow
the tag to its page."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import (
    log_in,
    navigating,
    path_of,
    post,
    run_axe,
    statuses,
)
from tests.helpers import make_user

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_post_a_tag_and_a_link_then_follow_the_tag(new_page, fanout_worker):
    make_user("alice")
    bob = make_user("bob")
    # axe is injected as an inline script, which the site's policy rightly refuses.
    page = new_page(bypass_csp=True)
    log_in(page, "alice")
    post(page, "Reading https://example.com/docs about #Redis, @bob.")
    link = page.get_by_role("link", name="https://example.com/docs")
    assert link.get_attribute("href") == "https://example.com/docs"
    assert link.get_attribute("rel") == "nofollow noopener ugc"
    # The account it named when posted (`richtext.mention_url`).
    mention = page.get_by_role("link", name="@bob").get_attribute("href")
    assert mention == f"/u/bob/?id={bob.id}"
    navigating(page, page.get_by_role("link", name="#Redis").click)
    assert path_of(page) == "/tags/redis/"
    assert page.get_by_role("heading", name="#redis").is_visible()
    for _ in range(50):  # the worker's job, usually done in milliseconds
        if statuses(page):
            break
        page.wait_for_timeout(100)
        page.reload()
    assert statuses(page) == ["Reading https://example.com/docs about #Redis, @bob."]
    assert run_axe(page) == []
    page.goto("/timeline/")
    trends = page.get_by_role("region", name="Trending tags")
    for _ in range(50):  # until the worker's next sum of the trends
        if trends.count() and "#redis" in trends.inner_text():
            break
        page.wait_for_timeout(100)
        page.reload()
    assert "#redis" in trends.inner_text()
    assert run_axe(page) == []
    navigating(page, trends.get_by_role("link", name="#redis").click)
    assert path_of(page) == "/tags/redis/"
