"""Labeling sessions on disk, scores files and the HTML report.

:class:`LabelingSession` is an :class:`~skassess.ActiveAssessor` whose labels
are committed to an SQLite file one by one (the ``skassess label`` command's
format); :class:`ScoresFile` reads and checks a black box's scores file.
"""

from ..utils._deprecation import private_names
from ._assessment import FileAssessment, assess_file
from ._labeling import LabelingSession, task_answer  # noqa: F401 (deprecated; warns when called)
from ._migrate import migrate_session
from ._report import render_report, write_report
from ._scores_file import ScoresFile, ScoresTable
from ._session_loop import stop_rule  # noqa: F401 (deprecated; warns when called)

__all__ = [
    "FileAssessment",
    "assess_file",
    "LabelingSession",
    "ScoresFile",
    "ScoresTable",
    "migrate_session",
    "render_report",
    "write_report",
]


def _private(module, name):
    def get():
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{module}"), name)

    return get


__getattr__ = private_names(
    __name__,
    {
        "LabelParser": _private("_label_parser", "LabelParser"),
        "META_METHODS": _private("_unlabeled", "META_METHODS"),
        "file_checksum": _private("_scores_file", "file_checksum"),
    },
    "the documented names of skassess.session (LabelingSession, ScoresFile, assess_file)",
)
