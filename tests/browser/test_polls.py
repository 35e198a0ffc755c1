"""Polls in a real browser: one person asks from the compose box (the poll's
fields show once its tick box is ticked), a follower votes from their home and
sees the results with their choice; the asker sees the count."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating
from tests.helpers import make_user, run_jobs
from timeline import polls, services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_poll_asked_and_answered(new_page):
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    asker = new_page()
    log_in(asker, "alice")
    option = asker.get_by_placeholder("Option 1", exact=True)
    assert not option.is_visible()  # folded until asked for
    asker.get_by_label("What's happening?").fill("Tea or coffee?")
    asker.get_by_label("Add a poll").check()
    option.fill("Tea")
    # Only one option: refused, with what was typed kept and the poll still open.
    navigating(asker, asker.get_by_role("button", name="Post", exact=True).click)
    assert asker.get_by_text("A poll needs at least 2 options.").is_visible()
    assert asker.get_by_placeholder("Option 1", exact=True).input_value() == "Tea"
    asker.get_by_placeholder("Option 2", exact=True).fill("Coffee")
    asker.get_by_label("Open for").select_option(label="1 hour")
    navigating(asker, asker.get_by_role("button", name="Post", exact=True).click)
    assert asker.get_by_text("Posted.").is_visible()
    run_jobs()

    voter = new_page()
    log_in(voter, "bob")
    poll = voter.locator("li.status form.poll")
    assert poll.get_by_text("0 people").is_visible()
    poll.get_by_label("Coffee").check()
    navigating(voter, poll.get_by_role("button", name="Vote").click)
    assert voter.get_by_text("Voted.").is_visible()
    results = voter.locator("li.status div.poll li.poll-result")
    shown = [" ".join(text.split()) for text in results.all_inner_texts()]
    assert shown == ["0% Tea", "100% Coffee (your choice)"]

    asker.goto("/")
    assert "1 person" in asker.locator("li.status div.poll").inner_text()


def test_a_warned_poll_opens_with_its_warning(new_page):
    # A content warning folds the poll with the text: its options show, and take
    # a vote, once the reader opens it.
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    asked = polls.poll_make(["Snape", "Nobody"], 3600)
    services.status_create(
        author=alice, text="Who dies?", spoiler="Book 6 spoilers", poll=asked
    )
    run_jobs()
    voter = new_page()
    log_in(voter, "bob")
    row = voter.locator("li.status")
    assert row.get_by_text("Book 6 spoilers").is_visible()
    assert not row.get_by_text("Who dies?").is_visible()
    assert not row.get_by_text("Snape").is_visible()
    row.locator("details.spoiler > summary").click()
    assert row.get_by_text("Who dies?").is_visible()
    row.get_by_label("Nobody").check()
    navigating(voter, row.get_by_role("button", name="Vote").click)
    assert voter.get_by_text("Voted.").is_visible()
    row.locator("details.spoiler > summary").click()
    shown = [
        " ".join(text.split())
        for text in row.locator("li.poll-result").all_inner_texts()
    ]
    assert shown == ["0% Snape", "100% Nobody (your choice)"]


def test_hidden_totals_stay_hidden_from_the_asker_until_the_poll_closes(new_page):
    # As Mastodon's: no one sees the shares of a poll that hides them while it is
    # open, its author included; everyone does once it has closed.
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    asker = new_page()
    log_in(asker, "alice")
    asker.get_by_label("What's happening?").fill("Secret ballot")
    asker.get_by_label("Add a poll").check()
    asker.get_by_placeholder("Option 1", exact=True).fill("Yes")
    asker.get_by_placeholder("Option 2", exact=True).fill("No")
    asker.get_by_label("Open for").select_option(label="1 hour")
    asker.get_by_label("Hide the results until it closes").check()
    navigating(asker, asker.get_by_role("button", name="Post", exact=True).click)
    assert asker.get_by_text("Posted.").is_visible()
    run_jobs()
    voter = new_page()
    log_in(voter, "bob")
    poll = voter.locator("li.status form.poll")
    poll.get_by_label("No").check()
    navigating(voter, poll.get_by_role("button", name="Vote").click)
    assert voter.get_by_text("Voted.").is_visible()
    shown = voter.locator("li.status div.poll").inner_text()
    assert "Results when it closes" in shown and "%" not in shown
    asker.goto("/")
    mine = asker.locator("li.status div.poll").inner_text()
    assert "1 person" in mine and "Results when it closes" in mine
    assert "%" not in mine
