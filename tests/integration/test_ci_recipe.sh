#!/usr/bin/env bash
# docs/ci.md's recipes, as written, in a fresh Debian 12 root: the page's fenced `sh` install block
# and the `run:` steps of its GitHub workflows (and its GitLab job's before_script, which targets
# debian:12 itself) are extracted from the markdown and the YAML, and run in a root that mmdebstrap
# builds from bookworm on Debian's mirror, up to a built kbound that runs (`kbound --version`,
# `kbound --help`). Every YAML block must also be a whole GitHub workflow (or GitLab CI file), and
# every kbound option the page uses must exist.
#
# What runs, and what is substituted (everything else runs verbatim; each substitution is printed):
#   - `git clone URL DEST` (the URL is a placeholder, and no host but Debian's is reachable): the
#     line becomes `/ci/bin/ci_clone DEST`, a copy of this source tree (git ls-files, tracked and
#     untracked but not ignored: no build outputs). actions/checkout, if a workflow used it, and
#     GitLab's checkout of the project (vendor/kbound) are the same copy.
#   - `${{ runner.temp }}`, `${{ matrix.X }}` (the first matrix entry) and `${{ strategy.job-index }}`
#     are expanded as GitHub expands them before the shell runs.
#   - The Ubuntu 24.04 AppArmor step is not run: Debian 12 has no such restriction, and a chroot
#     cannot load an AppArmor profile.
#   - The pull step's `docker://IMAGE` source (a placeholder registry) becomes a local OCI layout
#     that the test makes with the umoci the job installed; the rest of the step (skopeo, the
#     archive it writes and its name) runs as written, and kbound then unpacks the result
#     (`kbound kernelspecs --image`) with the job's skopeo and umoci.
#   - Steps after the build that need a sandbox or a registry (kbound doctor, kbound check), and
#     `uses:` actions (upload-artifact), are not run: they are checked with `bash -n` and against
#     `kbound COMMAND --help`.
#   - GitHub's runner is emulated: the user `runner` with password-less sudo (Debian's sudo
#     package, added to the root the way the runner image has it), HOME, RUNNER_TEMP,
#     GITHUB_WORKSPACE as the working directory, each step as `bash -e SCRIPT` with the step's env.
#     GitLab's job runs as root without sudo (as in debian:12), before_script as one shell.
#
# The roots, cached under $KBOUND_TEST_CI_ROOT_CACHE (default /var/cache/kbound-test-ci-root):
# one mmdebstrap root (variant minbase) holding the packages that every recipe's apt-get install
# line shares, keyed by that package set, the mirror and the mmdebstrap options; and per recipe an
# overlay layer holding what the recipe's own install commands added on top of it (keyed by those
# commands), so that each recipe builds in a root holding minbase plus exactly its own packages. A
# run then mounts a fresh overlay per recipe (in a private mount namespace: nothing outlives it),
# runs the recipe's install commands again as written (they find everything installed), and builds.
# Other keys' roots and layers are removed, under the cache's lock. Measured on a 2-core machine
# (Debian's mirror near): a first run about 160 s (mmdebstrap 45 s, a 600 MB root; the four layers
# 70 s, 1 GB; four builds of kbound, 12 s each), a cached run about 50 s. scripts/test starts from a
# clean slate (it removes /var/cache/kbound-test-*), so there every run is a first run.
#
# Needs root (mmdebstrap's root mode, overlay mounts, chroot), mmdebstrap, and python3-yaml;
# scripts/setup installs both.
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "FATAL: test_ci_recipe builds a Debian 12 root with mmdebstrap and runs docs/ci.md's commands in it" \
    "(overlay mounts, chroot): it needs root; run the tests as root (CI does)" >&2
  exit 1
fi
require mmdebstrap unshare chroot mount flock sha256sum tar /usr/bin/python3
if ! /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  echo "FATAL: test_ci_recipe reads docs/ci.md's YAML with python3-yaml; run scripts/setup (apt-get install python3-yaml)" >&2
  exit 1
fi
started=$(date +%s)
doc=$KBOUND_SOURCE_DIR/docs/ci.md
out=$scratch/recipes

# 1. Extract the recipes from docs/ci.md and check the page's blocks (python3 with python3-yaml).
cat >"$scratch/ci_recipe.py" <<'PY'
# ci_recipe.py DOC CMAKELISTS OUT KBOUND: reads docs/ci.md and writes, under OUT,
#   checks.tsv         one line per static check: "pass" or "fail", a tab, what was checked
#   base-packages      the packages every install recipe shares (the cached root holds them)
#   modules            the pkg-config modules CMakeLists.txt requires
#   sessions/N/        one recipe to run in a fresh root: meta (shell variables), env, packages,
#                      parent (the recipe whose layer its own goes on), layer-digest, steps/NN/
#                      (name, kind, mode, script, env, subs, install flag) and checks/NN/ (name,
#                      script: what the driver runs after the steps)
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap

import yaml

doc_path, cmakelists, out, kbound = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
doc = open(doc_path, encoding="utf-8").read()
os.makedirs(out, exist_ok=True)
checks = []


def check(passed, what):
    passed = bool(passed)
    checks.append(("pass" if passed else "fail", " ".join(str(what).split())))
    return passed


# --- The markdown: fenced blocks, with the heading they sit under and their own indentation. ---
blocks = []
heading = ""
lines = doc.split("\n")
i = 0
while i < len(lines):
    m = re.match(r"^( *)```([A-Za-z0-9_-]*)\s*$", lines[i])
    h = re.match(r"^#+\s+(.*)$", lines[i])
    if h:
        heading = h.group(1).strip()
    if m:
        indent, lang, start = len(m.group(1)), m.group(2), i + 1
        j = start
        while j < len(lines) and not re.match(r"^ {0,%d}```\s*$" % (indent + 3), lines[j]):
            j += 1
        check(j < len(lines), f"the ```{lang} block at docs/ci.md:{i + 1} is closed")
        body = "\n".join(l[indent:] if l[:indent].strip() == "" else l for l in lines[start:j]) + "\n"
        blocks.append({"lang": lang, "heading": heading, "line": i + 1, "text": body})
        i = j
    i += 1

