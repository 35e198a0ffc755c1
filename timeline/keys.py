"""Redis key names for statuses, follows and timelines. Pure functions, no I/O.

Per-user keys carry the user id as a hash tag (`{42}`), shared with `accounts/keys.py`,
so everything one user owns sits in one Cluster slot: a script may read
`following:{42}` and write `home:{42}` atomically. Steps that span users (fan-out, the
two sides of a follow) are separate single-slot steps, each idempotent. A deleted
account's job (`account:<uid>`) deletes every per-user key of both tables
(`timeline.fanout._account_keys`, which a new per-user key must join).

The streaming API's pub/sub channels (`api.streaming`) are named here too, below the
table: they hold nothing (no slot: a Cluster broadcasts PUBLISH to every node) and
carry signals, ids, never a rendered status (each stream reads for its own reader):

| channel                   | message                        | published by                         |
|---------------------------|--------------------------------|--------------------------------------|
| `stream:home:{<uid>}`     | `home`, `notification`,        | a home write (`services.HOME_ADD_LUA`'s `add`, the author's own in `_PUBLISH`), `notifications.notify`, a direct message's delivery (`direct._PUBLISH`, `_DELIVER`); only while `home:{<uid>}:streamed` exists, in the same script |
|                           | `conversation`, `pulls`        | `pulls`: a follow of a pulled author (`services._follow_sync`, in its last round trip, unchecked): the streams subscribe to the author's channel |
| `stream:author:<uid>`     | status id                      | a pulled author's post job (`fanout.run_post`: no home write) |
| `stream:public`           | `<sid> <tag> <tag>...`         | `services.status_publish` (global timeline and tags) |
| `stream:deleted`          | status id                      | `services.status_remove`             |
| `stream:edited`           | status id                      | `edits.status_edit`                  |

| key                  | type   | members -> score                          | cap / reason                              |
|----------------------|--------|-------------------------------------------|-------------------------------------------|
| `statuses:clock:{c<n>}` | string | the last id tick of id shard n (0-255)| ID_SHARDS (256) keys; see `timeline/ids.py`|
|                      |        | ids without one global counter            |                                           |
| `status:<sid>`       | hash   | uid, author (username), text, created     | one per status; deleted with it; fields:  |
|                      |        |                                           | `timeline.domain.Status`                  |
|                      |        | reply_to, reply_uid, thread (a reply's    | hashes older than issue #12 lack them: no |
|                      |        | parent, its author, older ancestors),     | migration, they load as 0 / None          |
|                      |        | repost_of, repost_uid, repost_author (a   |                                           |
|                      |        | repost's original); likes, reposts,       |                                           |
|                      |        | replies: counts, HINCRBY with their zset  |                                           |
|                      |        | mentions (JSON {lowercase name: uid}, the | absent when none (and in older hashes:    |
|                      |        | `@names` that named a user at post time)  | read as none, no migration)               |
|                      |        | unlisted (`1`); spoiler (a content warning| absent when none (older hashes: none)     |
|                      |        | on one line: `timeline.domain.Status`)    |                                           |
|                      |        | conversation (a reply's or repost's: the  | written since layout 7; upgrade_store     |
|                      |        | sid its thread began with)                | gives older ones theirs (layout 8)        |
|                      |        | edited (unix s of the last edit; a repost | absent until edited (older hashes: never) |
|                      |        | carries its original's)                   |                                           |
|                      |        | poll (JSON: options, closing time, flags; | absent without one (older hashes: none);  |
|                      |        | a repost carries its original's), tally   | tally absent until the first vote;        |
|                      |        | (`<voters> <votes of each option>`), and  | one `v:` field a voter (as one likes      |
|                      |        | `v:<uid>` -> a voter's choices            | member a liker), deleted with the status  |
|                      |        | (`timeline.polls`); poll_job (`1` once    | poll_job absent until the post job queued |
|                      |        | its closing job was queued: once)         | the closing job (older hashes: none)      |
|                      |        | quote (JSON: the quoted status's id,      | absent without one (older hashes: none, no|
|                      |        | author id and name, text, warning, time,  | migration); a repost carries its          |
|                      |        | the id it quotes in turn, or that one's   | original's; quotes: a count, HINCRBY with |
|                      |        | deletion, written by its unlink job:      | `quotes:{status:<sid>}`                   |
|                      |        | `Quote`), quotes (how many quote it)      |                                           |
| `edits:{status:<sid>}` | list | the versions an edit replaced, oldest     | EDITS_MAX (20): past it, edits are        |
|                      |        | first, each JSON {text, spoiler, mentions,| refused with a message; deleted with the  |
|                      |        | at} (`timeline.edits`)                    | status by its `unlink` job                |
| `poll_voters:{status:<sid>}` | zset | voter uid -> vote time (ms), written | one per voter (their choices are the  |
|                      |        | with their `v:<uid>` field by the vote    | hash's `v:` fields): walked when the poll |
|                      |        | script (`timeline.polls`): whom its       | closes and by the status's `unlink` job,  |
|                      |        | closing tells, and whose notification of  | which deletes it                          |
|                      |        | it a deletion takes back                  |                                           |
| `likes:{status:<sid>}` | zset | liker uid -> like time (microsecs), in    | one per standing like; deleted with the   |
|                      |        | the status's slot (`timeline.social`)     | status by its `unlink` job                |
| `reposts:{status:<sid>}` | zset | reposter uid -> the repost's sid       | one per standing repost (a repost is a    |
|                      |        |                                           | status); deleted with the original        |
| `quotes:{status:<sid>}` | zset | `<quoting sid>:<its author uid>` -> the   | QUOTES_MAX (10,000): past it, a quote is  |
|                      |        | quoting sid: the statuses quoting this one| refused with a message; deleted with the  |
|                      |        | (`timeline.quotes`), written by the       | quoted status by its `unlink` job (the    |
|                      |        | quote's request and again its post job    | quotes stay, "unavailable"); a quote      |
|                      |        | (`social.link_posted`), with the count    | deleted leaves it in its `unlinkq` job    |
| `replies:{status:<sid>}` | zset | `<reply sid>:<its author uid>` -> reply   | one per reply still standing; deleted     |
|                      |        | sid (the author, for the page's privacy   | with the status (replies stay, orphaned)  |
|                      |        | check in the same round trip)             |                                           |
| `liked:{<uid>}`      | zset   | sid -> like time (microsecs): the other   | uncapped: one per standing like (removed  |
|                      |        | side of `likes:{status:<sid>}`, walked by | by unlike and by the status's deletion),  |
|                      |        | the account's deletion, listed to its     | grown only within RATE_LIMIT_LIKE         |
|                      |        | owner (`selectors.favourites_window`)     |                                           |
| `bookmarks:{<uid>}`  | zset   | `<sid>:<author uid>` -> bookmark time     | BOOKMARKS_MAX (10,000): past it, refused  |
|                      |        | (microsecs): the statuses the user saved  | with a message; one of a status deleted   |
|                      |        | for later, private to them (the author    | since is skipped on read, dropped when    |
|                      |        | too: the list checks who may see each in  | the list is full (`timeline.bookmarks`)   |
|                      |        | the round trip that reads the statuses)   |                                           |
| `pins:{<uid>}`       | zset   | sid -> pin time (microsecs): the user's   | PINS_MAX (5): past it, refused with a     |
|                      |        | own statuses shown first on their profile | message; a status leaves it in the script |
|                      |        | (`timeline.pins`)                         | that unpublishes it                       |
| `conversation_mutes:{<uid>}` | zset | conversation id (the sid its thread | CONVERSATION_MUTES_MAX (10,000): past it, |
|                      |        | began with, `Status.conversation_id`) ->  | the oldest mute goes (no page lists them, |
|                      |        | mute time (microsecs): no notification of | a deleted thread cannot be unmuted)       |
|                      |        | a status in one reaches the user          |                                           |
|                      |        | (`timeline.conversations`)                |                                           |
| `scheduled:{<uid>}`  | hash   | n -> a status waiting for its time (JSON: | SCHEDULED_MAX (300) waiting, 25 due a day:|
|                      |        | at, text, spoiler, unlisted, reply_to),   | past them, refused with a message; an     |
|                      |        | `next` -> the last n given; each posted by| entry goes when posted or cancelled; the  |
|                      |        | its `schedule:<uid>:<n>` job at its time  | account's deletion deletes the key        |
|                      |        | (`timeline.scheduled`)                    |                                           |
| `filters:{<uid>}`    | hash   | `f:<fid>` -> a keyword filter (JSON:      | FILTERS_MAX (100) filters, RULES_MAX      |
|                      |        | title, context, action, expires),         | (1,000) keywords and statuses in all:     |
|                      |        | `k:<fid>:<kid>` -> a keyword (JSON),      | past them, refused with a message; the    |
|                      |        | `s:<fid>:<n>` -> a status id, `next` ->   | account's deletion deletes the key        |
|                      |        | the last id given (`timeline.filters`)    |                                           |
| `direct:{<uid>}`     | zset   | status id -> status id: the user's direct | none: the user's own messages (as         |
|                      |        | messages (`timeline.direct`)              | `posts`); deleted with the account, each  |
|                      |        |                                           | message first                             |
| `conversations:{<uid>}` | zset | conversation (the id of the direct message| CONVERSATIONS_MAX (1,000): past it, the   |
|                      |        | it began with) -> the id of its newest    | least recent goes; a conversation whose   |
|                      |        | message the user may see                  | messages are all deleted goes; deleted    |
|                      |        |                                           | with the account                          |
| `conversation_sids:{<uid>}` | hash | conversation -> `<its newest message | CONVERSATION_SIDS_KEPT (50) ids each, one |
|                      |        | ids, ascending>|<the others in it>`       | field per conversation above              |
|                      |        | (space-separated ids)                     |                                           |
| `conversations_unread:{<uid>}` | set | the conversations with a message | at most the conversations above           |
|                      |        | the user has not read                     |                                           |
| `lists:{<uid>}`      | hash   | `<lid>` -> one of the user's lists (JSON: | LISTS_MAX (50) lists: past it, refused    |
|                      |        | title, replies_policy, exclusive), `next` | with a message; ids never given twice     |
|                      |        | -> the last id given (`timeline.lists`)   | (`next` stays); deleted with the account  |
| `list_members:{<uid>}` | zset | `<lid>:<member uid>` -> 0: who is on each | MEMBERSHIPS_MAX (5,000) in all and        |
|                      |        | of the user's lists (one list's members   | LIST_MEMBERS_MAX (500) a list: past them, |
|                      |        | by ZRANGEBYLEX `[<lid>:` `(<lid>;`: equal | refused with a message; a member the user |
|                      |        | scores, as lex ranges need); members are  | no longer follows is dropped by the       |
|                      |        | followed: in `following:{<uid>}`'s slot   | unfollow's last step, and never read      |
|                      |        |                                           | (each read checks `following`); deleted   |
|                      |        |                                           | with the account                          |
| `followed_tags:{<uid>}` | zset | case-folded tag (`richtext.tag_key`) ->  | FOLLOWED_TAGS_MAX (100): past it, refused |
|                      |        | follow time (microsecs): the tags whose   | with a message (the API's 422); deleted   |
|                      |        | timelines the user's home merges at read  | with the account                          |
|                      |        | (`timeline.tagfollows`, `selectors`)      |                                           |
| `list_exclusive:{<uid>}` | zset | member uid -> 0: who is on any of the | at most MEMBERSHIPS_MAX (derived from     |
|                      |        | user's exclusive lists, derived from the  | `list_members`); rewritten whole by every |
|                      |        | two keys above in the same script that    | change of the lists (`timeline.lists`     |
|                      |        | changes them (`timeline.lists._WRITE`):   | `_WRITE`); deleted with the account;      |
|                      |        | the authors the fan-out keeps out of the  | `timelines repair` rebuilds one out of    |
|                      |        | user's home, and the home read leaves out | line (a store from before it)             |
| `posts:{<uid>}`      | zset   | status id -> status id                    | uncapped: the author's own record, the    |
|                      |        |                                           | source of backfills and of the profile    |
| `home:{<uid>}`       | zset   | status id -> status id                    | HOME_TIMELINE_CAP (1000), trimmed on add  |
| `home:{<uid>}:streamed` | string | `1` while the user has a stream open  | TTL STREAM_PRESENCE_SECONDS (90), set     |
|                      |        | (`api.streaming`): home and notification  | again by each open stream every heartbeat;|
|                      |        | writers publish on `stream:home:{<uid>}`  | never deleted (another stream of the user |
|                      |        | only while it is, in their own step       | may be open): it expires                  |
| `followers:{<uid>}`  | zset   | follower uid -> follow time (microsecs)   | one entry per follower (the graph itself) |
| `following:{<uid>}`  | zset   | followee uid -> follow time (microsecs)   | one entry per followee (the graph itself) |
| `follower_names:{<uid>}` | hash | follower uid -> follower's username     | one field per entry of `followers:{<uid>}`|
|                      |        | (names never change), so a profile names  | written and removed with it               |
|                      |        | the people in common from the owner's slot|                                           |
| `pulls:{<uid>}`      | zset   | followee uid -> follow time, for the      | one entry per followee in pull mode: a    |
|                      |        | followees whose statuses the home merges  | part of `following:{<uid>}`, removed with |
|                      |        | at read (`fanout:{<uid>}` not push)       | the follow, in the same atomic step       |
| `fanout:{<uid>}`     | string | how the user's statuses reach followers:  | one per author past FANOUT_PUSH_MAX       |
|                      |        | absent = pushed to homes; `pulling`,      | followers; absent again once pushed       |
|                      |        | `pull`, `pushing` (`timeline.fanout`)     |                                           |
| `outbox:{<uid>}`     | hash   | sid -> the status's fields (JSON), for    | OUTBOX_CAP (HOME_TIMELINE_CAP) newest     |
|                      |        | authors not pushed: a home reads them     | statuses, trimmed on post; deleted when   |
|                      |        | from the author's slot in one call        | the author is pushed again                |
| `blocks:{<uid>}`     | zset   | blocked uid -> block time (microsecs):    | BLOCKS_MAX (10,000): a block past it is   |
|                      |        | the truth of the user's blocks            | refused with a message                    |
|                      |        | (`timeline/blocks.py`)                    |                                           |
| `blocked_by:{<uid>}` | zset   | blocker uid -> block time: the other side | one entry per person who blocks the user  |
|                      |        | of `blocks:{<blocker>}`, in the blocked   | (not capped: dropping one would let that  |
|                      |        | person's slot, for their pages and checks | blocker's statuses through)               |
| `mutes:{<uid>}`      | zset   | muted uid -> mute time (microsecs): the   | MUTES_MAX (10,000): past it, refused      |
|                      |        | authors the user's home leaves out        |                                           |
| `streamers`          | zset   | one server only (a Cluster has none): uid | the users with a stream open: each        |
|                      |        | -> when their `home:{<uid>}:streamed`     | stream's heartbeat drops the expired      |
|                      |        | expires (ms), written with it; the push   | (ZREMRANGEBYSCORE), so it holds those of  |
|                      |        | asks it for a step's readers in one call  | the last STREAM_PRESENCE_SECONDS only     |
|                      |        | (ZMSCORE), not each reader's key          |                                           |
| `muters`             | string | one server only (a Cluster has none): a   | one bit per uid (uids are counted up: 1   |
|                      |        | bitmap, bit <uid> set while `mutes:{uid}` | MiB per 8 million users); never a bit     |
|                      |        | or `list_exclusive:{uid}` is not empty:   | clear for someone with home skips: the    |
|                      |        | "has home skips" (written in the script   | fan-out reads `mutes:{uid}` and           |
|                      |        | that changes either, `timeline/blocks.py`,| `list_exclusive:{uid}` only where it is   |
|                      |        | `timeline/lists.py`; filled by            | set (`timeline.fanout`); cleared by the   |
|                      |        | upgrade_store, layout 6)                  | account job                               |
| `follow_requests:{<uid>}` | zset | requester uid -> request time (us): the | FOLLOW_REQUESTS_MAX (10,000) pending: a   |
|                      |        | truth of who asks to follow this private  | request past it is refused with a message |
|                      |        | account (`timeline/privacy.py`)           | (none dropped: each has its other side)   |
| `requested:{<uid>}`  | zset   | followee uid -> request time (us): the    | FOLLOW_REQUESTS_MAX: past it the user     |
|                      |        | other side, in the requester's slot (the  | must cancel some first                    |
|                      |        | deletion's and repair's walks)            |                                           |
| `followlock:{<uid>}` | string | token of the follow/unfollow in progress  | TTL 10 s; serializes one user's follows   |
| `timeline:global:{g<p>}` | zset | status id -> status id, for the statuses | GLOBAL_TIMELINE_CAP each, trimmed on add; |
|                      |        | whose id is p modulo GLOBAL_PARTITIONS (8)| partitions, so no key is written by every |
|                      |        | merged on read (`timeline.selectors`);    | post; the page reads all 8 in one trip    |
|                      |        | member 0 marks where a trimmed one ends   |                                           |
| `tag:{t:<tag>}`      | zset   | status id -> status id, for the public    | TAG_TIMELINE_CAP (1000) each, trimmed on  |
|                      |        | statuses with `#tag` (`<tag>` case folded,| add; written by the post's fan-out job,   |
|                      |        | `timeline.richtext.tag_key`)              | removed by the delete, the account job and|
|                      |        |                                           | the private sweep                         |
| `trends:{tr}:<hour>` | zset   | case-folded tag -> how many public        | one per hour (unix time // 3600), TTL     |
|                      |        | statuses posted that hour carry it and    | TRENDS_HOURS + 1 hours; one member per tag|
|                      |        | still show on its page (counted once, by  | used that hour; a tag counted down to 0   |
|                      |        | the post job; down when the status leaves)| goes                                      |
| `trends:{tr}:counted:<hour>` | set | `+<sid> <tag>`: counted in the hour's | one per hour, TTL as the hour's counts;   |
|                      |        | counts; `-<sid> <tag>`: deleted (never    | one member per tagged status and tag of   |
|                      |        | counted again)                            | the hour (`services._TREND_COUNT`)        |
| `trends:{tr}:top:<hour>` | string | JSON list tag, count, ... : the top   | one per hour; TTL 2 x                     |
|                      |        | TRENDS_SHOWN tags of the TRENDS_HOURS     | TRENDS_REFRESH_SECONDS, written again by  |
|                      |        | hours up to `<hour>`, added up by a       | a worker each interval (the global page   |
|                      |        | worker (`timeline/trends.py`)             | adds the hours up itself while it is gone)|
| `suggestions:{<uid>}` | zset  | candidate uid -> how many of the user's   | SUGGESTIONS_CAP (50), rebuilt whole by    |
|                      |        | followees follow them (friends of friends,| the `suggest:<uid>` job after a follow    |
|                      |        | `timeline/suggestions.py`)                | change; deleted with the account          |
| `suggestions_dismissed:{<uid>}` | zset | dismissed uid -> dismissal time     | SUGGESTION_DISMISSALS_MAX (1,000): past   |
|                      |        | (microsecs): whom the user took out of    | it the oldest dismissal goes (that person |
|                      |        | "who to follow" (the page's Dismiss, the  | may be suggested again); never an id that |
|                      |        | API's DELETE /api/v1/suggestions/:id);    | does not exist (yet); a dismissed account |
|                      |        | never suggested again, by either source   | deleted since stays (ids are never given  |
|                      |        | (`timeline/suggestions.py`)               | again); deleted with the account          |
| `report:{reports}:<id>` | hash | a report (`timeline.reports.Report`):    | one per report in the two zsets below;    |
|                      |        | reporter and target (uid and name then),  | deleted when its settled entry is dropped |
|                      |        | category, comment, created (unix ms),     | (REPORTS_SETTLED_MAX); stays when either  |
|                      |        | statuses (JSON: each flagged status's id, | account is deleted (the operators'        |
|                      |        | text, warning, time as filed: a copy that | record); REPORT_STATUSES_MAX (20) statuses|
|                      |        | outlives an edit or a delete); settled,   | each                                      |
|                      |        | note once settled                         |                                           |
| `reports:{reports}:ids` | string | the last report id given              | one key                                   |
| `reports:{reports}:open` | zset | report id -> created (ms): what the     | REPORTS_OPEN_MAX (10,000): past it, a new |
|                      |        | operators read, oldest first (`manage.py` | report is refused with a message (none is |
|                      |        | `reports`)                                | dropped)                                  |
| `reports:{reports}:settled` | zset | report id -> settled (ms)           | REPORTS_SETTLED_MAX (10,000): past it the |
|                      |        |                                           | oldest settled go, with their hashes      |
| `users:popular`      | zset   | uid -> follower count, set after a follow | top POPULAR_CAP (100), trimmed on write;  |
|                      |        | or unfollow from that user's ZCARD        | suggestions for new users                 |
| `jobs:{q<k>}`         | zset   | job id -> when it is due (unix ms); while | one queue per Cluster slot (the tag `q<k>`|
|                      |        | a worker holds it, when its lease ends    | is the one that hashes to that slot), so  |
|                      |        | (`timeline/jobs.py`)                      | a job joins the queue of its owner's slot |
|                      |        |                                           | in the owner's atomic step; an entry goes |
|                      |        |                                           | when its job is done or fails for good    |
| `jobdata:{q<k>}`     | hash   | `<job id>#<f>` -> the job's bookkeeping:  | fields of the jobs in `jobs:{q<k>}` and   |
|                      |        | s created (ms), a attempts, t lease token,| `jobs:failed:{q<k>}` only; removed with   |
|                      |        | c cursor, e last error, q due time asked  | them                                      |
|                      |        | by a queueing while the job ran (ms)      |                                           |
| `jobs:failed:{q<k>}` | zset   | job id -> when it failed for good (ms)    | JOB_FAILED_CAP per slot, oldest dropped;  |
|                      |        |                                           | `timelines repair` runs them again        |
| `jobs:ready:{r<n>}`  | zset   | slot -> when a job was queued there (ms): | JOB_READY_SHARDS (16) keys, one member    |
|                      |        | the wake-up call for workers              | per slot at most; popped by workers       |
| `notifications:{<uid>}` | zset | group -> its place (ms): the time of its | NOTIFICATIONS_CAP (500) groups, oldest    |
|                      |        | newest event, raised to one above the top | dropped with their rows and actors in the |
|                      |        | so each is unique and a new one is on top | same step (`timeline.notifications`)      |
| `notification:{<uid>}` | hash | group -> the group as JSON (kind, sid,    | one field per group of the zset above     |
|                      |        | newest actors, count, time): one owner,   |                                           |
|                      |        | `timeline.domain.Notification`            |                                           |
| `notification_actors:{<uid>}` | zset | `<group>` and `<actor>` joined by a bar | GROUP_ACTORS_MAX (1,000) per group; past  |
|                      |        | -> 0: who is in each group (lex ranges by | it an actor is counted, not remembered    |
|                      |        | group), so a repeat counts once and an    | (counts stay exact below it)              |
|                      |        | undo takes out exactly the one counted    |                                           |
| `notification_follows:{<uid>}` | zset | `<kind>` and `<actor>` joined by a bar | one per remembered actor of a follow or   |
|                      |        | -> the day (UTC) of the follow group that | follow-request group; dropped with it     |
|                      |        | holds that actor, for an unfollow         |                                           |
| `notifications_read:{<uid>}` | string | the place up to which the user has | one per user; only raised, never lowered  |
|                      |        | read (groups above it are unread): also   |                                           |
|                      |        | the position of the client API's          |                                           |
|                      |        | notifications marker (`timeline.markers`) |                                           |
| `markers:{<uid>}`    | hash   | the user's markers (`timeline.markers`,   | 5 fields: only the two timelines exist;   |
|                      |        | `timeline.domain.Marker`): `home` (the    | deleted with the account                  |
|                      |        | last status read, as an app saved it),    |                                           |
|                      |        | `<timeline>_version` (saves that moved    |                                           |
|                      |        | it, from 0), `<timeline>_at` (unix ms of  |                                           |
|                      |        | the last), for home and notifications     |                                           |
| `counts:{q<k>}`      | hash   | the site's size in one slot's users       | one per slot holding users (CLUSTER_SLOTS |
|                      |        | (`timeline/counts.py`): users (sign-ups   | at most), 3 fields; in the slot of its    |
|                      |        | completed, not closed), statuses (in      | users (the tag of `jobs:{q<k>}`), changed |
|                      |        | their `posts`), joined (sign-ups ever)    | in the step that makes the change         |
| `counts:site`        | hash   | users, statuses: every slot's counts      | one key, 3 fields; written by one fan-out |
|                      |        | added up; at: when (unix s). What the     | worker every SITE_COUNTS_SECONDS, by seed,|
|                      |        | instance reads (one HMGET)                | upgrade and repair; never by a post       |
| `counts:site:claim`  | string | a worker's token: its turn to add the     | one key, TTL SITE_COUNTS_SECONDS (SET NX) |
|                      |        | site's counts up this interval            |                                           |
| `store:layout`       | string | the key layout the store was upgraded to  | one key; set by `manage.py upgrade_store` |
|                      |        | (`timeline/upgrades.py: LAYOUT`); absent  | or on first use of an empty store         |
|                      |        | on a store no upgrade has checked yet     | (`timeline/upgrades.py`), never lowered   |
| `upgrade:conversations` | hash | old conversation id -> the first status | only while upgrade_store's layout 8 step  |
|                      |        | of its thread: what the step renamed, for | runs (one entry per renamed conversation);|
|                      |        | the mutes of since-deleted statuses       | deleted when it ends                      |

Scores equal members in the status zsets so that pages are cut by id
(`ZREVRANGEBYSCORE key max_id -inf LIMIT 0 n`), and integer members and scores keep a
capped timeline in a compact listpack (see `config/embedded.py: TUNING`).

Notifications a user caused in others' stores (likes, mentions, ...) stay when the
user's account is deleted: nothing indexes the recipients from the actor, and the
page leaves out deleted actors at read (as it does blocked and muted ones). Their
follows and follow requests are the exception: the deletion job walks those anyway,
and takes them out of the "followed you" and "asked to follow you" groups.

Reports share one slot (the tag `{reports}`), so filing one (its id under the open
cap; then its hash and its entry in the open zset, the cap checked again: each script
declares the keys it touches, the hash's only once its id is known) and settling one
are scripts in that slot. One
slot for every report is fine where it would not be for statuses: reports are rare
(RATE_LIMIT_REPORT per user) and only operators read them, so the slot is never hot.

Blocks and mutes: a page reads at most HIDE_READ_MAX (1,000) entries of each of the
viewer's `blocks`, `blocked_by` and `mutes` in its first round trip, and asks a longer
set about its own statuses' authors in one more (`timeline.selectors`).
"""

