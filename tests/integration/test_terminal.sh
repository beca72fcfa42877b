#!/usr/bin/env bash
# What people and CI jobs read from `kbound check`: on an 80-column terminal each result once, in
# colour, no line wider than the terminal; NO_COLOR, or a pipe, with no escape code and one line per
# result; progress that says phases, not results; GitHub's job summary and annotations; and a report
# for a run refused before any kernel started.
. "$(dirname "$0")/lib.sh"
require python3 xmllint

ids=$(listed_check_ids)
n_ids=$(echo "$ids" | wc -w)

# on_terminal OUT COLS ENV... -- ARGV...: ARGV on a pty of COLS columns (stdout and stderr both),
# with the environment entries given; what it printed goes to OUT, its exit code to $rc.
on_terminal() {
  local out=$1 cols=$2
  shift 2
  set +e
  /usr/bin/python3 - "$out" "$cols" "$@" <<'EOF'
import fcntl, os, pty, struct, sys, termios
out, cols = sys.argv[1], int(sys.argv[2])
rest = sys.argv[3:]
sep = rest.index("--")
env = dict(os.environ)
env.pop("NO_COLOR", None)
env.pop("COLUMNS", None)
env["TERM"] = "xterm-256color"
for kv in rest[:sep]:
    k, v = kv.split("=", 1)
    env[k] = v
argv = rest[sep + 1:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    os.execve(argv[0], argv, env)
data = bytearray()
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
open(out, "wb").write(data.replace(b"\r\n", b"\n"))
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
EOF
  rc=$?
  set -e
}

# widest FILE: the widest line's columns, SGR sequences not counted, East Asian wide characters two.
widest() {
  python3 - "$1" <<'EOF'
import re, sys, unicodedata
text = open(sys.argv[1], encoding="utf-8").read()
text = re.sub(r"\x1b\[[0-9;]*m", "", text)
print(max((sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
           for line in text.split("\n")), default=0))
EOF
}

# only_sgr FILE: every escape in it is an SGR colour sequence kbound wrote (ESC [ digits ; m).
only_sgr() {
  python3 - "$1" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read()
sys.exit(0 if data.count(b"\x1b") == len(re.findall(rb"\x1b\[[0-9;]*m", data)) else 1)
EOF
}

# rows FILE KERNEL ID: how many table rows (a status word, the kernel, the id) it has.
rows() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -cE "^(PASS|FAIL|UNSUPPORTED|NOT CLAIMED|NOT RUN|DEVIATION|UNTESTED) +$2 +$3( |$)" || true
}

# each_once FILE KERNEL...: every documented check of every kernel has exactly one row, and no
# progress line carries a result.
each_once() {
  local f=$1 k id
  shift
  for k in "$@"; do
    for id in $ids; do
      [ "$(rows "$f" "$k" "$id")" -eq 1 ] || { echo "    $k $id: $(rows "$f" "$k" "$id") rows" >&2; return 1; }
    done
  done
  ! grep -qE "^kbound: kernel '[^']+': [a-z_]+\.[a-z_0-9]+ (pass|fail|unsupported|not_claimed|not_run):" "$f"
}

echo "an 80-column terminal, both kernels"
on_terminal "$scratch/tty.out" 80 -- "$KBOUND" check
ok "check passes on a terminal (rc=$rc)" [ "$rc" -eq 0 ]
w=$(widest "$scratch/tty.out")
ok "no line is wider than 80 columns (widest $w)" [ "$w" -le 80 ]
ok "each result appears once, in the table" each_once "$scratch/tty.out" python3 ir
ok "the statuses are coloured" grep -qF $'\x1b[32mPASS\x1b[0m' "$scratch/tty.out"
# (a pass with a partial boundary where other users' sandboxes run beside an unprivileged check:
# its network namespaces cannot be entered, so that claim is left out; the head is a pass's still)
ok "  and so is the verdict's head" grep -qE $'\x1b\\[1;32mPASS( WITH PARTIAL BOUNDARY)?:\x1b\\[0m' "$scratch/tty.out"
ok "no escape but kbound's colours" only_sgr "$scratch/tty.out"
ok "progress says the phases, with the time so far" \
  grep -qE "^kbound: kernel 'ir': \[[0-9]+\.[0-9] s\] interrupting a running cell" "$scratch/tty.out"
ok "the cut passes are said to be cut" grep -q -- "--verbose shows them whole" "$scratch/tty.out"

echo "NO_COLOR on a terminal"
on_terminal "$scratch/nocolor.out" 80 NO_COLOR=1 -- "$KBOUND" check --kernel python3
ok "check passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "NO_COLOR: no escape code at all" bash -c "! grep -q $'\x1b' '$scratch/nocolor.out'"
ok "NO_COLOR: each result once" each_once "$scratch/nocolor.out" python3
w=$(widest "$scratch/nocolor.out")
ok "NO_COLOR: still fitted to 80 columns (widest $w)" [ "$w" -le 80 ]
on_terminal "$scratch/never.out" 60 -- "$KBOUND" check --kernel python3 --color=never --verbose
ok "--color=never --verbose: no escape code" bash -c "! grep -q $'\x1b' '$scratch/never.out'"
w=$(widest "$scratch/never.out")
ok "--verbose: every detail whole, still within 60 columns (widest $w)" [ "$w" -le 60 ]
ok "--verbose: no line says details were cut" bash -c "! grep -q 'shows them whole' '$scratch/never.out'"
ok "--verbose: progress carries each result as it is judged" \
  grep -qE "^kbound: kernel 'python3': boundary.network pass: " "$scratch/never.out"

