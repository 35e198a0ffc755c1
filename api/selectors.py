"""Reads of the API's own data: registered apps."""

from __future__ import annotations

from api import keys
from api.domain import SECRET_RE, OAuthApp
from config.pipelines import Deferred, ReadBatch
from config.redis import get_redis


def app_queue(reads: ReadBatch, *, client_id: str) -> Deferred[OAuthApp | None]:
    """Queue a read of a registered app; None when there is none (or the id is
    malformed, which never reaches a key)."""
    if not SECRET_RE.match(client_id or ""):
        return reads.queue(lambda pipe: None, lambda replies: None)
    return reads.queue(
        lambda pipe: pipe.hmget(keys.app(client_id), OAuthApp.FIELDS),
        lambda replies: OAuthApp.from_fields(client_id, replies[0]),
    )


def app_get(*, client_id: str) -> OAuthApp | None:
    """The registered app with this client id, or None: one round trip."""
    if not SECRET_RE.match(client_id or ""):
        return None
    return OAuthApp.from_fields(
        client_id, get_redis().hmget(keys.app(client_id), OAuthApp.FIELDS)
    )
