"""Review: every answer of the client API has a JSON body (Mastodon's
`{"error": ...}`), also for a path or an id no route matches."""

from __future__ import annotations

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user


@pytest.fixture(autouse=True)
def _backend(redis_backend):
    pass


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/statuses/abc",  # not an id: Mastodon answers 404 Record not found
        "/api/v1/accounts/123456789012345678901",  # 21 digits: no such record
        "/api/v1/featured_tags",  # an endpoint the site leaves out
    ],
)
def test_an_api_path_no_route_matches_answers_a_json_404(path):
    alice = make_user("alice")
    response = api_client(token_for(alice)).get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json"), response[
        "Content-Type"
    ]
    assert "error" in response.json()
