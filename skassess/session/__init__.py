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


__getattr__ = private_names(
    __name__,
    {
        "LabelParser": "_label_parser",
        "META_METHODS": "_unlabeled",
        "file_checksum": "_scores_file",
    },
    "the documented names of skassess.session (LabelingSession, ScoresFile, assess_file)",
)
