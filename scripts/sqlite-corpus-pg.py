#!/usr/bin/env python3
"""Run SQLite's sqllogictest scripts (tests/sqlite/**/*.test) through PostgreSQL.

The files are SQLite's own format, vendored unmodified: records separated by
blank lines; `statement ok|error`; `query <types> [nosort|rowsort|valuesort]
[label]` with one result value per line after `----`, or `N values hashing
to <md5>` when a query returns more values than the file's `hash-threshold`
(8 when the file sets none); `skipif X` / `onlyif X` before a record;
`halt`. Records are run with the label `postgresql`.

A value is rendered from PostgreSQL's text output by its column's type
letter, as sqllogictest's ODBC harness reads it: `I` as an integer (the
leading integer of the text, `t`/`f` as 1/0), `R` as `%.3f`, `T` as the
text with bytes outside ' '..'~' turned into '@'; NULL is `NULL` and the
empty string `(empty)`. tests/sqlite_corpus.rs renders heapdb's values the
same way from the same text.

For every record whose PostgreSQL outcome differs from the file's expected
one (SQLite's), PostgreSQL's outcome is written to `<file>.pg` beside it:

    @ <line of the record's statement/query line> ok | error | rows
    <value lines, for rows>
    <blank line>

and the heapdb test takes those as the expected results. Each file runs on
a fresh database (collation C, the settings of scripts/slt-pg.py).

    scripts/sqlite-corpus-pg.py -H /tmp/pgsock -p 54315 --write tests/sqlite
    scripts/sqlite-corpus-pg.py -H /tmp/pgsock -p 54315 tests/sqlite/select1.test

Without --write it compares PostgreSQL with `<file>.pg` (or, where the file
has none, SQLite's answers) and reports differences; it also prints, per
file, the records run, how many agree with SQLite, and PostgreSQL's time.
"""

import argparse
import hashlib
import importlib.util
import os
import re
import sys
import time

LABEL = "postgresql"
_spec = importlib.util.spec_from_file_location(
    "slt_pg", os.path.join(os.path.dirname(os.path.abspath(__file__)), "slt-pg.py"))
slt_pg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(slt_pg)


class Rec:
    def __init__(self, line, kind, args, sql, expected):
        self.line = line  # 1-based line of the statement/query line
        self.kind = kind  # statement | query | hash-threshold | halt
        self.args = args  # tokens after the kind
        self.sql = sql
        self.expected = expected  # statement: "ok"/"error"; query: list of lines


def parse(text):
    """Yield the records that run under LABEL (conditions applied)."""
    lines = text.split("\n")
    i, n = 0, len(lines)
    out = []
    while i < n:
        if not lines[i].strip() or lines[i].startswith("#"):
            i += 1
            continue
        skip = False
        while True:
            tok = lines[i].split()
            if tok[0] == "skipif":
                skip = skip or tok[1].lower() == LABEL
            elif tok[0] == "onlyif":
                skip = skip or tok[1].lower() != LABEL
            else:
                break
            i += 1
        start = i
        tok = lines[i].split()
        i += 1
        body = []
        while i < n and lines[i].strip():
            body.append(lines[i])
            i += 1
        if skip:
            continue
        kind = tok[0]
        if kind == "statement":
            out.append(Rec(start + 1, kind, tok[1:], "\n".join(body), tok[1]))
        elif kind == "query":
            sep = body.index("----") if "----" in body else len(body)
            out.append(Rec(start + 1, kind, tok[1:], "\n".join(body[:sep]), body[sep + 1:]))
        elif kind in ("hash-threshold", "halt"):
            out.append(Rec(start + 1, kind, tok[1:], "", None))
            if kind == "halt":
                break
        else:
            raise SystemExit(f"line {start + 1}: unknown record {kind!r}")
    return out


def leading_int(s):
    m = re.match(r"\s*([+-]?\d+)", s)
    return int(m.group(1)) if m else 0


def leading_float(s):
    m = re.match(r"\s*([+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|Infinity|NaN))", s)
    if not m:
        return 0.0
    t = m.group(1)
    return float(t.replace("Infinity", "inf"))


def render(value, letter):
    """One value (PostgreSQL's text, None for NULL) as the C harness prints it."""
    if value is None:
        return "NULL"
    if letter == "I":
        if value in ("t", "f"):
            return "1" if value == "t" else "0"
        return str(leading_int(value))
    if letter == "R":
        if value in ("t", "f"):
            value = "1" if value == "t" else "0"
        r = "%.3f" % leading_float(value)
        return {"inf": "inf", "-inf": "-inf", "nan": "nan", "-nan": "-nan"}.get(r, r)
    if value == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" * len(c.encode()) for c in value)


