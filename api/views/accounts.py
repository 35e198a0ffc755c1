"""Accounts: the token's own user, other people, and the follow graph."""

from __future__ import annotations

from accounts import limits
from accounts import services as account_services
from accounts.avatars import AVATAR_UPLOAD_MAX_BYTES
from accounts.domain import InvalidAvatar, InvalidCredentials, InvalidProfile, User
from accounts.selectors import users_queue
from api import entities
from api.http import (
    OPTIONAL,
    ApiError,
    Op,
    Reply,
    endpoint,
    flag,
    not_found,
    param,
    param_list,
    params,
    unprocessable,
)
from api.pagination import Window, link_header
from config.http import same_host
from timeline import privacy, selectors, services
from timeline.domain import CannotFollowSelf
from timeline.selectors import accounts_queue

# Mastodon's lists of accounts: 40 by default, at most 80.
ACCOUNTS_LIMIT = 40
ACCOUNTS_MAX = 80


def _credential_account(request, found: dict, requests) -> dict:
    """The token's own user as a CredentialAccount, with the count of follow
    requests waiting for them."""
    viewer = request.user
    if not viewer.is_authenticated or viewer.id not in found:
        raise ApiError(401, "The access token is invalid")
    entity = entities.account(found[viewer.id], entities.Urls.of(request), source=True)
    entity["source"]["follow_requests_count"] = requests.value
    return entity


def verify_credentials(request) -> dict:
    """The token's own user, with `source` (what the settings page edits)."""
    reads = request.reads
    uid = reads.claimed_uid
    if uid is None:
        raise ApiError(401, "The access token is invalid")
    found = accounts_queue(reads, [uid])
    requests = selectors.follow_requests_count_queue(reads)
    return _credential_account(request, found.value, requests)


verify = endpoint(GET=Op(verify_credentials, scope=("read:accounts", "profile")))


def _avatar_sent(request) -> bytes | None:
    """The avatar a multipart change sends, decoded and re-encoded as stored
    (`avatar_prepare`: its checks and the posting budget), None when none is;
    422 for a header, which the site has none of, rather than a silent 200."""
    if request.FILES.get("header") is not None:
        raise unprocessable("The site has no header images: header is not supported")
    upload = request.FILES.get("avatar")
    if upload is None:
        return None
    if upload.size > AVATAR_UPLOAD_MAX_BYTES:
        raise unprocessable(
            f"An avatar is at most {AVATAR_UPLOAD_MAX_BYTES // (1024 * 1024)} MB"
        )
    try:
        return account_services.avatar_prepare(
            data=upload.read(), limit=limits.post(request.user.id)
        )
    except InvalidAvatar as error:
        raise unprocessable(str(error)) from error


def update_credentials(request) -> dict:
    """Change the display name, the bio (`note`), the avatar (a multipart file) and
    whether the account is private (`locked`); the CredentialAccount as now stored.
    A refused field changes nothing: the avatar is decoded and the name and bio
    checked (`profile_update`) before anything is written; the avatar is written
    next, and the privacy, which cannot be refused, last. Mastodon's other fields
    (`fields_attributes`, `bot`, `discoverable`...) are ignored, as the site has
    none of them to keep."""
    viewer = request.user
    values = params(request)  # first: it parses a PATCH's multipart files too
    avatar = _avatar_sent(request)
    name = param(values, "display_name")
    bio = param(values, "note")
    if name is not None or bio is not None:
        try:
            account_services.profile_update(
                user=viewer,
                name=viewer.name if name is None else name,
                bio=viewer.bio if bio is None else bio,
            )
        except InvalidProfile as error:
            raise unprocessable(str(error)) from error
    if avatar is not None:
        try:
            account_services.avatar_store(user=viewer, image=avatar)
        except InvalidCredentials as error:
            raise ApiError(401, "The access token is invalid") from error
    if param(values, "locked") is not None:
        privacy.account_privacy_set(user=viewer, private=flag(values, "locked"))
    found = accounts_queue(request.reads, [viewer.id])
    requests = selectors.follow_requests_count_queue(request.reads)
    return _credential_account(request, found.value, requests)


update = endpoint(PATCH=Op(update_credentials, scope="write:accounts"))


def account_show(request, id: str) -> dict:
    """Anyone's Account (also one who blocks the viewer: Mastodon shows it)."""
    found = accounts_queue(request.reads, [int(id)]).value
    if int(id) not in found:
        raise not_found()
    return entities.account(found[int(id)], entities.Urls.of(request))


show = endpoint(GET=Op(account_show, scope="read:accounts", auth=OPTIONAL))


def local_name(request, acct: str) -> str | None:
    """The username an `acct` names on this site (`name`, `@name`, `name@ourhost`);
    None for another host's."""
    name, _, host = acct.strip().removeprefix("@").partition("@")
    if host and not same_host(host, request.get_host()):
        return None
    return name


def account_lookup(request) -> dict:
    """The Account an `acct` names; 404 for nobody (no other host is asked)."""
    name = local_name(request, param(request.GET, "acct") or "")
    found = (
        selectors.account_by_name_get(reads=request.reads, username=name)
        if name
        else None
    )
    if found is None:
        raise not_found()
    return entities.account(found, entities.Urls.of(request))


lookup = endpoint(GET=Op(account_lookup, scope="read:accounts", auth=OPTIONAL))


def accounts_reply(
    request, rows: list[tuple[int, int]], window: Window, *, muted: bool = False
) -> Reply:
    """A list of Accounts for rows of (uid, time) newest first, with the `Link`
    header that pages it by time (`next` only after a full page, as Mastodon)."""
    found = accounts_queue(request.reads, [uid for uid, _ in rows]).value
    urls = entities.Urls.of(request)
    body = []
    for uid, _ in rows:
        if uid in found:
            entity = entities.account(found[uid], urls)
            if muted:
                entity["mute_expires_at"] = None
            body.append(entity)
    headers = (
        link_header(
            request,
            next_max_id=rows[-1][1] if len(rows) >= window.limit else None,
            prev_min_id=rows[0][1],
        )
        if rows
        else {}
    )
    return Reply(body, headers=headers)


