"""Starting a staged systemd unit the way systemd would, without systemd: for rehearsals in a root directory.

What systemd does, per systemd.exec(5) and systemd.service(5), as far as the
venus-edge units use it:
- Environment= assignments first, then each EnvironmentFile= in order (a
  leading "-" makes a missing file fine); a later assignment wins;
- environment files are read with systemd's own rules: a value's quotes count
  only where the value (or a quoted part of it) starts, a backslash outside
  single quotes escapes the next character, trailing blanks are dropped, lines
  starting with # or ; are comments;
- in ExecStart, "${VAR}" inside a word is replaced by the value as it is, a
  word that is exactly "$VAR" is replaced by the value split at whitespace
  into words; unset variables are empty;
- WorkingDirectory= is the working directory.
Absolute paths under the unit's own trees (/opt/venus-edge, /etc/venus-edge,
/var/lib/venus-edge, /run/venus-edge) are looked up inside `root`, as if root
were /.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

OWN_TREES = ("/opt/venus-edge", "/etc/venus-edge", "/var/lib/venus-edge", "/run/venus-edge")
WHITESPACE = " \t"
SHELL_NEED_ESCAPE = '"\\`$'


def read_env_file(text: str) -> dict[str, str]:
    """KEY=VALUE lines as systemd's environment-file reader takes them."""
    out: dict[str, str] = {}
    for raw_line in _logical_lines(text):
        line = raw_line.lstrip(WHITESPACE)
        if not line or line[0] in "#;":
            continue
        key, sep, rest = line.partition("=")
        if not sep:
            continue
        out[key.strip(WHITESPACE)] = _value(rest)
    return out


def _logical_lines(text: str) -> list[str]:
    """Lines, with a backslash-newline outside quotes joining two (systemd eats escaped newlines)."""
    return re.sub(r"\\\n", "", text).splitlines()


def _value(rest: str) -> str:
    value, i = [], 0
    state = "pre"
    keep_to = None  # length of value up to the last non-blank character outside quotes
    while i < len(rest):
        c = rest[i]
        if state == "pre":
            if c == "'":
                state = "single"
            elif c == '"':
                state = "double"
            elif c == "\\":
                state = "escape"
            elif c not in WHITESPACE:
                state = "value"
                value.append(c)
                keep_to = len(value)
        elif state == "value":
            if c == "\\":
                state = "escape"
            else:
                value.append(c)
                if c not in WHITESPACE:
                    keep_to = len(value)
        elif state == "escape":
            value.append(c)
            keep_to = len(value)
            state = "value"
        elif state == "single":
            if c == "'":
                state = "pre"
            else:
                value.append(c)
            keep_to = len(value)
        elif state == "double":
            if c == '"':
                state = "pre"
            elif c == "\\" and i + 1 < len(rest):
                i += 1
                value.extend(rest[i] if rest[i] in SHELL_NEED_ESCAPE else "\\" + rest[i])
            else:
                value.append(c)
            keep_to = len(value)
        i += 1
    return "".join(value[:keep_to] if keep_to is not None else value)


def unit_settings(text: str) -> list[tuple[str, str]]:
    """(key, value) of every setting of a unit file, in order (keys repeat)."""
    out = []
    for line in _logical_lines(text):
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            key, value = line.split("=", 1)
            out.append((key.strip(), value.strip()))
    return out


def expand_exec(line: str, env: dict[str, str]) -> list[str]:
    """ExecStart's words after systemd's variable expansion ("$VAR" alone splits, "${VAR}" does not)."""
    words = []
    for word in shlex.split(line):
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            words += env.get(whole.group(1), "").split()
            continue
        words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), word))
    return words


def in_root(root: Path, text: str) -> str:
    """Every absolute path under the unit's own trees, moved inside `root`."""
    for tree in OWN_TREES:
        text = re.sub(rf"(?<![\w/.-]){re.escape(tree)}(?=/|\b|$)", str(root) + tree, text)
    return text


def unit_command(root: Path, unit: Path, base_env: dict[str, str]) -> tuple[list[str], dict[str, str], Path]:
    """argv, environment and working directory of the unit's ExecStart, as systemd would start it in `root`."""
    env = dict(base_env)
    files: list[str] = []
    exec_start, workdir = None, "/"
    for key, value in unit_settings(unit.read_text()):
        if key == "Environment":
            for assignment in shlex.split(value):
                name, _, val = assignment.partition("=")
                env[name] = in_root(root, val)
        elif key == "EnvironmentFile":
            files.append(value)
        elif key == "ExecStart":
            exec_start = value
        elif key == "WorkingDirectory":
            workdir = value
    for name in files:  # after Environment=: a file's assignment wins
        optional = name.startswith("-")
        path = Path(in_root(root, name.lstrip("-")))
        if not path.is_file():
            if optional:
                continue
            raise FileNotFoundError(f"{unit.name}: EnvironmentFile {name} is missing, so systemd would not start it")
        env.update({k: in_root(root, v) for k, v in read_env_file(path.read_text()).items()})
    if exec_start is None:
        raise ValueError(f"{unit.name} has no ExecStart")
    argv = [in_root(root, w) for w in expand_exec(exec_start.lstrip("-@+!:"), env)]
    return argv, env, Path(in_root(root, workdir))
