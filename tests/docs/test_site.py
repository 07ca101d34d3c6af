"""The documentation: the site builds strictly, and the README stays a five-minute read whose commands work.

A newcomer runs the README's commands as written, so each `venus-edge`, `venus-export` and `venus-quant`
line in its code blocks is parsed by the command's own parser (a renamed or removed flag fails here), and
each flag given to `deploy/jetson/stage.sh` must be one its `--help` names.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SETUP_COMMANDS = ["bash scripts/setup.sh run", "bash scripts/setup.sh test"]  # .ci/run runs the second


def code_blocks(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)]


def command_lines(block: str) -> list[str]:
    """The block's commands: continuation lines joined, comments after two spaces and a # dropped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [re.split(r"\s{2,}#", line)[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_mkdocs_builds_strictly(tmp_path):
    """Every page in the nav exists, and every relative link and anchor between pages resolves."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # the theme's banner, not a warning
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()


def test_readme_is_short_and_starts_with_the_two_setup_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= 300, f"README.md has {len(text.splitlines())} lines; keep it to 300"
    commands = [b.strip() for b in code_blocks(text)][:2]
    assert commands == SETUP_COMMANDS


def test_readme_links_resolve():
    text = README.read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert targets and not missing, f"README.md links to files that do not exist: {missing}"


class _Parsed(Exception):
    pass


@contextmanager
def parse_only():
    """Let a command's own main() build and run its parser, then stop before it does any work."""
    original = argparse.ArgumentParser.parse_args

    def parse(self, args=None, namespace=None):
        original(self, args, namespace)
        raise _Parsed

    argparse.ArgumentParser.parse_args = parse
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args = original


def _mains():
    from edge.cli import main as edge_main
    from export.cli import main as export_main
    from quant.cli import main as quant_main
    return {"venus-edge": edge_main, "venus-export": export_main, "venus-quant": quant_main}


def readme_commands() -> list[list[str]]:
    out = []
    for block in code_blocks(README.read_text()):
        for line in command_lines(block):
            line = re.sub(r"\$\(printf[^)]*\)", "--journal session.journal", line)
            words = shlex.split(line)
            if words and (words[0] in ("venus-edge", "venus-export", "venus-quant") or words[0].endswith("stage.sh")):
                out.append(words)
    return out


def test_readme_commands_parse_with_the_real_command_lines(capsys):
    commands = readme_commands()
    names = {c[0] for c in commands}
    assert {"venus-edge", "venus-export", "venus-quant"} <= names and any(n.endswith("stage.sh") for n in names)
    mains = _mains()
    stage_help = subprocess.run(["bash", str(ROOT / "deploy/jetson/stage.sh"), "--help"], capture_output=True,
                                text=True, timeout=30).stdout
    wrong = []
    for words in commands:
        if words[0].endswith("stage.sh"):
            wrong += [f"{' '.join(words)}: {w}" for w in words[1:] if w.startswith("--") and w not in stage_help]
            continue
        with parse_only():
            try:
                mains[words[0]](words[1:])
            except _Parsed:
                continue
            except SystemExit as exc:
                wrong.append(f"{' '.join(words)}: exit {exc.code}: {capsys.readouterr().err.strip()}")
                continue
        wrong.append(f"{' '.join(words)}: its parser was never reached")
    assert not wrong, "README commands the real command lines refuse:\n" + "\n".join(wrong)


@pytest.mark.parametrize("argv", [["--camara", "0"], ["wyoming", "--uri-typo", "x"]])
def test_the_command_check_catches_a_wrong_flag(argv, capsys):
    """The check above fails on a misspelt flag (so a README typo cannot pass)."""
    with parse_only(), pytest.raises(SystemExit):
        _mains()["venus-edge"](argv)
