#!/usr/bin/env python3
"""Random scalar expressions evaluated by PostgreSQL and by heapdb, and
the cases whose answers differ.

Usage:
    scripts/expr-fuzz.py --heapdb "target/release/heapdb --data-dir /tmp/d" [-n 2000] [--seed 1]
        [--psql "psql -h /tmp/pgsock -p 54315 -U postgres -d postgres"]
        [--types int4,text] [--depth 3]

Each case is one `select EXPR;` over constants of the types heapdb has
(int2/4/8, numeric, float4/8, text, bool, date, timestamp, interval):
operators, casts, common functions, CASE/COALESCE/NULLIF/GREATEST/LEAST,
NULLs and extreme values. Both sides run every case in one `-X -q -A -t`
session on stdin, each case after an `\\echo` marker, so an answer is
the printed row or the error's message. SQLSTATEs are not compared: the
heapdb shell does not print them. Prints `expression | PostgreSQL |
heapdb` for each difference and a count at the end.
"""
import argparse
import random
import shlex
import subprocess

INT_LIT = {
    "int2": ["0", "1", "-1", "7", "32767", "-32768", "300", "-2"],
    "int4": ["0", "1", "-1", "13", "2147483647", "-2147483648", "65536", "-7"],
    "int8": ["0", "1", "-1", "42", "9223372036854775807", "-9223372036854775808",
             "4294967296", "-3"],
}
LIT = {
    "numeric": ["0", "1", "-1", "0.1", "-3.456", "1e20", "123456789.987654321",
                "'NaN'", "0.000001", "99999999999999999999", "2.5", "-0.5"],
    "float4": ["0", "1", "-1", "0.1", "3.4e38", "1e-45", "'NaN'", "'Infinity'",
               "'-Infinity'", "2.5", "-0.0", "16777217"],
    "float8": ["0", "1", "-1", "0.1", "1.7976931348623157e308", "5e-324", "'NaN'",
               "'Infinity'", "'-Infinity'", "2.5", "-0.0", "1e15", "123.456"],
    "text": ["''", "'abc'", "' x y '", "'Hello World'", "'12'", "'-7'", "'1.5'",
             "'true'", "'ünï'", "'a,b,,c'", "'2000-01-01'", "'NaN'"],
    "bool": ["true", "false"],
    "date": ["'2000-02-29'", "'1999-12-31'", "'infinity'", "'-infinity'",
             "'4713-11-24 BC'", "'5874897-12-31'", "'2024-03-10'", "'0001-01-01'"],
    "timestamp": ["'2000-02-29 12:34:56.789'", "'1999-12-31 23:59:59'",
                  "'infinity'", "'-infinity'", "'294276-12-31 23:59:59'",
                  "'4713-11-24 00:00:00 BC'", "'2024-03-10 02:30:00'",
                  "'1970-01-01 00:00:00.000001'"],
    "interval": ["'1 day 02:03:04'", "'-1 mon'", "'1 year 2 mons'", "'00:00:00.5'",
                 "'178000000 years'", "'-2 days +03:00'", "'0'", "'36 hours'",
                 "'1 mon -1 day'", "'2147483647 days'"],
}
LIT.update(INT_LIT)
INTS = ["int2", "int4", "int8"]
NUMS = INTS + ["numeric", "float4", "float8"]
TYPES = NUMS + ["text", "bool", "date", "timestamp", "interval"]
FIELDS = ["year", "month", "day", "hour", "minute", "second", "dow", "doy",
          "epoch", "quarter", "week", "millisecond", "century", "isoyear", "julian"]
TRUNC = ["year", "month", "day", "hour", "week", "quarter", "decade", "century",
         "millennium", "minute", "second"]


