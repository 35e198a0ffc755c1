"""Safety: blocks, mutes and follow requests (the site's `timeline.blocks` and
`timeline.privacy`), each answered as Mastodon does."""

from __future__ import annotations

from accounts import limits
from api.http import ApiError, Op, Reply, endpoint, not_found
from api.pagination import Window
from api.views.accounts import (
    ACCOUNTS_LIMIT,
    ACCOUNTS_MAX,
    accounts_reply,
    relationship_reply,
    target_get,
)
from timeline import blocks, privacy, selectors


def account_block(request, id: str) -> dict:
    """Block: the follows both ways end (the same service and budget as the site)."""
    viewer = request.user
    target = target_get(request, id)
    blocks.block_create(
        blocker=viewer, blocked_id=target.id, limit=limits.follow(viewer.id)
    )
    return relationship_reply(request, target.id)


def account_unblock(request, id: str) -> dict:
    viewer = request.user
    target = target_get(request, id)
    blocks.block_delete(
        blocker=viewer, blocked_id=target.id, limit=limits.follow(viewer.id)
    )
    return relationship_reply(request, target.id)


def account_mute(request, id: str) -> dict:
    """Mute: their statuses leave the home (`duration` and `notifications` are not
    kept: a mute lasts until undone, and covers notifications)."""
    viewer = request.user
    target = target_get(request, id)
    blocks.mute_create(user=viewer, muted_id=target.id, limit=limits.follow(viewer.id))
    return relationship_reply(request, target.id)


def account_unmute(request, id: str) -> dict:
    viewer = request.user
    target = target_get(request, id)
    blocks.mute_delete(user=viewer, muted_id=target.id, limit=limits.follow(viewer.id))
    return relationship_reply(request, target.id)


block = endpoint(POST=Op(account_block, scope="write:blocks"))
unblock = endpoint(POST=Op(account_unblock, scope="write:blocks"))
mute = endpoint(POST=Op(account_mute, scope="write:mutes"))
unmute = endpoint(POST=Op(account_unmute, scope="write:mutes"))


def _own_list(request, relation: str, *, muted: bool = False) -> Reply:
    window = Window.of(request, default=ACCOUNTS_LIMIT, maximum=ACCOUNTS_MAX)
    rows = selectors.own_rows_get(
        reads=request.reads,
        relation=relation,
        max_id=window.max_id,
        since_id=window.since_id,
        min_id=window.min_id,
        limit=window.limit,
    )
    if rows is None:
        raise ApiError(401, "The access token is invalid")
    return accounts_reply(request, rows, window, muted=muted)


def blocks_list(request) -> Reply:
    """Whom the viewer blocks, newest first, paged by the time of the block."""
    return _own_list(request, "blocks")


def mutes_list(request) -> Reply:
    """Whom the viewer mutes (MutedAccounts), newest first."""
    return _own_list(request, "mutes", muted=True)


def follow_requests_list(request) -> Reply:
    """Who asks to follow the viewer, newest request first."""
    return _own_list(request, "follow_requests")


blocked = endpoint(GET=Op(blocks_list, scope="read:blocks"))
muted = endpoint(GET=Op(mutes_list, scope="read:mutes"))
follow_requests = endpoint(GET=Op(follow_requests_list, scope="read:follows"))


def request_authorize(request, id: str) -> dict:
    """Approve a follow request (from the follow budget, as the site); 404 when
    this user asked nothing."""
    viewer = request.user
    requester_id = int(id)
    if not privacy.follow_request_approve(
        owner=viewer, requester_id=requester_id, limit=limits.follow(viewer.id)
    ):
        raise not_found()
    return relationship_reply(request, requester_id)


def request_reject(request, id: str) -> dict:
    """Deny a follow request (the requester is not told); 404 when there was none."""
    viewer = request.user
    requester_id = int(id)
    if not privacy.follow_request_deny(owner=viewer, requester_id=requester_id):
        raise not_found()
    return relationship_reply(request, requester_id)


authorize = endpoint(POST=Op(request_authorize, scope="write:follows"))
reject = endpoint(POST=Op(request_reject, scope="write:follows"))
