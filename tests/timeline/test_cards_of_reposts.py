"""A repost row shows the card (display name) of the
original's author on every page that shows reposts."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import services as account_services
from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import keys, services, social


@pytest.fixture
def carol():
    carol = make_user("carol")
    account_services.profile_update(user=carol, name="Carol Cardname", bio="")
    return carol


@pytest.fixture
def carol_reposted_by_star(carol):
    star = make_user("star")
    original = services.status_create(author=carol, text="an original")
    social.status_repost(user=star, sid=original.id)
    run_jobs()
    return star


def test_a_pulled_authors_repost_shows_the_original_authors_name(r, settings, carol):
    settings.FANOUT_PUSH_MAX = 1
    star = make_user("star")
    fans = [make_user(f"fan{i}") for i in range(3)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    original = services.status_create(author=carol, text="an original")
    social.status_repost(user=star, sid=original.id)
    run_jobs()
    assert r.zcard(keys.home(fans[0].id)) == 0  # merged at read, not pushed
    html = page(logged_in_client("fan0"), "/")
    assert "an original" in html
    assert "Carol Cardname" in html


def test_a_reposters_profile_on_a_cluster_shows_the_original_authors_name(
    r, monkeypatch, carol_reposted_by_star
):
    # The Cluster path of the statuses' read (no cards read with them).
    monkeypatch.setattr("timeline.selectors.is_cluster", lambda: True)
    html = page(Client(), "/u/star/")
    assert "an original" in html
    assert "Carol Cardname" in html
