"""xgboost, imported on first use with an error that names the extra to install."""

__all__ = ["import_xgboost"]


def import_xgboost():
    """Return the ``xgboost`` module, or raise an ImportError naming ``skassess[meta]``."""
    try:
        import xgboost
    except ImportError as exc:
        raise ImportError(
            "This part of skassess.meta needs xgboost. Install it with "
            "pip install 'skassess[meta]' (the CPU-only xgboost-cpu wheel on Linux and "
            "Windows, xgboost on macOS)."
        ) from exc
    return xgboost
