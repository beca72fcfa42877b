/* test_procfs.c: the /proc parsers on real and hostile text (a process names itself; a kernel
 * mounts what it likes), each read back through facts.def's names and held to its declaration, and
 * the mount lookup that follows the tree rather than the longest path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kbound/common.h"
#include "base/facts.h"
#include "base/procfs.h"

static const char status_text[] = "Name:\tpython3\n"
                                  "Umask:\t0022\n"
                                  "State:\tS (sleeping)\n"
                                  "Tgid:\t2\n"
                                  "PPid:\t1\n"
                                  "Uid:\t999\t999\t999\t999\n"
                                  "Gid:\t995\t995\t995\t995\n"
                                  "Groups:\t \n"
                                  "NStgid:\t10507\t2\n"
                                  "NSpid:\t10507\t2\n"
                                  "NSsid:\t10506\t1\n"
                                  "CapInh:\t0000000000000000\n"
                                  "CapPrm:\t0000000000000000\n"
                                  "CapEff:\t0000000000000000\n"
                                  "CapBnd:\t000001ffffffffff\n"
                                  "CapAmb:\t0000000000000000\n"
                                  "NoNewPrivs:\t1\n"
                                  "Seccomp:\t2\n"
                                  "Seccomp_filters:\t1\n";

/* The fact of o, which must be there. */
#define field(o, fact) field_of((o), (fact).id)
static json_object *field_of(json_object *o, kb_fact_id id) {
        json_object *v = kb_fact_member(o, id);
        if (!v)
                fail_msg("no %s in %s", kb_fact_row(id)->key, json_object_to_json_string(o));
        return v;
}

/* o holds to type's declaration (strictly: no key facts.def does not declare), but for the
 * required facts in absent, which a parser leaves to its caller (a process's pid, namespaces...). */
static void assert_declared(json_object *o, kb_fact_object type, const char *absent) {
        json_object *problems = json_object_new_array();
        assert_true(kb_fact_validate(o, type, true, problems, 32) >= 0);
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                const char *p = json_object_get_string(json_object_array_get_idx(problems, i));
                char key[64];
                if (sscanf(p, "%63[^:]: required, absent", key) == 1 && absent && strstr(absent, key))
                        continue;
                fail_msg("%s breaks facts.def's %s: %s", json_object_to_json_string(o), kb_fact_object_name(type), p);
        }
        json_object_put(problems);
}

/* What a process's status leaves to the rest of its look. */
#define NOT_STATUS " pid ns ns_owners refs fds errors "

static void assert_mounts_declared(json_object *mounts) {
        for (size_t i = 0; i < json_object_array_length(mounts); i++)
                assert_declared(json_object_array_get_idx(mounts, i), KB_FACT_OBJECT_MOUNT, NULL);
}

static void test_status(void **state) {
        json_object *o = NULL;
        assert_int_equal(kb_procfs_status_parse(status_text, &o), 0);
        assert_declared(o, KB_FACT_OBJECT_PROCESS, NOT_STATUS);
        assert_string_equal(json_object_get_string(field(o, FACT_PROCESS_NAME)), "python3");
        assert_string_equal(json_object_get_string(field(o, FACT_PROCESS_STATE)), "S");
        assert_int_equal(json_object_get_int(field(o, FACT_PROCESS_PPID)), 1);
        assert_int_equal(json_object_array_length(field(o, FACT_PROCESS_UID)), 4);
        assert_int_equal(json_object_get_int(json_object_array_get_idx(field(o, FACT_PROCESS_UID), 2)), 999);
        assert_int_equal(json_object_array_length(field(o, FACT_PROCESS_GROUPS)), 0);
        assert_int_equal(json_object_array_length(field(o, FACT_PROCESS_NSPID)), 2);
        assert_int_equal(json_object_get_int(json_object_array_get_idx(field(o, FACT_PROCESS_NSPID), 1)), 2);
        assert_string_equal(json_object_get_string(field(o, FACT_PROCESS_CAP_BND)), "000001ffffffffff");
        assert_int_equal(json_object_get_int(field(o, FACT_PROCESS_NO_NEW_PRIVS)), 1);
        assert_int_equal(json_object_get_int(field(o, FACT_PROCESS_SECCOMP)), 2);
        assert_int_equal(json_object_get_int(field(o, FACT_PROCESS_SECCOMP_FILTERS)), 1);
        json_object_put(o);

        /* this very process parses too */
        char *self = NULL;
        assert_int_equal(kb_read_file(AT_FDCWD, "/proc/self/status", 0, KB_PROCFS_STATUS_MAX, &self, NULL), 0);
        assert_int_equal(kb_procfs_status_parse(self, &o), 0);
        assert_declared(o, KB_FACT_OBJECT_PROCESS, NOT_STATUS);
        assert_int_equal(json_object_get_int(json_object_array_get_idx(field(o, FACT_PROCESS_UID), 0)), (int) getuid());
        json_object_put(o);
        free(self);
}

