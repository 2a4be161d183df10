"""A file's assessment from labels that name their annotators (who may slip).

The scores file is read in batches as any assessment is, without labels; the
annotated rows' scores and groups are kept as they pass, and each estimator
then becomes its mixture over the true labels under the annotators' one-coin
model (``add_annotations``, the estimators' ``label_noise``).
"""

import numpy as np
import pandas as pd

from ._label_parser import LabelParser

__all__ = ["AnnotatedRows", "read_annotations"]

#: Column names read as the annotator's name in an annotations file.
ANNOTATOR_COLUMNS = ("annotator", "labeler", "rater", "worker", "annotator_id")
#: Column names read as the label in an annotations file (as --oracle reads them).
LABEL_COLUMNS = ("label", "y", "y_true", "true_label", "target", "truth")


def read_annotations(path, classes, id_column=None):
    """The labels of an annotations file: one row per (item, annotator, label).

    Parameters
    ----------
    path : path-like
        A CSV (any delimiter) with an id column (``id_column``, else ``id``),
        an annotator column (``annotator``, ``labeler``, ``rater``,
        ``worker``) and a label column (``label``, ``y``, ...: a class name or
        number, read by :class:`LabelParser`). Every cell is data.
    classes : sequence of str
    id_column : str, default=None

    Returns
    -------
    annotations : pandas.DataFrame
        Columns ``id``, ``annotator`` and ``label`` (class index), in the
        file's order (an id is looked up in the scores file as it is read).

    Raises
    ------
    ValueError
        Naming the file, its row, line and column: a missing column, an
        empty annotator or label, a label that
        is no class, an annotator who labels an item twice.
    """
    frame = pd.read_csv(path, sep=None, engine="python", dtype=str, keep_default_na=False)
    cols = {c.lower(): c for c in frame.columns}
    where = f"--annotations {path}"
    idc = next((cols[c] for c in ((id_column or "id").lower(), "id") if c in cols), None)
    annc = next((cols[c] for c in ANNOTATOR_COLUMNS if c in cols), None)
    labc = next((cols[c] for c in LABEL_COLUMNS if c in cols), None)
    if idc is None or annc is None or labc is None:
        raise ValueError(
            f"{where}: needs an id column ({id_column or 'id'}), an annotator column "
            f"(annotator) and a label column (label); it has {list(frame.columns)!r}."
        )

    def fail(i, column, what):
        raise ValueError(f"{where}: row {i + 1} (line {i + 2}), column {column!r}: {what}")

    if (frame[idc].str.strip() == "").any():
        fail(int(np.flatnonzero((frame[idc].str.strip() == "").to_numpy())[0]), idc, "no id.")
    names = frame[annc].str.strip()
    if (names == "").any():
        i = int(np.flatnonzero((names == "").to_numpy())[0])
        fail(i, annc, "the annotator is empty; every label names its annotator.")
    long = names.str.len() > 200
    if long.any():
        i = int(np.flatnonzero(long.to_numpy())[0])
        fail(i, annc, "the annotator's name is longer than 200 characters.")
    text = frame[labc]
    empty = (text.str.strip() == "").to_numpy()
    if empty.any():
        fail(int(np.flatnonzero(empty)[0]), labc, "the label is empty.")
    parser = LabelParser(classes)
    codes = parser.parse_many(text.to_numpy(dtype=object))
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(
            parser.message(
                text.iloc[i], where=f"{where}: row {i + 1} (line {i + 2}), column {labc!r}"
            )
        )
    out = pd.DataFrame({"id": frame[idc].to_numpy(), "annotator": names.to_numpy(), "label": codes})
    out.attrs["where"] = where  # what AnnotatedRows' errors name
    twice = out.duplicated(["id", "annotator"])
    if twice.any():
        i = int(np.flatnonzero(twice.to_numpy())[0])
        fail(
            i,
            annc,
            f"{out['annotator'].iloc[i]!r} labels item {frame[idc].iloc[i]!r} a second time.",
        )
    return out


