"""An existing client library, unmodified and used as its documentation says, drives
the site over HTTP: Mastodon.py registers an app, a person authorizes it through the
site's own login and consent page, and the app posts, replies, follows, reads its
home and notifications, likes, reposts, saves its read markers, pages, deletes and
revokes its token.

Served from a thread of this process, so the test runs on fakeredis, a real server
and a real Cluster like every other.
"""

from __future__ import annotations

import queue
import re
import time
from datetime import UTC, datetime, timedelta
from html import unescape
from urllib.parse import urljoin

import pytest
import requests
from mastodon import (
    Mastodon,
    MastodonAPIError,
    MastodonNotFoundError,
    MastodonUnauthorizedError,
    StreamListener,
)

from devtools.liveserver import serve_in_thread
from tests.helpers import PASSWORD, make_user

OOB = "urn:ietf:wg:oauth:2.0:oob"
SCOPES = ["read", "write", "follow", "push"]  # Mastodon.py's default


@pytest.fixture(scope="module")
def site():
    with serve_in_thread() as url:
        yield url


@pytest.fixture(autouse=True)
def _no_limits(settings):
    for name in ("POST", "FOLLOW", "LIKE", "API", "APPS", "REPORT"):
        setattr(settings, f"RATE_LIMIT_{name}", "off")


def _form(html: str, button: str) -> tuple[str, dict[str, str]]:
    """The action and hidden fields of the form holding the button named `button`,
    with that button's own name and value, as a browser submits it."""
    for form in re.findall(r"<form\b.*?</form>", html, flags=re.S):
        pressed = re.search(rf"<button([^>]*)>\s*{re.escape(button)}\s*<", form)
        if pressed:
            action = re.search(r'action="([^"]*)"', form)
            fields = dict(
                re.findall(
                    r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"',
                    form,
                )
            )
            name = re.search(r'name="([^"]+)"', pressed[1])
            value = re.search(r'value="([^"]*)"', pressed[1])
            if name:
                fields[name[1]] = value[1] if value else ""
            return unescape(action[1]) if action else "", {
                k: unescape(v) for k, v in fields.items()
            }
    raise AssertionError(f"no form with a {button!r} button in:\n{html[:3000]}")


def _authorize_in_browser(authorize_url: str, username: str) -> str:
    """What a person does in their browser: open the app's authorization link, log
    in on the site's own page, approve, and copy the code the page shows."""
    browser = requests.Session()
    page = browser.get(authorize_url, timeout=10)
    assert page.status_code == 200
    if "/login/" in page.url:
        action, fields = _form(page.text, "Log in")
        page = browser.post(
            urljoin(page.url, action or page.url),
            data={**fields, "username": username, "password": PASSWORD},
            headers={"Referer": page.url},
            timeout=10,
        )
        assert page.status_code == 200, page.text[:2000]
    assert "Authorize" in page.text
    action, fields = _form(page.text, "Authorize")
    shown = browser.post(
        urljoin(page.url, action or page.url),
        data=fields,
        headers={"Referer": page.url},
        timeout=10,
    )
    assert shown.status_code == 200, shown.text[:2000]
    code = re.search(r'<input[^>]*value="([^"]+)"[^>]*data-auth-code', shown.text)
    assert code, shown.text[:3000]
    return unescape(code[1])


