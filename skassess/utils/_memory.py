"""Refuse, before making them, arrays of posterior draws that cannot fit in memory."""

import os

from ..exceptions import DrawMemoryError

__all__ = ["available_memory", "check_draw_memory"]

#: Bytes of temporaries per float of a draws array (the draws, the rates they
#: come from, a quantile's sort): the check asks for this much per number.
BYTES_PER_DRAW = 3 * 8


def available_memory():
    """Bytes of memory available to a new allocation (Linux: MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not on this system: no check
        return None


def check_draw_memory(n_draws, width, caller, what):
    """Raise :class:`DrawMemoryError` when ``n_draws x width`` draws cannot fit.

    The size is compared with the memory available now; where that is
    unknown, nothing is checked.
    """
    needed = int(n_draws) * int(width) * BYTES_PER_DRAW
    available = available_memory()
    if available is None or needed <= available:
        return
    fits = max(1, available // (int(width) * BYTES_PER_DRAW))
    raise DrawMemoryError(
        f"{caller}: {n_draws:,} draws of {width:,} {what} need about {_size(needed)}, "
        f"more than the {_size(available)} of memory available; ask for at most "
        f"n_draws={fits:,}, or assess fewer {what}."
    )


def _size(n_bytes):
    return f"{n_bytes / 1e9:.1f} GB" if n_bytes >= 1e9 else f"{n_bytes / 1e6:.0f} MB"
