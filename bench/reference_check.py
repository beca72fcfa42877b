#!/usr/bin/python3
"""bench/reference_check.py: the kbound check scenario written the way a jupyter_client user would.

The baseline scripts/bench compares kbound against. It runs the same scenario as `kbound check`
(src/run/scenario.c), on the same kernels, with the same bwrap argv (mirrored from src/sandbox/sandbox.c),
the same minimal environment, the same probe cells (kernels/<lang>/) and the same waits, each
kernel on its own thread:

  launch in bwrap (--info-fd; kbound's seccomp filter, built by libkbound; its syscall probe program
  bound in; a --block-fd channel released at once: the reference takes no look before exec)
  -> pin PID 2 with a pidfd -> kernel_info until a reply
  identity -> probe (canaries confirmed from the host) -> attack_surface -> set_var
  long cell (ticking) + a random hold + interrupt_request on control (2 s for the reply, then 0.1 s
  grace; 10 ticks after the request end the wait as kept running)
  long cell + SIGINT through the pidfd -> get_var -> shutdown_request (1 s for the reply) -> SIGKILL

It judges less than kbound (no mount-table analysis, a simpler secret search), so if anything it
is a little cheaper than a faithful port. It prints one JSON object on stdout: timings per phase,
interrupt latencies, its own peak RSS (getrusage RUSAGE_SELF: bwrap and kernels are children and
not counted), and a pass/fail per kernel. Exit 0 when every kernel passed what kbound would pass.

Usage: /usr/bin/python3 bench/reference_check.py [--kernel NAME]... [--kernels-dir DIR] [--bwrap PATH]
         [--libkbound PATH] [--syscall-probe PATH]
Needs /usr/bin/python3's jupyter_client (python3-jupyter-client) and pyzmq, and a build of kbound
(build/libkbound.so for the filter and the table, build/kbound-syscall-probe).
"""
import argparse
import base64
import ctypes
import gzip
import json
import os
import random
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import importlib.util

import zmq
from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file
from jupyter_client.kernelspec import KernelSpecManager

# The waits kbound uses (src/run/scenario.c, src/protocol/client.c): the same scenario, the same budgets.
CELL_TIMEOUT = 60.0
MARKER_TIMEOUT = 30.0
CONTROL_REPLY_TIMEOUT = 2.0
CONTROL_GRACE = 0.1  # src/run/scenario.c CONTROL_GRACE_MS: the cell is watched during the reply wait
INTERRUPT_TIMEOUT = 10.0
HOLD_MAX = 0.2  # src/run/scenario.c HOLD_MAX_MS: a random hold after the marker before interrupting
# src/run/scenario_interrupt.c: the long cell's progress file, read by the host: this many more steps
# after interrupt_request (after SIGINT) say it kept running; a stop reply needs the count unchanged
# PROGRESS_WINDOW later; the first count must appear within PROGRESS_START of the marker.
STEPS_KEPT_RUNNING = 10
STEPS_KEPT_RUNNING_SIGNAL = 100
PROGRESS_WINDOW = 0.15
PROGRESS_START = 2.0
IDLE_GRACE = 2.0
STOP_GRACE = 1.0
SHUTDOWN_EXIT = 15.0  # src/verdict/rules.h KB_SHUTDOWN_EXIT_MS: lifecycle.shutdown waits for the kernel's exit
LONG_CELL_SECONDS = 60
MIME = "application/vnd.kbound.probe+json"
WORKSPACE = "/workspace"
RUNTIME = "/run/kbound"

TOOLS_PROBE = "/run/kbound-tools/syscall-probe"  # KB_SANDBOX_PROBE_PROGRAM
TOOLS_BOUNDARY = "/run/kbound-tools/probe"  # KB_SANDBOX_BOUNDARY_PROGRAM (kbound-probe)
# The stdout transport's result line prefix (src/run/scenario_cell.c scenario_result_marker).
RESULT_MARKER = "KBOUND-RESULT-" + secrets.token_hex(8)
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

