"""A status's text as HTML (timeline.richtext): for any text, only links and line
breaks come out, every link goes where it may, and the reader sees the text."""

from __future__ import annotations

import sys
import unicodedata
from html.parser import HTMLParser
from urllib.parse import quote, unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import property_test
from timeline.domain import normalize_text
from timeline.richtext import (
    URL_SHOWN,
    filed_tags,
    hashtags,
    is_tag,
    links,
    mentioned_names,
    tag_wanted,
    to_html,
)

pytestmark = pytest.mark.fake_redis

MENTIONS = {"bob": 2, "o_o": 3}
EXTERNAL = {"href", "rel", "title"}
INTERNAL = {"href", "class"}


def scheme_lowered(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return f"{scheme.lower()}{sep}{rest}"


class Parsed(HTMLParser):
    """The elements, attributes and text a browser finds in the HTML; a link's
    shortened text is read as the address its title gives (as the author wrote it,
    less the `https://` added to a `www.` one)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.link: dict[str, str | None] | None = None
        self.link_text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        assert len(attributes) == len(attrs), f"repeated attribute in <{tag}>"
        self.elements.append((tag, attributes))
        if tag == "br":
            self.text.append("\n")
        elif tag == "a":
            assert self.link is None, "a link inside a link"
            self.link, self.link_text = attributes, []

    def handle_startendtag(self, tag, attrs):
        raise AssertionError(f"self-closing <{tag}/>")

    def handle_endtag(self, tag):
        assert tag == "a" and self.link is not None, f"unexpected </{tag}>"
        shown = "".join(self.link_text)
        title = self.link.get("title")
        if title is not None and shown.endswith("…") and len(shown) == URL_SHOWN + 1:
            stem = shown[:-1]
            if stem[:4].lower() == "www.":
                written, stem_in_title = title[len("https://") :], stem
            else:
                written, stem_in_title = title, scheme_lowered(stem)
            assert written.startswith(stem_in_title), (written, stem)
            shown = stem + written[len(stem) :]
        self.text.append(shown)
        self.link = None

    def handle_data(self, data):
        (self.link_text if self.link is not None else self.text).append(data)

    def handle_comment(self, data):
        raise AssertionError("a comment")

    def handle_decl(self, decl):
        raise AssertionError("a declaration")

    def handle_pi(self, data):
        raise AssertionError("a processing instruction")

    def unknown_decl(self, data):
        raise AssertionError("a declaration")


def parsed(html: str) -> Parsed:
    parser = Parsed()
    parser.feed(html)
    parser.close()
    assert parser.link is None, "an unclosed link"
    return parser


# Pieces that make links, mentions and tags, and pieces that try to break out.
pieces = st.sampled_from(
    [
        "https://",
        "http://",
        "HTTPS://",
        "www.",
        "javascript:",
        "data:",
        "//",
        "example.com",
        "/path",
        "?q=1",
        "&",
        "#",
        "@",
        "bob",
        "o_o",
        "BoB",
        "tag",
        "Café",
        "ß",
        "١٢",
        "123",
        "_",
        "(",
        ")",
        "[",
        "]",
        ".",
        ",",
        "!",
        "?",
        ":",
        ";",
        "'",
        '"',
        "<",
        ">",
        "`",
        "=",
        "\n",
        " ",
        "\u00a0",
        "&quot;",
        "&#39;",
        "&amp;",
        "<script>",
        '"><script>alert(1)</script>',
        "onmouseover=",
        "\U0001f600",
        "a" * 30,
        "é\u0301",
        "ß" * 20,
        "İ",
    ]
)
texts = st.one_of(
    st.lists(pieces, max_size=40).map("".join),
    st.text(max_size=300),
).map(normalize_text)


@property_test(max_examples=300)
@given(texts)
def test_only_links_and_line_breaks_come_out(text):
    found = parsed(to_html(text, MENTIONS))
    for tag, attributes in found.elements:
        assert tag in ("a", "br")
        if tag == "br":
            assert attributes == {}
            continue
        href = attributes["href"] or ""
        if "rel" in attributes:
            assert set(attributes) == EXTERNAL
            assert attributes["rel"] == "nofollow noopener ugc"
            assert href.startswith(("http://", "https://"))
            assert attributes["title"] == href
        else:
            assert set(attributes) == INTERNAL
            assert attributes["class"] in ("mention", "hashtag")
            assert href.startswith("/") and not href.startswith("//")
            if attributes["class"] == "hashtag":  # and its page answers
                assert tag_wanted(unquote(href.split("/")[2])) is not None


@property_test(max_examples=300)
@given(texts)
def test_the_reader_sees_the_text_as_written(text):
    assert "".join(parsed(to_html(text, MENTIONS)).text) == text


@property_test(max_examples=100)
@given(texts)
def test_only_resolved_names_are_linked(text):
    found = parsed(to_html(text, {}))
    assert not any(a.get("class") == "mention" for _, a in found.elements)
    assert len(mentioned_names(text)) <= 10


def test_a_url_links_to_itself_without_the_sentences_punctuation():
    html = to_html("Read https://example.com/a_(b)). Or (www.example.org/x)!", {})
    assert (
        '<a href="https://example.com/a_(b)" rel="nofollow noopener ugc" '
        'title="https://example.com/a_(b)">https://example.com/a_(b)</a>). Or ('
    ) in html
    assert 'href="https://www.example.org/x"' in html
    assert ">www.example.org/x</a>)!" in html


def test_a_long_url_is_shortened_on_screen_only():
    url = "https://example.com/" + "a" * 100 + "?x=1&y=2"
    html = to_html(f"{url}.", {})
    escaped = url.replace("&", "&amp;")
    assert f'href="{escaped}"' in html and f'title="{escaped}"' in html
    assert f">{url[:URL_SHOWN]}…</a>." in html


@pytest.mark.parametrize(
    "text",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        '"><script>alert(1)</script>',
        'https://example.com/"onmouseover="alert(1)',
        "https://example.com/'onmouseover='alert(1)",
        "https://example.com/<script>",
        "&quot; &lt;b&gt; &#x6a;avascript:alert(1)",
        'www."><img src=x onerror=alert(1)>',
        '@bob"><script> #tag"onclick=x',
    ],
)
def test_nothing_breaks_out(text):
    html = to_html(text, MENTIONS)
    found = parsed(html)
    assert "".join(found.text) == text
    assert {tag for tag, _ in found.elements} <= {"a"}
    assert "<script" not in html and "<img" not in html
    for _, attributes in found.elements:
        assert not (attributes["href"] or "").lower().startswith(("javascript", "data"))
    assert "&amp;quot;" in to_html("&quot;", {})


def test_names_and_tags_are_found_as_words():
    text = "hi @Bob and @bob, mail a@b.com, @xy too short, #Café #CAFÉ #123 x#no #1a"
    assert mentioned_names(text) == ["bob"]
    assert hashtags(text) == ["café", "1a"]
    assert hashtags("#" + "a" * 50) == ["a" * 50]
    assert hashtags("#" + "a" * 51) == []
    assert hashtags("https://example.com/#frag #Straße") == ["strasse"]
    html = to_html("#Straße @bob @carol", {"bob": 2})
    assert '<a class="hashtag" href="/tags/strasse/">#Straße</a>' in html
    assert '<a class="mention" href="/u/bob/?id=2">@bob</a> @carol' in html


def test_at_most_ten_names_are_resolved():
    names = [f"user{i}" for i in range(12)]
    assert mentioned_names(" ".join(f"@{n}" for n in names)) == names[:10]


def test_a_tag_goes_on_through_combining_marks():
    """`#हिन्दी` is one tag, not `#ह` and the text `िन्दी`: Hindi's vowel signs and
    virama, Tamil's, an accent typed apart are marks, part of their letter."""
    text = "#हिन्दी #தமிழ் #cafe\u0301 #हिन्दी#x"
    assert hashtags(text) == ["हिन्दी", "தமிழ்", "cafe\u0301"]
    html = to_html("#हिन्दी rocks", {})
    assert html == f'<a class="hashtag" href="/tags/{quote("हिन्दी")}/">#हिन्दी</a> rocks'
    assert not is_tag("\u0301a")  # a tag starts with a letter, digit or `_`
    assert hashtags("#" + "क" + "\u093f" * 49) != []  # 50 code points, marks too
    assert hashtags("#" + "क" + "\u093f" * 50) == []


def test_every_combining_mark_continues_a_tag():
    """However the marks are looked up at import, none of Unicode's is missed."""
    marks = [
        chr(o)
        for o in range(sys.maxunicode + 1)
        if unicodedata.category(chr(o))[0] == "M"
    ]
    assert len(marks) > 2000
    assert [
        m for m in marks if not is_tag(f"a{m}") or tag_wanted(f"a{m}") is None
    ] == []


def test_a_status_is_found_under_the_tags_it_was_filed_under_before_marks():
    """A status posted before tags took marks was filed under its cut tags (`ह`,
    `cafe`); taking it out of its tags' timelines must find those too."""
    assert filed_tags("#हिन्दी #x") == ["हिन्दी", "x", "ह"]
    assert filed_tags("#cafe\u0301 #Café") == ["cafe\u0301", "café", "cafe"]
    assert filed_tags("#abc #x") == hashtags("#abc #x")
    assert tag_wanted("ह") == "ह"  # their pages still answer


def test_a_mention_links_to_the_name_as_stored_whatever_its_case():
    """A client finds the Mention of a link by its address: the link goes to the
    lowercase name the status stores, its text stays as written; the site's own
    pages add the id it named (`mention_url`)."""
    html = to_html("hi @ALICE and @Alice", {"alice": 1})
    assert html == (
        'hi <a class="mention" href="/u/alice/?id=1">@ALICE</a> and '
        '<a class="mention" href="/u/alice/?id=1">@Alice</a>'
    )
    api = to_html("hi @ALICE", {"alice": 1}, "https://example.com")
    assert 'href="https://example.com/u/alice/">@ALICE</a>' in api


def test_links_are_the_linked_addresses_as_written():
    text = "see https://example.com/a_(b)). www.x.org, #https://no x@www.no.org"
    assert links(text) == ["https://example.com/a_(b)", "www.x.org", "www.no.org"]
    assert links("https://. www. @https://x.y") == []
