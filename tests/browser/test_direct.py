"""Direct messages in a real browser: one person writes to another from the compose
box, the other sees the Messages badge, reads the conversation (the page's script
marks it read), answers on the message's page; a follower of the writer sees none
of it anywhere."""

from __future__ import annotations

import pytest

from tests.browser.test_journeys import log_in, navigating, path_of
from tests.helpers import make_user, run_jobs
from timeline import services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_a_direct_message_and_its_answer(new_page):
    alice, _, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    writer = new_page()
    log_in(writer, "alice")
    writer.get_by_label("What's happening?").fill("@bob lunch at noon?")
    writer.get_by_label("Direct message").check()
    navigating(writer, writer.get_by_role("button", name="Post", exact=True).click)
    assert writer.get_by_text("Posted.").is_visible()
    run_jobs()
    assert writer.get_by_text("lunch at noon?").count() == 0  # not in her home

    reader = new_page()
    log_in(reader, "bob")
    badge = reader.locator("[data-messages-badge]")
    assert badge.inner_text().startswith("1")
    navigating(reader, reader.get_by_role("link", name="Messages").click)
    assert path_of(reader) == "/messages/"
    row = reader.locator("li.conversation")
    assert row.locator("p.with").inner_text().split()[-2:] == ["With", "@alice"]
    assert "lunch at noon?" in row.inner_text()
    # The page's script marks what it showed as read: the badge goes.
    reader.locator("[data-messages-badge]").wait_for(state="detached")
    reader.reload()
    assert reader.locator("[data-messages-badge]").count() == 0
    assert reader.locator("li.conversation.unread").count() == 0
    # Open it, answer on its page: the reply stays in the conversation.
    navigating(reader, row.locator("a.permalink").click)
    assert reader.get_by_text("Only the people in this conversation see your reply.")
    reader.get_by_label("Your reply").fill("@alice yes!")
    navigating(reader, reader.get_by_role("button", name="Reply", exact=True).click)
    assert reader.get_by_text("Replied.").is_visible()
    run_jobs()

    writer.goto("/messages/")
    assert "yes!" in writer.locator("li.conversation.unread").inner_text()

    follower = new_page()
    log_in(follower, "carol")
    for url in ("/", "/u/alice/", "/timeline/", "/messages/"):
        follower.goto(url)
        assert follower.get_by_text("lunch at noon?").count() == 0, url
        assert follower.get_by_text("yes!").count() == 0, url


def test_a_private_reply_to_a_public_status(new_page):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=carol, followee_id=bob.id)
    services.follow_create(follower=carol, followee_id=alice.id)
    sid = services.status_create(author=bob, text="who is in for lunch?").id
    run_jobs()
    writer = new_page()
    log_in(writer, "alice")
    writer.goto(f"/s/{sid}/")
    writer.get_by_label("Your reply").fill("me, but keep it quiet")
    writer.get_by_label("Privately").check()
    navigating(writer, writer.get_by_role("button", name="Reply", exact=True).click)
    assert writer.get_by_text("Replied.").is_visible()
    run_jobs()
    # Bob reads it in his Messages, the status it answers above it on its page.
    reader = new_page()
    log_in(reader, "bob")
    navigating(reader, reader.get_by_role("link", name="Messages").click)
    row = reader.locator("li.conversation")
    assert "keep it quiet" in row.inner_text()
    navigating(reader, row.locator("a.permalink").click)
    assert reader.get_by_text("who is in for lunch?").count() >= 1
    # Carol, who follows both, sees it nowhere: not under bob's status either.
    follower = new_page()
    log_in(follower, "carol")
    for url in ("/", f"/s/{sid}/", "/u/alice/", "/messages/"):
        follower.goto(url)
        assert follower.get_by_text("keep it quiet").count() == 0, url
