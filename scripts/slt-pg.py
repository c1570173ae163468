#!/usr/bin/env python3
"""Check (or regenerate) heapdb's sqllogictest files against a PostgreSQL server.

Usage:
    scripts/slt-pg.py [options] [FILE_OR_DIR ...]      (default: tests/slt)

Options:
    -H, --host HOST     server host or socket directory   (default: $PGHOST, else psql's default)
    -p, --port PORT     server port                       (default: $PGPORT, else 5432)
    -U, --user USER     user with CREATEDB                (default: $PGUSER, else postgres)
    --rewrite           write PostgreSQL's results back into the files
    --lint              check the files' form only (no server): every error record
                        has a regex and a `# SQLSTATE` comment, every query has
                        column types, and a multi-row query without ORDER BY
                        uses rowsort (warning: it may be deterministic anyway)
    --keep-db           do not drop the per-file databases afterwards (for debugging)
    --timeout SECS      give up on a record that takes longer (default 30; a blocked
                        statement means the file waits on a lock it holds itself)
    --ctype LOCALE      LC_CTYPE of the per-file databases (default C.UTF-8)
    -v, --verbose       print every record as it runs

Example (a throwaway cluster, as tests/slt/README.md shows):
    scripts/slt-pg.py -H /tmp -p 54332 -U postgres              # report differences
    scripts/slt-pg.py -H /tmp -p 54332 -U postgres --rewrite    # regenerate expectations

Each file runs in a fresh database `slt_<file stem>` (created, then dropped), in
UTF8 with collation C (byte order) and LC_CTYPE C.UTF-8 (--ctype), with TimeZone UTC, DateStyle 'ISO, MDY', IntervalStyle postgres and lc_messages C pinned
on the database. Every connection (the default one, and each `connection NAME`)
is one psql process driven over a pipe. Only python3's standard library and the
psql client are needed.

The script understands the sqllogictest-rs record format: `statement ok|count N|
error <regex>`, `query <types> [nosort|rowsort] [label]` / `query error <regex>`,
`connection NAME` (applies to the next record only, as in sqllogictest-rs),
`skipif`/`onlyif LABEL` (this engine's labels: postgres, postgresql), `halt`,
`sleep`, `subtest`, `hash-threshold`, `control`, and `#` comments. A comment line
`# SQLSTATE XXXXX` before a record names the SQLSTATE its error must have.

Rendering (the conventions of tests/slt/README.md): values as psql prints them,
NULL as `NULL`, the empty string as `(empty)`, one row per line with values
separated by one space; column types I (smallint, integer, bigint), R (real,
double precision, numeric), T (everything else); rowsort sorts rows as
sqllogictest-rs does (lexicographically by the rendered values).

--rewrite keeps everything outside the records, keeps an error regex that still
matches (an empty or non-matching one is replaced by PostgreSQL's whole message,
escaped), and adds, updates or removes the `# SQLSTATE` comment of each record.

Exit status: 0 when every record matches (or after a rewrite), 1 on differences,
2 on usage or connection problems.
"""

import argparse
import os
import re
import select
import subprocess
import sys
import time

FIELD_SEP = "\x1f"
RECORD_SEP = "\x1e"
MARKER = "@@SLT-END@@"
LABELS = {"postgres", "postgresql"}
SQLSTATE_COMMENT = re.compile(r"^#\s*SQLSTATE\s+([0-9A-Z]{5})\s*$")
INT_TYPES = {"smallint", "integer", "bigint"}
FLOAT_TYPES = {"real", "double precision"}
DB_SETTINGS = [
    ("timezone", "'UTC'"),
    ("datestyle", "'ISO, MDY'"),
    ("intervalstyle", "'postgres'"),
    ("lc_messages", "'C'"),
    ("extra_float_digits", "1"),
]


class SltError(Exception):
    """A problem with the file itself or the server (not a result difference)."""


# ----------------------------------------------------------------------------
# Parsing: records keep their line span so --rewrite can replace them in place.
# ----------------------------------------------------------------------------


