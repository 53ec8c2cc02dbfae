#!/usr/bin/env python3
"""
man_options: the manual pages (docs/man/) and the code's parsers agree,
in both directions, so that neither can drift from the other.

    man_options.py TOP [MANDIR]      (MANDIR: TOP/docs/man)

What the code accepts is read from the parsers themselves, not from their
--help texts (fsck.raidfs accepts -r and -C, which its --help leaves out):

  command-line options   every getopt()/getopt_long() option string and
                         every `struct option NAME[] = {...}` table in the
                         program's parser files (PROGRAMS below)
  raidfsctl commands     raidfsctl.c's dispatch table and strcmp(name, ...)
  mount options          source/config.c's opt_rules[] table
  configuration keys     source/config.c's cfg_opt_t tables, by section,
                         with their libconfuse type
  raidfsctl settings     the "rebuild-speed-...=" names control_proto.c parses

What a page documents is read from its roff source, by convention:

  options         the tags (the line after .TP) of the OPTIONS section,
                  and the SYNOPSIS lines that start with the program
  commands        the tags of raidfsctl(8)'s COMMANDS section
  mount options   the tags of raidfs(8)'s MOUNT OPTIONS section, items
                  separated by ", " ("name=VALUE" is name=, "x-*" is x-)
  keys            the tags of raidfs.conf(5)'s "NAME SECTION" sections
                  ("key = TYPE"; TYPE STRING, INTEGER, BOOLEAN or
                  "{ STRING, ... }" for a list); keys outside any section
                  under a "TOP-LEVEL KEYS" heading

Every item of the code must be documented there, and every item there
must be in the code.  Exit 0 when they agree, 1 with each disagreement on
stderr.
"""
import glob
import os
import re
import sys

# program -> (page, parser files relative to TOP)
PROGRAMS = {
    "raidfs": ("raidfs.8", ["daemon/raidfs_main.c"]),
    "mount.raidfs": ("mount.raidfs.8", ["daemon/mount_main.c"]),
    "mkfs.raidfs": ("mkfs.raidfs.8", ["mkfs/*.c"]),
    "fsck.raidfs": ("fsck.raidfs.8", ["fsck/*.c"]),
    "raidfsctl": ("raidfsctl.8", ["ctl/*.c"]),
}
CFG_TYPES = {"STR": "STRING", "INT": "INTEGER", "BOOL": "BOOLEAN",
             "FLOAT": "FLOAT", "STR_LIST": "LIST", "INT_LIST": "LIST"}

problems = []


def problem(msg):
    problems.append(msg)


# ---- the code ---------------------------------------------------------------

def read_sources(top, patterns):
    text = ""
    for p in patterns:
        for f in sorted(glob.glob(os.path.join(top, p))):
            with open(f) as fh:
                text += fh.read()
    return text


def code_options(src):
    opts = set()
    for s in re.findall(r'getopt(?:_long)?\s*\(\s*\w+\s*,\s*\w+\s*,\s*"([^"]*)"', src):
        opts |= {"-" + c for c in s if c.isalnum()}
    for table in re.findall(r'struct option\s+\w+\[\]\s*=\s*\{(.*?)\};', src, re.S):
        opts |= {"--" + n for n in re.findall(r'\{\s*"([\w-]+)"\s*,', table)}
    return opts


def code_commands(src):
    cmds = set(re.findall(r'\{\s*"([\w-]+)"\s*,\s*CTL_\w+\s*\}', src))
    return cmds | set(re.findall(r'strcmp\(\s*name\s*,\s*"([\w-]+)"\s*\)', src))


def code_mount_options(src):
    m = re.search(r'opt_rules\[\]\s*=\s*\{(.*?)\n\};', src, re.S)
    return set(re.findall(r'\{\s*"([^"]+)"\s*,\s*OPT_\w+\s*\}', m.group(1))) if m else set()


def code_config_keys(src):
    """{section: {key: TYPE}}; section "" holds top-level keys."""
    tables = dict(re.findall(r'cfg_opt_t\s+(\w+)\[\]\s*=\s*\{(.*?)\};', src, re.S))
    sections = {"": "top_opts"}
    for body in tables.values():
        for name, table in re.findall(r'CFG_SEC\(\s*"(\w+)"\s*,\s*(\w+)', body):
            sections[name] = table
    keys = {}
    for sec, table in sections.items():
        entries = re.findall(r'CFG_(\w+)\(\s*"(\w+)"', tables.get(table, ""))
        keys[sec] = {k: CFG_TYPES.get(t, t) for t, k in entries if t != "SEC"}
    return keys


# ---- the pages --------------------------------------------------------------

def roff_args(rest):
    """A macro line's arguments: blank-separated, "..." quoted, "" a quote."""
    args, cur, quoted, i, started = [], "", False, 0, False
    while i < len(rest):
        c = rest[i]
        if quoted and c == '"' and rest[i + 1:i + 2] == '"':
            cur += '"'
            i += 2
            continue
        if c == '"':
            quoted = not quoted
            started = True
        elif c in " \t" and not quoted:
            if started:
                args.append(cur)
            cur, started = "", False
        else:
            cur += c
            started = True
        i += 1
    if started:
        args.append(cur)
    return args


def roff_unescape(s):
    s = re.sub(r'\\f(\(..|\[[^]]*\]|.)', "", s)
    s = s.replace("\\-", "-").replace("\\(dq", '"').replace("\\&", "")
    s = s.replace("\\e", "\\").replace("\\ ", " ").replace("\\(em", "-")
    return s


