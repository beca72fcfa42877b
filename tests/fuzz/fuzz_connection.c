/* fuzz_connection.c: libFuzzer target feeding untrusted bytes to kb_connection_parse and its endpoints. */
#include "kbound/connection.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        kb_connection *c = NULL;
        char endpoint[256];

        if (kb_connection_parse((const char *) data, size, &c) < 0)
                return 0;
        /* A parsed connection must be usable without surprises: every endpoint either fits or is
         * refused, and the strings are NUL-terminated. */
        for (int ch = 0; ch < _KB_CHANNEL_MAX; ch++) {
                if (kb_connection_endpoint(c, (kb_channel) ch, NULL, endpoint, sizeof(endpoint)) == 0 &&
                    strlen(endpoint) >= sizeof(endpoint))
                        __builtin_trap();
                if (c->ports[ch] < 1 || c->ports[ch] > 65535)
                        __builtin_trap();
        }
        if (strlen(c->ip) == 0 || strcmp(c->signature_scheme, "hmac-sha256") != 0)
                __builtin_trap();
        kb_connection_destroy(&c);
        return 0;
}
