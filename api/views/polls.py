"""Polls (Mastodon's `/api/v1/polls`): read one, vote in one (`timeline.polls`).

A poll's id is its status's (a poll is made with its status and never changes), so
a poll is seen exactly as its status is: hidden from the viewer, gone, or a status
without one, it is a 404. A reblog's id is a 404 too, as on Mastodon, where a poll
has an id of its own and a reblog none: the `poll` a reblog shows is its
original's, with the original's id (the site's pages vote through a repost's row
by the original's id as well)."""

from __future__ import annotations

from accounts import limits
from api.http import OPTIONAL, Op, endpoint, not_found, param_list, params
from api.views.statuses import READ, WRITE, entities_of
from timeline import polls, selectors


def _poll(request, sid: int) -> dict:
    """The poll of status `sid` as the viewer may see it, with its tally and their
    vote; else 404 (a repost's id too)."""
    found = selectors.status_get(reads=request.reads, sid=sid)
    if found is not None and found.repost_of is not None:
        raise not_found()
    shown = entities_of(request, [found]) if found is not None else []
    poll = shown[0]["poll"] if shown else None
    if poll is None:
        raise not_found()
    return poll


def poll_show(request, id: str) -> dict:
    return _poll(request, int(id))


def poll_vote(request, id: str) -> dict:
    """Vote (`choices[]`: option indexes from 0), from the like budget: the poll
    with the vote counted. A poll the viewer may not see: 404; choices that do not
    fit it, a closed poll, one's own, a second vote: 422 saying which."""
    voted = polls.poll_vote(
        user=request.user,
        sid=int(id),
        choices=param_list(params(request), "choices"),
        limit=limits.like(request.user.id),
        through_repost=False,
    )
    return _poll(request, voted.id)


poll = endpoint(GET=Op(poll_show, scope=READ, auth=OPTIONAL))
votes = endpoint(POST=Op(poll_vote, scope=WRITE))
