#!/usr/bin/env python3
"""List the functions of production code longer than a limit (150 lines).

Usage: tools/long-functions.py [--max N] [DIR ...]   (default: src grammar/src,
from the repository root)

A function's length is counted from the line of its `fn` keyword to the line
of its closing brace. Test code is left out: files named `tests.rs` or
`*_tests.rs`, files under a `tests/` directory, and `#[cfg(test)]` modules.
Exits 1 when a function is over the limit, so it can gate a commit; only
the standard library is needed. The style rule it checks is in CONTRIBUTING
terms "no function over ~150 lines": a longer one is split along the
concepts inside it.
"""

import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip(text):
    """`text` with comments, strings and char literals blanked out (newlines
    kept), so braces and keywords can be matched on what is left."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not IDENT.match(text[i - 1 : i] or " "):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', '\''), else a lifetime.
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3) + 1
            elif i + 2 < n and text[i + 2] == "'":
                j = i + 3
            else:
                out.append(c)
                i += 1
                continue
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(code, open_at):
    """The index just past the brace that closes the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def functions(path):
    """(name, first line, line count) of each function in `path` outside
    `#[cfg(test)]` modules."""
    with open(path, encoding="utf-8") as f:
        code = strip(f.read())
    skip = []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code):
        skip.append((m.start(), block_end(code, m.end() - 1)))
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        if any(a <= m.start() < b for a, b in skip):
            continue
        # The body: the first `{` after the signature, unless a `;` ends a
        # declaration first (parentheses and generics hold no braces).
        j = m.end()
        depth = 0
        while j < len(code):
            ch = code[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in "{;":
                break
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        end = block_end(code, j)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, end - 1) + 1
        yield m.group(1), first, last - first + 1


def is_test_file(path):
    parts = path.split(os.sep)
    name = parts[-1]
    return name == "tests.rs" or name.endswith("_tests.rs") or "tests" in parts[:-1]


def main(argv):
    limit = 150
    if len(argv) >= 2 and argv[0] == "--max":
        limit, argv = int(argv[1]), argv[2:]
    dirs = argv or ["src", "grammar/src"]
    long = []
    for d in dirs:
        for root, _, names in os.walk(d):
            for name in sorted(names):
                path = os.path.join(root, name)
                if not name.endswith(".rs") or is_test_file(path):
                    continue
                for fname, line, count in functions(path):
                    if count > limit:
                        long.append((count, path, line, fname))
    for count, path, line, fname in sorted(long, reverse=True):
        print(f"{path}:{line}: fn {fname}: {count} lines")
    if long:
        print(f"{len(long)} function(s) over {limit} lines")
        return 1
    print(f"no function over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
