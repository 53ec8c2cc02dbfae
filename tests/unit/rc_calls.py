#!/usr/bin/env python3
"""rc_calls: raidcore's file-level call graph must be acyclic.

    python3 tests/unit/rc_calls.py raidcore/*.c raidcore/dev/*.c

A file calls another when its code (comments and strings removed) calls a
function the other defines with external linkage.  Prints the files bottom
up (each calls only files printed before it, so it is the order of the
files table in docs/DESIGN.md), and every strongly connected component of
more than one file, which is a cycle; exits 1 if there is one.
`make unit` runs it.
"""
import os
import re
import sys

DEF = re.compile(r'^(?!static\b)[A-Za-z_][\w \t\*]*?\b([a-z_][a-z0-9_]*)\s*\(([^;{]*)\)\s*\{',
                 re.M)
CALL = re.compile(r'\b([a-z_][a-z0-9_]*)\s*\(')


def strip(src):
    """The source without comments, string and character literals."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * src.count('\n', i, j))
            i = j
        elif src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src[i] in '"\'':
            q, j = src[i], i + 1
            while j < n and src[j] != q:
                j += 2 if src[j] == '\\' else 1
            out.append(q + q)
            i = j + 1
        else:
            out.append(src[i])
            i += 1
    return ''.join(out)


def graph(files):
    code = {f: strip(open(f).read()) for f in files}
    owner = {}
    for f, s in code.items():
        for m in DEF.finditer(s):
            owner.setdefault(m.group(1), f)
    edges = {f: {} for f in files}
    for f, s in code.items():
        for m in CALL.finditer(s):
            g = owner.get(m.group(1))
            if g and g != f:
                edges[f].setdefault(g, set()).add(m.group(1))
    return edges


def sccs(edges):
    """Tarjan's algorithm; components come out callees first."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main(files):
    edges = graph(files)
    comps = sccs(edges)
    cycles = [c for c in comps if len(c) > 1]
    print('bottom up:')
    for c in comps:
        for f in c:
            callees = sorted(os.path.basename(g) for g in edges[f])
            print('  %-18s -> %s' % (os.path.basename(f),
                                      ' '.join(callees) or '-'))
    for c in cycles:
        print('cycle:', ' '.join(os.path.basename(f) for f in c))
        for f in c:
            for g in c:
                if g in edges[f]:
                    print('  %s -> %s: %s' % (os.path.basename(f),
                          os.path.basename(g), ' '.join(sorted(edges[f][g]))))
    return 1 if cycles else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
