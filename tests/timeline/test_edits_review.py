"""Review of status edits: races the feature's own tests leave out."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.helpers import (
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from timeline import edits, keys, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob, carol


def mentioned(client: Client) -> list[str]:
    return [
        line.split(".")[0]
        for line in notifications_shown(client)
        if "mentioned you" in line
    ]


def test_edit_then_delete_before_the_edit_job_leaves_nothing_of_the_old_text(r, people):
    """The delete takes the status out of the tags (and the "mentioned you") of
    the text it reads, the edited one; the edit's job then finds the status gone
    and stops. What the first version filed (its tag's page, its trend) and told
    (a mention) must go all the same."""
    alice, _, carol = people
    sid = services.status_create(author=alice, text="#cats with @carol").id
    run_jobs()
    assert [int(s) for s in r.zrange(keys.tag_timeline("cats"), 0, -1)] == [sid]
    assert f"mention:{sid}" in r.zrange(keys.notifications(carol.id), 0, -1)
    edits.status_edit(user=alice, sid=sid, text="#dogs alone")
    services.status_delete(user=alice, sid=sid)  # before a worker ran the edit's job
    run_jobs()
    assert r.zrange(keys.tag_timeline("cats"), 0, -1) == []
    assert "/tags/cats/" not in page(Client(), "/timeline/")  # no trend of it
    assert f"mention:{sid}" not in r.zrange(keys.notifications(carol.id), 0, -1)


def test_an_edit_before_the_post_job_tells_nobody_it_newly_names(people):
    """'An edit is no way to ping people': a status edited before its post job ran
    (a busy queue) must not have that job tell the people only the edit named."""
    alice, bob, carol = people
    sid = services.status_create(author=alice, text="hello").id
    edits.status_edit(user=alice, sid=sid, text="hello @carol")
    run_jobs()
    assert mentioned(logged_in_client("carol")) == []


def test_a_reply_edited_before_its_post_job_tells_nobody_it_newly_names(people):
    """A reply tells at once (its request) and again in its post job, which reads
    the hash as edited meanwhile."""
    alice, bob, carol = people
    parent = services.status_create(author=bob, text="a question").id
    run_jobs()
    reply = social.status_reply(author=alice, sid=parent, text="an answer")
    edits.status_edit(user=alice, sid=reply.id, text="an answer, ask @carol")
    run_jobs()
    assert mentioned(logged_in_client("carol")) == []
