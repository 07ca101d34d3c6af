"""User-defined skills from a skills directory: one folder per skill with a `skill.json` manifest.

    skills/
      unit_converter/
        skill.json     name, version, description, instructions, arguments (JSON Schema), entry
        skill.py       entry {"python": "skill.py:run"}: run(arguments, context) -> str | {"text", "ttl_s"},
                       called in a process of its own (edge.harness.skill_host), so a hung call can be killed
      weather/
        skill.json     entry {"command": ["python3", "weather.py"]}: JSON on stdin, text or JSON on stdout;
        weather.py     exit code 75 means "try again later" (retried), any other non-zero is a failure

A bad manifest is skipped with one sentence saying what is wrong; the others still load.
"""
from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

from edge.harness.capability import CapabilityError, Outcome, RunContext, TransientError
from edge.harness.skill_host import EX_TEMPFAIL
from edge.tether import kill_group, tethered

log = logging.getLogger(__name__)
LOAD_TIMEOUT_S = 20.0  # a Python entry is imported once at load, in a child process, to report errors early

MANIFEST_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_.-]{0,63}$"},
        "version": {"type": "string", "minLength": 1},
        "description": {"type": "string", "minLength": 1},
        "instructions": {"type": "string"},
        "capabilities": {"type": "array", "items": {"type": "string"}},
        "arguments": {"type": "object"},
        "entry": {
            "oneOf": [
                {"type": "object", "properties": {"python": {"type": "string", "pattern": r"^[^:]+\.py:[A-Za-z_]\w*$"}},
                 "required": ["python"], "additionalProperties": False},
                {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"},
                                                               "minItems": 1}},
                 "required": ["command"], "additionalProperties": False},
            ]
        },
        # Bounded: a timer of 1e308 s overflows the wait it sets (a day is more than any call needs).
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 86400},
        "ttl_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 31 * 86400},
    },
    "required": ["name", "version", "description", "arguments", "entry"],
}


class SkillError(ValueError):
    pass


class Skill:
    def __init__(self, root: Path, manifest: dict[str, Any], default_timeout_s: float) -> None:
        self.root = root
        self.name = manifest["name"]
        self.version = manifest["version"]
        self.description = manifest["description"]
        self.instructions = manifest.get("instructions", "")
        self.schema = manifest["arguments"]
        self.timeout_s = float(manifest.get("timeout_s", default_timeout_s))
        self.ttl_s = manifest.get("ttl_s")
        entry = manifest["entry"]
        self.command: list[str] = entry["command"] if "command" in entry else self._python_command(entry["python"])

    def _python_command(self, entry: str) -> list[str]:
        """The host command for a Python entry, after checking (in a child process) that it loads."""
        file, _, attr = entry.partition(":")
        path = (self.root / file).resolve()
        if self.root.resolve() not in path.parents:
            raise SkillError(f"skill {self.name}: entry file {file} must be inside the skill's folder {self.root}")
        if not path.is_file():
            raise SkillError(f"skill {self.name}: entry file {file} does not exist in {self.root}")
        host = [sys.executable, "-m", "edge.harness.skill_host"]
        check = subprocess.Popen(tethered([*host, "--check", str(path), attr]), cwd=self.root, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            _, err = check.communicate(timeout=LOAD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise SkillError(f"skill {self.name}: {file} did not finish loading within {LOAD_TIMEOUT_S:.0f} s") from None
        finally:
            kill_group(check.pid)  # what loading started ends with it
            check.wait()
        if check.returncode != 0:
            why = (err.strip().splitlines() or [f"exit code {check.returncode}"])[-1]
            raise SkillError(f"skill {self.name}: {file} failed to load ({why[:200]})")
        return [*host, str(path), attr]

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        context = {"instruction": ctx.instruction, "work_id": ctx.work_id, "attempt": ctx.attempt}
        out = self._run_command(arguments, context, ctx)
        if isinstance(out, dict):
            if "text" not in out:
                raise CapabilityError(f"the {self.name} skill returned no text")
            return Outcome(str(out["text"]), out.get("ttl_s", self.ttl_s))
        return Outcome(str(out), self.ttl_s)

    def _run_command(self, arguments: dict[str, Any], context: dict, ctx: RunContext) -> Any:
        try:
            # Started and waited for on this thread: the skill dies with the harness, even one killed outright.
            proc = subprocess.Popen(tethered(self.command), cwd=self.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            raise CapabilityError(f"the {self.name} skill could not start ({exc.strerror})") from None
        # Cancellation and timeouts end the skill's whole process group: what it started (a shell's children) too.
        ctx.on_cancel.append(lambda: kill_group(proc.pid))
        try:
            out, err = proc.communicate(json.dumps({"arguments": arguments, **context}), timeout=self.timeout_s + 5)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.communicate()
            raise CapabilityError(f"the {self.name} skill did not finish") from None
        finally:
            kill_group(proc.pid)  # a call is over: nothing it left running in the background outlives it
        if ctx.cancelled:
            raise CapabilityError("the task was cancelled")
        if proc.returncode == EX_TEMPFAIL:
            raise TransientError(f"the {self.name} skill asked to try again later")
        if proc.returncode != 0:
            last = (err.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
            raise CapabilityError(f"the {self.name} skill failed: {last[:200]}")
        text = out.strip()
        if text.startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                pass
        return text


def load_skills(directory: str | Path, default_timeout_s: float = 30.0) -> tuple[list[Skill], list[str]]:
    """Every valid skill under `directory`, and one sentence per skill that could not be loaded."""
    root = Path(directory)
    if not root.is_dir():
        return [], [f"the skills directory {root} does not exist"]
    skills, problems = [], []
    validator = jsonschema.Draft202012Validator(MANIFEST_SCHEMA)
    for manifest_path in sorted(root.glob("*/skill.json")):
        where = manifest_path.parent.name
        try:
            manifest = json.loads(manifest_path.read_bytes().decode("utf-8"))
        except OSError as exc:
            problems.append(f"skill {where}: skill.json cannot be read ({exc.strerror}); it is skipped")
            continue
        except UnicodeDecodeError as exc:
            problems.append(f"skill {where}: skill.json is not UTF-8 text (byte {exc.start}); save it as UTF-8")
            continue
        except json.JSONDecodeError as exc:
            problems.append(f"skill {where}: skill.json is not valid JSON ({exc})")
            continue
        err = jsonschema.exceptions.best_match(validator.iter_errors(manifest))
        if err is not None:
            path = "/".join(str(p) for p in err.absolute_path) or "manifest"
            problems.append(f"skill {where}: {path}: {err.message}")
            continue
        try:
            jsonschema.validators.validator_for(manifest["arguments"]).check_schema(manifest["arguments"])
            skills.append(Skill(manifest_path.parent, manifest, default_timeout_s))
        except jsonschema.SchemaError as exc:
            problems.append(f"skill {where}: its argument schema is invalid ({exc.message})")
        except SkillError as exc:
            problems.append(str(exc))
    for p in problems:
        log.warning("%s", p)
    return skills, problems


