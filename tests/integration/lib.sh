# lib.sh: shared helpers for the integration tests (sourced). Real kbound, real bwrap, real kernels.
set -euo pipefail

: "${KBOUND:?KBOUND must point at the kbound binary (ctest sets it)}"
: "${KBOUND_SOURCE_DIR:?KBOUND_SOURCE_DIR must point at the source tree (ctest sets it)}"

tests_run=0
tests_failed=0
# Under a CI runner, kbound would write its job summary and annotations for every run the tests
# make: only the tests that are about them ask for them.
unset GITHUB_STEP_SUMMARY GITHUB_ACTIONS

# A private runtime dir per test file, so leftovers can be attributed to this test. Under
# KBOUND_TEST_TMP when scripts/test sets it (its run's own folder: it removes what it made, and only
# that), else /tmp.
test_tmp=${KBOUND_TEST_TMP:-/tmp}
KBOUND_RUNTIME_DIR=$(mktemp -d "$test_tmp/kbt-XXXXXX")
chmod 755 "$KBOUND_RUNTIME_DIR"
export KBOUND_RUNTIME_DIR
scratch=$(mktemp -d "$test_tmp/kbs-XXXXXX")
# On exit, whatever this test started and left running (a listener, a helper holding a namespace;
# an assertion that fails ends the file before its own kill) is killed, descendants first: one left
# behind holds ctest's output pipe and the suite waits for it, and nothing a test starts may
# outlive it.
descendants_of() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    descendants_of "$child"
    echo "$child"
  done
}
cleanup_test() {
  local pids
  pids=$(descendants_of $$ | grep -vx "$BASHPID" || true)
  # shellcheck disable=SC2086 # one pid a word
  # (stderr closed first: bash would report each killed job; the test's own output is complete)
  [ -z "$pids" ] || { exec 2>/dev/null; kill -KILL $pids || true; }
  rm -rf "$KBOUND_RUNTIME_DIR" "$scratch" "${cleanup_paths[@]}"
}
# Folders a test makes outside $scratch (mktemp'd; see test_lying.sh), removed with it.
cleanup_paths=()
trap cleanup_test EXIT
# When the tests run as root, kernels (and any --bwrap stand-in) run as the unprivileged sandbox
# user, who may not reach the checkout (a clone under /root, say): fixture programs run from a
# world-readable copy, and scratch can be walked into.
chmod 755 "$scratch"
fixtures="$scratch/fixtures"
cp -R "$KBOUND_SOURCE_DIR/tests/fixtures" "$fixtures"
chmod -R a+rX "$fixtures"

# libkbound_python ARGS...: /usr/bin/python3 able to load this build's libkbound.so through ctypes
# (seccomp_probe.py, the bench's reference harness): in the ASan+UBSan build the library needs its
# sanitizer runtime loaded first, and python3 is not built with it. Whatever it starts in bwrap gets
# an environment of its own, without the preload.
libkbound_python() {
  local runtime
  runtime=$(ldd "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}/libkbound.so" |
    awk '/libasan/ {print $3}')
  if [ -n "$runtime" ]; then
    LD_PRELOAD="$runtime" ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 "$@"
  else
    /usr/bin/python3 "$@"
  fi
}

# leaky_bwrap MODE [VALUE]: a bwrap stand-in for --bwrap that breaks kbound's sandbox the way
# tests/fixtures/leaky-bwrap's LEAK=MODE does; prints its path. kbound starts bwrap with the
# kernel's minimal environment (and, as root, as the sandbox user), so the mode is written into a
# small wrapper rather than passed in the environment.
leaky_bwrap() {
  local mode=$1 value=${2:-} path="$scratch/leaky-bwrap-$1"
  printf '#!/bin/bash\nLEAK=%q LEAK_VALUE=%q exec %q "$@"\n' "$mode" "$value" "$fixtures/leaky-bwrap" >"$path"
  chmod 755 "$path"
  echo "$path"
}

