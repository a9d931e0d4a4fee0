"""Peak memory and time of planner commands on inputs near their limits (issue 23).

Writes seeded synthetic inputs (wide CSVs of ``S`` systems x ``T`` topics, run folders,
qrels, study files) into a scratch folder, runs each command line as a subprocess and
polls its whole process tree with psutil every ``--poll`` seconds: the peak of the summed
resident memory (RSS; pages a forked worker shares with its parent are counted twice) and
of the summed proportional set size (PSS; shared pages split between the processes),
the wall time and the CPU time of the tree. ``/usr/bin/time -v`` gives the parent's
peak only, which misses ``--jobs`` workers.

Usage::

    python benchmarks/bench_limits.py --case validate-jobs    # validate/study near the pair limit, jobs 1 vs 2
    python benchmarks/bench_limits.py --case edges            # every command just under and over its limits
    python benchmarks/bench_limits.py --case edges --only fit,size
    python benchmarks/bench_limits.py --case work             # predict at its work and memory limits
    python benchmarks/bench_limits.py --case commands         # validate, size, budget, pool at extremes

Figures: docs/research/known-limits.md ("Inputs at the limits").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import psutil


@dataclass
class Measure:
    """One command line's run: exit code, wall and CPU seconds, peak summed RSS and PSS (MB)."""
    label: str
    rc: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    peak_pss_mb: float
    max_procs: int
    last_line: str


def _tree(p: psutil.Process) -> list[psutil.Process]:
    try:
        return [p, *p.children(recursive=True)]
    except psutil.Error:
        return [p]


def _sample(procs: list[psutil.Process], pss: bool) -> tuple[float, float, float]:
    """Summed RSS, PSS (0 unless ``pss``) and CPU seconds of ``procs``."""
    rss = pss_sum = cpu = 0.0
    for q in procs:
        try:
            if pss:
                mi = q.memory_full_info()
                rss += mi.rss
                pss_sum += mi.pss
            else:
                rss += q.memory_info().rss
            t = q.cpu_times()
            cpu += t.user + t.system
        except psutil.Error:
            pass
    return rss, pss_sum, cpu


def measure(label: str, argv: list[str], *, poll: float = 0.05, timeout: float = 3600.0,
            pss: bool = True, env: dict | None = None) -> Measure:
    """Run ``argv``; peak summed RSS/PSS of its process tree, polled every ``poll`` s."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    root = psutil.Process(proc.pid)
    peak_rss = peak_pss = 0.0
    cpu_seen: dict[int, float] = {}
    nmax = 1
    while proc.poll() is None:
        procs = _tree(root)
        nmax = max(nmax, len(procs))
        rss, ps, _ = _sample(procs, pss)
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, ps)
        for q in procs:
            try:
                t = q.cpu_times()
                cpu_seen[q.pid] = t.user + t.system
            except psutil.Error:
                pass
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            break
        time.sleep(poll)
    err = proc.stderr.read() if proc.stderr else ""
    proc.wait()
    wall = time.perf_counter() - t0
    cpu = sum(cpu_seen.values())       # each process's last CPU time seen while it ran
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    return Measure(label, proc.returncode, round(wall, 2), round(cpu, 2), round(peak_rss / 2**20),
                   round(peak_pss / 2**20), nmax, lines[-1][:200] if lines else "")


def wide_csv(path: Path, S: int, T: int, seed: int = 1) -> Path:
    """A seeded wide CSV: one row a topic, one column a system, scores in [0, 1] to 4 decimals."""
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(0.3, 0.15, (S, T)) + rng.normal(0, 0.05, (S, 1)), 0, 1).round(4)
    with open(path, "w") as f:
        f.write("topic," + ",".join(f"s{i}" for i in range(S)) + "\n")
        for j in range(T):
            f.write(f"t{j}," + ",".join(f"{v:.4f}" for v in x[:, j]) + "\n")
    return path


def missing_csv(path: Path, S: int, T: int, share: float = 0.05, seed: int = 1) -> Path:
    """:func:`wide_csv` with a seeded ``share`` of its cells left empty (missing)."""
    wide_csv(path, S, T, seed)
    rng = np.random.default_rng(seed + 1)
    lines = path.read_text().splitlines()
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        out.append(",".join([cells[0]] + ["" if rng.random() < share else c for c in cells[1:]]))
    path.write_text("\n".join(out) + "\n")
    return path


def _planner() -> list[str]:
    return [sys.executable, "-m", "planner"]


_VALIDATE = """
import sys, planner
planner.validate(sys.argv[1], pilot=10, topics=[5, 10], repeats=2, subsets=20, methods="analytic",
                 rng=1, jobs=int(sys.argv[2]), prediction_resamples=int(sys.argv[3]))
