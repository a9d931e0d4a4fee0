"""ScoreMatrix (planner/scores.py): policies, validation, warnings, round trips."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from planner.collection import load_scores
from planner.errors import DegenerateDataWarning, InputError, ParameterError
from planner.scores import ScoreMatrix

NAN = np.nan


def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # these inputs must not warn
        return fn(*a, **k)


def test_build_basic_and_readonly():
    m = _quiet(ScoreMatrix.build, [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], ["a", "b"], [1, 2, 3], measure="AP")
    assert m.shape == (2, 3) and m.topics == ("1", "2", "3") and m.systems == ("a", "b")
    assert m.values.dtype == np.float64
    with pytest.raises(ValueError):
        m.values[0, 0] = 1.0  # read-only
    np.testing.assert_allclose(m.system_means(), [0.2, 0.5], rtol=0, atol=1e-15)


VALS = [[0.1, NAN, 0.3], [0.4, 0.5, 0.6], [0.2, 0.1, NAN]]


def test_missing_policies():
    with pytest.raises(InputError, match="2 missing cell\\(s\\), first: system 'a', topic 't2'"):
        ScoreMatrix.build(VALS, ["a", "b", "c"], ["t1", "t2", "t3"])
    z = _quiet(ScoreMatrix.build, VALS, ["a", "b", "c"], ["t1", "t2", "t3"], missing="zero")
    assert z.values[0, 1] == 0.0 and z.values[2, 2] == 0.0


def test_drop_topic_too_few_topics_is_error():
    with pytest.raises(InputError, match="need at least 2 topics, got 1"):
        ScoreMatrix.build(VALS, ["a", "b", "c"], ["t1", "t2", "t3"], missing="drop-topic")


def test_drop_topic_and_drop_system():
    v = [[0.1, NAN, 0.3, 0.2], [0.4, 0.5, 0.6, 0.1], [0.2, 0.1, 0.2, 0.3]]
    dt = _quiet(ScoreMatrix.build, v, ["a", "b", "c"], ["t1", "t2", "t3", "t4"], missing="drop-topic",
                strata=["x", "y", "z", "x"])
    assert dt.topics == ("t1", "t3", "t4") and dt.strata == ("x", "z", "x")
    ds = _quiet(ScoreMatrix.build, v, ["a", "b", "c"], ["t1", "t2", "t3", "t4"], missing="drop-system")
    assert ds.systems == ("b", "c")
    k = _quiet(ScoreMatrix.build, v, ["a", "b", "c"], ["t1", "t2", "t3", "t4"], missing="keep")
    assert k.has_missing and np.isnan(k.values[0, 1])
    with pytest.raises(ParameterError, match="missing"):
        ScoreMatrix.build(v, ["a", "b", "c"], ["t1", "t2", "t3", "t4"], missing="ignore")


def test_errors_inf_size_labels():
    with pytest.raises(InputError, match="infinite score for system 'b', topic '2'"):
        ScoreMatrix.build([[0.1, 0.2], [0.3, np.inf]], ["a", "b"], ["1", "2"])
    with pytest.raises(InputError, match="need at least 2 systems, got 1"):
        ScoreMatrix.build([[0.1, 0.2]], ["a"], ["1", "2"])
    # beyond 1e50 the pilot's fourth powers overflow (1e300 used to end in an IndexError)
    with pytest.raises(InputError, match="score -1e\\+300 for system 'a', topic '2' is too large"):
        ScoreMatrix.build([[0.1, -1e300], [0.3, 0.4]], ["a", "b"], ["1", "2"])
    ScoreMatrix.build([[0.1, -1e50], [0.3, 0.4]], ["a", "b"], ["1", "2"], warn=False)
    with pytest.raises(InputError, match="need at least 2 topics, got 1"):
        ScoreMatrix.build([[0.1], [0.2]], ["a", "b"], ["1"])
    with pytest.raises(ParameterError, match="repeated label 'a'"):
        ScoreMatrix.build([[0.1, 0.2], [0.3, 0.4]], ["a", "a"], ["1", "2"])
    with pytest.raises(ParameterError, match="3 system labels for 2 rows"):
        ScoreMatrix.build([[0.1, 0.2], [0.3, 0.4]], ["a", "b", "c"], ["1", "2"])
    with pytest.raises(ParameterError, match="strata"):
        ScoreMatrix.build([[0.1, 0.2], [0.3, 0.4]], ["a", "b"], ["1", "2"], strata=["x"])


def test_warnings_out_of_range_and_identical():
    with pytest.warns(DegenerateDataWarning, match="outside \\[0, 1\\] \\(min -0.5, max 2\\)"):
        ScoreMatrix.build([[-0.5, 0.2], [0.3, 2.0]], ["a", "b"], ["1", "2"])
    with pytest.warns(DegenerateDataWarning, match="identical on every topic: a = c"):
        ScoreMatrix.build([[0.1, 0.2], [0.3, 0.4], [0.1, 0.2]], ["a", "b", "c"], ["1", "2"])
    m = _quiet(ScoreMatrix.build, [[0.1, 0.2], [0.3, 0.4], [0.1, 0.2]], ["a", "b", "c"], ["1", "2"], warn=False)
    assert m.identical_systems() == [("a", "c")]


def test_wide_and_tidy_round_trips(tmp_path):
    m = _quiet(ScoreMatrix.build, [[0.1, 1 / 3, 5e-04], [0.4, 0.5, 2 / 7]], ["a", "b"], ["t1", "t2", "t3"],
               measure="AP", strata=["x", "y", "x"])
    wide = tmp_path / "w.csv"
    m.to_csv(wide)
    back = _quiet(load_scores, wide, measure="AP")
    np.testing.assert_array_equal(back.values, m.values)  # full precision: exact
    assert back.systems == m.systems and back.topics == m.topics
    tidy = tmp_path / "t.csv"
    m.to_csv(tidy, tidy=True)
    back = _quiet(load_scores, tidy)
    np.testing.assert_array_equal(back.values, m.values)
    assert back.measure == "AP" and back.strata == ("x", "y", "x")
    df = m.to_frame(tidy=True)
    assert list(df.columns) == ["system", "topic", "value", "measure", "stratum"] and len(df) == 6
    again = _quiet(ScoreMatrix.from_frame, df)
    np.testing.assert_array_equal(again.values, m.values)
    fr = _quiet(ScoreMatrix.from_frame, m.to_frame(), measure="AP")
    np.testing.assert_array_equal(fr.values, m.values)


def test_variants_and_take():
    v = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2) / 20
    m = _quiet(ScoreMatrix.build, v, ["a", "b"], ["1", "2", "3"], variants=["v1", "v2"])
    assert m.has_variants and m.n_variants == 2
    np.testing.assert_allclose(m.topic_scores(), v.mean(axis=2), rtol=0, atol=1e-15)
    assert not m.collapse_variants().has_variants
    with pytest.raises(ParameterError, match="tidy=True"):
        m.to_frame()
    df = m.to_frame(tidy=True)
    assert len(df) == 12 and "variant" in df.columns
    np.testing.assert_array_equal(_quiet(ScoreMatrix.from_frame, df).values, m.values)
    t = m.take(systems=["b"], topics=np.array([0, 2]))     # a NumPy integer array: positions
    assert t.systems == ("b",) and t.topics == ("1", "3") and t.values.shape == (1, 2, 2)
    with pytest.raises(ParameterError, match="unknown system 'z'"):
        m.take(systems=["z"])


def test_from_frame_repeated_cell_and_several_measures():
    df = pd.DataFrame({"system": ["a", "a", "b", "b"], "topic": ["1", "1", "1", "2"], "value": [0.1] * 4})
    with pytest.raises(InputError, match="repeated cell: system 'a', topic '1'"):
        ScoreMatrix.from_frame(df)
    df = pd.DataFrame({"system": ["a", "b", "a", "b"], "topic": ["1", "1", "2", "2"], "value": [0.1, 0.2, 0.3, 0.4],
                       "measure": ["AP", "AP", "P", "P"]})
    with pytest.raises(InputError, match="several measures"):
        ScoreMatrix.from_frame(df)


def test_with_strata():
    m = _quiet(ScoreMatrix.build, [[0.1, 0.2], [0.3, 0.4]], ["a", "b"], ["1", "2"])
    s = m.with_strata({"1": "x", "2": "y", "3": "z"})
    assert s.strata == ("x", "y") and s.stratum_labels() == ("x", "y")
    with pytest.raises(InputError, match="1 topic\\(s\\) have no stratum, first: '2'"):
        m.with_strata({"1": "x"})


def test_take_integers_are_labels_positions_need_a_range_or_array():
    # API audit F09: take(topics=[1, 2, 3]) selected positions (topics '2', '3', '4') while
    # with_strata({1: ...}) matched labels; a TREC id given as an int gave a raw IndexError
    m = _quiet(ScoreMatrix.build, np.arange(12, dtype=float).reshape(2, 6) / 20, ["a", "b"],
               ["1", "2", "3", "4", "5", "1037798"])
    assert m.take(topics=[1, 2, 3]).topics == ("1", "2", "3")          # labels, as with_strata
    assert m.take(topics=[1037798, "2"]).topics == ("1037798", "2")
    assert m.take(topics=np.array([1, 2, 3])).topics == ("2", "3", "4")   # NumPy integers: positions
    assert m.take(topics=range(2)).topics == ("1", "2")
    assert m.take(topics=pd.Index([5, 4])).topics == ("5", "4")         # pandas ids: labels
    assert m.take(topics=np.array(["3", "1"])).topics == ("3", "1")
    assert m.take(topics=[True, False] * 3).topics == ("1", "3", "5")
    with pytest.raises(ParameterError, match="topics: unknown topic 0 \\(integers in a list are labels"):
        m.take(topics=[0, 1])
    with pytest.raises(ParameterError, match="topics: position 6 out of range for 6 topics"):
        m.take(topics=np.array([0, 6]))
    with pytest.raises(ParameterError, match="topics: position -1 out of range"):
        m.take(topics=np.array([-1]))


def test_take_one_label_given_as_a_string_or_int():
    # API audit F12: take(systems="bm25") was read letter by letter ("unknown system 'b'")
    m = _quiet(ScoreMatrix.build, [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.2, 0.2, 0.9]],
               ["bm25", "b", "m"], ["10", "20", "30"])
    t = m.take(systems="bm25", topics=20)
    assert t.systems == ("bm25",) and t.topics == ("20",) and t.values.tolist() == [[0.2]]


@pytest.mark.slow
def test_submodules_reachable_after_plain_import():
    # the docs write planner.plan.size_for_target, planner.collection.stack_with_strata: after a
    # plain `import planner` (in a fresh interpreter, where nothing has imported them yet) they
    # raised AttributeError (documentation audit 2026-11-30); the package still imports lazily
    import subprocess
    import sys

    code = ("import sys, planner; assert 'planner.plan' not in sys.modules; "
            "print(planner.plan.size_for_target.__name__, planner.collection.stack_with_strata.__name__, "
            "planner.validation.__name__, planner.variance.stack_variants.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["size_for_target", "stack_with_strata", "planner.validation", "stack_variants"]
    import planner

    with pytest.raises(AttributeError, match="no attribute 'plann'"):
        planner.plann


def test_layers_reexport_and_scoring_lives_in_score_runs():
    # issue 22: the reader layer owns input coercion and variant stacking (planner.variance
    # re-exports them), and runs are scored by planner.score_runs, not by ScoreMatrix
    import planner.collection
    import planner.variance

    assert planner.variance.as_matrix is planner.collection.as_matrix
    assert planner.variance.stack_variants is planner.collection.stack_variants
    assert not hasattr(ScoreMatrix, "from_runs")
    with pytest.raises(ParameterError, match="missing: unknown missing-cell policy 'nope'; expected one of error"):
        ScoreMatrix.build([[0.1, 0.2], [0.3, 0.4]], ["a", "b"], ["1", "2"], missing="nope")


def _identical_by_loop(m: ScoreMatrix) -> list[tuple[str, ...]]:
    """The plain definition: systems keyed by the bytes of their rows (missing cells alike)."""
    seen: dict[bytes, list[str]] = {}
    for name, row in zip(m.systems, m.values.reshape(m.n_systems, -1)):
        seen.setdefault(np.where(np.isnan(row), np.inf, row).tobytes(), []).append(name)
    return [tuple(g) for g in seen.values() if len(g) > 1]


@pytest.mark.parametrize("variants", [None, ["v1", "v2"]])
def test_identical_systems_equal_the_plain_loop(variants):
    # repeated rows (with missing cells, and 0.0 against -0.0, which differ as bytes; two
    # rows with equal hashes but other bytes) among 300 systems: the same groups in the same
    # order as keying every row's bytes in a loop
    rng = np.random.default_rng(3)
    shape = (300, 7) if variants is None else (300, 7, 2)
    x = np.round(rng.random(shape), 1)  # one decimal: some rows repeat by chance too
    x[rng.random(shape) < 0.02] = NAN
    for src, dst in ((5, 17), (5, 250), (40, 41), (99, 7), (120, 299)):
        x[dst] = x[src]
    x[200] = x[201] = 0.0
    x[202] = 0.0
    x[202].flat[0] = -0.0
    x[211] = 0.0  # two signs flipped: the same hash as the zeros (2 * 2^63 w = 0 mod 2^64), other bytes
    x[211].flat[:2] = -0.0
    x[212] = x[211]
    names = [f"s{i}" for i in range(300)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        m = ScoreMatrix.build(x, names, [f"t{i}" for i in range(7)], variants=variants, missing="keep", warn=False)
    got = m.identical_systems()
    assert got == _identical_by_loop(m)
    assert ("s5", "s17", "s250") in got and ("s7", "s99") in got and ("s200", "s201") in got
    assert not any("s202" in g for g in got) and ("s211", "s212") in got
    two = m.take(systems=["s0", "s1"])
    assert two.identical_systems() == []
