/* rules.c: the judgements check and conformance share (rules.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "verdict/rules.h"
#include "base/facts.h"

const char *kb_rules_ignored_control_interrupt(const char *interrupt_mode, char *reason, size_t size) {
        bool message = interrupt_mode && strcmp(interrupt_mode, "message") == 0;
        if (message) {
                snprintf(reason, size,
                         "the kernelspec declares interrupt_mode 'message', so interrupt_request on "
                         "control is how this kernel must be interrupted");
                return "fail";
        }
        snprintf(reason, size,
                 "the kernelspec declares interrupt_mode '%s'%s, so SIGINT is how this kernel is "
                 "interrupted and interrupt_request on control is optional",
                 interrupt_mode && *interrupt_mode ? interrupt_mode : "signal",
                 interrupt_mode && *interrupt_mode ? "" : " (by default: it names none)");
        return "unsupported";
}

bool kb_rules_language_mismatch(const char *info_name, const char *spec_language, char *warning, size_t size) {
        if (size > 0)
                warning[0] = '\0';
        if (!info_name || !*info_name || !spec_language || !*spec_language || strcasecmp(info_name, spec_language) == 0)
                return false;
        snprintf(warning, size,
                 "language_info.name '%s' differs from the kernelspec's language '%s' (the protocol "
                 "does not require them to be equal)",
                 info_name, spec_language);
        return true;
}

/* ADDR_NO_RANDOMIZE, linux/personality.h's: a layout that is not randomized. */
#define PERSONALITY_ADDR_NO_RANDOMIZE 0x0040000

const char *kb_rules_image_change(json_object *host, json_object *before, json_object *after, char *buf, size_t size) {
        const struct { /* automatic: facts are not constant expressions (clang) */
                kb_fact_int fact;
                const char *words;
        } layout[] = {
                {FACT_IMAGE_START_CODE, "its code"},          {FACT_IMAGE_END_CODE, "the end of its code"},
                {FACT_IMAGE_START_STACK, "its stack"},        {FACT_IMAGE_START_DATA, "its data"},
                {FACT_IMAGE_END_DATA, "the end of its data"}, {FACT_IMAGE_START_BRK, "its heap"},
                {FACT_IMAGE_ARG_START, "its arguments"},      {FACT_IMAGE_ARG_END, "the end of its arguments"},
                {FACT_IMAGE_ENV_START, "its environment"},    {FACT_IMAGE_ENV_END, "the end of its environment"},
        };
        int64_t a, b, nonzero = 0;
        if (!before || !after) {
                snprintf(buf, size, "the host did not read where its image lies %s",
                         before ? "now" : "at the first look");
                return buf;
        }
        if (!kb_fact_int_of(before, FACT_IMAGE_STARTTIME, &a) || !kb_fact_int_of(after, FACT_IMAGE_STARTTIME, &b) ||
            a != b) {
                snprintf(buf, size, "it is not the process the first look saw (its start time is not the same)");
                return buf;
        }
        for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++) {
                if (!kb_fact_int_of(before, layout[i].fact, &a) || !kb_fact_int_of(after, layout[i].fact, &b)) {
                        snprintf(buf, size, "the host did not read where %s lies", layout[i].words);
                        return buf;
                }
                if (a != b) {
                        snprintf(buf, size,
                                 "it replaced its process image (execve) since the first look: %s moved from "
                                 "0x%llx to 0x%llx",
                                 layout[i].words, (unsigned long long) a, (unsigned long long) b);
                        return buf;
                }
                nonzero |= a;
        }
        if (!nonzero) {
                snprintf(buf, size,
                         "the host may not see where its image lies (the kernel shows 0), so an execve would "
                         "not show");
                return buf;
        }
        int64_t aslr = -1, personality = -1;
        if (kb_fact_int_of(host, FACT_HOST_RANDOMIZE_VA_SPACE, &aslr) && aslr == 0) {
                snprintf(buf, size,
                         "this host does not randomize processes' layouts (kernel.randomize_va_space is 0), "
                         "so an execve of the same program would lie where the first image did");
                return buf;
        }
        if (!kb_fact_int_of(after, FACT_IMAGE_PERSONALITY, &personality) ||
            !kb_fact_int_of(before, FACT_IMAGE_PERSONALITY, &a)) {
                snprintf(buf, size,
                         "the host could not read its personality (whether its layout is randomized), so an "
                         "execve would not necessarily show");
                return buf;
        }
        if ((personality | a) & PERSONALITY_ADDR_NO_RANDOMIZE) {
                snprintf(buf, size,
                         "its layout is not randomized (personality ADDR_NO_RANDOMIZE), so an execve of the "
                         "same program would lie where the first image did");
                return buf;
        }
        return NULL;
}
