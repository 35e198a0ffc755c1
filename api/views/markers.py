"""Markers (Mastodon's `/api/v1/markers`): an app saves where its user stopped
reading their home and their notifications, and reads it back on another device.

The store is `timeline.markers`: the home marker is the status id an app saved;
the notifications marker is the site's own read mark, the one the notifications
page moves and the badge and the unread counts count from, so reading in an app
clears the badge and an app reads where the page left off. The mark is a place
(a group's); a notification's id is `place * ID_SPAN + actor`
(`api.views.notifications`), so a saved id marks its whole group read (the site
reads a group as one) and the marker answers the highest id that group's events
could have: every notification at or below it is read, every one above unread,
by the ids a client compares. A save that names an id above the newest
notification marks them all read and answers the newest group's; one below the
mark leaves it (the mark only rises), and answers the mark. A save reads too
the groups just above its id that the API does not list, up to the next it does
(`_read_place`): an app that read all it was shown clears the badge.
"""

from __future__ import annotations

import re

from api.http import (
    ApiError,
    Op,
    endpoint,
    iso,
    param,
    param_list,
    params,
    unprocessable,
)
from api.views.notifications import ID_SPAN, TYPE_OF
from timeline import markers as store
from timeline.domain import Marker
from timeline.selectors import (
    markers_queue,
    notifications_top_queue,
    notifications_window,
)

# A form's `home[last_read_id]`: the timeline and the field.
_FORM_FIELD = re.compile(r"^([^\[\]]+)\[([^\[\]]+)\]$")
_ID = re.compile(r"^[0-9]{1,19}$")
_ID_MAX = 2**63 - 1  # Mastodon's ids are bigints
# How many groups above a saved id a save looks through for the next one the API
# lists (a page's worth): past them, it reads as far as it looked.
_LOOK_ABOVE = 40


def _last_read_id(marker: Marker) -> str:
    """The marker's position as the client API's id (see the module doc)."""
    if marker.timeline != "notifications":
        return str(marker.position)
    if marker.position <= 0:
        return "0"  # nothing is read: every notification is above it
    return str(marker.position * ID_SPAN + ID_SPAN - 1)


def _entity(marker: Marker) -> dict:
    """Mastodon's Marker entity."""
    return {
        "last_read_id": _last_read_id(marker),
        "version": marker.version,
        "updated_at": iso(marker.at / 1000),
    }


def _answer(found: dict[str, Marker]) -> dict:
    return {timeline: _entity(marker) for timeline, marker in found.items()}


def markers_index(request) -> dict:
    """The viewer's markers of the timelines asked for (`timeline[]`) that were
    ever saved; an unknown timeline is not one (as Mastodon's). A read: it
    rides with the auth check and writes nothing."""
    asked = set(param_list(request.GET, "timeline")) & set(Marker.TIMELINES)
    found = markers_queue(request.reads) if asked else None
    if asked and (found is None or request.reads.proven_uid() is None):
        raise ApiError(401, "The access token is invalid")
    if found is None:
        return {}
    return _answer({t: m for t, m in found.value.items() if t in asked})


def _wanted(values) -> dict[str, int]:
    """The positions a save asks for, by timeline: `home[last_read_id]=…` in a
    form, `{"home": {"last_read_id": "…"}}` in JSON. A timeline the site has not
    is skipped, as Mastodon skips it (an app of a newer version may send one with
    its home's); 422 for a missing or malformed `last_read_id`."""
    given: dict[str, dict] = {}
    for key in values:
        value = values[key]
        if isinstance(value, dict):
            given.setdefault(key, {}).update(value)
        elif found := _FORM_FIELD.match(key):
            given.setdefault(found[1], {})[found[2]] = values.get(key)
    wanted: dict[str, int] = {}
    for timeline, fields in given.items():
        if timeline not in Marker.TIMELINES:
            continue
        raw = param(fields, "last_read_id")
        if raw is None or raw.strip() == "":
            raise unprocessable("Last read can't be blank")
        if not _ID.match(raw) or int(raw) > _ID_MAX:
            raise unprocessable("last_read_id is not an id")
        wanted[timeline] = int(raw)
    return wanted


def _read_place(request, nid: int) -> int:
    """The place an app that read up to notification `nid` has read up to: its
    group's, raised past the groups above it that the API does not list (an
    approved follow request, which has no Mastodon type; an actor muted or
    blocked since) up to the next one it lists, or the top, as read before the
    save (whatever arrives after stays unread). The page marks read up to its top
    group, shown or not; an app that read all it was shown must clear the badge
    and the unread counts too, which count every group above the mark."""
    place = nid // ID_SPAN
    top = notifications_top_queue(request.reads)  # read before the window's
    above = notifications_window(
        reads=request.reads,
        low=place + 1,
        size=_LOOK_ABOVE,
        oldest_first=True,
        kinds=list(TYPE_OF),
    )
    if above is None or top is None or request.reads.proven_uid() is None:
        raise ApiError(401, "The access token is invalid")
    newest = top.value
    if newest is None:
        return place  # nothing there: nothing to read
    listed = [item.place for item in above.items]
    if listed:
        up_to = min(listed) - 1
    elif above.read == _LOOK_ABOVE and above.last_place is not None:
        up_to = above.last_place  # as far as it looked
    else:
        up_to = newest
    return min(max(place, up_to), newest)


def markers_create(request) -> dict:
    """Save the positions given, all in one atomic step; the markers saved."""
    wanted = _wanted(params(request))
    if not wanted:
        return {}  # nothing the site keeps was named: nothing saved (Mastodon's)
    notifications = wanted.get("notifications")
    saved = store.markers_save(
        user=request.user,
        home=wanted.get("home"),
        notifications=None
        if notifications is None
        else _read_place(request, notifications),
    )
    return _answer(saved)


markers = endpoint(
    GET=Op(markers_index, scope="read:statuses"),
    POST=Op(markers_create, scope="write:statuses"),
)
