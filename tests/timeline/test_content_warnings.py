"""Content warnings (Mastodon's `spoiler_text`): a status may carry a warning that
shows in place of its text until the reader opens it, on every page that shows the
status; the warning counts toward the length with the text; a reply starts with the
warning of what it answers; a repost carries its original's."""

from __future__ import annotations

import re

import pytest
from django.conf import settings as django_settings
from django.test import Client

from config.redis import get_redis
from tests.helpers import (
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from timeline import keys, services, social
from timeline.domain import RAW_LENGTH_FACTOR


def posted(author) -> list:
    """The author's statuses as stored, newest first."""
    sids = [int(s) for s in get_redis().zrevrange(keys.posts(author.id), 0, -1)]
    return services.statuses_read(sids)


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob


_FOLDED = re.compile(
    r'<details class="spoiler"><summary><bdi class="spoiler-text">(.*?)</bdi> '
    r'<span class="spoiler-show" aria-hidden="true"></span></summary>'
    r'<p class="status-text">(.*?)</p></details>',
    re.S,
)


def folded(html: str) -> list[tuple[str, str]]:
    """The (warning, hidden text) of each folded status a page shows, in its order."""
    return _FOLDED.findall(html)


def open_texts(html: str) -> list[str]:
    """The texts a page shows unfolded: those of statuses without a warning."""
    bare = _FOLDED.sub("", html)
    return re.findall(r'<p class="status-text">(.*?)</p>', bare, re.S)


def test_a_warned_status_is_folded_on_every_page_that_shows_it(people):
    alice, bob = people
    client = logged_in_client("alice")
    answer = client.post(
        "/post/",
        {"text": "the ending: they all #die", "cw": "on", "spoiler": "Film spoilers"},
    )
    assert answer.status_code == 302
    client.post("/post/", {"text": "plain news"})
    run_jobs()
    warned = posted(alice)[1]
    for reader, path in (
        (client, "/"),
        (logged_in_client("bob"), "/"),
        (Client(), "/u/alice/"),
        (Client(), "/timeline/"),
        (Client(), "/tags/die/"),
        (Client(), f"/s/{warned.id}/"),
    ):
        html = page(reader, path)
        assert folded(html) == [
            (
                "Film spoilers",
                'the ending: they all <a class="hashtag" href="/tags/die/">#die</a>',
            )
        ], path
        assert "they all" not in "".join(open_texts(html)), path
        if path not in (f"/s/{warned.id}/", "/tags/die/"):
            assert open_texts(html) == ["plain news"], path


def test_the_warning_counts_with_the_text_and_both_are_kept_after_an_error(people):
    alice, _ = people
    client = logged_in_client("alice")
    limit = django_settings.STATUS_MAX_LENGTH
    text = "x" * (limit - 10)
    answer = client.post("/post/", {"text": text, "cw": "on", "spoiler": "eleven char"})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert (
        f"A status and its content warning are at most {limit} characters "
        f"together (this one has {limit + 1}: 11 in the warning)."
    ) in html
    assert text in html  # what was typed stays, the warning too, unfolded
    assert 'name="cw" id="id_cw" class="cw-toggle" checked>' in html
    assert 'value="eleven char"' in html
    assert posted(alice) == []
    # One character less in the warning fits.
    assert client.post(
        "/post/", {"text": text, "cw": "on", "spoiler": "ten chars!"}
    ).status_code
    (made,) = posted(alice)
    assert (made.text, made.spoiler) == (text, "ten chars!")


def test_a_refused_warning_says_why_in_both_boxes(people):
    """A warning the form refuses (a NUL character, which Django's fields refuse)
    is told under the warning's box, open, as a text's error is under the text: the
    page said nothing, answering 400 with the status unposted."""
    alice, _ = people
    client = logged_in_client("alice")
    parent = services.status_create(author=alice, text="q")
    for path in ("/post/", f"/s/{parent.id}/reply/"):
        answer = client.post(path, {"text": "hello", "cw": "on", "spoiler": "a\x00b"})
        assert answer.status_code == 400, path
        html = answer.content.decode()
        assert 'name="cw" id="id_cw" class="cw-toggle" checked>' in html, path
        assert re.search(
            r'<input [^>]*name="spoiler"[^>]*aria-invalid="true" '
            r'aria-describedby="id_spoiler_error"',
            html,
        ), path
        assert (
            '<ul class="field-errors" id="id_spoiler_error">'
            "<li>Null characters are not allowed.</li></ul>"
        ) in html, path
    assert [s.text for s in posted(alice)] == ["q"]


def test_a_text_too_long_alone_is_told_its_length_with_its_warning(people):
    """A text over the limit on its own is counted with its warning too, as the
    compose counter counts it: one message says how much to cut, not the text's
    length alone and then, once that is cut, the warning's."""
    alice, _ = people
    client = logged_in_client("alice")
    limit = django_settings.STATUS_MAX_LENGTH
    for path in (
        "/post/",
        f"/s/{services.status_create(author=alice, text='q').id}/reply/",
    ):
        answer = client.post(
            path, {"text": "x" * (limit + 5), "cw": "on", "spoiler": "ten chars!"}
        )
        assert answer.status_code == 400, path
        assert (
            f"A status and its content warning are at most {limit} characters "
            f"together (this one has {limit + 15}: 10 in the warning)."
        ) in answer.content.decode(), path
    assert [s.text for s in posted(alice)] == ["q"]


def test_past_the_written_out_bound_a_link_in_the_warning_is_not_blamed(people):
    """A link in the warning counts as written both ways (only the text's count 23):
    a text without links that passes the bound in code points with its warning is
    told what is counted, as the compose counter tells it, not of links."""
    alice, _ = people
    client = logged_in_client("alice")
    limit = django_settings.STATUS_MAX_LENGTH
    bound = RAW_LENGTH_FACTOR * limit
    text = "x" + "\u0301" * (bound - 10)  # one character as read, under the bound
    spoiler = "see https://example.com"
    answer = client.post("/post/", {"text": text, "cw": "on", "spoiler": spoiler})
    assert answer.status_code == 400
    assert (
        f"A status and its content warning are at most {limit} characters "
        f"together, and {bound} counting each part of an emoji or accent on its "
        f"own (this one has {len(text) + len(spoiler)})."
    ) in answer.content.decode()
    assert posted(alice) == []


def test_a_warning_is_one_escaped_line_and_a_blank_one_is_none(people):
    alice, _ = people
    client = logged_in_client("alice")
    client.post(
        "/post/",
        {"text": "first", "cw": "on", "spoiler": "  <b>bold</b>\r\nand more  "},
    )
    client.post("/post/", {"text": "second", "cw": "on", "spoiler": " \u200b\t "})
    second, first = posted(alice)
    assert first.spoiler == "<b>bold</b> and more"
    assert second.spoiler == ""
    html = page(Client(), "/u/alice/")
    assert folded(html) == [("&lt;b&gt;bold&lt;/b&gt; and more", "first")]
    assert "<b>bold" not in html
    assert open_texts(html) == ["second"]


def test_a_reply_starts_with_the_warning_of_what_it_answers(people):
    alice, bob = people
    parent = services.status_create(author=alice, text="spoilery", spoiler="Book 3")
    plain = services.status_create(author=alice, text="not spoilery")
    reader = logged_in_client("bob")
    html = page(reader, f"/s/{parent.id}/")
    assert (
        'name="cw" id="id_cw" class="cw-toggle" checked>' in html
        and 'id="id_spoiler" value="Book 3"' in html
    )
    html = page(reader, f"/s/{plain.id}/")
    assert 'name="cw" id="id_cw" class="cw-toggle">' in html and 'value=""' in html
    # The reply keeps what it is sent: the warning the box started with, or none.
    reader.post(
        f"/s/{parent.id}/reply/",
        {"text": "@alice wow", "cw": "on", "spoiler": "Book 3"},
    )
    reader.post(
        f"/s/{plain.id}/reply/", {"text": "@alice indeed", "cw": "on", "spoiler": ""}
    )
    indeed, wow = posted(bob)
    assert (wow.spoiler, indeed.spoiler) == ("Book 3", "")
    # A reply too long with its warning shows the page again with both kept.
    limit = django_settings.STATUS_MAX_LENGTH
    answer = reader.post(
        f"/s/{parent.id}/reply/", {"text": "y" * limit, "cw": "on", "spoiler": "Book 3"}
    )
    assert answer.status_code == 400
    assert "content warning are at most" in answer.content.decode()
    assert 'value="Book 3"' in answer.content.decode()


def test_a_repost_carries_the_warning_of_its_original(people):
    alice, bob = people
    carol = make_user("carol")
    services.follow_create(follower=carol, followee_id=bob.id)
    original = services.status_create(author=alice, text="twist", spoiler="Series")
    social.status_repost(user=bob, sid=original.id)
    run_jobs()
    html = page(logged_in_client("carol"), "/")
    assert "@bob</a> reposted" in html
    assert folded(html) == [("Series", "twist")]


def test_a_notification_quotes_the_warning_not_the_text(people):
    alice, bob = people
    warned = services.status_create(author=alice, text="secret text", spoiler="Food")
    social.status_like(user=bob, sid=warned.id)
    run_jobs()
    shown = notifications_shown(logged_in_client("alice"))
    assert any("Content warning: Food" in line for line in shown), shown
    assert not any("secret text" in line for line in shown), shown


def test_a_long_warning_without_spaces_is_quoted_cut_not_dropped(people):
    """A warning in a script written without spaces (Japanese here), longer than a
    quote: the notification quotes its start, as it quotes such a text's."""
    alice, bob = people
    warning = "ネタバレ注意" * 30  # 180 characters, no space
    warned = services.status_create(author=alice, text="secret", spoiler=warning)
    social.status_like(user=bob, sid=warned.id)
    run_jobs()
    shown = notifications_shown(logged_in_client("alice"))
    quoted = [line for line in shown if "Content warning:" in line]
    assert quoted, shown
    assert warning[:100] in quoted[0], quoted
    assert "secret" not in quoted[0]


def test_a_pulled_authors_warning_is_merged_into_homes_with_the_status(r, settings):
    """A status read from its author's outbox (an author past FANOUT_PUSH_MAX
    followers, merged at read time) keeps its warning."""
    settings.FANOUT_PUSH_MAX = 1
    star = make_user("star")
    fans = [make_user(name) for name in ("fan0", "fan1")]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    sid = services.status_create(author=star, text="big reveal", spoiler="Match").id
    run_jobs()
    assert r.zscore(keys.home(fans[0].id), sid) is None  # not pushed: merged
    assert folded(page(logged_in_client("fan0"), "/")) == [("Match", "big reveal")]


def test_a_warning_typed_then_unticked_is_not_posted(people):
    """The warning's box is a tick box ("Add a content warning") that shows its field:
    unticked, what the field holds is not posted, with or without the page's script
    (a folded <details> sent its field all the same: found in review)."""
    alice, _ = people
    client = logged_in_client("alice")
    client.post("/post/", {"text": "unticked", "spoiler": "Left behind"})
    (made,) = posted(alice)
    assert made.spoiler == ""
    # After an error the box stays as it was: unticked, its text kept.
    limit = django_settings.STATUS_MAX_LENGTH
    html = client.post("/post/", {"text": "z" * (limit + 1), "spoiler": "Kept"})
    html = html.content.decode()
    assert 'name="cw" id="id_cw" class="cw-toggle">' in html
    assert 'value="Kept"' in html
    ticked = client.post(
        "/post/", {"text": "z" * (limit + 1), "cw": "on", "spoiler": "K"}
    )
    assert 'name="cw" id="id_cw" class="cw-toggle" checked>' in ticked.content.decode()
