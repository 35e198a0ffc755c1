"""The reply rule (a reply reaches a home only when the reader
follows whom it answers) holds for a pulled author's replies too, not only for
pushed ones."""

from __future__ import annotations

import pytest

from accounts.selectors import PageReads
from accounts.services import session_create
from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from tests.timeline.test_reposts_across_pages import _walk_api
from timeline import keys, selectors, services, social


def test_a_pulled_authors_reply_to_a_stranger_stays_out_of_the_home(r, settings):
    settings.FANOUT_PUSH_MAX = 1
    star = make_user("star")
    stranger = make_user("stranger")
    fans = [make_user(f"fan{i}") for i in range(3)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    parent = services.status_create(author=stranger, text="a question")
    social.status_reply(author=star, sid=parent.id, text="an answer to a stranger")
    services.status_create(author=star, text="a plain post")
    run_jobs()
    html = page(logged_in_client("fan0"), "/")
    assert "a plain post" in html
    # fan0 does not follow the stranger: a pushed author's reply stays out.
    assert "an answer to a stranger" not in html


def test_control_a_pushed_authors_reply_to_a_stranger_stays_out(r):
    star = make_user("star")
    stranger = make_user("stranger")
    fan = make_user("fan0")
    services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    parent = services.status_create(author=stranger, text="a question")
    social.status_reply(author=star, sid=parent.id, text="an answer to a stranger")
    services.status_create(author=star, text="a plain post")
    run_jobs()
    html = page(logged_in_client("fan0"), "/")
    assert "a plain post" in html
    assert "an answer to a stranger" not in html


def _walk(user, size: int) -> dict[str, list[str]]:
    """Every page of the user's home, on the site and through the client API read
    downwards: the statuses' texts, newest first."""
    site, max_id = [], None
    for _ in range(30):
        home = selectors.home_get(
            reads=PageReads(session_create(uid=user.id)), max_id=max_id
        )
        site += [s.text for s in home.page.statuses]
        max_id = home.page.next_max_id
        if max_id is None:
            break
    client = api_client(token_for(user))
    api, url = [], f"/api/v1/timelines/home?limit={size}"
    for _ in range(30):
        response = client.get(url)
        api += [s["content"] for s in response.json()]
        link = response.headers.get("Link", "")
        if 'rel="next"' not in link:
            break
        url = link.split(">")[0].lstrip("<").split("testserver")[-1]
    return {"site": site, "api": api}


@pytest.fixture
def pulled_star(r, settings):
    """Star, followed by fan0-fan2, is pulled (past FANOUT_PUSH_MAX); pages of 3.
    Star, a stranger, and the fans."""
    settings.FANOUT_PUSH_MAX = 1
    settings.TIMELINE_PAGE_SIZE = 3
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    star, stranger = make_user("star"), make_user("stranger")
    fans = [make_user(f"fan{i}") for i in range(3)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    return star, stranger, fans


def test_a_pulled_authors_replies_left_out_do_not_end_the_home(r, pulled_star):
    # Star's replies to a stranger stay out of fan0's home; the page whose one past
    # its size is such a reply still says there is more, and the next page reads
    # on below the replies: fan0 reads every plain post, on the site and the API.
    star, stranger, fans = pulled_star
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    parent = services.status_create(author=stranger, text="a question")
    first = services.status_create(author=star, text="first post")
    for i in range(4):
        social.status_reply(author=star, sid=parent.id, text=f"answer {i}")
    posts = [services.status_create(author=star, text=f"post {i}") for i in range(3)]
    run_jobs()
    walked = _walk(fans[0], 3)
    assert walked["site"] == ["post 2", "post 1", "post 0", "first post"]
    assert [t.removeprefix("<p>").removesuffix("</p>") for t in walked["api"]] == (
        walked["site"]
    )
    # Read upwards (min_id), window by window, the same statuses.
    expected = [(s.id, s.id) for s in [*reversed(posts), first]]
    assert _walk_api(fans[0], "min_id=1") == expected


def test_a_page_of_left_out_replies_reads_on_to_the_statuses_below(r, pulled_star):
    # Star's seven replies to a stranger fill more than a page of fan0's home, all
    # left out: the page does not come back empty (an app stops at an empty page,
    # as at the end of Mastodon's home), it reads on below them to the first post,
    # on the site and through the client API read either way.
    star, stranger, fans = pulled_star
    parent = services.status_create(author=stranger, text="a question")
    first = services.status_create(author=star, text="first post")
    for i in range(7):
        social.status_reply(author=star, sid=parent.id, text=f"answer {i}")
    last = services.status_create(author=star, text="last post")
    run_jobs()
    home = selectors.home_get(
        reads=PageReads(session_create(uid=fans[0].id)), max_id=last.id - 1
    )
    assert [s.text for s in home.page.statuses] == ["first post"]
    client = api_client(token_for(fans[0]))
    below = client.get(f"/api/v1/timelines/home?limit=3&max_id={last.id}").json()
    assert [s["id"] for s in below] == [str(first.id)]
    above = client.get(f"/api/v1/timelines/home?limit=3&min_id={first.id}").json()
    assert [s["id"] for s in above] == [str(last.id)]
