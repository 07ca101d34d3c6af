"""Barge-in in one place: what user speech over a reply means (judge, policy, word lists)."""
