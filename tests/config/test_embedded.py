"""The embedded Redis: one server per data folder, shared, and keeping its data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from config.embedded import (
    ensure_embedded_redis,
    redis_server_binary,
    start_server,
    stop_embedded_redis,
)

ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.real_redis

START_AND_REPORT = """
import sys, redis
from config.embedded import ensure_embedded_redis
url = ensure_embedded_redis(sys.argv[1])
print(redis.Redis.from_url(url).info("server")["run_id"])
"""


def test_data_survives_a_restart(tmp_path):
    url = ensure_embedded_redis(tmp_path)
    try:
        redis.Redis.from_url(url).set("kept", "yes")
        assert stop_embedded_redis(tmp_path) is True
        assert stop_embedded_redis(tmp_path) is False  # nothing left running
        url = ensure_embedded_redis(tmp_path)
        assert redis.Redis.from_url(url).get("kept") == b"yes"
        assert (tmp_path / "appendonly.aof").exists()
    finally:
        stop_embedded_redis(tmp_path)


def test_processes_starting_at_once_share_one_server(tmp_path):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START_AND_REPORT, str(tmp_path)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        run_ids = {proc.communicate(timeout=30)[0].strip() for proc in procs}
        assert all(proc.returncode == 0 for proc in procs)
        assert len(run_ids) == 1 and "" not in run_ids
    finally:
        stop_embedded_redis(tmp_path)


def test_the_embedded_server_keeps_its_aof_and_a_snapshot_an_hour(tmp_path):
    # An hourly snapshot as a backup, not one a minute under writes: each forks a
    # child that takes a core (config/embedded.py).
    url = ensure_embedded_redis(tmp_path)
    try:
        config = redis.Redis.from_url(url, decode_responses=True).config_get("*")
        assert config["appendonly"] == "yes"
        assert config["appendfsync"] == "everysec"
        assert config["save"] == "3600 1"
    finally:
        stop_embedded_redis(tmp_path)


def test_an_operator_chooses_which_redis_server_runs(tmp_path, monkeypatch):
    # `REDIS_SERVER_BINARY`: a name on the PATH or a path (the benchmarks run the
    # Redis the README deploys this way); a wrong one is said, not ignored.
    bundled = redis_server_binary()
    chosen = tmp_path / "bin" / "my-redis-server"
    chosen.parent.mkdir()
    os.symlink(bundled, chosen)
    monkeypatch.setenv("REDIS_SERVER_BINARY", str(chosen))
    assert redis_server_binary() == str(chosen)
    url, proc = start_server(tmp_path / "data", persist=False, daemonize=False)
    try:
        info = redis.Redis.from_url(url).info("server")
        assert info["executable"] == str(chosen)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    monkeypatch.setenv("PATH", f"{chosen.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("REDIS_SERVER_BINARY", "my-redis-server")
    assert redis_server_binary() == str(chosen)
    monkeypatch.setenv("REDIS_SERVER_BINARY", "no-such-redis-server")
    with pytest.raises(RuntimeError, match="REDIS_SERVER_BINARY=no-such-redis-server"):
        redis_server_binary()
