"""Replies, likes and reposts as people see them (issue #12): the buttons on every
row, the status page's thread and reply box, who liked and reposted, and what
blocks and private accounts refuse."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.selectors import user_get_by_username
from config.redis import is_cluster
from tests.helpers import body, logged_in_client, make_user, page, run_jobs, status_ids
from tests.roundtrips import RoundTripCounter
from timeline import keys


def uid(name: str) -> int:
    return user_get_by_username(username=name).id


def post(client, text: str) -> int:
    assert client.post("/post/", {"text": text}).status_code == 302
    run_jobs()
    return max(status_ids(page(client, "/timeline/")))


@pytest.fixture
def alice():
    make_user("alice")
    return logged_in_client("alice")


@pytest.fixture
def bob():
    make_user("bob")
    return logged_in_client("bob")


def pressed(html: str, action: str) -> list[str]:
    """The aria-pressed values of the page's buttons posting to `/s/<id>/<action>/`."""
    return re.findall(
        rf'action="/s/\d+/{action}/".*?aria-pressed="(\w+)"', html, flags=re.S
    )


def test_like_and_unlike_from_a_row_come_back_with_the_state(r, alice, bob):
    bob.post("/u/alice/follow/")
    sid = post(alice, "like me")
    html = page(bob, "/")
    assert pressed(html, "like") == ["false"]
    answer = bob.post(f"/s/{sid}/like/", {"next": "/"})
    assert answer.status_code == 302 and answer["Location"] == "/"
    html = page(bob, "/")
    assert pressed(html, "unlike") == ["true"]
    assert re.search(r'class="link-button like"[^>]*>Like <span class="count">1<', html)
    bob.post(f"/s/{sid}/unlike/", {"next": "https://evil.example/"})
    assert pressed(page(bob, "/"), "like") == ["false"]
    assert r.zcard(keys.likes(sid)) == 0


def test_the_buttons_need_a_post_with_csrf_and_a_login(r, alice, bob):
    sid = post(alice, "x")
    assert bob.get(f"/s/{sid}/like/").status_code == 405
    strict = logged_in_client("bob", enforce_csrf_checks=True)
    assert strict.post(f"/s/{sid}/like/").status_code == 403
    visitor = Client().post(f"/s/{sid}/repost/")
    assert visitor.status_code == 302 and "/login/" in visitor["Location"]
    assert r.zcard(keys.likes(sid)) == 0 and r.zcard(keys.reposts(sid)) == 0


def test_a_blocked_viewer_can_neither_see_nor_act_on_a_status(r, alice, bob):
    sid = post(alice, "not for bob")
    alice.post("/u/bob/block/")
    for action in ("like", "repost", "reply"):
        answer = bob.post(f"/s/{sid}/{action}/", {"text": "@alice hi"})
        assert answer.status_code == 404
    assert bob.get(f"/s/{sid}/").status_code == 404
    assert bob.get(f"/s/{sid}/likes/").status_code == 404
    assert r.zcard(keys.likes(sid)) == 0 and r.zcard(keys.replies(sid)) == 0


def test_a_private_accounts_status_cannot_be_reposted(r, alice, bob):
    bob.post("/u/alice/follow/")
    sid = post(alice, "soon private")
    alice.post("/settings/privacy/", {"private": "on"})
    answer = bob.post(f"/s/{sid}/repost/", follow=True)
    assert "cannot be reposted" in body(answer)
    assert r.zcard(keys.reposts(sid)) == 0


