"""The streaming API (`/api/v1/streaming/*`, Server-Sent Events): what a client
reading the stream parses, frame by frame, while others post, like, edit, delete.

Each stream is read in-process (the test client's `streaming_content`, the view's
generator) on a thread of its own; the heartbeat is made short so the reader sees
the end of the test soon. Events come from the post's fan-out job, run here as a
worker would (`run_jobs`): each must arrive within a generous bound."""

from __future__ import annotations

import queue
import threading
import time

import orjson
import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from timeline import edits, keys, privacy, services, social

WITHIN = 10.0  # seconds an event may take to arrive (a loaded machine's)


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"
    settings.STREAM_HEARTBEAT_SECONDS = 0.2


class Sse:
    """A stream being read on a thread: its frames as a client parses them."""

    def __init__(self, response):
        assert response.status_code == 200, response.content
        assert response["Content-Type"] == "text/event-stream"
        self.response = response
        self.chunks: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        first = self.chunks.get(timeout=WITHIN)
        assert first == b":)\n"  # Mastodon's first line: the stream is open

    def _read(self) -> None:
        try:
            for chunk in self.response.streaming_content:
                self.chunks.put(chunk)
                if self.stop.is_set():
                    break
        finally:
            self.response.close()
            self.chunks.put(None)

    def events(self, count: int = 1, within: float = WITHIN) -> list[tuple[str, str]]:
        """The next `count` events (heartbeats skipped), as (event, data)."""
        out: list[tuple[str, str]] = []
        deadline = time.monotonic() + within
        while len(out) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"only {out} arrived within {within} s"
            try:
                chunk = self.chunks.get(timeout=left)
            except queue.Empty:
                continue
            assert chunk is not None, f"the stream ended after {out}"
            if chunk.startswith(b":"):
                assert chunk == b":thump\n"
                continue
            text = chunk.decode()
            assert text.endswith("\n\n")
            event, data = text[:-2].split("\n")
            assert event.startswith("event: ") and data.startswith("data: ")
            out.append((event.removeprefix("event: "), data.removeprefix("data: ")))
        return out

    def event(self) -> tuple[str, dict | str]:
        name, data = self.events(1)[0]
        return name, orjson.loads(data) if data.startswith("{") else data

    def quiet(self, seconds: float = 1.0) -> None:
        """Nothing but heartbeats for `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                chunk = self.chunks.get(timeout=left)
            except queue.Empty:
                return
            assert chunk == b":thump\n", chunk

    def close(self) -> None:
        self.stop.set()
        self.thread.join(WITHIN)
        assert not self.thread.is_alive()


def _open(path: str, token: str | None) -> Sse:
    return Sse(api_client(token).get(path))


@pytest.fixture
def streams():
    opened: list[Sse] = []

    def open_(path: str, token: str | None) -> Sse:
        stream = _open(path, token)
        opened.append(stream)
        return stream

    yield open_
    for stream in opened:
        stream.close()


def _follow(follower, followee) -> None:
    services.follow_create(follower=follower, followee_id=followee.id)
    run_jobs()


def _post(user, text: str) -> int:
    sid = services.status_create(author=user, text=text).id
    run_jobs()
    return sid


def test_health_is_ok_as_text():
    response = api_client().get("/api/v1/streaming/health")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response.content == b"OK"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/streaming/user",
        "/api/v1/streaming/user/notification",
        "/api/v1/streaming/public",
        "/api/v1/streaming/hashtag?tag=cats",
    ],
)
def test_a_stream_without_a_token_is_refused(path):
    response = api_client().get(path)
    assert response.status_code == 401
    assert response.json() == {"error": "Missing access token"}
    bad = api_client("not-a-token").get(path)
    assert bad.status_code == 401
    assert bad.json()["error"] == "Invalid access token"


def test_a_token_without_the_streams_scope_is_refused():
    alice = make_user("alice")
    writer = token_for(alice, scopes=("write",))
    for path in ("/api/v1/streaming/user", "/api/v1/streaming/public"):
        response = api_client(writer).get(path)
        assert response.status_code == 401
        assert response.json() == {
            "error": "Access token does not cover required scopes"
        }
    missing_tag = api_client(token_for(alice)).get("/api/v1/streaming/hashtag")
    assert missing_tag.status_code == 400
    assert missing_tag.json() == {"error": "No tag for stream provided"}
    statuses_only = token_for(alice, scopes=("read:statuses",))
    response = api_client(statuses_only).get("/api/v1/streaming/user/notification")
    assert response.status_code == 401


def test_the_token_may_come_as_the_access_token_parameter(streams):
    alice, bob = make_user("alice"), make_user("bob")
    _follow(alice, bob)
    stream = streams(f"/api/v1/streaming/user?access_token={token_for(alice)}", None)
    sid = _post(bob, "hello stream")
    name, status = stream.event()
    assert name == "update"
    assert status["id"] == str(sid)


def test_a_followed_users_post_arrives_as_an_update(streams):
    alice, bob = make_user("alice"), make_user("bob")
    _follow(alice, bob)
    stream = streams("/api/v1/streaming/user", token_for(alice))
    started = time.monotonic()
    sid = _post(bob, "fresh news")
    name, status = stream.event()
    assert time.monotonic() - started < WITHIN
    assert name == "update"
    assert status["id"] == str(sid)
    assert status["content"].count("fresh news") == 1
    assert status["account"]["username"] == "bob"
    # The reader's own post reaches their own stream too (their home has it).
    own = services.status_create(author=alice, text="mine").id
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(own))


def test_a_pulled_authors_post_arrives_as_an_update(streams, settings, r):
    settings.FANOUT_PUSH_MAX = 1
    star, fan, other = make_user("star"), make_user("fan"), make_user("other")
    _follow(fan, star)
    _follow(other, star)
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    stream = streams("/api/v1/streaming/user", token_for(fan))
    sid = _post(star, "from the star")
    name, status = stream.event()
    assert name == "update" and status["id"] == str(sid)


def test_a_mention_and_a_like_arrive_as_notifications(streams):
    alice, bob = make_user("alice"), make_user("bob")
    mine = services.status_create(author=alice, text="my post").id
    stream = streams("/api/v1/streaming/user/notification", token_for(alice))
    _post(bob, "hey @alice")
    name, note = stream.event()
    assert name == "notification"
    assert note["type"] == "mention"
    assert note["account"]["username"] == "bob"
    social.status_like(user=bob, sid=mine)
    run_jobs()
    name, note = stream.event()
    assert (name, note["type"], note["status"]["id"]) == (
        "notification",
        "favourite",
        str(mine),
    )


def test_a_deletion_and_an_edit_of_a_status_sent(streams):
    alice, bob = make_user("alice"), make_user("bob")
    _follow(alice, bob)
    stream = streams("/api/v1/streaming/user", token_for(alice))
    sid = _post(bob, "first words")
    assert stream.event()[0] == "update"
    edits.status_edit(user=bob, sid=sid, text="better words")
    name, status = stream.event()
    assert name == "status.update"
    assert status["id"] == str(sid) and "better words" in status["content"]
    services.status_delete(user=bob, sid=sid)
    assert stream.events(1) == [("delete", str(sid))]


def test_public_and_hashtag_streams(streams):
    alice, bob = make_user("alice"), make_user("bob")
    token = token_for(alice)
    public = streams("/api/v1/streaming/public", token)
    local = streams("/api/v1/streaming/public/local", token)
    cats = streams("/api/v1/streaming/hashtag?tag=Cats", token)
    remote = streams("/api/v1/streaming/public/remote", token)
    plain = _post(bob, "no tag here")
    tagged = _post(bob, "look #cats")
    for stream in (public, local):
        assert [e[1]["id"] for e in map(_parsed, stream.events(2))] == [
            str(plain),
            str(tagged),
        ]
    name, status = cats.event()
    assert (name, status["id"]) == ("update", str(tagged))
    cats.quiet(0.5)
    remote.quiet(0.5)


def _parsed(event):
    return event[0], orjson.loads(event[1])


def test_what_the_reader_may_not_see_never_arrives(streams, settings, r):
    """A blocked author's post, a muted one's, a filtered word, a private author's
    not followed, a pulled author's reply to a stranger: none arrive on the user
    stream, and the next post that may be seen does; the public stream sends
    exactly what the REST public timeline shows the same token."""
    settings.FANOUT_PUSH_MAX = 1
    reader = make_user("reader")
    blocked, muted, friend = (
        make_user("blocked"),
        make_user("muted"),
        make_user("friend"),
    )
    star, stranger, fan = make_user("star"), make_user("stranger"), make_user("fan")
    locked = make_user("locked")
    client = api_client(token_for(reader))
    for user in (blocked, muted, friend, star):
        _follow(reader, user)
    _follow(fan, star)  # star has two followers: pulled
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    assert client.post(f"/api/v1/accounts/{blocked.id}/block").status_code == 200
    assert client.post(f"/api/v1/accounts/{muted.id}/mute").status_code == 200
    made = client.post(
        "/api/v2/filters",
        data=orjson.dumps(
            {
                "title": "no spoilers",
                "context": ["home", "public"],
                "filter_action": "hide",
                "keywords_attributes": [{"keyword": "spoilers"}],
            }
        ),
        content_type="application/json",
    )
    assert made.status_code == 200, made.content
    privacy.account_privacy_set(user=locked, private=True)
    run_jobs()
    token = token_for(reader)
    user = streams("/api/v1/streaming/user", token)
    public = streams("/api/v1/streaming/public", token)
    _post(blocked, "from a blocked author")
    _post(muted, "from a muted author")
    _post(friend, "spoilers ahead")
    _post(locked, "for my followers only")
    question = _post(stranger, "a question")
    social.status_reply(author=star, sid=question, text="an answer to a stranger")
    run_jobs()
    seen = _post(friend, "this one shows")
    name, status = user.event()
    assert (name, status["id"]) == ("update", str(seen))
    # The public stream sends what the same token's REST read of the public
    # timeline shows, no more (this site's public timeline, as its REST read,
    # leaves out the blocked author, the filtered word and the private author;
    # it shows a muted author's public post, and so does the stream).
    # A status a filter of the reader's hides comes to REST marked `filtered`
    # (the client hides it); a stream, as Mastodon's, does not send it.
    read = client.get("/api/v1/timelines/public").json()
    shown = [s["id"] for s in read if not s["filtered"]]
    assert str(question) in shown and str(seen) in shown
    sent = [orjson.loads(d)["id"] for _, d in public.events(len(shown))]
    assert sent == shown[::-1]
    texts = " ".join(s["content"] for s in read if not s["filtered"])
    for hidden in ("blocked author", "spoilers", "followers only"):
        assert hidden not in texts
    user.quiet(0.5)
    public.quiet(0.5)


def test_past_the_process_cap_a_stream_is_refused(streams, settings):
    settings.STREAMS_MAX = 1
    alice = make_user("alice")
    token = token_for(alice)
    streams("/api/v1/streaming/public", token)
    refused = api_client(token).get("/api/v1/streaming/public")
    assert refused.status_code == 503
    assert refused.json()["error"].startswith("Too many streams")


def test_a_closed_stream_gives_its_place_back(settings):
    settings.STREAMS_MAX = 1
    alice = make_user("alice")
    token = token_for(alice)
    first = _open("/api/v1/streaming/public", token)
    first.close()
    second = _open("/api/v1/streaming/public", token)
    second.close()


def test_a_stream_open_marks_its_reader_present_in_their_homes_slot(streams, r):
    alice = make_user("alice")
    assert not r.exists(keys.home_streamed(alice.id))
    streams("/api/v1/streaming/user", token_for(alice))
    assert 0 < r.ttl(keys.home_streamed(alice.id)) <= 90


def test_a_new_follower_arrives_as_a_notification(streams):
    alice, bob = make_user("alice"), make_user("bob")
    stream = streams("/api/v1/streaming/user", token_for(alice))
    _follow(bob, alice)
    name, note = stream.event()
    assert (name, note["type"], note["account"]["username"]) == (
        "notification",
        "follow",
        "bob",
    )


def test_nobody_listening_publishes_nothing_on_the_users_channel(r):
    """The writers check the presence key in their own step: without a stream open
    a followed user's post, a mention and a follow publish nothing for the user."""
    alice, bob = make_user("alice"), make_user("bob")
    _follow(alice, bob)
    listener = r.pubsub()
    listener.subscribe(keys.stream_user(alice.id))
    deadline = time.monotonic() + WITHIN
    while listener.get_message(timeout=0.1) is None:  # the subscribe confirmation
        assert time.monotonic() < deadline
    _post(bob, "hi @alice")
    _follow(bob, alice)
    assert listener.get_message(timeout=0.5) is None
    services.stream_presence_set(uid=alice.id)  # as an open stream does
    _post(bob, "again @alice")
    heard = set()
    while (message := listener.get_message(timeout=1.0)) is not None:
        heard.add(message["data"])
    assert heard == {"home", "notification"}
    listener.close()


