"""The benchmark: end to end on a tiny data set, and its parts on their own."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench import load, report, servers, store

ROOT = Path(__file__).resolve().parent.parent


PAGES = [
    "trivial view (/healthz/, no Redis)",
    "trivial view on the site's server",
    "home (logged in)",
    "profile (most followed user)",
    "status (newest on the viewer's home)",
    "followers (most followed user)",
    "following (the viewer)",
    "global timeline (logged in)",
    "tag page (logged in)",
    "notifications (the viewer)",
    "API home, 30 statuses (JSON)",
    "API public timeline, 30 statuses (JSON)",
    "post a status",
    "follow + unfollow",
]
ROUND_TRIP_REQUESTS = [*PAGES[2:-1], "follow", "unfollow"]


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
    text = out.read_text()
    for heading in ("Pages under load", "Redis round trips", "Fan-out", "Memory"):
        assert f"\n## {heading}" in text
    assert re.search(r"\n## Seeding\n\n- 60 users, [\d,]+ follows, 600 statuses", text)
    pages = section(text, "Pages under load")
    round_trips = section(text, "Redis round trips")
    # The header and one row per page, no other.
    assert len(re.findall(r"^\| .* \|$", pages, re.M)) == 1 + len(PAGES)
    for name in PAGES:
        row = table_row(pages, name)
        assert float(row[1].replace(",", "")) > 0, row
        assert re.fullmatch(r"\d+\.\d\dx", row[2]), row  # a ratio from every round
        assert row[-1] == "0", row  # failed requests: errors and non-2xx/3xx
    for name in ROUND_TRIP_REQUESTS:
        assert int(table_row(round_trips, name)[1]) > 0
    # One server: a home's statuses are read with the session check, and the
    # client API's home with the token's.
    assert table_row(round_trips, "home (logged in)")[1] == "1"
    assert table_row(round_trips, "API home, 30 statuses (JSON)")[1] == "1"
    assert re.search(r"per home timeline entry: [\d.]+ bytes", text)


@pytest.mark.single_server
def test_abuse_bench_shows_the_limits_holding_under_floods(tmp_path):
    """bench/abuse.py end to end, small: the site under granian on its own Redis,
    floods from many simulated addresses with the limits off, then on."""
    result = subprocess.run(
        [sys.executable, "bench/abuse.py", "--tiny", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads((tmp_path / "abuse.json").read_text())
    off, on = figures["off"], figures["on"]
    assert off["posts"]["answers"] == {"302": 60}
    assert on["posts"]["answers"] == {"302": 30, "429": 30}
    assert on["posts"]["global_by_flooder"] == 30
    assert off["follows"]["answers"] == {"302": 80}
    assert 30 <= on["follows"]["answers"]["302"] <= 32  # then one every 2 s
    assert off["signups"]["answers"] == {"302": 12}
    assert on["signups"]["answers"] == {"302": 5, "429": 7}
    assert on["lockout"] == {
        "stranger_answers": {"400": 10, "429": 2},
        "owner_answer": 302,
    }
    assert off["guesses"]["checked"] == 30
    assert on["guesses"]["answers"] == {"400": 10, "429": 20}
    assert "| 60 posts by one user" in result.stdout


# --- the report, from plain data ---------------------------------------------------


def page_run(rps: float, **changes) -> dict:
    run = {
        "rps": rps,
        "p50_ms": 10.0,
        "p99_ms": 30.0,
        "requests": int(rps * 10),
        "non_2xx_3xx": 0,
        "socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
        "redis_cpu_us_per_req": 100.0,
    }
    return {**run, **changes}


def report_data(**pages: list[dict]) -> dict:
    """A run's data as bench/run.py collects it, with the given pages' rounds."""
    return {
        "environment": {
            "machine": "test",
            "cores": 2,
            "python": "3.11",
            "redis_version": "7.0",
            "workers": 5,
            "connections": 100,
            "seconds": 10,
            "rounds": 3,
        },
        "seed": {
            "users": 60,
            "follows": 900,
            "statuses": 600,
            "home_entries": 9000,
            "commands": 1000,
            "seconds": 0.5,
            "commands_per_second": 2000.0,
            "phases": {"users": 0.4},
        },
        "trivial": "trivial",
        "pages": pages or {"trivial": [page_run(1000)], "home": [page_run(400)]},
        "round_trips": {"home": 2},
        "fanout": [
            {
                "followers": 10,
                "post_seconds": 0.001,
                "seconds": 0.002,
                "inserts_per_s": 5500.0,
            }
        ],
        "zadd_ceiling": {"python_pipelined_zadd_per_s": 50000.0},
        "memory": {
            "used_memory": 2**20,
            "allocator": "jemalloc",
            "per_user": 500.0,
            "per_status": 500.0,
            "per_follow_edge": 30.0,
            "per_timeline_entry": 8.0,
            "home_encodings": {"listpack": 60},
            "home_entries_sampled": 9000,
        },
    }


def section(text: str, heading: str) -> str:
    """The report's section whose heading starts with `heading`."""
    return text.split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]