static void test_status_refuses(void **state) {
        json_object *o = NULL;
        /* each required line missing, and malformed values */
        const char *bad[] = {
                "Name:\tx\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\n",                 /* no PPid */
                "PPid:\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\n",                                   /* no Uid */
                "PPid:\t1\nUid:\t1\t1\t1\t1\nNSpid:\t5\n",                                   /* no Gid */
                "PPid:\t1\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",                            /* no NSpid */
                "PPid:\t1\nUid:\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\n",                    /* 3 uids */
                "PPid:\t1\nUid:\t1\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\n",              /* 5 uids */
                "PPid:\tx\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\n",                 /* PPid text */
                "PPid:\t1\nUid:\t1\t1\t1\t-1\nGid:\t1\t1\t1\t1\nNSpid:\t5\n",                /* negative */
                "PPid:\t1\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t\n",                  /* empty NSpid */
                "PPid:\t1\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\nCapEff:\tzz\n",    /* caps */
                "PPid:\t1\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nNSpid:\t5\nNoNewPrivs:\t?\n", /* NNP */
                "",
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(bad); i++) {
                o = NULL;
                if (kb_procfs_status_parse(bad[i], &o) != -EPROTO)
                        fail_msg("case %zu accepted", i);
                assert_null(o);
        }
        assert_int_equal(kb_procfs_status_parse(NULL, &o), -EPROTO);
}

static void test_stat(void **state) {
        kb_procfs_stat st;
        /* a name with spaces and parentheses: the fields start after the last ')' */
        assert_int_equal(kb_procfs_stat_parse("42 (a) (b c)) R 7 8 9 34816 0 0", &st), 0);
        assert_int_equal(st.pid, 42);
        assert_string_equal(st.comm, "a) (b c)");
        assert_int_equal(st.state, 'R');
        assert_int_equal(st.ppid, 7);
        assert_int_equal(st.pgrp, 8);
        assert_int_equal(st.session, 9);
        assert_int_equal(st.tty_nr, 34816);
        /* a long name is cut, never overflows */
        assert_int_equal(kb_procfs_stat_parse("1 (aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) S 0 1 1 0", &st), 0);
        assert_int_equal(strlen(st.comm), sizeof st.comm - 1);
        const char *bad[] = {
                "", "x (a) S 1 1 1 0", "1 a S 1 1 1 0", "1 (a) S 1 1", "1 (a)S 1 1 1 0", "1 (a) S x 1 1 0"};
        for (size_t i = 0; i < KB_ELEMENTSOF(bad); i++)
                if (kb_procfs_stat_parse(bad[i], &st) != -EPROTO)
                        fail_msg("case %zu accepted", i);
}

static const char mountinfo[] = "65 42 0:40 /newroot / ro,nosuid - tmpfs tmpfs rw\n"
                                "66 65 254:0 /usr /usr ro,nosuid - ext4 /dev/vda rw,discard\n"
                                "97 65 0:41 / /proc rw,nosuid,nodev,noexec - proc proc rw\n"
                                "98 97 0:21 /sys /proc/sys ro,nosuid - proc proc rw\n"
                                "110 65 254:0 /tmp/kb\\040x/ws /work\\134space rw,nosuid shared:5 master:1 "
                                "propagate_from:3 - ext4 /dev/vda rw\n"
                                "111 65 0:44 / /ro-super rw - tmpfs tmpfs ro\n";

static json_object *mount_at(json_object *mounts, size_t i) {
        return json_object_array_get_idx(mounts, i);
}

