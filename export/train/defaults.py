"""Each variant's default training settings.

Left out of the training cache's code hash: the resolved settings are part of the key already, so changing
one variant's defaults does not invalidate the other variant's cached checkpoint.
"""
from __future__ import annotations

# Per variant: Omni chunks carry 64 image embeddings each, so its sessions are shorter and its batches smaller.
# Omni shows scenes from a pool of 120 (the frozen tower encodes each once), which with the last LLM layer run
# only where a target is read makes a step about 40% cheaper: 540 steps in the CPU time 330 took.
DEFAULTS = {"audio": {"steps": 450, "batch": 8, "chunks": 20, "pretrain": 500,
                      "asked_weight": 0.5, "answer_weight": 3.0, "frame_pool": 0, "shifted": 0},
            "omni": {"steps": 520, "batch": 4, "chunks": 16, "pretrain": 120, "pretrain_vision": 200,
                     "asked_weight": 1.0, "answer_weight": 6.0, "frame_pool": 120,
                     "shifted": 3}}
