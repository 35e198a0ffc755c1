"""What people do on the site, done the way they do it: in a real browser."""

from __future__ import annotations

import functools
from urllib.parse import urlparse

import pytest

from accounts import services as account_services
from accounts.selectors import user_get_by_username
from tests.browser.conftest import PHONE, VENDOR
from tests.helpers import PASSWORD, make_user, run_jobs
from timeline import services, social

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]


def navigating(page, action) -> None:
    """Do what submits a form or follows a link, and wait for the new page."""
    with page.expect_navigation():
        action()


def path_of(page) -> str:
    return urlparse(page.url).path


def sign_up(page, username: str) -> None:
    page.goto("/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password (again)").fill(PASSWORD)
    navigating(page, page.get_by_role("button", name="Sign up").click)
    assert path_of(page) == "/"


def log_in(page, username: str, password: str = PASSWORD) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    navigating(page, page.get_by_role("button", name="Log in").click)


def post(page, text: str) -> None:
    page.goto("/")
    page.get_by_label("What's happening?").fill(text)
    navigating(page, page.get_by_role("button", name="Post", exact=True).click)
    assert path_of(page) == "/"


def wait_for_statuses(page, count: int) -> None:
    # A function, not an expression: Playwright evals an expression inside the page,
    # which the site's Content-Security-Policy (no 'unsafe-eval') refuses.
    page.wait_for_function(
        "(count) => document.querySelectorAll('li.status').length === count", arg=count
    )


def statuses(page) -> list[str]:
    return page.locator("li.status .status-text").all_inner_texts()


def test_sign_up_post_and_see_the_post(new_page):
    page = new_page()
    sign_up(page, "alice")
    assert page.get_by_text("Welcome, alice!").is_visible()
    post(page, "Hello from a real browser\nsecond line")
    assert statuses(page) == ["Hello from a real browser\nsecond line"]
    assert page.locator("li.status time").first.inner_text() == "just now"
    navigating(page, page.get_by_role("link", name="@alice").first.click)
    assert page.title() == "@alice · Profile · Retwis"
    assert "1 status 0 followers" in " ".join(
        page.locator(".counts").inner_text().split()
    )


def test_follow_see_on_home_then_unfollow_and_it_disappears(new_page):
    make_user("alice")
    make_user("bob")
    alice, bob = new_page(), new_page()
    log_in(alice, "alice")
    post(alice, "Alice's news")
    log_in(bob, "bob")
    bob.goto("/u/alice/")
    navigating(bob, bob.get_by_role("button", name="Follow").click)
    assert bob.get_by_role("button", name="Unfollow").is_visible()
    bob.goto("/")
    assert statuses(bob) == ["Alice's news"]
    bob.goto("/u/alice/")
    navigating(bob, bob.get_by_role("button", name="Unfollow").click)
    bob.goto("/")
    assert statuses(bob) == []
    assert bob.get_by_text("Your home is empty").is_visible()


def test_a_followers_home_shows_a_new_status_within_seconds(new_page, fanout_worker):
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    author, reader = new_page(), new_page()
    log_in(author, "alice")
    log_in(reader, "bob")
    post(author, "Fresh from alice")
    for _ in range(50):  # the worker's job, usually done in milliseconds
        reader.goto("/")
        if statuses(reader):
            break
        reader.wait_for_timeout(100)
    assert statuses(reader) == ["Fresh from alice"]


def test_delete_a_status(new_page):
    make_user("alice")
    page = new_page()
    log_in(page, "alice")
    post(page, "soon deleted")
    post(page, "kept")
    delete = page.locator("li.status", has_text="soon deleted").get_by_role(
        "button", name="Delete this status"
    )
    navigating(page, delete.click)
    assert page.get_by_text("Status deleted.").is_visible()
    assert statuses(page) == ["kept"]


