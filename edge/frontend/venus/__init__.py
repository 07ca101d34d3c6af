"""The Venus frontend: an exported bundle's LLM and encoders running the chunk loop."""
