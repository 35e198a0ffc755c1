"""Profiles with a face (issue #12): display name, bio and avatar, edited on the
profile settings page and shown on the profile, in people lists and on every status
(old ones too); "Follows you"; Follow buttons in people lists."""

from __future__ import annotations

import io
import re

import pytest
from django.conf import settings
from django.test import Client
from PIL import Image

from accounts import keys as account_keys
from accounts import services as account_services
from accounts.selectors import user_get, user_get_by_username
from config.redis import get_redis_bytes
from tests.helpers import body, logged_in_client, make_user, page, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import keys, services
from timeline import services as timeline_services


def uid(name: str) -> int:
    return user_get_by_username(username=name).id


def image_bytes(fmt: str = "PNG", size=(300, 200), color=(200, 30, 30), **save):
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt, **save)
    return out.getvalue()


def upload(client: Client, data: bytes, name: str = "me.png"):
    handle = io.BytesIO(data)
    handle.name = name
    return client.post("/settings/avatar/", {"avatar": handle})


def avatar_src(html: str, username: str) -> list[str]:
    """The avatar URLs of a page's statuses by `username`."""
    return re.findall(
        rf'<a class="status-avatar" href="/u/{username}/"[^>]*><img class="avatar" '
        r'src="([^"]+)"',
        html,
    )


@pytest.fixture
def alice():
    make_user("alice")
    return logged_in_client("alice")


@pytest.fixture
def bob():
    make_user("bob")
    return logged_in_client("bob")


def test_settings_links_to_the_profile_form(alice):
    assert 'href="/settings/profile/"' in page(alice, "/settings/")
    assert 'name="name"' in page(alice, "/settings/profile/")


