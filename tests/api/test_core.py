"""The API's common ground: bearer auth and scopes, errors, limits, CORS, paths."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user


@pytest.fixture(autouse=True)
def _backend(redis_backend):
    pass


def test_instance_answers_with_and_without_trailing_slash():
    for path in ("/api/v1/instance", "/api/v1/instance/"):
        response = api_client().get(path)
        assert response.status_code == 200
        data = response.json()
        assert data["version"].startswith("4.3.0 ")
        assert data["configuration"]["statuses"]["max_characters"] == 280
    v2 = api_client().get("/api/v2/instance/").json()
    assert v2["api_versions"] == {"mastodon": 2}
    assert v2["configuration"]["statuses"]["max_characters"] == 280


def test_header_and_streaming_api_are_urls_or_null(settings):
    """A client that decodes URL fields strictly (Ice Cubes: `header` as a URL,
    `streaming_api` as an optional one) can parse every Account and the instance:
    the header names a placeholder image the site serves, and the streaming URL
    is the site's own origin as a WebSocket URL (Mastodon's `wss://host`; SSE
    clients such as Mastodon.py turn it into `https://host`), in v1 and v2."""
    alice = make_user("alice")
    me = api_client(token_for(alice)).get("/api/v1/accounts/verify_credentials")
    header = me.json()["header"]
    assert header.startswith("http://testserver/")
    assert me.json()["header_static"] == header
    path = header.removeprefix("http://testserver" + settings.STATIC_URL)
    image = finders.find(path)
    assert image and Path(image).read_bytes().startswith(b"\x89PNG")
    streaming = api_client().get("/api/v1/instance").json()["urls"]["streaming_api"]
    assert streaming == "ws://testserver"
    v2 = api_client().get("/api/v2/instance").json()
    assert v2["configuration"]["urls"]["streaming"] == "ws://testserver"


def test_verify_credentials_with_a_token_shows_the_user():
    alice = make_user("alice")
    response = api_client(token_for(alice)).get("/api/v1/accounts/verify_credentials")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["id"] == str(alice.id)
    assert data["username"] == data["acct"] == "alice"
    assert data["source"]["privacy"] == "public"
    assert data["url"] == "http://testserver/u/alice/"
    assert response["X-RateLimit-Limit"] == "300"
    assert int(response["X-RateLimit-Remaining"]) == 299
    assert response["Access-Control-Allow-Origin"] == "*"


def test_no_token_bad_token_and_cookie_are_all_refused():
    alice = make_user("alice")
    token = token_for(alice)
    assert api_client().get("/api/v1/accounts/verify_credentials").status_code == 401
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    response = api_client(forged).get("/api/v1/accounts/verify_credentials")
    assert response.status_code == 401
    assert response.json() == {"error": "The access token is invalid"}
    # The site's own cookie proves nothing to the API.
    cookie_client = logged_in_client("alice")
    assert cookie_client.get("/api/v1/accounts/verify_credentials").status_code == 401


def test_a_token_without_the_scope_is_refused_with_403():
    alice = make_user("alice")
    token = token_for(alice, scopes=("write",))
    response = api_client(token).get("/api/v1/accounts/verify_credentials")
    assert response.status_code == 403
    assert response.json() == {"error": "This action is outside the authorized scopes"}
    profile_only = token_for(alice, scopes=("profile",))
    assert (
        api_client(profile_only).get("/api/v1/accounts/verify_credentials").status_code
        == 200
    )


def test_preflight_allows_any_origin_without_credentials():
    response = api_client().options(
        "/api/v1/accounts/verify_credentials",
        headers={
            "Origin": "https://app.example",
            "Access-Control-Request-Method": "GET",
        },
    )
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in response["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Credentials" not in response


def test_the_api_budget_refuses_with_429_and_says_when(settings):
    settings.RATE_LIMIT_API = "3/1m"
    alice = make_user("alice")
    client = api_client(token_for(alice))
    remaining = [
        client.get("/api/v1/accounts/verify_credentials")["X-RateLimit-Remaining"]
        for _ in range(3)
    ]
    assert remaining == ["2", "1", "0"]
    refused = client.get("/api/v1/accounts/verify_credentials")
    assert refused.status_code == 429
    assert refused.json() == {"error": "Too many requests"}
    assert int(refused["Retry-After"]) >= 1
    assert refused["X-RateLimit-Reset"].endswith("Z")


def _third_like():
    """Alice posts three statuses and likes them; the first two likes are taken
    (a budget of two), the third's answer is returned."""
    client = api_client(token_for(make_user("alice")))
    sids = [
        client.post("/api/v1/statuses", {"status": f"s{i}"}).json()["id"]
        for i in range(3)
    ]
    for sid in sids[:2]:
        assert client.post(f"/api/v1/statuses/{sid}/favourite").status_code == 200
    return client.post(f"/api/v1/statuses/{sids[2]}/favourite")