import functools
from collections.abc import Callable

from redis.crc import key_slot

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


def edits(sid: int) -> str:
    """The earlier versions of status `sid` (`timeline.edits`), in its slot."""
    return f"edits:{{status:{sid}}}"


def poll_voters(sid: int) -> str:
    """Who voted in status `sid`'s poll: in the status hash's slot."""
    return f"poll_voters:{{status:{sid}}}"


def likes(sid: int) -> str:
    """Who liked status `sid`: in the status hash's slot (tag `{status:<sid>}`)."""
    return f"likes:{{status:{sid}}}"


def reposts(sid: int) -> str:
    return f"reposts:{{status:{sid}}}"


def replies(sid: int) -> str:
    return f"replies:{{status:{sid}}}"


def quotes(sid: int) -> str:
    return f"quotes:{{status:{sid}}}"


def liked(uid: int) -> str:
    return f"liked:{{{uid}}}"


def bookmarks(uid: int) -> str:
    """The statuses user `uid` bookmarked (`timeline.bookmarks`), in their slot."""
    return f"bookmarks:{{{uid}}}"


def pins(uid: int) -> str:
    """The statuses user `uid` pinned to their profile (`timeline.pins`)."""
    return f"pins:{{{uid}}}"


def scheduled(uid: int) -> str:
    """User `uid`'s statuses waiting for their time (`timeline.scheduled`)."""
    return f"scheduled:{{{uid}}}"


