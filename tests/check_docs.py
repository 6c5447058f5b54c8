#!/usr/bin/env python3
"""Checks that the documentation says what the code does (standard library only).

    check_docs.py links SOURCE_DIR
        every relative link in README.md, docs/*.md and input/README.md resolves: the file
        exists and, for FILE#anchor or #anchor, FILE (a Markdown file) has a heading whose
        GitHub anchor that is.
    check_docs.py keys SOURCE_DIR CASCADE
        input/README.md's key tables are, line for line, those `cascade check --keys` makes from
        the deck's table of keys (src/core/deck_keys.cpp); the deck keys in them are those the deck
        reader accepts, section by section (the reader's own list, from its unknown-key
        message), and the keys of the resolved decks `cascade check` prints for
        input/decaying.yaml and input/poisson_gaussian.yaml are among them.
    check_docs.py write-keys SOURCE_DIR CASCADE
        rewrites input/README.md's key tables from `cascade check --keys` (after a change to
        src/core/deck_keys.cpp), leaving the prose around them as it is.

Prints every disagreement and exits 1 if there is one.
"""
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """The lines of a Markdown file outside fenced code blocks, with their numbers."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, line


def github_anchor(heading):
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation but '-' and
    '_' removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"[`*]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found, seen = set(), {}
    for _, line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        a = github_anchor(m.group(1))
        n = seen.get(a, 0)
        seen[a] = n + 1
        found.add(a if n == 0 else "%s-%d" % (a, n))
    return found


def check_links(root):
    files = [os.path.join(root, "README.md"), os.path.join(root, "input", "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    problems, count = [], 0
    for path in files:
        if not os.path.exists(path):
            continue
        rel = os.path.relpath(path, root)
        for number, line in prose_lines(path):
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                count += 1
                name, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
                if not os.path.exists(dest):
                    problems.append("%s:%d: link to %s: no such file" % (rel, number, target))
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append("%s:%d: link to %s: no heading with that anchor in %s"
                                    % (rel, number, target, os.path.relpath(dest, root)))
    print("links: %d relative links in %d files" % (count, len(files)))
    return problems


def reader_keys(cascade):
    """Section -> the keys the deck reader accepts, from its own unknown-key messages."""
    def error_list(deck, what):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(deck)
        try:
            r = subprocess.run([cascade, "check", f.name], capture_output=True, text=True, timeout=60)
        finally:
            os.unlink(f.name)
        m = re.search(r"expected %s \(([^)]*)\)" % what, r.stderr)
        if not m:
            raise SystemExit("keys: no list of %s in: %s" % (what, r.stderr.strip()))
        return {k.strip() for k in m.group(1).split(",")}

    sections = error_list("grid: {nx: 16}\nzz_unknown: {}\n", "a section name")
    keys = {}
    for s in sorted(sections):
        deck = "grid: {nx: 16, zz_unknown: 1}\n" if s == "grid" else "grid: {nx: 16}\n%s: {zz_unknown: 1}\n" % s
        keys[s] = error_list(deck, "a known key of '%s'" % s)
    vortex = error_list("grid: {nx: 16}\ninitial: {type: vortices, vortices: [{x: 1, zz_unknown: 2}]}\n",
                        "a key of a vortex")
    return keys, vortex


def key_tables(lines):
    """Section -> (index of its first table line, the lines of that table) under '## section'."""
    tables, section = {}, None
    for i, line in enumerate(lines):
        m = re.match(r"^##\s+`?(\w+)`?", line)
        if m:
            section = m.group(1)
            continue
        if section and line.startswith("|"):
            start, rows = tables.setdefault(section, (i, []))
            if start + len(rows) == i:  # the first table of the section only
                rows.append(line.rstrip("\n"))
    return tables


def documented_keys(path):
    """Section -> keys in the first column of input/README.md's tables under '## section'."""
    keys, vortex = {}, set()
    with open(path, encoding="utf-8") as f:
        tables = key_tables(f.readlines())
    for section, (_, rows) in tables.items():
        for line in rows:
            cells = line.split("|")
            first = cells[1] if len(cells) > 2 else ""
            names = re.findall(r"`([^`]+)`", first)
            if names and first.strip() not in ("key", "deck") and not names[0].endswith(".yaml"):
                keys.setdefault(section, set()).update(names)
                if "vortices" in names:
                    m = re.search(r"\{([^}]*)\}", line)
                    if m:
                        vortex = {k.strip() for k in m.group(1).split(",")}
    return keys, vortex


