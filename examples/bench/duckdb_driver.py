# The DuckDB side of the heapdb bench: a psql-like loop over the duckdb
# Python package, so the harness drives DuckDB exactly as it drives psql.
#
# Usage: python3 duckdb_driver.py DB_FILE [MEMORY_LIMIT]
# Reads statements from stdin (a statement ends at a line ending in ';'),
# runs each, prints result rows '|'-separated, then `Time: 12.345 ms` when
# timing is on. Meta-commands on a line of their own: \timing on|off,
# \echo TEXT. Errors print `ERROR:  message`. Output is flushed after every
# statement so the harness can wait for its markers.
import sys
import time

import duckdb


def main():
    con = duckdb.connect(sys.argv[1])
    if len(sys.argv) > 2:
        con.execute("SET memory_limit = '%s'" % sys.argv[2])
    timing = False
    buf = []
    out = sys.stdout
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not buf and line.startswith("\\"):
            cmd, _, arg = line.partition(" ")
            if cmd == "\\echo":
                out.write(arg + "\n")
            elif cmd == "\\timing":
                timing = arg.strip() != "off"
            else:
                out.write("invalid command %s\n" % cmd)
            out.flush()
            continue
        if not buf and not line.strip():
            continue
        buf.append(line)
        if not line.rstrip().endswith(";"):
            continue
        sql = "\n".join(buf)
        buf = []
        start = time.perf_counter()
        try:
            rows = con.execute(sql).fetchall()
        except Exception as e:  # every DuckDB error becomes a psql-style line
            rows = []
            out.write("ERROR:  %s\n" % str(e).replace("\n", " "))
        elapsed = time.perf_counter() - start
        for row in rows:
            out.write("|".join("" if v is None else str(v) for v in row) + "\n")
        if timing:
            out.write("Time: %.3f ms\n" % (elapsed * 1000.0))
        out.flush()


if __name__ == "__main__":
    main()
