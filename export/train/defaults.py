"""Each variant's default training settings.

Left out of the training cache's code hash: the resolved settings are part of the key already, so changing
one variant's defaults does not invalidate the other variant's cached checkpoint.
"""
from __future__ import annotations

# Per variant: Omni chunks carry 64 image embeddings each, so its sessions are shorter and its batches smaller.
DEFAULTS = {"audio": {"steps": 450, "batch": 8, "chunks": 20, "pretrain": 500},
            "omni": {"steps": 330, "batch": 4, "chunks": 16, "pretrain": 120, "pretrain_vision": 200}}
