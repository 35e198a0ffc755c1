"""The benchmark command itself runs end to end (on a tiny data set)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.real_redis
def test_bench_runs_end_to_end_on_a_tiny_data_set(tmp_path):
    if shutil.which("wrk") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the benchmark test, but wrk is missing")
        pytest.skip("wrk is not installed: `apt-get install wrk` (.ci/run installs it)")
    out = tmp_path / "report.md"
    result = subprocess.run(
        [sys.executable, "bench/run.py", "--tiny", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = out.read_text()
    for section in ("Pages under load", "round trips", "Fan-out", "Memory", "Seeding"):
        assert section in report
    pages = report.split("## Redis round trips")[0]
    rows = re.findall(
        r"^\| (home|profile|global|post|follow)[^|]*\| ([\d,]+) \|", pages, re.M
    )
    assert len(rows) == 5 and all(int(rps.replace(",", "")) > 0 for _, rps in rows)
    # Every request under load succeeded (the last column counts failures).
    assert re.findall(r"\| (\d+) \|$", pages, re.M) == ["0"] * 6
    assert "| home (logged in) | 2 |" in report
    assert re.search(r"per home timeline entry: [\d.]+ bytes", report)
