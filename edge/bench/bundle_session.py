"""One session through the process graph, as `venus-edge` runs it, from a JSON file of session settings.

`venus-export bench tiny` runs each held-out session of a trained tiny model this way, in a child process,
so the build-time packages never import the process graph (docs/layout.md):

    python -m edge.bench.bundle_session SETTINGS.json

SETTINGS.json holds a session's settings in their flat form (`SessionConfig.as_dict`). Exit 0 when the
session completed; otherwise 1 (2 for unreadable settings) with one sentence on stderr, last.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from edge.session import SessionConfig, run_session


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m edge.bench.bundle_session SETTINGS.json", file=sys.stderr)
        return 2
    try:
        cfg = SessionConfig.from_dict(json.loads(Path(args[0]).read_text()))
        cfg.check()
    except (OSError, ValueError, TypeError) as exc:  # SettingsError and bad JSON are ValueErrors
        print(f"{args[0]}: {exc}", file=sys.stderr)
        return 2
    report = run_session(cfg)  # the supervisor's defaults, as `venus-edge` runs
    if not report.ok:
        print(report.reason, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
