/* audit.c: what each claim of `kbound audit` is held to: kbound's own claims, or an auditor's
 * expect file (audit.h, docs/audit.md "The expect file"), read strictly, and every check marked
 * with its expectation. A wider boundary the auditor expected is reported not claimed, never passed. */
#include "kbound/audit.h"
#include "kbound/check.h"
#include "base/cleanup.h"
#include "base/jsonget.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define EXPECT_MAX (64 * 1024)
#define REASON_MAX 400

static const char *const known_keys[] = {"kbound_expect", "description", "workspace", "writable", "allow", NULL};

static bool known(const char *key) {
        for (const char *const *k = known_keys; *k; k++)
                if (strcmp(*k, key) == 0)
                        return true;
        return false;
}

static int check_allow(const char *path, json_object *allow, kb_error **ret_error) {
        if (!json_object_is_type(allow, json_type_object))
                return kb_error_make(ret_error, EINVAL, "%s: \"allow\" must be an object of check ids and reasons",
                                     path);
        json_object_object_foreach(allow, id, why) {
                if (kb_check_from_id(id) == _KB_CHECK_INVALID)
                        return kb_error_make(ret_error, EINVAL,
                                             "%s: \"allow\": '%s' is no check (kbound check --list-checks)", path, id);
                if (!json_object_is_type(why, json_type_string) || json_object_get_string_len(why) == 0 ||
                    json_object_get_string_len(why) > REASON_MAX)
                        return kb_error_make(ret_error, EINVAL,
                                             "%s: \"allow\": '%s' needs a reason: why the deployment does not make "
                                             "that claim (1 to %d characters)",
                                             path, id, REASON_MAX);
        }
        return 0;
}

static int check_writable(const char *path, json_object *writable, kb_error **ret_error) {
        if (!json_object_is_type(writable, json_type_array))
                return kb_error_make(ret_error, EINVAL, "%s: \"writable\" must be an array of host folders", path);
        for (size_t i = 0; i < json_object_array_length(writable); i++) {
                json_object *w = json_object_array_get_idx(writable, i);
                const char *folder = json_object_is_type(w, json_type_string) ? json_object_get_string(w) : NULL;
                struct stat st;
                if (!folder || folder[0] != '/' || stat(folder, &st) < 0 || !S_ISDIR(st.st_mode))
                        return kb_error_make(ret_error, EINVAL,
                                             "%s: \"writable\"[%zu] must be an absolute path of an existing host "
                                             "folder",
                                             path, i);
        }
        return 0;
}

int kb_audit_expect_read(const char *path, json_object **ret, kb_error **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = kb_read_file(AT_FDCWD, path, 0, EXPECT_MAX, &text, &len);
        if (r < 0)
                return kb_error_make(ret_error, -r, "cannot read the expect file %s: %s", path, strerror(-r));
        _cleanup_json_ json_object *e = NULL;
        r = kb_json_parse_strict(text, len, 16, &e);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !json_object_is_type(e, json_type_object))
                return kb_error_make(ret_error, EINVAL, "%s: not a JSON object", path);
        json_object *version = kb_json_get(e, "kbound_expect");
        if (!version || !json_object_is_type(version, json_type_int) ||
            json_object_get_int64(version) != KB_AUDIT_EXPECT_VERSION)
                return kb_error_make(ret_error, EINVAL, "%s: \"kbound_expect\" must be %d (this kbound's format)", path,
                                     KB_AUDIT_EXPECT_VERSION);
        json_object_object_foreach(e, key, value) {
                if (!known(key))
                        return kb_error_make(ret_error, EINVAL, "%s: unknown key \"%s\" (docs/audit.md)", path, key);
                (void) value;
        }
        json_object *v = kb_json_get(e, "description");
        if (v && !json_object_is_type(v, json_type_string))
                return kb_error_make(ret_error, EINVAL, "%s: \"description\" must be a string", path);
        v = kb_json_get(e, "workspace");
        if (v && (!json_object_is_type(v, json_type_string) || json_object_get_string(v)[0] != '/' ||
                  json_object_get_string_len(v) >= 4096))
                return kb_error_make(ret_error, EINVAL,
                                     "%s: \"workspace\" must be an absolute path as the kernel sees it", path);
        if ((v = kb_json_get(e, "writable")) && (r = check_writable(path, v, ret_error)) < 0)
                return r;
        if ((v = kb_json_get(e, "allow")) && (r = check_allow(path, v, ret_error)) < 0)
                return r;
        *ret = TAKE_PTR(e);
        return 0;
}

const char *kb_audit_expect_workspace(json_object *expect) {
        json_object *v = kb_json_get(expect, "workspace");
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

json_object *kb_audit_expect_writable(json_object *expect) {
        json_object *v = kb_json_get(expect, "writable");
        return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

/* The reason the expect file gives for not claiming id, or NULL. */
static const char *allowed(json_object *expect, const char *id) {
        json_object *why = kb_json_get(kb_json_get(expect, "allow"), id);
        return why && json_object_is_type(why, json_type_string) ? json_object_get_string(why) : NULL;
}

static bool status_is(json_object *check, const char *status) {
        const char *s = kb_json_str(check, "status");
        return s && strcmp(s, status) == 0;
}

int kb_audit_hold(json_object *expect, const char *expect_path, json_object *checks) {
        int not_expected = 0;
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *check = json_object_array_get_idx(checks, i);
                const char *id = kb_json_str(check, "id");
                const char *why = allowed(expect, id);
                char held[REASON_MAX + 256];
                if (why)
                        snprintf(held, sizeof held, "the expect file %s, which does not claim it: %s", expect_path,
                                 why);
                else
                        snprintf(held, sizeof held, "kbound's own claim (as `kbound check` holds its sandbox)%s%s",
                                 expect_path ? "; the expect file " : "", expect_path ? expect_path : "");
                bool failed = status_is(check, "fail");
                if (why && failed) {
                        /* Expected: not claimed, never a pass; what the host found stays in the words. */
                        char detail[2048];
                        snprintf(detail, sizeof detail, "not claimed, as the expect file says (%s); the host found: %s",
                                 why, kb_json_str(check, "detail") ? kb_json_str(check, "detail") : "");
                        json_object *d = json_object_new_string(detail), *s = json_object_new_string("not_claimed");
                        if (!d || !s) {
                                json_object_put(d);
                                json_object_put(s);
                                return -ENOMEM;
                        }
                        json_object_object_add(check, "status", s);
                        json_object_object_add(check, "detail", d);
                }
                bool as_expected = why || !failed;
                not_expected += !as_expected;
                json_object *h = json_object_new_string(held), *a = json_object_new_boolean(as_expected);
                if (!h || !a || json_object_object_add(check, "held_to", h) < 0 ||
                    json_object_object_add(check, "as_expected", a) < 0) {
                        json_object_put(a);
                        return -ENOMEM;
                }
        }
        return not_expected;
}
