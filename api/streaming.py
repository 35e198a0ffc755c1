"""The streaming API's plumbing: one pub/sub listener per process, and the streams.

Writers publish signals (ids, never a rendered status) on the channels named in
`timeline.keys` (`stream_*`); see there and the README. Each open stream is a
`Stream`: on a signal it reads what the signal points at *for its own reader*, with
the same selectors and entities as the REST reads (a block, a mute, a filter, a
privacy rule, the home's merge of pulled authors and its reply rule all apply, as
the same code runs), and yields Server-Sent Events frames.

One `_Listener` per process holds ONE pub/sub connection (a thread reading it),
its subscriptions counted per channel, and hands each message to the queues of
the streams that asked for its channel: a stream holds a thread of the web server
(blocked on its queue with a timeout, for the heartbeat), not a Redis connection.
On a Cluster it is redis-py's `RedisCluster.pubsub()` on one node: PUBLISH reaches
every node's subscribers.

Invariant of the process-wide state (`_listener`, `_open`): both are changed under
`_lock` only; a listener whose connection failed is replaced by the next stream that
opens, and every stream it served ends (its client reconnects).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator

import orjson
from django.conf import settings

from accounts.domain import BearerCredentials
from accounts.selectors import PageReads
from api import scopes
from config.middleware import REDIS_OUTAGES
from config.redis import get_redis
from timeline import filters, keys, richtext, selectors, services
from timeline.ids import first_id_at

log = logging.getLogger(__name__)

# How many signals may wait for one stream; past it the stream ends (its client
# reconnects) rather than grow a queue without bound.
QUEUE_MAX = 1000
# How many ids a stream remembers having sent (its `delete` and `status.update`
# are for those only; an older one's take-back is not sent).
SENT_KEPT = 1000
# How many windows (STREAM_READ_SIZE each) one signal's read may take, newest first,
# when more statuses came since the last read than one window holds.
READ_PAGES_MAX = 5


class StreamsFull(Exception):
    """The process serves STREAMS_MAX streams already (503)."""


class _Ended(Exception):
    """The listener's connection failed, or the stream fell too far behind."""


class _Listener:
    """One pub/sub connection and the thread that reads it (see the module)."""

    def __init__(self, client):
        self.client = client
        self.pubsub = client.pubsub()
        self.wanted: dict[str, set[queue.Queue]] = {}
        self.pending: dict[str, list[threading.Event]] = {}
        self.commands: queue.SimpleQueue = queue.SimpleQueue()
        self.dead = False
        self.guard = threading.Lock()
        self.thread = threading.Thread(
            target=self._run, name="streaming-listener", daemon=True
        )
        self.thread.start()

    def add(self, channel: str, inbox: queue.Queue) -> threading.Event:
        """Send `channel`'s messages to `inbox` too; the event is set once the
        subscription is active (at once when another stream holds it)."""
        ready = threading.Event()
        with self.guard:
            holders = self.wanted.setdefault(channel, set())
            first = not holders and channel not in self.pending
            holders.add(inbox)
            if first:
                self.pending[channel] = [ready]
                self.commands.put(("subscribe", channel))
            elif channel in self.pending:
                self.pending[channel].append(ready)
            else:
                ready.set()
        return ready

    def remove(self, channel: str, inbox: queue.Queue) -> None:
        with self.guard:
            holders = self.wanted.get(channel)
            if holders is None:
                return
            holders.discard(inbox)
            if not holders:
                del self.wanted[channel]
                self.commands.put(("unsubscribe", channel))

    def _run(self) -> None:
        try:
            while not self.dead:
                self._commands()
                message = self.pubsub.get_message(timeout=0.05)
                if message is not None:
                    self._dispatch(message)
        except REDIS_OUTAGES as error:
            log.warning("streaming listener lost its connection: %r", error)
        except Exception:  # noqa: BLE001 - any failure ends the streams, not the site
            log.exception("streaming listener failed")
        finally:
            self._end()

    def _commands(self) -> None:
        while True:
            try:
                verb, channel = self.commands.get_nowait()
            except queue.Empty:
                return
            with self.guard:
                held = channel in self.wanted
            if verb == "subscribe" and held:
                self.pubsub.subscribe(channel)
            elif verb == "unsubscribe" and not held:
                self.pubsub.unsubscribe(channel)

    def _dispatch(self, message: dict) -> None:
        kind, channel = message["type"], _text(message["channel"])
        if kind == "subscribe":
            with self.guard:
                for ready in self.pending.pop(channel, []):
                    ready.set()
            return
        if kind != "message":
            return
        with self.guard:
            inboxes = list(self.wanted.get(channel, ()))
        data = _text(message["data"])
        for inbox in inboxes:
            try:
                inbox.put_nowait((channel, data))
            except queue.Full:
                _force(inbox, None)  # too far behind: that stream ends

    def _end(self) -> None:
        with self.guard:
            self.dead = True
            inboxes = {q for holders in self.wanted.values() for q in holders}
            for waiting in self.pending.values():
                for ready in waiting:
                    ready.set()
        for inbox in inboxes:
            _force(inbox, None)
        with contextlib.suppress(Exception):  # closing what already failed
            self.pubsub.close()

    def stop(self) -> None:
        self.dead = True


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _force(inbox: queue.Queue, item) -> None:
    """Put `item` even in a full queue (the end-of-stream mark)."""
    while True:
        try:
            inbox.put_nowait(item)
            return
        except queue.Full:
            with contextlib.suppress(queue.Empty):
                inbox.get_nowait()


