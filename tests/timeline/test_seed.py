from __future__ import annotations

import io
import re
import time

import pytest
from django.core.management import CommandError, call_command
from django.core.management.base import OutputWrapper
from django.test import Client

from accounts import keys as account_keys
from accounts import services as account_services
from accounts.selectors import user_get
from tests.helpers import logged_in_client, make_user
from timeline import keys
from timeline.management.commands.seed import DEMO_PASSWORD, Command
from timeline.seeding import Progress
from timeline.upgrades import data_keys


def run_seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_seed_creates_users_follows_statuses_and_homes(r):
    output = run_seed(
        "--users", "60", "--follows-per-user", "5", "--statuses-per-user", "3"
    )
    assert "Seeded 60 users" in output and "180 statuses" in output
    uids = range(1, 61)
    assert sum(r.zcard(keys.following(u)) for u in uids) == sum(
        r.zcard(keys.followers(u)) for u in uids
    )
    assert sum(r.zcard(keys.posts(u)) for u in uids) == 180
    # Home timelines hold exactly what fan-out would have put there.
    for uid in uids:
        authors = {uid, *(int(f) for f in r.zrange(keys.following(uid), 0, -1))}
        expected = sorted(
            (int(s) for a in authors for s in r.zrange(keys.posts(a), 0, -1)),
            reverse=True,
        )
        home = [int(s) for s in r.zrevrange(keys.home(uid), 0, -1)]
        assert home == expected[:1000]


def test_a_fresh_seed_tells_its_size_at_once(r):
    run_seed("--users", "30", "--follows-per-user", "3", "--statuses-per-user", "2")
    # No worker has had its turn: the seed wrote the sum of its counts.
    stats = Client().get("/api/v1/instance").json()["stats"]
    assert stats == {"user_count": 30, "status_count": 60, "domain_count": 0}


def test_seed_names_every_follower_beside_the_followers_zset(r):
    run_seed("--users", "60", "--follows-per-user", "5", "--statuses-per-user", "0")
    edges = 0
    for uid in range(1, 61):
        followers = r.zrange(keys.followers(uid), 0, -1)
        names = r.hgetall(keys.follower_names(uid))
        assert set(names) == set(followers)  # no follower unnamed, no stale name
        for follower, name in names.items():
            assert user_get(uid=int(follower)).username == name
        edges += len(followers)
    assert edges > 0


def test_seeded_profile_names_the_people_in_common(r):
    run_seed("--users", "60", "--follows-per-user", "8", "--statuses-per-user", "1")
    # The most followed user, seen by someone who follows some of its followers.
    owner = max(range(1, 61), key=lambda u: r.zcard(keys.followers(u)))
    followers = {int(f) for f in r.zrange(keys.followers(owner), 0, -1)}
    viewer, common = max(
        (
            (v, followers & {int(f) for f in r.zrange(keys.following(v), 0, -1)})
            for v in range(1, 61)
            if v != owner
        ),
        key=lambda pair: len(pair[1]),
    )
    assert common, "the seeded graph has no people in common to show"
    page = (
        logged_in_client(f"user{viewer}", DEMO_PASSWORD)
        .get(f"/u/user{owner}/")
        .content.decode()
    )
    shown = re.search(r'class="muted in-common">Followed by(.*?)</p>', page, re.S)
    assert shown, page
    named = {int(n) for n in re.findall(r">@user(\d+)</a>", shown.group(1))}
    assert named and named <= common
    assert f"({len(common)} in all)" in shown.group(1)


def test_seeded_users_log_in_with_documented_password():
    run_seed("--users", "5")
    user, credentials = account_services.session_login(
        username="user3", password=DEMO_PASSWORD, client="127.0.0.1"
    )
    assert user.username == "user3" and credentials.token