static void test_mountinfo(void **state) {
        json_object *m = NULL;
        assert_int_equal(kb_procfs_mountinfo_parse(mountinfo, &m), 0);
        assert_int_equal(json_object_array_length(m), 6);
        assert_mounts_declared(m);
        assert_string_equal(json_object_get_string(field(mount_at(m, 0), FACT_MOUNT_ROOT)), "/newroot");
        assert_false(json_object_get_boolean(field(mount_at(m, 0), FACT_MOUNT_WRITABLE)));
        assert_true(json_object_get_boolean(field(mount_at(m, 2), FACT_MOUNT_WRITABLE)));
        assert_string_equal(json_object_get_string(field(mount_at(m, 3), FACT_MOUNT_DEV)), "0:21");
        /* escapes decoded; of the optional fields, the propagation ties kept */
        assert_string_equal(json_object_get_string(field(mount_at(m, 4), FACT_MOUNT_ROOT)), "/tmp/kb x/ws");
        assert_int_equal(json_object_get_int(field(mount_at(m, 4), FACT_MOUNT_SHARED)), 5);
        assert_int_equal(json_object_get_int(field(mount_at(m, 4), FACT_MOUNT_MASTER)), 1);
        assert_int_equal(json_object_get_int(field(mount_at(m, 4), FACT_MOUNT_PROPAGATE_FROM)), 3);
        assert_false(kb_fact_has(mount_at(m, 1), FACT_MOUNT_MASTER));
        assert_false(kb_fact_has(mount_at(m, 1), FACT_MOUNT_SHARED));
        assert_string_equal(json_object_get_string(field(mount_at(m, 4), FACT_MOUNT_MOUNTPOINT)), "/work\\space");
        assert_string_equal(json_object_get_string(field(mount_at(m, 4), FACT_MOUNT_FSTYPE)), "ext4");
        /* a superblock mounted read-only is not writable whatever the mount says */
        assert_false(json_object_get_boolean(field(mount_at(m, 5), FACT_MOUNT_WRITABLE)));
        /* device nodes: refused only by a per-mount nodev */
        assert_true(json_object_get_boolean(field(mount_at(m, 2), FACT_MOUNT_NODEV)));
        assert_false(json_object_get_boolean(field(mount_at(m, 1), FACT_MOUNT_NODEV)));
        json_object_put(m);

        const char *bad[] = {"1 2 0:1 / /\n",
                             "1 2 x / / rw - tmpfs t rw\n",
                             "1 2 0:1 / / rw shared:1\n",
                             "1 2 0:1 / / rw master:x - tmpfs t rw\n",
                             "a 2 0:1 / / rw - tmpfs t rw\n",
                             "1 2 0:1 / / rw -\n"};
        for (size_t i = 0; i < KB_ELEMENTSOF(bad); i++) {
                m = NULL;
                if (kb_procfs_mountinfo_parse(bad[i], &m) != -EPROTO)
                        fail_msg("case %zu accepted", i);
                assert_null(m);
        }
        /* this process's own table */
        char *self = NULL;
        assert_int_equal(kb_read_file(AT_FDCWD, "/proc/self/mountinfo", 0, KB_PROCFS_MOUNTINFO_MAX, &self, NULL), 0);
        assert_int_equal(kb_procfs_mountinfo_parse(self, &m), 0);
        assert_true(json_object_array_length(m) > 0);
        assert_mounts_declared(m);
        json_object_put(m);
        free(self);
}

static void test_path_under(void **state) {
        assert_true(kb_procfs_path_under("/a/b", "/a"));
        assert_true(kb_procfs_path_under("/a", "/a"));
        assert_true(kb_procfs_path_under("/a", "/a/"));
        assert_true(kb_procfs_path_under("/anything", "/"));
        assert_false(kb_procfs_path_under("/ab", "/a"));
        assert_false(kb_procfs_path_under("/a", "/a/b"));
        assert_false(kb_procfs_path_under(NULL, "/"));
}

