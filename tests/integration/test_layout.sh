#!/usr/bin/env bash
# The source keeps the shape docs/architecture.md draws (issue 23): one home per concern, so no
# file of src/ grows past 1,000 lines (an inspect_* or judge_* file past 800), no function past
# 150, no two parts of the library call each other, and every check id is spelled in one file.
source "$(dirname "$0")/lib.sh"
require nm

src="$KBOUND_SOURCE_DIR/src"

# Files: lines of each .c and .h under src/.
long_files=$(find "$src" -name '*.[ch]' -print0 | xargs -0 wc -l | awk -v top="$src/" '
  $2 == "total" { next }
  { f = $2; sub(top, "", f); base = f; sub(".*/", "", base)
    max = (base ~ /^(inspect|judge)/) ? 800 : 1000
    if ($1 > max) printf "%s (%d > %d) ", f, $1, max }')
ok "no file of src/ is over 1,000 lines, no inspect*/judge* file over 800${long_files:+: $long_files}" [ -z "$long_files" ]

# Functions: the house style opens a function's body at the end of its signature's line and closes
# it with a "}" in the first column; every such span is measured.
long_functions=$(find "$src" -name '*.c' -print0 | xargs -0 awk '
  FNR == 1 { open = 0 }
  /^[A-Za-z_].*\) \{$/ && !/^(struct|union|enum|typedef)/ { open = FNR; name = $0; next }
  /^\}/ && open { if (FNR - open > 150) { n = split(FILENAME, p, "/"); printf "%s:%d (%d lines) ", p[n], open, FNR - open }; open = 0 }')
ok "no function of src/ is over 150 lines${long_functions:+: $long_functions}" [ -z "$long_functions" ]

# The library's parts: which member of libkbound_static.a defines each global symbol, and which
# members each member calls. A pair that calls each other is a cycle docs/architecture.md forbids.
lib="$(dirname "$KBOUND")/libkbound_static.a"
[ -f "$lib" ] || fail "no $lib: the build makes it (target kbound_static); build before testing"
nm -A "$lib" >"$scratch/nm" || fail "nm cannot read $lib"
cycles=$(/usr/bin/python3 - "$scratch/nm" <<'PY'
import collections, sys
defs, uses = {}, collections.defaultdict(set)
for line in open(sys.argv[1]):
    where, _, rest = line.rstrip("\n").rpartition(":")
    member = where.rpartition(":")[2] or where
    parts = rest.split()
    if len(parts) == 3 and parts[1] in "TDRB":
        defs[parts[2]] = member
    elif len(parts) == 2 and parts[0] == "U":
        uses[member].add(parts[1])
calls = {m: {defs[s] for s in syms if s in defs and defs[s] != m} for m, syms in uses.items()}
pairs = sorted({tuple(sorted((a, b))) for a in calls for b in calls[a] if a in calls.get(b, ())})
print(" ".join(f"{a}<->{b}" for a, b in pairs))
PY
)
ok "libkbound_static.a has members that call one another" [ "$(grep -c ' T ' "$scratch/nm")" -gt 100 ]
ok "no two files of the library call each other${cycles:+: $cycles}" [ -z "$cycles" ]

# Check ids: spelled, as a C string, in one file of src/ (the check table).
ids=$(listed_check_ids)
[ -n "$ids" ] || fail "kbound check --list-checks listed no checks"
for id in $ids; do
  files=$(grep -rlF "\"$id\"" "$src" --include='*.c' --include='*.h' | sed "s|$src/||" | tr '\n' ' ')
  ok "check id $id is spelled in one file of src/ (in: ${files:-none})" [ "$(wc -w <<<"$files")" -eq 1 ]
done
finish
