"""The servers a benchmark run starts: its own redis-server and the site under gunicorn."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def site_env(
    *, redis_url: str, static_root: Path, cluster: bool = False
) -> dict[str, str]:
    """The site's environment under test: production settings on the bench's Redis."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REDIS_URL": redis_url,
        "REDIS_CLUSTER": "true" if cluster else "false",
        "DEBUG": "false",
        "SECRET_KEY": "bench-" + "x" * 50,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "false",
        "AUTH_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "SESSION_COOKIE_SECURE": "false",
        "STATIC_ROOT": str(static_root),
        # One viewer posts and follows at 100 connections: the limits stay on, so
        # their cost is measured, with budgets no load here can spend.
        "RATE_LIMIT_POST": "1000000000/1s",
        "RATE_LIMIT_FOLLOW": "1000000000/1s",
        # The client API's request budget likewise: taken on every API request.
        "RATE_LIMIT_API": "1000000000/1s",
    }


def start_redis(directory: Path) -> tuple[str, subprocess.Popen]:
    """A redis-server on the Unix socket `directory/redis.sock`, AOF as in production."""
    from config.embedded import start_server

    url, proc = start_server(directory, persist=True, daemonize=False)
    assert proc is not None
    return url, proc


def collectstatic(*, env: dict[str, str], cwd: Path) -> None:
    """Gather static files where the production settings serve them from."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=cwd, env=env, check=True,
    )  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


READY_HOOKS = Path(__file__).with_name("gunicorn_ready.py")


def start_gunicorn(
    *,
    app: str,
    workers: int,
    env: dict[str, str],
    cwd: Path,
    run_dir: Path,
    timeout: float = 60,
) -> tuple[subprocess.Popen, str]:
    """Serve `app` with gunicorn sync workers; return once every worker has loaded it.

    Returns the process and the base URL.
    """
    ready_dir = run_dir / "gunicorn-ready"
    ready_dir.mkdir(parents=True)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "--config", str(READY_HOOKS),
         "--workers", str(workers), "--bind", f"127.0.0.1:{port}",
         "--log-level", "warning"],
        cwd=cwd, env={**env, "BENCH_READY_DIR": str(ready_dir)},
    )  # fmt: skip
    try:
        wait_for_workers(ready_dir, workers, proc=proc, timeout=timeout)
    except BaseException:
        stop(proc)
        raise
    return proc, f"http://127.0.0.1:{port}"


def start_granian(
    *, app: str, workers: int, env: dict[str, str], cwd: Path, timeout: float = 60
) -> tuple[subprocess.Popen, str]:
    """Serve `app` with granian as the README deploys it; return once it answers.

    (Every page is then warmed by load.measure_pages before it is measured.)
    """
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "granian", "--interface", "wsgi", "--host",
         "127.0.0.1", "--port", str(port), "--workers", str(workers),
         "--blocking-threads", "1", "--log-level", "warning", app],
        cwd=cwd, env=env,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while not _answers(url + "/healthz/"):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"granian did not answer at {url} in {timeout:.0f}s")
        time.sleep(0.1)
    return proc, url


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def wait_for_workers(
    ready_dir: Path, workers: int, *, proc: subprocess.Popen, timeout: float
) -> None:
    """Wait until `workers` workers have reported ready (bench/gunicorn_ready.py)."""
    deadline = time.monotonic() + timeout
    while (ready := len(list(ready_dir.iterdir()))) < workers:
        if proc.poll() is not None:
            raise RuntimeError(
                f"gunicorn exited (code {proc.returncode}) with {ready} of "
                f"{workers} workers ready"
            )
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{ready} of {workers} gunicorn workers ready after {timeout:.0f}s"
            )
        time.sleep(0.05)


def stop(proc: subprocess.Popen) -> None:
    """Stop a server we started: SIGTERM, then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
