"""A repost does not carry a blocked (or blocking) author's
status to the other side on a profile page, as it does not on the home."""

from __future__ import annotations

from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import blocks, services, social


def test_a_profile_leaves_out_reposts_of_someone_who_blocks_the_viewer(r):
    carol = make_user("carol")
    alice = make_user("alice")
    bob = make_user("bob")
    original = services.status_create(author=carol, text="not for bob")
    social.status_repost(user=alice, sid=original.id)
    services.status_create(author=alice, text="words of alice")
    blocks.block_create(blocker=carol, blocked_id=bob.id)
    run_jobs()
    html = page(logged_in_client("bob"), "/u/alice/")
    assert "words of alice" in html
    assert "not for bob" not in html


def test_a_profile_leaves_out_reposts_of_someone_the_viewer_blocks(r):
    carol = make_user("carol")
    alice = make_user("alice")
    bob = make_user("bob")
    original = services.status_create(author=carol, text="bob blocked carol")
    social.status_repost(user=alice, sid=original.id)
    services.status_create(author=alice, text="words of alice")
    blocks.block_create(blocker=bob, blocked_id=carol.id)
    run_jobs()
    html = page(logged_in_client("bob"), "/u/alice/")
    assert "words of alice" in html
    assert "bob blocked carol" not in html
