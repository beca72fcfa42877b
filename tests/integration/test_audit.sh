#!/usr/bin/env bash
# test_audit.sh: `kbound audit` on real wrappers from Debian's packages (docs/audit.md): a kernelspec
# wrapping bwrap tightly fails only where it is looser than kbound's claims, each named; the same
# with --bind / / fails naming the writable host mount; firejail's default profile and --net=none
# differ in boundary.network alone; crun with a rootfs as root runs the kernel as the host's root
# and lets it outlive crun; an expect file turns the failures it names into not_claimed (never a
# pass); a malformed one is a usage error; and an unprivileged kbound audits the tight wrapper alike.
source "$(dirname "$0")/lib.sh"
require bwrap firejail crun unshare runuser /usr/bin/python3

specs=$scratch/jupyter/kernels
mkdir -p "$specs"
# kbound reads the kernelspecs as itself; the wrappers run as the sandbox user and reach only the
# run's own folders.
spec() { # NAME DISPLAY ARGV_JSON
  mkdir -p "$specs/$1"
  printf '{"argv": %s, "display_name": "%s", "language": "python"}\n' "$3" "$2" >"$specs/$1/kernel.json"
}
bwrap_tail='--unshare-all --die-with-parent --new-session --cap-drop ALL --proc /proc --dev /dev --tmpfs /tmp --bind \"$d\" \"$d\" --chdir \"$d\" --setenv HOME \"$d\" /usr/bin/python3 -m ipykernel_launcher -f \"$1\"'
system='--ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin --ro-bind /etc/alternatives /etc/alternatives --ro-bind /etc/ld.so.cache /etc/ld.so.cache'
spec bwrap-tight "Python in its own bwrap" \
  "[\"/bin/sh\", \"-c\", \"d=\$(dirname \\\"\$1\\\"); exec bwrap $system $bwrap_tail\", \"sh\", \"{connection_file}\"]"
spec bwrap-leaky "Python in its own bwrap, --bind / /" \
  "[\"/bin/sh\", \"-c\", \"d=\$(dirname \\\"\$1\\\"); exec bwrap --bind / / $bwrap_tail\", \"sh\", \"{connection_file}\"]"
spec firejail-default "Python in firejail" \
  '["firejail", "--quiet", "/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"]'
spec firejail-nonet "Python in firejail --net=none" \
  '["firejail", "--quiet", "--net=none", "/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"]'
export JUPYTER_PATH=$scratch/jupyter

# audit NAME [OPTIONS...]: one run, its report in $scratch/NAME.json, its exit code in $status.
audit() {
  local name=$1
  shift
  status=0
  "$KBOUND" audit --kernel "$name" --json "$scratch/$name.json" "$@" >"$scratch/$name.out" 2>&1 || status=$?
}
check_status() { json_get "$1" "[c['status'] for c in d['kernels'][0]['checks'] if c['id'] == '$2'][0]"; }
check_detail() { json_get "$1" "[c['detail'] for c in d['kernels'][0]['checks'] if c['id'] == '$2'][0]"; }
failed() { json_get "$1" "' '.join(sorted(c['id'] for c in d['kernels'][0]['checks'] if c['status'] == 'fail'))"; }

# -- bwrap, tight: fails only where it is looser than kbound's claims
audit bwrap-tight
r=$scratch/bwrap-tight.json
ok "tight bwrap: exit 1 (it is looser than kbound's claims)" [ "$status" -eq 1 ]
json_read f "$r" "' '.join(sorted(c['id'] for c in d['kernels'][0]['checks'] if c['status'] == 'fail'))"
ok "tight bwrap fails exactly sandbox.attack_surface, sandbox.resources and boundary.write_outside ($f)" \
  [ "$f" = "boundary.write_outside sandbox.attack_surface sandbox.resources" ]
