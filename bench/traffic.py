"""HTTP traffic timed from an asyncio loop in a process of its own.

wrk times what it sends but paces only by holding a connection open before writing
its request, which holds a gunicorn sync worker idle for the pause. Python threads
time their own waits for the GIL (ten poster threads beside a sampler showed a
post that answers in 4 ms at 38 ms p50). Here one event loop, in a process that
does nothing else, sends each request only when it is due (on an idle keep-alive
connection, or a new one while every one is busy) and times it from that moment:
`posters` (users posting in a loop, each pausing between posts) and `open_loop`
(one page requested at a fixed rate whatever the answers take, so a slow answer
delays none after it and shows whole in the percentiles). Each runs in a spawned
process (`run_in_process`), so the bench's
own threads cannot delay its timing.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
import urllib.parse
from collections.abc import Callable


def _request(method: str, path: str, host: str, cookie: str, body: str = "") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Cookie: {cookie}"]
    if method == "POST":
        lines += [
            "Content-Type: application/x-www-form-urlencoded",
            f"Content-Length: {len(body.encode())}",
        ]
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """Read one answer whole: its status, and whether the server closes the
    connection after it."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
    status, *fields = head.split("\r\n")
    headers = dict(f.partition(":")[::2] for f in fields if f)
    headers = {name.strip(): value.strip() for name, value in headers.items()}
    code = int(status.split()[1])
    close = headers.get("connection") == "close"
    if code in (204, 304) or code < 200:
        pass  # no body
    elif "chunked" in headers.get("transfer-encoding", ""):
        while size := int((await reader.readline()).split(b";")[0], 16):
            await reader.readexactly(size + 2)
        await reader.readline()  # the blank line after the last chunk
    elif "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    else:
        await reader.read()  # the answer ends with the connection
        close = True
    return code, close


class _Connections:
    """Keep-alive connections to one server, as browsers and wrk hold them: a
    request goes on an idle one, or on a new one when none is idle. (A fresh
    connection a request cost this process a quarter of a core at 250 requests/s,
    on the 2 cores the site under test shares, and the server its accept.)"""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def send(self, raw: bytes) -> int:
        """Send one request; its status once the answer is read whole. A kept
        connection that the server closed meanwhile (its keep-alive timeout) before
        any answer came is replaced, and the request sent again on a new one."""
        kept = self.idle.pop() if self.idle else None
        while True:
            reader, writer = kept or await asyncio.open_connection(self.host, self.port)
            try:
                writer.write(raw)
                status, close = await _answer(reader)
                break
            except (ConnectionError, asyncio.IncompleteReadError) as error:
                writer.close()
                if kept is None or getattr(error, "partial", b""):
                    raise
                kept = None  # dropped before answering: again, on a new one
            except BaseException:
                writer.close()
                raise
        if close:
            writer.close()
        else:
            self.idle.append((reader, writer))
        return status

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()
        self.idle.clear()


def pct(values: list[float], q: float) -> float | None:
    """The q-th percentile of the values (the nearest rank), None of none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _summary(latencies: list[float], codes: list[int], seconds: float) -> dict:
    ms = sorted(x * 1000 for x in latencies)
    return {
        "requests": len(ms),
        "rps": len(ms) / seconds if seconds else 0.0,
        "p50_ms": pct(ms, 50),
        "p99_ms": pct(ms, 99),
        "max_ms": ms[-1] if ms else None,
        "codes": {str(c): codes.count(c) for c in sorted(set(codes))},
    }


async def _posters(
    base: str, cookies: list[str], csrf: str, pause: float, seconds: float
) -> dict:
    url = urllib.parse.urlsplit(base)
    latencies: list[float] = []
    codes: list[int] = []
    end = time.perf_counter() + seconds

    async def poster(who: int, cookie: str) -> None:
        connection = _Connections(url.hostname, url.port)
        n = 0
        while time.perf_counter() < end:
            n += 1
            body = f"csrfmiddlewaretoken={csrf}&text=busy+{who}+{n}"
            raw = _request("POST", "/post/", url.netloc, cookie, body)
            started = time.perf_counter()
            codes.append(await connection.send(raw))
            latencies.append(time.perf_counter() - started)
            if pause:
                await asyncio.sleep(pause)
        connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(poster(n, c) for n, c in enumerate(cookies)))
    return _summary(latencies, codes, time.perf_counter() - started)


def posters(
    base: str, cookies: list[str], csrf: str, pause: float, seconds: float
) -> dict:
    """Each cookie's user posts new statuses for `seconds`, pausing `pause` s after
    each answer: how many, POST p50/p99/max (ms) and the answers' status codes."""
    return asyncio.run(_posters(base, cookies, csrf, pause, seconds))


async def _open_loop(base: str, path: str, cookie: str, rate: float, seconds: float):
    url = urllib.parse.urlsplit(base)
    raw = _request("GET", path, url.netloc, cookie)
    connections = _Connections(url.hostname, url.port)
    latencies: list[float] = []
    codes: list[int] = []
    start = time.perf_counter()

    async def one(due: float) -> None:
        codes.append(await connections.send(raw))
        latencies.append(time.perf_counter() - due)

    tasks = []
    for k in range(int(rate * seconds)):
        due = start + k / rate
        wait = due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(one(due)))
    await asyncio.gather(*tasks)
    connections.close()
    return _summary(latencies, codes, seconds)


def open_loop(base: str, path: str, cookie: str, rate: float, seconds: float) -> dict:
    """GET `path` `rate` times a second for `seconds`, each timed from when it was
    due: requests, rps, p50/p99/max (ms), status codes."""
    return asyncio.run(_open_loop(base, path, cookie, rate, seconds))


def _child(conn, target: Callable, args: tuple) -> None:
    conn.send(target(*args))
    conn.close()


def run_in_process(target: Callable[..., dict], *args) -> Callable[[], dict]:
    """Start `target(*args)` in a spawned process; return a function that waits for
    its result."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(child, target, args), daemon=True)
    process.start()
    child.close()

    def result() -> dict:
        try:
            return parent.recv()
        finally:
            process.join(timeout=10)

    return result