def roff_text(line):
    """The text a line prints, fonts dropped."""
    m = re.match(r'\.(BR|RB|BI|IB|IR|RI|SM|SB|B|I)(?:\s+(.*))?$', line)
    if not m:
        return roff_unescape(line)
    args = roff_args(m.group(2) or "")
    joiner = " " if m.group(1) in ("B", "I", "SM", "SB") else ""
    return roff_unescape(joiner.join(args))


def page_sections(path):
    """{SECTION: (tags, text lines)} of a page."""
    sections, name = {}, ""
    with open(path) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        m = re.match(r'\.S[HS]\s+"?([^"]*)"?\s*$', line)
        if m:
            name = m.group(1).strip().upper()
            sections.setdefault(name, ([], []))
            continue
        tags, text = sections.setdefault(name, ([], []))
        if line.startswith(".TP") and i + 1 < len(lines):
            tags.append(roff_text(lines[i + 1]))
        if line in (".br", ".PP") or line.startswith(".TP"):
            text.append("\n")
        elif not line.startswith(".\\\"") and line not in (".nf", ".fi"):
            text.append(roff_text(line) + " ")
    return sections


def option_tokens(text):
    toks = set()
    for t in re.findall(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)', text):
        if not t.startswith("--") and len(t) > 2:
            toks |= {"-" + c for c in t[1:]}     # -sfnv
        else:
            toks.add(t)
    return toks


def synopsis_options(sections, prog):
    text = "".join(sections.get("SYNOPSIS", ([], []))[1])
    toks = set()
    for seg in text.split("\n"):
        seg = seg.strip()
        if seg.startswith(prog + " ") or seg == prog:
            toks |= option_tokens(seg[len(prog):])
    return toks


def tag_items(tag):
    items = set()
    for it in re.split(r',\s+', tag.strip()):
        it = it.strip().split()[0] if it.strip() else ""
        if not it:
            continue
        name = it.split("=")[0] + ("=" if "=" in it else "")
        items.add(name[:-1] if name.endswith("*") else name)
    return items


# ---- the checks -------------------------------------------------------------

def compare(what, where, code, page):
    for x in sorted(code - page):
        problem(f"{where}: {what} {x} is in the code but not in the page")
    for x in sorted(page - code):
        problem(f"{where}: {what} {x} is in the page but not in the code")


def check_program(top, mandir, prog):
    page, patterns = PROGRAMS[prog]
    path = os.path.join(mandir, page)
    if not os.path.exists(path):
        return problem(f"{page}: missing (the page of {prog})")
    src = read_sources(top, patterns)
    secs = page_sections(path)
    opt_tags = secs.get("OPTIONS", ([], []))[0]
    documented = set().union(*(option_tokens(t) for t in opt_tags)) if opt_tags else set()
    code = code_options(src)
    compare("option", page, code, documented)
    for t in sorted(synopsis_options(secs, prog) - code):
        problem(f"{page}: SYNOPSIS option {t} is not in the code")
    if prog == "raidfsctl":
        tags = secs.get("COMMANDS", ([], []))[0]
        compare("command", page, code_commands(src), {t.split()[0] for t in tags if t})
        proto = read_sources(top, ["daemon/control_proto.c"])
        settings = set(re.findall(r'"(rebuild-[\w-]+=)"', proto))
        text = "".join("".join(v[1]) + " ".join(v[0]) for v in secs.values())
        compare("setting", page, settings, set(re.findall(r'(rebuild-[\w-]+=)', text)))


def check_mount_options(top, mandir):
    secs = page_sections(os.path.join(mandir, "raidfs.8"))
    tags = secs.get("MOUNT OPTIONS", ([], []))[0]
    page = set().union(*(tag_items(t) for t in tags)) if tags else set()
    code = code_mount_options(read_sources(top, ["source/config.c"]))
    if not code:
        problem("source/config.c: no opt_rules[] table found")
    compare("mount option", "raidfs.8 MOUNT OPTIONS", code, page)


def check_config_keys(top, mandir):
    path = os.path.join(mandir, "raidfs.conf.5")
    if not os.path.exists(path):
        return problem("raidfs.conf.5: missing")
    code = code_config_keys(read_sources(top, ["source/config.c"]))
    secs = page_sections(path)
    page = {}
    for name, (tags, _) in secs.items():
        m = re.match(r'(\w+) SECTION$', name)
        sec = "" if name == "TOP-LEVEL KEYS" else m.group(1).lower() if m else None
        if sec is None:
            continue
        for t in tags:
            km = re.match(r'\s*(\w+)\s*=\s*(.*)$', t)
            if not km:
                problem(f"raidfs.conf.5 {name}: tag '{t}' is not 'key = TYPE'")
                continue
            typ = "LIST" if km.group(2).strip().startswith("{") else km.group(2).split()[0]
            page.setdefault(sec, {})[km.group(1)] = typ
    for sec in sorted(set(code) | set(page)):
        c, p = code.get(sec, {}), page.get(sec, {})
        where = f"raidfs.conf.5 {sec.upper() + ' SECTION' if sec else 'TOP-LEVEL KEYS'}"
        compare("key", where, set(c), set(p))
        for k in sorted(set(c) & set(p)):
            if c[k] != p[k]:
                problem(f"{where}: key {k} is {c[k]} in the code, {p[k]} in the page")


def main():
    top = sys.argv[1]
    mandir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(top, "docs/man")
    for prog in PROGRAMS:
        check_program(top, mandir, prog)
    check_mount_options(top, mandir)
    check_config_keys(top, mandir)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
