/* test_report.c: verdict, claims and summary rules; human, JSON and JUnit renderings; atomic write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "kbound/report.h"
#include "base/cleanup.h"

extern char **environ;

static const char *const all_check_ids[] = {
        "sandbox.backend",        "sandbox.privileges",     "sandbox.session",
        "sandbox.attack_surface", "identity.pid2",          "identity.pidfd",
        "boundary.descriptors",   "boundary.write_outside", "boundary.workspace_writable",
        "boundary.network",       "boundary.sockets",       "boundary.credentials",
        "boundary.cross_team",    "interrupt.control",      "interrupt.pidfd",
        "persistence.namespace",  "lifecycle.shutdown",
};
#define N_CHECKS KB_ELEMENTSOF(all_check_ids)

/* ---- building run objects ---- */

static json_object *new_check(const char *id, const char *status, const char *detail, int ms) {
        json_object *check = json_object_new_object();
        json_object_object_add(check, "id", json_object_new_string(id));
        json_object_object_add(check, "status", json_object_new_string(status));
        json_object_object_add(check, "detail", detail ? json_object_new_string(detail) : NULL);
        json_object_object_add(check, "duration_ms", json_object_new_int(ms));
        json_object_object_add(check, "evidence", json_object_new_object());
        return check;
}

static json_object *new_kernel(const char *name, const char *language, const char *impl, const char *version) {
        json_object *kernel = json_object_new_object();
        char team[64];
        snprintf(team, sizeof(team), "kbound-%s", name);
        json_object_object_add(kernel, "name", json_object_new_string(name));
        json_object_object_add(kernel, "language", json_object_new_string(language));
        json_object_object_add(kernel, "team", json_object_new_string(team));
        json_object_object_add(kernel, "startup_ms", json_object_new_int(812));
        json_object *info = json_object_new_object();
        json_object_object_add(info, "implementation", json_object_new_string(impl));
        json_object_object_add(info, "implementation_version", json_object_new_string(version));
        json_object_object_add(kernel, "kernel_info", info);
        json_object_object_add(kernel, "error", NULL);
        json_object *checks = json_object_new_array();
        for (size_t i = 0; i < N_CHECKS; i++)
                json_object_array_add(checks, new_check(all_check_ids[i], "pass", "ok", 35));
        json_object_object_add(kernel, "checks", checks);
        return kernel;
}

/* A complete all-pass run of python3 and ir, override off. */
static json_object *new_run(void) {
        json_object *run = json_object_new_object();
        json_object_object_add(run, "kbound_version", json_object_new_string("0.1.0"));
        json_object_object_add(run, "duration_ms", json_object_new_int(8123));
        json_object_object_add(run, "complete", json_object_new_boolean(true));
        json_object_object_add(run, "incomplete_reason", NULL);
        json_object *claims = json_object_new_object();
        json_object_object_add(claims, "raw_network_override", json_object_new_boolean(false));
        json_object_object_add(run, "claims", claims);
        json_object *sandbox = json_object_new_object();
        json_object_object_add(sandbox, "backend", json_object_new_string("bubblewrap"));
        json_object_object_add(sandbox, "bwrap", json_object_new_string("/usr/bin/bwrap"));
        json_object_object_add(sandbox, "bwrap_version", json_object_new_string("0.8.0"));
        json_object_object_add(run, "sandbox", sandbox);
        json_object *kernels = json_object_new_array();
        json_object_array_add(kernels, new_kernel("python3", "python", "ipython", "8.5.0"));
        json_object_array_add(kernels, new_kernel("ir", "R", "IRkernel", "1.3.2"));
        json_object_object_add(run, "kernels", kernels);
        return run;
}

static json_object *kernel_at(json_object *run, size_t i) {
        json_object *kernels = NULL;
        assert_true(json_object_object_get_ex(run, "kernels", &kernels));
        return json_object_array_get_idx(kernels, i);
}

static json_object *kernel_checks(json_object *run, size_t k) {
        json_object *checks = NULL;
        assert_true(json_object_object_get_ex(kernel_at(run, k), "checks", &checks));
        return checks;
}

static void set_check(json_object *run, size_t k, const char *id, const char *status, const char *detail) {
        json_object *checks = kernel_checks(run, k);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *check = json_object_array_get_idx(checks, i), *v = NULL;
                json_object_object_get_ex(check, "id", &v);
                if (strcmp(json_object_get_string(v), id) == 0) {
                        json_object_object_add(check, "status", json_object_new_string(status));
                        json_object_object_add(check, "detail", detail ? json_object_new_string(detail) : NULL);
                        return;
                }
        }
        fail_msg("no check %s", id);
}

static void remove_check(json_object *run, size_t k, const char *id) {
        json_object *checks = kernel_checks(run, k);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *v = NULL;
                json_object_object_get_ex(json_object_array_get_idx(checks, i), "id", &v);
                if (strcmp(json_object_get_string(v), id) == 0) {
                        assert_int_equal(json_object_array_del_idx(checks, i, 1), 0);
                        return;
                }
        }
        fail_msg("no check %s", id);
}

static void set_override(json_object *run, bool on) {
        json_object *claims = NULL;
        assert_true(json_object_object_get_ex(run, "claims", &claims));
        json_object_object_add(claims, "raw_network_override", json_object_new_boolean(on));
}

static const char *claim_str(json_object *run, const char *key) {
        json_object *claims = NULL, *v = NULL;
        assert_true(json_object_object_get_ex(run, "claims", &claims));
        assert_true(json_object_object_get_ex(claims, key, &v));
        assert_true(json_object_is_type(v, json_type_string));
        return json_object_get_string(v);
}

static bool claim_full(json_object *run) {
        json_object *claims = NULL, *v = NULL;
        assert_true(json_object_object_get_ex(run, "claims", &claims));
        assert_true(json_object_object_get_ex(claims, "full_boundary", &v));
        assert_true(json_object_is_type(v, json_type_boolean));
        return json_object_get_boolean(v);
}

static const char *verdict(json_object *run) {
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(run, "verdict", &v));
        return json_object_get_string(v);
}

static void assert_contains(const char *haystack, const char *needle) {
        if (!strstr(haystack, needle))
                fail_msg("expected \"%s\" in:\n%s", needle, haystack);
}

static void assert_lacks(const char *haystack, const char *needle) {
        if (strcasestr(haystack, needle))
                fail_msg("did not expect \"%s\" in:\n%s", needle, haystack);
}