def test_mastodon_py_drives_the_site(site):
    alice = make_user("alice")
    make_user("bob")

    # The app registers itself and Alice authorizes it, as the library's
    # documentation shows.
    app = _signed_in(site, "alice")
    token = app.access_token
    assert token

    me = app.account_verify_credentials()
    assert me.username == "alice" and str(me.id) == str(alice.id)

    # Bob, through his own app session, follows Alice; Alice follows Bob back.
    bob_app = _signed_in(site, "bob")
    bob_id = bob_app.account_verify_credentials().id
    relationship = bob_app.account_follow(me.id)
    assert relationship.following
    assert app.account_relationships([bob_id])[0].followed_by
    assert app.account_follow(bob_id).following

    # Alice posts (idempotently: the retry makes nothing new), Bob replies.
    first = app.status_post("Hello from an app #apps", idempotency_key="first-post")
    again = app.status_post("Hello from an app #apps", idempotency_key="first-post")
    assert again.id == first.id
    assert "#<span>apps</span>" in first.content or "#apps" in first.content
    reply = bob_app.status_reply(first, "welcome, @alice")
    assert str(reply.in_reply_to_id) == str(first.id)
    context = app.status_context(first.id)
    assert [str(s.id) for s in context.descendants] == [str(reply.id)]
    # A content warning: posted, and kept by the library's reply, as it keeps one.
    warned = app.status_post("the ending", spoiler_text="Film")
    assert (warned.spoiler_text, warned.sensitive) == ("Film", True)
    answer = bob_app.status_reply(warned, "no way")
    assert (answer.spoiler_text, app.status(answer.id).spoiler_text) == ("Film",) * 2
    # Edited by the library: a new text, its warning kept (sent no `spoiler_text`:
    # this site keeps it, where Mastodon would clear it); its versions and source.
    edited = app.status_update(warned.id, "the real ending")
    assert "the real ending" in edited.content and edited.spoiler_text == "Film"
    assert edited.edited_at is not None
    history = app.status_history(warned.id)
    assert ["the ending" in v.content for v in history] == [True, False]
    assert app.status_source(warned.id).text == "the real ending"
    # Scheduled by the library: listed, moved, cancelled.
    when = datetime.now(tz=UTC) + timedelta(hours=2)
    waiting = app.status_post("tomorrow's news", scheduled_at=when)
    assert waiting.params.text == "tomorrow's news"
    assert [str(s.id) for s in app.scheduled_statuses()] == [str(waiting.id)]
    moved = app.scheduled_status_update(waiting.id, when + timedelta(hours=1))
    assert moved.scheduled_at > waiting.scheduled_at
    app.scheduled_status_delete(waiting.id)
    assert app.scheduled_statuses() == []

    # Bob likes and reposts Alice's status; she is told, and the counts show it.
    assert bob_app.status_favourite(first.id).favourited
    reblog = bob_app.status_reblog(first.id)
    assert str(reblog.reblog.id) == str(first.id)
    _run_jobs()
    notified = {n.type for n in app.notifications()}
    assert {"favourite", "reblog", "mention", "follow"} <= notified
    assert app.notifications_unread_count().count == len(app.notifications())
    # Grouped, as a 4.3 client reads them: the library parses the site's groups.
    grouped = app.grouped_notifications()
    types = {g.type: g for g in grouped.notification_groups}
    assert {"favourite", "reblog", "mention", "follow"} <= set(types)
    assert types["favourite"].sample_account_ids == [bob_id]
    assert str(types["favourite"].status_id) == str(first.id)
    assert str(bob_id) in {str(a.id) for a in grouped.accounts}
    assert app.unread_grouped_notifications_count() == len(grouped.notification_groups)
    liked = types["favourite"].group_key
    one = app.grouped_notification(liked)
    assert [g.group_key for g in one.notification_groups] == [liked]
    assert [str(a.id) for a in app.grouped_notification_accounts(liked)] == [
        str(bob_id)
    ]
    app.dismiss_grouped_notification(liked)
    left = {g.group_key for g in app.grouped_notifications().notification_groups}
    assert liked not in left and left
    # Markers: Alice's app saves where she stopped reading. Her notifications
    # marker is the site's own read mark: nothing is unread any more, there too.
    newest = app.notifications()[0]
    saved = app.markers_set(["home", "notifications"], [first.id, newest.id])
    assert str(saved.home.last_read_id) == str(first.id)
    assert int(saved.notifications.last_read_id) >= int(newest.id)
    assert app.notifications_unread_count().count == 0
    assert app.markers_get("home") == {"home": saved.home}
    moved = app.markers_set("home", reply.id).home
    assert (moved.version, str(moved.last_read_id)) == (
        saved.home.version + 1,
        str(reply.id),
    )
    assert app.markers_get(["home", "notifications"]) == {
        "home": moved,
        "notifications": saved.notifications,
    }
    assert bob_app.markers_get(["home", "notifications"]) == {}
    seen = app.status(first.id)
    assert seen.favourites_count == 1 and seen.reblogs_count == 1
    # Alice mutes the thread: the reply in it says so; unmuted, it does not.
    assert app.status_mute(first.id).muted is True
    assert app.status(reply.id).muted is True
    assert app.status_unmute(first.id).muted is False

    # Bob's home holds Alice's status; paging walks it without repeats or gaps.
    for n in range(25):
        app.status_post(f"numbered status {n}")
    _run_jobs()
    page = bob_app.timeline_home(limit=10)
    walked = list(page)
    while (page := bob_app.fetch_next(page)) is not None and len(page):
        walked += list(page)
    ids = [str(s.id) for s in walked]
    assert len(ids) == len(set(ids)) >= 27
    # Alice's status shows once, as Bob's own repost of it (at its newest).
    shown = [str((s.reblog or s).id) for s in walked]
    assert shown.count(str(first.id)) == 1
    newest = bob_app.timeline_home(limit=5)
    older = bob_app.timeline_home(limit=5, max_id=newest[-1].id)
    back = bob_app.timeline_home(limit=5, min_id=older[0].id)
    assert [str(s.id) for s in back] == [str(s.id) for s in newest]

    # Search finds people by name.
    found = app.search_v2("bo", result_type="accounts")
    assert "bob" in [a.username for a in found.accounts]

    # Alice deletes her status: it is gone for everyone.
    deleted = app.status_delete(first.id)
    assert str(deleted.id) == str(first.id)
    with pytest.raises(MastodonNotFoundError):
        bob_app.status(first.id)

    # Revoking the token ends the app's access at once.
    app.revoke_access_token(allow_http=True)
    stale = Mastodon(access_token=token, api_base_url=site, request_timeout=10)
    with pytest.raises(MastodonUnauthorizedError):
        stale.account_verify_credentials()


