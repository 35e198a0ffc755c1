"""The site's own CSS and JavaScript stay small (issue: under 50 KB in all)."""

from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"


def test_css_and_js_weigh_under_50_kb_in_all():
    files = [*STATIC.rglob("*.css"), *STATIC.rglob("*.js")]
    assert files, "no CSS or JS found"
    total = sum(f.stat().st_size for f in files)
    assert total < 50 * 1024, f"{total} bytes"