def test_after_log_out_the_back_button_shows_nothing_private(new_page):
    make_user("alice")
    page = new_page()
    log_in(page, "alice")
    post(page, "private-ish home content")
    page.goto("/")
    assert "private-ish home content" in page.content()
    navigating(page, page.get_by_role("button", name="Log out").click)
    page.go_back()
    page.wait_for_load_state()
    assert "private-ish home content" not in page.content()
    assert page.get_by_role("button", name="Log out").count() == 0


def logged_out(page) -> bool:
    nav = page.get_by_role("navigation")
    return nav.get_by_role("link", name="Log in").count() == 1


def test_change_the_password_then_log_out_the_other_device_from_settings(new_page):
    make_user("alice")
    laptop, phone, tablet = new_page(), new_page(viewport=PHONE), new_page()
    for page in (laptop, phone, tablet):
        log_in(page, "alice")
    navigating(laptop, laptop.get_by_role("link", name="Settings").click)
    assert laptop.locator("li.device").count() == 3
    laptop.get_by_label("Current password").fill(PASSWORD)
    laptop.get_by_label("New password", exact=True).fill("a-brand-new-passphrase")
    laptop.get_by_label("New password (again)").fill("a-brand-new-passphrase")
    navigating(laptop, laptop.get_by_role("button", name="Change password").click)
    assert "Your other devices are logged out." in laptop.content()
    assert laptop.locator("li.device").count() == 1
    for page in (phone, tablet):
        page.reload()
        assert logged_out(page)
    log_in(phone, "alice", "a-brand-new-passphrase")
    laptop.reload()
    assert laptop.locator("li.device").count() == 2
    other = laptop.locator("li.device", has_not_text="This device")
    navigating(laptop, other.get_by_role("button").click)
    assert "That device is logged out." in laptop.content()
    phone.reload()
    assert logged_out(phone)
    assert laptop.get_by_text("This device").count() == 1


