"""A black box's scores file (CSV or Parquet): columns, checks, batched reading."""

import csv
import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import ScoresFileError
from ..utils._locations import as_location, file_size, is_file, open_binary
from ..utils._validation import ROW_SUM_TOL
from ._columns import ItemIds, concat_categories, stack
from ._label_parser import LabelParser
from ._scores_reading import _TextReading, is_parquet, sniff_separator

__all__ = ["ScoresFile", "ScoresTable", "file_checksum"]

#: Column names taken as the item id, the true label, and prefixes of class-score columns.
ID_NAMES = ("id", "item_id", "row_id", "key", "uid")
LABEL_NAMES = ("label", "y", "y_true", "true_label", "target", "truth")
SCORE_PREFIXES = ("score_", "proba_", "prob_", "probability_", "p_")
BINARY_NAMES = ("score", "proba", "prob", "probability", "p")
CHUNK_ROWS = 500_000


def file_checksum(path, block=1 << 22):
    """SHA-256 of a file's bytes, read in blocks (the data fingerprint of a session)."""
    digest = hashlib.sha256()
    with open_binary(as_location(path)) as f:
        while chunk := f.read(block):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class ScoresTable:
    """The rows of a scores file, checked.

    Attributes
    ----------
    ids : ItemIds or ndarray of str, shape (n,)
        Item ids (the row numbers from 1 when the file has no id column):
        :class:`ItemIds` from :meth:`ScoresFile.read`, an object array in
        the batches of :meth:`ScoresFile.iter_chunks`.
    scores : ndarray of shape (n, n_classes), or (n,) for one P(class 1) column
    labels : ndarray of int, shape (n,)
        Class index of each true label, -1 where the label is empty.
    classes : list of str
        Class names, in score-column order.
    groups : pandas.DataFrame
        The group columns (strings; categoricals from :meth:`ScoresFile.read`),
        empty when none was chosen.
    display : pandas.DataFrame
        The display columns (strings).
    """

    ids: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    classes: list
    groups: pd.DataFrame
    display: pd.DataFrame
    offset: int = 0

    def __len__(self):
        return len(self.ids)

    @property
    def labels_as_names(self):
        """The labels as class names, None where unlabeled (an object array)."""
        out = np.full(len(self.labels), None, dtype=object)
        known = self.labels >= 0
        out[known] = np.asarray(self.classes, dtype=object)[self.labels[known]]
        return out


def _match(columns, names):
    lower = {c.lower(): c for c in columns}
    return next((lower[n] for n in names if n in lower), None)


