"""Seeing inside a running session: health, Prometheus metrics and a live timeline page over HTTP.

Fed only by what already crosses the bus and the supervisor's own state (its children, their heartbeat
counters); it runs in the supervisor's process. Only the command line and the supervisor's watcher hook use it.
"""
