/* test_bwrap.c: reading what a bubblewrap can do from its --help, and the account check and
 * doctor both give of it. The --help texts are excerpts of real ones (0.4.1, 0.8.0). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "kbound/bwrap.h"

/* Every option kbound needs, as bwrap 0.4.1 lists them; --disable-userns and --size (0.8.0 has
 * both, Debian 12's 0.8.0 lists them) it lacks, and both have stand-ins. */
static const char help_041[] = "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n\n"
                               "    --help                       Print this help\n"
                               "    --unshare-all                Unshare every namespace we support by default\n"
                               "    --share-net                  Retain the network namespace (can only combine with "
                               "--unshare-all)\n"
                               "    --unshare-user               Create new user namespace (may be automatically "
                               "implied if not setuid)\n"
                               "    --unshare-pid                Create new pid namespace\n"
                               "    --hostname NAME              Custom hostname in the sandbox (requires "
                               "--unshare-uts)\n"
                               "    --chdir DIR                  Change directory to DIR\n"
                               "    --bind SRC DEST              Bind mount the host path SRC on DEST\n"
                               "    --ro-bind SRC DEST           Bind mount the host path SRC readonly on DEST\n"
                               "    --ro-bind-try SRC DEST       Equal to --ro-bind but ignores non-existent SRC\n"
                               "    --remount-ro DEST            Remount DEST as readonly; does not recursively "
                               "remount\n"
                               "    --proc DEST                  Mount new procfs on DEST\n"
                               "    --dev DEST                   Mount new dev on DEST\n"
                               "    --tmpfs DEST                 Mount new tmpfs on DEST\n"
                               "    --dir DEST                   Create dir at DEST\n"
                               "    --symlink SRC DEST           Create symlink at DEST with target SRC\n"
                               "    --file FD DEST               Copy from FD to destination DEST\n"
                               "    --seccomp FD                 Load and use seccomp rules from FD\n"
                               "    --block-fd FD                Block on FD until some data to read is available\n"
                               "    --info-fd FD                 Write information about the running container to FD\n"
                               "    --new-session                Create a new terminal session\n"
                               "    --die-with-parent            Kills with SIGKILL child process (COMMAND) when "
                               "bwrap or bwrap's parent dies.\n"
                               "    --cap-drop CAP               Drop cap CAP when running as privileged user\n";

static void test_parse_041(void **state) {
        (void) state;
        kb_bwrap b = {.version = "0.4.1"};
        kb_bwrap_parse_help(help_041, &b.has);
        for (int i = 0; i < KB_BWRAP_OPTION_MAX; i++)
                if (i != KB_BWRAP_DISABLE_USERNS && i != KB_BWRAP_SIZE && !kb_bwrap_has(&b, (kb_bwrap_option) i))
                        fail_msg("%s not read from 0.4.1's --help", kb_bwrap_option_get((kb_bwrap_option) i)->name);
        assert_false(kb_bwrap_has(&b, KB_BWRAP_DISABLE_USERNS));
        assert_false(kb_bwrap_has(&b, KB_BWRAP_SIZE));
        char buf[512];
        assert_int_equal(kb_bwrap_missing(&b, buf, sizeof buf), 0);
        assert_string_equal(buf, "");
        /* what it lacks has a stand-in, and the account says which */
        assert_int_equal(kb_bwrap_stand_ins(&b, buf, sizeof buf), 2);
        assert_non_null(strstr(buf, "no --disable-userns: kbound sets the sandbox's user.max_user_namespaces itself"));
        assert_non_null(strstr(buf, "no --size: kbound gives each in-memory folder bwrap makes (/tmp, /dev/shm, "
                                    "/workspace, the socket folder) its size itself"));
        char *account = NULL;
        assert_int_equal(kb_bwrap_describe(&b, "/usr/bin/bwrap", &account), 1);
        assert_non_null(strstr(account, "bubblewrap 0.4.1 at /usr/bin/bwrap has every option"));
        assert_non_null(strstr(account, "--disable-userns"));
        free(account);
        /* and the hardening a run takes from it: both kept, each by kbound's stand-in */
        kb_sandbox_hardening h = {0};
        kb_bwrap_hardening(&b, &h);
        assert_true(h.disable_userns && h.host_userns && h.tmpfs_size && h.host_sizes);
        /* a bwrap with both options: both kept, by bwrap itself */
        b.has |= (UINT64_C(1) << KB_BWRAP_DISABLE_USERNS) | (UINT64_C(1) << KB_BWRAP_SIZE);
        kb_bwrap_hardening(&b, &h);
        assert_true(h.disable_userns && h.tmpfs_size);
        assert_false(h.host_userns || h.host_sizes);
        assert_int_equal(kb_bwrap_stand_ins(&b, buf, sizeof buf), 0);
}

