"""The wire: one envelope and one message registry."""
from .envelope import Envelope, Rejects, WireError, decode, encode
from .registry import Message, all_types, lookup, message

__all__ = ["Envelope", "Rejects", "WireError", "decode", "encode", "Message", "all_types", "lookup", "message"]
