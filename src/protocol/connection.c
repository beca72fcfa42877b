/* connection.c: Jupyter connection files: random keys, held tcp ports, ipc paths, safe write, parse. */
#include "kbound/connection.h"
#include "base/cleanup.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* 32 random bytes = 256 bits, the same strength jupyter_client's uuid4-based keys aim for. */
#define KEY_RANDOM_BYTES 32
#define KEY_HEX_CHARS (KEY_RANDOM_BYTES * 2)
/* A connection file is one flat object; anything nested deeper is not one. */
#define CONNECTION_JSON_MAX_DEPTH 8
#define SIGNATURE_SCHEME "hmac-sha256"

static const char *const channel_names[_KB_CHANNEL_MAX] = {
        [KB_CHANNEL_SHELL] = "shell",     [KB_CHANNEL_IOPUB] = "iopub", [KB_CHANNEL_STDIN] = "stdin",
        [KB_CHANNEL_CONTROL] = "control", [KB_CHANNEL_HB] = "hb",
};

/* The connection-file keys, indexed by kb_channel. */
static const char *const port_keys[_KB_CHANNEL_MAX] = {
        [KB_CHANNEL_SHELL] = "shell_port",     [KB_CHANNEL_IOPUB] = "iopub_port", [KB_CHANNEL_STDIN] = "stdin_port",
        [KB_CHANNEL_CONTROL] = "control_port", [KB_CHANNEL_HB] = "hb_port",
};

const char *kb_channel_name(kb_channel ch) {
        if ((unsigned) ch >= _KB_CHANNEL_MAX)
                return NULL;
        return channel_names[ch];
}

/* Allocates an empty connection with every fd at -1 so destroy is always safe. */
static kb_connection *connection_alloc(void) {
        kb_connection *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++)
                c->held_fds[i] = -1;
        return c;
}

/* Fills a fresh key: 32 bytes from the kernel CSPRNG as 64 lowercase hex chars. The HMAC key is
 * these ASCII bytes, exactly as jupyter_client uses its (hex) key string. Returns 0 or -errno. */
static int random_key(char **ret_key) {
        char *key = malloc(KEY_HEX_CHARS + 1);
        if (!key)
                return -ENOMEM;
        int r = kb_random_hex(key, KEY_RANDOM_BYTES);
        if (r < 0) {
                free(key);
                return r;
        }
        *ret_key = key;
        return 0;
}

/* Sets the fields every generated connection shares: transport, ip, key, signature scheme. */
static int connection_init_common(kb_connection *c, kb_transport transport, const char *ip) {
        c->transport = transport;
        c->ip = strdup(ip);
        c->signature_scheme = strdup(SIGNATURE_SCHEME);
        if (!c->ip || !c->signature_scheme)
                return -ENOMEM;
        return random_key(&c->key);
}

int kb_connection_new_tcp(const char *ip, kb_connection **ret) {
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};

        /* IPv4 only: an IPv6 literal would need brackets in the endpoint and ZMQ_IPV6 on every
         * socket, and loopback IPv4 is all the tool uses. */
        if (!ip || !ret || inet_pton(AF_INET, ip, &addr.sin_addr) != 1)
                return -EINVAL;

        kb_connection *c = connection_alloc();
        if (!c)
                return -ENOMEM;
        int r = connection_init_common(c, KB_TRANSPORT_TCP, ip);
        if (r < 0)
                goto fail;

        /* Bind without listen and without SO_REUSEADDR: the port is ours alone while the socket is
         * open (another socket could share it only if both set SO_REUSEADDR), and closing a socket
         * that never listened leaves no TIME_WAIT, so the kernel can bind the port right after
         * kb_connection_release_ports(). Holding all five at once also makes them distinct. */
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                struct sockaddr_in bound;
                socklen_t bound_len = sizeof(bound);

                c->held_fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (c->held_fds[i] < 0) {
                        r = -errno;
                        goto fail;
                }
                if (bind(c->held_fds[i], (const struct sockaddr *) &addr, sizeof(addr)) < 0) {
                        r = -errno;
                        goto fail;
                }
                if (getsockname(c->held_fds[i], (struct sockaddr *) &bound, &bound_len) < 0) {
                        r = -errno;
                        goto fail;
                }
                c->ports[i] = ntohs(bound.sin_port);
        }

        *ret = c;
        return 0;
fail:
        kb_connection_destroy(&c);
        return r;
}

/* Length of "{prefix}-{port}", the unix socket path of an ipc endpoint. */
static size_t ipc_path_len(const char *prefix, int port) {
        char digits[16];
        int n = snprintf(digits, sizeof(digits), "%d", port);
        return strlen(prefix) + 1 + (size_t) (n > 0 ? n : 0);
}

