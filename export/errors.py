"""The one error type the exporter raises for bad input: its message is one sentence."""


class ExportError(Exception):
    """A checkpoint, bundle or option the exporter cannot use; str() is a one-sentence reason."""