def _signed_in(site: str, username: str) -> Mastodon:
    """An app registered, authorized by `username` in their browser, logged in."""
    client_id, client_secret = Mastodon.create_app(
        f"{username}'s app", api_base_url=site, redirect_uris=OOB, scopes=SCOPES
    )
    app = Mastodon(
        client_id=client_id,
        client_secret=client_secret,
        api_base_url=site,
        ratelimit_method="throw",
        request_timeout=10,
    )
    url = app.auth_request_url(redirect_uris=OOB, scopes=SCOPES, allow_http=True)
    code = _authorize_in_browser(url, username)
    app.log_in(code=code, redirect_uri=OOB, scopes=SCOPES, allow_http=True)
    return app


def _run_jobs() -> None:
    from tests.helpers import run_jobs

    run_jobs()


def test_mastodon_py_keeps_filters_and_reads_what_they_match(site):
    """Mastodon.py's v2 filter calls, unmodified, and `filters_apply` (its own
    client-side use of the v1 filters) leave out what the site marks."""
    make_user("fay"), make_user("gil")
    fay = _signed_in(site, "fay")
    gil = _signed_in(site, "gil")
    fay.account_follow(gil.me()["id"])
    _run_jobs()
    made = fay.create_filter_v2(
        "Beasts",
        ["home", "public"],
        "warn",
        keywords_attributes=[{"keyword": "dragon", "whole_word": True}],
    )
    assert [k["keyword"] for k in made["keywords"]] == ["dragon"]
    word = fay.add_filter_keyword_v2(made["id"], "wyvern", whole_word=False)
    assert [k["id"] for k in fay.filter_keywords_v2(made["id"])][-1] == word["id"]
    fay.update_filter_v2(made["id"], title="Monsters", filter_action="hide")
    (listed,) = fay.filters_v2()
    assert listed["title"] == "Monsters" and listed["filter_action"] == "hide"
    gil.status_post("a dragon appears")
    gil.status_post("wyverns too")
    gil.status_post("a quiet day")
    _run_jobs()
    home = fay.timeline_home()
    marked = {
        re.sub(r"<[^>]+>", "", s["content"]): [
            f["filter"]["title"] for f in s["filtered"]
        ]
        for s in home
    }
    assert marked == {
        "a quiet day": [],
        "wyverns too": ["Monsters"],
        "a dragon appears": ["Monsters"],
    }
    # The v1 view of the same filter, and Mastodon.py's own client-side filtering.
    v1 = fay.filters()
    assert sorted(f["phrase"] for f in v1) == ["dragon", "wyvern"]
    kept = fay.filters_apply(home, v1, "home")
    assert [re.sub(r"<[^>]+>", "", s["content"]) for s in kept] == ["a quiet day"]
    fay.delete_filter_keyword_v2(word["id"])
    fay.delete_filter_v2(made["id"])
    assert fay.filters_v2() == []
    with pytest.raises(MastodonNotFoundError):
        fay.filter_v2(made["id"])


