#!/usr/bin/env bash
# The man page renders cleanly, documents every command and every option `--help` lists, and is
# installed with the binary.
. "$(dirname "$0")/lib.sh"
require groff

page="$KBOUND_SOURCE_DIR/docs/kbound.1"

ok "the man page renders without groff warnings" \
  bash -c "groff -man -ww -z '$page' 2>'$scratch/groff.err' && ! [ -s '$scratch/groff.err' ]"

# The man page as plain text, with groff's hyphen escapes undone.
groff -man -Tutf8 -P-cbou "$page" 2>/dev/null | sed 's/‐/-/g; s/−/-/g' >"$scratch/page.txt"

commands=$("$KBOUND" --help | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}')
ok "kbound --help lists commands" test -n "$commands"
for cmd in $commands; do
  ok "man page documents the command '$cmd'" grep -qE "^ +kbound $cmd( |$)" "$scratch/page.txt"
  "$KBOUND" "$cmd" --help >"$scratch/help-$cmd.txt" 2>&1 || true
  for opt in $(grep -oE -- '--[a-z][a-z-]+' "$scratch/help-$cmd.txt" | sort -u); do
    [ "$opt" = "--help" ] && continue
    ok "man page documents '$cmd $opt'" grep -qF -- "$opt" "$scratch/page.txt"
  done
done

# The other way round: every option the page lists is one the commands it lists it for take (their
# --help names it), and so is every option the README's commands use.
for cmd in $commands; do "$KBOUND" "$cmd" --help >"$scratch/help-$cmd.txt" 2>&1 || true; done
ok "every option the page lists is taken by the commands it lists it for" /usr/bin/python3 - "$page" "$scratch" <<'EOF'
import re, sys
page, scratch = sys.argv[1], sys.argv[2]
lines = open(page).read().split("\n")
start = lines.index(".SH OPTIONS")
end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(".SH "))
common = {"check", "conformance", "run", "console"}
cmds, bad, seen = common, [], 0
for i in range(start, end):
    if "also take" in lines[i]:
        cmds = {"check", "conformance"}
    if lines[i] != ".TP":
        continue
    m = re.match(r"\.BI? \\-\\-([a-z\\-]+)", lines[i + 1])
    if not m:
        continue
    name = m.group(1).replace("\\-", "-")
    # "(run only)", "(check)", "(check, run and console; ...)": the entry is for those alone.
    note = lines[i + 2]
    only = set(re.findall(r"\b(check|conformance|audit|run|console)\b", note)) if note.startswith(".RB (") else set()
    for cmd in (only or cmds):
        seen += 1
        if f"--{name}" not in open(f"{scratch}/help-{cmd}.txt").read():
            bad.append(f"{cmd} --{name}")
if bad or seen < 20:
    sys.exit(f"listed but not taken: {bad} ({seen} pairs read)")
EOF
ok "every option the README's kbound commands use is taken by that command" /usr/bin/python3 - "$KBOUND_SOURCE_DIR/README.md" "$scratch" <<'EOF'
import re, sys
readme, scratch = sys.argv[1], sys.argv[2]
bad, seen = [], 0
for line in open(readme):
    for m in re.finditer(r"kbound (check|conformance|run|console|doctor|kernelspecs)\b([^`|#]*)", line):
        for opt in re.findall(r"(--[a-z][a-z-]*)", m.group(2)):
            seen += 1
            if opt not in open(f"{scratch}/help-{m.group(1)}.txt").read() and opt != "--help":
                bad.append(f"{m.group(1)} {opt}")
if bad or seen == 0:
    sys.exit(f"used but not taken: {bad} ({seen} read)")
EOF

# cmake --install puts the page where man finds it.
prefix="$scratch/prefix"
cmake --install "${KBOUND_BUILD_DIR:?}" --prefix "$prefix" >/dev/null
ok "cmake --install installs share/man/man1/kbound.1.gz, compressed as Debian has man pages" bash -c "gzip -t '$prefix/share/man/man1/kbound.1.gz' && [ \"\$(gzip -dc '$prefix/share/man/man1/kbound.1.gz')\" = \"\$(cat '$page')\" ]"
ok "man -l reads the installed page" bash -c "MANWIDTH=80 man -l '$prefix/share/man/man1/kbound.1.gz' 2>/dev/null | grep -q 'prove what a sandboxed Jupyter kernel'"

finish
