"""Frontends behind one interface (`base.py`): scripted, the embedded default (`default/`), a Venus bundle (`venus/`)."""
