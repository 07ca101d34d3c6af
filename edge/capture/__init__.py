"""Input: audio and video sources, and what the microphone hears after echo cancellation (the listener)."""
