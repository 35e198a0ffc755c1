"""Every response carries a strict Content-Security-Policy and a Permissions-Policy,
error pages and refusals included."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import redis
from django.test import Client

from config.redis import set_redis
from tests.helpers import logged_in_client, make_user

ROOT = Path(__file__).resolve().parents[2]


def directives(header: str) -> dict[str, str]:
    parts = (part.strip().split(None, 1) for part in header.split(";") if part.strip())
    return {part[0]: part[1] if len(part) > 1 else "" for part in parts}


def assert_strict_headers(response) -> None:
    csp = directives(response["Content-Security-Policy"])
    assert csp["default-src"] == "'self'"
    assert csp["script-src"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["object-src"] == "'none'" and csp["base-uri"] == "'none'"
    assert csp["frame-ancestors"] == "'none'" and csp["form-action"] == "'self'"
    assert "unsafe" not in response["Content-Security-Policy"]
    permissions = response["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "payment"):
        assert f"{feature}=()" in permissions


def test_pages_carry_the_policies():
    make_user("pat")
    visitor = Client()
    member = logged_in_client("pat")
    for client, path in [
        (visitor, "/"),
        (visitor, "/login/"),
        (visitor, "/signup/"),
        (visitor, "/timeline/"),
        (visitor, "/healthz/"),
        (member, "/"),
        (member, "/u/pat/"),
    ]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert_strict_headers(response)


def test_error_pages_and_refusals_carry_the_policies():
    make_user("err")
    member = logged_in_client("err", enforce_csrf_checks=True)
    assert_strict_headers(member.get("/no/such/page/"))  # 404
    assert_strict_headers(member.post("/post/", {"text": "x"}))  # 403 CSRF
    bad = Client().generic(
        "POST",
        "/login/",
        b"username=x",
        content_type="application/x-www-form-urlencoded; charset=utf-7",
    )
    assert bad.status_code == 400
    assert_strict_headers(bad)
    set_redis(redis.Redis.from_url("unix:///nonexistent.sock", decode_responses=True))
    down = member.get("/")
    assert down.status_code == 503
    assert_strict_headers(down)


def test_a_crash_answers_500_with_the_policies(monkeypatch):
    from timeline import views

    def crash(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(views.selectors, "global_page", crash)
    response = Client(raise_request_exception=False).get("/timeline/")
    assert response.status_code == 500
    assert_strict_headers(response)


@pytest.mark.fake_redis
def test_no_template_or_renderer_has_inline_script_style_or_handlers():
    # What the policy would block in a browser; the browser test checks the pages.
    sources = [*ROOT.joinpath("templates").rglob("*.html")]
    sources += [ROOT / "timeline" / "rendering.py"]
    inline = re.compile(
        r"<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=|javascript:"
    )
    for source in sources:
        assert not inline.search(source.read_text()), source
