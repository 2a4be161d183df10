"""Where a scores file is: a local path, or a URL read through fsspec.

A scores file named by a URL (``s3://bucket/scores.parquet``, ``gs://``, ``abfs://``,
``hdfs://``, ``file://``, ``memory://``, ...) is read through fsspec, with the
filesystem package the user installed for it (``s3fs``, ``gcsfs``, ``adlfs``, ...);
a plain path through the operating system. Either is opened only for reading.
"""

import gzip
import re
from pathlib import Path, PurePosixPath

__all__ = ["UrlPath", "as_location", "expand_glob", "file_size", "is_file", "open_binary"]

#: ``protocol://``: two or more letters (a Windows drive letter is one).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


class UrlPath:
    """A file named by a URL: its text as given, its name and suffix."""

    def __init__(self, url):
        self.url = str(url)
        self._tail = PurePosixPath(self.url.split("://", 1)[1].split("?", 1)[0])

    @property
    def name(self):
        return self._tail.name

    @property
    def suffix(self):
        return self._tail.suffix

    def __str__(self):
        return self.url

    def __repr__(self):
        return f"UrlPath({self.url!r})"

    def __eq__(self, other):
        return isinstance(other, UrlPath) and other.url == self.url

    def __hash__(self):
        return hash(self.url)


def as_location(path):
    """``path`` as a :class:`UrlPath` if it is a URL, else a :class:`pathlib.Path`."""
    if isinstance(path, UrlPath | Path):
        return path
    return UrlPath(path) if _URL.match(str(path)) else Path(path)


def _filesystem(location):
    try:
        import fsspec
    except ImportError as exc:
        raise ImportError(
            f"{location}: reading a URL needs fsspec and the package of its filesystem "
            '(pip install "skassess[dask]" s3fs, gcsfs, adlfs, ...).'
        ) from exc
    try:
        return fsspec.core.url_to_fs(str(location))
    except (ImportError, ValueError) as exc:
        raise ImportError(f"{location}: no filesystem for this URL ({exc}).") from exc


def is_file(location):
    """Whether ``location`` is an existing file."""
    if isinstance(location, UrlPath):
        fs, path = _filesystem(location)
        return fs.isfile(path)
    return location.is_file()


def file_size(location):
    """The size of the file at ``location`` in bytes."""
    if isinstance(location, UrlPath):
        fs, path = _filesystem(location)
        return int(fs.size(path))
    return location.stat().st_size


def open_binary(location, *, decompress=False):
    """The file at ``location`` opened for reading bytes (a ``.gz`` file decompressed
    with ``decompress``)."""
    gz = decompress and str(location).endswith(".gz")
    if isinstance(location, UrlPath):
        fs, path = _filesystem(location)
        raw = fs.open(path, "rb")
        return gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
    return gzip.open(location, "rb") if gz else open(location, "rb")  # noqa: SIM115


def expand_glob(pattern):
    """The files a glob names, sorted: local paths, or URLs of the pattern's filesystem."""
    import glob

    if not glob.has_magic(pattern):
        return [pattern]
    location = as_location(pattern)
    if isinstance(location, UrlPath):
        fs, path = _filesystem(location)
        return sorted(fs.unstrip_protocol(p) for p in fs.glob(path) if fs.isfile(p))
    return sorted(p for p in glob.glob(pattern) if Path(p).is_file())
