#!/usr/bin/env bash
# kbound's own, unmodified sandbox, whose network namespace a process outside it (not kbound's, not
# bwrap's) pins while the check runs: first by holding /proc/<kernel>/ns/net open, then (as root) by
# bind-mounting it in a mount namespace of its own, as `ip netns add` does. Either lets whoever has
# it join the sandbox's namespace from outside (setns), so sandbox.backend must fail, naming it; a
# plain run beside them must still pass.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 unshare

# pin MODE KBOUND_PID OUT: waits for the kernel among KBOUND_PID's descendants (the process in a
# network namespace other than this one's), writes its pid to OUT, then pins that namespace
# (MODE fd or mount) until the kernel is gone.
pin() {
  local mode=$1 kb=$2 out=$3 kernel="" own
  own=$(readlink /proc/self/ns/net)
  for _ in $(seq 500); do
    for p in $(descendants_of "$kb"); do
      [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" != "$own" ] && [ -n "$(readlink "/proc/$p/ns/net" 2>/dev/null)" ] &&
        grep -qa ipykernel "/proc/$p/cmdline" 2>/dev/null && kernel=$p
    done
    [ -n "$kernel" ] && break
    sleep 0.01
  done
  [ -n "$kernel" ] || return 0
  echo "$kernel" >"$out"
  if [ "$mode" = fd ]; then
    exec 9<"/proc/$kernel/ns/net"
    while [ -e "/proc/$kernel" ]; do sleep 0.05; done
  else
    exec unshare -m --propagation private sh -c \
      'f=$(mktemp); mount --bind "/proc/$1/ns/net" "$f" && echo "$f" >>"$2"; while [ -e "/proc/$1" ]; do sleep 0.05; done' \
      sh "$kernel" "$out"
  fi
}

# pinned MODE PATTERN: one check with its network namespace pinned from outside as MODE.
pinned() {
  local mode=$1 pattern=$2 kb rc
  "$KBOUND" check --quiet --kernel python3 --json "$scratch/$mode.json" >"$scratch/$mode.out" 2>"$scratch/$mode.err" &
  kb=$!
  pin "$mode" "$kb" "$scratch/$mode.pin" &
  local holder=$!
  set +e
  wait "$kb"
  rc=$?
  set -e
  wait "$holder" 2>/dev/null || true
  ok "pinned by $mode: the helper found the kernel" [ -s "$scratch/$mode.pin" ]
  ok "pinned by $mode: exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "pinned by $mode: sandbox.backend fails" [ "$(check_status "$scratch/$mode.json" python3 sandbox.backend)" = "fail" ]
  local got
  got=$(json_get "$scratch/$mode.json" \
    "next(' | '.join([c['detail']] + c['evidence'].get('problems', [])) for k in d['kernels'] for c in k['checks'] if c['id']=='sandbox.backend')")
  ok "pinned by $mode: sandbox.backend names '$pattern'" grep -qF -- "$pattern" <<<"$got"
  grep -qF -- "$pattern" <<<"$got" || echo "    got: $got"
  # Nothing else is wrong with the sandbox: the pin is the only problem named.
  ok "pinned by $mode: no other problem named" \
    [ -z "$(grep -o '[^|]*' <<<"$got" | sed 1d | grep -vF "$pattern" | grep -vF 'processes outside the sandbox are in its namespaces or hold them open' || true)" ]
}

echo "a process outside holds the kernel's network namespace open"
pinned fd "outside the sandbox, holds the sandbox's net namespace open (fd 9)"

if [ "$(id -u)" -eq 0 ]; then
  echo "a process outside bind-mounts the kernel's network namespace in a mount namespace of its own"
  pinned mount "the sandbox's net namespace is bind-mounted at /tmp/"
else
  # An unprivileged user cannot bind-mount a namespace (nsfs) in a user namespace of its own.
  echo "NOT running the bind-mount case: it needs root (run as uid $(id -u))"
fi

echo "the same check, nothing pinned"
"$KBOUND" check --quiet --kernel python3 --json "$scratch/plain.json" >"$scratch/plain.out" 2>&1 ||
  tail -5 "$scratch/plain.out"
ok "unpinned: sandbox.backend passes" [ "$(check_status "$scratch/plain.json" python3 sandbox.backend)" = "pass" ]
assert_no_leftovers "after pinned namespaces"
finish
