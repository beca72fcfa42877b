# kbound bash pack: everything the cells do, as functions. Each cell is one line that decodes this
# file (rendered with the cell's parameters) inside a subshell and calls one function, so nothing
# is left in the user's shell but kbound_nonce, and a kernel that feeds cells line by line through
# a pty (bash_kernel, metakernel) gets one line. Pure bash plus coreutils, sed and iconv.
# The contract: docs/probes-cells.md. Bash kernels run cells in a bash child of the kernel process,
# so the kernel process is the shell's parent, $PPID.
{{KBOUND_PARAMS_SH}}
export LC_ALL=C

# ---- JSON and the result line ----

# A JSON string of $1 (invalid UTF-8 and control characters other than \t \n \r dropped).
_kb_js() {
  local s=$1
  # only text with bytes outside printable ASCII pays for the filters (forks are what bash is slow at)
  [[ $s == *[![:print:]$'\t\n']* ]] &&
    s=$(printf '%s' "$1" | iconv -c -f UTF-8 -t UTF-8 2>/dev/null | tr -d '\001-\010\013\014\016-\037\177')
  s=${s//\\/\\\\} s=${s//\"/\\\"} s=${s//$'\t'/\\t} s=${s//$'\n'/\\n} s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}
_kb_ji() { case $1 in '' | *[!0-9-]* | -) printf null ;; *) printf '%s' "$1" ;; esac; }
_kb_result() { printf '%s %s\n' "$KB_result_marker" "$(printf '%s' "$1" | base64 -w0)"; }
# A field of /proc/PID/status ($1 the file's text, $2 the key).
_kb_status() { printf '%s\n' "$1" | sed -n "s/^$2:[[:space:]]*//p" | head -n 1; }

# ---- identity, set_var, get_var, long ----

_kb_identity() {
  local st nspid
  st=$(head -c 65536 "/proc/$PPID/status" 2>/dev/null)
  nspid=$(_kb_status "$st" NSpid | tr -s '[:space:]' ',' | sed 's/,$//')
  _kb_result "{\"pid\":$PPID,\"ppid\":$(_kb_ji "$(_kb_status "$st" PPid)"),\"nspid\":[$nspid],\"uid\":$(_kb_ji "$(_kb_status "$st" Uid | cut -f1)"),\"hostname\":$(_kb_js "$(cat /proc/sys/kernel/hostname 2>/dev/null)"),\"cell_pid\":$BASHPID}"
}

_kb_get_var() {
  local v=null
  [ -n "${kbound_nonce+set}" ] && v=$(_kb_js "$kbound_nonce")
  _kb_result "{\"value\":$v,\"pid\":$PPID}"
}

# Milliseconds on the monotonic clock (/proc/uptime has centiseconds), into _kb_ms: read by a
# builtin, so the long cell's loop forks nothing for it.
_kb_now() { local u; read -r u _ </proc/uptime; u=${u/./}; _kb_ms=$((10#$u * 10)); }

_kb_long() {
  local end count=0 fd=
  # SIGINT ends the cell whenever it lands: without a trap, bash that is reaping a child which
  # exited on its own just before the signal carries on with the loop (it treats SIGINT as the
  # child's), and under load that window was hit (a kernel's SIGINT then looked ignored). A bash
  # started interactive (and a subshell of one) skips the trap in that window too, so long.sh runs
  # this in a bash of its own ("$BASH" -c); and the loop forks only the progress file's rename: it
  # waits with read's timeout on a pipe it holds both ends of (no sleep), and reads the clock with
  # a builtin (no command substitution), so there is a child to reap, and a window, once a step.
  trap 'exit 130' INT
  printf '%s\n' "$KB_marker"
  exec {fd}<> <(:) 2>/dev/null || fd=
  _kb_now
  end=$((_kb_ms + ${KB_seconds:-60} * 1000))
  while _kb_now; [ "$_kb_ms" -lt "$end" ]; do
    if [ -n "$fd" ]; then read -r -t 0.05 -u "$fd" _; else sleep 0.05; fi
    count=$((count + 1))
    # the count, renamed into place, for the host to read (it sees the cell stop itself)
    [ -n "${KB_progress:-}" ] && printf '%s\n' "$count" >"$KB_progress.new" && mv -f "$KB_progress.new" "$KB_progress"
  done
  printf 'kbound: long cell ran to completion\n'
  _kb_result '{"completed":true}'
}

# ---- the probe and attack-surface cells: kbound-probe ----

# kbound-probe ($KB_program, kbound's static probe) in mode $1: it prints its child marker line
# (the host looks on it) and its marked result line, relayed here each with a blank line after it,
# since a pty kernel (metakernel) sends a line on only once the next one starts. A program that
# fails prints why and no result, and the cell fails.
_kb_run_probe() {
  "$KB_program" --kernel-pid "$PPID" "$1" '{{KBOUND_PARAMS_B64}}' </dev/null |
    while IFS= read -r line; do printf '%s\n\n' "$line"; done
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { printf 'kbound: kbound-probe %s exited with status %d\n' "$1" "$rc" >&2; return 1; }
}
