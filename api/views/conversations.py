"""Conversations (Mastodon's): the viewer's direct messages, grouped as the site's
Messages page shows them (`timeline.direct`, `selectors.conversations_get`).

A Conversation's `id` is the id of the direct message it began with; `accounts`
are the others in it (their Accounts), `last_status` its newest message the
viewer may see, `unread` whether it has one they have not read. Paged by the
newest messages' ids (`max_id`, `since_id`, `min_id`, `Link`), as Mastodon pages
them. Three round trips: the conversations with the token's check, their newest
messages with the others in them, then the Accounts and the statuses' own.
"""

from __future__ import annotations

from api import entities
from api.http import Op, Reply, endpoint, not_found
from api.pagination import Window, link_header
from api.views.statuses import entities_of
from timeline import direct, selectors
from timeline.domain import Conversation
from timeline.selectors import accounts_queue


def _entities(request, found: list[Conversation]) -> list[dict]:
    people = accounts_queue(request.reads, {u for c in found for u in c.people})
    # The statuses' own reads ride with the accounts'.
    statuses = entities_of(request, [c.last for c in found])
    urls = entities.Urls.of(request)
    accounts = people.value
    return [
        {
            "id": str(conversation.id),
            "unread": conversation.unread,
            "accounts": [
                entities.account(accounts[user.id], urls)
                for user in conversation.others
                if user.id in accounts
            ],
            "last_status": status,
        }
        for conversation, status in zip(found, statuses, strict=True)
    ]


def _index(request) -> Reply:
    window = Window.of(request)
    found = selectors.conversations_get(
        reads=request.reads,
        size=window.limit,
        max_id=window.max_id,
        since_id=window.since_id,
        min_id=window.min_id,
    )
    if found is None:
        return Reply([])
    return Reply(
        _entities(request, found.conversations),
        headers=link_header(
            request, next_max_id=found.next_max_id, prev_min_id=found.prev_min_id
        ),
    )


def _remove(request, id: str) -> dict:
    """Take the conversation off the viewer's list (its messages stay; a new one
    brings it back); 404 for one not on it."""
    if not direct.conversation_remove(uid=request.user.id, conversation=int(id)):
        raise not_found()
    return {}


def _read(request, id: str) -> dict:
    """Mark the conversation read; the Conversation."""
    conv = int(id)
    found = selectors.conversation_get(reads=request.reads, conversation=conv)
    if found is None:
        raise not_found()
    direct.conversation_read(uid=request.user.id, conversation=conv)
    (entity,) = _entities(request, [found])
    entity["unread"] = False
    return entity


conversations = endpoint(GET=Op(_index, scope="read:statuses"))
conversation = endpoint(DELETE=Op(_remove, scope="write:conversations"))
conversation_read = endpoint(POST=Op(_read, scope="write:conversations"))
