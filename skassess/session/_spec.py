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
]

# dtypes an array parameter may have: numbers and booleans as bytes, strings as a list
_BYTE_KINDS = "biuf"


class SpecError(ValueError):
    """A stored estimator cannot be encoded or rebuilt."""


def estimator_registry():
    # Built at use: the public estimator and strategy classes of the subpackages
    # the session sits on (session imports them already, so no cycle).
    from .. import calibration, metrics, samplers

    out = {}
    for module in (metrics, samplers, calibration):
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
    return {k: _decode(v, f"{where}.{k}") for k, v in params.items()}


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


def same_spec(a, b):
    """Whether two encoded estimators are the same (canonical JSON)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