class Record:
    """One statement or query record of an .slt file."""

    def __init__(self, kind, line_no):
        self.kind = kind  # "statement" or "query"
        self.line_no = line_no  # 1-based line of the header
        self.first = line_no - 1  # 0-based index of the first line of its prefix
        self.header = line_no - 1  # 0-based index of the header line
        self.end = None  # 0-based index one past its last line (results included)
        self.sql = ""
        self.expect = None  # "ok", "count", "error", "results"
        self.count = None
        self.regex = ""  # inline error regex, "" when none
        self.multiline_error = None
        self.types = ""
        self.sort_mode = None
        self.label = None
        self.results = []
        self.connection = "default"
        self.conditions = []
        self.sqlstate = None  # from a "# SQLSTATE" comment
        self.sqlstate_line = None  # 0-based index of that comment


def read_sql(lines, i):
    """Read SQL lines from index i until a blank line or ----; return (sql, i, saw_delim)."""
    if i >= len(lines):
        raise SltError("unexpected end of file, SQL expected")
    out = [lines[i]]
    i += 1
    while i < len(lines):
        line = lines[i]
        if line == "":
            return "\n".join(out), i, False
        if line == "----":
            return "\n".join(out), i + 1, True
        out.append(line)
        i += 1
    return "\n".join(out), i, False