def test_mastodon_py_keeps_lists_and_reads_their_timelines(site):
    """Mastodon.py's list calls, unmodified: make a list, put followed people on it,
    read its timeline (and page it), find an account's lists, take one off, change
    and delete the list; someone not followed is refused."""
    for name in ("hal", "ida", "jon", "kim"):
        make_user(name)
    hal = _signed_in(site, "hal")
    ida, jon, kim = (_signed_in(site, n) for n in ("ida", "jon", "kim"))
    ida_id, jon_id, kim_id = (a.me()["id"] for a in (ida, jon, kim))
    hal.account_follow(ida_id)
    hal.account_follow(jon_id)
    _run_jobs()
    made = hal.list_create("Neighbours", replies_policy="none")
    assert made["title"] == "Neighbours" and made["replies_policy"] == "none"
    hal.list_accounts_add(made["id"], [ida_id, jon_id])
    with pytest.raises(MastodonAPIError):
        hal.list_accounts_add(made["id"], [kim_id])
    assert {a["acct"] for a in hal.list_accounts(made["id"])} == {"ida", "jon"}
    for n in range(4):
        (ida if n % 2 else jon).status_post(f"news {n}")
    kim.status_post("not on the list")
    _run_jobs()
    first = hal.timeline_list(made["id"], limit=3)
    older = hal.fetch_next(first)
    texts = [re.sub(r"<[^>]+>", "", s["content"]) for s in [*first, *older]]
    assert texts == ["news 3", "news 2", "news 1", "news 0"]
    assert [e["id"] for e in hal.account_lists(ida_id)] == [made["id"]]
    hal.list_accounts_delete(made["id"], [ida_id])
    assert [a["acct"] for a in hal.list_accounts(made["id"])] == ["jon"]
    assert hal.account_lists(ida_id) == []
    # Exclusive: jon's statuses leave hal's home, and stay on the list.
    home = [re.sub(r"<[^>]+>", "", s["content"]) for s in hal.timeline_home()]
    assert home == ["news 3", "news 2", "news 1", "news 0"]
    made_exclusive = hal.list_update(made["id"], "Neighbours", exclusive=True)
    assert made_exclusive["exclusive"] is True
    home = [re.sub(r"<[^>]+>", "", s["content"]) for s in hal.timeline_home()]
    assert home == ["news 3", "news 1"]
    # A member's new status is kept out as it is pushed, and shows on the list.
    jon.status_post("news 4")
    _run_jobs()
    home = [re.sub(r"<[^>]+>", "", s["content"]) for s in hal.timeline_home()]
    assert home == ["news 3", "news 1"]
    assert len(hal.timeline_list(made["id"])) == 3
    changed = hal.list_update(made["id"], "Street", replies_policy="followed")
    assert changed["exclusive"] is False
    # No longer exclusive: jon's newest come back to the home.
    home = [re.sub(r"<[^>]+>", "", s["content"]) for s in hal.timeline_home()]
    assert home == ["news 4", "news 3", "news 2", "news 1", "news 0"]
    assert changed["title"] == "Street" and hal.list(made["id"])["title"] == "Street"
    assert [e["title"] for e in hal.lists()] == ["Street"]
    hal.list_delete(made["id"])
    assert hal.lists() == []
    with pytest.raises(MastodonNotFoundError):
        hal.timeline_list(made["id"])


def test_mastodon_py_reads_familiar_followers(site):
    """`account_familiar_followers`, unmodified: whom you follow who follow them."""
    for name in ("lea", "max", "ned", "oli"):
        make_user(name)
    lea, mx, ned, oli = (_signed_in(site, n) for n in ("lea", "max", "ned", "oli"))
    max_id, ned_id, oli_id = (a.me()["id"] for a in (mx, ned, oli))
    lea.account_follow(max_id)
    lea.account_follow(ned_id)
    mx.account_follow(oli_id)
    ned.account_follow(oli_id)
    _run_jobs()
    oli_familiar, max_familiar = lea.account_familiar_followers([oli_id, max_id])
    assert str(oli_familiar.id) == str(oli_id)
    assert sorted(a.acct for a in oli_familiar.accounts) == ["max", "ned"]
    assert str(max_familiar.id) == str(max_id) and max_familiar.accounts == []


