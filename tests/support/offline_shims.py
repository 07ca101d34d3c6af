"""Stand-ins for the device's package tools in an offline first-boot rehearsal.

What they replace, and why: this machine is not an aarch64 Jetson, so the staged wheels cannot really be
installed here. `python3 -m venv` makes a venv whose python and pip record every pip command line (JSON,
one a line) and install a package only if the --find-links folder holds a file for it, as pip --no-index
would; `dpkg -s` reports every package missing, so the offline path for apt is taken; apt-get and
systemd-sysusers only record that they were called. Everything else (stage.sh, firstboot.sh, setup.sh,
detect.sh, progress.py, venusctl.sh) is the real script.
"""
from __future__ import annotations

import sys
from pathlib import Path

# The venv's python and pip: one recorder for both forms (`python -m pip ...`, `python X.whl/pip ...`, `pip ...`).
RECORDER = r'''#!{python}
import json, os, re, sys
from pathlib import Path

venv = Path(__file__).resolve().parent.parent
argv = sys.argv[1:]
if Path(sys.argv[0]).name.startswith("python"):
    if argv[:1] == ["-c"]:  # setup.sh's import checks: true once the package is "installed"
        code = argv[1]
        for module, package in (("llama_cpp", "llama_cpp_python"), ("onnxruntime", "onnxruntime_gpu")):
            if module in code:
                sys.exit(0 if (venv / "installed" / package).exists() else 1)
        sys.exit(1)  # tensorrt, cv2: JetPack's, not here
    if argv[:2] == ["-m", "pip"]:
        argv = argv[2:]
    elif argv and argv[0].endswith(".whl/pip"):
        argv = argv[1:]
    else:
        sys.exit(f"recorder: unexpected python call {{argv}}")
with open(os.environ["VENUS_PIP_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\n")
if not argv or argv[0] != "install":
    sys.exit(0)
links = argv[argv.index("--find-links") + 1] if "--find-links" in argv else None
names, skip, editable = [], False, False
for arg in argv[1:]:
    if skip:
        skip = False
        continue
    if arg in ("-c", "--find-links", "--extra-index-url", "--index-url", "-w"):
        skip = True
    elif arg == "-e":
        editable = True
    elif not arg.startswith("-"):
        names.append((arg, editable))
        editable = False
(venv / "installed").mkdir(exist_ok=True)
for arg, editable in names:
    if editable or arg.endswith(".whl"):
        path = Path(arg.split("[")[0])
        if not path.exists():
            sys.exit(f"recorder: {{arg}} does not exist")
        name = "venus_edge" if editable else path.name.split("-")[0]
    else:
        name = re.split(r"[<>=!\[ ]", arg)[0].replace("-", "_").lower()
        if links is None or not any(f.name.lower().startswith(name + "-") for f in Path(links).iterdir()):
            sys.exit(f"ERROR: Could not find a version that satisfies the requirement {{arg}} (offline: not in {{links}})")
    (venv / "installed" / name).touch()
    if name == "pip":
        os.symlink("python", venv / "bin" / "pip")
    if name == "venus_edge":
        (venv / "bin" / "venus-edge").write_text("#!/bin/sh\n")
        os.chmod(venv / "bin" / "venus-edge", 0o755)
'''

# python3 on PATH: `-m venv` makes the recording venv; anything else is the real interpreter.
PYTHON3 = r'''#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
  for venv; do :; done
  mkdir -p "$venv/bin"
  cp "{shims}/recorder.py" "$venv/bin/python"
  chmod 755 "$venv/bin/python"
  echo "$*" >>"$VENUS_TOOL_LOG"
  exit 0
fi
exec {python} "$@"
'''

RECORD_ONLY = '#!/usr/bin/env bash\necho "{name} $*" >>"$VENUS_TOOL_LOG"\nexit {rc}\n'


def write_shims(folder: Path) -> Path:
    """The folder to put first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "recorder.py": RECORDER.format(python=sys.executable),
        "python3": PYTHON3.format(python=sys.executable, shims=folder),
        "dpkg": RECORD_ONLY.format(name="dpkg", rc=1),
        "apt-get": RECORD_ONLY.format(name="apt-get", rc=1),
        "sudo": RECORD_ONLY.format(name="sudo", rc=1),
        "systemd-sysusers": RECORD_ONLY.format(name="systemd-sysusers", rc=0),
        # NetworkManager's wait: exit 1 is "no connection before the timeout" (nm-online(1)).
        "nm-online": RECORD_ONLY.format(name="nm-online", rc=1),
    }
    for name, text in files.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return folder
