"""How a text names a class: the one reading of labels for every reader.

Scores files, oracle files, an oracle command, the keyboard and
:meth:`LabelingSession.tell <skassess.session.LabelingSession.tell>` with a
text label all read a label through :class:`LabelParser`, so the same text
names the same class wherever it is given.
"""

import re
import unicodedata

import numpy as np
import pandas as pd

from ..exceptions import LabelError

__all__ = ["COMMANDS", "LabelParser"]

#: The words of the labeling prompt and of an oracle command's answers, and what they do.
#: A class named like one of them is labeled by that word; ``:word`` is always the command.
COMMANDS = {
    "s": "skip",
    "skip": "skip",
    "u": "undo",
    "undo": "undo",
    "q": "quit",
    "quit": "quit",
    "?": "help",
    "h": "help",
    "help": "help",
}

# A decimal number as people and spreadsheets write one: 7, 7.0, -3, 1e3, .5
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE = re.compile(r"[0-9]{1,9}")


def _key(text):
    # Python's str.strip, casefold and NFC normalization; no library compares
    # class names under these rules.
    return unicodedata.normalize("NFC", text.strip())


def _number(text):
    """The value of a decimal number's text, or None."""
    if not _DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if np.isfinite(value) else None


class LabelParser:
    """Reads a label's text as one of the classes.

    Read more in the :ref:`User Guide <ug_label_text>`.

    A text names the class whose name it is, tried in this order; the first
    rule that matches decides, and a rule matched by two classes refuses the
    text as ambiguous:

    1. the name itself, character for character;
    2. the name up to surrounding white space and Unicode normalization (NFC);
    3. the same, ignoring case;
    4. a decimal number equal to a class named by a number (``7.0`` for the
       class ``7``: how pandas writes an integer label column with blanks);
    5. only with ``numbers=True`` (the keyboard and an oracle command):
       ``#k``, the class of score column ``k`` (from 0), and a bare whole
       number ``k`` when no class is named by a number.

    A name therefore always wins over a class number: with classes
    ``["1", "2", "3"]`` the text ``1`` is the class ``1``, and ``#1`` the
    class ``2``.

    Parameters
    ----------
    classes : sequence of str
        The class names, in score-column order.

    Examples
    --------
    >>> from skassess.session._label_parser import LabelParser
    >>> stars = LabelParser(["1", "2", "3"])
    >>> stars.parse("1"), stars.parse("3.0"), stars.parse("#0", numbers=True)
    (0, 2, 0)
    >>> LabelParser(["cat", "dog"]).parse("1", numbers=True)
    1
    """

    def __init__(self, classes):
        self.classes = [str(c) for c in classes]
        self._exact = {c: i for i, c in enumerate(self.classes)}
        self._keys = [_key(c) for c in self.classes]
        self._folded = [k.casefold() for k in self._keys]
        self._values = [_number(k) for k in self._keys]
        self.numeric_names = any(v is not None for v in self._values)

    def _matches(self, text, numbers):
        """The classes the first matching rule names (a list), or []."""
        if text in self._exact:
            return [self._exact[text]]
        key = _key(text)
        for keys, probe in ((self._keys, key), (self._folded, key.casefold())):
            hits = [i for i, k in enumerate(keys) if k == probe]
            if hits:
                return hits
        value = _number(key)
        if value is not None:
            hits = [i for i, v in enumerate(self._values) if v == value]
            if hits:
                return hits
        if numbers:
            digits = key[1:] if key.startswith("#") else ("" if self.numeric_names else key)
            if _WHOLE.fullmatch(digits) and int(digits) < len(self.classes):
                return [int(digits)]
        return []

    def names_class(self, text):
        """Whether ``text`` names a class by rules 1-3 (a class name, not a number)."""
        key = _key(text)
        return text in self._exact or key in self._keys or key.casefold() in self._folded

    def parse(self, text, *, numbers=False, where=None):
        """The class index ``text`` names.

        Parameters
        ----------
        text : str
        numbers : bool, default=False
            Whether ``#k`` (and a bare ``k`` when no class is named by a
            number) are read as class numbers.
        where : str, default=None
            What gave the text (a file's row and column, an item), for the
            error.

        Raises
        ------
        LabelError
            If the text names no class, or several.
        """
        if not isinstance(text, str):
            raise TypeError(f"A label's text must be a str; got {type(text).__name__}.")
        hits = self._matches(text, numbers)
        if len(hits) == 1:
            return hits[0]
        raise LabelError(self.message(text, hits, numbers=numbers, where=where))

    def parse_many(self, texts):
        """Class indices of many texts: ``-1`` names no class, ``-2`` several (for files).

        Each distinct text is read once, by :meth:`parse`'s rules without
        class numbers.
        """
        codes, uniques = pd.factorize(np.asarray(texts, dtype=object), use_na_sentinel=True)
        found = np.empty(len(uniques), dtype=np.int64)
        for j, text in enumerate(uniques.tolist()):
            hits = self._matches(str(text), False)
            found[j] = hits[0] if len(hits) == 1 else (-1 if not hits else -2)
        out = np.full(len(codes), -1, dtype=np.int64)
        known = codes >= 0
        out[known] = found[codes[known]]
        return out

    def message(self, text, hits=None, *, numbers=False, where=None):
        """Why ``text`` is not read as a class (for :meth:`parse_many`'s ``-1`` and ``-2``)."""
        if hits is None:
            hits = self._matches(text, numbers)
        prefix = f"{where}: the label" if where else "The label"
        shown = self.classes if len(self.classes) <= 20 else self.classes[:20] + ["..."]
        if len(hits) > 1:
            named = ", ".join(repr(self.classes[i]) for i in hits)
            return (
                f"{prefix} {text!r} could name several classes ({named}); give the class "
                f"name exactly as it is written. Classes: {shown!r}."
            )
        hint = ""
        if numbers:
            hint = " (or #k for the class of score column k, from 0)"
        elif _key(text).startswith("#") or (
            not self.numeric_names and _WHOLE.fullmatch(_key(text))
        ):
            hint = "; a file names classes, not class numbers"
        return f"{prefix} {text!r} is not a class{hint}. Classes: {shown!r}."

    def command(self, text):
        """The prompt command ``text`` gives (``"skip"``, ``"undo"``, ...), or None.

        A word that is also a class name is that class; ``:word`` is always
        the command.
        """
        key = _key(text).casefold()
        if key.startswith(":") and key[1:] in COMMANDS and text not in self._exact:
            return COMMANDS[key[1:]]
        if key in COMMANDS and not self.names_class(text):
            return COMMANDS[key]
        return None

    def shadowed_commands(self):
        """The command words that are class names here (typed as ``:word``)."""
        return sorted(w for w in COMMANDS if self.names_class(w))
