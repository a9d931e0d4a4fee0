"""Topic metadata: a ``topic`` column, usually ``stratum``, extra columns kept."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .text import csv_rows, decode, read_bytes


def read_topics(path_or_text) -> pd.DataFrame:
    """Topic metadata CSV/TSV: a ``topic`` column, usually ``stratum``, extra columns kept.

    Parameters
    ----------
    path_or_text : str or os.PathLike or bytes
        A path (compression detected) or the text itself. ``topic`` and ``stratum``
        are matched in any case; a repeated topic is an error naming its line.

    Returns
    -------
    pandas.DataFrame
        One row a topic, ``topic`` and ``stratum`` as strings.

    Examples
    --------
    >>> read_topics("topic,stratum,year\\n101,easy,2019\\n102,hard,2019\\n").to_dict("list")
    {'topic': ['101', '102'], 'stratum': ['easy', 'hard'], 'year': ['2019', '2019']}
    """
    data, source = read_bytes(path_or_text, what="topics")
    text = decode(data, source).lstrip("\ufeff")
    try:
        first = next(line for line in text.splitlines() if line.strip())
    except StopIteration:
        raise InputError("empty topic metadata file", file=source) from None
    delim = "\t" if "\t" in first and "," not in first else ","
    rows = csv_rows(text, delim, source)
    hline, header = next(rows)
    header = [h.strip() for h in header]
    low = [h.lower() for h in header]
    if "topic" not in low:
        raise InputError("topic metadata needs a 'topic' column", file=source, line=hline)
    # topic and stratum are matched in any case, other columns as written: a repeat is ambiguous
    keys = [h if h.lower() not in ("topic", "stratum") else h.lower() for h in header]
    for j, k in enumerate(keys):
        if k and k in keys[:j]:
            raise InputError(f"column {header[j]!r} appears twice in the header (also column "
                             f"{keys.index(k) + 1}{': topic and stratum ignore case' if k != header[j] else ''})",
                             file=source, line=hline)
    ti = low.index("topic")
    recs: list[list[str]] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        if len(row) != len(header):
            raise InputError(f"expected {len(header)} fields like the header, found {len(row)}",
                             file=source, line=line)
        t = row[ti].strip()
        if not t:
            raise InputError("empty topic id", file=source, line=line)
        if t in seen:
            raise InputError(f"topic {t!r} repeated (first on line {seen[t]})", file=source, line=line)
        seen[t] = line
        recs.append([c.strip() for c in row])
    cols = [("stratum" if h.lower() == "stratum" else ("topic" if h.lower() == "topic" else h))
            for h in header]
    df = pd.DataFrame(recs, columns=cols)
    if "stratum" in df.columns and (df["stratum"] == "").any():
        i = int(np.flatnonzero((df["stratum"] == "").to_numpy())[0])
        raise InputError(f"topic {df['topic'].iloc[i]!r} has an empty stratum", file=source,
                         line=seen[df["topic"].iloc[i]])
    return df