def table_row(text: str, name: str) -> list[str]:
    """The cells of the Markdown table row that starts with `name`."""
    lines = [x for x in text.splitlines() if x.startswith(f"| {name} |")]
    assert len(lines) == 1, f"{len(lines)} rows for {name!r}"
    return [cell.strip() for cell in lines[0].strip("|").split("|")]


def test_report_gives_each_page_its_ratio_to_the_trivial_view():
    text = report.render(report_data())
    for heading in ("Pages under load", "Redis round trips", "Fan-out", "Memory"):
        assert f"\n## {heading}" in text
    assert "\n## Seeding\n\n- 60 users, 900 follows, 600 statuses" in text
    pages = section(text, "Pages under load")
    assert table_row(pages, "home")[1:3] == ["400", "0.40x"]
    assert table_row(pages, "trivial")[1:3] == ["1,000", "1.00x"]


def test_report_says_so_when_the_trivial_view_measured_zero():
    data = report_data(
        trivial=[page_run(0, requests=0, p50_ms=0, p99_ms=0)], home=[page_run(400)]
    )
    pages = section(report.render(data), "Pages under load")
    assert table_row(pages, "trivial")[1] == "0"
    assert table_row(pages, "home")[2] == "n/a (trivial view: 0 req/s)"
    assert "The trivial view has no figure in round(s) 1;" in pages


def test_report_ratio_leaves_out_rounds_without_a_trivial_figure():
    data = report_data(
        trivial=[page_run(0), page_run(1000), page_run(500)],
        home=[page_run(400), page_run(300), page_run(200)],
    )
    # Round 1 has no trivial figure to compare with; rounds 2 and 3 give 0.3x, 0.4x.
    pages = section(report.render(data), "Pages under load")
    assert table_row(pages, "home")[2] == "0.35x (2 of 3 rounds)"


def test_report_shows_a_missing_figure_as_missing():
    data = report_data(trivial=[page_run(1000)], home=[page_run(400)])
    del data["pages"]["home"][0]["p99_ms"]
    data["zadd_ceiling"]["python_pipelined_zadd_per_s"] = 0.0
    text = report.render(data)
    assert table_row(section(text, "Pages under load"), "home")[4] == "missing"
    assert "pipelined ZADD: n/a" in text


# --- readiness: every worker up, every page warm ------------------------------------

SLOW_APP = """
import os, pathlib, time

time.sleep(1)  # a worker loading a large site: gunicorn's port is open meanwhile
pathlib.Path(os.environ["LOADED_DIR"], str(os.getpid())).touch()


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]
"""


