"""`manage.py upgrade_store`: a store written in layout 1 brought to the current
layout (and a store already there left as it is), and the check that refuses an old
store until it is: pages answer 503, commands stop with its message."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.test import Client

from accounts import keys as account_keys
from accounts.selectors import PageReads, user_get_by_username
from config import redis as connection
from config.redis import is_cluster
from tests.helpers import ROOT, logged_in_client, make_away, make_user, page, run_jobs
from timeline import blocks, counts, keys, lists, services, upgrades
from timeline.selectors import global_page

PEOPLE = ("olive", "viewer", "carol", "dave", "erin", "fred")


def follow(follower: str, followee: str) -> None:
    services.follow_create(
        follower=user_get_by_username(username=follower),
        followee_id=user_get_by_username(username=followee).id,
    )


@pytest.fixture
def old_store(r) -> dict[str, int]:
    """A store as layout 1 left it: follows without follower names, a store:epoch,
    the global timeline in one zset, a status id counter, no last-seen stamps."""
    uids = {name: make_user(name).id for name in PEOPLE}
    for name in ("carol", "dave", "erin"):
        follow(name, "olive")
        follow("viewer", name)
    follow("fred", "olive")
    follow("olive", "carol")
    # fred mutes olive, whom he follows: as layout 5 left it, without the fan-out's
    # index of who mutes anyone (one server's `muters`).
    blocks.mute_create(
        user=user_get_by_username(username="fred"), muted_id=uids["olive"]
    )
    r.delete(keys.muters())
    r.delete(*(keys.follower_names(uid) for uid in uids.values()))
    r.set(account_keys.legacy_store_epoch(), "3f9c2a")
    for name in ("carol", "dave"):
        user = user_get_by_username(username=name)
        services.status_create(author=user, text=f"old post by {name}")
    for partition in keys.global_partitions():
        for sid in r.zrange(partition, 0, -1):
            r.zadd(keys.legacy_global_timeline(), {sid: sid})
        r.delete(partition)
    r.set(keys.legacy_status_ids(), 2)
    r.delete(
        *(account_keys.seen(uid) for uid in uids.values()), account_keys.seen_days()
    )
    r.delete(account_keys.names_index())
    return uids


def global_texts() -> list[str]:
    page = global_page(reads=PageReads())
    return [status.text for status in page.statuses]


def upgrade(*args: str) -> str:
    out = io.StringIO()
    call_command("upgrade_store", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def snapshot(r) -> dict[str, object]:
    """Every key and its value: what the store holds, to compare before and after."""
    read = {
        # As bytes: one server's fan-out indexes (`seen:days`, `muters`) are not text.
        "string": connection.get_redis_bytes().get,
        "hash": r.hgetall,
        "zset": lambda key: r.zrange(key, 0, -1, withscores=True),
        "set": r.smembers,
        "list": lambda key: r.lrange(key, 0, -1),
    }
    return {key: read[r.type(key)](key) for key in sorted(r.scan_iter())}


def in_common(page: str) -> str:
    """The profile's "Followed by ..." line as text, each person as a link's @name."""
    found = re.search(r'class="muted in-common">(.*?)</p>', page, re.S)
    assert found, page
    links = re.sub(r'<a href="/u/(\w+)/">@\1</a>', r"@\1", found.group(1))
    return " ".join(links.split())


def assert_every_follower_named(r, uids: dict[str, int]) -> None:
    for uid in uids.values():
        followers = r.zrange(keys.followers(uid), 0, -1)
        names = r.hgetall(keys.follower_names(uid))
        assert set(names) == set(followers)
        for follower, name in names.items():
            assert uids[name] == int(follower)


def test_upgrade_names_the_people_in_common_again(r, old_store):
    viewer = logged_in_client("viewer")
    before = in_common(viewer.get("/u/olive/").content.decode())
    assert before.startswith("Followed by 3 people you follow") and "@" not in before

    output = upgrade()

    after = in_common(viewer.get("/u/olive/").content.decode())
    assert re.fullmatch(
        r"Followed by @\w+, @\w+, @\w+ you follow \(3 in all\)\.", after
    ), after
    assert {"@carol", "@dave", "@erin"} == set(re.findall(r"@\w+", after))
    assert_every_follower_named(r, old_store)
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    assert r.exists(account_keys.legacy_store_epoch()) == 0
    assert "Follower names: wrote 8." in output
    assert "Global timeline: moved 2 entries into its partitions." in output
    assert "Legacy keys: deleted 3." in output
    # Five: the viewer was stamped by the page they read before the upgrade.
    assert "Last-seen stamps: stamped 5 users as seen today." in output
    assert f"Layout: recorded {upgrades.LAYOUT}." in output
    assert f"People search: added {len(PEOPLE)} names to the index." in output
    marked = "complete." if is_cluster() else "marked 1 users who mute someone."
    assert f"Fan-out's index of muters: {marked}" in output
    # Every reader is active again: a new post reaches the followers' homes, but
    # fred's, who mutes olive.
    owner = user_get_by_username(username="olive")
    status = services.status_create(author=owner, text="after the upgrade")
    run_jobs()
    for name in ("carol", "dave", "erin"):
        assert r.zscore(keys.home(old_store[name]), status.id) is not None
    assert r.zscore(keys.home(old_store["fred"]), status.id) is None


def test_upgrade_partitions_the_global_timeline(r, old_store):
    assert global_texts() == []
    upgrade()
    assert global_texts() == ["old post by dave", "old post by carol"]
    assert r.exists(keys.legacy_global_timeline(), keys.legacy_status_ids()) == 0
    # New ids come after the old ones, however small the old counter was.
    new = services.status_create(
        author=user_get_by_username(username="erin"), text="new"
    )
    assert global_texts() == ["new", "old post by dave", "old post by carol"]
    assert new.id > 2**40


def test_dry_run_reports_and_writes_nothing(r, old_store):
    before = snapshot(r)
    output = upgrade("--dry-run")
    assert snapshot(r) == before
    assert "Follower names: would write 8." in output
    assert "Global timeline: would move 2 entries into its partitions." in output
    assert "Legacy keys: would delete 3." in output
    assert f"Layout: would record {upgrades.LAYOUT}." in output
    assert "Dry run: nothing was written." in output


def test_a_second_run_changes_nothing(r, old_store):
    upgrade()
    after_first = snapshot(r)
    output = upgrade()
    assert snapshot(r) == after_first
    assert "Follower names: wrote 0." in output
    assert "Legacy keys: none." in output
    assert "Global timeline: already partitioned." in output
    assert f"Layout: already {upgrades.LAYOUT}; unchanged." in output


def test_an_interrupted_upgrade_completes_when_run_again(r, old_store):
    def interrupt(report):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        upgrades.store_upgrade(batch=1, progress=interrupt)
    # One batch of names is written; the run got no further.
    written = sum(r.hlen(keys.follower_names(uid)) for uid in old_store.values())
    assert 0 < written < 8
    assert r.get(keys.store_layout()) is None
    assert r.exists(account_keys.legacy_store_epoch()) == 1

    output = upgrade()

    assert_every_follower_named(r, old_store)
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    assert r.exists(account_keys.legacy_store_epoch()) == 0
    assert "Checked 4 followers sets (8 follows)" in output


def test_an_unfollow_during_the_upgrade_leaves_no_stale_name(r, old_store, monkeypatch):
    real_users_queue = upgrades.users_queue

    def unfollow_then_read(*args, **kwargs):
        # Fred unfollows after the upgrade saw him among the owner's followers.
        services.follow_delete(
            follower=user_get_by_username(username="fred"),
            followee_id=old_store["olive"],
        )
        return real_users_queue(*args, **kwargs)

    monkeypatch.setattr(upgrades, "users_queue", unfollow_then_read)
    report = upgrades.store_upgrade(batch=len(PEOPLE))
    assert r.zscore(keys.followers(old_store["olive"]), old_store["fred"]) is None
    assert r.hget(keys.follower_names(old_store["olive"]), old_store["fred"]) is None
    assert_every_follower_named(r, old_store)
    assert report.names_added == 7


def test_a_follower_without_a_user_hash_is_left_unnamed_and_reported(r, old_store):
    r.delete(account_keys.user(old_store["fred"]))
    output = upgrade()
    assert r.hget(keys.follower_names(old_store["olive"]), old_store["fred"]) is None
    assert "1 follows left unnamed: the follower's user hash is gone." in output
    assert "Follower names: wrote 7." in output


def test_large_followers_sets_are_read_in_chunks(r, monkeypatch):
    monkeypatch.setattr(upgrades, "ZSCAN_COUNT", 5)
    star = make_user("star")
    fans = [make_user(f"fan{i}") for i in range(23)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    r.delete(keys.follower_names(star.id))
    upgrade("--batch", "2")
    assert r.hgetall(keys.follower_names(star.id)) == {
        str(fan.id): fan.username for fan in fans
    }


def test_a_newer_recorded_layout_is_never_lowered(r, old_store):
    newer = str(upgrades.LAYOUT + 1)
    r.set(keys.store_layout(), newer)
    upgrade()
    assert r.get(keys.store_layout()) == newer


def test_verbosity_0_prints_nothing_and_2_prints_each_batch(r, old_store, capsys):
    # Each batch on the old store (a run on an upgraded one walks nothing), then
    # silence on the upgraded one.
    lines = upgrade("--verbosity", "2", "--batch", "1").splitlines()
    progress = [line for line in lines if line.startswith("  ")]
    assert [line.split()[0] for line in progress] == ["1", "2", "3", "4"]
    assert lines[-1] == f"Layout: recorded {upgrades.LAYOUT}."
    assert upgrade("--verbosity", "0") == ""
    assert capsys.readouterr() == ("", "")


@pytest.fixture
def first_connection(redis_client, monkeypatch):
    """Build the process's client as a fresh process does, checks included."""
    monkeypatch.setattr(connection, "_build_client", lambda: redis_client)
    monkeypatch.setattr(connection, "_checks_enabled", True)
    connection.set_redis(None)
    yield
    connection.set_redis(redis_client)