class Gen:
    def __init__(self, rng, depth):
        self.r = rng
        self.depth = depth

    def pick(self, xs):
        return self.r.choice(xs)

    def lit(self, t):
        if self.r.random() < 0.06:
            return f"NULL::{t}"
        v = self.pick(LIT[t])
        if t == "bool":
            return v
        if v.startswith("-") and self.r.random() < 0.5:
            return f"({v})::{t}"
        return f"{v}::{t}"

    def small_int(self):
        return self.pick(["0", "1", "2", "3", "-1", "5", "10", "-3", "100"])

    def e(self, t, d=None):
        d = self.depth if d is None else d
        if d <= 0 or self.r.random() < 0.25:
            return self.lit(t)
        d -= 1
        r = self.r.random()
        if r < 0.08:
            return f"CASE WHEN {self.e('bool', d)} THEN {self.e(t, d)} ELSE {self.e(t, d)} END"
        if r < 0.13:
            return f"COALESCE({self.e(t, d)}, {self.e(t, d)})"
        if r < 0.17 and t != "bool":
            return f"NULLIF({self.e(t, d)}, {self.e(t, d)})"
        if r < 0.21 and t != "bool":
            f = self.pick(["GREATEST", "LEAST"])
            return f"{f}({self.e(t, d)}, {self.e(t, d)})"
        if r < 0.33:
            return self.cast_to(t, d)
        return getattr(self, "g_" + t.replace("int2", "int").replace("int4", "int")
                       .replace("int8", "int").replace("float4", "float")
                       .replace("float8", "float"))(t, d)

    def cast_to(self, t, d):
        src = {
            "int2": NUMS + ["text", "bool"], "int4": NUMS + ["text", "bool"],
            "int8": NUMS + ["text"], "numeric": NUMS + ["text"],
            "float4": NUMS + ["text"], "float8": NUMS + ["text"],
            "text": TYPES, "bool": ["int4", "text"],
            "date": ["timestamp", "text"], "timestamp": ["date", "text"],
            "interval": ["text"],
        }[t]
        s = self.pick(src)
        if s == "text" and t != "text":
            # Text that may or may not be valid for the target type.
            v = self.pick(LIT[t] + ["'abc'", "' 12 '", "'1e3'", "'0x1F'", "''"])
            v = v if v.startswith("'") else f"'{v}'"
            return f"{v}::text::{t}"
        if s == "bool" and t != "bool":
            return f"({self.e('bool', d)})::{t}"
        return f"({self.e(s, d)})::{t}"

    def g_int(self, t, d):
        a, b = self.e(t, d), self.e(t, d)
        r = self.r.random()
        if r < 0.5:
            op = self.pick(["+", "-", "*", "/", "%", "&", "|", "#"])
            return f"({a} {op} {b})"
        if r < 0.6:
            return f"({a} {self.pick(['<<', '>>'])} {self.small_int()})"
        if r < 0.7:
            return f"(-{a})"
        if r < 0.8:
            return f"abs({a})" if self.r.random() < 0.5 else f"(@ {a})"
        if r < 0.85:
            return f"(~ {a})"
        if r < 0.9 and t != "int2":
            return f"length({self.e('text', d)})::{t}"
        if t == "int4" and r < 0.95:
            return f"({self.e('date', d)} - {self.e('date', d)})"
        return f"gcd({a}, {b})" if t != "int2" else f"({a} + {b})"

    def g_numeric(self, t, d):
        a, b = self.e(t, d), self.e(t, d)
        r = self.r.random()
        if r < 0.45:
            return f"({a} {self.pick(['+', '-', '*', '/', '%', '^'])} {b})"
        f1 = ["abs", "ceil", "floor", "sign", "sqrt", "exp", "ln", "trunc", "round",
              "scale", "-", "min_scale", "trim_scale", "log10", "factorial"]
        f = self.pick(f1)
        if f == "-":
            return f"(-{a})"
        if f == "factorial":
            return f"factorial({self.pick(INT_LIT['int8'][:4] + ['20', '-1', '21'])})"
        if f in ("scale", "min_scale"):
            return f"{f}({a})::numeric"
        if f == "log10":
            return f"log({a})"
        if r < 0.7 and f in ("round", "trunc"):
            return f"{f}({a}, {self.small_int()})"
        if r < 0.8:
            g = self.pick(["mod", "div", "power", "log", "gcd", "lcm"])
            return f"{g}({a}, {b})"
        return f"{f}({a})"

    def g_float(self, t, d):
        a, b = self.e(t, d), self.e(t, d)
        r = self.r.random()
        if r < 0.45:
            return f"({a} {self.pick(['+', '-', '*', '/'])} {b})"
        if t == "float4":
            return f"({a} {self.pick(['+', '-', '*', '/'])} {b})"
        f = self.pick(["abs", "ceil", "floor", "sign", "sqrt", "cbrt", "exp", "ln",
                       "trunc", "round", "degrees", "radians", "sin", "cos", "atan",
                       "log", "-", "power", "^", "atan2"])
        if f == "-":
            return f"(-{a})"
        if f == "^":
            return f"({a} ^ {b})"
        if f in ("power", "atan2"):
            return f"{f}({a}, {b})"
        if f == "log":
            return f"log({a})"
        return f"{f}({a})"

    def g_text(self, t, d):
        a = self.e("text", d)
        r = self.r.random()
        if r < 0.2:
            return f"({a} || {self.e(self.pick(TYPES), d)})"
        f = self.pick(["upper", "lower", "initcap", "reverse", "btrim", "ltrim",
                       "rtrim", "substr", "left", "right", "repeat", "replace",
                       "lpad", "rpad", "split_part", "translate", "concat",
                       "concat_ws", "to_char", "md5", "quote_literal", "chr",
                       "overlay", "substring"])
        n = self.small_int()
        if f == "substr":
            return f"substr({a}, {n}, {self.small_int()})"
        if f in ("left", "right", "repeat"):
            return f"{f}({a}, {n})"
        if f == "replace":
            return f"replace({a}, {self.e('text', d)}, {self.e('text', d)})"
        if f in ("lpad", "rpad"):
            return f"{f}({a}, {n}, {self.e('text', d)})"
        if f == "split_part":
            return f"split_part({a}, ',', {n})"
        if f == "translate":
            return f"translate({a}, 'abc', 'x')"
        if f == "concat":
            return f"concat({a}, {self.e(self.pick(TYPES), d)}, {self.e(self.pick(TYPES), d)})"
        if f == "concat_ws":
            return f"concat_ws({a}, {self.e('text', d)}, {self.e(self.pick(TYPES), d)})"
        if f == "to_char":
            s = self.pick(NUMS + ["timestamp", "interval"])
            fmt = {"timestamp": "'YYYY-MM-DD HH24:MI:SS Dy Month'",
                   "interval": "'HH24:MI:SS DD'"}.get(s, self.pick(["'999D99'", "'FM9990.00'",
                                                                    "'S9999'", "'9.99EEEE'"]))
            return f"to_char({self.e(s, d)}, {fmt})"
        if f == "chr":
            return f"chr({self.pick(['65', '0', '-1', '1114112', '955', '256'])})"
        if f == "overlay":
            return f"overlay({a} placing 'XY' from {self.pick(['1', '2', '5'])} for {n})"
        if f == "substring":
            return f"substring({a} from {n} for {self.small_int()})"
        if f in ("btrim", "ltrim", "rtrim") and self.r.random() < 0.5:
            return f"{f}({a}, ' ab')"
        return f"{f}({a})"

    def g_bool(self, t, d):
        r = self.r.random()
        if r < 0.45:
            s = self.pick(TYPES)
            op = self.pick(["=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM",
                            "IS NOT DISTINCT FROM"])
            return f"({self.e(s, d)} {op} {self.e(s, d)})"
        if r < 0.6:
            return f"({self.e('bool', d)} {self.pick(['AND', 'OR'])} {self.e('bool', d)})"
        if r < 0.67:
            return f"(NOT {self.e('bool', d)})"
        if r < 0.75:
            return f"({self.e(self.pick(TYPES), d)} IS {self.pick(['', 'NOT '])}NULL)"
        if r < 0.85:
            s = self.pick(NUMS + ["text", "date"])
            return f"({self.e(s, d)} BETWEEN {self.e(s, d)} AND {self.e(s, d)})"
        if r < 0.92:
            return f"({self.e('text', d)} {self.pick(['LIKE', 'ILIKE', '~', '~*'])} {self.pick(LIT['text'] + ['%a%', 'a_c'])})".replace(
                "%a%", "'%a%'").replace("a_c", "'a_c'")
        s = self.pick(NUMS)
        return f"({self.e(s, d)} IN ({self.e(s, d)}, {self.e(s, d)}))"

    def g_date(self, t, d):
        r = self.r.random()
        a = self.e("date", d)
        if r < 0.4:
            return f"({a} {self.pick(['+', '-'])} {self.e('int4', d)})"
        if r < 0.6:
            return f"make_date({self.pick(['2000', '-44', '0', '2024'])}, {self.pick(['2', '13', '1'])}, {self.pick(['29', '30', '1'])})"
        return f"({self.e('timestamp', d)})::date"

    def g_timestamp(self, t, d):
        r = self.r.random()
        a = self.e("timestamp", d)
        if r < 0.35:
            return f"({a} {self.pick(['+', '-'])} {self.e('interval', d)})"
        if r < 0.5:
            return f"({self.e('date', d)} + {self.e('interval', d)})"
        if r < 0.7:
            return f"date_trunc('{self.pick(TRUNC)}', {a})"
        if r < 0.8:
            return f"({self.e('date', d)} + time '{self.pick(['12:00', '23:59:59.5', '00:00'])}')"
        return f"make_timestamp({self.pick(['2000', '-1', '2024'])}, {self.pick(['2', '12', '13'])}, {self.pick(['29', '31'])}, {self.pick(['0', '23', '24'])}, 30, {self.pick(['0', '59.5', '60'])})"

    def g_interval(self, t, d):
        r = self.r.random()
        a = self.e("interval", d)
        if r < 0.3:
            return f"({a} {self.pick(['+', '-'])} {self.e('interval', d)})"
        if r < 0.45:
            return f"({a} {self.pick(['*', '/'])} {self.e('float8', d)})"
        if r < 0.55:
            return f"(-{a})"
        if r < 0.7:
            return f"({self.e('timestamp', d)} - {self.e('timestamp', d)})"
        if r < 0.8:
            return f"{self.pick(['justify_days', 'justify_hours', 'justify_interval'])}({a})"
        if r < 0.9:
            return f"date_trunc('{self.pick(TRUNC)}', {a})"
        return f"make_interval({self.pick(['0', '1', '-2'])}, {self.pick(['0', '3'])}, 0, {self.pick(['1', '400'])}, 0, 0, {self.pick(['0', '1.5'])})"

    def top(self):
        t = self.pick(TYPES)
        if self.r.random() < 0.1:
            s = self.pick(["date", "timestamp", "interval"])
            return f"extract({self.pick(FIELDS)} from {self.e(s)})"
        return self.e(t)


