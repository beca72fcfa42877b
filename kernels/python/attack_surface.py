# kbound attack-surface probe cell: tries each call and socket family named in its params with
# arguments that do nothing whether the call is allowed or refused (docs/seccomp.md), in this
# process, and runs kbound-syscall-probe (params["program"], a path inside the sandbox), the
# static program every language's cell spawns: a single-threaded child that tries the whole table
# the same way and prints JSON. Reports name -> errno (or "allowed"). It knows nothing of the
# filter: kbound's host side compares the answers with the errnos it expects and confirms the
# filter from /proc. All helpers live inside one function that is deleted after.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, errno, json, os, subprocess

    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    errors = []

    def ename(exc):
        num = getattr(exc, "errno", None)
        if isinstance(num, int):
            return errno.errorcode.get(num, "E%d" % num)
        return "%s: %s" % (type(exc).__name__, exc)

    def guard(name, fn, fallback):
        try:
            return fn()
        except Exception as exc:  # report and carry on; KeyboardInterrupt still propagates
            errors.append({"probe": name, "error": ename(exc)})
            return fallback

    # The in-process tries (the argument set of src/tools/syscall_tries.c, which the program
    # runs). Every try is creation at most, and whatever it creates is closed before the next one.
    tries_src = r'''
import ctypes, errno, os, struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

CLONE_VFORK = 0x4000
CLONE_THREAD = 0x10000
CLONE_NEWUSER = 0x10000000
INT_MAX = 0x7fffffff
ADDR_NO_RANDOMIZE = 0x0040000
KEY_SPEC_PROCESS_KEYRING = -2
SOCK_STREAM, SOCK_RAW, AF_NETLINK = 1, 3, 16

def as_arg(v):
    if v is None:
        return ctypes.c_void_p(None)
    if isinstance(v, bytes):
        return ctypes.c_char_p(v)
    if isinstance(v, int):
        return ctypes.c_long(v)
    return v  # a ctypes buffer

def sys_call(nr, *args):
    """syscall(2): its result, or -errno."""
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[as_arg(a) for a in args])
    return -ctypes.get_errno() if r < 0 else r

def buf(n):
    return ctypes.create_string_buffer(n)

def try_personality(nr, value):
    # ADDR_NO_RANDOMIZE takes effect only at the next execve; the old value goes back at once
    old = sys_call(nr, 0xffffffff)
    r = sys_call(nr, ADDR_NO_RANDOMIZE)
    if r >= 0 and old >= 0:
        sys_call(nr, old)
    return r

def try_io_uring_setup(nr, value):
    r = sys_call(nr, 1, buf(120))  # a one-entry ring, closed at once
    if r >= 0:
        os.close(r)
    return r

def try_clone_flag(nr, value):
    # CLONE_THREAD without CLONE_SIGHAND: EINVAL before anything is created, on every kernel
    return sys_call(nr, value | CLONE_THREAD, None, None, None, None)

# name -> try(nr, value); value is the entry's flag or ioctl request
RECIPES = {
    "syslog": lambda nr, v: sys_call(nr, 10, None, 0),              # SYSLOG_ACTION_SIZE_BUFFER
    "acct": lambda nr, v: sys_call(nr, b""),                        # ENOENT
    "uselib": lambda nr, v: sys_call(nr, None),                     # EFAULT
    "modify_ldt": lambda nr, v: sys_call(nr, 0, buf(16), 0),        # reads 0 bytes
    "quotactl": lambda nr, v: sys_call(nr, 0, None, 0, None),       # ENODEV
    "quotactl_fd": lambda nr, v: sys_call(nr, -1, 0, 0, None),      # EBADF
    "add_key": lambda nr, v: sys_call(nr, b"", b"kbound", None, 0, KEY_SPEC_PROCESS_KEYRING),  # EINVAL
    "keyctl": lambda nr, v: sys_call(nr, 0, KEY_SPEC_PROCESS_KEYRING, 0),  # GET_KEYRING_ID, no create: ENOKEY
    "request_key": lambda nr, v: sys_call(nr, b"", b"kbound", None, 0),    # EINVAL
    "move_pages": lambda nr, v: sys_call(nr, 0, 0, None, None, None, 1),   # EINVAL
    "mbind": lambda nr, v: sys_call(nr, None, 0, 0xff, None, 0, 0),        # EINVAL
    "get_mempolicy": lambda nr, v: sys_call(nr, None, None, 0, None, 0x80),  # EINVAL
    "set_mempolicy": lambda nr, v: sys_call(nr, 0xff, None, 0),            # EINVAL
    "migrate_pages": lambda nr, v: sys_call(nr, INT_MAX, 0, None, None),   # ESRCH
    "set_mempolicy_home_node": lambda nr, v: sys_call(nr, 0, 0, 0, 1),     # EINVAL
    "unshare": lambda nr, v: sys_call(nr, CLONE_NEWUSER | CLONE_VFORK),    # EINVAL
    "setns": lambda nr, v: sys_call(nr, -1, 0),                            # EBADF
    "clone:CLONE_NEWUSER": try_clone_flag,
    "clone:CLONE_NEWNS": try_clone_flag,
    "clone:CLONE_NEWPID": try_clone_flag,
    "clone:CLONE_NEWNET": try_clone_flag,
    "clone:CLONE_NEWIPC": try_clone_flag,
    "clone:CLONE_NEWUTS": try_clone_flag,
    "clone:CLONE_NEWCGROUP": try_clone_flag,
    "clone3": lambda nr, v: sys_call(nr, None, 0),                         # EINVAL
    "mount": lambda nr, v: sys_call(nr, None, None, None, 0, None),        # EFAULT
    "umount2": lambda nr, v: sys_call(nr, None, 0),                        # EFAULT
    "pivot_root": lambda nr, v: sys_call(nr, None, None),                  # EFAULT (EPERM unprivileged)
    "chroot": lambda nr, v: sys_call(nr, None),                            # EFAULT
    "open_tree": lambda nr, v: sys_call(nr, -1, None, 0),
    "move_mount": lambda nr, v: sys_call(nr, -1, None, -1, None, 0),
    "fsopen": lambda nr, v: sys_call(nr, None, 0),
    "fsconfig": lambda nr, v: sys_call(nr, -1, 0, None, None, 0),
    "fsmount": lambda nr, v: sys_call(nr, -1, 0, 0),
    "fspick": lambda nr, v: sys_call(nr, -1, None, 0),
    "mount_setattr": lambda nr, v: sys_call(nr, -1, None, 0, None, 0),
    "ioctl:TIOCSTI": lambda nr, v: sys_call(nr, -1, v, buf(8)),            # EBADF
    "ioctl:TIOCLINUX": lambda nr, v: sys_call(nr, -1, v, buf(8)),          # EBADF
    "ptrace": lambda nr, v: sys_call(nr, 3, INT_MAX, 0, 0),                # PTRACE_PEEKUSER: ESRCH
    "process_vm_readv": lambda nr, v: sys_call(nr, 0, None, 0, None, 0, 1),   # EINVAL
    "process_vm_writev": lambda nr, v: sys_call(nr, 0, None, 0, None, 0, 1),  # EINVAL
    "process_madvise": lambda nr, v: sys_call(nr, -1, None, 0, 0, 1),      # EINVAL
    "kcmp": lambda nr, v: sys_call(nr, INT_MAX, INT_MAX, 0, 0, 0),         # ESRCH
    "pidfd_getfd": lambda nr, v: sys_call(nr, -1, 0, 1),                   # EINVAL
    "personality": try_personality,
    "perf_event_open": lambda nr, v: sys_call(nr, None, 0, -1, -1, 0),     # EFAULT
    "io_uring_setup": try_io_uring_setup,
    "io_uring_enter": lambda nr, v: sys_call(nr, -1, 0, 0, 0, None, 0),    # EBADF
    "io_uring_register": lambda nr, v: sys_call(nr, -1, 0, None, 0),       # EBADF
    "bpf": lambda nr, v: sys_call(nr, 0x7fff, None, 0),                    # EINVAL
    "userfaultfd": lambda nr, v: sys_call(nr, 1 | 2),                      # EINVAL
    "kexec_load": lambda nr, v: sys_call(nr, 0, 17, None, 0x8000),         # EINVAL (EPERM unprivileged)
    "kexec_file_load": lambda nr, v: sys_call(nr, -1, -1, 0, None, 0x8000),
    "init_module": lambda nr, v: sys_call(nr, None, 0, b""),               # ENOEXEC (EPERM unprivileged)
    "finit_module": lambda nr, v: sys_call(nr, -1, b"", 0),                # EBADF (EPERM unprivileged)
    "delete_module": lambda nr, v: sys_call(nr, None, 0),                  # EFAULT (EPERM unprivileged)
    "open_by_handle_at": lambda nr, v: sys_call(nr, -1, None, 0),
    "name_to_handle_at": lambda nr, v: sys_call(nr, -1, None, None, None, 0),  # EFAULT
    "reboot": lambda nr, v: sys_call(nr, 0, 0, 0, None),                   # EINVAL (EPERM unprivileged)
    "swapon": lambda nr, v: sys_call(nr, None, 0x40000000),                # EINVAL
    "swapoff": lambda nr, v: sys_call(nr, None),                           # EFAULT (EPERM unprivileged)
    "iopl": lambda nr, v: sys_call(nr, 4),                                 # EINVAL
    "ioperm": lambda nr, v: sys_call(nr, 0, 0, 0),                         # EINVAL
    "settimeofday": lambda nr, v: sys_call(nr, ctypes.create_string_buffer(struct.pack("@ll", 0, 2000000)), None),
    "clock_settime": lambda nr, v: sys_call(nr, 16, None),                 # EINVAL
}

def outcome(r):
    if r >= 0:
        return {"result": "allowed", "returned": r}
    return {"result": errno.errorcode.get(-r, "E%d" % -r)}

def try_calls(calls):
    out = []
    for c in calls:
        name, nr = c.get("name"), c.get("nr")
        res = {"name": name, "form": "harmless"}
        recipe = RECIPES.get(name)
        if recipe is None:
            res.update(result="untested", reason="no harmless recipe for this call")
        elif not isinstance(nr, int) or nr < 0:
            res.update(result="untested", reason="not a call of this architecture")
        else:
            try:
                res.update(outcome(recipe(nr, int(c.get("value") or 0))))
            except Exception as exc:
                res.update(result="untested", reason="%s: %s" % (type(exc).__name__, exc))
        out.append(res)
    return out

def seccomp_status():
    out = {"mode": None, "filters": None, "no_new_privs": None, "threads": None}
    keys = {"Seccomp": "mode", "Seccomp_filters": "filters", "NoNewPrivs": "no_new_privs", "Threads": "threads"}
    with open("/proc/self/status", "rb") as f:
        for line in f.read(65536).decode("utf-8", "replace").split("\n"):
            key, _, value = line.partition(":")
            if key in keys:
                out[keys[key]] = value.strip()
    return out

def try_family(family, pair):
    kind = SOCK_RAW if family == AF_NETLINK else SOCK_STREAM
    ctypes.set_errno(0)
    if pair:
        sv = (ctypes.c_int * 2)()
        r = libc.socketpair(family, kind, 0, sv)
        if r == 0:
            os.close(sv[0])
            os.close(sv[1])
            return 0
    else:
        r = libc.socket(family, kind, 0)
        if r >= 0:
            os.close(r)
            return r
    return -ctypes.get_errno()

def try_families(families, calls_out, calls_in):
    # Creating a socket of a family whose module is not loaded makes the host kernel load it, also
    # from inside a sandbox: families are tried only under a filter that visibly refuses calls.
    expected = {c.get("name"): c.get("errno") for c in calls_in}
    refused = [r for r in calls_out if r.get("result") == expected.get(r.get("name"))]
    status = seccomp_status()
    if status["mode"] != "2" or not refused:
        reason = ("not tried: no seccomp filter is visibly active (Seccomp: %s, calls refused as expected: %d), "
                  "and a socket of a family whose module is not loaded would make the host kernel load it"
                  % (status["mode"], len(refused)))
        return [{"name": f.get("name"), "call": call, "result": "untested", "reason": reason}
                for f in families for call in ("socket", "socketpair")]
    out = []
    for f in families:
        for pair, call in ((False, "socket"), (True, "socketpair")):
            res = {"name": f.get("name"), "call": call}
            try:
                res.update(outcome(try_family(int(f["family"]), pair)))
            except Exception as exc:
                res.update(result="untested", reason="%s: %s" % (type(exc).__name__, exc))
            out.append(res)
    return out

def run(params):
    calls, families = params.get("calls") or [], params.get("families") or []
    calls_out = try_calls(calls)
    return {"pid": os.getpid(), "status": seccomp_status(), "calls": calls_out,
            "families": try_families(families, calls_out, calls)}
'''

    scope = {"__name__": "kbound_attack_surface"}
    guard("tries.load", lambda: exec(compile(tries_src, "<kbound-attack-surface>", "exec"), scope), None)

    in_process = guard("in_process", lambda: scope["run"](params),
                       {"pid": os.getpid(), "status": None, "calls": [], "families": []})

    # kbound-syscall-probe, spawned: it inherits the filter, starts single-threaded, tries every
    # entry of the table and prints one JSON object, published as it is.
    timeout = max(1.0, float(params.get("timeout_ms") or 10000) / 1000.0)

    def child():
        program = params.get("program")
        if not isinstance(program, str) or not program:
            errors.append({"probe": "child", "error": "no program given"})
            return None
        try:
            run = subprocess.run([program], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            errors.append({"probe": "child", "error": "ETIMEDOUT"})
            return None
        except OSError as exc:
            errors.append({"probe": "child", "error": ename(exc)})
            return None
        stderr_tail = run.stderr[-400:].decode("utf-8", "replace")
        if run.returncode != 0:
            errors.append({"probe": "child", "error": "exit status %d: %s" % (run.returncode, stderr_tail)})
            return None
        try:
            out = json.loads(run.stdout.decode("utf-8"))
        except ValueError as exc:
            errors.append({"probe": "child", "error": "unreadable output: %s" % exc})
            return None
        if not isinstance(out, dict):
            errors.append({"probe": "child", "error": "the output is not a JSON object"})
            return None
        return out

    spawned = guard("child", child, None)

    # The kernel's own tries in the program's shape: one result per entry, a family's socketpair
    # try beside its socket try.
    def as_results(tries):
        results, by_family = [], {}
        for c in tries.get("calls") or []:
            tested = c.get("result") not in (None, "untested")
            allowed = c.get("result") == "allowed"
            results.append({"name": c.get("name"), "tested": tested,
                            "errno": c.get("result") if tested and not allowed else None,
                            "ret": c.get("returned") if allowed else (-1 if tested else None),
                            "why": c.get("reason")})
        for f in tries.get("families") or []:
            tested = f.get("result") not in (None, "untested")
            allowed = f.get("result") == "allowed"
            one = {"tested": tested, "errno": f.get("result") if tested and not allowed else None,
                   "ret": f.get("returned") if allowed else (-1 if tested else None), "why": f.get("reason")}
            if f.get("call") == "socketpair":
                by_family.setdefault(f.get("name"), {"name": f.get("name")})["socketpair"] = one
            else:
                by_family.setdefault(f.get("name"), {"name": f.get("name")}).update(one)
        results.extend(by_family.values())
        return {"pid": tries.get("pid"), "status": tries.get("status"), "results": results}

    in_process = guard("in_process.results", lambda: as_results(in_process), None)

    _kbound_publish({
        "pid": os.getpid(), "in_process": in_process, "child": spawned, "errors": errors}, params.get("result_marker"))
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