def filters(uid: int) -> str:
    """User `uid`'s keyword filters (`timeline.filters`), read with every page."""
    return f"filters:{{{uid}}}"


def lists(uid: int) -> str:
    """User `uid`'s lists (`timeline.lists`): their titles and reply policies."""
    return f"lists:{{{uid}}}"


def list_members(uid: int) -> str:
    """Who is on each of user `uid`'s lists (`timeline.lists`), in their slot with
    `following`, so one script checks a member is followed as it adds them."""
    return f"list_members:{{{uid}}}"


def followed_tags(uid: int) -> str:
    """The tags user `uid` follows (`timeline.tagfollows`): their home merges those
    tags' timelines at read."""
    return f"followed_tags:{{{uid}}}"


def list_exclusive(uid: int) -> str:
    """Who is on any of user `uid`'s exclusive lists (`timeline.lists`), derived
    from their lists in the same script that changes them: the authors the fan-out
    keeps out of their home."""
    return f"list_exclusive:{{{uid}}}"


def list_exclusive_pattern() -> str:
    """SCAN pattern matching every list_exclusive zset (admin tools only)."""
    return "list_exclusive:{*}"


def lists_pattern() -> str:
    """SCAN pattern matching every lists hash (admin tools only)."""
    return "lists:{*}"


