#!/usr/bin/env bash
# The source keeps the shape docs/architecture.md draws (issues 23, 34): one folder per layer, each
# including only its own and lower layers, one home per concern, so no file of src/ grows past
# 1,000 lines (an inspect_* or judge_* file past 800), no function past 150, no two parts of the
# library call each other, and every check id is spelled in one file.
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

# Layers: src/ holds one folder per layer of docs/architecture.md (CMakeLists.txt's KBOUND_LAYERS,
# lowest first), the command line and the in-sandbox tools; a file includes only headers of its own
# layer or a lower one (a public header include/kbound/X.h belongs to the layer whose folder holds
# X.c), the command line only public headers, and the tools no internal header but base's.
entries=$(find "$src" -mindepth 1 -maxdepth 1 | wc -l)
ok "src/ holds at most 12 entries (holds $entries: $(ls "$src" | tr '\n' ' '))" [ "$entries" -le 12 ]
layers=$(sed -n 's/^set(KBOUND_LAYERS \(.*\))$/\1/p' "$KBOUND_SOURCE_DIR/CMakeLists.txt")
[ -n "$layers" ] || fail "CMakeLists.txt declares no KBOUND_LAYERS"
ok "nothing but layers, cli and tools directly in src/ (layers: $layers)" \
  [ -z "$(find "$src" -mindepth 1 -maxdepth 1 | sed "s|$src/||" | grep -vxF -f <(tr ' ' '\n' <<<"$layers cli tools"))" ]
upward=$(/usr/bin/python3 - "$src" "$KBOUND_SOURCE_DIR/include/kbound" $layers <<'PY'
import os, re, sys
src, public, order = sys.argv[1], sys.argv[2], sys.argv[3:]
rank = {layer: i for i, layer in enumerate(order)}
module = {}
for layer in order:
    for f in os.listdir(os.path.join(src, layer)):
        if f.endswith(".c"):
            module[f[:-2]] = layer
found = []
def layer_of(header, own):
    if header.startswith("kbound/"):
        return module.get(header[7:-2], "?")
    return header.split("/")[0] if "/" in header else own
for own in order + ["cli", "tools"]:
    for f in sorted(os.listdir(os.path.join(src, own))):
        if not f.endswith((".c", ".h")):
            continue
        for header in re.findall(r'#include "([^"]+)"', open(os.path.join(src, own, f)).read()):
            to = layer_of(header, own)
            if to == "?":
                found.append(f"{own}/{f}: {header} (a public header of no module)")
            elif own == "cli" and not header.startswith("kbound/") and "/" in header:
                found.append(f"cli/{f}: {header} (the command line uses public headers only)")
            elif own == "tools" and "/" in header and not header.startswith("kbound/") and to != "base":
                found.append(f"tools/{f}: {header} (the tools use no internal header but base's)")
            elif own in rank and rank.get(to, -1) > rank[own]:
                found.append(f"{own}/{f}: {header} ({to} is above {own})")
print("; ".join(found))
PY
)
ok "every file includes its own layer's headers or a lower one's${upward:+: $upward}" [ -z "$upward" ]

# Fact keys: spelled in src/base/facts.def alone (issue 34). The layers that make and judge the
# evidence read a fact only through facts.h's typed accessors (no JSON member looked up by a string
# literal in src/verdict, src/evidence or the /proc parsers), and the pure producers write one only
# through its writers (no member added by a literal in src/evidence, the parsers, or the cells'
# programs in src/tools, which read their parameters by name but write every result key by fact).
literal_reads=$(grep -rnE '(kb_json_(get|str|int|true)|json_object_object_get_ex|json_object_object_get)\([^,()]+, *"' \
  "$src/verdict" "$src/evidence" "$src/base/procfs.c" | sed "s|$src/||" | cut -d: -f1,2 | tr '\n' ' ' || true)
ok "no judge or producer reads a fact by a string literal${literal_reads:+: $literal_reads}" [ -z "$literal_reads" ]
literal_writes=$(grep -rnE '(json_object_object_add|kb_inspect_map_add)\([^,()]+, *"' \
  "$src/evidence" "$src/base/procfs.c" "$src/tools" | sed "s|$src/||" | cut -d: -f1,2 | tr '\n' ' ' || true)
ok "no producer writes a fact by a string literal${literal_writes:+: $literal_writes}" [ -z "$literal_writes" ]
ok "the judges and producers include facts.h" \
  [ "$(grep -lF '"base/facts.h"' "$src/verdict/judge-internal.h" "$src/evidence/inspect-internal.h" | wc -l)" -eq 2 ]

# Check ids: spelled, as a C string, in one file of src/ (the check table).
ids=$(listed_check_ids)
[ -n "$ids" ] || fail "kbound check --list-checks listed no checks"
for id in $ids; do
  files=$(grep -rlF "\"$id\"" "$src" --include='*.c' --include='*.h' | sed "s|$src/||" | tr '\n' ' ')
  ok "check id $id is spelled in one file of src/ (in: ${files:-none})" [ "$(wc -w <<<"$files")" -eq 1 ]
done
finish