def test_gunicorn_counts_as_started_once_every_worker_has_loaded_the_app(tmp_path):
    (tmp_path / "slow_app.py").write_text(SLOW_APP)
    loaded = tmp_path / "loaded"
    loaded.mkdir()
    proc, base_url = servers.start_gunicorn(
        app="slow_app:app",
        workers=2,
        env={**os.environ, "LOADED_DIR": str(loaded)},
        cwd=tmp_path,
        run_dir=tmp_path / "run",
    )
    try:
        assert len(list(loaded.iterdir())) == 2
        with urllib.request.urlopen(base_url + "/", timeout=5) as response:
            assert response.read() == b"ok"
    finally:
        servers.stop(proc)


def test_no_page_is_measured_cold():
    pages = [load.Page("trivial", "/healthz/"), load.Page("home", "/")]
    calls: dict[str, int] = {}

    def run(page: load.Page, seconds: int) -> dict:
        # A page's first run meets cold workers: here it gets no answer at all.
        calls[page.name] = calls.get(page.name, 0) + 1
        return page_run(0, requests=0) if calls[page.name] == 1 else page_run(500)

    results = load.measure_pages(pages, run, rounds=2, seconds=10)
    assert {name: [r["rps"] for r in runs] for name, runs in results.items()} == {
        "trivial": [500, 500],
        "home": [500, 500],
    }


def test_a_page_that_answers_nothing_after_warm_up_stops_the_run():
    pages = [load.Page("trivial", "/healthz/"), load.Page("home", "/")]

    def run(page: load.Page, seconds: int) -> dict:
        return page_run(0, requests=0) if page.name == "home" else page_run(500)

    with pytest.raises(RuntimeError, match="home"):
        load.measure_pages(pages, run, rounds=1, seconds=10)