HOST_ETC = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "R", "ssl/certs",
            "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "localtime", "timezone",
            "nsswitch.conf", "passwd", "group", "hosts", "host.conf", "gai.conf", "fonts", "mime.types",
            "matplotlibrc", "jupyter", "ipython", "locale.alias", "locale.conf", "os-release",
            "debian_version", "protocols", "services", "magic", "magic.mime", "papersize", "texmf", "xdg"]


def now():
    return time.monotonic()


def ms(t):
    return int(round(t * 1000))


def bwrap_argv(bwrap, team, workspace, runtime, probe, boundary, fds, kernel_argv):
    """The argv kbound's kb_sandbox_plan builds for the host system (no rootfs, no extra binds);
    fds: the seccomp program, the probe program, the block channel and the info pipe."""
    hostname = ("kbound-" + team)[:64].replace("_", "-").replace(".", "-")
    a = [bwrap, "--unshare-all", "--unshare-pid", "--die-with-parent", "--new-session", "--unshare-user",
         "--disable-userns", "--seccomp", str(fds["seccomp"]), "--cap-drop", "ALL", "--hostname", hostname,
         "--ro-bind", "/usr", "/usr"]
    for d in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]:
        if os.path.islink(d):
            a += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            a += ["--ro-bind-try", d, d]
    for e in HOST_ETC:
        if os.path.lexists("/etc/" + e):
            a += ["--ro-bind-try", "/etc/" + e, "/etc/" + e]
    for e in os.listdir("/etc"):  # readdir order, as kbound
        if e.startswith("python3"):
            a += ["--ro-bind-try", "/etc/" + e, "/etc/" + e]
    a += ["--proc", "/proc"]
    for e in ["sys", "sysrq-trigger", "irq", "bus", "fs"]:  # kb_sandbox_proc_readonly
        if os.path.lexists("/proc/" + e):
            a += ["--ro-bind", "/proc/" + e, "/proc/" + e]
    for e in ["kcore", "keys", "timer_list", "timer_stats", "sched_debug", "latency_stats", "acpi", "scsi",
              "asound"]:  # kb_sandbox_proc_masked
        p = "/proc/" + e
        if os.path.isdir(p) and not os.path.islink(p):
            a += ["--tmpfs", p, "--remount-ro", p]
        elif os.path.lexists(p):
            a += ["--ro-bind", "/dev/null", p]
    # src/sandbox/limits.c's defaults: /tmp and /dev/shm sized, /dev read-only, /var/tmp a link to /tmp
    tmp = str(512 << 20)
    a += ["--dev", "/dev", "--size", tmp, "--tmpfs", "/tmp", "--size", tmp, "--tmpfs", "/dev/shm",
          "--remount-ro", "/dev", "--dir", "/var", "--symlink", "../tmp", "/var/tmp",
          "--bind", workspace, WORKSPACE, "--bind", runtime, RUNTIME,
          "--ro-bind", probe, TOOLS_PROBE, "--ro-bind", boundary, TOOLS_BOUNDARY, "--remount-ro", "/",
          "--chdir", WORKSPACE, "--block-fd", str(fds["block"]), "--info-fd", str(fds["info"]), "--"]
    # kbound's PID 2 sets RLIMIT_NPROC (512) and, where no memory cgroup holds the sandbox (not
    # root), RLIMIT_AS (2 GiB), then execs the kernel (kb_sandbox_plan's plan_rlimits)
    limits = [TOOLS_PROBE, "--exec-limited", "512", "0" if os.geteuid() == 0 else str(2 << 30), "--"]
    return a + limits + kernel_argv


def sandbox_env(spec_env):
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": WORKSPACE,
           "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    for k, v in os.environ.items():
        if k in ("LANG", "LANGUAGE", "TZ") or (k.startswith("LC_") and len(k) > 3):
            env[k] = v
    for k, v in (spec_env or {}).items():
        if k != "JPY_PARENT_PID":
            env[k] = v
    return env


def read_info(fd, deadline):
    """bwrap's --info-fd JSON object (bwrap keeps the fd open while the sandbox runs)."""
    buf = b""
    try:
        while now() < deadline:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            try:
                return json.loads(buf)
            except ValueError:
                continue
    finally:
        os.close(fd)
    raise RuntimeError("bwrap reported no sandbox info")


