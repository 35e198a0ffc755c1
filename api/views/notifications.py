"""Notifications: Mastodon's one Notification per event, from the site's groups.

The site keeps a user's notifications grouped (`timeline.notifications`): "bob,
carol and 3 others liked your status" is one group with a unique place (its newest
event's time in ms, raised to stay unique) and its newest actors (up to
ACTORS_KEPT). Mastodon's v1 list has one Notification per event. Here each
remembered actor of a group is one event, with the id

    place * ID_SPAN + actor uid % ID_SPAN

so ids sort as the page does (newer group first; within a group by actor), each
names its group (by place) and its actor, and paging with `max_id`, `since_id` and
`min_id` is exact: a cursor that falls inside a group reads that group again and
keeps only the ids on its side. What follows from the store, and docs/API.md says:

- an event's `created_at` is its group's newest event time (the store keeps no
  time per actor);
- a group that gains an event moves on top with a new place, so its events get new
  ids above the others: they show again as new, as the group is unread again on
  the page;
- past ACTORS_KEPT actors a group's older ones are counted, not listed;
- "follow request approved" has no Mastodon type and is not listed.

Clients that group (Mastodon 4.3's `/api/v2/notifications`, below) get the groups
as they are, whole, with their full counts, and none of the above repeats.

The rules of what a viewer sees (blocks either way, mutes, deleted actors, gone
statuses, private authors' mentions) are the page's own
(`timeline.selectors.notifications_window`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from accounts.domain import User
from api import entities
from api.http import ApiError, Op, Reply, endpoint, iso, not_found, param, param_list
from api.pagination import Window, link_header
from timeline import notifications as store
from timeline.domain import NotificationItem, NotificationsWindow
from timeline.selectors import (
    accounts_queue,
    notification_place_queue,
    notifications_unread_counted_queue,
    notifications_window,
)

ID_SPAN = 10**6
# Our kinds as Mastodon's types; `follow_approved` has none and is left out.
TYPE_OF = {
    "mention": "mention",
    "reply": "mention",
    "like": "favourite",
    "repost": "reblog",
    "update": "update",
    "follow": "follow",
    "follow_request": "follow_request",
    "poll": "poll",
    "quote": "quote",
}
# Every type Mastodon 4.3 knows (a known type we never send matches nothing; an
# unknown one is ignored, as Mastodon does).
MASTODON_TYPES = frozenset(
    (
        "mention",
        "status",
        "reblog",
        "follow",
        "follow_request",
        "favourite",
        "poll",
        "update",
        "quote",
        "admin.sign_up",
        "admin.report",
        "severed_relationships",
        "moderation_warning",
    )
)
GROUPED = ("like", "repost", "follow", "follow_request")


@dataclass(frozen=True, slots=True)
class Event:
    """One actor of a group: one Mastodon Notification."""

    id: int
    item: NotificationItem
    actor: User


def _item_events(item: NotificationItem) -> list[Event]:
    """The events of one group, in its order (newest actor first); none for a
    kind Mastodon has no type for."""
    if item.kind not in TYPE_OF:
        return []
    out: dict[int, Event] = {}
    for actor in item.actors:
        event_id = item.place * ID_SPAN + actor.id % ID_SPAN
        # Two actors alike past ID_SPAN: one shown.
        out.setdefault(event_id, Event(id=event_id, item=item, actor=actor))
    return list(out.values())


def _events(window: NotificationsWindow) -> list[Event]:
    """The events of the window's groups, newest first (by id)."""
    out = [event for item in window.items for event in _item_events(item)]
    out.sort(key=lambda e: e.id, reverse=True)
    return out


def _kinds(values) -> list[str]:
    """Our kinds that `types[]` and `exclude_types[]` ask for."""
    types = {t for t in param_list(values, "types") if t in MASTODON_TYPES}
    excluded = set(param_list(values, "exclude_types"))
    return [
        kind
        for kind, type_ in TYPE_OF.items()
        if (not types or type_ in types) and type_ not in excluded
    ]


