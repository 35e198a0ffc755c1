"""Direct messages (Mastodon's `direct` visibility) on the site: a status for the
people it mentions only, kept out of every timeline, read on the Messages page as
conversations; a reply stays in its conversation; nobody else sees it, acts on it
or learns of it."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.selectors import user_get_by_username
from tests.helpers import (
    body,
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from tests.roundtrips import RoundTripCounter
from tests.timeline.test_edits import texts
from timeline import blocks, edits, privacy, services, social
from timeline import direct as direct_messages
from timeline.domain import InvalidStatus, NotFound


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_LIKE = "off"


@pytest.fixture
def people():
    """Carol follows alice and bob; bob follows alice."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=carol, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=bob.id)
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob, carol


def direct(user, text: str, reply_to: int | None = None) -> int:
    if reply_to is not None:
        sid = social.status_reply(author=user, sid=reply_to, text=text, direct=True).id
    else:
        sid = services.status_create(author=user, text=text, direct=True).id
    run_jobs()
    return sid


def conversations(client) -> list[tuple[str, str, bool]]:
    """The Messages page's conversations, newest first: (with whom, the last
    status's text, unread)."""
    html = page(client, "/messages/")
    rows = re.findall(
        r'<li class="conversation( unread)?"[^>]*>.*?<p class="with">(.*?)</p>'
        r'.*?<p class="status-text">(.*?)</p>',
        html,
        re.S,
    )
    return [
        (
            " ".join(re.sub(r"<[^>]+>", "", who).split()).removeprefix("New: "),
            re.sub(r"<[^>]+>", "", text),
            bool(u),
        )
        for u, who, text in rows
    ]


def mark_read(client) -> None:
    """Mark read what the Messages page shows, as its button (or script) does."""
    seen = re.findall(r'name="seen" value="(\d+:\d+)"', page(client, "/messages/"))
    assert client.post("/messages/read/", {"seen": seen}).status_code == 302


def test_a_direct_message_shows_only_to_its_author_and_whom_it_mentions(r, people):
    alice, bob, carol = people
    services.status_create(author=alice, text="in the open #news")
    sid = direct(alice, "@bob the secret #news")
    run_jobs()
    ali, bo, caro = (logged_in_client(n) for n in ("alice", "bob", "carol"))
    for client in (ali, bo):
        assert "the secret" in page(client, f"/s/{sid}/")
    for client in (caro, Client()):
        assert client.get(f"/s/{sid}/").status_code == 404
    # In no timeline: not the homes (carol and bob follow alice), not her profile,
    # not everyone's posts, not the tag's page.
    for client in (ali, bo, caro):
        for url in ("/", "/u/alice/", "/timeline/", "/tags/news/"):
            shown = texts(page(client, url))
            assert "in the open #news" in shown or url == "/"
            assert not any("the secret" in t for t in shown), (url, shown)
    # The conversations: the author's (read), the recipient's (unread).
    assert conversations(ali) == [("With @bob", "@bob the secret #news", False)]
    assert conversations(bo) == [("With @alice", "@bob the secret #news", True)]
    assert conversations(caro) == []
    assert "Nothing here yet" in page(caro, "/messages/")
    assert notifications_shown(bo)[0].startswith("@alice mentioned you")
    assert notifications_shown(caro) == []


def test_nobody_else_acts_on_it_and_nobody_reposts_it(r, people):
    alice, bob, carol = people
    sid = direct(alice, "@bob just us")
    caro = logged_in_client("carol")
    for action in ("like", "repost", "bookmark", "mute"):
        assert caro.post(f"/s/{sid}/{action}/").status_code == 404, action
    assert caro.post(f"/s/{sid}/reply/", {"text": "@alice hi"}).status_code == 404
    for what in ("likes", "reposts", "history"):
        assert caro.get(f"/s/{sid}/{what}/").status_code == 404, what
    with pytest.raises(NotFound):
        social.status_like(user=carol, sid=sid)
    bo = logged_in_client("bob")
    assert bo.post(f"/s/{sid}/like/").status_code == 302
    refused = bo.post(f"/s/{sid}/repost/", follow=True)
    assert "A direct message cannot be reposted." in body(refused)
    assert f'action="/s/{sid}/repost/"' not in page(bo, f"/s/{sid}/")
    ali = logged_in_client("alice")
    assert "Pin to your profile" not in page(ali, f"/s/{sid}/")


