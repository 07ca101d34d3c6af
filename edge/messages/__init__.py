"""Every message type, registered on import. One module per domain; each lists its types in `__all__`."""
from . import control, dialogue, harness, media  # noqa: F401  (registration side effect)
from .control import *  # noqa: F401,F403
from .dialogue import *  # noqa: F401,F403
from .harness import *  # noqa: F401,F403
from .media import *  # noqa: F401,F403
from .media import chunk_samples, frame_rgb  # noqa: F401  (helpers, not message types)

__all__ = [*control.__all__, *dialogue.__all__, *harness.__all__, *media.__all__]
