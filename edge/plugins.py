"""Heavy parts (model frontends, voices) are imported only when chosen, by module path."""
from __future__ import annotations

import importlib
from typing import Any


def build_plugin(module_path: str, what: str, config: dict) -> Any:
    """Import `module_path` and call its `build(config)`; a missing module is one clear sentence."""
    try:
        module = importlib.import_module(module_path)
    except ModuleNotFoundError as exc:
        raise RuntimeError(f"the {what} is not available ({exc})") from None
    return module.build(config)