def conversation_mutes(uid: int) -> str:
    """The conversations user `uid` muted (`timeline.conversations`), in their slot."""
    return f"conversation_mutes:{{{uid}}}"


def posts(uid: int) -> str:
    return f"posts:{{{uid}}}"


def home(uid: int) -> str:
    return f"home:{{{uid}}}"


def home_streamed(uid: int) -> str:
    """Set (with a TTL) while user `uid` has a stream open (`api.streaming`): the
    writers of their home and notifications publish a signal only while it is, in
    the same step as their write. In the home's slot: its name is the home's and a
    suffix (`services.HOME_ADD_LUA` builds it so)."""
    return f"{home(uid)}:streamed"


# Pub/sub channels of the streaming API (`api.streaming`). Not keys (no slot: a
# Cluster broadcasts PUBLISH to every node), named here all the same. Each carries
# ids (a signal), never a rendered status: each stream reads what it points at for
# its own reader.


def stream_user(uid: int) -> str:
    """User `uid`'s signals: `home` (their home gained a status), `notification`,
    `conversation` (a direct message reached them). The home's name and a prefix
    (`services.HOME_ADD_LUA` builds it so)."""
    return f"stream:{home(uid)}"


def stream_author(uid: int) -> str:
    """The id of each status of author `uid` posted while they are pulled (no home
    write: the followers' streams read their homes on it)."""
    return f"stream:author:{uid}"


