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
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}
_kb_jn() { if [ -n "$1" ]; then _kb_js "$1"; else printf null; fi; }
_kb_ji() { case $1 in '' | *[!0-9-]* | -) printf null ;; *) printf '%s' "$1" ;; esac; }
_kb_jb() { if [ "$1" = 1 ] || [ "$1" = true ]; then printf true; else printf false; fi; }
# A JSON array of the JSON values given as arguments.
_kb_ja() { local IFS=,; printf '[%s]' "$*"; }
# The first 64 KiB of a file, or nothing with status 1 when it cannot be read.
_kb_head() { [ -r "$1" ] && [ ! -d "$1" ] && head -c 65536 -- "$1" 2>/dev/null | tr '\0' '\n'; }
# The errno name behind a system error message (bash and coreutils print strerror() text).
_kb_errno() {
  case $1 in
    *"Read-only file system"*) echo EROFS ;; *"Permission denied"*) echo EACCES ;;
    *"No such file or directory"*) echo ENOENT ;; *"Operation not permitted"*) echo EPERM ;;
    *"Not a directory"*) echo ENOTDIR ;; *"Is a directory"*) echo EISDIR ;;
    *"File exists"* | *"cannot overwrite existing file"*) echo EEXIST ;;
    *"Connection refused"*) echo ECONNREFUSED ;; *"timed out"*) echo ETIMEDOUT ;;
    *"Network is unreachable"*) echo ENETUNREACH ;; *"Cannot assign requested address"*) echo EADDRNOTAVAIL ;;
    *"No space left on device"*) echo ENOSPC ;; *"Address family not supported"*) echo EAFNOSUPPORT ;;
    *"Invalid argument"*) echo EINVAL ;; *"Device or resource busy"*) echo EBUSY ;;
    *"No such device"*) echo ENODEV ;; *"Text file busy"*) echo ETXTBSY ;; *"Too many levels"*) echo ELOOP ;;
    '') echo unknown ;; *) printf '%s\n' "${1##*: }" ;;
  esac
}
# The result line: the marker kbound gave, then the base64 of the JSON object in $1.
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

# Milliseconds on the monotonic clock (/proc/uptime has centiseconds).
_kb_now_ms() { local u; read -r u _ </proc/uptime; u=${u/./}; printf '%s' "$((10#$u * 10))"; }

_kb_long() {
  local end count=0
  # SIGINT ends the cell whenever it lands: without a trap, bash that is reaping a child which
  # exited on its own just before the signal carries on with the loop (it treats SIGINT as the
  # child's), and under load that window was hit (a kernel's SIGINT then looked ignored).
  trap 'exit 130' INT
  printf '%s\n' "$KB_marker"
  end=$(($(_kb_now_ms) + ${KB_seconds:-60} * 1000))
  while [ "$(_kb_now_ms)" -lt "$end" ]; do
    sleep 0.05
    count=$((count + 1))
    # the count, renamed into place, for the host to read (it sees the cell stop itself)
    [ -n "${KB_progress:-}" ] && printf '%s\n' "$count" >"$KB_progress.new" && mv -f "$KB_progress.new" "$KB_progress"
  done
  printf 'kbound: long cell ran to completion\n'
  _kb_result '{"completed":true}'
}

# ---- the attack-surface cell: kbound-syscall-probe as a child ----

_kb_attack_surface() {
  local errors=() child=null out rc err
  err=$(mktemp 2>/dev/null || echo /tmp/.kbound-surface-err)
  if [ -z "$KB_program" ]; then
    errors+=('{"probe":"child","error":"no program given"}')
  elif out=$(timeout 10 "$KB_program" </dev/null 2>"$err"); then
    case $out in '{'*'}') child=$out ;; *) errors+=('{"probe":"child","error":"the output is not a JSON object"}') ;; esac
  else
    rc=$?
    errors+=("{\"probe\":\"child\",\"error\":$(_kb_js "exit status $rc: $(tail -c 400 "$err" 2>/dev/null)")}")
  fi
  rm -f "$err"
  _kb_result "{\"pid\":$PPID,\"child\":$child,\"errors\":$(_kb_ja "${errors[@]}")}"
}

# ---- the boundary probe ----

