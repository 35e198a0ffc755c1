"""Review: "log out everywhere" and a password change must leave no way in for
apps, also through an authorization code issued just before them."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from accounts import services as account_services
from api import services as api_services
from tests.api.helpers import api_client
from tests.helpers import PASSWORD, logged_in_client, make_user

CALLBACK = "https://app.example/callback"


@pytest.fixture(autouse=True)
def _backend(redis_backend):
    pass


def _code_for(browser: Client) -> tuple[dict, str]:
    app = (
        Client()
        .post(
            "/api/v1/apps",
            {
                "client_name": "Sneaky",
                "redirect_uris": CALLBACK,
                "scopes": "read write",
            },
        )
        .json()
    )
    fields = {
        "client_id": app["client_id"],
        "response_type": "code",
        "redirect_uri": CALLBACK,
        "scope": "read write",
        "decision": "approve",
    }
    response = browser.post("/oauth/authorize", fields)
    assert response.status_code == 302, response.content
    code = parse_qs(urlsplit(response["Location"]).query)["code"][0]
    return app, code


def _exchange(app: dict, code: str):
    """The app trades its code for a token, as a client does."""
    return Client().post(
        "/oauth/token",
        {
            "grant_type": "authorization_code",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "redirect_uri": CALLBACK,
            "code": code,
        },
    )


def _change_password(user) -> None:
    """The owner changes the password (logging out every device and app)."""
    account_services.password_change(
        credentials=account_services.session_create(uid=user.id),
        username=user.username,
        current_password=PASSWORD,
        new_password="another-horse-battery",
        user_agent="",
        client="127.0.0.1",
    )


def test_a_code_issued_before_log_out_everywhere_gives_no_working_token():
    alice = make_user("alice")
    # Someone with the session (or the leaked password) authorizes their app and
    # keeps the code instead of redeeming it at once.
    app, code = _code_for(logged_in_client("alice"))
    # Alice ends every session and every app's access.
    account_services.session_revoke_all(uid=alice.id)
    response = _exchange(app, code)
    if response.status_code == 200:
        token = response.json()["access_token"]
        check = api_client(token).get("/api/v1/accounts/verify_credentials")
        assert check.status_code == 401, (
            "a code from before 'log out everywhere' still yields a working token"
        )


def test_a_code_issued_before_a_password_change_gives_no_token():
    alice = make_user("alice")
    app, code = _code_for(logged_in_client("alice"))
    _change_password(alice)
    response = _exchange(app, code)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_a_code_issued_after_log_out_everywhere_works():
    alice = make_user("alice")
    account_services.session_revoke_all(uid=alice.id)
    app, code = _code_for(logged_in_client("alice"))
    response = _exchange(app, code)
    assert response.status_code == 200
    token = response.json()["access_token"]
    assert (
        api_client(token).get("/api/v1/accounts/verify_credentials").status_code == 200
    )


def test_a_code_whose_approval_raced_a_password_change_gives_no_token(monkeypatch):
    """The session approving the app was proven before the owner changed the
    password (which logs every device out and ends every app's access), but the
    code is made after: the code counts from when the session was proven, so it
    gives no token."""
    alice = make_user("alice")
    browser = logged_in_client("alice")
    made = api_services.authorization_code_create

    def change_then_make(**kwargs):
        # The owner changes the password between the check and the code.
        _change_password(alice)
        return made(**kwargs)

    monkeypatch.setattr(api_services, "authorization_code_create", change_then_make)
    app, code = _code_for(browser)
    response = _exchange(app, code)
    assert response.status_code == 400, "a code approved before the change works"
    assert response.json()["error"] == "invalid_grant"
