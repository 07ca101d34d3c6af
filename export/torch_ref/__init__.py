"""Small PyTorch reference modules for the media parts, loaded by checkpoint tensor names."""
