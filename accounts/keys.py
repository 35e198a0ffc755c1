"""Redis key names for accounts. Pure functions, no I/O: this docstring is the schema.

Every per-user key carries the user id as a hash tag (`{42}`), so one user's keys
(here and in `timeline/keys.py`) live in one Cluster slot and a script may touch
them together.

| key                         | type   | contents                                   | cap / TTL                         |
|-----------------------------|--------|--------------------------------------------|-----------------------------------|
| `users:next_id`             | string | last user id handed out (INCR)             | one key                           |
| `user:{<uid>}`              | hash   | username (display spelling), password      | one per user; never grows;        |
|                             |        | (Django hash), created (unix seconds);     | fields: `accounts.domain.User`;   |
|                             |        | once deleted: no password, `deleted` (unix | deleted by the account job        |
|                             |        | seconds): no page finds the user any more  | (`timeline.fanout.run_account`)   |
| `username:<lowercase name>` | string | uid; claimed with SET NX, so one per name; | one per user; a deleted account's |
|                             |        | a deleted account's: `deleted:<uid>`       | TTL ACCOUNT_NAME_GRACE_DAYS       |
| `sessions:{<uid>}`          | hash   | sha256(token) hex -> expiry (unix seconds) | AUTH_MAX_DEVICES fields; key TTL  |
|                             |        |                                            | = the latest expiry               |
| `seen:{<uid>}`              | string | the day (days since 1970, UTC) the user    | TTL FANOUT_ACTIVE_DAYS: its       |
|                             |        | was last seen; written at most once a day  | absence makes the user inactive,  |
|                             |        | (`timeline.services.reader_seen`)          | skipped by fan-out until back     |
| `loginfail:user:<lowercase>`| string | failed logins for that name in the window  | TTL LOGIN_FAILURE_WINDOW_SECONDS  |
| `loginfail:client:<ip>`     | string | failed logins from that client             | TTL LOGIN_FAILURE_WINDOW_SECONDS  |
"""


def user_ids() -> str:
    return "users:next_id"


def user(uid: int) -> str:
    return f"user:{{{uid}}}"


def user_pattern() -> str:
    """SCAN pattern matching every user hash (admin tools only)."""
    return "user:{*}"


def username(name: str) -> str:
    return f"username:{name.lower()}"


def sessions(uid: int) -> str:
    return f"sessions:{{{uid}}}"


def seen(uid: int) -> str:
    return f"seen:{{{uid}}}"


def login_failures_user(name: str) -> str:
    return f"loginfail:user:{name.lower()}"


def login_failures_client(client: str) -> str:
    return f"loginfail:client:{client}"


def legacy_store_epoch() -> str:
    """Layout 1 only: a per-store token; `manage.py upgrade_store` deletes it."""
    return "store:epoch"
