"""Avatars as bytes: an upload re-encoded by Pillow, and the generated identicon.

No Redis here: `accounts.services.avatar_set` stores what `avatar_encode` makes, the
avatar views serve it. An upload is never stored as sent: it is decoded, cropped to
a square, resized to AVATAR_SIZE and encoded again as WebP, so nothing of the
original file (EXIF, a GPS position, a payload after the image) survives.
"""

from __future__ import annotations

import hashlib
import io
import warnings

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


def identicon_svg(uid: int) -> str:
    """Everyone's generated avatar: a symmetric 5x5 pattern in one colour, from a
    hash of the user id alone (so it needs no read and never changes)."""
    digest = hashlib.sha256(f"retwis-avatar:{uid:d}".encode()).digest()
    hue = int.from_bytes(digest[:2], "big") % 360
    cells = []
    for row in range(5):
        for col in range(3):
            if digest[2 + row * 3 + col] & 1:
                for x in {col, 4 - col}:
                    cells.append(
                        f'<rect x="{x + 1:d}" y="{row + 1:d}" width="1" height="1"/>'
                    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 7 7" '
        'width="256" height="256" shape-rendering="crispEdges">'
        f'<rect width="7" height="7" fill="hsl({hue:d},45%,92%)"/>'
        f'<g fill="hsl({hue:d},55%,45%)">{"".join(cells)}</g></svg>'
    )
