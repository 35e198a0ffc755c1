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
|                             |        | seconds): no page finds the user any more; | (`timeline.fanout.run_account`)   |
|                             |        | a private account: `private` (unix seconds |                                   |
|                             |        | it turned private; absent: public, so no   |                                   |
|                             |        | migration for users made before it);       |                                   |
|                             |        | the profile's face: `name` (display name,  |                                   |
|                             |        | at most 50 code points), `bio` (at most    |                                   |
|                             |        | 300), `avatar` (version of the uploaded    |                                   |
|                             |        | avatar, 16 hex digits); absent: the        |                                   |
|                             |        | username and the generated avatar (no      |                                   |
|                             |        | migration); `apps_revoked` (unix seconds:  |                                   |
|                             |        | the last "log out everywhere" or password  |                                   |
|                             |        | change; codes issued before give no token);|                                   |
|                             |        | `unindexed` (1: written by the sign-up,    |                                   |
|                             |        | deleted once `users:names` holds the user; |                                   |
|                             |        | left by a sign-up cut short, the next      |                                   |
|                             |        | log-in writes the entries; absent in older |                                   |
|                             |        | hashes: indexed by layout 5, no migration; |                                   |
|                             |        | its drop completes the sign-up, counted in |                                   |
|                             |        | the slot's `counts:{q<k>}`, timeline/keys) |                                   |
| `avatar:{<uid>}`            | hash   | `v`: the version (as the user hash's       | one per user, at most             |
|                             |        | `avatar`), `img`: the WebP bytes (256x256, | AVATAR_MAX_BYTES (64 KB) of       |
|                             |        | re-encoded, no metadata); read by the      | image; deleted on removal and by  |
|                             |        | bytes client (`config.redis`)              | the account job                   |
| `users:names`               | zset   | `<lowercase username>NUL<uid>` and         | one or two members per user       |
|                             |        | `<casefolded display name>NUL<uid>`, all   | (username, display name): removed |
|                             |        | score 0: the people search's prefix index  | on rename and by the account job; |
|                             |        | (ZRANGEBYLEX)                              | filled by upgrade_store (layout 5)|
| `username:<lowercase name>` | string | uid; claimed with SET NX, so one per name; | one per user; a deleted account's |
|                             |        | a deleted account's: `deleted:<uid>`       | TTL ACCOUNT_NAME_GRACE_DAYS       |
| `sessions:{<uid>}`          | hash   | sha256(token) hex -> expiry (unix seconds) | AUTH_MAX_DEVICES fields; key TTL  |
|                             |        |                                            | = the latest expiry               |
| `devices:{<uid>}`           | hash   | sha256(token) hex -> JSON of the device at | only fields of `sessions:{<uid>}` |
|                             |        | sign-in: created, browser label, address   | (pruned, revoked and expiring     |
|                             |        | (`accounts.domain.Device`); a session made | with them, in the same steps); it |
|                             |        | before it existed has none (shown as an    | is never read by the auth check   |
|                             |        | unknown device; no migration)              |                                   |
| `apptokens:{<uid>}`        | hash   | sha256(API access token) hex -> JSON of    | AUTH_MAX_APP_TOKENS (100) fields, |
|                             |        | its grant: the app (client id, name,       | the oldest dropped when one more  |
|                             |        | website), scopes, created                  | is issued; no TTL (Mastodon's     |
|                             |        | (`accounts.domain.AppGrant`)               | tokens last until revoked);       |
|                             |        |                                            | deleted by password change, "log  |
|                             |        |                                            | out everywhere" and the account   |
|                             |        |                                            | job                               |
| `seen:{<uid>}`              | string | the day (days since 1970, UTC) the user    | TTL FANOUT_ACTIVE_DAYS: its       |
|                             |        | was last seen; written at most once a day  | absence makes the user inactive,  |
|                             |        | (`timeline.services.reader_seen`)          | skipped by fan-out until back     |
| `seen:days`                 | string | one server only (a Cluster has none): two  | 2 bytes per uid up to             |
|                             |        | bytes at offset 2 x uid, big-endian, the   | SEEN_DAYS_MAX_UID (2^25: 64 MiB   |
|                             |        | day of the user's last stamp, written with | at most; uids are counted up, so  |
|                             |        | each stamp the site writes (0: none; the   | about 2 bytes per user); no TTL:  |
|                             |        | layout-4 upgrade's stamps have none): the  | an old day only sends the push to |
|                             |        | fan-out's push takes a stamp at most       | `seen:{<uid>}` itself; zeroed by  |
|                             |        | FANOUT_ACTIVE_DAYS - 2 days old as alive   | the account job                   |
|                             |        | without looking it up (`timeline.fanout`)  |                                   |
| `active:{active}:<day>`     | string | a HyperLogLog of the uids seen that day    | TTL ACTIVE_MONTH_DAYS + 1 days;   |
|                             |        | (days since 1970, UTC): each daily stamp,  | about 12 KB a day at most (a few  |
|                             |        | a sign-up's completion (`accounts.services | hundred bytes while sparse): 32   |
|                             |        | .active_queue`); every day in one slot:    | days, under 400 KB; written once  |
|                             |        | the v2 instance's `active_month` is one    | a day per reader, by nothing else |
|                             |        | PFCOUNT of the last 30 (`timeline.counts`) |                                   |
| `limit:<action>:<N>r<P>s:{<subject>}` | string | GCRA: when the subject's budget of N | TTL: until the budget is whole    |
|                             |        | actions per P seconds is whole again (unix | again (at most P seconds); one    |
|                             |        | microseconds; `accounts/limits.py`).       | key per rate of each RATE_LIMIT_* |
|                             |        | subject: `<uid>` (post, follow: the user's |                                   |
|                             |        | slot), `c:<client>` (signup, login),       |                                   |
|                             |        | `n:<lowercase name>:<client>` (login)      |                                   |

Clients are IP addresses as `config.http.client_ip` gives them, an IPv6 one as its
/64 network (`accounts.limits`). Layouts up to 4 also had `loginfail:user:<name>` and
`loginfail:client:<ip>` counters; they expire within LOGIN_FAILURE_WINDOW_SECONDS
(300 s) of the last failure, so no upgrade step deletes them.
"""


def user_ids() -> str:
    return "users:next_id"


def user(uid: int) -> str:
    return f"user:{{{uid}}}"


def user_prefix() -> tuple[str, str]:
    """What goes before and after a uid in `user(uid)`: for the one script that
    builds user keys itself (`timeline.selectors._STATUSES_READ`, one server only)."""
    return "user:{", "}"


def avatar(uid: int) -> str:
    return f"avatar:{{{uid}}}"


def names_index() -> str:
    return "users:names"


def names_member(text: str, uid: int) -> str:
    """A member of `users:names`: the casefolded text, NUL, the uid."""
    return f"{text.casefold()}\x00{uid}"


def user_pattern() -> str:
    """SCAN pattern matching every user hash (admin tools only)."""
    return "user:{*}"


def username(name: str) -> str:
    return f"username:{name.lower()}"


def sessions(uid: int) -> str:
    return f"sessions:{{{uid}}}"


def devices(uid: int) -> str:
    return f"devices:{{{uid}}}"


def app_tokens(uid: int) -> str:
    return f"apptokens:{{{uid}}}"


def seen(uid: int) -> str:
    return f"seen:{{{uid}}}"


def seen_days() -> str:
    """One server only: each user's last stamp day, 2 bytes at offset 2 x uid."""
    return "seen:days"


def active_day(day: int) -> str:
    """The users seen on a day (days since 1970, UTC), a HyperLogLog; every day in
    one slot (`{active}`), so one PFCOUNT adds a month up."""
    return f"active:{{active}}:{day}"


def rate_limit(action: str, rate: str, subject: str) -> str:
    """One rate of one subject's limit for an action (`accounts/limits.py`)."""
    return f"limit:{action}:{rate}:{{{subject}}}"


def user_tag(uid: int) -> str:
    """A limit subject in the user's own slot (the hash tag of `user:{<uid>}`)."""
    return str(uid)


def client_tag(client: str) -> str:
    return f"c:{client}"


def name_client_tag(name: str, client: str) -> str:
    return f"n:{name.lower()}:{client}"


def legacy_store_epoch() -> str:
    """Layout 1 only: a per-store token; `manage.py upgrade_store` deletes it."""
    return "store:epoch"