def nspid(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
    except OSError:
        pass
    return []


def pin_pid2(init_pid, deadline):
    """The kernel's host pid: init's child whose NSpid ends in 2, pinned with a pidfd, re-checked."""
    while now() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (init_pid, init_pid)) as f:
                children = [int(x) for x in f.read().split()]
        except OSError:
            children = []
        for c in children:
            ns = nspid(c)
            if ns and ns[-1] == 2:
                fd = os.pidfd_open(c)
                if nspid(c)[-1:] == [2]:
                    return c, fd
                os.close(fd)
        time.sleep(0.005)
    raise RuntimeError("PID 2 never appeared")


class Canaries:
    """A TCP listener on 127.0.0.1 and an abstract unix socket, counting connections."""

    def __init__(self):
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.tcp.setblocking(False)
        self.name = "kbound-canary-" + secrets.token_hex(8)
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.name)
        self.unix.listen(16)
        self.unix.setblocking(False)

    def params(self):
        return {"tcp_ports": [self.tcp.getsockname()[1]], "abstract_sockets": [self.name]}

    def hits(self):
        n = 0
        for s in (self.tcp, self.unix):
            while True:
                try:
                    conn, _ = s.accept()
                    conn.close()
                    n += 1
                except BlockingIOError:
                    break
        return n

    def close(self):
        self.tcp.close()
        self.unix.close()


def render(kernels_dir, lang, cell, params):
    d = None
    for entry in sorted(os.listdir(kernels_dir)):
        manifest = os.path.join(kernels_dir, entry, "kbound.json")
        if not os.path.exists(manifest):
            continue
        with open(manifest) as f:
            m = json.load(f)
        names = [m["language"].lower()] + [a.lower() for a in m.get("aliases", [])]
        if lang.lower() in names:
            d = (os.path.join(kernels_dir, entry), m)
            break
    if not d:
        raise RuntimeError("no probe set for language " + lang)
    with open(os.path.join(d[0], d[1]["cells"][cell])) as f:
        code = f.read()
    params = dict(params, result_marker=RESULT_MARKER)  # as kbound: every cell gets one
    b64 = base64.b64encode(json.dumps(params, separators=(",", ":")).encode()).decode()
    if "{{KBOUND_PRELUDE" in code:  # the pack's shared helpers, rendered, as kb_langpack_render pastes them
        with open(os.path.join(d[0], d[1]["prelude"])) as f:
            prelude = f.read().replace("{{KBOUND_PARAMS_B64}}", b64)
        code = code.replace("{{KBOUND_PRELUDE_GZ_B64}}", base64.b64encode(gzip.compress(prelude.encode())).decode())
        code = code.replace("{{KBOUND_PRELUDE_B64}}", base64.b64encode(prelude.encode()).decode())
        code = code.replace("{{KBOUND_PRELUDE}}", prelude)
    return code.replace("{{KBOUND_PARAMS_B64}}", b64)


