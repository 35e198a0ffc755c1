"""Abuse limits: how often a user or a client may post, follow, sign up or log in.

Each limit is a list of rates such as `30/5m,300/3h` (settings `RATE_LIMIT_*`); a
rate `N/period` lets N actions through at once, then one every period/N (GCRA, the
generic cell rate algorithm: one key per rate holding the "theoretical arrival time",
its TTL the time until the budget is whole again). The check and the count are one
Lua step on the server's clock, so parallel requests cannot slip past a limit (the
old login counter read, then counted: 12 of 30 parallel guesses got through a limit
of 10), and every rate of one subject shares a hash tag, so the step is in one
Cluster slot.

Why not django-ratelimit or a similar library: they count through Django's cache
framework, whose Redis backend knows no Redis Cluster, and they check and count in
two steps. Redis is our only store and must work on a Cluster, so: one script.

A request that several limits govern (a login is counted per name-and-client pair
and per client) takes from each in the same round trip; when one refuses, what the
others took is given back, so a request a limit refuses costs no budget anywhere.
An action refused for another reason after its budget was taken (a follow of
someone who blocked you, a name already taken) has spent it, as an attempt.
"""

from __future__ import annotations

import ipaddress
import re
import time
from dataclasses import dataclass

from django.conf import settings

from accounts import keys
from accounts.domain import TooManyAttempts
from config.pipelines import Deferred, LuaScript, pipeline_run

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")


@dataclass(frozen=True, slots=True)
class Rate:
    """N actions per period (seconds)."""

    count: int
    period: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        """`30/5m` -> Rate(30, 300); units s, m, h, d; the number defaults to 1."""
        match = _RATE_RE.match(text)
        if not match or int(match[1]) < 1 or match[2] == "0":
            raise ValueError(
                f"Bad rate {text!r}: write it as N/period, e.g. 30/5m or 300/3h."
            )
        return cls(int(match[1]), int(match[2] or 1) * _UNITS[match[3]])

    @property
    def label(self) -> str:
        """The rate as it appears in its key: count and period, e.g. `30r300s`."""
        return f"{self.count}r{self.period}s"


def rates(text: str) -> tuple[Rate, ...]:
    """A comma-separated list of rates; empty (or `off`) for no limit."""
    if text.strip().lower() in ("", "off", "none"):
        return ()
    return tuple(Rate.parse(part) for part in text.split(","))


@dataclass(frozen=True, slots=True)
class Limit:
    """One subject's budget for one action: the keys its rates count in."""

    action: str
    subject: str
    rates: tuple[Rate, ...]

    def keys(self) -> list[str]:
        return [keys.rate_limit(self.action, r.label, self.subject) for r in self.rates]

    def args(self) -> list[int]:
        return [v for r in self.rates for v in (r.count, r.period * 1_000_000)]


def _client(ip: str) -> str:
    """The subject a client address counts as: an IPv4 address as it is, an IPv6 one
    as its /64 network, which one subscriber usually holds whole; anything else (never
    a raw string in a key) as "unknown"."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return "unknown"
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def post(uid: int) -> Limit:
    """Statuses a user may post."""
    return Limit("post", keys.user_tag(uid), rates(settings.RATE_LIMIT_POST))


def follow(uid: int) -> Limit:
    """Follows and unfollows a user may make."""
    return Limit("follow", keys.user_tag(uid), rates(settings.RATE_LIMIT_FOLLOW))


def like(uid: int) -> Limit:
    """Likes, reposts and their undoing a user may make."""
    return Limit("like", keys.user_tag(uid), rates(settings.RATE_LIMIT_LIKE))


def report(uid: int) -> Limit:
    """Reports a user may file (`timeline.reports`)."""
    return Limit("report", keys.user_tag(uid), rates(settings.RATE_LIMIT_REPORT))


def api(grant_id: str | None, client: str) -> Limit:
    """API requests: per access token (its hash), else per client address."""
    subject = f"a:{grant_id[:32]}" if grant_id else keys.client_tag(_client(client))
    return Limit("api", subject, rates(settings.RATE_LIMIT_API))


def apps(client: str) -> Limit:
    """API apps one client may register."""
    return Limit(
        "apps", keys.client_tag(_client(client)), rates(settings.RATE_LIMIT_APPS)
    )


def signup(client: str) -> Limit:
    """Accounts one client may create."""
    return Limit(
        "signup", keys.client_tag(_client(client)), rates(settings.RATE_LIMIT_SIGNUP)
    )


def login_pair(username: str, client: str) -> Limit:
    """Failed logins for one name from one client: a stranger elsewhere cannot spend
    the owner's budget."""
    return Limit(
        "login",
        keys.name_client_tag(username, _client(client)),
        rates(settings.RATE_LIMIT_LOGIN_PAIR),
    )


def login_client(client: str) -> Limit:
    """Failed logins from one client, whatever the names tried."""
    return Limit(
        "login",
        keys.client_tag(_client(client)),
        rates(settings.RATE_LIMIT_LOGIN_CLIENT),
    )


