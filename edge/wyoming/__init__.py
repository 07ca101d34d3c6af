"""Wyoming: this device's speech recognizer and voice served to Home Assistant over the Wyoming protocol."""
