"""Edited statuses (Mastodon's edits): the author changes a status's text and
content warning; every page shows the new version marked "Edited", its earlier
versions stay on its edit history, its copies (reposts, outboxes) and its tags'
pages follow by a durable job, nobody new is told, and nothing else changes."""

from __future__ import annotations

import re

import pytest
import redis
from django.conf import settings as django_settings
from django.test import Client

from accounts import limits
from config.redis import slot_of
from tests.helpers import (
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from timeline import edits, fanout, keys, services, social
from timeline.domain import Forbidden, InvalidStatus, NotFound, Status


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=bob.id)
    run_jobs()
    return alice, bob, carol


def texts(html: str) -> list[str]:
    """The status texts a page shows, as plain text, in its order."""
    found = re.findall(r'<p class="status-text">(.*?)</p>', html, re.S)
    return [re.sub(r"<[^>]+>", "", t) for t in found]


def edited_marks(html: str) -> int:
    return html.count('class="edited"')


def edit(client: Client, sid: int, text: str, spoiler: str | None = None):
    data = {"text": text}
    if spoiler is not None:
        data.update(cw="on", spoiler=spoiler)
    return client.post(f"/s/{sid}/edit/", data)


def test_an_edit_shows_everywhere_marked_and_its_history_keeps_the_first(people):
    alice, bob, _ = people
    sid = services.status_create(author=alice, text="teh first version").id
    run_jobs()
    client = logged_in_client("alice")
    form = page(client, f"/s/{sid}/edit/")
    assert "teh first version</textarea>" in form
    response = edit(client, sid, "the first version, fixed")
    assert response.status_code == 302 and response.url == f"/s/{sid}/"
    run_jobs()
    for viewer, path in (
        (logged_in_client("bob"), "/"),
        (Client(), "/u/alice/"),
        (Client(), "/timeline/"),
        (Client(), f"/s/{sid}/"),
    ):
        html = page(viewer, path)
        assert texts(html)[0] == "the first version, fixed", path
        assert edited_marks(html) == 1, path
    history = page(Client(), f"/s/{sid}/history/")
    assert texts(history) == ["the first version, fixed", "teh first version"]
    assert "Current version" in history and "Original" in history
    # Its place stays: the same id, its time, once in bob's home.
    assert (
        texts(page(logged_in_client("bob"), "/")).count("the first version, fixed") == 1
    )
    found = Status.from_fields(sid, bob_row(sid))
    assert found.edited is not None and found.edited >= found.created


def bob_row(sid: int) -> list:
    from config.redis import get_redis

    return get_redis().hmget(keys.status(sid), Status.FIELDS)


def test_only_the_author_edits_and_never_a_repost(people):
    alice, bob, _ = people
    sid = services.status_create(author=alice, text="mine").id
    repost = social.status_repost(user=bob, sid=sid)
    bob_client = logged_in_client("bob")
    assert bob_client.get(f"/s/{sid}/edit/").status_code == 404
    assert edit(bob_client, sid, "hijacked").status_code == 404
    assert bob_client.get(f"/s/{repost.id}/edit/").status_code == 404
    with pytest.raises(Forbidden):
        edits.status_edit(user=bob, sid=sid, text="hijacked")
    with pytest.raises(Forbidden):
        edits.status_edit(user=bob, sid=repost.id, text="a repost's own text")
    with pytest.raises(NotFound):
        edits.status_edit(user=alice, sid=sid + 1_000_000, text="nothing here")
    # Visitors are sent to log in; a GET changes nothing, a POST without its CSRF
    # token is refused.
    assert Client().get(f"/s/{sid}/edit/").status_code == 302
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = logged_in_client("alice").cookies
    assert strict.post(f"/s/{sid}/edit/", {"text": "x"}).status_code == 403
    assert texts(page(Client(), f"/s/{sid}/")) == ["mine"]
    # The status page offers Edit to its author only.
    assert f'href="/s/{sid}/edit/"' in page(logged_in_client("alice"), f"/s/{sid}/")
    assert f'href="/s/{sid}/edit/"' not in page(bob_client, f"/s/{sid}/")


