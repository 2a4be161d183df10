"""Convert an older session file (format 1 held a pickle; format 2 no annotators)."""

import base64
import io
import json
import os
import pickle
import sqlite3
from pathlib import Path

from ..exceptions import SessionError
from ._spec import SpecError, encode_estimator, estimator_registry
from ._store import FORMAT_VERSION, SETTINGS_KEYS, SessionStore
from ._stored_json import load_json

__all__ = ["migrate_session"]


def migrate_session(path, *, trust_pickle=False):
    """Rewrite an older session file in the current format.

    - Format 2 (labels without annotators) becomes format 3, where a label
      may name its annotator. Its settings and events are copied as they
      are, after the whole file is checked.
    - Format 1 stored the assessor as a Python pickle, and loading a pickle
      runs whatever code it holds. Convert only a file you made yourself (or
      otherwise trust): this is the one place skassess reads such a file,
      and only with ``trust_pickle=True``. Even then the pickle is read with
      a restricted unpickler that builds nothing but skassess's estimator
      classes and numpy arrays, so a pickle naming anything else
      (``os.system``, ...) is refused.

    The old file is kept beside the new one as ``<path>.format<N>``.

    Parameters
    ----------
    path : path-like
        A session file of format 1 or 2 (closed: no process may have it open).
    trust_pickle : bool, default=False
        For a format-1 file, must be True: you vouch that the file's pickle
        is safe to load. Ignored for format 2, which holds data only.

    Returns
    -------
    backup : pathlib.Path
        Where the old file was moved.

    Raises
    ------
    SessionError
        If the file is not a session of format 1 or 2, or is damaged; for
        format 1, without ``trust_pickle=True`` or if its assessor cannot be
        stored as data.
    """
    path = Path(path)
    if not path.is_file():
        raise SessionError(f"{path}: no such session file.")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0)
        try:
            fmt = load_json(
                dict(db.execute("SELECT key, value FROM meta").fetchall()).get("format", "null"),
                "the format",
            )
        finally:
            db.close()
    except (sqlite3.Error, ValueError) as exc:
        raise SessionError(f"{path}: not a readable session file ({exc}).") from exc
    if fmt == 1:
        settings, events = _format1(path, trust_pickle)
    elif fmt == 2:
        store = SessionStore(path, create=False, read_only=True)
        try:
            settings = {k: store.get(k) for k in SETTINGS_KEYS if k != "format"}
            events = [
                (e["kind"], e["row"], e["item_id"], e["label"], e["step"], e["time"], e["cursor"])
                for e in store.events()
            ]
        finally:
            store.close()
    else:
        raise SessionError(
            f"{path}: session format {fmt!r}, not 1 or 2; nothing to convert "
            f"(this skassess writes format {FORMAT_VERSION})."
        )
    new = path.with_name(path.name + ".converting")
    for leftover in (new, Path(f"{new}-wal"), Path(f"{new}-shm")):
        leftover.unlink(missing_ok=True)
    store = SessionStore(new)
    try:
        store.create(**settings)
        for kind, row, item_id, label, step, when, cursor in events:
            store.add(kind, row, item_id, label, step, cursor, when=when)
    finally:
        store.close()
    backup = path.with_name(f"{path.name}.format{fmt}")
    os.replace(path, backup)
    os.replace(new, path)
    return backup


