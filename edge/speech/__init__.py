"""Speech output: decoders (espeak, Piper in `piper/`, the Venus voice in `venus/`), playback on the timeline, sinks."""
