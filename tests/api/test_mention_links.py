"""A mention's link in a status's `content` and its Mention entity name one address,
whatever case the text wrote the name in: Tusky (and Flare, Mastify...) find the
Mention of a tapped link by `mention.url == href`; without a match the tap opens
a browser instead of the profile."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user


@pytest.fixture(autouse=True)
def _no_rate_limits(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def _hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


def test_a_mentions_url_is_the_href_of_its_link_in_content():
    make_user("alice")
    bob = make_user("bob")
    client = api_client(token_for(bob))
    status = client.post("/api/v1/statuses", {"status": "hi @ALICE"}).json()
    (mention,) = status["mentions"]
    assert mention["url"] in _hrefs(status["content"])
    assert ">@ALICE</a>" in status["content"]  # the name as written
    # The address opens her profile (any case finds it, with no redirect).
    path = mention["url"].removeprefix("http://testserver")
    assert api_client().get(path).status_code == 200


def test_a_full_handle_of_this_site_mentions_its_user():
    """`@alice@thishost` (the handle clients show and people copy) mentions alice,
    from a client and from the site's compose box, as `@alice`; another host's
    handle is text (found by exploratory testing: it mentioned nobody)."""
    from tests.helpers import logged_in_client, page, run_jobs

    alice = make_user("alice")
    bob = make_user("bob")
    client = api_client(token_for(bob))
    status = client.post(
        "/api/v1/statuses",
        {"status": "hi @alice@testserver, and @alice@elsewhere.example."},
    ).json()
    assert [m["id"] for m in status["mentions"]] == [str(alice.id)]
    text = re.sub(r"<[^>]+>", "", status["content"])
    assert text == "hi @alice, and @alice@elsewhere.example."
    web = logged_in_client("bob")
    assert web.post("/post/", {"text": "yo @Alice@TestServer:80 !"}).status_code == 302
    run_jobs()
    html = page(logged_in_client("alice"), "/notifications/")
    assert html.count("mentioned you") == 2, html[html.find("<main") :][:2000]


@pytest.mark.parametrize(
    "text",
    [
        "see https://mastodon.social/@alice@testserver for her",
        "see www.example.com/@alice@testserver",
        "@alice@testserver_x is someone else",
        "@alice@testserver:80abc",
        "@bob@testserver@carol",
    ],
)
def test_a_handle_is_rewritten_only_where_it_stands_alone(text):
    """Not inside a link (which would lead elsewhere), nor glued to what follows
    its host (which would name someone else): the text is kept as typed (review)."""
    from timeline.richtext import local_handles

    assert local_handles(text, "testserver") == text
    assert local_handles("hi @alice@testserver: yes", "testserver") == "hi @alice: yes"