def result_lines(rows, types, sort, threshold):
    """The lines a query's result is compared as (values or their hash)."""
    if any(len(r) != len(types) for r in rows):
        return ["wrong number of columns"]
    rows = [[render(v, t) for v, t in zip(r, types)] for r in rows]
    if sort == "rowsort":
        rows.sort(key=lambda r: [v.encode() for v in r])
        values = [v for r in rows for v in r]
    elif sort == "valuesort":
        values = sorted((v for r in rows for v in r), key=lambda v: v.encode())
    else:
        values = [v for r in rows for v in r]
    if threshold > 0 and len(values) > threshold:
        h = hashlib.md5()
        for v in values:
            h.update(v.encode() + b"\n")
        return [f"{len(values)} values hashing to {h.hexdigest()}"]
    return values


def read_overrides(path):
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    for b in blocks:
        ls = [l for l in b.split("\n") if not l.startswith("#")]
        if not ls or not ls[0].startswith("@ "):
            continue
        _, line, what = ls[0].split(" ", 2)
        out[int(line)] = what if what != "rows" else ls[1:]
    return out


def run_query(conn, sql):
    """(error, rows): rows as lists of text values, None for NULL."""
    o = conn.run_raw(sql)
    if o.error is not None:
        return True, None
    rows = [[None if v == "NULL" else ("" if v == "(empty)" else v) for v in r] for r in o.rows]
    return False, rows


def run_file(args, path):
    with open(path, encoding="utf-8") as f:
        recs = parse(f.read())
    over_path = path + ".pg"
    old = read_overrides(over_path)
    stem = re.sub(r"[^a-z0-9_]", "_", os.path.relpath(path, args.root).lower())[:50]
    dbname = f"sqlite_{stem}"
    slt_pg.admin(args, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    slt_pg.admin(args, f"CREATE DATABASE {dbname} TEMPLATE template0 ENCODING 'UTF8' "
                 f"LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'")
    for name, value in slt_pg.DB_SETTINGS:
        slt_pg.admin(args, f"ALTER DATABASE {dbname} SET {name} TO {value}")
    conn = slt_pg.Psql(slt_pg.conninfo(args, dbname), args.timeout)
    threshold = 8
    new, ran, agree, diffs = [], 0, 0, 0
    t0 = time.monotonic()
    try:
        for r in recs:
            if r.kind == "halt":
                break
            if r.kind == "hash-threshold":
                threshold = int(r.args[0])
                continue
            ran += 1
            err, rows = run_query(conn, r.sql)
            if r.kind == "statement":
                got = "error" if err else "ok"
                same = got == r.expected
            else:
                types = r.args[0]
                sort = r.args[1] if len(r.args) > 1 else "nosort"
                got = "error" if err else result_lines(rows, types, sort, threshold)
                same = got == r.expected
            agree += same
            if not same:
                new.append((r.line, got))
            want = old.get(r.line, r.expected)
            if not args.write and got != want:
                diffs += 1
                print(f"{path}:{r.line}: PostgreSQL gives {got!r}, expected {want!r}\n    {r.sql}")
    finally:
        conn.close()
        slt_pg.admin(args, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    secs = time.monotonic() - t0
    if args.write:
        if new:
            with open(over_path, "w", encoding="utf-8") as f:
                f.write(f"# PostgreSQL 15's answers where they differ from {os.path.basename(path)}'s\n"
                        "# (written by scripts/sqlite-corpus-pg.py --write; never edit by hand)\n\n")
                for line, got in new:
                    if isinstance(got, list):
                        f.write(f"@ {line} rows\n" + "".join(v + "\n" for v in got) + "\n")
                    else:
                        f.write(f"@ {line} {got}\n\n")
        elif os.path.exists(over_path):
            os.remove(over_path)
    print(f"{os.path.relpath(path, args.root)}: {ran} records, {agree} agree with SQLite, "
          f"{ran - agree} PostgreSQL answers differ, PostgreSQL {secs:.1f}s"
          + ("" if args.write else f", {diffs} differ from the expected files"))
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("-H", "--host", default=os.environ.get("PGHOST"))
    ap.add_argument("-p", "--port", default=os.environ.get("PGPORT"))
    ap.add_argument("-U", "--user", default=os.environ.get("PGUSER", "postgres"))
    ap.add_argument("--write", action="store_true", help="write the <file>.pg overrides")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    args.root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "sqlite")
    paths = args.paths or [args.root]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, fs in os.walk(p):
                files.extend(os.path.join(d, f) for f in fs if f.endswith(".test"))
        else:
            files.append(p)
    total = 0
    for f in sorted(files):
        total += run_file(args, os.path.normpath(f))
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
