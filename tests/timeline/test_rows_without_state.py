"""Rows whose viewer's state is not read with them (a pulled author's status, merged
into the home from the outbox at read; a repost's row) offer no form that would not
know whether to like or undo: their Like and Repost lead to the original's page,
where the viewer's like shows and can be undone."""

from __future__ import annotations

import re

from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import keys, services, social


def test_a_liked_status_of_a_pulled_author_shows_unlike_on_the_home(r, settings):
    settings.FANOUT_PUSH_MAX = 1
    star = make_user("star")
    fans = [make_user(f"fan{i}") for i in range(3)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    status = services.status_create(author=star, text="popular words")
    run_jobs()
    social.status_like(user=fans[0], sid=status.id)
    html = page(logged_in_client("fan0"), "/")
    assert "popular words" in html
    assert f'action="/s/{status.id}/like/"' not in html
    assert f'class="link-button like" href="/s/{status.id}/#actions"' in html
    there = page(logged_in_client("fan0"), f"/s/{status.id}/")
    assert f'action="/s/{status.id}/unlike/"' in there
    assert re.search(
        r'class="link-button like"[^>]*>Like <span class="count">1<', there
    )


def test_a_repost_row_shows_the_viewers_like_of_the_original(r):
    carol = make_user("carol")
    alice = make_user("alice")
    bob = make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    original = services.status_create(author=carol, text="worth a repost")
    social.status_like(user=bob, sid=original.id)
    social.status_repost(user=alice, sid=original.id)
    run_jobs()
    html = page(logged_in_client("bob"), "/")
    assert "worth a repost" in html
    # The row leads to the original, which bob liked: he can undo it there.
    assert f'action="/s/{original.id}/like/"' not in html
    assert f'class="link-button like" href="/s/{original.id}/#actions"' in html
    there = page(logged_in_client("bob"), f"/s/{original.id}/")
    assert f'action="/s/{original.id}/unlike/"' in there


def test_a_reposts_page_offers_a_reply_to_the_originals_author(r):
    carol = make_user("carol")
    alice = make_user("alice")
    make_user("bob")
    original = services.status_create(author=carol, text="worth a repost")
    repost = social.status_repost(user=alice, sid=original.id)
    run_jobs()
    html = page(logged_in_client("bob"), f"/s/{repost.id}/")
    assert re.search(r'<textarea name="text"[^>]*>\s*@carol </textarea>', html)
    assert f'action="/s/{original.id}/reply/"' in html
