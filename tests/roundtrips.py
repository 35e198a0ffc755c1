"""Round trips to Redis counted at the connection: tests and benchmark support."""

from __future__ import annotations


class RoundTripCounter:
    """Count round trips to a real server while active (tests and benchmarks).

    Every command, and every pipeline, reaches the server in one
    `send_packed_command` call and waits for its replies: one round trip each.
    """

    def __init__(self):
        self.count = 0
        self._original = None

    def __enter__(self):
        from redis.connection import AbstractConnection

        self._original = original = AbstractConnection.send_packed_command
        counter = self

        def counted(connection, *args, **kwargs):
            counter.count += 1
            return original(connection, *args, **kwargs)

        AbstractConnection.send_packed_command = counted
        return self

    def __exit__(self, *exc):
        from redis.connection import AbstractConnection

        AbstractConnection.send_packed_command = self._original
