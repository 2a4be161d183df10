"""Estimators as plain data: the JSON form a session file keeps of its assessor.

A session file is passed between people, so it must hold data, never code.
An estimator is stored as its class name and its parameters (numbers,
strings, arrays, tuples and nested estimators), and rebuilt only from the
classes skassess itself exports: a name outside that list is never imported.
A user-written class (e.g. a custom query strategy) is stored by name for the
record; resuming such a session needs the object passed again.

Python's :mod:`pickle` would run whatever the file says when loaded, and
:mod:`json` alone has no arrays, tuples or non-finite floats: hence this
small encoder.
"""

import base64
import binascii
import json
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator

__all__ = [
    "SpecError",
    "decode_params",
    "encode_estimator",
    "estimator_from_spec",
    "spec_class_name",
    "spec_differences",
]

# dtypes an array parameter may have: numbers and booleans as bytes, strings as a list
_BYTE_KINDS = "biuf"

#: The largest value a stored parameter that sets a size may have: a file is refused
#: before an estimator rebuilt from it allocates anything. Any other whole number
#: is at most ``MAX_STORED_INT`` in size (a seed, a label code).
SIZE_LIMITS = {
    "n_bins": 10_000,
    "n_draws": 1_000_000,
    "n_nodes": 10_000,
    "n_members": 1_000,
    "hidden_layer_sizes": 100_000,
    "max_iter": 1_000_000,
    "refit_epochs": 1_000_000,
    "max_resample": 1_000_000,
    "max_steps": 10_000_000,
    "n_steps": 10_000_000,
    "n_burn": 10_000_000,
    "target_ess": 10_000_000,
    "n_chains": 1_000,
    "n_walkers": 100_000,
    "n_jobs": 10_000,
    "m": 100_000,
    "top_m": 100_000,
}
MAX_STORED_INT = 2**63 - 1


class SpecError(ValueError):
    """A stored estimator cannot be encoded or rebuilt."""


def estimator_registry():
    # Built at use: the public estimator and strategy classes of the subpackages
    # the session sits on (session imports them already, so no cycle).
    from .. import calibration, meta, metrics, samplers

    out = {}
    for module in (metrics, samplers, calibration, meta):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, BaseEstimator):
                out[f"{module.__name__}.{name}"] = obj
    return out


def spec_class_name(cls):
    """The name a class is stored under: skassess's public path, else module.qualname."""
    for name, known in estimator_registry().items():
        if known is cls:
            return name
    return f"{cls.__module__}.{cls.__qualname__}"


def encode_estimator(estimator, where="assessor"):
    """``{"class": name, "params": {...}}`` of an unfitted estimator's parameters."""
    return {
        "class": spec_class_name(type(estimator)),
        "params": {
            k: _encode(v, f"{where}.{k}")
            for k, v in sorted(estimator.get_params(deep=False).items())
        },
    }