def _people(request, id: str, relation: str) -> Reply:
    window = Window.of(request, default=ACCOUNTS_LIMIT, maximum=ACCOUNTS_MAX)
    found = selectors.people_rows_get(
        reads=request.reads,
        uid=int(id),
        relation=relation,
        max_id=window.max_id,
        since_id=window.since_id,
        min_id=window.min_id,
        limit=window.limit,
    )
    if found is None:
        raise not_found()
    return accounts_reply(request, found.rows, window)


def account_followers(request, id: str) -> Reply:
    """Who follows the user, newest follow first (none shown of a private account
    to anyone but its owner and approved followers, as on the site)."""
    return _people(request, id, "followers")


def account_following(request, id: str) -> Reply:
    """Whom the user follows, newest follow first (as `account_followers`)."""
    return _people(request, id, "following")


followers = endpoint(GET=Op(account_followers, scope="read:accounts", auth=OPTIONAL))
following = endpoint(GET=Op(account_following, scope="read:accounts", auth=OPTIONAL))


def target_get(request, id: str) -> User:
    """The user a write names, or 404 (one round trip)."""
    uid = int(id)
    found = users_queue(request.reads, uids=[uid]).value
    if uid not in found:
        raise not_found()
    return found[uid]


def relationship_reply(request, uid: int) -> dict:
    """The Relationship with user `uid` as it stands now (one round trip)."""
    found = selectors.relationships_queue(request.reads, [uid]).value
    if uid not in found:
        raise not_found()  # deleted meanwhile
    return entities.relationship(found[uid])


def account_follow(request, id: str) -> dict:
    """Follow, or ask to follow a private account (`requested: true`), from the
    follow budget as on the site; 403 across a block."""
    viewer = request.user
    target = target_get(request, id)
    try:
        services.follow_ask(
            follower=viewer, followee_id=target.id, limit=limits.follow(viewer.id)
        )
    except CannotFollowSelf as error:
        raise not_found() from error  # Mastodon: nobody to follow
    return relationship_reply(request, target.id)


def account_unfollow(request, id: str) -> dict:
    """Unfollow, or cancel a pending follow request, from the follow budget."""
    viewer = request.user
    target = target_get(request, id)
    if target.id != viewer.id and not services.follow_delete(
        follower=viewer, followee_id=target.id, limit=limits.follow(viewer.id)
    ):
        privacy.follow_request_cancel(requester=viewer, owner_id=target.id)
    return relationship_reply(request, target.id)


follow = endpoint(POST=Op(account_follow, scope="write:follows"))
unfollow = endpoint(POST=Op(account_unfollow, scope="write:follows"))


def _ids(values) -> list[int]:
    found = []
    for raw in param_list(values, "id"):
        if raw.isascii() and raw.isdecimal() and len(raw) <= 19:
            found.append(int(raw))
    return list(dict.fromkeys(found))


def account_relationships(request) -> list[dict]:
    """The Relationships with the users `id[]` names, in the order asked; unknown
    ids are left out."""
    uids = _ids(request.GET)[:ACCOUNTS_MAX]  # a bounded read, as a list's page
    found = selectors.relationships_queue(request.reads, uids).value
    return [entities.relationship(found[uid]) for uid in uids if uid in found]


relationships = endpoint(GET=Op(account_relationships, scope="read:follows"))


def account_familiar_followers(request) -> list[dict]:
    """For each user `id[]` names, in the order asked (unknown ids left out):
    whom the viewer follows who follow them, as Accounts
    (`selectors.familiar_followers_get`)."""
    uids = _ids(params(request))[:ACCOUNTS_MAX]
    found = selectors.familiar_followers_get(reads=request.reads, uids=uids)
    stats = accounts_queue(
        request.reads, {*uids, *(f for people in found.values() for f in people)}
    ).value
    urls = entities.Urls.of(request)
    return [
        {
            "id": str(uid),
            "accounts": [
                entities.account(stats[f], urls)
                for f in found.get(uid, ())
                if f in stats
            ],
        }
        for uid in uids
        if uid in stats
    ]


familiar_followers = endpoint(GET=Op(account_familiar_followers, scope="read:follows"))


def account_search(request) -> list[dict]:
    """People whose username or display name starts with `q` (`@name` and
    `name@ourhost` too), as the site's search finds them (its first
    `SEARCH_SHOWN`, paged by `offset` and `limit`); with `following`, only those
    the viewer follows. Nobody from another host (`resolve` asks none)."""
    values = request.GET
    window = Window.of(request, default=ACCOUNTS_LIMIT, maximum=ACCOUNTS_MAX)
    raw_offset = param(values, "offset") or "0"
    offset = int(raw_offset) if raw_offset.isdecimal() else 0
    name = local_name(request, param(values, "q") or "")
    people = selectors.people_search(reads=request.reads, query=name) if name else []
    uids = [person.id for person in people]
    between = (
        selectors.relationships_queue(request.reads, uids)
        if flag(values, "following")
        else None
    )
    stats = accounts_queue(request.reads, uids).value if uids else {}
    if between is not None:
        uids = [
            uid for uid in uids if uid in between.value and between.value[uid].following
        ]
    urls = entities.Urls.of(request)
    shown = uids[offset : offset + window.limit]
    return [entities.account(stats[uid], urls) for uid in shown if uid in stats]


search = endpoint(GET=Op(account_search, scope="read:accounts"))
