/* seccomp_compare.c: seccomp programs run as the kernel runs them, and the calls of kbound's table a
 * stack of them answers otherwise than kbound's program (seccomp_compare.h). */
#include "kbound/seccomp_compare.h"
#include "kbound/seccomp.h"
#include <errno.h>
#include <stdbool.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>

#define MEMWORDS 16 /* BPF_MEMWORDS: the scratch memory of classic BPF */

/* One arithmetic instruction, op of A and src, into *a. Returns false for a division by 0 (which
 * ends the program), true otherwise; an op seccomp refuses leaves A as it is (run_one never gets
 * one: it checks first). */
static bool alu(uint32_t op, uint32_t src, uint32_t *a) {
        switch (op) {
        case BPF_ADD:
                *a += src;
                return true;
        case BPF_SUB:
                *a -= src;
                return true;
        case BPF_MUL:
                *a *= src;
                return true;
        case BPF_DIV:
        case BPF_MOD:
                if (src == 0)
                        return false;
                *a = op == BPF_DIV ? *a / src : *a % src;
                return true;
        case BPF_OR:
                *a |= src;
                return true;
        case BPF_AND:
                *a &= src;
                return true;
        case BPF_XOR:
                *a ^= src;
                return true;
        case BPF_LSH:
                *a = src < 32 ? *a << src : 0;
                return true;
        case BPF_RSH:
                *a = src < 32 ? *a >> src : 0;
                return true;
        case BPF_NEG:
                *a = -*a;
                return true;
        default:
                return true;
        }
}

/* Whether op is an arithmetic instruction classic BPF has. */
static bool alu_known(uint32_t op) {
        switch (op) {
        case BPF_ADD:
        case BPF_SUB:
        case BPF_MUL:
        case BPF_DIV:
        case BPF_MOD:
        case BPF_OR:
        case BPF_AND:
        case BPF_XOR:
        case BPF_LSH:
        case BPF_RSH:
        case BPF_NEG:
                return true;
        default:
                return false;
        }
}

/* Runs one program on d as the kernel's classic BPF does, within seccomp's instruction set
 * (kernel/seccomp.c, seccomp_check_filter): loads of seccomp_data's 32-bit words, the arithmetic,
 * forward jumps, the scratch memory, returns. Returns 0 and the program's answer, or -EINVAL. */
