/* canary.c: canaries planted where real secrets live, and loopback canary listeners (canary.h). */
#include "kbound/canary.h"
#include "base/cleanup.h"
#include <arpa/inet.h>
#include <errno.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

/* From <keyutils.h> (not a dependency): every possessor permission. */
#ifndef KEY_POS_ALL
#define KEY_POS_ALL 0x3f000000
#endif

int kb_canary_keyring_plant(const char *description, const char *payload, int32_t *ret_serial) {
        if (!description || !*description || !payload)
                return -EINVAL;
        /* Raw syscalls: libkeyutils would be one more dependency for two calls. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
                return -errno;
        long serial = syscall(SYS_add_key, "user", description, payload, strlen(payload), KEY_SPEC_SESSION_KEYRING);
        if (serial < 0)
                return -errno;
        /* Possessor only: no view, read or search for the user, group or others, so the one way to
         * reach the key is to possess kbound's session keyring (a same-uid sandbox would otherwise
         * see its name in /proc/keys). */
        if (syscall(SYS_keyctl, KEYCTL_SETPERM, serial, (unsigned long) KEY_POS_ALL) < 0)
                return -errno;
        if (ret_serial)
                *ret_serial = (int32_t) serial;
        return 0;
}

struct kb_canary_net {
        int tcp_fd, unix_fd;
        int tcp_port;
        char unix_name[64];
        unsigned tcp_hits, unix_hits;
};

int kb_canary_net_open(kb_canary_net **ret) {
        kb_canary_net *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->tcp_fd = c->unix_fd = -1;
        int r;
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(in);
        c->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->tcp_fd < 0 || bind(c->tcp_fd, (struct sockaddr *) &in, sizeof(in)) < 0 || listen(c->tcp_fd, 16) < 0 ||
            getsockname(c->tcp_fd, (struct sockaddr *) &in, &len) < 0)
                goto fail;
        c->tcp_port = ntohs(in.sin_port);

        char nonce[17];
        if ((r = kb_random_hex(nonce, 8)) < 0) {
                errno = -r;
                goto fail;
        }
        snprintf(c->unix_name, sizeof(c->unix_name), "kbound-canary-%s", nonce);
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        /* Abstract namespace: sun_path[0] is NUL; abstract sockets belong to the network namespace,
         * so only a sandbox sharing the host's can reach this one. */
        size_t name_len = strlen(c->unix_name);
        memcpy(un.sun_path + 1, c->unix_name, name_len);
        socklen_t un_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + name_len);
        c->unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (c->unix_fd < 0 || bind(c->unix_fd, (struct sockaddr *) &un, un_len) < 0 || listen(c->unix_fd, 16) < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        r = -errno;
        kb_canary_net_destroy(&c);
        return r;
}

int kb_canary_net_params(const kb_canary_net *c, json_object *params) {
        json_object *ports = json_object_new_array(), *names = json_object_new_array();
        if (!ports || !names) {
                json_object_put(ports);
                json_object_put(names);
                return -ENOMEM;
        }
        json_object_array_add(ports, json_object_new_int(c->tcp_port));
        json_object_array_add(names, json_object_new_string(c->unix_name));
        json_object_object_add(params, "tcp_ports", ports);
        json_object_object_add(params, "abstract_sockets", names);
        return 0;
}

static unsigned drain_accept(int fd) {
        unsigned n = 0;
        for (;;) {
                int a = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (a < 0)
                        break;
                close(a);
                n++;
        }
        return n;
}

void kb_canary_net_count(kb_canary_net *c, unsigned *ret_tcp, unsigned *ret_unix) {
        c->tcp_hits += drain_accept(c->tcp_fd);
        c->unix_hits += drain_accept(c->unix_fd);
        if (ret_tcp)
                *ret_tcp = c->tcp_hits;
        if (ret_unix)
                *ret_unix = c->unix_hits;
}

void kb_canary_net_destroy(kb_canary_net **cp) {
        if (!cp || !*cp)
                return;
        kb_closep(&(*cp)->tcp_fd);
        kb_closep(&(*cp)->unix_fd);
        free(*cp);
        *cp = NULL;
}