def resolved_keys(cascade, deck):
    keys, section = set(), None
    for line in cascade_says(cascade, "check", deck).splitlines():
        m = re.match(r"^(\w+):\s*$", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^  (\w+):", line)
        if m and section:
            keys.add((section, m.group(1)))
    return keys


def cascade_says(cascade, *args):
    """What `cascade ARGS` prints, which must succeed."""
    return subprocess.run([cascade] + list(args), capture_output=True, text=True, timeout=60, check=True).stdout


def generated_tables(cascade):
    return key_tables(cascade_says(cascade, "check", "--keys").splitlines(True))


def check_key_tables(root, cascade):
    readme = os.path.join(root, "input", "README.md")
    with open(readme, encoding="utf-8") as f:
        committed = key_tables(f.readlines())
    problems = []
    for s, (_, rows) in generated_tables(cascade).items():
        have = committed.get(s, (0, []))[1]
        if have != rows:
            problems.append("input/README.md: the table of '%s' is not what `cascade check --keys` makes from "
                            "src/core/deck_keys.cpp (run: check_docs.py write-keys SOURCE_DIR CASCADE)" % s)
            for line in difflib.unified_diff(have, rows, "input/README.md", "cascade check --keys", lineterm="", n=0):
                problems.append("  " + line)
    return problems


def write_key_tables(root, cascade):
    readme = os.path.join(root, "input", "README.md")
    with open(readme, encoding="utf-8") as f:
        lines = f.readlines()
    committed = key_tables(lines)
    # From the last table up, so that the indices of those above stay right.
    for s, (_, rows) in sorted(generated_tables(cascade).items(), key=lambda kv: -committed.get(kv[0], (-1,))[0]):
        if s not in committed:
            raise SystemExit("write-keys: input/README.md has no table under '## %s'" % s)
        start, old = committed[s]
        lines[start:start + len(old)] = [r + "\n" for r in rows]
    with open(readme, "w", encoding="utf-8") as f:
        f.writelines(lines)
    print("write-keys: %s rewritten from `cascade check --keys`" % readme)
    return []


def check_keys(root, cascade):
    accepted, vortex = reader_keys(cascade)
    documented, doc_vortex = documented_keys(os.path.join(root, "input", "README.md"))
    problems = check_key_tables(root, cascade)
    for s in sorted(set(accepted) | set(documented)):
        if s not in documented:
            problems.append("input/README.md: no table for the section '%s' the reader accepts" % s)
            continue
        if s not in accepted:
            problems.append("input/README.md: the section '%s' is not one the reader accepts" % s)
            continue
        for k in sorted(accepted[s] - documented[s]):
            problems.append("input/README.md: %s.%s is accepted by the reader but not documented" % (s, k))
        for k in sorted(documented[s] - accepted[s]):
            problems.append("input/README.md: %s.%s is documented but the reader refuses it" % (s, k))
    if doc_vortex != vortex:
        problems.append("input/README.md: a vortex's keys {%s} are documented; the reader takes {%s}"
                        % (", ".join(sorted(doc_vortex)), ", ".join(sorted(vortex))))
    for deck in ("decaying.yaml", "poisson_gaussian.yaml"):
        for s, k in sorted(resolved_keys(cascade, os.path.join(root, "input", deck))):
            if k not in accepted.get(s, set()):
                problems.append("cascade check input/%s prints %s.%s, which the reader refuses" % (deck, s, k))
    print("keys: %d sections, %d keys accepted by the reader"
          % (len(accepted), sum(len(v) for v in accepted.values())))
    return problems


def main(argv):
    if len(argv) == 3 and argv[1] == "links":
        problems = check_links(argv[2])
    elif len(argv) == 4 and argv[1] == "keys":
        problems = check_keys(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "write-keys":
        problems = write_key_tables(argv[2], argv[3])
    else:
        print(__doc__)
        return 2
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