def test_a_list_stream_sends_its_members_posts_only(streams):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(alice, bob)
    _follow(alice, carol)
    client = api_client(token_for(alice))
    lid = client.post("/api/v1/lists", {"title": "close"}).json()["id"]
    added = client.post(f"/api/v1/lists/{lid}/accounts", {"account_ids[]": bob.id})
    assert added.status_code == 200, added.content
    stream = streams(f"/api/v1/streaming/list?list={lid}", token_for(alice))
    _post(carol, "not on the list")
    sid = _post(bob, "on the list")
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(sid))
    stream.quiet(0.5)
    other = token_for(carol)
    refused = api_client(other).get(f"/api/v1/streaming/list?list={lid}")
    assert refused.status_code == 401
    assert refused.json() == {"error": "Not authorized to stream this list"}
    assert api_client(other).get("/api/v1/streaming/list").status_code == 400


def test_a_direct_message_arrives_as_a_conversation(streams):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    stream = streams("/api/v1/streaming/direct", token_for(alice))
    bystander = streams("/api/v1/streaming/direct", token_for(carol))
    sent = api_client(token_for(bob)).post(
        "/api/v1/statuses", {"status": "@alice psst", "visibility": "direct"}
    )
    assert sent.status_code == 200, sent.content
    run_jobs()
    name, conversation = stream.event()
    assert name == "conversation"
    assert conversation["last_status"]["id"] == sent.json()["id"]
    assert [a["username"] for a in conversation["accounts"]] == ["bob"]
    assert conversation["unread"] is True
    bystander.quiet(0.5)


