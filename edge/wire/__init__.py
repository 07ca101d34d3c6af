"""The wire: one envelope and one message registry."""
from .envelope import Envelope, Rejects, WireError, decode, encode, with_seq
from .registry import (ANY_NODE, CONTROL, OUTSIDE, SUPERVISOR, Message, acknowledger, all_types, lookup, message,
                       on_bus, receives, topic_of, topics_for)

__all__ = ["Envelope", "Rejects", "WireError", "decode", "encode", "with_seq", "Message", "all_types", "lookup", "message",
           "ANY_NODE", "CONTROL", "OUTSIDE", "SUPERVISOR", "acknowledger", "on_bus", "receives", "topic_of",
           "topics_for"]
