"""People search after a request cut short by Redis (its reply lost after the
server ran it, a 503 page): a display name saved again, or an account whose
sign-up answered 503 and who then logs in, is found by search like any other
(`accounts.services`: the index's entries follow every profile save, and a
sign-up's are owed, in the user hash, until written)."""

from __future__ import annotations

from django.test import Client

from accounts import keys as account_keys
from accounts import services as account_services
from accounts.domain import User
from accounts.selectors import user_get_by_username
from tests.helpers import cut_short, logged_in_client, make_user, run_jobs


def search(query: str) -> str:
    response = Client().get("/search/", {"q": query})
    assert response.status_code == 200
    return response.content.decode()


def test_a_display_name_saved_again_after_a_503_is_found_by_search(r):
    """Kate's profile save answers 503 (the name was stored, the answer lost); the
    page says to check before sending it again, and she sends it again: search
    finds her by the new name, and no longer by the old one."""
    make_user("kate")
    kate = logged_in_client("kate", raise_request_exception=False)
    assert (
        kate.post("/settings/profile/", {"name": "Old Name", "bio": ""}).status_code
        == 302
    )
    form = {"name": "Zebediah Quux", "bio": ""}
    script = account_services._PROFILE_SET.sha
    with cut_short(lambda cs: any(len(c) > 1 and c[1] == script for c in cs)) as f:
        response = kate.post("/settings/profile/", form)
    assert f and response.status_code == 503
    assert kate.post("/settings/profile/", form).status_code == 302
    run_jobs()
    assert 'href="/u/kate/"' in search("Zebediah")
    assert 'href="/u/kate/"' in search("kate")
    assert 'href="/u/kate/"' not in search("Old Name")


def test_an_account_whose_signup_got_a_503_is_found_by_search_once_logged_in(r):
    """A sign-up whose name claim ran but whose answer was lost shows a 503; the
    person signs up again (the name is taken: by this account) and logs in
    instead: from then on search finds them."""
    client = Client(raise_request_exception=False)
    form = {
        "username": "newbie",
        "password": "correct-horse-battery",
        "password2": "correct-horse-battery",
    }
    claim = account_keys.username("newbie")
    with cut_short(lambda cs: any(c[1:2] == (claim,) for c in cs)) as f:
        response = client.post("/signup/", form)
    assert f and response.status_code == 503
    assert "That username is taken." in client.post("/signup/", form).content.decode()
    logged_in_client("newbie")
    run_jobs()
    assert 'href="/u/newbie/"' in search("newbie")
    # The debt is paid: later log-ins write nothing to the index.
    newbie = user_get_by_username(username="newbie")
    assert not r.hexists(account_keys.user(newbie.id), User.UNINDEXED_FIELD)


def test_a_signup_that_completes_leaves_no_index_debt_behind(r):
    """An ordinary sign-up is found at once, and its user hash keeps no mark of
    entries owed (a log-in has nothing to complete)."""
    user = make_user("plain")
    assert 'href="/u/plain/"' in search("pla")
    assert not r.hexists(account_keys.user(user.id), User.UNINDEXED_FIELD)
