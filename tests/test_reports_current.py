"""The shipped reports in reports/ are what their studies in configs/ produce today.

Regenerates every study (about two minutes) and compares numbers, tables and the
report's text with the committed folder (scripts/make_reports.py --check). When this
fails after a deliberate change, run ``python scripts/make_reports.py`` and commit.
"""

from __future__ import annotations

import importlib.util

import pytest
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("make_reports", ROOT / "scripts" / "make_reports.py")
make_reports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_reports)


@pytest.mark.slow
@pytest.mark.parametrize("name", make_reports.names())
def test_shipped_report_is_current(name, shared_data):
    assert make_reports.check(name) == []


def test_compare_sees_a_changed_number(tmp_path):
    # the check itself: a number moved beyond the tolerance is a difference, one within it is not
    for side, value in (("old", 0.25), ("new", 0.25 * (1 + 1e-12))):
        (tmp_path / side / "tables").mkdir(parents=True)
        (tmp_path / side / "results.json").write_text(f'{{"a": [{value}]}}')
        (tmp_path / side / "report.md").write_text("- finished today\nsame\n")
    assert make_reports.compare(tmp_path / "new", tmp_path / "old", "x") == []
    (tmp_path / "new" / "results.json").write_text('{"a": [0.2501]}')
    assert make_reports.compare(tmp_path / "new", tmp_path / "old", "x") == ["results.json.a[0]: 0.2501 against 0.25"]


def test_compare_ignores_where_the_shared_data_lies(tmp_path):
    # CI clones the project elsewhere, with shared/ beside the clone: absolute data paths differ
    for side, root in (("old", "/work/shared"), ("new", "/tmp/ci-clone/shared")):
        (tmp_path / side / "tables").mkdir(parents=True)
        (tmp_path / side / "results.json").write_text(f'{{"qrels": "{root}/data/q.txt", "rel": "../../shared/data/q"}}')
        (tmp_path / side / "report.md").write_text(f"read {root}/data/q.txt\n")
    assert make_reports.compare(tmp_path / "new", tmp_path / "old", "x") == []
    (tmp_path / "new" / "report.md").write_text("read /tmp/ci-clone/shared/data/other.txt\n")
    assert len(make_reports.compare(tmp_path / "new", tmp_path / "old", "x")) == 1