def test_seed_follow_graph_is_power_law(r):
    run_seed("--users", "400", "--follows-per-user", "10", "--statuses-per-user", "0")
    sizes = sorted((r.zcard(keys.followers(u)) for u in range(1, 401)), reverse=True)
    median = sizes[len(sizes) // 2]
    assert sizes[0] > 10 * max(median, 1)


def test_seed_refuses_a_non_empty_store_without_append(r):
    make_user("existing")
    with pytest.raises(CommandError, match="--append"):
        run_seed("--users", "5")
    output = run_seed("--users", "5", "--append")
    assert "Seeded 5 users" in output
    assert r.get(account_keys.username("existing")) is not None


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--days", "0", "--days must be at least 1."),
        ("--days", "-1", "--days must be at least 1."),
        ("--follows-per-user", "-1", "--follows-per-user must be at least 0."),
        ("--statuses-per-user", "-1", "--statuses-per-user must be at least 0."),
        ("--users", "1", "--users must be at least 2."),
        # The login form takes any password but an empty one (found by exploratory
        # testing: the seed said to log in with '', which the form refuses).
        ("--password", "", "--password must not be empty: the login form needs one."),
    ],
)
def test_seed_refuses_bad_values_before_writing_anything(r, option, value, message):
    """A value the seeder cannot use stops it with a message and an untouched store
    (else the next plain `seed` would refuse the half-seeded one)."""
    with pytest.raises(CommandError, match=re.escape(message)):
        run_seed("--users", "10", option, value)
    assert data_keys(r) == 0


def test_seed_with_no_follows_per_user_seeds_no_follows(r):
    output = run_seed("--users", "10", "--follows-per-user", "0")
    assert "Seeded 10 users, 0 follows, 100 statuses" in output
    assert not list(r.scan_iter(match=keys.following_pattern()))
    for uid in range(1, 11):  # each home holds its owner's own statuses
        assert r.zrange(keys.home(uid), 0, -1) == r.zrange(keys.posts(uid), 0, -1)


def test_append_never_steals_a_taken_name(r):
    make_user("user2")  # a person took a name the seeder would pick
    run_seed("--users", "3", "--append")
    assert r.get(account_keys.username("user2")) == "1"
    assert len(list(r.scan_iter(match="username:*"))) == 4


def test_flush_without_yes_needs_a_terminal(r):
    make_user("keepme")
    with pytest.raises(CommandError, match="--yes"):
        run_seed("--users", "5", "--flush")
    assert r.get(account_keys.username("keepme")) is not None
    run_seed("--users", "5", "--flush", "--yes")
    assert r.get(account_keys.username("keepme")) is None


@pytest.mark.parametrize(
    "option, default",
    [
        ("--users", "1000"),
        ("--follows-per-user", "20"),
        ("--statuses-per-user", "10"),
        ("--seed", "42"),
        ("--password", DEMO_PASSWORD),
        ("--days", "28"),
        ("--append", "False"),
        ("--flush", "False"),
        ("--yes", "False"),
        ("--quiet", "False"),
        ("--verbosity", "1"),
    ],
)
def test_seed_help_explains_each_option_and_its_default(option, default):
    help_text = Command().create_parser("manage.py", "seed").format_help()
    # An option's entry runs from its name to the next option's, wrapped or not.
    entry = re.search(
        rf"^  (?:-\w \S+, )?{option}\b(.*?)(?=^  -|\Z)", help_text, re.M | re.S
    )
    assert entry, f"{option} is not in seed --help"
    words = " ".join(entry.group(1).split())
    assert re.fullmatch(
        rf"(?:\S+ )?\w.{{8,}} \(default: {re.escape(default)}\)", words
    ), words


@pytest.mark.parametrize("quiet", [["--verbosity", "0"], ["--quiet"]])
def test_seed_at_verbosity_0_prints_nothing(quiet, capsys):
    out, err = io.StringIO(), io.StringIO()
    call_command("seed", "--users", "20", *quiet, stdout=out, stderr=err)
    assert out.getvalue() == err.getvalue() == ""
    assert capsys.readouterr() == ("", "")


def test_seed_prints_progress_of_each_phase_then_the_summary(capsys):
    out = io.StringIO()
    call_command("seed", "--users", "20", stdout=out, stderr=io.StringIO())
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines[:5]] == [
        "users",
        "follows",
        "statuses",
        "polls",
        "homes",
    ]
    assert re.fullmatch(r"users +20 in [\d.]+s", lines[0].rstrip())
    assert lines[5].startswith("Seeded 20 users, ")
    assert "(10 with a poll)" in lines[5]
    assert "password 'retwis-demo-password'" in lines[6]
    assert capsys.readouterr() == ("", "")  # nothing beside the command's own output


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_one_line_on_a_terminal():
    terminal = Terminal()
    progress = Progress(OutputWrapper(terminal))
    progress.update("users", 0, 10)
    progress.update("users", 5, 10)
    progress.finish("users", 10, 0.25)
    bar, done = terminal.getvalue().rsplit("\r", 1)
    assert "\n" not in bar and bar.endswith("[###############...............] 5/10")
    assert done.rstrip(" \n") == "users      10 in 0.2s" and done.endswith("\n")


