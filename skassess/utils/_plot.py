"""matplotlib axes for the displays, imported only when a plot is drawn (``skassess[plot]``)."""

__all__ = ["plot_axes"]


def plot_axes(ax, caller):
    """``ax``, or the axes of a new figure; a clear ImportError when matplotlib is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(f"{caller} needs matplotlib: pip install 'skassess[plot]'.") from exc

    if ax is None:
        _, ax = plt.subplots()
    return ax
