"""A repost's row carries its original's text: what the reposter's followers, the
reposter's profile and the public timelines show once the original's own page
answers 404 (its author deleted it, or turned private and has not approved the
viewer), before the jobs that remove such reposts have run (issue #10's promise:
a deleted status disappears from every page at once)."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs, status_ids
from timeline import privacy, services, social


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol", "dave")}


def reposted(people, text: str) -> int:
    """Alice posts `text`, bob reposts it; carol follows bob, dave follows both.
    Returns the original's id."""
    alice, bob = people["alice"], people["bob"]
    for follower in (people["carol"], people["dave"]):
        services.follow_create(follower=follower, followee_id=bob.id)
    services.follow_create(follower=people["dave"], followee_id=alice.id)
    status = services.status_create(author=alice, text=text)
    social.status_repost(user=bob, sid=status.id)
    run_jobs()
    assert text in page(logged_in_client("carol"), "/")
    return status.id


def test_a_repost_shows_no_text_of_an_original_turned_private(r, people):
    sid = reposted(people, "secret soon")
    privacy.account_privacy_set(user=people["alice"], private=True)  # no job run
    carol = logged_in_client("carol")
    assert carol.get(f"/s/{sid}/").status_code == 404
    assert "secret soon" not in page(carol, "/u/bob/")
    assert "secret soon" not in page(carol, "/")
    assert "secret soon" not in page(logged_in_client("bob"), "/u/bob/")
    # Who may see the original's page still sees the repost: an approved follower,
    # the author.
    assert "secret soon" in page(logged_in_client("dave"), "/u/bob/")
    assert "secret soon" in page(logged_in_client("alice"), "/u/bob/")


def test_a_repost_shows_no_text_of_a_deleted_original(r, people):
    sid = reposted(people, "regret this")
    services.status_delete(user=people["alice"], sid=sid)  # no job run
    carol = logged_in_client("carol")
    assert carol.get(f"/s/{sid}/").status_code == 404
    for url in ("/u/bob/", "/"):
        assert "regret this" not in page(carol, url), url
    assert "regret this" not in page(logged_in_client("dave"), "/")


def test_the_client_apis_timelines_show_no_repost_of_a_hidden_original(r, people):
    reposted(people, "secret soon")
    privacy.account_privacy_set(user=people["alice"], private=True)
    carol = api_client(token_for(people["carol"]))
    for path in (
        "/api/v1/timelines/home",
        f"/api/v1/accounts/{people['bob'].id}/statuses",
    ):
        answer = carol.get(path)
        assert answer.status_code == 200
        assert "secret soon" not in answer.content.decode(), path
    dave = api_client(token_for(people["dave"]))
    assert "secret soon" in dave.get("/api/v1/timelines/home").content.decode()


def test_a_pulled_authors_repost_shows_no_text_of_a_deleted_original(
    r, people, settings
):
    settings.FANOUT_PUSH_MAX = 1  # bob, with two followers, is read from his outbox
    sid = reposted(people, "regret this")
    services.status_delete(user=people["alice"], sid=sid)
    assert "regret this" not in page(logged_in_client("carol"), "/")


def test_paging_past_a_hidden_repost_skips_and_repeats_nothing(r, people, settings):
    settings.TIMELINE_PAGE_SIZE = 2
    bob = people["bob"]
    own = [services.status_create(author=bob, text=f"own {i}").id for i in range(2)]
    sid = reposted(people, "regret this")
    own += [services.status_create(author=bob, text=f"own {i}").id for i in (2, 3)]
    run_jobs()
    services.status_delete(user=people["alice"], sid=sid)
    carol = logged_in_client("carol")
    seen: list[int] = []
    url: str | None = "/u/bob/"
    while url:
        html = page(carol, url)
        assert "regret this" not in html
        seen += status_ids(html)
        found = re.search(r'<a rel="next"[^>]*href="([^"]+)"', html)
        url = "/u/bob/" + found.group(1).replace("&amp;", "&") if found else None
    assert seen == own[::-1]