_lock = threading.Lock()
_listener: _Listener | None = None
_open = 0


def _listener_now() -> _Listener:
    """The process's listener for the current client, started if need be."""
    global _listener
    client = get_redis()
    with _lock:
        current = _listener
        if current is None or current.dead or current.client is not client:
            if current is not None:
                current.stop()
            _listener = current = _Listener(client)
        return current


def _take_slot() -> None:
    global _open
    with _lock:
        if _open >= settings.STREAMS_MAX:
            raise StreamsFull()
        _open += 1


def _give_slot() -> None:
    global _open
    with _lock:
        _open -= 1


def frame(event: str, payload=None) -> bytes:
    """One SSE message as Mastodon sends it: the event, then its data line (JSON, or
    the text of an id); `filters_changed` has none but an `undefined` line."""
    if payload is None:
        data = b"undefined"
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = orjson.dumps(payload)
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"


HEARTBEAT = b":thump\n"
# The streams of one user's own things: their writers publish only while the user's
# presence key says one is open (`keys.home_streamed`).
_PERSONAL = ("user", "user:notification", "list", "direct")
OPENED = b":)\n"


class Stream:
    """One open stream: its reader's credentials, the channels it hears, and what
    it read for each signal. `kind` is Mastodon's stream name (`user`,
    `user:notification`, `public`, `public:local`, `public:remote`, `hashtag`,
    `hashtag:local`, `list`, `direct`); `tag` for the hashtag streams, `lid` for
    the list stream."""

    def __init__(
        self,
        request,
        *,
        kind: str,
        uid: int,
        tag: str | None = None,
        lid: int | None = None,
    ):
        self.request = request
        self.lid = lid
        self.credentials = request.credentials
        self.kind = kind
        self.uid = uid
        self.tag = richtext.tag_key(tag) if tag else None
        self.inbox: queue.Queue = queue.Queue(maxsize=QUEUE_MAX)
        self.channels: set[str] = set()
        self.sent: OrderedDict[int, None] = OrderedDict()
        self.floor = first_id_at(int(time.time() * 1_000_000))
        self.notified: OrderedDict[tuple, None] = OrderedDict()
        self.notified_floor = 0
        self.listener: _Listener | None = None
        self.closed = False
        # The user stream carries notifications only for a token that may read
        # them (Mastodon's): `read` or `read:notifications`.
        grant = request.reads.grant.value if request.reads.grant is not None else None
        self.notifies = kind == "user:notification" or (
            kind == "user"
            and grant is not None
            and scopes.allows(grant.scopes, "read:notifications")
        )

    # -- what it hears -----------------------------------------------------------

    def _wanted(self) -> set[str]:
        user = keys.stream_user(self.uid)
        if self.kind in ("user", "list"):
            pulled = selectors.pulled_authors(uid=self.uid)
            return {
                user,
                keys.stream_deleted(),
                keys.stream_edited(),
                *(keys.stream_author(a) for a in pulled),
            }
        if self.kind in ("user:notification", "direct"):
            return {user}
        if self.kind == "public:remote":
            return set()  # one instance: nothing is remote
        return {keys.stream_public(), keys.stream_deleted(), keys.stream_edited()}

    def _listen(self) -> None:
        """Hear the channels wanted now (the pulled authors followed may change),
        and wait until new subscriptions are active."""
        wanted = self._wanted()
        listener = self.listener
        waits = [listener.add(c, self.inbox) for c in wanted - self.channels]
        for channel in self.channels - wanted:
            listener.remove(channel, self.inbox)
        self.channels = wanted
        for ready in waits:
            ready.wait(5.0)
        if listener.dead:
            raise _Ended()

    def _present(self) -> None:
        """Say the reader has a stream open, for the writers of their home and
        notifications (`keys.home_streamed`): refreshed each heartbeat."""
        if self.kind in _PERSONAL:
            services.stream_presence_set(uid=self.uid)

    # -- reading for the reader --------------------------------------------------

    def _reads(self) -> PageReads:
        """A fresh read batch for the reader, their token checked again in it (a
        token revoked meanwhile ends the stream) with their filters."""
        reads = PageReads(self.credentials)
        reads.filters = filters.filters_queue(reads, self.uid)
        self.request.reads = reads
        return reads

    def _proven(self, reads: PageReads) -> None:
        if reads.proven_uid() != self.uid:
            raise _Ended()

    def _statuses(self) -> list[bytes]:
        """`update` frames of what the stream's timeline shows, not sent yet and not
        older than the stream, oldest first: read down from the newest a window at
        a time while a whole window is new (more came since the last read than one
        read takes), READ_PAGES_MAX windows at most."""
        from api.views.statuses import entities_of

        size = settings.STREAM_READ_SIZE
        pages = []
        max_id = None
        for _ in range(READ_PAGES_MAX):
            reads = self._reads()
            found = self._window(reads, since_id=self._since(), max_id=max_id)
            self._proven(reads)
            if found is None or not found.statuses:
                break
            fresh = [
                s for s in found.statuses if s.id > self.floor and not self._has(s.id)
            ]
            if fresh:
                pages.append((found, fresh))
            if len(found.statuses) < size or len(fresh) < len(found.statuses):
                break
            max_id = found.statuses[-1].id
        out = []
        for found, fresh in reversed(pages):  # oldest first, as Mastodon sends
            for entity in entities_of(self.request, fresh[::-1], found):
                self._remember(int(entity["id"]))
                if not _hidden(entity):
                    out.append(frame("update", entity))
        return out

    def _has(self, sid: int) -> bool:
        return sid in self.sent

    def _remember(self, sid: int) -> None:
        self.sent[sid] = None
        while len(self.sent) > SENT_KEPT:
            self.sent.popitem(last=False)

    def _since(self) -> int:
        """The lower bound of a read on a signal: a status published late (its
        fan-out job ran after a newer one's) is still found, and the sent set
        keeps any from going twice."""
        back = int((time.time() - settings.STREAM_CATCH_UP_SECONDS) * 1_000_000)
        return max(self.floor, first_id_at(back))

    def _window(self, reads: PageReads, **bounds):
        """The window of the stream's timeline (home, list, public or tag) between
        `bounds`, read for the reader by the REST selectors; None: nothing shows."""
        size = settings.STREAM_READ_SIZE
        if self.lid is not None:
            return selectors.list_window(reads=reads, lid=self.lid, size=size, **bounds)
        if self.kind == "user":
            return selectors.home_window(reads=reads, size=size, **bounds)
        if self.tag is not None:
            return selectors.tag_window(reads=reads, tag=self.tag, size=size, **bounds)
        return selectors.global_window(reads=reads, size=size, **bounds)

    def _home(self) -> list[bytes]:
        return self._statuses()

    def _conversations(self) -> list[bytes]:
        """`conversation` frames of the reader's conversations whose newest message
        came since the stream opened and was not sent yet, as the REST list shows
        them."""
        from api.views.conversations import _entities

        reads = self._reads()
        found = selectors.conversations_get(
            reads=reads, size=settings.STREAM_READ_SIZE, since_id=self._since()
        )
        self._proven(reads)
        if found is None:
            raise _Ended()
        fresh = [
            c
            for c in reversed(found.conversations)
            if c.last.id > self.floor and not self._has(c.last.id)
        ]
        if not fresh:
            return []
        for conversation in fresh:
            self._remember(conversation.last.id)
        return [frame("conversation", c) for c in _entities(self.request, fresh)]

    def _public(self, data: str) -> list[bytes]:
        sid, *tags = data.split()
        if self.tag is not None and self.tag not in {richtext.tag_key(t) for t in tags}:
            return []
        return self._statuses()

    def _notifications(self, *, first: bool = False) -> list[bytes]:
        """`notification` frames of the reader's events above the newest sent (as
        the REST list shows them); the first read only marks where the stream
        starts."""
        from api.views import notifications as rest

        size = settings.STREAM_READ_SIZE
        low = self.notified_floor // rest.ID_SPAN if self.notified_floor else None
        windows = []
        high = None
        # Down from the top a window at a time while a whole window is above the
        # floor (more groups came since the last read than one read takes).
        while True:
            reads = self._reads()
            found = selectors.notifications_window(
                reads=reads, high=high, low=low, size=size
            )
            self._proven(reads)
            if found is None:
                raise _Ended()
            windows.append(found)
            if first or len(found.items) < size or len(windows) >= READ_PAGES_MAX:
                break
            high = min(item.place for item in found.items) - 1
            if low is not None and high < low:
                break
        # An event is its kind, status and actor: a group told again moves up (new
        # ids for every actor of it), and only its new actor is news.
        events = [
            e
            for found in windows
            for e in rest._events(found)
            if _told(e) not in self.notified
        ]
        news = [e for e in events if e.id > self.notified_floor]
        for e in events:
            self.notified[_told(e)] = None
        while len(self.notified) > SENT_KEPT:
            self.notified.popitem(last=False)
        if events:
            self.notified_floor = max(self.notified_floor, max(e.id for e in events))
        if first or not news:
            return []
        news.sort(key=lambda e: e.id)
        return [frame("notification", n) for n in rest._entities(self.request, news)]

    def _edited(self, data: str) -> list[bytes]:
        """A `status.update` of a status sent, read again as the stream's timeline
        shows it now: nothing once it no longer does (its author blocked or muted
        since, unfollowed, gone private) or a filter of the reader's hides it."""
        from api.views.statuses import entities_of

        sid = int(data)
        if not self._has(sid):
            return []
        reads = self._reads()
        found = self._window(reads, max_id=sid + 1, since_id=sid - 1)
        self._proven(reads)
        if found is None:
            return []
        shown = [s for s in found.statuses if s.id == sid]
        entities = entities_of(self.request, shown, found) if shown else []
        return [frame("status.update", e) for e in entities if not _hidden(e)]

    def _signal(self, channel: str, data: str) -> list[bytes]:
        if channel == keys.stream_deleted():
            sid = int(data)
            if self._has(sid):
                del self.sent[sid]
                return [frame("delete", str(sid))]
            return []
        if channel == keys.stream_edited():
            return self._edited(data)
        if channel == keys.stream_public():
            return self._public(data)
        if self.kind == "user:notification":
            return self._notifications() if data == "notification" else []
        if self.kind == "direct":
            return self._conversations() if data == "conversation" else []
        if data == "notification":
            return self._notifications() if self.notifies else []
        if data == "conversation":
            return []
        if data == "pulls":
            # A pulled author followed: hear their channel now, then read the
            # home (a post of theirs may have come before the subscription).
            self._listen()
        return self._home()  # `home`, or a pulled author's status

    # -- the stream --------------------------------------------------------------

    def frames(self) -> Iterator[bytes]:
        """The stream's SSE bytes until its reader leaves, their token stops
        proving them, or Redis fails (the client reconnects)."""
        try:
            self.listener = _listener_now()
            self._present()
            self._listen()
            if self.notifies:
                self._notifications(first=True)
            yield OPENED
            beat = settings.STREAM_HEARTBEAT_SECONDS
            next_beat = time.monotonic() + beat
            while True:
                wait = max(0.0, next_beat - time.monotonic())
                try:
                    item = self.inbox.get(timeout=wait)
                except queue.Empty:
                    item = False
                if item is None or self.listener.dead:
                    return
                if item:
                    yield from self._signal(*item)
                if time.monotonic() >= next_beat:
                    # A token revoked (or an account closed) ends a quiet stream
                    # too, before it says its reader is still present.
                    self._proven(PageReads(self.credentials))
                    self._present()
                    self._listen()
                    yield HEARTBEAT
                    next_beat = time.monotonic() + beat
        except _Ended:
            return
        except REDIS_OUTAGES as error:
            log.warning("stream of user %s ended: %r", self.uid, error)
            return
        finally:
            self.close()

    def close(self) -> None:
        """Leave the channels and give back the process's slot: once, whether the
        stream ran or its response was closed before it started."""
        with _lock:
            closed, self.closed = self.closed, True
        if closed:
            return
        listener, self.listener = self.listener, None
        if listener is not None:
            for channel in self.channels:
                listener.remove(channel, self.inbox)
        self.channels = set()
        _give_slot()


def _hidden(entity: dict) -> bool:
    """Whether a filter of the reader's hides the status: the REST read marks it
    (`filtered`) for the client to hide; a stream, as Mastodon's, does not send it."""
    return any(
        result["filter"]["filter_action"] == "hide"
        for result in entity.get("filtered") or ()
    )


def _told(event) -> tuple:
    item = event.item
    return (item.kind, item.status.id if item.status else None, event.actor.id)


def stream_open(
    request, *, kind: str, uid: int, tag: str | None = None, lid: int | None = None
) -> Stream:
    """A stream for the proven reader `uid`; StreamsFull past STREAMS_MAX."""
    _take_slot()
    return Stream(request, kind=kind, uid=uid, tag=tag, lid=lid)


def list_owned(request, *, lid: int) -> bool:
    """Whether the list is one of the request's proven viewer's."""
    return selectors.list_window(reads=request.reads, lid=lid, size=1) is not None


def credentials_of(request) -> BearerCredentials | None:
    """The stream's token: its `Authorization: Bearer` or its `access_token`
    parameter (browsers' EventSource sends no header)."""
    if request.credentials is not None:
        return request.credentials
    token = request.GET.get("access_token")
    return BearerCredentials.parse(f"Bearer {token}") if token else None
