/* seccomp.c: the sandbox's seccomp blocklist as data, and its compilation with libseccomp into the
 * raw BPF program that `bwrap --seccomp FD` loads. */
#include "kbound/seccomp.h"
#include "base/cleanup.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The blocklist. Default allow: a kernel runs arbitrary user code (pip, compilers, R packages), so
 * an allowlist would break it in ways nobody can predict; what is refused here is what peer
 * sandboxes refuse and what a Jupyter kernel never needs. Anchors: Flatpak
 * (common/flatpak-run.c, setup_seccomp), moby (profiles/seccomp/default.json: calls it allows only
 * with a capability kbound drops), systemd (src/shared/seccomp-util.c groups), codex
 * (codex-rs/linux-sandbox: socket families, io_uring).
 *
 * Errnos: EPERM, as Flatpak and moby return; ENOSYS where a caller must fall back to an older
 * call (clone3 -> clone, the new mount API -> nothing, as Flatpak and systemd do); EAFNOSUPPORT
 * for socket families, which is what a kernel without the family says. Never a kill: a killed
 * kernel looks like a crash, and the report could not say which call it was.
 */
#define CALL(name_, why_, anchors_)                                                                                    \
        {                                                                                                              \
                .name = name_, .syscall = name_, .match = KB_SECCOMP_MATCH_CALL, .arg = -1, .errnum = EPERM,           \
                .why = why_, .anchors = anchors_                                                                       \
        }
#define CALL_ENOSYS(name_, why_, anchors_)                                                                             \
        {                                                                                                              \
                .name = name_, .syscall = name_, .match = KB_SECCOMP_MATCH_CALL, .arg = -1, .errnum = ENOSYS,          \
                .why = why_, .anchors = anchors_                                                                       \
        }
#define CLONE_NS(flag_, why_, anchors_)                                                                                \
        {                                                                                                              \
                .name = "clone:" #flag_, .syscall = "clone", .match = KB_SECCOMP_MATCH_FLAG, .arg = 0, .value = flag_, \
                .errnum = EPERM, .why = why_, .anchors = anchors_                                                      \
        }
#define IOCTL(request_, why_, anchors_)                                                                                \
        {                                                                                                              \
                .name = "ioctl:" #request_, .syscall = "ioctl", .match = KB_SECCOMP_MATCH_VALUE, .arg = 1,             \
                .value = request_, .errnum = EPERM, .why = why_, .anchors = anchors_                                   \
        }
#define FAMILY(name_, number_, why_)                                                                                   \
        {                                                                                                              \
                .name = name_, .syscall = "socket", .match = KB_SECCOMP_MATCH_FAMILY, .arg = 0, .value = number_,      \
                .errnum = EAFNOSUPPORT, .why = why_, .anchors = "flatpak, codex"                                       \
        }

/* Why the families nobody names specifically are refused. */
#define FAMILY_RARE                                                                                                    \
        "an address family a kernel never uses: its kernel code (often a module loaded on demand) is "                 \
        "reachable by any process"

