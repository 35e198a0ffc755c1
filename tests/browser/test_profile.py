"""A face in a real browser: edit the profile, upload an avatar, and see both on
statuses posted before the edit."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.browser.test_journeys import log_in, navigating, path_of, post
from tests.helpers import make_user

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
