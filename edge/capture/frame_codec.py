"""How capture puts a camera frame on the bus (and so in the journal): scaled down and JPEG-compressed.

A raw 1280x720 frame is 2.7 MB; one a second filled a journal with about 5 GB an hour. The frontend and the
vision node look at frames far smaller than that (a Venus bundle's vision graph slices to a few hundred pixels
a side; the memory archive keeps 320-pixel thumbnails), so by default a frame's longer side is brought down to
`side` pixels and the frame is sent as JPEG at `quality`. Every reader decodes the same bytes the same way, and
a replay hands capture the recorded JPEG files, which go on the bus again byte for byte (`as_recorded`): the
frames a replay sees are the recorded ones exactly. `quality` 0 sends raw rgb24 at the captured size, as before.
"""
from __future__ import annotations

import numpy as np

RAW = 0  # quality: raw rgb24, no scaling


def encode_frame(rgb: np.ndarray, side: int, quality: int) -> tuple[int, int, str, bytes]:
    """(width, height, encoding, bytes) of an RGB frame as it goes on the bus."""
    import cv2  # the camera's own dependency (edge/capture/video.py): an audio-only session never loads it

    if quality == RAW:
        h, w = rgb.shape[:2]
        return w, h, "rgb24", np.ascontiguousarray(rgb, dtype=np.uint8).tobytes()
    scale = side / max(rgb.shape[:2]) if side else 1.0
    if scale < 1.0:  # INTER_AREA: the one that does not alias when shrinking
        rgb = cv2.resize(rgb, (max(1, round(rgb.shape[1] * scale)), max(1, round(rgb.shape[0] * scale))),
                         interpolation=cv2.INTER_AREA)
    ok, jpg = cv2.imencode(".jpg", np.ascontiguousarray(rgb[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("a camera frame could not be encoded as JPEG")
    return rgb.shape[1], rgb.shape[0], "jpeg", jpg.tobytes()


def as_recorded(data: bytes, side: int, quality: int) -> tuple[int, int, str, bytes] | None:
    """A JPEG file's own bytes, when they are what capture would send (a replayed frame): no re-encoding, so no
    second loss. None when the file must be decoded and encoded (too large, not JPEG, or raw frames asked for)."""
    if quality == RAW or not data.startswith(b"\xff\xd8"):
        return None
    import cv2
    bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if bgr is None or (side and max(bgr.shape[:2]) > side):
        return None
    return bgr.shape[1], bgr.shape[0], "jpeg", data