echo "piped: greppable"
set +e
"$KBOUND" check --kernel python3 >"$scratch/piped.out" 2>"$scratch/piped.err"
rc=$?
"$KBOUND" check --kernel python3 --color=always >"$scratch/always.out" 2>/dev/null
arc=$?
"$KBOUND" check --kernel python3 --color=sometimes >/dev/null 2>"$scratch/badcolor.err"
brc=$?
set -e
ok "piped check passes (rc=$rc)" [ "$rc" -eq 0 ]
ok "piped: no escape code" bash -c "! grep -q $'\x1b' '$scratch/piped.out' '$scratch/piped.err'"
ok "piped: one line per result" [ "$(grep -cE '^(PASS|FAIL|UNSUPPORTED|NOT CLAIMED|NOT RUN) +python3 ' "$scratch/piped.out")" -eq "$n_ids" ]
cat "$scratch/piped.out" "$scratch/piped.err" >"$scratch/piped.all"
ok "piped: each result once (stdout and stderr together)" each_once "$scratch/piped.all" python3
ok "piped: a pass keeps its whole detail on its line" \
  grep -qE '^PASS +python3 +boundary.descriptors +all [0-9]+ open descriptors .* to the sandbox.s own mounts' "$scratch/piped.out"
ok "--color=always colours a pipe too (rc=$arc)" grep -qF $'\x1b[32mPASS\x1b[0m' "$scratch/always.out"
ok "--color=sometimes is a usage error (rc=$brc)" [ "$brc" -eq 2 ]
ok "  ... naming the values" grep -q "check: --color takes auto, always or never, not 'sometimes'" "$scratch/badcolor.err"

echo "GitHub Actions: the job summary and annotations"
leak=$(leaky_bwrap caps)
set +e
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$scratch/summary.md" \
  "$KBOUND" check --kernel python3 --bwrap "$leak" --junit "$scratch/caps.xml" >"$scratch/gh.out" 2>"$scratch/gh.err"
rc=$?
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$scratch/summary.md" \
  "$KBOUND" check --kernel python3 >"$scratch/gh-pass.out" 2>&1
prc=$?
set -e
ok "a sandbox that keeps capabilities fails (rc=$rc)" [ "$rc" -eq 1 ]
ok "  an ::error annotation names the failing check" \
  grep -qE '^::error title=kbound python3 sandbox.privileges::.+' "$scratch/gh.out"
ok "  one annotation per failing check" \
  [ "$(grep -c '^::error ' "$scratch/gh.out")" -eq "$(grep -cE '^FAIL +python3 ' "$scratch/gh.out")" ]
ok "the passing run (rc=$prc) writes no annotation" bash -c "! grep -q '^::' '$scratch/gh-pass.out'"
ok "the job summary has both runs, appended" [ "$(grep -c '^## .* kbound check: ' "$scratch/summary.md")" -eq 2 ]
ok "  a failing heading, then a passing one" \
  bash -c "grep '^## ' '$scratch/summary.md' | head -1 | grep -q FAIL && grep '^## ' '$scratch/summary.md' | tail -1 | grep -q PASS"
ok "  a table row per check and run" [ "$(grep -c '^| python3 | ' "$scratch/summary.md")" -eq $((2 * n_ids)) ]
ok "  the failing check's evidence, folded" grep -q '^<details><summary>python3 sandbox\\.privileges: ' "$scratch/summary.md"

echo "a refused run still writes its reports"
set +e
"$KBOUND" check --allow-raw-network --require-full-boundary --json "$scratch/refused.json" \
  --junit "$scratch/refused.xml" >/dev/null 2>"$scratch/refused.err"
rc=$?
"$KBOUND" check --kernel no-such-kernel --json "$scratch/missing.json" >/dev/null 2>&1
mrc=$?
set -e
ok "--require-full-boundary under the override refuses (rc=$rc)" [ "$rc" -eq 1 ]
ok "  and still writes the JSON report" test -s "$scratch/refused.json"
ok "  which says the run was refused and why, with the exit code" python3 - "$scratch/refused.json" "$(listed_check_ids | wc -l)" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "fail" and r["complete"] is False and r["refused"] is True, r
assert "--require-full-boundary" in r["incomplete_reason"], r["incomplete_reason"]
assert r["exit_code"] == 1
# The kernels it would have checked (the defaults), every check listed, not run, saying why.
assert [k["name"] for k in r["kernels"]] == ["python3", "ir"], r["kernels"]
for k in r["kernels"]:
    assert k["start"]["status"] == "fail" and "--require-full-boundary" in k["error"], k
    assert len(k["checks"]) == int(sys.argv[2]), len(k["checks"])
    assert all(c["status"] == "not_run" and "refused before any kernel started" in c["detail"] for c in k["checks"])
EOF
ok "  and the JUnit file, failing" grep -q '<failure message="refused before any kernel started' "$scratch/refused.xml"
ok "  ... with every check of both kernels as an error, and each kernel's kernel.start failing" python3 - "$scratch/refused.xml" "$(listed_check_ids | wc -l)" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
n = int(sys.argv[2])
for kernel in ("python3", "ir"):
    cases = root.findall(".//testsuite[@name='kbound.%s']/testcase" % kernel)
    names = [c.get("name") for c in cases]
    assert names[0] == "kernel.start" and cases[0].find("failure") is not None, names
    assert len(names) == n + 1 and all(c.find("error") is not None for c in cases[1:]), names
EOF
ok "a missing kernel (rc=$mrc) still gets its report, naming it" \
  bash -c "[ '$mrc' -eq 3 ] && grep -q \"no-such-kernel': no kernelspec found\" '$scratch/missing.json'"

assert_no_leftovers "terminal"
finish
