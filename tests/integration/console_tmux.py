#!/usr/bin/python3
"""console_tmux.py: type into `kbound console` in tmux as an auditor would, and read the screen.

Usage: console_tmux.py KBOUND KERNEL LANG SCRATCH
Prints one line per assertion, "RESULT 0|1 name", for test_console.sh to count; the last screen
goes to stderr at the end. A tmux server of its own (a socket in SCRATCH), never the user's; the
console runs in SCRATCH/host-cwd, where a file only the host has lies, and its history goes to
SCRATCH/state-tmux-KERNEL.
"""
import os
import re
import subprocess
import sys
import time

kbound, kernel, lang, scratch = sys.argv[1:5]

# Per language: what is typed (each string a line, Enter after it) and what the screen then shows.
CELLS = {
    "python": {
        # IPython's is_complete_reply indents the line after `def ...:`; it is typed without one.
        "block": ["def twice(n):", "return n * 2", ""],
        "call": "twice(21)", "call_shows": r"Out\[\d+\]: 42",
        "define": "kbound_tab_target = 6 * 7",
        "kernel_file": 'open("kbound_only_kernel_side", "w").close()',
        "file_partial": 'open("kbound_only_',
        "help": "len?", "help_shows": r"Return the number of items in a container",
        "source": "twice??", "source_shows": r"Source:",
        "long": 'def longdoc(): pass\n\nlongdoc.__doc__ = "\\n".join("doc line %d" % i for i in range(300))',
        "long_help": "longdoc?", "long_first": r"doc line 3\b", "long_next": r"doc line 100\b",
        "long_end": "doc line 299",
        "loop": ["for i in range(3):", "print('row', i * 11)", ""], "loop_shows": r"row 22",
        "recall_again": True,  # a block recalled without its blank line: Enter opens a ...: line
        "search_cell": "print('kbound-rsearch', 6 * 7)", "search_shows": r"kbound-rsearch 42",
        "key": "kbound_key = get_ipython().kernel.session.key.decode()", "key_help": "kbound_key?",
    },
    "r": {
        "block": ["twice <- function(n) {", "n * 2", "}"],
        "call": "twice(21)", "call_shows": r"\[1\] 42",
        "define": "kbound_tab_target <- 6 * 7",
        "kernel_file": 'invisible(file.create("kbound_only_kernel_side"))',
        "file_partial": 'readLines("kbound_only_',
        # R's help comes with a printer's overstrike (_\bA): shown as the plain letters.
        "help": "mean?", "help_shows": r"Arithmetic Mean", "help_not": "_A_r_i",
        "source": None,
        "long": None,
        "long_help": "lm?", "long_first": r"Fitting Linear Models", "long_next": r"^Details:",
        "long_end": "lm.D9",
        "loop": ["for (i in 0:2) {", "print(i * 11)", "}"], "loop_shows": r"\[1\] 22",
        "recall_again": False,
        "search_cell": 'cat("kbound-rsearch", 6 * 7, "\\n")', "search_shows": r"kbound-rsearch 42",
        # IRkernel::main()'s kernel object, up the call stack of the running cell.
        "key": "kbound_key <- Filter(Negate(is.null), lapply(sys.frames(), function(f) if (exists("
               "'kernel', envir = f, inherits = FALSE)) get('kernel', envir = f)$connection_info$key))[[1]]",
        "key_help": "kbound_key?",
    },
}[lang]

failures = 0
socket = os.path.join(scratch, "tmux-%s.sock" % kernel)
cwd = os.path.join(scratch, "host-cwd")
state = os.path.join(scratch, "state-tmux-%s" % kernel)
os.makedirs(cwd, exist_ok=True)
# A file only the host has, where kbound runs: Tab must never offer it.
open(os.path.join(cwd, "kbound_only_host_side_7f3"), "w").close()


def result(ok, name):
    global failures
    failures += 0 if ok else 1
    print(f"RESULT {0 if ok else 1} {name}", flush=True)


def tmux(*args):
    return subprocess.run(["tmux", "-S", socket] + list(args), capture_output=True, text=True)


def screen():
    """Everything the window showed (its scrollback too), wrapped lines joined."""
    return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "console").stdout


def count(pattern):
    return len(re.findall(pattern, screen(), re.M))


def wait_count(pattern, n, timeout, name):
    """Waits until pattern is on the screen n times."""
    deadline = time.monotonic() + timeout
    while True:
        seen = count(pattern)
        if seen >= n:
            result(True, name)
            return True
        if time.monotonic() > deadline:
            result(False, f"{name} (/{pattern}/ seen {seen} times, not {n}, within {timeout} s)")
            return False
        time.sleep(0.3)


def keys(*names):
    tmux("send-keys", "-t", "console", *names)


def typed(text):
    keys("-l", text)


def line(text):
    typed(text)
    keys("Enter")


PROMPT = r"^In \[\d+\]: "


def prompt_after(action, name, timeout=30):
    """Does action, then waits for one more `In [n]:` prompt than before it."""
    before = count(PROMPT)
    action()
    return wait_count(PROMPT, before + 1, timeout, name)


command = (f"cd {cwd} && env XDG_STATE_HOME={state} {kbound} console --kernel {kernel}; "
           f"echo \"console exit status $?\"; sleep 600")
tmux("new-session", "-d", "-s", "console", "-x", "100", "-y", "60", command)
tmux("set-option", "-t", "console", "history-limit", "20000")
# tmux's server and the pane's programs leave the test's process tree: they are waited for by
# their pids at the end.
server = tmux("display-message", "-p", "-t", "console", "#{pid}").stdout.strip()
pane = tmux("display-message", "-p", "-t", "console", "#{pane_pid}").stdout.strip()


