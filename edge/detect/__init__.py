"""Detectors and the recognizer shared by capture, the frontends and the harness: Silero VAD, the speech onset detector, the level meter, whisper."""