def parse_file(text):
    """Parse an .slt file into (lines, items); items are Records and ("halt", idx) marks."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    items = []
    conditions = []
    connection = "default"
    prefix_start = None  # first control/comment line belonging to the next record
    sqlstate = None
    sqlstate_line = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            m = SQLSTATE_COMMENT.match(line)
            if m:
                sqlstate, sqlstate_line = m.group(1), i
            if prefix_start is None:
                prefix_start = i
            i += 1
            continue
        if line == "":
            i += 1
            continue
        tokens = line.split()
        if not tokens:
            i += 1
            continue
        head = tokens[0]
        where = f"line {i + 1}"
        if head in ("skipif", "onlyif") and len(tokens) == 2:
            conditions.append((head, tokens[1]))
            prefix_start = i if prefix_start is None else prefix_start
            i += 1
        elif head == "connection" and len(tokens) == 2:
            connection = tokens[1]
            prefix_start = i if prefix_start is None else prefix_start
            i += 1
        elif head == "halt" and len(tokens) == 1:
            items.append(("halt", i))
            break
        elif head in ("subtest", "include", "hash-threshold", "control") or (
            head == "sleep" and len(tokens) == 2
        ):
            if head == "include":
                raise SltError(f"{where}: include is not supported by this script")
            if head == "sleep":
                items.append(("sleep", tokens[1]))
            prefix_start, sqlstate, sqlstate_line = None, None, None
            i += 1
        elif head in ("statement", "query"):
            rec = Record(head, i + 1)
            rec.first = prefix_start if prefix_start is not None else i
            rec.conditions, rec.connection = conditions, connection
            rec.sqlstate, rec.sqlstate_line = sqlstate, sqlstate_line
            conditions, connection = [], "default"
            prefix_start, sqlstate, sqlstate_line = None, None, None
            rest = tokens[1:]
            if head == "statement":
                if rest == ["ok"]:
                    rec.expect = "ok"
                elif len(rest) == 2 and rest[0] == "count" and rest[1].isdigit():
                    rec.expect, rec.count = "count", int(rest[1])
                elif rest and rest[0] == "error":
                    rec.expect, rec.regex = "error", " ".join(rest[1:])
                else:
                    raise SltError(f"{where}: invalid line {line!r}")
            else:
                if rest and rest[0] == "error":
                    rec.expect, rec.regex = "error", " ".join(rest[1:])
                else:
                    rec.expect = "results"
                    if rest:
                        rec.types = rest[0]
                        if not re.fullmatch(r"[ITR]+", rec.types):
                            raise SltError(f"{where}: invalid type string {rec.types!r}")
                    if len(rest) > 1:
                        if rest[1] not in ("nosort", "rowsort", "valuesort"):
                            raise SltError(f"{where}: invalid sort mode {rest[1]!r}")
                        rec.sort_mode = rest[1]
                    if len(rest) > 2:
                        rec.label = rest[2]
            rec.sql, i, delim = read_sql(lines, i + 1)
            if delim:
                if rec.expect == "results":
                    while i < len(lines) and lines[i] != "":
                        rec.results.append(lines[i])
                        i += 1
                elif rec.expect == "error" and rec.regex == "":
                    msg = []
                    while i < len(lines):
                        if lines[i] == "" and (i + 1 >= len(lines) or lines[i + 1] == ""):
                            i += 2
                            break
                        msg.append(lines[i])
                        i += 1
                    rec.multiline_error = "\n".join(msg).strip()
                else:
                    raise SltError(f"{where}: a statement has no results, use query")
            rec.end = i
            items.append(rec)
        else:
            raise SltError(f"{where}: invalid line {line!r}")
    return lines, items


# ----------------------------------------------------------------------------
# Running: one psql process per connection.
# ----------------------------------------------------------------------------


class Outcome:
    """What PostgreSQL did with one record."""

    def __init__(self):
        self.error = None  # primary message when it failed
        self.sqlstate = None
        self.rows = []  # list of lists of rendered values
        self.row_count = 0
        self.types = ""


class Psql:
    """A psql process kept open for one connection, driven record by record."""

    def __init__(self, conninfo, timeout):
        self.timeout = timeout
        self.proc = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0",
             "-F", FIELD_SEP, "-R", RECORD_SEP, "-P", "null=NULL", "-P", "footer=off",
             conninfo],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.buf = b""
        # Fail early (with the reason) when the server is unreachable.
        out = self.run_raw("select 1")
        if out.error is not None:
            raise SltError(f"cannot run a query on {conninfo}: {out.error}")

    def _read_until_marker(self):
        marker = ("\n" + MARKER).encode()
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while True:
            pos = (b"\n" + self.buf).find(marker)
            if pos >= 0:
                nl = self.buf.find(b"\n", pos + len(MARKER))
                if nl >= 0:
                    body = self.buf[:pos]
                    tail = self.buf[pos + len(MARKER):nl]
                    self.buf = self.buf[nl + 1:]
                    return body.decode("utf-8", "replace"), tail.decode("utf-8", "replace")
            left = deadline - time.monotonic()
            if left <= 0:
                raise SltError(f"no answer from psql within {self.timeout}s (statement blocked?)")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise SltError("psql exited (connection lost?)")
                self.buf += chunk

    def _send(self, text):
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except BrokenPipeError as e:
            raise SltError("psql exited (connection lost?)") from e

    def run_raw(self, sql):
        """Run one SQL statement; return its Outcome (rows without types)."""
        sql = sql.rstrip()
        if sql.endswith(";"):
            sql = sql[:-1]
        self._send(sql + "\n\\g\n\\echo " + MARKER + " :ERROR :SQLSTATE :ROW_COUNT :LAST_ERROR_MESSAGE\n")
        body, tail = self._read_until_marker()
        parts = tail.strip().split(" ", 3)
        out = Outcome()
        if parts[0] == "true":
            out.sqlstate = parts[1]
            out.error = parts[3] if len(parts) > 3 else ""
            return out
        out.row_count = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0
        if body != "":
            if body.endswith("\n"):
                body = body[:-1]
            for raw in body.split(RECORD_SEP):
                out.rows.append(["(empty)" if v == "" else v for v in raw.split(FIELD_SEP)])
        return out

    def describe(self, sql):
        """Column type letters of a query, from psql's \\gdesc (prepares, never executes)."""
        sql = sql.rstrip()
        if sql.endswith(";"):
            sql = sql[:-1]
        self._send(sql + "\n\\gdesc\n\\echo " + MARKER + " :ERROR\n")
        body, tail = self._read_until_marker()
        if tail.strip() != "false" or FIELD_SEP not in body:
            return ""  # failed, or a command without a result (psql says so in words)
        letters = []
        for raw in body.rstrip("\n").split(RECORD_SEP):
            typ = raw.split(FIELD_SEP)[-1]
            if typ in INT_TYPES:
                letters.append("I")
            elif typ in FLOAT_TYPES or typ == "numeric" or typ.startswith("numeric("):
                letters.append("R")
            else:
                letters.append("T")
        return "".join(letters)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def conninfo(args, dbname):
    parts = [f"dbname={dbname}"]
    if args.host:
        parts.append(f"host={args.host}")
    if args.port:
        parts.append(f"port={args.port}")
    if args.user:
        parts.append(f"user={args.user}")
    return " ".join(parts)


def admin(args, sql):
    res = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql, conninfo(args, "postgres")],
        capture_output=True, text=True,
    )
    if res.returncode != 0:
        raise SltError(f"{sql}: {res.stderr.strip()}")


