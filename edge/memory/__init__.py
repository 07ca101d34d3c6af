"""Long-video memory: the frame gate's kept frames on disk (thumbnail, descriptors, their seconds of audio) under a budget, and retrieval by a question."""
