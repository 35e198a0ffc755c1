"""Search, tags and trending tags.

`/api/v2/search` finds accounts with the site's people search (a username or
display name prefix, `timeline.selectors.people_search`; a full handle, `name@ourhost`
or `@name@ourhost`, as its name; another host's, nobody: as `/api/v1/accounts/search`
does) and hashtags among what the site can answer without walking its keys: the tag
itself when a public status still carries it (its timeline exists), and the trending
tags (those the global page shows, `trends_queue`) that start with the query.
Statuses are never found by text: the site has no full-text index. With `resolve`,
a link to this site's profile, status or tag page finds what the page shows the
viewer (`_link_target`), as Mastodon resolves its local URLs: how a client opens
such a link inside the app.

A Tag's `history` comes from the trend counts, which the site keeps by the hour for
TRENDS_HOURS hours only: one entry, today, with the uses of those hours; Mastodon's
`accounts` (how many people) is not counted, and is given as the uses (a bound).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from django.urls import Resolver404, get_script_prefix, resolve

from accounts import limits
from api import entities
from api.http import OPTIONAL, ApiError, Op, Reply, endpoint, flag, not_found, param
from api.pagination import Window, link_header
from api.views.accounts import local_name
from api.views.statuses import entities_of
from config.http import same_host
from timeline import richtext, tagfollows
from timeline.domain import Trend
from timeline.selectors import (
    account_by_name_get,
    accounts_queue,
    following_among_queue,
    people_search,
    status_get,
    tag_exists_queue,
)
from timeline.trends import trends_queue

TYPES = ("accounts", "hashtags", "statuses")
TRENDS_LIMIT_DEFAULT = 10
TRENDS_LIMIT_MAX = 20


def _number(values, name: str, default: int, maximum: int | None = None) -> int:
    raw = param(values, name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as error:
        raise ApiError(400, f"{name} must be a number") from error
    if value < 0 and name == "limit":
        value = -value  # Mastodon's `limit_param`: a negative limit's absolute value
    elif value < 0:
        raise ApiError(
            400, "Pagination values for `offset` and `limit` must be positive"
        )
    return min(value, maximum) if maximum is not None else value


def _history(uses: int | None) -> list[dict]:
    if not uses:
        return []
    today = int(time.time() // 86_400 * 86_400)
    return [{"day": str(today), "uses": str(uses), "accounts": str(uses)}]


def _tag(
    name: str,
    trends: dict[str, int],
    urls: entities.Urls,
    followed: frozenset[str] = frozenset(),
) -> dict:
    return entities.tag(
        name, urls, history=_history(trends.get(name)), following=name in followed
    )


def _followed_queue(request) -> Callable[[], frozenset[str]]:
    """Queue the read of the tags the token's user follows (with the token's check
    in the first round trip); the function answers them once the user is proven
    (none for a visitor)."""
    reads = request.reads
    uid = reads.claimed_uid
    if uid is None:
        return frozenset
    found = tagfollows.followed_tags_queue(reads, uid)
    return lambda: (
        frozenset(tag.name for tag in found.value)
        if reads.proven_uid() == uid
        else frozenset()
    )


def _link_target(request, query: str) -> tuple[str, str] | None:
    """What a link to this site's profile, status or tag page names, as (type,
    the page's argument); None for anything else (another host, another page)."""
    parts = urlsplit(query)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    if not same_host(parts.netloc, request.get_host()):
        return None
    prefix = get_script_prefix()
    if not parts.path.startswith(prefix):
        return None
    path = "/" + unquote(parts.path)[len(prefix) :]
    try:
        match = resolve(path)
    except Resolver404:
        if path.endswith("/"):
            return None
        try:  # `/u/bob` and `/s/1`: the pages' addresses, as the site redirects them
            match = resolve(path + "/")
        except Resolver404:
            return None
    kinds = {
        "timeline:profile": ("accounts", "username"),
        "timeline:status_detail": ("statuses", "sid"),
        "timeline:tag": ("hashtags", "tag"),
    }
    if match.view_name not in kinds:
        return None
    kind, argument = kinds[match.view_name]
    return kind, str(match.kwargs[argument])