def test_a_stream_answers_a_preflight_and_refuses_other_methods():
    client = api_client()
    preflight = client.options("/api/v1/streaming/user")
    assert preflight.status_code == 200
    assert "Authorization" in preflight["Access-Control-Allow-Headers"]
    assert preflight["Access-Control-Allow-Origin"] == "*"
    for method in (client.post, client.head):
        refused = method("/api/v1/streaming/public")
        assert refused.status_code == 405
        assert refused["Allow"] == "GET"


@pytest.mark.fake_redis
def test_a_redis_outage_ends_the_stream_and_refuses_new_ones_with_json(r):
    alice = make_user("alice")
    token = token_for(alice)
    stream = _open("/api/v1/streaming/user", token)
    server = r.connection_pool.connection_kwargs["server"]
    server.connected = False
    try:
        deadline = time.monotonic() + WITHIN
        while (chunk := stream.chunks.get(timeout=WITHIN)) is not None:
            assert chunk == b":thump\n"
            assert time.monotonic() < deadline
        stream.thread.join(WITHIN)
        refused = api_client(token).get("/api/v1/streaming/user")
        assert refused.status_code == 503
        assert refused.json()["error"].startswith("The data store is unavailable")
    finally:
        server.connected = True


@pytest.mark.single_server
def test_one_servers_push_asks_the_streamers_index_not_each_readers_key(r):
    """On one server the push reads who has a stream open from `streamers` for its
    whole step: a reader listed until later hears of the post, one whose listing
    expired does not (their presence key alone is not asked)."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(alice, bob)
    _follow(carol, bob)
    services.stream_presence_set(uid=alice.id)
    assert r.zscore(keys.streamers(), alice.id) is not None
    r.set(keys.home_streamed(carol.id), 1, ex=60)  # not in the index
    listener = r.pubsub()
    listener.subscribe(keys.stream_user(alice.id), keys.stream_user(carol.id))
    for _ in range(2):
        assert listener.get_message(timeout=WITHIN)["type"] == "subscribe"
    _post(bob, "hello both")
    heard = []
    while (message := listener.get_message(timeout=1.0)) is not None:
        heard.append(message["channel"])
    assert heard == [keys.stream_user(alice.id)]
    listener.close()


def _ends(stream: Sse, within: float = WITHIN) -> None:
    """The stream ends (its last chunk read) within `within` seconds, heartbeats
    and nothing else before it."""
    deadline = time.monotonic() + within
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "the stream is still open"
        try:
            chunk = stream.chunks.get(timeout=left)
        except queue.Empty:
            continue
        if chunk is None:
            return
        assert chunk == b":thump\n", chunk


@pytest.mark.parametrize("path", ["/api/v1/streaming/user", "/api/v1/streaming/public"])
def test_a_revoked_tokens_quiet_stream_ends(streams, path):
    """Mastodon closes the streams of a revoked token: one on which nothing
    happens ends too (at its next heartbeat), and no longer says its reader is
    present."""
    from accounts.domain import BearerCredentials
    from accounts.services import app_token_revoke

    alice = make_user("alice")
    token = token_for(alice)
    stream = streams(path, token)
    stream.quiet(0.5)
    assert app_token_revoke(credentials=BearerCredentials.parse(f"Bearer {token}"))
    _ends(stream)


def test_a_deleted_accounts_stream_ends_and_leaves_no_presence(streams, r):
    alice = make_user("alice")
    stream = streams("/api/v1/streaming/user", token_for(alice))
    services.account_close(user=alice)
    run_jobs()
    _ends(stream)
    assert not r.exists(keys.home_streamed(alice.id))


@pytest.mark.parametrize("how", ["block", "mute"])
def test_an_edit_of_an_author_blocked_or_muted_since_is_not_sent(streams, how):
    """The home's REST read no longer shows a status of an author the reader
    blocked or muted after it was sent: its edit sends no `status.update` (as
    Mastodon's stream, which drops events of blocked and muted accounts)."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(alice, bob)
    _follow(alice, carol)
    token = token_for(alice)
    stream = streams("/api/v1/streaming/user", token)
    sid = _post(bob, "before the " + how)
    assert stream.event()[0] == "update"
    done = api_client(token).post(f"/api/v1/accounts/{bob.id}/{how}")
    assert done.status_code == 200
    home = api_client(token).get("/api/v1/timelines/home").json()
    assert str(sid) not in [s["id"] for s in home]
    edits.status_edit(user=bob, sid=sid, text="after the " + how)
    later = _post(carol, "still here")
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(later))


