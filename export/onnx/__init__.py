"""ONNX export of the media parts and the speech decoder's token2wav, with parity checks."""
