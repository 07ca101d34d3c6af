"""The Wyoming server as the system starts it: its systemd unit verifies, and the command lines the unit, its
environment file and the container run are ones the real parser accepts."""
from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from deploy_support import REPO, make_rootfs, run

from edge.wyoming.serve import check_uri, parser

HERE = REPO / "deploy" / "wyoming"
UNIT = HERE / "venus-edge-wyoming.service"


def _env_file(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def _unit_environment() -> dict[str, str]:
    env: dict[str, str] = {}
    for line in UNIT.read_text().splitlines():
        if line.startswith("Environment="):
            for word in shlex.split(line.removeprefix("Environment=")):
                key, _, value = word.partition("=")
                env[key] = value
    return env


def _exec_argv(env: dict[str, str]) -> list[str]:
    """ExecStart as systemd expands it: ${X} as one word, $X split at whitespace."""
    [line] = [x for x in UNIT.read_text().splitlines() if x.startswith("ExecStart=")]
    argv: list[str] = []
    for word in line.removeprefix("ExecStart=").split():
        if m := re.fullmatch(r"\$\{(\w+)\}", word):
            argv.append(env[m.group(1)])
        elif m := re.fullmatch(r"\$(\w+)", word):
            argv += env[m.group(1)].split()
        else:
            argv.append(word)
    return argv


@pytest.mark.parametrize("with_env_file", [False, True])
def test_the_units_command_line_is_one_the_server_accepts(with_env_file):
    env = _unit_environment() | (_env_file(HERE / "wyoming.env") if with_env_file else {})
    argv = _exec_argv(env)
    assert argv[:2] == ["/opt/venus-edge/venv/bin/venus-edge", "wyoming"]
    args = parser().parse_args(argv[2:])
    assert check_uri(args.uri, args.public) is None  # beyond loopback, so it says --public
    assert args.uri.endswith(":10300")


def test_the_containers_command_is_one_the_server_accepts():
    text = (HERE / "Dockerfile").read_text()
    entry = eval(re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M).group(1))  # noqa: S307 (a JSON list)
    cmd = eval(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))  # noqa: S307
    assert entry == ["venus-edge", "wyoming"]
    args = parser().parse_args(cmd)
    assert check_uri(args.uri, args.public) is None
    assert f"EXPOSE {args.uri.rsplit(':', 1)[1]}" in text


def test_the_unit_passes_systemd_analyze_verify(tmp_path):
    exe = shutil.which("systemd-analyze")
    if exe is None or not Path("/usr/lib/systemd/system/sysinit.target").exists():
        pytest.skip("systemd-analyze and systemd's own units are needed (apt package systemd)")
    root = make_rootfs(tmp_path / "root")
    venus = root / "opt" / "venus-edge" / "venv" / "bin" / "venus-edge"
    venus.parent.mkdir(parents=True)
    venus.write_text("#!/bin/sh\n")
    venus.chmod(0o755)
    units = root / "etc" / "systemd" / "system"
    shutil.copy(UNIT, units)
    r = run([exe, "verify", f"--root={root}", "--man=no", UNIT.name], env={"SYSTEMD_LOG_LEVEL": "notice"},
            cwd=units)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr
    # the check has teeth: a misspelt setting is reported
    (units / "bad.service").write_text(UNIT.read_text().replace("RestartSec=3", "RestartSec=three"))
    r = run([exe, "verify", f"--root={root}", "--man=no", "bad.service"], env={"SYSTEMD_LOG_LEVEL": "notice"},
            cwd=units)
    assert "bad.service:" in r.stderr and "three" in r.stderr
