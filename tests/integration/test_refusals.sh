#!/usr/bin/env bash
# What a CI engineer meets when a run is refused or a kernel cannot start (issue 39, item 2), and the
# messages of the set-up's refusals (item 5): a refused run (exit 3) still writes GitHub's job
# summary and ::error annotations, and its JSON and JUnit list every check of every kernel asked
# for, not run, with the reason; a kernel that cannot start keeps every check too, and its
# kernel.start is in the JSON as in the JUnit file; a mistyped kernel gets "did you mean"; a
# kernel.json syntax error is said as one; a program that is not bubblewrap is told apart by what
# it is; a relative KBOUND_RUNTIME_DIR is made absolute; a report path in /proc is refused before
# the run; the README's builds use the machine's cores. (--help and doctor's width:
# test_help_width.)
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3

n_checks=$(listed_check_ids | wc -l)

# every_check_not_run REPORT KERNEL WORDS: the kernel is in the report with every check of kbound's
# list, each not_run naming WORDS, and its start failed.
every_check_not_run() {
  /usr/bin/python3 - "$1" "$2" "$3" "$(listed_check_ids)" <<'PY'
import json, sys
report, name, words, want = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
k = next(k for k in json.load(open(report))["kernels"] if k["name"] == name)
got = [c["id"] for c in k["checks"]]
assert got == want, f"checks {got}"
bad = [c for c in k["checks"] if c["status"] != "not_run" or words not in c["detail"]]
assert not bad, bad[:2]
assert k["start"]["id"] == "kernel.start" and k["start"]["status"] == "fail", k["start"]
PY
}

echo "a refused run under GitHub Actions: job summary, annotations, every check in the reports"
set +e
env GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$scratch/summary.md" "$KBOUND" check --kernel pyhton3 --kernel python3 \
  --json "$scratch/refused.json" --junit "$scratch/refused.xml" >"$scratch/refused.out" 2>"$scratch/refused.err"
rc=$?
set -e
ok "an unknown kernel: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... did you mean python3?" grep -qF "kernel 'pyhton3': no kernelspec found; did you mean python3?" "$scratch/refused.err"
ok "  ... the job summary is written, failing, with the reason" \
  grep -q "kbound check: FAIL" "$scratch/summary.md"
ok "  ... and naming the refusal" grep -q "refused before any kernel started" "$scratch/summary.md"
ok "  ... an ::error annotation for the run" grep -q "^::error title=kbound run run.complete::refused before any kernel started" "$scratch/refused.out"
ok "  ... and one for each kernel's start" grep -q "^::error title=kbound pyhton3 kernel.start::" "$scratch/refused.out"
ok "  ... not one per check not run (GitHub shows ten a step)" [ "$(grep -c '^::error' "$scratch/refused.out")" -eq 3 ]
for k in pyhton3 python3; do
  ok "  ... the JSON lists $k with every check not run, naming the refusal" \
    every_check_not_run "$scratch/refused.json" "$k" "the run was refused before any kernel started"
done
ok "  ... the unknown kernel's interrupt_mode is null, not made up" \
  [ "$(json_get "$scratch/refused.json" "d['kernels'][0]['interrupt_mode']")" = None ]
ok "  ... the JUnit file has kernel.start and every check for both ($((2 * (n_checks + 1) + 1)) test cases)" \
  [ "$(grep -c '<testcase ' "$scratch/refused.xml")" -eq $((2 * (n_checks + 1) + 1)) ]

echo "a refused run without reports or CI: nothing written, the reason on stderr"
set +e
"$KBOUND" check --kernel pyhton3 >"$scratch/plain.out" 2>"$scratch/plain.err"
rc=$?
set -e
ok "exit 3 (rc=$rc), no annotation outside GitHub Actions" bash -c "[ $rc -eq 3 ] && ! grep -q '::error' '$scratch/plain.out'"

echo "a program that is not bubblewrap"
set +e
"$KBOUND" check --kernel python3 --bwrap /bin/true --json "$scratch/true.json" >"$scratch/true.out" 2>"$scratch/true.err"
rc=$?
"$KBOUND" doctor --bwrap /bin/true >"$scratch/true-doctor.raw" 2>&1
drc=$?
set -e
ok "check --bwrap /bin/true: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... says /bin/true is not bubblewrap" grep -qF "/bin/true is not bubblewrap" "$scratch/true.err"
ok "  ... never takes coreutils' version for bubblewrap's" not grep -q "bubblewrap 9" "$scratch/true.err"
ok "  ... the report lists python3 with every check not run" \
  every_check_not_run "$scratch/true.json" python3 "/bin/true is not bubblewrap"
ok "doctor --bwrap /bin/true: exit 3 (rc=$drc)" [ "$drc" -eq 3 ]
ok "  ... a FAIL line saying so" grep -qF "[FAIL] bwrap: /bin/true is not bubblewrap" <(unwrapped "$scratch/true-doctor.raw")
cat >"$scratch/says-bubblewrap" <<'SH'
#!/bin/sh
echo "bubblewrap 0.8.0"
SH
chmod 755 "$scratch/says-bubblewrap"
set +e
"$KBOUND" check --kernel python3 --bwrap "$scratch/says-bubblewrap" >/dev/null 2>"$scratch/says.err"
rc=$?
set -e
ok "a program that only says 'bubblewrap 0.8.0': exit 3, not bubblewrap (rc=$rc)" \
  bash -c "[ $rc -eq 3 ] && grep -qF 'says-bubblewrap is not bubblewrap' '$scratch/says.err'"