# --- YAML as GitHub and GitLab read it: `on` is a key, not the boolean true (YAML 1.2 booleans),
# and a repeated key is an error (PyYAML would keep the last one silently). ---


class Loader(yaml.SafeLoader):
    pass


Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                             list("tTfF"))


def construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)

# --- GitHub's workflow structure. No JSON schema for GitHub workflows is packaged in Debian 12
# (SchemaStore's github-workflow.json ships with check-jsonschema and actionlint, which Debian does
# not have), so this is a structural check of what that schema requires, written out: the
# top-level, job and step keys GitHub accepts, the required ones, the event names, `uses` forms,
# and every ${{ }} expression naming a context (and a matrix key the job defines). ---
EVENTS = set("""branch_protection_rule check_run check_suite create delete deployment deployment_status discussion
discussion_comment fork gollum issue_comment issues label merge_group milestone page_build project project_card
project_column public pull_request pull_request_review pull_request_review_comment pull_request_target push
registry_package release repository_dispatch schedule status watch workflow_call workflow_dispatch
workflow_run""".split())
TOP_KEYS = {"name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs"}
JOB_KEYS = {"name", "needs", "permissions", "runs-on", "environment", "concurrency", "outputs", "env", "defaults",
            "if", "steps", "timeout-minutes", "strategy", "continue-on-error", "container", "services", "uses",
            "with", "secrets"}
STEP_KEYS = {"id", "if", "name", "uses", "run", "working-directory", "shell", "with", "env", "continue-on-error",
             "timeout-minutes"}
CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy", "matrix", "needs",
            "inputs"}
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def unknown(extra):
    return f" (not {', '.join(sorted(map(str, extra)))})" if extra else ""


def is_scalar(v):
    return isinstance(v, (str, int, float, bool))


