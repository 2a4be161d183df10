"""A JSON value stored in a session file, read with bounds: a crafted file is refused
before it is parsed."""

import json
import re

import numpy as np

__all__ = ["MAX_JSON_CHARS", "MAX_JSON_DEPTH", "json_depth", "load_json"]

#: The deepest nesting of arrays and objects a stored JSON value may have, and its
#: longest text: a crafted file is refused before it is parsed (Python's parser
#: recurses, and a size carried by a value is bounded where it is used).
MAX_JSON_DEPTH = 32
MAX_JSON_CHARS = 1 << 24
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN, _CLOSE = np.frombuffer(b"[{", dtype=np.uint8), np.frombuffer(b"]}", dtype=np.uint8)


def json_depth(text):
    """The deepest nesting of ``[`` and ``{`` in a JSON text, outside its strings."""
    # Counted, not parsed: json.loads itself would recurse once per level first.
    bare = _JSON_STRING.sub("", text).encode("utf-8", "replace")
    codes = np.frombuffer(bare, dtype=np.uint8)
    steps = np.isin(codes, _OPEN).astype(np.int64) - np.isin(codes, _CLOSE)
    return int(np.cumsum(steps).max(initial=0))


def load_json(text, what):
    """A stored JSON value, or ValueError naming ``what`` (too deep, too long, not JSON)."""
    if not isinstance(text, str):
        raise ValueError(f"{what} is not text")
    if len(text) > MAX_JSON_CHARS:
        raise ValueError(f"{what} is longer than {MAX_JSON_CHARS:,} characters")
    if json_depth(text) > MAX_JSON_DEPTH:
        raise ValueError(f"{what} is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{what} is not readable JSON") from exc
