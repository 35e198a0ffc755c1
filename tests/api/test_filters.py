"""Keyword filters through the client API (Mastodon's v2 filters, and v1): an app
makes, lists, changes and deletes them, and every Status it reads carries the
filters it matches (`filtered`), as Mastodon's."""

from __future__ import annotations

import json

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from timeline import filters, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob


def as_json(client, method: str, url: str, data: dict | None = None):
    return getattr(client, method)(
        url, json.dumps(data or {}), content_type="application/json"
    )


def test_an_app_makes_a_filter_and_the_statuses_it_reads_say_so(people):
    alice, bob = people
    client = api_client(token_for(bob))
    made = as_json(
        client,
        "post",
        "/api/v2/filters",
        {
            "title": "Spoilers",
            "context": ["home", "public"],
            "filter_action": "warn",
            "keywords_attributes": [
                {"keyword": "dragon", "whole_word": True},
                {"keyword": "#got", "whole_word": False},
            ],
        },
    )
    assert made.status_code == 200, made.content
    entity = made.json()
    assert entity["title"] == "Spoilers"
    assert entity["context"] == ["home", "public"]
    assert entity["filter_action"] == "warn" and entity["expires_at"] is None
    assert [k["keyword"] for k in entity["keywords"]] == ["dragon", "#got"]
    assert entity["statuses"] == []
    services.status_create(author=alice, text="The DRAGON dies")
    services.status_create(author=alice, text="nothing here")
    run_jobs()
    home = client.get("/api/v1/timelines/home").json()
    by_text = {s["content"]: s["filtered"] for s in home}
    (quiet,) = [f for c, f in by_text.items() if "nothing here" in c]
    (loud,) = [f for c, f in by_text.items() if "DRAGON" in c]
    assert quiet == []
    assert loud == [
        {
            "filter": {
                "id": entity["id"],
                "title": "Spoilers",
                "context": ["home", "public"],
                "expires_at": None,
                "filter_action": "warn",
            },
            "keyword_matches": ["DRAGON"],
            "status_matches": None,
        }
    ]
    # Everywhere a Status is read, whatever the filter's contexts (the app
    # applies them, as with Mastodon): a profile's statuses too.
    statuses = client.get(f"/api/v1/accounts/{alice.id}/statuses").json()
    assert [len(s["filtered"]) for s in statuses] == [0, 1]
    # Nobody else's statuses are marked.
    other = api_client(token_for(make_user("carol")))
    assert all(
        s["filtered"] == [] for s in other.get("/api/v1/timelines/public").json()
    )


def test_a_form_encoded_filter_with_rails_nested_keywords(people):
    _, bob = people
    client = api_client(token_for(bob))
    made = client.post(
        "/api/v2/filters",
        "title=Words&context[]=home&filter_action=hide"
        "&keywords_attributes[][keyword]=one&keywords_attributes[][whole_word]=false"
        "&keywords_attributes[][keyword]=two",
        content_type="application/x-www-form-urlencoded",
    )
    assert made.status_code == 200, made.content
    words = made.json()["keywords"]
    assert [(k["keyword"], k["whole_word"]) for k in words] == [
        ("one", False),
        ("two", True),
    ]
    assert made.json()["filter_action"] == "hide"


def test_a_multipart_filter_with_rails_nested_keywords(people):
    # A client that sends forms as multipart (as it sends media) pairs each
    # keyword with its own whole_word, as Rails reads them.
    _, bob = people
    client = api_client(token_for(bob))
    made = client.post(
        "/api/v2/filters",
        {
            "title": "Words",
            "context[]": ["home"],
            "keywords_attributes[][keyword]": ["one", "two"],
            "keywords_attributes[][whole_word]": ["false", "true"],
        },
    )
    assert made.status_code == 200, made.content
    words = made.json()["keywords"]
    assert [(k["keyword"], k["whole_word"]) for k in words] == [
        ("one", False),
        ("two", True),
    ]


