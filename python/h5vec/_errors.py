"""The error raised for files that do not follow SPEC.md."""

from __future__ import annotations

from typing import Optional


class FormatError(ValueError):
    """A file that does not follow the h5vec layout (SPEC.md), or a value
    that cannot be stored in it.

    ``path`` is the logical field path (``$``, ``$.a.b``, ``$.tags[]``);
    ``location`` is the HDF5 path of the object concerned (``/v/data/a/values``)
    or ``None``.
    """

    def __init__(self, path: str, location: Optional[str], message: str) -> None:
        self.path = path
        self.location = location
        self.message = message
        where = f"{path} ({location})" if location else path
        super().__init__(f"{where}: {message}")


def mismatch(path, location, expected, found):
    return FormatError(path, location, f"expected {expected}, found {found}")


class FileError(OSError):
    """The file itself cannot be opened as asked, said in one sentence that
    names it (the same words as the Rust library and the command): ``not an
    HDF5 file: PATH``, ``file truncated: 100,000 of 691,370 bytes present:
    PATH``, or that another process has it open for writing. An ``OSError``,
    as h5py's own errors for these files are; ``path`` is the file's path.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(message)

    def __str__(self) -> str:
        return self.args[0]
