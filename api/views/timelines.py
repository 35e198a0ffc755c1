"""Timelines: home, public (everyone's), a tag's, and an account's statuses.

Each is a window of the same selectors as the site's pages (`timeline.selectors`
`*_window`: every rule of the page, any size, read upwards for `min_id`), whose
statuses come with their authors' accounts and reposts' originals on one server:
one round trip for a window read downwards (its ids and statuses read in one script
with the token's check, as the site's pages), two for one read upwards (`min_id`);
a Cluster reads the statuses in one more, and the accounts and originals in one
more again (`entities.related_get`). Statuses that mention someone the window has
no account of (neither an author nor a reposted one) take one more, for their
usernames (a Mention names the account as its Account does; the window's script
reads authors only); a Cluster reads them with the accounts, but those a repost's
original mentions (known once it is read). A public window whose viewer blocks or
is blocked reads a longer window when the first was full: one more. A home that
merges pulled authors' statuses takes two more: their outboxes, then their checks
(as the site's home), which carry their counts and accounts too (an outbox holds no
counts). A home whose user follows hashtags merges their timelines in the same script
read downwards on one server; upwards, or on a Cluster, the tags' ids take one more
(`timeline.tagfollows`). A public `min_id` window read from below a global
partition's floor that missed ids above it reads its ids again from the floor: one
more (`selectors._global_ids_up`).

The Link headers start past the ids a window considered, shown or not
(`StatusWindow.older`, `.newer`): a window whose read was all hidden or filtered is
empty and still links on, so catching up never stalls.
"""

from __future__ import annotations

from api.http import OPTIONAL, Op, Reply, endpoint, flag, not_found
from api.pagination import Window, link_header
from api.views.statuses import entities_of
from timeline import selectors
from timeline.selectors import StatusWindow


def _answer(request, found: StatusWindow | None) -> Reply:
    """The window's statuses with the Link to the older and the newer windows,
    past what the window considered, shown or not (`StatusWindow`)."""
    if found is None:
        return Reply([])
    body = entities_of(request, found.statuses, found)
    return Reply(
        body,
        headers=link_header(
            request,
            next_max_id=found.older,
            prev_min_id=found.newer,
        ),
    )


def _bounds(window: Window) -> dict:
    return {
        "size": window.limit,
        "max_id": window.max_id,
        "since_id": window.since_id,
        "min_id": window.min_id,
    }


def home(request) -> Reply:
    """The viewer's home, as the site's home page shows it."""
    found = selectors.home_window(reads=request.reads, **_bounds(Window.of(request)))
    return _answer(request, found)


def public(request) -> Reply:
    """Everyone's statuses (the site's global timeline). One instance: `local` is
    all of it, `remote` none; no media: `only_media` none."""
    window = Window.of(request)
    if flag(request.GET, "remote") or flag(request.GET, "only_media"):
        return Reply([])
    return _answer(
        request, selectors.global_window(reads=request.reads, **_bounds(window))
    )


def tag(request, tag: str) -> Reply:
    """A tag's statuses (any case, without `#`); none for what cannot be a tag."""
    window = Window.of(request)
    if flag(request.GET, "remote") or flag(request.GET, "only_media"):
        return Reply([])
    found = selectors.tag_window(reads=request.reads, tag=tag, **_bounds(window))
    return _answer(request, found)


def account_statuses(request, id: str) -> Reply:
    """An account's statuses as its profile shows them; `pinned`: those it pinned,
    newest pin first, within the window's bounds, with no `Link` (Mastodon's); no
    media here: `only_media` lists none."""
    values = request.GET
    window = Window.of(request)
    if flag(values, "only_media"):
        return Reply([])
    if flag(values, "pinned"):
        pinned = selectors.pinned_window(
            reads=request.reads, uid=int(id), **_bounds(window)
        )
        if pinned is None:
            raise not_found()
        return Reply(entities_of(request, pinned.statuses, pinned))
    found = selectors.account_statuses_window(
        reads=request.reads,
        uid=int(id),
        exclude_replies=flag(values, "exclude_replies"),
        exclude_reblogs=flag(values, "exclude_reblogs"),
        tagged=values.get("tagged") or None,
        **_bounds(window),
    )
    if found is None:
        raise not_found()
    return _answer(request, found)


def list_timeline(request, id: str) -> Reply:
    """One of the viewer's lists, as its page on the site shows it (the home's
    rules, replies as the list's policy says: `selectors.list_window`); 404: not a
    list of the viewer's. On one server one round trip read downwards (its members,
    then their statuses, in the token check's and one more), three upwards."""
    if len(id) > 12:
        raise not_found()
    found = selectors.list_window(
        reads=request.reads, lid=int(id), **_bounds(Window.of(request))
    )
    if found is None:
        raise not_found()
    return _answer(request, found)


def bookmarks(request) -> Reply:
    """The viewer's bookmarks, newest bookmark first, paged by the time of each
    (Mastodon's by the bookmark's id): those gone or hidden from the viewer since
    are left out (`selectors.bookmarks_window`)."""
    found = selectors.bookmarks_window(
        reads=request.reads, **_bounds(Window.of(request))
    )
    return _answer(request, found)


def favourites(request) -> Reply:
    """The statuses the viewer liked, newest like first, paged by the time of each
    (Mastodon's by the favourite's id), those gone or hidden from the viewer since
    left out (`selectors.favourites_window`)."""
    found = selectors.favourites_window(
        reads=request.reads, **_bounds(Window.of(request))
    )
    return _answer(request, found)


READ = "read:statuses"
favourites_view = endpoint(GET=Op(favourites, scope="read:favourites"))
bookmarks_view = endpoint(GET=Op(bookmarks, scope="read:bookmarks"))
home_view = endpoint(GET=Op(home, scope=READ))
list_view = endpoint(GET=Op(list_timeline, scope="read:lists"))
public_view = endpoint(GET=Op(public, scope=READ, auth=OPTIONAL))
tag_view = endpoint(GET=Op(tag, scope=READ, auth=OPTIONAL))
account_statuses_view = endpoint(GET=Op(account_statuses, scope=READ, auth=OPTIONAL))