def test_updating_keywords_adds_changes_and_destroys_them_in_one_step(people):
    _, bob = people
    client = api_client(token_for(bob))
    made = as_json(
        client,
        "post",
        "/api/v2/filters",
        {
            "title": "t",
            "context": ["home"],
            "keywords_attributes": [{"keyword": "a"}, {"keyword": "b"}],
        },
    ).json()
    a, b = made["keywords"]
    changed = as_json(
        client,
        "put",
        f"/api/v2/filters/{made['id']}",
        {
            "title": "renamed",
            "expires_in": 3600,
            "keywords_attributes": [
                {"id": a["id"], "keyword": "A!", "whole_word": False},
                {"id": b["id"], "_destroy": True},
                {"keyword": "c"},
            ],
        },
    )
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert body["title"] == "renamed" and body["context"] == ["home"]
    assert body["expires_at"] is not None
    assert [(k["id"], k["keyword"]) for k in body["keywords"]][:1] == [(a["id"], "A!")]
    assert [k["keyword"] for k in body["keywords"]] == ["A!", "c"]
    # A change naming a keyword that is gone changes nothing.
    refused = as_json(
        client,
        "put",
        f"/api/v2/filters/{made['id']}",
        {"title": "again", "keywords_attributes": [{"id": b["id"], "keyword": "x"}]},
    )
    assert refused.status_code == 404
    assert client.get(f"/api/v2/filters/{made['id']}").json()["title"] == "renamed"


def test_validation_errors_are_422_and_write_nothing(people):
    _, bob = people
    client = api_client(token_for(bob))
    for data, message in (
        ({"context": ["home"]}, "title"),
        ({"title": "t"}, "Context"),
        ({"title": "t", "context": ["nowhere"]}, "context"),
        ({"title": "t", "context": ["home"], "filter_action": "explode"}, "action"),
        ({"title": "t", "context": ["home"], "expires_in": "soon"}, "Expires"),
        (
            {"title": "t", "context": ["home"], "keywords_attributes": [{"x": 1}]},
            "keyword",
        ),
    ):
        response = as_json(client, "post", "/api/v2/filters", data)
        assert response.status_code == 422, data
        assert message.lower() in response.json()["error"].lower(), data
    assert client.get("/api/v2/filters").json() == []


def test_an_end_too_far_off_is_422_and_the_filters_still_read(people):
    # An app that sends a huge or infinite `expires_in` (a bug of its own) is
    # refused; it never stores an end that no date can name, which would make
    # every later read of the filters, and of the statuses they mark, an error.
    alice, bob = people
    client = api_client(token_for(bob))
    form = "application/x-www-form-urlencoded"
    kept = as_json(
        client,
        "post",
        "/api/v2/filters",
        {
            "title": "kept",
            "context": ["home"],
            "keywords_attributes": [{"keyword": "x"}],
        },
    ).json()
    for value in ("99999999999999999999", "1e300", "inf", "-inf"):
        for method, url, data in (
            ("post", "/api/v2/filters", f"title=t&context[]=home&expires_in={value}"),
            ("put", f"/api/v2/filters/{kept['id']}", f"expires_in={value}"),
            ("post", "/api/v1/filters", f"phrase=p&context[]=home&expires_in={value}"),
        ):
            response = getattr(client, method)(url, data, content_type=form)
            assert response.status_code == 422, (method, url, value)
            assert "expires" in response.json()["error"].lower(), (url, value)
    (listed,) = client.get("/api/v2/filters").json()
    assert listed["title"] == "kept" and listed["expires_at"] is None
    services.status_create(author=alice, text="x marks the spot")
    run_jobs()
    (shown,) = client.get("/api/v1/timelines/home").json()
    assert [f["filter"]["title"] for f in shown["filtered"]] == ["kept"]


def test_keywords_and_statuses_of_a_filter(people):
    alice, bob = people
    client = api_client(token_for(bob))
    made = as_json(
        client, "post", "/api/v2/filters", {"title": "t", "context": ["home"]}
    ).json()
    fid = made["id"]
    word = client.post(f"/api/v2/filters/{fid}/keywords", {"keyword": "redis"})
    assert word.status_code == 200
    kid = word.json()["id"]
    assert word.json()["whole_word"] is True
    changed = as_json(
        client, "put", f"/api/v2/filters/keywords/{kid}", {"whole_word": False}
    ).json()
    assert changed == {"id": kid, "keyword": "redis", "whole_word": False}
    assert client.get(f"/api/v2/filters/{fid}/keywords").json() == [changed]
    sid = services.status_create(author=alice, text="plain words").id
    run_jobs()
    entry = client.post(f"/api/v2/filters/{fid}/statuses", {"status_id": str(sid)})
    assert entry.status_code == 200
    assert entry.json()["status_id"] == str(sid)
    again = client.post(f"/api/v2/filters/{fid}/statuses", {"status_id": str(sid)})
    assert again.status_code == 422
    (shown,) = client.get("/api/v1/timelines/home").json()
    assert shown["filtered"][0]["status_matches"] == [str(sid)]
    assert shown["filtered"][0]["keyword_matches"] is None
    n = entry.json()["id"]
    assert client.get(f"/api/v2/filters/statuses/{n}").json() == entry.json()
    assert client.delete(f"/api/v2/filters/statuses/{n}").json() == {}
    assert client.get(f"/api/v2/filters/{fid}/statuses").json() == []
    assert client.delete(f"/api/v2/filters/keywords/{kid}").json() == {}
    assert client.get(f"/api/v2/filters/keywords/{kid}").status_code == 404
    # A status the viewer may not see cannot be added.
    assert (
        client.post(
            f"/api/v2/filters/{fid}/statuses", {"status_id": "999999"}
        ).status_code
        == 404
    )