static const kb_seccomp_entry entries[] = {
        /* kernel log, accounting, obsolete and emulation calls */
        CALL("syslog", "reads or clears the kernel log: kernel addresses and the host's messages", "flatpak, moby"),
        CALL("acct", "switches process accounting for the whole host", "flatpak, moby"),
        CALL("uselib", "obsolete a.out library loader that no current program uses", "flatpak, systemd @obsolete"),
        CALL("modify_ldt", "16-bit segment descriptors (x86): a history of kernel information leaks",
             "flatpak, systemd @cpu-emulation"),
        CALL("vm86", "virtual-8086 mode (32-bit x86 only): emulation a kernel never needs",
             "moby, systemd @cpu-emulation"),
        CALL("vm86old", "the older virtual-8086 call (32-bit x86 only)", "moby, systemd @cpu-emulation"),
        CALL("quotactl", "reads and changes the disk quotas of host filesystems", "flatpak, moby"),
        CALL("quotactl_fd", "the file-descriptor form of quotactl", "moby"),

        /* the kernel keyring: not namespaced, shared per user, outlives the sandbox */
        CALL("add_key", "the kernel keyring is not namespaced: keys are shared per uid and outlive the sandbox",
             "flatpak, moby"),
        CALL("keyctl", "reads and changes the kernel keyring, shared per uid beyond the sandbox", "flatpak, moby"),
        CALL("request_key", "asks the kernel keyring (and its upcalls) for a key", "flatpak, moby"),

        /* NUMA memory placement */
        CALL("move_pages", "moves memory between NUMA nodes: host-wide effects and a long bug history",
             "flatpak, moby"),
        CALL("mbind", "sets NUMA placement of memory", "flatpak, moby"),
        CALL("get_mempolicy", "reads NUMA placement (host topology)", "flatpak, moby"),
        CALL("set_mempolicy", "sets NUMA placement of a process", "flatpak, moby"),
        CALL("migrate_pages", "moves a process's memory between NUMA nodes", "flatpak, moby"),
        CALL("set_mempolicy_home_node", "sets the home NUMA node of memory", "moby"),

        /* namespaces and the filesystem view bwrap built */
        CALL("unshare", "new namespaces: a nested user namespace hands its creator every capability inside it",
             "flatpak, moby, systemd RestrictNamespaces"),
        CALL("setns", "joins another namespace", "flatpak, moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWUSER,
                 "clone into a new user namespace: every capability inside it, the usual first step of an "
                 "escape",
                 "flatpak, moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWNS, "clone into a new mount namespace", "moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWPID, "clone into a new pid namespace", "moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWNET, "clone into a new network namespace", "moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWIPC, "clone into a new IPC namespace", "moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWUTS, "clone into a new UTS namespace", "moby, systemd RestrictNamespaces"),
        CLONE_NS(CLONE_NEWCGROUP, "clone into a new cgroup namespace", "moby, systemd RestrictNamespaces"),
        CALL_ENOSYS("clone3",
                    "seccomp cannot read clone3's flags (they are in memory), so clone3 says ENOSYS and libc "
                    "falls back to clone",
                    "flatpak, moby, systemd"),
        CALL("mount", "changes the filesystem view bwrap built", "flatpak, moby, systemd @mount"),
        CALL("umount", "unmounts part of the sandbox's view (32-bit x86 only)", "flatpak, moby, systemd @mount"),
        CALL("umount2", "unmounts part of the sandbox's view, uncovering what lies beneath",
             "flatpak, moby, systemd @mount"),
        CALL("pivot_root", "changes the sandbox's root", "flatpak, moby, systemd @mount"),
        CALL("chroot", "changes the root directory", "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("open_tree", "new mount API: clones mounts (CVE-2021-41133); ENOSYS so callers fall back",
                    "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("move_mount", "new mount API: attaches mounts", "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("fsopen", "new mount API: opens a filesystem context", "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("fsconfig", "new mount API: configures a filesystem context", "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("fsmount", "new mount API: creates a mount", "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("fspick", "new mount API: reconfigures an existing mount", "flatpak, moby, systemd @mount"),
        CALL_ENOSYS("mount_setattr", "new mount API: changes mount attributes", "flatpak, moby, systemd @mount"),

        /* terminals */
        IOCTL(TIOCSTI, "pushes input into a terminal: commands typed into the host's shell (CVE-2017-5226)", "flatpak"),
        IOCTL(TIOCLINUX, "Linux console copy and paste, the same injection on a virtual console (CVE-2023-28100)",
              "flatpak"),

        /* other processes, the kernel's execution domain */
        CALL("ptrace", "inspects and changes other processes of the sandbox", "flatpak, moby, systemd @debug"),
        CALL("process_vm_readv", "reads another process's memory", "moby, codex"),
        CALL("process_vm_writev", "writes another process's memory", "moby, codex"),
        CALL("process_madvise", "gives memory advice for another process", "moby"),
        CALL("kcmp", "compares two processes' kernel objects (an ordering oracle on kernel pointers)", "moby"),
        CALL("pidfd_getfd", "copies a file descriptor out of another process", "moby, systemd @debug"),
        {.name = "personality",
         .syscall = "personality",
         .match = KB_SECCOMP_MATCH_PERSONALITY,
         .arg = 0,
         .errnum = EPERM,
         .why = "execution domains other than the default (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, other ABIs) "
                "undo exploit mitigations; PER_LINUX and the query 0xffffffff stay allowed",
         .anchors = "flatpak, moby, systemd LockPersonality"},

        /* the usual first steps of a kernel exploit */
        CALL("perf_event_open", "performance counters: a long CVE history and a side channel",
             "flatpak, moby, systemd @debug"),
        CALL("io_uring_setup",
             "io_uring: its operations bypass seccomp (IORING_OP_SOCKET makes any socket family) and it "
             "leads kernel exploit statistics",
             "moby, codex"),
        CALL("io_uring_enter", "submits io_uring operations, which seccomp never sees", "moby, codex"),
        CALL("io_uring_register", "registers io_uring resources", "moby, codex"),
        CALL("bpf", "loads programs into the kernel: a leading source of kernel exploits", "moby"),
        CALL("userfaultfd", "user-space page-fault handling, used to widen race windows in kernel exploits", "moby"),
        CALL("open_by_handle_at",
             "opens any file of a filesystem by handle, around the mount view (the 'shocker' escape)", "moby"),
        CALL("name_to_handle_at", "makes the handles open_by_handle_at consumes; no kernel needs it", "kbound"),

        /* the host itself */
        CALL("kexec_load", "replaces the running host kernel", "moby, systemd @reboot"),
        CALL("kexec_file_load", "replaces the running host kernel from a file", "moby, systemd @reboot"),
        CALL("init_module", "loads a host kernel module", "moby, systemd @module"),
        CALL("finit_module", "loads a host kernel module from a file", "moby, systemd @module"),
        CALL("delete_module", "unloads a host kernel module", "moby, systemd @module"),
        CALL("reboot", "reboots the host, or ends the sandbox's pid namespace", "moby, systemd @reboot"),
        CALL("swapon", "adds host swap", "moby, systemd @swap"),
        CALL("swapoff", "removes host swap", "moby, systemd @swap"),
        CALL("iopl", "raw access to x86 I/O ports", "moby, systemd @raw-io"),
        CALL("ioperm", "raw access to x86 I/O ports", "moby, systemd @raw-io"),
        CALL("settimeofday", "sets the host's clock", "moby, systemd @clock"),
        CALL("clock_settime", "sets a host clock", "moby, systemd @clock"),
        CALL("clock_settime64", "sets a host clock (32-bit ABIs)", "moby, systemd @clock"),
        CALL("stime", "sets the host's clock (32-bit x86 only)", "moby, systemd @clock"),

        /* socket families, in numeric order; AF_UNIX (1) is never refused */
        FAMILY("AF_UNSPEC", 0, "not an address family"),
        FAMILY("AF_INET", 2,
               "IPv4: refused unless the policy allows IP (the raw-network override); the sandbox's network "
               "has only lo"),
        FAMILY("AF_AX25", 3, FAMILY_RARE),
        FAMILY("AF_IPX", 4, FAMILY_RARE),
        FAMILY("AF_APPLETALK", 5, FAMILY_RARE),
        FAMILY("AF_NETROM", 6, FAMILY_RARE),
        FAMILY("AF_BRIDGE", 7, FAMILY_RARE),
        FAMILY("AF_ATMPVC", 8, FAMILY_RARE),
        FAMILY("AF_X25", 9, FAMILY_RARE),
        FAMILY("AF_INET6", 10, "IPv6: refused unless the policy allows IP (the raw-network override)"),
        FAMILY("AF_ROSE", 11, FAMILY_RARE),
        FAMILY("AF_DECnet", 12, FAMILY_RARE),
        FAMILY("AF_NETBEUI", 13, FAMILY_RARE),
        FAMILY("AF_SECURITY", 14, FAMILY_RARE),
        FAMILY("AF_KEY", 15, "IPsec key management: the host's security associations"),
        FAMILY("AF_NETLINK", 16,
               "kernel configuration and queries; allowed except in sockets=unix mode (getifaddrs needs "
               "route netlink)"),
        FAMILY("AF_PACKET", 17, "raw link-layer frames: sniffing and spoofing below IP"),
        FAMILY("AF_ASH", 18, FAMILY_RARE),
        FAMILY("AF_ECONET", 19, FAMILY_RARE),
        FAMILY("AF_ATMSVC", 20, FAMILY_RARE),
        FAMILY("AF_RDS", 21, "reliable datagram sockets: a family with local privilege-escalation history"),
        FAMILY("AF_SNA", 22, FAMILY_RARE),
        FAMILY("AF_IRDA", 23, FAMILY_RARE),
        FAMILY("AF_PPPOX", 24, FAMILY_RARE),
        FAMILY("AF_WANPIPE", 25, FAMILY_RARE),
        FAMILY("AF_LLC", 26, FAMILY_RARE),
        FAMILY("AF_IB", 27, FAMILY_RARE),
        FAMILY("AF_MPLS", 28, FAMILY_RARE),
        FAMILY("AF_CAN", 29, "CAN bus: hardware a kernel has no business with"),
        FAMILY("AF_TIPC", 30, "cluster IPC: a family with remote and local exploit history"),
        FAMILY("AF_BLUETOOTH", 31, "Bluetooth: host radios"),
        FAMILY("AF_IUCV", 32, FAMILY_RARE),
        FAMILY("AF_RXRPC", 33, FAMILY_RARE),
        FAMILY("AF_ISDN", 34, FAMILY_RARE),
        FAMILY("AF_PHONET", 35, FAMILY_RARE),
        FAMILY("AF_IEEE802154", 36, FAMILY_RARE),
        FAMILY("AF_CAIF", 37, FAMILY_RARE),
        FAMILY("AF_ALG", 38, "the kernel crypto API: a recurring source of exploits"),
        FAMILY("AF_NFC", 39, FAMILY_RARE),
        FAMILY("AF_VSOCK", 40,
               "host-guest sockets: network namespaces do not cover vsock, so on a virtual machine a cell "
               "could reach the hypervisor; refused in every mode"),
        FAMILY("AF_KCM", 41, FAMILY_RARE),
        FAMILY("AF_QIPCRTR", 42, FAMILY_RARE),
        FAMILY("AF_SMC", 43, FAMILY_RARE),
        FAMILY("AF_XDP", 44, "express data path: raw frames into user memory"),
        FAMILY("AF_MCTP", 45, FAMILY_RARE),
};

#define FAMILY_UNIX 1
#define FAMILY_INET 2
#define FAMILY_INET6 10
#define FAMILY_NETLINK 16

size_t kb_seccomp_entry_count(void) {
        return KB_ELEMENTSOF(entries);
}

const kb_seccomp_entry *kb_seccomp_entry_at(size_t i) {
        return i < KB_ELEMENTSOF(entries) ? &entries[i] : NULL;
}

const kb_seccomp_entry *kb_seccomp_entry_find(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; i < KB_ELEMENTSOF(entries); i++)
                if (strcmp(entries[i].name, name) == 0)
                        return &entries[i];
        return NULL;
}

int kb_seccomp_entry_syscall_nr(const kb_seccomp_entry *entry) {
        return kb_seccomp_entry_syscall_nr_on(entry, KB_SYSABI_NATIVE);
}

/* libseccomp's token for abi on this machine (the filter's rules for it), 0 when there is none:
 * x86_64 runs i386 and x32 code, aarch64 arm code. */
static uint32_t scmp_arch_of(kb_sysabi abi) {
        uint32_t native = seccomp_arch_native();
        switch (abi) {
        case KB_SYSABI_NATIVE:
                return native;
        case KB_SYSABI_COMPAT32:
                return native == SCMP_ARCH_X86_64 ? SCMP_ARCH_X86 : native == SCMP_ARCH_AARCH64 ? SCMP_ARCH_ARM : 0;
        case KB_SYSABI_X32:
                return native == SCMP_ARCH_X86_64 ? SCMP_ARCH_X32 : 0;
        default:
                return 0;
        }
}

bool kb_seccomp_abi_filtered(kb_sysabi abi) {
        return scmp_arch_of(abi) != 0;
}

int kb_seccomp_syscall_nr_on(const char *name, kb_sysabi abi) {
        uint32_t arch = scmp_arch_of(abi);
        if (!name || !arch)
                return -EINVAL;
        /* 32-bit x86 had only socketcall(2) until Linux 4.3 added the direct socket calls; libseccomp
         * names "socket" and "socketpair" there by pseudo numbers that stand for both ways in (its
         * rules cover each). A try or a comparison makes the direct call: these are its numbers
         * (arch/x86/entry/syscalls/syscall_32.tbl; test_seccomp holds libseccomp to them). */
        if (arch == SCMP_ARCH_X86 && strcmp(name, "socket") == 0)
                return 359;
        if (arch == SCMP_ARCH_X86 && strcmp(name, "socketpair") == 0)
                return 360;
        int nr = seccomp_syscall_resolve_name_arch(arch, name);
        /* libseccomp answers a negative pseudo number for a call the ABI lacks, and
         * __NR_SCMP_ERROR for a name it does not know at all. */
        return nr < 0 ? -ENOSYS : nr;
}

int kb_seccomp_entry_syscall_nr_on(const kb_seccomp_entry *entry, kb_sysabi abi) {
        if (!entry)
                return -EINVAL;
        return kb_seccomp_syscall_nr_on(entry->syscall, abi);
}

/* The families each socket mode lets through, in increasing order. Every family not listed is
 * refused, including numbers no kernel has assigned yet. */
static const uint64_t families_default[] = {FAMILY_UNIX, FAMILY_NETLINK};
static const uint64_t families_unix[] = {FAMILY_UNIX};
static const uint64_t families_inet[] = {FAMILY_UNIX, FAMILY_INET, FAMILY_INET6, FAMILY_NETLINK};

static const uint64_t *allowed_families(kb_seccomp_sockets sockets, size_t *ret_n) {
        switch (sockets) {
        case KB_SECCOMP_SOCKETS_UNIX:
                *ret_n = KB_ELEMENTSOF(families_unix);
                return families_unix;
        case KB_SECCOMP_SOCKETS_INET:
                *ret_n = KB_ELEMENTSOF(families_inet);
                return families_inet;
        default:
                *ret_n = KB_ELEMENTSOF(families_default);
                return families_default;
        }
}

static bool family_allowed(kb_seccomp_sockets sockets, uint64_t family) {
        size_t n;
        const uint64_t *allowed = allowed_families(sockets, &n);
        for (size_t i = 0; i < n; i++)
                if (allowed[i] == family)
                        return true;
        return false;
}

static bool allow_names(const kb_seccomp_policy *policy, const char *name) {
        if (!policy || !policy->allow)
                return false;
        for (char *const *a = policy->allow; *a; a++)
                if (strcmp(*a, name) == 0)
                        return true;
        return false;
}

bool kb_seccomp_blocks(const kb_seccomp_policy *policy, const kb_seccomp_entry *entry) {
        if (!entry)
                return false;
        if (entry->match == KB_SECCOMP_MATCH_FAMILY)
                return !family_allowed(policy ? policy->sockets : KB_SECCOMP_SOCKETS_DEFAULT, entry->value);
        return !allow_names(policy, entry->name);
}

int kb_seccomp_policy_check(const kb_seccomp_policy *policy) {
        if (!policy)
                return 0;
        if ((unsigned) policy->sockets >= KB_SECCOMP_SOCKETS_MAX_)
                return -EINVAL;
        if (!policy->allow)
                return 0;
        for (char *const *a = policy->allow; *a; a++) {
                const kb_seccomp_entry *e = kb_seccomp_entry_find(*a);
                if (!e || e->match == KB_SECCOMP_MATCH_FAMILY)
                        return -EINVAL;
        }
        return 0;
}

static const char *const sockets_names[KB_SECCOMP_SOCKETS_MAX_] = {
        [KB_SECCOMP_SOCKETS_DEFAULT] = "default",
        [KB_SECCOMP_SOCKETS_UNIX] = "unix",
        [KB_SECCOMP_SOCKETS_INET] = "inet",
};

int kb_seccomp_sockets_from_string(const char *s, kb_seccomp_sockets *ret) {
        if (!s || !ret)
                return -EINVAL;
        for (int i = 0; i < KB_SECCOMP_SOCKETS_MAX_; i++)
                if (strcmp(s, sockets_names[i]) == 0) {
                        *ret = (kb_seccomp_sockets) i;
                        return 0;
                }
        return -EINVAL;
}

const char *kb_seccomp_sockets_to_string(kb_seccomp_sockets sockets) {
        return (unsigned) sockets < KB_SECCOMP_SOCKETS_MAX_ ? sockets_names[sockets] : NULL;
}

static void seccomp_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

/* Adds the compat ABIs a host of the native architecture may run (kbound/sysabi.h); each gets
 * every rule added afterwards. Whether this host really runs them (ia32_emulation=0, x32 disabled,
 * an arm64 CPU without AArch32) does not matter: the rules cost nothing there, and a filter that does
 * not depend on the host is one the tests can pin down. */
static int add_compat_arches(scmp_filter_ctx ctx) {
        for (kb_sysabi abi = KB_SYSABI_COMPAT32; abi < KB_SYSABI_MAX_; abi++) {
                uint32_t arch = scmp_arch_of(abi);
                if (!arch)
                        continue;
                int r = seccomp_arch_add(ctx, arch);
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        return 0;
}

static int add_rule(scmp_filter_ctx ctx, int errnum, int nr, const struct scmp_arg_cmp *cmp) {
        return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint16_t) errnum), nr, cmp ? 1 : 0, cmp);
}

/* Adds the rules of one call entry. Comparisons read the low 32 bits only (the high mask is 0)
 * where the kernel reads an int or unsigned int (ioctl's request, personality), so garbage in the
 * high half of the register cannot slip past. */
static int add_call_rules(scmp_filter_ctx ctx, const kb_seccomp_entry *e, uint32_t native) {
        int nr = seccomp_syscall_resolve_name(e->syscall);
        if (nr == __NR_SCMP_ERROR)
                return -ENOSYS;
        switch (e->match) {
        case KB_SECCOMP_MATCH_CALL:
                return add_rule(ctx, e->errnum, nr, NULL);
        case KB_SECCOMP_MATCH_FLAG: {
                /* clone's flags come second on s390 (CONFIG_CLONE_BACKWARDS2) */
                unsigned arg = (unsigned) e->arg;
                if (strcmp(e->syscall, "clone") == 0 && (native == SCMP_ARCH_S390X || native == SCMP_ARCH_S390))
                        arg = 1;
                struct scmp_arg_cmp cmp = {
                        .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = e->value, .datum_b = e->value};
                return add_rule(ctx, e->errnum, nr, &cmp);
        }
        case KB_SECCOMP_MATCH_VALUE: {
                struct scmp_arg_cmp cmp = {
                        .arg = (unsigned) e->arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = UINT32_MAX, .datum_b = e->value};
                return add_rule(ctx, e->errnum, nr, &cmp);
        }
        case KB_SECCOMP_MATCH_PERSONALITY:
                /* Allowed: 0 (PER_LINUX) and 0xffffffff (the query); refused: every other 32-bit
                 * value. libseccomp compares an argument once per rule, so "neither all zeros nor
                 * all ones" is written as a union of 32 rules: such a value has some bit i set and
                 * the next bit (i + 1 mod 32) clear, because walking up cyclically from any set bit
                 * must reach a clear one. Rule i matches exactly that pattern. */
                for (unsigned i = 0; i < 32; i++) {
                        uint32_t bit = UINT32_C(1) << i, next = UINT32_C(1) << ((i + 1) % 32);
                        struct scmp_arg_cmp cmp = {
                                .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = bit | next, .datum_b = bit};
                        int r = add_rule(ctx, e->errnum, nr, &cmp);
                        if (r < 0)
                                return r;
                }
                return 0;
        case KB_SECCOMP_MATCH_FAMILY:
                break;
        }
        return -EINVAL;
}

/* Refuses every family sockets does not allow, for socket(2) and socketpair(2) alike (socketpair
 * creates sockets of the family before it fails for most of them). Each refused number up to the
 * highest allowed one gets an equality rule and everything above gets one range rule, so family
 * numbers the kernel assigns later are refused too; the comparison is on the whole register, so
 * high garbage lands in the range rule. On 32-bit x86 libseccomp also refuses socketcall(2)'s
 * socket and socketpair operations whatever the family (it cannot read their arguments): a 32-bit
 * program that creates sockets through socketcall gets EAFNOSUPPORT, which fails closed. */
static int add_family_rules(scmp_filter_ctx ctx, kb_seccomp_sockets sockets) {
        static const char *const calls[] = {"socket", "socketpair"};
        size_t n;
        const uint64_t *allowed = allowed_families(sockets, &n);
        uint64_t highest = allowed[n - 1];
        for (size_t c = 0; c < KB_ELEMENTSOF(calls); c++) {
                int nr = seccomp_syscall_resolve_name(calls[c]);
                if (nr == __NR_SCMP_ERROR)
                        return -ENOSYS;
                for (uint64_t f = 0; f < highest; f++) {
                        if (family_allowed(sockets, f))
                                continue;
                        struct scmp_arg_cmp cmp = {.arg = 0, .op = SCMP_CMP_EQ, .datum_a = f};
                        int r = add_rule(ctx, EAFNOSUPPORT, nr, &cmp);
                        if (r < 0)
                                return r;
                }
                struct scmp_arg_cmp above = {.arg = 0, .op = SCMP_CMP_GT, .datum_a = highest};
                int r = add_rule(ctx, EAFNOSUPPORT, nr, &above);
                if (r < 0)
                        return r;
        }
        return 0;
}

int kb_seccomp_instructions(int fd, size_t *ret_count) {
        if (fd < 0 || !ret_count)
                return -EINVAL;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size < 0 || st.st_size % (off_t) sizeof(struct sock_filter) != 0)
                return -EBADMSG;
        *ret_count = (size_t) st.st_size / sizeof(struct sock_filter);
        return 0;
}

