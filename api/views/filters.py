"""Keyword filters (`timeline.filters`) as Mastodon's v2 filters API, and its v1 API,
which names each keyword a filter of its own.

A status matched by a filter is marked (`filtered` on the Status entity) wherever
the API returns one, and the app decides what to show, as with Mastodon.

What differs from Mastodon: a v1 DELETE of a filter's last keyword deletes the
filter too (a v1 client sees keywords only, and would leave empty filters behind).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from django.http import QueryDict

from api import entities
from api.http import (
    Op,
    endpoint,
    flag,
    not_found,
    own_id,
    param,
    param_list,
    params,
    text_param,
    unprocessable,
)
from timeline import filters, selectors
from timeline.filters import KeywordChange

READ, WRITE = "read:filters", "write:filters"


def _mine(request) -> filters.Filters:
    """The viewer's filters as the request's first round trip read them."""
    return filters.viewer_filters(request.reads)


def _filter_of(request, id: str) -> filters.Filter:
    found = _mine(request).get(own_id(id))
    if found is None:
        raise not_found()
    return found


def _expires(values) -> float | None:
    """`expires_in` (seconds from now; blank: never) as a time."""
    raw = param(values, "expires_in")
    if raw is None or raw.strip() in ("", "null"):
        return None
    try:
        seconds = int(float(raw))
    except (ValueError, OverflowError) as error:  # not a number, or infinite
        raise unprocessable("Expires in is not a number") from error
    return filters.expiry(seconds)


_NESTED = re.compile(r"^keywords_attributes\[(\d*)\]\[(\w+)\]$")


def _keyword_rows(request, values) -> list[dict]:
    """`keywords_attributes` as a list of dicts, whichever way it was sent: a JSON
    array (or an object keyed by index), or a form's `keywords_attributes[][keyword]`
    (a new row each time a field comes again, as Rails reads it) or
    `keywords_attributes[0][keyword]`."""
    if not isinstance(values, QueryDict):  # a JSON body
        rows = values.get("keywords_attributes") or []
        if isinstance(rows, dict):
            rows = [rows[k] for k in sorted(rows, key=str)]
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise unprocessable("Keywords attributes must be a list")
        return rows
    if request.content_type == "application/x-www-form-urlencoded":
        pairs = parse_qsl(
            request.body.decode("utf-8", "replace"), keep_blank_values=True
        )
    else:
        # Multipart: Django keeps each field's values in order, not the fields'
        # order among themselves; the n-th of each field is the n-th row's (as
        # Rails reads a form that gives every row the same fields).
        lists = [(k, vs) for k, vs in values.lists() if k.startswith("keywords_")]
        pairs = [
            (k, vs[n])
            for n in range(max((len(vs) for _, vs in lists), default=0))
            for k, vs in lists
            if n < len(vs)
        ]
    indexed: dict[str, dict] = {}
    listed: list[dict] = []
    for name, value in pairs:
        match = _NESTED.match(name)
        if match is None:
            continue
        index, key = match.groups()
        if index:
            indexed.setdefault(index, {})[key] = value
        elif not listed or key in listed[-1]:
            listed.append({key: value})
        else:
            listed[-1][key] = value
    return [*listed, *(indexed[k] for k in sorted(indexed, key=int))]


def _truthy(value) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "t", "on", "yes")


def _keyword_changes(request, values) -> list[KeywordChange]:
    changes = []
    for row in _keyword_rows(request, values):
        raw_id = row.get("id")
        kid = None
        if raw_id not in (None, ""):
            kid = own_id(str(raw_id))
        whole = row.get("whole_word")
        changes.append(
            KeywordChange(
                keyword=str(row.get("keyword") or ""),
                whole_word=True if whole in (None, "") else _truthy(whole),
                id=kid,
                delete=_truthy(row.get("_destroy") or False),
            )
        )
    return changes


def _context(values, *, required: bool) -> list[str] | None:
    context = param_list(values, "context")
    if not context:
        if required:
            raise unprocessable("Context can't be blank")
        return None
    return context


# v2: filters


def filters_index(request) -> list[dict]:
    return [entities.filter_entity(f) for f in _mine(request).filters]


def filter_create(request) -> dict:
    values = params(request)
    made = filters.filter_create(
        uid=request.user.id,
        title=text_param(values, "title") or "",
        context=_context(values, required=True),
        action=param(values, "filter_action"),
        expires=_expires(values),
        keywords=[c for c in _keyword_changes(request, values) if c.id is None],
    )
    return entities.filter_entity(made)


def filter_show(request, id: str) -> dict:
    return entities.filter_entity(_filter_of(request, id))


def filter_update(request, id: str) -> dict:
    values = params(request)
    fid = own_id(id)
    changes: dict = {}
    if "expires_in" in values:
        changes["expires"] = _expires(values)
    changed = filters.filter_update(
        uid=request.user.id,
        fid=fid,
        title=text_param(values, "title"),
        context=_context(values, required=False),
        action=param(values, "filter_action"),
        keywords=_keyword_changes(request, values),
        **changes,
    )
    return entities.filter_entity(changed)


def filter_remove(request, id: str) -> dict:
    filters.filter_delete(uid=request.user.id, fid=own_id(id))
    return {}


# v2: a filter's keywords


def keywords_index(request, id: str) -> list[dict]:
    return [entities.filter_keyword(k) for k in _filter_of(request, id).keywords]


def keyword_create(request, id: str) -> dict:
    values = params(request)
    made = filters.keyword_add(
        uid=request.user.id,
        fid=own_id(id),
        keyword=text_param(values, "keyword") or "",
        whole_word=flag(values, "whole_word", default=True),
    )
    return entities.filter_keyword(made)


def _keyword_of(request, id: str) -> tuple[filters.Filter, filters.FilterKeyword]:
    found = _mine(request).keyword(own_id(id))
    if found is None:
        raise not_found()
    return found


def keyword_show(request, id: str) -> dict:
    return entities.filter_keyword(_keyword_of(request, id)[1])


def keyword_update(request, id: str) -> dict:
    values = params(request)
    whole = param(values, "whole_word")
    changed = filters.keyword_update(
        uid=request.user.id,
        kid=own_id(id),
        keyword=text_param(values, "keyword"),
        whole_word=None if whole in (None, "") else flag(values, "whole_word"),
    )
    return entities.filter_keyword(changed)


def keyword_remove(request, id: str) -> dict:
    filters.keyword_delete(uid=request.user.id, kid=own_id(id))
    return {}


# v2: a filter's statuses


def statuses_index(request, id: str) -> list[dict]:
    return [entities.filter_status(e) for e in _filter_of(request, id).statuses]


def status_create(request, id: str) -> dict:
    fid = own_id(id)
    raw = param(params(request), "status_id") or ""
    if not raw.isdecimal() or len(raw) > 19:
        raise not_found()
    # A status the viewer may see, as Mastodon asks (404 otherwise).
    if selectors.status_get(reads=request.reads, sid=int(raw)) is None:
        raise not_found()
    made = filters.status_add(uid=request.user.id, fid=fid, sid=int(raw))
    return entities.filter_status(made)


def status_show(request, id: str) -> dict:
    found = _mine(request).status(own_id(id))
    if found is None:
        raise not_found()
    return entities.filter_status(found[1])


def status_remove(request, id: str) -> dict:
    filters.status_delete(uid=request.user.id, n=own_id(id))
    return {}


# v1: one filter a keyword


def v1_index(request) -> list[dict]:
    return [
        entities.v1_filter(f, k) for f in _mine(request).filters for k in f.keywords
    ]


def v1_create(request) -> dict:
    """A filter named after its one keyword (Mastodon's v1 create)."""
    values = params(request)
    phrase = text_param(values, "phrase") or ""
    made = filters.filter_create(
        uid=request.user.id,
        title=phrase,
        context=_context(values, required=True),
        action="hide" if flag(values, "irreversible") else "warn",
        expires=_expires(values),
        keywords=[KeywordChange(phrase, flag(values, "whole_word", default=True))],
    )
    return entities.v1_filter(made, made.keywords[0])


def v1_show(request, id: str) -> dict:
    return entities.v1_filter(*_keyword_of(request, id))


def v1_update(request, id: str) -> dict:
    """Change a keyword, and its filter's context, action and end when the filter
    has no other keyword (Mastodon refuses those for a filter with several)."""
    values = params(request)
    owner, keyword = _keyword_of(request, id)
    phrase = text_param(values, "phrase")
    whole = param(values, "whole_word")
    change = KeywordChange(
        keyword=phrase if phrase is not None else keyword.keyword,
        whole_word=keyword.whole_word
        if whole in (None, "")
        else flag(values, "whole_word"),
        id=keyword.id,
    )
    fields: dict = {}
    context = _context(values, required=False)
    if context is not None:
        fields["context"] = context
    if param(values, "irreversible") not in (None, ""):
        fields["action"] = "hide" if flag(values, "irreversible") else "warn"
    if "expires_in" in values:
        fields["expires"] = _expires(values)
    if len(owner.keywords) > 1 and any(
        (
            fields.get("context") is not None
            and tuple(fields["context"]) != owner.context,
            fields.get("action", owner.action) != owner.action,
            "expires" in fields and fields["expires"] != owner.expires,
        )
    ):
        raise unprocessable(
            "This filter has several keywords: change its context, action or end "
            "with the v2 API"
        )
    changed = filters.filter_update(
        uid=request.user.id, fid=owner.id, keywords=[change], **fields
    )
    word = next((k for k in changed.keywords if k.id == keyword.id), None)
    if word is None:
        raise not_found()
    return entities.v1_filter(changed, word)


def v1_remove(request, id: str) -> dict:
    owner, keyword = _keyword_of(request, id)
    if len(owner.keywords) == 1 and not owner.statuses:
        filters.filter_delete(uid=request.user.id, fid=owner.id)
    else:
        filters.keyword_delete(uid=request.user.id, kid=keyword.id)
    return {}


filters_v2 = endpoint(
    GET=Op(filters_index, scope=READ), POST=Op(filter_create, scope=WRITE)
)
filter_v2 = endpoint(
    GET=Op(filter_show, scope=READ),
    PUT=Op(filter_update, scope=WRITE),
    DELETE=Op(filter_remove, scope=WRITE),
)
keywords = endpoint(
    GET=Op(keywords_index, scope=READ), POST=Op(keyword_create, scope=WRITE)
)
keyword = endpoint(
    GET=Op(keyword_show, scope=READ),
    PUT=Op(keyword_update, scope=WRITE),
    DELETE=Op(keyword_remove, scope=WRITE),
)
filter_statuses = endpoint(
    GET=Op(statuses_index, scope=READ), POST=Op(status_create, scope=WRITE)
)
filter_status = endpoint(
    GET=Op(status_show, scope=READ), DELETE=Op(status_remove, scope=WRITE)
)
filters_v1 = endpoint(GET=Op(v1_index, scope=READ), POST=Op(v1_create, scope=WRITE))
filter_v1 = endpoint(
    GET=Op(v1_show, scope=READ),
    PUT=Op(v1_update, scope=WRITE),
    DELETE=Op(v1_remove, scope=WRITE),
)