# KEYS: one key per rate, all of one subject (one slot). ARGV: the cost (1 to take,
# -1 to give back), then count and period (microseconds) for each rate. GCRA on the
# server's clock: each key holds when its budget is whole again (its TTL runs out
# then). Takes from every rate or from none. Returns {0, 0} when taken (or given
# back), else the microseconds until every rate would let one through and which
# rate (1-based) asks for that wait: what a client is told it ran into.
_TAKE = LuaScript(
    """
local cost = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats, wait, refusing = {}, 0, 0
for i = 1, #KEYS do
  local count, period = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local interval = period / count
  local tat = math.max(tonumber(redis.call('GET', KEYS[i]) or '0'), now)
  local new = tat + cost * interval
  if cost > 0 and new - now - period > wait then
    wait, refusing = new - now - period, i
  end
  tats[i] = new
end
if wait > 0 then return {math.ceil(wait), refusing} end
for i = 1, #KEYS do
  local left = math.floor(tats[i] - now)
  if left > 0 then
    redis.call('SET', KEYS[i], string.format('%d', math.floor(tats[i])), 'PX',
      math.ceil(left / 1000))
  else
    redis.call('DEL', KEYS[i])
  end
end
return {0, 0}
"""
)


def _queue(pipe, limit: Limit, cost: int) -> None:
    _TAKE.queue(pipe, keys=limit.keys(), args=[cost, *limit.args()])


def take_queue(pipe, *limits: Limit) -> None:
    """Queue the taking of one action from each limit (a pipeline of the caller's);
    `check(replies)` then reads the replies those commands answered."""
    for limit in limits:
        if limit.rates:
            _queue(pipe, limit, 1)


def check(replies: list, *limits: Limit) -> None:
    """Raise TooManyAttempts when a limit queued by `take_queue` refused; what the
    other limits took is given back first (one more round trip, only then)."""
    active = [limit for limit in limits if limit.rates]
    answers = [(int(w), int(i)) for w, i in replies[: len(active)]]
    waits = [w for w, _ in answers]
    if not any(waits):
        return
    taken = [limit for limit, w in zip(active, waits, strict=True) if not w]
    if taken:
        give_back(*taken)
    refused, (wait, rate) = max(
        zip(active, answers, strict=True), key=lambda pair: pair[1][0]
    )
    raise TooManyAttempts(
        retry_after=-(-wait // 1_000_000),
        action=refused.action,
        limit=refused.rates[rate - 1].count,
    )


def take(*limits: Limit) -> None:
    """Take one action from every limit, or raise TooManyAttempts: one round trip."""
    if not any(limit.rates for limit in limits):
        return
    check(pipeline_run(lambda pipe: take_queue(pipe, *limits)), *limits)


def give_back(*limits: Limit) -> None:
    """Return one action to each limit (a login that succeeded counts for nothing)."""

    def queue(pipe) -> None:
        for limit in limits:
            if limit.rates:
                _queue(pipe, limit, -1)

    pipeline_run(queue)


# KEYS: one key (the first rate of a limit). ARGV: count and period (microseconds).
# GCRA as `_TAKE`, taking one; returns the wait (0 when taken), how many more would
# be let through now, and the microseconds until the budget is whole again: what a
# client is told in X-RateLimit-* headers.
_TAKE_COUNTED = LuaScript(
    """
local count, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local interval = period / count
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local new = tat + interval
if new - now > period then
  return {math.ceil(new - now - period), 0, math.ceil(tat - now)}
end
-- At least a millisecond: a rate finer than the clock's precision adds nothing.
redis.call('SET', KEYS[1], string.format('%d', math.floor(new)), 'PX',
  math.max(1, math.ceil((new - now) / 1000)))
return {0, math.floor((period - (new - now)) / interval), math.ceil(new - now)}
"""
)


@dataclass(frozen=True, slots=True)
class Budget:
    """What one take from a limit left: refused (`wait` > 0, seconds) or not, how
    many more now, and when (unix seconds) the budget is whole again."""

    limit: int
    remaining: int
    reset_at: float
    wait: int


def take_counted_queue(reads, limit: Limit) -> Deferred[Budget | None]:
    """Queue, in a request's batch, one take from the first rate of `limit`; the
    value says what is left (None when the limit is off)."""
    if not limit.rates:
        return reads.queue(lambda pipe: None, lambda replies: None)
    rate = limit.rates[0]
    key = limit.keys()[0]

    def build(pipe) -> None:
        _TAKE_COUNTED.queue(
            pipe, keys=[key], args=[rate.count, rate.period * 1_000_000]
        )

    def parse(replies) -> Budget:
        wait, remaining, reset = (int(v) for v in replies[0])
        return Budget(
            limit=rate.count,
            remaining=remaining,
            reset_at=time.time() + reset / 1_000_000,
            wait=-(-wait // 1_000_000),
        )

    return reads.queue(build, parse)