def _resolved(request, kind: str, value: str, kinds: tuple[str, ...]) -> dict:
    """What a link to this site shows the viewer (`_link_target`), in its type's
    list, as Mastodon answers a local URL with `resolve`: nothing it would not
    show on its page (a status hidden from the viewer, a tag no public status
    carries)."""
    found: dict[str, list] = {"accounts": [], "statuses": [], "hashtags": []}
    if kind not in kinds:
        return found
    reads, urls = request.reads, entities.Urls.of(request)
    if kind == "accounts":
        stats = account_by_name_get(reads=reads, username=value)
        found["accounts"] = [entities.account(stats, urls)] if stats else []
    elif kind == "statuses":
        status = status_get(reads=reads, sid=int(value))
        found["statuses"] = entities_of(request, [status]) if status else []
    else:
        tag = richtext.tag_wanted(value)
        if tag:
            # The reads in one round trip, as `tag_show`'s.
            exists, trending = tag_exists_queue(reads, tag), trends_queue(reads)
            followed = _followed_queue(request)
            if exists.value:
                counts = {trend.tag: trend.count for trend in trending.value}
                found["hashtags"] = [_tag(tag, counts, urls, followed())]
    return found


def search(request) -> dict:
    """Accounts and hashtags matching `q` (see the module); statuses: none. With
    `resolve`, a link to this site's profile, status or tag page: what it shows."""
    values = request.GET
    query = (param(values, "q") or "").strip()
    if not query:
        raise ApiError(400, "param is missing or the value is empty: q")
    wanted = param(values, "type")
    kinds = (wanted,) if wanted in TYPES else TYPES
    limit = max(_number(values, "limit", 20, 40), 1)
    offset = _number(values, "offset", 0)
    signed_in = request.reads.claimed_uid is not None
    if not signed_in and flag(values, "resolve"):
        raise ApiError(
            401,
            "Search queries that resolve remote resources are not supported "
            "without authentication",
        )
    if not signed_in and offset:
        raise ApiError(
            401, "Search queries pagination is not supported without authentication"
        )
    if flag(values, "resolve") and (target := _link_target(request, query)):
        # One result, on the first page only (Mastodon's: none past an offset).
        return _resolved(request, *target, () if offset else kinds)
    reads = request.reads
    urls = entities.Urls.of(request)
    tag = richtext.tag_wanted(query.removeprefix("#"))
    # The tag reads ride in the first round trip, with the people search's.
    exists = tag_exists_queue(reads, tag) if tag and "hashtags" in kinds else None
    trending = trends_queue(reads) if "hashtags" in kinds else None
    tags_followed = _followed_queue(request) if "hashtags" in kinds else frozenset
    accounts: list[dict] = []
    name = local_name(request, query)
    if "accounts" in kinds and name:
        found = people_search(reads=reads, query=name)[offset : offset + limit]
        uids = [user.id for user in found]
        stats = accounts_queue(reads, uids)
        followed = (
            following_among_queue(reads, uids)
            if flag(values, "following") and signed_in
            else None
        )
        keep = followed.value if followed is not None else set(uids)
        accounts = entities.accounts(
            [user for user in found if user.id in keep], stats.value, urls
        )
    hashtags: list[dict] = []
    if trending is not None:
        counts = {trend.tag: trend.count for trend in trending.value}
        prefix = richtext.tag_key(query.removeprefix("#"))
        names = [tag] if exists is not None and exists.value else []
        names += [t for t in counts if t.startswith(prefix) and t not in names]
        tags = tags_followed()
        hashtags = [_tag(name, counts, urls, tags) for name in names[offset:]][:limit]
    return {"accounts": accounts, "statuses": [], "hashtags": hashtags}