def test_an_edit_that_a_hide_filter_matches_is_not_sent(streams):
    alice, bob = make_user("alice"), make_user("bob")
    _follow(alice, bob)
    token = token_for(alice)
    made = api_client(token).post(
        "/api/v2/filters",
        data=orjson.dumps(
            {
                "title": "no spoilers",
                "context": ["home"],
                "filter_action": "hide",
                "keywords_attributes": [{"keyword": "spoilers"}],
            }
        ),
        content_type="application/json",
    )
    assert made.status_code == 200, made.content
    stream = streams("/api/v1/streaming/user", token)
    sid = _post(bob, "harmless")
    assert stream.event()[0] == "update"
    edits.status_edit(user=bob, sid=sid, text="spoilers now")
    later = _post(bob, "more")
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(later))


def test_a_client_that_hangs_up_frees_its_thread_slot_and_channels():
    """A stream served by a real server whose client closes its socket ends at
    the server's next write: its place under STREAMS_MAX comes back and the
    listener leaves its channels."""
    import socket
    from urllib.parse import urlsplit

    from api import streaming
    from devtools.liveserver import serve_in_thread

    alice = make_user("alice")
    token = token_for(alice)
    before = streaming._open
    with serve_in_thread() as url:
        where = urlsplit(url)
        client = socket.create_connection((where.hostname, where.port), WITHIN)
        client.sendall(
            b"GET /api/v1/streaming/user HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Authorization: Bearer " + token.encode() + b"\r\n\r\n"
        )
        got = b""
        while b":)\n" not in got:
            got += client.recv(4096)
        assert got.startswith(b"HTTP/1.1 200")
        assert streaming._open == before + 1
        listener = streaming._listener
        assert keys.stream_user(alice.id) in listener.wanted
        client.close()
        deadline = time.monotonic() + WITHIN
        while streaming._open != before:
            assert time.monotonic() < deadline, "the stream still holds its slot"
            time.sleep(0.05)
        assert keys.stream_user(alice.id) not in listener.wanted


