"""Wide score tables read through pandas: the same numbers as Python's float of each cell,
the same errors naming file and line, and memory bounded by the matrix (issue 24)."""

from __future__ import annotations

import csv
import io
import warnings

import numpy as np
import pytest

from planner import load_scores
from planner.collection import tables
from planner.errors import InputError


@pytest.fixture(params=["chunks", "one piece"])
def piece(request, monkeypatch):
    """pandas parses in chunks (``low_memory``, few columns) or in one piece (many columns)."""
    if request.param == "one piece":
        monkeypatch.setattr(tables, "ONE_PIECE_COLUMNS", 1)
    return request.param


def _reference(text: str, delim: str = ","):
    """(systems, topics, values) of a wide table with a topic column, by the csv module and float()."""
    rows = [r for r in csv.reader(io.StringIO(text, newline=None), delimiter=delim) if r]
    systems = [h.strip() for h in rows[0][1:]]
    topics = [r[0].strip() for r in rows[1:]]
    values = np.array([[float(c) for c in r[1:]] for r in rows[1:]]).T
    return tuple(systems), tuple(topics), values


@pytest.mark.parametrize("fmt", ["{:.17g}", "{:.6f}", "{:.3e}", " {:.4g} ", "{!r}"])
@pytest.mark.parametrize("ending,delim,bom", [("\n", ",", ""), ("\r\n", ",", ""), ("\r", ",", ""),
                                              ("\n", "\t", ""), ("\n", ",", "\ufeff")])
def test_wide_table_numbers_are_pythons_floats(tmp_path, fmt, ending, delim, bom, piece):
    rng = np.random.default_rng(7)
    vals = rng.random((40, 6)) * rng.choice([1e-9, 1e-3, 1, 0.99999], size=(40, 6))
    head = delim.join(["topic"] + [f'"sys {j}"' for j in range(6)])
    body = [delim.join([f"t{i}"] + [fmt.format(float(v)) for v in row]) for i, row in enumerate(vals)]
    text = bom + ending.join([head, *body]) + ending
    p = tmp_path / "w.csv"
    p.write_bytes(text.encode("utf-8"))
    m = load_scores(p)
    systems, topics, values = _reference(text.lstrip("\ufeff"), delim)
    assert m.systems == systems and m.topics == topics
    np.testing.assert_array_equal(m.values, values)


@pytest.mark.parametrize("row,line,message", [
    ("t3,0.5", 4, "expected 3 fields like the header, found 2"),
    ("t3,0.5,0.25,0.125", 4, "expected 3 fields like the header, found 4"),
    ("t3,0.5,1e999", 4, "infinite value '1e999' for system 's2'"),
    ("t3,0.5,inf", 4, "infinite value 'inf'"),
    ("t3,0.5,0x10", 4, "non-numeric value '0x10' for system 's2'"),
    ("t3,0.5,1_0", 4, "non-numeric value '1_0'"),
    ("t1,0.5,0.25", 4, "topic 't1' repeated (first on line 2)"),
    (" ,0.5,0.25", 4, "empty topic id"),
    ("t3,0.5,NA", 4, "missing cell ('NA') for system 's2', topic 't3'"),
])
def test_wide_table_errors_name_file_and_line(tmp_path, row, line, message, piece):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.3,0.4\n" + row + "\nt4,0.5,0.6\n")
    with pytest.raises(InputError) as e:
        load_scores(p)
    assert (e.value.file, e.value.line) == (str(p), line)
    assert message in str(e.value)


@pytest.mark.parametrize("text,found", [
    ("topic,s1,s2\nt1,0.1,0.2,0.3\nt2,0.3,0.4,0.5\n", "expected 3 fields like the header, found 4"),
    ("topic,s1,s2\nt1,0.1,0.2,0.3,0.4\nt2,0.3,0.4,0.5,0.6\n", "expected 3 fields like the header, found 5"),
    ("s1,s2\n0.1,0.2,0.3\n0.3,0.4,0.5\n", "expected 2 fields like the header, found 3"),
])
def test_wide_table_rows_all_longer_than_the_header_are_an_error(tmp_path, text, found, piece):
    # pandas takes the extra first fields as an index (or drops the last ones with a warning):
    # the matrix came out shifted, or 'need at least 2 topics' for one row; now the row's error
    p = tmp_path / "w.csv"
    p.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError) as e:
            load_scores(p)
    assert (e.value.file, e.value.line) == (str(p), 2)
    assert found in str(e.value)


def test_wide_table_with_missing_cells_follows_the_policy(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("\ntopic,s1,s2\nt1,0.1,0.2\n,,\nt2,,0.4\nt3,0.5,0.6\n")     # blank lines, empty cell
    m = load_scores(p, missing="zero")
    assert m.topics == ("t1", "t2", "t3")
    np.testing.assert_array_equal(m.values, [[0.1, 0.0, 0.5], [0.2, 0.4, 0.6]])


def test_wide_table_memory_is_a_few_matrices(tmp_path, traced_peak):
    # 2,000 topics x 500 systems (an 8 MB matrix, a 9 MB file): read row by row into Python
    # floats this took 91 MB of traced allocations; through pandas 34 MB
    rng = np.random.default_rng(1)
    vals = np.round(rng.random((2000, 500)), 6)
    p = tmp_path / "w.csv"
    with open(p, "w") as fh:
        fh.write("topic," + ",".join(f"s{j}" for j in range(500)) + "\n")
        for i, row in enumerate(vals):
            fh.write(f"q{i}," + ",".join(map(repr, row.tolist())) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, peak = traced_peak(lambda: load_scores(p))
    np.testing.assert_array_equal(m.values, vals.T)
    assert peak < 5 * m.values.nbytes, f"{peak / 1e6:.0f} MB traced for an {m.values.nbytes / 1e6:.0f} MB matrix"
