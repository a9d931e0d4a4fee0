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
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import InputError, ParameterError
from .notes import first_of


def is_text(obj: object) -> bool:
    """Whether ``obj`` is a text (a str holding a line break) rather than a path."""
    return isinstance(obj, str) and ("\n" in obj or "\r" in obj)


#: largest input accepted, counted after decompression (a 3 KB ``.bz2`` can expand to
#: gigabytes); the environment variable ``PLANNER_MAX_INPUT_MB`` raises it
MAX_INPUT_BYTES = 256 << 20
#: largest content a compressed input may expand to: 64 MB. A file of under 10 MB can hold 256 MB
#: of valid scores (20,000 systems x 1,780 topics in a 1.9 MB ``.gz``), whose reading took over
#: 5 minutes and 1.3 GB; 64 MB keeps every reader within about 10 s and 0.6 GB. The runs of a
#: TREC track decompress to 2-15 MB each. ``PLANNER_MAX_INPUT_MB`` raises it with the other limit
MAX_DECOMPRESSED_BYTES = 64 << 20
#: longest line accepted in an input file (a score table of 10,000 systems needs ~100 KB)
MAX_LINE_BYTES = 1 << 20
_CHUNK = 1 << 20


def max_input_bytes(compressed: bool = False) -> int:
    """:data:`MAX_INPUT_BYTES` (:data:`MAX_DECOMPRESSED_BYTES` for a ``compressed`` input), or
    ``PLANNER_MAX_INPUT_MB`` megabytes for either when that is set."""
    env = os.environ.get("PLANNER_MAX_INPUT_MB", "").strip()
    try:
        return int(float(env) * (1 << 20)) if env else MAX_DECOMPRESSED_BYTES if compressed else MAX_INPUT_BYTES
    except ValueError:
        raise ParameterError(f"expected a number of megabytes, got {env!r}",
                             parameter="PLANNER_MAX_INPUT_MB") from None


def read_bytes(path_or_text, *, what: str) -> tuple[bytes, str | None]:
    """(content bytes, source name) of a path (gzip/bz2/xz detected) or a text.

    The content is read in chunks and refused, naming the file, once it passes
    :data:`MAX_INPUT_BYTES` (:data:`MAX_DECOMPRESSED_BYTES` decompressed) or holds a line longer
    than :data:`MAX_LINE_BYTES`;
    special files (FIFO, device, socket) are refused before they are opened; a control
    character (NUL and the other C0 codes but tab and line ends) is an error naming its line.
    """
    if isinstance(path_or_text, bytes):
        data, source = _bounded(io.BytesIO(path_or_text), None), None
    elif is_text(path_or_text):
        data, source = path_or_text.encode("utf-8"), None
    elif isinstance(path_or_text, (str, os.PathLike)):
        source = str(Path(path_or_text))
        data = _file_bytes(Path(path_or_text), what)
    else:
        raise ParameterError(f"expected a path or text, got {type(path_or_text).__name__}",
                             parameter=what)
    check_control(data, source)
    return data, source


def regular_file(p: Path, what: str) -> None:
    """Refuse, before opening it, a path that is missing, a folder or not a regular file
    (a FIFO would block the reader forever, ``/dev/zero`` never ends)."""
    source = str(p)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise InputError(f"no such {what} file", file=source) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=source) from None
    if stat.S_ISDIR(mode):
        raise InputError(f"is a folder, expected a {what} file", file=source)
    if not stat.S_ISREG(mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode)
                or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")
        raise InputError(f"is {kind}, expected a regular {what} file", file=source)


def _file_bytes(p: Path, what: str) -> bytes:
    regular_file(p, what)
    try:
        with open(p, "rb") as fh:
            return _bounded(fh, str(p))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(p)) from None


def _opener(head: bytes):
    """The streaming decompressor for these magic bytes (gzip, bzip2, xz), or None."""
    if head[:2] == b"\x1f\x8b":
        return (lambda f: gzip.GzipFile(fileobj=f, mode="rb")), "gzip", (OSError, EOFError, zlib.error)
    if head[:3] == b"BZh":
        return bz2.BZ2File, "bzip2", (OSError, EOFError, ValueError)
    if head[:6] == b"\xfd7zXZ\x00":
        return lzma.LZMAFile, "xz", (lzma.LZMAError, EOFError)
    return None


