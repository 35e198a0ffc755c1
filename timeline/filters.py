"""Keyword filters (Mastodon's v2 filters): words, phrases or statuses a reader does
not want to see, each filter with a title, where it applies (its contexts), what it
does (fold the status behind a warning, or hide it) and when it ends.

**Stored in the reader's slot, changed in one step.** A reader's filters are one hash,
`filters:{<uid>}`: `f:<fid>` -> a filter's own fields (JSON: title, contexts,
action, expiry), `k:<fid>:<kid>` -> one of its keywords (JSON: the words, whole
word or not), `s:<fid>:<n>` -> one of its statuses (the status's id), `next` -> the
last id given (filters, keywords and statuses share the count, so an id names one
thing of the reader's). Every change, a filter with its keywords included, is one
script (`_WRITE`): it checks that what it changes still exists and the caps, then
writes; it never leaves half a change. Caps: FILTERS_MAX filters and RULES_MAX
keywords and statuses in all, per reader (the page reads the hash whole).

**Applied at read, for the reader only.** The hash rides in the first round trip of
every signed-in request (`timeline.middleware.FiltersMiddleware`), so applying
filters costs no round trip. The site applies a filter where its contexts say:
the home (`home`), everyone's statuses and tag pages (`public`), a profile
(`account`), a thread's other statuses (`thread`; the status one opened is shown),
and the statuses notifications quote (`notifications`). A `warn` filter folds the
status behind "Filtered: <title>" (one click shows it, no script needed); a `hide`
filter leaves it out. The client API marks each Status with every filter it
matches (`filtered`, Mastodon's FilterResult) and leaves the rest to the app, as
Mastodon does. The reader's own statuses are never filtered; an expired filter
matches nothing (it stays listed, to be renewed or deleted).

**Matching, as Mastodon's.** A keyword matches the status's text, its content
warning or its poll's options (of a repost: the original's), and the text and
warning of the status it quotes where its embed shows them (`timeline.quotes`:
the quoting status is folded or hidden whole, where Mastodon's marks the quoted
one alone), case-insensitively; a
whole-word keyword only between word boundaries (on a side where it starts or ends
with a letter or digit). A filter's status matches that status and its reposts.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

try:
    # Compiles without the `re` module's own cache of 512 patterns: a reader's
    # expression is kept by `_kept` alone, so an old version of it goes with its
    # entry (and the site's other patterns keep their places in that cache).
    from re._compiler import compile as _compile
except ImportError:  # another Python's layout: the cache is bounded all the same
    _compile = re.compile

from config.pipelines import Deferred, LuaScript, ReadBatch
from config.redis import get_redis
from timeline import keys
from timeline.domain import QUOTE_SHOWN, NotFound, Refused, Status, normalize_text

# Where a filter may apply, as the site's pages name them.
CONTEXT_LABELS = {
    "home": "Home",
    "notifications": "Notifications",
    "public": "Everyone's posts and tags",
    "thread": "Conversations",
    "account": "Profiles",
}
CONTEXTS = tuple(CONTEXT_LABELS)
ACTIONS = ("warn", "hide")
FILTERS_MAX = 100  # filters per reader
RULES_MAX = 1000  # keywords and statuses per reader, in all
TITLE_MAX = 100  # characters
KEYWORD_MAX = 100  # characters
# The furthest end a filter may have (seconds from now): any date can name it, and
# no reader means a later one rather than "never".
EXPIRES_IN_MAX = 100 * 365 * 86400


class FilterRefused(Refused):
    """A filter, keyword or status is refused (the message says why)."""


@dataclass(frozen=True, slots=True)
class FilterKeyword:
    id: int
    keyword: str
    whole_word: bool = True

    def to_json(self) -> str:
        return json.dumps(
            {"keyword": self.keyword, "whole_word": self.whole_word},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @property
    def pattern(self) -> str:
        """The keyword as a regular expression (Mastodon's rule: a word boundary
        on each side that starts or ends with a word character)."""
        escaped = re.escape(self.keyword)
        if not self.whole_word:
            return escaped
        start = r"\b" if re.match(r"\w", self.keyword) else ""
        end = r"\b" if re.search(r"\w\Z", self.keyword) else ""
        return f"{start}{escaped}{end}"


@dataclass(frozen=True, slots=True)
class FilterStatus:
    id: int
    status_id: int


@dataclass(frozen=True, slots=True)
class Filter:
    id: int
    title: str
    context: tuple[str, ...]
    action: str = "warn"
    expires: float | None = None  # unix seconds; None: never
    keywords: tuple[FilterKeyword, ...] = ()
    statuses: tuple[FilterStatus, ...] = ()

    def active(self, now: float) -> bool:
        return self.expires is None or self.expires > now

    def own_json(self) -> str:
        """What `f:<fid>` holds: the filter without its keywords and statuses."""
        return json.dumps(
            {
                "title": self.title,
                "context": list(self.context),
                "action": self.action,
                "expires": self.expires,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @property
    def ends_label(self) -> str:
        """When it ends, as its page says it: "Never ends", "Expired", "Ends in 3
        days"."""
        if self.expires is None:
            return "Never ends"
        left = self.expires - time.time()
        if left <= 0:
            return "Expired"
        for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
            n = int(left // size)
            if n >= 1:
                return f"Ends in {n} {unit}{'s' if n > 1 else ''}"
        return "Ends in less than a minute"

    @property
    def context_label(self) -> str:
        return ", ".join(CONTEXT_LABELS[c] for c in self.context)

    @property
    def keywords_text(self) -> str:
        return "\n".join(k.keyword for k in self.keywords)


@dataclass(frozen=True, slots=True)
class FilterMatch:
    """A filter a status matched: the text that matched a keyword, the statuses."""

    filter: Filter
    keyword_matches: tuple[str, ...] | None
    status_matches: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class Filters:
    """A reader's filters, newest first, with what matching needs compiled once."""

    filters: tuple[Filter, ...] = ()
    # fid -> the filter's keywords as two expressions (`_compiled`, `_plain`): the
    # exact one, and a plain search of the keywords case folded in the
    # case-folded text, several times faster (no case rules, no boundaries),
    # which only candidates pass. Most statuses match no keyword: one plain
    # search of every filter's keywords (`_any`) and the ids of every filter's
    # statuses (`_sids`) rule them out.
    _patterns: dict[int, tuple[re.Pattern, re.Pattern]] = field(
        default_factory=dict, compare=False
    )
    _any: re.Pattern | None = field(default=None, compare=False)
    _sids: frozenset[int] = field(default=frozenset(), compare=False)

    def get(self, fid: int) -> Filter | None:
        return next((f for f in self.filters if f.id == fid), None)

    def keyword(self, kid: int) -> tuple[Filter, FilterKeyword] | None:
        for found in self.filters:
            for keyword in found.keywords:
                if keyword.id == kid:
                    return found, keyword
        return None

    def status(self, n: int) -> tuple[Filter, FilterStatus] | None:
        for found in self.filters:
            for entry in found.statuses:
                if entry.id == n:
                    return found, entry
        return None

    def matches(
        self,
        status: Status,
        viewer_id: int | None,
        *,
        context: str | None = None,
        now: float | None = None,
    ) -> tuple[FilterMatch, ...]:
        """The active filters (of `context`, or any) that this status matches; none
        for the viewer's own statuses (a repost of theirs included, as Mastodon's)."""
        if not self.filters or status.author_id == viewer_id:
            return ()
        text = folded = None
        if self._any is not None:
            body = (
                f"{status.spoiler}\n\n{status.text}" if status.spoiler else status.text
            )
            if status.poll is not None:
                body = "\n\n".join((body, *status.poll.options))
            quote = status.quote
            if quote is not None and status.quote_state in QUOTE_SHOWN:
                # The embed shows it (folded under "Show anyway" for an author the
                # reader blocked or muted): a word filtered there folds the row too.
                body = "\n\n".join(p for p in (body, quote.spoiler, quote.text) if p)
            folded = body.casefold()
            if self._any.search(folded):
                text = body
        ids = {status.id, status.repost_of}
        if text is None and self._sids.isdisjoint(ids):
            return ()
        now = time.time() if now is None else now
        found = []
        for each in self.filters:
            if (context is not None and context not in each.context) or not each.active(
                now
            ):
                continue
            words = None
            if text is not None and each.id in self._patterns:
                plain, exact = self._patterns[each.id]
                hit = exact.search(text) if plain.search(folded) else None
                words = (hit.group(0),) if hit else None
            sids = tuple(e.status_id for e in each.statuses if e.status_id in ids)
            if words or sids:
                found.append(FilterMatch(each, words, sids or None))
        return tuple(found)

    def fold(
        self, statuses: list[Status], viewer_id: int | None, context: str
    ) -> tuple[list[Status], dict[int, str]]:
        """A page's statuses as the site shows them in `context`: without those a
        `hide` filter matches, and the titles of the `warn` filters that fold each
        of the others (sid -> "title, title")."""
        if not self.filters:
            return statuses, {}
        kept: list[Status] = []
        folded: dict[int, str] = {}
        now = time.time()
        for status in statuses:
            found = self.matches(status, viewer_id, context=context, now=now)
            if any(m.filter.action == "hide" for m in found):
                continue
            if found:
                folded[status.id] = ", ".join(m.filter.title for m in found)
            kept.append(status)
        return kept, folded


EMPTY = Filters()


def _parsed(items: tuple[tuple[str, str], ...]) -> Filters:
    """A hash's fields as Filters: a pure function of them."""
    own: dict[int, dict] = {}
    words: dict[int, list[FilterKeyword]] = {}
    sids: dict[int, list[FilterStatus]] = {}
    for name, value in items:
        kind, _, rest = name.partition(":")
        try:
            if kind == "f":
                own[int(rest)] = json.loads(value)
            elif kind == "k":
                fid, kid = (int(p) for p in rest.split(":"))
                row = json.loads(value)
                words.setdefault(fid, []).append(
                    FilterKeyword(kid, row["keyword"], bool(row.get("whole_word")))
                )
            elif kind == "s":
                fid, n = (int(p) for p in rest.split(":"))
                sids.setdefault(fid, []).append(FilterStatus(n, int(value)))
        except (ValueError, KeyError, TypeError):
            continue  # a field written by hand: left out, never a page's 500
    filters = []
    for fid in sorted(own, reverse=True):
        row = own[fid]
        filters.append(
            Filter(
                id=fid,
                title=str(row.get("title", "")),
                context=tuple(c for c in row.get("context", ()) if c in CONTEXTS),
                action=row.get("action") if row.get("action") in ACTIONS else "warn",
                expires=float(row["expires"]) if row.get("expires") else None,
                keywords=tuple(sorted(words.get(fid, ()), key=lambda k: k.id)),
                statuses=tuple(sorted(sids.get(fid, ()), key=lambda s: s.id)),
            )
        )
    patterns = {
        f.id: (_plain(f.keywords), _compiled(f.keywords)) for f in filters if f.keywords
    }
    if len(patterns) == 1:
        ((any_pattern, _),) = patterns.values()  # the one filter's: no second copy
    else:
        words = [k for f in filters for k in f.keywords]
        any_pattern = _plain(words) if words else None
    sids = frozenset(e.status_id for f in filters for e in f.statuses)
    return Filters(tuple(filters), patterns, any_pattern, sids)


def _plain(keywords) -> re.Pattern:
    """Where any of the keywords might match (`_compiled`), in a case-folded text:
    each keyword case folded, as plain text, their shared beginnings written once.
    Finds every place the exact expression does (the text and the keyword folded
    alike, with no boundary asked for), and a few more, which it then rules out."""
    trie: dict = {}
    for keyword in keywords:
        node = trie
        for char in keyword.keyword.casefold():
            node = node.setdefault(char, {})
        node[""] = ""
    return _compile(_branches(trie), 0)


def _compiled(keywords) -> re.Pattern:
    """Keywords as one expression that matches where one of them would
    (`FilterKeyword.pattern`), their shared beginnings written once (a trie): at
    each character of a text the search follows one branch, rather than trying
    every keyword (a thousand keywords made a page take a second)."""
    tries: dict[bool, dict] = {True: {}, False: {}}  # by: a boundary before it
    for keyword in keywords:
        words = keyword.keyword
        start = keyword.whole_word and re.match(r"\w", words) is not None
        end = keyword.whole_word and re.search(r"\w\Z", words) is not None
        node = tries[start]
        for char in words:
            node = node.setdefault(char, {})
        # "" ends a keyword, its value the boundary after it ("" when none, which
        # makes one that needs it moot).
        node[""] = "" if not end or node.get("") == "" else r"\b"
    parts = [
        rf"\b(?:{_branches(tries[True])})" if tries[True] else "",
        _branches(tries[False]) if tries[False] else "",
    ]
    return _compile("|".join(p for p in parts if p), re.IGNORECASE)


def _branches(node: dict) -> str:
    """A trie's node as an expression: its longer keywords first, then the end of
    one (its boundary), as the keywords' own alternation would match them."""
    out = [
        re.escape(char) + _branches(child) for char, child in node.items() if char != ""
    ]
    if "" in node:
        out.append(node[""])
    if len(out) == 1:
        return out[0]
    return f"(?:{'|'.join(out)})"


# The parsed filters of the readers a process served lately, one version a
# reader: uid -> (the hash's fields, their Filters). Invariant: an entry's Filters
# is `_parsed` of its fields, so a hit is what a fresh parse would give; an entry
# is replaced, never changed, under the lock. Keyed by reader, not by the fields
# alone: a reader changing their filters again and again replaces their entry
# rather than piling up versions (each up to RULES_MAX compiled keywords).
_READERS_KEPT = 512
_kept: OrderedDict[int, tuple[tuple, Filters]] = OrderedDict()
_kept_lock = threading.Lock()


def from_hash(values: dict, *, uid: int) -> Filters:
    """User `uid`'s filters, from their hash's fields."""
    if not values:
        return EMPTY
    items = tuple(sorted(values.items()))
    with _kept_lock:
        entry = _kept.get(uid)
        if entry is not None and entry[0] == items:
            _kept.move_to_end(uid)
            return entry[1]
    found = _parsed(items)  # outside the lock: compiling may take milliseconds
    with _kept_lock:
        _kept[uid] = (items, found)
        _kept.move_to_end(uid)
        while len(_kept) > _READERS_KEPT:
            _kept.popitem(last=False)
    return found


def filters_queue(reads: ReadBatch, uid: int) -> Deferred[Filters]:
    """Queue the read of user `uid`'s filters (trust it once the viewer is proven)."""
    return reads.queue(
        lambda pipe: pipe.hgetall(keys.filters(uid)),
        lambda replies: from_hash(replies[0], uid=uid),
    )


def filters_get(*, uid: int) -> Filters:
    return from_hash(get_redis().hgetall(keys.filters(uid)), uid=uid)


def viewer_filters(reads) -> Filters:
    """The signed-in viewer's filters, read with the request's first round trip
    (`PageReads.filters`, queued by `timeline.middleware.FiltersMiddleware`); none
    for a visitor, or a claim the auth check did not prove."""
    queued = getattr(reads, "filters", None)
    if queued is None or reads.proven_uid() is None:
        return EMPTY
    return queued.value


# KEYS: the reader's filters. ARGV: FILTERS_MAX, RULES_MAX, then changes, five
# values each: what ('new' filter; 'set' a filter's own fields; 'kw' add a keyword,
# 'kwset' change one, 'kwdel' delete one; 'st' add a status, 'stdel' delete one;
# 'del' a filter with its keywords and statuses), the filter's id ('0': the one
# this call makes), the keyword's or status entry's id, the value, and for 'set'
# and 'kwset' the value the change was made from ('': any). Checks every change
# first, then writes them all. Returns {1, ids given...}; {-1}: a filter, keyword
# or status named is gone; {-2}: the status is in the filter already; {-3}: past
# FILTERS_MAX; {-4}: past RULES_MAX; {-5}: a value changed since it was read.
_WRITE = LuaScript(
    """
local h = KEYS[1]
local names = redis.call('HKEYS', h)
local filters, rules = 0, 0
for _, name in ipairs(names) do
  local kind = string.sub(name, 1, 2)
  if kind == 'f:' then filters = filters + 1
  elseif kind == 'k:' or kind == 's:' then rules = rules + 1 end
end
local function owned(fid)
  local out, prefixes = {}, {'k:' .. fid .. ':', 's:' .. fid .. ':'}
  for _, name in ipairs(names) do
    for _, prefix in ipairs(prefixes) do
      if string.sub(name, 1, #prefix) == prefix then out[#out + 1] = name end
    end
  end
  return out
end
for i = 3, #ARGV, 5 do
  local op, fid, sub, value = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local from = ARGV[i + 4]
  if from ~= '' then
    local name = op == 'set' and 'f:' .. fid or 'k:' .. fid .. ':' .. sub
    local now = redis.call('HGET', h, name)
    if now and now ~= from then return {-5} end
  end
  if op == 'new' then
    filters = filters + 1
  else
    if fid ~= '0' and redis.call('HEXISTS', h, 'f:' .. fid) == 0 then return {-1} end
    if op == 'kwset' or op == 'kwdel' then
      if redis.call('HEXISTS', h, 'k:' .. fid .. ':' .. sub) == 0 then return {-1} end
    elseif op == 'stdel' then
      if redis.call('HEXISTS', h, 's:' .. fid .. ':' .. sub) == 0 then return {-1} end
    end
    if op == 'kw' or op == 'st' then rules = rules + 1 end
    if op == 'kwdel' or op == 'stdel' then rules = rules - 1 end
    if op == 'st' and fid ~= '0' then
      for _, name in ipairs(owned(fid)) do
        if string.sub(name, 1, 2) == 's:' and redis.call('HGET', h, name) == value then
          return {-2}
        end
      end
    end
    if op == 'del' then
      filters = filters - 1
      rules = rules - #owned(fid)
    end
  end
end
if filters > tonumber(ARGV[1]) then return {-3} end
if rules > tonumber(ARGV[2]) then return {-4} end
local out, made = {1}, nil
for i = 3, #ARGV, 5 do
  local op, fid, sub, value = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if fid == '0' then fid = made end
  if op == 'new' then
    made = redis.call('HINCRBY', h, 'next', 1)
    redis.call('HSET', h, 'f:' .. made, value)
    out[#out + 1] = made
  elseif op == 'set' then
    redis.call('HSET', h, 'f:' .. fid, value)
  elseif op == 'kw' or op == 'st' then
    local n = redis.call('HINCRBY', h, 'next', 1)
    redis.call('HSET', h, string.sub(op, 1, 1) .. ':' .. fid .. ':' .. n, value)
    out[#out + 1] = n
  elseif op == 'kwset' then
    redis.call('HSET', h, 'k:' .. fid .. ':' .. sub, value)
  elseif op == 'kwdel' then
    redis.call('HDEL', h, 'k:' .. fid .. ':' .. sub)
  elseif op == 'stdel' then
    redis.call('HDEL', h, 's:' .. fid .. ':' .. sub)
  elseif op == 'del' then
    redis.call('HDEL', h, 'f:' .. fid, unpack(owned(fid)))
  end
end
return out
"""
)


def _refusal(code: int) -> str | None:
    """What a refusal of `_WRITE` says (None: what it names is gone)."""
    if code == -2:
        return "That status is in this filter already."
    if code == -3:
        return f"You have {FILTERS_MAX} filters, the most an account may keep."
    if code == -4:
        return (
            f"Your filters hold {RULES_MAX} keywords and statuses, the most an "
            "account may keep."
        )
    return None


class _Raced(Exception):
    """What a change was made from changed before it was written (`_WRITE`'s -5)."""


_RETRIES = 5  # a change made again from a fresh read, when another raced it


def _write(uid: int, changes: list[tuple]) -> list[int]:
    """Run these changes as one step; the ids given to what they made. A change is
    (what, filter id, keyword or entry id, value[, the value it was made from])."""
    args: list = [FILTERS_MAX, RULES_MAX]
    for op, fid, sub, value, *made_from in changes:
        args += [op, fid, sub, value, made_from[0] if made_from else ""]
    out = _WRITE(keys=[keys.filters(uid)], args=args)
    code = int(out[0])
    if code == 1:
        return [int(n) for n in out[1:]]
    if code == -5:
        raise _Raced()
    refusal = _refusal(code)
    if refusal is None:
        raise NotFound("No such filter.")
    raise FilterRefused(refusal)


def _title(title: str) -> str:
    title = normalize_text(title or "").replace("\n", " ").strip()
    if not title:
        raise FilterRefused("Give the filter a title.")
    if len(title) > TITLE_MAX:
        raise FilterRefused(f"A title is at most {TITLE_MAX} characters.")
    return title


def _context(context) -> tuple[str, ...]:
    wanted = tuple(c for c in CONTEXTS if c in set(context or ()))
    unknown = set(context or ()) - set(CONTEXTS)
    if unknown:
        raise FilterRefused(f"Unknown context: {', '.join(sorted(unknown))}.")
    if not wanted:
        raise FilterRefused("Choose where the filter applies.")
    return wanted


def _action(action: str | None) -> str:
    action = action or "warn"
    if action not in ACTIONS:
        raise FilterRefused("The action is warn or hide.")
    return action


def keyword_clean(keyword: str) -> str:
    keyword = normalize_text(keyword or "").replace("\n", " ").strip()
    if not keyword:
        raise FilterRefused("A keyword can't be blank.")
    if len(keyword) > KEYWORD_MAX:
        raise FilterRefused(f"A keyword is at most {KEYWORD_MAX} characters.")
    return keyword


def expiry(seconds: int | None, now: float | None = None) -> float | None:
    """When a filter that ends in `seconds` ends (None, 0: never)."""
    if not seconds:
        return None
    if seconds < 0:
        raise FilterRefused("A filter cannot end in the past.")
    if seconds > EXPIRES_IN_MAX:
        raise FilterRefused("A filter expires in 100 years at the most.")
    return round((time.time() if now is None else now) + seconds, 3)


@dataclass(frozen=True, slots=True)
class KeywordChange:
    """One change of a filter's keywords: add one (`id` None), change one (its
    `keyword` and `whole_word`), or delete one (`delete`)."""

    keyword: str = ""
    whole_word: bool = True
    id: int | None = None
    delete: bool = False


def _keyword_changes(
    fid: int, changes: list[KeywordChange], current: Filter | None
) -> list[tuple[str, int, int, str]]:
    out = []
    seen: set[int] = set()
    for change in changes:
        if change.id is not None:
            if change.id in seen:
                raise FilterRefused("A keyword is named twice.")
            seen.add(change.id)
            if current is None or all(k.id != change.id for k in current.keywords):
                raise NotFound("No such keyword.")
            if change.delete:
                out.append(("kwdel", fid, change.id, ""))
                continue
        elif change.delete:
            continue
        word = FilterKeyword(0, keyword_clean(change.keyword), change.whole_word)
        if change.id is None:
            out.append(("kw", fid, 0, word.to_json()))
        else:
            out.append(("kwset", fid, change.id, word.to_json()))
    return out


def filter_create(
    *,
    uid: int,
    title: str,
    context,
    action: str | None = "warn",
    expires: float | None = None,
    keywords: list[KeywordChange] = (),
) -> Filter:
    """A new filter with its keywords, made in one step."""
    made = Filter(0, _title(title), _context(context), _action(action), expires)
    changes = [("new", 0, 0, made.own_json())]
    changes += _keyword_changes(0, list(keywords), made)
    ids = _write(uid, changes)
    return filters_get(uid=uid).get(ids[0]) or made


_KEEP = object()


def filter_update(
    *,
    uid: int,
    fid: int,
    title: str | None = None,
    context=None,
    action: str | None = None,
    expires=_KEEP,
    keywords: list[KeywordChange] = (),
) -> Filter:
    """Change a filter: what is given (`expires`: a time, None for never), and its
    keywords, in one step (a change of a filter deleted meanwhile: NotFound). The
    step writes only over what the change was made from: two changes at once, one
    of the title and one of the contexts, keep both (the second is made again
    from what the first wrote)."""
    for _ in range(_RETRIES):
        values = get_redis().hgetall(keys.filters(uid))
        current = from_hash(values, uid=uid).get(fid)
        if current is None:
            raise NotFound("No such filter.")
        changed = Filter(
            fid,
            _title(title) if title is not None else current.title,
            _context(context) if context is not None else current.context,
            _action(action) if action is not None else current.action,
            current.expires if expires is _KEEP else expires,
        )
        changes = [("set", fid, 0, changed.own_json(), values[f"f:{fid}"])]
        changes += [
            (*change, values.get(f"k:{fid}:{change[2]}", ""))
            if change[0] == "kwset"
            else change
            for change in _keyword_changes(fid, list(keywords), current)
        ]
        try:
            _write(uid, changes)
            break
        except _Raced:
            continue
    else:
        raise FilterRefused("This filter is being changed elsewhere: try again.")
    found = filters_get(uid=uid).get(fid)
    if found is None:
        raise NotFound("No such filter.")
    return found


def filter_delete(*, uid: int, fid: int) -> None:
    _write(uid, [("del", fid, 0, "")])


def keyword_add(*, uid: int, fid: int, keyword: str, whole_word: bool) -> FilterKeyword:
    word = FilterKeyword(0, keyword_clean(keyword), whole_word)
    (kid,) = _write(uid, [("kw", fid, 0, word.to_json())])
    return FilterKeyword(kid, word.keyword, whole_word)


def keyword_update(
    *, uid: int, kid: int, keyword: str | None, whole_word: bool | None
) -> FilterKeyword:
    for _ in range(_RETRIES):
        values = get_redis().hgetall(keys.filters(uid))
        found = from_hash(values, uid=uid).keyword(kid)
        if found is None:
            raise NotFound("No such keyword.")
        owner, current = found
        word = FilterKeyword(
            kid,
            keyword_clean(keyword) if keyword is not None else current.keyword,
            current.whole_word if whole_word is None else whole_word,
        )
        made_from = values[f"k:{owner.id}:{kid}"]
        try:
            _write(uid, [("kwset", owner.id, kid, word.to_json(), made_from)])
            return word
        except _Raced:
            continue
    raise FilterRefused("This keyword is being changed elsewhere: try again.")


def keyword_delete(*, uid: int, kid: int) -> None:
    found = filters_get(uid=uid).keyword(kid)
    if found is None:
        raise NotFound("No such keyword.")
    _write(uid, [("kwdel", found[0].id, kid, "")])


def status_add(*, uid: int, fid: int, sid: int) -> FilterStatus:
    """Add a status to a filter (the caller checked the reader may see it)."""
    (n,) = _write(uid, [("st", fid, 0, str(sid))])
    return FilterStatus(n, sid)


def status_delete(*, uid: int, n: int) -> None:
    found = filters_get(uid=uid).status(n)
    if found is None:
        raise NotFound("No such filtered status.")
    _write(uid, [("stdel", found[0].id, n, "")])
