"""Reports: a study's results as a folder of Markdown, HTML, JSON, CSV tables and figures.

One module a step:

- :mod:`~planner.report.writer`: the report folder (checked before the study runs, built
  under a temporary name and renamed into place; ``results.json``, ``provenance.json``,
  :func:`versions`);
- :mod:`~planner.report.cleanup`: SIGTERM/SIGHUP while writing (no temporary folder left);
- :mod:`~planner.report.sections`: one function a report section, in order;
- :mod:`~planner.report.render`: the document model and its Markdown and HTML rendering;
- :mod:`~planner.report.figure_set`: which figures a report draws, and their PNG/SVG files;
- :mod:`~planner.report.figures`: the plots (each takes ``ax=None`` and returns the Figure).

matplotlib is imported only when a figure is drawn, so importing this package stays light.

Examples
--------
>>> import tempfile, pathlib
>>> from planner.report import write_report
>>> out = write_report({"study": "demo", "answer": {"text": "Choose 50 topics."}},
...                    pathlib.Path(tempfile.mkdtemp()) / "demo")
>>> (out / "report.md").read_text().splitlines()[0]
'# Study: demo'
"""

from __future__ import annotations

from . import figures
from .figure_set import FIGURES
from .writer import MAX_NAME_BYTES, check_target, dump_json, jsonable, versions, write_report

__all__ = ["FIGURES", "MAX_NAME_BYTES", "check_target", "dump_json", "figures", "jsonable", "versions",
           "write_report"]
