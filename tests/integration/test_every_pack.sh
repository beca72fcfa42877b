#!/usr/bin/env bash
# Every language pack kbound ships (kernels/*/) names every cell a check runs, and is run by the
# full `kbound check` of one test of this suite that holds it to every check judged: a pack added
# without such a test, or one whose kernel the suite does not run, fails here, so no shipped pack
# can leave a check untested that the others judge. And the packs stay data and a few snippets
# (issue 25): every attempt is kbound-probe's, so all their code together stays within 200 lines.
source "$(dirname "$0")/lib.sh"
require /usr/bin/python3

# language -> the test that runs its pack's full check on a real kernel, and what it asserts there
declare -A runs=(
  [python]="test_check.sh:for k in python3 ir"
  [r]="test_check.sh:for k in python3 ir"
  [bash]="test_bash_kernel.sh:same_checks_as_listed"
  [octave]="test_octave_kernel.sh:same_checks_as_listed"
)
cells="identity set_var long get_var probe attack_surface"
for manifest in "$KBOUND_SOURCE_DIR"/kernels/*/kbound.json; do
  pack=$(basename "$(dirname "$manifest")")
  lang=$(json_get "$manifest" "d['language']")
  ok "$pack: kbound.json names a language ($lang)" [ -n "$lang" ]
  for cell in $cells; do
    file=$(json_get "$manifest" "d['cells'].get('$cell', '')")
    ok "$pack: cell $cell is a file of the pack ($file)" [ -f "$(dirname "$manifest")/$file" ]
  done
  entry=${runs[$lang]:-}
  ok "$pack: a test of the suite runs its kernel's full check (add it to runs above)" [ -n "$entry" ]
  [ -n "$entry" ] || continue
  test_file="$KBOUND_SOURCE_DIR/tests/integration/${entry%%:*}"
  ok "$pack: ${entry%%:*} holds it to every check (${entry#*:})" grep -qF -- "${entry#*:}" "$test_file"
done

# The packs' code: every line of every file but kbound.json (data) that is not blank or a comment
# (#, or % for Octave); the budget is issue 25's, for every shipped language together.
code_lines=$(find "$KBOUND_SOURCE_DIR/kernels" -type f ! -name kbound.json -exec cat {} + |
  grep -cvE '^[[:space:]]*(#|%|$)')
ok "all packs together hold at most 200 lines of code ($code_lines)" [ "$code_lines" -le 200 ]
ok "  ... and some ($code_lines)" [ "$code_lines" -gt 0 ]
finish
