"""Errors for missing or unusable input devices: one sentence, what was not found and what to do instead."""


class DeviceError(RuntimeError):
    pass
