/* evidence.h: the facts a check's evidence quotes (evidence.def), and their schema. */
#pragma once

#include <json-c/json.h>
#include "base/facts.h"
#include "kbound/check.h"

typedef enum kb_evidence_id {
#define KB_EVIDENCE(check, name, key, fact) KB_EVIDENCE_ID_##check##_##name,
#include "verdict/evidence.def"
#undef KB_EVIDENCE
        _KB_EVIDENCE_ID_MAX,
} kb_evidence_id;

/* A typed name per row, as judges use them: EVIDENCE_SOCKETS_NOT_PLACED. */
typedef struct kb_evidence {
        kb_evidence_id id;
} kb_evidence;
#define KB_EVIDENCE(check, name, key, fact)                                                                            \
        static const kb_evidence EVIDENCE_##check##_##name = {KB_EVIDENCE_ID_##check##_##name};
#include "verdict/evidence.def"
#undef KB_EVIDENCE

typedef struct kb_evidence_info {
        kb_check check;
        const char *key;
        kb_fact_id fact;
} kb_evidence_info;

/* Row id of evidence.def; NULL out of range. */
const kb_evidence_info *kb_evidence_row(kb_evidence_id id);

/* schemas/kbound-evidence.schema.json: a JSON Schema (draft 7) a report's check object validates
 * against, each quote given its fact's shape. NULL if out of memory. */
json_object *kb_evidence_schema(void);
