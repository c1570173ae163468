#!/usr/bin/env python3
"""Print which top-level modules of src/ use which, and any cycles between them.

Usage: tools/module-graph.py [SRC_DIR]     (default: src, from the repository root)

A module "uses" another when its files name `crate::other` (in a path or in a
`use crate::{...}` group). The layers heapdb keeps are stated in src/lib.rs and
docs/architecture.md; this script shows whether the code keeps them: it exits 1
when two top-level modules use each other, directly or around a longer loop
(other than the cycles listed in ALLOWED).
Only the standard library is needed.
"""

import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "src"
# Mutual uses that are the design: the heap logs through the WAL, and
# recovery replays records through the heap's redo (PostgreSQL's resource
# managers). Any other cycle fails the check.
ALLOWED = [{"access", "wal"}]
PATH = re.compile(r"crate::([a-z_][a-z0-9_]*)")
GROUP = re.compile(r"crate::\{([^;]*?)\}\s*;", re.S)


def top_modules():
    mods = set()
    for entry in os.listdir(SRC):
        if entry in ("lib.rs", "main.rs"):
            continue
        if entry.endswith(".rs"):
            mods.add(entry[:-3])
        elif os.path.isdir(os.path.join(SRC, entry)):
            mods.add(entry)
    return mods


def files_of(module):
    single = os.path.join(SRC, module + ".rs")
    if os.path.isfile(single):
        yield single
    folder = os.path.join(SRC, module)
    for root, _, names in os.walk(folder):
        for name in names:
            if name.endswith(".rs"):
                yield os.path.join(root, name)


def uses(module, mods):
    found = set()
    for path in files_of(module):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found.update(m for m in PATH.findall(text) if m in mods)
        for group in GROUP.findall(text):
            for item in re.split(r",(?![^{]*\})", group):
                head = item.strip().split("::")[0].strip("{ \n")
                if head in mods:
                    found.add(head)
    found.discard(module)
    return found


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    mods = top_modules()
    graph = {m: uses(m, mods) for m in mods}
    for m in sorted(graph):
        print(f"{m:10} -> {' '.join(sorted(graph[m])) or '(nothing)'}")
    loops = cycles(graph)
    allowed = [c for c in loops if set(c) in ALLOWED]
    loops = [c for c in loops if set(c) not in ALLOWED]
    for comp in allowed:
        print(f"allowed: {' <-> '.join(comp)} (resource-manager redo)")
    for comp in loops:
        pairs = [f"{a}<->{b}" for a in comp for b in comp if a < b and b in graph[a] and a in graph[b]]
        print(f"cycle: {' '.join(comp)}" + (f"  (mutual: {', '.join(pairs)})" if pairs else ""))
    if not loops:
        print("no cycles")
    return 1 if loops else 0


if __name__ == "__main__":
    sys.exit(main())
