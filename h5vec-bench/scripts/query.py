"""The Parquet peers of `src/bin/query.rs` (issue 30): the same ticks
(`ts` increasing by 1 ms from 2026-01-01, `id` SplitMix64 of the row
number, `price`, `qty` derived from it) written by pyarrow with its default
settings, queried by DuckDB (`SELECT * ... WHERE ts BETWEEN`, `WHERE id =
k`) and by `pandas.read_parquet(filters=...)`; and, when the h5vec Python
package has `filters=`, `h5vec.open_vector(...).to_pandas(filters=...)` on
the file `query.rs` wrote.

    python3 h5vec-bench/scripts/query.py --rows 20000000 --dir D [--reps 7] [--jsonl FILE]

Run it right after `query` on the same machine (`scripts/query.sh` runs
both): each mode's median of `--reps` timed runs after one warm-up, the
page cache warm. Every answer is checked.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np

T0_NS = 1_767_225_600 * 10**9


def splitmix(i):
    z = i.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def ticks(n):
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        ids = splitmix(i)
    return {
        "ts": (np.int64(T0_NS) + i.astype(np.int64) * 10**6).view("M8[ns]"),
        "id": ids,
        "price": (ids % np.uint64(100_000)).astype(np.float64) / 100.0,
        "qty": ((ids >> np.uint64(40)) % np.uint64(1000)).astype(np.uint32),
    }


def timed(f, reps):
    f()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        r = f()
        out.append(time.perf_counter() - t)
    return out, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--jsonl")
    a = ap.parse_args()
    import duckdb
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = a.rows
    path = os.path.join(a.dir, f"query-{n}.parquet")
    if not os.path.exists(path):
        pq.write_table(pa.table(ticks(n)), path)  # pyarrow's defaults
    lo = n * 4 // 10
    hi = lo + n // 1000
    ta = np.datetime64(T0_NS + lo * 10**6, "ns")
    tb = np.datetime64(T0_NS + (hi - 1) * 10**6, "ns")
    k = int(splitmix(np.array([n // 3], dtype=np.uint64))[0])
    con = duckdb.connect()
    results = {}

    def duck_window():
        return con.execute(
            f"SELECT * FROM '{path}' WHERE ts BETWEEN ? AND ?",
            [pd.Timestamp(ta).to_pydatetime(), pd.Timestamp(tb).to_pydatetime()],
        ).fetch_df()

    s, df = timed(duck_window, a.reps)
    assert len(df) == hi - lo, len(df)
    results["duckdb window"] = s

    def duck_id():
        return con.execute(f"SELECT * FROM '{path}' WHERE id = {k}").fetch_df()

    s, df = timed(duck_id, a.reps)
    assert len(df) == 1
    results["duckdb id==k"] = s

    def pandas_window():
        return pd.read_parquet(path, filters=[("ts", ">=", pd.Timestamp(ta)), ("ts", "<=", pd.Timestamp(tb))])

    s, df = timed(pandas_window, a.reps)
    assert len(df) == hi - lo
    results["pandas.read_parquet filters window"] = s

    h5 = os.path.join(a.dir, f"query-{n}.h5")
    try:
        import hdf5plugin  # noqa: F401  (Blosc, as the Rust side wrote it)
        import h5vec

        def h5vec_window():
            v = h5vec.open_vector(h5, "ticks")
            try:
                return v.to_pandas(
                    filters=[("ts", ">=", pd.Timestamp(ta, tz="UTC")), ("ts", "<=", pd.Timestamp(tb, tz="UTC"))]
                )
            finally:
                v.close()

        s, df = timed(h5vec_window, a.reps)
        assert len(df) == hi - lo, len(df)
        results["h5vec python to_pandas filters window"] = s
        # `query` built a SortedRows index on `id`: the package uses it.
        def h5vec_id():
            v = h5vec.open_vector(h5, "ticks")
            try:
                return v.to_pandas(filters=[("id", "==", k)])
            finally:
                v.close()

        s, df = timed(h5vec_id, a.reps)
        assert len(df) == 1, len(df)
        results["h5vec python to_pandas filters id==k (SortedRows)"] = s
    except (ImportError, TypeError) as e:
        print(f"h5vec python filters: not available ({e})")

    for mode, s in results.items():
        print(f"  {mode:<40} {statistics.median(s):>10.5f} s")
    if a.jsonl:
        with open(a.jsonl, "a") as f:
            for mode, s in results.items():
                for i, x in enumerate(s):
                    f.write(json.dumps({"bench": "query", "rows": n, "mode": mode, "pass": i + 1, "seconds": x}) + "\n")


if __name__ == "__main__":
    main()