@pytest.mark.single_server  # it starts a Redis of its own: once is enough
def test_served_cpu_compares_two_checkouts_page_by_page():
    if shutil.which("wrk") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the benchmark test, but wrk is missing")
        pytest.skip("wrk is not installed: `apt-get install wrk` (.ci/run installs it)")
    # This checkout against itself: the two sides serve the same code.
    result = subprocess.run(
        [sys.executable, "bench/served_cpu.py", "--base", str(ROOT), "--rounds",
         "2", "--seconds", "1", "--users", "200", "--pages", "trivial,home"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rows = re.findall(
        r"^(\w+) +base +(\d+) us, change +(\d+) us, change/base (\d+\.\d+) .*"
        r"change lower in (\d) of 2\)$",
        result.stdout,
        re.M,
    )
    assert [row[0] for row in rows] == ["trivial", "home"], result.stdout
    for _, base, change, ratio, _ in rows:
        assert int(base) > 0 and int(change) > 0
        assert float(ratio) > 0
    # A page that reads Redis and renders statuses costs more than the trivial view.
    assert int(rows[1][1]) > int(rows[0][1])


@pytest.mark.single_server
def test_the_fanout_benchmark_counts_the_servers_forks(r):
    # bench/fanout.py reports the forks (snapshots, AOF rewrites) in each window
    # it measures: their child takes a core on this 2-core machine.
    before = store.redis_forks()
    r.bgsave()
    for _ in range(500):
        if not int(r.info("persistence")["rdb_bgsave_in_progress"]):
            break
        time.sleep(0.01)
    assert store.redis_forks() == before + 1


@pytest.mark.single_server
def test_the_fanout_benchmark_waits_for_a_rewrite_the_server_began_itself(r):
    # Turning the AOF on starts a rewrite: settling asks for one more while it
    # runs (Redis refuses that) and still returns only once none runs.
    r.config_set("appendonly", "yes")
    try:
        store.persistence_settled(timeout=60)
        info = r.info("persistence")
        assert int(info["aof_enabled"]) == 1
        assert int(info["aof_rewrite_in_progress"]) == 0
        assert int(info["aof_rewrite_scheduled"]) == 0
    finally:
        r.config_set("appendonly", "no")


def test_the_half_load_offers_half_of_the_median_saturated_home():
    # The fan-out benchmark's half-load case offers the home a share of what it
    # served saturated. One saturated reading moves by a third on this machine;
    # the offered rate comes from the median of the run's saturated idle readings,
    # so one high reading does not offer more than the cores have left.
    from bench.fanout import offered_rate

    saturated = [
        {"home_idle": {"rps": 426.0}, "home_idle_after": {"rps": 575.0}},
        {"home_idle": {"rps": 440.0}, "home_idle_after": {"rps": 430.0}},
    ]
    assert offered_rate(saturated, 0.5) == {
        "rate": 217.5,
        "readings": [426.0, 430.0, 440.0, 575.0],
    }
    # A window that served nothing (a failed run) is not a reading.
    saturated[1]["home_idle_after"] = {"rps": 0.0}
    assert offered_rate(saturated, 0.5)["rate"] == 220.0


def test_the_paced_traffic_reads_every_answer_and_keeps_connections_alive():
    # bench/traffic.py's open loop and posters read each answer whole, whether its
    # length is given, chunked, or the end of the connection, and send the next
    # request on a connection that is still open, as browsers and wrk do, rather
    # than on a new one each time; one the server dropped is replaced.
    import concurrent.futures
    import http.server
    import socketserver
    import threading

    from bench import traffic

    connections = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            connections.append(self.client_address)
            super().setup()

        def log_message(self, *args):
            pass

        def do_GET(self):
            body = b"x" * 5000
            self.send_response(200)
            if self.path == "/chunked":
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for part in (body[:3000], body[3000:]):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            elif self.path == "/drop":  # then closes without saying so
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True
            elif self.path == "/close":
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(302)
            self.send_header("Location", "/")
            self.send_header("Content-Length", "0")
            self.end_headers()

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    def paced(target, *args) -> dict:
        # In a thread of its own, as the bench runs it in a process of its own: the
        # test process may have an event loop running (the browser tests' driver).
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(target, *args).result()

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        for path in ("/", "/chunked"):
            connections.clear()
            run = paced(traffic.open_loop, base, path, "c=1", 100, 0.5)
            assert run["codes"] == {"200": 50}
            assert 1 <= len(connections) < 10, path
        connections.clear()
        run = paced(traffic.open_loop, base, "/close", "c=1", 100, 0.5)
        assert run["codes"] == {"200": 50}
        assert len(connections) == 50
        # A kept connection the server dropped meanwhile: sent again on a new one.
        connections.clear()
        run = paced(traffic.open_loop, base, "/drop", "c=1", 100, 0.5)
        assert run["codes"] == {"200": 50}
        connections.clear()
        posted = paced(traffic.posters, base, ["c=1", "c=2"], "t", 0.05, 0.5)
        assert set(posted["codes"]) == {"302"} and posted["requests"] >= 4
        assert len(connections) == 2
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.cluster
def test_the_fanout_benchmark_settles_every_masters_aof_on_a_cluster(r):
    # `bench/fanout.py --cluster` rewrites each master's AOF after its setup
    # writes, and waits for them (redis-py sends BGREWRITEAOF to no node of a
    # Cluster by itself): each master forks one rewrite, and none is left running.
    masters = [node.redis_connection for node in r.get_primaries()]
    busy = ("aof_rewrite_in_progress", "aof_rewrite_scheduled")
    for master in masters:
        master.config_set("appendonly", "yes")  # starts a rewrite of its own
    try:
        for _ in range(600):
            if not any(int(m.info("persistence")[f]) for m in masters for f in busy):
                break
            time.sleep(0.05)
        forks = [int(m.info("stats")["total_forks"]) for m in masters]
        store.persistence_settled(timeout=60)
        for master, before in zip(masters, forks, strict=True):
            info = master.info("persistence")
            assert not any(int(info[f]) for f in busy)
            assert int(master.info("stats")["total_forks"]) == before + 1
    finally:
        for master in masters:
            master.config_set("appendonly", "no")