def test_a_reply_stays_in_the_conversation_and_may_bring_someone_in(r, people):
    alice, bob, carol = people
    first = direct(alice, "@bob lunch?")
    bo = logged_in_client("bob")
    html = page(bo, f"/s/{first}/")
    assert "Only the people in this conversation see your reply." in html
    assert bo.post(f"/s/{first}/reply/", {"text": "@alice yes"}).status_code == 302
    run_jobs()
    assert conversations(logged_in_client("alice")) == [
        ("With @bob", "@alice yes", True)
    ]
    assert conversations(bo) == [("With @alice", "@alice yes", False)]
    # Carol, named in a reply, joins from there: she sees that reply, not the
    # start of the conversation.
    (reply,) = [
        s
        for s in re.findall(r'data-status-id="(\d+)"', page(bo, f"/s/{first}/"))
        if int(s) != first
    ]
    third = direct(alice, "@carol join us", reply_to=int(reply))
    caro = logged_in_client("carol")
    assert conversations(caro) == [("With @alice, @bob", "@carol join us", True)]
    assert "join us" in page(caro, f"/s/{third}/")
    assert caro.get(f"/s/{first}/").status_code == 404
    assert "lunch?" not in page(caro, f"/s/{third}/")
    # One conversation for each of them, its newest status last.
    assert [c[1] for c in conversations(bo)] == ["@carol join us"]


def test_what_a_direct_message_refuses(r, people):
    alice, bob, _ = people
    with pytest.raises(InvalidStatus, match="Mention the people it is for"):
        services.status_create(author=alice, text="nobody named", direct=True)
    with pytest.raises(InvalidStatus, match="Mention the people it is for"):
        services.status_create(author=alice, text="@nosuchuser hi", direct=True)
    # On the page: the error, and what was typed kept.
    ali = logged_in_client("alice")
    refused = ali.post("/post/", {"text": "to no one", "direct": "on"})
    assert refused.status_code == 400
    html = body(refused)
    assert "Mention the people it is for" in html and "to no one" in html
    assert re.search(r'name="direct"[^>]*checked', html)
    # A reply to a direct message is direct, whatever the form says.
    sid = direct(alice, "@bob only us")
    reply = social.status_reply(author=bob, sid=sid, text="sure")
    assert reply.direct and reply.to == (alice.id,)


def test_posted_from_the_compose_box(r, people):
    ali = logged_in_client("alice")
    assert 'name="direct"' in page(ali, "/")
    posted = ali.post("/post/", {"text": "@bob from the box", "direct": "on"})
    assert posted.status_code == 302
    run_jobs()
    assert conversations(logged_in_client("bob")) == [
        ("With @alice", "@bob from the box", True)
    ]
    assert "from the box" not in page(logged_in_client("carol"), "/")


def test_read_marks_and_removing_a_conversation(r, people):
    alice, bob, _ = people
    direct(alice, "@bob one")
    bo = logged_in_client("bob")
    assert conversations(bo)[0][2] is True
    mark_read(bo)
    assert conversations(bo)[0][2] is False
    html = page(bo, "/messages/")
    (conv,) = re.findall(r'action="/messages/(\d+)/remove/"', html)
    assert bo.post(f"/messages/{conv}/remove/").status_code == 302
    assert conversations(bo) == []
    # A new message in it brings it back.
    direct(alice, "@bob two")
    assert conversations(bo) == [("With @alice", "@bob two", True)]


def test_a_deleted_message_leaves_its_conversation(r, people):
    alice, bob, _ = people
    first = direct(alice, "@bob first")
    second = direct(alice, "@bob second", reply_to=first)
    bo = logged_in_client("bob")
    assert conversations(bo) == [("With @alice", "@bob second", True)]
    services.status_delete(user=alice, sid=second)
    assert conversations(bo)[0][1] == "@bob first"  # at once, before its job
    run_jobs()
    assert conversations(bo)[0][1] == "@bob first"
    services.status_delete(user=alice, sid=first)
    run_jobs()
    assert conversations(bo) == []
    assert conversations(logged_in_client("alice")) == []


def test_a_block_keeps_it_from_arriving(r, people):
    alice, bob, _ = people
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    run_jobs()
    sid = direct(alice, "@bob are you there")
    bo = logged_in_client("bob")
    assert conversations(bo) == []
    assert not any("alice" in n for n in notifications_shown(bo))
    assert bo.get(f"/s/{sid}/").status_code == 404


def test_an_edit_keeps_it_out_of_tag_pages_and_its_audience_fixed(r, people):
    alice, bob, carol = people
    sid = direct(alice, "@bob plain")
    edits.status_edit(user=alice, sid=sid, text="@bob now #tagged and @carol")
    run_jobs()
    caro = logged_in_client("carol")
    for client in (caro, logged_in_client("alice")):
        assert texts(page(client, "/tags/tagged/")) == []
        assert "#tagged" not in page(client, "/timeline/")  # nor in the trends
    assert caro.get(f"/s/{sid}/").status_code == 404
    assert conversations(caro) == []
    shown = texts(page(logged_in_client("bob"), f"/s/{sid}/"))
    assert shown == ["@bob now #tagged and @carol"]


