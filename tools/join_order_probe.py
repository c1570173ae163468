#!/usr/bin/env python3
"""Planning and run times of many-table joins, heapdb beside PostgreSQL.

Usage:
    tools/join_order_probe.py [--heapdb target/release/heapdb]
                              [-H /tmp/pgsock -p 54315 -U postgres] [--no-pg]

Loads 64 ten-row tables t1..t64 (aN = 1..10, bN a permutation of 1..10)
into a fresh heapdb data directory and, unless --no-pg, a fresh PostgreSQL
database, then runs select5-like queries joining 8, 16, 32 and 64 of them
(a random tree of equalities in a shuffled FROM order, a few constant
filters) as `EXPLAIN ANALYZE` three times each, and prints the medians of
both systems' Planning Time and Execution Time in milliseconds. The
queries come from a fixed seed, so runs compare.
"""

import argparse
import os
import random
import re
import statistics
import subprocess
import tempfile

TABLES = 64


def load_sql():
    out = []
    for t in range(1, TABLES + 1):
        m = [3, 7, 9][t % 3]
        out.append(f"create table t{t} (a{t} int, b{t} int, x{t} text);")
        out.append(
            f"insert into t{t} select g, (g * {m} + {t}) % 10 + 1, 't{t}-' || g "
            f"from generate_series(1, 10) g;"
        )
    out.append("analyze;")
    return "\n".join(out) + "\n"


def query(rnd, n):
    tabs = rnd.sample(range(1, TABLES + 1), n)
    conds = []
    for k in range(1, n):
        p = tabs[rnd.randrange(k)]
        conds.append(f"{rnd.choice('ab')}{p}={rnd.choice('ab')}{tabs[k]}")
    for _ in range(max(1, n // 16)):
        t = rnd.choice(tabs)
        conds.append(f"a{t}<{rnd.randint(6, 10)}")
    rnd.shuffle(conds)
    frm = tabs[:]
    rnd.shuffle(frm)
    sel = ",".join(f"x{t}" for t in rnd.sample(tabs, 4))
    return (
        f"select {sel} from " + ",".join(f"t{t}" for t in frm) + " where " + " and ".join(conds)
    )


def times(text):
    plan = [float(x) for x in re.findall(r"Planning Time: ([0-9.]+) ms", text)]
    run = [float(x) for x in re.findall(r"Execution Time: ([0-9.]+) ms", text)]
    return plan, run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heapdb", default="target/release/heapdb")
    ap.add_argument("-H", "--host", default="/tmp/pgsock")
    ap.add_argument("-p", "--port", default="54315")
    ap.add_argument("-U", "--user", default="postgres")
    ap.add_argument("--no-pg", action="store_true")
    args = ap.parse_args()
    rnd = random.Random(64)
    sizes = [8, 16, 32, 64]
    queries = [(n, query(rnd, n)) for n in sizes]
    script = "".join(
        f"explain analyze {q};\n" * 3 for _, q in queries
    )
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "data")
        subprocess.run(
            [args.heapdb, "-D", data, "-q", "-c", load_sql()], check=True, capture_output=True
        )
        h = subprocess.run(
            [args.heapdb, "-D", data, "-q", "-t", "-A"],
            input=script, text=True, check=True, capture_output=True,
        ).stdout
    results = {"heapdb": times(h)}
    if not args.no_pg:
        psql = "/usr/lib/postgresql/15/bin/psql"
        base = [psql, "-h", args.host, "-p", args.port, "-U", args.user, "-X", "-q"]
        db = "probe_join_order"
        subprocess.run(base + ["-d", "postgres", "-c", f"drop database if exists {db}"], check=True)
        subprocess.run(base + ["-d", "postgres", "-c", f"create database {db}"], check=True)
        try:
            subprocess.run(base + ["-d", db], input=load_sql(), text=True, check=True,
                           capture_output=True)
            p = subprocess.run(base + ["-d", db, "-t", "-A"], input=script, text=True,
                               check=True, capture_output=True).stdout
            results["postgres"] = times(p)
        finally:
            subprocess.run(base + ["-d", "postgres", "-c", f"drop database {db}"], check=True)
    print(f"{'tables':>6} " + " ".join(
        f"{name + ' plan':>16} {name + ' run':>15}" for name in results))
    for i, n in enumerate(sizes):
        row = [f"{n:>6}"]
        for name, (plan, run) in results.items():
            row.append(f"{statistics.median(plan[3 * i:3 * i + 3]):>13.3f} ms")
            row.append(f"{statistics.median(run[3 * i:3 * i + 3]):>12.3f} ms")
        print(" ".join(row))


if __name__ == "__main__":
    main()