echo "a kernel that cannot start keeps every check"
mkdir -p "$scratch/specs/dies"
printf '{"argv": ["/bin/false", "{connection_file}"], "language": "python"}' >"$scratch/specs/dies/kernel.json"
set +e
"$KBOUND" check --kernel "$scratch/specs/dies" --json "$scratch/dies.json" --junit "$scratch/dies.xml" >/dev/null 2>&1
rc=$?
set -e
ok "exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
json_read dies_checks "$scratch/dies.json" "[(c['id'], c['status']) for c in d['kernels'][0]['checks']]"
ok "  ... every check is in the JSON ($n_checks)" \
  [ "$(json_get "$scratch/dies.json" "len(d['kernels'][0]['checks'])")" -eq "$n_checks" ]
ok "  ... sandbox.backend failed, the others not run, naming why" /usr/bin/python3 - "$scratch/dies.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
first, rest = k["checks"][0], k["checks"][1:]
assert first["id"] == "sandbox.backend" and first["status"] == "fail", first
assert all(c["status"] == "not_run" and "the kernel did not start in the sandbox" in c["detail"] for c in rest), rest[:1]
PY
ok "  ... its start is kernel.start in the JSON, failed with the error" \
  [ "$(json_get "$scratch/dies.json" "(d['kernels'][0]['start']['id'], d['kernels'][0]['start']['status'], d['kernels'][0]['start']['detail'] == d['kernels'][0]['error'])")" = "('kernel.start', 'fail', True)" ]
ok "  ... and in the JUnit file, with every check ($((n_checks + 1)) test cases, not 2)" \
  [ "$(grep -c '<testcase ' "$scratch/dies.xml")" -eq $((n_checks + 1)) ]

echo "kernel.json errors are said for what they are"
mkdir -p "$scratch/specs/syntax" "$scratch/specs/argv"
printf '{"argv": ["python3", "-m",\n  "ipykernel_launcher" "-f", "{connection_file}"],\n "language": "python"}' \
  >"$scratch/specs/syntax/kernel.json"
printf '{"argv": "python3 -m ipykernel_launcher", "language": "python"}' >"$scratch/specs/argv/kernel.json"
set +e
"$KBOUND" run --kernel "$scratch/specs/syntax" 'print(1)' >/dev/null 2>"$scratch/syntax.err"
rc=$?
"$KBOUND" check --kernel "$scratch/specs/argv" >/dev/null 2>"$scratch/argv.err"
arc=$?
set -e
ok "a JSON syntax error: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
ok "  ... said as one, with the file, line and column" \
  grep -qF "$scratch/specs/syntax/kernel.json: not valid JSON (line 2, column 24: " "$scratch/syntax.err"
ok "  ... and not as an argv or env problem" not grep -qE "argv must|env strings" "$scratch/syntax.err"
ok "argv not a list: exit 3 (rc=$arc), naming argv" grep -qF "kernel.json: \"argv\" is missing or not a list" "$scratch/argv.err"

echo "a relative KBOUND_RUNTIME_DIR is made absolute"
mkdir -m 755 "$scratch/rel" "$scratch/rel/rt"
out=$(cd "$scratch/rel" && KBOUND_RUNTIME_DIR=rt "$KBOUND" run --kernel python3 'print(6*7)' 2>"$scratch/rel.err") || true
ok "run works from a relative folder (got '$out')" [ "$out" = 42 ]
set +e
(cd "$scratch/rel" && KBOUND_RUNTIME_DIR=missing "$KBOUND" run --kernel python3 'print(1)' >/dev/null 2>"$scratch/relmiss.err")
rc=$?
set -e
ok "a relative folder that is not there: exit 3, named whole (rc=$rc)" \
  bash -c "[ $rc -eq 3 ] && grep -qF '$scratch/rel/missing' '$scratch/relmiss.err' && ! grep -q 'Invalid argument' '$scratch/relmiss.err'"
ok "  ... nothing left in the relative folder" [ -z "$(ls -A "$scratch/rel/rt")" ]

echo "a report path that cannot take a file is refused before the run"
set +e
"$KBOUND" check --kernel python3 --json /proc/version >"$scratch/proc.out" 2>"$scratch/proc.err"
rc=$?
set -e
ok "--json /proc/version: exit 2 (rc=$rc)" [ "$rc" -eq 2 ]
# (root may create there and is told the folder takes no new file; another user is refused first)
ok "  ... naming why" grep -qE "cannot write the --json report to /proc/version: (its folder takes no new file|Permission denied)" "$scratch/proc.err"
ok "  ... before any kernel started" not grep -q "starting in bubblewrap" "$scratch/proc.err"

echo "the README's and docs/ci.md's builds use the machine's cores"
ok "every cmake --build there passes -j\"\$(nproc)\"" /usr/bin/python3 - "$KBOUND_SOURCE_DIR" <<'PY'
import re, sys
for doc in ("README.md", "docs/ci.md"):
    for line in open(f"{sys.argv[1]}/{doc}"):
        if "cmake --build" in line and re.search(r"cmake --build", line):
            assert '-j"$(nproc)"' in line, f"{doc}: {line.strip()}"
            assert not re.search(r"-j(\s|$)", line), f"{doc}: an unbounded -j: {line.strip()}"
PY
assert_no_leftovers "after the refusals"
finish
