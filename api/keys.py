"""Redis key names of the client API. Pure functions, no I/O: this docstring is the
schema (the API's per-user keys, its tokens, live in `accounts/keys.py`).

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

A client id is 43 URL-safe characters (checked before it reaches a key); each app is
its own slot. A code is one key, read and deleted in one command.
"""


def app(client_id: str) -> str:
    return f"oauthapp:{{{client_id}}}"


def auth_code(code_hash: str) -> str:
    return f"oauthcode:{code_hash}"