static size_t count_of(const char *haystack, const char *needle) {
        size_t n = 0;
        for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* Where open_memstream keeps its buffer pointer and size. On the heap, not on the stack: the
 * stream holds the address of the pointer until fclose, and gcc 12 at -O2 cannot tell that the
 * pointer returned afterwards is not that stack address (-Wdangling-pointer). */
typedef struct memout {
        char *text;
        size_t size;
} memout;

/* Renders into a malloc'd string (open_memstream: no files, no sockets). */
static char *render(int (*fn)(json_object *, FILE *), json_object *run) {
        memout *m = calloc(1, sizeof(*m));
        assert_non_null(m);
        FILE *out = open_memstream(&m->text, &m->size);
        assert_non_null(out);
        assert_int_equal(fn(run, out), 0);
        assert_int_equal(fclose(out), 0);
        char *text = m->text;
        free(m);
        return text;
}

/* ---- verdict and claims ---- */

static void test_all_pass_is_full_boundary(void **state) {
        _cleanup_json_ json_object *run = new_run();
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(verdict(run), "pass");
        assert_string_equal(claim_str(run, "network"), "claimed");
        assert_true(claim_full(run));
        const char *summary = claim_str(run, "summary");
        assert_string_equal(summary, "PASS: full boundary held for python3, ir (descriptors, write outside, workspace, "
                                     "network, host sockets, credentials, cross-team); sandbox, identity, interrupt, "
                                     "persistence and lifecycle checks passed.");
}

static void test_explained_unsupported_keeps_pass(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 1, "interrupt.control", "unsupported", "IRkernel ignores interrupt_request");
        assert_int_equal(kb_report_finish(run), 0);
        assert_true(claim_full(run));
        const char *summary = claim_str(run, "summary");
        assert_contains(summary, "PASS: full boundary held for python3, ir");
        assert_contains(summary, "checks passed where supported");
        assert_contains(summary, "not tested: ir interrupt.control (unsupported)");
}

/* DESIGN.md: only *explained* unsupported/not_claimed keep the exit code 0. */
static void test_unexplained_skip_fails(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 1, "interrupt.control", "unsupported", NULL);
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(verdict(run), "fail");
        assert_false(claim_full(run));
        assert_string_equal(claim_str(run, "summary"),
                            "FAIL: ir interrupt.control (unsupported without a reason) failed.");
}

static void test_failures_are_named(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 0, "boundary.network", "fail", "connected to canary 127.0.0.1:4242");
        set_check(run, 1, "interrupt.pidfd", "fail", "kernel kept running");
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(verdict(run), "fail");
        assert_false(claim_full(run));
        /* Network was tested (and failed): it was claimed, and the claim did not hold. */
        assert_string_equal(claim_str(run, "network"), "claimed");
        assert_string_equal(claim_str(run, "summary"), "FAIL: python3 boundary.network, ir interrupt.pidfd failed.");
}

static void test_unknown_status_fails(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 0, "identity.pid2", "passed", "typo in status");
        assert_int_equal(kb_report_finish(run), 1);
        assert_contains(claim_str(run, "summary"), "python3 identity.pid2 (no valid status)");
}

static void test_override_never_reads_full_boundary(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_override(run, true);
        set_check(run, 0, "boundary.network", "not_claimed", "raw-network override");
        set_check(run, 1, "boundary.network", "not_claimed", "raw-network override");
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(verdict(run), "pass");
        assert_string_equal(claim_str(run, "network"), "not_claimed");
        assert_false(claim_full(run));
        const char *summary = claim_str(run, "summary");
        assert_string_equal(summary,
                            "PASS WITHOUT NETWORK CLAIM: network isolation was NOT claimed (raw-network "
                            "override); sandbox, identity, interrupt, persistence and lifecycle checks passed for "
                            "python3, ir; other boundaries held: descriptors, write outside, workspace, host "
                            "sockets, credentials, cross-team.");
        assert_lacks(summary, "full boundary");
}

/* The override alone withdraws the claim, even if a network probe happened to pass. */
static void test_override_with_passing_network(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_override(run, true);
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(claim_str(run, "network"), "not_claimed");
        assert_false(claim_full(run));
        assert_contains(claim_str(run, "summary"), "NOT claimed");
        assert_lacks(claim_str(run, "summary"), "full boundary");
}

static void test_network_not_claimed_without_override(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 0, "boundary.network", "not_claimed", "operator asked");
        remove_check(run, 1, "boundary.network");
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(claim_str(run, "network"), "not_claimed");
        assert_false(claim_full(run));
        const char *summary = claim_str(run, "summary");
        assert_contains(summary, "network isolation was NOT claimed (boundary.network not claimed for python3, not "
                                 "run for ir)");
        assert_lacks(summary, "full boundary");
}

/* A kernel named to smuggle the phrase in still cannot make an override run read as full. */
static void test_hostile_name_cannot_claim_full_boundary(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object_object_add(kernel_at(run, 0), "name", json_object_new_string("FULL BOUNDARY"));
        set_override(run, true);
        assert_int_equal(kb_report_finish(run), 0);
        assert_contains(claim_str(run, "summary"), "NOT claimed");
        assert_lacks(claim_str(run, "summary"), "full boundary");
}

/* Claims that cannot show the override was off are read as "override on". */
static void test_missing_override_is_not_claimed(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object_object_add(run, "claims", json_object_new_string("garbage"));
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(claim_str(run, "network"), "not_claimed");
        assert_false(claim_full(run));
}

static void test_missing_boundary_is_partial(void **state) {
        _cleanup_json_ json_object *run = new_run();
        remove_check(run, 1, "boundary.cross_team");
        set_check(run, 0, "boundary.credentials", "unsupported", "no credential store");
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(claim_str(run, "network"), "claimed");
        assert_false(claim_full(run));
        const char *summary = claim_str(run, "summary");
        assert_contains(summary, "PASS WITH PARTIAL BOUNDARY");
        assert_contains(summary, "other boundaries held: descriptors, write outside, workspace, host sockets;");
        assert_contains(summary, "boundaries not established: python3 boundary.credentials (unsupported), ir "
                                 "boundary.cross_team (not run)");
        assert_lacks(summary, "full boundary");
}

/* A claim is only as wide as what was planted: a boundary check that passed without one of its
 * canaries (its evidence's not_tested) held in part, and the run reads as no full boundary, naming
 * what was not tested, in the summary and the JUnit file; the exit code stays 0. */
