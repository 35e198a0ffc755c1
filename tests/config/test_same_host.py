"""One rule for "this host names us" (`config.http.same_host`): a handle's
`@alice@host`, an API `acct` and a link to one of our pages were each compared by a
rule of their own (three, each slightly different: `host:443` named us in a handle
and a link but not in an `acct`; a handle without our port named us, a link did
not)."""

from __future__ import annotations

import pytest

from config.http import same_host
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user
from timeline import richtext


@pytest.mark.parametrize(
    ("named", "ours", "same"),
    [
        ("example.org", "example.org", True),
        ("EXAMPLE.org", "example.org", True),
        ("example.org:443", "example.org", True),
        ("example.org:80", "example.org:8000", True),
        ("example.org", "example.org:8000", True),
        ("example.org:8000", "example.org:8000", True),
        ("example.org:9000", "example.org:8000", False),
        ("example.org:8000", "example.org", False),
        ("other.org", "example.org", False),
        ("user@example.org", "example.org", False),
        ("[::1]:8000", "[::1]:8000", True),
        ("[::1]", "[::1]:8000", True),
        ("[::2]", "[::1]", False),
        ("", "example.org", False),
    ],
)
def test_a_host_names_us_by_its_name_and_its_port_or_a_default_one(named, ours, same):
    assert same_host(named, ours) is same


@pytest.mark.fake_redis
@pytest.mark.parametrize("host", ["testserver", "testserver:443", "TESTSERVER:80"])
def test_a_handle_an_acct_and_a_link_agree_on_what_names_us(redis_backend, host):
    bob = make_user("bob")
    assert richtext.local_handles(f"hi @bob@{host}", "testserver") == "hi @bob"
    found = api_client().get("/api/v1/accounts/lookup", {"acct": f"bob@{host}"})
    assert found.status_code == 200 and found.json()["id"] == str(bob.id)
    link = f"https://{host}/u/bob/"
    client = api_client(token_for(make_user("alice")))
    found = client.get("/api/v2/search", {"q": link, "resolve": "true"}).json()
    assert [a["username"] for a in found["accounts"]] == ["bob"]
