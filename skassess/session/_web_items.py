"""What a labeling server shows of an item: an image from a folder, a text, a record.

An image is looked up by the item's id in the one folder named on the
command line, never by a path a request gives: the id must be a plain file
name (no separator, no ``..``), the file a regular file inside the folder
once every symbolic link is resolved, and of a raster type a browser shows
without running anything (PNG, JPEG, GIF, WebP; not SVG, which may hold
scripts).
"""

import os
from pathlib import Path

__all__ = ["IMAGE_TYPES", "ItemImages"]

#: The image files served, by suffix, with their media type.
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
#: The largest image served, in bytes.
MAX_IMAGE_BYTES = 32 << 20


class ItemImages:
    """The images of the items, one file per id in ``folder`` (``<id>.<png|jpg|...>``).

    Read more in the :ref:`User Guide <ug_labeling_team>`.

    Parameters
    ----------
    folder : path-like
        The folder named by ``--items``.

    Raises
    ------
    ValueError
        If ``folder`` is not a folder.
    """

    def __init__(self, folder):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ValueError(f"--items {folder}: not a folder.")
        self.root = self.folder.resolve()

    def path(self, item_id):
        """The image file of ``item_id`` and its media type, or None (no such image).

        Never a file outside the folder: an id with a separator or ``..``, a
        symbolic link that leads out, a file that is not regular or is larger
        than ``MAX_IMAGE_BYTES`` gives None.
        """
        name = str(item_id)
        if (
            not name
            or name in (".", "..")
            or "/" in name
            or "\\" in name
            or "\x00" in name
            or name != os.path.basename(name)
        ):
            return None
        for suffix, media in IMAGE_TYPES.items():
            candidate = self.folder / f"{name}{suffix}"
            try:
                real = candidate.resolve(strict=True)
            except (OSError, RuntimeError):
                continue
            if real.parent != self.root and self.root not in real.parents:
                continue
            try:
                info = real.stat()
            except OSError:
                continue
            if not os.path.isfile(real) or info.st_size > MAX_IMAGE_BYTES:
                continue
            return real, media
        return None
