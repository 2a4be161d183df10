"""Labeling sessions on disk, scores files and the HTML report.

:class:`LabelingSession` is an :class:`~skassess.ActiveAssessor` whose labels
are committed to an SQLite file one by one (the ``skassess label`` command's
format); :class:`ScoresFile` reads and checks a black box's scores file.
"""

from ._annotated_assessment import read_annotations
from ._assessment import FileAssessment, assess_file
from ._label_parser import LabelParser
from ._label_studio import (
    label_studio_config,
    label_studio_export,
    label_studio_tasks,
    read_label_studio_export,
)
from ._labeling import LabelingSession, task_answer  # noqa: F401 (deprecated; warns when called)
from ._migrate import migrate_session
from ._monitor_report import render_monitor_report, write_monitor_report
from ._monitoring import (  # noqa: F401 (read_stream ... stream_result: the command line's)
    MonitoredStream,
    monitor_files,
    read_stream,
    stream_monitor,
    stream_result,
)
from ._partitions import assess_partitions
from ._report import render_report, write_report
from ._scores_file import ScoresFile, ScoresTable, file_checksum
from ._session_loop import stop_rule  # noqa: F401 (deprecated; warns when called)
from ._unlabeled import META_METHODS
from ._web_app import labeling_app
from ._web_items import ItemImages

__all__ = [
    "META_METHODS",
    "LabelParser",
    "file_checksum",
    "FileAssessment",
    "assess_file",
    "assess_partitions",
    "LabelingSession",
    "MonitoredStream",
    "monitor_files",
    "ScoresFile",
    "ScoresTable",
    "migrate_session",
    "labeling_app",
    "label_studio_config",
    "label_studio_export",
    "label_studio_tasks",
    "read_label_studio_export",
    "ItemImages",
    "read_annotations",
    "render_report",
    "write_report",
    "render_monitor_report",
    "write_monitor_report",
]
