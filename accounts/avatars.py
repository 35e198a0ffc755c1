"""Avatars as bytes: an upload re-encoded by Pillow, and the generated identicon.

No Redis here: `accounts.services.avatar_set` stores what `avatar_encode` makes, the
avatar views serve it. An upload is never stored as sent: it is decoded, cropped to
a square, resized to AVATAR_SIZE and encoded again as WebP, so nothing of the
original file (EXIF, a GPS position, a payload after the image) survives.

The generated avatar comes in two drawings of one `Identicon`: an SVG for the
site's pages (tiny, sharp at any size) and a PNG for API clients, which draw
raster images only (Mastodon serves only those; Tusky and UIKit apps showed the
SVG blank). The PNG is memoized per process (`identicon_png`): it is a pure
function of the user id, so a cached copy can never go stale, and `lru_cache` is
safe under threads.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import warnings
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageOps

from accounts.domain import InvalidAvatar

AVATAR_UPLOAD_MAX_BYTES = 2 * 1024 * 1024  # what the form accepts
AVATAR_MAX_BYTES = 64 * 1024  # what is stored, after re-encoding
AVATAR_SIZE = 256  # pixels, square
# A decoded image this large is refused before its pixels are read (a small file
# can claim a huge canvas: a decompression bomb).
AVATAR_MAX_PIXELS = 25_000_000
_QUALITIES = (85, 70, 55, 40, 25)
CONTENT_TYPE = "image/webp"
# What an upload may be: the formats the settings page names. Pillow's decoders of
# rarer formats are never reached by an upload.
FORMATS = ("PNG", "JPEG", "GIF", "WEBP")


def avatar_encode(data: bytes) -> bytes:
    """The uploaded image as a square AVATAR_SIZE WebP of at most AVATAR_MAX_BYTES,
    without metadata; InvalidAvatar for anything that is not such an image."""
    if len(data) > AVATAR_UPLOAD_MAX_BYTES:
        raise InvalidAvatar(
            f"That file is too large: an avatar is at most "
            f"{AVATAR_UPLOAD_MAX_BYTES // (1024 * 1024)} MB."
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=FORMATS) as probe:
                _check_pixels(probe)
                probe.verify()  # a truncated or corrupt file fails here
            with Image.open(io.BytesIO(data), formats=FORMATS) as image:
                _check_pixels(image)
                image = ImageOps.exif_transpose(image)  # upright, as shown by phones
                image = ImageOps.fit(
                    image.convert("RGB"),
                    (AVATAR_SIZE, AVATAR_SIZE),
                    method=Image.Resampling.LANCZOS,
                )
    except InvalidAvatar:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise InvalidAvatar("That image has too many pixels.") from error
    except (OSError, ValueError, SyntaxError) as error:
        raise InvalidAvatar(
            "That file is not an image we can read: upload a PNG, JPEG, GIF or WebP."
        ) from error
    for quality in _QUALITIES:
        out = io.BytesIO()
        image.save(out, format="WEBP", quality=quality, method=4)
        if out.tell() <= AVATAR_MAX_BYTES:
            return out.getvalue()
    raise InvalidAvatar("That image does not fit in an avatar; try a simpler one.")


def _check_pixels(image: Image.Image) -> None:
    width, height = image.size
    if width * height > AVATAR_MAX_PIXELS:
        raise InvalidAvatar("That image has too many pixels.")
    if width < 1 or height < 1:
        raise InvalidAvatar("That file is not an image we can read.")


# The generated avatar's grid: the 5x5 pattern and a cell of margin around it.
IDENTICON_GRID = 7
# The PNG's side: whole cells (56 pixels) near Mastodon's 400x400 avatars, so its
# edges stay crisp and a client scales it down, never up, even on a large profile
# header at 4x density. Two colours: a few hundred bytes whatever the side.
IDENTICON_PNG_SIZE = IDENTICON_GRID * 56


@dataclass(frozen=True, slots=True)
class Identicon:
    """Everyone's generated avatar as data: a symmetric 5x5 pattern in one colour,
    from a hash of the user id alone (so it needs no read and never changes). The
    SVG and the PNG are both drawn from it, so they cannot disagree."""

    hue: int
    cells: tuple[tuple[int, int], ...]  # (x, y) of the filled cells, on the grid

    # (saturation, lightness) in percent, as CSS's hsl() takes them.
    BACKGROUND = (45, 92)
    FOREGROUND = (55, 45)

    @classmethod
    def of(cls, uid: int) -> Identicon:
        digest = hashlib.sha256(f"retwis-avatar:{uid:d}".encode()).digest()
        cells = []
        for row in range(5):
            for col in range(3):
                if digest[2 + row * 3 + col] & 1:
                    cells.extend((x + 1, row + 1) for x in sorted({col, 4 - col}))
        return cls(hue=int.from_bytes(digest[:2], "big") % 360, cells=tuple(cells))

    def css(self, tone: tuple[int, int]) -> str:
        saturation, lightness = tone
        return f"hsl({self.hue:d},{saturation:d}%,{lightness:d}%)"

    def rgb(self, tone: tuple[int, int]) -> tuple[int, int, int]:
        """The colour `css(tone)` names, in bytes as a browser draws it (CSS hsl()
        is HLS, rounded)."""
        saturation, lightness = tone
        red, green, blue = colorsys.hls_to_rgb(
            self.hue / 360, lightness / 100, saturation / 100
        )
        return round(red * 255), round(green * 255), round(blue * 255)


def identicon_svg(uid: int) -> str:
    """The generated avatar as SVG, for the site's pages."""
    identicon = Identicon.of(uid)
    cells = "".join(
        f'<rect x="{x:d}" y="{y:d}" width="1" height="1"/>' for x, y in identicon.cells
    )
    side = IDENTICON_GRID
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {side} {side}" '
        'width="256" height="256" shape-rendering="crispEdges">'
        f'<rect width="{side}" height="{side}" '
        f'fill="{identicon.css(Identicon.BACKGROUND)}"/>'
        f'<g fill="{identicon.css(Identicon.FOREGROUND)}">{cells}</g></svg>'
    )


@lru_cache(maxsize=4096)  # ~1 MB at most: a few hundred bytes each
def identicon_png(uid: int) -> bytes:
    """The generated avatar as an IDENTICON_PNG_SIZE square PNG, for API clients:
    the grid drawn a pixel a cell, then scaled by nearest neighbour (whole cells,
    no blending)."""
    identicon = Identicon.of(uid)
    grid = Image.new("P", (IDENTICON_GRID, IDENTICON_GRID), 0)
    grid.putpalette(
        identicon.rgb(Identicon.BACKGROUND) + identicon.rgb(Identicon.FOREGROUND)
    )
    for cell in identicon.cells:
        grid.putpixel(cell, 1)
    image = grid.resize(
        (IDENTICON_PNG_SIZE, IDENTICON_PNG_SIZE), Image.Resampling.NEAREST
    )
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