def _bounded(raw, source: str | None) -> bytes:
    """The bytes of the binary stream ``raw``, decompressed when its magic bytes say so,
    read in chunks and refused past :func:`max_input_bytes` or :data:`MAX_LINE_BYTES`."""
    head = raw.peek(8)[:8] if hasattr(raw, "peek") else raw.read(8)
    if not hasattr(raw, "peek"):
        raw.seek(0)
    kind = _opener(head)
    if kind is None:
        return _read_limited(raw, source)
    cls, name, errors = kind
    try:
        with cls(raw) as stream:
            return _read_limited(stream, source, max_input_bytes(compressed=True))
    except InputError:
        raise
    except errors as exc:
        raise InputError(f"corrupt {name} data ({exc})", file=source) from None


def is_blank_file(p: Path) -> bool:
    """Whether the regular file ``p`` holds nothing but white space, after decompression (gzip,
    bzip2, xz). Reads only until the first other byte; a file that cannot be read or
    decompressed, or is larger than the input limit, is not blank (its reader says why)."""
    seen = 0
    try:
        with open(p, "rb") as raw:
            kind = _opener(raw.peek(8)[:8])
            limit = max_input_bytes(compressed=kind is not None)
            stream = raw if kind is None else kind[0](raw)
            while chunk := stream.read(1 << 16):
                seen += len(chunk)
                if chunk.strip() or seen > limit:
                    return False
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error):
        return False
    return True


def _read_limited(stream, source: str | None, limit: int | None = None) -> bytes:
    limit = max_input_bytes() if limit is None else limit
    out = io.BytesIO()     # grows in place; getvalue() hands over its buffer without a copy
    total = 0
    run = 0        # bytes of the current line read so far
    while chunk := stream.read(_CHUNK):
        total += len(chunk)
        if total > limit:
            raise InputError(f"larger than the input limit of {limit >> 20} MB (after decompression; "
                             "set PLANNER_MAX_INPUT_MB to raise it)", file=source)
        run = _line_run(chunk, run)
        if run > MAX_LINE_BYTES:
            line = out.getvalue().count(b"\n") + 1
            raise InputError(f"a line longer than the limit of {MAX_LINE_BYTES >> 20} MB (not a text "
                             "input of this kind)", file=source, line=line)
        out.write(chunk)
    return out.getvalue()


def _line_run(chunk: bytes, run: int) -> int:
    """The length of the line still open after ``chunk`` (``run`` bytes of it came before),
    or a length over :data:`MAX_LINE_BYTES` when a line within the chunk is that long."""
    breaks = [i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0]
    if not breaks:
        return run + len(chunk)
    first, last = min(breaks), max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
    if run + first > MAX_LINE_BYTES:
        return run + first
    middle = chunk[first + 1:last]
    if len(middle) > MAX_LINE_BYTES:
        longest = max(map(len, middle.splitlines()), default=0)
        if longest > MAX_LINE_BYTES:
            return longest
    return len(chunk) - last - 1


#: control characters that no input text may hold: C0 but tab, line feed and carriage return;
#: DEL; C1 (U+0080-U+009F, two bytes in UTF-8). The same set as :data:`planner._checks.CONTROL`
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]")
_NOT_C0 = bytes(b for b in range(256) if not ((b < 32 and b not in (9, 10, 13)) or b == 127))


def check_control(data: bytes, source: str | None) -> None:
    """A NUL or other control character in an input (a document id ``d1\\0junk`` would be
    cut to ``d1`` by the scorer) is an InputError naming its line and the character."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError("not UTF-8 text (it starts like UTF-16: save it as UTF-8)", file=source, line=1)
    # bytes.translate deleting every other byte runs at memory speed (the regex, ~40x slower,
    # only runs to find the line once a control byte or a C1 lead byte is there)
    m = None
    if data.translate(None, _NOT_C0) or b"\xc2" in data:
        m = _CONTROL.search(data)
    if m is not None:
        line = data.count(b"\n", 0, m.start()) + 1
        raise InputError(f"control character {m.group().decode('utf-8')!r} in the text (ids and names must be "
                         "printable)", file=source, line=line)


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


def head_text(data: bytes, source: str | None) -> str:
    """The text of ``data`` up to the end of its first non-blank line (BOM dropped), for
    sniffing a format without decoding the whole input."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    end = len(data)
    while start < len(data):
        stop = start + MAX_LINE_BYTES + 1
        ends = [i for i in (data.find(b"\n", start, stop), data.find(b"\r", start, stop)) if i >= 0]
        end = min(ends, default=len(data))
        if data[start:end].strip():
            break
        start = end + 1
    return decode(data[:end + 1], source).lstrip("\ufeff")


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
    """``'a', 'b', 'c' and 2 more``: the first ``k`` items, quoted (:func:`~planner.collection.notes.first_of`)."""
    return first_of([repr(x) for x in items], k)


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