def normalize(s):
    return " ".join(s.split())


def render_rows(rows, sort_mode):
    rows = [list(r) for r in rows]
    if sort_mode == "rowsort":
        rows.sort(key=lambda r: [v.encode() for v in r])
    elif sort_mode == "valuesort":
        values = sorted((v for r in rows for v in r), key=lambda v: v.encode())
        rows = [[v] for v in values]
    return [" ".join(normalize(v) for v in r) for r in rows]


def escape_regex(msg):
    return re.sub(r"([\\.^$|?*+()\[\]{}])", r"\\\1", msg)


# ----------------------------------------------------------------------------
# Checking and rewriting one file.
# ----------------------------------------------------------------------------


def check_record(rec, out):
    """Return a list of difference descriptions (empty when the record matches)."""
    diffs = []
    if rec.expect == "error":
        if out.error is None:
            diffs.append("expected an error, but it succeeded")
        elif rec.multiline_error is not None and rec.multiline_error != out.error:
            diffs.append(f"error message differs: got {out.error!r}")
        elif rec.regex and not re.search(rec.regex, out.error):
            diffs.append(f"error {out.error!r} does not match /{rec.regex}/")
        if out.error is not None and rec.sqlstate and rec.sqlstate != out.sqlstate:
            diffs.append(f"SQLSTATE {out.sqlstate}, expected {rec.sqlstate}")
        return diffs
    if out.error is not None:
        return [f"failed: {out.error} (SQLSTATE {out.sqlstate})"]
    if rec.sqlstate:
        diffs.append(f"has a '# SQLSTATE {rec.sqlstate}' comment but succeeded")
    if rec.expect == "count" and rec.count != out.row_count:
        diffs.append(f"affected {out.row_count} rows, expected {rec.count}")
    if rec.expect == "results":
        if rec.types != out.types:
            diffs.append(f"column types {out.types}, expected {rec.types}")
        actual = render_rows(out.rows, rec.sort_mode)
        expected = [normalize(r) for r in rec.results]
        if actual != expected:
            diffs.append("results differ:\n" + "\n".join(
                ["    expected:"] + [f"      {r}" for r in expected]
                + ["    actual:"] + [f"      {r}" for r in actual]))
    return diffs


def rewrite_record(rec, out, lines):
    """Return the new lines of a record (from its prefix start to its end)."""
    prefix = lines[rec.first:rec.header]
    prefix = [line for i, line in enumerate(prefix, rec.first) if i != rec.sqlstate_line]
    if out.error is not None:
        # Keep the comment where it was, or put it before the control lines.
        comment = f"# SQLSTATE {out.sqlstate}"
        if rec.sqlstate_line is not None:
            prefix.insert(rec.sqlstate_line - rec.first, comment)
        else:
            at = 0
            while at < len(prefix) and prefix[at].startswith("#"):
                at += 1
            prefix.insert(at, comment)
        regex = rec.regex if rec.regex and re.search(rec.regex, out.error) else escape_regex(out.error)
        if "\n" in regex:
            raise SltError(f"line {rec.line_no}: multi-line error message {out.error!r}")
        return prefix + [f"{rec.kind} error {regex}"] + rec.sql.split("\n")
    if rec.kind == "statement":
        head = f"statement count {out.row_count}" if rec.expect == "count" else "statement ok"
        return prefix + [head] + rec.sql.split("\n")
    head = "query " + (out.types or "T")
    if rec.sort_mode:
        head += " " + rec.sort_mode
    if rec.label:
        head += " " + rec.label
    rows = render_rows(out.rows, rec.sort_mode)
    for r in rows:
        if r == "":
            raise SltError(f"line {rec.line_no}: a row renders as a blank line; change the query")
    return prefix + [head] + rec.sql.split("\n") + ["----"] + rows


def skipped(rec):
    for cond, label in rec.conditions:
        if cond == "skipif" and label in LABELS:
            return True
        if cond == "onlyif" and label not in LABELS:
            return True
    return False


