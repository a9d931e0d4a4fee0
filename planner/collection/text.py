"""Shared input handling of the readers: bytes of a path or text (compression detected),
UTF-8 decoding, ASCII numbers, CSV rows and cells."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import InputError, ParameterError


def is_text(obj: object) -> bool:
    """Whether ``obj`` is a text (a str holding a line break) rather than a path."""
    return isinstance(obj, str) and ("\n" in obj or "\r" in obj)


def read_bytes(path_or_text, *, what: str) -> tuple[bytes, str | None]:
    """(content bytes, source name) of a path (gzip/bz2/xz detected) or a text."""
    if isinstance(path_or_text, bytes):
        data, source = path_or_text, None
    elif is_text(path_or_text):
        return path_or_text.encode("utf-8"), None
    elif isinstance(path_or_text, (str, os.PathLike)):
        source = str(Path(path_or_text))
        data = _file_bytes(Path(path_or_text), what)
    else:
        raise ParameterError(f"expected a path or text, got {type(path_or_text).__name__}",
                             parameter=what)
    return _decompress(data, source), source


def _file_bytes(p: Path, what: str) -> bytes:
    source = str(p)
    if not p.exists():
        raise InputError(f"no such {what} file", file=source)
    if p.is_dir():
        raise InputError(f"is a folder, expected a {what} file", file=source)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=source) from None


def _decompress(data: bytes, source: str | None) -> bytes:
    """``data`` uncompressed when its magic bytes say gzip, bzip2 or xz."""
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip data ({exc})", file=source) from None
    if data[:3] == b"BZh":
        try:
            return bz2.decompress(data)
        except (OSError, ValueError) as exc:
            raise InputError(f"corrupt bzip2 data ({exc})", file=source) from None
    if data[:6] == b"\xfd7zXZ\x00":
        try:
            return lzma.decompress(data)
        except lzma.LZMAError as exc:
            raise InputError(f"corrupt xz data ({exc})", file=source) from None
    return data


_BOM = b"\xef\xbb\xbf"


def decode(data: bytes, source: str | None) -> str:
    """UTF-8 text of ``data`` without a leading byte-order mark."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")     # a UTF-16 byte-order mark (Excel, PowerShell)
        raise InputError("not UTF-8 text" + (" (it starts like UTF-16: save it as UTF-8)" if utf16 else ""),
                         file=source, line=line) from None


def parse_float(text: str) -> float:
    """``float(text)`` for plain ASCII numbers only.

    Python's ``float`` also reads ``1_0`` (as 10) and non-ASCII digits; in a score
    file those are typos or mis-encodings, so they raise ``ValueError`` here."""
    if "_" in text or not text.isascii():
        raise ValueError(text)
    return float(text)


def parse_int(text: str) -> int:
    """``int(text)`` for plain ASCII integers only (``int('1_0')`` is 10)."""
    if "_" in text or not text.isascii():
        raise ValueError(text)
    return int(text)


def few(items: Iterable[object], k: int = 5) -> str:
    """``'a', 'b', 'c', ...``: the first ``k`` items, quoted."""
    shown = list(items)
    return ", ".join(repr(x) for x in shown[:k]) + (", ..." if len(shown) > k else "")


#: how to choose a missing-cell policy, in every interface (ends the missing-cell errors)
MISSING_HINT = ("choose a missing-cell policy: --missing zero, drop-topic, drop-system or keep; "
                "missing= in Python, collection.missing in a study")

#: cells of a score table that are missing cells
NA_CELLS = {"", "NA", "NaN", "nan", "na", "N/A"}


def csv_rows(text: str, delim: str, source: str | None) -> Iterator[tuple[int, list[str]]]:
    """(line number, row) pairs of a CSV text, blank lines skipped.

    Line ends may be ``\n``, ``\r\n`` or a lone ``\r`` (universal newlines); a
    malformed record (a field over the csv module's size limit, a stray quote)
    is an InputError naming its line."""
    reader = csv.reader(io.StringIO(text, newline=None), delimiter=delim)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"malformed CSV record ({exc})", file=source, line=reader.line_num) from None
        if not row or all(not c.strip() for c in row):
            continue
        yield reader.line_num, row


def cell_number(cell: str, source: str | None, line: int, what: str) -> float:
    """The number in a table cell (``NaN`` for an NA cell); InputError naming the line otherwise."""
    c = cell.strip()
    if c in NA_CELLS:
        return math.nan
    try:
        v = parse_float(c)
    except ValueError:
        raise InputError(f"non-numeric value {cell!r} {what}", file=source, line=line) from None
    if math.isinf(v):
        raise InputError(f"infinite value {cell!r} {what}", file=source, line=line)
    return v


def delimiter(text: str) -> str:
    """Tab when the first non-blank line holds tabs and no comma, else comma."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "\t" if "\t" in first and "," not in first else ","

