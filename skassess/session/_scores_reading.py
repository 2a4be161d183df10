"""Reading a scores file's rows: Parquet row groups, or CSV/TSV text in chunks.

A text file is read in chunks of ``chunk_rows`` rows by pandas' C parser with
the columns' types fixed; a parse error is located by re-reading the records
around it (a row with the wrong number of fields, bytes that are not UTF-8),
so the message names the file's line.
"""

import numpy as np
import pandas as pd

from ..exceptions import ScoresFileError
from ..utils._locations import UrlPath, as_location, open_binary
from ._csv_rows import not_utf8_message, record_blocks, row_lines

PARQUET_SUFFIXES = (".parquet", ".pq")


def is_parquet(path):
    return as_location(path).suffix.lower() in PARQUET_SUFFIXES


def sniff_separator(path):
    with open_binary(as_location(path), decompress=True) as f:
        raw = f.readline()
    try:  # the header line alone: later lines are checked as they are read
        header = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScoresFileError(
            f"{path}: line 1 is not UTF-8 text (byte "
            f"0x{exc.object[exc.start]:02x}); save the file as UTF-8."
        ) from exc
    if not header.strip():
        return ",", header
    counts = {sep: header.count(sep) for sep in (",", ";", "\t", "|")}
    sep = max(counts, key=counts.get)
    return (sep if counts[sep] else ","), header


def pyarrow_parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            'Reading Parquet needs pyarrow: pip install "skassess[parquet]".'
        ) from exc
    return pq


class _TextReading:
    """Reading a scores file's rows: Parquet row groups, or CSV/TSV text in chunks."""

    @property
    def _source(self):
        """What pandas reads: the path, or the URL (pandas reads it through fsspec)."""
        return str(self.path) if isinstance(self.path, UrlPath) else self.path

    # ----------------------------------------------------------------- columns
    def _parquet_columns(self):
        pq = pyarrow_parquet()
        try:
            with open_binary(self.path) as f:
                return list(pq.ParquetFile(f).schema_arrow.names)
        except Exception as exc:  # pyarrow raises its own error types
            raise ScoresFileError(f"{self.path}: not a readable Parquet file ({exc}).") from exc

    # ----------------------------------------------------------------- reading
    def _text_columns(self):
        return [
            c
            for c in dict.fromkeys(
                [self.id_column, self.label_column, *self.group_columns, *self.display_columns]
            )
            if c is not None
        ]

    def _raw_chunks(self, chunk_rows):
        """DataFrames of the used columns (scores as float, the rest as str)."""
        text = self._text_columns()
        usecols = list(dict.fromkeys(text + self.score_columns))
        if self.parquet:
            pq = pyarrow_parquet()
            try:
                # Buffered page reads without pre-buffering: pyarrow otherwise keeps
                # whole column chunks alive and the memory grows with the file.
                with open_binary(self.path) as f:
                    reader = pq.ParquetFile(f, buffer_size=1 << 20, pre_buffer=False)
                    for batch in reader.iter_batches(chunk_rows, columns=usecols):
                        yield batch.to_pandas()
            except Exception as exc:
                raise ScoresFileError(
                    f"{self.path}: cannot read the Parquet file ({exc})."
                ) from exc
            return
        dtype = {c: str for c in text}
        try:
            yield from self._csv_chunks(usecols, dtype, chunk_rows)
        except UnicodeDecodeError:
            self._not_utf8()

    def _csv_chunks(self, usecols, dtype, chunk_rows):
        shape = self._row_shapes(chunk_rows)
        try:
            reader = pd.read_csv(
                self._source,
                sep=self.sep,
                usecols=usecols,
                dtype=dtype,
                chunksize=chunk_rows,
                keep_default_na=False,
                na_values={c: [""] for c in usecols},
                skipinitialspace=True,
                encoding="utf-8-sig",
            )
        except pd.errors.ParserError as exc:
            next(shape)  # names the row if its cells are the problem
            self._fail(f"the CSV cannot be parsed ({exc}).")
        offset = 0
        while True:
            # The row shapes first: a row with extra or missing cells, or bytes that
            # are not UTF-8, are named before pandas would cut, pad or fail on them.
            lines = next(shape)
            self._lines, self._offset = lines, offset
            try:
                frame = next(reader)
            except StopIteration:
                return
            except (ValueError, pd.errors.ParserError) as exc:
                self._locate_parse_error(offset, chunk_rows, exc)
            if len(frame) == 0:
                return  # a header without rows (refused by iter_chunks)
            if len(frame) != len(lines):  # pragma: no cover - the two readers disagree
                self._fail(f"the CSV cannot be read consistently near row {offset + 1}.")
            offset += len(frame)
            yield frame

    def _not_utf8(self):
        """Refuse the file, naming the first line that is not UTF-8."""
        self._fail(not_utf8_message(self.path))

    def _row_shapes(self, chunk_rows):
        """Line numbers of each chunk's data rows, refusing a row of the wrong width."""
        return row_lines(
            self.path,
            self.sep,
            len(self.columns),
            chunk_rows,
            fail=self._fail,
            not_utf8=self._not_utf8,
        )

    def _record_blocks(self, block_bytes=1 << 24):
        """``(line numbers, cell counts)`` of the data rows, a block of whole records at a time."""
        return record_blocks(
            self.path, self.sep, fail=self._fail, not_utf8=self._not_utf8, block_bytes=block_bytes
        )

    def _locate_parse_error(self, offset, chunk_rows, exc):
        """Re-read a failing CSV chunk as text to name the bad row and column."""
        try:
            frame = pd.read_csv(
                self._source,
                sep=self.sep,
                dtype=str,
                skiprows=range(1, offset + 1),
                nrows=chunk_rows,
                keep_default_na=False,
                encoding="utf-8-sig",
                skipinitialspace=True,
            )
        except pd.errors.ParserError as exc2:
            self._fail(f"the CSV cannot be parsed: {exc2}")
        for c in self.score_columns:
            values = frame[c].str.strip()
            bad = (values != "") & pd.to_numeric(values, errors="coerce").isna()
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                self._fail(
                    f"{self._where(offset + i, c)}: the score {frame[c].iloc[i]!r} is not a number."
                )
        self._fail(f"the CSV cannot be parsed near rows {offset + 1}..{offset + chunk_rows}: {exc}")
