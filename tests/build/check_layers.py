#!/usr/bin/env python3
"""check_layers.py - the dependency check of tests/build/layers.txt (ctest build.layers).

Every file of src/ and tools/ belongs to a folder (src/<folder>/..., tools/bpfrt -> cli,
tools/<x>/... -> x).
A file may use its own folder, the public headers (include/) and the folders its folder's
rule in layers.txt names; anything else is a forbidden edge.  Two kinds of use are seen:

  includes  the #include "..." lines of every .c/.h/.def file (read as text, so an
            include under #ifdef counts too);
  calls     the undefined symbols of every object file of the library and the CLI (nm),
            each resolved to the object that defines it: a call, or a reference from a
            table of function pointers.

docs/ARCHITECTURE.md's "Dependency direction" block must state the same rules.  The
file graph (includes and calls between files) must have no cycle between files of
different folders.  Current violations are tolerated only as explicit `allow` lines of
layers.txt, each tagged with the issue item that removes it; a line that no longer
matches anything fails too, so the list only shrinks.  A cycle between files of one folder
fails unless a `cycle FOLDER: FILES` line of layers.txt names all its files (a dispatch
table and its rows); such a line fails too when it names a file no cycle holds any more.

Usage: check_layers.py SOURCE_DIR RULES OBJECT_LIST   (OBJECT_LIST: one .o path a line)
Exit status 0 clean, 1 violations, 2 usage or rules errors.
"""
import collections
import os
import re
import subprocess
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def folder_of(rel):
    """The folder a repository path belongs to, or None when it is outside the check."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[0] == "src":
        return None  # src/libbpfrt.map
    if parts[0] == "tools":
        # tools/bpfrt is the CLI; any other tools/<x>/ (preload) is the folder <x>
        return "cli" if len(parts) < 3 or parts[1] == "bpfrt" else parts[1]
    if parts[0] == "include":
        return "include"
    return parts[0]  # tests, fuzz, bench, ...: never a layer of the library


def fail_usage(msg):
    print("check_layers: " + msg, file=sys.stderr)
    sys.exit(2)


class Rules:
    """layers.txt: `folder: uses...` lines bottom-up and `allow FILE -> TARGET`
    exceptions; `#` starts a comment (the tag of an exception)."""

    def __init__(self, path):
        self.order = []          # folders, bottom-up
        self.uses = {}           # folder -> set of targets (folders or folder/file paths)
        self.allow = []          # [file, target, comment, lineno, used]
        self.cycles = []         # [folder, set of files (src/... paths), comment, lineno]
        for n, raw in enumerate(open(path), 1):
            line, _, comment = raw.partition("#")
            line, comment = line.strip(), comment.strip()
            if not line:
                continue
            m = re.fullmatch(r"cycle\s+([a-z0-9_]+)\s*:(.*)", line)
            if m:
                if not comment:
                    fail_usage(f"{path}:{n}: a cycle line needs a '# <reason>' tag")
                folder, files = m.group(1), m.group(2).split()
                base = "tools/bpfrt" if folder == "cli" else "src/" + folder
                self.cycles.append([folder, {base + "/" + f for f in files}, comment, n])
                continue
            m = re.fullmatch(r"allow\s+(\S+)\s*->\s*(\S+)", line)
            if m:
                if not comment:
                    fail_usage(f"{path}:{n}: an allow line needs a '# <issue item>' tag")
                self.allow.append([m.group(1), m.group(2), comment, n, False])
                continue
            m = re.fullmatch(r"([a-z0-9_]+)\s*:(.*)", line)
            if not m:
                fail_usage(f"{path}:{n}: cannot read '{line}'")
            name, uses = m.group(1), m.group(2).split()
            if name in self.uses:
                fail_usage(f"{path}:{n}: folder {name} listed twice")
            for u in uses:
                if u.split("/")[0] not in self.uses:
                    fail_usage(f"{path}:{n}: {name} uses {u}, which is not listed below "
                               f"it (folders go bottom-up, so the rules cannot loop)")
            self.order.append(name)
            self.uses[name] = set(uses)

    def permits(self, src_folder, target_rel):
        """May a file of src_folder use the file target_rel (a repository path)?"""
        tf = folder_of(target_rel)
        if tf is None or tf in ("include", src_folder):
            return True
        if src_folder not in self.uses:
            return False
        inner = target_rel.split("/", 1)[1] if target_rel.startswith("src/") else target_rel
        for u in self.uses[src_folder]:
            if u == tf or inner == u or inner.startswith(u.rstrip("/") + "/"):
                return True
        return False

    def allowed(self, src_rel, target_rel):
        tf = folder_of(target_rel)
        inner = target_rel.split("/", 1)[1] if target_rel.startswith("src/") else target_rel
        for a in self.allow:
            if a[0] == src_rel and a[1] in (tf, inner, target_rel):
                a[4] = True
                return a
        return None


def read_includes(root):
    """(file, header) pairs of every #include "..." in src/ and tools/, resolved as the
    compiler does: the including file's folder, then src/ (and tools/bpfrt), then include/."""
    edges, unresolved = [], []
    for top in ("src", "tools"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not re.search(r"\.(c|h|def|inc)$", f):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                with open(path, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        name = m.group(1)
                        for base in (d, os.path.join(root, "src"),
                                     os.path.join(root, "tools", "bpfrt"),
                                     os.path.join(root, "include")):
                            cand = os.path.normpath(os.path.join(base, name))
                            if os.path.isfile(cand):
                                edges.append((rel, os.path.relpath(cand, root), n, name))
                                break
                        else:
                            unresolved.append(f"{rel}:{n}: #include \"{name}\" not found")
    return edges, unresolved


def read_symbols(objects):
    """defs: symbol -> source file defining it; refs: source file -> undefined symbols."""
    defs, refs = {}, collections.defaultdict(set)
    src_of = {}
    for o in objects:
        # CMake names an object <target>.dir/<path of the source>.o
        if ".dir/" not in o or not o.endswith(".o"):
            fail_usage(f"cannot tell the source of object {o}")
        src_of[o] = o.split(".dir/", 1)[1][:-2]
    out = subprocess.run(["nm", "-P", "-A"] + objects, capture_output=True, text=True)
    if out.returncode:
        fail_usage("nm failed: " + out.stderr.strip())
    for line in out.stdout.splitlines():
        head, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) < 2:
            continue
        src = src_of.get(head.rstrip(":"))
        if src is None:
            continue
        sym, kind = fields[0], fields[1]
        if kind == "U":
            refs[src].add(sym)
        elif kind in "TDBRCVWGS" and kind.isupper():
            defs.setdefault(sym, src)
    return defs, refs


def sccs(graph):
    """Strongly connected components with more than one node (iterative Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def one_cycle(graph, comp):
    """A shortest closed path through the first file of comp, for the message."""
    nodes = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = collections.deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph.get(v, ())):
            if w not in nodes:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def doc_rules(path):
    """The rules block of docs/ARCHITECTURE.md: the first fenced block after the heading
    "### Dependency direction", one `folder ▶ uses...` line per folder, top-down."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        return None, f"cannot read {path}: {e}"
    head = text.find("### Dependency direction")
    if head < 0:
        return None, f"{path} has no section '### Dependency direction'"
    start = text.find("```\n", head)
    stop = text.find("```", start + 4) if start >= 0 else -1
    if start < 0 or stop < 0:
        return None, f"{path}: no fenced rules block under '### Dependency direction'"
    rules = {}
    for line in text[start + 4:stop].splitlines():
        name, sep, uses = line.partition("▶")
        if not sep:
            return None, f"{path}: rules block line without '▶': {line!r}"
        rules[name.strip()] = set(uses.split())
    return rules, None


def main():
    if len(sys.argv) != 4:
        fail_usage("usage: check_layers.py SOURCE_DIR RULES OBJECT_LIST")
    root, rules_path, objlist = sys.argv[1:]
    rules = Rules(rules_path)
    objects = [l.strip() for l in open(objlist) if l.strip()]
    if not objects:
        fail_usage(f"{objlist} names no object file: nothing to check")
    missing = [o for o in objects if not os.path.isfile(o)]
    if missing:
        fail_usage("object files not built: " + " ".join(missing[:5]))
    for f in rules.uses:
        if not os.path.isdir(os.path.join(root, "src", f)) and f != "cli" and \
                not os.path.isdir(os.path.join(root, "tools", f)):
            print(f"note: layers.txt names folder {f}, which src/ does not have (yet)")
    fails = []

    # every folder of src/ has a rule
    for d in sorted(os.listdir(os.path.join(root, "src"))):
        if os.path.isdir(os.path.join(root, "src", d)) and d not in rules.uses:
            fails.append(f"src/{d}/ has no rule in tests/build/layers.txt: add a line "
                         f"'{d}: <folders it may use>' above the folders that use it")

    # docs/ARCHITECTURE.md states the same rules
    doc, err = doc_rules(os.path.join(root, "docs", "ARCHITECTURE.md"))
    if err:
        fails.append(err)
    else:
        for f in sorted(set(doc) | set(rules.uses)):
            if doc.get(f) != rules.uses.get(f):
                fails.append(f"docs/ARCHITECTURE.md (Dependency direction) and layers.txt "
                             f"differ for {f}: docs '{' '.join(sorted(doc.get(f, ['(absent)'])))}', "
                             f"layers.txt '{' '.join(sorted(rules.uses.get(f, ['(absent)'])))}'")

    edges, unresolved = read_includes(root)
    fails += unresolved
    defs, refs = read_symbols(objects)

    graph = collections.defaultdict(set)   # file -> files it includes or calls into
    allowed_edges = set()                  # (file, file) pairs tolerated by an allow line
    violations = collections.defaultdict(list)  # (file, target folder) -> evidence

    def use(src, dst, evidence):
        if src == dst:
            return
        graph[src].add(dst)
        graph.setdefault(dst, set())
        if rules.permits(folder_of(src), dst):
            return
        if rules.allowed(src, dst):
            allowed_edges.add((src, dst))
            return
        violations[(src, folder_of(dst))].append(evidence)

    for src, dst, n, name in edges:
        use(src, dst, f"includes \"{name}\" (line {n})")
    for src in sorted(refs):
        for sym in sorted(refs[src]):
            dst = defs.get(sym)
            if dst:
                use(src, dst, f"calls {sym} ({dst})")

    if violations:
        fails.append(f"{len(violations)} file(s) use a folder their layer may not use "
                     f"(rules: tests/build/layers.txt):")
        for (src, tf), ev in sorted(violations.items()):
            ff = folder_of(src)
            fails.append(f"  {src} [{ff}] -> {tf}: " + "; ".join(ev[:4]) +
                         (f"; and {len(ev) - 4} more" if len(ev) > 4 else ""))
        fails.append("  Fix: move the shared piece down to a folder both may use, or pass "
                     "a callback from above.  If the edge is the intended design, change "
                     "the folder's rule in layers.txt and the diagram in "
                     "docs/ARCHITECTURE.md together.  A known violation that an issue "
                     "item removes later: a line 'allow FILE -> FOLDER  # <issue item>'.")

    for a in rules.allow:
        if not a[4]:
            fails.append(f"tests/build/layers.txt:{a[3]}: 'allow {a[0]} -> {a[1]}' matches "
                         f"nothing any more ({a[2]}): delete the line")

    # file cycles.  Between folders: with the rules bottom-up, only a tolerated (allow)
    # edge can close one; say which, so that the cycle is seen to go with its line, and
    # fail on any other.  Inside a folder a cycle fails too, unless a `cycle` line of
    # layers.txt names every file of it (a dispatch table and its rows, a driver and its
    # passes); a line naming files no cycle holds any more must shrink.
    inside = {v: {w for w in ws if folder_of(w) == folder_of(v)} for v, ws in graph.items()}
    seen = [set() for _ in rules.cycles]
    for comp in sccs(inside):
        folder, members = folder_of(comp[0]), set(comp)
        path = " -> ".join(one_cycle(inside, comp))
        line = next((i for i, c in enumerate(rules.cycles)
                     if c[0] == folder and members <= c[1]), None)
        if line is not None:
            seen[line] |= members
            print(f"note: {len(comp)} files of {folder} use each other in a cycle, "
                  f"tolerated by layers.txt:{rules.cycles[line][3]}: {path}")
            continue
        fails.append(f"a cycle of {len(comp)} files inside {folder}: {path}")
        fails.append(f"  files in the cycle: {' '.join(comp)}.  Break it (move what they "
                     f"share into a file that calls none of them, or hand a callback "
                     f"down); a dispatch table and its rows may be listed on a 'cycle "
                     f"{folder}: FILES  # reason' line of layers.txt instead.")
    for c, got in zip(rules.cycles, seen):
        if got != c[1]:
            gone = sorted(f.rsplit("/", 1)[1] for f in c[1] - got)
            fails.append(f"tests/build/layers.txt:{c[3]}: 'cycle {c[0]}' names "
                         f"{' '.join(gone)}, in no cycle any more: take them off the line")
    for comp in sccs(graph):
        folders = sorted({folder_of(f) for f in comp})
        path = " -> ".join(one_cycle(graph, comp))
        if len(folders) == 1:
            continue
        closing = sorted({(v, w) for (v, w) in allowed_edges if v in comp and w in comp})
        if closing:
            print(f"note: a cycle of {len(comp)} files between {', '.join(folders)}, closed "
                  f"only by allow lines ({', '.join(v + ' -> ' + w for v, w in closing[:3])}"
                  f"{' ...' if len(closing) > 3 else ''})")
            continue
        fails.append(f"a cycle of {len(comp)} files between folders {', '.join(folders)}: "
                     f"{path}")
        fails.append(f"  files in the cycle: {' '.join(comp)}.  Break it: move what both "
                     f"need into a file below both.")

    n_calls = sum(len(v) for v in refs.values())
    print(f"layers: {len(rules.order)} folders, {len(edges)} includes and {n_calls} "
          f"undefined symbols in {len(objects)} objects checked; {len(rules.allow)} allow "
          f"lines")
    if fails:
        print("FAIL:")
        for f in fails:
            print(f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
