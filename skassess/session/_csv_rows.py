"""How many cells each row of a CSV has, before pandas reads it.

pandas silently drops the cells of columns it is not asked for and pads short
rows with empty cells, so :class:`ScoresFile` counts every row's cells first:
by counting delimiters with numpy in blocks without quotes (about 1 s a GB) and
with Python's csv module, which follows quotes as pandas does, in blocks with
them. Blocks end after a line break outside quotes, so a quoted cell with a
line break is never cut. Bytes that are not UTF-8 are found here too.
"""

import csv
import io

import numpy as np

from ..utils._locations import as_location, open_binary

__all__ = ["not_utf8_message", "record_blocks", "row_lines"]


def row_lines(path, sep, width, chunk_rows, *, fail, not_utf8):
    """For each chunk of ``chunk_rows`` data rows, their line numbers (then empty arrays).

    A row whose cell count is not ``width`` is refused (``fail``) with its row
    and line before any chunk that holds it is yielded.
    """
    buffered, seen = [np.zeros(0, dtype=np.int64)], 0
    for lines, widths in record_blocks(path, sep, fail=fail, not_utf8=not_utf8):
        bad = np.flatnonzero(widths != width)
        if len(bad):
            i = int(bad[0])
            what = "more" if widths[i] > width else "fewer"
            fail(
                f"row {seen + i + 1} (line {lines[i]}) has {widths[i]} cells, {what} than "
                f"the header's {width} columns; every row needs one cell per column."
            )
        seen += len(lines)
        buffered.append(lines)
        ready = np.concatenate(buffered)
        while len(ready) >= chunk_rows:
            yield ready[:chunk_rows]
            ready = ready[chunk_rows:]
        buffered = [ready]
    yield np.concatenate(buffered)
    while True:  # past the end: no more rows
        yield np.zeros(0, dtype=np.int64)


def not_utf8_message(path):
    """Which line of the file is not UTF-8 (a scan of its bytes), as a message."""
    with open_binary(as_location(path), decompress=True) as f:
        for number, line in enumerate(f, start=1):
            try:
                line.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                return (
                    f"line {number} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} "
                    f"at character {exc.start + 1}); save the file as UTF-8."
                )
    return "the file is not UTF-8 text; save it as UTF-8."  # pragma: no cover


def record_blocks(path, sep, *, fail, not_utf8, block_bytes=1 << 24):
    """``(line numbers, cell counts)`` of a CSV's data rows, a block of whole records at a time.

    ``fail(message)`` and ``not_utf8()`` raise the caller's error.
    """
    sep_bytes = sep.encode("utf-8")
    with open_binary(as_location(path), decompress=True) as f:
        header = f.readline()
        while header.count(b'"') % 2:  # a quoted header cell with a line break
            more = f.readline()
            if not more:
                break
            header += more
        line = header.count(b"\n") + 1  # the number of the next line
        tail = b""
        while True:
            block = f.read(block_bytes)
            data = tail + block
            if not data:
                return
            if block:
                cut = _record_end(data)
                if cut == 0:  # no whole record yet
                    tail = data
                    continue
            else:  # the end of the file
                cut = len(data)
                if not data.endswith(b"\n"):
                    data += b"\n"
                    cut += 1
            part, tail = data[:cut], data[cut:]
            try:
                text = part.decode("utf-8")
            except UnicodeDecodeError:
                not_utf8()
            if b'"' in part:
                yield _quoted_widths(text, line, sep, fail)
            else:
                yield _plain_widths(part, sep_bytes, line)
            line += part.count(b"\n")


def _quoted_widths(text, first_line, sep, fail):
    """Cells per record of a block with quotes (Python's csv module, as pandas reads them)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, skipinitialspace=True)
    lines, widths = [], []
    try:
        for cells in reader:
            if cells:  # a blank line, which pandas skips too
                lines.append(first_line - 1 + reader.line_num)
                widths.append(len(cells))
    except csv.Error as exc:
        fail(f"line {first_line - 1 + reader.line_num}: the CSV cannot be parsed ({exc}).")
    return np.asarray(lines, dtype=np.int64), np.asarray(widths, dtype=np.int64)


def _record_end(data):
    """The end of the last whole record in ``data``: after a line break outside quotes."""
    cut = data.rfind(b"\n") + 1
    if cut == 0 or b'"' not in data[:cut]:
        return cut
    arr = np.frombuffer(data, dtype=np.uint8, count=cut)
    breaks = np.flatnonzero(arr == 10)
    quotes = np.cumsum(arr == 34)
    outside = breaks[quotes[breaks] % 2 == 0]
    return int(outside[-1]) + 1 if len(outside) else 0


def _plain_widths(part, sep, first_line):
    """Cells per line of a block without quotes (blank lines left out), by counting."""
    arr = np.frombuffer(part, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10)
    starts = np.concatenate([[0], ends[:-1] + 1])
    if len(sep) == 1:
        marks = np.flatnonzero(arr == sep[0])
        cells = np.searchsorted(marks, ends) - np.searchsorted(marks, starts) + 1
    else:  # pragma: no cover - a delimiter of several bytes (a non-ASCII character)
        cells = np.array([part[a:b].count(sep) + 1 for a, b in zip(starts, ends, strict=True)])
    length = ends - starts
    blank = (length == 0) | ((length == 1) & (arr[np.minimum(starts, len(arr) - 1)] == 13))
    lines = first_line + np.arange(len(ends))
    return lines[~blank].astype(np.int64), cells[~blank].astype(np.int64)
