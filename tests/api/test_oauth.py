"""Apps and OAuth 2: registration, the authorization page behind the site's login,
codes for tokens (with and without PKCE), revocation, the devices page."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client

from accounts import keys as account_keys
from accounts.selectors import token_hash
from api import keys
from config.redis import get_redis
from tests.api.helpers import api_client, token_for
from tests.helpers import PASSWORD, logged_in_client, make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import services as timeline_services

CALLBACK = "https://app.example/callback"
OOB = "urn:ietf:wg:oauth:2.0:oob"
ALL = "read write follow push"


@pytest.fixture(autouse=True)
def _backend(redis_backend):
    pass


@pytest.fixture
def alice():
    make_user("alice")
    return logged_in_client("alice")


def register(**fields) -> dict:
    data = {"client_name": "Test app", "redirect_uris": CALLBACK, "scopes": ALL}
    response = Client().post("/api/v1/apps", {**data, **fields})
    assert response.status_code == 200, response.content
    return response.json()


def authorize_path(app: dict, **extra) -> str:
    query = {
        "client_id": app["client_id"],
        "response_type": "code",
        "redirect_uri": app["redirect_uris"][0],
        "scope": ALL,
        **extra,
    }
    return "/oauth/authorize?" + urlencode(query)


def approve(client: Client, app: dict, decision: str = "approve", **extra):
    """What the page's form posts (its hidden fields are the request's own)."""
    query = parse_qs(urlsplit(authorize_path(app, **extra)).query)
    fields = {name: values[0] for name, values in query.items()}
    return client.post("/oauth/authorize", {**fields, "decision": decision})


def query_of(response) -> dict[str, str]:
    assert response.status_code == 302, response.content
    return {k: v[0] for k, v in parse_qs(urlsplit(response["Location"]).query).items()}


def exchange(app: dict, code: str, **extra):
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "redirect_uri": app["redirect_uris"][0],
        **extra,
    }
    return Client().post(
        "/oauth/token",
        urlencode({k: v for k, v in data.items() if v is not None}),
        content_type="application/x-www-form-urlencoded",
    )


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def whoami(token: str):
    return api_client(token).get("/api/v1/accounts/verify_credentials")


def test_registering_an_app_shows_its_secret_once_and_stores_it_hashed():
    app = register(website="https://app.example")
    assert app["name"] == "Test app"
    assert app["website"] == "https://app.example"
    assert app["scopes"] == ["read", "write", "follow", "push"]
    assert app["redirect_uris"] == [CALLBACK]
    assert app["redirect_uri"] == CALLBACK
    assert app["client_secret_expires_at"] == 0
    assert app["vapid_key"] == ""
    assert len(app["client_id"]) == len(app["client_secret"]) == 43
    stored = get_redis().hgetall(keys.app(app["client_id"]))
    assert app["client_secret"] not in stored.values()
    assert stored["secret"] == token_hash(app["client_secret"])
    # Until someone authorizes it, an app is forgotten after a day.
    assert 86000 < get_redis().ttl(keys.app(app["client_id"])) <= 86400


def test_registration_takes_json_arrays_and_several_uris_in_one_string():
    response = Client().post(
        "/api/v1/apps",
        {"client_name": "J", "redirect_uris": [CALLBACK, OOB]},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["redirect_uris"] == [CALLBACK, OOB]
    assert response.json()["scopes"] == ["read"]  # the default
    several = register(redirect_uris=f"{CALLBACK}\nmyapp://cb {OOB}")
    assert several["redirect_uris"] == [CALLBACK, "myapp://cb", OOB]
    assert several["redirect_uri"] == f"{CALLBACK}\nmyapp://cb\n{OOB}"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"client_name": ""}, "Application name can't be blank"),
        ({"redirect_uris": ""}, "Redirect URI can't be blank"),
        ({"redirect_uris": "javascript:alert(1)"}, "forbidden"),
        ({"redirect_uris": "/relative"}, "absolute"),
        ({"redirect_uris": "https://a.example/#frag"}, "fragment"),
        ({"scopes": "read admin:everything"}, "Scopes doesn't match"),
        ({"website": "javascript:x"}, "Website"),
    ],
)
def test_registration_refuses_what_mastodon_refuses_with_422(fields, message):
    data = {"client_name": "Test app", "redirect_uris": CALLBACK, **fields}
    response = Client().post("/api/v1/apps", data)
    assert response.status_code == 422
    assert response.json()["error"].startswith("Validation failed: ")
    assert message in response.json()["error"]


def test_registrations_from_one_address_are_rate_limited(settings):
    settings.RATE_LIMIT_APPS = "2/1m"
    register()
    register()
    response = Client().post(
        "/api/v1/apps", {"client_name": "Three", "redirect_uris": CALLBACK}
    )
    assert response.status_code == 429
    assert response.json() == {"error": "Too many requests"}
    assert int(response["Retry-After"]) >= 1


def test_the_whole_code_flow_through_the_login_page():
    make_user("alice")
    app = register()
    browser = Client()
    path = authorize_path(app, state='x"y<z>&')
    to_login = browser.get(path)
    assert to_login.status_code == 302
    login_path = to_login["Location"]
    assert login_path.startswith("/login/?next=")
    back = parse_qs(urlsplit(login_path).query)["next"][0]
    logged_in = browser.post(
        "/login/", {"username": "alice", "password": PASSWORD, "next": back}
    )
    assert logged_in.status_code == 302
    assert logged_in["Location"] == back
    page = browser.get(back)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Authorize Test app?" in html
    assert "@alice" in html
    assert "receive push notifications" in html
    assert "form-action 'self' https://app.example" in page["Content-Security-Policy"]
    # The page's own form, its hidden fields escaped and sent back as they came.
    fields = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', html))
    fields = {name: unescape(value) for name, value in fields.items()}
    del fields["csrfmiddlewaretoken"]
    answer = query_of(browser.post(back, {**fields, "decision": "approve"}))
    assert answer["state"] == 'x"y<z>&'
    # Nothing of the app expires any more once a user took it up.
    assert get_redis().ttl(keys.app(app["client_id"])) == -1
    response = exchange(app, answer["code"])
    assert response.status_code == 200, response.content
    token = response.json()
    assert token["token_type"] == "Bearer"
    assert token["scope"] == ALL
    assert isinstance(token["created_at"], int)
    assert abs(token["created_at"] - time.time()) < 60
    assert response["Cache-Control"] == "no-store"
    assert whoami(token["access_token"]).json()["username"] == "alice"
    verified = api_client(token["access_token"]).get("/api/v1/apps/verify_credentials")
    assert verified.status_code == 200
    assert verified.json()["name"] == "Test app"
    assert verified.json()["scopes"] == ["read", "write", "follow", "push"]
    assert "client_secret" not in verified.json()


@pytest.mark.parametrize("extra", [{}, {"force_login": "true"}])
def test_the_consent_page_lets_another_account_authorize(alice, extra):
    """A browser signed in as alice can authorize the app as bob: "Use another
    account" logs alice out (a POST, with CSRF) and comes back through the login
    page. It is how an app adds a second account (Tusky's `force_login=true`);
    the page offered no way (found by exploratory testing)."""
    make_user("bob")
    app = register()
    path = authorize_path(app, **extra)
    html = alice.get(path).content.decode()
    assert "@alice" in html
    form = re.search(r'<form method="post" action="/logout/">(.*?)</form>', html, re.S)
    assert form and "Use another account" in form[1]
    assert 'name="csrfmiddlewaretoken"' in form[1]
    (next_field,) = re.findall(r'name="next" value="([^"]*)"', form[1])
    assert urlsplit(unescape(next_field)).path == "/login/"
    out = alice.post("/logout/", {"next": unescape(next_field)})
    assert out.status_code == 302 and out["Location"] == unescape(next_field)
    assert alice.get(path).status_code == 302  # logged out: to the login page
    back = parse_qs(urlsplit(out["Location"]).query)["next"][0]
    logged_in = alice.post(
        "/login/", {"username": "bob", "password": PASSWORD, "next": back}
    )
    assert logged_in["Location"] == back
    assert "@bob" in alice.get(back).content.decode()
    answer = query_of(approve(alice, app))
    token = exchange(app, answer["code"]).json()["access_token"]
    assert whoami(token).json()["username"] == "bob"


def test_logging_out_goes_to_a_next_page_on_this_site_only(alice):
    away = alice.post("/logout/", {"next": "https://evil.example/"})
    assert away["Location"] == "/"


def test_a_public_client_with_pkce_needs_no_secret_but_the_verifier(alice):
    app = register()
    verifier, challenge = pkce_pair()
    pkce = {"code_challenge": challenge, "code_challenge_method": "S256"}
    code = query_of(approve(alice, app, **pkce))["code"]
    response = exchange(app, code, client_secret=None, code_verifier=verifier)
    assert response.status_code == 200, response.content
    assert whoami(response.json()["access_token"]).status_code == 200
    # A wrong verifier, or none, is refused even with the secret.
    for wrong in (pkce_pair()[0], None):
        code = query_of(approve(alice, app, **pkce))["code"]
        refused = exchange(app, code, code_verifier=wrong)
        assert refused.status_code == 400
        assert refused.json()["error"] == "invalid_grant"
        assert refused.json()["error_description"]


def test_a_code_without_pkce_needs_the_client_secret(alice):
    app = register()
    code = query_of(approve(alice, app))["code"]
    refused = exchange(app, code, client_secret=None)
    assert refused.status_code == 401
    assert refused.json()["error"] == "invalid_client"


def test_a_wrong_secret_is_refused_and_leaves_the_code_usable(alice):
    app = register()
    code = query_of(approve(alice, app))["code"]
    refused = exchange(app, code, client_secret=secrets.token_urlsafe(32))
    assert refused.status_code == 401
    assert refused.json()["error"] == "invalid_client"
    assert "WWW-Authenticate" in refused
    assert exchange(app, code).status_code == 200


def test_http_basic_client_authentication_works(alice):
    app = register()
    code = query_of(approve(alice, app))["code"]
    basic = base64.b64encode(
        f"{app['client_id']}:{app['client_secret']}".encode()
    ).decode()
    response = Client().post(
        "/oauth/token",
        {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK},
        headers={"Authorization": f"Basic {basic}"},
    )
    assert response.status_code == 200, response.content


def test_the_token_endpoint_takes_json(alice):
    app = register()
    code = query_of(approve(alice, app))["code"]
    body = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "redirect_uri": CALLBACK,
    }
    response = Client().post("/oauth/token", body, content_type="application/json")
    assert response.status_code == 200


def test_a_code_works_once_for_its_redirect_uri_and_not_after_ten_minutes(alice):
    app = register(redirect_uris=f"{CALLBACK} https://app.example/other")
    code = query_of(approve(alice, app))["code"]
    wrong = exchange(app, code, redirect_uri="https://app.example/other")
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    # A failed exchange spent it too: a code is redeemed once, whatever follows.
    assert exchange(app, code).json()["error"] == "invalid_grant"
    code = query_of(approve(alice, app))["code"]
    assert exchange(app, code).status_code == 200
    reused = exchange(app, code)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    code = query_of(approve(alice, app))["code"]
    stored = keys.auth_code(token_hash(code))
    assert 590 < get_redis().ttl(stored) <= 600
    get_redis().pexpire(stored, 1)
    time.sleep(0.01)
    assert exchange(app, code).json()["error"] == "invalid_grant"


def test_a_code_of_another_app_is_refused(alice):
    app, other = register(), register(client_name="Other")
    code = query_of(approve(alice, app))["code"]
    response = exchange(other, code)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_token_endpoint_errors_are_oauths():
    app = register()
    unsupported = exchange(app, "x", grant_type="client_credentials")
    assert unsupported.status_code == 400
    assert unsupported.json()["error"] == "unsupported_grant_type"
    missing = exchange(app, "")
    assert missing.status_code == 400
    assert missing.json() == {
        "error": "invalid_request",
        "error_description": "Missing required parameter: code.",
    }
    unknown = exchange({**app, "client_id": "nope"}, "x" * 43)
    assert unknown.status_code == 401 and unknown.json()["error"] == "invalid_client"
    assert unknown["Access-Control-Allow-Origin"] == "*"


def test_mastodon_py_s_authorize_url_with_literal_none_and_false(alice):
    app = register()
    extra = {"force_login": "False", "state": "None", "lang": "None"}
    assert alice.get(authorize_path(app, **extra)).status_code == 200
    answer = query_of(approve(alice, app, **extra))
    assert answer["state"] == "None"  # as sent
    assert exchange(app, answer["code"]).status_code == 200
    no_state = query_of(approve(alice, app))
    assert "state" not in no_state


def test_the_out_of_band_page_shows_the_code_to_copy(alice):
    app = register(redirect_uris=OOB)
    page = approve(alice, app)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Copy this authorization code" in html
    code = re.search(r'value="([A-Za-z0-9_-]{43})"', html)[1]
    response = exchange(app, code, redirect_uri=OOB)
    assert response.status_code == 200, response.content


def test_deny_sends_the_app_access_denied_with_its_state(alice):
    app = register()
    answer = query_of(approve(alice, app, decision="deny", state="s1"))
    assert answer["error"] == "access_denied"
    assert answer["state"] == "s1"
    assert "code" not in answer
    assert get_redis().ttl(keys.app(app["client_id"])) > 0  # still not taken up
    oob = register(redirect_uris=OOB)
    page = approve(alice, oob, decision="deny")
    assert page.status_code == 200
    assert "Access denied" in page.content.decode()


def test_a_redirect_uri_with_a_query_keeps_it(alice):
    app = register(redirect_uris="https://app.example/cb?tenant=7")
    location = approve(alice, app)["Location"]
    assert location.startswith("https://app.example/cb?tenant=7&code=")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"client_id": "x" * 43}, "No app is registered"),
        ({"redirect_uri": "https://evil.example/cb"}, "did not register"),
        ({"scope": "read profile"}, "more than"),
        ({"scope": "read nonsense"}, "does not know"),
        ({"response_type": "token"}, "response_type=code"),
        ({"code_challenge": "a" * 43, "code_challenge_method": "plain"}, "S256"),
    ],
)
def test_bad_authorization_requests_get_an_error_page_never_a_redirect(
    alice, change, reason
):
    app = register()
    page = alice.get(authorize_path(app, **change))
    assert page.status_code == 400
    assert "Location" not in page
    assert reason in page.content.decode()
    posted = approve(alice, app, **change)
    assert posted.status_code == 400 and "Location" not in posted


def test_scopes_beyond_the_apps_registration_are_refused(alice):
    app = register(scopes="read")
    page = alice.get(authorize_path(app, scope="read write"))
    assert page.status_code == 400
    assert "more than Test app registered" in page.content.decode()
    narrower = register(scopes="read write")
    assert alice.get(authorize_path(narrower, scope="read:statuses")).status_code == 200


def test_the_authorize_post_needs_the_csrf_token():
    make_user("alice")
    browser = logged_in_client("alice", enforce_csrf_checks=True)
    app = register()
    assert approve(browser, app).status_code == 403
    page = browser.get(authorize_path(app)).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    query = parse_qs(urlsplit(authorize_path(app)).query)
    fields = {name: values[0] for name, values in query.items()}
    answer = browser.post(
        "/oauth/authorize",
        {**fields, "decision": "approve", "csrfmiddlewaretoken": token},
    )
    assert "code" in query_of(answer)


def test_an_anonymous_post_changes_nothing_and_goes_to_the_login():
    app = register()
    response = approve(Client(), app)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")
    assert get_redis().ttl(keys.app(app["client_id"])) > 0


@pytest.mark.real_redis
def test_the_authorization_page_costs_one_round_trip(alice):
    app = register()
    path = authorize_path(app)
    alice.get(path)
    with RoundTripCounter() as counter:
        assert alice.get(path).status_code == 200
    assert counter.count == 1


def test_revoke_ends_the_token_and_always_answers_an_empty_object(alice):
    app = register()
    code = query_of(approve(alice, app))["code"]
    token = exchange(app, code).json()["access_token"]
    other = register(client_name="Other")
    wrong_client = Client().post(
        "/oauth/revoke", {"client_id": other["client_id"], "token": token}
    )
    assert wrong_client.status_code == 200 and wrong_client.json() == {}
    assert whoami(token).status_code == 200
    data = {
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "token": token,
    }
    response = Client().post("/oauth/revoke", data)
    assert response.status_code == 200
    assert response.json() == {}
    assert response["Access-Control-Allow-Origin"] == "*"
    assert whoami(token).status_code == 401
    again = Client().post("/oauth/revoke", data)
    assert again.status_code == 200 and again.json() == {}
    junk = Client().post("/oauth/revoke", {"token": "junk"})
    assert junk.status_code == 200 and junk.json() == {}


def test_the_metadata_names_absolute_endpoints():
    response = Client().get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    data = response.json()
    assert data["issuer"] == "http://testserver/"
    assert data["authorization_endpoint"] == "http://testserver/oauth/authorize"
    assert data["token_endpoint"] == "http://testserver/oauth/token"
    assert data["revocation_endpoint"] == "http://testserver/oauth/revoke"
    assert data["app_registration_endpoint"] == "http://testserver/api/v1/apps"
    assert "push" in data["scopes_supported"]
    assert "read:statuses" in data["scopes_supported"]
    assert data["code_challenge_methods_supported"] == ["S256"]
    assert data["grant_types_supported"] == ["authorization_code"]
    assert data["response_types_supported"] == ["code"]
    assert response["Access-Control-Allow-Origin"] == "*"


def test_the_devices_page_lists_authorized_apps_and_revokes_them(alice):
    app = register(website="https://app.example")
    code = query_of(approve(alice, app))["code"]
    token = exchange(app, code).json()["access_token"]
    page = alice.get("/settings/")
    html = page.content.decode()
    assert "Apps you authorized" in html
    assert "Test app" in html and "https://app.example" in html
    grant_id = re.search(
        r'name="device" value="([0-9a-f]{64})"[^<]*\s*<button[^>]*'
        r'aria-label="Revoke Test app"',
        html,
    )[1]
    response = alice.post("/settings/apps/revoke/", {"device": grant_id})
    assert response.status_code == 302
    assert whoami(token).status_code == 401
    assert "Apps you authorized" not in alice.get("/settings/").content.decode()
    again = alice.post("/settings/apps/revoke/", {"device": grant_id}, follow=True)
    assert "already revoked" in again.content.decode()


def test_another_user_cannot_revoke_your_app(alice):
    token = token_for(make_user("bob"), app="Bob's app")
    grant_id = token_hash(token.partition(".")[2])
    alice.post("/settings/apps/revoke/", {"device": grant_id})
    assert whoami(token).status_code == 200


def test_a_code_redeemed_after_the_account_is_deleted_leaves_nothing():
    user = make_user("carol")
    carol = logged_in_client("carol")
    app = register()
    token = exchange(app, query_of(approve(carol, app))["code"]).json()["access_token"]
    late_code = query_of(approve(carol, app))["code"]
    timeline_services.account_delete(user=user, password=PASSWORD, client="1.2.3.4")
    run_jobs()
    assert whoami(token).status_code == 401
    assert not get_redis().exists(account_keys.app_tokens(user.id))
    late = exchange(app, late_code)
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
    assert not get_redis().exists(account_keys.app_tokens(user.id))


@pytest.mark.real_redis
def test_the_settings_page_reads_the_apps_in_its_two_round_trips(alice):
    app = register(client_name="<b>Bold</b> app")
    exchange(app, query_of(approve(alice, app))["code"])
    alice.get("/settings/")  # warm: connections open, scripts loaded
    with RoundTripCounter() as counter:
        page = alice.get("/settings/")
    html = page.content.decode()
    assert "&lt;b&gt;Bold&lt;/b&gt; app" in html and "<b>Bold</b>" not in html
    assert 1 <= counter.count <= 2, counter.count
    assert counter.most_per_node <= 1
