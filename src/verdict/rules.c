/* rules.c: the judgements check and conformance share (rules.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "verdict/rules.h"

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