def test_an_account_deletion_takes_its_messages(r, people):
    alice, bob, _ = people
    sid = direct(alice, "@bob before I go")
    services.account_close(user=alice)
    run_jobs()
    bo = logged_in_client("bob")
    assert bo.get(f"/s/{sid}/").status_code == 404
    assert conversations(bo) == []


@pytest.mark.real_redis
def test_the_messages_page_costs_two_round_trips(r, people, redis_backend):
    alice, bob, carol = people
    for n in range(3):
        direct(alice, f"@bob message {n}")
    direct(carol, "@bob from carol")
    bo = logged_in_client("bob")
    bo.get("/messages/")
    with RoundTripCounter() as counter:
        assert len(conversations(bo)) == 4  # each message began one
    # The conversations with the auth check, then their statuses with the others
    # in them (whose cards are the authors': the viewer's or theirs).
    assert counter.count == 2
    assert counter.most_per_node <= 1


def test_the_navigation_links_to_messages_with_a_count(r, people):
    alice, bob, _ = people
    bo = logged_in_client("bob")
    assert 'href="/messages/"' in page(bo, "/")
    direct(alice, "@bob ping")
    html = page(bo, "/")
    assert re.search(
        r'href="/messages/"[^>]*>Messages <span class="badge"[^>]*>1<', html
    )
    mark_read(bo)
    assert not re.search(
        r'href="/messages/"[^>]*>Messages <span class="badge"', page(bo, "/")
    )


def test_visitors_are_sent_to_log_in(r, people):
    assert Client().get("/messages/").status_code == 302
    assert Client().post("/messages/read/").status_code in (302, 403)


def test_a_conversation_a_block_hides_leaves_no_unread_badge(r, people):
    """Bob blocks alice with her message unread: the Messages page shows nothing of
    it, so once he has seen the page (its script, or 'Mark all as read') the
    navigation no longer counts it unread."""
    alice, bob, _ = people
    direct(alice, "@bob hello")
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    run_jobs()
    bo = logged_in_client("bob")
    assert conversations(bo) == []
    mark_read(bo)
    assert not re.search(
        r'href="/messages/"[^>]*>Messages <span class="badge"', page(bo, "/")
    )


def test_a_private_accounts_message_reaches_whom_it_names_whoever_they_follow(
    r, people
):
    """Alice's account is private and dave does not follow her: her direct message
    to him is his to read all the same (she chose him), as Mastodon's: its page,
    the notification, a like and a reply; her approved follower carol, not named,
    sees none of it. His reply reaches her whatever she follows."""
    alice, bob, carol = people
    make_user("dave")
    dave = user_get_by_username(username="dave")
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs()
    sid = direct(alice, "@dave a word in private")
    da = logged_in_client("dave")
    assert conversations(da) == [("With @alice", "@dave a word in private", True)]
    assert "a word in private" in page(da, f"/s/{sid}/")
    assert notifications_shown(da)[0].startswith("@alice mentioned you")
    social.status_like(user=dave, sid=sid)
    assert da.post(f"/s/{sid}/reply/", {"text": "@alice got it"}).status_code == 302
    run_jobs()
    ali = logged_in_client("alice")
    assert conversations(ali) == [("With @dave", "@alice got it", True)]
    assert texts(page(ali, f"/s/{sid}/")) == [
        "@dave a word in private",
        "@alice got it",
    ]
    assert "a word in private" in texts(page(da, f"/s/{sid}/"))[0]
    caro = logged_in_client("carol")
    assert caro.get(f"/s/{sid}/").status_code == 404
    assert conversations(caro) == []


def test_an_audience_past_its_cap_is_refused_with_a_message(r, people, monkeypatch):
    """A direct message's audience grows with its thread (each reply adds whom it
    names): past AUDIENCE_MAX people it is refused with a message, on the page with
    what was typed kept; a reply that names nobody new still goes."""
    monkeypatch.setattr(direct_messages, "AUDIENCE_MAX", 2, raising=False)
    alice, bob, _ = people
    make_user("dave")
    with pytest.raises(InvalidStatus, match="at most 2 people"):
        services.status_create(
            author=alice, text="@bob @carol @dave all of you", direct=True
        )
    sid = direct(alice, "@bob @carol two of you")
    bo = logged_in_client("bob")
    refused = bo.post(f"/s/{sid}/reply/", {"text": "@dave join us"})
    assert refused.status_code == 400
    html = body(refused)
    assert "at most 2 people" in html and "join us" in html
    reply = social.status_reply(author=bob, sid=sid, text="just us")
    carol = user_get_by_username(username="carol")
    assert reply.direct and reply.to == tuple(sorted((alice.id, carol.id)))
