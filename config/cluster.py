"""Pipelines on a Redis Cluster: each command to the node that serves its slot.

redis-py's ClusterPipeline refuses EVALSHA and asks the server for each script's
keys (one more round trip per script); this sends the site's pipelines itself.
`send_stages` splits a pipeline at its barriers; within a stage the commands are
grouped by node, written to every node before any reply is read (one round trip
per stage, at most one request per node), and answered in the order queued.

- MOVED and ASK (a slot moved or moving) and TRYAGAIN: the command did not run, so
  it is sent again, to the node named (ASK: after ASKING), at most
  `REDIRECTS` times.
- NOSCRIPT: the stage runs again once every primary has the scripts (a pipeline
  with a script holds only steps that are safe to repeat).
- A node that does not answer, or a cluster that is down, raises the error (the
  503 page); the next pipeline first asks the cluster for its slots again, so the
  site follows a failover without a restart.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import redis
from redis.cluster import ClusterNode

from config.pipelines import _confirmed, _exchange, _send, _wait_command, load_scripts
from config.redis import slot_of

REDIRECTS = 5
# Commands whose every argument is a key (their keys must share a slot).
_ALL_KEYS = {"DEL", "EXISTS", "UNLINK", "MGET", "TOUCH"}
_stale = threading.Event()  # set: the slot map may be out of date
_refresh_lock = threading.Lock()


def command_slot(args: tuple) -> int | None:
    """The slot a command's keys live in; None for a command without keys."""
    name = str(args[0]).upper()
    if name in ("EVALSHA", "EVAL"):
        keys = args[3 : 3 + int(args[2])]
    elif name in _ALL_KEYS:
        keys = args[1:]
    else:
        keys = args[1:2]
    if not keys:
        return None
    slots = {slot_of(str(key)) for key in keys}
    if len(slots) > 1:
        raise ValueError(  # a bug, not an outage: the 500 page, not the 503
            f"{name} touches keys of {len(slots)} hash slots; a Cluster allows one"
        )
    return slots.pop()


def _refresh(client: redis.RedisCluster) -> None:
    if not _stale.is_set():
        return
    with _refresh_lock:
        if _stale.is_set():
            client.nodes_manager.initialize()
            _stale.clear()


