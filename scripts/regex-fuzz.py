#!/usr/bin/env python3
"""Random regular expressions with back-references, lookaround and
quantified groups, matched by PostgreSQL and by heapdb (or another
matcher under test).

Usage:
    scripts/regex-fuzz.py --heapdb target/release/heapdb [-n 500] [--seed 1]
    scripts/regex-fuzz.py --matcher PROGRAM [-n 3000] [--seed 1]

`--heapdb` runs each case as one `heapdb -c` (slow: a process a case).
A `--matcher` reads lines `mode<TAB>pattern<TAB>string<TAB>flags` on stdin
(mode `m`: does it match, `f`: regexp_match) and prints one answer a line:
`t`/`f`, regexp_match's text[] as PostgreSQL prints it (`NULL` for none),
or `ERROR: message`. PostgreSQL answers through two functions the script
creates in the database given by --psql (which must exist). Prints the
cases whose answers differ, as `mode | pattern | string | flags |
PostgreSQL | ours`.
"""
import argparse
import random
import subprocess

SETUP = r"""
create or replace function try_m(s text, p text, f text) returns text
language plpgsql as $$ begin return case when regexp_like(s, p, f) then 't' else 'f' end;
exception when others then return 'ERROR: ' || sqlerrm; end $$;
create or replace function try_f(s text, p text, f text) returns text
language plpgsql as $$ declare r text[]; begin r := regexp_match(s, p, f);
if r is null then return 'NULL'; end if; return r::text;
exception when others then return 'ERROR: ' || sqlerrm; end $$;
"""


class Gen:
    def __init__(self, rng, look=True):
        self.rng = rng
        self.groups = 0
        self.look = look

    def alt(self, depth, in_look=False):
        n = self.rng.choice([1, 1, 1, 2, 2, 3])
        return "|".join(self.branch(depth, in_look) for _ in range(n))

    def branch(self, depth, in_look):
        n = self.rng.choice([0, 1, 2, 2, 3, 3, 4])
        return "".join(self.piece(depth, in_look) for _ in range(n))

    def piece(self, depth, in_look):
        r = self.rng.random()
        if r < 0.12:
            return self.rng.choice(["^", "$", r"\m", r"\M", r"\y"])
        if r < 0.2 and self.look and not in_look and depth < 3:
            kind = self.rng.choice(["(?=", "(?!", "(?<=", "(?<!"])
            return kind + self.alt(depth + 1, True) + ")"
        atom = self.atom(depth, in_look)
        q = self.rng.random()
        if q < 0.55:
            return atom
        return atom + self.rng.choice(
            ["*", "+", "?", "{0}", "{1}", "{2}", "{0,1}", "{1,2}", "{2,}",
             "*?", "+?", "??", "{1,2}?", "{0,}?"])

    def atom(self, depth, in_look):
        r = self.rng.random()
        if r < 0.35 or depth >= 3:
            return self.rng.choice(["a", "b", "a", "b", ".", "[ab]", "c"])
        if r < 0.55 and self.groups > 0 and not in_look:
            return "\\%d" % self.rng.randint(1, min(self.groups, 9))
        if r < 0.85:
            if not in_look:
                self.groups += 1
            return "(" + self.alt(depth + 1, in_look) + ")"
        return "(?:" + self.alt(depth + 1, in_look) + ")"


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def heapdb_answer(heapdb, case):
    mode, p, s, f = case
    if mode == "m":
        q = "select case when regexp_like(%s, %s, %s) then 't' else 'f' end"
    else:
        q = "select coalesce(regexp_match(%s, %s, %s)::text, 'NULL')"
    q = q % (lit(s), lit(p), lit(f))
    r = subprocess.run([heapdb, "-X", "-A", "-t", "-c", q], capture_output=True,
                       text=True)
    for line in r.stderr.splitlines():
        if line.startswith("ERROR:"):
            return "ERROR: " + line[len("ERROR:"):].strip()
    return r.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--matcher")
    ap.add_argument("--heapdb")
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--maxlen", type=int, default=7, help="longest subject string")
    ap.add_argument("--psql", default="psql -h /tmp/pgsock -p 54315 -U postgres -d regexfuzz")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cases = []
    for _ in range(a.n):
        g = Gen(rng, look=rng.random() < 0.5)
        p = g.alt(0)
        s = "".join(rng.choice("aabbc ") for _ in range(rng.randint(0, a.maxlen)))
        f = rng.choice(["", "", "", "i"])
        mode = rng.choice("mf")
        cases.append((mode, p, s, f))
    rows = ",".join(
        "(%d,%s,%s,%s,%s)" % (i, lit(m), lit(p), lit(s), lit(f))
        for i, (m, p, s, f) in enumerate(cases))
    sql = SETUP + (
        "select case when m = 'm' then try_m(s, p, f) else try_f(s, p, f) end"
        " from (values %s) v(i, m, p, s, f) order by i;" % rows)
    pg = subprocess.run(a.psql.split() + ["-Atq"], input=sql, capture_output=True,
                        text=True, check=True).stdout.splitlines()
    if a.heapdb:
        ours = [heapdb_answer(a.heapdb, c) for c in cases]
    else:
        inp = "".join("%s\t%s\t%s\t%s\n" % c for c in cases)
        ours = subprocess.run([a.matcher], input=inp, capture_output=True,
                              text=True, check=True).stdout.splitlines()
    assert len(pg) == len(ours) == len(cases), (len(pg), len(ours))
    bad = 0
    for c, x, y in zip(cases, pg, ours):
        if x != y:
            bad += 1
            print("%s | %s | %s | %s | %s | %s" % (c[0], c[1], c[2], c[3], x, y))
    print("# %d of %d differ" % (bad, len(cases)))


if __name__ == "__main__":
    main()