static void test_not_tested_is_partial(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object *checks = kernel_checks(run, 0), *credentials = NULL;
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *v = NULL, *c = json_object_array_get_idx(checks, i);
                json_object_object_get_ex(c, "id", &v);
                if (strcmp(json_object_get_string(v), "boundary.credentials") == 0)
                        credentials = c;
        }
        assert_non_null(credentials);
        json_object *evidence = NULL, *list = json_object_new_array();
        json_object_array_add(list, json_object_new_string("not tested: credential canary in the user's home (HOME "
                                                           "is not set)"));
        assert_true(json_object_object_get_ex(credentials, "evidence", &evidence));
        json_object_object_add(evidence, "not_tested", list);
        /* an empty list is everything tested */
        json_object *ir_checks = kernel_checks(run, 1);
        for (size_t i = 0; i < json_object_array_length(ir_checks); i++)
                if (json_object_object_get_ex(json_object_array_get_idx(ir_checks, i), "evidence", &evidence))
                        json_object_object_add(evidence, "not_tested", json_object_new_array());
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(verdict(run), "pass");
        assert_string_equal(claim_str(run, "network"), "claimed");
        assert_false(claim_full(run));
        const char *summary = claim_str(run, "summary");
        assert_contains(summary, "PASS WITH PARTIAL BOUNDARY: network isolation held, but not every boundary check "
                                 "was claimed, tested in full and passed");
        assert_contains(summary, "other boundaries held: descriptors, write outside, workspace, host sockets, "
                                 "cross-team; boundaries held in part: python3 boundary.credentials (not tested: "
                                 "credential canary in the user's home (HOME is not set))");
        assert_lacks(summary, "boundaries not established");
        assert_lacks(summary, "full boundary");
        _cleanup_free_ char *xml = render(kb_report_junit, run);
        assert_contains(xml, "<system-out>not tested: credential canary in the user&apos;s home (HOME is not "
                             "set)</system-out>");
        assert_contains(xml, "<property name=\"full_boundary\" value=\"false\"/>");
        _cleanup_free_ char *md = render(kb_report_markdown, run);
        assert_contains(md, "| python3 | boundary\\.credentials | ⚠️ PASS | ");
        assert_contains(md, "| python3 | boundary\\.cross\\_team | ✅ PASS | ");

        /* The same check failing: the fail sentence names what it did not test too. */
        set_check(run, 0, "boundary.credentials", "fail", "a secret in the environment");
        assert_int_equal(kb_report_finish(run), 1);
        assert_contains(claim_str(run, "summary"),
                        "python3 boundary.credentials failed; not tested in full: python3 boundary.credentials "
                        "(not tested: credential canary in the user's home (HOME is not set)).");
}

/* A part of a claim not proven is the same rule for every check (issue 35, item 6): a passing
 * boundary.sockets that names a socket it could not place, or a sandbox.attack_surface with a call
 * left allowed, holds in part, and the summary names the part instead of a full boundary. */
static void test_not_claimed_part_is_partial(void **state) {
        static const struct {
                const char *id, *part;
        } parts[] = {
                {"boundary.sockets", "not claimed: 1 socket on filesystems the sandbox mounts whose files the host "
                                     "could not find (removed or moved to another folder since bound, a relative "
                                     "name, another user's): first /run/d.sock, socket:[5005], held by pid 7 (d)"},
                {"sandbox.attack_surface", "not claimed: keyctl (left allowed by --allow-syscall)"},
        };
        (void) state;
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
                _cleanup_json_ json_object *run = new_run();
                json_object *checks = kernel_checks(run, 1), *found = NULL;
                for (size_t i = 0; i < json_object_array_length(checks); i++) {
                        json_object *v = NULL, *c = json_object_array_get_idx(checks, i);
                        json_object_object_get_ex(c, "id", &v);
                        if (strcmp(json_object_get_string(v), parts[p].id) == 0)
                                found = c;
                }
                assert_non_null(found);
                json_object *evidence = NULL, *list = json_object_new_array();
                json_object_array_add(list, json_object_new_string(parts[p].part));
                if (!json_object_object_get_ex(found, "evidence", &evidence)) {
                        evidence = json_object_new_object();
                        json_object_object_add(found, "evidence", evidence);
                }
                json_object_object_add(evidence, "not_tested", list);
                assert_int_equal(kb_report_finish(run), 0);
                assert_string_equal(verdict(run), "pass");
                assert_false(claim_full(run));
                const char *summary = claim_str(run, "summary");
                assert_lacks(summary, "full boundary");
                assert_contains(summary, "PASS WITH PARTIAL BOUNDARY: ");
                char named[512];
                /* the part's first words: the summary cuts a long one */
                snprintf(named, sizeof named, "held in part: ir %s (%.30s", parts[p].id, parts[p].part);
                assert_contains(summary, named);
        }
}

static void test_incomplete_run_fails(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object_object_add(run, "complete", json_object_new_boolean(false));
        json_object_object_add(run, "incomplete_reason", json_object_new_string("interrupted by signal 15"));
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(verdict(run), "fail");
        assert_false(claim_full(run));
        assert_string_equal(claim_str(run, "summary"), "FAIL: incomplete run (interrupted by signal 15).");

        /* "complete" must be a real true, not something truthy. */
        json_object_object_add(run, "complete", json_object_new_string("true"));
        json_object_object_del(run, "incomplete_reason");
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(claim_str(run, "summary"), "FAIL: incomplete run (completion not recorded).");
}

static void test_kernel_error_fails(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object *ir = kernel_at(run, 1);
        json_object_object_add(ir, "error", json_object_new_string("bwrap: No permissions to create new namespace"));
        json_object *checks = json_object_new_array();
        json_object_array_add(checks, new_check("sandbox.backend", "fail", "user namespaces refused", 3));
        json_object_object_add(ir, "checks", checks);
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(claim_str(run, "summary"),
                            "FAIL: ir could not be checked (bwrap: No permissions to create new namespace); ir "
                            "sandbox.backend failed.");

        /* An error alone fails even when every check it has passed. */
        json_object_object_add(ir, "checks", json_object_new_array());
        json_object_array_add(checks = json_object_new_array(), new_check("sandbox.backend", "pass", "ok", 3));
        json_object_object_add(ir, "checks", checks);
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(verdict(run), "fail");
}

static void test_nothing_checked_fails(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object_object_add(kernel_at(run, 1), "checks", json_object_new_array());
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(claim_str(run, "summary"), "FAIL: ir ran no checks.");

        json_object_object_add(run, "kernels", json_object_new_array());
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(claim_str(run, "network"), "not_claimed");
        assert_string_equal(claim_str(run, "summary"), "FAIL: no kernel was checked.");
}

