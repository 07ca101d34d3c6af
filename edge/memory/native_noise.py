"""What MediaPipe's native code writes straight to the process's stderr, kept off the user's console.

Loading the face detector prints lines that read as a crash ("AttributeError: 'MessageFactory' object has no
attribute 'GetPrototype'", from protobuf 5 under a wheel built for 4) and TensorFlow Lite's start-up notes.
They bypass Python's logging, so the file descriptor itself is pointed at a temporary file for the moment;
the known lines go to the debug log, anything else is written back to stderr as it was.
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator

log = logging.getLogger(__name__)

KNOWN = re.compile(r"GetPrototype|TensorFlow Lite|XNNPACK|absl::InitializeLog|inference_feedback_manager|"
                   r"^\s*$")


@contextlib.contextmanager
def native_notes_to_debug() -> Iterator[None]:
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr (a test's capture): nothing to redirect
        yield
        return
    python_err, python_held = sys.stderr, io.StringIO()  # some of it is printed through sys.stderr
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        sys.stderr = python_held
        try:
            yield
        finally:
            sys.stderr = python_err
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            text = held.read().decode("utf-8", "replace") + python_held.getvalue()
            for line in text.splitlines():
                if KNOWN.search(line):
                    log.debug("mediapipe: %s", line)
                else:
                    print(line, file=sys.stderr)
