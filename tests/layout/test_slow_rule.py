"""The slow rule (tests/slow_rule.py) finds what a test costs from what it calls: building a model is slow work
wherever it hides, in a helper, a conftest's helper or a fixture asked for by name at run time."""
from __future__ import annotations

from slow_rule import _heavy


def exports_a_bundle(ckpt, out):
    from export.build import BuildOptions, build
    return build(ckpt, out, BuildOptions(types=["F16"], onnx=False, progress=False, threads=1))


def asks_for_an_export(tmp_path):
    return exports_a_bundle(tmp_path / "ckpt", tmp_path / "bundle")


def asks_at_run_time(request):
    return request.getfixturevalue("exported")


def asks_by_parameter(which, request):
    return request.getfixturevalue(f"{which}_bundle")


def adds(a, b):
    return a + b


def nothing_asked(name):
    return []


def test_a_model_built_by_the_test_or_a_helper_it_calls_is_slow():
    assert _heavy(exports_a_bundle, set(), nothing_asked)
    assert _heavy(asks_for_an_export, set(), nothing_asked)  # followed through the helper it calls
    assert not _heavy(adds, set(), nothing_asked)


def test_a_fixture_asked_for_by_name_at_run_time_is_followed():
    def fixtures(name):
        return [exports_a_bundle] if name in ("exported", "omni_bundle") else []

    assert _heavy(asks_at_run_time, set(), fixtures)
    assert not _heavy(asks_at_run_time, set(), nothing_asked)
    # `{which}` is the test's own parameter: is_slow fills it in before asking (here the name stays as written)
    assert not _heavy(asks_by_parameter, set(), fixtures)
    assert _heavy(asks_by_parameter, set(), lambda name: fixtures(name.replace("{which}", "omni")))
