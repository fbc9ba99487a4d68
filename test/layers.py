#!/usr/bin/env python3
"""layers.py - the structure rules of the source tree, checked on the built
objects and the sources (doc/developer-guide.md, "Who may call whom"):

  cycles  DIR...   no two object files of a layer call each other in a circle
                   (strongly connected components of the file call graph)
  prefix  P DIR... every global symbol those objects define starts with one
                   of the comma-separated prefixes P
  each check prints one TAP line; exit 0.
Objects: DIR/.libs/*.o when there is such a folder (libtool), else DIR/*.o."""
import glob, os, subprocess, sys


def objects(dirs):
    out = []
    for d in dirs:
        libs = os.path.join(d, '.libs')
        out += sorted(glob.glob(os.path.join(libs if os.path.isdir(libs) else d, '*.o')))
    return out


def symbols(obj):
    defined, undefined = set(), set()
    text = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'TDBRGSVW' and not f[2].startswith('__odr_asan'):
            defined.add(f[2])  # (ASan's ODR indicators are the compiler's names)
        elif len(f) == 2 and f[0] == 'U':
            undefined.add(f[1])
    return defined, undefined


def name(o):
    return os.path.basename(o)[:-2].split('-')[-1]


def cycles(objs):
    syms = {o: symbols(o) for o in objs}
    owner = {s: o for o, (d, _) in syms.items() for s in d}
    graph = {o: sorted({owner[s] for s in u if s in owner and owner[s] != o})
             for o, (_, u) in syms.items()}
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
                comps.append(comp)

    sys.setrecursionlimit(10000)
    for v in objs:
        if v not in index:
            visit(v)
    why = []
    for comp in comps:
        for a in comp:
            for b in graph[a]:
                if b in comp:
                    called = sorted(s for s in syms[a][1] if owner.get(s) == b)
                    why.append('%s -> %s (%s)' % (name(a), name(b), ' '.join(called)))
    return why


def main(argv):
    what, args = argv[1], argv[2:]
    if what == 'cycles':
        objs = objects(args)
        why = cycles(objs) if objs else ['no objects in ' + ' '.join(args)]
        label = 'no call cycles between the files of %s (%d objects)' % (' '.join(args), len(objs))
    elif what == 'prefix':
        prefixes = tuple(args[0].split(','))
        objs = objects(args[1:])
        why = sorted('%s defines %s' % (name(o), s) for o in objs for s in symbols(o)[0]
                     if not s.startswith(prefixes)) if objs else ['no objects']
        label = 'every global name of %s starts with %s' % (' '.join(args[1:]), args[0])
    else:
        sys.exit('layers.py: unknown check ' + what)
    print(('ok - ' if not why else 'not ok - ') + label)
    for w in why:
        print('# ' + w)
    return 0


sys.exit(main(sys.argv))
