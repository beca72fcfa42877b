#!/usr/bin/env bash
# test_audit_tcp.sh: `kbound audit --transport tcp` on a wrapper that shares the host's network
# (docs/audit.md "Transport"): a bwrap without --unshare-net (its own mount, pid, user namespaces)
# around Debian's ipykernel gets a connection file on 127.0.0.1, its kernel is found as the holder
# of the far end of each of kbound's TCP connections and every check is judged (boundary.network
# fails for the shared network, or is not claimed when the expect file allows it); a kernelspec
# whose metadata says it speaks only TCP is audited over TCP without the option; and the kernel
# finding fails closed, naming what holds the far end, for a forwarder in the wrapper's argv (it
# accepts kbound's connections and passes them on to the real kernel), for a real port forward into
# a network namespace of the wrapper's own (slirp4netns) and for a kernel that left the wrapper's
# tree. Loopback only. As root, and unprivileged.
source "$(dirname "$0")/lib.sh"
require bwrap runuser unshare slirp4netns /usr/bin/python3

specs=$scratch/jupyter/kernels
mkdir -p "$specs"
spec() { # NAME DISPLAY ARGV_JSON [METADATA_JSON]
  mkdir -p "$specs/$1"
  printf '{"argv": %s, "display_name": "%s", "language": "python", "metadata": %s}\n' "$3" "$2" "${4:-{\}}" \
    >"$specs/$1/kernel.json"
}
# The tight wrapper of test_audit.sh with the host's network shared (--share-net after --unshare-all).
system='--ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin --ro-bind /etc/alternatives /etc/alternatives --ro-bind /etc/ld.so.cache /etc/ld.so.cache'
tail='--unshare-all --share-net --die-with-parent --new-session --cap-drop ALL --proc /proc --dev /dev --tmpfs /tmp --bind \"$d\" \"$d\" --chdir \"$d\" --setenv HOME \"$d\" /usr/bin/python3 -m ipykernel_launcher -f \"$1\"'
sharednet="[\"/bin/sh\", \"-c\", \"d=\$(dirname \\\"\$1\\\"); exec bwrap $system $tail\", \"sh\", \"{connection_file}\"]"
spec bwrap-sharednet "Python in bwrap sharing the host's network" "$sharednet"
spec bwrap-tcponly "The same, its kernelspec saying TCP" "$sharednet" '{"kbound": {"transport": "tcp"}}'
spec forwarder "A forwarder in front of Python" "[\"$fixtures/tcp-forwarder\", \"{connection_file}\"]"
spec slirp "Python behind slirp4netns" "[\"$fixtures/slirp-kernel\", \"{connection_file}\"]"
spec escaped "A kernel that leaves its launcher's tree" \
  '["/bin/sh", "-c", "(/usr/bin/python3 -m ipykernel_launcher -f \"$1\" &); exec sleep 600", "sh", "{connection_file}"]'
export JUPYTER_PATH=$scratch/jupyter

audit() { # NAME [OPTIONS...]: one run, its report in $scratch/NAME.json, its exit code in $status
  local name=$1
  shift
  status=0
  "$KBOUND" audit --kernel "$name" --json "$scratch/$name.json" "$@" >"$scratch/$name.out" 2>&1 || status=$?
}
check_status() { json_get "$1" "[c['status'] for c in d['kernels'][0]['checks'] if c['id'] == '$2'][0]"; }
check_detail() { json_get "$1" "[c['detail'] for c in d['kernels'][0]['checks'] if c['id'] == '$2'][0]"; }

# -- the host's network shared: found over TCP, every check judged
audit bwrap-sharednet --transport tcp
r=$scratch/bwrap-sharednet.json
ok "shared network: exit 1 (looser than kbound's claims)" [ "$status" -eq 1 ]
json_read transport "$r" "d['kernels'][0]['audit']['transport']"
ok "the report says the transport is tcp ($transport)" [ "$transport" = tcp ]
json_read n "$r" "d['kernels'][0]['audit']['kernel_nspid']"
ok "the kernel was found as PID 2 of bwrap's pid namespace (nspid $n)" [ "$n" = 2 ]
json_read eps "$r" "' '.join(e['path'] for c in d['kernels'][0]['checks'] if c['id'] == 'identity.pid2' for e in c['evidence']['endpoints'])"
ok "identity.pid2 looked for the kernel's TCP endpoints on 127.0.0.1 ($eps)" grep -Eq '^tcp://127\.0\.0\.1:[0-9]+ tcp://127\.0\.0\.1:[0-9]+$' <<<"$eps"
for id in identity.pid2 identity.pidfd interrupt.control interrupt.pidfd persistence.namespace boundary.descriptors \
  boundary.workspace_writable lifecycle.shutdown; do
  ok "shared network: $id passes" [ "$(check_status "$r" "$id")" = pass ]
done
ok "shared network: boundary.network fails" [ "$(check_status "$r" boundary.network)" = fail ]
ok "shared network: sandbox.backend names the shared net namespace" \
  grep -q "shares kbound's net namespace" <<<"$(check_detail "$r" sandbox.backend)"

