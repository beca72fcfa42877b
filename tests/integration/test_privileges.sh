#!/usr/bin/env bash
# The kernel never runs as the host's root, cannot open a host sysctl for writing, and cannot
# reach kbound's keys: as root (kernels run as the sandbox user) and as an ordinary user.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 R

me=$(id -u)
if [ "$me" -eq 0 ]; then
  sandbox_uid=$(id -u "$(sandbox_user)")
else
  sandbox_uid=$me
fi

echo "the kernel's uid, seen from inside, unsandboxed too"
out=$("$KBOUND" run --kernel python3 'import os; print(os.getuid(), os.getgid(), os.getgroups())')
ok "sandboxed: uid $sandbox_uid, not root (got '$out')" [ "${out%% *}" = "$sandbox_uid" ]
out=$("$KBOUND" run --sandbox off --kernel python3 'import os; print(os.getuid())')
ok "--sandbox off: uid $sandbox_uid, not root (got '$out')" [ "$out" = "$sandbox_uid" ]

echo "host settings cannot be opened for writing (open only, never written)"
cell='import os
for p in ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness", "/proc/sys/kernel/hostname", "/proc/sysrq-trigger"]:
    try:
        os.close(os.open(p, os.O_WRONLY))
        print("WRITABLE", p)
    except OSError as e:
        print("refused", p)
print("mounts:", sorted(l.split()[4] for l in open("/proc/self/mountinfo") if l.split()[4].startswith("/proc/") and " ro," in " " + l.split()[5] + ","))'
out=$("$KBOUND" run --kernel python3 "$cell")
echo "$out"
ok "no host setting opened for writing" bash -c "! grep -q WRITABLE <<<'$out'"
ok "/proc/sys is a read-only mount inside" grep -q "'/proc/sys'" <<<"$out"