def test_a_repost_shows_who_reposted_and_undo_removes_it(r, alice, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    carol.post("/u/bob/follow/")
    sid = post(alice, "worth sharing")
    assert bob.post(f"/s/{sid}/repost/").status_code == 302
    run_jobs()
    html = page(carol, "/")
    assert "@bob</a> reposted" in html and "worth sharing" in html
    assert f'href="/s/{sid}/"' in html  # the permalink is the original's
    assert status_ids(page(carol, "/timeline/")) == [sid]  # no repost there
    reposters = page(carol, f"/s/{sid}/reposts/")
    assert 'href="/u/bob/"' in reposters
    bob.post(f"/s/{sid}/unrepost/")
    run_jobs()
    assert "worth sharing" not in page(carol, "/")


def test_reply_from_the_status_page_and_see_the_thread(r, alice, bob):
    sid = post(alice, "what do you think?")
    html = page(bob, f"/s/{sid}/")
    assert 'id="reply"' in html and "@alice </textarea>" in html.replace("\n", "")
    answer = bob.post(f"/s/{sid}/reply/", {"text": "@alice I agree"})
    assert answer.status_code == 302
    reply = int(answer["Location"].strip("/").split("/")[-1])
    thread = page(alice, f"/s/{reply}/")
    assert status_ids(thread)[:2] == [sid, reply]  # the parent above the reply
    assert f'Replying to <a href="/s/{reply}/#in-reply-to">@alice</a>' in thread
    parent = page(alice, f"/s/{sid}/")
    assert status_ids(parent) == [sid, reply] and "I agree" in parent
    assert re.search(r'class="reply-link"[^>]*>Reply <span class="count">1<', parent)


def test_a_reply_line_leads_to_the_thread_even_once_its_parent_is_deleted(
    r, alice, bob
):
    """ "Replying to @alice" on a row opens the reply's own page at the statuses
    it answers: the parent when it stands, else the line that says it is gone,
    never a 404 for a deleted parent (found by exploratory testing)."""
    bob.post("/u/alice/follow/")
    sid = post(alice, "hot take")
    answer = bob.post(f"/s/{sid}/reply/", {"text": "@alice cold take"})
    reply = int(answer["Location"].strip("/").split("/")[-1])
    run_jobs()

    def followed(html: str) -> tuple[str, str]:
        link = re.search(r'class="reply-line">Replying to <a href="([^"]+)"', html)
        assert link, "the reply's row names what it replies to"
        return link[1], page(alice, link[1])

    href, thread = followed(page(bob, "/u/bob/"))
    assert href == f"/s/{reply}/#in-reply-to"
    assert 'id="in-reply-to"' in thread
    assert status_ids(thread)[:2] == [sid, reply] and "hot take" in thread
    assert alice.post(f"/s/{sid}/delete/").status_code == 302
    run_jobs()
    href, thread = followed(page(bob, "/u/bob/"))
    assert "A deleted or hidden status" in thread and "hot take" not in thread
    assert status_ids(thread) == [reply]


def test_the_reply_box_names_everyone_in_the_conversation_but_you(r, alice, bob):
    """As Mastodon's compose box: the author and the people the status mentions,
    each once, never yourself (found by exploratory testing: your own status's
    box named you, and the others were left out)."""
    make_user("carol")
    sid = post(alice, "@carol @bob what do you think?")

    def box(client) -> str:
        html = page(client, f"/s/{sid}/").replace("\n", "")
        return re.search(r'id="id_text"[^>]*>(.*?)</textarea>', html, re.S)[1]

    assert box(bob) == "@alice @carol "
    assert box(alice) == "@carol @bob "
    assert box(logged_in_client("carol")) == "@alice @bob "
    plain = post(alice, "just me")
    html = page(alice, f"/s/{plain}/").replace("\n", "")
    assert re.search(r'id="id_text"[^>]*></textarea>', html)


def test_a_blank_reply_is_refused_with_the_page_again(r, alice, bob):
    sid = post(alice, "say something")
    answer = bob.post(f"/s/{sid}/reply/", {"text": "   "})
    assert answer.status_code == 400
    assert "Write something first." in body(answer)
    assert r.zcard(keys.replies(sid)) == 0


def test_who_liked_lists_likers_newest_first_without_blocked_people(r, alice, bob):
    sid = post(alice, "likeable")
    names = ["carol", "dave", "erin"]
    for name in names:
        make_user(name)
        logged_in_client(name).post(f"/s/{sid}/like/")
    bob.post(f"/s/{sid}/like/")
    bob.post("/u/dave/block/")
    assert listed(page(bob, f"/s/{sid}/likes/")) == ["bob", "erin", "carol"]
    assert listed(page(alice, f"/s/{sid}/likes/")) == ["bob", "erin", "dave", "carol"]


def listed(html: str) -> list[str]:
    """The names a people list shows, in its order."""
    part = html.split('<ul class="people card">', 1)[-1].split("</ul>", 1)[0]
    return re.findall(r'<li><a href="/u/(\w+)/">', part)


def count_round_trips(client: Client, url: str) -> int:
    client.get(url)  # warm: connections open, scripts loaded, the name cache filled
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_pages_with_likes_reposts_and_replies_keep_their_round_trips(r, alice, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    bob.post("/u/alice/follow/")
    bob.post("/u/carol/follow/")
    sids = [post(alice, f"status {i}") for i in range(5)]
    for sid in sids:
        carol.post(f"/s/{sid}/like/")
        carol.post(f"/s/{sid}/repost/")
        bob.post(f"/s/{sid}/like/")
    run_jobs()
    # Others' statuses (and reposted ones) show their authors' cards: on a Cluster
    # one more round trip reads them (`timeline.selectors._with_cards`). On one
    # server a home's statuses ride with the auth check, and a profile's with its
    # people in common.
    others = 3 if is_cluster() else 1
    assert count_round_trips(bob, "/") == others
    assert count_round_trips(bob, "/u/carol/") == others
    assert count_round_trips(bob, f"/s/{sids[0]}/likes/") == 2
    assert count_round_trips(bob, f"/s/{sids[0]}/reposts/") == 2
    assert count_round_trips(bob, f"/s/{sids[0]}/") == 2
    # A thread: its statuses and whether their authors are private, in the same two.
    answer = carol.post(f"/s/{sids[0]}/reply/", {"text": "@alice yes"})
    reply = answer["Location"]
    answer = bob.post(reply + "reply/", {"text": "@carol and?"})
    assert count_round_trips(bob, f"/s/{sids[0]}/") == 2
    assert count_round_trips(bob, reply) == 2
    assert count_round_trips(bob, answer["Location"]) == 2


def test_likes_past_the_budget_are_refused_with_429(r, settings, alice, bob):
    settings.RATE_LIMIT_LIKE = "2/1h"
    sid = post(alice, "x")
    assert bob.post(f"/s/{sid}/like/").status_code == 302
    assert bob.post(f"/s/{sid}/unlike/").status_code == 302
    answer = bob.post(f"/s/{sid}/like/")
    assert answer.status_code == 429 and "Retry-After" in answer
    assert r.zcard(keys.likes(sid)) == 0


def test_the_page_shown_after_a_compose_or_reply_error_leads_from_its_own_address(
    r, alice, bob, settings
):
    """After a refused post or reply the page is shown at the form's POST-only
    address (/post/, /s/<id>/reply/): its Like and Repost forms return to the home
    or the status's page, and its "Older" link pages them, not that address (where
    a GET is a 405)."""
    settings.TIMELINE_PAGE_SIZE = 2
    sids = [post(alice, f"note {i}") for i in range(3)]
    bob.post("/u/alice/follow/")
    run_jobs()
    home = body(bob.post("/post/", {"text": "   "}))
    assert "Write something first." in home
    # The compose box's, and each row's Like and Repost.
    assert re.findall(r'name="next" value="([^"]*)"', home) == ["/"] * (1 + 2 * 2)
    older = re.search(r'rel="next"[^>]* href="([^"]*)"', home).group(1)
    assert older.startswith("/?max_id=")
    assert status_ids(page(bob, older)) == [sids[0]]
    thread = body(bob.post(f"/s/{sids[2]}/reply/", {"text": "   "}))
    assert "Write something first." in thread
    backs = re.findall(r'name="next" value="([^"]*)"', thread)
    assert backs and set(backs) == {f"/s/{sids[2]}/"}
