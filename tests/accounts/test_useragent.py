from __future__ import annotations

import pytest

from accounts.useragent import UNKNOWN, device_label

FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CHROME_WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)
SAFARI_MAC = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Safari/605.1.15"
)
EDGE_WINDOWS = CHROME_WINDOWS + " Edg/126.0.2592.87"
CHROME_ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"
)
CHROME_IPAD = (
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1"
)
FIREFOX_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15"
)
OPERA_WINDOWS = CHROME_WINDOWS + " OPR/111.0.0.0"
SAMSUNG = (
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like "
    "Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36"
)
CHROMEBOOK = (
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)


@pytest.mark.parametrize(
    "header, label",
    [
        (FIREFOX_LINUX, "Firefox on Linux"),
        (CHROME_WINDOWS, "Chrome on Windows"),
        (SAFARI_IPHONE, "Safari on iPhone"),
        (SAFARI_MAC, "Safari on macOS"),
        (EDGE_WINDOWS, "Edge on Windows"),
        (CHROME_ANDROID, "Chrome on Android"),
        (CHROME_IPAD, "Chrome on iPad"),
        (FIREFOX_IPHONE, "Firefox on iPhone"),
        (OPERA_WINDOWS, "Opera on Windows"),
        (SAMSUNG, "Samsung Internet on Android"),
        (CHROMEBOOK, "Chrome on ChromeOS"),
        ("curl/8.5.0", "curl"),
    ],
)
def test_common_browsers_get_a_short_label(header, label):
    assert device_label(header) == label


def test_a_header_that_names_nothing_we_know_is_unknown():
    assert device_label("") == UNKNOWN
    assert device_label("<script>alert(1)</script>") == UNKNOWN


def test_only_the_start_of_a_huge_header_is_read():
    assert device_label("x" * 10_000 + "Firefox/1 Linux") == UNKNOWN
