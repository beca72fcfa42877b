/* jsonget.c: tolerant accessors for untrusted JSON (jsonget.h). */
#include "base/jsonget.h"

json_object *kb_json_get(json_object *o, const char *key) {
        json_object *v = NULL;
        return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *kb_json_str(json_object *o, const char *key) {
        json_object *v = kb_json_get(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool kb_json_int(json_object *o, const char *key, int64_t *ret) {
        json_object *v = kb_json_get(o, key);
        if (!v || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

bool kb_json_true(json_object *o, const char *key) {
        json_object *v = kb_json_get(o, key);
        return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}
