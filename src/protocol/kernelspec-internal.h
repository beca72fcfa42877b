/* kernelspec-internal.h: what kernelspec.c's loaders share with kernelspec_parse.c. */
#pragma once

#include <stddef.h>
#include "kbound/error.h"
#include "kbound/kernelspec.h"

/* kb_kernelspec_parse with the words of a failure in *ret_error (may be NULL): "not valid JSON
 * (line L, column C: WHY)" for a syntax error (-EBADMSG), else the member at fault (-EPROTO),
 * naming no file (the loaders prefix its path). Returns as kb_kernelspec_parse. */
int kernelspec_parse(const char *json, size_t len, const char *name, const char *resource_dir, kb_kernelspec **ret,
                     kb_error **ret_error);
