#!/bin/bash
# The manual pages (docs/man/) are well-formed and say what the code does:
# groff (-ww) and man(1) warn about nothing, lexgrog (mandb, whatis)
# reads every NAME line, every page's SEE ALSO names every other raidfs
# page, and man_options.py finds every option, command, mount option and
# configuration key of the parsers in its page and nothing else (the
# drift check), and raidfs.conf(5)'s example is a file the parser takes.
# The check itself is checked: pages with an option
# renamed, a mount option and a configuration key taken out must fail it,
# naming what is wrong.  Needs neither root nor FUSE.
. "$(dirname "$0")/lib.sh"
t_tmp man
TOP=$(cd "$TESTS_DIR/../.." && pwd)
MAN=$TOP/docs/man
command -v groff >/dev/null || t_skip "no groff"
command -v lexgrog >/dev/null || t_skip "no lexgrog (man-db)"
export LC_ALL=C.UTF-8 MANWIDTH=80

PAGES=(raidfs.8 mount.raidfs.8 mkfs.raidfs.8 fsck.raidfs.8 raidfsctl.8 raidfs.conf.5)
for p in "${PAGES[@]}"; do
	[ -f "$MAN/$p" ] || t_fail "no page $p"
	name=${p%.*} sec=${p##*.}
	w=$(groff -man -Tutf8 -ww -z "$MAN/$p" 2>&1) || t_fail "$p: groff failed: $w"
	[ -z "$w" ] || t_fail "$p: groff warns: $w"
	w=$(man --warnings -l -P cat "$MAN/$p" 2>&1 >/dev/null)
	[ -z "$w" ] || t_fail "$p: man warns: $w"
	lexgrog "$MAN/$p" | grep -q "^$MAN/$p: \"$name - " || t_fail "$p: lexgrog: $(lexgrog "$MAN/$p")"
	head -n 1 "$MAN/$p" | grep -q "^\.TH ${name^^} $sec " || t_fail "$p: .TH is not '${name^^} $sec'"
	see=$(sed -n '/^\.SH SEE ALSO/,/^\.SH/p' "$MAN/$p")
	for q in "${PAGES[@]}"; do
		[ "$q" = "$p" ] && continue
		qn=${q%.*} qs=${q##*.}
		grep -q "^\.BR ${qn//./\\.} ($qs)" <<<"$see" || t_fail "$p: SEE ALSO lacks $qn($qs)"
	done
done
t_log "${#PAGES[@]} pages: no groff or man warnings, lexgrog reads their NAME, SEE ALSO complete"

python3 "$TESTS_DIR/man_options.py" "$TOP" 2>"$T/err" || t_fail "pages and code disagree:
$(cat "$T/err")"
t_log "every option, command, mount option and configuration key of the code is in its page, and no other"

# raidfs.conf(5)'s EXAMPLE is a file the parser takes (mount.raidfs -f
# parses SOURCE and mounts nothing), and one key more is refused
MANWIDTH=200 man -l -P cat "$MAN/raidfs.conf.5" | sed -n '/^EXAMPLE/,/^       and its fstab/p' |
	sed '1d;$d;s/^       //' >"$T/example.conf"
grep -q "^array {" "$T/example.conf" || t_fail "no example in raidfs.conf(5): $(cat "$T/example.conf")"
"$RAIDFS_BIN/mount.raidfs" -f "$T/example.conf" "$T" 2>"$T/err" || t_fail "the example of raidfs.conf(5): $(cat "$T/err")"
sed 's/^options {$/options {\n\tbogus = 1/' "$T/example.conf" >"$T/bogus.conf"
"$RAIDFS_BIN/mount.raidfs" -f "$T/bogus.conf" "$T" 2>"$T/err" && t_fail "mount.raidfs -f takes an unknown key"
grep -q "no such option 'bogus'" "$T/err" || t_fail "unknown key: $(cat "$T/err")"
t_log "raidfs.conf(5)'s example parses ($(grep -c . "$T/example.conf") lines)"

# mutant NAME SED-SCRIPT PAGE WANT: the check fails on the page changed by
# SED-SCRIPT and says WANT
mutant() {
	rm -rf "$T/m" && cp -r "$MAN" "$T/m"
	sed -i "$2" "$T/m/$3"
	cmp -s "$MAN/$3" "$T/m/$3" && t_fail "mutant $1: the sed script changed nothing"
	python3 "$TESTS_DIR/man_options.py" "$TOP" "$T/m" 2>"$T/err" && t_fail "mutant $1 passes the check"
	grep -qF "$4" "$T/err" || t_fail "mutant $1: the check does not say '$4': $(cat "$T/err")"
	t_log "mutant $1: caught ($(head -n 1 "$T/err"))"
}
mutant rebuild 's/\\-\\-rebuild/\\-\\-rebiuld/g' fsck.raidfs.8 "option --rebuild is in the code but not in the page"
mutant rebiuld 's/\\-\\-rebuild/\\-\\-rebiuld/g' fsck.raidfs.8 "option --rebiuld is in the page but not in the code"
mutant logfile '/^\.BI logfile= PATH$/d' raidfs.8 "mount option logfile= is in the code but not in the page"
mutant timeout 's/^\.BR program_timeout /.BR program_tmo /' raidfs.conf.5 "key program_timeout is in the code but not in the page"
mutant type 's/^\.BR ro " = " \\fIBOOLEAN/.BR ro " = " \\fISTRING/' raidfs.conf.5 "key ro is BOOLEAN in the code, STRING in the page"
mutant wait '/^\.BR \\-w ", " \\-\\-wait$/d' raidfsctl.8 "option --wait is in the code but not in the page"
exit 0