def _format1(path, trust_pickle):
    """The settings and events of a format-1 file, its pickled assessor stored as data."""
    if trust_pickle is not True:
        raise SessionError(
            f"{path}: converting a format-1 session loads the pickle it holds, which can run "
            "any code; pass trust_pickle=True (the command: --trust-pickle) only for a file "
            "you made yourself."
        )
    try:
        db = sqlite3.connect(path, timeout=0)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            events = db.execute(
                "SELECT kind, row, item_id, label, step, time, cursor FROM events ORDER BY seq"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise SessionError(f"{path}: not a readable format-1 session file ({exc}).") from exc
    from ..samplers import ActiveAssessor

    try:
        assessor = _RestrictedUnpickler(
            io.BytesIO(base64.b64decode(load_json(meta["assessor"], "the stored assessor")))
        ).load()
    except pickle.UnpicklingError as exc:
        raise SessionError(f"{path}: {exc}") from exc
    except Exception as exc:  # a pickle can fail in any of the builders it calls
        raise SessionError(
            f"{path}: the stored assessor cannot be loaded ({type(exc).__name__}: "
            f"{str(exc)[:120]})."
        ) from exc
    if not isinstance(assessor, ActiveAssessor):
        raise SessionError(
            f"{path}: the stored assessor is a {type(assessor).__name__}, not an ActiveAssessor."
        )
    try:
        spec = encode_estimator(assessor)
    except SpecError as exc:
        raise SessionError(f"{path}: {exc}") from exc
    settings = {
        "created": json.loads(meta["created"]),
        "settings": json.loads(meta["settings"]),
        "data_sha256": json.loads(meta["data_sha256"]),
        "assessor": spec,
        "info": json.loads(meta.get("info", "{}")),
    }
    events = [
        (kind, row, item_id, None if lab is None else json.loads(lab), step, t, json.loads(c))
        for kind, row, item_id, lab, step, t, c in events
    ]
    return settings, events


#: What a format-1 assessor's pickle may build besides skassess's own classes: numpy
#: arrays and scalars (parameters such as a prior or a cost matrix).
_NUMPY_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("copyreg", "_reconstructor"),
    ("builtins", "object"),
}


#: The most elements an array of a format-1 assessor may ask for (its parameters are small).
MAX_ARRAY_ELEMENTS = 1 << 26


def _bounded_reconstruct(builder):
    """numpy's array builder, refusing a shape of more than MAX_ARRAY_ELEMENTS elements."""

    def reconstruct(cls, shape, dtype_code, *args):
        size = 1
        for n in shape if isinstance(shape, tuple) else (shape,):
            if not isinstance(n, int) or n < 0:
                raise pickle.UnpicklingError("the stored assessor holds an array of a bad shape.")
            size *= n
        if size > MAX_ARRAY_ELEMENTS:
            raise pickle.UnpicklingError(
                f"the stored assessor asks for an array of {size:,} elements; it is not loaded."
            )
        return builder(cls, shape, dtype_code, *args)

    return reconstruct


def _plain_dtype(builder):
    """numpy's dtype, refusing the kinds a parameter never has (objects, raw bytes)."""

    def dtype(*args, **kwargs):
        out = builder(*args, **kwargs)
        if out.kind in "OV" or out.itemsize > 64:
            raise pickle.UnpicklingError(
                f"the stored assessor holds an array of dtype {out}; it is not loaded."
            )
        return out

    return dtype


class _RestrictedUnpickler(pickle.Unpickler):
    """Python's "restricting globals" recipe: only skassess's estimator classes and numpy
    arrays may be built, so even a file that was not what its owner thought cannot name
    ``os.system`` or any other callable. A format-1 assessor needs no more; its arrays
    are of numbers or strings and small (at most MAX_ARRAY_ELEMENTS elements)."""

    def find_class(self, module, name):
        if (module, name) in _NUMPY_GLOBALS:
            found = super().find_class(module, name)
            if name == "_reconstruct":
                return _bounded_reconstruct(found)
            if name == "dtype":
                return _plain_dtype(found)
            return found
        if (
            module.startswith("numpy.dtypes")
            and name.endswith("DType")
            and name not in ("ObjectDType", "VoidDType")
        ):
            return super().find_class(module, name)
        if module == "skassess" or module.startswith("skassess."):
            obj = super().find_class(module, name)
            if obj in estimator_registry().values():
                return obj
        raise pickle.UnpicklingError(
            f"the stored assessor names {module}.{name}, which is neither a skassess estimator "
            "nor a numpy array; it is not loaded."
        )
