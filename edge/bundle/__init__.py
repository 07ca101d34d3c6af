"""Reading a Venus bundle on the device: manifest, checks, settings, native engines."""
