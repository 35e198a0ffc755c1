"""Pages under load with wrk, read from wrk's own numbers rather than its prose.

Every wrk script ends with a `done()` hook that prints wrk's summary of the run as
one JSON line; `parse_wrk` reads that line and nothing else.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

RESULT_MARK = "BENCH-RESULT "

# wrk's summary as one JSON line: requests done, run time and latencies in µs,
# responses with status >= 400, and socket errors by kind.
DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nBENCH-RESULT {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, '
      .. '"max_us": %d, "non_2xx_3xx": %d, "connect": %d, "read": %d, "write": %d, '
      .. '"timeout": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.status, e.connect, e.read, e.write, e.timeout))
end
"""


@dataclass(frozen=True)
class Page:
    """A request wrk repeats: a path and the Lua that sets cookies, method and body.

    `server` says which server answers it: "site" (the deployed server) or
    "reference" (gunicorn's sync workers, for the trivial view's reference figure).
    """

    name: str
    path: str
    script: str = ""
    server: str = "site"


def parse_wrk(output: str) -> dict:
    """The figures of one wrk run from the JSON line its `done()` hook printed."""
    lines = [x for x in output.splitlines() if x.startswith(RESULT_MARK)]
    if not lines:
        raise RuntimeError(f"wrk printed no result line:\n{output[-2000:]}")
    raw = json.loads(lines[-1][len(RESULT_MARK) :])
    seconds = raw["duration_us"] / 1e6
    return {
        "rps": raw["requests"] / seconds if seconds else 0.0,
        "p50_ms": raw["p50_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "max_ms": raw["max_us"] / 1000,
        "requests": raw["requests"],
        "non_2xx_3xx": raw["non_2xx_3xx"],
        "socket_errors": {k: raw[k] for k in ("connect", "read", "write", "timeout")},
    }


def wrk_run(
    base_url: str,
    page: Page,
    *,
    seconds: int,
    connections: int,
    workdir: Path,
    threads: int = 2,
) -> dict:
    """Drive one page with wrk for `seconds`; return its figures."""
    script = workdir / "wrk.lua"
    script.write_text(page.script + DONE)
    out = subprocess.run(
        ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s",
         "-s", str(script), base_url + page.path],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return parse_wrk(out)


# Each page runs this long before any measured round, as
# ../shared/peers/ours-vs-retwis.sh does: a worker's first requests of a page load
# code, templates and connections, and are not what the page costs.
WARM_UP_SECONDS = 3
WARM_UP_ATTEMPTS = 3


def measure_pages(
    pages: list[Page], run: Callable[[Page, int], dict], *, rounds: int, seconds: int
) -> dict[str, list[dict]]:
    """Warm every page, then run each `rounds` times, interleaved so drift hits all.

    A page whose warm-up gets no answer is tried again; one that still gets none
    stops the run, rather than be measured at nothing.
    """
    warm_up = min(WARM_UP_SECONDS, seconds)
    for page in pages:
        for _ in range(WARM_UP_ATTEMPTS):
            if run(page, warm_up)["requests"]:
                break
        else:
            raise RuntimeError(
                f"{page.name} ({page.path}): no answer in {WARM_UP_ATTEMPTS} "
                f"warm-up runs of {warm_up}s"
            )
    results: dict[str, list[dict]] = {page.name: [] for page in pages}
    for _ in range(rounds):
        for page in pages:
            results[page.name].append(run(page, seconds))
    return results
