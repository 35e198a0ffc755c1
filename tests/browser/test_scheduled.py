"""Scheduling a status in a real browser, in the writer's own time zone: the compose
box's "Schedule for later" takes a time as the writer's clock shows it, the list of
scheduled statuses shows it so, and it is posted at that moment."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from accounts.selectors import user_get_by_username
from tests.browser.test_journeys import log_in, navigating, path_of, statuses
from tests.helpers import make_user
from timeline import fanout, scheduled

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]

INDIA = timedelta(hours=5, minutes=30)  # Asia/Kolkata: no summer time


def test_schedule_in_the_writers_time_zone(new_page):
    make_user("alice")
    page = new_page(timezone_id="Asia/Kolkata")
    log_in(page, "alice")
    target = datetime.fromtimestamp((time.time() // 60 + 180) * 60, tz=UTC)
    local = (target + INDIA).strftime("%Y-%m-%dT%H:%M")
    page.get_by_label("What's happening?").fill("from Kolkata, later")
    page.get_by_label("Schedule for later").check()
    assert page.locator("[data-timezone-label]").inner_text() == "(your time)"
    page.locator("#id_scheduled_at").fill(local)
    navigating(page, page.get_by_role("button", name="Post", exact=True).click)
    assert path_of(page) == "/scheduled/"
    (entry,) = scheduled.scheduled_list(user=user_get_by_username(username="alice"))
    assert entry.at == target.timestamp()
    shown = page.locator(".scheduled-list time").inner_text()
    clock = target + INDIA  # the writer's own clock, in the browser's format
    assert clock.strftime("%H:%M") in shown or clock.strftime("%I:%M %p") in shown
    page.goto("/")
    assert statuses(page) == []
    fanout.run_pending(now=int(entry.at * 1000) + 1, sweep=True)
    page.goto("/")
    assert statuses(page) == ["from Kolkata, later"]
