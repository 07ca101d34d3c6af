"""Full-duplex behaviour: echo cancellation in capture, the barge-in policy, room-echo simulation, scoring."""
