#!/usr/bin/env bash
# sandbox.attack_surface on every system-call ABI (issue 35, item 2): a real bwrap whose filter
# differs from kbound's on one ABI, i386 (int 0x80), fails the check naming the ABI and the call,
# as root (the host reads the filter in force and holds it to kbound's program, instruction for
# instruction, and the tries from inside) and unprivileged (the tries alone, which the detail says);
# a filter that answers every call as kbound's does but is another program fails as root only; and
# kbound's own sandbox passes both ways, saying which proof it used.
source "$(dirname "$0")/lib.sh"
require bwrap /usr/bin/python3 runuser useradd

: "${KBOUND_BUILD_DIR:?KBOUND_BUILD_DIR must point at the build tree (ctest sets it)}"
[ "$(id -u)" -eq 0 ] || { echo "FATAL: test_seccomp_abi runs kbound as root and as the test user: run it as root" >&2; exit 1; }
user=$(test_user)
as_user() { runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$user" LANG=C.UTF-8 "$@"; }
user_bin=$(user_kbound)
chmod 1777 "$KBOUND_RUNTIME_DIR"
mkdir -m 1777 "$scratch/reports"

# Whether this machine runs 32-bit x86 code: what the leaks below open must be reachable, or the
# test would prove nothing (a kernel without IA32 emulation is its own proof; the unit test and the
# report say so).
i386=$(libkbound_python - "$KBOUND_BUILD_DIR/libkbound.so" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
buf = ctypes.create_string_buffer(256)
print(lib.kb_sysabi_accepted(1, buf, 256), buf.value.decode())
PY
)
echo "i386 here: $i386"
[ "${i386%% *}" = "1" ] || { echo "FATAL: this kernel does not run i386 code ($i386): nothing to test" >&2; exit 1; }

# run WHO NAME [LEAK [VALUE]]: kbound check of python3 as root or as the test user, through leaky-bwrap
# LEAK=LEAK when given; the report is $scratch/reports/NAME.json, the exit status in $rc.
run() {
  local who=$1 name=$2 leak=${3:-} value=${4:-} bwrap=()
  [ -z "$leak" ] || bwrap=(--bwrap "$(leaky_bwrap "$leak" "$value")")
  set +e
  if [ "$who" = root ]; then
    "$KBOUND" check --quiet --kernel python3 "${bwrap[@]}" --json "$scratch/reports/$name.json" \
      >"$scratch/$name.out" 2>"$scratch/$name.err"
  else
    as_user KBOUND_RUNTIME_DIR="$KBOUND_RUNTIME_DIR" "$user_bin" check --quiet --kernel python3 "${bwrap[@]}" \
      --json "$scratch/reports/$name.json" >"$scratch/$name.out" 2>"$scratch/$name.err"
  fi
  rc=$?
  set -e
}

# surface NAME: sandbox.attack_surface's detail and problems.
surface() {
  json_get "$scratch/reports/$1.json" \
    "next(' | '.join([c['detail']] + c['evidence'].get('problems', [])) for k in d['kernels'] for c in k['checks'] if c['id']=='sandbox.attack_surface')"
}

# names NAME TEXT...: the check's words hold each TEXT.
names() {
  local got name=$1
  shift
  got=$(surface "$name")
  for text in "$@"; do
    grep -qF -- "$text" <<<"$got" || { echo "    not in: $got" >&2; return 1; }
  done
}

keyctl_i386=288 # arch/x86/entry/syscalls/syscall_32.tbl

for who in root user; do
  echo "as $who: kbound's own sandbox"
  run "$who" "ok-$who"
  ok "$who: check passes (rc=$rc)" [ "$rc" -eq 0 ]
  ok "$who: sandbox.attack_surface passes" [ "$(check_status "$scratch/reports/ok-$who.json" python3 sandbox.attack_surface)" = pass ]
  ok "$who: every refused call was tried through i386 too" \
    grep -qE "i386 \(int 0x80\): [1-9][0-9]* tried" <<<"$(surface "ok-$who")"
  if [ "$who" = root ]; then
    ok "root: the host read the filter in force of every process and found kbound's program" \
      names "ok-$who" "the host read the filters in force of every sandbox process at every look" \
      "each holds kbound's program, instruction for instruction"
  else
    ok "unprivileged: the detail says the tries were the proof, and why the host could not read the filter" \
      names "ok-$who" "the host could not read the filters in force (" "needs CAP_SYS_ADMIN" \
      "the proof is the tries on every ABI the kernel accepts"
  fi

  echo "as $who: bwrap's filter lets keyctl through on i386 alone (argv unchanged)"
  run "$who" "i386-$who" seccomp32 "$keyctl_i386"
  ok "$who: exits 1 (rc=$rc)" [ "$rc" -eq 1 ]
  ok "$who: sandbox.attack_surface fails" [ "$(check_status "$scratch/reports/i386-$who.json" python3 sandbox.attack_surface)" = fail ]
  ok "$who: the tries name keyctl on i386" \
    names "i386-$who" "keyctl answers ENOKEY in the spawned program on i386 (int 0x80), not the filter's EPERM"
  ok "$who: no native try is named: x86_64 answers as kbound's filter" \
    not grep -qE "lets [^ ]+ through \(|answers [A-Z]+ in the spawned program," <<<"$(surface "i386-$who")"
  if [ "$who" = root ]; then
    ok "root: the host's read names the program, the ABI and the call" \
      names "i386-$who" "none of them the program kbound built" \
      "on i386, keyctl (nr $keyctl_i386) answers allow, where kbound's program answers errno EPERM"
  else
    ok "unprivileged: the host did not read it, and says so" \
      not grep -qF "none of them the program kbound built" <<<"$(surface "i386-$who")"
  fi

  echo "as $who: bwrap's filter answers every call as kbound's, but is another program"
  run "$who" "nop-$who" seccompnop
  if [ "$who" = root ]; then
    ok "root: sandbox.attack_surface fails whatever the tries said" \
      [ "$(check_status "$scratch/reports/nop-$who.json" python3 sandbox.attack_surface)" = fail ]
    ok "root: it names the program, with no call answering otherwise" \
      names "nop-$who" "none of them the program kbound built" "the first differs from it at instruction 0" \
      "no call of kbound's table answers otherwise on any ABI, yet the program differs"
  else
    # The tries cannot tell two programs that answer alike: the detail says the tries were the
    # proof, and the changed channel still fails the run elsewhere.
    ok "unprivileged: sandbox.attack_surface passes on the tries, saying so" \
      [ "$(check_status "$scratch/reports/nop-$who.json" python3 sandbox.attack_surface)" = pass ]
    ok "unprivileged: ... the tries were its proof" names "nop-$who" "the proof is the tries on every ABI"
    ok "unprivileged: the run still fails (rc=$rc): the channel bwrap read from is not kbound's" [ "$rc" -eq 1 ]
  fi
done
assert_no_leftovers "after the ABI leaks"
finish