def send_stages(
    client: redis.RedisCluster,
    stack: list[tuple[tuple, dict]],
    barriers: list[int],
    confirm: bool,
) -> list:
    """Send a pipeline's commands, stage by stage; return the replies in order."""
    replies: list[Any] = [None] * len(stack)
    bounds = [0, *barriers, len(stack)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        if start < end:
            _send_stage(client, stack, range(start, end), replies, confirm)
            # A stage that failed is not followed: what comes after a barrier
            # relies on what came before it.
            for reply in replies[start:end]:
                if isinstance(reply, redis.exceptions.ResponseError):
                    raise reply
    return replies


def _send_stage(
    client: redis.RedisCluster,
    stack: list[tuple[tuple, dict]],
    indices: range,
    replies: list,
    confirm: bool,
) -> None:
    try:
        _refresh(client)
        pending: dict[int, ClusterNode | None] = dict.fromkeys(indices)
        for attempt in range(REDIRECTS + 1):
            redirected = _send_once(client, stack, pending, replies, confirm)
            if not redirected:
                return
            if attempt == REDIRECTS:
                break
            if any(node is None for node in redirected.values()):
                time.sleep(0.05 * (attempt + 1))  # TRYAGAIN: a slot is migrating
            pending = redirected
        raise redis.exceptions.ClusterError(
            f"commands were still redirected after {REDIRECTS} tries"
        )
    except (
        redis.exceptions.ConnectionError,
        redis.exceptions.TimeoutError,
        redis.exceptions.ClusterDownError,
        redis.exceptions.SlotNotCoveredError,
    ):
        _stale.set()
        raise


def _send_once(
    client: redis.RedisCluster,
    stack: list[tuple[tuple, dict]],
    pending: dict[int, ClusterNode | None],
    replies: list,
    confirm: bool,
) -> dict[int, ClusterNode | None]:
    """Send the pending commands (index -> the node an ASK named, else None) once.

    Store each reply; return the commands to send again, with where to.
    """
    manager = client.nodes_manager
    by_node: dict[ClusterNode, list[int]] = {}
    asking: set[int] = set()
    for i, ask_node in pending.items():
        if ask_node is not None:
            node = ask_node
            asking.add(i)
        else:
            slot = command_slot(stack[i][0])
            node = (
                manager.get_node_from_slot(slot)
                if slot is not None
                else client.get_default_node()
            )
        by_node.setdefault(node, []).append(i)

    wait = _wait_command() if confirm else None
    readers = []
    try:
        for node, indices in by_node.items():
            batch: list[tuple[tuple, dict]] = []
            for i in indices:
                if i in asking:
                    batch.append((("ASKING",), {}))
                batch.append(stack[i])
            if wait:
                batch.append(wait)
            server = client.get_redis_connection(node)
            readers.append((node, indices, server, _exchange(server, batch)))
    finally:
        # Every request written is read, even when a later node failed.
        results = []
        error: BaseException | None = None
        for node, indices, server, read in readers:
            try:
                results.append((node, indices, server, read()))
            except BaseException as failure:
                error = error or failure
        if error is not None:
            raise error

    redirected: dict[int, ClusterNode | None] = {}
    lost_scripts: list[int] = []
    for _node, indices, _server, got in results:
        if wait:
            _confirmed(got.pop())
        got = [
            reply
            for reply, asked in _with_asking(got, indices, asking)
            if not asked  # the reply to ASKING itself
        ]
        for i, reply in zip(indices, got, strict=True):
            if isinstance(reply, redis.exceptions.MovedError):
                _stale.set()
                redirected[i] = None
            elif isinstance(reply, redis.exceptions.AskError):
                redirected[i] = _node_at(client, reply.host, reply.port)
            elif isinstance(reply, redis.exceptions.TryAgainError):
                redirected[i] = None
            elif isinstance(reply, redis.exceptions.NoScriptError):
                lost_scripts.append(i)
                replies[i] = reply
            elif isinstance(reply, redis.exceptions.ClusterDownError):
                _stale.set()  # a failover is under way: ask again next time
                replies[i] = reply
            else:
                replies[i] = reply
    if lost_scripts:
        for primary in client.get_primaries():
            load_scripts(client.get_redis_connection(primary))
        # Only the script calls that answered NOSCRIPT (they did not run) go again:
        # the stage's other commands ran, and must not run twice.
        redirected.update({i: None for i in lost_scripts})
    if redirected and _stale.is_set():
        _refresh(client)
    return redirected


def _with_asking(got: list, indices: list[int], asking: set[int]):
    """Pair each reply with whether it answers an ASKING (sent before asked ones)."""
    replies = iter(got)
    for i in indices:
        if i in asking:
            yield next(replies), True
        yield next(replies), False


def _node_at(client: redis.RedisCluster, host: str, port: int) -> ClusterNode:
    node = client.get_node(host=host, port=port)
    if node is None:
        client.nodes_manager.initialize()
        node = client.get_node(host=host, port=port)
    if node is None:
        raise redis.exceptions.ClusterError(f"no node at {host}:{port}")
    return node


_primaries: tuple[dict, list] | None = None  # (the slot map, its primaries' slots)


def primaries_slots(client: redis.RedisCluster) -> list[tuple[ClusterNode, list[int]]]:
    """Each primary with the slots it serves, as this client's slot map has them
    (which a resharding may have left behind: a command to a slot that moved
    answers MOVED, and a script that reads a key its node does not serve fails).
    Worked out again only when the client asks the cluster for its slots again:
    grouping the 16,384 slots cost a sweep 15 ms of CPU."""
    global _primaries
    _refresh(client)
    slot_map = client.nodes_manager.slots_cache
    known = _primaries
    if known is not None and known[0] is slot_map:
        return known[1]
    by_name: dict[str, list[int]] = {}
    nodes: dict[str, ClusterNode] = {}
    for slot, serving in slot_map.items():
        nodes[serving[0].name] = serving[0]
        by_name.setdefault(serving[0].name, []).append(slot)
    grouped = [(nodes[name], sorted(slots)) for name, slots in by_name.items()]
    _primaries = (slot_map, grouped)
    return grouped


def node_send(
    client: redis.RedisCluster, node: ClusterNode, stack: list[tuple[tuple, dict]]
) -> list:
    """Send commands to one node in one round trip, with no redirection: for
    scripts that name no key and read keys of many slots that node serves (a
    Cluster lets a script read any key its node serves, as long as the script
    declares no keys of different slots). The first error reply is raised; a node
    that lost the scripts is sent them, and the script calls run again."""
    global _primaries
    try:
        return _send(client.get_redis_connection(node), stack, confirm=False)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
        _stale.set()
        raise
    except redis.exceptions.ResponseError:
        # A slot moved (or is moving): the next pipeline asks the cluster for its
        # slots again, and the next grouping follows. (redis-py also edits its
        # slot map in place on a MOVED, which `primaries_slots` would not see.)
        _primaries = None
        _stale.set()
        raise
