"""Redis key names for statuses, follows and timelines. Pure functions, no I/O.

Per-user keys carry the user id as a hash tag (`{42}`), shared with `accounts/keys.py`,
so everything one user owns sits in one Cluster slot: a script may read
`following:{42}` and write `home:{42}` atomically. Steps that span users (fan-out, the
two sides of a follow) are separate single-slot steps, each idempotent.

| key                  | type   | members -> score                          | cap / reason                              |
|----------------------|--------|-------------------------------------------|-------------------------------------------|
| `statuses:clock:{c<n>}` | string | the last id tick of id shard n (0-255)| ID_SHARDS (256) keys; see `timeline/ids.py`|
|                      |        | ids without one global counter            |                                           |
| `status:<sid>`       | hash   | uid, author (username), text, created     | one per status; deleted with it; fields:  |
|                      |        |                                           | `timeline.domain.Status`                  |
| `posts:{<uid>}`      | zset   | status id -> status id                    | uncapped: the author's own record, the    |
|                      |        |                                           | source of backfills and of the profile    |
| `home:{<uid>}`       | zset   | status id -> status id                    | HOME_TIMELINE_CAP (1000), trimmed on add  |
| `followers:{<uid>}`  | zset   | follower uid -> follow time (microsecs)   | one entry per follower (the graph itself) |
| `following:{<uid>}`  | zset   | followee uid -> follow time (microsecs)   | one entry per followee (the graph itself) |
| `follower_names:{<uid>}` | hash | follower uid -> follower's username     | one field per entry of `followers:{<uid>}`|
|                      |        | (names never change), so a profile names  | written and removed with it               |
|                      |        | the people in common from the owner's slot|                                           |
| `followlock:{<uid>}` | string | token of the follow/unfollow in progress  | TTL 10 s; serializes one user's follows   |
| `timeline:global:{g<p>}` | zset | status id -> status id, for the statuses | GLOBAL_TIMELINE_CAP each, trimmed on add; |
|                      |        | whose id is p modulo GLOBAL_PARTITIONS (8)| partitions, so no key is written by every |
|                      |        | merged on read (`timeline.selectors`);    | post; the page reads all 8 in one trip    |
|                      |        | member 0 marks where a trimmed one ends   |                                           |
| `users:popular`      | zset   | uid -> follower count, set after a follow | top POPULAR_CAP (100), trimmed on write;  |
|                      |        | or unfollow from that user's ZCARD        | suggestions for new users                 |
| `store:layout`       | string | the key layout the store was upgraded to  | one key; set by `manage.py upgrade_store` |
|                      |        | (`timeline/upgrades.py: LAYOUT`); absent  | or on first use of an empty store         |
|                      |        | on a store no upgrade has checked yet     | (`timeline/upgrades.py`), never lowered   |

Scores equal members in the status zsets so that pages are cut by id
(`ZREVRANGEBYSCORE key max_id -inf LIMIT 0 n`), and integer members and scores keep a
capped timeline in a compact listpack (see `config/embedded.py: TUNING`).
"""

ID_SHARDS = 256
GLOBAL_PARTITIONS = 8


def status_clock(shard: int) -> str:
    """The id clock of one id shard (0 <= shard < ID_SHARDS)."""
    return f"statuses:clock:{{c{shard}}}"


def legacy_status_ids() -> str:
    """Layouts 1-2 only: the one counter every post incremented."""
    return "statuses:next_id"


def status(sid: int) -> str:
    return f"status:{sid}"


def posts(uid: int) -> str:
    return f"posts:{{{uid}}}"


def home(uid: int) -> str:
    return f"home:{{{uid}}}"


def followers(uid: int) -> str:
    return f"followers:{{{uid}}}"


def following(uid: int) -> str:
    return f"following:{{{uid}}}"


def follower_names(uid: int) -> str:
    return f"follower_names:{{{uid}}}"


def followers_pattern() -> str:
    """SCAN pattern matching every followers zset (upgrades and admin tools only)."""
    return "followers:{*}"


def followers_owner(key: str) -> int | None:
    """The uid whose followers zset `key` is (a key SCAN matched), else None."""
    prefix, suffix = followers_pattern().split("*")
    uid = key.removeprefix(prefix).removesuffix(suffix)
    if not (uid.isascii() and uid.isdigit()) or followers(int(uid)) != key:
        return None
    return int(uid)


def follow_lock(uid: int) -> str:
    return f"followlock:{{{uid}}}"


def global_partition(sid: int) -> str:
    """The global timeline's partition that holds status `sid`."""
    return f"timeline:global:{{g{sid % GLOBAL_PARTITIONS}}}"


def global_partitions() -> list[str]:
    return [global_partition(p) for p in range(GLOBAL_PARTITIONS)]


def legacy_global_timeline() -> str:
    """Layouts 1-2 only: the global timeline in one zset."""
    return "timeline:global"


def popular_users() -> str:
    return "users:popular"


def store_layout() -> str:
    return "store:layout"
