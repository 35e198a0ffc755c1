"""Markup memoized by `fragment()` (the navigation, the compose box): each response
still carries its own CSRF token, each viewer their own navigation, and a value is
escaped as it would be without the memo."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings
from django.middleware.csrf import _unmask_cipher_token
from jinja2 import DictLoader
from markupsafe import Markup

from config.jinja2 import environment
from tests.helpers import logged_in_client, make_user


def form_tokens(html: str) -> dict[str, str]:
    """Each form's CSRF token, by the form's action."""
    forms = re.findall(
        r'<form method="post" action="([^"]+)"[^>]*>\s*'
        r'<input type="hidden" name="csrfmiddlewaretoken" value="([^"]+)">',
        html,
    )
    return dict(forms)


def test_each_page_carries_its_own_token_in_the_navigation_and_compose_box(r):
    make_user("alice")
    client = logged_in_client("alice", enforce_csrf_checks=True)
    first = form_tokens(client.get("/").content.decode())
    second = form_tokens(client.get("/").content.decode())
    secret = client.cookies["csrftoken"].value
    for page in (first, second):
        # One token a page, in the logout form and the compose box alike.
        assert page["/logout/"] == page["/post/"]
        assert _unmask_cipher_token(page["/post/"]) == secret
    assert first["/post/"] != second["/post/"]
    refused = client.post("/post/", {"text": "without a token"})
    assert refused.status_code == 403  # the check is on
    posted = client.post(
        "/post/",
        {"text": "from the memoized box", "csrfmiddlewaretoken": second["/post/"]},
    )
    assert posted.status_code == 302
    assert "from the memoized box" in client.get("/").content.decode()
    out = client.post("/logout/", {"csrfmiddlewaretoken": first["/logout/"]})
    assert out.status_code == 302


def test_each_viewer_sees_their_own_name_in_the_navigation(r):
    for name in ("alice", "bob"):
        make_user(name)
    alice, bob = logged_in_client("alice"), logged_in_client("bob")
    alice.get("/u/alice/")
    pages = {"bob": bob.get("/u/alice/").content.decode()}
    pages["alice"] = alice.get("/u/alice/").content.decode()  # after bob's
    assert '<a href="/u/alice/">@alice</a></li>' in pages["alice"]
    assert '<a href="/u/bob/">@bob</a></li>' in pages["bob"]
    assert "@bob</a></li>" not in pages["alice"]
    # The owner's profile has a compose box; another viewer's has none.
    assert 'action="/post/"' in pages["alice"]
    assert 'action="/post/"' not in pages["bob"]


def test_a_value_is_escaped_whether_or_not_an_equal_markup_came_first():
    env = environment(
        loader=DictLoader(
            {"page.html": "{{ fragment('f.html', v=v) }}", "f.html": "[{{ v }}]"}
        ),
        autoescape=True,
    )
    page = env.get_template("page.html")
    assert page.render(v=Markup("<b>")) == "[<b>]"
    assert page.render(v="<b>") == "[&lt;b&gt;]"


def test_templates_write_characters_beyond_ascii_as_entities():
    # A page of ASCII is encoded to UTF-8 as a plain copy: two middle dots in the
    # layout made every page's encoding a conversion (29 against 1.4 us a home).
    templates = Path(settings.BASE_DIR) / "templates"
    beyond = [
        path.relative_to(templates)
        for path in templates.rglob("*.html")
        if not path.read_text(encoding="utf-8").isascii()
    ]
    assert beyond == []