# test_user: prints the ordinary user the tests run kbound as: when they run as root,
# $KBOUND_TEST_USER (scripts/test names one of its run's own, and makes it) or kbound-test (a home
# of its own, a login shell), created here if missing; otherwise the invoking user. The one place
# that makes it, so no test relies on another having run first (ctest runs them in a random
# order). Tests create it concurrently, so useradd runs under a lock. Exits the test with a
# diagnosis when the user cannot be made.
test_user() {
  if [ "$(id -u)" -ne 0 ]; then
    id -un
    return
  fi
  local user=${KBOUND_TEST_USER:-kbound-test}
  if ! id "$user" >/dev/null 2>&1; then
    require useradd flock
    flock "${KBOUND_TEST_TMP:-/run}/kbound-test-user.lock" sh -c \
      "id $user >/dev/null 2>&1 || useradd --create-home --shell /bin/bash $user" >&2 ||
      { echo "FATAL: cannot create the test user $user (useradd, from passwd)" >&2; exit 1; }
  fi
  echo "$user"
}

# sandbox_user: prints the user kbound's sandboxes run as when the tests run as root (what kbound
# itself picks: $KBOUND_SANDBOX_USER, which scripts/test sets to a user of its run's own, else
# kbound-sandbox, which scripts/setup and the package make), or the invoking user otherwise. Exits
# the test with the fix when that user does not exist (kbound would refuse to run, exit 3).
sandbox_user() {
  if [ "$(id -u)" -ne 0 ]; then
    id -un
    return
  fi
  local user=${KBOUND_SANDBOX_USER:-kbound-sandbox}
  id "$user" >/dev/null 2>&1 ||
    { echo "FATAL: the sandbox user $user does not exist: run scripts/setup (or set KBOUND_SANDBOX_USER)" >&2; exit 1; }
  echo "$user"
}

# get_bwrap VERSION: a real bubblewrap of that version (tests/fixtures/get-bwrap: Debian's archive,
# cached), or the test ends saying why.
get_bwrap() {
  "$fixtures/get-bwrap" "$1" ||
    { echo "FATAL: cannot get bubblewrap $1 (tests/fixtures/get-bwrap; scripts/setup installs what it needs)" >&2; exit 1; }
}

# not COMMAND...: an assertion that COMMAND fails (ok NAME not grep -q ...).
not() { ! "$@"; }

# user_kbound: prints the kbound to run as test_user: as root, this build installed into the
# test's scratch folder (once per test), which that user can reach where the build tree may not be
# (a clone under root's 0700 home); otherwise $KBOUND itself.
user_kbound() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$KBOUND"
    return
  fi
  local prefix=$scratch/user-prefix
  if [ ! -x "$prefix/bin/kbound" ]; then
    cmake --install "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}" \
      --prefix "$prefix" >/dev/null ||
      { echo "FATAL: cannot install this build into $prefix for the test user (cmake --install)" >&2; exit 1; }
    chmod -R a+rX "$prefix"
  fi
  echo "$prefix/bin/kbound"
}

