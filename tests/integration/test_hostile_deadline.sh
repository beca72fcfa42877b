#!/usr/bin/env bash
# Hostile kernels, deadlines under a flood of big messages (docs/faults.md): a kernel that
# publishes 15 MiB stream frames without pause makes every message expensive to verify and parse;
# the wait must still end at its deadline (within the cost of one message), name the flood, exit
# 1, keep kbound's memory bounded, and leave nothing behind.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/hostile_lib.sh"

echo "iopub flood of 15 MiB frames: the cell's deadline holds"
spec=$(hostile_spec bigflood iopub-flood --flood 200 --flood-bytes $((15 * 1024 * 1024)))
timeout_s=5
peak_file="$scratch/bigflood.peak"
start=$(date +%s%N)
(
  # Sample kbound's own peak RSS (VmHWM) while it runs, as test_hostile_messages.sh does; a small
  # ASan quarantine so freed frames do not count as held (meaningless to a normal build).
  ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}quarantine_size_mb=16" "$KBOUND" run --kernel "$spec" \
    "${bind[@]}" --timeout "$timeout_s" 'print("after the flood")' \
    >"$scratch/bigflood.out" 2>"$scratch/bigflood.err" &
  pid=$!
  echo 0 >"$peak_file"
  while kill -0 "$pid" 2>/dev/null; do
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$hwm" ] && echo "$hwm" >"$peak_file"
    sleep 0.2
  done
  wait "$pid"
) && rc=0 || rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
peak_kb=$(cat "$peak_file")
# A bound, not a benchmark: start-up (its own deadline, well under a second for this fixture), the
# cell's deadline, teardown, and a generous margin for a loaded machine. Before the deadline was
# checked between messages this took over 20 s.
max_s=$((timeout_s + 5))
# The flood ends one of three ways, all contained: at the cell's deadline, named; or earlier, when
# the frames the kernel queued for kbound (libzmq's send queue, on the kernel's side) take the
# sandbox past its memory limit (a slower kbound, as under the sanitizers, reads fewer of them
# before the deadline): where the limit is a memory cgroup, it kills the kernel, said so; where it
# is each process's address space (RLIMIT_AS: an unprivileged kbound on a host whose cgroups it
# cannot delegate), the kernel's own next allocation is refused and it exits saying so.
expect bigflood 1 "$max_s" \
  "kernel 'bigflood': (the cell did not complete within ${timeout_s}\.0 s: .*the kernel flooded iopub with [0-9]+ message\(s\), [0-9]+ MiB, for the request|died while running the cell: .*(the sandbox's memory cgroup killed [0-9]+ process\(es\) at its limit|its log's error line: .*Cannot allocate memory))"
ok "bigflood: nothing of the cell printed as its output" [ ! -s "$scratch/bigflood.out" ]
# libzmq queues up to RCVHWM messages per socket before kbound reads them; with the default (1000)
# kbound held 1.4 GB after 5 s of this flood. 16 queued frames of 15 MiB are 240 MiB.
ok "bigflood: kbound's peak RSS stayed bounded (${peak_kb} kB < 1 GiB)" \
  [ "$peak_kb" -gt 0 -a "$peak_kb" -lt $((1024 * 1024)) ]

assert_no_leftovers "after the big-frame flood"
finish