def test_mastodon_py_sends_direct_messages_and_reads_conversations(site):
    """A direct status and Mastodon.py's conversations calls, unmodified."""
    for name in ("pam", "quin", "rex"):
        make_user(name)
    pam, quin, rex = (_signed_in(site, n) for n in ("pam", "quin", "rex"))
    rex.account_follow(pam.me()["id"])
    _run_jobs()
    sent = pam.status_post("@quin just between us", visibility="direct")
    assert sent.visibility == "direct"
    _run_jobs()
    reply = quin.status_reply(sent, "agreed")  # the library keeps the visibility
    assert reply.visibility == "direct"
    _run_jobs()
    (conversation,) = pam.conversations()
    assert conversation.unread and str(conversation.last_status.id) == str(reply.id)
    assert [a.acct for a in conversation.accounts] == ["quin"]
    assert pam.conversations_read(conversation.id).unread is False
    assert rex.conversations() == []
    assert all(str(s.id) != str(sent.id) for s in rex.timeline_home())
    with pytest.raises(MastodonNotFoundError):
        rex.status(sent.id)


def test_mastodon_py_sends_private_replies_to_a_public_status(site):
    """Two private replies to one public status (`status_reply` with
    visibility="direct"): its author has two conversations, one with each; the
    status counts and lists neither, for a follower of all three."""
    for name in ("sal", "tad", "uma", "vic"):
        make_user(name)
    sal, tad, uma, vic = (_signed_in(site, n) for n in ("sal", "tad", "uma", "vic"))
    for name in ("sal", "tad", "uma"):
        vic.account_follow(vic.account_lookup(name)["id"])
    _run_jobs()
    public = sal.status_post("who is coming?")
    _run_jobs()
    first = tad.status_reply(public, "me, quietly", visibility="direct")
    _run_jobs()
    second = uma.status_reply(public, "me too, quietly", visibility="direct")
    _run_jobs()
    assert first.visibility == second.visibility == "direct"
    assert str(first.in_reply_to_id) == str(public.id)
    found = sal.conversations()
    assert [str(c.last_status.id) for c in found] == [str(second.id), str(first.id)]
    assert [[a.acct for a in c.accounts] for c in found] == [["uma"], ["tad"]]
    assert vic.status(public.id).replies_count == 0
    assert vic.status_context(public.id).descendants == []
    assert vic.conversations() == []
    with pytest.raises(MastodonNotFoundError):
        vic.status(first.id)


def test_mastodon_py_reports_an_account_and_its_status(site):
    """Mastodon.py's `report`, unmodified: the Report it reads back, the operators'
    copy, and its 404 for a status of someone else and 422 for a violation (the
    site has no rules)."""
    from timeline import reports

    for name in ("sam", "tess"):
        make_user(name)
    sam, tess = _signed_in(site, "sam"), _signed_in(site, "tess")
    spam = tess.status_post("buy cheap followers")
    tess_id = tess.me()["id"]
    filed = sam.report(
        tess_id,
        status_ids=[spam],
        comment="Spam account",
        forward=True,
        category="spam",
    )
    assert str(filed.target_account.id) == str(tess_id)
    assert [str(i) for i in filed.status_ids] == [str(spam.id)]
    assert (filed.category, filed.comment) == ("spam", "Spam account")
    assert filed.action_taken is False and filed.forwarded is False
    kept = reports.report_get(rid=int(filed.id))
    assert kept.reporter == "sam" and kept.statuses[0].text == "buy cheap followers"
    own = sam.status_post("mine")
    with pytest.raises(MastodonNotFoundError):
        sam.report(tess_id, status_ids=[own])
    with pytest.raises(MastodonAPIError, match="valid rules"):
        sam.report(tess_id, category="violation")


