# hostile_lib.sh: helpers for the hostile-kernel tests (sourced after lib.sh). Each test builds a
# kernelspec around tests/fixtures/hostile-kernel with one --mode, runs a real kbound command
# against it in the real sandbox, and asserts the exact outcome. docs/faults.md lists the modes.
require bwrap /usr/bin/python3
/usr/bin/python3 -c 'import zmq' 2>/dev/null ||
  { echo "FATAL: the hostile kernel needs pyzmq for /usr/bin/python3 (apt-get install python3-zmq)" >&2; exit 1; }

hostile="$fixtures/hostile-kernel"
# The fixture (lib.sh's world-readable copy) is outside the sandbox's view: bind it read-only.
bind=(--ro-bind "$fixtures")

# hostile_spec NAME MODE [FIXTURE_ARGS...]: a kernelspec folder for the fixture in MODE (interrupt
# mode $HOSTILE_INTERRUPT_MODE, "message" by default; language python); prints its path.
hostile_spec() {
  local name=$1 mode=$2
  shift 2
  local dir="$scratch/kernels/$name"
  mkdir -p "$dir"
  /usr/bin/python3 - "$dir/kernel.json" "$hostile" "${HOSTILE_INTERRUPT_MODE:-message}" "$mode" "$@" <<'EOF'
import json, sys
path, prog, interrupt_mode, mode, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
json.dump({"argv": ["/usr/bin/python3", prog, "--mode", mode] + extra + ["{connection_file}"],
           "display_name": "hostile " + mode, "language": "python", "interrupt_mode": interrupt_mode},
          open(path, "w"))
EOF
  echo "$dir"
}

# timed LABEL COMMAND...: runs COMMAND with stdout/stderr in $scratch/LABEL.{out,err}; sets rc and
# elapsed_ms.
timed() {
  local label=$1
  shift
  local start
  start=$(date +%s%N)
  set +e
  "$@" >"$scratch/$label.out" 2>"$scratch/$label.err"
  rc=$?
  set -e
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
}

# expect LABEL RC MAX_SECONDS PATTERN: after `timed LABEL ...`: the exit code, the elapsed time
# bound (the deadline given plus a margin for start-up and teardown: a bound, not a benchmark),
# the error named on stderr (an extended regex; "-" for none expected: stderr then must be
# empty; STREAM "out" looks in stdout instead, for check's report), no crash, no sanitizer report.
expect() {
  local label=$1 want_rc=$2 max_s=$3 pattern=$4 stream=${5:-err}
  ok "$label: exit code $want_rc (got $rc)" [ "$rc" -eq "$want_rc" ]
  ok "$label: ended within ${max_s} s (${elapsed_ms} ms)" [ "$elapsed_ms" -lt $((max_s * 1000)) ]
  if [ "$pattern" = "-" ]; then
    ok "$label: nothing on stderr" [ ! -s "$scratch/$label.err" ]
  else
    ok "$label: std$stream says /$pattern/" grep -Eq -- "$pattern" "$scratch/$label.$stream"
  fi
  ok "$label: no crash, no sanitizer report" no_crash "$label"
  if [ "$rc" -ne "$want_rc" ] || { [ "$pattern" != "-" ] && ! grep -Eq -- "$pattern" "$scratch/$label.$stream"; }; then
    sed 's/^/    | /' "$scratch/$label.err" "$scratch/$label.out" | head -30 >&2
  fi
}

no_crash() {
  [ "$rc" -lt 128 ] && ! grep -Eq 'Sanitizer|runtime error:|LeakSanitizer' "$scratch/$1.err"
}

# run_mode LABEL MODE TIMEOUT [FIXTURE_ARGS...] [-- CODE]: `kbound run` one cell in the mode.
run_mode() {
  local label=$1 mode=$2 timeout=$3
  shift 3
  local args=() code='print(6*7)'
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then code=$2; break; fi
    args+=("$1")
    shift
  done
  local spec
  spec=$(hostile_spec "$label" "$mode" "${args[@]}")
  timed "$label" "$KBOUND" run --kernel "$spec" "${bind[@]}" --timeout "$timeout" "$code"
}

# check_mode LABEL MODE TIMEOUT [FIXTURE_ARGS...]: `kbound check` of that kernel, JSON report in
# $scratch/LABEL.json.
check_mode() {
  local label=$1 mode=$2 timeout=$3
  shift 3
  local spec
  spec=$(hostile_spec "$label" "$mode" "$@")
  timed "$label" "$KBOUND" check --quiet --kernel "$spec" "${bind[@]}" --timeout "$timeout" \
    --json "$scratch/$label.json"
}

# detail LABEL CHECK_ID: the detail text of one check in LABEL's JSON report.
detail() {
  json_get "$scratch/$1.json" "next((c['detail'] for k in d['kernels'] for c in k['checks'] if c['id']=='$2'), 'missing')"
}