def test_an_old_store_is_refused_until_upgraded(r, old_store, first_connection):
    with pytest.raises(upgrades.StoreOutdated, match="manage.py upgrade_store"):
        connection.get_redis()
    page = Client().get("/timeline/")
    assert page.status_code == 503
    assert "being upgraded" in page.content.decode()
    upgrade()
    assert connection.get_redis() is r


def test_an_empty_store_is_stamped_with_the_current_layout(r, first_connection):
    assert connection.get_redis() is r
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    assert upgrades.data_keys(r) == 0


def test_a_store_of_a_newer_version_is_refused(r, old_store, first_connection):
    r.set(keys.store_layout(), upgrades.LAYOUT + 1)
    with pytest.raises(upgrades.StoreOutdated, match="newer version"):
        connection.get_redis()


def test_upgrade_makes_everyone_findable_by_name(r, old_store):
    olive = logged_in_client("olive")
    olive.post("/settings/profile/", {"name": "Olive Oyl", "bio": ""})
    r.delete(account_keys.names_index())
    viewer = logged_in_client("viewer")
    assert "/u/olive/" not in viewer.get("/search/?q=olive%20o").content.decode()
    assert "would add" in upgrade("--dry-run")
    assert r.exists(account_keys.names_index()) == 0
    upgrade()
    assert 'href="/u/olive/"' in viewer.get("/search/?q=olive").content.decode()
    assert 'href="/u/olive/"' in viewer.get("/search/?q=olive%20o").content.decode()
    assert r.zcard(account_keys.names_index()) == len(PEOPLE) + 1
    assert "People search: every name is indexed." in upgrade()