def test_a_refused_edit_keeps_what_was_typed_and_changes_nothing(people):
    alice, _, _ = people
    sid = services.status_create(author=alice, text="short").id
    client = logged_in_client("alice")
    limit = django_settings.STATUS_MAX_LENGTH
    response = edit(client, sid, "y" * (limit - 3), spoiler="Long one")
    assert response.status_code == 400
    html = response.content.decode()
    assert "y" * (limit - 3) + "</textarea>" in html
    assert 'value="Long one"' in html
    assert "at most" in html
    assert texts(page(Client(), f"/s/{sid}/")) == ["short"]
    assert edit(client, sid, "   ").status_code == 400
    # Saved unchanged: nothing is recorded, nothing is marked.
    response = edit(client, sid, "short")
    assert response.status_code == 302
    html = page(client, f"/s/{sid}/")
    assert "Nothing changed." in html and edited_marks(html) == 0


def test_a_warning_is_added_and_taken_away_by_an_edit(people):
    alice, _, _ = people
    sid = services.status_create(author=alice, text="the ending").id
    client = logged_in_client("alice")
    edit(client, sid, "the ending", spoiler="Spoilers")
    html = page(Client(), f"/s/{sid}/")
    assert '<bdi class="spoiler-text">Spoilers</bdi>' in html
    form = page(client, f"/s/{sid}/edit/")
    assert 'value="Spoilers"' in form and 'id="id_cw" class="cw-toggle" checked' in form
    edit(client, sid, "the ending")  # the box unticked: no warning
    assert "spoiler-text" not in page(Client(), f"/s/{sid}/")
    history = page(Client(), f"/s/{sid}/history/")
    assert history.count("Content warning: <bdi>Spoilers</bdi>") == 1


def test_edits_are_capped(people, monkeypatch):
    alice, _, _ = people
    monkeypatch.setattr(edits, "EDITS_MAX", 3)
    sid = services.status_create(author=alice, text="v0").id
    for n in range(1, 4):
        edits.status_edit(user=alice, sid=sid, text=f"v{n}")
    with pytest.raises(InvalidStatus, match="edited 3 times"):
        edits.status_edit(user=alice, sid=sid, text="v4")
    response = edit(logged_in_client("alice"), sid, "v4")
    assert response.status_code == 400 and "edited 3 times" in response.content.decode()
    assert [v.text for v in edits.status_history(sid)] == ["v0", "v1", "v2", "v3"]


def test_reposts_and_a_pulled_authors_outbox_carry_the_new_version(r, people, settings):
    """A repost carries its original's text (its row shows it without reading the
    original), and an author past FANOUT_PUSH_MAX keeps copies in their outbox: the
    edit's job brings both in line."""
    alice, bob, carol = people
    settings.FANOUT_PUSH_MAX = 0  # every author with a follower is pulled
    dave = make_user("dave")
    services.follow_create(follower=dave, followee_id=alice.id)
    services.follow_create(follower=dave, followee_id=bob.id)
    run_jobs()
    assert (
        r.get(keys.fanout_mode(alice.id)) == r.get(keys.fanout_mode(bob.id)) == "pull"
    )
    sid = services.status_create(author=alice, text="old words").id
    repost = social.status_repost(user=bob, sid=sid)
    run_jobs()
    edits.status_edit(user=alice, sid=sid, text="new words", spoiler="CW")
    run_jobs()
    assert texts(page(logged_in_client("dave"), "/"))[0] == "new words"
    carol_home = page(logged_in_client("carol"), "/")  # bob's repost, from his outbox
    assert texts(carol_home) == ["new words"]
    assert '<bdi class="spoiler-text">CW</bdi>' in carol_home
    assert edited_marks(carol_home) == 1
    copy = Status.from_fields(repost.id, r.hmget(keys.status(repost.id), Status.FIELDS))
    assert (copy.text, copy.spoiler, copy.repost_of) == ("new words", "CW", sid)
    entry = Status.from_json(repost.id, r.hget(keys.outbox(bob.id), repost.id))
    assert (entry.text, entry.spoiler) == ("new words", "CW")


