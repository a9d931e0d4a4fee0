"""Regenerate the embedded example data in planner/datasets/ from ../shared/data.

Uses only planner's own code (planner.collection / planner.measures): scores the
official TREC DL 2019 and 2020 passage runs against the NIST qrels with the five
shipped measures and computes pool statistics at depths 10, 20, 50 and 100.
Never copies the runs themselves.

    python scripts/make_datasets.py [--data ../shared/data] [--check]

``--check`` recomputes everything and fails if the shipped files differ.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner import measures as pm  # noqa: E402
from planner.collection import read_qrels, read_runs  # noqa: E402
from planner.datasets import COLLECTIONS, DATA_DIR, DEPTHS, MEASURES  # noqa: E402


def _csv_bytes(df) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False, float_format="%.17g", lineterminator="\n")
    return buf.getvalue().encode("utf-8")


def _gz(data: bytes) -> bytes:
    # mtime=0: the same input gives the same bytes
    return gzip.compress(data, compresslevel=9, mtime=0)


def build(data_dir: Path) -> dict[str, bytes]:
    import ir_measures
    import pandas as pd

    files: dict[str, bytes] = {}
    index = {}
    for name, folder in COLLECTIONS.items():
        src = data_dir / folder
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = read_runs(src / "runs")
            qrels = read_qrels(src / "qrels.txt")
            mats = pm.score_runs(runs, qrels, list(MEASURES), warn=False)
            pool = pm.pool_stats(runs, qrels, depths=DEPTHS)
        tidy = pd.concat([mats[m].to_frame(tidy=True)[["system", "topic", "measure", "value"]]
                          for m in MEASURES], ignore_index=True)
        files[f"{name}.scores.csv.gz"] = _gz(_csv_bytes(tidy))
        files[f"{name}.pool-topics.csv"] = _csv_bytes(pool.topics)
        files[f"{name}.pool-runs.csv"] = _csv_bytes(pool.runs)
        files[f"{name}.pool-run-topics.csv.gz"] = _gz(_csv_bytes(pool.per_run_topic))
        m0 = mats[MEASURES[0]]
        index[name] = {
            "source": folder,
            "systems": m0.n_systems, "topics": m0.n_topics,
            "measures": list(MEASURES), "depths": list(DEPTHS),
            "qrels_judgments": pool.qrels_judgments,
            "filled_zero_cells": m0.meta["n_filled"],
        }
    index["_generated_by"] = {
        "script": "scripts/make_datasets.py",
        "ir_measures": ir_measures.__version__,
        "rbp_ties": "trec_eval (score descending, then document id descending)",
    }
    files["index.json"] = (json.dumps(index, indent=2, sort_keys=True) + "\n").encode("utf-8")
    return files


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--check", action="store_true", help="verify the shipped files instead of writing")
    args = ap.parse_args(argv)
    files = build(args.data)
    bad = []
    for fname, content in files.items():
        path = DATA_DIR / fname
        if args.check:
            if not path.exists() or path.read_bytes() != content:
                bad.append(fname)
        else:
            path.write_bytes(content)
            print(f"wrote {path.relative_to(ROOT)} ({len(content)} bytes)")
    if bad:
        print("differ from a fresh build: " + ", ".join(bad), file=sys.stderr)
        return 1
    if args.check:
        print("shipped data sets match a fresh build")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