def _group_key(event: Event) -> str:
    item = event.item
    if item.kind not in GROUPED:
        return f"ungrouped-{event.id}"
    if item.status is not None:
        return f"{TYPE_OF[item.kind]}-{item.status.id}"
    return f"{TYPE_OF[item.kind]}-{item.at // store.DAY_MS}"


def _entities(request, events: list[Event]) -> list[dict]:
    """Notification entities: the actors' accounts and the statuses' authors read
    in one round trip."""
    reads = request.reads
    urls = entities.Urls.of(request)
    actors = accounts_queue(reads, {e.actor.id for e in events})
    statuses = {e.item.status.id: e.item.status for e in events if e.item.status}
    related = entities.related_get(reads, statuses.values())
    shown: dict[int, dict | None] = {}
    out = []
    for event in events:
        stats = actors.value.get(event.actor.id)
        if stats is None:
            continue  # deleted since the page's first read
        entity = {
            "id": str(event.id),
            "type": TYPE_OF[event.item.kind],
            "group_key": _group_key(event),
            "created_at": iso(event.item.at / 1000),
            "account": entities.account(stats, urls),
        }
        status = event.item.status
        if status is not None:
            if status.id not in shown:
                shown[status.id] = entities.status(status, related, urls)
            if shown[status.id] is None:
                continue
            entity["status"] = shown[status.id]
        out.append(entity)
    return out


def _window(request, **bounds) -> NotificationsWindow:
    found = notifications_window(reads=request.reads, **bounds)
    if found is None:
        raise ApiError(401, "The access token is invalid")
    return found


def notifications_list(request) -> Reply:
    """The viewer's notifications, newest first, one per event (see the module)."""
    values = request.GET
    window = Window.of(request, default=40, maximum=80)
    kinds = _kinds(values)
    raw_actor = param(values, "account_id")
    if raw_actor is not None and not raw_actor.isdecimal():
        kinds = []  # no such account: nothing of it
    actor = int(raw_actor) if raw_actor and raw_actor.isdecimal() else None
    floor = window.floor
    size = window.limit + 1  # groups: each shown one gives at least one event
    found = _window(
        request,
        high=window.max_id // ID_SPAN if window.max_id is not None else None,
        low=floor // ID_SPAN if floor is not None else None,
        size=size,
        oldest_first=window.from_oldest,
        kinds=kinds,
        actor=actor,
    )
    events = [
        e
        for e in _events(found)
        if (window.max_id is None or e.id < window.max_id)
        and (floor is None or e.id > floor)
        and (actor is None or e.actor.id == actor)
    ]
    more = found.read == size  # the read stopped at its bound: there may be more
    last = found.last_place
    if window.from_oldest:
        page = events[-window.limit :]
        newer = page[0].id if page else None
        if len(events) <= window.limit and more and last is not None:
            newer = last * ID_SPAN + ID_SPAN - 1  # every group read was considered
        older = page[-1].id if page else None
    else:
        page = events[: window.limit]
        newer = page[0].id if page else None
        older = None
        if len(events) > window.limit:
            older = page[-1].id
        elif more and last is not None:
            older = last * ID_SPAN  # below every group read
    return Reply(
        _entities(request, page),
        headers=link_header(request, next_max_id=older, prev_min_id=newer),
    )


def _event(request, nid: int) -> Event:
    """The viewer's notification with this id (404 when it is not, or not shown)."""
    place = nid // ID_SPAN
    found = _window(request, high=place, low=place, size=1, kinds=list(TYPE_OF))
    for event in _events(found):
        if event.id == nid:
            return event
    raise not_found()


def notification_show(request, id: str) -> dict:
    event = _event(request, int(id))
    shown = _entities(request, [event])
    if not shown:
        raise not_found()
    return shown[0]


