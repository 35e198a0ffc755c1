"""A status's text as HTML: links, mentions and hashtags, and nothing else.

The text is cut into pieces by one pattern on the raw text (before any escaping,
so an entity such as `&#39;` can never be read as a tag), and every piece, as
text or as an attribute, goes through `html.escape` on its way out. Markup comes
only from the literals here: whatever the text holds, the result has `<a>` and
`<br>` elements only, every attribute value is quoted and escaped, and a link's
address begins with `http://`, `https://` or `/` (the site's own pages).

- A URL is `http://` or `https://` and what follows up to a blank, or `www.` and
  the same (linked as `https://`). Punctuation that ends a sentence (`.,!?:;'"`)
  and a closing bracket with no opening one inside it stay out of the link.
- `@name` links to the profile only when the status's own mentions, resolved when
  it was posted (`Status.mentions`), name a user; otherwise it stays text.
- `#tag` links to the tag's page: a letter, digit or underscore, then more of them
  and combining marks (`#हिन्दी`, `#தமிழ்`: a mark is part of its letter), at least
  one of them not a digit, at most TAG_MAX_LENGTH code points (a longer run is no
  tag at all). The text is NFC-normalised before it is stored
  (`timeline.domain.normalize_text`), so `#café` is one tag however it was typed.
- A mention's link goes to the lowercase name (as stored in `Status.mentions`, and
  as the client API's Mention entity names it: clients match the two), its text
  stays as written; the profile route finds a user by any case.
- `links(text)`: the links; `countable(text, placeholder)`: the text as the length
  rule counts it (`timeline.domain.text_length`): each link written as the
  placeholder, and each other server's handle, `@user@domain`, as its `@user`.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator
from html import escape

import regex

from accounts.domain import USERNAME_MAX_LENGTH
from config.http import same_host
from config.reverse import url_for

TAG_MAX_LENGTH = 50
MENTIONS_MAX = 10  # distinct names resolved per status
URL_SHOWN = 40  # characters of a longer URL shown before the ellipsis


def _marks() -> str:
    """Every combining mark (Unicode categories Mn, Mc, Me) as the ranges of a
    regular expression's character class: Python's `\\w` has none of them.

    Marks live in planes 0, 1 and 14 only (2 and 3 hold ideographs, 15 and 16
    private use): scanning those takes under half the time of all of Unicode at
    import (tests/timeline/test_richtext.py checks that no mark is missed)."""
    ranges: list[list[int]] = []
    for o in itertools.chain(range(0x20000), range(0xE0000, 0xF0000)):
        if unicodedata.category(chr(o))[0] != "M":
            continue
        if ranges and ranges[-1][1] == o - 1:
            ranges[-1][1] = o
        else:
            ranges.append([o, o])
    return "".join(f"{chr(a)}-{chr(b)}" if a < b else chr(a) for a, b in ranges)


# The one definition of what a word (a tag) is made of: word characters (letters,
# digits, `_`) and combining marks, without which `\w+` cut `#हिन्दी` at its first
# vowel sign (`#ह`). A tag starts with a word character, never with a mark.
_WORD = rf"\w{_marks()}"  # the inside of a character class
_URL = r"(?P<url>(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\.)[^\s<>\"`]+)"
# A mention or tag starts a word: not after a letter, digit, `_` or the sign itself
# (an e-mail address `a@b.com`, `a#b` or `##b` is plain text), nor a tag after a
# mark, which ends a word in such scripts (`#हिन्दी#x` is one tag, as `#abc#x`).
# (The sign is matched before the look back at what precedes it: a look-behind tried
# at every position made a plain text's scan ten times slower.)
_MENTION = rf"@(?<![\w@#]@)(?P<name>[A-Za-z0-9_]{{3,{USERNAME_MAX_LENGTH}}})(?![\w@])"
_TAG = rf"#(?<![{_WORD}@#&]#)(?P<tag>\w[{_WORD}]*)"
# The look-ahead at the first characters skips most positions at once (twice faster).
# static/js/site.js follows this scan to find the links its compose counter counts.
_TOKENS = re.compile(f"(?=[HhWw@#])(?:{_URL}|{_MENTION}|{_TAG})")
TAG_RE = re.compile(rf"(?=[{_WORD}]*[^\W\d])\w[{_WORD}]{{0,{TAG_MAX_LENGTH - 1}}}")
# A tag as stored (`tag_key`): case folding may add combining marks and lengthen a
# character to three (`ß` to `ss`), never anything else.
_TAG_KEY_RE = re.compile(
    rf"(?=[{_WORD}]*[^\W\d])\w[{_WORD}]{{0,{3 * TAG_MAX_LENGTH - 1}}}"
)
# The scan and tag rule before tags took marks: statuses posted before were filed
# under the tags they found (`#हिन्दी` under `ह`), which `filed_tags` finds again.
_TOKENS_BEFORE_MARKS = re.compile(
    rf"(?=[HhWw@#])(?:{_URL}|{_MENTION}|#(?<![\w@#&]#)(?P<tag>\w+))"
)
_TAG_BEFORE_MARKS_RE = re.compile(rf"(?=\w*[^\W\d])\w{{1,{TAG_MAX_LENGTH}}}")
_TRAILING = ".,!?:;'\"*"
_PAIRS = {")": "(", "]": "[", "}": "{"}


def _url_end(url: str) -> str:
    """The URL without the punctuation after it that belongs to the sentence."""
    while url and (
        url[-1] in _TRAILING
        or (url[-1] in _PAIRS and url.count(_PAIRS[url[-1]]) < url.count(url[-1]))
    ):
        url = url[:-1]
    return url


def _is_url(url: str) -> bool:
    """A link has a host: something other than punctuation after `://` or `www.`."""
    rest = url[4:] if url[:4].lower() == "www." else url.partition("://")[2]
    return bool(rest) and (rest[0].isalnum() or rest[0] == "[")


def tag_key(tag: str) -> str:
    """The tag as stored and compared: case folded (`#Café` and `#CAFÉ` are one)."""
    return tag.casefold()


def is_tag(tag: str) -> bool:
    return TAG_RE.fullmatch(tag) is not None


def tag_wanted(tag: str) -> str | None:
    """The tag a tag page's address asks for (as written or as stored), as stored;
    None when it cannot be one. NFC first, as a status's text is stored: an accent
    written apart in the address (`cafe\u0301`) asks for the same tag."""
    tag = unicodedata.normalize("NFC", tag)
    if is_tag(tag) or _TAG_KEY_RE.fullmatch(tag):
        return tag_key(tag)
    return None


def _pieces(
    text: str, tokens: re.Pattern = _TOKENS, tag_re: re.Pattern = TAG_RE
) -> Iterator[tuple[str, str]]:
    """The text as (kind, raw) pieces: "text", "url", "mention" (raw is the name),
    "tag" (raw is the tag as written); their raws (with `@`/`#`) make the text.
    (`tokens` and `tag_re`: the scan and tag rule, the old ones for `filed_tags`.)"""
    at = 0
    for match in tokens.finditer(text):
        start = match.start()
        kind, raw = "text", match.group()
        if match.group("url") is not None:
            url = _url_end(match.group("url"))
            if not _is_url(url):
                continue
            kind, raw = "url", url
        elif match.group("name") is not None:
            kind, raw = "mention", match.group("name")
        elif tag_re.fullmatch(match.group("tag")):
            kind, raw = "tag", match.group("tag")
        else:
            continue
        if start > at:
            yield "text", text[at:start]
        yield kind, raw
        at = start + len(raw) + (0 if kind == "url" else 1)
    if at < len(text):
        yield "text", text[at:]


# A full handle, `@name@host`: the name as a mention's, then a host (a name, an
# IPv4 or bracketed IPv6 address, a port), which `local_handles` compares.
# The host is taken whole (an atomic group: no backing out of `:80abc`), and
# nothing that makes a longer word may follow it, as after a mention.
_HANDLE = re.compile(
    rf"@(?<![\w@#]@)(?P<name>[A-Za-z0-9_]{{3,{USERNAME_MAX_LENGTH}}})"
    r"@(?P<host>(?>[A-Za-z0-9.\-]+(?::[0-9]+)?|\[[0-9A-Fa-f:.]+\](?::[0-9]+)?))"
    r"(?![\w@])"
)


def local_handles(text: str, host: str) -> str:
    """The text with each full handle of this site (`@alice@host`, the handle
    clients show and people copy; `host` as the request names it, with or without
    its port or the scheme's default one) written as the mention it is, `@alice`.
    Another host's handle stays as written: text, as it always was."""

    def local(match: re.Match) -> str:
        named, trail = match["host"], ""
        while named and named[-1] in ".:-":  # a sentence's punctuation after it
            named, trail = named[:-1], named[-1] + trail
        if same_host(named, host):
            return f"@{match['name']}{trail}"
        return match[0]

    # In text only: a handle inside a link is part of its address (another
    # server's page of a user of ours, `https://elsewhere/@alice@thishost`).
    return "".join(
        _HANDLE.sub(local, raw) if kind == "text" else _raw_of(kind, raw)
        for kind, raw in _pieces(text)
    )


def _raw_of(kind: str, raw: str) -> str:
    """A piece of `_pieces` as it was written: mentions and tags with their sign."""
    return {"mention": "@", "tag": "#"}.get(kind, "") + raw


def mentioned_names(text: str) -> list[str]:
    """The distinct names `@mentioned` in the text, lowercase, first MENTIONS_MAX."""
    names: dict[str, None] = {}
    for kind, raw in _pieces(text):
        if kind == "mention":
            names.setdefault(raw.lower())
            if len(names) == MENTIONS_MAX:
                break
    return list(names)


def hashtags(text: str) -> list[str]:
    """The distinct tags of the text, case folded, in order of appearance."""
    return list(
        dict.fromkeys(tag_key(raw) for kind, raw in _pieces(text) if kind == "tag")
    )


def filed_tags(text: str) -> list[str]:
    """Every tag a status with this text may be filed under: its `hashtags`, and
    those the rule before combining marks found (`#हिन्दी`: `ह`) for a status
    posted before it. For whatever takes a status out of its tags' timelines (a
    delete, an account turned private), so that no old filing stays behind."""
    before = (
        tag_key(raw)
        for kind, raw in _pieces(text, _TOKENS_BEFORE_MARKS, _TAG_BEFORE_MARKS_RE)
        if kind == "tag"
    )
    return list(dict.fromkeys([*hashtags(text), *before]))


def links(text: str) -> list[str]:
    """The links of the text as written (what `to_html` links), in order."""
    return [raw for kind, raw in _pieces(text) if kind == "url"]


# Another server's handle as Mastodon's length rule finds one (its mention pattern:
# a name that may hold `.` or `-` inside, as other servers' may, `@`, a domain
# ending in a word character; not after a word character or `/`). A word character
# is Mastodon's (Ruby's `[[:word:]]`): a letter, a combining mark, a decimal digit
# or a connector. Python's `\w` has no marks, so a domain such as `सरकार.भारत` was
# cut at its first vowel sign and the rest counted, and it has the numbers that are
# no digits (`①`, `²`), after which Mastodon still finds a handle: either way the
# server counted more than Mastodon. Found in the text outside links;
# static/js/site.js's counter follows it.
_HANDLE_WORD = r"\p{L}\p{M}\p{Nd}\p{Pc}"  # the inside of a character class
_COUNTED_HANDLE = regex.compile(
    rf"(?<![{_HANDLE_WORD}/])@(?P<name>[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?)"
    rf"@[{_HANDLE_WORD}.\-]*[{_HANDLE_WORD}]"
)


def countable(text: str, placeholder: str) -> str:
    """The text as the length rule counts it, as Mastodon and its apps count: each of
    its links (`links`) written as `placeholder`, then each handle of another server,
    `@user@domain`, as `@user` (a mention shows no domain)."""
    linked = "".join(
        placeholder if kind == "url" else _raw_of(kind, raw)
        for kind, raw in _pieces(text)
    )
    return _COUNTED_HANDLE.sub(r"@\g<name>", linked) if "@" in linked else linked


def _text(raw: str) -> str:
    return escape(raw).replace("\n", "<br>")


def _link(raw: str) -> str:
    if raw[:4].lower() == "www.":
        href = f"https://{raw}"
    else:
        scheme, _, rest = raw.partition("://")
        href = f"{scheme.lower()}://{rest}"
    shown = raw if len(raw) <= URL_SHOWN else f"{raw[:URL_SHOWN]}…"
    return (
        f'<a href="{escape(href)}" rel="nofollow noopener ugc" '
        f'title="{escape(href)}">{escape(shown)}</a>'
    )


def mention_url(name: str, uid: int) -> str:
    """Where a mention links on the site's pages: the profile of its (lowercase)
    name, with the id of the account it named when posted (`?id=`), so that once
    that account is deleted and the name claimed again, the new owner's profile
    says it is not the one meant (`timeline.views.profile`). The client API links
    the profile alone, as its Mention and Account say it, and links no mention
    of an account gone (`api.entities`)."""
    return f"{url_for('timeline:profile', name)}?id={int(uid):d}"


def to_html(text: str, mentions: dict[str, int], base: str = "") -> str:
    """The status text as HTML; `mentions` maps the names resolved at post time
    (lowercase) to user ids: only those are linked. `base` (the client API's
    `https://host`): absolute links, with the classes Mastodon's clients look for."""
    out = []
    mention_class = "u-url mention" if base else "mention"
    tag_attrs = 'class="mention hashtag" rel="tag"' if base else 'class="hashtag"'
    for kind, raw in _pieces(text):
        if kind == "url":
            out.append(_link(raw))
        elif kind == "mention" and raw.lower() in mentions:
            # The name as stored, whatever its case here: a client finds the
            # Mention entity of a link by its address (`api.entities`).
            name = raw.lower()
            href = escape(
                base + url_for("timeline:profile", name)
                if base
                else mention_url(name, mentions[name])
            )
            out.append(f'<a class="{mention_class}" href="{href}">@{escape(raw)}</a>')
        elif kind == "mention":
            out.append(f"@{escape(raw)}")
        elif kind == "tag":
            href = escape(base + url_for("timeline:tag", tag_key(raw)))
            out.append(f'<a {tag_attrs} href="{href}">#{escape(raw)}</a>')
        else:
            out.append(_text(raw))
    return "".join(out)
