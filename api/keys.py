"""Redis key names of the client API's own state. Pure functions, no I/O: this
docstring is the schema (the API's access tokens live with the user's sessions, in
`accounts/keys.py`).

| key                       | type   | contents                                 | cap / TTL                          |
|---------------------------|--------|------------------------------------------|------------------------------------|
| `oauthapp:{<client_id>}`  | hash   | an app registered by `POST /api/v1/apps` | one per registration, each taken   |
|                           |        | (`api.domain.OAuthApp`): name, website,  | from the client address's apps     |
|                           |        | redirect URIs (newline-separated),       | budget (RATE_LIMIT_APPS, 10/5m and |
|                           |        | scopes (space-separated), the SHA-256 of | 100/1d); TTL 1 day                 |
|                           |        | its client secret (never the secret),    | (`api.services.APP_UNUSED_TTL`)    |
|                           |        | created (unix seconds)                   | until a user authorizes it, then   |
|                           |        |                                          | none (PERSIST): an app someone     |
|                           |        |                                          | uses lasts, as on Mastodon         |
| `oauthcode:<sha256 hex>`  | string | an authorization code's grant, by the    | TTL 10 minutes; redeemed (GETDEL)  |
|                           |        | code's SHA-256 (never the code): JSON of | once                               |
|                           |        | client id, uid, redirect URI, scopes,    |                                    |
|                           |        | PKCE challenge (`api.domain.AuthCode`)   |                                    |
| `idem:{<uid>}`            | hash   | sha256(Idempotency-Key header) hex ->    | TTL IDEMPOTENCY_SECONDS (1 h),     |
|                           |        | `<claimed at, unix seconds>:<sid>` of    | renewed by each claim; fields      |
|                           |        | the status a `POST /api/v1/statuses`     | older than the hour pruned at each |
|                           |        | with that key made, `<at>:s<n>` of the   | claim past IDEMPOTENCY_PRUNE_AT    |
|                           |        | scheduled status (`scheduled:{<uid>}`'s  | fields (the posting budget bounds  |
|                           |        | id n; written with it); `<at>:` or       | new ones); gone with the account   |
|                           |        | `<at>:p<sid>` while the post is          |                                    |
|                           |        | unsettled (`api.idempotency`)            |                                    |

A client id is 43 URL-safe characters (checked before it reaches a key); each app is
its own slot. A code is one key, read and deleted in one command. `idem:{<uid>}` has
the user id as its hash tag: it lives in its owner's slot, with the rest of their keys
(the script that schedules a status settles its key's field with the entry).
"""

from __future__ import annotations

IDEMPOTENCY_SECONDS = 3600  # Mastodon keeps a key's status for an hour
IDEMPOTENCY_PRUNE_AT = 200


def app(client_id: str) -> str:
    return f"oauthapp:{{{client_id}}}"


def auth_code(code_hash: str) -> str:
    return f"oauthcode:{code_hash}"


def idempotency(uid: int) -> str:
    return f"idem:{{{uid}}}"
