"""Accounts: the token's own user, other people, and the follow graph."""

from __future__ import annotations

from api import entities
from api.http import ApiError, Op, endpoint
from timeline.selectors import accounts_queue


def verify_credentials(request) -> dict:
    """The token's own user, with `source` (what the settings page edits)."""
    reads = request.reads
    uid = reads.claimed_uid
    found = accounts_queue(reads, [uid]) if uid is not None else None
    viewer = request.user
    if found is None or not viewer.is_authenticated or viewer.id not in found.value:
        raise ApiError(401, "The access token is invalid")
    return entities.account(
        found.value[viewer.id], entities.Urls.of(request), source=True
    )


verify = endpoint(GET=Op(verify_credentials, scope=("read:accounts", "profile")))
