"""jkt_compare.py: runs jupyter_kernel_test (the Jupyter project's kernel test suite, Debian's
python3-jupyter-kernel-test) on a kernel, configured with the same snippets as kbound's language
pack, and compares its outcome test by test with a `kbound conformance --json` report of the same
kernel. Used by test_jkt_agreement.sh; the mapping is documented in docs/kernels.md.

    jkt_compare.py KERNEL PACK_JSON KBOUND_REPORT_JSON OUT_JSON [--replay EARLIER_OUT_JSON]

--replay takes jkt's outcomes from an earlier OUT_JSON instead of running jkt again (the test uses
it to show that a changed kbound report is caught as a disagreement).

jupyter_kernel_test starts the kernel itself, outside any sandbox (jupyter_client's
start_new_kernel); kbound ran it in its sandbox. Exit status: 0 when every pair that both tested
agrees, 1 otherwise (each disagreement printed), 2 on a usage or setup error.
"""
import fnmatch
import json
import sys
import unittest

import jupyter_kernel_test

# Each jupyter_kernel_test test (or subtest), the kbound items that test the same thing, and the
# message types whose shape the jkt test validates (jkt validates every reply and iopub message it
# reads with its msgspec_v5 schemas; kbound's messages.shape checks them all, so only problems of
# these types count for the pair).
EXECUTE_TYPES = ["execute_reply", "status", "execute_input", "stream", "error", "execute_result", "display_data",
                 "clear_output"]
MAPPING = [
    ("test_kernel_info", ["kernel_info.reply", "kernel_info.language_info"], ["kernel_info_reply"]),
    ("test_execute_stdout", ["execute.stdout", "execute.ordering"], EXECUTE_TYPES),
    ("test_execute_stderr", ["execute.stderr"], EXECUTE_TYPES),
    ("test_completion", ["complete"], ["complete_reply"]),
    ("test_is_complete[status=complete]", ["is_complete.complete"], ["is_complete_reply"]),
    ("test_is_complete[status=incomplete]", ["is_complete.incomplete"], ["is_complete_reply"]),
    ("test_is_complete[status=invalid]", ["is_complete.invalid"], ["is_complete_reply"]),
    ("test_pager", ["execute.pager"], EXECUTE_TYPES),
    ("test_error", ["execute.error"], EXECUTE_TYPES),
    ("test_execute_result", ["execute.result"], EXECUTE_TYPES),
    ("test_display_data", ["execute.display_data"], EXECUTE_TYPES),
    ("test_history[hist_access_type=tail]", ["history.tail"], ["history_reply"]),
    ("test_history[hist_access_type=tail,output=True]", ["history.output"], ["history_reply"]),
    ("test_history[hist_access_type=range]", ["history.range"], ["history_reply"]),
    ("test_history[hist_access_type=search,subsearch=normal]", ["history.search"], ["history_reply"]),
    ("test_history[hist_access_type=search,subsearch=unique]", ["history.search"], ["history_reply"]),
    ("test_history[hist_access_type=search,subsearch=n]", ["history.search"], ["history_reply"]),
    ("test_inspect", ["inspect"], ["inspect_reply"]),
    ("test_clear_output", ["execute.clear_output"], EXECUTE_TYPES),
]

# Disagreements explained with evidence (docs/kernels.md): (kernel, jkt test) -> why. Empty: every
# pair measured so far agrees.
EXPLAINED = {}


def glob_literal(code):
    """A glob that matches code only: each glob character replaced by '?'."""
    return "".join("?" if c in "*?[" else c for c in code)


def configure(kernel, pack, info_language):
    """A KernelTests subclass for kernel, with the pack's snippets."""
    c = pack["conformance"]
    attrs = {
        "kernel_name": kernel,
        # kbound compares language_info.name with the kernelspec's language (a warning only when
        # they differ); jkt asserts equality with what it is given: the same comparison.
        "language_name": info_language,
        # jkt's test_execute_stdout looks for the literal text "hello, world".
        "code_hello_world": c["stdout"]["code"].replace(c["stdout"]["text"], "hello, world"),
        "code_stderr": c["stderr"]["code"],
        "completion_samples": [{"text": c["complete"]["code"], "matches": c["complete"]["matches"]}],
        "complete_code_samples": c["is_complete"]["complete"],
        "incomplete_code_samples": c["is_complete"]["incomplete"],
        "invalid_code_samples": c["is_complete"]["invalid"],
        "code_page_something": c["pager"]["code"],
        "code_generate_error": c["error"]["code"],
        "code_execute_result": [{"code": c["execute_result"]["code"], "result": c["execute_result"]["text_plain"]}],
        "code_display_data": [{"code": c["display_data"]["code"], "mime": c["display_data"]["mime"]}],
        "code_history_pattern": glob_literal(c["execute_result"]["code"]),
        "supported_history_operations": ("tail", "range", "search"),
        "code_inspect_sample": c["inspect"]["code"],
        "code_clear_output": c["clear_output"]["code"],
    }
    return type("KbJktTests", (jupyter_kernel_test.KernelTests,), attrs)


