"""`--judge`: on a bundle the model decides interruptions unless asked otherwise; the embedded default keeps its
judge (docs/conformance.md, "Interruptions")."""
from __future__ import annotations

import pytest

from edge.cli import judge_on, session_parser


@pytest.mark.parametrize("argv, frontend, expected", [
    (["--bundle", "b"], "bundle:b", False),
    (["--bundle", "b", "--judge", "on"], "bundle:b", True),
    ([], "default", True),
    (["--judge", "off"], "default", False),
])
def test_the_judge_follows_the_flag_and_the_frontend(argv, frontend, expected):
    assert judge_on(session_parser().parse_args(argv).judge, frontend) is expected


def test_a_wrong_judge_choice_is_refused(capsys):
    with pytest.raises(SystemExit):
        session_parser().parse_args(["--judge", "maybe"])
    assert "invalid choice" in capsys.readouterr().err
