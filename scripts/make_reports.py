"""Regenerate the shipped example reports in reports/ from the studies in configs/.

Each ``configs/NAME.yaml`` is run as a user would run it,
``planner study configs/NAME.yaml -o reports/NAME --force``, from the repository root
(the studies read ``../shared/data`` relative to their own folder).

    python scripts/make_reports.py [NAME ...]           # rewrite reports/NAME
    python scripts/make_reports.py --check [NAME ...]   # regenerate into a temporary folder
                                                        # and compare with reports/NAME

``--check`` compares ``results.json`` and ``tables/*.csv`` number by number (relative
tolerance 1e-9: the last bits of a float sum differ between BLAS builds) and
``report.md`` line by line (but for when and how fast it ran); ``provenance.json`` (versions, times) is not compared. It
prints one line per report and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
REPORTS = ROOT / "reports"
RTOL = 1e-9
#: report.md lines that change from run to run (when and how fast the study ran)
VOLATILE = re.compile(r"^- finished |^This study ran in ")


def names() -> list[str]:
    """The shipped studies, by file name."""
    return sorted(p.stem for p in CONFIGS.glob("*.yaml"))


def generate(name: str, out: Path) -> None:
    """Run ``configs/NAME.yaml`` into ``out`` through the command line."""
    # inside the repository, the folder as a user types it from its root (report.md records the command)
    where = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    cmd = [sys.executable, "-m", "planner", "study", f"configs/{name}.yaml", "-o", str(where), "--force", "--quiet"]
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd[1:])} failed: {done.stderr.strip()}")


def _same_value(a: object, b: object, path: str, diffs: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                diffs.append(f"{path}.{k}: only in one")
            else:
                _same_value(a[k], b[k], f"{path}.{k}", diffs)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: {len(a)} against {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)):
            _same_value(x, y, f"{path}[{i}]", diffs)
    elif isinstance(a, float) and isinstance(b, float):
        if not math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-15):
            diffs.append(f"{path}: {a!r} against {b!r}")
    elif a != b:
        diffs.append(f"{path}: {a!r} against {b!r}")


def _number(cell: str) -> object:
    try:
        return float(cell)
    except ValueError:
        return cell


def _csv(path: Path) -> list[list[object]]:
    with path.open(newline="") as f:
        return [[_number(c) for c in row] for row in csv.reader(f)]


#: an absolute path into the shared data folder, which lies elsewhere on every machine
SHARED = re.compile(r"(?<![\w.])(?:/[^\s\"'`/]+)+/shared/data/")


def _text(path: Path, out: Path | None = None, name: str = "") -> str:
    """A file's text with the folder it was written to spelt as ``reports/NAME`` and absolute
    paths into the shared data folder as ``<shared>/data/``."""
    text = path.read_text()
    if out is not None:
        text = text.replace(str(out), f"reports/{name}")
    return SHARED.sub("<shared>/data/", text)


def compare(new: Path, old: Path, name: str) -> list[str]:
    """What differs between a report regenerated into ``new`` and ``old`` (empty when they agree)."""
    diffs: list[str] = []
    if not (old / "results.json").is_file():
        return [f"{old} has no results.json"]
    _same_value(json.loads(_text(new / "results.json", new, name)), json.loads(_text(old / "results.json")),
                "results.json", diffs)
    tables = sorted(p.name for p in (new / "tables").glob("*.csv"))
    if tables != sorted(p.name for p in (old / "tables").glob("*.csv")):
        diffs.append("tables/: different files")
    for t in tables:
        if (old / "tables" / t).is_file():
            _same_value(_csv(new / "tables" / t), _csv(old / "tables" / t), f"tables/{t}", diffs)
    new_md = [s for s in _text(new / "report.md", new, name).splitlines() if not VOLATILE.match(s)]
    old_md = [s for s in _text(old / "report.md").splitlines() if not VOLATILE.match(s)]
    diffs += [f"report.md line {i + 1}: {a!r} against {b!r}" for i, (a, b) in enumerate(zip(new_md, old_md)) if a != b]
    if len(new_md) != len(old_md):
        diffs.append(f"report.md: {len(new_md)} against {len(old_md)} lines")
    return diffs


def check(name: str) -> list[str]:
    """Regenerate ``name`` into a temporary folder and compare it with ``reports/NAME``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / name
        generate(name, out)
        return compare(out, REPORTS / name, name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="studies to process (default: every configs/*.yaml)")
    ap.add_argument("--check", action="store_true", help="compare instead of rewriting")
    args = ap.parse_args(argv)
    chosen = args.names or names()
    failed = 0
    for name in chosen:
        if args.check:
            diffs = check(name)
            failed += bool(diffs)
            print(f"{name}: {'current' if not diffs else f'{len(diffs)} differences, first: {diffs[0]}'}")
        else:
            generate(name, REPORTS / name)
            print(f"{name}: written to reports/{name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
