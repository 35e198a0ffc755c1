"""Polls on the site: a status with two to four options its readers vote on from
any page that shows it; the results once voted (or closed, or to its author);
one vote a reader, counted exactly however many vote at once."""

from __future__ import annotations

import contextlib
import html
import re
import threading
import time
import types

import pytest
from django.test import Client

from tests.helpers import (
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from tests.roundtrips import RoundTripCounter
from tests.timeline.test_filters import folded
from timeline import blocks, edits, filters, keys, polls, privacy, services, social
from timeline.domain import NotFound
from timeline.filters import KeywordChange


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_LIKE = "off"


@pytest.fixture
def people():
    """Bob and carol follow alice."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    return alice, bob, carol


def ask(author, options=("Tea", "Coffee"), *, seconds=3600, ago=0.0, **flags) -> int:
    """Post a poll by `author`, open `seconds` from `ago` seconds back."""
    poll = polls.poll_make(list(options), seconds, now=time.time() - ago, **flags)
    sid = services.status_create(author=author, text="Which one?", poll=poll).id
    run_jobs()
    return sid


def poll_of(markup: str, sid: int) -> str:
    """The poll part of status `sid`'s row on a page."""
    row = re.search(
        rf'<li class="status[^"]*" data-status-id="{sid}">(.*?)</li>'
        r'\s*(?=<li class="status|</ol>)',
        markup,
        re.S,
    )
    assert row, f"status {sid} not shown"
    found = re.search(
        r'<(form|div) [^>]*class="poll">.*?</(form|div)>', row.group(1), re.S
    )
    return found.group(0) if found else ""


def results(part: str) -> list[tuple[str, str, bool]]:
    """(share, option, the viewer's choice) of each option a poll's results show."""
    return [
        (share, option, "chosen" in cls)
        for cls, share, option in re.findall(
            r'<li class="poll-result([^"]*)">(?:<span class="poll-share">(\d+%)</span>'
            r".*?)?<bdi>(.*?)</bdi>",
            part,
        )
    ]


def vote(client, sid: int, *choices, follow=False):
    return client.post(
        f"/s/{sid}/vote/",
        {"choice": [str(c) for c in choices], "next": "/"},
        follow=follow,
    )


def test_a_poll_posted_from_the_compose_box_shows_its_options_to_followers(r, people):
    ali = logged_in_client("alice")
    response = ali.post(
        "/post/",
        {
            "text": "Tea or coffee?",
            "poll": "on",
            "option1": "Tea",
            "option2": "",
            "option3": "Coffee",
            "poll_expires": "3600",
            "next": "/",
        },
    )
    assert response.status_code == 302
    run_jobs()
    html = page(logged_in_client("bob"), "/")
    (sid,) = re.findall(r'data-status-id="(\d+)"', html)
    part = poll_of(html, int(sid))
    # Blank options are left out; a reader who may vote gets a form.
    assert re.findall(r'type="radio" name="choice" value="(\d)"> <bdi>(\w+)', part) == [
        ("0", "Tea"),
        ("1", "Coffee"),
    ]
    assert "0 people" in part and "Closes" in part


@pytest.mark.parametrize(
    "options, error",
    [
        ({"option1": "Only one"}, "at least 2 options"),
        ({"option1": "Same", "option2": "same"}, "must all differ"),
        ({"option1": "x" * 51, "option2": "y"}, "at most 50 characters"),
    ],
)
def test_a_wrong_poll_is_refused_with_what_was_typed_kept(r, people, options, error):
    ali = logged_in_client("alice")
    data = {"text": "My question", "poll": "on", "poll_expires": "3600", **options}
    response = ali.post("/post/", data)
    html = response.content.decode()
    assert response.status_code == 400
    assert error in html
    assert "My question" in html
    for value in options.values():
        assert f'value="{value}"' in html
    assert 'name="poll" id="id_poll" class="poll-toggle" checked' in html
    assert services.statuses_read([]) == []
    assert "My question" not in page(logged_in_client("bob"), "/")


def test_an_unticked_poll_posts_a_plain_status(r, people):
    ali = logged_in_client("alice")
    ali.post("/post/", {"text": "Plain", "option1": "Left", "poll_expires": "300"})
    run_jobs()
    html = page(logged_in_client("bob"), "/")
    assert "Plain" in html and 'class="poll"' not in html


def test_a_vote_shows_the_results_with_the_voters_choice(r, people):
    alice, bob, carol = people
    sid = ask(alice, ("Tea", "Coffee", "Water"))
    bo, caro = logged_in_client("bob"), logged_in_client("carol")
    assert vote(bo, sid, 1).status_code == 302
    assert results(poll_of(page(bo, "/"), sid)) == [
        ("0%", "Tea", False),
        ("100%", "Coffee", True),
        ("0%", "Water", False),
    ]
    vote(caro, sid, 0)
    part = poll_of(page(bo, "/"), sid)
    assert results(part) == [
        ("50%", "Tea", False),
        ("50%", "Coffee", True),
        ("0%", "Water", False),
    ]
    assert "2 people" in part
    # The author sees the results, never a form, and cannot vote.
    ali = logged_in_client("alice")
    assert results(poll_of(page(ali, "/"), sid))[0] == ("50%", "Tea", False)
    response = vote(ali, sid, 2, follow=True)
    assert "You cannot vote in your own poll." in response.content.decode()
    # Nor can a voter vote twice: the first vote stands.
    response = vote(bo, sid, 0, follow=True)
    assert "You have already voted in this poll." in response.content.decode()
    assert results(poll_of(page(bo, "/"), sid))[1] == ("50%", "Coffee", True)


def test_the_poll_shows_on_its_page_and_to_visitors(r, people):
    alice, bob, _ = people
    sid = ask(alice)
    vote(logged_in_client("bob"), sid, 0)
    html = page(Client(), f"/s/{sid}/")
    part = poll_of(html, sid)
    assert results(part) == [("100%", "Tea", False), ("0%", "Coffee", False)]
    assert "<form" not in part
    assert "Vote" in poll_of(page(logged_in_client("carol"), f"/s/{sid}/"), sid)


def test_a_poll_of_several_choices_counts_each_and_its_voters_once(r, people):
    alice, bob, carol = people
    sid = ask(alice, ("A", "B", "C", "D"), multiple=True)
    bo = logged_in_client("bob")
    assert 'type="checkbox" name="choice"' in poll_of(page(bo, "/"), sid)
    vote(bo, sid, 0, 2, 2)
    vote(logged_in_client("carol"), sid, 2)
    part = poll_of(page(bo, "/"), sid)
    # Each option's share of the people who voted (2), as Mastodon's apps show
    # a poll of several choices (`voters_count`): C was everyone's choice, and the
    # shares add up to more than 100%; not of the votes (3: 33%, 67%).
    assert results(part) == [
        ("50%", "A", True),
        ("0%", "B", False),
        ("100%", "C", True),
        ("0%", "D", False),
    ]
    assert "2 people" in part


@pytest.mark.parametrize(
    "choices, error",
    [
        ((0, 1), "This poll takes one choice."),
        ((5,), "Choose among the poll's options."),
        ((), "Choose an option to vote."),
    ],
)
def test_wrong_choices_are_refused_and_nothing_is_counted(r, people, choices, error):
    alice, *_ = people
    sid = ask(alice)
    bo = logged_in_client("bob")
    response = vote(bo, sid, *choices, follow=True)
    assert error in html.unescape(response.content.decode())
    assert "<form" in poll_of(page(bo, "/"), sid)  # may still vote
    assert "0 people" in poll_of(page(logged_in_client("alice"), "/"), sid)


def test_a_closed_poll_takes_no_vote_and_shows_its_results(r, people):
    alice, *_ = people
    sid = ask(alice, seconds=300, ago=301)
    bo = logged_in_client("bob")
    part = poll_of(page(bo, "/"), sid)
    assert "<form" not in part and "Closed" in part
    assert results(part) == [("0%", "Tea", False), ("0%", "Coffee", False)]
    response = vote(bo, sid, 0, follow=True)
    assert "This poll has closed." in response.content.decode()


def test_hidden_totals_show_to_no_one_until_the_poll_closes_its_author_included(
    r, people
):
    # As Mastodon's API (REST::PollSerializer: an option's count null until it
    # closes, for everyone) and so its web app, which shows the author 0%.
    alice, *_ = people
    sid = closing_soon(alice, hide_totals=True)
    bo, ali = logged_in_client("bob"), logged_in_client("alice")
    vote(bo, sid, 1)
    part = poll_of(page(bo, "/"), sid)
    assert results(part) == [("", "Tea", False), ("", "Coffee", True)]
    assert "Results when it closes" in part and "1 person" in part
    author = poll_of(page(ali, f"/s/{sid}/"), sid)
    assert results(author) == [("", "Tea", False), ("", "Coffee", False)]
    assert "Results when it closes" in author and "1 person" in author
    closed()
    for client in (bo, ali):
        part = poll_of(page(client, f"/s/{sid}/"), sid)
        assert [share for share, *_ in results(part)] == ["0%", "100%"]
        assert "Results when it closes" not in part


def test_options_are_escaped(r, people):
    alice, *_ = people
    sid = ask(alice, ("<b>bold</b>", "& more"))
    part = poll_of(page(logged_in_client("bob"), "/"), sid)
    assert "&lt;b&gt;bold&lt;/b&gt;" in part and "&amp; more" in part
    assert "<b>" not in part


def test_a_repost_carries_the_poll_and_a_vote_through_it_counts_on_the_original(
    r, people
):
    alice, bob, carol = people
    services.follow_create(follower=carol, followee_id=bob.id)
    sid = ask(alice)
    repost = social.status_repost(user=bob, sid=sid)
    run_jobs()
    assert repost is not None and repost.poll == services.statuses_read([sid])[0].poll
    # Carol sees bob's repost on her home: its poll's options, with the way to
    # vote (a repost's row is read without the original's tally).
    caro = logged_in_client("carol")
    part = poll_of(page(caro, "/u/bob/"), repost.id)
    assert "Vote or see the results" in part and "<bdi>Coffee</bdi>" in part
    polls.poll_vote(user=carol, sid=repost.id, choices=[1])
    part = poll_of(page(caro, f"/s/{sid}/"), sid)
    assert results(part) == [("0%", "Tea", False), ("100%", "Coffee", True)]


def test_only_those_who_may_see_the_poll_vote(r, people):
    alice, bob, carol = people
    dave = make_user("dave")
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs()
    sid = ask(alice)
    with pytest.raises(NotFound):
        polls.poll_vote(user=dave, sid=sid, choices=[0])
    assert (
        logged_in_client("dave").post(f"/s/{sid}/vote/", {"choice": "0"}).status_code
        == 404
    )
    # A status without a poll has nothing to vote in.
    plain = services.status_create(author=bob, text="no poll").id
    with pytest.raises(NotFound):
        polls.poll_vote(user=carol, sid=plain, choices=[0])
    assert (
        Client().post(f"/s/{sid}/vote/", {"choice": "0"}).status_code == 302
    )  # log in


def test_an_edit_keeps_the_poll_and_its_votes(r, people):
    alice, bob, _ = people
    sid = ask(alice)
    polls.poll_vote(user=bob, sid=sid, choices=[0])
    edits.status_edit(user=alice, sid=sid, text="Which one, really?")
    run_jobs()
    part = poll_of(page(logged_in_client("bob"), "/"), sid)
    assert results(part) == [("100%", "Tea", True), ("0%", "Coffee", False)]


@pytest.mark.real_redis
def test_votes_at_once_are_each_counted_once(r, people):
    alice, *_ = people
    voters = [make_user(f"voter{n}") for n in range(24)]
    sid = ask(alice, ("A", "B"))
    go = threading.Barrier(len(voters))
    errors: list[Exception] = []

    def cast(user, n):
        go.wait()
        try:
            for _ in range(3):  # each tries thrice: one vote stands
                with contextlib.suppress(polls.PollRefused):
                    polls.poll_vote(user=user, sid=sid, choices=[n % 2])
        except Exception as error:  # pragma: no cover - shown by the assert
            errors.append(error)

    threads = [threading.Thread(target=cast, args=(u, n)) for n, u in enumerate(voters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    part = poll_of(page(logged_in_client("alice"), "/"), sid)
    assert "24 people" in part
    assert results(part) == [("50%", "A", False), ("50%", "B", False)]


@pytest.mark.real_redis
def test_a_poll_costs_the_home_no_round_trip(r, people, redis_backend):
    alice, bob, _ = people
    services.status_create(author=alice, text="plain")
    run_jobs()
    bo = logged_in_client("bob")
    bo.get("/")
    with RoundTripCounter() as plain:
        page(bo, "/")
    sid = ask(alice)
    vote(bo, sid, 0)
    with RoundTripCounter() as counter:
        assert results(poll_of(page(bo, "/"), sid))[0] == ("100%", "Tea", True)
    assert counter.count == plain.count


def test_a_keyword_filter_matches_a_polls_options(r, people):
    alice, bob, _ = people
    filters.filter_create(
        uid=bob.id,
        title="Drinks",
        context=["home"],
        keywords=[KeywordChange("coffee")],
    )
    sid = ask(alice, ("Tea", "Coffee"))
    html = page(logged_in_client("bob"), "/")
    assert folded(html) == ["Drinks"]
    assert f'data-status-id="{sid}"' in html


def test_a_pulled_authors_poll_on_the_home_leads_to_its_page(r, settings):
    # A big account's statuses are merged into homes from its outbox, without
    # their tally: the row shows the options and leads to the poll's page.
    settings.FANOUT_PUSH_MAX = 1
    star = make_user("star")
    fans = [make_user(f"fan{i}") for i in range(2)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    sid = ask(star)
    fan = logged_in_client("fan0")
    part = poll_of(page(fan, "/"), sid)
    assert f'<a href="/s/{sid}/">Vote or see the results</a>' in part
    assert "<bdi>Tea</bdi>" in part and "<form" not in part
    there = poll_of(page(fan, f"/s/{sid}/"), sid)
    assert 'type="radio" name="choice"' in there
    vote(fan, sid, 0)
    assert results(poll_of(page(fan, f"/s/{sid}/"), sid))[0] == ("100%", "Tea", True)


def closing_soon(author, **flags) -> int:
    """A poll that closes within a second (its job runs once it has)."""
    return ask(author, seconds=300, ago=299.2, **flags)


def closed() -> None:
    time.sleep(0.9)
    run_jobs(sweep=True)


def test_its_voters_and_its_author_are_told_when_the_poll_closes(r, people):
    alice, bob, carol = people
    sid = closing_soon(alice)
    polls.poll_vote(user=bob, sid=sid, choices=[0])
    run_jobs(sweep=True)
    bo, caro, ali = (logged_in_client(n) for n in ("bob", "carol", "alice"))
    assert notifications_shown(bo) == []  # not before it closes
    closed()
    assert notifications_shown(bo) == ["@alice's poll has ended. Which one?"]
    assert notifications_shown(ali)[0] == "Your poll has ended. Which one?"
    assert notifications_shown(caro) == []  # she did not vote
    # Told once, however often the job runs.
    from timeline import fanout, jobs

    jobs.enqueue(slot=social._status_slot(sid), jid=polls.poll_job_id(sid))
    fanout.run_pending(sweep=True)
    assert notifications_shown(bo) == ["@alice's poll has ended. Which one?"]
    assert notifications_shown(ali) == [
        "Your poll has ended. Which one?",
        "@carol and @bob followed you",
    ]


def test_a_deleted_poll_takes_its_closing_notifications_back(r, people):
    alice, bob, _ = people
    sid = closing_soon(alice)
    polls.poll_vote(user=bob, sid=sid, choices=[1])
    closed()
    bo = logged_in_client("bob")
    assert re.search(r'href="/notifications/"[^>]*>Notifications <span', page(bo, "/"))
    services.status_delete(user=alice, sid=sid)
    run_jobs(sweep=True)
    assert notifications_shown(bo) == []
    # Nothing unread is left behind: the badge goes.
    assert not re.search(
        r'href="/notifications/"[^>]*>Notifications <span', page(bo, "/")
    )
    assert not r.exists(keys.poll_voters(sid))


def test_a_scheduled_poll_opens_when_it_is_posted(r, people):
    from timeline import fanout, jobs, scheduled

    ali = logged_in_client("alice")
    response = ali.post(
        "/post/",
        {
            "text": "Later?",
            "poll": "on",
            "option1": "Yes",
            "option2": "No",
            "poll_expires": "3600",
            "poll_multiple": "on",
            "schedule": "on",
            "scheduled_at": time.strftime(
                "%Y-%m-%dT%H:%M", time.gmtime(time.time() + 86400)
            ),
        },
    )
    assert response.status_code == 302, response.content.decode()
    listed = page(ali, "/scheduled/")
    assert "Poll: <bdi>Yes</bdi> / <bdi>No</bdi> (open 1 hour once posted" in listed
    (entry,) = scheduled.scheduled_list(user=people[0])
    # Its job runs (made due now, as at its time): the poll is open an hour from
    # its posting.
    slot = keys.slot_of_user(people[0].id)
    jid = scheduled.schedule_job_id(people[0].id, entry.id)
    r.zadd(keys.job_queue(slot), {jid: jobs.now_ms()}, xx=True)
    fanout.run_pending(sweep=True)
    posted = time.time()
    (sid,) = [int(x) for x in r.zrange(keys.posts(people[0].id), 0, -1)]
    (status,) = services.statuses_read([sid])
    assert status.poll.options == ("Yes", "No") and status.poll.multiple
    assert posted - 60 + 3600 < status.poll.expires <= posted + 3600
    bo = logged_in_client("bob")
    assert 'type="checkbox" name="choice"' in poll_of(page(bo, "/"), sid)


def test_a_warned_polls_options_stay_folded_under_its_warning(r, people):
    # A content warning folds what it warns of: the poll's options (a spoiler may
    # be in them) as the text, as Mastodon folds a poll under its warning.
    alice, *_ = people
    poll = polls.poll_make(["Snape kills Dumbledore", "Nobody dies"], 3600)
    sid = services.status_create(
        author=alice, text="Guess the ending", spoiler="Book 6 spoilers", poll=poll
    ).id
    run_jobs()
    for client in (logged_in_client("bob"), Client()):
        markup = page(client, f"/s/{sid}/")
        folded = re.search(
            r'<details class="spoiler">(.*?)</details>', markup, re.S
        ).group(1)
        assert "Guess the ending" in folded
        assert "Snape kills Dumbledore" in folded
        assert markup.count("Snape kills Dumbledore") == 1
    # The reader still votes from inside the fold.
    bo = logged_in_client("bob")
    vote(bo, sid, 1)
    part = poll_of(page(bo, "/"), sid)
    assert results(part)[1] == ("100%", "Nobody dies", True)


def test_a_damaged_tally_or_vote_fails_no_page(r, people):
    # As a damaged `poll` field reads as no poll rather than failing the pages
    # that show the status, a damaged tally or vote (a hand edit, a bad restore)
    # is read as the vote script reads it (its numbers), never a server error.
    alice, bob, carol = people
    sid = ask(alice, ("Tea", "Coffee"))
    polls.poll_vote(user=bob, sid=sid, choices=[1])
    r.hset(keys.status(sid), mapping={"tally": "1 0 x1", f"v:{bob.id}": "1\n"})
    bo = logged_in_client("bob")
    for client, path in ((bo, "/"), (bo, f"/s/{sid}/"), (Client(), f"/s/{sid}/")):
        response = client.get(path)
        assert response.status_code == 200, path
    assert results(poll_of(page(bo, "/"), sid)) == [
        ("0%", "Tea", False),
        ("100%", "Coffee", True),
    ]
    # And the next vote counts on from what stands.
    polls.poll_vote(user=carol, sid=sid, choices=[0])
    assert r.hget(keys.status(sid), "tally") == "2 1 1"


def test_a_duration_off_the_menu_is_said_or_ignored_without_a_poll(r, people):
    # A duration the menu does not offer (a page loaded before the menu changed,
    # a hand-made form): with the poll ticked, the form says what is wrong and
    # keeps the options; unticked, the status posts, as the other poll fields
    # are then ignored. Never a refusal that says nothing.
    ali = logged_in_client("alice")
    data = {"text": "Q?", "option1": "Yes", "option2": "No", "poll_expires": "999"}
    response = ali.post("/post/", {**data, "poll": "on"})
    markup = response.content.decode()
    assert response.status_code == 400
    assert "Choose how long the poll stays open." in markup
    assert 'value="Yes"' in markup and 'value="No"' in markup
    assert ali.post("/post/", {**data, "next": "/"}).status_code == 302
    run_jobs()
    markup = page(logged_in_client("bob"), "/")
    assert "Q?" in markup and 'class="poll"' not in markup


def test_no_vote_where_the_voter_may_not_see_and_none_revives_a_deleted_status(
    r, people
):
    alice, bob, carol = people
    dave = make_user("dave")
    sid = ask(alice)
    # A block either way.
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    blocks.block_create(blocker=carol, blocked_id=alice.id)
    run_jobs()
    for user in (bob, carol):
        with pytest.raises(NotFound):
            polls.poll_vote(user=user, sid=sid, choices=[0])
    # A direct message's poll: for its audience only.
    dm = services.status_create(
        author=alice,
        text="@dave which?",
        direct=True,
        poll=polls.poll_make(["Tea", "Coffee"], 3600),
    ).id
    run_jobs()
    eve = make_user("eve")
    with pytest.raises(NotFound):
        polls.poll_vote(user=eve, sid=dm, choices=[0])
    assert (
        logged_in_client("eve").post(f"/s/{dm}/vote/", {"choice": "0"}).status_code
        == 404
    )
    polls.poll_vote(user=dave, sid=dm, choices=[1])
    # A deleted status: refused, and its hash is not written again.
    services.status_delete(user=alice, sid=dm)
    with pytest.raises(NotFound):
        polls.poll_vote(user=eve, sid=dm, choices=[0])
    assert not r.exists(keys.status(dm))
    assert r.hget(keys.status(sid), "tally") is None  # nobody's vote counted


def test_a_private_authors_poll_end_is_told_to_those_who_may_see_it(r, people):
    # A voter who may no longer see the poll (its author turned private, and they
    # do not follow her) is not told it has ended, nor shown its text: its page
    # is a 404 to them. Her followers and a direct message's audience still are.
    alice, bob, carol = people
    dave, eve = make_user("dave"), make_user("eve")
    sid = closing_soon(alice)
    dm = services.status_create(
        author=alice,
        text="@eve which?",
        direct=True,
        poll=polls.poll_make(["Tea", "Coffee"], 300, now=time.time() - 299.2),
    ).id
    run_jobs()
    polls.poll_vote(user=bob, sid=sid, choices=[0])
    polls.poll_vote(user=dave, sid=sid, choices=[1])
    polls.poll_vote(user=eve, sid=dm, choices=[1])
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs(sweep=True)
    closed()
    bo, dav, ev = (logged_in_client(n) for n in ("bob", "dave", "eve"))
    assert dav.get(f"/s/{sid}/").status_code == 404
    assert notifications_shown(dav) == []
    assert not re.search(
        r'href="/notifications/"[^>]*>Notifications <span', page(dav, "/")
    )
    assert notifications_shown(bo) == ["@alice's poll has ended. Which one?"]
    assert notifications_shown(ev) == [
        "@alice's poll has ended. @eve which?",
        "@alice mentioned you. @eve which?",
    ]


def test_a_poll_end_told_before_its_author_turned_private_is_no_longer_shown(r, people):
    # As a mention by a private author: her followers only see it.
    alice, bob, _ = people
    dave = make_user("dave")
    sid = closing_soon(alice)
    polls.poll_vote(user=bob, sid=sid, choices=[0])
    polls.poll_vote(user=dave, sid=sid, choices=[1])
    closed()
    dav, bo, ali = (logged_in_client(n) for n in ("dave", "bob", "alice"))
    assert notifications_shown(dav) == ["@alice's poll has ended. Which one?"]
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs(sweep=True)
    assert notifications_shown(dav) == []
    assert notifications_shown(bo) == ["@alice's poll has ended. Which one?"]
    assert notifications_shown(ali)[0] == "Your poll has ended. Which one?"


def test_a_poll_deleted_as_its_job_tells_leaves_its_author_nothing_unread(
    r, people, monkeypatch
):
    # The delete (and its unlink job) lands after the job read the status and
    # before it told the author: no voter batch follows to notice it.
    alice, _, _ = people
    sid = closing_soon(alice)
    ali = logged_in_client("alice")
    up_to = re.search(
        r'name="up_to" value="(\d+)"', page(ali, "/notifications/")
    ).group(1)
    ali.post("/notifications/read/", {"up_to": up_to})  # the follows read
    assert not re.search(
        r'href="/notifications/"[^>]*>Notifications <span', page(ali, "/")
    )
    read = polls.user_get

    def deleted_meanwhile(*, uid):
        services.status_delete(user=alice, sid=sid)
        run_jobs(sweep=True)
        return read(uid=uid)

    monkeypatch.setattr(polls, "user_get", deleted_meanwhile)
    closed()
    assert notifications_shown(ali) == ["@carol and @bob followed you"]
    assert not re.search(
        r'href="/notifications/"[^>]*>Notifications <span', page(ali, "/")
    )


def test_a_vote_is_closed_by_the_servers_clock_not_the_web_servers(
    r, people, monkeypatch
):
    # The poll closed a second ago by Redis's clock; this web server's clock runs
    # ten seconds behind. Its closing job (`poll:<sid>`) may have walked the voters
    # already: a vote it lets in is never told of the closing.
    alice, bob, _ = people
    sid = ask(alice, seconds=300, ago=301)
    behind = types.SimpleNamespace(time=lambda: time.time() - 10)
    monkeypatch.setattr(polls, "time", behind)
    with pytest.raises(polls.PollRefused, match="This poll has closed."):
        polls.poll_vote(user=bob, sid=sid, choices=[0])
    part = poll_of(page(logged_in_client("bob"), f"/s/{sid}/"), sid)
    assert results(part) == [("0%", "Tea", False), ("0%", "Coffee", False)]
    assert "0 people" in part


def test_a_vote_before_the_close_by_the_servers_clock_is_told_whatever_the_workers(
    r, people, monkeypatch
):
    # The worker's clock runs five seconds ahead: its closing job must not decide
    # the poll closed (and walk its voters) while Redis still takes votes in it.
    from timeline import jobs

    alice, bob, _ = people
    sid = ask(alice, seconds=300, ago=298.8)  # closes in 1.2 s by Redis's clock
    real = jobs.now_ms
    monkeypatch.setattr(jobs, "now_ms", lambda: real() + 5000)
    run_jobs(sweep=True)
    polls.poll_vote(user=bob, sid=sid, choices=[1])  # still open: taken
    time.sleep(1.4)
    run_jobs(sweep=True)
    assert notifications_shown(logged_in_client("bob")) == [
        "@alice's poll has ended. Which one?"
    ]
    assert notifications_shown(logged_in_client("alice"))[0] == (
        "Your poll has ended. Which one?"
    )


def test_a_post_job_run_again_after_the_close_tells_no_poll_end_again(r, people):
    # Jobs run at least once: the post job, retried from its start after the poll
    # closed (it died after queuing the closing job and before recording its
    # cursor), queues that job again, which must not tell again what was told
    # and dismissed since.
    from timeline import fanout, jobs, notifications

    alice, bob, _ = people
    sid = closing_soon(alice)
    polls.poll_vote(user=bob, sid=sid, choices=[0])
    closed()
    bo, ali = logged_in_client("bob"), logged_in_client("alice")
    assert notifications_shown(bo) == ["@alice's poll has ended. Which one?"]
    assert notifications_shown(ali)[0] == "Your poll has ended. Which one?"
    for user in (bob, alice):
        assert notifications.notification_dismiss(
            user=user, kind="poll", actor=alice.id, sid=sid
        )
    jobs.enqueue(
        slot=keys.slot_of_user(alice.id), jid=services.fanout_job_id(alice.id, sid)
    )
    fanout.run_pending(sweep=True)
    assert notifications_shown(bo) == []
    assert notifications_shown(ali) == ["@carol and @bob followed you"]