def notification_dismiss(request, id: str) -> dict:
    """Take one notification out: on the page its actor leaves the group."""
    event = _event(request, int(id))
    store.notification_dismiss(
        user=request.user,
        kind=event.item.kind,
        actor=event.actor.id,
        sid=event.item.status.id if event.item.status is not None else None,
    )
    return {}


def notifications_clear(request) -> dict:
    store.notifications_clear(user=request.user)
    return {}


# Grouped notifications (`/api/v2/notifications`, Mastodon 4.3), the site's groups
# as they are: each whole on one page, with its full count (`others` included),
# newest first by place. A group's notification ids are its events' (`_events`):
# `page_max_id` / `page_min_id` bound them, and a page's cursors are its first
# group's highest and its last group's lowest, so paging by place is exact.
# Mastodon groups these types unless `grouped_types[]` says otherwise; a group of
# another type (follow requests, by day here) is one entry per actor.
GROUPED_BY_DEFAULT = ("favourite", "reblog", "follow")


def _grouped_types(values) -> set[str]:
    asked = param_list(values, "grouped_types")
    return set(asked) if asked else set(GROUPED_BY_DEFAULT)


def _kind_together(kind: str, grouped: set[str]) -> bool:
    """Whether a stored group of `kind` is one entry (a groupable kind of a type
    `grouped_types[]` groups), rather than one entry an event."""
    return kind in GROUPED and TYPE_OF[kind] in grouped


def _together(item: NotificationItem, grouped: set[str]) -> bool:
    return _kind_together(item.kind, grouped)


def _groups(window: NotificationsWindow, grouped: set[str]) -> list[list[Event]]:
    """The window's groups as entries of the answer, newest first: the events of a
    group of a grouped type together, any other's each alone; each stored group's
    entries next to one another."""
    out: list[list[Event]] = []
    for item in sorted(window.items, key=lambda i: i.place, reverse=True):
        events = _item_events(item)
        if events and _together(item, grouped):
            out.append(events)
        else:
            out += [[event] for event in events]
    return out


def _group_entity(
    events: list[Event], status: dict | None, together: bool, counted: bool = True
) -> dict:
    """A NotificationGroup: `together`, a group of a grouped type (its key names
    its status or day, as Mastodon's, even with one event), else one event.
    `counted`: the group's older actors count too (not for one account's events,
    `account_id`)."""
    item = events[0].item
    type_ = TYPE_OF[item.kind]
    ids = [e.id for e in events]
    return {
        "group_key": _group_key(events[0]) if together else f"ungrouped-{ids[0]}",
        "notifications_count": len(events)
        + (item.others if together and counted else 0),
        "type": type_,
        "most_recent_notification_id": str(ids[0]),
        "page_min_id": str(min(ids)),
        "page_max_id": str(max(ids)),
        "latest_page_notification_at": iso(item.at / 1000),
        "sample_account_ids": [str(e.actor.id) for e in events],
        "status_id": status["id"] if status is not None else None,
    }