def test_the_user_stream_of_a_token_without_notifications_scope_sends_none(streams):
    """A token with `read:statuses` but not `read:notifications` may open the user
    stream (Mastodon's), but its REST read of the notifications is refused: the
    stream sends it no notification either, only its home's updates."""
    alice, bob = make_user("alice"), make_user("bob")
    _follow(alice, bob)
    token = token_for(alice, scopes=("read:statuses",))
    assert api_client(token).get("/api/v1/notifications").status_code in (401, 403)
    stream = streams("/api/v1/streaming/user", token)
    _post(make_user("carol"), "hey @alice")
    _follow(make_user("dave"), alice)
    sid = _post(bob, "news")
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(sid))
    stream.quiet(0.5)


def test_a_pulled_author_followed_after_the_stream_opened_arrives(streams, settings, r):
    """Following an author whose followers' homes merge their outbox (pull mode)
    while the stream is open: the author's next post arrives, without waiting
    for the stream's heartbeat to look at what it should hear again."""
    settings.FANOUT_PUSH_MAX = 1
    settings.STREAM_HEARTBEAT_SECONDS = 5.0
    star, other, fan = make_user("star"), make_user("other"), make_user("fan")
    _follow(other, star)
    _follow(make_user("another"), star)
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    stream = streams("/api/v1/streaming/user", token_for(fan))
    _follow(fan, star)
    sid = _post(star, "for my new fan")
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(sid))


