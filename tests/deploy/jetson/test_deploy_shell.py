"""Every shell script under deploy/jetson passes shellcheck and is executable with a shebang."""
from __future__ import annotations

import os
import shutil

import pytest

from deploy_support import JETSON, run

SCRIPTS = sorted(JETSON.glob("*.sh"))


def test_the_scripts_are_there() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"setup.sh", "detect.sh", "stage.sh", "power.sh", "venusctl.sh", "firstboot.sh"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shellcheck(script) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt package shellcheck; scripts/setup.sh installs it)")
    # -x follows `source` lines; the scripts name their sourced files relative to themselves.
    r = run(["shellcheck", "-x", "--severity=style", script.name], cwd=JETSON)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("script", SCRIPTS + sorted(JETSON.glob("*.py")), ids=lambda p: p.name)
def test_executable_with_shebang(script) -> None:
    assert script.read_text().startswith("#!/usr/bin/env "), f"{script.name} has no shebang"
    assert os.access(script, os.X_OK), f"{script.name} is not executable"


def test_shellcheck_catches_a_fault(tmp_path) -> None:
    """The check has teeth: an unquoted expansion in a copy of a script is reported."""
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/usr/bin/env bash\nf=$1\nrm -rf $f/*\n")
    assert run(["shellcheck", str(bad)]).returncode != 0