def notifications_grouped(request) -> Reply:
    """The viewer's notifications as groups, newest first (see above): the groups,
    and the accounts and statuses they name, each once."""
    values = request.GET
    window = Window.of(request, default=40, maximum=80)
    kinds = _kinds(values)
    raw_actor = param(values, "account_id")
    if raw_actor is not None and not raw_actor.isdecimal():
        kinds = []
    actor = int(raw_actor) if raw_actor and raw_actor.isdecimal() else None
    floor = window.floor
    found = _window(
        request,
        # A page's cursor is an event id of a group, never split: below its place
        # (`max_id`), or above it (`since_id`, `min_id`).
        high=window.max_id // ID_SPAN - 1 if window.max_id is not None else None,
        low=floor // ID_SPAN + 1 if floor is not None else None,
        size=window.limit + 1,
        oldest_first=window.from_oldest,
        kinds=kinds,
        actor=actor,
    )
    grouped = _grouped_types(values)
    entries = _groups(found, grouped)
    if actor is not None:
        # Mastodon filters before it groups: that account's events alone.
        entries = [[e for e in g if e.actor.id == actor] for g in entries]
        entries = [g for g in entries if g]
    more = found.read == window.limit + 1
    # Whole stored groups, up to `limit` entries (one group at least), from the
    # newest, or (`min_id`) from the oldest read.
    sizes = Counter(e[0].item.place for e in entries)  # in the entries' order
    places = list(sizes)
    if window.from_oldest:
        places.reverse()
    kept: set[int] = set()
    count = 0
    for place in places:
        n = sizes[place]
        if kept and count + n > window.limit:
            more = True
            break
        kept.add(place)
        count += n
    page = [e for e in entries if e[0].item.place in kept]
    reads, urls = request.reads, entities.Urls.of(request)
    actors = accounts_queue(reads, {e.actor.id for group in page for e in group})
    statuses = {g[0].item.status.id: g[0].item.status for g in page if g[0].item.status}
    related = entities.related_get(reads, statuses.values())
    shown = {sid: entities.status(st, related, urls) for sid, st in statuses.items()}
    groups, accounts = [], {}
    for group in page:
        events = [e for e in group if e.actor.id in actors.value]
        status = group[0].item.status
        entity = shown.get(status.id) if status is not None else None
        if not events or (status is not None and entity is None):
            continue
        for event in events:
            accounts.setdefault(
                event.actor.id, entities.account(actors.value[event.actor.id], urls)
            )
        together = _together(group[0].item, grouped)
        groups.append(_group_entity(events, entity, together, counted=actor is None))
    newer = max((e.id for g in page for e in g), default=None)
    older = min((e.id for g in page for e in g), default=None) if more else None
    last = found.last_place
    if not page and more and last is not None:
        # Every group read was hidden: the links go on past them, as v1's do (a
        # client takes a page without links for the end, or polls it for ever).
        if window.from_oldest:
            newer = last * ID_SPAN + ID_SPAN - 1
        else:
            older = last * ID_SPAN
    return Reply(
        {
            "accounts": list(accounts.values()),
            "statuses": [entity for entity in shown.values() if entity is not None],
            "notification_groups": groups,
        },
        headers=link_header(request, next_max_id=older, prev_min_id=newer),
    )


# A group key's type as the store's kind (`_group_key` writes them).
KIND_OF = {TYPE_OF[kind]: kind for kind in GROUPED}


def _one_group(request, group_key: str) -> list[Event]:
    """The events of the viewer's group `group_key` as the list shows it: a stored
    group (`favourite-<sid>`, `follow-<day>`...) or one event (`ungrouped-<id>`);
    404 when it is not the viewer's, or not shown."""
    type_, _, name = group_key.rpartition("-")
    if type_ == "ungrouped":
        return [_event(request, int(name))]
    kind = KIND_OF.get(type_)
    if kind is None:
        raise not_found()
    place_d = notification_place_queue(request.reads, kind=kind, name=name)
    place = place_d.value if place_d is not None else None
    if place is None or request.reads.proven_uid() is None:
        raise not_found()
    found = _window(request, high=place, low=place, size=1, kinds=[kind])
    items = [item for item in found.items if item.place == place]
    events = _item_events(items[0]) if items else []
    if not events:
        raise not_found()
    return events


def notification_group(request, group_key: str) -> dict:
    """One group, as the grouped list answers it (`notifications_grouped`)."""
    events = _one_group(request, group_key)
    reads, urls = request.reads, entities.Urls.of(request)
    actors = accounts_queue(reads, {e.actor.id for e in events})
    item = events[0].item
    status = None
    if item.status is not None:
        related = entities.related_get(reads, [item.status])
        status = entities.status(item.status, related, urls)
        if status is None:
            raise not_found()
    shown = [e for e in events if e.actor.id in actors.value]
    if not shown:
        raise not_found()
    together = not group_key.startswith("ungrouped-")
    return {
        "accounts": [entities.account(actors.value[e.actor.id], urls) for e in shown],
        "statuses": [status] if status is not None else [],
        "notification_groups": [_group_entity(shown, status, together)],
    }


