"""Progress on standard error: a run's named steps (once it passes 2 s), a labeling run's bar."""

import threading

__all__ = ["Steps", "progress_bar"]

#: Seconds before the line appears: a quick run prints nothing.
DELAY = 2.0


class Steps:
    """Named steps of a long run on a tqdm line, shown once the run has taken ``DELAY`` s.

    A timer shows the line when the run passes ``DELAY`` seconds, in the middle
    of a long step too; from then on each step and note shows as it starts.

    Parameters
    ----------
    total : int
        How many steps the run has.
    enabled : bool
        False: nothing is shown (and tqdm is not imported).
    """

    def __init__(self, total, enabled):
        self._bar = self._timer = None
        self._shown = False
        self._started = False
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, delay=DELAY, unit="step", leave=False)
            self._timer = threading.Timer(DELAY, self._show)
            self._timer.daemon = True
            self._timer.start()

    def _show(self):
        self._shown = True
        self._bar.refresh()

    def step(self, name):
        """Start the step ``name`` (the previous one is done)."""
        if self._bar is None:
            return
        if self._started:
            self._bar.update(1)
        self._started = True
        self._bar.set_description_str(name, refresh=self._shown)

    def note(self, text):
        """A detail of the current step (rows read so far, ...)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=self._shown)

    def close(self):
        if self._bar is not None:
            self._timer.cancel()
            if self._started:
                self._bar.update(1)
            self._bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _NoBar:
    def update(self, n):
        pass

    def set_postfix_str(self, text, refresh=True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress_bar(total, progress, desc="labels"):
    """A tqdm bar over ``total`` items, or one that shows nothing."""
    # Without a bar, no tqdm at all: tqdm takes a process-shared lock, which a
    # process killed while holding it would leave locked for forked siblings.
    if not progress:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc)