def tag_show(request, tag: str) -> dict:
    """A tag some public status carries, that trends, or that the viewer follows
    (`following`: whether they do); 404 for any other."""
    wanted = richtext.tag_wanted(tag)
    if wanted is None:
        raise not_found()
    exists = tag_exists_queue(request.reads, wanted)
    trending = trends_queue(request.reads)
    followed = _followed_queue(request)
    counts = {trend.tag: trend.count for trend in trending.value}
    tags = followed()
    if not exists.value and wanted not in counts and wanted not in tags:
        raise not_found()
    return _tag(wanted, counts, entities.Urls.of(request), tags)


def _tag_changed(request, tag: str, change) -> dict:
    """Follow or unfollow a tag (from the follow budget, as the site's button),
    answered as the Tag with `following`; 404: not a tag."""
    uid = request.user.id
    name = change(uid=uid, tag=tag, limit=limits.follow(uid))
    reads = request.reads
    trending = trends_queue(reads)
    followed = tagfollows.tag_followed_queue(reads, uid, name)
    counts = {trend.tag: trend.count for trend in trending.value}
    urls = entities.Urls.of(request)
    return entities.tag(
        name, urls, history=_history(counts.get(name)), following=followed.value
    )


def tag_follow(request, tag: str) -> dict:
    """Follow a tag (Mastodon's: any tag, whether a status carries it yet): its
    public statuses show in the home; 422 past FOLLOWED_TAGS_MAX."""
    return _tag_changed(request, tag, tagfollows.tag_follow)


def tag_unfollow(request, tag: str) -> dict:
    """Unfollow a tag (one not followed: answered all the same)."""
    return _tag_changed(request, tag, tagfollows.tag_unfollow)


FOLLOWED_LIMIT, FOLLOWED_MAX = 100, 200


def followed_tags(request) -> Reply:
    """The tags the viewer follows, the newest follow first, paged by the time of
    each follow (Mastodon's by the follow's id) with Link headers."""
    window = Window.of(request, default=FOLLOWED_LIMIT, maximum=FOLLOWED_MAX)
    found = tagfollows.followed_tags_get(reads=request.reads)
    if found is None:
        raise ApiError(401, "The access token is invalid")
    floor = window.floor
    rows = [
        tag
        for tag in found
        if (window.max_id is None or tag.since < window.max_id)
        and (floor is None or tag.since > floor)
    ]
    rows = rows[-window.limit :] if window.from_oldest else rows[: window.limit]
    urls = entities.Urls.of(request)
    body = [entities.tag(tag.name, urls, following=True) for tag in rows]
    headers = (
        link_header(
            request,
            next_max_id=rows[-1].since if len(rows) >= window.limit else None,
            prev_min_id=rows[0].since,
        )
        if rows
        else {}
    )
    return Reply(body, headers=headers)


def trends_tags(request) -> Reply:
    """The tags the global page shows as trending, most used first."""
    values = request.GET
    limit = max(_number(values, "limit", TRENDS_LIMIT_DEFAULT, TRENDS_LIMIT_MAX), 1)
    offset = _number(values, "offset", 0)
    trending = trends_queue(request.reads)
    followed = _followed_queue(request)
    trends: list[Trend] = trending.value
    counts = {trend.tag: trend.count for trend in trends}
    urls = entities.Urls.of(request)
    shown = trends[offset : offset + limit]
    tags = followed()
    return Reply([_tag(trend.tag, counts, urls, tags) for trend in shown])


search_v2 = endpoint(GET=Op(search, scope="read:search", auth=OPTIONAL))
# Mastodon answers these two to anyone, with or without a token (no scope asked).
tag_detail = endpoint(GET=Op(tag_show, auth=OPTIONAL))
tag_follow_view = endpoint(POST=Op(tag_follow, scope="write:follows"))
tag_unfollow_view = endpoint(POST=Op(tag_unfollow, scope="write:follows"))
followed_tags_view = endpoint(GET=Op(followed_tags, scope="read:follows"))
trends = endpoint(GET=Op(trends_tags, auth=OPTIONAL))
