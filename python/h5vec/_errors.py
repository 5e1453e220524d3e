"""The error raised for files that do not follow SPEC.md."""


class FormatError(ValueError):
    """A file that does not follow the h5vec layout (SPEC.md), or a value
    that cannot be stored in it.

    ``path`` is the logical field path (``$``, ``$.a.b``, ``$.tags[]``);
    ``location`` is the HDF5 path of the object concerned (``/v/data/a/values``)
    or ``None``.
    """

    def __init__(self, path, location, message):
        self.path = path
        self.location = location
        self.message = message
        where = f"{path} ({location})" if location else path
        super().__init__(f"{where}: {message}")


def mismatch(path, location, expected, found):
    return FormatError(path, location, f"expected {expected}, found {found}")