class Recorder(unittest.TestResult):
    """Every test's and subtest's outcome: pass, fail (failure or error) or skip, with the reason."""

    def __init__(self):
        super().__init__()
        self.outcomes = {}
        self.failed_tests = set()

    @staticmethod
    def name(test):
        if isinstance(test, unittest.case._SubTest):
            params = ",".join(f"{k}={v}" for k, v in sorted(test.params.items()))
            return f"{test.test_case._testMethodName}[{params}]"
        return getattr(test, "_testMethodName", str(test))

    def _set(self, test, outcome, why=""):
        self.outcomes[self.name(test)] = (outcome, why.strip().splitlines()[-1][:300] if why else "")

    def addSuccess(self, test):
        self.outcomes.setdefault(self.name(test), ("pass", ""))

    def addFailure(self, test, err):
        self._set(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        self._set(test, "fail", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        self._set(test, "skip", reason)

    def addSubTest(self, test, subtest, err):
        if err is None:
            self.outcomes.setdefault(self.name(subtest), ("pass", ""))
        elif issubclass(err[0], unittest.SkipTest):
            self._set(subtest, "skip", str(err[1]))
        else:
            self._set(subtest, "fail", self._exc_info_to_string(err, subtest))
            self.failed_tests.add(test._testMethodName)


def outcome_of(outcomes, jkt_test):
    """A subtest's own outcome; for a whole test, the worst of it and its subtests (samples such
    as test_execute_result[code=...]): fail, then pass, then skip."""
    if "[" in jkt_test:
        return outcomes.get(jkt_test, ("not run", "an earlier assertion of the same test failed first"))
    found = [o for n, o in outcomes.items() if n == jkt_test or n.startswith(jkt_test + "[")]
    for kind in ("fail", "pass", "skip"):
        for o in found:
            if o[0] == kind:
                return o
    return ("not run", "")


def kbound_view(report, kernel):
    k = next(k for k in report["kernels"] if k["name"] == kernel)
    checks = {c["id"]: c for c in k["checks"]}
    shape = checks["messages.shape"]["evidence"].get("shape_problems", {})
    return checks, shape


def main():
    replay = None
    if len(sys.argv) == 7 and sys.argv[5] == "--replay":
        replay = sys.argv[6]
    elif len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    kernel, pack_path, report_path, out_path = sys.argv[1:5]
    pack = json.load(open(pack_path))
    report = json.load(open(report_path))
    checks, shape = kbound_view(report, kernel)
    info_language = next(k for k in report["kernels"] if k["name"] == kernel)["language"]

    if replay:
        outcomes = {n: tuple(o) for n, o in json.load(open(replay))["jkt_outcomes"].items()}
    else:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(configure(kernel, pack, info_language))
        result = Recorder()
        suite.run(result)
        outcomes = dict(result.outcomes)
        # A test whose subtests failed is reported by its subtests; a plain pass of the whole
        # means nothing more then.
        for name in result.failed_tests:
            if outcomes.get(name, ("pass",))[0] == "pass":
                outcomes.pop(name, None)

    rows, disagreements = [], []
    for jkt_test, items, types in MAPPING:
        jkt, jkt_why = outcome_of(outcomes, jkt_test)
        statuses = [checks[i]["status"] for i in items]
        shape_codes = sorted(code for code in shape
                             if code.split(".")[0] in types or code.startswith("header."))
        if all(s == "pass" for s in statuses) and not shape_codes:
            kb = "pass"
        elif any(s in ("fail", "deviation") for s in statuses) or shape_codes:
            kb = "fails"
        else:
            kb = "not tested"
        if jkt in ("pass", "fail") and kb != "not tested":
            agree = (jkt == "pass") == (kb == "pass")
            verdict = "agree" if agree else ("explained" if (kernel, jkt_test) in EXPLAINED else "DISAGREE")
        else:
            verdict = "only one tested"
        rows.append({"jkt_test": jkt_test, "jkt": jkt, "jkt_why": jkt_why, "kbound_items": items,
                     "kbound_statuses": statuses, "kbound_shape_problems": shape_codes, "kbound": kb,
                     "verdict": verdict})
        print(f"{kernel:8} {jkt_test:58} jkt {jkt:8} kbound {kb:10} ({', '.join(statuses)}) {verdict}")
        if verdict == "DISAGREE":
            disagreements.append((jkt_test, jkt, jkt_why, items, statuses))
    # Every jkt test must be in the mapping or deliberately left out: none of jkt's tests goes
    # uncompared by accident.
    unmapped = sorted(n for n in outcomes if n.split("[")[0] not in {m[0].split("[")[0] for m in MAPPING})
    json.dump({"kernel": kernel, "rows": rows, "unmapped_jkt_tests": unmapped,
               "jkt_outcomes": {n: o for n, o in outcomes.items()}}, open(out_path, "w"), indent=1)
    if unmapped:
        print(f"jkt tests without a kbound counterpart in the mapping: {unmapped}", file=sys.stderr)
        return 1
    for jkt_test, jkt, why, items, statuses in disagreements:
        print(f"DISAGREEMENT on {kernel}: jkt {jkt_test} {jkt} ({why}); kbound {items} {statuses}", file=sys.stderr)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