static void test_finish_is_idempotent(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 1, "interrupt.control", "unsupported", "IRkernel ignores interrupt_request");
        assert_int_equal(kb_report_finish(run), 0);
        _cleanup_free_ char *first = strdup(claim_str(run, "summary"));
        assert_int_equal(kb_report_finish(run), 0);
        assert_string_equal(first, claim_str(run, "summary"));
}

/* Partial and wrongly typed objects: every entry point survives and fails closed. */
static void test_partial_objects_never_crash(void **state) {
        static const char *const docs[] = {
                "{}",
                "[]",
                "42",
                "{\"complete\": true, \"kernels\": \"x\", \"claims\": 3, \"sandbox\": 3}",
                "{\"complete\": true, \"claims\": {\"raw_network_override\": false},"
                " \"kernels\": [1, null, {\"checks\": \"x\", \"name\": 7},"
                " {\"name\": \"k\", \"error\": 5, \"startup_ms\": -3, \"kernel_info\": []},"
                " {\"name\": \"j\", \"checks\": [1, null, {\"id\": 5, \"status\": []}, {\"status\": \"pass\"},"
                "   {\"id\": \"x.y\", \"status\": \"pass\", \"duration_ms\": \"12\", \"detail\": {}}]}]}",
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(docs); i++) {
                _cleanup_json_ json_object *run = json_tokener_parse(docs[i]);
                assert_non_null(run);
                assert_int_equal(kb_report_finish(run), 1);
                _cleanup_free_ char *human = render(kb_report_human, run);
                _cleanup_free_ char *json = render(kb_report_json, run);
                _cleanup_free_ char *junit = render(kb_report_junit, run);
                assert_contains(junit, "</testsuites>\n");
                assert_true(strlen(json) > 1 && json[strlen(json) - 1] == '\n');
                assert_contains(junit, "<failure ");
                if (json_object_is_type(run, json_type_object))
                        assert_contains(human, "FAIL: ");
        }
        assert_int_equal(kb_report_finish(NULL), 1);
        _cleanup_free_ char *human = render(kb_report_human, NULL);
        assert_string_equal(human, "verdict: ?\n");
        assert_int_equal(kb_report_human(NULL, NULL), -EINVAL);

        /* Missing strings print as "?". */
        _cleanup_json_ json_object *run =
                json_tokener_parse("{\"complete\": true, \"kernels\": [{\"checks\": [{\"status\": \"pass\"}]}]}");
        _cleanup_free_ char *text = render(kb_report_human, run);
        assert_contains(text, "kernel ?: language ?, team ?, startup ? ms, implementation ? ?\n");
        assert_contains(text, "PASS         ?  ?  ?\n");
}

/* ---- human ---- */

static void test_human_one_line_per_check(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 1, "interrupt.control", "unsupported", "IRkernel ignores\ninterrupt_request \x1b[31m");
        set_check(run, 0, "boundary.network", "fail", "reached canary");
        set_check(run, 0, "identity.pid2", "not_claimed", "not asked");
        json_object_object_add(kernel_at(run, 1), "error", json_object_new_string("late error"));
        kb_report_finish(run);
        _cleanup_free_ char *text = render(kb_report_human, run);

        size_t lines = 0, pass = 0, fail = 0, unsupported = 0, not_claimed = 0;
        for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
                assert_non_null(strchr(line, '\n'));
                lines++;
                pass += strncmp(line, "PASS         ", 13) == 0;
                fail += strncmp(line, "FAIL         ", 13) == 0;
                unsupported += strncmp(line, "UNSUPPORTED  ", 13) == 0;
                not_claimed += strncmp(line, "NOT CLAIMED  ", 13) == 0;
        }
        assert_int_equal(pass + fail + unsupported + not_claimed, 2 * N_CHECKS);
        assert_int_equal(fail, 1);
        assert_int_equal(unsupported, 1);
        assert_int_equal(not_claimed, 1);
        /* sandbox and root lines + 2 headers + 1 error + checks + verdict sentence */
        assert_int_equal(lines, 2 + 2 + 1 + 2 * N_CHECKS + 1);

        assert_contains(text, "sandbox: bubblewrap 0.8.0 (/usr/bin/bwrap)\n");
        assert_contains(text, "root:    the host's system paths (read-only)\n");
        assert_contains(text, "kernel python3: language python, team kbound-python3, startup 812 ms, "
                              "implementation ipython 8.5.0\n");
        assert_contains(text, "kernel ir: language R, team kbound-ir, startup 812 ms, implementation IRkernel 1.3.2\n");
        assert_contains(text, "  error: late error\n");
        assert_contains(text, "FAIL         python3  boundary.network             reached canary\n");
        assert_contains(
                text, "UNSUPPORTED  ir       interrupt.control            IRkernel ignores interrupt_request ?[31m\n");
        assert_null(strchr(text, '\x1b'));

        /* The last line is the verdict sentence. */
        const char *summary = claim_str(run, "summary");
        size_t len = strlen(text), slen = strlen(summary);
        assert_true(len > slen + 1);
        assert_memory_equal(text + len - slen - 1, summary, slen);
        assert_contains(summary, "FAIL: ");
}

static void assert_junit_well_formed(const char *xml, const char *expected_message);

/* The columns a line takes on a terminal, counted as a terminal does for this test's text (ASCII,
 * and the two-column characters it plants), escape sequences not counted. */
static size_t line_columns(const char *line, size_t len) {
        size_t cols = 0;
        for (size_t i = 0; i < len;) {
                unsigned char c = (unsigned char) line[i];
                if (c == 0x1b) {
                        while (i < len && line[i] != 'm')
                                i++;
                        i++;
                        continue;
                }
                size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
                cols += n >= 3 ? 2 : 1;
                i += n;
        }
        return cols;
}

/* As render(): the stream's buffer pointer on the heap (gcc 12 -O2 takes a stack one, which the
 * stream keeps, for a dangling pointer). */
static char *render_styled(json_object *run, const kb_report_style *st) {
        memout *m = calloc(1, sizeof(*m));
        assert_non_null(m);
        FILE *out = open_memstream(&m->text, &m->size);
        assert_non_null(out);
        assert_int_equal(kb_report_human_styled(run, out, st), 0);
        assert_int_equal(fclose(out), 0);
        char *text = m->text;
        free(m);
        return text;
}

/* Fitted to a terminal: no line wider than it at any width, a failing detail whole (wrapped), a
 * pass cut with the hint after the verdict, colour only when asked and only around kbound's words. */