"""

_STUDY = """
import sys, planner
doc = {"collection": {"scores": sys.argv[1]}, "method": ["analytic", "predictive"], "topics": [10, 20],
       "resamples": 20}
planner.run_study(doc, jobs=int(sys.argv[2]), quiet=True, write=False)
"""


def validate_jobs(work: Path, sizes: list[int], poll: float, band_resamples: int) -> list[Measure]:
    """validate (2 repeats, the analytic method and its prediction band from ``band_resamples``
    resamples: the band's memory does not grow with them, its time does) and a two-scenario
    study with --jobs 1 and 2 on ``S`` systems x 30 topics, for each ``S`` in ``sizes``."""
    out = []
    for S in sizes:
        f = wide_csv(work / f"s{S}.csv", S, 30)
        print(f"# {f.name}: {f.stat().st_size / 1e6:.2f} MB", flush=True)
        for what, code in (("validate", _VALIDATE), ("study", _STUDY)):
            for jobs in (1, 2):
                argv = [sys.executable, "-c", code, str(f), str(jobs), str(band_resamples)]
                out.append(measure(f"{what} S={S} --jobs {jobs}", argv, poll=poll))
                print(json.dumps(asdict(out[-1])), flush=True)
    return out


def _edge_inputs(work: Path) -> dict[str, str]:
    """The seeded inputs of :func:`edges`, written once into ``work``."""
    f: dict[str, str] = {}
    for S in (2219, 2220, 10031, 10032):
        p = work / f"w{S}.csv"
        if not p.exists():
            wide_csv(p, S, 30)
        f[f"w{S}"] = str(p)
    for name, mb in (("wide255", 255), ("wide257", 257), ("wide63", 63.9), ("wide65", 64.1)):
        p = work / f"{name}.csv.gz"
        if not p.exists():
            big_wide_gz(p, mb)
        f[name] = str(p)
    for name, mb in (("runs255", 255), ("runs257", 257), ("runs63", 63.9), ("runs65", 64.5)):
        (work / name).mkdir(exist_ok=True)
        p = work / name / "r.run.gz"
        if not p.exists():
            big_run_gz(p, mb)
        f[name] = str(work / name)
    (work / "q.txt").write_text("0 0 d" + "x" * 400 + "0 1\n")
    f["qrels"] = str(work / "q.txt")
    grid = {"collection": {"dataset": "dl19-passage"}, "method": "analytic", "topics": [10, 20],
            "min_diff": [round(0.001 * (i + 1), 3) for i in range(201)]}
    (work / "grid201.yaml").write_text(json.dumps(grid))
    f["grid201"] = str(work / "grid201.yaml")
    return f


def edges(work: Path, poll: float, only: set[str], timeout: float) -> list[Measure]:
    """Each command just under and just over its limits (the pair limit: 2,219 systems; fit's
    pair summary: 10,031; an input of 255 and 257 MB decompressed; a compressed one of 63.9 and
    64.1 MB; 201 scenarios). ``only``: commands or ``"command side"`` labels."""
    f = _edge_inputs(work)
    P = [sys.executable, "-m", "planner"]
    q = ["--quiet"]
    cases = [
        ("predict", "over", [*P, "predict", f["w2220"], "--topics", "10", *q]),
        ("predict", "under", [*P, "predict", f["w2219"], "--topics", "10", "--prediction", "0", *q]),
        ("size", "over", [*P, "size", "--scores", f["w2220"], "--target", "swap_rate:0.05", *q]),
        ("size", "under", [*P, "size", "--scores", f["w2219"], "--target", "swap_rate:0.05", "--resamples", "0", *q]),
        ("validate", "over", [*P, "validate", f["w2220"], "--pilot", "10", "--topics", "5", *q]),
        ("select", "over", [*P, "select", f["w2220"], *q]),
        ("fit", "over", [*P, "fit", f["w10032"], *q]),
        ("fit", "under", [*P, "fit", f["w10031"], *q]),
        ("scores", "over", [*P, "scores", f["wide257"], "-o", str(work / "o.csv"), *q]),
        ("fit", "over-input", [*P, "fit", f["wide257"], *q]),
        ("pool", "over", [*P, "pool", "--runs", f["runs257"], "--qrels", f["qrels"], *q]),
        ("pool", "under", [*P, "pool", "--runs", f["runs255"], "--qrels", f["qrels"], *q]),
        ("budget", "over", [*P, "budget", "--runs", f["runs257"], "--qrels", f["qrels"], *q]),
        ("scores", "over-runs", [*P, "scores", "--runs", f["runs257"], "--qrels", f["qrels"], "--measure", "P@10",
                                 *q]),
        ("seeds", "over", [*P, "seeds", "--runs", f["runs257"], "--qrels", f["qrels"], "--min-diff", "0.05", *q]),
        ("study", "over", [*P, "study", f["grid201"], "-o", str(work / "rep"), *q]),
        ("scores", "under", [*P, "scores", f["wide255"], "-o", str(work / "o.csv"), *q]),
        ("fit", "under-input", [*P, "fit", f["wide255"], *q]),
        # the compressed-input limit (MAX_DECOMPRESSED_BYTES, 64 MB)
        ("scores", "over-gz", [*P, "scores", f["wide65"], "-o", str(work / "o.csv"), *q]),
        ("scores", "under-gz", [*P, "scores", f["wide63"], "-o", str(work / "o.csv"), *q]),
        ("fit", "under-gz", [*P, "fit", f["wide63"], *q]),
        ("pool", "over-gz", [*P, "pool", "--runs", f["runs65"], "--qrels", f["qrels"], *q]),
        ("pool", "under-gz", [*P, "pool", "--runs", f["runs63"], "--qrels", f["qrels"], *q]),
        ("budget", "under-gz", [*P, "budget", "--runs", f["runs63"], "--qrels", f["qrels"], *q]),
    ]
    out = []
    for cmd, side, argv in cases:
        if only and cmd not in only and f"{cmd} {side}" not in only:
            continue
        out.append(measure(f"{cmd} {side}", argv, poll=poll, timeout=timeout))
        print(json.dumps(asdict(out[-1])), flush=True)
    return out


def work_cases(work: Path, poll: float, only: set[str], timeout: float) -> list[Measure]:
    """``predict`` just under and over the simulation's limits (planner.simulate.work: MAX_WORK,
    MAX_HELD): huge topic counts, many topic counts, the prediction band at the pair limit."""
    small = wide_csv(work / "w5x20.csv", 5, 20)
    big = work / "w2219.csv"
    if not big.exists():
        wide_csv(big, 2219, 30)
    P = [sys.executable, "-m", "planner", "predict"]
    q = ["--quiet"]
    many = ",".join(str(n) for n in range(2, 20_002))
    cases = [
        ("bootstrap 10^6 topics", "over", [*P, str(small), "--topics", "1000000", "--method", "bootstrap", *q]),
        ("bootstrap 10,058 topics", "under", [*P, str(small), "--topics", "10058", "--method", "bootstrap", *q]),
        ("band 10^7 topics", "over", [*P, str(small), "--topics", "10000000", *q]),
        ("band 10^6 topics", "under", [*P, str(small), "--topics", "1000000", *q]),
        ("analytic 20,000 counts", "over", [*P, str(big), "--topics", many, "--method", "analytic", *q]),
        ("parametric", "over", [*P, str(big), "--topics", "10", "--method", "parametric", *q]),
        ("band", "under", [*P, str(big), "--topics", "10", *q]),
        ("band 3 counts", "under", [*P, str(big), "--topics", "10,20,50", *q]),
        ("bootstrap 3 counts", "under", [*P, str(big), "--topics", "10,20,50", "--method", "bootstrap", *q]),
    ]
    out = []
    for what, side, argv in cases:
        if only and what not in only and side not in only:
            continue
        out.append(measure(f"predict {what} {side}", argv, poll=poll, timeout=timeout))
        print(json.dumps(asdict(out[-1])), flush=True)
    return out


#: the DL 2019 passage runs and qrels (docs/inputs.md), for pool
DL19 = "/work/shared/data/trec-dl2019-passage"


def command_cases(work: Path, poll: float, only: set[str], timeout: float) -> list[Measure]:
    """The commands around the simulation with extreme options (issue 23, after ``--case work``):
    ``validate`` with huge ``--repeats`` / ``--subsets``, ``size --target`` whose search runs far
    (``--resamples 0``, the pair limit, a target never met), ``budget`` with many depths, ``pool``
    with a huge depth. ``only``: labels."""
    small = str(wide_csv(work / "w37x43.csv", 37, 43))
    big = work / "w2219.csv"
    if not big.exists():
        wide_csv(big, 2219, 30)
    mid = str(wide_csv(work / "w300x30.csv", 300, 30))
    P = [sys.executable, "-m", "planner"]
    q = ["--quiet", "--seed", "1"]
    depths = ",".join(str(d) for d in range(1, 1001))
    dl19 = ["--dataset", "dl19-passage"]
    reml = ["--method", "reml", "--missing", "keep", "--reml-engine"]
    gaps = {S: str(missing_csv(work / f"gaps{S}x30.csv", S, 30)) for S in (100, 300, 1000)}
    cases = [
        ("validate --repeats 100000", [*P, "validate", small, "--pilot", "20", "--topics", "5,10", "--repeats",
                                       "100000", *q]),
        ("validate --repeats 2000", [*P, "validate", small, "--pilot", "20", "--topics", "5,10", "--repeats",
                                     "2000", *q]),
        ("validate --subsets 100000", [*P, "validate", small, "--pilot", "20", "--topics", "5,10", "--subsets",
                                       "100000", *q]),
        ("validate 300 systems", [*P, "validate", mid, "--pilot", "10", "--topics", "5,10", *q]),
        ("size --resamples 0 2219", [*P, "size", "--scores", str(big), "--target", "swap_rate:0.05", "--resamples",
                                     "0", "--quiet"]),
        ("size --resamples 0 never met", [*P, "size", "--scores", str(big), "--target", "swap_rate:0.0001",
                                          "--resamples", "0", "--quiet"]),
        ("size bootstrap 2219", [*P, "size", "--scores", str(big), "--target", "swap_rate:0.05", "--method",
                                 "bootstrap", *q]),
        ("size bootstrap 300 never met", [*P, "size", "--scores", mid, "--target", "swap_rate:0.0001", "--method",
                                          "bootstrap", *q]),
        ("size 300 default", [*P, "size", "--scores", mid, "--target", "swap_rate:0.05", *q]),
        ("size ci_width 2219 never met", [*P, "size", "--scores", str(big), "--target", "ci_width:0.001",
                                          "--resamples", "0", "--quiet"]),
        ("size subsample 2219 never met", [*P, "size", "--scores", str(big), "--target", "swap_rate:0.0001",
                                           "--method", "subsample", *q]),
        ("budget 1000 depths", [*P, "budget", *dl19, "--depths", depths, *q]),
        ("pool depth 10^9", [*P, "pool", "--runs", f"{DL19}/runs", "--qrels", f"{DL19}/qrels.txt", "--depth",
                             "1000000000", "--quiet"]),
        ("pool 1000 depths", [*P, "pool", "--runs", f"{DL19}/runs", "--qrels", f"{DL19}/qrels.txt", "--depth",
                              depths, "--quiet"]),
        ("pool 200 depths", [*P, "pool", "--runs", f"{DL19}/runs", "--qrels", f"{DL19}/qrels.txt", "--depth",
                             ",".join(str(d) for d in range(1, 201)), "--quiet"]),
        ("budget --runs 1000 depths", [*P, "budget", "--runs", f"{DL19}/runs", "--qrels", f"{DL19}/qrels.txt",
                                       "--depths", depths, *q]),
        ("budget --runs 20 depths", [*P, "budget", "--runs", f"{DL19}/runs", "--qrels", f"{DL19}/qrels.txt",
                                     "--depths", ",".join(str(d) for d in range(10, 201, 10)), *q]),
        *[(f"fit statsmodels {S}", [*P, "fit", "--scores", gaps[S], *reml, "statsmodels"]) for S in gaps],
        ("fit direct 1000", [*P, "fit", "--scores", gaps[1000], *reml, "direct"]),
    ]
    out = []
    for label, argv in cases:
        if only and label not in only:
            continue
        out.append(measure(label, argv, poll=poll, timeout=timeout))
        print(json.dumps(asdict(out[-1])), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=("validate-jobs", "edges", "work", "commands"), default="validate-jobs")
    ap.add_argument("--systems", default="2219,3200", help="system counts (validate-jobs)")
    ap.add_argument("--band-resamples", type=int, default=4)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds before a run is killed (edges)")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-limits-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.case == "validate-jobs":
        validate_jobs(work, [int(v) for v in args.systems.split(",")], args.poll, args.band_resamples)
    elif args.case == "work":
        work_cases(work, args.poll, {c for c in args.only.split(",") if c}, args.timeout)
    elif args.case == "commands":
        command_cases(work, args.poll, {c for c in args.only.split(",") if c}, args.timeout)
    else:
        edges(work, args.poll, {c for c in args.only.split(",") if c}, args.timeout)



def _gz_until(path: Path, target_mb: float, parts) -> Path:
    """Write the byte strings of ``parts`` into the gzip file ``path`` until the next would take
    it past ``target_mb`` MB decompressed."""
    import gzip

    size = 0
    with gzip.open(path, "wb", compresslevel=6) as f:
        for part in parts:
            if size + len(part) > target_mb * 2**20:
                break
            f.write(part)
            size += len(part)
    return path


def big_wide_gz(path: Path, target_mb: float, S: int = 20_000, seed: int = 1) -> Path:
    """A gzip wide CSV of ``S`` systems and as many topics as make ``target_mb`` MB once
    decompressed; each row repeats one block of 100 seeded scores, so that it compresses to a
    few MB (the largest input a < 10 MB file can hold)."""
    import itertools

    rng = np.random.default_rng(seed)
    blocks = [",".join(f"{v:.4f}" for v in rng.random(100)) for _ in range(7)]
    header = ("topic," + ",".join(f"s{i}" for i in range(S)) + "\n").encode()
    rows = ((f"t{j}," + ",".join([blocks[j % 7]] * (S // 100)) + "\n").encode() for j in itertools.count())
    return _gz_until(path, target_mb, itertools.chain([header], rows))


def big_run_gz(path: Path, target_mb: float, docs: int = 1000) -> Path:
    """A gzip TREC run of ``docs`` documents a topic (ids of 400 characters, so that it
    compresses 50-fold) and as many topics as make ``target_mb`` MB once decompressed."""
    import itertools

    pad = "x" * 400
    topics = ("".join(f"{t} Q0 d{pad}{k} {k + 1} {docs - k} r\n" for k in range(docs)).encode()
              for t in itertools.count())
    return _gz_until(path, target_mb, topics)


if __name__ == "__main__":
    main()
