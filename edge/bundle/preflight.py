"""The bundle a session names, checked once before any node starts.

The frontend and the voice open their bundle again when they start (a bundle changed since is still refused),
but a bundle that is refused now never gets that far: the session does not start, and the reason is said once,
instead of by every restart of every node that opens it.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from edge.bundle.reader import BundleError, open_bundle
from edge.bundle.settings import VenusSettings
from edge.options import SettingsError

# session key holding "bundle:DIR" -> the node that opens it
USERS = (("frontend", "frontend"), ("voice", "speech"))


def bundle_problem(flat: Mapping[str, Any], nodes: Iterable[str]) -> str | None:
    """One sentence on the first bundle of this session that its nodes would refuse, or None."""
    nodes = set(nodes)
    roots = [Path(str(flat.get(key))[len("bundle:"):]).expanduser() for key, node in USERS
             if node in nodes and str(flat.get(key) or "").startswith("bundle:")]
    for root in dict.fromkeys(roots):
        try:
            s = VenusSettings.load(root, dict(flat))
            open_bundle(root, precision=s.precision, encoder_precision=s.encoder_precision, device=s.device,
                        say_notes=False)  # the nodes say their fallbacks when they load
        except (BundleError, SettingsError) as exc:  # a setting's sentence names it and where it is
            return str(exc)
        except (ValueError, TypeError) as exc:  # venus.json or the session's "venus" settings
            return f"the Venus settings for {root} are wrong: {exc}".rstrip(".") + "."
    return None
