"""The memoized markup of status rows (`timeline.rendering._row`) is bounded by its
rows: what a request chooses (its query string, echoed in the forms' `next` field)
is never kept by it."""

from __future__ import annotations

import gc
import tracemalloc

from tests.helpers import logged_in_client, make_user, run_jobs
from timeline import services


def test_long_query_strings_leave_nothing_behind_in_the_row_memo(settings):
    settings.TIMELINE_PAGE_SIZE = 30
    alice = make_user("alice")
    for i in range(30):
        services.status_create(author=alice, text=f"status number {i}")
    run_jobs()
    client = logged_in_client("alice")
    assert client.get("/").status_code == 200
    # Up to gunicorn's request line (4,094 bytes); "'" is escaped to 6 characters
    # in the markup, and each row has two forms.
    quote = "'" * 3900
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(40):
        response = client.get(f"/?{i}={quote}")
        assert response.status_code == 200
        assert response.content.count(b'name="next" value="/?') == 60
        del response
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    # Before the fix: some 57 MB (each request's 30 rows kept with its query).
    assert kept < 4 * 1024 * 1024, f"{kept / 2**20:.1f} MB kept by 40 pages"