# Tries one write: creates $2 in folder $1 exclusively (noclobber opens with O_EXCL) and writes $3.
# Prints the error's errno name, or nothing when the file was created.
_kb_try_create() {
  local msg
  msg=$( (set -o noclobber; printf '%s' "$3" >"$1/$2") 2>&1) && return 0
  _kb_errno "$msg"
}

# Lexical normalisation of an absolute path (no symlinks resolved): //, /./ and /../ folded.
_kb_norm() {
  local IFS=/ part out=()
  for part in $1; do
    case $part in '' | .) ;; ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;; *) out+=("$part") ;; esac
  done
  local joined
  joined=$(IFS=/; printf '%s' "${out[*]}")
  printf '/%s' "$joined"
}
_kb_under() { [ "$1" = "$2" ] || [ "${1#"$2"/}" != "$1" ] || [ "$2" = / ]; }
# The mountinfo mount point (with \ooo escapes decoded) and fstype whose mount point is the longest
# prefix of $1 (the later line wins ties): "fstype<TAB>mount_point".
_kb_mount_of() {
  local best= best_fs= line mp fs rest
  while IFS= read -r line; do
    _kb_mountinfo_fields "$line"
    mp=$_kb_mp
    fs=$_kb_fs
    if _kb_under "$1" "$mp" && [ ${#mp} -ge ${#best} ]; then best=$mp; best_fs=$fs; fi
  done <"/proc/$BASHPID/mountinfo"
  printf '%s\t%s' "$best_fs" "$best"
}
# One mountinfo line's mount point (\ooo escapes decoded), per-mount options and fstype, into
# _kb_mp, _kb_opts and _kb_fs, without a fork.
_kb_mountinfo_fields() {
  local id parent dev root rest
  read -r id parent dev root _kb_mp _kb_opts rest <<<"$1"
  [[ $_kb_mp == *\\* ]] && printf -v _kb_mp '%b' "${_kb_mp//\\/\\0}"
  rest=${1#* - }
  _kb_fs=${rest%% *}
}

_kb_probe() {
  local errors=() ws_json outside=() sysctl=() tcp=() abstract=() visible=() files=() cross=() mounts=()
  local d p n e dirs=() seen=() skip fs mp created real path
  local nonce=$KB_nonce

  # the workspace
  e=$(_kb_try_create "$KB_workspace" "$KB_workspace_file" "$nonce" || true)
  if [ -z "$e" ]; then
    ws_json="{\"path\":$(_kb_js "$KB_workspace/$KB_workspace_file"),\"written\":true,\"error\":null}"
  else
    ws_json="{\"path\":$(_kb_js "$KB_workspace/$KB_workspace_file"),\"written\":false,\"error\":$(_kb_js "$e")}"
  fi

  # every writable mount point, the usual places, $HOME; then the host's folders kbound watches
  while IFS= read -r line; do
    _kb_mountinfo_fields "$line"
    case ",$_kb_opts," in *,ro,*) continue ;; esac
    dirs+=("$_kb_mp")
  done <"/proc/$BASHPID/mountinfo"
  dirs+=(/ /tmp /var/tmp /dev/shm)
  [ -n "$HOME" ] && ! _kb_under "$(_kb_norm "$HOME")" "$(_kb_norm "$KB_workspace")" && dirs+=("$HOME")
  for d in "${dirs[@]}"; do
    d=$(_kb_norm "$d")
    for skip in "${KB_skip_mounts[@]}"; do _kb_under "$d" "$(_kb_norm "$skip")" && continue 2; done
    for p in "${seen[@]}"; do [ "$p" = "$d" ] && continue 2; done
    seen+=("$d")
  done
  for d in "${KB_escape_dirs[@]}"; do seen+=("$d"); done
  for d in "${seen[@]}"; do
    real=$(realpath -e -- "$d" 2>/dev/null || printf '%s' "$d")
    IFS=$'\t' read -r fs mp <<<"$(_kb_mount_of "$real")"
    e=$(_kb_try_create "$d" "$KB_escape_name" "$nonce" || true)
    created=$([ -z "$e" ] && echo true || echo false)
    outside+=("{\"path\":$(_kb_js "$d"),\"fstype\":$(_kb_jn "$fs"),\"mount_point\":$(_kb_jn "$mp"),\"created\":$created,\"error\":$(_kb_jn "$e")}")
  done

  # host settings: opened for writing and closed at once, never written; a missing one is not created
  for p in "${KB_sysctl_paths[@]}"; do
    if [ ! -e "$p" ]; then
      sysctl+=("{\"path\":$(_kb_js "$p"),\"opened\":false,\"error\":\"ENOENT\"}")
    elif msg=$( (exec 3>>"$p") 2>&1); then
      sysctl+=("{\"path\":$(_kb_js "$p"),\"opened\":true,\"error\":null}")
    else
      sysctl+=("{\"path\":$(_kb_js "$p"),\"opened\":false,\"error\":$(_kb_js "$(_kb_errno "$msg")")}")
    fi
  done

  # the network as the cell sees it
  local ifs=() r4=() r6=()
  while IFS= read -r line; do
    [[ $line == *:* ]] || continue
    n=${line%%:*}
    n=${n//[[:space:]]/}
    ifs+=("$(_kb_js "$n")")
  done < <(tail -n +3 /proc/net/dev 2>/dev/null)
  while IFS= read -r line; do r4+=("$(_kb_js "${line%"${line##*[![:space:]]}"}")"); done < <(tail -n +2 /proc/net/route 2>/dev/null)
  while IFS= read -r line; do r6+=("$(_kb_js "${line%"${line##*[![:space:]]}"}")"); done </proc/net/ipv6_route 2>/dev/null
  local tmo=$(((${KB_timeout_ms:-1000} + 999) / 1000))
  for p in "${KB_tcp_ports[@]}"; do
    if msg=$(timeout "$tmo" bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$p" 2>&1); then
      tcp+=("{\"port\":$p,\"connected\":true,\"error\":null}")
    else
      rc=$?
      [ "$rc" -eq 124 ] && msg="timed out"
      tcp+=("{\"port\":$p,\"connected\":false,\"error\":$(_kb_js "$(_kb_errno "$msg")")}")
    fi
  done
  local unix_table
  unix_table=$(head -c 1048576 /proc/net/unix 2>/dev/null)
  for n in "${KB_abstract_sockets[@]}"; do
    abstract+=("{\"name\":$(_kb_js "$n"),\"tested\":false,\"connected\":false,\"error\":\"unsupported in bash\"}")
    printf '%s\n' "$unix_table" | grep -qF -- " @$n" && visible+=("$(_kb_js "$n")")
  done

  # credentials: a child says it is alive, waits for the host's look (the go file), then reports
  # its own environment and what it can read of every process
  local sub child_out child_err cpid spawned=false go=false child_env='""' procs='[]' sub_error=null
  child_out=$(mktemp) child_err=$(mktemp)
  bash -c '
    go=$1 wait_s=${2%.*} i=0
    printf "ready %s\n" "$$" >&2
    while [ ! -e "$go" ] && [ "$i" -lt $((${wait_s:-10} * 20)) ]; do sleep 0.05; i=$((i + 1)); done
    [ -e "$go" ] && echo go || echo nogo
    tr "\0" "\n" <"/proc/$$/environ"
    echo "--kbound-procs--"
    n=0
    for d in $(ls /proc | grep -E "^[0-9]+$" | sort -n); do
      [ "$n" -ge 256 ] && break
      e=$(head -c 65536 "/proc/$d/environ" 2>/dev/null | base64 -w0) || e=
      c=$(head -c 65536 "/proc/$d/cmdline" 2>/dev/null | base64 -w0) || c=
      [ -z "$e$c" ] && [ ! -r "/proc/$d/environ" ] && [ ! -r "/proc/$d/cmdline" ] && continue
      printf "%s %s %s\n" "$d" "${e:--}" "${c:--}"
      n=$((n + 1))
    done' _ "$KB_child_go" "${KB_child_wait_s:-10}" >"$child_out" 2>"$child_err" &
  cpid=$!
  spawned=true
  for ((n = 0; n < 200; n++)); do grep -q '^ready ' "$child_err" 2>/dev/null && break; sleep 0.05; done
  if grep -q '^ready ' "$child_err"; then
    # and an empty line: a pty kernel (metakernel) sends a line's end only with the next line
    [ -n "$KB_child_marker" ] && printf '%s %s\n\n' "$KB_child_marker" "$cpid"
  else
    sub_error='"the child never said it was ready"'
  fi
  if wait "$cpid"; then
    local first rest env_part procs_part pid_e e_b64 c_b64 items=()
    first=$(head -n 1 "$child_out")
    [ "$first" = go ] && go=true
    rest=$(tail -n +2 "$child_out")
    env_part=${rest%%--kbound-procs--*}
    procs_part=${rest#*--kbound-procs--}
    child_env=$(_kb_js "${env_part%$'\n'}")
    while read -r pid_e e_b64 c_b64; do
      [ -n "$pid_e" ] || continue
      e=$([ "$e_b64" = - ] || printf '%s' "$e_b64" | base64 -d 2>/dev/null | tr '\0' '\n')
      n=$([ "$c_b64" = - ] || printf '%s' "$c_b64" | base64 -d 2>/dev/null | tr '\0' '\n')
      items+=("{\"pid\":$pid_e,\"environ\":$(_kb_js "$e"),\"cmdline\":$(_kb_js "$n")}")
    done <<<"$procs_part"
    procs=$(_kb_ja "${items[@]}")
  else
    sub_error=$(_kb_js "exit status $?")
  fi
  rm -f "$child_out" "$child_err"
  sub="{\"spawned\":$spawned,\"pid\":$(_kb_ji "$cpid"),\"go\":$go,\"error\":$sub_error,\"environ\":$child_env,\"proc\":$procs}"
  for p in "${KB_credential_paths[@]}"; do
    local ex=false content=null
    [ -e "$p" ] && ex=true
    if c=$(_kb_head "$p"); then content=$(_kb_js "$c"); fi
    files+=("{\"path\":$(_kb_js "$p"),\"exists\":$ex,\"content\":$content}")
  done
  local keys='{"tested":false,"found":false,"payload":null,"error":"unsupported in bash"}'

  # another team's files
  for p in "${KB_sibling_paths[@]}"; do
    local ex=false readable=false content=null
    [ -e "$p" ] && ex=true
    if [ -d "$p" ]; then
      if [ -r "$p" ] && [ -x "$p" ]; then readable=true; content=$(_kb_js "$(ls -A -- "$p" 2>/dev/null | sort)"); fi
    elif c=$(_kb_head "$p"); then
      readable=true
      content=$(_kb_js "$c")
    fi
    cross+=("{\"path\":$(_kb_js "$p"),\"exists\":$ex,\"readable\":$readable,\"content\":$content}")
  done

  # the cell's own view: mounts and process
  while IFS= read -r line; do mounts+=("$(_kb_js "$line")"); done <"/proc/$BASHPID/mountinfo"
  local st visible_n=0
  st=$(head -c 65536 "/proc/$BASHPID/status")
  for d in /proc/[0-9]*; do visible_n=$((visible_n + 1)); done
  local process="{\"no_new_privs\":$(_kb_ji "$(_kb_status "$st" NoNewPrivs)"),\"seccomp\":$(_kb_ji "$(_kb_status "$st" Seccomp)"),\"cap_eff\":$(_kb_js "$(_kb_status "$st" CapEff)"),\"cap_prm\":$(_kb_js "$(_kb_status "$st" CapPrm)"),\"cap_bnd\":$(_kb_js "$(_kb_status "$st" CapBnd)"),\"uid\":$(_kb_ji "$(_kb_status "$st" Uid | cut -f1)"),\"gid\":$(_kb_ji "$(_kb_status "$st" Gid | cut -f1)"),\"visible_processes\":$visible_n}"

  _kb_result "{\"pid\":$PPID,\"workspace\":$ws_json,\"write_outside\":$(_kb_ja "${outside[@]}"),\"sysctl\":$(_kb_ja "${sysctl[@]}"),\"network\":{\"interfaces\":$(_kb_ja "${ifs[@]}"),\"routes_v4\":$(_kb_ja "${r4[@]}"),\"routes_v6\":$(_kb_ja "${r6[@]}"),\"tcp\":$(_kb_ja "${tcp[@]}"),\"abstract\":$(_kb_ja "${abstract[@]}"),\"unix_visible\":$(_kb_ja "${visible[@]}")},\"credentials\":{\"subprocess\":$sub,\"files\":$(_kb_ja "${files[@]}"),\"keys\":$keys},\"cross_team\":$(_kb_ja "${cross[@]}"),\"mounts\":$(_kb_ja "${mounts[@]}"),\"process\":$process,\"errors\":$(_kb_ja "${errors[@]}")}"
}