def test_a_repost_made_while_the_edit_job_walked_gets_the_new_version(
    r, people, monkeypatch
):
    """bob reposts from the version he read; the edit lands and its job walks the
    reposts before his is linked: the repost is brought in line all the same."""
    alice, bob, _ = people
    sid = services.status_create(author=alice, text="before").id
    run_jobs()
    real_create = services.status_create

    def racing(**kwargs):
        if kwargs.get("repost_of") is not None:
            edits.status_edit(user=alice, sid=sid, text="after")
            run_jobs()  # its job finds no repost yet
        return real_create(**kwargs)

    monkeypatch.setattr(services, "status_create", racing)
    repost = social.status_repost(user=bob, sid=sid)
    monkeypatch.undo()
    assert r.hget(keys.status(repost.id), "text") == "before"  # made from its read
    run_jobs()
    assert r.hget(keys.status(repost.id), "text") == "after"


def test_tags_follow_the_edit(r, people):
    alice, _, _ = people
    sid = services.status_create(author=alice, text="about #cats").id
    run_jobs()
    assert [int(s) for s in r.zrange(keys.tag_timeline("cats"), 0, -1)] == [sid]
    edits.status_edit(user=alice, sid=sid, text="about #dogs really")
    run_jobs()
    assert r.zrange(keys.tag_timeline("cats"), 0, -1) == []
    assert [int(s) for s in r.zrange(keys.tag_timeline("dogs"), 0, -1)] == [sid]
    assert texts(page(Client(), "/tags/dogs/")) == ["about #dogs really"]
    assert "about" not in " ".join(texts(page(Client(), "/tags/cats/")))
    trends = page(Client(), "/timeline/")
    assert "/tags/dogs/" in trends and "/tags/cats/" not in trends
    # An unlisted status never joins a tag's page, edited or not.
    quiet = services.status_create(author=alice, text="shh", unlisted=True).id
    edits.status_edit(user=alice, sid=quiet, text="shh #dogs")
    run_jobs()
    assert quiet not in [int(s) for s in r.zrange(keys.tag_timeline("dogs"), 0, -1)]


def test_a_post_job_that_read_the_text_before_an_edit_leaves_no_old_tag(r, people):
    """The post's job read the status before the edit and publishes after the
    edit's job ran: it finds the text changed and takes back the tags it lost."""
    alice, _, _ = people
    sid = services.status_create(author=alice, text="#old tag").id
    stale = Status.from_fields(sid, r.hmget(keys.status(sid), Status.FIELDS))
    edits.status_edit(user=alice, sid=sid, text="#new tag")
    run_jobs()  # the post's job and the edit's, in that order
    services.status_publish(status=stale)  # the post's job, late, with its old read
    assert r.zrange(keys.tag_timeline("old"), 0, -1) == []
    assert [int(s) for s in r.zrange(keys.tag_timeline("new"), 0, -1)] == [sid]


def test_an_edit_tells_nobody_new_and_unnamed_people_lose_their_mention(people):
    alice, bob, carol = people
    sid = services.status_create(author=alice, text="hi @bob").id
    run_jobs()
    assert mentioned(logged_in_client("bob")) == ["@alice mentioned you"]
    edits.status_edit(user=alice, sid=sid, text="hi @carol")
    run_jobs()
    assert mentioned(logged_in_client("bob")) == []
    assert mentioned(logged_in_client("carol")) == []  # as Mastodon's
    html = page(Client(), f"/s/{sid}/")
    assert f"/u/carol/?id={carol.id}" in html  # the name it now mentions is linked


def mentioned(client: Client) -> list[str]:
    return [
        line.split(".")[0]
        for line in notifications_shown(client)
        if "mentioned you" in line
    ]


