/* evidence.c: evidence.def's rows, and the schema of what a check's evidence quotes. */
#include "verdict/evidence.h"

static const kb_evidence_info rows[_KB_EVIDENCE_ID_MAX] = {
#define KB_EVIDENCE(check, name, key, fact)                                                                            \
        [KB_EVIDENCE_ID_##check##_##name] = {KB_CHECK_##check, key, KB_FACT_ID_##fact},
#include "verdict/evidence.def"
#undef KB_EVIDENCE
};

const kb_evidence_info *kb_evidence_row(kb_evidence_id id) {
        return (unsigned) id < _KB_EVIDENCE_ID_MAX ? &rows[id] : NULL;
}

/* Adds key: value to o, value taken; false (value put) on failure. */
static bool add(json_object *o, const char *key, json_object *value) {
        if (!o || !value || json_object_object_add(o, key, value) < 0) {
                json_object_put(value);
                return false;
        }
        return true;
}

static json_object *nullable(json_object *s) {
        json_object *any = json_object_new_object(), *list = json_object_new_array(), *null = json_object_new_object();
        if (!add(null, "type", json_object_new_string("null")) || !list || json_object_array_add(list, s) < 0) {
                json_object_put(s);
                json_object_put(null);
                json_object_put(list);
                json_object_put(any);
                return NULL;
        }
        s = NULL;
        if (json_object_array_add(list, null) < 0) {
                json_object_put(null);
                json_object_put(list);
                json_object_put(any);
                return NULL;
        }
        return add(any, "anyOf", list) ? any : (json_object_put(any), NULL);
}

/* Adds a new object under key to o; NULL (nothing left to free but o) on failure. */
static json_object *child(json_object *o, const char *key) {
        json_object *c = json_object_new_object();
        return add(o, key, c) ? c : NULL;
}

/* {"if": {id is check}, "then": {evidence's quotes have their facts' shapes}}: each object is
 * added to its parent as it is made, so the rule alone is freed on failure. */
static json_object *for_check(kb_check c) {
        json_object *rule = json_object_new_object(), *cond = child(rule, "if"), *props = child(cond, "properties"),
                    *id = child(props, "id"), *required = json_object_new_array();
        if (!add(cond, "required", required))
                required = NULL;
        json_object *evidence = child(child(child(rule, "then"), "properties"), "evidence"),
                    *quotes = child(evidence, "properties");
        bool ok = id && required && quotes && add(id, "const", json_object_new_string(kb_check_id(c))) &&
                  json_object_array_add(required, json_object_new_string("id")) == 0 &&
                  add(evidence, "type", json_object_new_string("object"));
        for (int e = 0; ok && e < _KB_EVIDENCE_ID_MAX; e++)
                if (rows[e].check == c)
                        ok = add(quotes, rows[e].key, nullable(kb_fact_schema_value(rows[e].fact)));
        if (!ok) {
                json_object_put(rule);
                return NULL;
        }
        return rule;
}

json_object *kb_evidence_schema(void) {
        json_object *s = json_object_new_object(), *all = json_object_new_array();
        bool ok = add(s, "$schema", json_object_new_string("http://json-schema.org/draft-07/schema#")) &&
                  add(s, "title", json_object_new_string("kbound: the facts a check's evidence quotes")) &&
                  add(s, "description",
                      json_object_new_string(
                              "Generated from src/base/facts.def and src/verdict/evidence.def by "
                              "tests/unit/test_evidence_schema.c (KBOUND_WRITE_SCHEMA=path writes it); do not edit. "
                              "A check object of a report (kbound-report.schema.json's check) validates against "
                              "it: where the check's evidence quotes a fact, the quote has the fact's declared "
                              "shape, or is null when the fact was absent.")) &&
                  add(s, "type", json_object_new_string("object"));
        bool seen[_KB_CHECK_MAX] = {false};
        for (int e = 0; ok && e < _KB_EVIDENCE_ID_MAX; e++) {
                if (seen[rows[e].check])
                        continue;
                seen[rows[e].check] = true;
                json_object *rule = for_check(rows[e].check);
                ok = rule && json_object_array_add(all, rule) == 0;
                if (!ok)
                        json_object_put(rule);
        }
        ok = ok && add(s, "allOf", all);
        if (!ok)
                json_object_put(all);
        ok = ok && add(s, "definitions", kb_fact_schema_definitions());
        if (!ok) {
                json_object_put(s);
                return NULL;
        }
        return s;
}
