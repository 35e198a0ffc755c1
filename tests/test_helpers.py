"""The test helpers that compare whole stores read every value the site writes."""

from __future__ import annotations

import pytest

from accounts import keys as account_keys
from accounts import services as account_services
from config.redis import is_cluster
from tests.helpers import make_user, store_snapshot
from timeline import blocks, keys


# Day 20864 (2027-02-15) is the first whose low byte is 0x80: its copy in one
# server's `seen:days` is not UTF-8, nor is `muters` once uid 8k mutes someone.
@pytest.mark.parametrize("day", [20782, 20864])
def test_a_snapshot_reads_the_fanouts_binary_indexes(r, monkeypatch, day):
    monkeypatch.setattr(account_services, "seen_day", lambda: day)
    alice, bob = make_user("alice"), make_user("bob")
    blocks.mute_create(user=alice, muted_id=bob.id)
    snapshot = store_snapshot(r)
    assert snapshot[account_keys.seen(alice.id)] == str(day)
    if not is_cluster():
        days = snapshot[account_keys.seen_days()]  # text where the bytes are UTF-8
        raw = days if isinstance(days, bytes) else days.encode()
        assert raw[2 * alice.id : 2 * alice.id + 2] == day.to_bytes(2, "big")
        assert keys.muters() in snapshot