def strings_in(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings_in(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings_in(x)


def matrix_keys(job):
    matrix = (job.get("strategy") or {}).get("matrix") or {}
    keys = {k for k in matrix if k not in ("include", "exclude")}
    for entry in matrix.get("include") or []:
        keys |= set(entry)
    return keys


def check_github(wf, label):
    good = check(isinstance(wf, dict), f"{label} is a YAML mapping")
    if not good:
        return False
    extra = set(wf) - TOP_KEYS
    good &= check(not extra, f"{label} has only workflow keys {unknown(extra)}")
    for key in ("name", "on", "jobs"):
        good &= check(key in wf, f"{label} has '{key}'")
    on = wf.get("on")
    events = [on] if isinstance(on, str) else on if isinstance(on, list) else list(on or {})
    good &= check(events and all(e in EVENTS for e in events), f"{label}: 'on' names GitHub events ({events})")
    jobs = wf.get("jobs")
    good &= check(isinstance(jobs, dict) and jobs, f"{label}: 'jobs' is a non-empty mapping")
    for jid, job in (jobs or {}).items():
        jl = f"{label} job '{jid}'"
        good &= check(re.match(r"^[_a-zA-Z][a-zA-Z0-9_-]*$", str(jid)), f"{jl}: a valid job id")
        if not check(isinstance(job, dict), f"{jl} is a mapping"):
            good = False
            continue
        extra = set(job) - JOB_KEYS
        good &= check(not extra, f"{jl} has only job keys {unknown(extra)}")
        good &= check("runs-on" in job and "steps" in job, f"{jl} has 'runs-on' and 'steps'")
        if "timeout-minutes" in job:
            good &= check(isinstance(job["timeout-minutes"], (int, float)), f"{jl}: timeout-minutes is a number")
        strategy = job.get("strategy")
        if strategy is not None:
            good &= check(isinstance(strategy, dict) and set(strategy) <= {"matrix", "fail-fast", "max-parallel"},
                          f"{jl}: strategy has only matrix, fail-fast, max-parallel")
            matrix = strategy.get("matrix")
            good &= check(isinstance(matrix, dict) and matrix, f"{jl}: strategy.matrix is a mapping")
            include = (matrix or {}).get("include", [])
            good &= check(isinstance(include, list) and all(isinstance(e, dict) and all(is_scalar(x)
                          for x in e.values()) for e in include), f"{jl}: matrix.include is a list of mappings")
        steps = job.get("steps")
        if not check(isinstance(steps, list) and steps, f"{jl}: steps is a non-empty list"):
            good = False
            continue
        mkeys = matrix_keys(job)
        for n, step in enumerate(steps, 1):
            sl = f"{jl} step {n} ({step.get('name', step.get('uses', '?')) if isinstance(step, dict) else '?'})"
            if not check(isinstance(step, dict), f"{sl} is a mapping"):
                good = False
                continue
            extra = set(step) - STEP_KEYS
            good &= check(not extra, f"{sl} has only step keys {unknown(extra)}")
            good &= check(("run" in step) != ("uses" in step), f"{sl} has exactly one of 'run' and 'uses'")
            if "run" in step:
                good &= check(isinstance(step["run"], str) and step["run"].strip(), f"{sl}: run is a script")
            if "uses" in step:
                good &= check(isinstance(step["uses"], str) and re.match(
                    r"^([^/\s@]+/[^\s@]+@\S+|\./\S+|docker://\S+)$", step["uses"]), f"{sl}: uses is OWNER/REPO@REF")
            for key in ("with", "env"):
                if key in step:
                    good &= check(isinstance(step[key], dict) and all(is_scalar(v) for v in step[key].values()),
                                  f"{sl}: {key} maps names to values")
            for s in strings_in({k: v for k, v in step.items() if k != "if"}):
                for expr in EXPR.findall(s):
                    ctx = re.match(r"^([a-z_]+)\.([A-Za-z0-9_-]+)", expr)
                    good &= check(ctx and ctx.group(1) in CONTEXTS, f"{sl}: ${{{{ {expr} }}}} names a context")
                    if ctx and ctx.group(1) == "matrix":
                        good &= check(ctx.group(2) in mkeys, f"{sl}: matrix.{ctx.group(2)} is in the job's matrix")
    return good


# --- GitLab's structure (no schema in Debian either): global keywords, or jobs that have a script. ---
GL_GLOBAL = {"default", "include", "stages", "variables", "workflow", "image", "services", "cache", "before_script",
             "after_script"}
GL_JOB = {"image", "tags", "timeout", "variables", "before_script", "script", "after_script", "artifacts",
          "parallel", "stage", "rules", "only", "except", "needs", "dependencies", "services", "cache", "when",
          "allow_failure", "retry", "interruptible", "environment", "coverage", "extends", "resource_group",
          "release", "inherit", "id_tokens", "secrets", "hooks", "pages"}


# --- Kubernetes objects (the indexed Job recipe): a ConfigMap of images and a batch/v1 Job whose
# pods run kbound. The pod's security settings themselves are proven by test_pod_settings.sh. ---
def is_kubernetes(doc_):
    return isinstance(doc_, dict) and "apiVersion" in doc_ and "kind" in doc_


def check_kubernetes(obj, label):
    kind = obj.get("kind")
    good = check(isinstance(obj.get("metadata"), dict) and obj["metadata"].get("name"), f"{label} has a name")
    if kind == "ConfigMap":
        return good & check(obj.get("apiVersion") == "v1" and isinstance(obj.get("data"), dict) and obj["data"],
                            f"{label} is a v1 ConfigMap with data")
    good &= check(kind == "Job" and obj.get("apiVersion") == "batch/v1", f"{label} is a batch/v1 Job or a ConfigMap")
    spec = obj.get("spec") or {}
    good &= check(spec.get("completionMode") == "Indexed" and isinstance(spec.get("completions"), int),
                  f"{label} is an indexed Job (completionMode: Indexed, completions)")
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = pod.get("containers") or []
    good &= check(containers and pod.get("restartPolicy") in ("Never", "OnFailure"),
                  f"{label}: its pod template has containers and a Job's restartPolicy")
    for c in containers:
        script = "\n".join(str(a) for a in (c.get("args") or []))
        good &= check(c.get("image") and (c.get("command") or c.get("args")), f"{label}: container {c.get('name')} "
                      "has an image and a command")
        bash_syntax(script, f"{label} container {c.get('name')}'s script")
        kbound_options(script, f"{label} container {c.get('name')}'s script")
        good &= check("JOB_COMPLETION_INDEX" in script, f"{label}: each pod takes its line by JOB_COMPLETION_INDEX")
    return good


def is_gitlab(doc_):
    return isinstance(doc_, dict) and doc_ and all(
        k in GL_GLOBAL or (isinstance(v, dict) and "script" in v) for k, v in doc_.items())


def check_gitlab(ci, label):
    good = True
    for name, job in ci.items():
        if name in GL_GLOBAL:
            continue
        jl = f"{label} job '{name}'"
        extra = set(job) - GL_JOB
        good &= check(not extra, f"{jl} has only job keywords {unknown(extra)}")
        for key in ("before_script", "script", "after_script"):
            if key in job:
                good &= check(isinstance(job[key], list) and all(isinstance(x, str) for x in job[key]),
                              f"{jl}: {key} is a list of commands")
        if "parallel" in job:
            p = job["parallel"]
            good &= check(isinstance(p, int) or (isinstance(p, dict) and isinstance(p.get("matrix"), list)),
                          f"{jl}: parallel is a count or a matrix list")
        if "artifacts" in job:
            good &= check(set(job["artifacts"]) <= {"paths", "when", "reports", "expire_in", "name", "untracked",
                                                    "exclude", "expose_as", "public", "access"},
                          f"{jl}: artifacts has only artifacts keywords")
    return good


# --- Shell helpers. ---
def commands_of(script):
    """The simple commands of a script: continuation lines joined, split at ; && || |, as words."""
    joined = re.sub(r"\\\n", " ", script)
    cmds = []
    for line in joined.split("\n"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        cmd = []
        for w in words + [";"]:
            if w in (";", "&&", "||", "|"):
                if cmd:
                    cmds.append(cmd)
                cmd = []
            else:
                cmd.append(w)
    return cmds


def apt_packages(script):
    pkgs = []
    for cmd in commands_of(script):
        if cmd and cmd[0] == "sudo":
            cmd = cmd[1:]
        if len(cmd) >= 2 and cmd[0] == "apt-get" and "install" in cmd:
            pkgs += [w for w in cmd[cmd.index("install") + 1:] if not w.startswith("-")]
    return pkgs


def bash_syntax(script, label):
    r = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    check(r.returncode == 0, f"{label}: valid bash ({r.stderr.strip() or 'bash -n'})")


helps = {}


def kbound_options(script, label):
    for cmd in commands_of(script):
        if len(cmd) >= 2 and cmd[0] == "kbound" and re.match(r"^[a-z]+$", cmd[1]):
            sub = cmd[1]
            if sub not in helps:
                r = subprocess.run([kbound, sub, "--help"], capture_output=True, text=True)
                helps[sub] = r.stdout + r.stderr if r.returncode == 0 else None
            if not check(helps[sub] is not None, f"{label}: 'kbound {sub}' is a kbound command"):
                continue
            for w in cmd[2:]:
                if w.startswith("--"):
                    opt = w.split("=")[0]
                    check(re.search(r"(^|\s)" + re.escape(opt) + r"(\s|$)", helps[sub]),
                          f"{label}: 'kbound {sub} {opt}' is an option kbound {sub} --help lists")


BUILD_MARK = "build-essential"  # an install line that installs this is one of kbound's build recipes
configure_re = re.compile(r"cmake\s+-S\s")


def build_lines_checked(script, label):
    for cmd in commands_of(script):
        if cmd[:1] == ["sudo"]:
            cmd = cmd[1:]
        if cmd[:2] == ["cmake", "-S"]:
            check("-DBUILD_TESTING=OFF" in cmd, f"{label}: '{' '.join(cmd[:3])} ...' passes -DBUILD_TESTING=OFF")


# --- Go through the blocks. ---
runner_blocks = []   # (label, script) of sh blocks that install kbound's build dependencies
workflows = []       # (label, workflow)
gitlab = []          # (label, ci)
for b in blocks:
    label = f"docs/ci.md:{b['line']} ({b['lang']} block under '{b['heading']}')"
    if b["lang"] == "sh":
        bash_syntax(b["text"], label)
        kbound_options(b["text"], label)
        build_lines_checked(b["text"], label)
        if BUILD_MARK in apt_packages(b["text"]):
            runner_blocks.append((label, b["text"]))
    elif b["lang"] == "yaml":
        check("..." not in b["text"], f"{label} is whole: no '...' left out")
        try:
            data = yaml.load(b["text"], Loader=Loader)
        except yaml.YAMLError as e:
            check(False, f"{label} parses as YAML ({' '.join(str(e).split())})")
            continue
        check(True, f"{label} parses as YAML")
        if is_kubernetes(data):
            if check_kubernetes(data, label):
                check(True, f"{label} is a whole Kubernetes {data.get('kind')}")
        elif is_gitlab(data):
            if check_gitlab(data, label):
                check(True, f"{label} is a GitLab CI file (jobs with scripts)")
            gitlab.append((label, data))
        else:
            if check_github(data, label):
                check(True, f"{label} is a complete GitHub workflow (name, on, jobs; runs-on and steps; run or uses)")
            if isinstance(data, dict):
                workflows.append((label, data))

check(runner_blocks, "docs/ci.md has an sh block installing kbound's build dependencies (apt-get install build-essential ...)")
check(workflows, "docs/ci.md has GitHub workflows")

# --- Sessions: what runs in a fresh root. ---
RUNNER_HOME = "/home/runner"
RUNNER_TEMP = "/home/runner/work/_temp"
WORKSPACE = "/home/runner/work/project/project"
GITHUB_ENV = {"HOME": RUNNER_HOME, "USER": "runner", "LANG": "C.UTF-8",
              "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
              "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_TEMP": RUNNER_TEMP, "GITHUB_WORKSPACE": WORKSPACE}
sessions = []


def expand(text, job, substituted):
    """${{ }} as GitHub expands it before the shell runs: the first matrix entry, job index 0."""
    include = ((job.get("strategy") or {}).get("matrix") or {}).get("include") or [{}]
    values = {"runner.temp": RUNNER_TEMP, "strategy.job-index": "0"}
    values.update({f"matrix.{k}": str(v) for k, v in include[0].items()})

    def one(m):
        if m.group(1) in values:
            return values[m.group(1)]
        substituted.append(f"unknown expression {m.group(0)}")
        return m.group(0)
    return EXPR.sub(one, text)


def clone_substitution(script, subs):
    """A `git clone URL DEST` line becomes a copy of this source tree to DEST (the shell function
    /ci/bin/ci_clone, which the test puts in the root): the URL is a placeholder and no host but Debian's is reachable."""
    def one(m):
        subs.append(f"'{m.group(0).strip()}' -> a copy of this tree (ci_clone)")
        return m.group(1) + "/ci/bin/ci_clone " + m.group(3)
    return re.sub(r"^(\s*)git clone (?:--depth \d+ )?(\S+) (.+)$", one, script, flags=re.M)


def github_steps(label, wf, jid, job, stop_after_build, runner_block=None):
    """The steps of one job as the driver runs them; a list of dicts."""
    steps = []
    if runner_block:
        steps.append({"name": f"the install block ({runner_block[0]})", "kind": "doc", "mode": "run",
                      "script": runner_block[1], "env": dict(GITHUB_ENV), "subs": []})
    built = False
    for n, step in enumerate(job.get("steps") or [], 1):
        name = step.get("name") or step.get("uses") or f"step {n}"
        env = dict(GITHUB_ENV)
        env.update({k: str(v) for k, v in (wf.get("env") or {}).items()})
        env.update({k: str(v) for k, v in (job.get("env") or {}).items()})
        subs = []
        env.update({k: expand(str(v), job, subs) for k, v in (step.get("env") or {}).items()})
        s = {"name": name, "kind": "doc", "env": env, "subs": subs}
        if "uses" in step:
            uses = step["uses"]
            if uses.startswith("actions/checkout@"):
                # The repository checkout: a copy of this tree at the workspace (or with.path).
                path = (step.get("with") or {}).get("path", "")
                s.update(mode="run", kind="harness", name=f"{uses}: a copy of this tree",
                         script=f'/ci/bin/ci_clone "{WORKSPACE}/{path}"\n')
            else:
                s.update(mode=f"not run: the action {uses} needs GitHub (checked as a step that uses an action)")
            steps.append(s)
            continue
        script = expanded = expand(step["run"], job, subs)
        bash_syntax(script, f"{label} job '{jid}' step '{name}'")
        kbound_options(script, f"{label} job '{jid}' step '{name}'")
        build_lines_checked(script, f"{label} job '{jid}' step '{name}'")
        if "apparmor_parser" in script:
            # Ubuntu 24.04's AppArmor restriction on user namespaces: Debian 12 has none, and loading a
            # profile needs the kernel's AppArmor, which a chroot does not get.
            s.update(mode="not run: Ubuntu 24.04's AppArmor step (Debian 12 has no such restriction; a chroot "
                     "cannot load an AppArmor profile)", script=script)
        elif built and not stop_after_build and re.search(r"^\s*skopeo copy ", script, re.M):
            # The registry is a placeholder and unreachable: the image comes from a local OCI layout,
            # the rest of the step (skopeo, the destination, its name) runs as written.
            new, count = re.subn(r'"?docker://[^"\s]+"?', '"oci:/tmp/ci-image-layout:kernel"', script)
            check(count == 1, f"{label} job '{jid}' step '{name}': one docker:// source to stand in for")
            subs.append("the registry source docker://IMAGE -> a local OCI layout oci:/tmp/ci-image-layout:kernel")
            steps.append({"name": "make a local image standing in for the registry's (umoci, tar)",
                          "kind": "harness", "mode": "run", "env": dict(GITHUB_ENV), "subs": [],
                          "script": textwrap.dedent("""\
                              set -e
                              rm -rf /tmp/ci-layer /tmp/ci-image-layout
                              mkdir -p /tmp/ci-layer/usr/share/jupyter/kernels/python3
                              printf '%s\\n' '{"argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "Python 3 (image)", "language": "python"}' \\
                                  >/tmp/ci-layer/usr/share/jupyter/kernels/python3/kernel.json
                              tar -C /tmp/ci-layer -cf /tmp/ci-layer.tar usr
                              umoci init --layout /tmp/ci-image-layout
                              umoci new --image /tmp/ci-image-layout:kernel
                              umoci raw add-layer --image /tmp/ci-image-layout:kernel /tmp/ci-layer.tar
                              """)})
            s.update(mode="run", script=new, pulled=True)
        elif built:
            s.update(mode="not run: needs a sandbox or a registry (a chroot has neither); checked with bash -n and "
                     "against kbound's --help", script=script)
        else:
            script = clone_substitution(script, subs)
            s.update(mode="run", script=script)
            if re.search(r"cmake\s+--install", script):
                built = True
        if s.get("mode") == "run":
            # As written, but for the lines substituted above (one each).
            a, b = expanded.split("\n"), s["script"].split("\n")
            changed = sum(x != y for x, y in zip(a, b))
            check(len(a) == len(b) and changed == len(subs),
                  f"{label} job '{jid}' step '{name}' runs as written, but for {changed} substituted line(s)")
        steps.append(s)
    return steps, built


def add_session(name, kind, steps, extra_checks):
    # The install prefix: the steps up to the last that installs packages; the cached layer holds
    # what they installed, and the session runs them again, as written (then they install nothing).
    last = max((i for i, s in enumerate(steps) if s.get("mode") == "run" and apt_packages(s["script"])), default=-1)
    pkgs = []
    for i, s in enumerate(steps):
        s["install"] = i <= last and s.get("mode") == "run" and s["kind"] == "doc"
        if s["install"]:
            pkgs += apt_packages(s["script"])
    sessions.append({"name": name, "kind": kind, "steps": steps, "packages": sorted(set(pkgs)),
                     "checks": extra_checks})


def common_checks(pkgs, version):
    c = [("kbound is on PATH and says its version (kbound --version)",
          f'out=$(kbound --version) && echo "$out" && [ "$out" = {shlex.quote(version)} ]'),
         ("kbound --help exits 0", "kbound --help >/dev/null"),
         ("every pkg-config module CMakeLists.txt requires is there",
          "for m in $(cat /ci/modules); do pkg-config --exists \"$m\" || { echo \"missing: $m\"; exit 1; }; done")]
    if "libcmocka-dev" not in pkgs:
        c.append(("libcmocka-dev is not installed: the build did not need it (-DBUILD_TESTING=OFF)",
                  "! dpkg-query -W -f='${Status}' libcmocka-dev 2>/dev/null | grep -q 'ok installed'"))
    return c


version = subprocess.run([kbound, "--version"], capture_output=True, text=True).stdout.strip()
first_build = None
for label, wf in workflows:
    for jid, job in (wf.get("jobs") or {}).items():
        if not isinstance(job, dict):
            continue
        steps, built = github_steps(label, wf, jid, job, stop_after_build=False)
        check(built, f"{label} job '{jid}' builds and installs kbound (cmake --install) before using it")
        uses_image = any(re.search(r"kbound \w+ .*--image", s.get("script", "")) for s in steps)
        if uses_image:
            pkgs = set(sum((apt_packages(s.get("script", "")) for s in steps), []))
            check({"skopeo", "umoci"} <= pkgs, f"{label} job '{jid}' uses --image and installs skopeo and umoci")
            check(any(s.get("pulled") for s in steps), f"{label} job '{jid}' uses --image and pulls the image first")
        if not built:
            continue
        if first_build is None:
            first_build = (label, wf, jid, job)
        extra = []
        if any(s.get("pulled") for s in steps):
            image = str(((job.get("strategy") or {}).get("matrix") or {}).get("include", [{}])[0].get("image", ""))
            extra = [("the pull step wrote a docker archive named after the image (" + image + ")",
                      f"tar -xOf {RUNNER_TEMP}/image.tar manifest.json | grep -F {shlex.quote(json.dumps(image))}"),
                     ("kbound unpacks it with the skopeo and umoci the job installed (kernelspecs --image)",
                      f"kbound kernelspecs --image {RUNNER_TEMP}/image.tar >/tmp/ks.out 2>/tmp/ks.err; rc=$?; "
                      f"cat /tmp/ks.out /tmp/ks.err; [ $rc -eq 0 ] && grep -q '^python3 ' /tmp/ks.out && "
                      f"grep -qF {shlex.quote('tag ' + image)} /tmp/ks.err")]
        add_session(f"{wf.get('name', label)} (job {jid})", "github", steps, [])
        sessions[-1]["checks"] = common_checks(sessions[-1]["packages"], version) + extra

# The runner install block, followed by the first workflow's build step (the page's build commands).
if first_build:
    label, wf, jid, job = first_build
    for rlabel, rtext in runner_blocks:
        steps, _ = github_steps(label, wf, jid, job, stop_after_build=True, runner_block=(rlabel, rtext))
        # Only the install block and the build step: the workflow's own install step is its session's.
        keep = [steps[0]] + [s for s in steps[1:] if s.get("mode") == "run" and re.search(r"cmake\s+--build",
                                                                                          s["script"])]
        check(len(keep) == 2, f"{rlabel}: a build step to follow it ({label} job '{jid}')")
        add_session(f"the install block at {rlabel.split(' ')[0]}, then the build step of '{wf.get('name')}'",
                    "github", keep, [])
        sessions[-1]["checks"] = common_checks(sessions[-1]["packages"], version)

# GitLab jobs that install kbound's build dependencies: before_script as one shell, as GitLab runs it.
for label, ci in gitlab:
    for name, job in ci.items():
        if name in GL_GLOBAL or not isinstance(job, dict):
            continue
        for key in ("before_script", "script"):
            for n, cmd in enumerate(job.get(key) or []):
                bash_syntax(cmd, f"{label} job '{name}' {key}[{n}]")
                kbound_options(cmd, f"{label} job '{name}' {key}[{n}]")
                build_lines_checked(cmd, f"{label} job '{name}' {key}[{n}]")
        before = job.get("before_script") or []
        if not any(BUILD_MARK in apt_packages(c) for c in before):
            continue
        project = "/builds/project"
        env = {"HOME": "/root", "LANG": "C.UTF-8", "CI": "true", "GITLAB_CI": "true", "CI_PROJECT_DIR": project,
               "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
        env.update({k: str(v) for k, v in (job.get("variables") or {}).items()})
        check(job.get("image") == "debian:12", f"{label} job '{name}' runs in debian:12 (what this test builds)")
        last = max(i for i, c in enumerate(before) if apt_packages(c))
        src = [c.split()[2] for c in before if re.match(r"^cmake -S \S+", c)]
        steps = []
        for rel in src:
            if not rel.startswith("/"):
                # GitLab checks the project out; here the project holds a copy of this tree where the
                # job's cmake -S looks for kbound (a vendored copy, as the page says).
                steps.append({"name": f"the project checkout, with this tree at {rel}", "kind": "harness",
                              "mode": "run", "env": env, "subs": [], "script": f'/ci/bin/ci_clone "{project}/{rel}"\n'})
        steps.append({"name": "before_script, up to its install", "kind": "layer-only", "mode": "run", "env": env,
                      "subs": [], "script": "\n".join(before[:last + 1]) + "\n"})
        steps.append({"name": "before_script", "kind": "doc", "mode": "run", "env": env, "subs": [],
                      "script": "\n".join(before) + "\n"})
        add_session(f"{label.split(' ')[0]} GitLab job '{name}'", "gitlab", steps, [])
        for s in steps:
            s["install"] = s["kind"] == "layer-only"
        sessions[-1]["checks"] = common_checks(sessions[-1]["packages"], version)

# The pkg-config modules CMakeLists.txt requires (checked in each root after its install).
modules = []
for args in re.findall(r"pkg_check_modules\(\s*\w+\s+([^)]*)\)", open(cmakelists).read()):
    modules += [re.split(r"[<>=]", w)[0] for w in args.split()
                if w not in ("REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL", "NO_CMAKE_PATH",
                             "NO_CMAKE_ENVIRONMENT_PATH")]
check(modules, f"CMakeLists.txt requires pkg-config modules ({' '.join(modules)})")
with open(f"{out}/modules", "w") as f:
    f.write(" ".join(modules) + "\n")

# Smallest recipes first: a recipe's cached layer goes on top of the layer of an earlier recipe of
# the same kind whose packages are a subset of its own (so the root still holds exactly its packages).
sessions.sort(key=lambda s: (s["kind"], len(s["packages"])))
for n, sess in enumerate(sessions):
    below = [m for m in range(n) if sessions[m]["kind"] == sess["kind"]
             and set(sessions[m]["packages"]) <= set(sess["packages"])]
    sess["parent"] = max(below, key=lambda m: len(sessions[m]["packages"])) + 1 if below else ""

# The root holds the packages every install recipe shares; each recipe's layer adds the rest.
sets = [set(s["packages"]) for s in sessions]
base = sorted(set.intersection(*sets)) if sets else []
check(sessions, f"{len(sessions)} recipes to run in a fresh Debian 12 root")

os.makedirs(f"{out}/sessions", exist_ok=True)
with open(f"{out}/base-packages", "w") as f:
    f.write(" ".join(base) + "\n")
with open(f"{out}/checks.tsv", "w") as f:
    for status, what in dict.fromkeys(checks):
        f.write(f"{status}\t{what}\n")
for n, sess in enumerate(sessions, 1):
    d = f"{out}/sessions/{n}"
    os.makedirs(f"{d}/steps")
    os.makedirs(f"{d}/checks")
    user = "runner" if sess["kind"] == "github" else "root"
    cwd = WORKSPACE if sess["kind"] == "github" else "/builds/project"
    base_env = GITHUB_ENV if sess["kind"] == "github" else sess["steps"][-1]["env"]
    with open(f"{d}/meta", "w") as f:
        f.write(f"session_name={shlex.quote(sess['name'])}\nsession_kind={sess['kind']}\n"
                f"session_user={user}\nsession_cwd={cwd}\n")
    with open(f"{d}/packages", "w") as f:
        f.write(" ".join(sess["packages"]) + "\n")
    with open(f"{d}/env", "w") as f:
        f.write("".join(f"{k}={v}\n" for k, v in base_env.items()))
    digest = hashlib.sha256(sess["kind"].encode())
    for i, s in enumerate(sess["steps"], 1):
        sd = f"{d}/steps/{i:02d}"
        os.makedirs(sd)
        for key in ("name", "kind", "mode"):
            with open(f"{sd}/{key}", "w") as f:
                f.write(s[key] + "\n")
        with open(f"{sd}/script", "w") as f:
            f.write(s.get("script", ""))
        with open(f"{sd}/env", "w") as f:
            f.write("".join(f"{k}={v}\n" for k, v in s["env"].items()))
        with open(f"{sd}/subs", "w") as f:
            f.write("".join(x + "\n" for x in s["subs"]))
        if s.get("install"):
            open(f"{sd}/install", "w").close()
            digest.update(b"\0" + s.get("script", "").encode() + b"\0" + json.dumps(s["env"], sort_keys=True).encode())
    with open(f"{d}/parent", "w") as f:
        f.write(f"{sess['parent']}\n")
    with open(f"{d}/layer-digest", "w") as f:
        f.write(digest.hexdigest()[:16] + "\n")
    for i, (name, script) in enumerate(sess["checks"], 1):
        cd = f"{d}/checks/{i:02d}"
        os.makedirs(cd)
        with open(f"{cd}/name", "w") as f:
            f.write(name + "\n")
        with open(f"{cd}/script", "w") as f:
            f.write(script + "\n")
PY
/usr/bin/python3 "$scratch/ci_recipe.py" "$doc" "$KBOUND_SOURCE_DIR/CMakeLists.txt" "$out" "$KBOUND"
while IFS=$'\t' read -r status what; do
  ok "$what" [ "$status" = pass ]
done <"$out/checks.tsv"

# 2. The Debian mirror this machine's apt uses (as tests/fixtures/make-image finds it), never another
# host: bookworm, bookworm-updates and bookworm-security, as a debian:12 image has them.
mirror_uris=$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources || true; } | awk '{for (i = 2; i <= NF; i++) print $i}'
  { grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true; } | awk '{print ($2 ~ /^\[/) ? $3 : $2}'
)
mirror=$(grep -E '/debian/?$' <<<"$mirror_uris" | head -1 || true)
security=$(grep -E '/debian-security/?$' <<<"$mirror_uris" | head -1 || true)
if [ -z "$mirror" ]; then
  echo "FATAL: no Debian mirror in /etc/apt/sources.list*; mmdebstrap needs the one apt uses" >&2
  exit 1
fi
sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main")
[ -z "$security" ] || sources+=("deb $security bookworm-security main")

# 3. The cache, under one lock for the whole run (a second run waits): the runs share the roots, and
# the lock lets this one remove what other keys left.
cache=${KBOUND_TEST_CI_ROOT_CACHE:-/var/cache/kbound-test-ci-root}
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -n 9 || { echo "waiting for $cache/.lock (another run of this test)"; flock 9; }

base_packages=$(cat "$out/base-packages")
mmdebstrap_opts=(--mode=root --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --dpkgopt=force-unsafe-io --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --skip=cleanup/apt/lists)
key=$(printf '%s\n' "$base_packages" "${sources[@]}" "${mmdebstrap_opts[@]}" "$(mmdebstrap --version)" |
  sha256sum | cut -c1-16)
base=$cache/$key
for old in "$cache"/* "$cache"/.build-*; do
  [ -e "$old" ] && [ "$old" != "$base" ] && { echo "removing $old (another key's root)"; rm -rf "$old"; }
done
if [ -e "$base/.complete" ]; then
  echo "the root: $base (cached: minbase + $base_packages)"
else
  echo "the root: building $base with mmdebstrap (minbase + $base_packages)"
  t0=$(date +%s)
  work=$(mktemp -d "$cache/.build-XXXXXX")
  # In a mount namespace of its own: the mounts mmdebstrap makes in the root die with it.
  if ! unshare --mount --propagation private -- mmdebstrap --quiet "${mmdebstrap_opts[@]}" \
    --include="${base_packages// /,}" bookworm "$work/root" "${sources[@]}" >"$work/mmdebstrap.log" 2>&1; then
    tail -30 "$work/mmdebstrap.log" >&2
    rm -rf "$work"
    echo "FATAL: mmdebstrap failed" >&2
    exit 1
  fi
  rm -f "$work/mmdebstrap.log"
  mkdir -p "$work/layers"
  touch "$work/.complete"
  mv "$work" "$base"
  echo "  built in $(($(date +%s) - t0)) s ($(du -sh "$base/root" | cut -f1))"
fi

# 4. What goes into each root: this source tree, the driver that runs the steps inside, ci_clone.
if git -C "$KBOUND_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$KBOUND_SOURCE_DIR" ls-files -z --cached --others --exclude-standard |
    tar -cf "$scratch/src.tar" -C "$KBOUND_SOURCE_DIR" --null --ignore-failed-read -T - 2>/dev/null
else
  tar -cf "$scratch/src.tar" -C "$KBOUND_SOURCE_DIR" --exclude='./build*' --exclude=./.git .
fi
mkdir -p "$scratch/ci/bin"
cat >"$scratch/ci/bin/ci_clone" <<'SH'
#!/bin/sh
# ci_clone DEST: this source tree at DEST (what the recipe's `git clone ... DEST` would give).
set -e
mkdir -p "$1"
cp -R /ci/src/. "$1"/
SH
cp "$out/modules" "$scratch/ci/modules"
# The driver, run as root inside the root: `layer` runs the preparation and the install steps only,
# `session` every step that runs, then the checks. A step's result: results/NN.rc ("RC SECONDS").
cat >"$scratch/ci/driver" <<'SH'
#!/bin/bash
set -u
mode=$1
. /ci/session/meta
res=/ci/results
mkdir -p "$res"
# as_user ENVFILE COMMAND...: COMMAND as the session's user, in its working directory, with only
# ENVFILE's variables (one NAME=VALUE a line).
as_user() {
  local envs
  mapfile -t envs <"$1"
  shift
  cd "$session_cwd" || return 1
  if [ "$session_user" = root ]; then
    env -i "${envs[@]}" "$@"
  else
    runuser -u "$session_user" -- env -i "${envs[@]}" "$@"
  fi
}
{
  grep -q " $(cat /proc/sys/kernel/hostname)\$" /etc/hosts || echo "127.0.1.1 $(cat /proc/sys/kernel/hostname)" >>/etc/hosts
  if [ "$session_kind" = github ]; then
    # GitHub's runner: the user `runner`, password-less sudo, RUNNER_TEMP and the workspace.
    id runner >/dev/null 2>&1 || useradd --create-home --shell /bin/bash runner
    if ! [ -x /usr/bin/sudo ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends sudo
    fi
    echo 'runner ALL=(ALL) NOPASSWD:ALL' >/etc/sudoers.d/runner
    chmod 0440 /etc/sudoers.d/runner
    mkdir -p "$session_cwd" /home/runner/work/_temp
    chown -R runner: /home/runner
  else
    mkdir -p "$session_cwd"
  fi
} >"$res/prep.log" 2>&1
rc=$?
echo "$rc" >"$res/prep.rc"
[ "$rc" -eq 0 ] || exit 1
for d in /ci/session/steps/*/; do
  n=$(basename "$d")
  kind=$(cat "$d/kind")
  if [ "$mode" = layer ]; then
    [ -e "$d/install" ] || continue
  else
    [ "$kind" != layer-only ] || continue
  fi
  [ "$(cat "$d/mode")" = run ] || continue
  t0=$(date +%s)
  ( as_user "$d/env" bash -e "$d/script" ) </dev/null >"$res/$n.log" 2>&1
  rc=$?
  echo "$rc $(($(date +%s) - t0))" >"$res/$n.rc"
  [ "$rc" -eq 0 ] || exit 0
done
[ "$mode" = session ] || exit 0
for c in /ci/session/checks/*/; do
  n=$(basename "$c")
  ( as_user /ci/session/env bash -c "$(cat "$c/script")" ) </dev/null >"$res/check-$n.log" 2>&1
  echo $? >"$res/check-$n.rc"
done
SH
# enter MODE LOWERS UPPER: mounts a fresh overlay (LOWERS read-only, writes to UPPER) with its
# /proc, copies the session into it and runs the driver in it by chroot; in a mount and pid
# namespace of its own, so no mount and no process outlives it.
cat >"$scratch/enter" <<'SH'
#!/bin/bash
set -eu
mode=$1 lowers=$2 upper=$3 sess=$4 src=$5 ci=$6
mnt=$upper.mnt work=$upper.work
mkdir -p "$upper" "$mnt" "$work"
mount -t overlay overlay -o "lowerdir=$lowers,upperdir=$upper,workdir=$work" "$mnt"
mount -t proc proc "$mnt/proc"
if [ -d "$mnt/dev/pts" ]; then mount -t devpts -o newinstance,ptmxmode=0666 devpts "$mnt/dev/pts"; fi
cp /etc/resolv.conf "$mnt/etc/resolv.conf"
rm -rf "$mnt/ci"
cp -R "$ci" "$mnt/ci"
cp -R "$sess" "$mnt/ci/session"
if [ "$mode" = session ]; then
  mkdir "$mnt/ci/src"
  tar -xf "$src" -C "$mnt/ci/src" --no-same-owner
fi
chmod -R a+rX "$mnt/ci"
chroot "$mnt" /bin/bash /ci/driver "$mode"
SH
chmod 755 "$scratch/ci/bin/ci_clone" "$scratch/ci/driver" "$scratch/enter"

# 5. The recipes: each in a fresh overlay of the root and its cached layer.
declare -A layer_of
keep_layers=()
for sess in "$out"/sessions/*; do
  n=${sess##*/}
  session_name='' session_kind=''
  . "$sess/meta"
  parent=$(cat "$sess/parent")
  lowers=$base/root
  parent_key=
  if [ -n "$parent" ]; then
    lowers=${layer_of[$parent]}
    parent_key=${lowers%%:*}
    parent_key=${parent_key%/upper}
    parent_key=${parent_key##*/}
  fi
  lkey=$(printf '%s\n' "$key" "$parent_key" "$(cat "$sess/layer-digest")" | sha256sum | cut -c1-16)
  layer=$base/layers/$lkey
  keep_layers+=("$lkey")
  echo "recipe $n: $session_name"
  echo "  packages: $(cat "$sess/packages")"
  if ! [ -e "$layer/.complete" ]; then
    t0=$(date +%s)
    rm -rf "$layer.build"
    mkdir -p "$layer.build"
    unshare --mount --propagation private --pid --fork -- \
      "$scratch/enter" layer "$lowers" "$layer.build/upper" "$sess" "$scratch/src.tar" "$scratch/ci" || true
    good=1
    for rc in "$layer.build/upper/ci/results"/*.rc; do
      [ -e "$rc" ] && [ "$(cut -d' ' -f1 "$rc")" = 0 ] || good=0
    done
    [ -e "$layer.build/upper/ci/results/prep.rc" ] || good=0
    if [ "$good" = 1 ]; then
      rm -rf "$layer.build/upper/ci" "$layer.build/upper.mnt" "$layer.build/upper.work" "$layer.build/upper/tmp/"*
      find "$layer.build/upper/var/cache/apt/archives" -name '*.deb' -delete 2>/dev/null || true
      touch "$layer.build/.complete"
      rm -rf "$layer"
      mv "$layer.build" "$layer"
      echo "  its layer: built in $(($(date +%s) - t0)) s ($(du -sh "$layer/upper" | cut -f1))"
    else
      # The session below runs the same install steps and reports what failed.
      echo "  its layer: the install steps failed; the recipe runs on the root alone"
      tail -5 "$layer.build/upper/ci/results"/*.log 2>/dev/null || true
      rm -rf "$layer.build"
      layer=
    fi
  else
    echo "  its layer: cached ($layer)"
  fi
  if [ -n "$layer" ]; then layer_of[$n]=$layer/upper:$lowers; else layer_of[$n]=$lowers; fi

  t0=$(date +%s)
  upper=$scratch/session-$n/upper
  unshare --mount --propagation private --pid --fork -- \
    "$scratch/enter" session "${layer_of[$n]}" "$upper" "$sess" "$scratch/src.tar" "$scratch/ci" || true
  res=$upper/ci/results
  ok "recipe $n: the root is prepared (the $session_kind runner's user and working directory)" \
    [ "$(cat "$res/prep.rc" 2>/dev/null)" = 0 ]
  [ "$(cat "$res/prep.rc" 2>/dev/null)" = 0 ] || tail -20 "$res/prep.log" >&2 || true
  for step in "$sess"/steps/*; do
    s=${step##*/}
    kind=$(cat "$step/kind")
    [ "$kind" != layer-only ] || continue
    name=$(cat "$step/name")
    mode=$(cat "$step/mode")
    if [ "$mode" != run ]; then
      echo "  $mode: '$name'"
      continue
    fi
    while read -r sub; do echo "  substituted in '$name': $sub"; done <"$step/subs"
    what="recipe $n: step '$name' ran as written"
    [ "$kind" = doc ] || what="recipe $n: the test's step '$name' ran"
    if [ -e "$res/$s.rc" ]; then
      read -r rc secs <"$res/$s.rc"
      ok "$what (exit $rc, $secs s)" [ "$rc" = 0 ]
      [ "$rc" = 0 ] || { echo "  --- its output, last lines:" >&2; tail -40 "$res/$s.log" >&2; }
    else
      ok "$what (not reached)" false
    fi
  done
  for c in "$sess"/checks/*; do
    name=$(cat "$c/name")
    if [ -e "$res/check-${c##*/}.rc" ]; then
      ok "recipe $n: $name" [ "$(cat "$res/check-${c##*/}.rc")" = 0 ]
      [ "$(cat "$res/check-${c##*/}.rc")" = 0 ] || tail -20 "$res/check-${c##*/}.log" >&2
    else
      ok "recipe $n: $name (not reached)" false
    fi
  done
  echo "  recipe $n took $(($(date +%s) - t0)) s"
  rm -rf "$scratch/session-$n"
done

# Layers no recipe of this page uses any more.
for old in "$base"/layers/*; do
  [ -e "$old" ] || continue
  keep=0
  for k in "${keep_layers[@]}"; do [ "${old##*/}" = "$k" ] && keep=1; done
  [ "$keep" = 1 ] || { echo "removing $old (a layer of an older recipe)"; rm -rf "$old"; }
done
echo "test_ci_recipe took $(($(date +%s) - started)) s"
finish