static void test_human_fits_the_terminal(void **state) {
        _cleanup_json_ json_object *run = new_run();
        char long_fail[700], long_pass[700];
        snprintf(long_fail, sizeof long_fail, "%s", "the cell reached the canary at 127.0.0.1:4242 ");
        while (strlen(long_fail) < 330)
                strcat(long_fail, "and again through another path ");
        strcat(long_fail, "END-OF-FAIL");
        snprintf(long_pass, sizeof long_pass, "%s", "every descriptor is the sandbox's own ");
        while (strlen(long_pass) < 300)
                strcat(long_pass, "and more descriptors ");
        strcat(long_pass, "END-OF-PASS");
        set_check(run, 0, "boundary.network", "fail", long_fail);
        set_check(run, 0, "boundary.descriptors", "pass", long_pass);
        set_check(run, 1, "interrupt.control", "unsupported",
                  "IRkernel ignores interrupt_request 漢字漢字漢字漢字漢字");
        kb_report_finish(run);

        static const size_t widths[] = {20, 40, 60, 80, 132};
        for (size_t w = 0; w < KB_ELEMENTSOF(widths); w++) {
                kb_report_style st = {.width = widths[w], .cut_hint = "(cut: --verbose shows it whole)"};
                _cleanup_free_ char *text = render_styled(run, &st);
                for (const char *line = text; *line;) {
                        const char *end = strchr(line, '\n');
                        assert_non_null(end);
                        if (line_columns(line, (size_t) (end - line)) > widths[w])
                                fail_msg("a line wider than %zu: %.*s", widths[w], (int) (end - line), line);
                        line = end + 1;
                }
                /* The failing detail is whole (its last word is there, split over lines); the pass
                 * is cut, and the hint says so. */
                assert_contains(text, "END-OF-FAIL");
                assert_null(strstr(text, "END-OF-PASS"));
                assert_contains(text, "(cut:");
                assert_null(strchr(text, '\x1b'));
                /* Every result once: one row per check. */
                assert_int_equal(count_of(text, "PASS  "), 2 * N_CHECKS - 2);

                st.whole = true;
                _cleanup_free_ char *whole = render_styled(run, &st);
                assert_contains(whole, "END-OF-PASS");
                assert_null(strstr(whole, "(cut: --verbose"));
        }

        /* Colour: kbound's own SGR around the status and the verdict's head, nowhere else. */
        kb_report_style colour = {.width = 80, .color = true};
        _cleanup_free_ char *coloured = render_styled(run, &colour);
        assert_contains(coloured, "\x1b[32mPASS\x1b[0m         python3  sandbox.backend");
        assert_contains(coloured, "\x1b[1;31mFAIL\x1b[0m         python3  boundary.network");
        assert_contains(coloured, "\x1b[33mUNSUPPORTED\x1b[0m  ir");
        assert_contains(coloured, "\x1b[1;31mFAIL:\x1b[0m python3 boundary.network failed.");
        assert_int_equal(count_of(coloured, "\x1b["), 2 * (2 * N_CHECKS + 1));

        /* Piped (width 0): exactly kb_report_human's lines, one per result, whatever their length. */
        kb_report_style piped = {0};
        _cleanup_free_ char *plain = render_styled(run, &piped);
        _cleanup_free_ char *human = render(kb_report_human, run);
        assert_string_equal(plain, human);
        assert_contains(plain, "END-OF-PASS\n");
}

/* A check the run never got to is NOT RUN, named apart from failures in the summary, an <error>
 * in JUnit; it never passes. */
static void test_not_run_is_not_a_failure_nor_a_pass(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 0, "interrupt.pidfd", "fail", "no reply within 10 s");
        set_check(run, 0, "persistence.namespace", "not_run", "not run: the run was cancelled first");
        set_check(run, 0, "lifecycle.shutdown", "not_run", "not run: the run was cancelled first");
        json_object_object_add(run, "complete", json_object_new_boolean(false));
        json_object_object_add(run, "incomplete_reason", json_object_new_string("interrupted by signal 2"));
        assert_int_equal(kb_report_finish(run), 1);
        assert_string_equal(claim_str(run, "summary"),
                            "FAIL: incomplete run (interrupted by signal 2); python3 interrupt.pidfd failed; python3 "
                            "persistence.namespace, python3 lifecycle.shutdown not run.");
        _cleanup_free_ char *text = render(kb_report_human, run);
        assert_contains(text,
                        "NOT RUN      python3  persistence.namespace        not run: the run was cancelled first\n");
        _cleanup_free_ char *xml = render(kb_report_junit, run);
        assert_int_equal(count_of(xml, "<error "), 2);
        assert_int_equal(count_of(xml, "<failure "), 2); /* interrupt.pidfd and run.complete */
        assert_contains(xml, "tests=\"17\" failures=\"1\" errors=\"2\" skipped=\"0\"");
        assert_junit_well_formed(xml, "no reply within 10 s");

        /* Alone, a not_run check still fails a complete run. */
        _cleanup_json_ json_object *one = new_run();
        set_check(one, 1, "lifecycle.shutdown", "not_run", "not run: an earlier step failed");
        assert_int_equal(kb_report_finish(one), 1);
        assert_string_equal(claim_str(one, "summary"), "FAIL: ir lifecycle.shutdown not run.");
}

/* The job summary and the annotations: kernel text never becomes markup or a workflow command. */
static void test_markdown_and_annotations(void **state) {
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 0, "boundary.network", "fail", "x | y <img src=a> [l](http://h/) **b** `c` \n::warning::z 100%");
        json_object *checks = kernel_checks(run, 0);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *id = NULL;
                json_object_object_get_ex(c, "id", &id);
                if (strcmp(json_object_get_string(id), "boundary.network") == 0) {
                        json_object *ev = json_object_new_object();
                        json_object_object_add(ev, "quote", json_object_new_string("````` fence"));
                        json_object_object_add(c, "evidence", ev);
                }
        }
        kb_report_finish(run);
        _cleanup_free_ char *md = render(kb_report_markdown, run);
        assert_contains(md, "## ❌ kbound check: FAIL\n");
        assert_int_equal(count_of(md, "\n| python3 | "), N_CHECKS);
        assert_int_equal(count_of(md, "\n| ir | "), N_CHECKS);
        assert_contains(
                md,
                "| python3 | boundary\\.network | ❌ FAIL | x \\| y &lt;img src\\=a&gt; \\[l\\]\\(http\\:\\/\\/h\\/\\) "
                "\\*\\*b\\*\\* \\`c\\`  \\:\\:warning\\:\\:z 100\\% |\n");
        assert_null(strstr(md, "<img"));
        assert_null(strstr(md, "](http"));
        /* The evidence is fenced by more backticks than it holds. */
        assert_contains(md, "<details><summary>python3 boundary\\.network: ");
        assert_contains(md, "``````json\n");

        _cleanup_free_ char *notes = render(kb_report_github_annotations, run);
        assert_string_equal(notes, "::error title=kbound python3 boundary.network::x | y <img src=a> [l](http://h/) "
                                   "**b** `c`  ::warning::z 100%25\n");

        _cleanup_json_ json_object *green = new_run();
        kb_report_finish(green);
        _cleanup_free_ char *quiet = render(kb_report_github_annotations, green);
        assert_string_equal(quiet, "");
        _cleanup_free_ char *green_md = render(kb_report_markdown, green);
        assert_contains(green_md, "## ✅ kbound check: PASS\n");
        assert_null(strstr(green_md, "What failed"));
}

