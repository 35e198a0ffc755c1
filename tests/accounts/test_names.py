"""The per-process memory of usernames (accounts.names): a profile's address
answers the same whatever the process saw before."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import names
from tests.helpers import make_user

KELVIN_KATE = "\u212aate"  # KELVIN SIGN: str.lower() makes it "kate"


def test_a_look_alike_name_never_opens_a_profile(r):
    """`/u/<K>ate/` with the Kelvin sign (U+212A) is not a username: it answers 404
    whether or not this process saw `kate` first."""
    make_user("kate")
    names.forget("kate")
    first = Client().get(f"/u/{KELVIN_KATE}/").status_code
    assert Client().get("/u/kate/").status_code == 200
    second = Client().get(f"/u/{KELVIN_KATE}/").status_code
    assert (first, second) == (404, 404)


@pytest.mark.parametrize("name", [KELVIN_KATE, "kate\n", "KATE\n"])
def test_only_a_well_formed_name_is_remembered_or_confirmed(name):
    names.remember("kate", 7)
    names.remember(name, 8)
    user = type("User", (), {"username": "kate"})()
    assert names.remembered_id(name) is None
    assert not names.confirms(user, name)
    assert names.remembered_id("KATE") == 7 and names.confirms(user, "KATE")
    names.forget("kate")