class Run:
    """One kernel's scenario; fills self.result."""

    def __init__(self, opts, spec_name, team, base, shared):
        self.opts, self.name, self.team, self.base, self.shared = opts, spec_name, team, base, shared
        self.result = {"name": spec_name, "team": team, "checks": {}, "phases_ms": {}}
        self.proc = None
        self.pidfd = None
        self.kc = None
        self.poller = None
        self.pending = {}  # path: (progress file, count at the reply, reply time)

    def check(self, cid, ok, detail=""):
        self.result["checks"][cid] = {"status": ok, "detail": detail}

    def phase(self, name, t0):
        self.result["phases_ms"][name] = ms(now() - t0)

    # -- messaging, as a user writes it with BlockingKernelClient

    def execute(self, code, deadline, marker=None):
        """Runs code; returns (msg_id, outputs, stdout, reply, marker_seen)."""
        msg_id = self.kc.execute(code, silent=False, store_history=False, allow_stdin=False,
                                 stop_on_error=False)
        st = {"id": msg_id, "outputs": [], "stdout": "", "reply": None, "idle": False, "reply_t": None}
        if marker:
            while now() < deadline:
                msg = self.next_iopub(st, deadline)
                if marker in st["stdout"]:
                    return st, True
                if msg is None and st["reply"]:
                    return st, False
            return st, False
        self.wait_done(st, deadline)
        return st, False

    def next_iopub(self, st, deadline):
        """Waits for traffic on iopub or shell (one zmq poll over both, so neither is seen late),
        then takes one iopub message and any replies."""
        if self.poller is None:
            self.poller = zmq.Poller()
            self.poller.register(self.kc.iopub_channel.socket, zmq.POLLIN)
            self.poller.register(self.kc.shell_channel.socket, zmq.POLLIN)
        self.poller.poll(max(0, int(1000 * (deadline - now()))))
        try:
            msg = self.kc.get_iopub_msg(timeout=0)
        except Exception:  # queue.Empty
            self.poll_shell(st)
            return None
        if msg["parent_header"].get("msg_id") == st["id"]:
            t = msg["msg_type"]
            c = msg["content"]
            if t == "stream" and c.get("name") == "stdout":
                st["stdout"] += c.get("text", "")
            elif t in ("display_data", "execute_result"):
                st["outputs"].append(c.get("data", {}))
            elif t == "status" and c.get("execution_state") == "idle":
                st["idle"] = True
        self.poll_shell(st)
        return msg

    def poll_shell(self, st):
        while st["reply"] is None:
            try:
                r = self.kc.get_shell_msg(timeout=0)
            except Exception:
                return
            if r["parent_header"].get("msg_id") == st["id"] and r["msg_type"] == "execute_reply":
                st["reply"] = r["content"]
                st["reply_t"] = now()

    def wait_done(self, st, deadline):
        while now() < deadline:
            if st["reply"] is not None and (st["idle"] or now() > st["reply_t"] + IDLE_GRACE):
                return True
            self.next_iopub(st, deadline)
        return st["reply"] is not None

    def result_of(self, st):
        found = [o[MIME] for o in st["outputs"] if MIME in o]
        for line in st["stdout"].splitlines():  # the stdout transport: `MARKER BASE64`
            if line.startswith(RESULT_MARKER + " "):
                found.append(json.loads(base64.b64decode(line.split(" ", 1)[1].strip())))
        if len(found) != 1:
            return None
        v = found[0]
        return json.loads(v) if isinstance(v, str) else v

    def cell(self, cell, params, timeout=CELL_TIMEOUT):
        code = render(self.opts.kernels_dir, self.lang, cell, params)
        st, _ = self.execute(code, now() + timeout)
        if not st["reply"] or st["reply"].get("status") != "ok":
            return None
        return self.result_of(st)

    # -- the scenario

    def start(self):
        km = KernelSpecManager()
        spec = km.get_kernel_spec(self.name)
        self.lang = spec.language
        team_dir = os.path.join(self.base, "teams", self.team)
        self.workspace = os.path.join(team_dir, "workspace")
        runtime = os.path.join(team_dir, "run")
        host = os.path.join(team_dir, "host")
        for d in (team_dir, self.workspace, runtime, host):
            os.makedirs(d, mode=0o700)
        conn = os.path.join(runtime, "kernel.json")
        key = secrets.token_hex(32)
        write_connection_file(conn, ip=RUNTIME + "/kernel", transport="ipc", key=key.encode(),
                              shell_port=1, iopub_port=2, stdin_port=3, hb_port=4, control_port=5)
        argv = [a.replace("{connection_file}", RUNTIME + "/kernel.json") for a in spec.argv]
        r, w = os.pipe()
        log = open(os.path.join(host, "kernel.log"), "ab")
        t0 = now()
        # As kbound: its seccomp filter (built per kernel), a copy of its probe program in the run's
        # tools/<team>/ (kb_kernel_start), a block channel.
        tools = os.path.join(self.base, "tools", self.team)
        os.makedirs(tools, mode=0o700)
        probe, boundary = os.path.join(tools, "syscall-probe"), os.path.join(tools, "probe")
        shutil.copyfile(self.opts.syscall_probe, probe)
        shutil.copyfile(self.opts.boundary_probe, boundary)
        os.chmod(probe, 0o555)
        os.chmod(boundary, 0o555)
        fds = {"seccomp": self.opts.seccomp.build(), "info": w}
        fds["block"], block_w = os.pipe()
        self.proc = subprocess.Popen(bwrap_argv(self.opts.bwrap, self.team, self.workspace, runtime, probe, boundary, fds, argv),
                                     env=sandbox_env(spec.env), stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=log, pass_fds=tuple(fds.values()))
        for fd in fds.values():
            os.close(fd)
        os.write(block_w, b"g")  # no look before exec: released at once
        os.close(block_w)
        log.close()
        info = read_info(r, now() + CELL_TIMEOUT)
        self.kernel_pid, self.pidfd = pin_pid2(info["child-pid"], now() + CELL_TIMEOUT)
        self.kc = BlockingKernelClient()
        self.kc.load_connection_file(conn)
        self.kc.ip = os.path.join(runtime, "kernel")  # the host side of the same socket files
        self.kc.start_channels(hb=False)
        self.kc.wait_for_ready(timeout=CELL_TIMEOUT)
        self.phase("startup", t0)
        self.result["startup_ms"] = self.result["phases_ms"]["startup"]
        self.check("sandbox.backend", "pid-namespace" in info and "net-namespace" in info)

    def run(self):
        t_all = now()
        try:
            self.start()
            self.scenario()
        except Exception as e:  # a benchmark records what broke and goes on
            self.result["error"] = "%s: %s" % (type(e).__name__, e)
        finally:
            t0 = now()
            self.stop()
            self.phase("stop", t0)
            self.result["total_ms"] = ms(now() - t_all)

    def scenario(self):
        nonce = secrets.token_hex(16)
        t0 = now()
        ident = self.cell("identity", {})
        self.phase("identity", t0)
        self.check("identity.pid2", bool(ident) and ident.get("pid") == 2 and ident.get("nspid", [0])[-1] == 2)
        self.check("identity.pidfd", nspid(self.kernel_pid)[-1:] == [2])

        t0 = now()
        can = Canaries()
        escape_name = "kbound-escape-" + nonce[:16]
        ws_file = "kbound-probe-%s.txt" % nonce[:16]
        params = {"program": TOOLS_BOUNDARY, "workspace": WORKSPACE, "nonce": nonce, "workspace_file": ws_file,
                  "escape_name": escape_name, "escape_dirs": self.shared["escape_dirs"],
                  "skip_mounts": [WORKSPACE, RUNTIME], "credential_paths": self.shared["cred_paths"],
                  "sibling_paths": self.shared["sibling_paths"], "timeout_ms": 1000}
        params.update(can.params())
        # As kbound: the probe's child waits for the host's look (kbound inspects the sandbox there;
        # the reference only lets it go on), and the cell tries the host settings.
        child_marker, go_name = "kbound-child-" + nonce[:12], ".kbound-go-" + nonce[:16]
        params.update({"child_marker": child_marker, "child_go": WORKSPACE + "/" + go_name, "child_wait_s": 10,
                       "sysctl_paths": ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness",
                                        "/proc/sysrq-trigger"]})
        code = render(self.opts.kernels_dir, self.lang, "probe", params)
        deadline = now() + CELL_TIMEOUT
        st, seen = self.execute(code, deadline, marker=child_marker)
        if seen:
            open(os.path.join(self.workspace, go_name), "w").close()
        self.wait_done(st, deadline)
        probe = self.result_of(st) if st["reply"] and st["reply"].get("status") == "ok" else None
        hits = can.hits()
        can.close()
        if probe is None:
            for c in ("write_outside", "workspace_writable", "network", "credentials", "cross_team"):
                self.check("boundary." + c, False, "probe cell failed")
        else:
            escaped = [d for d in self.shared["escape_dirs"] if os.path.lexists(os.path.join(d, escape_name))]
            self.check("boundary.write_outside", not escaped and len(probe.get("write_outside", [])) > 0)
            try:
                with open(os.path.join(self.workspace, ws_file)) as f:
                    ws_ok = f.read().strip() == nonce
            except OSError:
                ws_ok = False
            self.check("boundary.workspace_writable", ws_ok)
            net = probe.get("network", {})
            self.check("boundary.network", hits == 0 and net.get("interfaces") == ["lo"]
                       and not any(a.get("connected") for a in net.get("tcp", []) + net.get("abstract", [])))
            text = json.dumps(probe)
            leaked = [n for n, v in self.shared["secrets"].items() if v in text]
            spawned = probe.get("credentials", {}).get("subprocess", {}).get("spawned")
            self.check("boundary.credentials", not leaked and bool(spawned))
            self.check("boundary.cross_team", self.shared["sibling_secret"] not in text
                       and not any(e.get("exists") or e.get("readable") for e in probe.get("cross_team", [])))
        self.phase("probe", t0)

        t0 = now()
        surface = self.cell("attack_surface", self.opts.seccomp.surface_params())
        self.check("sandbox.attack_surface", surface is not None and surface.get("child") is not None)
        self.phase("attack_surface", t0)

        t0 = now()
        ok = self.cell("set_var", {"value": nonce})
        self.phase("set_var", t0)
        if not ok:
            self.check("persistence.namespace", False, "set_var failed")
            return
        for path in self.opts.interrupt_order.split(","):
            self.interrupt(path, nonce)
        t0 = now()
        got = self.cell("get_var", {})
        for earlier in list(self.pending):
            self.settle(earlier)
        self.phase("get_var", t0)
        self.check("persistence.namespace", bool(got) and got.get("value") == nonce and got.get("pid") == 2
                   and nspid(self.kernel_pid)[-1:] == [2])

    def progress(self, name):
        """The long cell's count in the workspace, or -1 (none yet, or not a count)."""
        try:
            with open(os.path.join(self.workspace, name)) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return -1

    def settle(self, path):
        """Decides a stop reply once PROGRESS_WINDOW has passed: the count must not have moved."""
        pending = self.pending.pop(path, None)
        if not pending:
            return
        name, at_reply, reply_t = pending
        wait = reply_t + PROGRESS_WINDOW - now()
        if wait > 0:
            time.sleep(wait)
        self.check("interrupt." + path, self.progress(name) == at_reply)

    def interrupt(self, path, nonce):
        t0 = now()
        marker = "kbound-marker-%s-%s" % (path, nonce[:8])
        name = ".kbound-progress-%s-%s" % (path, nonce[:8])
        code = render(self.opts.kernels_dir, self.lang, "long",
                      {"marker": marker, "seconds": LONG_CELL_SECONDS, "progress": WORKSPACE + "/" + name})
        st, seen = self.execute(code, now() + MARKER_TIMEOUT, marker=marker)
        self.result["phases_ms"]["marker_" + path] = ms(now() - t0)
        for earlier in list(self.pending):
            self.settle(earlier)  # its window ran during this cell's start
        if not seen:
            self.check("interrupt." + path, False, "no marker")
            return
        start_by = now() + PROGRESS_START
        while self.progress(name) < 1 and now() < start_by and st["reply"] is None:
            self.next_iopub(st, min(start_by, now() + 0.01))
        if self.wait_done(st, now() + random.uniform(0, HOLD_MAX)):
            self.check("interrupt." + path, False, "ended on its own")
            return
        sent = now()

        def watch(deadline, limit):
            """Until the cell ends, its count moves limit steps, or deadline: True if it ended."""
            base = self.progress(name)
            while now() < deadline and (base < 0 or self.progress(name) - base < limit):
                if st["reply"] is not None and (st["idle"] or now() > st["reply_t"] + IDLE_GRACE):
                    return True
                self.next_iopub(st, min(deadline, now() + 0.025))
            return st["reply"] is not None

        if path == "control":
            msg = self.kc.session.msg("interrupt_request", {})
            self.kc.control_channel.send(msg)
            done = watch(now() + CONTROL_REPLY_TIMEOUT, STEPS_KEPT_RUNNING)
            replied = False
            while True:
                try:
                    r = self.kc.get_control_msg(timeout=0)
                except Exception:
                    break
                replied = replied or r["parent_header"].get("msg_id") == msg["header"]["msg_id"]
            if not done and now() < sent + CONTROL_REPLY_TIMEOUT:
                pass  # the count said it kept running: no further wait
            elif not done:
                done = watch(now() + (INTERRUPT_TIMEOUT - CONTROL_REPLY_TIMEOUT if replied else CONTROL_GRACE),
                             STEPS_KEPT_RUNNING)
        else:
            signal.pidfd_send_signal(self.pidfd, signal.SIGINT)
            done = watch(now() + INTERRUPT_TIMEOUT, STEPS_KEPT_RUNNING_SIGNAL)
        stopped = done and st["reply"].get("status") != "ok"
        if stopped:
            self.result["latency_%s_ms" % path] = ms(st["reply_t"] - sent)
            # decided later, as kbound does: the window overlaps the next step's work
            self.pending[path] = (name, self.progress(name), st["reply_t"])
        else:
            # Unblock through the other path, as kbound does, so the kernel can still be checked.
            if path == "control":
                signal.pidfd_send_signal(self.pidfd, signal.SIGINT)
            else:
                self.kc.control_channel.send(self.kc.session.msg("interrupt_request", {}))
            watch(now() + INTERRUPT_TIMEOUT, STEPS_KEPT_RUNNING_SIGNAL if path == "control" else STEPS_KEPT_RUNNING)
            self.check("interrupt." + path, "unsupported" if path == "control" else False)
        self.phase("interrupt_" + path, t0)

    def stop(self):
        if self.kc:
            try:
                alive = True
                msg = self.kc.session.msg("shutdown_request", {"restart": False})
                self.kc.control_channel.send(msg)
                try:
                    self.kc.get_control_msg(timeout=STOP_GRACE)
                except Exception:
                    pass
                # lifecycle.shutdown: the reply, then the kernel process gone (its pidfd), as kbound
                deadline = now() + SHUTDOWN_EXIT
                while now() < deadline and alive:
                    alive = self.proc.poll() is None and not _pidfd_exited(self.pidfd)
                    if alive:
                        time.sleep(0.01)
            finally:
                self.kc.stop_channels()
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass
        if self.proc:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.pidfd is not None:
            os.close(self.pidfd)