/* ---- JSON ---- */

static void test_json_is_pretty_and_round_trips(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object_object_add(run, "base_dir", json_object_new_string("/tmp/kbound-x/y"));
        kb_report_finish(run);
        _cleanup_free_ char *text = render(kb_report_json, run);
        size_t len = strlen(text);
        assert_true(len > 2 && text[len - 1] == '\n' && text[len - 2] != '\n');
        assert_contains(text, "\n  \"kbound_version\"");
        assert_contains(text, "\"/tmp/kbound-x/y\"");
        _cleanup_json_ json_object *back = json_tokener_parse(text);
        assert_non_null(back);
        assert_true(json_object_equal(back, run));
}

/* ---- JUnit ---- */

/* Parses the XML with a real parser and checks every count attribute against the elements. */
static const char junit_checker[] =
        "import sys, xml.dom.minidom as m\n"
        "d = m.parse(sys.argv[1]); root = d.documentElement\n"
        "assert root.tagName == 'testsuites' and root.getAttribute('name') == 'kbound'\n"
        "def n(e, t): return len(e.getElementsByTagName(t))\n"
        "assert not root.hasAttribute('skipped')  # junit-10.xsd refuses it there\n"
        "for e in [root] + root.getElementsByTagName('testsuite'):\n"
        "    assert int(e.getAttribute('tests')) == n(e, 'testcase'), e.getAttribute('name')\n"
        "    assert int(e.getAttribute('failures')) == n(e, 'failure'), e.getAttribute('name')\n"
        "    assert int(e.getAttribute('errors')) == n(e, 'error'), e.getAttribute('name')\n"
        "    if e is not root: assert int(e.getAttribute('skipped')) == n(e, 'skipped'), e.getAttribute('name')\n"
        "print(sys.argv[2] in [c.getAttribute('message') for c in d.getElementsByTagName('failure')], end='')\n";

