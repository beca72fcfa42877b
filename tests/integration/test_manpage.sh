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

# cmake --install puts the page where man finds it.
prefix="$scratch/prefix"
cmake --install "${KBOUND_BUILD_DIR:?}" --prefix "$prefix" >/dev/null
ok "cmake --install installs share/man/man1/kbound.1.gz, compressed as Debian has man pages" bash -c "gzip -t '$prefix/share/man/man1/kbound.1.gz' && [ \"\$(gzip -dc '$prefix/share/man/man1/kbound.1.gz')\" = \"\$(cat '$page')\" ]"
ok "man -l reads the installed page" bash -c "MANWIDTH=80 man -l '$prefix/share/man/man1/kbound.1.gz' 2>/dev/null | grep -q 'prove what a sandboxed Jupyter kernel'"

finish