def test_a_seeded_global_timeline_pages_without_gaps(r, settings):
    settings.GLOBAL_TIMELINE_CAP = 3
    settings.TIMELINE_PAGE_SIZE = 4
    run_seed("--users", "12", "--follows-per-user", "2", "--statuses-per-user", "3")
    every = sorted(
        (int(sid) for uid in range(1, 13) for sid in r.zrange(keys.posts(uid), 0, -1)),
        reverse=True,
    )
    from accounts.selectors import PageReads
    from timeline.selectors import global_page

    shown: list[int] = []
    max_id = None
    while True:
        page = global_page(reads=PageReads(), max_id=max_id)
        shown += [status.id for status in page.statuses]
        if page.next_max_id is None:
            break
        max_id = page.next_max_id
    # The newest statuses, in order, none skipped: the partitions that dropped
    # older ones stop the pages where what they kept ends.
    assert len(shown) >= settings.GLOBAL_TIMELINE_CAP
    assert shown == every[: len(shown)]
    assert len(shown) < len(every)


def test_a_post_during_the_seeders_reservation_does_not_start_it_over(r, monkeypatch):
    from config import pipelines
    from timeline import ids

    sent: list[str] = []
    run = ids.pipeline_run

    def a_post_lands_first(build, **options):
        commands = pipelines._Commands()
        build(commands)
        if (
            commands.stack
            and commands.stack[0][0][0] == "EVALSHA"
            and len(commands.stack) == keys.ID_SHARDS
        ):
            sent.append("reserve")
            ids.status_ids_take(author_id=7)  # someone posts right now
        return run(build, **options)

    monkeypatch.setattr(ids, "pipeline_run", a_post_lands_first)
    base = ids.tick_block_reserve(1000)
    assert sent == ["reserve"]  # reserved on the first try
    (posted,) = ids.status_ids_take(author_id=7)
    assert posted > (base + 999) * keys.ID_SHARDS  # every later id is larger


def test_a_seed_writes_polls_open_and_closed_with_their_votes(r):
    # One status in 20 asks a poll (`--polls`): some still open, some closed
    # (their voters and author told, as the closing job would have), with votes
    # written as the vote script writes them.
    from tests.helpers import notifications_shown
    from timeline import jobs, polls, services, social

    run_seed("--users", "60", "--follows-per-user", "5", "--statuses-per-user", "4")
    sids = [int(s) for u in range(1, 61) for s in r.zrange(keys.posts(u), 0, -1)]
    asked = [s for s in services.statuses_read(sids) if s.poll is not None]
    assert len(asked) == 240 // 20
    now = time.time()
    open_, closed = (
        [s for s in asked if s.poll.expires > now],
        [s for s in asked if s.poll.expires <= now],
    )
    assert open_ and closed
    for status in asked:
        voters = r.zrange(keys.poll_voters(status.id), 0, -1)
        fields = r.hgetall(keys.status(status.id))
        tally = [int(n) for n in fields.get("tally", "").split()]
        tally = tally or [0] * (len(status.poll.options) + 1)
        assert tally[0] == len(voters) == sum(f.startswith("v:") for f in fields)
        chosen = [int(c) for v in voters for c in fields[f"v:{v}"].split()]
        assert tally[1:] == [chosen.count(i) for i in range(len(tally) - 1)]
        assert str(status.author_id) not in voters
    told = [s for s in closed if r.zcard(keys.poll_voters(s.id))]
    assert told
    # An open poll's closing job waits for it; a closed one's told its voters.
    for status in open_:
        queue = keys.job_queue(social._status_slot(status.id))
        assert r.zscore(queue, polls.poll_job_id(status.id)) == round(
            status.poll.expires * 1000
        )
    told = told[0]
    voter = int(r.zrange(keys.poll_voters(told.id), 0, 0)[0])
    name = user_get(uid=voter).username
    assert f"@{told.author}'s poll has ended." in " ".join(
        notifications_shown(logged_in_client(name, DEMO_PASSWORD))
    )
    author = logged_in_client(told.author, DEMO_PASSWORD)
    assert any(
        n.startswith("Your poll has ended.") for n in notifications_shown(author)
    )
    # A seeded poll takes a vote as any other, and its page shows the results.
    who = make_user("newcomer")
    open_poll = next(s for s in open_)
    polls.poll_vote(user=who, sid=open_poll.id, choices=[0])
    page = logged_in_client("newcomer").get(f"/s/{open_poll.id}/").content.decode()
    assert "(your choice)" in page
    assert not jobs.failed_ids()