/* Runs junit_checker on xml; also confirms the parser read expected_message back unescaped. */
static void assert_junit_well_formed(const char *xml, const char *expected_message) {
        char dir[] = "/tmp/kb-report-XXXXXX", path[64], result[16] = {0};
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/junit.xml", dir);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(xml, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);

        int pipefd[2];
        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
        char *argv[] = {"python3", "-c", (char *) junit_checker, path, (char *) expected_message, NULL};
        pid_t pid;
        int r = posix_spawnp(&pid, "python3", &actions, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        close(pipefd[1]);
        if (r != 0)
                fail_msg("cannot run python3 to parse the JUnit XML (%s): apt-get install python3", strerror(r));
        ssize_t got = read(pipefd[0], result, sizeof(result) - 1);
        close(pipefd[0]);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        unlink(path);
        rmdir(dir);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fail_msg("JUnit XML rejected by the parser:\n%s", xml);
        assert_true(got > 0);
        assert_string_equal(result, "True");
}

static void test_junit_structure_and_escaping(void **state) {
        static const char hostile[] = "a<b & \"c\" 'd'\x01\x1f"
                                      "e\xff]]>";
        _cleanup_json_ json_object *run = new_run();
        set_check(run, 0, "boundary.network", "fail", hostile);
        json_object *evidence = json_object_new_object();
        json_object_object_add(evidence, "path", json_object_new_string("/etc/<x>"));
        json_object *checks = kernel_checks(run, 0);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *check = json_object_array_get_idx(checks, i), *id = NULL;
                json_object_object_get_ex(check, "id", &id);
                if (strcmp(json_object_get_string(id), "boundary.network") == 0)
                        json_object_object_add(check, "evidence", evidence);
        }
        set_check(run, 1, "interrupt.control", "unsupported", "IRkernel ignores interrupt_request");
        set_check(run, 1, "boundary.network", "not_claimed", "raw-network override");
        json_object *sandbox = NULL;
        json_object_object_get_ex(run, "sandbox", &sandbox);
        json_object_object_add(sandbox, "rootfs", json_object_new_string("/images/a&b"));
        kb_report_finish(run);
        _cleanup_free_ char *xml = render(kb_report_junit, run);
        assert_contains(xml, "<property name=\"rootfs\" value=\"/images/a&amp;b\"/>\n");
        _cleanup_free_ char *text = render(kb_report_human, run);
        assert_contains(text, "root:    image /images/a&b (read-only; kernelspecs found inside it)\n");

        /* An image given with --image is named by its path, tag and manifest digest. */
        json_object *image = json_object_new_object();
        json_object_object_add(image, "path", json_object_new_string("/srv/team<a>.tar"));
        json_object_object_add(image, "tag", json_object_new_string("kbound/test:1"));
        json_object_object_add(image, "format", json_object_new_string("docker-archive"));
        json_object_object_add(image, "manifest_digest", json_object_new_string("sha256:00ff"));
        json_object_object_add(sandbox, "image", image);
        _cleanup_free_ char *image_xml = render(kb_report_junit, run);
        assert_contains(image_xml, "<property name=\"image_path\" value=\"/srv/team&lt;a&gt;.tar\"/>\n");
        assert_contains(image_xml, "<property name=\"image_tag\" value=\"kbound/test:1\"/>\n");
        assert_contains(image_xml, "<property name=\"image_manifest_digest\" value=\"sha256:00ff\"/>\n");
        _cleanup_free_ char *image_text = render(kb_report_human, run);
        assert_contains(image_text, "root:    image /srv/team<a>.tar tag kbound/test:1 (docker-archive, manifest "
                                    "sha256:00ff), unpacked to /images/a&b (read-only; kernelspecs found inside it; "
                                    "removed when kbound ends)\n");
        json_object_object_del(sandbox, "image");

        static const char head[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kbound\" "
                                   "tests=\"34\" failures=\"1\" errors=\"0\" time=\"8.123\">\n";
        assert_memory_equal(xml, head, strlen(head));
        assert_int_equal(count_of(xml, "<testsuite "), 2);
        assert_int_equal(count_of(xml, "<testcase "), 2 * N_CHECKS);
        assert_int_equal(count_of(xml, "<failure "), 1);
        assert_int_equal(count_of(xml, "<skipped "), 2);
        assert_int_equal(count_of(xml, "<properties>"), 2);
        assert_contains(xml, "<testsuite name=\"kbound.python3\" tests=\"17\" failures=\"1\" errors=\"0\" "
                             "skipped=\"0\" time=\"0.595\">");
        assert_contains(xml, "<testcase classname=\"kbound.ir\" name=\"interrupt.control\" time=\"0.035\">");
        assert_contains(xml, "<skipped message=\"unsupported: IRkernel ignores interrupt_request\"/>");
        assert_contains(xml, "<skipped message=\"not_claimed: raw-network override\"/>");
        assert_contains(xml, "<failure message=\"a&lt;b &amp; &quot;c&quot; &apos;d&apos;e?]]&gt;\" "
                             "type=\"boundary.network\">a&lt;b &amp; &quot;c&quot; &apos;d&apos;e?]]&gt;\n{");
        assert_contains(xml, "&quot;/etc/&lt;x&gt;&quot;");
        assert_contains(xml, "<property name=\"raw_network_override\" value=\"false\"/>");
        assert_contains(xml, "<property name=\"summary\" value=\"FAIL: python3 boundary.network failed.\"/>");
        assert_null(strchr(xml, '\x01'));
        assert_null(strchr(xml, '\x1f'));
        assert_null(strchr(xml, '\xff'));
        assert_junit_well_formed(xml, "a<b & \"c\" 'd'e?]]>");
}

static void test_junit_kernel_error_and_incomplete(void **state) {
        _cleanup_json_ json_object *run = new_run();
        json_object_object_add(kernel_at(run, 1), "error", json_object_new_string("kernel 'ir' not found"));
        json_object_object_add(kernel_at(run, 1), "checks", NULL);
        json_object_object_add(run, "complete", json_object_new_boolean(false));
        json_object_object_add(run, "incomplete_reason", json_object_new_string("interrupted by signal 15"));
        set_override(run, true);
        kb_report_finish(run);
        _cleanup_free_ char *xml = render(kb_report_junit, run);

        assert_contains(xml, "<testcase classname=\"kbound.ir\" name=\"kernel.start\" time=\"0.812\">\n"
                             "      <failure message=\"kernel &apos;ir&apos; not found\" type=\"kernel.start\">");
        assert_contains(xml, "<testsuite name=\"kbound.run\" tests=\"1\" failures=\"1\"");
        assert_contains(xml, "<failure message=\"interrupted by signal 15\" type=\"run.complete\">");
        assert_contains(xml, "<property name=\"raw_network_override\" value=\"true\"/>");
        assert_int_equal(count_of(xml, "<testcase "), N_CHECKS + 2);
        assert_int_equal(count_of(xml, "<failure "), 2);
        assert_junit_well_formed(xml, "interrupted by signal 15");

        /* Garbage still yields a document a parser accepts, with consistent counts. */
        _cleanup_json_ json_object *junk = json_tokener_parse("{\"kernels\": [3, {\"name\": \"a\\u0007b\", \"checks\": "
                                                              "[null, {\"id\": \"x\", \"status\": \"what\"}]}]}");
        kb_report_finish(junk);
        _cleanup_free_ char *junk_xml = render(kb_report_junit, junk);
        assert_junit_well_formed(junk_xml, "the run did not complete");
}

/* ---- atomic write ---- */

static size_t dir_entries(const char *dir) {
        DIR *d = opendir(dir);
        size_t n = 0;
        assert_non_null(d);
        for (struct dirent *e = readdir(d); e; e = readdir(d))
                n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
        closedir(d);
        return n;
}

static int render_half_then_fail(json_object *run, FILE *out) {
        fputs("{\"partial\":", out);
        return -EPERM;
}

static char *slurp(const char *path) {
        char *text = NULL;
        if (kb_read_file(AT_FDCWD, path, 0, 1 << 20, &text, NULL) < 0)
                return NULL;
        return text;
}

static void test_write_file_atomic(void **state) {
        char dir[] = "/tmp/kb-report-XXXXXX", path[64], missing[96];
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/report.json", dir);
        _cleanup_json_ json_object *run = new_run();
        kb_report_finish(run);

        assert_int_equal(kb_report_write_file(run, path, kb_report_json), 0);
        _cleanup_free_ char *expected = render(kb_report_json, run);
        _cleanup_free_ char *written = slurp(path);
        assert_non_null(written);
        assert_string_equal(written, expected);
        assert_int_equal(dir_entries(dir), 1);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);

        /* A failing render removes the previous report (an earlier run's verdict must not stand
         * where this run's could not be written) and leaves no temp file behind. */
        assert_int_equal(kb_report_write_file(run, path, render_half_then_fail), -EPERM);
        assert_int_equal(access(path, F_OK), -1);
        assert_int_equal(dir_entries(dir), 0);

        snprintf(missing, sizeof(missing), "%s/no/such/dir/report.xml", dir);
        assert_int_equal(kb_report_write_file(run, missing, kb_report_junit), -ENOENT);
        assert_int_equal(kb_report_write_file(run, NULL, kb_report_junit), -EINVAL);
        assert_int_equal(kb_report_write_file(run, path, NULL), -EINVAL);

        /* Checking a path leaves nothing there; a folder that takes no new file is refused then. */
        assert_int_equal(kb_report_check_path(path, NULL), 0);
        assert_int_equal(dir_entries(dir), 0);
        if (geteuid() == 0)
                assert_int_equal(kb_report_check_path("/proc/version", NULL), -EOPNOTSUPP);
        else
                assert_true(kb_report_check_path("/proc/version", NULL) < 0);

        assert_int_equal(rmdir(dir), 0);
}

/* Reports to things that are not regular files: written in place, never replaced (before this,
 * --json /dev/null as root turned /dev/null into a regular file). */
/* A character device node for the test: a private copy (mknod, as root) so that a regression
 * replaces that rather than the machine's /dev/null; else the real one, which a non-root process
 * cannot replace anyway. */
static const char *char_device(const char *dir, const char *name, unsigned minor, char *buf, size_t size) {
        snprintf(buf, size, "%s/%s", dir, name);
        if (mknod(buf, S_IFCHR | 0666, makedev(1, minor)) == 0)
                return buf;
        snprintf(buf, size, "/dev/%s", name);
        return buf;
}