static void test_words_not_substrings(void **state) {
        (void) state;
        /* --ro-bind-try alone is not --ro-bind, an option named in prose is not listed, and
         * --disable-userns is read when listed */
        uint64_t has = 0;
        kb_bwrap_parse_help("    --ro-bind-try SRC DEST\n    --share-net   Retain (see --unshare-all)\n"
                            "    --disable-userns             Disable further use of user namespaces\n",
                            &has);
        kb_bwrap b = {.version = "x", .has = has};
        assert_true(kb_bwrap_has(&b, KB_BWRAP_RO_BIND_TRY));
        assert_false(kb_bwrap_has(&b, KB_BWRAP_RO_BIND));
        assert_false(kb_bwrap_has(&b, KB_BWRAP_UNSHARE_ALL));
        assert_true(kb_bwrap_has(&b, KB_BWRAP_DISABLE_USERNS));
        assert_false(kb_bwrap_has(&b, KB_BWRAP_SIZE));
        assert_int_equal(kb_bwrap_stand_ins(&b, NULL, 0), 1); /* --size: counted, nothing written */
}

/* help without the lines that list the options in gone (NULL-terminated); malloc'd. */
static char *help_without(const char *help, const char *const *gone) {
        char *out = calloc(1, strlen(help) + 1);
        assert_non_null(out);
        for (const char *line = help; *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t) (nl - line) + 1 : strlen(line);
                bool drop = false;
                for (const char *const *g = gone; *g; g++)
                        drop = drop || (strstr(line, *g) && strstr(line, *g) < line + len && line[4] == '-' &&
                                        strncmp(line + 4, *g, strlen(*g)) == 0);
                if (!drop)
                        strncat(out, line, len);
                line += len;
        }
        return out;
}

/* One grammar for every reader of a bwrap command line: each option's operands, -1 for a word that
 * is no option (an operand, a stand-in's invention). */
static void test_arity(void **state) {
        (void) state;
        assert_int_equal(kb_bwrap_arity("--unshare-all"), 0);
        assert_int_equal(kb_bwrap_arity("--tmpfs"), 1);
        assert_int_equal(kb_bwrap_arity("--size"), 1);
        assert_int_equal(kb_bwrap_arity("--remount-ro"), 1);
        assert_int_equal(kb_bwrap_arity("--ro-bind-try"), 2);
        assert_int_equal(kb_bwrap_arity("--setenv"), 2);
        assert_int_equal(kb_bwrap_arity("--ro-bind-fd"), 2);
        assert_int_equal(kb_bwrap_arity("--bind-data"), 2);
        assert_int_equal(kb_bwrap_arity("/usr"), -1);
        assert_int_equal(kb_bwrap_arity("--tmpfs-everything"), -1);
        assert_int_equal(kb_bwrap_arity(NULL), -1);
}

static void test_missing_named(void **state) {
        (void) state;
        /* 0.4.1's text without --block-fd and --info-fd: both named, and the account refuses */
        static const char *const gone[] = {"--block-fd", "--info-fd", NULL};
        char *cut = help_without(help_041, gone);
        kb_bwrap b = {.version = "0.3.9"};
        kb_bwrap_parse_help(cut, &b.has);
        free(cut);
        char buf[512];
        assert_int_equal(kb_bwrap_missing(&b, buf, sizeof buf), 2);
        assert_string_equal(buf, "--block-fd, --info-fd");
        char *account = NULL;
        assert_int_equal(kb_bwrap_describe(&b, "/opt/bwrap", &account), 0);
        assert_non_null(strstr(account, "bubblewrap 0.3.9 at /opt/bwrap lacks --block-fd, --info-fd"));
        free(account);
        /* an empty --help: every needed option is missing, none has a stand-in but the two */
        kb_bwrap none = {.version = "?"};
        kb_bwrap_parse_help("", &none.has);
        assert_int_equal(kb_bwrap_missing(&none, buf, sizeof buf), KB_BWRAP_OPTION_MAX - 2);
        /* a buffer too small is cut, never overrun, and the count is still right */
        char small[8];
        assert_int_equal(kb_bwrap_missing(&none, small, sizeof small), KB_BWRAP_OPTION_MAX - 2);
        assert_true(strlen(small) < sizeof small);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_041),
                cmocka_unit_test(test_words_not_substrings),
                cmocka_unit_test(test_missing_named),
                cmocka_unit_test(test_arity),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