echo "the keyring: a cell finds a key it possesses itself (the probe is not blind), never kbound's"
keycell='import ctypes, errno, platform
nr = {"x86_64": (248, 249), "aarch64": (217, 218)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
s = libc.syscall(ctypes.c_long(nr[0]), b"user", b"kbound-own-key", b"x", ctypes.c_long(1), ctypes.c_long(-3))
f = libc.syscall(ctypes.c_long(nr[1]), b"user", b"kbound-own-key", None, ctypes.c_long(0))
print("own key found" if f == s and s > 0 else "own key NOT found: %d %d %s" % (s, f, errno.errorcode.get(ctypes.get_errno())))'
# The seccomp filter refuses add_key and request_key; let them through for this control alone.
out=$("$KBOUND" run --kernel python3 --allow-syscall add_key --allow-syscall request_key "$keycell")
ok "the sandbox's own key is found by request_key (got '$out')" [ "$out" = "own key found" ]
out=$("$KBOUND" run --kernel python3 "$keycell")
ok "without the escape hatch the filter refuses add_key (got '$out')" grep -q "NOT found: -1 -1 EPERM" <<<"$out"

set +e
"$KBOUND" check --json "$scratch/r.json" --junit "$scratch/r.xml" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$scratch/out"; tail -20 "$scratch/err"; }
ok "check passes (rc=$rc)" [ "$rc" -eq 0 ]
for k in python3 ir; do
  ok "$k sandbox.privileges pass" [ "$(check_status "$scratch/r.json" "$k" sandbox.privileges)" = pass ]
  ok "$k: every process the host saw ran as uid $sandbox_uid" \
    [ "$(json_get "$scratch/r.json" "sorted({u for k in d['kernels'] if k['name']=='$k' for c in k['checks'] if c['id']=='sandbox.privileges' for s in c['evidence']['snapshots'] for p in s['processes'] for u in p['uid']})")" = "[$sandbox_uid]" ]
  ok "$k: the cell opened no host setting" \
    [ "$(json_get "$scratch/r.json" "[e['opened'] for k in d['kernels'] if k['name']=='$k' for c in k['checks'] if c['id']=='boundary.write_outside' for e in c['evidence']['sysctl']]")" = "[False, False, False]" ]
done
ok "python3 looked for kbound's keyring canary itself" \
  [ "$(json_get "$scratch/r.json" "[c['evidence']['keys']['tested'] for k in d['kernels'] if k['name']=='python3' for c in k['checks'] if c['id']=='boundary.credentials']")" = "[True]" ]
ok "the report names the sandbox user" [ "$(json_get "$scratch/r.json" "d['sandbox']['user']['uid']")" = "$sandbox_uid" ]
ok "JUnit carries sandbox.privileges" grep -q 'name="sandbox.privileges"' "$scratch/r.xml"

echo "the seccomp policy's knobs: what they allow is named as not claimed, the rest still proven"
set +e
"$KBOUND" check --kernel python3 --sockets inet --allow-syscall keyctl --json "$scratch/k.json" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
ok "check with --sockets inet --allow-syscall keyctl passes (rc=$rc)" [ "$rc" -eq 0 ]
surface="next(c for k in d['kernels'] for c in k['checks'] if c['id']=='sandbox.attack_surface')"
ok "attack_surface passes" [ "$(json_get "$scratch/k.json" "$surface['status']")" = pass ]
ok "attack_surface names what is not claimed" \
  grep -qF "NOT claimed: keyctl, AF_INET, AF_INET6" <<<"$(json_get "$scratch/k.json" "$surface['detail']")"
ok "keyctl is listed as not claimed, add_key still refused" \
  [ "$(json_get "$scratch/k.json" "[$surface['evidence']['calls'][n]['expected'] for n in ('keyctl', 'add_key')]")" = "['not_claimed', 'EPERM']" ]

echo "bad sandbox users are usage errors"
for bad in root kbound-no-such-user; do
  set +e
  "$KBOUND" run --sandbox-user "$bad" --kernel python3 'print(1)' >"$scratch/out" 2>"$scratch/err"
  rc=$?
  set -e
  ok "--sandbox-user $bad: exit 2 (rc=$rc)" [ "$rc" -eq 2 ]
  ok "--sandbox-user $bad: says why" grep -qE "root|no user" "$scratch/err"
done

if [ "$me" -eq 0 ]; then
  echo "as root with no sandbox user: refused (exit 3, naming the fix), never run as nobody"
  require unshare mount
  # The machine's users, less kbound-sandbox, seen by this one command alone: /etc/passwd is
  # replaced in a mount namespace of its own (the machine's users are untouched).
  grep -v '^kbound-sandbox:' /etc/passwd >"$scratch/passwd"
  chmod 644 "$scratch/passwd"
  no_sandbox_user() {
    unshare --mount --propagation private -- sh -c 'mount --bind "$0" /etc/passwd && exec "$@"' \
      "$scratch/passwd" env -u KBOUND_SANDBOX_USER "$@"
  }
  ok "(the namespace hides kbound-sandbox)" not no_sandbox_user getent passwd kbound-sandbox
  for cmd in "run --kernel python3 print(1)" "check --kernel python3" "console --kernel python3" \
    "conformance --kernel python3"; do
    set +e
    # shellcheck disable=SC2086 # the command's words
    no_sandbox_user "$KBOUND" $cmd >"$scratch/out" 2>"$scratch/err" </dev/null
    rc=$?
    set -e
    ok "${cmd%% *}: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
    ok "  ... naming the user and the fix" \
      grep -qF "the sandbox user kbound-sandbox, which kernels run as, does not exist" "$scratch/err"
    ok "  ... scripts/setup and useradd" grep -q "run scripts/setup.*useradd --system" "$scratch/err"
    ok "  ... and no kernel started" not grep -q "starting in bubblewrap" "$scratch/err"
  done
  set +e
  no_sandbox_user "$KBOUND" doctor >"$scratch/raw" 2>&1
  rc=$?
  set -e
  unwrapped "$scratch/raw" >"$scratch/out"
  ok "doctor: exit 3 (rc=$rc)" [ "$rc" -eq 3 ]
  ok "  ... a FAIL line for the sandbox user, naming the fix" \
    grep -q "^\[FAIL\] sandbox-user: kbound is root and the sandbox user kbound-sandbox does not exist.*useradd" "$scratch/out"
  ok "  ... never nobody in its place" not grep -q "kernels run as nobody" "$scratch/out"
fi
assert_no_leftovers "after the privilege checks"
finish
