#!/usr/bin/python3
# seccomp_probe.py: test helper for test_syscall_probe.sh. Reaches kbound's seccomp module through
# libkbound.so (ctypes), so the shell test uses the library's own filter and table:
#   run LIBKBOUND SOCKETS -- COMMAND...   builds the filter (sockets: default, unix, inet) and
#                                         execs COMMAND with the program's fd inherited; "{fd}" in
#                                         COMMAND becomes its number (bwrap --seccomp {fd})
#   check LIBKBOUND SOCKETS filtered|unfiltered FILE
#                                         checks kbound-syscall-probe's JSON in FILE against the
#                                         table; prints each finding, exits 1 if there is one
import ctypes
import errno
import json
import os
import sys


class Entry(ctypes.Structure):  # kb_seccomp_entry (include/kbound/seccomp.h)
    _fields_ = [("name", ctypes.c_char_p), ("syscall", ctypes.c_char_p), ("match", ctypes.c_int),
                ("arg", ctypes.c_int), ("value", ctypes.c_uint64), ("errnum", ctypes.c_int),
                ("why", ctypes.c_char_p), ("anchors", ctypes.c_char_p)]


class Policy(ctypes.Structure):  # kb_seccomp_policy
    _fields_ = [("sockets", ctypes.c_int), ("allow", ctypes.POINTER(ctypes.c_char_p))]


MATCH_FAMILY = 4  # KB_SECCOMP_MATCH_FAMILY
SOCKETS = {"default": 0, "unix": 1, "inet": 2}
# Calls the kernel answers differently from the filter whatever the caller's privilege (the tries
# the unit test marks as not gated): without the filter none of them may report the table's errno.
UNGATED = ["keyctl", "add_key", "request_key", "unshare", "setns", "clone:CLONE_NEWUSER", "clone:CLONE_NEWNS",
           "clone3", "mount", "umount2", "chroot", "open_tree", "fsopen", "ioctl:TIOCSTI", "ptrace",
           "process_vm_readv", "kcmp", "pidfd_getfd", "personality", "perf_event_open", "name_to_handle_at",
           "settimeofday", "clock_settime"]


def library(path):
    lib = ctypes.CDLL(path)
    lib.kb_seccomp_entry_count.restype = ctypes.c_size_t
    lib.kb_seccomp_entry_at.restype = ctypes.POINTER(Entry)
    lib.kb_seccomp_entry_at.argtypes = [ctypes.c_size_t]
    lib.kb_seccomp_entry_syscall_nr.argtypes = [ctypes.POINTER(Entry)]
    lib.kb_seccomp_blocks.restype = ctypes.c_bool
    lib.kb_seccomp_blocks.argtypes = [ctypes.POINTER(Policy), ctypes.POINTER(Entry)]
    lib.kb_seccomp_build.argtypes = [ctypes.POINTER(Policy), ctypes.POINTER(ctypes.c_int)]
    return lib


def table(lib, sockets):
    policy = Policy(SOCKETS[sockets], None)
    out = []
    for i in range(lib.kb_seccomp_entry_count()):
        e = lib.kb_seccomp_entry_at(i)
        out.append({"name": e.contents.name.decode(), "family": e.contents.match == MATCH_FAMILY,
                    "errno": errno.errorcode[e.contents.errnum], "nr": lib.kb_seccomp_entry_syscall_nr(e),
                    "blocked": bool(lib.kb_seccomp_blocks(ctypes.byref(policy), e))})
    return out


def run(lib, sockets, argv):
    fd = ctypes.c_int(-1)
    r = lib.kb_seccomp_build(ctypes.byref(Policy(SOCKETS[sockets], None)), ctypes.byref(fd))
    if r < 0:
        sys.exit("kb_seccomp_build: %s" % os.strerror(-r))
    os.set_inheritable(fd.value, True)
    argv = [a.replace("{fd}", str(fd.value)) for a in argv]
    for name in ("LD_PRELOAD", "ASAN_OPTIONS"):  # the sanitizer build's, for libkbound.so only
        os.environ.pop(name, None)
    os.execvp(argv[0], argv)


def outcomes(result):
    """The outcomes of one result: socket's, and socketpair's for a family."""
    yield "", result
    if "socketpair" in result:
        yield " socketpair", result["socketpair"]


def check(lib, sockets, mode, path):
    with open(path) as f:
        doc = json.load(f)
    found = []
    entries = table(lib, sockets)
    if doc.get("version") != 1:
        found.append("version is %r" % doc.get("version"))
    results = doc.get("results") or []
    if [r.get("name") for r in results] != [e["name"] for e in entries]:
        found.append("the results are not the table's entries in order")
        results = []
    if mode == "filtered":
        if doc.get("seccomp") != 2 or not doc.get("filters"):
            found.append("seccomp %r, filters %r" % (doc.get("seccomp"), doc.get("filters")))
        for e, r in zip(entries, results):
            if not e["family"] and e["nr"] < 0:
                if r["tested"]:
                    found.append("%s: tried, but this ABI has no such call" % e["name"])
                continue
            for call, o in outcomes(r):
                if not o["tested"]:
                    found.append("%s%s: untested: %s" % (e["name"], call, o["why"]))
                elif e["blocked"] and o["errno"] != e["errno"]:
                    found.append("%s%s: %s, the filter gives %s" % (e["name"], call, o["errno"], e["errno"]))
                elif not e["blocked"] and o["errno"] == e["errno"]:
                    found.append("%s%s: allowed by the policy, yet %s" % (e["name"], call, o["errno"]))
    else:
        if doc.get("seccomp") != 0 or doc.get("filters") != 0:
            found.append("seccomp %r, filters %r without a filter" % (doc.get("seccomp"), doc.get("filters")))
        by_name = {r["name"]: r for r in results}
        for e, r in zip(entries, results):
            if e["family"]:
                for call, o in outcomes(r):
                    if o["tested"] or "Seccomp: 0" not in (o["why"] or ""):
                        found.append("%s%s: tried without a filter, or untested for another reason: %r"
                                     % (e["name"], call, o))
            elif e["nr"] >= 0 and not r["tested"]:
                found.append("%s: untested: %s" % (e["name"], r["why"]))
        for name in UNGATED:
            r = by_name.get(name)
            e = next(x for x in entries if x["name"] == name)
            if r is None or not r["tested"] or r["errno"] == e["errno"]:
                found.append("%s without a filter: %r, the filter's own answer" % (name, r))
    for f in found:
        print("  finding: %s" % f)
    return 0 if not found else 1


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "run" and sys.argv[4] == "--":
        run(library(sys.argv[2]), sys.argv[3], sys.argv[5:])
    if len(sys.argv) == 6 and sys.argv[1] == "check":
        sys.exit(check(library(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]))
    sys.exit(__doc__ or "usage: see the comment at the top of seccomp_probe.py")


if __name__ == "__main__":
    main()