static int run_one(const kb_seccomp_prog *p, const struct seccomp_data *d, uint32_t *ret) {
        const struct sock_filter *f = p->insns;
        uint32_t a = 0, x = 0, mem[MEMWORDS] = {0};
        const unsigned char *data = (const unsigned char *) d;
        if (!f || p->len == 0 || p->len > BPF_MAXINSNS)
                return -EINVAL;
        for (size_t pc = 0; pc < p->len; pc++) {
                const struct sock_filter *i = &f[pc];
                uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k;
                switch (BPF_CLASS(i->code)) {
                case BPF_LD:
                case BPF_LDX: {
                        uint32_t v;
                        if (i->code == (BPF_LD | BPF_W | BPF_ABS)) {
                                if (k % 4 != 0 || k >= sizeof *d)
                                        return -EINVAL;
                                memcpy(&v, data + k, sizeof v);
                        } else if (BPF_MODE(i->code) == BPF_LEN && BPF_SIZE(i->code) == BPF_W)
                                v = sizeof *d;
                        else if (BPF_MODE(i->code) == BPF_IMM)
                                v = k;
                        else if (BPF_MODE(i->code) == BPF_MEM && k < MEMWORDS)
                                v = mem[k];
                        else
                                return -EINVAL;
                        if (BPF_CLASS(i->code) == BPF_LD)
                                a = v;
                        else
                                x = v;
                        break;
                }
                case BPF_ST:
                case BPF_STX:
                        if (k >= MEMWORDS)
                                return -EINVAL;
                        mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
                        break;
                case BPF_ALU:
                        if (!alu_known(BPF_OP(i->code)))
                                return -EINVAL;
                        if (!alu(BPF_OP(i->code), src, &a)) {
                                *ret = 0; /* a division by 0 ends a classic BPF program with 0: kill thread */
                                return 0;
                        }
                        break;
                case BPF_JMP: {
                        size_t skip;
                        switch (BPF_OP(i->code)) {
                        case BPF_JA:
                                skip = k;
                                break;
                        case BPF_JEQ:
                                skip = a == src ? i->jt : i->jf;
                                break;
                        case BPF_JGT:
                                skip = a > src ? i->jt : i->jf;
                                break;
                        case BPF_JGE:
                                skip = a >= src ? i->jt : i->jf;
                                break;
                        case BPF_JSET:
                                skip = (a & src) ? i->jt : i->jf;
                                break;
                        default:
                                return -EINVAL;
                        }
                        if (skip >= p->len - pc - 1)
                                return -EINVAL; /* past the last instruction */
                        pc += skip;
                        break;
                }
                case BPF_RET:
                        *ret = BPF_RVAL(i->code) == BPF_A ? a : k;
                        return 0;
                case BPF_MISC:
                        if (BPF_MISCOP(i->code) == BPF_TAX)
                                x = a;
                        else
                                a = x;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return -EINVAL; /* fell off the end: the kernel refuses such a program */
}

/* The kernel's order of actions: the lower, as a signed number of the action bits, wins
 * (kernel/seccomp.c, ACTION_ONLY). */
static int32_t action_rank(uint32_t r) {
        return (int32_t) (r & SECCOMP_RET_ACTION_FULL);
}

int kb_seccomp_run(const kb_seccomp_prog *progs, size_t n, const struct seccomp_data *d, uint32_t *ret) {
        if (!progs || n == 0 || !d || !ret)
                return -EINVAL;
        uint32_t best = SECCOMP_RET_ALLOW;
        /* newest first, as the kernel walks them: a tie keeps the newer's answer */
        for (size_t i = n; i-- > 0;) {
                uint32_t r;
                int e = run_one(&progs[i], d, &r);
                if (e < 0)
                        return e;
                if (action_rank(r) < action_rank(best))
                        best = r;
        }
        *ret = best;
        return 0;
}

const char *kb_seccomp_action_text(uint32_t action, char *buf, size_t size) {
        switch (action & SECCOMP_RET_ACTION_FULL) {
        case SECCOMP_RET_KILL_PROCESS:
                snprintf(buf, size, "kill process");
                break;
        case SECCOMP_RET_KILL_THREAD:
                snprintf(buf, size, "kill thread");
                break;
        case SECCOMP_RET_TRAP:
                snprintf(buf, size, "trap");
                break;
        case SECCOMP_RET_ERRNO: {
                const char *e = strerrorname_np((int) (action & SECCOMP_RET_DATA));
                if (e)
                        snprintf(buf, size, "errno %s", e);
                else
                        snprintf(buf, size, "errno %u", action & SECCOMP_RET_DATA);
                break;
        }
        case SECCOMP_RET_USER_NOTIF:
                snprintf(buf, size, "user notification");
                break;
        case SECCOMP_RET_TRACE:
                snprintf(buf, size, "trace");
                break;
        case SECCOMP_RET_LOG:
                snprintf(buf, size, "log");
                break;
        case SECCOMP_RET_ALLOW:
                snprintf(buf, size, "allow");
                break;
        default:
                snprintf(buf, size, "action 0x%08x", action);
        }
        return buf;
}

/* The audit architecture seccomp_data carries for a call through abi, 0 for none. */
static uint32_t audit_arch_of(kb_sysabi abi) {
#if defined(__x86_64__)
        static const uint32_t arches[KB_SYSABI_MAX_] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64};
#elif defined(__aarch64__)
        static const uint32_t arches[KB_SYSABI_MAX_] = {AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, 0};
#else
        static const uint32_t arches[KB_SYSABI_MAX_] = {0, 0, 0};
#endif
        return (unsigned) abi < KB_SYSABI_MAX_ ? arches[abi] : 0;
}

#define SOCKETCALL_SOCKET 1
#define SOCKETCALL_SOCKETPAIR 8

/* What the compare runs: the two sides and where the differences go. */
typedef struct compare {
        const kb_seccomp_prog *built, *in_force;
        size_t n;
        kb_seccomp_difference *out;
        size_t max, found;
} compare;

/* One call through both sides; a difference is kept. Returns 0 or -EINVAL. */
static int compare_call(compare *c, kb_sysabi abi, const char *name, long nr, const uint64_t args[6]) {
        struct seccomp_data d = {.nr = (int) nr, .arch = audit_arch_of(abi)};
        for (size_t i = 0; i < 6; i++)
                d.args[i] = kb_sysabi_narrow(abi) && abi != KB_SYSABI_X32 ? (uint32_t) args[i] : args[i];
        uint32_t built, in_force;
        int r = kb_seccomp_run(c->built, 1, &d, &built);
        if (r == 0)
                r = kb_seccomp_run(c->in_force, c->n, &d, &in_force);
        if (r < 0)
                return r;
        if (built == in_force)
                return 0;
        if (c->found < c->max) {
                kb_seccomp_difference *diff = &c->out[c->found];
                *diff = (kb_seccomp_difference){.abi = abi, .nr = nr, .built = built, .in_force = in_force};
                snprintf(diff->call, sizeof diff->call, "%s", name);
        }
        c->found++;
        return 0;
}

/* Every way a family reaches socket creation on abi. */
static int compare_family(compare *c, kb_sysabi abi, const kb_seccomp_entry *e) {
        static const struct {
                const char *call, *way; /* way: how the label names it; NULL for socket(2) itself */
                uint64_t op;            /* socketcall's operation; 0: a call of its own */
        } routes[] = {{"socket", NULL, 0},
                      {"socketpair", "socketpair", 0},
                      {"socketcall", "socketcall(SOCKET)", SOCKETCALL_SOCKET},
                      {"socketcall", "socketcall(SOCKETPAIR)", SOCKETCALL_SOCKETPAIR}};
        for (size_t i = 0; i < KB_ELEMENTSOF(routes); i++) {
                int nr = kb_seccomp_syscall_nr_on(routes[i].call, abi);
                if (nr < 0)
                        continue;
                /* socketcall's arguments are in memory no filter reads: a pointer stands for them */
                uint64_t args[6] = {routes[i].op ? routes[i].op : e->value, routes[i].op ? 0x10000 : 1};
                char label[80];
                if (routes[i].way)
                        snprintf(label, sizeof label, "%s through %s", e->name, routes[i].way);
                else
                        snprintf(label, sizeof label, "%s", e->name);
                int r = compare_call(c, abi, label, nr, args);
                if (r < 0)
                        return r;
        }
        return 0;
}

int kb_seccomp_compare(const kb_seccomp_prog *built, const kb_seccomp_prog *in_force, size_t n,
                       kb_seccomp_difference *ret, size_t max, size_t *ret_n) {
        if (!built || !in_force || n == 0 || (!ret && max) || !ret_n)
                return -EINVAL;
        compare c = {.built = built, .in_force = in_force, .n = n, .out = ret, .max = max};
        for (kb_sysabi abi = 0; abi < KB_SYSABI_MAX_; abi++) {
                if (!kb_seccomp_abi_filtered(abi) || !audit_arch_of(abi))
                        continue;
                for (size_t i = 0; i < kb_seccomp_entry_count(); i++) {
                        const kb_seccomp_entry *e = kb_seccomp_entry_at(i);
                        int r;
                        if (e->match == KB_SECCOMP_MATCH_FAMILY) {
                                r = compare_family(&c, abi, e);
                        } else {
                                int nr = kb_seccomp_entry_syscall_nr_on(e, abi);
                                if (nr < 0)
                                        continue;
                                uint64_t args[6] = {0};
                                if ((e->match == KB_SECCOMP_MATCH_FLAG || e->match == KB_SECCOMP_MATCH_VALUE) &&
                                    e->arg >= 0 && e->arg < 6)
                                        args[e->arg] = e->value;
                                else if (e->match == KB_SECCOMP_MATCH_PERSONALITY)
                                        args[0] = ADDR_NO_RANDOMIZE;
                                r = compare_call(&c, abi, e->name, nr, args);
                        }
                        if (r < 0)
                                return r;
                }
        }
        *ret_n = c.found;
        return 0;
}