# as_sandbox_user COMMAND...: runs COMMAND as the user kbound's sandboxes run as (the sandbox user
# when the tests run as root, else the invoking user), e.g. a helper outside a sandbox that a
# --bwrap stand-in, running as that user too, reaches into.
as_sandbox_user() {
  if [ "$(id -u)" -eq 0 ]; then
    local user
    user=$(sandbox_user)
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

# unwrapped FILE...: the files' text with the lines kbound wrapped for a terminal or a log (doctor's
# items: further lines indented 7 columns, the width 80 when piped) joined again, for a grep.
unwrapped() {
  cat "$@" | sed -e ':a' -e '$!N' -e 's/\n       \([^ ]\)/ \1/' -e 'ta' -e 'P' -e 'D'
}

require() {
  for cmd in "$@"; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
      # An administrator's command (runuser, useradd, ldconfig) is installed but outside an ordinary
      # user's PATH: the test needs root, and says so, not to install what is there.
      if [ "$(id -u)" -ne 0 ] && { [ -x "/usr/sbin/$cmd" ] || [ -x "/sbin/$cmd" ]; }; then
        echo "FATAL: this test needs root ('$cmd' switches users or changes the system): run the tests as root (CI does)" >&2
      else
        echo "FATAL: '$cmd' is required by this test; run scripts/setup (apt-get install it)" >&2
      fi
      exit 1
    fi
  done
}

fail() {
  echo "  FAIL: $*" >&2
  tests_failed=$((tests_failed + 1))
}

# ok NAME COMMAND...: one assertion.
ok() {
  local name=$1
  shift
  tests_run=$((tests_run + 1))
  if "$@"; then
    echo "  ok: $name"
  else
    fail "$name"
  fi
}

# Nothing kbound started may outlive it: no process mentions our runtime dir, and the dir is empty.
assert_no_leftovers() {
  local label=$1
  tests_run=$((tests_run + 1))
  sleep 0.2
  local procs
  procs=$(pgrep -af "$KBOUND_RUNTIME_DIR" | grep -v pgrep || true)
  local dirs
  dirs=$(find "$KBOUND_RUNTIME_DIR" -mindepth 1 -maxdepth 1 2>/dev/null || true)
  if [ -n "$procs" ] || [ -n "$dirs" ]; then
    fail "$label: leftovers: processes [$procs] folders [$dirs]"
  else
    echo "  ok: $label: nothing left behind"
  fi
}

# json_get FILE EXPR: evaluate a Python expression over the JSON document bound to `d`.
# print_transcript FILE: the messages of a check's transcript (kbound check --transcript), to
# stderr, one a line: ms, channel, direction, type, what they carry (a result line elided), so a
# failing run says from its own output what the kernel said and when.
print_transcript() {
  echo "  --- the messages of that check (ms, channel, direction, type, what they carry):" >&2
  /usr/bin/python3 - "$1" <<'PY' >&2 || true
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    c = m.get("content") or {}
    text = c.get("text") or ""
    text = "<a result line>" if "KBOUND-RESULT" in text else text[:60]
    say = c.get("execution_state") or c.get("status") or text or c.get("ename") or ""
    print("  %6d %-7s %-3s %-22s %s" % (m["elapsed_ms"], m["channel"], m["direction"], m["msg_type"], json.dumps(say)))
PY
}

json_get() {
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# json_read VAR FILE EXPR: json_get's value into VAR, as one assertion that EXPR could be evaluated
# (a key path that is not there, or a check that is not in the report, fails it). For an assertion
# that a value lacks something (`! grep`): over `$(json_get ...)` directly, a broken key path
# leaves nothing to grep, and the assertion passed.
json_read() {
  local -n json_read_into=$1
  tests_run=$((tests_run + 1))
  if json_read_into=$(json_get "$2" "$3"); then
    echo "  ok: $1 read from ${2##*/}"
  else
    json_read_into=""
    fail "cannot read $3 from $2"
  fi
}

# check_status FILE KERNEL CHECK_ID: the status of one check in a JSON report.
check_status() {
  json_get "$1" "next((c['status'] for k in d['kernels'] if k['name']=='$2' for c in k['checks'] if c['id']=='$3'), 'missing')"
}

# listed_check_ids [host|cell]: the ids of the checks kbound gives every kernel, in order, one per
# line, from its own table (`kbound check --list-checks`): the one list the tests compare reports
# with, so a check lost from a report fails, not a list kept here by hand. With host or cell, only
# the checks whose pass needs that (the host's looks alone, or a cell of the language's pack).
listed_check_ids() {
  "$KBOUND" check --list-checks | awk -F'\t' -v needs="${1:-}" 'needs == "" || $3 == needs {print $1}'
}

# documented_check_ids: the check ids docs/report-format.md lists ("Check ids, in order: ...").
documented_check_ids() {
  /usr/bin/python3 - "$KBOUND_SOURCE_DIR/docs/report-format.md" <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
listed = doc.split("Check ids, in order:", 1)[1].split(". The full boundary", 1)[0]
print("\n".join(re.findall(r"`([a-z_]+\.[a-z_0-9]+)`", listed)))
PY
}

# same_checks_as_listed FILE: the first kernel of a JSON report has every check of kbound's list,
# in that order.
same_checks_as_listed() {
  local want
  want=$(listed_check_ids)
  [ -n "$want" ] || { echo "kbound check --list-checks listed no checks" >&2; return 1; }
  /usr/bin/python3 - "$1" "$want" <<'PY'
import json, sys
want = sys.argv[2].split()
got = [c["id"] for c in json.load(open(sys.argv[1]))["kernels"][0]["checks"]]
if got != want:
    print(f"report's checks {got}\n listed          {want}", file=sys.stderr)
    sys.exit(1)
PY
}

# Every JUnit file the test made (any *.xml under its scratch folder with a <testsuites> root) is
# held to the rules of Jenkins' junit-10.xsd (tests/fixtures/schemas), whatever the test was about.
junit_valid() {
  local out rc=0
  out=$(xmllint --noout --schema "$KBOUND_SOURCE_DIR/tests/fixtures/schemas/junit-10.xsd" "$1" 2>&1) || rc=$?
  [ "$rc" -eq 0 ] || echo "$out" | head -5 >&2
  return "$rc"
}
validate_junit_files() {
  local f
  while IFS= read -r -d '' f; do
    head -c 4096 "$f" 2>/dev/null | grep -q '<testsuites' || continue
    ok "the JUnit file ${f#"$scratch"/} validates against junit-10.xsd" junit_valid "$f"
  done < <(find "$scratch" -path "$fixtures" -prune -o -type f -name '*.xml' -print0 2>/dev/null)
}

# Every JSON report the test made (any *.json under its scratch folder holding a run object) is
# validated against schemas/kbound-report.schema.json with python3-jsonschema, and each check's
# quotes of the facts against schemas/kbound-evidence.schema.json; a file that looks like a report
# but does not parse fails too.
validate_json_reports() {
  local out rc=0 line
  out=$(/usr/bin/python3 - "$scratch" "$fixtures" "$KBOUND_SOURCE_DIR/schemas/kbound-report.schema.json" \
    "$KBOUND_SOURCE_DIR/schemas/kbound-evidence.schema.json" <<'EOF'
import json, os, sys
import jsonschema
scratch, fixtures, schema_path, evidence_path = sys.argv[1:]
validator = jsonschema.Draft7Validator(json.load(open(schema_path)))
# and each check's quotes of the facts, against the schema facts.def and evidence.def make
evidence = jsonschema.Draft7Validator(json.load(open(evidence_path)))
for root, dirs, files in os.walk(scratch):
    if root.startswith(fixtures):
        dirs[:] = []
        continue
    for name in sorted(files):
        path = os.path.join(root, name)
        rel = os.path.relpath(path, scratch)
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                if b'"kbound_version"' not in f.read(4096):
                    continue
                f.seek(0)
                report = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError) as e:
            print(f"BAD {rel}: not a JSON report: {e}")
            continue
        if not isinstance(report, dict) or "kernels" not in report:
            continue
        errors = list(validator.iter_errors(report))
        for k in report.get("kernels") or []:
            for c in (k.get("checks") or []) if isinstance(k, dict) else []:
                errors += list(evidence.iter_errors(c))
        if errors:
            print(f"BAD {rel}: " + "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]))
        else:
            print(f"OK {rel}")
EOF
  ) || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "the JSON reports could not be validated (python3-jsonschema: run scripts/setup)"
    return
  fi
  while IFS= read -r line; do
    case "$line" in
      "OK "*) ok "the JSON report ${line#OK } validates against kbound-report.schema.json" true ;;
      "BAD "*)
        echo "    ${line#BAD }" >&2
        line=${line#BAD }
        ok "the JSON report ${line%%: *} validates against kbound-report.schema.json" false
        ;;
    esac
  done <<<"$out"
}

# After a failed assertion: what each JSON report in scratch did not pass, so that a failure on a
# loaded CI machine says which check (many reports here fail on purpose: read them by name).
explain_reports() {
  /usr/bin/python3 - "$scratch" <<'EOF2' || true
import json, os, sys
for root, _, files in os.walk(sys.argv[1]):
    for name in sorted(files):
        path = os.path.join(root, name)
        # Only regular files: a test's FIFO named *.json (test_hostile_liveness') would block the open.
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            report = json.load(open(path))
            kernels = report["kernels"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for k in kernels:
            for c in k.get("checks", []):
                if c.get("status") not in ("pass", "unsupported"):
                    detail = " ".join(str(c.get("detail", "")).split())
                    print("  [%s] %s %s %s: %s" % (os.path.relpath(path, sys.argv[1]), k.get("name"), c.get("id"),
                                                  c.get("status"), detail[:300]))
            if k.get("error"):
                print("  [%s] %s error: %s" % (os.path.relpath(path, sys.argv[1]), k.get("name"), str(k["error"])[:300]))
EOF2
}

finish() {
  require xmllint
  validate_junit_files
  validate_json_reports
  if [ "$tests_failed" -ne 0 ]; then
    echo "what the reports of this test did not pass (some on purpose):"
    explain_reports
  fi
  echo "$tests_run checks, $tests_failed failed"
  [ "$tests_failed" -eq 0 ]
}
