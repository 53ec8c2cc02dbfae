# Named checks with a list of known failures (sourced, bash, after lib.sh).
#
# A script declares KNOWN_FAILURES=("check-name reason..." ...) at its top:
# raidfs bugs found and not fixed yet.  k_check NAME CMD... runs one check;
# a failure of a known check prints "known failure" and does not count, a
# known check that passes says so (the entry can go); k_done ends the test,
# failing when any other check failed.

K_FAILED=()

k_known_reason() {
	local e
	for e in "${KNOWN_FAILURES[@]}"; do
		[ "${e%% *}" = "$1" ] && { echo "${e#* }"; return 0; }
	done
	return 1
}

# k_result NAME RC: records the outcome of a check run elsewhere.
k_result() {
	local name=$1 rc=$2 reason
	if reason=$(k_known_reason "$name"); then
		if [ "$rc" -eq 0 ]; then
			t_log "ok $name (listed in KNOWN_FAILURES but passed: remove it)"
		else
			t_log "known failure: $name: $reason"
		fi
	elif [ "$rc" -eq 0 ]; then
		t_log "ok $name"
	else
		t_log "FAILED $name"
		K_FAILED+=("$name")
	fi
}

k_check() {
	local name=$1 rc=0
	shift
	"$@" || rc=$?
	k_result "$name" "$rc"
}

k_done() {
	[ ${#K_FAILED[@]} -eq 0 ] || t_fail "failed checks: ${K_FAILED[*]}"
	exit 0
}
