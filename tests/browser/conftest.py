"""Browser tests: Playwright for Python driving Debian's Chromium against the site
served in this process, on the real Redis of the test run.

Chromium is found through the CHROMIUM_PATH setting (environment) or the PATH
(`chromium`, `chromium-browser`, `google-chrome`). With none installed the tests are
skipped with a reason that says how to install one, except under CI (CI=true), where
`.ci/run` installs Chromium and a missing or broken browser fails the run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devtools.liveserver import CHROMIUM_ARGS, chromium_path, serve_in_thread

VENDOR = Path(__file__).parent / "vendor"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests, but no Chromium was found")
        pytest.skip(
            "No Chromium found: `apt-get install chromium`, or set CHROMIUM_PATH"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=path,
            headless=True,
            args=CHROMIUM_ARGS,
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def site():
    """The site served from a thread of this process.

    It sees what each test sets up: the Redis client swapped in by the autouse fixture
    and settings changed with pytest-django's `settings`. pytest-django's own
    live_server would flush a database we do not have.
    """
    with serve_in_thread() as url:
        yield url


@pytest.fixture
def new_page(browser, site):
    """Open pages in fresh browser contexts (separate cookie jars): one per person."""
    contexts = []

    def make(viewport=DESKTOP, **kwargs):
        context = browser.new_context(base_url=site, viewport=viewport, **kwargs)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def fanout_worker(redis_client, settings):
    """A fan-out worker thread, as the development server runs one, for one test;
    it adds the trending tags up every half second (a minute by default), set before
    it starts so its first sum is of this interval."""
    from timeline import fanout

    settings.TRENDS_REFRESH_SECONDS = 0.5
    thread, stop = fanout.start_thread()
    yield thread
    stop.set()
    thread.join(timeout=10)
