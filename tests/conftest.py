"""Shared fixtures: the real data in ../shared/data (tests that need it are
skipped when it is absent) and small helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("PLANNER_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``; the test is skipped when it is not there."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} not present")
    return SHARED_DATA


@pytest.fixture(scope="module")
def small_scores(tmp_path_factory) -> Path:
    """A wide CSV of real scores: 8 DL 2019 runs x 24 topics (nDCG@10, reference matrix);
    the test is skipped when the shared data is not there."""
    src = SHARED_DATA / "trec-dl2019-passage" / "reference" / "matrix_official_nDCG_at_10.csv"
    if not src.exists():
        pytest.skip("shared data not present")
    df = pd.read_csv(src, dtype={"topic": str}).set_index("topic")
    # 8 runs with distinct means, the first 24 topics
    means = df.mean().sort_values()
    cols = list(means.index[:: max(1, len(means) // 8)][:8])
    out = tmp_path_factory.mktemp("scores") / "dl19_small.csv"
    df.iloc[:24][cols].to_csv(out)
    return out


@pytest.fixture
def traced_peak():
    """``traced_peak(fn)`` -> ``(fn(), peak bytes traced by tracemalloc while it ran)``."""
    import tracemalloc

    def run(fn):
        tracemalloc.start()
        try:
            out = fn()
            return out, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return run
