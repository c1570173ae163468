#!/usr/bin/env python3
"""Broken statements and PostgreSQL's syntax-error positions for them.

Writes grammar/tests/data/error_positions.tsv, the expected output of the
grammar test `error_positions` (grammar/tests/error_positions.rs):

    statement <TAB> sqlstate <TAB> byte offset <TAB> message

The statements are made from valid ones (the `e.g.` examples of
grammar/sql.ebnf and the inputs of grammar/tests/corpus.rs) by deleting one
token or swapping two neighbouring tokens, then sampled deterministically.
Each is sent to a PostgreSQL 15 server as a protocol-level Parse message
(extended query protocol), so the server parses and analyses it but never
executes it. The row records the server's verdict: `00000` when it parsed,
else the error's SQLSTATE, its position converted to a byte offset into the
statement, and its message. Only the standard library is used (the wire
protocol is spoken directly over the server's Unix socket; trust
authentication is assumed).

Usage: scripts/grammar-error-positions.py [-H SOCKET_DIR] [-p PORT] [-U USER] [-d DB] [-n COUNT]
Run once against PostgreSQL 15 and check the result in; never edit it by hand.
"""

import argparse
import os
import random
import re
import socket
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<tok>
      [eE]'(?:[^'\\]|\\.|'')*'
    | '(?:[^']|'')*'
    | \$\$.*?\$\$
    | \$(?P<tag>[A-Za-z_]\w*)\$.*?\$(?P=tag)\$
    | "(?:[^"]|"")*"
    | \d+(?:\.\d*)?(?:[eE][+-]?\d+)?
    | \.\d+(?:[eE][+-]?\d+)?
    | [A-Za-z_][A-Za-z0-9_$]*
    | ::|<>|!=|<=|>=|\|\|
    | [-+*/%^=<>(),.;\[\]]
    | .
    )
    """,
    re.VERBOSE | re.DOTALL,
)


def examples():
    """The valid statements: sql.ebnf's examples and the corpus inputs."""
    out = []
    ebnf = open(os.path.join(ROOT, "grammar", "sql.ebnf"), encoding="utf-8").read()
    for m in re.finditer(r"\(\* e\.g\. (.*?) \*\)", ebnf):
        out.append(m.group(1))
    corpus = open(os.path.join(ROOT, "grammar", "tests", "corpus.rs"), encoding="utf-8").read()
    for m in re.finditer(r'\(\s*"((?:[^"\\]|\\.)*)",\s*"', corpus):
        text = m.group(1)
        text = re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), text)
        out.append(text)
    return out


def tokens(sql):
    """(leading whitespace, token text) pairs, and the trailing whitespace."""
    pairs, space = [], ""
    for m in TOKEN.finditer(sql):
        if m.group("space"):
            space += m.group("space")
        else:
            pairs.append((space, m.group("tok")))
            space = ""
    return pairs, space


def join(pairs):
    text = "".join(s + t for s, t in pairs)
    return text.strip()


def mutations(sql):
    """Every one-token deletion and neighbour swap of `sql`."""
    pairs, _ = tokens(sql)
    out = []
    for k in range(len(pairs)):
        out.append(join(pairs[:k] + pairs[k + 1 :]))
    for k in range(len(pairs) - 1):
        (s1, t1), (s2, t2) = pairs[k], pairs[k + 1]
        if t1 != t2:
            out.append(join(pairs[:k] + [(s1, t2), (s2, t1)] + pairs[k + 2 :]))
    return out


# The grammar's and the lexer's messages (not parse analysis's 42601s).
SYNTAX = re.compile(r"syntax error|unterminated|zero-length|trailing junk")


class Connection:
    """The least of PostgreSQL's frontend/backend protocol v3."""

    def __init__(self, host, port, user, db):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.path.join(host, ".s.PGSQL.%d" % port))
        body = struct.pack("!i", 196608)
        for k, v in (("user", user), ("database", db)):
            body += k.encode() + b"\0" + v.encode() + b"\0"
        body += b"\0"
        self.sock.sendall(struct.pack("!i", len(body) + 4) + body)
        self.buf = b""
        while True:
            kind, payload = self.message()
            if kind == b"R" and struct.unpack("!i", payload[:4])[0] != 0:
                sys.exit("only trust authentication is supported")
            if kind == b"E":
                sys.exit("connection failed: %r" % self.fields(payload))
            if kind == b"Z":
                return

    def recv(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                sys.exit("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def message(self):
        kind = self.recv(1)
        (length,) = struct.unpack("!i", self.recv(4))
        return kind, self.recv(length - 4)

    @staticmethod
    def fields(payload):
        out = {}
        for field in payload.split(b"\0"):
            if field:
                out[chr(field[0])] = field[1:].decode("utf-8")
        return out

    def parse(self, sql):
        """Parses `sql` as an unnamed prepared statement: (sqlstate, position, message)."""
        body = b"\0" + sql.encode("utf-8") + b"\0" + struct.pack("!h", 0)
        self.sock.sendall(b"P" + struct.pack("!i", len(body) + 4) + body + b"S" + struct.pack("!i", 4))
        result = ("00000", 0, "")
        while True:
            kind, payload = self.message()
            if kind == b"E":
                f = self.fields(payload)
                result = (f.get("C", ""), int(f.get("P", "0")), f.get("M", ""))
            if kind == b"Z":
                return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-H", "--host", default="/tmp/pgsock")
    ap.add_argument("-p", "--port", type=int, default=54315)
    ap.add_argument("-U", "--user", default="postgres")
    ap.add_argument("-d", "--db", default="postgres")
    ap.add_argument("-n", "--count", type=int, default=500)
    ap.add_argument(
        "-o", "--out", default=os.path.join(ROOT, "grammar", "tests", "data", "error_positions.tsv")
    )
    args = ap.parse_args()

    candidates = set()
    for sql in examples():
        for m in mutations(sql):
            # One statement per line of the file, and one statement each.
            if m and "\t" not in m and "\n" not in m and ";" not in m:
                candidates.add(m)
    candidates = sorted(candidates)
    random.Random(15).shuffle(candidates)

    conn = Connection(args.host, args.port, args.user, args.db)
    rows = []
    for sql in candidates:
        if len(rows) == args.count:
            break
        state, position, message = conn.parse(sql)
        # Keep the statements PostgreSQL's grammar rejects: the comparable ones.
        if state != "42601" or position == 0 or not SYNTAX.match(message):
            continue
        offset = len(sql[: position - 1].encode("utf-8"))
        rows.append((sql, state, offset, message))

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("# statement\tsqlstate\tbyte offset\tmessage (PostgreSQL 15; scripts/grammar-error-positions.py)\n")
        for sql, state, offset, message in rows:
            f.write("%s\t%s\t%d\t%s\n" % (sql, state, offset, message))
    print("%d statements written to %s" % (len(rows), args.out))


if __name__ == "__main__":
    main()
