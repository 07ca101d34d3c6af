"""Loading a node class from its "module:Class" path, so the graph never imports the nodes it runs."""
from __future__ import annotations

import importlib
from typing import Any


def load_class(target: str) -> Any:
    """Import `module:Class`; a bad path is one sentence naming it."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"node class {target!r} is not of the form module:Class")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"node class {target!r} cannot be loaded ({exc})") from None