ok "tight bwrap: no seccomp filter named" grep -q "without a seccomp filter" <<<"$(check_detail "$r" sandbox.attack_surface)"
ok "tight bwrap: /proc/sys named writable" grep -q "/proc/sys" <<<"$(check_detail "$r" boundary.write_outside)"
json_read ran_as "$r" "d['kernels'][0]['audit']['ran_as']"
if [ "$(id -u)" -eq 0 ]; then
  ok "as root the wrapper ran as the sandbox user, not root ($ran_as)" [ "$ran_as" = "$(sandbox_user)" ]
fi
json_read n "$r" "d['kernels'][0]['audit']['kernel_nspid']"
ok "the kernel was found as PID 2 of bwrap's pid namespace (nspid $n)" [ "$n" = 2 ]
for id in identity.pid2 identity.pidfd interrupt.control interrupt.pidfd persistence.namespace sandbox.session \
  boundary.network boundary.descriptors; do
  ok "tight bwrap: $id passes" [ "$(check_status "$r" "$id")" = pass ]
done
json_read na "$r" "len([c for c in d['kernels'][0]['checks'] if c['id'] == 'sandbox.backend'][0]['evidence']['not_applicable'])"
ok "sandbox.backend names what only kbound's own launch has as not applicable ($na)" [ "$na" -ge 2 ]
json_read held "$r" "all('held_to' in c and 'as_expected' in c for c in d['kernels'][0]['checks'])"
ok "every check says what it was held to" [ "$held" = True ]
json_read full "$r" "d['claims']['full_boundary']"
ok "no full boundary claimed" [ "$full" = False ]

# -- bwrap, leaky: --bind / / fails naming the writable host mount
audit bwrap-leaky
r=$scratch/bwrap-leaky.json
ok "leaky bwrap: exit 1" [ "$status" -eq 1 ]
ok "leaky bwrap: boundary.write_outside fails" [ "$(check_status "$r" boundary.write_outside)" = fail ]
ok "leaky bwrap: names the writable host mount at /" \
  grep -q "a writable mount at / (.*) is backed by the host" <<<"$(check_detail "$r" boundary.write_outside)"

# -- firejail: its default profile shares the host's network, --net=none does not
audit firejail-default
r=$scratch/firejail-default.json
ok "firejail: exit 1" [ "$status" -eq 1 ]
ok "firejail: boundary.network fails (the host's network)" [ "$(check_status "$r" boundary.network)" = fail ]
ok "firejail: sandbox.privileges names firejail's own process with capabilities" \
  grep -q "(firejail) holds capabilities" <<<"$(check_detail "$r" sandbox.privileges)"
ok "firejail: the interrupts and persistence pass" [ "$(check_status "$r" interrupt.pidfd)$(check_status "$r" persistence.namespace)" = passpass ]
audit firejail-nonet
r=$scratch/firejail-nonet.json
ok "firejail --net=none: boundary.network passes" [ "$(check_status "$r" boundary.network)" = pass ]
ok "firejail --net=none: sandbox.privileges fails as the default profile's does" [ "$(check_status "$r" sandbox.privileges)" = fail ]
# its network namespace is the host user namespace's: the host lists its sockets all the same
ok "firejail --net=none: the host lists the sandbox's own sockets" \
  not grep -q "the unix sockets of the sandbox's network namespace" \
  <<<"$(json_get "$r" "[' | '.join(c['evidence'].get('problems', [])) for c in d['kernels'][0]['checks'] if c['id'] == 'boundary.descriptors'][0]")"

# -- an expect file: what it allows is not claimed, never passed; the rest as kbound's
cat >"$scratch/expect.json" <<'EOF'
{"kbound_expect": 1, "description": "a bwrap without a filter or limits",
 "allow": {"sandbox.attack_surface": "no seccomp filter in this deployment",
           "sandbox.resources": "limits are the host's job",
           "boundary.write_outside": "bwrap leaves /proc's host-global entries to their owners"}}
