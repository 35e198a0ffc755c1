"""Serve the site from a thread of this process, and find a Chromium to look at it.

Used by the browser tests and `manage.py screenshots`: the server sees this process's
settings and Redis client, so a test or a command controls both.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve_in_thread() -> Iterator[str]:
    """Serve the site (static files too) on a free loopback port; yield its URL."""
    server = ThreadedWSGIServer(("127.0.0.1", 0), _QuietHandler)
    server.set_app(StaticFilesHandler(WSGIHandler()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def chromium_path() -> str | None:
    """CHROMIUM_PATH from the environment, else chromium (or a relative) on the PATH."""
    configured = os.environ.get("CHROMIUM_PATH")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None