def test_another_accounts_filters_are_not_found(people):
    alice, bob = people
    mine = api_client(token_for(bob))
    made = as_json(
        mine,
        "post",
        "/api/v2/filters",
        {"title": "t", "context": ["home"], "keywords_attributes": [{"keyword": "k"}]},
    ).json()
    theirs = api_client(token_for(alice))
    fid, kid = made["id"], made["keywords"][0]["id"]
    assert theirs.get(f"/api/v2/filters/{fid}").status_code == 404
    assert theirs.delete(f"/api/v2/filters/{fid}").status_code == 404
    assert theirs.get(f"/api/v2/filters/keywords/{kid}").status_code == 404
    assert theirs.get("/api/v1/filters").json() == []
    assert len(mine.get("/api/v2/filters").json()) == 1


def test_scopes(people):
    _, bob = people
    reader = api_client(token_for(bob, scopes=("read",)))
    assert reader.get("/api/v2/filters").status_code == 200
    assert (
        reader.post("/api/v2/filters", {"title": "t", "context[]": "home"}).status_code
        == 403
    )
    assert api_client().get("/api/v2/filters").status_code == 401


def test_the_v1_api_names_each_keyword_a_filter(people):
    alice, bob = people
    client = api_client(token_for(bob))
    made = client.post(
        "/api/v1/filters",
        {"phrase": "dragon", "context[]": ["home"], "irreversible": "true"},
    )
    assert made.status_code == 200, made.content
    v1 = made.json()
    assert v1["phrase"] == "dragon" and v1["irreversible"] is True
    assert v1["whole_word"] is True and v1["context"] == ["home"]
    (v2,) = client.get("/api/v2/filters").json()
    assert v2["title"] == "dragon" and v2["filter_action"] == "hide"
    assert client.get("/api/v1/filters").json() == [v1]
    changed = as_json(
        client,
        "put",
        f"/api/v1/filters/{v1['id']}",
        {"phrase": "wyvern", "context": ["home", "public"], "irreversible": False},
    ).json()
    assert changed["phrase"] == "wyvern" and changed["irreversible"] is False
    assert changed["context"] == ["home", "public"]
    # With a second keyword, the filter's own fields are the v2 API's to change.
    client.post(f"/api/v2/filters/{v2['id']}/keywords", {"keyword": "basilisk"})
    refused = as_json(
        client, "put", f"/api/v1/filters/{v1['id']}", {"irreversible": True}
    )
    assert refused.status_code == 422
    # Deleting a keyword leaves the filter its others; its last one, no filter.
    assert client.delete(f"/api/v1/filters/{v1['id']}").json() == {}
    (left,) = client.get("/api/v1/filters").json()
    assert left["phrase"] == "basilisk"
    assert client.delete(f"/api/v1/filters/{left['id']}").json() == {}
    assert client.get("/api/v2/filters").json() == []


def test_a_reblog_carries_the_filters_its_original_matches(people):
    alice, bob = people
    carol = make_user("carol")
    from timeline import social

    sid = services.status_create(author=carol, text="dragon eggs").id
    social.status_repost(user=alice, sid=sid)
    run_jobs()
    filters.filter_create(
        uid=bob.id,
        title="Beasts",
        context=["home"],
        keywords=[filters.KeywordChange("dragon")],
    )
    (shown,) = api_client(token_for(bob)).get("/api/v1/timelines/home").json()
    assert shown["reblog"] is not None
    assert [f["filter"]["title"] for f in shown["filtered"]] == ["Beasts"]
    assert [f["filter"]["title"] for f in shown["reblog"]["filtered"]] == ["Beasts"]
    # The reader's own reblog is theirs: not filtered.
    social.status_repost(user=bob, sid=sid)
    run_jobs()
    own = api_client(token_for(bob)).get(f"/api/v1/accounts/{bob.id}/statuses")
    assert own.json()[0]["filtered"] == []