def test_deleting_an_edited_status_deletes_its_versions(r, people):
    alice, _, _ = people
    sid = services.status_create(author=alice, text="v0").id
    edits.status_edit(user=alice, sid=sid, text="v1")
    assert r.llen(keys.edits(sid)) == 1
    services.status_delete(user=alice, sid=sid)
    run_jobs()
    assert not r.exists(keys.edits(sid))
    assert Client().get(f"/s/{sid}/history/").status_code == 404


def test_a_hidden_status_has_no_history_to_show(people):
    alice, bob, _ = people
    sid = services.status_create(author=alice, text="v0").id
    edits.status_edit(user=alice, sid=sid, text="v1")
    from timeline import blocks

    blocks.block_create(blocker=alice, blocked_id=bob.id)
    assert logged_in_client("bob").get(f"/s/{sid}/history/").status_code == 404
    assert Client().get(f"/s/{sid}/history/").status_code == 200


def listpack_entries(r, entries: int | None) -> int | None:
    """Set how many entries a zset keeps packed (every master; the setting's name
    that Redis 6.2 and 7 both know; fakeredis has none: None); the value it had."""
    name = "zset-max-ziplist-entries"
    if entries is None:
        return None
    try:
        before = r.config_get(name)
    except Exception:  # fakeredis
        return None
    if isinstance(r, redis.RedisCluster):
        r.config_set(name, entries, target_nodes=redis.RedisCluster.PRIMARIES)
    else:
        r.config_set(name, entries)
    return int(before[name])


def test_an_edit_job_cut_short_resumes_from_its_cursor(r, people, monkeypatch):
    """The job is durable: a worker that died in its walk of the reposts leaves it
    queued with how far it got, and the next run goes on from there to the end.
    (A zset kept as a listpack answers a ZSCAN whole, in one batch: the servers
    here keep up to 1,024 entries so, `config.embedded`; this one is made past 16.)"""
    alice = people[0]
    sid = services.status_create(author=alice, text="v0").id
    small = listpack_entries(r, 16)
    try:
        fans = [make_user(f"fan{n}") for n in range(140)]
        reposts = [social.status_repost(user=fan, sid=sid) for fan in fans]
    finally:
        listpack_entries(r, small)
    run_jobs()
    monkeypatch.setattr(edits, "EDIT_BATCH", 20)
    real = edits._REPOST_COPY.queue
    calls: list[int] = []

    def dying(pipe, **kw):
        calls.append(1)
        if len(calls) == 61:  # in its fourth batch or so
            raise ConnectionError("the worker died")
        return real(pipe, **kw)

    monkeypatch.setattr(edits._REPOST_COPY, "queue", dying)
    edits.status_edit(user=alice, sid=sid, text="v1")
    run_jobs()
    texts_now = [r.hget(keys.status(p.id), "text") for p in reposts]
    assert 0 < texts_now.count("v1") < len(reposts)  # stopped mid-walk
    calls.clear()
    fanout.run_pending(now=10**15, sweep=True)  # due again after its backoff
    monkeypatch.undo()
    assert {r.hget(keys.status(p.id), "text") for p in reposts} == {"v1"}
    assert len(calls) < len(reposts)  # went on from its cursor, not from the start


def unread_badge(client: Client) -> str | None:
    found = re.search(r"data-notifications-badge>([^<]*)<", page(client, "/"))
    return found.group(1) if found else None


def own_status(bob) -> int:
    """A status of bob's own, for others to like."""
    return services.status_create(author=bob, text="bob's own").id