# -- the expect file allows the shared network: not claimed, never passed
cat >"$scratch/expect.json" <<'EOF'
{"kbound_expect": 1, "description": "a bwrap that shares the host's network, without a filter or limits",
 "allow": {"boundary.network": "kernels use the host's network",
           "sandbox.backend": "the network namespace is the host's by design",
           "sandbox.attack_surface": "no seccomp filter in this deployment",
           "sandbox.resources": "limits are the host's job",
           "boundary.write_outside": "bwrap leaves /proc's host-global entries to their owners"}}
EOF
audit bwrap-sharednet --transport tcp --expect "$scratch/expect.json"
r=$scratch/bwrap-sharednet.json
ok "with the expect file: exit 0 (every check as expected)" [ "$status" -eq 0 ]
ok "boundary.network is not claimed, not passed" [ "$(check_status "$r" boundary.network)" = not_claimed ]
ok "identity.pid2 still passes" [ "$(check_status "$r" identity.pid2)" = pass ]
json_read full "$r" "d['claims']['full_boundary']"
ok "no full boundary claimed" [ "$full" = False ]

# -- a kernelspec that says it speaks only TCP: over TCP without --transport
audit bwrap-tcponly
r=$scratch/bwrap-tcponly.json
json_read transport "$r" "d['kernels'][0]['audit']['transport']"
ok "the kernelspec's metadata makes the transport tcp ($transport)" [ "$transport" = tcp ]
ok "...and its kernel is found (identity.pid2 passes)" [ "$(check_status "$r" identity.pid2)" = pass ]

# -- a forwarder in the wrapper's argv holds the far ends: never taken for the kernel
audit forwarder --transport tcp
r=$scratch/forwarder.json
ok "forwarder: exit 1" [ "$status" -eq 1 ]
ok "forwarder: identity.pid2 fails" [ "$(check_status "$r" identity.pid2)" = fail ]
ok "forwarder: the kernel finding names the forwarder" \
  grep -q "is held by pid [0-9]* (tcp-forwarder), which holds a TCP connection .* it passes kbound's connections on" \
  <<<"$(check_detail "$r" identity.pid2)"
json_read passed "$r" "' '.join(c['id'] for c in d['kernels'][0]['checks'] if c['status'] == 'pass')"
ok "forwarder: nothing passes ($passed)" [ -z "$passed" ]
# control: the same forwarder's kernel is a working kernel (its bytes do reach ipykernel)
ok "control: the forwarder carried kbound's kernel_info to ipykernel" grep -q "startup [0-9]* ms, implementation ipython" "$scratch/forwarder.out"

# -- a port forward into a network namespace of the wrapper's own (slirp4netns, as rootless podman
# forwards ports): the far end is slirp4netns's, never taken for the kernel
audit slirp --transport tcp
r=$scratch/slirp.json
ok "control: the kernel behind slirp4netns answered through the forward" grep -q "startup [0-9]* ms, implementation ipython" "$scratch/slirp.out"
ok "slirp4netns: identity.pid2 fails" [ "$(check_status "$r" identity.pid2)" = fail ]
ok "slirp4netns: the kernel finding names slirp4netns and its TUN/TAP device" \
  grep -q "is held by pid [0-9]* (slirp4netns), which holds a TUN/TAP device" <<<"$(check_detail "$r" identity.pid2)"

# -- a kernel outside the wrapper's tree (it double-forked away): refused, named
audit escaped --transport tcp
r=$scratch/escaped.json
ok "escaped: identity.pid2 fails" [ "$(check_status "$r" identity.pid2)" = fail ]
ok "escaped: names the holder outside the wrapper's tree" \
  grep -q "is held by pid [0-9]* (python3), not by a process of the wrapper's tree" <<<"$(check_detail "$r" identity.pid2)"

# -- unprivileged: the same wrapper, found the same way
if [ "$(id -u)" -eq 0 ]; then
  user=$(test_user)
  ukbound=$(user_kbound)
  chmod -R a+rX "$scratch"
  chmod 1777 "$KBOUND_RUNTIME_DIR"
  status=0
  runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$user" LANG=C.UTF-8 \
    JUPYTER_PATH="$JUPYTER_PATH" KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" \
    "$ukbound" audit --kernel bwrap-sharednet --transport tcp --json "$KBOUND_RUNTIME_DIR/user.json" \
    >"$scratch/user.out" 2>&1 || status=$?
  r=$KBOUND_RUNTIME_DIR/user.json
  ok "unprivileged: exit 1" [ "$status" -eq 1 ]
  ok "unprivileged: identity.pid2 passes over tcp" [ "$(check_status "$r" identity.pid2)" = pass ]
  ok "unprivileged: boundary.network fails" [ "$(check_status "$r" boundary.network)" = fail ]
  rm -f "$r"
fi
assert_no_leftovers "audit"
finish
