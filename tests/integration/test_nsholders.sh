#!/usr/bin/env bash
# kbound's own, unmodified sandbox, pinned from outside while the check runs by a process that is
# neither kbound's nor bwrap's: it holds /proc/<kernel>/ns/net open, or (as root) bind-mounts it in
# a mount namespace of its own as `ip netns add` does; either lets whoever has it join the sandbox's
# namespace (setns), so sandbox.backend must fail, naming it; so must a thread of its own doing it
# (a private descriptor table, a thread alone in the namespace, a zombie main thread), or one that
# moves its descriptor to a new number every millisecond, or one whose children would be born in
# the sandbox's pid namespace (pid_for_children). Or it copies
# one of the kernel's own sockets (pidfd_getfd): a channel out, so boundary.descriptors must fail;
# or it listens in the kernel's network namespace and leaves: boundary.network must. A plain run
# beside them must still pass.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 unshare

# pin MODE KBOUND_PID OUT: waits for the kernel among KBOUND_PID's descendants (python, not bwrap,
# in a network namespace other than this one's), writes its pid to OUT, then pins the sandbox (MODE
# fd, channel or mount) until the kernel is gone.
pin() {
  local mode=$1 kb=$2 out=$3 kernel="" own
  own=$(readlink /proc/self/ns/net)
  for _ in $(seq 500); do
    for p in $(descendants_of "$kb"); do
      [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" != "$own" ] && [ -n "$(readlink "/proc/$p/ns/net" 2>/dev/null)" ] &&
        grep -qa ipykernel "/proc/$p/cmdline" 2>/dev/null && [ "$(cat "/proc/$p/comm" 2>/dev/null)" != bwrap ] &&
        kernel=$p
    done
    [ -n "$kernel" ] && break
    sleep 0.01
  done
  [ -n "$kernel" ] || return 0
  echo "$kernel" >"$out"
  if [ "$mode" = fd ]; then
    exec 9<"/proc/$kernel/ns/net"
    while [ -e "/proc/$kernel" ]; do sleep 0.05; done
  elif [ "$mode" = channel ]; then
    # a copy of one of the kernel's own sockets (pidfd_getfd: a socket cannot be reopened through
    # /proc), held from outside
    exec /usr/bin/python3 - "$kernel" "$out" <<'EOF'
import ctypes, os, sys, time
kernel, out = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(kernel)
for _ in range(300):
    for name in sorted(os.listdir(f"/proc/{kernel}/fd"), key=int):
        try:
            target = os.readlink(f"/proc/{kernel}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            fd = libc.syscall(438, pidfd, int(name), 0)  # pidfd_getfd
            if fd >= 0:
                open(out, "a").write(target + "\n")
                while os.path.exists(f"/proc/{kernel}"):
                    time.sleep(0.05)
                sys.exit(0)
            open(out, "a").write("pidfd_getfd: " + os.strerror(ctypes.get_errno()) + "\n")
            sys.exit(0)
    time.sleep(0.01)
EOF
  elif [ "$mode" = listener ]; then
    # enters the kernel's network namespace, listens on an abstract name there, and goes back: the
    # listener stays in the sandbox's network, held outside (a way in the kernel can connect to)
    exec /usr/bin/python3 - "$kernel" "$out" <<'EOF'
import ctypes, os, socket, sys, time
kernel, out = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
mine = os.open("/proc/self/ns/net", os.O_RDONLY)
theirs = os.open(f"/proc/{kernel}/ns/net", os.O_RDONLY)
if libc.setns(theirs, 0x40000000) != 0:  # CLONE_NEWNET
    open(out, "a").write("setns: " + os.strerror(ctypes.get_errno()) + "\n")
    sys.exit(0)
s = socket.socket(socket.AF_UNIX)
s.bind(b"\0kbound-test-outside-%d" % os.getpid())
s.listen(1)
if libc.setns(mine, 0x40000000) != 0:
    open(out, "a").write("setns: " + os.strerror(ctypes.get_errno()) + "\n")
    sys.exit(0)
os.close(theirs)
os.close(mine)
open(out, "a").write("listening\n")
while os.path.exists(f"/proc/{kernel}"):
    time.sleep(0.05)
EOF
  elif [ "$mode" = blink ]; then
    # holds the kernel's network namespace open, moving the descriptor to another number every
    # millisecond (F_DUPFD from a rising floor, the old one closed): a second read of the number it
    # was seen at finds it empty, the namespace still held
    exec /usr/bin/python3 - "$kernel" "$out" <<'EOF'
import fcntl, os, sys, time
kernel, out = int(sys.argv[1]), sys.argv[2]
fd = os.open(f"/proc/{kernel}/ns/net", os.O_RDONLY)
open(out, "a").write("blinking\n")
floor = 100
while os.path.exists(f"/proc/{kernel}"):
    floor = 100 if floor > 4000 else floor + 1
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, floor)
    os.close(fd)
    fd = moved
    time.sleep(0.001)
EOF
  elif [ "$mode" = pidns ]; then
    # joins the kernel's pid namespace for its children only (setns(CLONE_NEWPID): its own pid
    # namespace stays the host's), closes the descriptor and stays: every child it forks from now
    # on is born in the sandbox
    exec /usr/bin/python3 - "$kernel" "$out" <<'EOF'
import ctypes, os, sys, time
kernel, out = int(sys.argv[1]), sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(f"/proc/{kernel}/ns/pid", os.O_RDONLY)
if libc.setns(fd, 0x20000000) != 0:  # CLONE_NEWPID
    open(out, "a").write("setns: " + os.strerror(ctypes.get_errno()) + "\n")
    sys.exit(0)
os.close(fd)
open(out, "a").write("children born in " + os.readlink("/proc/self/ns/pid_for_children") + "\n")
while os.path.exists(f"/proc/{kernel}"):
    time.sleep(0.05)
EOF
  elif [ "$mode" = threadfd ] || [ "$mode" = threadns ] || [ "$mode" = zombie ]; then
    # A thread of its own holds it, where /proc/<pid>/fd and /proc/<pid>/ns do not show: a private
    # descriptor table (unshare(CLONE_FILES)), the thread alone in the namespace (setns), or a
    # table only a thread reaches once the main thread has exited (a zombie leader).
    exec /usr/bin/python3 - "$mode" "$kernel" "$out" <<'EOF'
import ctypes, os, sys, threading, time
mode, kernel, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
def alive():
    return os.path.exists(f"/proc/{kernel}")
def hold():
    if mode == "threadfd" and libc.unshare(0x400) != 0:  # CLONE_FILES
        open(out, "a").write("unshare: " + os.strerror(ctypes.get_errno()) + "\n")
        return
    fd = os.open(f"/proc/{kernel}/ns/net", os.O_RDONLY)
    if mode == "threadns":
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            open(out, "a").write("setns: " + os.strerror(ctypes.get_errno()) + "\n")
            return
        os.close(fd)
    open(out, "a").write(f"thread {threading.get_native_id()} holds it\n")
    while alive():
        libc.usleep(50000)
t = threading.Thread(target=hold)
t.start()
if mode == "zombie":
    time.sleep(0.2)
    libc.pthread_exit(None)  # the main thread ends; the process lives on in t
t.join()
EOF
  else
    exec unshare -m --propagation private sh -c \
      'f=$(mktemp -p "$3"); mount --bind "/proc/$1/ns/net" "$f" && echo "$f" >>"$2"; while [ -e "/proc/$1" ]; do sleep 0.05; done; umount "$f"; rm -f "$f"' \
      sh "$kernel" "$out" "$scratch"
  fi
}

# pinned MODE PATTERN [CHECK]: one check with its sandbox pinned from outside as MODE; CHECK
# (default sandbox.backend) must fail naming PATTERN, and nothing else.
pinned() {
  local mode=$1 pattern=$2 id=${3:-sandbox.backend} kb rc
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
  if grep -qE "^(pidfd_getfd|unshare|setns):" "$scratch/$mode.pin"; then
    fail "pinned by $mode: the helper could not pin the kernel ($(grep -E '^(pidfd_getfd|unshare|setns):' "$scratch/$mode.pin"))"
    return
  fi
  ok "pinned by $mode: exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "pinned by $mode: $id fails" [ "$(check_status "$scratch/$mode.json" python3 "$id")" = "fail" ]
  local got
  json_read got "$scratch/$mode.json" \
    "next(' | '.join([c['detail']] + c['evidence'].get('problems', [])) for k in d['kernels'] for c in k['checks'] if c['id']=='$id')"
  ok "pinned by $mode: $id names '$pattern'" grep -qF -- "$pattern" <<<"$got"
  grep -qF -- "$pattern" <<<"$got" || echo "    got: $got"
  # Nothing else is wrong with the sandbox: the pin is the only problem named.
  ok "pinned by $mode: no other problem named" \
    [ -z "$(grep -o '[^|]*' <<<"$got" | sed 1d | grep -vF "$pattern" | grep -vF 'processes outside the sandbox are in its namespaces or hold them open' || true)" ]
}

echo "a process outside holds the kernel's network namespace open"
pinned fd "outside the sandbox, holds the sandbox's net namespace open (fd 9)"

echo "a process outside holds the kernel's network namespace open, renumbering the descriptor every millisecond"
pinned blink "outside the sandbox, holds the sandbox's net namespace open (fd"

echo "a process outside copies one of the kernel's sockets (pidfd_getfd)"
pinned channel "a process outside the sandbox (a channel out)" boundary.descriptors

echo "a thread outside, with a descriptor table of its own, holds the kernel's network namespace open"
pinned threadfd "outside the sandbox, holds the sandbox's net namespace open (fd"
ok "pinned by threadfd: the thread is named" grep -qE "thread [0-9]+ of pid" <<<"$(json_get "$scratch/threadfd.json" \
  "next(' | '.join(c['evidence'].get('problems', [])) for k in d['kernels'] for c in k['checks'] if c['id']=='sandbox.backend')")"

echo "a process outside whose main thread has exited (a zombie leader) holds it through another thread"
pinned zombie "outside the sandbox, holds the sandbox's net namespace open (fd"

if [ "$(id -u)" -eq 0 ]; then
  echo "a process outside listens in the kernel's network namespace (entered and left again)"
  pinned listener "a socket of the sandbox's network namespace, is held by pid" boundary.network

  echo "a thread of a process outside enters the kernel's network namespace (setns) on its own"
  pinned threadns "outside the sandbox, is in the sandbox's net namespace"

  echo "a process outside joins the kernel's pid namespace for its children alone (setns CLONE_NEWPID)"
  pinned pidns "outside the sandbox, starts its children in the sandbox's pid namespace (ns/pid_for_children)"

  echo "a process outside bind-mounts the kernel's network namespace in a mount namespace of its own"
  pinned mount "the sandbox's net namespace is bind-mounted at /tmp/"
else
  # An unprivileged user can neither enter another network namespace (setns needs CAP_SYS_ADMIN
  # in its own user namespace too) nor bind-mount a namespace (nsfs) in a user namespace of its own.
  echo "NOT running the listener, thread setns, pid_for_children and bind-mount cases: they need root (run as uid $(id -u))"
fi

echo "the same check, nothing pinned"
"$KBOUND" check --quiet --kernel python3 --json "$scratch/plain.json" >"$scratch/plain.out" 2>&1 ||
  tail -5 "$scratch/plain.out"
ok "unpinned: sandbox.backend passes" [ "$(check_status "$scratch/plain.json" python3 sandbox.backend)" = "pass" ]
ok "unpinned: boundary.descriptors passes" [ "$(check_status "$scratch/plain.json" python3 boundary.descriptors)" = "pass" ]
assert_no_leftovers "after pinned namespaces"
finish