def test_reposters_are_told_once_per_edit(r, people):
    """Mastodon's `update`: whoever reposted the status is told of each edit, on
    top and unread; the job run again tells nothing twice; the status's deletion
    takes it back."""
    from timeline import jobs, notifications

    alice, bob, carol = people
    sid = services.status_create(author=alice, text="v0").id
    social.status_repost(user=bob, sid=sid)
    run_jobs()
    client = logged_in_client("bob")
    before = notifications_shown(client)
    edits.status_edit(user=alice, sid=sid, text="v1")
    run_jobs()
    shown = notifications_shown(client)
    assert shown[0] == "@alice edited a status you reposted. v1"
    assert len(shown) == len(before) + 1
    assert "@alice edited" not in " ".join(
        notifications_shown(logged_in_client("carol"))
    )
    social.status_like(user=carol, sid=own_status(bob))  # a newer notification
    run_jobs()
    shown = notifications_shown(client)
    assert shown[0].startswith("@carol liked your status")
    notifications.notifications_mark_read(user=bob, up_to=10**16)
    assert unread_badge(client) is None
    # The job again (a worker's retry): nothing new, nothing unread, nothing moved.
    jobs.enqueue(slot=slot_of(keys.status(sid)), jid=edits.edit_job_id(sid))
    run_jobs()
    assert notifications_shown(client) == shown and unread_badge(client) is None
    # Another edit: told again, on top, once.
    edits.status_edit(user=alice, sid=sid, text="v2")
    run_jobs()
    again = notifications_shown(client)
    assert again[0] == "@alice edited a status you reposted. v2"
    assert len(again) == len(shown) and unread_badge(client) == "1"
    assert again[1].startswith("@carol liked your status")
    services.status_delete(user=alice, sid=sid)
    run_jobs()
    assert not any("edited" in line for line in notifications_shown(client))
    assert unread_badge(client) is None


def test_an_edit_during_a_move_to_pull_leaves_no_old_copy_in_the_outbox(
    r, people, settings, monkeypatch
):
    """An author crossing FANOUT_PUSH_MAX gets an outbox filled from their statuses'
    hashes (`fanout._outbox_fill`): an edit whose job ran between that read and
    that write (the outbox had no entry yet to rewrite) would leave the old version
    there for good; the fill looks again after its write and queues the edit's job."""
    alice, bob, _ = people
    sid = services.status_create(author=alice, text="old copy").id
    run_jobs()
    settings.FANOUT_PUSH_MAX = 1
    real = fanout.pipeline_run
    fired: list[int] = []

    def racing(build, **kwargs):
        from config import pipelines

        staged = pipelines._Commands()
        build(staged)
        writes_outbox = any(
            args[0] == "HSET" and args[1] == keys.outbox(alice.id)
            for args, _ in staged.stack
        )
        if writes_outbox and not fired:
            fired.append(1)
            edits.status_edit(user=alice, sid=sid, text="new copy")
            run_jobs()  # the edit's job: no outbox entry yet to rewrite
        return real(build, **kwargs)

    monkeypatch.setattr(fanout, "pipeline_run", racing)
    dave = make_user("dave")
    services.follow_create(follower=dave, followee_id=alice.id)
    run_jobs()  # the move to pull mode, its outbox filled
    monkeypatch.undo()
    assert fired and r.get(keys.fanout_mode(alice.id)) == "pull"
    run_jobs()
    entry = Status.from_json(sid, r.hget(keys.outbox(alice.id), sid))
    assert entry.text == "new copy"
    assert texts(page(logged_in_client("dave"), "/")) == ["new copy"]


def test_an_edit_that_changes_nothing_or_is_refused_costs_no_post(people, settings):
    """The posting budget pays for edits that change the status: saving it
    unchanged, another's status, or one past the cap takes nothing from it."""
    alice, bob, _ = people
    sid = services.status_create(author=alice, text="as it is").id
    settings.RATE_LIMIT_POST = "1/1h"
    client = logged_in_client("alice")
    for _ in range(3):
        assert edit(client, sid, "as it is").status_code == 302
    assert edit(logged_in_client("bob"), sid, "not mine").status_code == 404
    with pytest.raises(Forbidden):
        edits.status_edit(user=bob, sid=sid, text="not mine", limit=limits.post(bob.id))
    assert edit(client, sid, "changed once").status_code == 302
    assert texts(page(Client(), f"/s/{sid}/")) == ["changed once"]
    refused = edit(client, sid, "changed twice")
    assert refused.status_code == 429
    assert "changed twice</textarea>" in refused.content.decode()