def stream_public() -> str:
    """`<sid> <tag> <tag>...` of each status published to the global timeline."""
    return "stream:public"


def stream_deleted() -> str:
    """The id of each status deleted."""
    return "stream:deleted"


def stream_edited() -> str:
    """The id of each status edited."""
    return "stream:edited"


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
    return key_owner(key, followers_pattern())


def pulls(uid: int) -> str:
    return f"pulls:{{{uid}}}"


def fanout_mode(uid: int) -> str:
    return f"fanout:{{{uid}}}"


def outbox(uid: int) -> str:
    return f"outbox:{{{uid}}}"


def posts_pattern() -> str:
    """SCAN pattern matching every posts zset (admin tools only)."""
    return "posts:{*}"


def direct_pattern() -> str:
    """SCAN pattern matching every user's direct messages zset (admin tools only)."""
    return "direct:{*}"


def conversation_sids_pattern() -> str:
    """SCAN pattern matching every user's conversations' message ids (admin tools)."""
    return "conversation_sids:{*}"


def home_pattern() -> str:
    """SCAN pattern matching every home zset (admin tools only)."""
    return "home:{*}"


def following_pattern() -> str:
    """SCAN pattern matching every following zset (admin tools only)."""
    return "following:{*}"


def upgrade_conversations() -> str:
    """upgrade_store's record, while its layout 8 step runs, of the conversations
    it renamed (old id -> the first status of its thread), for the mutes of a
    since-deleted status; deleted when the step ends (`timeline.upgrades`)."""
    return "upgrade:conversations"


