"""Bookmarks in the store (`timeline.bookmarks`): saved once, undone, a repost's
original, refused where the status cannot be seen, capped with a message, listed
newest bookmark first in pages, and left out once gone or hidden."""

from __future__ import annotations

import pytest

from accounts.domain import User
from accounts.selectors import PageReads
from accounts.services import session_create
from tests.helpers import PASSWORD, make_user, run_jobs
from timeline import blocks, bookmarks, keys, privacy, selectors, services, social
from timeline.domain import BookmarksFull, NotFound, Status


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


def reads_for(user: User) -> PageReads:
    return PageReads(session_create(uid=user.id))


def listed(user: User, max_id: int | None = None) -> list[int]:
    page = selectors.bookmarks_get(reads=reads_for(user), max_id=max_id)
    return [s.id for s in page.statuses]


def post(user: User, text: str = "hello") -> Status:
    return services.status_create(author=user, text=text)


@pytest.fixture
def users():
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def test_a_bookmark_is_saved_once_listed_and_undone(users):
    alice, bob = users["alice"], users["bob"]
    status = post(alice)
    assert bookmarks.status_bookmark(user=bob, sid=status.id) is True
    assert bookmarks.status_bookmark(user=bob, sid=status.id) is False
    assert listed(bob) == [status.id]
    assert listed(alice) == []  # nobody else sees bob's bookmarks
    assert bookmarks.status_unbookmark(user=bob, sid=status.id) is True
    assert bookmarks.status_unbookmark(user=bob, sid=status.id) is False
    assert listed(bob) == []


def test_the_list_is_newest_bookmark_first_in_pages(users, settings):
    settings.TIMELINE_PAGE_SIZE = 4
    alice, bob = users["alice"], users["bob"]
    statuses = [post(alice, f"status {i}") for i in range(7)]
    # Bookmarked oldest status last: the list follows the bookmarks' times.
    for status in [*statuses[1:], statuses[0]]:
        bookmarks.status_bookmark(user=bob, sid=status.id)
    page = selectors.bookmarks_get(reads=reads_for(bob))
    first = [s.id for s in page.statuses]
    assert first == [statuses[0].id, statuses[6].id, statuses[5].id, statuses[4].id]
    assert page.next_max_id is not None
    rest = selectors.bookmarks_get(reads=reads_for(bob), max_id=page.next_max_id)
    assert [s.id for s in rest.statuses] == [s.id for s in statuses[1:4][::-1]]
    assert rest.next_max_id is None


def test_a_repost_bookmarks_its_original_and_undoes_through_either(users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    original = post(alice)
    repost = social.status_repost(user=carol, sid=original.id)
    assert bookmarks.status_bookmark(user=bob, sid=repost.id) is True
    assert bookmarks.status_bookmark(user=bob, sid=original.id) is False
    assert listed(bob) == [original.id]
    assert bookmarks.status_unbookmark(user=bob, sid=repost.id) is True
    assert listed(bob) == []


def test_what_cannot_be_seen_cannot_be_bookmarked(users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    privacy.account_privacy_set(user=alice, private=True)
    secret = post(alice, "followers only")
    with pytest.raises(NotFound):
        bookmarks.status_bookmark(user=bob, sid=secret.id)
    blocks.block_create(blocker=carol, blocked_id=bob.id)
    with pytest.raises(NotFound):
        bookmarks.status_bookmark(user=bob, sid=post(carol).id)
    with pytest.raises(NotFound):
        bookmarks.status_bookmark(user=bob, sid=987654321)
    assert listed(bob) == []
    # The author's own, private or not, are theirs to save.
    assert bookmarks.status_bookmark(user=alice, sid=secret.id) is True
    assert listed(alice) == [secret.id]


def test_the_list_leaves_out_what_was_deleted_or_hidden_since(users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    kept, deleted, private, blocked = (
        post(alice, "kept"),
        post(alice, "deleted"),
        post(carol, "goes private"),
        post(users["alice"], "blocked later"),
    )
    dave = make_user("dave")
    blocked_later = post(dave, "dave's")
    for status in (kept, deleted, private, blocked, blocked_later):
        bookmarks.status_bookmark(user=bob, sid=status.id)
    services.status_delete(user=alice, sid=deleted.id)
    privacy.account_privacy_set(user=carol, private=True)
    blocks.block_create(blocker=dave, blocked_id=bob.id)
    run_jobs()
    assert listed(bob) == [blocked.id, kept.id]
    # Public again, carol's status is back in the list.
    privacy.account_privacy_set(user=carol, private=False)
    assert listed(bob) == [blocked.id, private.id, kept.id]


def test_a_deleted_status_can_still_be_unbookmarked(r, users):
    alice, bob = users["alice"], users["bob"]
    status = post(alice)
    bookmarks.status_bookmark(user=bob, sid=status.id)
    services.status_delete(user=alice, sid=status.id)
    run_jobs()
    assert r.zcard(keys.bookmarks(bob.id)) == 1  # counted until undone
    assert bookmarks.status_unbookmark(user=bob, sid=status.id) is True
    assert r.zcard(keys.bookmarks(bob.id)) == 0


def test_past_the_cap_a_bookmark_is_refused_and_none_is_dropped(users, monkeypatch):
    monkeypatch.setattr(bookmarks, "BOOKMARKS_MAX", 3)
    alice, bob = users["alice"], users["bob"]
    statuses = [post(alice, f"s{i}") for i in range(4)]
    for status in statuses[:3]:
        bookmarks.status_bookmark(user=bob, sid=status.id)
    with pytest.raises(BookmarksFull, match="You have 3 bookmarks"):
        bookmarks.status_bookmark(user=bob, sid=statuses[3].id)
    assert listed(bob) == [s.id for s in statuses[:3][::-1]]
    # Saving one already saved is no change, so not refused.
    assert bookmarks.status_bookmark(user=bob, sid=statuses[0].id) is False


def test_a_deleted_account_leaves_no_bookmarks(r, users):
    alice, bob = users["alice"], users["bob"]
    bookmarks.status_bookmark(user=bob, sid=post(alice).id)
    services.account_delete(user=bob, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert r.exists(keys.bookmarks(bob.id)) == 0


def test_a_visitor_has_no_bookmarks(users):
    assert selectors.bookmarks_get(reads=PageReads(None)) is None


def test_a_full_list_makes_room_from_statuses_deleted_since(r, users, monkeypatch):
    """Deleted statuses are not shown, so they could not be unbookmarked there: a
    full list drops them rather than refuse the next bookmark."""
    monkeypatch.setattr(bookmarks, "BOOKMARKS_MAX", 2)
    alice, bob = users["alice"], users["bob"]
    kept, deleted, new = (post(alice, t) for t in ("kept", "deleted", "new"))
    bookmarks.status_bookmark(user=bob, sid=kept.id)
    bookmarks.status_bookmark(user=bob, sid=deleted.id)
    services.status_delete(user=alice, sid=deleted.id)
    run_jobs()
    assert bookmarks.status_bookmark(user=bob, sid=new.id) is True
    assert listed(bob) == [new.id, kept.id]
    assert r.zcard(keys.bookmarks(bob.id)) == 2
    with pytest.raises(BookmarksFull):
        bookmarks.status_bookmark(user=bob, sid=post(alice, "one more").id)
