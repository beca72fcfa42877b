/* cmd_doctor.c: `kbound doctor`: can this machine enforce the sandbox `check` starts? Item by item,
 * as lines or (--json) one JSON object. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <kbound/check.h>
#include <kbound/kernelspec.h>
#include <kbound/sandbox.h>
#include "cli.h"

/* An item's further lines start under its words, past "[ OK ] ". */
#define DOCTOR_INDENT 7

/* One line or one JSON item: status "ok", "fail" (required: check cannot pass) or "warn". */
static const char *status_of(bool ok, bool required) {
        return ok ? "ok" : required ? "fail" : "warn";
}

static void say(json_object *items, bool as_json, const char *name, bool ok, bool required, const char *detail,
                const char *check) {
        if (!as_json) {
                /* what check would do without it: fail that check, or not start (exit 3) */
                char what[128] = "";
                if (!ok && required)
                        snprintf(what, sizeof what, " (so check %s%s)", check ? "would fail " : "cannot start: exit 3",
                                 check ? check : "");
                cli_put_line(stdout, DOCTOR_INDENT, "[%s] %s: %s%s",
                             ok         ? " OK "
                             : required ? "FAIL"
                                        : "WARN",
                             name, detail ? detail : "", what);
                return;
        }
        json_object *it = json_object_new_object();
        json_object_object_add(it, "name", json_object_new_string(name));
        json_object_object_add(it, "status", json_object_new_string(status_of(ok, required)));
        json_object_object_add(it, "required", json_object_new_boolean(required));
        json_object_object_add(it, "detail", json_object_new_string(detail ? detail : ""));
        /* what check would do without it: fail that check, or not start (exit 3) */
        json_object_object_add(it, "check", ok ? NULL : json_object_new_string(check ? check : "exit 3"));
        json_object_array_add(items, it);
}

/* The check `check` would fail for an item that is not ok (the limits: sandbox.resources); NULL for
 * the others, without which check does not start at all (exit 3). */
static const char *check_of(const char *item) {
        return strcmp(item, "limits") == 0 ? kb_check_id(KB_CHECK_RESOURCES) : NULL;
}

static json_object *strv_json(char **v) {
        json_object *a = json_object_new_array();
        for (char **p = v; p && *p; p++)
                json_object_array_add(a, json_object_new_string(*p));
        return a;
}

/* The kernelspecs discovery finds (a hint: check names its kernels itself). */
static void kernelspecs(json_object *out, bool as_json) {
        char **dirs = NULL;
        kb_kernelspec **list = NULL;
        size_t broken = 0;
        if (kb_kernelspec_search_path(environ, &dirs) >= 0 && kb_kernelspec_list(dirs, &list, &broken) >= 0) {
                size_t n = 0;
                json_object *specs = json_object_new_array();
                for (kb_kernelspec **s = list; *s; s++, n++) {
                        json_object *spec = json_object_new_object();
                        json_object_object_add(spec, "name", json_object_new_string((*s)->name));
                        json_object_object_add(spec, "language",
                                               json_object_new_string((*s)->language ? (*s)->language : ""));
                        json_object_array_add(specs, spec);
                }
                if (as_json) {
                        json_object_object_add(out, "kernelspecs", specs);
                        json_object_object_add(out, "kernelspecs_broken", json_object_new_int64((int64_t) broken));
                } else {
                        json_object_put(specs);
                        char *line = NULL;
                        size_t size = 0;
                        FILE *m = open_memstream(&line, &size);
                        if (m) {
                                fprintf(m, "[%s] kernelspecs: %zu found", n ? " OK " : "WARN", n);
                                for (kb_kernelspec **s = list; *s; s++)
                                        fprintf(m, "%s%s (%s)", s == list ? ": " : ", ", (*s)->name,
                                                (*s)->language ? (*s)->language : "?");
                                if (broken)
                                        fprintf(m, "; %zu broken kernel.json skipped", broken);
                                if (fclose(m) == 0)
                                        cli_put_line(stdout, DOCTOR_INDENT, "%s", line);
                                free(line);
                        }
                }
                kb_kernelspec_list_free(list);
        }
        kb_strv_free(dirs);
}

/* One item's line: what fmt formats, then each of list after a space, wrapped as every item. */
static void put_list(char **list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_list(char **list, const char *fmt, ...) {
        char *line = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&line, &size);
        if (!m)
                return;
        va_list ap;
        va_start(ap, fmt);
        vfprintf(m, fmt, ap);
        va_end(ap);
        for (char **p = list; p && *p; p++)
                fprintf(m, " %s", *p);
        if (fclose(m) == 0)
                cli_put_line(stdout, DOCTOR_INDENT, "%s", line);
        free(line);
}

/* Folders of runs that are gone (killed: nothing removed them) still hold team folders and
 * canaries; the next run removes them, and says so. */
static void stale_folders(json_object *out, bool as_json, const char *base) {
        char **stale = NULL, **kept = NULL;
        size_t n_stale = cli_base_dirs_scan(base, false, &stale, &kept);
        if (as_json) {
                json_object_object_add(out, "stale_folders", strv_json(stale));
                json_object_object_add(out, "kept_folders", strv_json(kept));
        } else {
                if (n_stale == 0)
                        cli_put_line(stdout, DOCTOR_INDENT, "[ OK ] stale folders: none of yours under %s", base);
                else
                        put_list(stale,
                                 "[WARN] stale folders: %zu under %s, left by kbound runs that did not end "
                                 "cleanly (their team folders and canaries; the next check, run, conformance or "
                                 "console removes them):",
                                 n_stale, base);
                if (kept && *kept)
                        put_list(kept, "[ OK ] kept folders (--keep; remove them when done):");
        }
        kb_strv_free(stale);
        kb_strv_free(kept);
}

