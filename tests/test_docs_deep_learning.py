"""docs/deep-learning.md: its command lines run, and the seed numbers it states are the
command's (the seed table there is SIMULATED from stated components)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from planner import cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "deep-learning.md"


def _blocks(lang: str) -> list[str]:
    """The text of every fenced block whose opening fence names ``lang`` (``""``: none)."""
    out, cur, inside = [], [], None
    for line in DOC.read_text().splitlines():
        if line.startswith("```"):
            if inside is None:
                inside, cur = line[3:].strip(), []
            else:
                if inside == lang:
                    out.append("\n".join(cur) + "\n")
                inside = None
        elif inside is not None:
            cur.append(line)
    return out


def _commands(prefix: str) -> list[list[str]]:
    return [shlex.split(line)[1:] for b in _blocks("") for line in b.splitlines() if line.startswith(prefix)]


@pytest.fixture
def seeds_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = next(b for b in _blocks("python") if "seeds-simulated.csv" in b)
    exec(compile(code, str(DOC), "exec"), {})
    return tmp_path / "seeds-simulated.csv"


def test_seed_commands_run_and_match_the_text(seeds_file, capsys):
    cmds = _commands("planner seeds")
    assert len(cmds) == 3
    for argv in cmds:
        assert cli.main(argv) == 0, argv
    capsys.readouterr()
    assert cli.main([*cmds[2], "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    one = d["power"][0]
    assert one["n_seeds"] == 1 and one["n_topics"] == 40
    text = DOC.read_text()
    assert f"calls a zero difference significant {100 * one['false_positive_rate']:.0f}% of the time" in text
    assert f"power {one['power']:.2f} for a difference of 0.05" in text
    t = d["tradeoff"]
    assert f"{t['n_seeds']} seeds per recipe and {t['n_topics']}\ntopics (cost {t['cost']:g})" in text
    assert f"fitted `var_seed` is {d['components']['var_seed']:.2g}" in text


@pytest.mark.slow
def test_select_commands_run(capsys):
    cmds = _commands("planner select")
    assert len(cmds) >= 3
    for argv in cmds:
        assert cli.main([*argv, "--n-resamples", "50"]) == 0, argv
