"""Redis key names of the client API's own state. Pure functions, no I/O: this
docstring is the schema.

| key                | type | contents                                       | cap / TTL                      |
|--------------------|------|------------------------------------------------|--------------------------------|
| `idem:{<uid>}`     | hash | sha256(Idempotency-Key header) hex ->          | TTL IDEMPOTENCY_SECONDS (1 h), |
|                    |      | `<claimed at, unix seconds>:<sid>` of the      | renewed by each claim; fields  |
|                    |      | status a `POST /api/v1/statuses` with that key | older than the hour pruned at  |
|                    |      | made (`<at>:` while the post is under way);    | each claim past IDEMPOTENCY_   |
|                    |      | `api.idempotency`                              | PRUNE_AT fields (the posting   |
|                    |      |                                                | budget bounds new ones); gone  |
|                    |      |                                                | with the account               |

The user id is the hash tag: the hash lives in its owner's slot, with the rest of
their keys (`accounts/keys.py`).
"""

from __future__ import annotations

IDEMPOTENCY_SECONDS = 3600  # Mastodon keeps a key's status for an hour
IDEMPOTENCY_PRUNE_AT = 200


def idempotency(uid: int) -> str:
    return f"idem:{{{uid}}}"