def run(cmd, exprs):
    script = []
    for k, e in enumerate(exprs):
        script.append(f"\\echo '#case {k}'")
        script.append(f"select {e};")
    out = subprocess.run(cmd, input="\n".join(script) + "\n", stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=600).stdout
    answers = {}
    cur = None
    for line in out.splitlines():
        if line.startswith("#case "):
            cur = int(line[6:])
            answers[cur] = []
        elif cur is not None and not line.startswith("LINE ") and line.strip() != "^":
            answers[cur].append(line)
    return [" / ".join(answers.get(k, ["<no answer>"])) for k in range(len(exprs))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heapdb", required=True)
    ap.add_argument("--psql", default="psql -h /tmp/pgsock -p 54315 -U postgres -d postgres")
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--types", help="comma-separated result types to generate")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    g = Gen(rng, args.depth)
    exprs = []
    while len(exprs) < args.n:
        if args.types:
            exprs.append(g.e(rng.choice(args.types.split(","))))
        else:
            exprs.append(g.top())
    pg_cmd = shlex.split(args.psql) + ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0"]
    ours_cmd = shlex.split(args.heapdb) + ["-X", "-q", "-A", "-t"]
    diffs = 0
    for lo in range(0, len(exprs), 500):
        batch = exprs[lo:lo + 500]
        pg = run(pg_cmd, batch)
        ours = run(ours_cmd, batch)
        for e, a, b in zip(batch, pg, ours):
            if a != b:
                diffs += 1
                print(f"{e} | {a} | {b}", flush=True)
    print(f"-- {diffs} of {len(exprs)} differ")


if __name__ == "__main__":
    main()