static void test_mount_of(void **state) {
        /* /data is mounted, then /data/x below it, then a new mount over /data hides /data/x. */
        const char *text = "1 0 0:1 / / rw - tmpfs t rw\n"
                           "2 1 0:2 / /data rw - tmpfs t rw\n"
                           "3 2 0:3 / /data/x rw - tmpfs t rw\n"
                           "4 2 0:4 / /data ro - tmpfs t rw\n"
                           "5 1 0:5 / /proc rw - proc proc rw\n"
                           "6 5 0:6 /sys /proc/sys ro - proc proc rw\n";
        json_object *m = NULL;
        assert_int_equal(kb_procfs_mountinfo_parse(text, &m), 0);
        assert_string_equal(json_object_get_string(field(kb_procfs_mount_of(m, "/data/x/f"), FACT_MOUNT_DEV)), "0:4");
        assert_string_equal(json_object_get_string(field(kb_procfs_mount_of(m, "/data"), FACT_MOUNT_DEV)), "0:4");
        assert_string_equal(json_object_get_string(field(kb_procfs_mount_of(m, "/proc/sys/kernel"), FACT_MOUNT_DEV)),
                            "0:6");
        assert_string_equal(json_object_get_string(field(kb_procfs_mount_of(m, "/proc/self"), FACT_MOUNT_DEV)), "0:5");
        assert_string_equal(json_object_get_string(field(kb_procfs_mount_of(m, "/etc"), FACT_MOUNT_DEV)), "0:1");
        json_object_put(m);
        /* no root: nothing */
        assert_int_equal(kb_procfs_mountinfo_parse("7 6 0:1 / /x rw - tmpfs t rw\n7 6 0:1 / /y rw - tmpfs t rw\n", &m),
                         0);
        assert_null(kb_procfs_mount_of(m, "/x"));
        json_object_put(m);
        /* a parent cycle ends */
        assert_int_equal(kb_procfs_mountinfo_parse("1 9 0:1 / / rw - tmpfs t rw\n2 1 0:2 / / rw - tmpfs t rw\n"
                                                   "1 2 0:3 / / rw - tmpfs t rw\n",
                                                   &m),
                         0);
        (void) kb_procfs_mount_of(m, "/a");
        json_object_put(m);
}

/* /proc/net/unix: names are printed raw, so a newline in one must never yield a path. */
static void test_unix_table(void **state) {
#define UNIX_HEAD "Num       RefCount Protocol Flags    Type St Inode Path\n"
#define UNIX_LINE(flags, inode, rest) "0000000000000000: 00000002 00000000 " flags " 0001 01 " inode rest "\n"
        json_object *a = NULL;
        assert_int_equal(kb_procfs_unix_parse(UNIX_HEAD UNIX_LINE("00010000", "101", " /run/a.sock") UNIX_LINE(
                                                      "00000000", "102", "") UNIX_LINE("00010000", "103", " @abs"),
                                              &a),
                         0);
        assert_int_equal(json_object_array_length(a), 3);
        for (size_t i = 0; i < 3; i++)
                assert_declared(json_object_array_get_idx(a, i), KB_FACT_OBJECT_UNIX_ENTRY, NULL);
        assert_string_equal(json_object_get_string(field(json_object_array_get_idx(a, 0), FACT_UNIX_ENTRY_PATH)),
                            "/run/a.sock");
        assert_true(json_object_get_boolean(field(json_object_array_get_idx(a, 0), FACT_UNIX_ENTRY_LISTENING)));
        assert_false(kb_fact_has(json_object_array_get_idx(a, 1), FACT_UNIX_ENTRY_PATH));
        json_object_put(a);
        static const char *const refused[] = {
                /* "@blind\nme": the rest of the name is a line without the table's shape */
                UNIX_HEAD UNIX_LINE("00010000", "101", " @blind") "me\n",
                /* a name ending in a newline: an empty line, and the path would lose a byte */
                UNIX_HEAD UNIX_LINE("00010000", "101", " /run/sock\n"),
                UNIX_HEAD UNIX_LINE("00010000", "101", " /run/sock\n") UNIX_LINE("00000000", "102", ""),
                "not a header\n" UNIX_LINE("00010000", "101", " /x"),
        };
        for (size_t i = 0; i < KB_ELEMENTSOF(refused); i++) {
                a = NULL;
                if (kb_procfs_unix_parse(refused[i], &a) != -EPROTO)
                        fail_msg("table %zu was not refused", i);
                assert_null(a);
        }
        /* leniently: the lines with the table's shape, and how many others there were */
        size_t skipped = 0;
        assert_int_equal(kb_procfs_unix_parse_lenient(refused[0], &a, &skipped), 0);
        assert_int_equal(json_object_array_length(a), 1);
        assert_int_equal(skipped, 1);
        assert_string_equal(json_object_get_string(field(json_object_array_get_idx(a, 0), FACT_UNIX_ENTRY_PATH)),
                            "@blind");
        json_object_put(a);
#undef UNIX_HEAD
#undef UNIX_LINE
}

