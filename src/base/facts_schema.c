/* facts_schema.c: facts.def as JSON Schema (draft 7): what a report's evidence quotes of the facts
 * is declared by the same table the producers write through and the judges read through. */
#include <stdio.h>
#include "base/facts.h"

/* A schema object from its members (NULL: out of memory). */
static json_object *schema_type(const char *type) {
        json_object *s = json_object_new_object();
        if (s && type && json_object_object_add(s, "type", json_object_new_string(type)) < 0) {
                json_object_put(s);
                return NULL;
        }
        return s;
}

static json_object *schema_ref(kb_fact_object object) {
        char ref[96];
        snprintf(ref, sizeof ref, "#/definitions/%s", kb_fact_object_name(object));
        json_object *s = json_object_new_object();
        if (s && json_object_object_add(s, "$ref", json_object_new_string(ref)) < 0) {
                json_object_put(s);
                return NULL;
        }
        return s;
}

static json_object *schema_array(json_object *items) {
        json_object *s = schema_type("array");
        if (!s || !items || json_object_object_add(s, "items", items) < 0) {
                json_object_put(s);
                json_object_put(items);
                return NULL;
        }
        return s;
}

/* An element of an array or map row of element type of. */
static json_object *schema_element(kb_fact_object of) {
        switch (of) {
        case KB_FACT_OBJECT_INTS:
                return schema_type("integer");
        case KB_FACT_OBJECT_STRS:
                return schema_type("string");
        case KB_FACT_OBJECT_BOOLS:
                return schema_type("boolean");
        case KB_FACT_OBJECT_ANYS:
                return schema_type(NULL);
        case KB_FACT_OBJECT_INT_LISTS:
                return schema_array(schema_type("integer"));
        case KB_FACT_OBJECT_MOUNT_LISTS:
                return schema_array(schema_ref(KB_FACT_OBJECT_MOUNT));
        default:
                return schema_ref(of);
        }
}

json_object *kb_fact_schema_value(kb_fact_id id) {
        const kb_fact_info *row = kb_fact_row(id);
        if (!row)
                return NULL;
        json_object *s = NULL, *inner;
        switch (row->kind) {
        case KB_FACT_INT:
                s = schema_type("integer");
                break;
        case KB_FACT_STR:
                s = schema_type("string");
                break;
        case KB_FACT_BOOL:
                s = schema_type("boolean");
                break;
        case KB_FACT_ANY:
                s = schema_type(NULL);
                break;
        case KB_FACT_OBJ:
                s = schema_ref(row->of);
                break;
        case KB_FACT_ARR:
                s = schema_array(schema_element(row->of));
                break;
        case KB_FACT_MAP:
                inner = schema_element(row->of);
                s = schema_type("object");
                if (!s || !inner || json_object_object_add(s, "additionalProperties", inner) < 0) {
                        json_object_put(s);
                        json_object_put(inner);
                        return NULL;
                }
                break;
        }
        if (!s || json_object_object_add(s, "description", json_object_new_string(row->what)) < 0) {
                json_object_put(s);
                return NULL;
        }
        return s;
}

/* A fact that may be absent may be null too (kb_fact_validate reads both as absent). */
static json_object *schema_nullable(json_object *s) {
        json_object *any = json_object_new_object(), *list = json_object_new_array();
        if (!s || !any || !list || json_object_array_add(list, s) < 0) {
                json_object_put(s);
                json_object_put(any);
                json_object_put(list);
                return NULL;
        }
        if (json_object_array_add(list, schema_type("null")) < 0 || json_object_object_add(any, "anyOf", list) < 0) {
                json_object_put(any);
                json_object_put(list);
                return NULL;
        }
        return any;
}

static json_object *schema_object(kb_fact_object object) {
        json_object *s = schema_type("object"), *props = json_object_new_object(), *required = json_object_new_array();
        bool ok = s && props && required &&
                  json_object_object_add(s, "description", json_object_new_string(kb_fact_object_what(object))) == 0;
        kb_fact_id first, end;
        kb_fact_rows_of(object, &first, &end);
        for (kb_fact_id id = first; ok && id < end; id++) {
                const kb_fact_info *row = kb_fact_row(id);
                bool req = row->presence == KB_FACT_REQUIRED || row->presence == KB_FACT_REQUIRED_TRUE;
                json_object *v = kb_fact_schema_value(id);
                if (!req)
                        v = schema_nullable(v);
                ok = v && json_object_object_add(props, row->key, v) == 0 &&
                     (!req || json_object_array_add(required, json_object_new_string(row->key)) == 0);
        }
        /* What a cell said may say more than is declared; what the host made may not. */
        ok = ok && json_object_object_add(s, "properties", props) == 0;
        if (ok)
                props = NULL;
        ok = ok && json_object_object_add(s, "required", required) == 0;
        if (ok)
                required = NULL;
        ok = ok && json_object_object_add(s, "additionalProperties",
                                          json_object_new_boolean(kb_fact_object_from_cell(object))) == 0;
        json_object_put(props);
        json_object_put(required);
        if (!ok) {
                json_object_put(s);
                return NULL;
        }
        return s;
}

json_object *kb_fact_schema_definitions(void) {
        json_object *defs = json_object_new_object();
        for (int o = 0; defs && o < _KB_FACT_OBJECT_MAX; o++) {
                switch (o) {
                case KB_FACT_OBJECT_NONE:
                case KB_FACT_OBJECT_INTS:
                case KB_FACT_OBJECT_STRS:
                case KB_FACT_OBJECT_BOOLS:
                case KB_FACT_OBJECT_ANYS:
                case KB_FACT_OBJECT_INT_LISTS:
                case KB_FACT_OBJECT_MOUNT_LISTS:
                        continue; /* element types, written in place */
                }
                json_object *s = schema_object((kb_fact_object) o);
                if (!s || json_object_object_add(defs, kb_fact_object_name((kb_fact_object) o), s) < 0) {
                        json_object_put(s);
                        json_object_put(defs);
                        return NULL;
                }
        }
        return defs;
}
