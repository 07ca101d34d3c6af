"""Each capability's timeout is read through one function (HarnessSettings.timeout_for): the `timeouts` setting
for it, else the default the capability declares, else the harness's default_timeout_s."""
from __future__ import annotations

from edge.clock import VirtualClock
from edge.harness.assemble import build_harness
from edge.harness.settings import HarnessSettings

CHAT = {"url": "http://127.0.0.1:9/v1"}  # never asked: only the capability's timeout is read here


def seconds(tmp_path, cfg: dict) -> dict[str, float]:
    (tmp_path / "archive").mkdir(exist_ok=True)
    built = build_harness({"chat": CHAT, "memory": str(tmp_path / "archive"), **cfg}, tmp_path / "s",
                          VirtualClock(), lambda msg: None)
    try:
        reg, s = built.harness.registry, built.harness.s
        return {name: s.timeout_for(name, reg.get(name).timeout_s) for name in ("general", "memory", "clock")}
    finally:
        built.close()


def test_each_capability_keeps_its_declared_default(tmp_path):
    assert seconds(tmp_path, {}) == {"general": 30.0, "memory": 10.0, "clock": 5.0}
    assert seconds(tmp_path, {"default_timeout_s": 12}) == {"general": 12.0, "memory": 10.0, "clock": 5.0}


def test_the_timeouts_setting_gives_each_its_own(tmp_path):
    got = seconds(tmp_path, {"timeouts": {"general": 4, "memory": 3, "clock": 2}})
    assert got == {"general": 4.0, "memory": 3.0, "clock": 2.0}


def test_a_capability_that_declares_nothing_gets_the_harness_default():
    s = HarnessSettings(default_timeout_s=45.0, timeouts={"home.HassTurnOff": 7})
    assert (s.timeout_for("files.read"), s.timeout_for("files.read", 20.0), s.timeout_for("home.HassTurnOff", 20.0)) \
        == (45.0, 20.0, 7.0)
