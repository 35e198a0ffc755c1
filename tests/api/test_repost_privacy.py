"""Review: a status the site's own status page refuses must be 404 through the
API too (Mastodon's rule, and "one copy of every rule")."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, run_jobs
from timeline import privacy, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_API = "off"


def test_a_repost_of_an_account_just_made_private_is_404_as_on_its_page():
    """Alice turns private: until the job that sweeps others' reposts of her
    statuses has run, bob's repost still exists. The site's page of that repost
    answers 404 to a stranger (`thread_get` asks about the original's author);
    the API must not hand the stranger alice's now-private text either."""
    alice, bob = make_user("alice"), make_user("bob")
    carol = make_user("carol")  # follows nobody
    original = services.status_create(author=alice, text="soon private").id
    repost = social.status_repost(user=bob, sid=original).id
    run_jobs()
    privacy.account_privacy_set(user=alice, private=True)  # its sweep not run yet
    # The site refuses the repost's page, to a stranger and to a visitor.
    assert logged_in_client("carol").get(f"/s/{repost}/").status_code == 404
    assert Client().get(f"/s/{repost}/").status_code == 404
    for client in (api_client(token_for(carol)), api_client()):
        response = client.get(f"/api/v1/statuses/{repost}")
        assert response.status_code == 404, response.json()["reblog"]["content"]


def test_who_liked_and_reposted_a_repost_of_a_newly_private_account_is_404():
    """The lists of a repost follow the repost's page: hidden while its original's
    author is private and the viewer not admitted, on the site and in the API."""
    alice, bob = make_user("alice"), make_user("bob")
    carol, dave = make_user("carol"), make_user("dave")
    services.follow_create(follower=dave, followee_id=alice.id)
    original = services.status_create(author=alice, text="soon private").id
    repost = social.status_repost(user=bob, sid=original).id
    run_jobs()
    privacy.account_privacy_set(user=alice, private=True)
    assert logged_in_client("carol").get(f"/s/{repost}/likes/").status_code == 404
    for client in (api_client(token_for(carol)), api_client()):
        for path in ("favourited_by", "reblogged_by"):
            response = client.get(f"/api/v1/statuses/{repost}/{path}")
            assert response.status_code == 404, (path, response.content)
    # Her follower, who was admitted before she turned private, still sees it.
    follower = api_client(token_for(dave))
    assert follower.get(f"/api/v1/statuses/{repost}").status_code == 200
    assert follower.get(f"/api/v1/statuses/{repost}/reblogged_by").status_code == 200
