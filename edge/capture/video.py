"""Video sources: a camera (OpenCV index, GStreamer pipeline, picamera2), a video file, or an image sequence.

`frame_at(t_s)` returns the newest frame at or before media time t (files)
or the latest frame (live cameras), as RGB uint8.
"""
from __future__ import annotations

import glob
import logging
from pathlib import Path
from typing import Protocol

import numpy as np

from edge.devices import DeviceError

log = logging.getLogger(__name__)
IMAGE_EXT = (".jpg", ".jpeg", ".png", ".bmp")


class VideoSource(Protocol):
    live: bool

    def frame_at(self, t_s: float) -> np.ndarray | None: ...
    def close(self) -> None: ...


def _cv2():
    try:
        import cv2
    except ImportError:
        raise DeviceError("cannot use a camera or video file: OpenCV is missing; "
                          "`pip install opencv-python-headless` (on Jetson, JetPack's OpenCV)") from None
    return cv2


class OpenCVSource:
    """A camera index, a GStreamer pipeline ('gst:...') or a video file."""

    def __init__(self, spec: str) -> None:
        cv2 = _cv2()
        self.live = not Path(spec).is_file()
        if spec.startswith("gst:"):
            cap = cv2.VideoCapture(spec[4:], cv2.CAP_GSTREAMER)
        elif spec.isdigit():
            cap = cv2.VideoCapture(int(spec))
        else:
            cap = cv2.VideoCapture(spec)
        if not cap.isOpened():
            what = f"camera {spec}" if self.live else f"video file {spec}"
            raise DeviceError(f"no {what} could be opened; list devices with `venus-edge --list-devices`, "
                              "or pass a video file or an image folder with --camera PATH")
        if self.live:  # read a frame every 1/--video-fps s: the newest one, not one queued seconds ago
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        self.cap = cap
        self.fps = cap.get(cv2.CAP_PROP_FPS) or 30.0
        self._index = -1
        self._last: np.ndarray | None = None
        self._cv2 = cv2

    def frame_at(self, t_s: float) -> np.ndarray | None:
        if self.live:
            ok, bgr = self.cap.read()
            return self._cv2.cvtColor(bgr, self._cv2.COLOR_BGR2RGB) if ok else None
        want = int(t_s * self.fps)
        while self._index < want:
            ok, bgr = self.cap.read()
            if not ok:
                return None if self._last is None and self._index < 0 else self._last
            self._index += 1
            self._last = bgr
        return None if self._last is None else self._cv2.cvtColor(self._last, self._cv2.COLOR_BGR2RGB)

    def close(self) -> None:
        self.cap.release()


class ImageSequenceSource:
    """A folder (or glob) of images shown at `fps`, in name order."""

    live = False

    def __init__(self, spec: str, fps: float = 1.0) -> None:
        p = Path(spec)
        files = sorted(str(f) for f in p.iterdir() if f.suffix.lower() in IMAGE_EXT) if p.is_dir() \
            else sorted(glob.glob(spec))
        if not files:
            raise DeviceError(f"no images found at {spec}; pass a folder of .jpg/.png files or a glob")
        self.files, self.fps = files, fps
        self._cv2 = _cv2()

    def frame_at(self, t_s: float) -> np.ndarray | None:
        i = int(t_s * self.fps)
        if i >= len(self.files):
            return None
        bgr = self._cv2.imread(self.files[i])
        return None if bgr is None else self._cv2.cvtColor(bgr, self._cv2.COLOR_BGR2RGB)

    def jpeg_at(self, t_s: float) -> bytes | None:
        """The JPEG file shown at t, as stored (a replay's recorded frame goes on the bus byte for byte)."""
        i = int(t_s * self.fps)
        if i >= len(self.files) or Path(self.files[i]).suffix.lower() not in (".jpg", ".jpeg"):
            return None
        return Path(self.files[i]).read_bytes()

    def close(self) -> None:
        pass


class PiCameraSource:
    """A Raspberry Pi camera through Picamera2.

    Picamera2 names formats after libcamera's (DRM) convention: "RGB888" arrives as
    (height, width, 3) arrays in B, G, R order, "BGR888" in R, G, B order (its manual,
    "Image formats"). "RGB888" is asked for (every Pi's ISP gives it) and flipped here.
    """

    live = True
    FORMAT = "RGB888"

    def __init__(self, size: tuple[int, int] = (640, 480)) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise DeviceError("picamera2 is not installed (Raspberry Pi OS only); use --camera 0 for a USB camera") from None
        self.cam = Picamera2()
        self.cam.configure(self.cam.create_video_configuration(main={"size": size, "format": self.FORMAT}))
        self.cam.start()

    def frame_at(self, t_s: float) -> np.ndarray | None:
        bgr = self.cam.capture_array()
        return None if bgr is None else np.ascontiguousarray(bgr[:, :, 2::-1])  # B,G,R(,X) -> R,G,B

    def close(self) -> None:
        self.cam.stop()


def open_video_source(spec: str, fps: float = 1.0) -> VideoSource:
    if spec == "picamera":
        return PiCameraSource()
    p = Path(spec)
    if p.is_dir() or any(ch in spec for ch in "*?"):
        return ImageSequenceSource(spec, fps)
    return OpenCVSource(spec)
