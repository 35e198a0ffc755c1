"""What clients read at start-up that the site has none of: empty answers, not
404s (found by exploratory testing: Tusky, Ivory and Elk read these when an
account is added), and the preferences of the account."""

from __future__ import annotations

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user
from timeline import privacy


@pytest.fixture(autouse=True)
def _backend(redis_backend):
    pass


@pytest.mark.parametrize(
    ("path", "empty"),
    [
        ("/api/v1/custom_emojis", []),
        ("/api/v1/announcements", []),
        # Kept, but none made or saved yet (`test_lists`, `test_markers`).
        ("/api/v1/lists", []),
        ("/api/v1/markers?timeline[]=home&timeline[]=notifications", {}),
    ],
)
def test_start_up_reads_answer_that_there_is_none(path, empty):
    alice = make_user("alice")
    response = api_client(token_for(alice)).get(path)
    assert response.status_code == 200
    assert response.json() == empty


def test_start_up_reads_need_their_scopes_but_custom_emoji():
    alice = make_user("alice")
    statuses_only = api_client(token_for(alice, scopes=("read:statuses",)))
    assert statuses_only.get("/api/v1/lists").status_code == 403
    assert statuses_only.get("/api/v1/filters").status_code == 403
    assert statuses_only.get("/api/v1/markers").status_code == 200
    assert api_client().get("/api/v1/lists").status_code == 401
    assert api_client().get("/api/v1/custom_emojis").status_code == 200


def test_preferences_say_the_default_visibility_of_the_account():
    alice = make_user("alice")
    client = api_client(token_for(alice))
    assert client.get("/api/v1/preferences").json() == {
        "posting:default:visibility": "public",
        "posting:default:sensitive": False,
        "posting:default:language": None,
        "reading:expand:media": "default",
        "reading:expand:spoilers": False,
    }
    privacy.account_privacy_set(user=alice, private=True)
    answer = client.get("/api/v1/preferences").json()
    assert answer["posting:default:visibility"] == "private"
