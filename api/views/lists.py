"""Lists (`timeline.lists`) as Mastodon's lists API: the viewer's lists, their
accounts, and the lists an account is on (a list's timeline:
`api.views.timelines`).

Another user's list, or one deleted, is a 404, as Mastodon's. An account added must
be one the viewer follows (422 "You must follow this account"; an unknown account:
404). A list's accounts are its members the viewer still follows, newest account
first, paged by account id as Mastodon pages them (`limit` 0: all).

`exclusive` is Mastodon's: the members' statuses leave the home timeline (kept out
of it at fan-out, and at read: `timeline.lists`).
"""

from __future__ import annotations

from accounts.selectors import users_queue
from api import entities
from api.http import (
    Op,
    Reply,
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
from api.pagination import Window, link_header
from api.views.accounts import ACCOUNTS_LIMIT, ACCOUNTS_MAX
from timeline import lists, selectors

READ, WRITE = "read:lists", "write:lists"


def _of(request, id: str) -> lists.List:
    lid = own_id(id)
    found = next((e for e in lists.lists_get(uid=request.user.id) if e.id == lid), None)
    if found is None:
        raise not_found()
    return found


def _exclusive(values) -> bool | None:
    raw = param(values, "exclusive")
    return None if raw in (None, "") else flag(values, "exclusive")


def lists_index(request) -> list[dict]:
    return [entities.list_entity(e) for e in lists.lists_get(uid=request.user.id)]


def list_create(request) -> dict:
    values = params(request)
    made = lists.list_create(
        uid=request.user.id,
        title=text_param(values, "title") or "",
        replies_policy=param(values, "replies_policy") or None,
        exclusive=bool(_exclusive(values)),
    )
    return entities.list_entity(made)


def list_show(request, id: str) -> dict:
    return entities.list_entity(_of(request, id))


def list_update(request, id: str) -> dict:
    values = params(request)
    changed = lists.list_update(
        uid=request.user.id,
        lid=own_id(id),
        title=text_param(values, "title"),
        replies_policy=param(values, "replies_policy") or None,
        exclusive=_exclusive(values),
    )
    return entities.list_entity(changed)


def list_remove(request, id: str) -> dict:
    lists.list_delete(uid=request.user.id, lid=own_id(id))
    return {}


def _account_ids(request) -> list[int]:
    """`account_ids[]` from the body, or (a DELETE some clients send so) the query."""
    raw = param_list(params(request), "account_ids") or param_list(
        request.GET, "account_ids"
    )
    if not raw:
        raise unprocessable("Account ids can't be blank")
    ids = []
    for value in raw:
        if not value.isdecimal() or len(value) > 19:
            raise not_found()
        ids.append(int(value))
    return ids


def accounts_index(request, id: str) -> Reply:
    """The list's accounts, newest account first, paged by account id (`limit` 0:
    all of them, with no Link)."""
    listed = lists.list_queue(request.reads, request.user.id, own_id(id)).value
    if listed is None:
        raise not_found()
    members = listed.members
    everyone = request.GET.get("limit") == "0"
    window = Window.of(request, default=ACCOUNTS_LIMIT, maximum=ACCOUNTS_MAX)
    floor = window.floor
    rows = [
        uid
        for uid in sorted(members, reverse=True)
        if (window.max_id is None or uid < window.max_id)
        and (floor is None or uid > floor)
    ]
    if not everyone:
        rows = rows[-window.limit :] if window.from_oldest else rows[: window.limit]
    found = selectors.accounts_queue(request.reads, rows).value
    urls = entities.Urls.of(request)
    body = [entities.account(found[uid], urls) for uid in rows if uid in found]
    headers = (
        link_header(
            request,
            next_max_id=rows[-1] if len(rows) >= window.limit else None,
            prev_min_id=rows[0],
        )
        if rows and not everyone
        else {}
    )
    return Reply(body, headers=headers)


def accounts_add(request, id: str) -> dict:
    lid, ids = own_id(id), _account_ids(request)
    known = users_queue(request.reads, uids=ids).value
    if any(uid not in known for uid in ids):
        raise not_found()
    lists.members_add(uid=request.user.id, lid=lid, member_ids=ids)
    return {}


def accounts_remove(request, id: str) -> dict:
    lists.members_remove(
        uid=request.user.id, lid=own_id(id), member_ids=_account_ids(request)
    )
    return {}


def account_lists(request, id: str) -> list[dict]:
    """The viewer's lists the account is on (none while the viewer does not follow
    it); 404 for no such account."""
    uid = int(id)
    who = users_queue(request.reads, uids=[uid])
    found = lists.member_lists_queue(request.reads, request.user.id, uid)
    if uid not in who.value:
        raise not_found()
    owned, on = found.value
    return [entities.list_entity(e) for e in owned if e.id in on]


lists_view = endpoint(
    GET=Op(lists_index, scope=READ), POST=Op(list_create, scope=WRITE)
)
list_view = endpoint(
    GET=Op(list_show, scope=READ),
    PUT=Op(list_update, scope=WRITE),
    DELETE=Op(list_remove, scope=WRITE),
)
accounts_view = endpoint(
    GET=Op(accounts_index, scope=READ),
    POST=Op(accounts_add, scope=WRITE),
    DELETE=Op(accounts_remove, scope=WRITE),
)
account_lists_view = endpoint(GET=Op(account_lists, scope=READ))