# --- a run on an upgraded store --------------------------------------------------


@pytest.fixture
def away_reader(r):
    """An upgraded store where alice posted while bob, who follows her, was away:
    the fan-out skipped him, and his home is to be rebuilt when he is back."""
    upgrades.layout_stamp(r)
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    make_away(r, bob.id)
    services.status_create(author=alice, text="while bob was away")
    run_jobs()
    assert r.zcard(keys.home(bob.id)) == 0
    return alice, bob


def test_upgrade_store_on_an_upgraded_store_writes_no_seen_stamp(r, away_reader):
    """The README's "a run on an upgraded store changes nothing": the layout-4 step
    (everyone seen today) runs only on a store that predates layout 4."""
    _, bob = away_reader
    before = snapshot(r)
    output = upgrade()
    assert r.exists(account_keys.seen(bob.id)) == 0
    assert snapshot(r) == before
    assert "Last-seen stamps: every user has one." in output
    assert f"The store had layout {upgrades.LAYOUT}: the steps" in output


def test_upgrade_store_rerun_leaves_timelines_check_clean(r, away_reader):
    """An operator who reruns it (after copying a store, say) then finds no home
    "missing" statuses in `timelines check`: bob is still away."""
    upgrade()
    out = io.StringIO()
    call_command("timelines", "check", stdout=out, stderr=io.StringIO())
    assert "No problems found." in out.getvalue()