def test_visitor_is_sent_to_log_in():
    response = Client().get("/settings/profile/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_display_name_and_bio_show_on_the_profile_escaped(alice, bob):
    answer = alice.post(
        "/settings/profile/",
        {"name": "  Alice <b>Liddell</b> ", "bio": "Down the\r\nrabbit hole & back"},
        follow=True,
    )
    assert "Profile saved." in body(answer)
    profile = page(bob, "/u/alice/")
    assert '<h1 class="display-name">Alice &lt;b&gt;Liddell&lt;/b&gt;</h1>' in profile
    assert "@alice" in profile
    assert '<p class="bio">Down the\nrabbit hole &amp; back</p>' in profile
    assert "<b>Liddell" not in profile


def test_profile_errors_keep_what_was_typed(alice):
    long_name = "x" * 51
    answer = alice.post("/settings/profile/", {"name": long_name, "bio": "kept bio"})
    assert answer.status_code == 400
    html = body(answer)
    assert "at most 50 characters (this one has 51)" in html
    assert long_name in html and "kept bio" in html
    assert user_get_by_username(username="alice").name == ""


@pytest.mark.parametrize(
    ("name", "bio", "error"),
    [
        ("\u200b\u200d", "", "A display name must show something"),
        ("ok", "\u2800 \ufeff", "A bio must show something"),
        ("ok", "é" * 301, "A bio is at most 300 characters (this one has 301)"),
    ],
)
def test_invisible_or_long_profile_text_is_refused(alice, name, bio, error):
    answer = alice.post("/settings/profile/", {"name": name, "bio": bio})
    assert answer.status_code == 400 and error in body(answer)


def test_lengths_count_code_points(alice):
    answer = alice.post("/settings/profile/", {"name": "🦊" * 50, "bio": "ü" * 300})
    assert answer.status_code == 302
    user = user_get_by_username(username="alice")
    assert user.name == "🦊" * 50 and user.bio == "ü" * 300


def test_a_display_name_is_one_line_and_empty_means_the_username(alice):
    alice.post("/settings/profile/", {"name": "Alice\nLiddell", "bio": ""})
    assert user_get_by_username(username="alice").name == "Alice Liddell"
    alice.post("/settings/profile/", {"name": "", "bio": ""})
    assert '<h1 class="display-name">alice</h1>' in page(alice, "/u/alice/")


def test_direction_controls_are_dropped_from_a_name_and_bio_as_typed(alice, bob):
    """An override, embedding or isolate (invisible) goes; what shows stays, and so
    do the marks a right-to-left name may need."""
    answer = alice.post(
        "/settings/profile/",
        {
            "name": "Kate \u202e\u202a\u2066\u2069",
            "bio": "\u202dabc\u202c \u05e9\u05dc\u05d5\u05dd\u200f",
        },
    )
    assert answer.status_code == 302
    user = user_get_by_username(username="alice")
    assert user.name == "Kate"
    assert user.bio == "abc \u05e9\u05dc\u05d5\u05dd\u200f"
    alice.post("/settings/profile/", {"name": "\u202e", "bio": ""})
    assert user_get_by_username(username="alice").name == ""  # blank: none


def test_a_display_name_is_isolated_from_the_handle_beside_it(alice, bob, r):
    """A name stored before direction controls were dropped is shown in a `<bdi>`
    on every row that puts it beside a handle, so its override stops there."""
    r.hset(account_keys.user(uid("alice")), "name", "Kate \u202e")
    alice.post("/post/", {"text": "official news"})
    alice.post("/u/bob/follow/")
    isolated = '<bdi class="display-name">Kate \u202e</bdi> <span class="handle">'
    assert isolated in page(bob, "/timeline/")  # a status row
    assert isolated in page(bob, "/u/bob/followers/")  # a person row


def test_old_hashes_without_the_new_fields_load_with_defaults(r):
    make_user("old")
    user_id = uid("old")
    r.hdel(account_keys.user(user_id), "name", "bio", "avatar")
    user = user_get_by_username(username="old")
    assert (user.name, user.bio, user.avatar) == ("", "", "")
    assert user.display_name == "old"
    assert user.avatar_url == f"/avatars/{user_id}/"


def test_an_edited_name_and_avatar_show_on_old_statuses(alice, bob):
    alice.post("/post/", {"text": "an old status"})
    bob.post("/u/alice/follow/")
    run_jobs()
    sid = int(re.search(r'data-status-id="(\d+)"', page(bob, "/")).group(1))
    for url in ("/", "/timeline/", "/u/alice/", f"/s/{sid}/"):  # rendered, cached
        assert f'src="/avatars/{uid("alice")}/"' in page(bob, url)
    alice.post("/settings/profile/", {"name": "Queen Alice", "bio": ""})
    assert upload(alice, image_bytes()).status_code == 302
    version = user_get_by_username(username="alice").avatar
    for url in ("/", "/timeline/", "/u/alice/", f"/s/{sid}/"):
        html = page(bob, url)
        assert '<bdi class="display-name">Queen Alice</bdi>' in html, url
        assert avatar_src(html, "alice") == [f"/avatars/{uid('alice')}/{version}/"]


def test_a_status_of_a_deleted_author_renders_with_the_username(alice, bob, r):
    status = services.status_create(
        author=user_get_by_username(username="alice"), text="left behind"
    )
    r.hset(account_keys.user(uid("alice")), "deleted", "1")
    html = page(bob, "/timeline/")
    assert f'data-status-id="{status.id}"' in html
    assert '<bdi class="display-name">alice</bdi>' in html


def test_an_avatar_upload_is_reencoded_square_and_served_versioned(alice, bob):
    jpeg = image_bytes("JPEG", size=(640, 480), exif=b"Exif\x00\x00secret-gps")
    assert b"secret-gps" in jpeg
    answer = upload(alice, jpeg, "photo.jpg")
    assert answer.status_code == 302
    version = user_get_by_username(username="alice").avatar
    assert re.fullmatch(r"[0-9a-f]{16}", version)
    url = f"/avatars/{uid('alice')}/{version}/"
    assert f'src="{url}"' in page(bob, "/u/alice/")
    served = bob.get(url)
    assert served.status_code == 200
    assert served["Content-Type"] == "image/webp"
    assert served["Cache-Control"] == "public, max-age=31536000, immutable"
    assert served["ETag"] == f'"{version}"'
    data = served.content
    assert len(data) <= 64 * 1024 and b"secret-gps" not in data
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "WEBP" and image.size == (256, 256)
        assert not image.getexif()
    assert bob.get(url, HTTP_IF_NONE_MATCH=f'"{version}"').status_code == 304
    # A new upload is a new URL; the old one is gone.
    upload(alice, image_bytes(color=(0, 90, 200)))
    new = user_get_by_username(username="alice").avatar
    assert new != version
    assert bob.get(url).status_code == 404
    assert Client().get(f"/avatars/{uid('alice')}/{new}/").status_code == 200


def test_avatar_bytes_are_stored_through_the_bytes_client(alice):
    upload(alice, image_bytes())
    stored = get_redis_bytes().hget(account_keys.avatar(uid("alice")), "img")
    assert isinstance(stored, bytes) and stored[:4] == b"RIFF"


def test_removing_the_avatar_brings_back_the_generated_one(alice, r):
    upload(alice, image_bytes())
    answer = alice.post("/settings/avatar/remove/", follow=True)
    assert "Avatar removed" in body(answer)
    assert user_get_by_username(username="alice").avatar == ""
    assert not r.exists(account_keys.avatar(uid("alice")))
    assert f'src="/avatars/{uid("alice")}/"' in page(alice, "/u/alice/")


def _deleted_meanwhile(monkeypatch, target: str, username: str) -> None:
    """Make `services.<target>` close the account (another tab's deletion) first."""
    real = getattr(account_services, target)

    def deleted_meanwhile(*args, **kwargs):
        timeline_services.account_close(user=user_get_by_username(username=username))
        return real(*args, **kwargs)

    monkeypatch.setattr(account_services, target, deleted_meanwhile)


def assert_logged_out_to_log_in(client: Client, answer) -> None:
    """The answer to an account deleted meanwhile: the login page, the cookie
    cleared, and why."""
    assert answer.status_code == 302 and answer["Location"] == "/login/"
    assert answer.cookies[settings.AUTH_COOKIE_NAME].value == ""
    assert "This account is deleted: you are logged out." in page(client, "/login/")


def test_a_profile_edit_racing_the_accounts_deletion_logs_out(alice, monkeypatch):
    alice_id = uid("alice")
    _deleted_meanwhile(monkeypatch, "profile_clean", "alice")
    answer = alice.post("/settings/profile/", {"name": "Bye", "bio": ""})
    assert user_get(uid=alice_id) is None
    assert_logged_out_to_log_in(alice, answer)


def test_an_avatar_upload_racing_the_accounts_deletion_logs_out(alice, monkeypatch, r):
    alice_id = uid("alice")
    _deleted_meanwhile(monkeypatch, "avatar_encode", "alice")
    answer = upload(alice, image_bytes())
    assert user_get(uid=alice_id) is None
    assert not r.exists(account_keys.avatar(alice_id))
    assert_logged_out_to_log_in(alice, answer)


def test_an_avatar_removal_racing_the_accounts_deletion_logs_out(alice, monkeypatch):
    _deleted_meanwhile(monkeypatch, "avatar_remove", "alice")
    answer = alice.post("/settings/avatar/remove/")
    assert_logged_out_to_log_in(alice, answer)


def test_the_generated_avatar_is_an_svg_cached_a_day(alice):
    response = Client().get(f"/avatars/{uid('alice')}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Cache-Control"] == "public, max-age=86400"
    assert response.content.startswith(b"<svg") and b"<script" not in response.content
    assert Client().get(f"/avatars/{uid('alice')}/").content == response.content
    assert Client().get("/avatars/999999/").content != response.content
    # Signed in, the avatar stays public (the same for everyone).
    assert "private" not in alice.get(f"/avatars/{uid('alice')}/")["Cache-Control"]


def css_hsl(hue: int, saturation: int, lightness: int) -> tuple[int, int, int]:
    """An `hsl()` colour as a browser draws it: CSS Color 4's `hslToRgb`, rounded to
    bytes (written out here, not taken from the code under test)."""
    s, light = saturation / 100, lightness / 100
    a = s * min(light, 1 - light)

    def channel(n: int) -> int:
        k = (n + hue / 30) % 12
        return round(255 * (light - a * max(-1, min(k - 3, 9 - k, 1))))

    return channel(0), channel(8), channel(4)


def svg_cells(svg: str) -> tuple[tuple, tuple, set[tuple[int, int]]]:
    """The generated SVG's background and foreground colours and its filled cells
    (x, y) on its 7x7 grid."""
    colours = re.findall(r'fill="hsl\((\d+),(\d+)%,(\d+)%\)"', svg)
    background, foreground = (css_hsl(*map(int, c)) for c in colours)
    cells = {(int(x), int(y)) for x, y in re.findall(r'<rect x="(\d+)" y="(\d+)"', svg)}
    return background, foreground, cells


PNG_SIZE = 392  # 7 cells of 56 pixels


def test_the_generated_png_draws_the_svgs_cells_in_its_colours(alice):
    """Clients that cannot draw SVG (the API's) get the same picture as a PNG: each
    cell of the SVG's 7x7 grid, corners and centre, has the colour the SVG gives it,
    with crisp edges (no blending between cells)."""
    cell = PNG_SIZE // 7
    patterned = 0
    for user_id in [uid("alice"), *range(1, 30), 999999]:  # accounts or not
        background, foreground, cells = svg_cells(
            Client().get(f"/avatars/{user_id}/").content.decode()
        )
        assert background != foreground
        patterned += bool(cells)
        response = Client().get(f"/avatars/{user_id}.png")
        assert response.status_code == 200
        assert response["Content-Type"] == "image/png"
        with Image.open(io.BytesIO(response.content), formats=["PNG"]) as image:
            assert image.size == (PNG_SIZE, PNG_SIZE)
            pixels = image.convert("RGB")
        for x in range(7):
            for y in range(7):
                want = foreground if (x, y) in cells else background
                left, top = x * cell, y * cell
                for dx, dy in ((0, 0), (cell - 1, 0), (0, cell - 1), (cell - 1,) * 2):
                    assert pixels.getpixel((left + dx, top + dy)) == want, (x, y)
                assert pixels.getpixel((left + cell // 2, top + cell // 2)) == want
    assert patterned >= 25  # the pixels compared were not all background


def test_the_generated_png_is_cached_a_day_and_revalidated(alice):
    url = f"/avatars/{uid('alice')}.png"
    response = Client().get(url)
    assert response["Cache-Control"] == "public, max-age=86400"
    etag = response["ETag"]
    assert re.fullmatch(r'"[0-9a-f]{16}"', etag)
    assert etag != Client().get(f"/avatars/{uid('alice')}/")["ETag"]
    unchanged = Client().get(url, HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged["ETag"] == etag
    assert Client().get(url, HTTP_IF_NONE_MATCH='"0123456789abcdef"').content == (
        response.content
    )
    assert Client().get("/avatars/999999.png").content != response.content
    # Signed in, it stays public (the same for everyone).
    assert "private" not in alice.get(url)["Cache-Control"]


def test_the_generated_png_reads_nothing(alice):
    """Made from the id alone, as the SVG is: no round trip, whoever asks, and a
    missing account's id gets one too (it tells nothing of who exists)."""
    urls = (f"/avatars/{uid('alice')}.png", "/avatars/999999.png")
    with RoundTripCounter() as counter:
        for url in urls:
            assert Client().get(url).status_code == 200
            assert alice.get(url).status_code == 200
    assert counter.count == 0


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"not an image at all", "not an image we can read"),
        (image_bytes()[:60], "not an image we can read"),
        (b"\x00" * (2 * 1024 * 1024 + 1), "at most 2 MB"),
        # Pillow reads these too; the site takes what it says it takes.
        (image_bytes("BMP"), "upload a PNG, JPEG, GIF or WebP"),
        (image_bytes("TIFF"), "upload a PNG, JPEG, GIF or WebP"),
    ],
    ids=["text", "truncated", "oversized", "bmp", "tiff"],
)
def test_bad_uploads_are_refused_with_a_message(alice, data, error):
    answer = upload(alice, data)
    assert answer.status_code == 400 and error in body(answer)
    assert user_get_by_username(username="alice").avatar == ""


def test_a_decompression_bomb_is_refused(alice):
    # A tiny file that claims a huge canvas: a 1-bit PNG of 20000 x 20000 pixels.
    bomb = image_bytes("PNG", size=(1, 1))
    out = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(out, format="PNG")
    bomb = out.getvalue()
    assert len(bomb) < 2 * 1024 * 1024
    answer = upload(alice, bomb)
    assert answer.status_code == 400 and "too many pixels" in body(answer)


def test_avatar_changes_need_csrf(alice):
    strict = logged_in_client("alice", enforce_csrf_checks=True)
    assert strict.post("/settings/avatar/remove/").status_code == 403
    assert strict.post("/settings/profile/", {"name": "x"}).status_code == 403


def test_follows_you_shows_when_the_owner_follows_the_viewer(alice, bob):
    assert "Follows you" not in page(bob, "/u/alice/")
    alice.post("/u/bob/follow/")
    assert "Follows you" in page(bob, "/u/alice/")
    assert "Follows you" not in page(alice, "/u/bob/")
    assert "Follows you" not in page(Client(), "/u/alice/")


def test_people_lists_have_follow_buttons_but_for_oneself_and_blocks(alice, bob):
    for name in ("carol", "dave", "erin"):
        make_user(name)
        logged_in_client(name).post("/u/alice/follow/")
    bob.post("/u/alice/follow/")
    bob.post("/u/carol/follow/")
    bob.post("/u/erin/block/")
    html = page(bob, "/u/alice/followers/")
    assert 'action="/u/carol/unfollow/"' in html
    assert 'action="/u/dave/follow/"' in html
    assert "/u/bob/follow/" not in html and "/u/bob/unfollow/" not in html
    assert "/u/erin/follow/" not in html and 'href="/u/erin/"' in html
    assert 'name="next" value="/u/alice/followers/"' in html
    # Blocked the other way round: no button either.
    logged_in_client("dave").post("/u/bob/block/")
    assert "/u/dave/follow/" not in page(bob, "/u/alice/followers/")
    # A visitor sees names, no buttons.
    assert "/follow/" not in page(Client(), "/u/alice/followers/")
    # The button works and comes back to the list.
    answer = bob.post("/u/carol/unfollow/", {"next": "/u/alice/followers/"})
    assert answer["Location"] == "/u/alice/followers/"
    assert 'action="/u/carol/follow/"' in page(bob, "/u/alice/followers/")


def test_people_lists_buttons_work_without_javascript(alice, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    carol.post("/settings/privacy/", {"private": "on"})
    carol.post("/u/alice/follow/")
    bob.post("/u/carol/follow/")  # a request: carol is private
    html = page(bob, "/u/alice/followers/")
    form = re.search(
        r'<form method="post" action="/u/carol/request/cancel/".*?</form>', html, re.S
    )
    assert 'aria-label="Requested: cancel your follow request to @carol"' in form[0]
    # The form as a browser sends it, CSRF token and `next` included.
    fields = dict(
        re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form[0])
    )
    assert fields["next"] == "/u/alice/followers/"
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = bob.cookies
    answer = strict.post("/u/carol/request/cancel/", fields)
    assert answer["Location"] == "/u/alice/followers/"
    html = page(bob, "/u/alice/followers/")
    assert 'action="/u/carol/follow/"' in html and "Requested" not in html


def test_people_lists_show_display_names_and_avatars(alice, bob):
    bob.post("/settings/profile/", {"name": "Bob <Builder>", "bio": ""})
    bob.post("/u/alice/follow/")
    html = page(alice, "/u/alice/followers/")
    assert '<bdi class="display-name">Bob &lt;Builder&gt;</bdi>' in html
    assert f'src="/avatars/{uid("bob")}/"' in html


def count_round_trips(client: Client, url: str) -> int:
    client.get(url)  # warm: connections, scripts, the name cache
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    return counter.count


@pytest.mark.single_server
def test_pages_with_faces_keep_two_round_trips(alice, bob):
    for name in ("carol", "dave"):
        make_user(name)
        client = logged_in_client(name)
        client.post("/settings/profile/", {"name": f"{name} face", "bio": ""})
        upload(client, image_bytes())
        client.post("/post/", {"text": f"{name} says hi"})
        bob.post(f"/u/{name}/follow/")
        client.post("/u/bob/follow/")
    run_jobs()
    home = page(bob, "/")
    assert "carol face" in home and "dave face" in home
    # A home's statuses ride with the auth check (one server: this test's); so do
    # the global timeline's, for a viewer who blocks nobody, and a profile's with
    # its people in common, and a people list's faces with its Follow buttons.
    for url in ("/", "/timeline/", "/u/carol/", "/u/bob/followers/"):
        assert count_round_trips(bob, url) == 1, url
    followers = page(bob, "/u/bob/followers/")
    assert "carol face" in followers and "dave face" in followers
    sid = int(re.search(r'data-status-id="(\d+)"', home).group(1))
    assert count_round_trips(bob, f"/s/{sid}/") == 2
    assert count_round_trips(Client(), "/timeline/") == 1


@pytest.mark.cluster
def test_on_a_cluster_cards_cost_one_more_round_trip(alice, bob):
    for i in range(6):
        name = f"author{i}"
        make_user(name)
        client = logged_in_client(name)
        client.post("/settings/profile/", {"name": f"Face {i}", "bio": ""})
        client.post("/post/", {"text": f"from {name}"})
        bob.post(f"/u/{name}/follow/")
    run_jobs()
    home = page(bob, "/")
    assert all(f"Face {i}" in home for i in range(6))
    assert all(f"Face {i}" in page(bob, "/timeline/") for i in range(6))
    assert count_round_trips(bob, "/") == 3
    assert count_round_trips(bob, "/u/author1/") == 2


def test_account_deletion_removes_the_avatar(alice, r):
    upload(alice, image_bytes())
    alice_id = uid("alice")
    assert r.exists(account_keys.avatar(alice_id))
    alice.post("/settings/delete/", {"password": "correct-horse-battery"})
    run_jobs()
    assert not r.exists(account_keys.avatar(alice_id))
    assert not r.exists(account_keys.user(alice_id))
    assert not r.exists(keys.posts(alice_id))


def search_names(client: Client, query: str) -> list[str]:
    html = page(client, f"/search/?q={query}")
    return re.findall(r'<a class="person-link" href="/u/([^/]+)/">', html)


def test_search_finds_people_by_username_prefix_any_case(alice, bob):
    for name in ("Alicia", "alfred", "zed"):
        make_user(name)
    assert sorted(search_names(bob, "AL")) == ["Alicia", "alfred", "alice"]
    assert search_names(bob, "%40alic") == ["alice", "Alicia"]  # @ ignored
    assert search_names(bob, "zz") == []
    assert "Nobody" in page(bob, "/search/?q=zz")
    assert search_names(Client(), "ze") == ["zed"]  # visitors too
    assert 'href="/search/"' in page(bob, "/")


def test_search_finds_display_names_and_follows_renames(alice, bob):
    alice.post("/settings/profile/", {"name": "Wonder Land", "bio": ""})
    assert search_names(bob, "wonder") == ["alice"]
    alice.post("/settings/profile/", {"name": "Ézra", "bio": ""})
    assert search_names(bob, "wonder") == []
    assert search_names(bob, "ézr") == ["alice"]
    assert search_names(bob, "ÉZR") == ["alice"]
    alice.post("/settings/profile/", {"name": "", "bio": ""})
    assert search_names(bob, "ézr") == []
    assert search_names(bob, "ali") == ["alice"]


def test_search_leaves_out_blocked_people_either_way(alice, bob):
    make_user("alex")
    carol_client = (make_user("carol"), logged_in_client("carol"))[1]
    bob.post("/u/alice/block/")
    logged_in_client("alex").post("/u/bob/block/")
    assert search_names(bob, "al") == []
    assert sorted(search_names(carol_client, "al")) == ["alex", "alice"]


def test_search_json_answers_for_autocomplete(alice, bob):
    alice.post("/settings/profile/", {"name": "Alice <3", "bio": ""})
    answer = bob.get("/search/people.json?q=ali")
    assert answer["Content-Type"] == "application/json"
    assert answer.json() == {
        "people": [
            {
                "username": "alice",
                "name": "Alice <3",
                "avatar": f"/avatars/{uid('alice')}/",
                "url": "/u/alice/",
            }
        ]
    }


def test_a_deleted_account_leaves_search(alice, bob, r):
    alice.post("/settings/profile/", {"name": "Wonder", "bio": ""})
    alice.post("/settings/delete/", {"password": "correct-horse-battery"})
    assert search_names(bob, "ali") == []  # gone at once (no user to show)
    run_jobs()
    assert r.zcard(account_keys.names_index()) == 1  # bob's entry only
    assert search_names(bob, "wond") == []


@pytest.mark.single_server
def test_search_costs_two_round_trips(alice, bob):
    assert count_round_trips(bob, "/search/?q=al") == 2


def suggested_names(client: Client) -> list[str]:
    html = page(client, "/people/suggested/")
    return re.findall(r'<a class="person-link" href="/u/([^/]+)/">', html)


@pytest.fixture
def friends(alice, bob, settings):
    """bob follows carol and dave; both follow erin, carol also frank."""
    settings.RATE_LIMIT_FOLLOW = "off"
    clients = {"alice": alice, "bob": bob}
    for name in ("carol", "dave", "erin", "frank"):
        make_user(name)
        clients[name] = logged_in_client(name)
    for follower, followee in [
        ("carol", "erin"),
        ("dave", "erin"),
        ("carol", "frank"),
        ("carol", "bob"),
        ("bob", "carol"),
        ("bob", "dave"),
    ]:
        clients[follower].post(f"/u/{followee}/follow/")
    run_jobs()
    return clients


def test_who_to_follow_ranks_friends_of_friends_first(r, friends):
    bob = friends["bob"]
    assert r.zrevrange(keys.suggestions(uid("bob")), 0, -1, withscores=True) == [
        (str(uid("erin")), 2.0),
        (str(uid("frank")), 1.0),
    ]
    names = suggested_names(bob)
    assert names[:2] == ["erin", "frank"]
    assert not {"bob", "carol", "dave"} & set(names)
    assert 'action="/u/erin/follow/"' in page(bob, "/people/suggested/")
    bob.post("/u/erin/follow/")
    run_jobs()
    assert suggested_names(bob)[0] == "frank"


def test_who_to_follow_never_offers_blocked_muted_or_deleted_people(r, friends):
    bob = friends["bob"]
    bob.post("/u/frank/mute/")
    friends["erin"].post("/u/bob/block/")
    assert not {"erin", "frank"} & set(suggested_names(bob))
    bob.post("/u/frank/unmute/")
    assert "frank" in suggested_names(bob)
    friends["frank"].post("/settings/delete/", {"password": "correct-horse-battery"})
    assert "frank" not in suggested_names(bob)


def test_who_to_follow_falls_back_to_the_most_followed(friends):
    make_user("newcomer")
    newcomer = logged_in_client("newcomer")
    names = suggested_names(newcomer)
    assert names[0] == "erin"  # two followers; the others have one
    assert set(names) == {"erin", "bob", "carol", "dave", "frank"}
    assert "People to follow" in page(newcomer, "/")
    assert "/people/suggested/" in page(newcomer, "/")


def test_the_empty_home_suggests_friends_of_friends(friends, r):
    make_user("gina")
    gina = logged_in_client("gina")
    gina.post("/u/frank/follow/")  # frank follows nobody: gina's home stays empty
    friends["frank"].post("/u/alice/follow/")
    friends["frank"].post("/u/alice/unfollow/")
    gina.post("/u/dave/follow/")
    r.delete(keys.home(uid("gina")))
    run_jobs()
    home = page(gina, "/")
    assert "People to follow" in home
    assert 'action="/u/erin/follow/"' in home


def test_account_deletion_removes_index_entries_and_suggestions(friends, r):
    bob = friends["bob"]
    bob.post("/settings/profile/", {"name": "Bobby", "bio": ""})
    bob_id = uid("bob")
    assert r.exists(keys.suggestions(bob_id))
    bob.post("/settings/delete/", {"password": "correct-horse-battery"})
    run_jobs()
    assert not r.exists(keys.suggestions(bob_id))
    assert not [m for m in r.zrange(account_keys.names_index(), 0, -1) if "bob" in m]


@pytest.mark.single_server
def test_who_to_follow_costs_two_round_trips(friends):
    assert count_round_trips(friends["bob"], "/people/suggested/") == 2


def test_avatar_uploads_take_from_the_posting_budget(alice, settings):
    settings.RATE_LIMIT_POST = "1/1h"
    assert upload(alice, image_bytes()).status_code == 302
    refused = upload(alice, image_bytes(color=(1, 2, 3)))
    assert refused.status_code == 429 and "too often" in body(refused)
    assert refused["Retry-After"]
