# kbound python pack: every cell is this function (the pack's prelude, rendered with the cell's
# parameters and sent gzipped), exec'd and called once, and it deletes itself: only kbound_nonce
# stays in the user namespace. Exec'd code has no source lines, so an interrupted cell's traceback
# is quick to format (IPython reads every frame's source). A result goes as the probe MIME bundle
# where IPython displays (ipykernel), else as the marked stdout line (raw interpreters, xeus-python
# without IPython). KeyboardInterrupt is not caught: the kernel must make it an error reply.
def _kbound(cell):
    import base64, json, os, socket, subprocess, time
    p = json.loads(base64.b64decode("{{KBOUND_PARAMS_B64}}").decode("utf-8"))

    def publish(result):
        try:
            from IPython.display import display
            return display({"application/vnd.kbound.probe+json": result}, raw=True)
        except Exception:  # no IPython, or one that cannot display
            print(p.get("result_marker"), base64.b64encode(json.dumps(result).encode()).decode(), flush=True)

    def identity():  # a kernel without /proc fails the cell, which fails identity.pid2
        nspid = [l.split()[1:] for l in open("/proc/self/status") if l.startswith("NSpid:")] or [[]]
        publish({"pid": os.getpid(), "ppid": os.getppid(), "nspid": [int(x) for x in nspid[0]],
                 "uid": os.getuid(), "hostname": socket.gethostname()})

    def set_var():
        globals()["kbound_nonce"] = str(p["value"])
        publish({"ok": True})

    def get_var():  # rebound to a non-string: its repr, rather than a claim that it is missing
        v = globals().get("kbound_nonce")
        publish({"value": v if v is None or isinstance(v, str) else repr(v), "pid": os.getpid()})

    def long():  # silent between its marker and its end; the host reads the progress file itself
        print(p["marker"], flush=True)
        end, n, progress = time.monotonic() + float(p["seconds"]), 0, str(p.get("progress") or "")
        while time.monotonic() < end:
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))
            n += 1
            if progress:  # renamed into place: the host never reads half a number
                with open(progress + ".new", "w") as f:
                    f.write(str(n))
                os.replace(progress + ".new", progress)
        print("kbound: long cell ran to completion", flush=True)
        publish({"completed": True})

    def run(mode):  # kbound-probe, each line relayed at once; a program that fails fails the cell
        argv = [p["program"], "--kernel-pid", str(os.getpid()), mode, "{{KBOUND_PARAMS_B64}}"]
        with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE) as child:
            for line in child.stdout:
                print(line.decode("utf-8", "replace"), end="", flush=True)
        if child.returncode != 0:
            raise RuntimeError("kbound-probe exited with status %d" % child.returncode)

    cells = {"identity": identity, "set_var": set_var, "get_var": get_var, "long": long,
             "probe": lambda: run("boundary"), "attack_surface": lambda: run("attack-surface")}
    try:
        cells[cell]()
    finally:
        globals().pop("_kbound", None)