def _encode(value, where):
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        value = float(value)
        return value if np.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise SpecError(f"{where}: a dict parameter needs string keys to be stored.")
        return {"__dict__": {k: _encode(v, f"{where}[{k!r}]") for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in _BYTE_KINDS:
            data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
            return {
                "__ndarray__": base64.b64encode(data.tobytes()).decode("ascii"),
                "dtype": data.dtype.str,
                "shape": list(value.shape),
            }
        if value.dtype.kind == "U":
            return {"__ndarray__": value.tolist(), "dtype": "str", "shape": list(value.shape)}
        raise SpecError(
            f"{where}: an array of dtype {value.dtype} cannot be stored; use numbers or strings."
        )
    if isinstance(value, BaseEstimator):
        return {"__estimator__": encode_estimator(value, where)}
    raise SpecError(
        f"{where}: a parameter of type {type(value).__name__} cannot be stored in a session "
        "file; use numbers, strings, arrays, tuples or skassess estimators."
    )


def estimator_from_spec(spec, where="assessor"):
    """Rebuild an estimator from :func:`encode_estimator`'s output (skassess classes only)."""
    if (
        not isinstance(spec, dict)
        or set(spec) != {"class", "params"}
        or not isinstance(spec["class"], str)
        or not isinstance(spec["params"], dict)
    ):
        raise SpecError(f"{where}: not a stored estimator.")
    cls = estimator_registry().get(spec["class"])
    if cls is None:
        raise SpecError(
            f"{where}: the class {spec['class']!r} is not one skassess rebuilds from a file "
            "(only skassess's own classes are); pass the object again to resume."
        )
    params = decode_params(spec["params"], where)
    try:
        return cls(**params)
    except TypeError as exc:
        raise SpecError(
            f"{where}: the stored parameters do not fit {spec['class']} ({exc})."
        ) from exc


def decode_params(params, where):
    out = {}
    for k, v in params.items():
        out[k] = _decode(v, f"{where}.{k}")
        _check_size(out[k], SIZE_LIMITS.get(k, MAX_STORED_INT), f"{where}.{k}")
    return out


def _check_size(value, limit, where):
    """Refuse a stored whole number above ``limit`` (in a list or tuple too)."""
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_size(v, limit, f"{where}[{i}]")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > limit:
        raise SpecError(
            f"{where} is {value}, above the largest a session file may store ({limit:,})."
        )


def _decode(value, where):
    if value is None or isinstance(value, bool | str | int | float):
        return value
    if isinstance(value, list):
        return [_decode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict) or len(value) == 0:
        raise SpecError(f"{where}: not a stored parameter value.")
    if set(value) == {"__float__"} and value["__float__"] in ("nan", "inf", "-inf"):
        return float(value["__float__"])
    if set(value) == {"__tuple__"} and isinstance(value["__tuple__"], list):
        return tuple(_decode(v, f"{where}[{i}]") for i, v in enumerate(value["__tuple__"]))
    if set(value) == {"__dict__"} and isinstance(value["__dict__"], dict):
        return {k: _decode(v, f"{where}[{k!r}]") for k, v in value["__dict__"].items()}
    if set(value) == {"__estimator__"}:
        return estimator_from_spec(value["__estimator__"], where)
    if set(value) == {"__ndarray__", "dtype", "shape"}:
        return _decode_array(value, where)
    raise SpecError(f"{where}: not a stored parameter value.")


def _decode_array(value, where):
    shape = value["shape"]
    if not (isinstance(shape, list) and all(isinstance(s, int) and s >= 0 for s in shape)):
        raise SpecError(f"{where}: a stored array has a bad shape.")
    try:
        if value["dtype"] == "str":
            out = np.array(value["__ndarray__"], dtype=str)
        else:
            dtype = np.dtype(value["dtype"])
            if dtype.kind not in _BYTE_KINDS:
                raise SpecError(f"{where}: a stored array has dtype {dtype}.")
            out = np.frombuffer(
                base64.b64decode(value["__ndarray__"], validate=True), dtype=dtype
            ).astype(dtype.newbyteorder("="))
        return out.reshape(shape)
    except (TypeError, ValueError, binascii.Error) as exc:
        if isinstance(exc, SpecError):
            raise
        raise SpecError(f"{where}: a stored array cannot be read ({exc}).") from exc


def spec_differences(stored, given, where="assessor", limit=3):
    """Where two encoded estimators differ: ``"where: stored X, given Y"`` texts (at most
    ``limit``)."""
    out = []

    def short(value):
        text = json.dumps(value, sort_keys=True)
        return text if len(text) <= 60 else text[:57] + "..."

    def walk(a, b, path):
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            if set(a) == {"class", "params"} == set(b) and a["class"] != b["class"]:
                out.append(f"{path}: stored {a['class']}, given {b['class']}")
                return
            for key in sorted(set(a) | set(b)):
                name = path if key in ("params", "__estimator__") else f"{path}.{key}"
                if key not in a or key not in b:
                    which = "stored" if key in a else "given"
                    out.append(f"{name}: only in the {which} assessor")
                else:
                    walk(a[key], b[key], name)
        elif a != b or type(a) is not type(b):
            out.append(f"{path}: stored {short(a)}, given {short(b)}")

    walk(stored, given, where)
    return out


def same_spec(a, b):
    """Whether two encoded estimators are the same (canonical JSON)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
