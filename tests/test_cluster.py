"""What only a Redis Cluster can get wrong: slots, nodes, order across nodes,
redirects. Every test here runs on the real 3-master cluster only."""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest
import redis
from django.core.management import CommandError, call_command
from django.test import Client

from accounts import keys as account_keys
from accounts.selectors import user_get_by_username
from config import cluster as cluster_sender
from config.redis import get_redis, slot_of
from tests.helpers import logged_in_client, make_user
from tests.roundtrips import RoundTripCounter
from timeline import keys, services
from timeline.upgrades import data_keys

pytestmark = pytest.mark.cluster


def node_of(r, key: str) -> str:
    return r.nodes_manager.get_node_from_slot(slot_of(key)).name


def status_ids(html: str) -> list[int]:
    return [int(x) for x in re.findall(r'data-status-id="(\d+)"', html)]


class SentStages:
    """Records each round trip a Cluster pipeline sends: the commands' names and
    first keys."""

    def __init__(self, monkeypatch):
        self.rounds: list[list[tuple[str, str]]] = []
        self.named: list[str] = []
        original = cluster_sender._send_once

        def recorded(client, stack, pending, replies, confirm):
            self.rounds.append(
                [(str(stack[i][0][0]), _first_key(stack[i][0])) for i in pending]
            )
            self.named.extend(k for i in pending for k in _all_keys(stack[i][0]))
            return original(client, stack, pending, replies, confirm)

        monkeypatch.setattr(cluster_sender, "_send_once", recorded)

    def keys_written(self) -> set[str]:
        """Every key the recorded commands name (each of a script's keys)."""
        return set(self.named)


def _all_keys(args: tuple) -> list[str]:
    if str(args[0]).upper() == "EVALSHA":
        return [str(k) for k in args[3 : 3 + int(args[2])]]
    return [str(args[1])] if len(args) > 1 else []


def _first_key(args: tuple) -> str:
    if str(args[0]).upper() == "EVALSHA":
        return str(args[3]) if int(args[2]) else ""
    return str(args[1]) if len(args) > 1 else ""


def test_one_users_keys_share_a_slot_and_so_a_node(r):
    user = make_user("alice")
    every = [
        account_keys.user(user.id),
        account_keys.sessions(user.id),
        account_keys.devices(user.id),
        keys.posts(user.id),
        keys.home(user.id),
        keys.followers(user.id),
        keys.following(user.id),
        keys.follower_names(user.id),
        keys.follow_lock(user.id),
        keys.followed_tags(user.id),
    ]
    assert len({slot_of(key) for key in every}) == 1
    # And the store really keeps them there: one node answers for all of them.
    logged_in_client("alice").post("/post/", {"text": "hello"})
    assert len({node_of(r, key) for key in every}) == 1
    assert r.exists(keys.posts(user.id), keys.home(user.id)) == 2


def test_a_page_spanning_every_node_costs_few_round_trips_one_request_per_node(r):
    authors = [make_user(f"author{i}") for i in range(12)]
    for author in authors:
        for n in range(3):
            services.status_create(author=author, text=f"{author.username} {n}")
    # The 30 statuses on the first page live on every master.
    page_ids = sorted(
        (int(sid) for p in keys.global_partitions() for sid in r.zrange(p, 0, -1)),
        reverse=True,
    )[:30]
    assert len({node_of(r, keys.status(sid)) for sid in page_ids}) == 3
    make_user("reader")
    reader = logged_in_client("reader")
    for author in authors:
        reader.post(f"/u/{author.username}/follow/")
    # Others' statuses: their authors' cards (display name, avatar) cost one more
    # round trip on a Cluster (`timeline.selectors._STATUSES_READ`).
    trips = {"/": 3, "/timeline/": 3, "/u/author3/": 2, "/u/author3/followers/": 2}
    for url, expected in trips.items():
        reader.get(url)  # warm: connections, scripts, the name cache
        with RoundTripCounter() as counter:
            assert reader.get(url).status_code == 200
        assert counter.count == expected, url
        assert counter.most_per_node == 1, url
    with RoundTripCounter() as counter:
        assert len(status_ids(reader.get("/timeline/").content.decode())) == 30
    assert len(counter.nodes) == 3


def test_a_status_hash_is_written_before_anything_references_it(r, monkeypatch):
    alice = make_user("alice")
    bob = make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    sent = SentStages(monkeypatch)
    status = services.status_create(author=alice, text="ordered")
    trips = [[key for _, key in trip] for trip in sent.rounds]
    written = next(i for i, trip in enumerate(trips) if keys.status(status.id) in trip)
    referencing = [
        i
        for i, trip in enumerate(trips)
        for key in trip
        if key
        in (
            keys.posts(alice.id),
            keys.home(alice.id),
            keys.home(bob.id),
            keys.global_partition(status.id),
        )
    ]
    assert referencing and min(referencing) > written
    # And the delete removes the hash before any reference.
    sent.rounds.clear()
    services.status_delete(user=alice, sid=status.id)
    trips = [[key for _, key in trip] for trip in sent.rounds]
    assert trips[0] == [keys.status(status.id)]