def reap_orphans():
    """Waits for the sandbox inits bwrap left to us (they exit once their kernel is gone)."""
    deadline = now() + 5
    while now() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.005)


def _pidfd_exited(fd):
    import select
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(0))


class Seccomp:
    """kbound's seccomp filter and its table, through libkbound (the helper the tests use)."""

    def __init__(self, lib_path):
        spec = importlib.util.spec_from_file_location(
            "seccomp_probe", os.path.join(TOP, "tests", "integration", "seccomp_probe.py"))
        self.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.mod)
        self.lib = self.mod.library(lib_path)
        self.policy = self.mod.Policy(self.mod.SOCKETS["default"], None)

    def build(self):
        fd = ctypes.c_int(-1)
        r = self.lib.kb_seccomp_build(ctypes.byref(self.policy), ctypes.byref(fd))
        if r < 0:
            raise OSError(-r, "kb_seccomp_build: " + os.strerror(-r))
        return fd.value

    def surface_params(self):
        """The attack_surface cell's parameters, as src/run/scenario.c's surface_cell makes them."""
        calls, families = [], []
        for i in range(self.lib.kb_seccomp_entry_count()):
            e = self.lib.kb_seccomp_entry_at(i)
            if not self.lib.kb_seccomp_blocks(ctypes.byref(self.policy), e):
                continue
            name = e.contents.name.decode()
            if e.contents.match == self.mod.MATCH_FAMILY:
                families.append({"name": name, "family": e.contents.value})
                continue
            nr = self.lib.kb_seccomp_entry_syscall_nr(e)
            calls.append({"name": name, "nr": nr if nr >= 0 else -1, "value": e.contents.value,
                          "errno": errno_name(e.contents.errnum)})
        return {"program": TOOLS_BOUNDARY, "calls": calls, "families": families}


