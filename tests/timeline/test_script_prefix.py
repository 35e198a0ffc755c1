"""One process serving the site under two script prefixes (SCRIPT_NAME set per
request by the server, which Django's WSGI handler turns into the script prefix):
every link a page shows carries the request's own prefix, memoized markup too.
(Django's test client does not set the prefix: the tests set it as WSGIHandler
does.)"""

from __future__ import annotations

import re

import pytest
from django.urls import set_script_prefix

from tests.helpers import logged_in_client, make_user
from timeline import notifications, services


@pytest.fixture
def prefix():
    yield set_script_prefix
    set_script_prefix("/")


def quote_href(html: str) -> str:
    found = re.search(
        r'<blockquote class="notification-status"><a href="([^"]*)"', html
    )
    return found[1]


def permalinks(html: str) -> list[str]:
    return re.findall(r'<a class="permalink" href="([^"]*)"', html)


def test_a_notifications_status_link_follows_the_request_prefix(r, prefix):
    alice = make_user("alice")
    bob = make_user("bob")
    status = services.status_create(author=alice, text="a status to like")
    notifications.notify(
        recipient=alice.id,
        kind="like",
        actor=bob.id,
        sid=status.id,
        at_ms=1_800_000_000_000,
    )
    client = logged_in_client("alice")
    prefix("/one/")
    first = client.get("/notifications/").content.decode()
    assert 'href="/one/u/bob/"' in first
    assert quote_href(first) == f"/one/s/{status.id}/"
    prefix("/two/")
    second = client.get("/notifications/").content.decode()
    assert 'href="/two/u/bob/"' in second
    assert quote_href(second) == f"/two/s/{status.id}/"


def test_a_status_rows_links_follow_the_request_prefix(r, prefix):
    alice = make_user("alice")
    status = services.status_create(author=alice, text="hello @alice #tagged")
    client = logged_in_client("alice")
    for name in ("one", "two"):
        prefix(f"/{name}/")
        page = client.get("/").content.decode()
        assert permalinks(page) == [f"/{name}/s/{status.id}/"]
        assert f'href="/{name}/tags/tagged/"' in page
        assert f'class="status-author" href="/{name}/u/alice/"' in page


def test_the_navigation_and_compose_box_follow_the_request_prefix(r, prefix):
    make_user("alice")
    client = logged_in_client("alice")
    for name in ("one", "two", "one"):
        prefix(f"/{name}/")
        page = client.get("/").content.decode()
        assert f'<a class="brand" href="/{name}/">' in page
        assert f'<a href="/{name}/u/alice/">@alice</a>' in page
        assert f'action="/{name}/logout/"' in page
        assert f'action="/{name}/post/"' in page
        assert f"/{'two' if name == 'one' else 'one'}/" not in page
