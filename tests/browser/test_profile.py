"""A face in a real browser: edit the profile, upload an avatar, and see both on
statuses posted before the edit."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from accounts import keys as account_keys
from tests.browser.test_journeys import log_in, navigating, path_of, post
from tests.helpers import make_user
from timeline import services as timeline_services

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def test_edit_the_profile_and_see_the_new_face_on_old_statuses(new_page, tmp_path):
    make_user("alice")
    page = new_page()
    log_in(page, "alice")
    post(page, "posted before the edit")
    status = page.locator("li.status").first
    assert status.locator(".display-name").inner_text() == "alice"
    generated = status.locator("img.avatar").get_attribute("src")

    page.goto("/settings/")
    navigating(page, page.get_by_role("link", name="Edit your profile").click)
    assert path_of(page) == "/settings/profile/"
    page.get_by_label("Display name", exact=True).fill("Alice in Wonderland")
    page.get_by_label("Bio", exact=True).fill("Curiouser\nand curiouser")
    navigating(page, page.get_by_role("button", name="Save profile").click)
    assert page.get_by_text("Profile saved.").is_visible()

    picture = tmp_path / "me.png"
    out = io.BytesIO()
    Image.new("RGB", (400, 300), (30, 120, 200)).save(out, format="PNG")
    picture.write_bytes(out.getvalue())
    page.get_by_label("New avatar").set_input_files(str(picture))
    navigating(page, page.get_by_role("button", name="Upload avatar").click)
    assert page.get_by_text("Avatar changed.").is_visible()

    page.goto("/")
    status = page.locator("li.status").first
    assert status.locator(".display-name").inner_text() == "Alice in Wonderland"
    src = status.locator("img.avatar").get_attribute("src")
    assert src != generated and src.startswith("/avatars/")
    # The browser loaded the uploaded image (256 x 256, decoded).
    page.wait_for_function(
        "() => { const i = document.querySelector('li.status img.avatar');"
        " return i.complete && i.naturalWidth === 256; }"
    )
    page.goto("/u/alice/")
    assert page.locator("h1.display-name").inner_text() == "Alice in Wonderland"
    assert page.locator("p.bio").inner_text() == "Curiouser\nand curiouser"
    # Found by the new name as it is typed (the search box's own script).
    page.goto("/search/")
    page.get_by_label("Name or username").press_sequentially("alice in w")
    found = page.locator("ul.people a.person-link").first
    found.wait_for()
    assert "Alice in Wonderland" in found.inner_text()
    assert found.get_attribute("href") == "/u/alice/"


# The text of an element and the x of its first and of its last character, as laid
# out by the browser.
_ENDS = """(el) => {
  const node = el.firstChild, n = node.textContent.length;
  const x = (i) => { const r = document.createRange(); r.setStart(node, i);
    r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
  return [node.textContent, x(0), x(n - 1)];
}"""


def test_a_display_names_direction_override_never_flips_the_handle(new_page, r):
    """A name that leaves a right-to-left override open ("Kate \\u202e", stored
    before such controls were dropped at input) must not make the @handle beside
    it read backwards: a visitor sees "@laiciffo_etak", never "kate_official@"."""
    user = make_user("laiciffo_etak")
    r.hset(account_keys.user(user.id), "name", "Kate \u202e")
    timeline_services.status_create(author=user, text="Official news")
    page = new_page()
    page.goto("/timeline/")
    author = page.locator("li.status .status-author").first
    text, first_x, last_x = author.locator(".handle").evaluate(_ENDS)
    assert text == "@laiciffo_etak"
    assert first_x < last_x, (
        f"handle laid out reversed ('@' at x={first_x:.0f}, last letter at "
        f"x={last_x:.0f}) in {author.inner_text()!r}"
    )