def test_no_key_is_written_by_every_post(r, monkeypatch):
    authors = [make_user(f"poster{i}") for i in range(16)]
    sent = SentStages(monkeypatch)
    written: list[set[str]] = []
    for author in authors:
        sent.rounds.clear()
        sent.named.clear()
        ids_clock = {keys.status_clock(s) for s in range(keys.ID_SHARDS)}
        services.status_create(author=author, text="hi")
        # The id's clock is taken by a script call outside the recorded pipeline
        # stages only if it were sent another way: it is a pipeline too.
        written.append(sent.keys_written())
        assert written[-1] & ids_clock
        # The fan-out job went into the queue of the author's own slot.
        queue = keys.job_queue(keys.slot_of_user(author.id))
        assert queue in written[-1]
        assert slot_of(queue) == slot_of(keys.posts(author.id))
    assert set.intersection(*written) == set()
    # Nor by most posts: the busiest key (a global partition, a wake-up shard) is
    # written by a few of the 16.
    counts = Counter(key for keys_ in written for key in keys_)
    assert max(counts.values()) <= 4, counts.most_common(3)
    # The 16 posts wrote their ids' clocks and global partitions on every master.
    nodes = {node_of(r, key) for keys_ in written for key in keys_}
    assert len(nodes) == 3


def test_the_store_emptiness_check_counts_every_master(r):
    for i in range(40):
        r.set(f"somewhere:{i}", i)  # spread over the masters
    assert len({node_of(r, f"somewhere:{i}") for i in range(40)}) == 3
    assert data_keys(r) == 40
    with pytest.raises(CommandError, match="already holds 40 keys"):
        call_command("seed", "--users", "5", stdout=io.StringIO())


def test_seed_and_upgrade_run_on_the_cluster(r):
    call_command(
        "seed",
        "--users",
        "40",
        "--follows-per-user",
        "5",
        "--statuses-per-user",
        "3",
        stdout=io.StringIO(),
    )
    client = logged_in_client("user7", password="retwis-demo-password")
    assert len(status_ids(client.get("/timeline/").content.decode())) == 30
    out = io.StringIO()
    call_command("upgrade_store", "--dry-run", stdout=out)
    assert "Follower names: would write 0." in out.getvalue()


def test_a_stale_slot_map_is_corrected_by_the_moved_redirect(r):
    alice = make_user("alice")
    services.status_create(author=alice, text="findable")
    manager = r.nodes_manager
    slot = slot_of(keys.home(alice.id))
    right = manager.slots_cache[slot]
    wrong = next(p for p in r.get_primaries() if p.name != right[0].name)
    manager.slots_cache[slot] = [wrong]  # as if the slot had moved away
    page = logged_in_client("alice").get("/")
    assert "findable" in page.content.decode()
    assert manager.slots_cache[slot][0].name == right[0].name


def test_every_node_is_sent_the_scripts_again_after_a_flush(r):
    make_user("alice")
    alice = logged_in_client("alice")
    alice.post("/post/", {"text": "before"})
    for primary in r.get_primaries():
        r.get_redis_connection(primary).script_flush()
    assert alice.post("/post/", {"text": "after"}).status_code == 302
    assert "after" in alice.get("/").content.decode()
    assert "before" in Client().get("/timeline/").content.decode()


def test_a_command_across_slots_is_refused_before_it_is_sent(r):
    from config.pipelines import pipeline_run

    with pytest.raises(ValueError, match="2 hash slots"):
        pipeline_run(lambda pipe: pipe.delete("a{1}", "b{2}"))
    assert user_get_by_username(username="nobody") is None
    assert get_redis() is r


def test_one_servers_data_moves_onto_a_cluster_as_the_readme_says(
    r, local_cluster, tmp_path
):
    """README, "Moving one server's data onto a cluster": redis-cli --cluster import."""
    import shutil
    import subprocess
    from pathlib import Path

    from config.embedded import redis_server_binary, start_server
    from config.redis import client_for_url, key_count, set_redis
    from tests.cluster import _free_ports

    (port,) = _free_ports(1)
    url, proc = start_server(
        tmp_path, persist=False, daemonize=False,
        extra=["--port", str(port), "--bind", "127.0.0.1"],
    )  # fmt: skip
    single = client_for_url(f"redis://127.0.0.1:{port}/0", cluster=False)
    try:
        set_redis(single)
        call_command(
            "seed", "--users", "30", "--follows-per-user", "4",
            "--statuses-per-user", "2", stdout=io.StringIO(),
        )  # fmt: skip
        before = single.dbsize()
        cli = Path(redis_server_binary()).with_name("redis-cli")
        cli = str(cli) if cli.exists() else shutil.which("redis-cli")
        moved = subprocess.run(
            [cli, "--cluster", "import", f"127.0.0.1:{local_cluster.nodes[0].port}",
             "--cluster-from", f"127.0.0.1:{port}", "--cluster-copy"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        # What redis-cli said, should it refuse (once, in a run beside other test
        # runs on the same machine, it exited 1 and the reason was lost).
        assert moved.returncode == 0, moved.stdout[-2000:] + moved.stderr[-2000:]
    finally:
        set_redis(r)
        single.close()
        proc.terminate()
        proc.wait(timeout=10)
    assert key_count(r) == before
    reader = logged_in_client("user7", password="retwis-demo-password")
    assert len(status_ids(reader.get("/timeline/").content.decode())) == 30
    assert reader.post("/post/", {"text": "after the move"}).status_code == 302
    assert "after the move" in reader.get("/").content.decode()


def test_a_failed_stage_stops_the_pipeline_at_its_barrier(r):
    from config.pipelines import pipeline_run

    r.set("plain", "a string")

    def ordered(pipe) -> None:
        pipe.zadd("plain", {"x": 1})  # WRONGTYPE: the step the rest relies on fails
        pipe.barrier()
        pipe.set("after", "1")

    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        pipeline_run(ordered)
    assert r.get("after") is None
