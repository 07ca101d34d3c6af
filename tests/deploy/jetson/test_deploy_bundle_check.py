"""stage.sh holds a bundle against the board's profile: a bundle that does not fit or does not match the plan
is refused, or with --force staged with a warning (bundles from the real exporter)."""
from __future__ import annotations

from deploy_support import JETSON, run


def stage(*args: str):
    return run([str(JETSON / "stage.sh"), *args])


def test_a_bundle_off_the_plan_is_refused(rootfs, exported) -> None:
    """The F16 bundle with fp32 encoders, for orin-nano-8 whose plan is Q2_K with int8 encoders."""
    r = stage("--rootfs", str(rootfs), "--bundle", str(exported), "--board", "orin-nano-8")
    assert r.returncode == 1
    [line] = r.stderr.strip().splitlines()
    assert "does not suit orin-nano-8" in line and "LLM is Q2_K but the bundle holds F16" in line
    assert "encoder is int8 but the bundle holds fp32" in line and line.endswith("or add --force.")
    assert not (rootfs / "opt" / "venus-edge").exists()  # nothing was staged


def test_force_stages_it_with_a_warning(rootfs, exported) -> None:
    r = stage("--rootfs", str(rootfs), "--bundle", str(exported), "--board", "orin-nano-8", "--force")
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("stage: warning: ") and "Q2_K" in r.stderr
    assert (rootfs / "opt" / "venus-edge" / "bundle" / "manifest.json").is_file()


def test_a_bundle_too_large_for_the_board(tmp_path, exported_omni) -> None:
    """The Omni bundle on a 4 GB Orin Nano: the planner's numbers say it does not fit."""
    r = stage("--tarball", str(tmp_path / "s.tgz"), "--bundle", str(exported_omni), "--board", "orin-nano-4")
    assert r.returncode == 1 and "it does not fit orin-nano-4" in r.stderr and "GB short" in r.stderr
    assert not (tmp_path / "s.tgz").exists()


def test_a_bundle_built_to_the_plan_passes(tmp_path, exported) -> None:
    """The same checker says yes when the profile names what the bundle holds (a profile edited by hand)."""
    profile = (JETSON / "profiles" / "orin-nano-8.env").read_text()
    for key, value in (("VENUS_LLM_TYPE", "F16"), ("VENUS_TTS_TYPE", "F16"), ("VENUS_ENCODER_PRECISION", "fp32")):
        profile = "\n".join(f"{key}={value}" if line.startswith(key + "=") else line for line in profile.splitlines())
    (tmp_path / "p.env").write_text(profile + "\n")
    r = run([str(JETSON / "bundle_check.py"), str(exported), str(tmp_path / "p.env")])
    assert r.returncode == 0 and r.stdout.startswith("the bundle matches the orin-nano-8 plan; F16 LLM"), r.stdout