def status_pattern() -> str:
    """SCAN pattern matching every status hash (admin tools only): `key_owner`
    reads a match's sid."""
    return "status:*"


def conversation_mutes_pattern() -> str:
    """SCAN pattern matching every muted-conversations zset (admin tools only)."""
    return "conversation_mutes:{*}"


def key_owner(key: str, pattern: str) -> int | None:
    """The uid whose per-user key `key` (matched by SCAN with `pattern`) is, else None."""
    prefix, suffix = pattern.split("*")
    uid = key.removeprefix(prefix).removesuffix(suffix)
    if not (uid.isascii() and uid.isdigit()) or f"{prefix}{uid}{suffix}" != key:
        return None
    return int(uid)


def blocks(uid: int) -> str:
    return f"blocks:{{{uid}}}"


def blocked_by(uid: int) -> str:
    return f"blocked_by:{{{uid}}}"


def mutes(uid: int) -> str:
    return f"mutes:{{{uid}}}"


def streamers() -> str:
    """One server only: uid -> when their presence key expires (unix ms), for each
    user with a stream open: the push reads it for a whole step at once
    (`fanout._FOLLOWERS_PUSH`) instead of each reader's presence key."""
    return "streamers"


def muters() -> str:
    """One server only: the bitmap of who has home skips (bit <uid>): mutes
    anyone, or has anyone on an exclusive list."""
    return "muters"