class AnnotatedRows:
    """The annotated rows of a file read in batches: their scores and groups, kept as
    they pass, and the labels in one column per annotator.

    Parameters
    ----------
    annotations : pandas.DataFrame
        ``annotator`` and ``label`` (class index), and the item as ``row``
        (0-based row of the file) or ``id`` (found as the file is read), as
        :func:`read_annotations` gives them.
    where : str, default="annotations"
        What the errors name.
    """

    def __init__(self, annotations, where="annotations"):
        self.where = where
        key = "row" if "row" in annotations.columns else "id"
        missing = {key, "annotator", "label"} - set(annotations.columns)
        if missing:
            raise ValueError(
                f"{where} must have the columns row (or id), annotator and label; it lacks "
                f"{sorted(missing)}."
            )
        if len(annotations) == 0:
            raise ValueError(f"{where} holds no label.")
        keys = annotations[key].to_numpy()
        if key == "row":
            keys = keys.astype(np.int64)
            if (keys < 0).any():
                raise ValueError(f"{where}: row {int(keys[keys < 0][0])} is not a row.")
        else:
            keys = keys.astype(str)
        self.keys, first, position = np.unique(keys, return_index=True, return_inverse=True)
        self._first = first  # each item's first row in the annotations
        self.by_id = key == "id"
        self.rows = np.full(self.keys.size, -1, dtype=np.int64) if self.by_id else self.keys
        self.names = list(dict.fromkeys(annotations["annotator"].astype(str)))
        column = {a: j for j, a in enumerate(self.names)}
        self.labels = np.full((self.keys.size, len(self.names)), -1, dtype=np.int64)
        self.labels[position, [column[a] for a in annotations["annotator"].astype(str)]] = (
            annotations["label"].to_numpy(dtype=np.int64)
        )
        self._parts, self._seen = [], 0

    def add(self, chunk, design=None):
        """Keep the annotated rows' scores and groups of one batch (``chunk.offset`` on).

        Raises
        ------
        ValueError
            If the batch labels a row: the file's labels name no annotator.
        """
        if (chunk.labels >= 0).any():
            i = int(np.argmax(chunk.labels >= 0)) + chunk.offset
            raise ValueError(
                f"{self.where}: the scores file labels row {i + 1} itself, without an "
                "annotator; put the file's labels in the annotations file with their "
                "annotator, or assess without annotations."
            )
        if self.by_id:
            found = pd.Index(np.asarray(chunk.ids).astype(str)).get_indexer(self.keys)
            items = np.flatnonzero(found >= 0)
            local = found[items]
            self.rows[items] = chunk.offset + local
        else:
            lo, hi = np.searchsorted(self.keys, [chunk.offset, chunk.offset + len(chunk)])
            items = np.arange(lo, hi)
            local = self.keys[lo:hi] - chunk.offset
        groups = {name: values.to_numpy()[local] for name, values in chunk.groups.items()}
        if design is not None:
            groups[None] = np.asarray(design)[local]
        self._parts.append((items, np.asarray(chunk.scores)[local], groups))
        self._seen = chunk.offset + len(chunk)

    def _check_found(self):
        lost = np.flatnonzero((self.rows < 0) | (self.rows >= self._seen))
        if lost.size:
            i = int(self._first[lost[0]])
            what = (
                f"the id {str(self.keys[lost[0]])!r} is not in the scores file"
                if self.by_id
                else f"row {int(self.rows[lost[0]]) + 1} is past the file's {self._seen:,} rows"
            )
            line = f" (line {i + 2})" if self.where.startswith("--") else ""
            raise ValueError(f"{self.where}: row {i + 1}{line}: {what}.")

    def mix(self, estimator, key, annotator_prior=None):
        """``estimator`` (fitted on the file without labels) as the mixture of the labels.

        ``key`` is the assessment's key (``"group:<col>"`` takes that column's
        groups; ``"ece"`` the design's groups, where kept).
        """
        self._check_found()
        items = np.concatenate([p[0] for p in self._parts])
        order = np.argsort(self.rows[items], kind="stable")
        items = items[order]
        scores = np.concatenate([p[1] for p in self._parts])[order]
        name = key[6:] if key.startswith("group:") else None if key == "ece" else False
        group = None
        if name is not False and name in self._parts[0][2]:
            group = np.concatenate([p[2][name] for p in self._parts])[order]
        params = {"label_noise": "one_coin"}
        if annotator_prior is not None:
            params["annotator_prior"] = annotator_prior
        estimator.set_params(**params)
        wide = pd.DataFrame(self.labels[items], columns=self.names)
        return estimator.add_annotations(scores, wide, rows=self.rows[items], group_by=group)
