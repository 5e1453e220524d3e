"""h5vec for Python: read and write the vectors of the Rust library h5vec
(the HDF5Vectors layout, SPEC.md) into numpy, pandas, pyarrow, polars and Dask.

    import h5vec
    v = h5vec.open_vector("file.h5", "measurements")
    df = v.to_pandas()
    first = v[:100]                                     # v.read(rows=slice(0, 100))
    t = h5vec.open_table("file.h5", "table")            # h5col tables and VLS string arrays
    s = h5vec.open_strings("file.h5", "names")          # read the same way
    ds = h5vec.open_dataset("logs/*.h5", "events")      # many files as one vector
    h5vec.save_vector("out.h5", "events", table)        # a pyarrow.Table, DataFrame or dict of arrays
    h5vec.build_index("out.h5", "events", "id", "sorted-rows")  # then filters=[("id", "==", 7)] uses it

Pure Python on h5py and numpy: it shares h5py's HDF5 library in the process.
"""

from ._dataset import Dataset, DatasetFile, open_dataset
from ._errors import FileError, FormatError
from ._indexes import build_index, drop_index, list_indexes
from ._schema import Node
from ._tables import StringArray, Table, open_strings, open_table, read_strings, read_table
from ._validate import validate
from ._vector import Vector, list_vectors, open_vector
from ._write import append_vector, save_vector

__version__ = "0.1.0"

__all__ = [
    "Dataset",
    "DatasetFile",
    "FileError",
    "FormatError",
    "Node",
    "StringArray",
    "Table",
    "Vector",
    "append_vector",
    "build_index",
    "drop_index",
    "list_indexes",
    "list_vectors",
    "open_dataset",
    "open_strings",
    "open_table",
    "open_vector",
    "read_strings",
    "read_table",
    "save_vector",
    "validate",
]
