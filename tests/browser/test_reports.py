"""Reports in a real browser: a reader opens a status's own page, follows its
Report link, finds that status ticked, forgets the reason (the form keeps the
comment), picks one, sends it, reads the thanks and the offers to block or mute,
and the operators' command lists the report with the status's text."""

from __future__ import annotations

import functools
import io

import pytest
from django.core.management import call_command

from tests.browser.test_journeys import log_in, navigating, path_of, run_axe
from tests.helpers import make_user
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_reader_reports_a_status_from_its_page(new_page, settings):
    settings.RATE_LIMIT_REPORT = "off"
    make_user("alice")
    bob = make_user("bob")
    services.status_create(author=bob, text="Bob says something nice")
    rude = services.status_create(author=bob, text="Bob says something awful")
    page = new_page()
    log_in(page, "alice")
    page.goto(f"/s/{rude.id}/")
    navigating(page, page.get_by_role("link", name="Report this status").click)
    assert path_of(page) == "/u/bob/report/"
    assert page.get_by_label("Bob says something awful").is_checked()
    assert not page.get_by_label("Bob says something nice").is_checked()
    comment = page.get_by_label("Anything the people who run this site should know?")
    comment.fill("He insults people")
    assert page.locator("#report-counter").inner_text().endswith("left")
    # No reason chosen: the form says so and keeps the comment and the tick.
    navigating(page, page.get_by_role("button", name="Send report").click)
    assert page.get_by_text("Choose why you report them.").is_visible()
    assert comment.input_value() == "He insults people"
    assert page.get_by_label("Bob says something awful").is_checked()
    page.get_by_label("Something else").check()
    navigating(page, page.get_by_role("button", name="Send report").click)
    assert path_of(page) == "/u/bob/reported/"
    assert page.get_by_text(
        "Thanks: the people who run this site will look at it."
    ).is_visible()
    assert page.get_by_role("button", name="Block @bob").is_visible()
    assert page.get_by_role("button", name="Mute @bob").is_visible()
    out = io.StringIO()
    call_command("reports", stdout=out)
    assert (
        "by @alice" in out.getvalue() and "Bob says something awful" in out.getvalue()
    )
    assert "He insults people" in out.getvalue()


def test_the_report_pages_have_no_serious_accessibility_violations(new_page):
    # axe is injected as an inline script, which the site's policy rightly refuses.
    new_page = functools.partial(new_page, bypass_csp=True)
    make_user("alice")
    bob = make_user("bob")
    services.status_create(author=bob, text="Bob's status")
    page = new_page()
    log_in(page, "alice")
    page.goto("/u/bob/report/")
    assert run_axe(page) == []
    navigating(page, page.get_by_role("button", name="Send report").click)  # errors
    assert run_axe(page) == []
    page.goto("/u/bob/reported/")
    assert run_axe(page) == []


def test_the_comment_counter_counts_as_the_server_does(new_page):
    # The comment is plain text: a link counts as written and each code point
    # once (the status counter's 23 a link and one an emoji would let through a
    # comment the server refuses, or refuse one it takes).
    make_user("alice")
    make_user("bob")
    page = new_page()
    log_in(page, "alice")
    page.goto("/u/bob/report/")
    comment = page.get_by_label("Anything the people who run this site should know?")
    link = " https://example.com/a-long-path-to-the-page"  # 44 characters
    comment.fill("x" * 931 + link)
    assert page.locator("#report-counter").inner_text() == "25 characters left"
    comment.fill("line one\nline two")
    assert page.locator("#report-counter").inner_text() == "983 characters left"