int kb_seccomp_program_read(int fd, void **ret, size_t *ret_len) {
        if (fd < 0 || !ret || !ret_len)
                return -EINVAL;
        size_t count;
        int r = kb_seccomp_instructions(fd, &count);
        if (r < 0)
                return r;
        if (count == 0)
                return -EBADMSG;
        size_t len = count * sizeof(struct sock_filter);
        _cleanup_free_ void *buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        ssize_t got = pread(fd, buf, len, 0);
        if (got < 0)
                return -errno;
        if ((size_t) got != len)
                return -EIO;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int kb_seccomp_build(const kb_seccomp_policy *policy, int *ret_fd) {
        static const kb_seccomp_policy default_policy = {0};
        if (!ret_fd)
                return -EINVAL;
        int r = kb_seccomp_policy_check(policy);
        if (r < 0)
                return r;
        if (!policy)
                policy = &default_policy;

        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        /* A syscall made under an ABI the filter has no rules for would pass unchecked: kill it.
         * Only the bad-architecture path kills; every rule returns an errno. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0) /* libseccomp asks the running kernel, through seccomp(2), whether it has the action */
                return -EOPNOTSUPP;
        /* A binary tree of syscall numbers: each syscall the kernel makes walks log(n) jumps, not
         * the whole list. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return r;
        uint32_t native = seccomp_arch_native();
        r = add_compat_arches(ctx);
        if (r < 0)
                return r;

        for (size_t i = 0; i < KB_ELEMENTSOF(entries); i++) {
                const kb_seccomp_entry *e = &entries[i];
                if (e->match == KB_SECCOMP_MATCH_FAMILY || !kb_seccomp_blocks(policy, e))
                        continue;
                r = add_call_rules(ctx, e, native);
                if (r < 0)
                        return r;
        }
        r = add_family_rules(ctx, policy->sockets);
        if (r < 0)
                return r;

        _cleanup_close_ int fd = memfd_create("kbound-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        /* bwrap reads what it is given; nothing may change the program after it was checked. */
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        size_t count;
        r = kb_seccomp_instructions(fd, &count);
        if (r < 0)
                return r;
        if (count == 0 || count > BPF_MAXINSNS)
                return -E2BIG;
        *ret_fd = TAKE_FD(fd);
        return 0;
}