int cmd_doctor(int argc, char **argv) {
        static const struct option own[] = {
                {"json", no_argument, NULL, 'j'},
                {},
        };
        static const char *const accepts[] = {"bwrap",   "sandbox-user",  "memory-max", "tasks-max", "tmp-size",
                                              "log-max", "workspace-max", "cpu-max",    "json",      "help",
                                              NULL};
        cli_opts o;
        if (cli_opts_init(&o, "doctor", accepts, own) < 0)
                return KB_EXIT_USAGE;
        bool as_json = false;
        int c;
        while ((c = cli_opts_next(&o, argc, argv, "jh")) != -1) {
                switch (c) {
                case 'j':
                        as_json = true;
                        break;
                case 'h':
                        cli_put_flowed(
                                stdout,
                                "Usage: kbound doctor [--json] [--bwrap PATH] [--sandbox-user NAME] [the limits]\n\n"
                                "Checks, item by item, whether `kbound check` with the same options and the\n"
                                "default limits (or those given: --memory-max, --tasks-max, --tmp-size,\n"
                                "--workspace-max, --log-max, --cpu-max) can pass its sandbox checks here:\n"
                                "the user kernels run as (never root), bubblewrap and what stands in for the\n"
                                "options it lacks, the seccomp filter, the sandbox check starts (started as\n"
                                "that user, its in-memory folders' sizes read from its mount table), the\n"
                                "AppArmor restriction on Ubuntu 24.04+, pidfd support, ipc socket path room,\n"
                                "and kernelspecs; lists the folders runs that did not end cleanly left behind\n"
                                "(the next run removes them). A FAIL line names what check would fail and\n"
                                "the fix. --json prints the same as one JSON object (docs/ci.md).\n"
                                "Exit 0 only if everything required is there, else 3. Lines fit the terminal\n"
                                "(80 columns in a pipe or a file); an item's further lines are indented.\n");
                        return 0;
                default:
                        return KB_EXIT_USAGE;
                }
        }
        kb_sandbox_hardening asked;
        if (cli_hardening("doctor", &o.hardening, false, NULL, &asked))
                return KB_EXIT_USAGE;
        json_object *out = as_json ? json_object_new_object() : NULL;
        json_object *items = as_json ? json_object_new_array() : NULL;
        if (as_json && (!out || !items)) {
                json_object_put(out);
                json_object_put(items);
                cli_error("out of memory");
                return KB_EXIT_ENFORCE;
        }
        bool ok = true;
        char *bwrap = NULL;
        if (kb_sandbox_find_bwrap(o.bwrap, environ, &bwrap) < 0) {
                char detail[512];
                snprintf(detail, sizeof detail,
                         "%s not found; install it (apt-get install bubblewrap) or pass --bwrap PATH",
                         o.bwrap ? o.bwrap : "bubblewrap (bwrap)");
                say(items, as_json, "bwrap", false, true, detail, NULL);
                ok = false;
        }
        const char *base = cli_runtime_parent();
        /* A base name like the real one (kbound-XXXXXX) so the path-length check is honest. */
        char *probe_base = NULL;
        if (asprintf(&probe_base, "%s/kbound-XXXXXX", base) < 0) {
                json_object_put(out);
                json_object_put(items);
                return KB_EXIT_ENFORCE;
        }
        if (bwrap) {
                kb_preflight_item **list = NULL;
                const char *user = o.sandbox_user && *o.sandbox_user ? o.sandbox_user : getenv("KBOUND_SANDBOX_USER");
                /* The trial sandbox binds the syscall probe as check does (none found: none bound,
                 * as check then does too). */
                _cleanup_free_ char *syscall_probe = NULL;
                cli_resolve_syscall_probe(&syscall_probe);
                int r = kb_sandbox_preflight(bwrap, probe_base, user, syscall_probe, &asked.limits, &list);
                if (r < 0) {
                        say(items, as_json, "preflight", false, true, strerror(-r), NULL);
                        ok = false;
                } else {
                        for (kb_preflight_item **it = list; *it; it++) {
                                say(items, as_json, (*it)->name, (*it)->ok, (*it)->required, (*it)->detail,
                                    check_of((*it)->name));
                                if (!(*it)->ok && (*it)->required)
                                        ok = false;
                        }
                        kb_preflight_free(list);
                }
        }
        if (as_json) {
                json_object_object_add(out, "can_enforce", json_object_new_boolean(ok));
                json_object_object_add(out, "exit_code", json_object_new_int(ok ? 0 : KB_EXIT_ENFORCE));
                json_object_object_add(out, "bwrap", bwrap ? json_object_new_string(bwrap) : NULL);
                json_object_object_add(out, "items", items);
        }
        free(probe_base);
        free(bwrap);
        kernelspecs(out, as_json);
        stale_folders(out, as_json, base);
        if (as_json) {
                printf("%s\n",
                       json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(out);
        } else
                printf("%s\n", ok ? "doctor: this machine can enforce the sandbox"
                                  : "doctor: this machine cannot enforce the sandbox (see FAIL lines)");
        return ok ? 0 : KB_EXIT_ENFORCE;
}
