#!/usr/bin/python3
"""console_pty.py: drive `kbound console` through a real pseudo-terminal, as a person would.

Usage: console_pty.py KBOUND KERNEL LANG [extra kbound args...]
Prints one line per assertion, "RESULT 0|1 name", for test_console.sh to count; the whole pty
transcript goes to stderr at the end. Ctrl-C and Ctrl-D are the real bytes \\x03 and \\x04 typed
into the terminal, so the terminal driver turns them into SIGINT and end of input.
"""
import os
import pty
import re
import select
import signal
import sys
import time

kbound, kernel, lang = sys.argv[1:4]
extra = sys.argv[4:]

# Per language: a cell giving 2, setting a variable, reading it, a long cell, the interrupt sign.
CELLS = {
    "python": {
        "two": "1+1", "set": "kept = 'kbound-kept-41'", "get": "print(kept)",
        "long": "import time; print('long-start', flush=True); time.sleep(60); print('long-end')",
        "interrupted": r"KeyboardInterrupt",
        "pid": "import os; print('pid', os.getpid())",
        # Line editing: typed without its first letter, which Ctrl-A (start of line) then adds.
        "edit_tail": "rint(6*7)", "edit_head": "p", "edit_shows": r"(^|: )42\r?$",
        "input": "answer = input('name? ')", "input_prompt": r"\nname\? ", "show_input": "print(answer * 2)",
        "secret": "import getpass; pw = getpass.getpass('secret? ')", "secret_prompt": r"\nsecret\? ",
        "show_secret": "print('length', len(pw))",
    },
    "r": {
        "two": "1+1", "set": "kept <- 'kbound-kept-41'", "get": "cat(kept, '\\n')",
        "long": "cat('long-start\\n'); Sys.sleep(60); cat('long-end\\n')",
        # IRkernel answers SIGINT with an "abort" reply and prints nothing of its own.
        "interrupted": r"execute_reply status 'abort'",
        "pid": "cat('pid', Sys.getpid(), '\\n')",
        "edit_tail": "at(6*7, '\\n')", "edit_head": "c", "edit_shows": r"(^|: )42 ?\r?$",
        "input": "answer <- readline('name? ')", "input_prompt": r"\nname\? ",
        "show_input": "cat(answer, answer, '\\n', sep='')",
        "secret": None,
    },
}[lang]

transcript = bytearray()
failures = 0


def result(ok, name):
    global failures
    failures += 0 if ok else 1
    print(f"RESULT {0 if ok else 1} {name}", flush=True)


pid, fd = pty.fork()
if pid == 0:
    os.execv(kbound, [kbound, "console", "--kernel", kernel] + extra)

mark = 0  # expectations only look at output after the last mark


def read_some(timeout):
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return False
    try:
        data = os.read(fd, 65536)
    except OSError:
        return None  # the child closed the terminal
    if not data:
        return None
    transcript.extend(data)
    return True


# The terminal's control sequences (libedit's cursor moves, the bracketed-paste mode asked for
# around each prompt) are not text: expectations look at what is left.
CONTROL = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")


def shown():
    return CONTROL.sub(b"", bytes(transcript))


def expect(pattern, timeout, name):
    """Waits until pattern (regex) appears after the mark; moves the mark past it."""
    global mark
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern.encode(), re.M)
    closed = False
    while True:
        m = rx.search(shown(), mark)
        if m:
            mark = m.end()
            result(True, name)
            return True
        left = deadline - time.monotonic()
        if left <= 0 or closed:
            result(False, f"{name} (no /{pattern}/ within {timeout} s{', terminal closed' if closed else ''})")
            return False
        if read_some(min(left, 0.5)) is None:
            closed = True


def send(text):
    os.write(fd, text.encode())


started = time.monotonic()
expect(r"team:\s+console", 60, "banner names the team")
expect(r"PID 2 in the sandbox's pid namespace, pinned by a pidfd \(identity verified\)", 5,
       "banner: PID 2 and the pidfd")
