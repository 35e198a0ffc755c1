"""The Markdown report, made from the plain data a run collected (bench/out/report.json).

Every figure comes from that dict; nothing here measures anything or parses text, so
a saved report.json renders again with `python -m bench.report report.json`.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

MISSING = "missing"


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


def ratio(part: float | None, whole: float | None) -> float | None:
    """`part / whole`, or None when either is missing or there is no whole (zero)."""
    if part is None or not whole:
        return None
    return part / whole


def _fmt(value: float | None, spec: str) -> str:
    """A figure as `spec` formats it; a figure nobody measured says so."""
    return MISSING if value is None else format(value, spec)


def _median(runs: list[dict], key: str) -> float | None:
    values = [run.get(key) for run in runs]
    if not values or None in values:
        return None
    return statistics.median(values)


def _failed(run: dict) -> int | None:
    """Requests that got no answer or a status >= 400 (wrk's two error counts)."""
    if run.get("non_2xx_3xx") is None or run.get("socket_errors") is None:
        return None
    return run["non_2xx_3xx"] + sum(run["socket_errors"].values())


def _ratio_cell(runs: list[dict], trivial: list[dict]) -> str:
    """Median of the per-round ratios, over the rounds that have both figures."""
    # A round missing from either side has no ratio, like a zero trivial figure.
    ratios = [
        r
        for run, base in zip(runs, trivial, strict=False)
        if (r := ratio(run.get("rps"), base.get("rps"))) is not None
    ]
    if not ratios:
        zero = any(base.get("rps") == 0 for base in trivial)
        return "n/a (trivial view: 0 req/s)" if zero else f"n/a ({MISSING} figure)"
    cell = f"{statistics.median(ratios):.2f}x"
    if len(ratios) < len(runs):
        cell += f" ({len(ratios)} of {len(runs)} rounds)"
    return cell


def _seed_summary(seed: dict) -> str:
    return (
        f"{_fmt(seed.get('users'), ',')} users, {_fmt(seed.get('follows'), ',')} "
        f"follows, {_fmt(seed.get('statuses'), ',')} statuses and "
        f"{_fmt(seed.get('home_entries'), ',')} home timeline entries seeded in "
        f"{_fmt(seed.get('seconds'), '.1f')}s: {_fmt(seed.get('commands'), ',')} "
        f"Redis commands, {_fmt(seed.get('commands_per_second'), ',.0f')} commands/s"
    )


def _setup(data: dict) -> str:
    env = data["environment"]
    allocator = data.get("memory", {}).get("allocator", MISSING)
    return "\n".join(
        [
            "# Benchmark report",
            "",
            f"- Machine: {env['machine']}, {env['cores']} cores, Python {env['python']}",
            f"- Redis: {env['redis_version']} ({allocator}), AOF everysec, "
            + (
                "a 3-master cluster on loopback TCP"
                if env.get("redis", "").endswith("cluster")
                else "one server on a Unix socket"
            ),
            f"- Site: {env.get('server', 'gunicorn')}, {env['workers']} worker "
            "processes, DEBUG=false; the reference trivial view on gunicorn, "
            f"{env['workers']} sync workers",
            f"- Data: {_seed_summary(data.get('seed', {}))}",
            f"- Load: wrk -t2 -c{env['connections']} -d{env['seconds']}s, "
            f"{env['rounds']} round(s) per page, pages interleaved; medians shown"
            + (
                f"; each page warmed for {env['warm_up_seconds']}s first"
                if "warm_up_seconds" in env
                else ""
            ),
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
    trivial = data["pages"].get(data["trivial"], [])
    for name, runs in data["pages"].items():
        failed = [_failed(run) for run in runs]
        lines.append(
            f"| {name} | {_fmt(_median(runs, 'rps'), ',.0f')} "
            f"| {_ratio_cell(runs, trivial)} "
            f"| {_fmt(_median(runs, 'p50_ms'), '.1f')} "
            f"| {_fmt(_median(runs, 'p99_ms'), '.1f')} "
            f"| {_fmt(_median(runs, 'redis_cpu_us_per_req'), '.0f')} "
            f"| {MISSING if None in failed or not runs else sum(failed)} |"
        )
    empty = [str(i) for i, base in enumerate(trivial, 1) if not base.get("rps")]
    if empty or not trivial:
        lines += [
            "",
            f"The trivial view has no figure in round(s) {', '.join(empty) or 'all'}; "
            "ratios leave those rounds out.",
        ]
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
        "| followers | post answered in (median of 3) | every home written in "
        "| timeline inserts/s |",
        "|---:|---:|---:|---:|",
    ]
    for x in data["fanout"]:
        post = x.get("post_seconds")
        ms = x["seconds"] * 1000 if x.get("seconds") is not None else None
        lines.append(
            f"| {x['followers']:,} | {_fmt(post * 1000 if post else None, '.1f')} ms "
            f"| {_fmt(ms, '.1f')} ms | {_fmt(x.get('inserts_per_s'), ',.0f')} |"
        )
    ceiling = data["zadd_ceiling"]
    python_rate = ceiling.get("python_pipelined_zadd_per_s")
    benchmark_rate = ceiling.get("redis_benchmark_zadd_p64_per_s")
    ceilings = (
        "Ceilings on the same server: redis-py pipelined ZADD (1000 per pipeline) "
        f"{_fmt(python_rate, ',.0f')}/s"
    )
    if benchmark_rate:
        ceilings += f"; redis-benchmark ZADD -P 64 {benchmark_rate:,.0f}/s"
    rates = [x["inserts_per_s"] for x in data["fanout"] if x.get("inserts_per_s")]
    best = ratio(max(rates), python_rate) if rates else None
    lines += [
        "",
        ceilings + ".",
        "Largest fan-out rate / redis-py pipelined ZADD: "
        + (f"{best:.2f}x." if best is not None else "n/a (no figure to compare)."),
    ]
    return "\n".join(lines)


def _memory(data: dict) -> str:
    m = data["memory"]
    return "\n".join(
        [
            "## Memory (MEMORY USAGE on a sample)",
            "",
            f"- used_memory: {_fmt(ratio(m.get('used_memory'), 2**20), ',.1f')} MiB",
            f"- per user (hash + name claim): {_fmt(m.get('per_user'), '.0f')} bytes",
            "- per status (hash + its entry in the author's posts): "
            f"{_fmt(m.get('per_status'), '.0f')} bytes",
            "- per follow edge (both sides): "
            f"{_fmt(m.get('per_follow_edge'), '.1f')} bytes",
            "- per home timeline entry: "
            f"{_fmt(m.get('per_timeline_entry'), '.1f')} bytes "
            f"({_fmt(m.get('home_entries_sampled'), ',')} entries sampled)",
            f"- home timeline encodings: {m.get('home_encodings', MISSING)}",
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