EOF
audit bwrap-tight --expect "$scratch/expect.json"
r=$scratch/bwrap-tight.json
ok "with the expect file: exit 0 (every check as expected)" [ "$status" -eq 0 ]
ok "an allowed failure is not_claimed, not passed" [ "$(check_status "$r" boundary.write_outside)" = not_claimed ]
ok "its detail keeps what the host found" grep -q "the host found: .*/proc/sys" <<<"$(check_detail "$r" boundary.write_outside)"
json_read full "$r" "d['claims']['full_boundary']"
ok "a run with a boundary not claimed is no full boundary" [ "$full" = False ]
json_read ht "$r" "[c['held_to'] for c in d['kernels'][0]['checks'] if c['id'] == 'sandbox.resources'][0]"
ok "the check names the expectation it was held to" grep -q "limits are the host's job" <<<"$ht"
printf '{"kbound_expect": 1, "allow": {"boundary.everything": "typo"}}\n' >"$scratch/bad.json"
audit bwrap-tight --expect "$scratch/bad.json"
ok "an expect file naming no check is a usage error (exit 2)" [ "$status" -eq 2 ]
ok "...saying which" grep -q "boundary.everything" "$scratch/bwrap-tight.out"

# -- crun with a rootfs, as root (--as-root): the kernel runs as the host's root, outlives crun
if [ "$(id -u)" -eq 0 ]; then
  rootfs=$("$KBOUND_SOURCE_DIR/tests/fixtures/make-rootfs")
  spec crun-rootfs "Python in crun" \
    "[\"$KBOUND_SOURCE_DIR/tests/fixtures/crun-kernel\", \"$rootfs\", \"{connection_file}\"]"
  audit crun-rootfs --as-root
  r=$scratch/crun-rootfs.json
  ok "crun as root: exit 1" [ "$status" -eq 1 ]
  json_read ran_as "$r" "d['kernels'][0]['audit']['ran_as']"
  ok "crun: the report says it ran as root ($ran_as)" [ "$ran_as" = root ]
  ok "crun: sandbox.privileges names the host's uid 0" grep -q "host's uid 0" <<<"$(check_detail "$r" sandbox.privileges)"
  ok "crun: the kernel outlives crun killed (sandbox.session)" grep -q "outlived its launcher" <<<"$(check_detail "$r" sandbox.session)"
  ok "crun: boundary.network passes (its own network namespace)" [ "$(check_status "$r" boundary.network)" = pass ]
  json_read n "$r" "d['kernels'][0]['audit']['kernel_nspid']"
  ok "crun: the kernel is PID 1 of its container ($n)" [ "$n" = 1 ]
fi

# -- an unprivileged kbound audits the tight wrapper alike
if [ "$(id -u)" -eq 0 ]; then
  user=$(test_user)
  ukbound=$(user_kbound)
  chmod -R a+rX "$scratch"
  chmod 1777 "$KBOUND_RUNTIME_DIR"
  status=0
  runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$user" LANG=C.UTF-8 \
    JUPYTER_PATH="$JUPYTER_PATH" KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" \
    "$ukbound" audit --kernel bwrap-tight --json "$KBOUND_RUNTIME_DIR/user.json" >"$scratch/user.out" 2>&1 || status=$?
  r=$KBOUND_RUNTIME_DIR/user.json
  ok "unprivileged: exit 1" [ "$status" -eq 1 ]
  json_read f "$r" "' '.join(sorted(c['id'] for c in d['kernels'][0]['checks'] if c['status'] == 'fail'))"
  ok "unprivileged: the same three failures ($f)" [ "$f" = "boundary.write_outside sandbox.attack_surface sandbox.resources" ]
  json_read ran_as "$r" "d['kernels'][0]['audit']['ran_as']"
  ok "unprivileged: the wrapper ran as the user itself ($ran_as)" [ "$ran_as" = "$user" ]
  mv "$r" "$scratch/user.json" # listed with the others: what it did not pass, and why
fi
assert_no_leftovers "audit"
finish
