"""The bundle manifest as the device reads it: its name, format, and the file hash it records.

The exporter (export/manifest.py) writes manifests with these same constants;
the runtime reads them from here, so a device install never imports the
build-time export package.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
FORMAT = "venus-bundle"
FORMAT_VERSION = 1


class ManifestError(ValueError):
    """A manifest that cannot be read; the message is one sentence."""


def sha256_file(path: Path, bar: Any = None, chunk: int = 8 << 20) -> str:
    """sha256 of a file, read in blocks; `bar` (a tqdm bar) advances by the bytes read."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
            if bar is not None:
                bar.update(len(block))
    return h.hexdigest()


def load_manifest(bundle: Path) -> dict:
    path = bundle / MANIFEST
    if not path.is_file():
        raise ManifestError(f"{bundle} has no {MANIFEST}, so it is not a bundle (build one with venus-export build).")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path} is not valid JSON ({e}), so the manifest is damaged; copy the bundle again "
                            "or rebuild it with venus-export build.") from None
    except RecursionError:  # JSON nested thousands deep: no manifest venus-export writes
        raise ManifestError(f"{path} is nested too deeply to be a manifest, so it is damaged or was replaced; copy "
                            "the bundle again or rebuild it with venus-export build.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
        raise ManifestError(f"{path} is not a {FORMAT} manifest of version {FORMAT_VERSION}; rebuild the bundle with "
                            "this version of venus-export build.")
    return data