def errno_name(num):
    import errno
    return errno.errorcode.get(num, "E%d" % num)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", action="append")
    ap.add_argument("--kernels-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels"))
    ap.add_argument("--bwrap", default=shutil.which("bwrap") or "/usr/bin/bwrap")
    ap.add_argument("--keep", action="store_true", help="accepted for old command lines: each kernel's own exit "
                    "after shutdown_reply is always waited for now, as kbound's lifecycle.shutdown does")
    ap.add_argument("--interrupt-order", default="control,pidfd", choices=["control,pidfd", "pidfd,control"],
                    help="which interrupt path goes first (kbound: control first); for investigations")
    ap.add_argument("--libkbound", default=os.path.join(TOP, "build", "libkbound.so"),
                    help="kbound's library: its seccomp filter and table (default build/libkbound.so)")
    ap.add_argument("--syscall-probe", default=os.path.join(TOP, "build", "kbound-syscall-probe"),
                    help="kbound's syscall probe program (default build/kbound-syscall-probe)")
    ap.add_argument("--boundary-probe", default=os.path.join(TOP, "build", "kbound-probe"),
                    help="kbound's boundary probe program, which the probe cells run (default build/kbound-probe)")
    opts = ap.parse_args()
    opts.kernels_dir = os.path.abspath(opts.kernels_dir)
    for path, what in ((opts.libkbound, "--libkbound"), (opts.syscall_probe, "--syscall-probe"),
                       (opts.boundary_probe, "--boundary-probe")):
        if not os.path.exists(path):
            sys.exit("reference_check: %s %s does not exist: build kbound first (cmake --build build)" % (what, path))
    opts.seccomp = Seccomp(opts.libkbound)
    kernels = opts.kernel or ["python3", "ir"]
    # Like kbound: a child subreaper, so a sandbox's init (which bwrap leaves to its parent's
    # reaper) comes back to us and is reaped, and its CPU time is counted as ours.
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    t0 = now()
    base = tempfile.mkdtemp(prefix="kbound-ref-", dir=os.environ.get("KBOUND_RUNTIME_DIR") or None)
    try:
        secrets_dir = os.path.join(base, "host-secrets")
        teams = os.path.join(base, "teams")
        sib = os.path.join(teams, "ref-sibling")
        os.makedirs(os.path.join(sib, "workspace"))
        os.makedirs(secrets_dir)
        cred, sib_secret = secrets.token_hex(32), secrets.token_hex(32)
        with open(os.path.join(secrets_dir, "credentials"), "w") as f:
            f.write(cred)
        with open(os.path.join(sib, "workspace", "canary.txt"), "w") as f:
            f.write(sib_secret)
        env_secrets = {"env:" + k: v for k, v in os.environ.items() if len(v) >= 8 and not v.isdigit()
                       and not os.path.exists(v) and not (k in ("LANG", "LANGUAGE", "TZ") or k.startswith("LC_"))}
        env_secrets["canary:credential-file"] = cred
        shared = {"escape_dirs": [d for d in (base, teams, secrets_dir, os.environ.get("HOME"), "/tmp", "/var/tmp",
                                              "/dev/shm", os.getcwd()) if d and d.startswith("/")],
                  "cred_paths": [os.path.join(secrets_dir, "credentials")],
                  "sibling_paths": [sib, os.path.join(sib, "workspace", "canary.txt")],
                  "secrets": env_secrets, "sibling_secret": sib_secret}
        runs = []
        for i, k in enumerate(kernels):
            team = "ref-%s-%d" % (k, i + 1) if kernels.count(k) > 1 else "ref-" + k
            runs.append(Run(opts, k, team, base, shared))
        threads = [threading.Thread(target=r.run) for r in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        shutil.rmtree(base, ignore_errors=True)
        reap_orphans()
    ok = all(not r.result.get("error") and all(c["status"] in (True, "unsupported")
                                                 for c in r.result["checks"].values())
             and len(r.result["checks"]) == 12 for r in runs)  # the checks the reference makes
    out = {"duration_ms": ms(now() - t0), "pass": ok,
           "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           "kernels": [r.result for r in runs]}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
