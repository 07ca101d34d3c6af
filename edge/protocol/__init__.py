"""The chunk protocol: its tokens, their ids, delegate spans read from ids, and protocol stripping. No dependencies."""
