"""Follow suggestions (Mastodon's `/api/v2/suggestions` and its v1 form): the
site's "who to follow" (`timeline.suggestions`), and dismissing one for good.

Each Suggestion says why (`sources`, from the values Mastodon documents): the
people the viewer's followees follow are `friends_of_friends`, the site's most
followed accounts `most_followed`; someone in both has both. `source`, the
deprecated single reason, is Mastodon's own mapping of the first of them
(`past_interactions`, `global`). Mastodon's `offset` is honoured too; there is no
`Link` header, as Mastodon sends none.
"""

from __future__ import annotations

from api import entities
from api.http import ApiError, Op, endpoint
from api.pagination import Window
from api.views.accounts import ACCOUNTS_LIMIT, ACCOUNTS_MAX
from timeline import selectors, suggestions
from timeline.domain import Suggested

# What a dismissal of someone the site does not know answers: Mastodon's
# `render_empty` (its dismissal of nobody stores nothing and reports nothing).
_EMPTY: dict = {}
_LEGACY_SOURCE = {"friends_of_friends": "past_interactions", "most_followed": "global"}


def _offset(request) -> int:
    """Mastodon's `params[:offset].to_i`: anything not a count is 0."""
    raw = request.GET.get("offset", "")
    return min(int(raw), 10_000) if raw.isascii() and raw.isdecimal() else 0


def _suggested(request) -> list[Suggested]:
    window = Window.of(request, default=ACCOUNTS_LIMIT, maximum=ACCOUNTS_MAX)
    found = selectors.suggested_accounts_get(
        reads=request.reads, limit=window.limit, offset=_offset(request)
    )
    if found is None:
        raise ApiError(401, "The access token is invalid")
    return found


def _sources(found: Suggested) -> list[str]:
    return [
        source
        for source, why in (
            ("friends_of_friends", found.friends),
            ("most_followed", found.popular),
        )
        if why
    ]


def suggestions_v2(request) -> list[dict]:
    """Suggestions, best first: the friends of friends, then the most followed."""
    urls = entities.Urls.of(request)
    body = []
    for found in _suggested(request):
        sources = _sources(found)
        body.append(
            {
                "source": _LEGACY_SOURCE[sources[0]] if sources else "global",
                "sources": sources,
                "account": entities.account(found.account, urls),
            }
        )
    return body


def suggestions_v1(request) -> list[dict]:
    """The same people as plain Accounts (Mastodon's v1)."""
    urls = entities.Urls.of(request)
    return [entities.account(found.account, urls) for found in _suggested(request)]


def suggestion_delete(request, id: str) -> dict:
    """Never suggest this account again (on the site too); `{}`, as Mastodon's,
    also for an account that does not exist (nothing is stored then)."""
    suggestions.suggestion_dismiss(user=request.user, dismissed_id=int(id))
    return _EMPTY


v2 = endpoint(GET=Op(suggestions_v2, scope="read:accounts"))
v1 = endpoint(GET=Op(suggestions_v1, scope="read:accounts"))
dismiss = endpoint(DELETE=Op(suggestion_delete, scope="write:accounts"))
