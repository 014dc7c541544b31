"""The demo's last step: wait until the dlt sink has loaded every line of the sample file into DuckDB, then
print the table (read-only: the worker may still hold the file between loads)."""

from __future__ import annotations

import argparse
import sys
import time


def loaded(database: str, table: str) -> tuple[list[str], list[tuple]] | None:
    import duckdb

    try:
        with duckdb.connect(database, read_only=True) as connection:
            cursor = connection.execute(f"SELECT * EXCLUDE (_dlt_id, _dlt_load_id) FROM {table} ORDER BY 1")
            return [d[0] for d in cursor.description], cursor.fetchall()
    except (duckdb.IOException, duckdb.CatalogException):
        return None  # not created yet, or the sink is writing to it right now


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database", default="/tmp/connect-demo/orders.duckdb")
    parser.add_argument("--table", default="demo.orders")
    parser.add_argument("--expect", type=int, required=True, help="rows to wait for")
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args()
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        result = loaded(args.database, args.table)
        if result is not None and len(result[1]) >= args.expect:
            columns, rows = result
            widths = [max(len(str(c)), *(len(str(r[i])) for r in rows)) for i, c in enumerate(columns)]
            print(" | ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)))
            print("-+-".join("-" * w for w in widths))
            for row in rows:
                print(" | ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)))
            print(f"\n{len(rows)} rows in {args.table} of {args.database}")
            return 0
        time.sleep(0.5)
    print(f"timed out after {args.timeout:.0f}s waiting for {args.expect} rows in {args.table}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