def test_a_write_limits_429_says_which_budget_and_when_it_allows_again(settings):
    """A like past `RATE_LIMIT_LIKE` is a 429 that describes that budget, as the
    API budget's does: a client that paces (Mastodon.py's "wait" and "pace") reads
    when to try again from X-RateLimit-Reset, and without it waited for the API
    budget's reset instead, up to 5 minutes (found by exploratory testing)."""
    settings.RATE_LIMIT_LIKE = "2/1m,1000/1d"
    before = time.time()
    refused = _third_like()
    assert refused.status_code == 429
    assert refused.json() == {"error": "Too many requests"}
    wait = int(refused["Retry-After"])
    assert 1 <= wait <= 30
    assert refused["X-RateLimit-Limit"] == "2"  # the per-minute rate refused
    assert refused["X-RateLimit-Remaining"] == "0"
    reset = datetime.strptime(refused["X-RateLimit-Reset"], "%Y-%m-%dT%H:%M:%S.%fZ")
    reset_at = reset.replace(tzinfo=UTC).timestamp()
    assert before + wait - 2 <= reset_at <= time.time() + wait + 1


def test_a_write_limits_429_names_the_daily_rate_when_that_one_refused(settings):
    settings.RATE_LIMIT_LIKE = "10/1m,2/1d"
    refused = _third_like()
    assert refused.status_code == 429
    assert refused["X-RateLimit-Limit"] == "2"
    assert int(refused["Retry-After"]) > 60  # half a day's interval, not a minute's


def test_requests_with_an_invalid_token_are_rate_limited(settings):
    """Requests with a token that was never issued (or was revoked) are refused
    with 429 once their address's budget is spent, ahead of the 401."""
    settings.RATE_LIMIT_API = "3/5m"
    make_user("alice")
    client = api_client("1." + "x" * 43)  # well formed, never issued
    codes = [client.get("/api/v1/timelines/public").status_code for _ in range(5)]
    assert codes == [401, 401, 401, 429, 429]
    refused = client.post("/api/v1/statuses", {"status": "x"})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1


def test_fresh_invalid_tokens_spend_the_address_budget(settings):
    """Made-up tokens, a fresh one each time, share their address's budget (none
    gets a budget of its own), while a real token from the same address still has
    its own."""
    settings.RATE_LIMIT_API = "3/5m"
    alice = make_user("alice")
    codes = [
        api_client(f"1.{'x' * 42}{i}").get("/api/v1/timelines/public").status_code
        for i in range(5)
    ]
    assert codes == [401, 401, 401, 429, 429]
    assert api_client().get("/api/v1/timelines/public").status_code == 429
    mine = api_client(token_for(alice)).get("/api/v1/accounts/verify_credentials")
    assert mine.status_code == 200
    assert mine["X-RateLimit-Remaining"] == "2"


def test_a_budget_finer_than_the_clock_still_answers(settings):
    """A rate so generous that one request adds less than the clock can tell (a
    benchmark's) is still taken and answered, not a 503."""
    settings.RATE_LIMIT_API = "1000000000/1s"
    alice = make_user("alice")
    client = api_client(token_for(alice))
    for _ in range(3):
        response = client.get("/api/v1/accounts/verify_credentials")
        assert response.status_code == 200, response.content