def test_mastodon_py_reads_and_dismisses_suggestions(site):
    """Mastodon.py's `suggestions()` (the v2 endpoint, unpacked to Accounts, as the
    library does past 3.4.0), `suggestions_v2()` with its reasons, and
    `suggestion_delete()`: the person dismissed is suggested no more, to the app
    and on the site."""
    for name in ("lea", "max", "ned", "ola"):
        make_user(name)
    lea = _signed_in(site, "lea")
    max_, ned = _signed_in(site, "max"), _signed_in(site, "ned")
    ned_id, ola_id = ned.me()["id"], max_.account_lookup("ola")["id"]
    lea.account_follow(max_.me()["id"])
    max_.account_follow(ned_id)
    max_.account_follow(ola_id)
    _run_jobs()
    assert {a["acct"] for a in lea.suggestions()[:2]} == {"ned", "ola"}
    reasons = {s["account"]["acct"]: s["sources"] for s in lea.suggestions_v2()}
    assert "friends_of_friends" in reasons["ned"]
    lea.suggestion_delete(ned_id)  # raises on an error status
    assert "ned" not in [a["acct"] for a in lea.suggestions()]
    assert "ned" not in [a["acct"] for a in lea.suggestions_v1()]
    assert "ola" in [a["acct"] for a in lea.suggestions()]
    site_page = requests.Session()
    login = site_page.get(urljoin(site, "/login/"), timeout=10)
    action, fields = _form(login.text, "Log in")
    site_page.post(
        urljoin(login.url, action or login.url),
        data={**fields, "username": "lea", "password": PASSWORD},
        headers={"Referer": login.url},
        timeout=10,
    )
    shown = site_page.get(urljoin(site, "/people/suggested/"), timeout=10).text
    assert 'href="/u/ola/"' in shown and 'href="/u/ned/"' not in shown


def test_mastodon_py_follows_tags_and_reads_them_in_the_home(site):
    """Mastodon.py's followed-tag calls, unmodified: follow a tag, find it among the
    followed tags (paged), read a stranger's tagged status in the home, unfollow
    it, and the status is gone from the home."""
    for name in ("lea", "max"):
        make_user(name)
    lea, stranger = _signed_in(site, "lea"), _signed_in(site, "max")
    followed = lea.tag_follow("Gardening")
    assert followed["name"] == "gardening" and followed["following"] is True
    # Its id (Mastodon 4.x's, a string) is the case-folded name; the library reads
    # it as Tag.id and, handed the Tag back, asks by its name.
    assert followed["id"] == "gardening" and followed.id == "gardening"
    assert lea.tag(followed)["name"] == "gardening"
    lea.tag_follow("birds")
    assert lea.tag("gardening")["following"] is True
    first = lea.followed_tags(limit=1)
    assert [t["name"] for t in first] == ["birds"]
    assert [t["name"] for t in lea.fetch_next(first)] == ["gardening"]
    stranger.status_post("first tomatoes #gardening")
    stranger.status_post("nothing to see")
    _run_jobs()
    home = lea.timeline_home()
    assert [re.sub(r"<[^>]+>", "", s["content"]) for s in home] == [
        "first tomatoes #gardening"
    ]
    unfollowed = lea.tag_unfollow("gardening")
    assert unfollowed["following"] is False
    assert [t["name"] for t in lea.followed_tags()] == ["birds"]
    assert lea.timeline_home() == []


def test_mastodon_py_reads_a_repost_of_a_pulled_status_once(site, settings):
    """Mastodon.py pages a home (`timeline_home`, `fetch_next`) where a pushed
    author's reblog of a pulled author's status (merged from her outbox at read)
    comes 3 entries above it, within the falloff: the status shows once, as
    itself, and the reblog not at all."""
    settings.FANOUT_PUSH_MAX = 2  # amy, with three followers, is pulled
    for name in ("amy", "bea", "ned", "fan1", "fan2"):
        make_user(name)
    amy, bea, ned = (_signed_in(site, n) for n in ("amy", "bea", "ned"))
    for fan in (ned, _signed_in(site, "fan1"), _signed_in(site, "fan2")):
        fan.account_follow(amy.me()["id"])
    ned.account_follow(bea.me()["id"])
    _run_jobs()
    original = amy.status_post("worth a reblog")
    for i in range(3):
        amy.status_post(f"later {i}")
    time.sleep(0.003)  # the reblog numbered above amy's (ids follow time)
    bea.status_reblog(original["id"])
    _run_jobs()
    page, shown = ned.timeline_home(limit=3), []
    while page:
        shown += [((s["reblog"] or s)["id"], s["reblog"] is not None) for s in page]
        page = ned.fetch_next(page)
    assert [row for row in shown if row[0] == original["id"]] == [
        (original["id"], False)
    ]
    assert len(shown) == 4


