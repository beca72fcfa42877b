# kbound boundary probe cell: tries every way out of the sandbox it knows and reports what happened.
# It knows no secrets: kbound's host side judges the result. Each sub-probe catches its own errors,
# so one failure never hides the others. All helpers live inside one function that is deleted after.
{{KBOUND_PRELUDE}}
def _kbound_cell_fn():
    import base64, errno, json, os, re, socket, subprocess, sys

    params = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))
    cap = 65536  # bytes kept per file read; kbound bounds what it has to search
    line_cap = 1048576  # bytes read from /proc tables (mountinfo can be long on a busy host)
    errors = []

    def ename(exc):
        if isinstance(exc, socket.timeout) and getattr(exc, "errno", None) is None:
            return "ETIMEDOUT"
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

    def read_text(path, limit=cap):
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")

    def read_lines(path):
        return [l.rstrip() for l in read_text(path, line_cap).split("\n") if l.strip() != ""]

    def status_fields():
        out = {}
        for line in read_lines("/proc/self/status"):
            key, _, value = line.partition(":")
            out[key] = value.strip()
        return out

    def under(path, root):
        root = root.rstrip("/") or "/"
        return path == root or root == "/" or path.startswith(root + "/")

    # -- mounts: raw lines plus (mount point, fstype, options) for the write test
    mount_lines = guard("mounts", lambda: read_lines("/proc/self/mountinfo"), [])

    def unescape(field):
        return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)

    def parse_mounts():
        out = []
        for line in mount_lines:
            parts = line.split(" ")
            if "-" not in parts[6:-1]:
                continue
            sep = parts.index("-", 6)
            out.append((unescape(parts[4]), parts[sep + 1], parts[5].split(",")))
        return out

    mounts = guard("mounts.parse", parse_mounts, [])

    def containing_mount(path):
        best = None
        for point, fstype, _ in mounts:  # later lines are mounted on top of earlier ones
            if under(path, point) and (best is None or len(point) >= len(best[0])):
                best = (point, fstype)
        return best

    # -- workspace: the one place the kernel must be able to write
    def probe_workspace():
        path = os.path.join(params["workspace"], params["workspace_file"])
        res = {"path": path, "written": False, "error": None}
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(params["nonce"])
            res["written"] = True
        except OSError as exc:
            res["error"] = ename(exc)
        return res

    workspace = guard("workspace", probe_workspace,
                      {"path": params.get("workspace"), "written": False, "error": "probe failed"})

    # -- write_outside: every writable-looking mount point and the usual scratch places
    def probe_write_outside():
        skips = [os.path.normpath(s) for s in (params.get("skip_mounts") or [])]
        skipped = lambda p: any(under(p, s) for s in skips)
        candidates = [p for p, _, opts in mounts if "ro" not in opts]
        candidates += ["/", "/tmp", "/var/tmp", "/dev/shm"]
        home = os.environ.get("HOME")
        if home and os.path.isabs(home) and not under(os.path.normpath(home),
                                                      os.path.normpath(params["workspace"])):
            candidates.append(home)
        dirs, seen = [], set()
        for p in candidates:
            p = os.path.normpath(p)
            if p not in seen and not skipped(p):
                seen.add(p)
                dirs.append(p)
        for p in (params.get("escape_dirs") or []):  # asked for explicitly: never skipped
            p = os.path.normpath(p)
            if p not in seen:
                seen.add(p)
                dirs.append(p)
        out = []
        for d in dirs:
            mount = containing_mount(os.path.realpath(d))
            res = {"path": d, "fstype": mount[1] if mount else None,
                   "mount_point": mount[0] if mount else None, "created": False, "error": None}
            target = os.path.join(d, params["escape_name"])
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                res["created"] = True
                try:
                    os.write(fd, params["nonce"].encode("utf-8"))
                finally:
                    os.close(fd)
                # Left in place on purpose: the host looks for it, and removes what it finds.
            except OSError as exc:
                res["error"] = ename(exc)
            out.append(res)
        return out

    write_outside = guard("write_outside", probe_write_outside, [])

    # -- host-global kernel settings: opened for writing to see whether it is allowed, never written
    def probe_sysctl():
        out = []
        for p in (params.get("sysctl_paths") or []):
            res = {"path": p, "opened": False, "error": None}
            try:
                fd = os.open(p, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                res["opened"] = True
                os.close(fd)  # nothing written
            except OSError as exc:
                res["error"] = ename(exc)
            out.append(res)
        return out

    sysctl = guard("sysctl", probe_sysctl, [])

    # -- network: what the sandbox can see and whether kbound's host canaries are reachable
    timeout = max(0.001, float(params.get("timeout_ms") or 1000) / 1000.0)

    def interfaces():
        return [l.split(":", 1)[0].strip() for l in read_lines("/proc/net/dev")[2:] if ":" in l]

    def attempt_connect(res, family, address):
        # Making the socket is part of the attempt: a seccomp filter refuses IP sockets outright
        # (EAFNOSUPPORT), which is a failed attempt, not a failed probe.
        s = None
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(timeout)
            s.connect(address)
            res["connected"] = True
        except OSError as exc:
            res["error"] = ename(exc)
        finally:
            if s is not None:
                s.close()
        return res

    def tcp():
        return [attempt_connect({"port": int(port), "connected": False, "error": None},
                                socket.AF_INET, ("127.0.0.1", int(port)))
                for port in (params.get("tcp_ports") or [])]

    def abstract():
        return [attempt_connect({"name": name, "tested": True, "connected": False, "error": None},
                                socket.AF_UNIX, "\0" + name)
                for name in (params.get("abstract_sockets") or [])]

    def unix_visible():
        paths = set()
        for line in read_lines("/proc/net/unix")[1:]:
            fields = line.split()
            if len(fields) >= 8:
                paths.add(" ".join(fields[7:]))
        return [n for n in (params.get("abstract_sockets") or []) if "@" + n in paths]

    network = {
        "interfaces": guard("network.interfaces", interfaces, []),
        "routes_v4": guard("network.routes_v4", lambda: read_lines("/proc/net/route")[1:], []),
        "routes_v6": guard("network.routes_v6", lambda: read_lines("/proc/net/ipv6_route"), []),
        "tcp": guard("network.tcp", tcp, []),
        "abstract": guard("network.abstract", abstract, []),
        "unix_visible": guard("network.unix_visible", unix_visible, []),
    }

    # -- credentials: a child process dumps what any code in the sandbox could read. It first says
    # it is alive and waits (params["child_wait_s"]) until the host has looked at the sandbox with it running:
    # the cell prints params["child_marker"] and the child's pid, the host inspects, then creates
    # params["child_go"] (in the team's runtime folder).
    child_code = r'''
import json, os, sys, time
print("ready %d" % os.getpid(), flush=True)
go, wait, t0 = sys.argv[1], float(sys.argv[2]), time.monotonic()
while go and not os.path.exists(go) and time.monotonic() - t0 < wait:
    time.sleep(0.01)
cap = 65536
def rd(p):
    try:
        with open(p, "rb") as f:
            return f.read(cap).replace(b"\0", b"\n").decode("utf-8", "replace")
    except OSError:
        return None
env = b"\n".join(k + b"=" + v for k, v in os.environb.items()).decode("utf-8", "replace")
procs = []
for d in sorted((x for x in os.listdir("/proc") if x.isdigit()), key=int):
    if len(procs) >= 256:
        break
    e, c = rd("/proc/%s/environ" % d), rd("/proc/%s/cmdline" % d)
    if e is None and c is None:
        continue
    procs.append({"pid": int(d), "environ": e or "", "cmdline": c or ""})
print(json.dumps({"environ": env, "proc": procs, "go": bool(go) and os.path.exists(go)}))
'''

    def python_here():
        # The kernel's own interpreter if it exists inside the sandbox (an image's kernelspec may
        # name /usr/bin/python where only python3 is installed), else the first python3 or python
        # on PATH; None when there is none.
        import shutil
        for candidate in (sys.executable, shutil.which("python3"), shutil.which("python")):
            if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        return None

    def subprocess_dump():
        import selectors
        res = {"spawned": False, "pid": None, "error": None, "environ": "", "proc": [], "go": False}
        try:
            interpreter = python_here()
            if interpreter is None:
                res["error"] = "no Python interpreter inside the sandbox (tried sys.executable %r, python3, python)" % (
                    sys.executable,)
                return res
            child = subprocess.Popen([interpreter, "-I", "-c", child_code, params.get("child_go") or "",
                                      str(float(params.get("child_wait_s") or 10))],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            res["error"] = ename(exc)
            return res
        res["spawned"] = True
        try:
            # selectors (epoll), not select(): a kernel may hold descriptors past FD_SETSIZE
            with selectors.DefaultSelector() as sel:
                sel.register(child.stdout, selectors.EVENT_READ)
                ready = sel.select(30)
            first = child.stdout.readline().decode("utf-8", "replace").split() if ready else []
            if len(first) == 2 and first[0] == "ready" and first[1].isdigit():
                res["pid"] = int(first[1])
                if params.get("child_marker"):
                    sys.stdout.write("%s %d\n" % (params["child_marker"], res["pid"]))
                    sys.stdout.flush()  # the host looks at the sandbox now, then lets the child go on
            out, err = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            res["error"] = "ETIMEDOUT"
            return res
        try:
            dump = json.loads(out.decode("utf-8", "replace"))
            res["environ"], res["proc"], res["go"] = dump["environ"], dump["proc"], dump.get("go", False)
            if child.returncode != 0:
                res["error"] = "exit status %d" % child.returncode
        except (ValueError, KeyError, TypeError):
            res["error"] = "exit status %d: %s" % (child.returncode, err[-400:].decode("utf-8", "replace"))
        if res["pid"] is None and not res["error"]:
            res["error"] = "the child never said it was ready"
        return res

    def cred_files():
        out = []
        for p in (params.get("credential_paths") or []):
            res = {"path": p, "exists": os.path.exists(p), "content": None}
            try:
                res["content"] = read_text(p)
            except OSError:
                pass
            out.append(res)
        return out

    # -- keys: kbound holds a canary key in its own session keyring; this process must not be able
    # to find it by name (request_key searches the keyrings a process possesses) nor read it.
    def keys():
        res = {"tested": False, "found": False, "payload": None, "error": None}
        name = params.get("keyring_canary")
        if not name:
            res["error"] = "no keyring canary to look for"
            return res
        import ctypes, platform
        numbers = {"x86_64": (249, 250), "aarch64": (218, 219)}  # request_key, keyctl
        if platform.machine() not in numbers:
            res["error"] = "untested: no syscall numbers for " + platform.machine()
            return res
        request_key, keyctl = numbers[platform.machine()]
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        res["tested"] = True
        serial = libc.syscall(ctypes.c_long(request_key), ctypes.c_char_p(b"user"),
                              ctypes.c_char_p(name.encode("utf-8")), ctypes.c_void_p(None), ctypes.c_long(0))
        if serial < 0:
            res["error"] = errno.errorcode.get(ctypes.get_errno(), "E?")  # ENOKEY: not possessed
            return res
        res["found"] = True
        buf = ctypes.create_string_buffer(4096)
        n = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(11), ctypes.c_long(serial), buf,
                         ctypes.c_long(len(buf)))  # KEYCTL_READ
        if n >= 0:
            res["payload"] = buf.raw[:min(n, len(buf))].decode("utf-8", "replace")
        else:
            res["error"] = errno.errorcode.get(ctypes.get_errno(), "E?")
        return res

    credentials = {
        "subprocess": guard("credentials.subprocess", subprocess_dump,
                            {"spawned": False, "error": "probe failed", "environ": "", "proc": []}),
        "files": guard("credentials.files", cred_files, []),
        "keys": guard("credentials.keys", keys, {"tested": False, "found": False, "error": "probe failed"}),
    }

    # -- cross_team: other teams' workspaces must be invisible or unreadable
    def cross_team():
        out = []
        for p in (params.get("sibling_paths") or []):
            res = {"path": p, "exists": os.path.exists(p), "readable": False, "content": None}
            try:
                if os.path.isdir(p):
                    res["content"] = "\n".join(sorted(os.listdir(p)))
                else:
                    res["content"] = read_text(p)
                res["readable"] = True
            except OSError:
                pass
            out.append(res)
        return out

    cross = guard("cross_team", cross_team, [])

    # -- process: privileges the kernel runs with
    def process():
        st = status_fields()
        num = lambda k: int(st[k]) if k in st else None
        real = lambda k, dflt: int(st[k].split()[0]) if k in st else dflt  # first field is the real id
        count = sum(1 for x in os.listdir("/proc") if x.isdigit())
        return {"no_new_privs": num("NoNewPrivs"), "seccomp": num("Seccomp"),
                "cap_eff": st.get("CapEff", ""), "cap_prm": st.get("CapPrm", ""), "cap_bnd": st.get("CapBnd", ""),
                "uid": real("Uid", os.getuid()), "gid": real("Gid", os.getgid()), "visible_processes": count}

    proc = guard("process", process, {"no_new_privs": None, "seccomp": None, "cap_eff": "", "cap_prm": "",
                                       "cap_bnd": "", "uid": os.getuid(), "gid": os.getgid(),
                                       "visible_processes": 0})

    _kbound_publish({
        "pid": os.getpid(), "workspace": workspace, "write_outside": write_outside, "sysctl": sysctl,
        "network": network,
        "credentials": credentials, "cross_team": cross, "mounts": mount_lines, "process": proc,
        "errors": errors}, params.get("result_marker"))
try:
    _kbound_cell_fn()
finally:
    del _kbound_cell_fn, _kbound_publish
