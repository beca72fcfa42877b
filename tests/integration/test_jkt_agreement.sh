#!/usr/bin/env bash
# kbound conformance side by side with jupyter_kernel_test (the Jupyter project's own kernel test
# suite, Debian's python3-jupyter-kernel-test) on python3 and ir: jkt's KernelTests configured with
# the language packs' snippets, kbound's items mapped to jkt's tests (docs/kernels.md), and the two
# must agree wherever both tested the same thing. jkt starts its kernels itself, outside any
# sandbox; kbound runs them in its own.
source "$(dirname "$0")/lib.sh"
require bwrap R
if ! /usr/bin/python3 -c 'import jupyter_kernel_test, jupyter_client' 2>/dev/null; then
  echo "FATAL: jupyter_kernel_test is required by this test; run scripts/setup" \
    "(apt-get install python3-jupyter-kernel-test)" >&2
  exit 1
fi

echo "kbound conformance on python3 and ir"
set +e
"$KBOUND" conformance --quiet --json "$scratch/kb.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "kbound conformance exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -n 20 "$scratch/out" "$scratch/err"

# jkt's kernels are plain jupyter_client ones: their IPython history, runtime files and R's
# session folders go to scratch, not to this machine's home.
export IPYTHONDIR="$scratch/ipython" JUPYTER_RUNTIME_DIR="$scratch/jupyter-runtime" MPLCONFIGDIR="$scratch/mpl"
for k in python3 ir; do
  case $k in python3) pack=python ;; ir) pack=r ;; esac
  echo "jupyter_kernel_test on $k"
  set +e
  timeout -k 10 600 /usr/bin/python3 "$KBOUND_SOURCE_DIR/tests/integration/jkt_compare.py" "$k" \
    "$KBOUND_SOURCE_DIR/kernels/$pack/kbound.json" "$scratch/kb.json" "$scratch/jkt-$k.json" \
    >"$scratch/cmp-$k" 2>"$scratch/cmp-$k.err"
  rc=$?
  set -e
  sed 's/^/    /' "$scratch/cmp-$k"
  ok "$k: jkt and kbound agree on every test both ran (rc=$rc)" [ "$rc" -eq 0 ]
  [ "$rc" -eq 0 ] || grep -E "DISAGREEMENT|without a kbound|Error|error" "$scratch/cmp-$k.err" | head -20 >&2
  # The comparison must have compared something: jkt ran, and most pairs were tested by both.
  ok "$k: at least 14 of jkt's tests were compared" [ "$(json_get "$scratch/jkt-$k.json" \
    "sum(r['verdict'] in ('agree', 'explained') for r in d['rows'])")" -ge 14 ]
done

# What the measured kernels do, so a change in either tool (or a kernel upgrade) shows here
# (docs/kernels.md has the table).
row() { json_get "$scratch/jkt-$1.json" "next(r['jkt'] + ' ' + r['kbound'] for r in d['rows'] if r['jkt_test'] == '$2')"; }
ok "python3: both pass execute_result" [ "$(row python3 test_execute_result)" = "pass pass" ]
ok "python3: both find ipykernel's range reply numbering the current session 0" \
  [ "$(row python3 "test_history[hist_access_type=range]")" = "fail fails" ]
ok "ir: both find IRkernel's value published as display_data, not execute_result" \
  [ "$(row ir test_execute_result)" = "fail fails" ]
ok "ir: both find IRkernel's empty history" [ "$(row ir "test_history[hist_access_type=tail]")" = "fail fails" ]
ok "ir: both pass the pager" [ "$(row ir test_pager)" = "pass pass" ]

echo "a disagreement is caught"
# kbound's report doctored: python3's execute.result failed, although jkt (replayed) passed it.
/usr/bin/python3 - "$scratch/kb.json" "$scratch/kb-doctored.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in d["kernels"]:
    for c in k["checks"]:
        if k["name"] == "python3" and c["id"] == "execute.result":
            c["status"] = "fail"
json.dump(d, open(sys.argv[2], "w"))
PY
set +e
/usr/bin/python3 "$KBOUND_SOURCE_DIR/tests/integration/jkt_compare.py" python3 "$KBOUND_SOURCE_DIR/kernels/python/kbound.json" \
  "$scratch/kb-doctored.json" "$scratch/jkt-doctored.json" --replay "$scratch/jkt-python3.json" \
  >"$scratch/cmp-doctored" 2>"$scratch/cmp-doctored.err"
rc=$?
set -e
ok "the comparison fails (rc=$rc)" [ "$rc" -eq 1 ]
ok "and names the pair" grep -q "DISAGREEMENT on python3: jkt test_execute_result pass" "$scratch/cmp-doctored.err"
assert_no_leftovers "after the comparison"
finish
