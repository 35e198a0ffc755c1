"""The reply rule (a reply reaches a home only when the reader
follows whom it answers) holds for a pulled author's replies too, not only for
pushed ones."""

from __future__ import annotations

from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import keys, services, social


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
