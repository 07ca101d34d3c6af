"""The session record: the journal every message lands in, replay from it, and the summary printed at the end."""
