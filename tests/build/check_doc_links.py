#!/usr/bin/env python3
"""Check that the documentation's references resolve (ctest build.doc_links).

  check_doc_links.py SOURCE_DIR

Fails (exit 1, one line per problem) when
  - a relative Markdown link [text](path#anchor) in a *.md file names a file that does
    not exist, or an anchor that is no heading of the target file (GitHub's slugs);
  - a file of src/, include/, tools/, tests/, scripts/, bench/, fuzz/, examples/ or a
    *.md file names `docs/<path>.md` that does not exist;
  - a reference "STATUS.md #N" / "STATUS #N" names an issue that docs/STATUS.md has no
    "## #N " section for;
  - README.md or a current document of docs/ (not docs/history/, which keeps what was
    written then) names a file of the repository in backquotes, `src/...`, that does not
    exist (a built program counts when its .c does).
STATUS.md is condensed from time to time and its history moved to docs/history/: this
keeps the comments and docs that point into it honest.
"""
import os
import re
import sys

SKIP_DIRS = {'.git', 'node_modules'}
CODE_DIRS = ('src', 'include', 'tools', 'tests', 'scripts', 'bench', 'fuzz', 'examples')
CODE_EXT = ('.c', '.h', '.def', '.sh', '.py', '.cmake', '.txt', '.md', '.s')

MD_LINK = re.compile(r'(?<!!)\[[^\]\n]*\]\(([^()\s]+)\)')
DOC_PATH = re.compile(r'(?<![\w./-])(docs/[\w./-]+?\.md)\b')
STATUS_REF = re.compile(r'STATUS(?:\.md)?"? #(\d+)')
REPO_PATH = re.compile(r'`((?:src|tests|tools|bench|fuzz|scripts|include|examples|docs)/[\w./-]+)`')


def walk(root, top):
    base = os.path.join(root, top) if top else root
    for d, dirs, files in os.walk(base):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and
                   not (d == root and x.startswith('build'))]     # build trees
        for f in files:
            yield os.path.join(d, f)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def anchors(path):
    out, seen = set(), {}
    in_code = False
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if line.startswith('```'):
                in_code = not in_code
            if in_code:
                continue
            m = re.match(r'#{1,6} (.*)', line)
            if not m:
                continue
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else '%s-%d' % (s, n))
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    problems = []
    status = os.path.join(root, 'docs', 'STATUS.md')
    issues = set()
    with open(status, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'## #(\d+)\b', line)
            if m:
                issues.add(m.group(1))

    md_files = [p for p in walk(root, '') if p.endswith('.md')]
    links = 0
    for p in md_files:
        rel = os.path.relpath(p, root)
        text = open(p, encoding='utf-8', errors='replace').read()
        text_nocode = re.sub(r'```.*?```', '', text, flags=re.S)
        for m in MD_LINK.finditer(text_nocode):
            target = m.group(1)
            if re.match(r'[a-z]+:', target):
                continue
            links += 1
            path, _, anchor = target.partition('#')
            full = os.path.normpath(os.path.join(os.path.dirname(p), path)) if path else p
            if not os.path.exists(full):
                problems.append('%s: link to %s: no such file' % (rel, target))
                continue
            if anchor and full.endswith('.md') and anchor not in anchors(full):
                problems.append('%s: link to %s: no heading with that anchor' % (rel, target))

    refs = 0
    for top in CODE_DIRS + ('docs', ''):
        for p in walk(root, top):
            if top == '' and os.path.dirname(p) != root:
                continue        # only the top-level files here; folders are walked above
            if not p.endswith(CODE_EXT) or p.endswith('check_doc_links.py'):
                continue
            rel = os.path.relpath(p, root)
            try:
                text = open(p, encoding='utf-8', errors='replace').read()
            except OSError:
                continue
            for m in DOC_PATH.finditer(text):
                refs += 1
                if not os.path.exists(os.path.join(root, m.group(1))):
                    problems.append('%s: names %s: no such file' % (rel, m.group(1)))
            for m in STATUS_REF.finditer(text):
                refs += 1
                if m.group(1) not in issues:
                    problems.append('%s: names STATUS.md #%s: docs/STATUS.md has no such '
                                    'section' % (rel, m.group(1)))

    current = [os.path.join(root, 'README.md')] + [
        p for p in md_files
        if os.path.dirname(p) == os.path.join(root, 'docs')]
    for p in current:
        text = open(p, encoding='utf-8', errors='replace').read()
        for m in REPO_PATH.finditer(text):
            path = m.group(1).rstrip('/.')
            refs += 1
            full = os.path.join(root, path)
            if not (os.path.exists(full) or os.path.exists(full + '.c')):
                problems.append('%s: names `%s`: no such file' % (os.path.relpath(p, root),
                                                                  path))

    for line in sorted(set(problems)):
        print(line)
    print('%d Markdown links in %d files, %d references to docs/ and STATUS.md sections: '
          '%d broken' % (links, len(md_files), refs, len(set(problems))))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
