"""Round trips to Redis counted at the connection: tests and benchmark support."""

from __future__ import annotations

from collections import Counter


class RoundTripCounter:
    """Count round trips to a real server or cluster while active.

    Every command and every pipeline reaches a server in one `send_packed_command`
    call and waits for its replies: one round trip each. On a Cluster one round
    trip of a pipeline (`config.cluster._send_once`) writes to several nodes before
    reading any reply: it counts once, and `most_per_node` records the most
    requests it sent to one node (one is the budget).
    """

    def __init__(self):
        self.count = 0
        self.most_per_node = 0
        self.nodes: set[str] = set()  # every server a request went to
        self._round: Counter | None = None
        self._originals: list = []

    def __enter__(self):
        from redis.connection import AbstractConnection

        from config import cluster

        counter = self
        send = AbstractConnection.send_packed_command
        send_once = cluster._send_once

        def counted(connection, *args, **kwargs):
            node = _node_of(connection)
            counter.nodes.add(node)
            if counter._round is None:
                counter.count += 1
            else:
                counter._round[node] += 1
            return send(connection, *args, **kwargs)

        def one_round(*args, **kwargs):
            counter.count += 1
            counter._round = Counter()
            try:
                return send_once(*args, **kwargs)
            finally:
                if counter._round:
                    counter.most_per_node = max(
                        counter.most_per_node, max(counter._round.values())
                    )
                counter._round = None

        self._originals = [send, send_once]
        AbstractConnection.send_packed_command = counted
        cluster._send_once = one_round
        return self

    def __exit__(self, *exc):
        from redis.connection import AbstractConnection

        from config import cluster

        AbstractConnection.send_packed_command, cluster._send_once = self._originals


def _node_of(connection) -> str:
    path = getattr(connection, "path", None)
    return path if path else f"{connection.host}:{connection.port}"


def get_round_trips(client, path: str) -> int:
    """The round trips of a GET of `path` that answers 200, warmed first
    (connections open, scripts loaded), each at most one request a node."""
    client.get(path)
    with RoundTripCounter() as counter:
        assert client.get(path).status_code == 200
    assert counter.most_per_node <= 1
    return counter.count