def mutes_pattern() -> str:
    """SCAN pattern matching every mutes zset (admin tools only)."""
    return "mutes:{*}"


def blocks_pattern() -> str:
    """SCAN pattern matching every blocks zset (admin tools only)."""
    return "blocks:{*}"


def blocked_by_pattern() -> str:
    """SCAN pattern matching every blocked_by zset (admin tools only)."""
    return "blocked_by:{*}"


def follow_requests(uid: int) -> str:
    return f"follow_requests:{{{uid}}}"


def requested(uid: int) -> str:
    return f"requested:{{{uid}}}"


def follow_requests_pattern() -> str:
    """SCAN pattern matching every follow_requests zset (admin tools only)."""
    return "follow_requests:{*}"


def requested_pattern() -> str:
    """SCAN pattern matching every requested zset (admin tools only)."""
    return "requested:{*}"


def notifications(uid: int) -> str:
    return f"notifications:{{{uid}}}"


def notification_groups(uid: int) -> str:
    return f"notification:{{{uid}}}"


def notification_actors(uid: int) -> str:
    return f"notification_actors:{{{uid}}}"


def notification_follows(uid: int) -> str:
    return f"notification_follows:{{{uid}}}"


def notifications_read(uid: int) -> str:
    return f"notifications_read:{{{uid}}}"


def direct(uid: int) -> str:
    """User `uid`'s direct messages, by id (`timeline.direct`)."""
    return f"direct:{{{uid}}}"


def conversations(uid: int) -> str:
    """User `uid`'s conversations of direct messages, by their newest message."""
    return f"conversations:{{{uid}}}"


def conversation_sids(uid: int) -> str:
    """The newest message ids of each of user `uid`'s conversations."""
    return f"conversation_sids:{{{uid}}}"


def conversations_unread(uid: int) -> str:
    """User `uid`'s conversations with a message they have not read."""
    return f"conversations_unread:{{{uid}}}"