def started(pid):
    """The start time of process pid (its /proc stat field 22), None when there is none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            children.setdefault(ppid, []).append(entry)
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


try:
    wait_count(r"In \[1\]: ", 1, 90, "the first prompt")

    # A block typed as in IPython: the kernel's indent is put in the line.
    more = r"^\s*\.\.\.: "
    for text in CELLS["block"][:-1]:
        before = count(more)
        line(text)
        wait_count(more, before + 1, 20, f"{text!r} gives a ...: line")
    prompt_after(lambda: line(CELLS["block"][-1]), "the block ends")
    line(CELLS["call"])
    wait_count(CELLS["call_shows"], 1, 20, "the block typed line by line runs when called")
    result("IndentationError" not in screen(), "no IndentationError")

    # Tab completes by the kernel: a variable of its own, a file of the sandbox's, never the host's.
    prompt_after(lambda: line(CELLS["define"]), "a variable defined")
    typed("kbound_tab_tar")
    keys("Tab")
    wait_count(r"kbound_tab_target\s*$", 1, 20, "Tab puts the kernel's variable in the line")
    before = count(CELLS["call_shows"])
    keys("Enter")
    wait_count(CELLS["call_shows"], before + 1, 20, "  ... and the completed line runs")
    prompt_after(lambda: line(CELLS["kernel_file"]), "a file made in the sandbox")
    typed(CELLS["file_partial"])
    keys("Tab")
    wait_count(r"kbound_only_kernel_side\"?\)?\s*$", 1, 20, "Tab completes a file of the sandbox's")
    result("kbound_only_host_side" not in screen(), "Tab never offers a file of the host's")
    prompt_after(lambda: keys("C-c"), "Ctrl-C clears the line")

    # name? and name?? ask the kernel (inspect_request).
    prompt_after(lambda: line(CELLS["help"]), "help on a name")
    wait_count(CELLS["help_shows"], 1, 5, f"{CELLS['help']} shows what the kernel knows")
    if CELLS.get("help_not"):
        result(CELLS["help_not"] not in screen(), "  ... without the printer's overstrike")
    if CELLS["source"]:
        prompt_after(lambda: line(CELLS["source"]), "help with detail")
        wait_count(CELLS["source_shows"], 1, 5, f"{CELLS['source']} shows the source (detail_level 1)")

    # Long help is paged: a screen, Space for the next, q to end; its end never shown.
    if CELLS["long"]:
        for text in CELLS["long"].split("\n"):
            line(text)
        time.sleep(1)
    line(CELLS["long_help"])
    wait_count(r"--More--", 1, 20, "long help stops at --More--")
    wait_count(CELLS["long_first"], 1, 5, "  ... after its first screen")
    result(CELLS["long_end"] not in screen(), "  ... its end not shown yet")
    result(not re.search(CELLS["long_next"], screen(), re.M), "  ... nor its second screen")
    keys("Space")
    wait_count(CELLS["long_next"], 1, 10, "  ... Space shows the next screen")
    wait_count(r"--More--", 1, 10, "  ... and stops again")
    prompt_after(lambda: keys("q"), "  ... q ends it")
    result(CELLS["long_end"] not in screen(), "  ... and the rest was never shown")

    # History: a multi-line cell is one entry, recalled whole by Up.
    for text in CELLS["loop"]:
        line(text)
    wait_count(CELLS["loop_shows"], 1, 20, "a multi-line loop runs")
    time.sleep(0.5)
    keys("Up")
    wait_count(re.escape(CELLS["loop"][1]), 2, 10, "Up recalls the whole cell, its second line too")
    before = count(more)
    keys("Enter")
    if CELLS["recall_again"]:
        wait_count(more, before + 1, 20, "  ... Enter gives the block's closing ...: line")
        keys("Enter")
    wait_count(CELLS["loop_shows"], 2, 20, "  ... and the recalled cell runs again")

    # Ctrl-R finds a cell; Enter runs it at once, with no other key.
    prompt_after(lambda: line(CELLS["search_cell"]), "a cell to search for")
    wait_count(CELLS["search_shows"], 1, 20, "  ... it ran")
    prompt_after(lambda: line(CELLS["call"]), "another cell after it")
    keys("C-r")
    typed("rsearch")
    time.sleep(0.5)
    keys("Enter")
    wait_count(CELLS["search_shows"], 2, 20, "Ctrl-R then Enter runs the cell found at once")

    # The connection key the kernel holds is shown only redacted.
    prompt_after(lambda: line(CELLS["key"]), "the kernel's key in a variable")
    prompt_after(lambda: line(CELLS["key_help"]), "help on it")
    wait_count(r"\[redacted:connection-key\]", 1, 5, "the key is shown redacted")
    result(not re.search(r"[0-9a-f]{64}", screen()), "  ... and never as itself")

    keys("C-d")
    wait_count(r"console exit status 0", 1, 30, "Ctrl-D exits 0")
finally:
    sys.stderr.write(screen())
    # kill-server hangs up the console (SIGHUP: it stops its kernel and exits) and ends the server.
    pids = ([pane] + descendants(pane) if pane.isdigit() else []) + ([server] if server.isdigit() else [])
    ours = {p: started(p) for p in pids}
    tmux("kill-server")
    deadline = time.monotonic() + 20
    while any(t and started(p) == t for p, t in ours.items()) and time.monotonic() < deadline:
        time.sleep(0.2)
    for p, t in ours.items():
        if t and started(p) == t:  # the same process still (a pid can be reused)
            os.kill(int(p), 9)
sys.exit(1 if failures else 0)
