# ctl_lib.sh: what the raidfsctl tests share (sourced after lib.sh and
# t_setup; $M is the mount point): the tool, the status schema, exit-code
# and state checks.
CTL=$RAIDFS_BIN/raidfsctl
SCHEMA=$TESTS_DIR/../../docs/raidfsctl-status.schema.json
[ -x "$CTL" ] || t_fail "no $CTL"
"$PY" -c 'import jsonschema' 2>/dev/null || t_skip "no python3-jsonschema"

expect_rc() {   # expect_rc RC CMD...: runs CMD, fails unless it exits RC
	local want=$1 rc=0
	shift
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq "$want" ] || t_fail "$* exited $rc, not $want: $(cat "$T/err")"
}

validate() {    # validate: status --json of $M against the schema
	"$CTL" status --json "$M" >"$T/status.json" || t_fail "status --json"
	"$PY" -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.validate(json.load(open(sys.argv[2])), schema,
                    cls=jsonschema.Draft202012Validator)
' "$SCHEMA" "$T/status.json" || t_fail "status --json does not validate"
}

state() {
	"$CTL" status --json "$M" | "$PY" -c \
		'import json,sys; print(json.load(sys.stdin)["arrays"][0]["state"])'
}

# wait_state STATE: polls status (every 50 ms, 20 s at most), recording
# every state seen in $T/states
wait_state() {
	local i s
	for i in $(seq 400); do
		s=$(state)
		echo "$s" >>"$T/states"
		[ "$s" = "$1" ] && return 0
		sleep 0.05
	done
	t_fail "status never became $1 (last: $s)"
}

# wait_event PATTERN [SECONDS]: polls the events of $M (every 100 ms, 30 s
# by default) until one matches PATTERN; fails the test if none does
wait_event() {
	local i
	for i in $(seq $((${2:-30} * 10))); do
		"$CTL" events "$M" | grep -q "$1" && return 0
		sleep 0.1
	done
	t_fail "no event matching '$1': $("$CTL" events "$M" | tail -n 5)"
}