def test_older_loads_the_next_page_in_place(new_page, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    alice = make_user("alice")
    for i in range(7):
        services.status_create(author=alice, text=f"status number {i}")
    page = new_page()
    page.goto("/timeline/")
    assert len(statuses(page)) == 3
    url = page.url
    page.get_by_role("link", name="Older").click()
    wait_for_statuses(page, 6)
    assert page.url == url  # loaded in place, no navigation
    page.get_by_role("link", name="Older").click()
    wait_for_statuses(page, 7)
    assert page.get_by_role("link", name="Older").count() == 0
    assert statuses(page) == [f"status number {i}" for i in range(6, -1, -1)]


def test_older_works_without_javascript(browser, site, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    alice = make_user("alice")
    for i in range(5):
        services.status_create(author=alice, text=f"n{i}")
    context = browser.new_context(base_url=site, java_script_enabled=False)
    page = context.new_page()
    page.goto("/timeline/")
    navigating(page, page.get_by_role("link", name="Older").click)
    assert "max_id=" in page.url
    assert statuses(page) == ["n1", "n0"]
    context.close()


def test_older_on_a_thread_loads_only_the_next_replies(new_page, settings):
    """On a status's page, "Older" adds the next replies to the Replies list: the
    status and what it replies to are not copied into a list again."""
    settings.TIMELINE_PAGE_SIZE = 3
    alice, bob = make_user("alice"), make_user("bob")
    root = services.status_create(author=alice, text="root status")
    for i in range(5):
        social.status_reply(author=bob, sid=root.id, text=f"@alice reply {i}")
    run_jobs()
    page = new_page()
    log_in(page, "bob")
    page.goto(f"/s/{root.id}/")
    page.get_by_role("link", name="Older").click()
    page.wait_for_function("() => !document.querySelector('.pager')")
    assert statuses(page) == ["root status", *(f"@alice reply {i}" for i in range(5))]
    replies = page.locator("ol.statuses[aria-label=Replies] .status-text")
    assert replies.all_inner_texts() == [f"@alice reply {i}" for i in range(5)]


def test_like_on_the_home_shown_after_a_compose_error_stays_on_the_home(new_page):
    """The home shown again after a refused post (at /post/, which takes only a
    POST): Like on it returns to the home, liked, not to a 405."""
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.status_create(author=alice, text="alice says hi")
    run_jobs()
    page = new_page()
    log_in(page, "bob")
    navigating(page, page.get_by_role("button", name="Post", exact=True).click)
    assert page.locator("#id_text_error").is_visible()
    with page.expect_navigation() as landed:
        page.locator("li.status button.like").click()
    assert landed.value.status == 200 and path_of(page) == "/"
    assert page.locator("li.status button.like").get_attribute("aria-pressed") == "true"


def test_wrong_password_shows_one_clear_message(new_page):
    make_user("alice")
    page = new_page()
    log_in(page, "alice", "not-the-password")
    assert page.get_by_role("alert").inner_text() == "Wrong username or password."
    assert page.get_by_role("button", name="Log out").count() == 0


def test_compose_counter_counts_characters_live(new_page):
    make_user("alice")
    page = new_page()
    log_in(page, "alice")
    page.get_by_label("What's happening?").fill("😀" * 10)
    assert page.locator("#compose-counter").inner_text() == "270 characters left"
    page.get_by_label("What's happening?").fill("x" * 279)
    assert page.locator("#compose-counter").inner_text() == "1 character left"
    page.get_by_label("What's happening?").fill("x" * 281)
    assert page.locator("#compose-counter").inner_text() == "1 character too many"
    page.get_by_label("What's happening?").fill("x" * 290)
    assert page.locator("#compose-counter").inner_text() == "10 characters too many"


def tab_to(page, selector: str, limit: int = 40) -> None:
    """Press Tab until the element matching `selector` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(
            "s => document.activeElement && document.activeElement.matches(s)", selector
        ):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_whole_journey_with_the_keyboard_only(new_page):
    page = new_page()
    page.goto("/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    tab_to(page, 'a[href="/signup/"]')
    navigating(page, lambda: page.keyboard.press("Enter"))
    assert path_of(page) == "/signup/"
    # The username field has the focus on arrival.
    page.keyboard.type("keyboarder")
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    tab_to(page, "#id_password2")
    page.keyboard.type(PASSWORD)
    navigating(page, lambda: page.keyboard.press("Enter"))
    assert path_of(page) == "/"
    tab_to(page, "#id_text")
    page.keyboard.type("typed without a mouse")
    tab_to(page, 'form[action="/post/"] button[type=submit]')
    navigating(page, lambda: page.keyboard.press("Enter"))
    assert statuses(page) == ["typed without a mouse"]
    tab_to(page, 'form[action="/logout/"] button')
    navigating(page, lambda: page.keyboard.press("Enter"))
    assert (
        page.get_by_role("navigation").get_by_role("link", name="Log in").is_visible()
    )


def test_phone_viewport_single_column_without_sideways_scroll(new_page):
    make_user("alice")
    alice = user_get_by_username(username="alice")
    services.status_create(author=alice, text="a" * 280)
    page = new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    log_in(page, "alice")
    for url in ("/", "/u/alice/", "/timeline/", "/login/"):
        page.goto(url)
        assert page.evaluate(
            "document.documentElement.scrollWidth <= window.innerWidth"
        ), url
    page.goto("/")
    box = page.locator("li.status").first.bounding_box()
    assert box["width"] > PHONE["width"] * 0.85  # one full-width column
    assert page.get_by_role("button", name="Post", exact=True).is_visible()
    # The Unlisted choice on a line of its own, its hint on one or two lines: beside
    # the counter and the button it was squeezed into four (exploratory testing).
    row = page.locator("form .compose-row").first.bounding_box()
    choice = page.locator("form .compose-row .check").first.bounding_box()
    button = page.get_by_role("button", name="Post", exact=True).bounding_box()
    assert choice["width"] > row["width"] * 0.9
    assert button["y"] >= choice["y"] + choice["height"]
    line = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('.compose-row .check'))"
        ".lineHeight) || 20"
    )
    assert choice["height"] <= 2.5 * line


def test_long_names_fit_a_phone(new_page):
    """The longest username (30 characters) and a one-word display name wrap on a
    profile and a people list: the page never scrolls sideways."""
    longest = make_user("christopher_alexander_williams")
    services.follow_create(follower=make_user("bob"), followee_id=longest.id)
    chris = make_user("chris")
    account_services.profile_update(user=chris, name="ChristopherAlexanderson", bio="")
    page = new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    wide = []
    for url in (
        f"/u/{longest.username}/",
        f"/u/{longest.username}/followers/",
        "/u/chris/",
    ):
        page.goto(url)
        # The layout's width, not `innerWidth`: a phone zooms out to what overflows.
        if page.evaluate(
            "document.documentElement.scrollWidth"
            " > document.documentElement.clientWidth"
        ):
            wide.append(url)
    assert wide == []


def padding_left(page, selector: str) -> float:
    return page.eval_on_selector(
        selector, "e => parseFloat(getComputedStyle(e).paddingLeft)"
    )


def test_people_lists_are_padded_like_every_card_on_desktop(new_page):
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    make_user("carol")  # an empty home, with alice suggested
    page = new_page()
    page.goto("/u/alice/")
    card = padding_left(page, "section.card")
    assert card > 0
    for url in ("/u/alice/followers/", "/u/bob/following/"):
        page.goto(url)
        assert padding_left(page, "ul.people.card") >= card, url
        name = page.locator("ul.people.card li a").first.bounding_box()
        box = page.locator("ul.people.card").bounding_box()
        assert name["x"] - box["x"] >= card, url  # the names sit inside the card
    # The suggestions on an empty home are a list inside a card: no second inset.
    log_in(page, "carol")
    suggestions = page.locator(".empty-home ul.people")
    assert suggestions.get_by_role("link", name="@alice").is_visible()
    assert padding_left(page, ".empty-home ul.people") == 0
    heading = page.locator(".empty-home h3").bounding_box()
    assert suggestions.bounding_box()["x"] == heading["x"]


def test_a_newcomer_dismisses_a_suggestion_for_good(new_page):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=bob.id)
    make_user("dan")  # an empty home: the most followed suggested
    run_jobs()
    page = new_page(viewport=PHONE)
    log_in(page, "dan")
    home = page.locator(".empty-home ul.people")
    assert home.get_by_role("link", name="@alice").is_visible()
    navigating(page, page.get_by_role("link", name="More people to follow").click)
    assert path_of(page) == "/people/suggested/"
    dismiss = page.get_by_role("button", name="Dismiss @alice")
    follow = page.get_by_role("button", name="Follow @alice")
    assert dismiss.is_visible() and follow.is_visible()
    # Both fit the phone's width: below the name when the row is too narrow for
    # all three, which is not broken (one line beside the 40px avatar).
    box = dismiss.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    assert page.locator("ul.people .person-link").first.bounding_box()["height"] <= 44
    navigating(page, dismiss.click)
    assert path_of(page) == "/people/suggested/"
    assert page.get_by_text("@alice will not be suggested again.").is_visible()
    people = page.locator("ul.people")
    assert people.get_by_role("link", name="@alice").count() == 0
    assert people.get_by_role("link", name="@bob").is_visible()
    page.goto("/")
    assert home.get_by_role("link", name="@bob").is_visible()
    assert home.get_by_role("link", name="@alice").count() == 0


def run_axe(page) -> list[dict]:
    page.add_script_tag(path=str(VENDOR / "axe.min.js"))
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {
                runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']}
            });
            return r.violations.map(v => ({id: v.id, impact: v.impact,
                nodes: v.nodes.map(n => n.target.join(' '))}));
        }"""
    )
    return [v for v in result if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_main_pages_have_no_serious_accessibility_violations(new_page, scheme):
    # axe is injected as an inline script, which the site's policy rightly refuses.
    new_page = functools.partial(new_page, bypass_csp=True)
    alice = make_user("alice")
    bob = make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.status_create(author=alice, text="accessible <em>text</em>")
    # The conversation's pages too: a tag, a link, a mention, a reply, a like, a
    # repost, the notifications they cause (issue #12).
    first = services.status_create(
        author=alice, text="#redis notes at https://example.com/notes for @bob"
    )
    social.status_reply(author=bob, sid=first.id, text="@alice thanks")
    social.status_like(user=bob, sid=first.id)
    social.status_repost(user=bob, sid=first.id)
    run_jobs()
    visitor = new_page(color_scheme=scheme)
    pages = ("/", "/signup/", "/login/", "/timeline/", "/u/alice/", "/tags/redis/")
    for url in (*pages, f"/s/{first.id}/", f"/s/{first.id}/likes/"):
        visitor.goto(url)
        assert run_axe(visitor) == [], url
    visitor.goto("/login/")
    navigating(visitor, visitor.get_by_role("button", name="Log in").click)  # errors
    assert run_axe(visitor) == [], "login errors"
    member = new_page(color_scheme=scheme)
    log_in(member, "bob")
    member_pages = ("/", "/u/alice/", "/u/alice/followers/", "/u/bob/", "/settings/")
    for url in (*member_pages, "/settings/delete/"):
        member.goto(url)
        assert run_axe(member) == [], url
    author = new_page(color_scheme=scheme)
    log_in(author, "alice")
    for url in (
        "/notifications/",
        f"/s/{first.id}/",
        "/search/?q=b",
        "/settings/profile/",
        "/people/suggested/",
    ):
        author.goto(url)
        assert run_axe(author) == [], url


def watch_for_violations(page) -> list[str]:
    """What the browser reports against a page: console errors (a blocked script,
    style or fetch is one) and Content-Security-Policy violations, as they happen."""
    problems: list[str] = []
    page.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if message.type == "error"
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"error: {error}"))
    page.expose_function("reportViolation", lambda text: problems.append(text))
    page.add_init_script(
        """document.addEventListener("securitypolicyviolation", (e) =>
            window.reportViolation(`csp: ${e.violatedDirective} ${e.blockedURI}`));"""
    )
    return problems


