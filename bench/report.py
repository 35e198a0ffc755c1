"""The Markdown report, made from the plain data a run collected (bench/out/report.json).

Every figure comes from that dict; nothing here measures anything or parses text, so
a saved report.json renders again with `python -m bench.report report.json`.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def render(data: dict) -> str:
    """The whole report: setup, pages, round trips, fan-out, memory, seeding."""
    sections = [
        _setup(data),
        _pages(data),
        _round_trips(data),
        _fanout(data),
        _memory(data),
        _seeding(data),
    ]
    return "\n\n".join(sections) + "\n"


def _seed_summary(seed: dict) -> str:
    return (
        f"{seed['users']:,} users, {seed['follows']:,} follows, "
        f"{seed['statuses']:,} statuses and {seed['home_entries']:,} home timeline "
        f"entries seeded in {seed['seconds']:.1f}s: {seed['commands']:,} Redis "
        f"commands, {seed['commands_per_second']:,.0f} commands/s"
    )


def _setup(data: dict) -> str:
    env = data["environment"]
    return "\n".join(
        [
            "# Benchmark report",
            "",
            f"- Machine: {env['machine']}, {env['cores']} cores, Python {env['python']}",
            f"- Redis: {env['redis_version']} ({data['memory']['allocator']}), "
            "AOF everysec, Unix socket",
            f"- Site: gunicorn {env['workers']} sync workers, DEBUG=false",
            f"- Data: {_seed_summary(data['seed'])}",
            f"- Load: wrk -t2 -c{env['connections']} -d{env['seconds']}s, "
            f"{env['rounds']} round(s) per page, pages interleaved; medians shown",
        ]
    )


def _pages(data: dict) -> str:
    lines = [
        "## Pages under load",
        "",
        "| page | req/s | ratio to trivial | p50 ms | p99 ms | Redis CPU µs/req "
        "| failed requests |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    trivial = data["pages"][data["trivial"]]
    for name, runs in data["pages"].items():
        ratios = [
            run["rps"] / base["rps"] for run, base in zip(runs, trivial, strict=True)
        ]
        failed = sum(
            run["non_2xx_3xx"] + sum(run["socket_errors"].values()) for run in runs
        )
        lines.append(
            f"| {name} | {statistics.median(r['rps'] for r in runs):,.0f} "
            f"| {statistics.median(ratios):.2f}x "
            f"| {statistics.median(r['p50_ms'] for r in runs):.1f} "
            f"| {statistics.median(r['p99_ms'] for r in runs):.1f} "
            f"| {statistics.median(r['redis_cpu_us_per_req'] for r in runs):.0f} "
            f"| {failed} |"
        )
    return "\n".join(lines)


def _round_trips(data: dict) -> str:
    lines = ["## Redis round trips per request", "", "| request | round trips |"]
    lines.append("|---|---:|")
    lines += [f"| {name} | {n} |" for name, n in data["round_trips"].items()]
    return "\n".join(lines)


def _fanout(data: dict) -> str:
    lines = [
        "## Fan-out",
        "",
        "| followers | time for one post (median of 3) | timeline inserts/s |",
        "|---:|---:|---:|",
    ]
    lines += [
        f"| {x['followers']:,} | {x['seconds'] * 1000:.1f} ms "
        f"| {x['inserts_per_s']:,.0f} |"
        for x in data["fanout"]
    ]
    ceiling = data["zadd_ceiling"]
    python_rate = ceiling["python_pipelined_zadd_per_s"]
    benchmark_rate = ceiling.get("redis_benchmark_zadd_p64_per_s")
    lines += [
        "",
        "Ceilings on the same server: redis-py pipelined ZADD (1000 per pipeline) "
        f"{python_rate:,.0f}/s"
        + (
            f"; redis-benchmark ZADD -P 64 {benchmark_rate:,.0f}/s"
            if benchmark_rate
            else ""
        )
        + ".",
    ]
    best = max(x["inserts_per_s"] for x in data["fanout"])
    lines.append(
        f"Largest fan-out rate / redis-py pipelined ZADD: {best / python_rate:.2f}x."
    )
    return "\n".join(lines)


def _memory(data: dict) -> str:
    m = data["memory"]
    return "\n".join(
        [
            "## Memory (MEMORY USAGE on a sample)",
            "",
            f"- used_memory: {m['used_memory'] / 2**20:,.1f} MiB",
            f"- per user (hash + name claim): {m['per_user']:.0f} bytes",
            "- per status (hash + its entry in the author's posts): "
            f"{m['per_status']:.0f} bytes",
            f"- per follow edge (both sides): {m['per_follow_edge']:.1f} bytes",
            f"- per home timeline entry: {m['per_timeline_entry']:.1f} bytes "
            f"({m['home_entries_sampled']:,} entries sampled)",
            f"- home timeline encodings: {m['home_encodings']}",
        ]
    )


def _seeding(data: dict) -> str:
    seed = data["seed"]
    phases = ", ".join(f"{k} {v:.1f}s" for k, v in seed.get("phases", {}).items())
    return "\n".join(
        [
            "## Seeding",
            "",
            f"- {_seed_summary(seed)}",
            *([f"- phases: {phases}"] if phases else []),
        ]
    )


if __name__ == "__main__":
    print(render(json.loads(Path(sys.argv[1]).read_text())), end="")