int kb_connection_new_ipc(const char *path_prefix, kb_connection **ret) {
        if (!path_prefix || !ret || path_prefix[0] == '\0')
                return -EINVAL;
        /* Ports are 1.._KB_CHANNEL_MAX, so the last one has the longest path; it needs its NUL too. */
        if (ipc_path_len(path_prefix, _KB_CHANNEL_MAX) >= KB_SUN_PATH_MAX)
                return -ENAMETOOLONG;

        kb_connection *c = connection_alloc();
        if (!c)
                return -ENOMEM;
        int r = connection_init_common(c, KB_TRANSPORT_IPC, path_prefix);
        if (r < 0) {
                kb_connection_destroy(&c);
                return r;
        }
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++)
                c->ports[i] = (int) i + 1;
        *ret = c;
        return 0;
}

void kb_connection_release_ports(kb_connection *c) {
        if (!c)
                return;
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                kb_closep(&c->held_fds[i]);
                c->held_fds[i] = -1;
        }
}

int kb_connection_endpoint(const kb_connection *c, kb_channel ch, const char *ip_override, char *buf, size_t size) {
        if (!c || !buf || (unsigned) ch >= _KB_CHANNEL_MAX)
                return -EINVAL;
        const char *ip = ip_override ? ip_override : c->ip;
        int port = c->ports[ch];
        int n;

        if (!ip)
                return -EINVAL;
        if (c->transport == KB_TRANSPORT_IPC) {
                if (ipc_path_len(ip, port) >= KB_SUN_PATH_MAX)
                        return -ENAMETOOLONG;
                n = snprintf(buf, size, "ipc://%s-%d", ip, port);
        } else {
                /* A parsed file may carry an IPv6 literal; ZeroMQ wants it bracketed. */
                bool bracket = strchr(ip, ':') && ip[0] != '[';
                n = snprintf(buf, size, bracket ? "tcp://[%s]:%d" : "tcp://%s:%d", ip, port);
        }
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* Adds key=value to obj; json-c's add takes the value's reference. Returns 0 or -ENOMEM. */
static int json_add(struct json_object *obj, const char *key, struct json_object *val) {
        if (!val)
                return -ENOMEM;
        if (json_object_object_add(obj, key, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

/* Builds the connection-file object in jupyter_client's field set. */
static int connection_to_json(const kb_connection *c, const char *ip, struct json_object **ret) {
        _cleanup_json_ struct json_object *obj = json_object_new_object();
        int r;

        if (!obj)
                return -ENOMEM;
        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                r = json_add(obj, port_keys[i], json_object_new_int(c->ports[i]));
                if (r < 0)
                        return r;
        }
        r = json_add(obj, "ip", json_object_new_string(ip));
        if (r >= 0)
                r = json_add(obj, "key", json_object_new_string(c->key ? c->key : ""));
        if (r >= 0)
                r = json_add(obj, "transport",
                             json_object_new_string(c->transport == KB_TRANSPORT_IPC ? "ipc" : "tcp"));
        if (r >= 0)
                r = json_add(obj, "signature_scheme",
                             json_object_new_string(c->signature_scheme ? c->signature_scheme : SIGNATURE_SCHEME));
        if (r >= 0 && c->kernel_name)
                r = json_add(obj, "kernel_name", json_object_new_string(c->kernel_name));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(obj);
        return 0;
}

/* Splits path into its parent directory (returned, malloc'd; "." if none) and its last component. */
static int split_path(const char *path, char **ret_dir, const char **ret_base) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        char *dir;

        if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return -EINVAL;
        if (!slash)
                dir = strdup(".");
        else if (slash == path)
                dir = strdup("/");
        else
                dir = strndup(path, (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        *ret_dir = dir;
        *ret_base = base;
        return 0;
}

int kb_connection_write(const kb_connection *c, const char *ip_override, const char *path) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dir_fd = -1;
        _cleanup_close_ int fd = -1;
        _cleanup_json_ struct json_object *obj = NULL;
        const char *base;
        struct stat st;
        int r;

        if (!c || !path)
                return -EINVAL;
        const char *ip = ip_override ? ip_override : c->ip;
        if (!ip)
                return -EINVAL;

        r = split_path(path, &dir, &base);
        if (r < 0)
                return r;

        /* The file holds the HMAC key: anyone who can enter the directory could race us for the
         * name or read a later copy, so the directory itself must be private. Checking the opened
         * directory and creating the file relative to that same fd leaves no window for a swap. */
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        if (fstat(dir_fd, &st) < 0)
                return -errno;
        if (st.st_uid != geteuid() || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
                return -EPERM;

        r = connection_to_json(c, ip, &obj);
        if (r < 0)
                return r;
        size_t text_len = 0;
        const char *text = json_object_to_json_string_length(
                obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE, &text_len);
        if (!text)
                return -ENOMEM;

        /* O_EXCL|O_NOFOLLOW: never reuse or follow something already sitting at the name. */
        fd = openat(dir_fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = kb_write_all(fd, text, text_len);
        if (r >= 0)
                r = kb_write_all(fd, "\n", 1);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0) {
                /* Never leave a truncated connection file for a kernel to trip over. */
                (void) unlinkat(dir_fd, base, 0);
                return r;
        }
        return 0;
}

/* Copies a JSON string that must not contain NUL (it becomes a C string). Returns 0, -EPROTO for
 * another type or an embedded NUL, -ENOMEM. */
static int json_strdup(struct json_object *val, char **ret) {
        if (!json_object_is_type(val, json_type_string))
                return -EPROTO;
        const char *s = json_object_get_string(val);
        size_t len = (size_t) json_object_get_string_len(val);
        if (strlen(s) != len)
                return -EPROTO;
        char *copy = strndup(s, len);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

int kb_connection_parse(const char *text, size_t len, kb_connection **ret) {
        _cleanup_json_ struct json_object *root = NULL;
        struct json_object *val;
        kb_connection *c = NULL;
        int r;

        if (!text || !ret)
                return -EINVAL;
        if (len > KB_CONNECTION_MAX_BYTES)
                return -EMSGSIZE;
        r = kb_json_parse_strict(text, len, CONNECTION_JSON_MAX_DEPTH, &root);
        if (r < 0)
                return r;
        if (!json_object_is_type(root, json_type_object))
                return -EPROTO;

        c = connection_alloc();
        if (!c)
                return -ENOMEM;

        if (!json_object_object_get_ex(root, "transport", &val) || !json_object_is_type(val, json_type_string)) {
                r = -EPROTO;
                goto fail;
        }
        if (strcmp(json_object_get_string(val), "tcp") == 0 && json_object_get_string_len(val) == 3)
                c->transport = KB_TRANSPORT_TCP;
        else if (strcmp(json_object_get_string(val), "ipc") == 0 && json_object_get_string_len(val) == 3)
                c->transport = KB_TRANSPORT_IPC;
        else {
                r = -ENOTSUP;
                goto fail;
        }

        /* The scheme decides how every message is verified: anything but the one we implement is
         * refused rather than silently downgraded. Missing means the default, like jupyter_client. */
        if (json_object_object_get_ex(root, "signature_scheme", &val)) {
                r = json_strdup(val, &c->signature_scheme);
                if (r < 0)
                        goto fail;
                if (strcmp(c->signature_scheme, SIGNATURE_SCHEME) != 0) {
                        r = -ENOTSUP;
                        goto fail;
                }
        } else {
                c->signature_scheme = strdup(SIGNATURE_SCHEME);
                if (!c->signature_scheme) {
                        r = -ENOMEM;
                        goto fail;
                }
        }

        if (!json_object_object_get_ex(root, "ip", &val)) {
                r = -EPROTO;
                goto fail;
        }
        r = json_strdup(val, &c->ip);
        if (r < 0)
                goto fail;
        if (c->ip[0] == '\0') {
                r = -EPROTO;
                goto fail;
        }

        if (!json_object_object_get_ex(root, "key", &val)) {
                r = -EPROTO;
                goto fail;
        }
        r = json_strdup(val, &c->key);
        if (r < 0)
                goto fail;

        if (json_object_object_get_ex(root, "kernel_name", &val)) {
                r = json_strdup(val, &c->kernel_name);
                if (r < 0)
                        goto fail;
        }

        for (size_t i = 0; i < _KB_CHANNEL_MAX; i++) {
                /* json-c types 1.0 and 1e3 as doubles and clamps huge integers to INT64_MAX, so
                 * "integer type and in range" rejects every non-port spelling. */
                if (!json_object_object_get_ex(root, port_keys[i], &val) || !json_object_is_type(val, json_type_int)) {
                        r = -EPROTO;
                        goto fail;
                }
                int64_t port = json_object_get_int64(val);
                if (port < 1 || port > 65535) {
                        r = -EPROTO;
                        goto fail;
                }
                c->ports[i] = (int) port;
        }

        *ret = c;
        return 0;
fail:
        kb_connection_destroy(&c);
        return r;
}

int kb_connection_read(const char *path, kb_connection **ret) {
        char *buf = NULL;
        size_t len = 0;
        if (!path || !ret)
                return -EINVAL;
        int r = kb_read_file(AT_FDCWD, path, 0, KB_CONNECTION_MAX_BYTES, &buf, &len);
        if (r < 0)
                return r;
        r = kb_connection_parse(buf, len, ret);
        /* The buffer held the key. */
        explicit_bzero(buf, len);
        free(buf);
        return r;
}

void kb_connection_destroy(kb_connection **cp) {
        if (!cp || !*cp)
                return;
        kb_connection *c = *cp;
        kb_connection_release_ports(c);
        if (c->key) {
                explicit_bzero(c->key, strlen(c->key));
                free(c->key);
        }
        free(c->ip);
        free(c->signature_scheme);
        free(c->kernel_name);
        free(c);
        *cp = NULL;
}