def test_an_away_reader_back_after_an_upgrade_store_rerun_gets_the_statuses(
    r, away_reader
):
    """Bob comes back after the rerun: his home is rebuilt with what he missed."""
    upgrade()
    bob = logged_in_client("bob")
    page(bob, "/")
    run_jobs()
    assert "while bob was away" in page(bob, "/")


def test_a_store_of_layout_3_gets_the_steps_of_layouts_4_to_6(r, old_store):
    """Every step newer than the recorded layout runs, and none older."""
    r.set(keys.store_layout(), 3)
    output = upgrade()
    assert "Last-seen stamps: stamped 6 users as seen today." in output
    assert f"People search: added {len(PEOPLE)} names to the index." in output
    assert "Follower names: wrote 0." in output  # layout 2's step: not run
    assert "Global timeline: already partitioned." in output  # layout 3's
    assert r.exists(account_keys.legacy_store_epoch()) == 1
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)


@pytest.mark.single_server
def test_a_store_copied_from_a_cluster_gets_its_index_of_muters(r, old_store):
    """A cluster's store records the current layout without one server's `muters`;
    the README says to run upgrade_store after copying it onto one server."""
    upgrades.layout_stamp(r)
    assert "marked 1 users who mute someone." in upgrade()
    assert r.getbit(keys.muters(), old_store["fred"]) == 1


# --- commands on a store of another layout ---------------------------------------


@pytest.mark.single_server
@pytest.mark.parametrize(
    "command",
    [
        ["timelines", "check"],
        ["timelines", "repair"],
        ["fanout_worker"],
        ["fanout_worker", "--stats"],
        ["seed", "--users", "5", "--append"],
    ],
)
def test_commands_on_an_old_store_stop_with_the_message(r, real_redis_url, command):
    """The README's promise: the management commands stop with the message that
    names upgrade_store (exit status 1), not a traceback."""
    r.set(keys.store_layout(), upgrades.LAYOUT - 1)
    r.set(account_keys.user(1), "x")
    done = manage(real_redis_url, *command)
    assert done.returncode == 1
    assert "upgrade_store" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-600:]


@pytest.mark.single_server
def test_seed_flush_replaces_a_store_of_another_layout(r, real_redis_url):
    """An operator starting over wipes a store the site refuses with `seed --flush`."""
    r.set(keys.store_layout(), upgrades.LAYOUT - 1)
    r.set(account_keys.user(1), "x")
    done = manage(real_redis_url, "seed", "--flush", "--yes", "--users", "5", "--quiet")
    assert done.returncode == 0, done.stderr[-600:]
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    assert user_get_by_username(username="user1") is not None


def manage(redis_url: str, *command: str) -> subprocess.CompletedProcess:
    """`manage.py <command>` in a fresh process, as an operator runs it."""
    return manage_env({"REDIS_URL": redis_url}, *command)


