"""A progress line over a run's named steps, on standard error, once the run passes 2 s."""

__all__ = ["Steps"]

#: Seconds before the line appears: a quick run prints nothing.
DELAY = 2.0


class Steps:
    """Named steps of a long run, shown by tqdm (``delay``: only a run over 2 s shows).

    Parameters
    ----------
    total : int
        How many steps the run has.
    enabled : bool
        False: nothing is shown (and tqdm is not imported).
    """

    def __init__(self, total, enabled):
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, delay=DELAY, unit="step", leave=False)
        self._started = False

    def step(self, name):
        """Start the step ``name`` (the previous one is done)."""
        if self._bar is None:
            return
        if self._started:
            self._bar.update(1)
        self._started = True
        self._bar.set_description_str(name)

    def note(self, text):
        """A detail of the current step (rows read so far, ...)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def close(self):
        if self._bar is not None:
            if self._started:
                self._bar.update(1)
            self._bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
