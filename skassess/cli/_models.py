"""Several models' scores files as one pool: the items of ``skassess label --task compare_models``.

Each file holds one model's scores on the same items, in the format of every
scores file (an id column, one score column per class, optionally a label
column). Rows are matched by id, in the first file's order. A label may be in
any of the files; two files that give an item different labels are an error.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._common import open_scores


@dataclass
class ModelsTable:
    """The items of several scores files, one model per file.

    Attributes
    ----------
    ids : ndarray of str, shape (n,)
    scores : ndarray of shape (n, n_models, n_classes)
    labels : ndarray of int, shape (n,)
        Class index of each known label, -1 where no file has one.
    classes : list of str
    models : list of str
        The models' names: the files' names without their suffixes.
    groups : pandas.DataFrame
        Empty: a model comparison has no group column.
    display : pandas.DataFrame
        The first file's display columns.
    """

    ids: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    classes: list
    models: list
    groups: pd.DataFrame
    display: pd.DataFrame

    def __len__(self):
        return len(self.ids)


def model_name(path):
    """A model's name from its file: ``vendor.csv.gz`` -> ``vendor``."""
    name = Path(path).name
    for suffix in (".gz", ".csv", ".tsv", ".parquet"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


class ModelsFile:
    """Several scores files read as one pool (the checksums, the table)."""

    def __init__(self, paths, options):
        self.paths = [str(p) for p in paths]
        if len(self.paths) < 2:
            raise ValueError(
                "--task compare_models compares models: give one scores file per model "
                f"(at least two); got {len(self.paths)}."
            )
        if options.get("group_columns"):
            raise ValueError("--task compare_models takes no --group.")
        self.models = [model_name(p) for p in self.paths]
        seen = {}
        for path, name in zip(self.paths, self.models, strict=True):
            if name in seen:
                raise ValueError(
                    f"{seen[name]} and {path} would both be model {name!r}; give the "
                    "models' files different names."
                )
            seen[name] = path
        self.files = [open_scores(p, options) for p in self.paths]
        self.classes = self.files[0].classes
        for path, sf in zip(self.paths[1:], self.files[1:], strict=True):
            if list(sf.classes) != list(self.classes):
                raise ValueError(
                    f"{path} has the classes {list(sf.classes)!r}; {self.paths[0]} has "
                    f"{list(self.classes)!r}. Every model's file must score the same "
                    "classes, in the same order."
                )
        self.group_columns = []
        self.id_column = self.files[0].id_column

    def checksum(self):
        """Each file's SHA-256, in the files' order."""
        return [sf.checksum() for sf in self.files]

    def read(self):
        tables = [sf.read() for sf in self.files]
        first = tables[0]
        ids = np.array([str(i) for i in first.ids], dtype=object)
        position = pd.Index(ids)
        if not position.is_unique:
            dup = position[position.duplicated()][0]
            raise ValueError(f"{self.paths[0]}: the id {dup!r} is on several rows.")
        K = len(self.classes)
        scores = np.empty((len(ids), len(tables), K))
        labels = np.full(len(ids), -1, dtype=np.int64)
        source = np.full(len(ids), -1)
        for m, (path, table) in enumerate(zip(self.paths, tables, strict=True)):
            own = np.array([str(i) for i in table.ids], dtype=object)
            order = position.get_indexer(own)
            if len(own) != len(ids) or (order < 0).any() or len(set(order)) != len(order):
                missing = sorted(set(ids) - set(own))
                extra = sorted(set(own) - set(ids))
                what = (
                    f"lacks the id {missing[0]!r}"
                    if missing
                    else f"has the id {extra[0]!r} that {self.paths[0]} lacks"
                    if extra
                    else "repeats an id"
                )
                raise ValueError(
                    f"{path} {what}: every model's file must hold the same items "
                    f"(matched by the id column, {self.id_column or 'the row number'!r})."
                )
            s = np.asarray(table.scores, dtype=np.float64)
            if s.ndim == 1:  # one P(class 1) column
                s = np.column_stack([1.0 - s, s])
            scores[order, m] = s
            known = table.labels >= 0
            rows = order[known]
            clash = (labels[rows] >= 0) & (labels[rows] != table.labels[known])
            if clash.any():
                i = np.flatnonzero(clash)[0]
                r, theirs = rows[i], table.labels[known][i]
                raise ValueError(
                    f"item {ids[r]!r}: {self.paths[source[r]]} labels it "
                    f"{self.classes[labels[r]]!r} and {path} {self.classes[theirs]!r}."
                )
            fresh = rows[labels[rows] < 0]
            labels[fresh] = table.labels[known][labels[rows] < 0]
            source[fresh] = m
        return ModelsTable(
            ids=ids,
            scores=scores,
            labels=labels,
            classes=list(self.classes),
            models=list(self.models),
            groups=pd.DataFrame(index=range(len(ids))),
            display=first.display,
        )
