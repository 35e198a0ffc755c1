"""Trending tags: the tags most used in public statuses of the last TRENDS_HOURS
hours, this one included, most used first.

Each hour's counts (`keys.trends(hour)`) are written by a post's fan-out job
(`services.status_tags_add`). Adding them up is a worker's step: every fan-out
worker, about every TRENDS_REFRESH_SECONDS / 4, asks Redis for a new sum of this
hour's window when the last is TRENDS_REFRESH_SECONDS old (`refresh`; one worker
writes it, the others find it fresh), and the sum is one short string
(`keys.trends_top(hour)`). A page, or the client API, reads that string: its cost no
longer grows with how many tags the site uses (six hours of a busy site's counts are
600 entries to read and add up on every global page). What it shows is up to about
1.25 x TRENDS_REFRESH_SECONDS old (2 x while the workers are stopped or all busy with
long jobs: the sum lives two intervals).

Where no sum of this hour exists (no worker runs, a worker stopped more than two
intervals ago, the first seconds of an hour) the page's own script adds the hours up
as the worker would, without writing: the same tags and counts, at the old cost.
`TRENDS_REFRESH_SECONDS=0` leaves it so: workers add nothing up, every page does.
"""

from __future__ import annotations

import math
import time

import orjson
from django.conf import settings

from config.pipelines import Deferred, LuaScript, ReadBatch, pipeline_run
from timeline import keys
from timeline.domain import Trend

TRENDS_SHOWN = 10
# Tags read from each hour's counts: the top of the last hours is summed from the
# top of each hour (a tag below this many in every hour is not a trend anyway).
TRENDS_READ = 100

# KEYS[1]: the hour's sum (`keys.trends_top`), KEYS[2..]: the hours' counts.
# `top(read, shown)`: each hour's `read` most used tags added up; the `shown` most
# used as one JSON list tag, count, tag, count... (ties in the byte order of the tags,
# as Python orders them: Lua's `<` on strings follows the server's locale).
_TOP_LUA = """
local function before(a, b)
  for k = 1, math.min(#a, #b) do
    local x, y = string.byte(a, k), string.byte(b, k)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local function top(read, shown)
  local counts, tags = {}, {}
  for i = 2, #KEYS do
    local hour = redis.call('ZREVRANGE', KEYS[i], 0, read - 1, 'WITHSCORES')
    for j = 1, #hour, 2 do
      local tag = hour[j]
      if not counts[tag] then
        tags[#tags + 1] = tag
        counts[tag] = 0
      end
      counts[tag] = counts[tag] + tonumber(hour[j + 1])
    end
  end
  table.sort(tags, function(a, b)
    if counts[a] ~= counts[b] then return counts[a] > counts[b] end
    return before(a, b)
  end)
  local out = {}
  for i = 1, math.min(shown, #tags) do
    out[#out + 1] = tags[i]
    out[#out + 1] = counts[tags[i]]
  end
  return cjson.encode(out)
end
"""

# ARGV: read, shown. The worker's sum of this hour if there is one, else the sum.
_READ = LuaScript(
    _TOP_LUA
    + """
return redis.call('GET', KEYS[1]) or top(tonumber(ARGV[1]), tonumber(ARGV[2]))
"""
)

# ARGV: read, shown, interval (ms), lifetime (ms). Writes the sum unless the last one
# was written less than `interval` ago (by this worker or another); 1 if it wrote.
_REFRESH = LuaScript(
    _TOP_LUA
    + """
local interval, life = tonumber(ARGV[3]), tonumber(ARGV[4])
-- Written less than an interval ago (a longer life left than this one's is a sum
-- written under a longer interval: made again at once when the setting is lowered).
local left = redis.call('PTTL', KEYS[1])
if left > life - interval and left <= life then return 0 end
redis.call('SET', KEYS[1], top(tonumber(ARGV[1]), tonumber(ARGV[2])), 'PX', life)
return 1
"""
)


def _keys(now: float | None) -> list[str]:
    hour = int((time.time() if now is None else now) // 3600)
    hours = [keys.trends(hour - i) for i in range(settings.TRENDS_HOURS)]
    return [keys.trends_top(hour), *hours]


def _parse(reply: bytes | str) -> list[Trend]:
    flat = orjson.loads(reply)
    if not isinstance(flat, list):  # cjson writes an empty list as {}
        return []
    return [
        Trend(tag=t, count=int(n)) for t, n in zip(flat[::2], flat[1::2], strict=True)
    ]


def trends_queue(
    reads: ReadBatch, *, now: float | None = None
) -> Deferred[list[Trend]]:
    """Queue the read of the trending tags (at most TRENDS_SHOWN), in the page's
    first round trip: one script call to the trends' node."""
    names = _keys(now)
    return reads.queue(
        lambda pipe: _READ.queue(pipe, keys=names, args=[TRENDS_READ, TRENDS_SHOWN]),
        lambda replies: _parse(replies[0]),
    )


def refresh(*, now: float | None = None) -> bool:
    """Write this hour's sum of the trends unless one was written less than
    TRENDS_REFRESH_SECONDS ago; True if this call wrote it. It lives two intervals,
    so pages add the hours up themselves again soon after the last worker stops."""
    seconds = settings.TRENDS_REFRESH_SECONDS
    if not 0 < seconds < math.inf:
        return False
    interval = max(1, round(seconds * 1000))
    args = [TRENDS_READ, TRENDS_SHOWN, interval, 2 * interval]
    # A derived cache: no wait for replicas (REDIS_WAIT_REPLICAS) to confirm it.
    wrote = pipeline_run(
        lambda pipe: _REFRESH.queue(pipe, keys=_keys(now), args=args), confirm=False
    )
    return bool(wrote[0])