expect(r"network:\s+isolated", 5, "banner: network isolated")
expect(r"In \[1\]: ", 10, "first prompt")

send(CELLS["two"] + "\n")
expect(r"(Out\[1\]: |\[1\] )2\r?\n", 20, "1+1 gives 2")
send(CELLS["set"] + "\n")
send(CELLS["get"] + "\n")
expect(r"kbound-kept-41 ?\r?$", 20, "a variable persists across cells")
send(CELLS["pid"] + "\n")
expect(r"(^|: )pid 2 ?\r?$", 20, "the kernel is PID 2")

# Ctrl-C at an empty prompt clears the line and the console goes on.
send("half a line")
time.sleep(0.3)
send("\x03")
# The terminal echoes "^C" itself; the console's own "^C" and a fresh prompt say it handled it.
# Typing on before that would race the signal (it may reach kbound after the next line).
expect(r"\^C\r?\nIn \[\d+\]: ", 10, "Ctrl-C at the prompt gives a fresh prompt")
send("1+2\n")
expect(r"(Out\[\d+\]: |\[1\] )3\r?$", 20, "Ctrl-C at the prompt cleared the half-typed line")

send(CELLS["long"] + "\n")
expect(r"(^|: )long-start", 30, "the long cell started")
time.sleep(1.0)
t0 = time.monotonic()
send("\x03")
expect(r"SIGINT sent to the kernel \(PID 2\) through its pidfd", 10, "Ctrl-C goes through the pidfd")
expect(CELLS["interrupted"], 20, "the long cell was interrupted")
expect(r"In \[\d+\]: ", 20, "a prompt comes back")
result(time.monotonic() - t0 < 30, f"interrupted within 30 s ({time.monotonic() - t0:.1f} s)")
result(not re.search(rb"(^|: )long-end", shown(), re.M), "the long cell did not run to its end")

send(CELLS["get"] + "\n")
expect(r"kbound-kept-41 ?\r?$", 20, "the same variable answers after the interrupt")

# Line editing (libedit): Ctrl-A moves to the start of the line; without an editor the byte \x01
# would be part of the code and the cell would fail.
send(CELLS["edit_tail"])
time.sleep(0.3)
send("\x01" + CELLS["edit_head"] + "\r")
expect(CELLS["edit_shows"], 20, "Ctrl-A edits the line (libedit)")
# History: the up arrow brings the last line back.
expect(r"In \[\d+\]: ", 10, "a prompt after the edited cell")
send("\x1b[A")
time.sleep(0.3)
send("\r")
expect(CELLS["edit_shows"], 20, "the up arrow recalls the last line from the history")
# input() in the cell: the kernel's input_request, answered through the stdin channel.
send(CELLS["input"] + "\r")
expect(CELLS["input_prompt"], 20, "input() shows the kernel's prompt")
send("kbound-typed\r")
send(CELLS["show_input"] + "\r")
expect(r"kbound-typedkbound-typed", 20, "input() got what was typed")
if CELLS["secret"]:
    send(CELLS["secret"] + "\r")
    expect(CELLS["secret_prompt"], 20, "a password prompt is shown")
    before = len(transcript)
    send("hunter2-secret\r")
    send(CELLS["show_secret"] + "\r")
    expect(r"length 14", 20, "the password reached the cell")
    result(b"hunter2-secret" not in transcript[before:], "the password was not echoed")

# Ctrl-D once the prompt is up (libedit edits the line): typed ahead while a cell still ran, the
# terminal driver would take it as its own end of file before the editor saw it.
expect(r"In \[\d+\]: ", 20, "a prompt before Ctrl-D")
time.sleep(0.3)
send("\x04")
status = None
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    while read_some(0.2):
        pass
    wpid, st = os.waitpid(pid, os.WNOHANG)
    if wpid:
        status = st
        break
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
result(status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
       f"Ctrl-D exits 0 (status {status})")
sys.stderr.write(transcript.decode(errors="replace"))
sys.exit(1 if failures else 0)