def test_pages_work_under_the_content_security_policy(new_page, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    alice = make_user("alice")
    for i in range(5):
        services.status_create(author=alice, text=f"policy {i}")
    page = new_page()
    problems = watch_for_violations(page)
    for url in ("/", "/signup/", "/login/", "/timeline/", "/u/alice/"):
        response = page.goto(url)
        assert "script-src 'self'" in response.headers["content-security-policy"]
    sign_up(page, "bob")
    # The compose counter (script) and its styles work.
    page.get_by_label("What's happening?").fill("x" * 10)
    assert "270" in page.locator("#compose-counter").inner_text()
    post(page, "under a strict policy")
    assert page.locator("li.status time").first.inner_text() == "just now"
    # "Older" loads in place with the script's fetch.
    page.goto("/timeline/")
    page.get_by_role("link", name="Older").click()
    wait_for_statuses(page, 6)
    assert problems == [], problems
    # The notifications page marks itself read, and search suggests as one types,
    # with the site's own scripts under the same policy.
    for url in ("/notifications/", "/settings/profile/", "/search/?q=b"):
        page.goto(url)
    page.get_by_role("searchbox").fill("ali")
    page.locator("ul.people li").first.wait_for()
    assert problems == [], problems
    not_found = page.goto("/no/such/page/")
    assert not_found.status == 404
    assert not_found.headers["permissions-policy"].startswith("accelerometer=()")
    page.get_by_role("link", name="Back home").wait_for()
    # The browser reports the 404 itself, and nothing else.
    assert [p for p in problems if "404" not in p] == [], problems