def markers(uid: int) -> str:
    """User `uid`'s read positions saved by apps (`timeline.markers`)."""
    return f"markers:{{{uid}}}"


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


def tag_timeline(tag: str) -> str:
    """The timeline of one case-folded tag (word characters only, so never a `}`)."""
    return f"tag:{{t:{tag}}}"


def tag_timeline_pattern() -> str:
    """SCAN pattern matching every tag's timeline (admin tools only)."""
    return "tag:{t:*}"


def trends(hour: int) -> str:
    """The tag counts of one hour (unix time // 3600); every hour in one slot, so a
    page reads the last few in one request to one node."""
    return f"trends:{{tr}}:{hour}"


def trends_counted(hour: int) -> str:
    """Which statuses one hour's tag counts took (and which left before they were
    counted), so a count and a count-down each happen once whatever their order
    (`services._TREND_COUNT`); in the hours' slot."""
    return f"trends:{{tr}}:counted:{hour}"


def trends_top(hour: int) -> str:
    """The trending tags of the TRENDS_HOURS hours up to `hour`, added up by a worker
    (`timeline.trends`); in the hours' slot, so one script reads or writes them all."""
    return f"trends:{{tr}}:top:{hour}"


def suggestions(uid: int) -> str:
    return f"suggestions:{{{uid}}}"


def suggestions_dismissed(uid: int) -> str:
    """Whom the user dismissed from their suggestions; in their slot, beside
    `suggestions:{<uid>}`, so one script dismisses from both."""
    return f"suggestions_dismissed:{{{uid}}}"


def report(rid: int) -> str:
    """Report `rid` (`timeline.reports`): every report key shares the tag
    `{reports}`, one slot."""
    return f"report:{{reports}}:{rid}"


def report_ids() -> str:
    """The last report id given."""
    return "reports:{reports}:ids"


def reports_open() -> str:
    """Open reports, oldest first (score: when filed, ms)."""
    return "reports:{reports}:open"


def reports_settled() -> str:
    """Settled reports (score: when settled, ms), the newest REPORTS_SETTLED_MAX."""
    return "reports:{reports}:settled"


def popular_users() -> str:
    return "users:popular"


CLUSTER_SLOTS = 16384
JOB_READY_SHARDS = 16


@functools.cache
def _slot_tags() -> tuple[str, ...]:
    """For each Cluster slot, the shortest tag `q<k>` that hashes to it (pure: the
    same table in every process; about 50 ms to build, once)."""
    tags: list[str | None] = [None] * CLUSTER_SLOTS
    left, k = CLUSTER_SLOTS, 0
    while left:
        tag = f"q{k}"
        slot = key_slot(tag.encode())
        if tags[slot] is None:
            tags[slot] = tag
            left -= 1
        k += 1
    return tuple(tags)  # type: ignore[arg-type]


def slot_of_user(uid: int) -> int:
    """The Cluster slot of everything user `uid` owns (on one server: a queue shard)."""
    return key_slot(f"{uid}".encode())


def job_queue(slot: int) -> str:
    """The job queue of one slot: it shares the slot of the users whose jobs it holds."""
    return f"jobs:{{{_slot_tags()[slot]}}}"


@functools.cache
def job_queues() -> tuple[str, ...]:
    """Every slot's job queue, slot by slot (the sweep's)."""
    return tuple(job_queue(slot) for slot in range(CLUSTER_SLOTS))


def job_data(slot: int) -> str:
    return f"jobdata:{{{_slot_tags()[slot]}}}"


def job_failed(slot: int) -> str:
    return f"jobs:failed:{{{_slot_tags()[slot]}}}"


def job_ready(slot: int) -> str:
    """The wake-up shard that announces jobs queued in `slot`."""
    return f"jobs:ready:{{r{slot % JOB_READY_SHARDS}}}"


def job_ready_shards() -> list[str]:
    return [f"jobs:ready:{{r{n}}}" for n in range(JOB_READY_SHARDS)]


def counts(slot: int) -> str:
    """The counts of the users of one slot, in that slot (the tag of its job queue)."""
    return f"counts:{{{_slot_tags()[slot]}}}"


def counts_pattern() -> str:
    """SCAN pattern matching every slot's counts (admin tools only)."""
    return "counts:{*}"


def counts_slot(key: str) -> int | None:
    """The slot whose counts `key` (matched by SCAN with `counts_pattern`) are."""
    tag = key.removeprefix("counts:{").removesuffix("}")
    slot = key_slot(tag.encode())
    return slot if counts(slot) == key else None


def counts_site() -> str:
    """The site's totals, as a fan-out worker last added the slots' counts up."""
    return "counts:site"


def counts_site_claim() -> str:
    """The turn of the worker that adds the site's counts up this interval."""
    return "counts:site:claim"


def store_layout() -> str:
    return "store:layout"


def around_id(key_of: Callable[[int], str]) -> tuple[str, str]:
    """What goes before and after an id in `key_of(id)`: for a script that builds
    such keys itself (one server only: `timeline.selectors._STATUSES_RELATED_READ`)."""
    before, _, after = key_of("\x00").partition("\x00")  # type: ignore[arg-type]
    return before, after
