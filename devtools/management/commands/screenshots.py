import shutil
import tempfile
from pathlib import Path

import redis
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import user_get
from accounts.services import profile_update, session_create, user_create
from config.embedded import start_server
from config.redis import get_redis, set_redis
from config.reverse import url_for
from devtools.liveserver import CHROMIUM_ARGS, chromium_path, serve_in_thread
from timeline import edits, filters, lists, services, social
from timeline.fanout import run_pending
from timeline.seeding import seed

DEMO_USER = "ada"
# name, route, its arguments, logged in
PAGES = [
    ("welcome", "timeline:home", (), False),
    ("signup", "accounts:signup", (), False),
    ("home", "timeline:home", (), True),
    ("profile", "timeline:profile", (DEMO_USER,), True),
    ("everyone", "timeline:global_timeline", (), True),
    ("thread", "timeline:status_detail", ("THREAD",), True),
    ("notifications", "timeline:notifications", (), True),
    ("filters", "timeline:filters", (), True),
    ("list", "timeline:list_detail", ("LIST",), True),
]
VIEWPORTS = {
    "desktop": {"width": 1280, "height": 900},
    "phone": {"width": 390, "height": 844},
}


class Command(BaseCommand):
    help = (
        "Save screenshots of the main pages (desktop and phone) of a demo site: its "
        "own temporary Redis, demo data, Debian's Chromium. Touches no real data."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--out", default=str(settings.BASE_DIR / "docs" / "screenshots")
        )

    def handle(self, *args, out: str, **options):
        path = chromium_path()
        if path is None:
            raise CommandError(
                "No Chromium: apt-get install chromium, or set CHROMIUM_PATH"
            )
        from playwright.sync_api import sync_playwright

        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="retwis-shots-"))
        url, proc = start_server(tmp, persist=False, daemonize=False)
        set_redis(redis.Redis.from_url(url, decode_responses=True))
        try:
            cookie = self._demo_data()
            with serve_in_thread() as site, sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=path, headless=True, args=CHROMIUM_ARGS
                )
                for device, viewport in VIEWPORTS.items():
                    context = browser.new_context(base_url=site, viewport=viewport)
                    for name, route, route_args, logged_in in PAGES:
                        if logged_in:
                            context.add_cookies(
                                [{"name": settings.AUTH_COOKIE_NAME, "value": cookie,
                                  "url": site}]
                            )  # fmt: skip
                        page = context.new_page()
                        named = {"THREAD": self.thread, "LIST": self.list}
                        args = [named.get(a, a) for a in route_args]
                        page.goto(url_for(route, *args))
                        target = out_dir / f"{name}-{device}.png"
                        page.screenshot(path=str(target), full_page=False)
                        page.close()
                        self.stdout.write(f"saved {target}")
                    context.close()
                browser.close()
        finally:
            set_redis(None)  # the next use builds the configured client again
            proc.terminate()
            proc.wait(timeout=10)
            shutil.rmtree(tmp, ignore_errors=True)

    def _demo_data(self) -> str:
        """A small seeded world plus 'ada', who follows a few people and posts."""
        seed(
            users=40,
            follows_per_user=6,
            statuses_per_user=4,
            password="demo-pass-1234",
            random_seed=7,
        )
        ada = user_create(username=DEMO_USER, password="demo-pass-1234")
        profile_update(
            user=ada,
            name="Ada Lovelace",
            bio="Notes on engines, analytical and otherwise.",
        )
        for uid in (1, 2, 3, 5, 8):
            services.follow_create(follower=ada, followee_id=uid)
        friends = [user_get(uid=uid) for uid in (1, 2, 3)]
        for friend in friends:
            services.follow_create(follower=friend, followee_id=ada.id)
        first = services.status_create(
            author=ada,
            text="Trying out Retwis: every status, follow and timeline lives in "
            "Redis. #redis https://redis.io/docs/latest/develop/data-types/sorted-sets/",
        )
        lines = services.status_create(author=ada, text="Line breaks work to.")
        edits.status_edit(
            user=ada, sid=lines.id, text="Line breaks work too.\nLike this."
        )
        services.status_create(
            author=ada,
            text="The engine's last table had an error on every other line.",
            spoiler="Chapter 3 spoilers",
        )
        reply = social.status_reply(
            author=friends[0],
            sid=first.id,
            text=f"@{DEMO_USER} sorted sets all the way down? #redis",
        )
        social.status_reply(
            author=ada, sid=reply.id, text=f"@{friends[0].username} exactly that."
        )
        for friend in friends:
            social.status_like(user=friend, sid=first.id)
        social.status_repost(user=friends[1], sid=first.id)
        services.status_create(
            author=friends[2], text=f"Reading @{DEMO_USER}'s notes on #redis tonight."
        )
        # A keyword filter of ada's folds that one on her home.
        filters.filter_create(
            uid=ada.id,
            title="Evening plans",
            context=["home", "public"],
            keywords=[filters.KeywordChange("tonight")],
        )
        # And a list of two of the people she follows.
        self.list = lists.list_create(uid=ada.id, title="Engine room").id
        lists.members_add(
            uid=ada.id, lid=self.list, member_ids=[f.id for f in friends[:2]]
        )
        run_pending()
        self.thread = reply.id
        get_redis().ping()
        return session_create(uid=ada.id).cookie_value()