def manage_env(env_vars: dict, *command: str) -> subprocess.CompletedProcess:
    """`manage.py <command>` in a fresh process with these environment values."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **env_vars,
    }
    return subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.fake_redis  # no store: the command's own Redis is the unreachable one
@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("redis://127.0.0.1:1/0", "Cannot reach Redis at redis://127.0.0.1:1/0"),
        ("redis://:secret@127.0.0.1:1/0", "redis://:***@127.0.0.1:1/0"),
        ("redis://127.0.0.1:1/0?password=secret", "redis://127.0.0.1:1/0?password=***"),
        ("http://127.0.0.1:1", "REDIS_URL"),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["timelines", "check"], ["fanout_worker", "--stats"], ["upgrade_store"]],
)
def test_commands_that_cannot_reach_redis_say_so_in_a_line(url, said, command):
    """A store command whose REDIS_URL is wrong, or whose Redis is down, stops
    with one line that names the address (its password hidden) and REDIS_URL,
    exit status 1, as an old store's message does: it printed 60 lines of the
    Redis library's traceback (found by exploratory testing)."""
    done = manage(url, *command)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert said in done.stderr
    assert "secret" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


@pytest.mark.fake_redis
def test_a_cluster_that_cannot_be_reached_is_said_in_a_line():
    done = manage_env(
        {"REDIS_URL": "redis://127.0.0.1:1/0", "REDIS_CLUSTER": "true"},
        "timelines",
        "check",
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert "Cannot reach Redis at redis://127.0.0.1:1/0" in done.stderr


def forget_counts(r) -> None:
    """The store as layout 6 left it: users and statuses, no counts of them."""
    for key in [*r.scan_iter(match=keys.counts_pattern()), keys.counts_site()]:
        r.delete(key)


def instance_stats() -> dict:
    return Client().get("/api/v1/instance").json()["stats"]


def test_upgrade_counts_the_accounts_and_statuses_of_a_store_without_counts(r):
    alice, bob, carol = (make_user(name) for name in ("alice", "bob", "carol"))
    for user in (alice, bob, alice):
        services.status_create(author=user, text=f"by {user.username}")
    services.account_close(user=carol)
    forget_counts(r)
    r.set(keys.store_layout(), 6)
    output = upgrade("--dry-run")
    assert "Site counts: would count 2 users and 3 statuses." in output
    upgrade()
    assert instance_stats() == {"user_count": 2, "status_count": 3, "domain_count": 0}
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    # And the counts go on from there, as the workers add them up.
    services.status_create(author=bob, text="after the upgrade")
    counts.site_sum(claim=False)
    assert instance_stats()["status_count"] == 4


def test_upgrade_keeps_an_exclusive_lists_members_out_of_its_owners_home(r, settings):
    """A store of layout 8 with an exclusive list (its members were shown in the home
    then: the flag was kept, not applied) gets the list's members' set, and their
    statuses leave the owner's home; the fan-out keeps their next ones out."""
    settings.RATE_LIMIT_POST = "off"
    alice, bob, carol = (make_user(name) for name in ("alice", "bob", "carol"))
    for followee in (alice, carol):
        services.follow_create(follower=bob, followee_id=followee.id)
    run_jobs()
    lid = lists.list_create(uid=bob.id, title="Alice", exclusive=True).id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    # As layout 8 left it: no set, and alice's status pushed into bob's home.
    r.delete(keys.list_exclusive(bob.id))
    if not is_cluster():
        r.setbit(keys.muters(), bob.id, 0)
    sid = services.status_create(author=alice, text="from alice").id
    services.status_create(author=carol, text="from carol")
    run_jobs()
    assert r.zscore(keys.home(bob.id), sid) is not None
    r.set(keys.store_layout(), 8)
    output = upgrade("--dry-run")
    assert "Exclusive lists: would build the set of 1 users with lists." in output
    upgrade()
    assert r.get(keys.store_layout()) == str(upgrades.LAYOUT)
    assert r.zrange(keys.list_exclusive(bob.id), 0, -1) == [str(alice.id)]
    assert r.zscore(keys.home(bob.id), sid) is None
    later = services.status_create(author=alice, text="after the upgrade").id
    run_jobs()
    assert r.zscore(keys.home(bob.id), later) is None
    home = page(logged_in_client("bob"), "/")
    assert "from carol" in home and "from alice" not in home