def run_file(args, path):
    """Run one file; return the number of differing records."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        lines, items = parse_file(text)
    except SltError as e:
        print(f"{path}: {e}")
        return 1
    stem = re.sub(r"[^a-z0-9_]", "_", os.path.splitext(os.path.basename(path))[0].lower())
    dbname = f"slt_{stem}"
    admin(args, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    admin(args, f"CREATE DATABASE {dbname} TEMPLATE template0 ENCODING 'UTF8' "
          f"LC_COLLATE 'C' LC_CTYPE '{args.ctype}'")
    for name, value in DB_SETTINGS:
        admin(args, f"ALTER DATABASE {dbname} SET {name} TO {value}")
    conns = {}
    failures = 0
    new_lines = []
    copied = 0
    try:
        for item in items:
            if isinstance(item, tuple):
                if item[0] == "halt":
                    break
                if item[0] == "sleep":
                    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s)?", item[1])
                    if m:
                        time.sleep(float(m.group(1)) / (1000 if m.group(2) == "ms" else 1))
                continue
            rec = item
            if skipped(rec):
                continue
            if rec.connection not in conns:
                conns[rec.connection] = Psql(conninfo(args, dbname), args.timeout)
            conn = conns[rec.connection]
            if args.verbose:
                print(f"{path}:{rec.line_no}: [{rec.connection}] {rec.sql.splitlines()[0]}")
            out = conn.run_raw(rec.sql)
            if rec.kind == "query" and out.error is None:
                out.types = conn.describe(rec.sql)
            if args.rewrite:
                new_lines.extend(lines[copied:rec.first])
                new_lines.extend(rewrite_record(rec, out, lines))
                copied = rec.end
            else:
                for d in check_record(rec, out):
                    failures += 1
                    print(f"{path}:{rec.line_no}: {d}\n    [SQL] {rec.sql}")
    except SltError as e:
        print(f"{path}: {e}")
        return failures + 1
    finally:
        for c in conns.values():
            c.close()
        if not args.keep_db:
            admin(args, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    if args.rewrite:
        new_lines.extend(lines[copied:])
        new_text = "\n".join(new_lines) + "\n"
        if new_text != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new_text)
            print(f"{path}: rewritten")
    return failures


def lint_file(path):
    """Check one file's form without a server; return the number of problems."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        _, items = parse_file(text)
    except SltError as e:
        print(f"{path}: {e}")
        return 1
    problems = 0
    for rec in items:
        if isinstance(rec, tuple):
            continue
        where = f"{path}:{rec.line_no}"
        if rec.expect == "error":
            if not rec.regex and rec.multiline_error is None:
                print(f"{where}: error record without an expected message")
                problems += 1
            if not rec.sqlstate:
                print(f"{where}: error record without a '# SQLSTATE' comment")
                problems += 1
        elif rec.sqlstate:
            print(f"{where}: '# SQLSTATE' comment on a record that expects success")
            problems += 1
        if rec.expect == "results":
            if not rec.types:
                print(f"{where}: query without column types")
                problems += 1
            if (rec.sort_mode is None and len(rec.results) > 1
                    and not re.search(r"\border\s+by\b", rec.sql, re.I)):
                print(f"{where}: warning: {len(rec.results)} rows, no ORDER BY, no rowsort")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=None)
    ap.add_argument("-H", "--host", default=os.environ.get("PGHOST"))
    ap.add_argument("-p", "--port", default=os.environ.get("PGPORT"))
    ap.add_argument("-U", "--user", default=os.environ.get("PGUSER", "postgres"))
    ap.add_argument("--rewrite", action="store_true")
    ap.add_argument("--lint", action="store_true")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--ctype", default="C.UTF-8",
                    help="LC_CTYPE of the per-file databases (default C.UTF-8; collation is always C)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if not args.paths:
        args.paths = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "slt")]
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files.extend(sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".slt")))
        else:
            files.append(p)
    if not files:
        print("no .slt files found", file=sys.stderr)
        return 2
    total = 0
    if args.lint:
        total = sum(lint_file(os.path.normpath(p)) for p in files)
        print(f"{len(files)} file(s), {total} problem(s)")
        return 0 if total == 0 else 1
    try:
        for path in files:
            n = run_file(args, os.path.normpath(path))
            total += n
            if not args.rewrite:
                print(f"{os.path.normpath(path)}: {'ok' if n == 0 else f'{n} difference(s)'}")
    except SltError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.rewrite:
        return 0 if total == 0 else 1
    print(f"{len(files)} file(s), {total} difference(s)")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
