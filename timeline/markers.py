"""Markers (Mastodon's): where a user stopped reading their home and their
notifications, saved by their apps so that another device, or another app, picks
up there. Writes here; the read is `selectors.markers_queue`.

Only the two timelines exist, so a user's markers are one small hash in their
slot, `markers:{<uid>}` (`timeline.domain.Marker` names its fields): a save of
both is one script, atomic, so two apps saving at once never lose a version, and
there is no conflict to answer (Mastodon's 409 is its row lock losing a race).
As Mastodon's `lock_version`, a marker's first save is its version 0 and each
save that moves it adds one; a save that moves nothing changes nothing, its time
included.

**The notifications marker is the page's read mark.** The site already keeps
where a user has read their notifications up to, `notifications_read:{<uid>}`
(`timeline.notifications`): the badge and both unread counts of the API count
what is above it, as Mastodon 4.3's count is of what is above this marker. A
second position would be a second truth: read in an app, the site's badge would
still say unread, and the other way round. So the marker's position is the mark
itself. Saving it from an app raises the mark (an app that read its
notifications clears the badge), and the page's "read" (`notifications_mark_read`)
is a save of the marker like any other (its version and time move too), so an
app reads where the page left off. The mark keeps its rules: it only rises
(an app with a stale view cannot make read notifications unread again, as
Mastodon's own web app only ever saves a newer marker), and never past the
newest group, so whatever arrives later is unread. It comes down by itself only
when the groups above it go (dismissed, or about a deleted status: nothing that
is there becomes unread) and goes with a clear (none left; the marker then reads
0): neither is a save. The mark is a place (a group's time in ms, see
`timeline.notifications`); the client API turns it into its notification ids and
back. The hash is new beside the layout (no upgrade step): a mark the page kept
before it has no version and no time, so its marker is answered from its next
save, on the page or in an app, rather than with a made-up time.

The home marker is the app's alone (the home page keeps no read position): the
status id it saved, kept as saved, lower than the last one too (Mastodon keeps
whatever an app sends). The account's deletion deletes the hash
(`timeline.fanout._account_keys`), and a save refuses a user deleted or being
deleted, so one let in before the deletion leaves nothing behind its job.
"""

from __future__ import annotations

import time

from accounts import keys as account_keys
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from timeline import keys
from timeline.domain import Marker

# KEYS: the markers hash, the notifications read mark, the notification groups,
# the user hash. ARGV: now (unix ms), the home position ('' to leave it: a
# canonical decimal, so equal ids are equal strings), the notifications place
# ('' to leave it), then Marker.FIELDS, then the user hash's username and deleted
# fields. Saves each timeline given: home's id as it is; the read mark raised to
# the place, never beyond the top group's place, never lowered. A timeline's first
# save stamps it version 0, a later one adds one only when its position moved.
# Returns FIELDS' values, then the mark; nothing, and writes nothing, for a user
# deleted or being deleted (as `services._LIVE`: a save let in before the deletion
# must not leave a hash behind its job).
_SAVE = LuaScript(
    """
if redis.call('HEXISTS', KEYS[4], ARGV[9]) == 0
    or redis.call('HEXISTS', KEYS[4], ARGV[10]) == 1 then
  return false
end
local h, now = KEYS[1], ARGV[1]
local function stamp(version, at, moved)
  if redis.call('HEXISTS', h, version) == 0 then
    redis.call('HSET', h, version, 0, at, now)
  elseif moved then
    redis.call('HINCRBY', h, version, 1)
    redis.call('HSET', h, at, now)
  end
end
if ARGV[2] ~= '' then
  local moved = redis.call('HGET', h, ARGV[4]) ~= ARGV[2]
  redis.call('HSET', h, ARGV[4], ARGV[2])
  stamp(ARGV[5], ARGV[6], moved)
end
if ARGV[3] ~= '' then
  local old = tonumber(redis.call('GET', KEYS[2]) or '0')
  local top = redis.call('ZREVRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  local moved = false
  if top[2] then
    local want = math.min(tonumber(ARGV[3]), tonumber(top[2]))
    if want > old then
      redis.call('SET', KEYS[2], string.format('%d', want))
      moved = true
    end
  end
  stamp(ARGV[7], ARGV[8], moved)
end
local reply = redis.call('HMGET', h, ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
reply[6] = redis.call('GET', KEYS[2])
return reply
"""
)


def markers_save(
    *, user: User, home: int | None = None, notifications: int | None = None
) -> dict[str, Marker]:
    """Save the user's position in their home (a status id) and/or their
    notifications (a place: the read mark rises to it, see the module doc) in one
    atomic step in their slot; the markers of the timelines given, as saved (none
    for a user deleted or being deleted)."""
    values = pipeline_run(
        lambda pipe: _SAVE.queue(
            pipe,
            keys=[
                keys.markers(user.id),
                keys.notifications_read(user.id),
                keys.notifications(user.id),
                account_keys.user(user.id),
            ],
            args=[
                time.time_ns() // 1_000_000,
                "" if home is None else str(int(home)),
                "" if notifications is None else int(notifications),
                *Marker.FIELDS,
                User.USERNAME_FIELD,
                User.DELETED_FIELD,
            ],
        )
    )[0]
    if values is None:
        return {}  # the user is deleted, or being deleted: nothing saved
    found = Marker.from_fields(values[:5], values[5])
    asked = {"home": home, "notifications": notifications}
    return {t: m for t, m in found.items() if asked[t] is not None}