def notification_group_accounts(request, group_key: str) -> list:
    """Who is in the group, newest first (the six it remembers; its older ones
    are counted, not kept); `[]` for a group that is not there or not shown, as
    Mastodon answers."""
    try:
        return notification_group(request, group_key)["accounts"]
    except ApiError as error:
        if error.status != 404:
            raise
        return []


def notification_group_dismiss(request, group_key: str) -> dict:
    """Take the whole group out (one event, for an `ungrouped-<id>` key); `{}`
    whether or not it was there, as Mastodon answers: a retry is no error, and
    the answer tells nothing of a group hidden from the viewer."""
    type_, _, name = group_key.rpartition("-")
    if type_ == "ungrouped":
        try:
            notification_dismiss(request, name)
        except ApiError as error:
            if error.status != 404:
                raise
        return {}
    kind = KIND_OF.get(type_)
    if kind is not None:
        store.notification_group_dismiss(user=request.user, kind=kind, name=name)
    return {}


def _unread_count(
    request, counts: dict[str, bool], every_kind: bool, actor: int | None = None
) -> dict:
    """`{"count": n}`: the viewer's unread notifications (above the page's read
    mark, which is the notifications marker: `api.views.markers`), counted as
    `counts` says (`notifications_unread_counted_queue`), at most `limit` (100,
    at most 1000), as Mastodon's count from its marker."""
    most = Window.of(request, default=100, maximum=1000).limit
    unread = notifications_unread_counted_queue(
        request.reads, most=most, counts=counts, every_kind=every_kind, actor=actor
    )
    if unread is None or request.reads.proven_uid() is None:
        raise ApiError(401, "The access token is invalid")
    return {"count": unread.value}


def notifications_unread_count_v1(request) -> dict:
    """How many events arrived since the viewer last read them (each group's
    events, its older actors too), of the types `types[]` and `exclude_types[]`
    leave and of the account `account_id` names (a name that is no id: none),
    as the list's; at most `limit`, as Mastodon 4.3's v1 count."""
    values = request.GET
    kinds = _kinds(values)
    raw_actor = param(values, "account_id")
    if raw_actor is not None and not raw_actor.isdecimal():
        kinds = []  # no such account: nothing of it, as the list
    actor = int(raw_actor) if raw_actor and raw_actor.isdecimal() else None
    return _unread_count(
        request,
        {k: True for k in kinds},
        every_kind=set(kinds) == set(TYPE_OF),
        actor=actor,
    )


def notifications_unread_count(request) -> dict:
    """How many entries the v2 list would show that arrived since the viewer
    last read them: a group of a type `grouped_types[]` groups is one, another's
    each event, as the list shows them; of the types `types[]` and
    `exclude_types[]` leave; at most `limit`, as Mastodon's."""
    kinds = _kinds(request.GET)
    grouped = _grouped_types(request.GET)
    counts = {k: not _kind_together(k, grouped) for k in kinds}
    return _unread_count(request, counts, every_kind=set(kinds) == set(TYPE_OF))


index = endpoint(GET=Op(notifications_list, scope="read:notifications"))
grouped_index = endpoint(GET=Op(notifications_grouped, scope="read:notifications"))
unread_count = endpoint(GET=Op(notifications_unread_count, scope="read:notifications"))
unread_count_v1 = endpoint(
    GET=Op(notifications_unread_count_v1, scope="read:notifications")
)
group = endpoint(GET=Op(notification_group, scope="read:notifications"))
group_accounts = endpoint(
    GET=Op(notification_group_accounts, scope="read:notifications")
)
group_dismiss = endpoint(
    POST=Op(notification_group_dismiss, scope="write:notifications")
)
detail = endpoint(GET=Op(notification_show, scope="read:notifications"))
dismiss = endpoint(POST=Op(notification_dismiss, scope="write:notifications"))
clear = endpoint(POST=Op(notifications_clear, scope="write:notifications"))
