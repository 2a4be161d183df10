"""User strings shown as they are: in plots, in HTML and on a terminal.

Class, group, model and column names come from the user's files. matplotlib
reads text between two ``$`` as mathematics (and fails on a malformed
formula); a terminal obeys control characters and bidirectional overrides.
Every user string passes through one of these functions before it is drawn
or printed (HTML is escaped by :func:`html.escape` / ``to_html(escape=True)``
in the report).
"""

__all__ = ["plot_text", "terminal_text"]


def plot_text(value):
    """``value`` as literal matplotlib text: every ``$`` is a dollar sign, never maths.

    matplotlib shows ``\\$`` as ``$`` and parses maths only between unescaped
    dollars, so escaping each one keeps any string literal. Control
    characters are shown as codes, as by :func:`terminal_text`.

    Examples
    --------
    >>> plot_text("$5-$10 band")
    '\\\\$5-\\\\$10 band'
    """
    return terminal_text(value).replace("$", r"\$")


def terminal_text(value):
    """``value`` safe to print: control and format characters (escapes, RTL overrides) as codes.

    Line breaks and tabs are kept; everything else that is not printable
    (ANSI escape sequences, NUL, bidirectional overrides such as U+202E)
    becomes its ``\\x..`` / ``\\u....`` code, so a name cannot rewrite the
    terminal or reorder what is shown.

    Examples
    --------
    >>> terminal_text("a\\x1b[2Jb\\u202ec")
    'a\\\\x1b[2Jb\\\\u202ec'
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)