def test_mastodon_py_posts_a_poll_votes_and_reads_the_results(site):
    """Mastodon.py's poll calls, unmodified: the instance's limits, a status posted
    with `make_poll` (the library sends it as JSON), a vote (sent as a form's
    `choices[]`), the poll read again, and the votes it refuses."""
    for name in ("nia", "oto"):
        make_user(name)
    nia, oto = _signed_in(site, "nia"), _signed_in(site, "oto")
    limits = nia.instance()["configuration"]["polls"]
    assert limits["max_options"] == 4 and limits["min_expiration"] == 300
    asked = nia.status_post(
        "Tea or coffee?",
        poll=nia.make_poll(["tea", "coffee", "both"], expires_in=3600, multiple=True),
    )
    poll = asked.poll
    assert [o.title for o in poll.options] == ["tea", "coffee", "both"]
    assert poll.multiple is True and poll.expired is False
    assert poll.voted is True and poll.own_votes == []  # its author's
    voted = oto.poll_vote(poll.id, [0, 2])
    assert voted.own_votes == [0, 2] and voted.voted is True
    assert [o.votes_count for o in voted.options] == [1, 0, 1]
    assert voted.voters_count == 1 and voted.votes_count == 2
    assert oto.status(asked.id).poll.own_votes == [0, 2]
    assert [o.votes_count for o in nia.poll(poll.id).options] == [1, 0, 1]
    with pytest.raises(MastodonAPIError) as again:
        oto.poll_vote(poll, 1)
    assert "already voted" in str(again.value)
    with pytest.raises(MastodonAPIError) as own:
        nia.poll_vote(poll, 1)
    assert "own poll" in str(own.value)
    with pytest.raises(MastodonAPIError) as bad:
        nia.status_post("One?", poll=nia.make_poll(["only"], expires_in=3600))
    assert "at least 2 options" in str(bad.value)
    hidden = nia.status_post(
        "Secret ballot",
        poll=nia.make_poll(["yes", "no"], expires_in=600, hide_totals=True),
    )
    assert [o.votes_count for o in oto.poll(hidden.poll.id).options] == [None, None]


def test_mastodon_py_votes_through_a_reblogs_poll_and_counts_unread_by_type(site):
    """Mastodon.py, unmodified: a reblog's id is no poll's (404, as Mastodon's),
    its `poll` is the original's and takes the vote; the grouped unread count
    with `types`, `grouped_types` and `limit`."""
    for name in ("pia", "quin", "rue"):
        make_user(name)
    pia, quin, rue = (_signed_in(site, n) for n in ("pia", "quin", "rue"))
    asked = pia.status_post("Left or right?", poll=pia.make_poll(["l", "r"], 3600))
    reblog = quin.status_reblog(asked.id)
    with pytest.raises(MastodonNotFoundError):
        rue.poll(reblog.id)
    with pytest.raises(MastodonNotFoundError):
        rue.poll_vote(reblog.id, [1])
    assert str(reblog.poll.id) == str(asked.id)
    voted = rue.poll_vote(reblog.poll, [1])
    assert [o.votes_count for o in voted.options] == [0, 1]
    # Pia's unread: a favourite group of two, a reblog, a mention.
    quin.status_favourite(asked.id)
    rue.status_favourite(asked.id)
    quin.status_post("@pia which did you pick?")
    _run_jobs()
    assert pia.unread_grouped_notifications_count() == 3
    assert pia.unread_grouped_notifications_count(types=["mention"]) == 1
    assert pia.unread_grouped_notifications_count(exclude_types=["mention"]) == 2
    assert pia.unread_grouped_notifications_count(grouped_types=["reblog"]) == 4
    assert pia.unread_grouped_notifications_count(limit=2) == 2
    assert pia.notifications_unread_count().count == 4


def test_mastodon_py_quotes_a_status_and_lists_its_quotes(site):
    """Mastodon.py 2.x's quote calls, unmodified: a status posted with
    `quoted_status_id`, its Quote read back, the quoted status's quotes, the
    quoted author's `quote` notification, and a reblog's id refused (404)."""
    for name in ("pia", "quin"):
        make_user(name)
    pia, quin = _signed_in(site, "pia"), _signed_in(site, "quin")
    original = pia.status_post("Worth quoting")
    quote = quin.status_post("So true", quoted_status_id=original.id)
    assert quote.quote.state == "accepted"
    assert quote.quote.quoted_status.id == original.id
    assert "Worth quoting" in quote.quote.quoted_status.content
    _run_jobs()
    assert [s.id for s in pia.status_quotes(original.id)] == [quote.id]
    told = [n for n in pia.notifications() if n.type == "quote"]
    assert [n.status.id for n in told] == [quote.id]
    with pytest.raises(MastodonNotFoundError):
        quin.status_post("Nothing there", quoted_status_id=999)
    # A reblog's id is quoted by no one, its reblogger included (Mastodon's).
    reblog = quin.status_reblog(original.id)
    with pytest.raises(MastodonNotFoundError):
        quin.status_post("Through a reblog", quoted_status_id=reblog.id)