def test_a_burst_of_statuses_larger_than_one_read_arrives_whole(streams, settings):
    """More statuses published between two reads of the stream than one read takes
    (STREAM_READ_SIZE): each arrives, oldest first, none twice."""
    from api import streaming

    settings.STREAM_READ_SIZE = 2
    alice, bob = make_user("alice"), make_user("bob")
    public = streams("/api/v1/streaming/public", token_for(alice))
    # The listener hands nothing on while its lock is held: the five signals
    # wait, and the stream reads after all five statuses are published.
    with streaming._listener.guard:
        sids = [
            services.status_create(author=bob, text=f"burst {n}").id for n in range(5)
        ]
        run_jobs()
    sent = [orjson.loads(d)["id"] for _, d in public.events(5)]
    assert sent == [str(s) for s in sids]
    public.quiet(0.5)


def test_a_repost_sent_is_taken_back_when_its_original_is_deleted(streams):
    """The user stream sent carol's repost of bob's status; bob deletes his status
    (and with it every repost): the repost's `delete` comes, as the home no longer
    shows it."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(alice, carol)
    token = token_for(alice)
    stream = streams("/api/v1/streaming/user", token)
    sid = _post(bob, "worth sharing")
    repost = social.status_repost(user=carol, sid=sid)
    run_jobs()
    name, status = stream.event()
    assert name == "update" and status["reblog"]["id"] == str(sid)
    shown = status["id"]
    services.status_delete(user=bob, sid=sid)
    run_jobs()
    home = api_client(token).get("/api/v1/timelines/home").json()
    assert shown not in [s["id"] for s in home]
    assert stream.events(1) == [("delete", shown)], repost


def test_a_block_made_after_the_stream_opened_applies_either_way(streams):
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    stream = streams("/api/v1/streaming/public", token_for(alice))
    blocked = api_client(token_for(bob)).post(f"/api/v1/accounts/{alice.id}/block")
    assert blocked.status_code == 200
    blocking = api_client(token_for(alice)).post(f"/api/v1/accounts/{dave.id}/block")
    assert blocking.status_code == 200
    _post(bob, "not for alice")
    _post(dave, "alice blocked me")
    sid = _post(carol, "for everyone")
    name, status = stream.event()
    assert (name, status["id"]) == ("update", str(sid))
    stream.quiet(0.5)


def test_a_burst_of_notifications_larger_than_one_read_arrives_whole(streams, settings):
    from api import streaming

    settings.STREAM_READ_SIZE = 2
    alice = make_user("alice")
    mine = services.status_create(author=alice, text="like me").id
    fans = [make_user(f"fan{n}") for n in range(5)]
    stream = streams("/api/v1/streaming/user/notification", token_for(alice))
    # Likes of one status (one group: one read holds them all) and mentions (a
    # group each).
    with streaming._listener.guard:
        for fan in fans:
            social.status_like(user=fan, sid=mine)
        run_jobs()
    told = [orjson.loads(d)["account"]["username"] for _, d in stream.events(5)]
    assert told == [f.username for f in fans]
    with streaming._listener.guard:
        for fan in fans:
            services.status_create(author=fan, text="hi @alice")
        run_jobs()
    told = [orjson.loads(d) for _, d in stream.events(5)]
    assert {n["type"] for n in told} == {"mention"}
    assert sorted(n["account"]["username"] for n in told) == [f.username for f in fans]
    assert [n["id"] for n in told] == sorted((n["id"] for n in told), key=int)
    stream.quiet(0.5)


@pytest.mark.fake_redis
def test_a_heartbeat_slower_than_the_presence_ttl_is_refused_at_start():
    """A presence key that expires between two heartbeats would leave open streams
    deaf to their home and notifications, silently: the settings refuse it."""
    import os
    import subprocess
    import sys

    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings",
        STREAM_HEARTBEAT_SECONDS="120",
        STREAM_PRESENCE_SECONDS="90",
    )
    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; settings.DEBUG"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "STREAM_PRESENCE_SECONDS" in done.stderr
