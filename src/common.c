/* common.c: clock and cleanup helpers shared by every module. */
#include <time.h>
#include <json-c/json.h>
#include "kbound/common.h"

int64_t kb_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kb_ms_left(int64_t deadline_ms) {
        if (deadline_ms < 0)
                return -1;
        int64_t left = deadline_ms - kb_now_ms();
        if (left <= 0)
                return 0;
        return left > INT32_MAX ? INT32_MAX : (int) left;
}

void kb_json_putp(struct json_object **p) {
        if (*p)
                json_object_put(*p);
        *p = NULL;
}
