"""The tests mirror the code: a test of `edge/harness/` lives in `tests/edge/harness/`, one of `export/onnx/` in
`tests/export/onnx/`, so the tests of a package are found where the package is. Helpers shared by several
folders live in `tests/support/`; `tests/layout/` and `tests/docs/` test the repository and its documentation."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
OWN = {"support", "layout", "docs"}  # folders of the tests themselves, not of a package
CODE = ("edge", "export", "quant", "kernels", "deploy")


def _test_folders() -> list[Path]:
    return sorted({p.parent for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts})


def test_every_test_lives_in_a_folder_named_for_the_code_it_tests():
    stray = []
    for folder in _test_folders():
        rel = folder.relative_to(TESTS)
        if rel.parts and rel.parts[0] in OWN:
            continue
        if not rel.parts or rel.parts[0] not in CODE or not (ROOT / rel).is_dir():
            stray.append(f"tests/{rel.as_posix()}/ (no folder {rel.as_posix()}/ in the code)")
    assert not stray, "test folders that mirror no package:\n" + "\n".join(stray)


def test_every_package_of_the_runtime_has_its_tests_folder():
    packages = sorted(p.parent.relative_to(ROOT) for p in (ROOT / "edge").glob("*/__init__.py"))
    missing = [f"{p.as_posix()}/ -> tests/{p.as_posix()}/" for p in packages
               if not any((TESTS / p).glob("**/test_*.py"))]
    assert not missing, "runtime packages without a tests folder:\n" + "\n".join(missing)


def test_support_holds_helpers_only():
    support = TESTS / "support"
    assert not list(support.glob("test_*.py")), "a test in tests/support/ is never found by its package"
    assert not (support / "conftest.py").exists(), "fixtures go in the conftest of the folders that use them"
