"""The harness while its folder cannot be written (a full disk, a read-only folder): the conversation goes on.

Work that cannot be stored cannot be promised, so a request that needs it is declined in words: the first
one of an outage hears why, later ones only that it cannot be done now. The outage is logged once, as one
sentence, and once more when a request is stored again and delegation is back.
"""
from __future__ import annotations

import logging

from edge.harness.polish import polish
from edge.harness.store import StoreUnwritable

log = logging.getLogger(__name__)

WHY_FULL = "Sorry, I can't take on background work right now: there's no room left on the device to save it."
WHY_REFUSED = "Sorry, I can't take on background work right now: I can't save it on this device."
AGAIN = "Sorry, I can't do that right now."


class Outage:
    def __init__(self) -> None:
        self.why: str | None = None  # the sentence logged for the outage under way
        self.full = False
        self.told = False  # the user has heard why in this outage

    @property
    def down(self) -> bool:
        return self.why is not None

    def begin(self, err: StoreUnwritable) -> None:
        if self.why is None:
            log.error("%s; requests for background work are declined until it can be", err)
            self.full = err.full
        self.why = str(err)

    def end(self, folder: object) -> None:
        if self.why is not None:
            log.warning("the harness folder %s can be written again; background work is back on", folder)
        self.why, self.told = None, False

    def words(self) -> str:
        """What a declined request hears: why, the first time in this outage; then only that it can't be done."""
        if self.told:
            return polish(AGAIN)
        self.told = True
        return polish(WHY_FULL if self.full else WHY_REFUSED)