/* /proc/<pid>/net/tcp as Linux 6.1 writes it: a listener and both ends of a loopback connection. */
static void test_tcp_table(void **state) {
        (void) state;
        static const char text[] =
                "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
                "   0: 0100007F:2329 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 4116356 1 "
                "0000000000000000 100 0 0 10 0\n"
                "   1: 0100007F:9C40 0100007F:2329 01 00000000:00000000 00:00000000 00000000   999        0 4118712 1 "
                "0000000000000000 20 4 30 10 -1\n"
                "   2: 0100007F:2329 0100007F:9C40 01 00000000:00000000 00:00000000 00000000   999        0 4118713 1 "
                "0000000000000000 20 4 30 10 -1\n";
        json_object *tcp = NULL;
        assert_int_equal(kb_procfs_tcp_parse(text, &tcp), 0);
        assert_int_equal(json_object_array_length(tcp), 3);
        json_object *l = json_object_array_get_idx(tcp, 0), *c = json_object_array_get_idx(tcp, 1);
        assert_string_equal(kb_fact_str_of(l, FACT_TCP_ENTRY_LOCAL), "127.0.0.1:9001");
        assert_string_equal(kb_fact_str_of(l, FACT_TCP_ENTRY_REMOTE), "0.0.0.0:0");
        assert_int_equal(kb_fact_int_or(l, FACT_TCP_ENTRY_STATE, -1), 10);
        assert_int_equal(kb_fact_int_or(l, FACT_TCP_ENTRY_INODE, -1), 4116356);
        assert_string_equal(kb_fact_str_of(c, FACT_TCP_ENTRY_LOCAL), "127.0.0.1:40000");
        assert_string_equal(kb_fact_str_of(c, FACT_TCP_ENTRY_REMOTE), "127.0.0.1:9001");
        assert_int_equal(kb_fact_int_or(c, FACT_TCP_ENTRY_STATE, -1), 1);
        json_object_put(tcp);
        /* a line that is not the table's: refused, nothing made */
        tcp = NULL;
        assert_int_equal(kb_procfs_tcp_parse("  sl  local_address\n   0: 0100007F 00000000:0000 0A\n", &tcp), -EPROTO);
        assert_null(tcp);
        assert_int_equal(kb_procfs_tcp_parse("Inode Path\n", &tcp), -EPROTO);
}

static void test_sockstat(void **state) {
        (void) state;
        static const char v4[] = "sockets: used 412\n"
                                 "TCP: inuse 3 orphan 0 tw 2 alloc 9 mem 1\n"
                                 "UDP: inuse 0 mem 0\n"
                                 "UDPLITE: inuse 0\n";
        long n = -1;
        assert_int_equal(kb_procfs_sockstat_inuse(v4, "TCP", &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(kb_procfs_sockstat_inuse(v4, "UDP", &n), 0);
        assert_int_equal(n, 0);
        /* "TCP" is not "TCP6", nor "UDP" "UDPLITE"'s prefix */
        assert_int_equal(kb_procfs_sockstat_inuse(v4, "TCP6", &n), -ENOENT);
        assert_int_equal(kb_procfs_sockstat_inuse("TCP6: inuse 1\nUDP6: inuse 0\n", "TCP6", &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(kb_procfs_sockstat_inuse("TCP: orphan 0\n", "TCP", &n), -EPROTO);
        assert_int_equal(kb_procfs_sockstat_inuse("TCP: inuse x\n", "TCP", &n), -EPROTO);
        assert_int_equal(kb_procfs_sockstat_inuse("TCP: inuse -1\n", "TCP", &n), -EPROTO);
        assert_int_equal(kb_procfs_sockstat_inuse("", "TCP", &n), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_status),     cmocka_unit_test(test_status_refuses),
                cmocka_unit_test(test_stat),       cmocka_unit_test(test_mountinfo),
                cmocka_unit_test(test_path_under), cmocka_unit_test(test_mount_of),
                cmocka_unit_test(test_unix_table), cmocka_unit_test(test_tcp_table),
                cmocka_unit_test(test_sockstat),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
