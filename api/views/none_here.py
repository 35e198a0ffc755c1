"""What a client asks for at start-up that the site has none of, answered as an
instance without them answers: custom emoji and announcements are empty, and the
preferences are the account's. (Filters, markers and lists, read at start-up too,
are kept: `api.views.filters`, `api.views.markers`, `api.views.lists`.)

Tusky, Ivory and Elk read these when an account is added or the app starts (a
4.x instance has them all); a 404 there is an error some of them show, or a
start-up that stops. An empty list is the truth: the site has no custom emoji
and makes no announcements.
"""

from __future__ import annotations

from api.http import NONE, Op, endpoint


def _none(request) -> list:
    return []


def _preferences(request) -> dict:
    """The defaults a client's compose box starts from: a private account's
    statuses are for its followers (`private`), anyone else's are public; the
    site has no sensitive media or languages, and content warnings start
    folded, as the site's pages show them."""
    return {
        "posting:default:visibility": "private" if request.user.private else "public",
        "posting:default:sensitive": False,
        "posting:default:language": None,
        "reading:expand:media": "default",
        "reading:expand:spoilers": False,
    }


custom_emojis = endpoint(GET=Op(_none, auth=NONE))
announcements = endpoint(GET=Op(_none, scope="read"))
preferences = endpoint(GET=Op(_preferences, scope="read:accounts"))