def test_mastodon_py_reads_quotes_count_and_pages_the_quotes_up(site):
    """Mastodon.py, unmodified: a Status's `quotes_count`, and a quotes page's
    `fetch_previous` (the Link's rel="prev") and `since_id`, as an app polls for
    new quotes."""
    for name in ("pia", "quin"):
        make_user(name)
    pia, quin = _signed_in(site, "pia"), _signed_in(site, "quin")
    original = pia.status_post("Worth quoting")
    first = quin.status_post("One", quoted_status_id=original.id)
    second = quin.status_post("Two", quoted_status_id=original.id)
    _run_jobs()
    assert pia.status(original.id).quotes_count == 2
    older = pia.status_quotes(original.id, max_id=second.id)
    assert [s.id for s in older] == [first.id]
    assert [s.id for s in pia.fetch_previous(older)] == [second.id]
    assert [s.id for s in pia.status_quotes(original.id, since_id=first.id)] == [
        second.id
    ]


def test_mastodon_py_reads_a_quote_of_a_muted_author_as_muted_account(site):
    """Mastodon.py, unmodified: a reader who muted (then blocked) the quoted
    author reads the Quote as Mastodon 4.5's `muted_account` (`blocked_account`)
    with the quoted status, for the app to fold it behind "Show anyway"."""
    for name in ("pia", "quin", "rex"):
        make_user(name)
    pia, quin = _signed_in(site, "pia"), _signed_in(site, "quin")
    rex = _signed_in(site, "rex")
    original = pia.status_post("Worth quoting")
    quote = quin.status_post("So true", quoted_status_id=original.id)
    rex.account_mute(pia.me().id)
    seen = rex.status(quote.id).quote
    assert seen.state == "muted_account"
    assert seen.quoted_status.id == original.id
    rex.account_block(pia.me().id)
    assert rex.status(quote.id).quote.state == "blocked_account"


class _Heard(StreamListener):
    """What Mastodon.py's stream reader hands its listener, kept for the test."""

    def __init__(self):
        super().__init__()
        self.updates: queue.Queue = queue.Queue()
        self.notifications: queue.Queue = queue.Queue()

    def on_update(self, status):
        self.updates.put(status)

    def on_notification(self, notification):
        self.notifications.put(notification)


def _streams_fast(settings) -> None:
    settings.STREAM_HEARTBEAT_SECONDS = 0.5


def test_mastodon_py_streams_the_home_notifications_and_public_posts(site, settings):
    """Mastodon.py finds the stream through the instance's `urls.streaming_api`
    and reads its Server-Sent Events, unmodified: `stream_user` hears a followed
    user's post (`on_update`) and a mention (`on_notification`); `stream_public`
    and `stream_hashtag` hear a public post."""
    _streams_fast(settings)
    make_user("sia"), make_user("tom")
    sia, tom = _signed_in(site, "sia"), _signed_in(site, "tom")
    sia.account_follow(tom.me()["id"])
    _run_jobs()
    assert sia.stream_healthy()
    home, public, tagged = _Heard(), _Heard(), _Heard()
    handles = [
        sia.stream_user(home, run_async=True),
        sia.stream_public(public, run_async=True),
        sia.stream_hashtag("Birds", tagged, run_async=True),
    ]
    try:
        time.sleep(1.0)  # the streams are open before anything is posted
        post = tom.status_post("spotted a #birds flock")
        _run_jobs()
        heard = home.updates.get(timeout=10)
        assert str(heard.id) == str(post.id) and heard.account.acct == "tom"
        assert str(public.updates.get(timeout=10).id) == str(post.id)
        assert str(tagged.updates.get(timeout=10).id) == str(post.id)
        tom.status_post("@sia look up")
        _run_jobs()
        note = home.notifications.get(timeout=10)
        assert note.type == "mention" and note.account.acct == "tom"
    finally:
        for handle in handles:
            handle.close()
