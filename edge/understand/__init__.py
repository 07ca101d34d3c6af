"""One understanding path: how a request in words (a voice session's delegate, a Wyoming transcript, typed text)
becomes one capability's work, with the same guards and the same wording whichever way it came."""