static void test_write_file_devices_and_fifos(void **state) {
        _cleanup_json_ json_object *run = new_run();
        kb_report_finish(run);
        kb_report_target target = 0;
        struct stat st;
        char dir[] = "/tmp/kb-report-XXXXXX", fifo[64], sock[64], link[64], target_file[64], dangling[64];
        char null_path[64], full_path[64];
        assert_non_null(mkdtemp(dir));

        const char *null_dev = char_device(dir, "null", 3, null_path, sizeof(null_path));
        assert_int_equal(kb_report_check_path(null_dev, &target), 0);
        assert_int_equal(target, KB_REPORT_STREAM);
        assert_int_equal(kb_report_write_file(run, null_dev, kb_report_json), 0);
        assert_int_equal(stat(null_dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        /* The real errno, not EIO: a full device says ENOSPC. */
        const char *full_dev = char_device(dir, "full", 7, full_path, sizeof(full_path));
        assert_int_equal(kb_report_write_file(run, full_dev, kb_report_junit), -ENOSPC);
        assert_int_equal(stat(full_dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
        snprintf(sock, sizeof(sock), "%s/sock", dir);
        snprintf(link, sizeof(link), "%s/link.json", dir);
        snprintf(target_file, sizeof(target_file), "%s/real.json", dir);
        snprintf(dangling, sizeof(dangling), "%s/dangling.json", dir);

        /* A FIFO with nobody reading: refused at once, never waited on, still a FIFO. */
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(kb_report_check_path(fifo, &target), 0);
        assert_int_equal(target, KB_REPORT_STREAM);
        assert_int_equal(kb_report_write_file(run, fifo, kb_report_json), -ENXIO);
        /* With a reader: the reader gets the whole report, and the FIFO stays. */
        _cleanup_free_ char *expected = render(kb_report_json, run);
        int rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        assert_true(rfd >= 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0)
                _exit(kb_report_write_file(run, fifo, kb_report_json) == 0 ? 0 : 1);
        /* The report fits the pipe's buffer (64 KiB): the writer finishes, then we read. */
        int status = 0;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        size_t want = strlen(expected), got = 0;
        assert_true(want < 65536);
        char *buf = calloc(1, want + 1);
        assert_non_null(buf);
        while (got < want) {
                ssize_t n = read(rfd, buf + got, want - got);
                if (n <= 0)
                        break;
                got += (size_t) n;
        }
        assert_string_equal(buf, expected);
        free(buf);
        close(rfd);
        assert_int_equal(stat(fifo, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));

        /* A directory or a socket is no place for a report, and says so before anything is written. */
        assert_int_equal(kb_report_check_path(dir, &target), -EISDIR);
        assert_int_equal(kb_report_write_file(run, dir, kb_report_json), -EISDIR);
        int sfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
        assert_int_equal(bind(sfd, (struct sockaddr *) &addr, sizeof(addr)), 0);
        assert_int_equal(kb_report_check_path(sock, &target), -EINVAL);
        close(sfd);
        assert_int_equal(kb_report_check_path("", &target), -EINVAL);
        assert_int_equal(kb_report_check_path("/no/such/folder/r.json", &target), -ENOENT);

        /* A symlink to a report: the file it names is replaced, the link stays a link. */
        assert_int_equal(kb_report_write_file(run, target_file, kb_report_junit), 0);
        assert_int_equal(symlink("real.json", link), 0);
        assert_int_equal(kb_report_check_path(link, &target), 0);
        assert_int_equal(target, KB_REPORT_REPLACE);
        assert_int_equal(kb_report_write_file(run, link, kb_report_json), 0);
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        _cleanup_free_ char *through = slurp(target_file);
        assert_string_equal(through, expected);
        /* A symlink to nothing is not a new path: refused, the link left alone. */
        assert_int_equal(symlink("nowhere.json", dangling), 0);
        assert_int_equal(kb_report_check_path(dangling, &target), -ENOENT);
        assert_int_equal(kb_report_write_file(run, dangling, kb_report_json), -ENOENT);
        assert_int_equal(lstat(dangling, &st), 0);
        assert_true(S_ISLNK(st.st_mode));

        /* To a descriptor, for "-": the same bytes. */
        int pfd[2];
        assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
        assert_int_equal(kb_report_write_fd(run, pfd[1], kb_report_json), 0);
        close(pfd[1]);
        char piped[8192] = "";
        ssize_t n = read(pfd[0], piped, sizeof(piped) - 1);
        assert_true(n > 0);
        close(pfd[0]);
        assert_string_equal(piped, expected);
        assert_int_equal(kb_report_write_fd(run, -1, kb_report_json), -EINVAL);

        if (strncmp(null_dev, dir, strlen(dir)) == 0)
                unlink(null_dev);
        if (strncmp(full_dev, dir, strlen(dir)) == 0)
                unlink(full_dev);
        unlink(fifo);
        unlink(sock);
        unlink(link);
        unlink(dangling);
        unlink(target_file);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_all_pass_is_full_boundary),
                cmocka_unit_test(test_explained_unsupported_keeps_pass),
                cmocka_unit_test(test_unexplained_skip_fails),
                cmocka_unit_test(test_failures_are_named),
                cmocka_unit_test(test_unknown_status_fails),
                cmocka_unit_test(test_override_never_reads_full_boundary),
                cmocka_unit_test(test_override_with_passing_network),
                cmocka_unit_test(test_network_not_claimed_without_override),
                cmocka_unit_test(test_hostile_name_cannot_claim_full_boundary),
                cmocka_unit_test(test_missing_override_is_not_claimed),
                cmocka_unit_test(test_missing_boundary_is_partial),
                cmocka_unit_test(test_not_tested_is_partial),
                cmocka_unit_test(test_not_claimed_part_is_partial),
                cmocka_unit_test(test_incomplete_run_fails),
                cmocka_unit_test(test_kernel_error_fails),
                cmocka_unit_test(test_nothing_checked_fails),
                cmocka_unit_test(test_finish_is_idempotent),
                cmocka_unit_test(test_partial_objects_never_crash),
                cmocka_unit_test(test_human_one_line_per_check),
                cmocka_unit_test(test_human_fits_the_terminal),
                cmocka_unit_test(test_not_run_is_not_a_failure_nor_a_pass),
                cmocka_unit_test(test_markdown_and_annotations),
                cmocka_unit_test(test_json_is_pretty_and_round_trips),
                cmocka_unit_test(test_junit_structure_and_escaping),
                cmocka_unit_test(test_junit_kernel_error_and_incomplete),
                cmocka_unit_test(test_write_file_atomic),
                cmocka_unit_test(test_write_file_devices_and_fifos),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