class ScoresFile(_TextReading):
    """A scores file: one row per item, the black box's class scores, optional labels.

    Read more in the :ref:`User Guide <ug_command_line>`.

    The file is CSV (any of ``, ; tab |`` as the delimiter, found from the
    header; ``.gz`` allowed) or Parquet (needs ``pyarrow``:
    ``pip install "skassess[parquet]"``). It is read in batches of
    ``CHUNK_ROWS`` rows, so a file larger than memory can be assessed, and
    every problem is reported with its row (and CSV line) and column: no row
    is dropped or changed.

    Parameters
    ----------
    path : str or path-like
        A local path, or a URL (``s3://``, ``gs://``, ``file://``, ...) read
        through fsspec with its filesystem's package.
    id_column : str, default=None
        The item id column. None: a column named ``id``, ``item_id``,
        ``row_id``, ``key`` or ``uid`` (any case), else the row number from 1.
    score_columns : list of str, default=None
        One column per class, in class order, or one column with P(class 1).
        None: the columns named ``score_<class>`` (or ``proba_``, ``prob_``,
        ``probability_``, ``p_``); else one column named ``score``, ``proba``,
        ``prob``, ``probability`` or ``p`` (binary).
    classes : list of str, default=None
        Class names. None: the score columns' suffixes (``score_cat`` ->
        ``cat``), the column names themselves when they have no common prefix,
        or ``["0", "1"]`` for one binary column.
    label_column : str, default=None
        True labels, as class names; empty cells are unlabeled rows. None: a
        column named ``label``, ``y``, ``y_true``, ``true_label``, ``target``
        or ``truth``, if any; ``""`` for none.
    group_columns : list of str, default=()
        Group or sensitive-attribute columns.
    display_columns : list of str, default=()
        Columns shown beside an item when it is labeled (text, a path, a URL).
    sep : str, default=None
        CSV delimiter; None: found from the header.
    sum_tolerance : float, default=0.01
        How far a row of class scores may sum from 1 (rounding in a text
        file); such rows are divided by their sum, and the largest
        deviation read is kept in ``max_sum_error``.

    Raises
    ------
    ScoresFileError
        A ``ValueError`` naming the row and column of the first problem.
    """

    def __init__(
        self,
        path,
        *,
        id_column=None,
        score_columns=None,
        classes=None,
        label_column=None,
        group_columns=(),
        display_columns=(),
        sep=None,
        sum_tolerance=ROW_SUM_TOL,
    ):
        self.path = as_location(path)
        if not is_file(self.path):
            raise ScoresFileError(f"{path}: no such file.")
        if not 0 <= sum_tolerance < 1:
            raise ValueError(f"sum_tolerance must be in [0, 1); got {sum_tolerance!r}.")
        self.sum_tolerance = sum_tolerance
        self.size = file_size(self.path)
        if self.size == 0:
            raise ScoresFileError(f"{path}: the file is empty (0 bytes).")
        self.parquet = is_parquet(self.path)
        if self.parquet:
            self.sep, columns = None, self._parquet_columns()
        else:
            found, header = sniff_separator(self.path)
            self.sep = found if sep is None else sep
            if not header.strip():
                raise ScoresFileError(f"{path}: the file is empty (no header line).")
            columns = next(csv.reader([header.rstrip("\r\n")], delimiter=self.sep))
            columns = [c.strip() for c in columns]
        self.columns = columns
        self._resolve(
            columns,
            id_column,
            score_columns,
            classes,
            label_column,
            list(group_columns),
            list(display_columns),
        )

    def _fail(self, message):
        raise ScoresFileError(f"{self.path}: {message}")

    def _resolve(self, columns, id_column, score_columns, classes, label_column, groups, display):
        shown = ", ".join(map(repr, columns[:12])) + (" ..." if len(columns) > 12 else "")
        if len(set(columns)) != len(columns):
            dup = next(c for c in columns if columns.count(c) > 1)
            self._fail(f"the header names the column {dup!r} twice.")

        def check(name, what):
            if name not in columns:
                hint = (
                    ""
                    if self.parquet or len(columns) > 1
                    else (
                        f" The header has one column: is the delimiter not {self.sep!r}? "
                        "Pass --sep."
                    )
                )
                self._fail(f"{what} {name!r} is not a column of the file (columns: {shown}).{hint}")
            return name

        self.id_column = check(id_column, "id_column") if id_column else _match(columns, ID_NAMES)
        if label_column == "":
            self.label_column = None
        else:
            self.label_column = (
                check(label_column, "label_column")
                if label_column
                else _match(columns, LABEL_NAMES)
            )
        self.group_columns = [check(g, "group column") for g in groups]
        self.display_columns = [check(d, "display column") for d in display]
        if score_columns:
            self.score_columns = [check(s, "score column") for s in score_columns]
            names = _class_names(self.score_columns)
        else:
            self.score_columns, names = _auto_scores(columns)
            if not self.score_columns:
                hint = (
                    f" The header has one column: is the delimiter not {self.sep!r}? Pass --sep."
                    if len(columns) == 1 and not self.parquet
                    else ""
                )
                self._fail(
                    "no score columns found: name them score_<class> (one per class) or "
                    "score (P(class 1)), or pass --score-columns. Columns: "
                    f"{shown}.{hint}"
                )
        if len(self.score_columns) == 1 and not classes:
            names = ["0", "1"]
        if classes:
            names = [str(c) for c in classes]
            want = 2 if len(self.score_columns) == 1 else len(self.score_columns)
            if len(names) != want:
                raise ValueError(
                    f"classes must name {want} classes for {len(self.score_columns)} score "
                    f"column(s); got {len(names)}: {names!r}."
                )
        if len(set(names)) != len(names):
            raise ValueError(f"class names must differ; got {names!r}.")
        self.classes = names
        self.label_parser = LabelParser(names)
        used = [self.id_column, self.label_column, *self.group_columns]
        for c in self.score_columns:
            if c in used:
                self._fail(
                    f"the column {c!r} cannot be both a score column and an id, label "
                    "or group column."
                )

    @property
    def binary(self):
        return len(self.score_columns) == 1

    def describe(self):
        """The column roles, as a dict (what the command prints and a session stores)."""
        return {
            "id_column": self.id_column,
            "score_columns": self.score_columns,
            "classes": self.classes,
            "label_column": self.label_column,
            "group_columns": self.group_columns,
            "display_columns": self.display_columns,
            "sep": self.sep,
        }

    def checksum(self):
        """SHA-256 of the file's bytes."""
        return file_checksum(self.path)

    def _where(self, row, column):
        """'row 7 (line 8), column 'x'' for the 0-based data row ``row``."""
        lines = getattr(self, "_lines", None)
        if self.parquet:
            line = ""
        elif lines is not None and len(lines) and row - self._offset < len(lines):
            line = f" (line {lines[row - self._offset]})"
        else:
            line = f" (line {row + 2})"
        return f"row {row + 1}{line}, column {column!r}"

    def iter_chunks(self, chunk_rows=CHUNK_ROWS, *, allow_empty=False):
        """Checked :class:`ScoresTable` batches of at most ``chunk_rows`` rows.

        A file with a header and no rows is refused, or with ``allow_empty``
        (a partition of a data set) gives no batch.

        Duplicate ids are found across batches: the error comes when the
        second copy is read.
        """
        hashes = []
        offset = 0
        for frame in self._raw_chunks(chunk_rows):
            table = self._check(frame, offset)
            if self.id_column is not None:
                inside = pd.Index(table.ids).duplicated(keep="first")
                if inside.any():
                    i = int(np.flatnonzero(inside)[0])
                    first = int(np.flatnonzero(table.ids == table.ids[i])[0])
                    self._duplicate(offset + i, offset + first, table.ids[i])
                # 8 bytes an id instead of the strings: 10 million ids take 80 MB.
                hashes.append(pd.util.hash_array(table.ids))
            offset += len(frame)
            yield table
        if offset == 0 and not allow_empty:
            self._fail("the file has a header but no rows.")
        if len(hashes) > 1:
            # Across batches, by sorting every hash once; a 64-bit collision among
            # 10 million distinct ids has probability ~3e-6.
            h = np.concatenate(hashes)
            order = np.argsort(h, kind="stable")
            same = np.flatnonzero(h[order[1:]] == h[order[:-1]])
            if len(same):
                pairs = np.sort(np.stack([order[same], order[same + 1]], axis=1), axis=1)
                first, second = pairs[np.argmin(pairs[:, 1])]
                self._duplicate(int(second), int(first), None)

    def _duplicate(self, row, first, value):
        shown = "" if value is None else f" {value!r}"
        self._fail(
            f"{self._where(row, self.id_column)}: the id{shown} repeats row {first + 1}; "
            "ids must be unique."
        )

    def read(self, chunk_rows=CHUNK_ROWS):
        """Every row as one :class:`ScoresTable`.

        Only what an assessment needs is kept, compactly: the scores, the label
        codes, the ids as :class:`ItemIds` (their bytes, not Python strings) and
        the group columns as categoricals; each batch is freed once copied, so
        the peak memory is the table's size plus one batch.
        """
        ids, scores, labels, groups, display = [], [], [], [], []
        for part in self.iter_chunks(chunk_rows):
            ids.append(ItemIds.from_strings(part.ids))
            scores.append(part.scores)
            labels.append(part.labels)
            groups.append(part.groups.astype("category"))
            display.append(part.display)
        return ScoresTable(
            ids=ItemIds.concat(ids),
            scores=stack(scores),
            labels=stack(labels),
            classes=self.classes,
            groups=concat_categories(groups),
            display=pd.concat(display, ignore_index=True),
        )

    def _check(self, frame, offset):
        n = len(frame)
        scores = np.empty((n, len(self.score_columns)), dtype=np.float64)
        for j, c in enumerate(self.score_columns):
            col = frame[c]
            if pd.api.types.is_bool_dtype(col) or pd.api.types.is_datetime64_any_dtype(col):
                self._fail(f"column {c!r} holds {col.dtype} values, not scores.")
            values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            bad = ~np.isfinite(values)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raw = col.iloc[i]
                if pd.isna(raw) or str(raw).strip() == "":
                    what = "the score is empty"
                elif np.isnan(pd.to_numeric(pd.Series([raw]), errors="coerce").iloc[0]):
                    what = f"the score {raw!r} is not a number"
                else:
                    what = f"the score {str(raw).strip()!r} is not finite"
                self._fail(f"{self._where(offset + i, c)}: {what}.")
            out = (values < 0) | (values > 1)
            if out.any():
                i = int(np.flatnonzero(out)[0])
                self._fail(
                    f"{self._where(offset + i, c)}: the score {values[i]:.6g} is not in [0, 1]."
                )
            scores[:, j] = values
        if not self.binary:
            total = scores.sum(axis=1)
            off = np.abs(total - 1) > self.sum_tolerance
            if off.any():
                i = int(np.flatnonzero(off)[0])
                where = self._where(offset + i, self.score_columns[0]).split(", column")[0]
                self._fail(
                    f"{where}: the {len(self.score_columns)} class scores sum to {total[i]:.6g}, "
                    f"not 1 (tolerance {self.sum_tolerance}; rows that are not probabilities "
                    "must be normalized by the user)."
                )
            # Rounding in a text file: the rows are divided by their sums (all within
            # sum_tolerance of 1), as the estimators expect probabilities.
            scores /= total[:, None]
            self.max_sum_error = max(
                getattr(self, "max_sum_error", 0.0), float(np.abs(total - 1).max(initial=0.0))
            )
        else:
            scores = scores[:, 0]
        ids = self._ids(frame, offset)
        labels = self._labels(frame, offset)
        groups = self._text(frame, self.group_columns, offset, "group")
        display = (
            frame[self.display_columns].fillna("").astype(str).reset_index(drop=True)
            if self.display_columns
            else pd.DataFrame(index=range(n))
        )
        return ScoresTable(
            ids=ids,
            scores=scores,
            labels=labels,
            classes=self.classes,
            groups=groups,
            display=display,
            offset=offset,
        )

    def _ids(self, frame, offset):
        if self.id_column is None:
            return np.arange(offset + 1, offset + len(frame) + 1).astype(str).astype(object)
        ids = frame[self.id_column]
        missing = ids.isna().to_numpy()
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            self._fail(f"{self._where(offset + i, self.id_column)}: the id is empty.")
        return ids.astype(str).to_numpy(dtype=object)

    def _labels(self, frame, offset):
        n = len(frame)
        if self.label_column is None:
            return np.full(n, -1, dtype=np.int64)
        raw = frame[self.label_column]
        text = raw.astype("string")
        missing = text.isna() | (text.str.strip() == "")
        present = ~missing.to_numpy(dtype=bool)
        codes = np.full(n, -1, dtype=np.int64)  # only the labeled rows are looked up
        codes[present] = self.label_parser.parse_many(text[present].to_numpy(dtype=object))
        unknown = present & (codes < 0)
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            self._fail(
                self.label_parser.message(
                    str(text.iloc[i]), where=self._where(offset + i, self.label_column)
                )
                + " An empty cell is an unlabeled row."
            )
        return codes

    def _text(self, frame, columns, offset, what):
        if not columns:
            return pd.DataFrame(index=range(len(frame)))
        out = frame[columns].reset_index(drop=True)
        for c in columns:
            missing = out[c].isna().to_numpy() | (out[c].astype(str).str.strip() == "").to_numpy()
            if missing.any():
                i = int(np.flatnonzero(missing)[0])
                self._fail(f"{self._where(offset + i, c)}: the {what} is empty.")
            out[c] = out[c].astype(str)
        return out


def _auto_scores(columns):
    """Score columns and class names by prefix (the most common), else one binary column."""
    best, best_cols = None, []
    for prefix in SCORE_PREFIXES:
        cols = [c for c in columns if c.lower().startswith(prefix) and len(c) > len(prefix)]
        if len(cols) > len(best_cols):
            best, best_cols = prefix, cols
    if best_cols:
        return best_cols, [c[len(best) :] for c in best_cols]
    single = _match(columns, BINARY_NAMES)
    return ([single], ["0", "1"]) if single else ([], [])


def _class_names(columns):
    """Class names of explicitly chosen score columns: drop a shared known prefix."""
    for prefix in SCORE_PREFIXES:
        if all(c.lower().startswith(prefix) and len(c) > len(prefix) for c in columns):
            return [c[len(prefix) :] for c in columns]
    return list(columns)
