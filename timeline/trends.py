"""Trending tags: the tags most used in public statuses of the last TRENDS_HOURS
hours, this one included, most used first.

Each hour's counts (`keys.trends(hour)`) are written by a post's fan-out job
(`services.status_publish`), and counted down when a status leaves its tags' pages
(`services.tags_remove_queue`: deleted, or its account deleted or turned private);
a tag counted down to nothing leaves its hour (`services._TREND_COUNT`). Adding
them up is a worker's step: every fan-out worker, about every
TRENDS_REFRESH_SECONDS / 4, reads the hours, adds them up and has a script write
the sum as one short string when the last is TRENDS_REFRESH_SECONDS old
(`keys.trends_top(hour)`; `refresh`: one worker's write lands, the others find it
fresh). A page, or the client API, reads that string: its
cost no longer grows with how many tags the site uses (six hours of a busy site's
counts are 600 entries to read and add up on every global page). What it shows is
up to about 1.25 x TRENDS_REFRESH_SECONDS old (2 x while the workers are stopped or
all busy with long jobs: the sum lives two intervals).

Where no sum of this hour exists (no worker runs, a worker stopped more than two
intervals ago, the first seconds of an hour) the page's script returns the hours'
counts instead and the page adds them up as the worker would (`_top`: the same tags
and counts, at the old cost, in the web process: adding them up in Lua took Redis's
one thread 0.7 ms a page more). `TRENDS_REFRESH_SECONDS=0` leaves it so: workers add
nothing up, every page does.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable

import orjson
from django.conf import settings

from config.pipelines import Deferred, LuaScript, ReadBatch, pipeline_run
from timeline import keys
from timeline.domain import Trend

TRENDS_SHOWN = 10
# Tags read from each hour's counts: the top of the last hours is summed from the
# top of each hour (a tag below this many in every hour is not a trend anyway).
TRENDS_READ = 100

# KEYS[1]: the hour's sum (`keys.trends_top`), KEYS[2..]: the hours' counts. ARGV:
# how many of each hour's tags to read. The worker's sum if there is one (a string),
# else each hour's most used tags with their counts (a list per hour).
_READ = LuaScript(
    """
local summed = redis.call('GET', KEYS[1])
if summed then return summed end
local hours = {}
for i = 2, #KEYS do
  hours[#hours + 1] = redis.call('ZREVRANGE', KEYS[i], 0, ARGV[1] - 1, 'WITHSCORES')
end
return hours
"""
)

# KEYS[1]: the hour's sum. ARGV: the sum, the interval and the lifetime (ms). Writes
# the sum unless one was written less than an interval ago (by another worker; a
# longer life left than this one's is a sum written under a longer interval, made
# again at once when the setting is lowered); 1 if it wrote.
_STORE = LuaScript(
    """
local interval, life = tonumber(ARGV[2]), tonumber(ARGV[3])
local left = redis.call('PTTL', KEYS[1])
if left > life - interval and left <= life then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', life)
return 1
"""
)


def _keys(now: float | None) -> list[str]:
    hour = int((time.time() if now is None else now) // 3600)
    hours = [keys.trends(hour - i) for i in range(settings.TRENDS_HOURS)]
    return [keys.trends_top(hour), *hours]


def _top(hours: Iterable[Iterable[tuple[str, float]]]) -> list[Trend]:
    """The most used tags of the hours' (tag, count) pairs, ties by tag: what the
    worker's sum holds, and what a page shows where there is none."""
    counts: Counter[str] = Counter()
    for hour in hours:
        for tag, count in hour:
            counts[tag] += int(count)
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [Trend(tag=tag, count=n) for tag, n in top[:TRENDS_SHOWN]]


def _parse(reply: str | list[list[str]]) -> list[Trend]:
    if isinstance(reply, list):  # no sum: each hour's tag, count, tag, ... as read
        pairs = [zip(h[::2], map(float, h[1::2]), strict=True) for h in reply]
        return _top(pairs)
    return [Trend(tag=t, count=n) for t, n in orjson.loads(reply)]


def trends_queue(
    reads: ReadBatch, *, now: float | None = None
) -> Deferred[list[Trend]]:
    """Queue the read of the trending tags (at most TRENDS_SHOWN), in the page's
    first round trip: one script call to the trends' node."""
    names = _keys(now)
    return reads.queue(
        lambda pipe: _READ.queue(pipe, keys=names, args=[TRENDS_READ]),
        lambda replies: _parse(replies[0]),
    )


def refresh(*, now: float | None = None) -> bool:
    """Write this hour's sum of the trends unless one was written less than
    TRENDS_REFRESH_SECONDS ago; True if this call wrote it. It lives two intervals,
    so pages add the hours up themselves again soon after the last worker stops."""
    milliseconds = settings.TRENDS_REFRESH_SECONDS * 1000
    if not 0 < milliseconds < math.inf:
        return False
    interval = max(1, round(milliseconds))
    names = _keys(now)

    hours = pipeline_run(
        lambda pipe: [
            pipe.zrevrange(hour, 0, TRENDS_READ - 1, withscores=True)
            for hour in names[1:]
        ],
        confirm=False,
    )
    summed = orjson.dumps([[t.tag, t.count] for t in _top(hours)])
    # Whether the last sum is fresh is `_STORE`'s to say (one rule, checked where
    # the write is). A derived cache: no wait for replicas (REDIS_WAIT_REPLICAS).
    wrote = pipeline_run(
        lambda pipe: _STORE.queue(
            pipe, keys=[names[0]], args=[summed, interval, 2 * interval]
        ),
        confirm=False,
    )
    return bool(wrote[0])
