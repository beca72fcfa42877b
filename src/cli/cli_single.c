/* cli_single.c: what run and console set up around their one kernel, in the order both follow:
 * the sandbox mode and user, the image or rootfs, the kernel, the descriptors, the transcript,
 * bwrap, the seccomp policy and the base folder; then the kernel's start, and the teardown. */
#include <stdlib.h>
#include <kbound/common.h>
#include "cli.h"

int cli_single_prepare(cli_single *s, const char *cmd, cli_opts *o, bool sandbox) {
        *s = (cli_single){
                .cmd = cmd,
                .opts = o,
                .allow_network = o->allow_network,
                .root = {.root_fd = -1, .ro_paths = o->ro_paths, .prefixes = o->prefixes, .sandbox = sandbox},
        };
        s->root.user = &s->user;
        int r = cli_sandbox_env(&s->allow_network);
        if (r)
                return r;
        if ((r = cli_sandbox_user(cmd, o->sandbox_user, &s->user)))
                return r;
        s->root.allow_network = s->allow_network;
        if ((o->rootfs || o->image) && !sandbox) {
                cli_error("%s: %s needs the sandbox (an image's programs only run with the image as root)", cmd,
                          o->rootfs ? "--rootfs" : "--image");
                return KB_EXIT_USAGE;
        }
        if ((r = cli_root_open(cmd, o->rootfs, o->image, o->image_max, o->image_no_cache, &s->base, &s->root)) ||
            (r = cli_find_kernel(o->kernels[0], &s->root, &s->spec)) || (r = cli_fds_check(cmd, 1)))
                return r;
        if ((r = cli_transcript_open(o->transcript, &s->transcript)) ||
            (r = cli_transcript_source(s->transcript, s->spec->name, o->team, &s->source, &s->on_msg,
                                       &s->on_msg_userdata)))
                return r;
        if (sandbox && cli_find_bwrap_version(o->bwrap, &s->bwrap, &s->bwrap_version, &s->bwrap_info))
                return KB_EXIT_ENFORCE;
        if (sandbox) {
                cli_resolve_syscall_probe(&s->syscall_probe);
                cli_resolve_boundary_probe(&s->boundary_probe);
        }
        if ((r = cli_hardening(cmd, &o->hardening, s->allow_network, sandbox ? &s->bwrap_info : NULL, &s->hardening)))
                return r;
        if (!s->base && cli_make_base_dir(&s->user, &s->base))
                return KB_EXIT_ENFORCE;
        return 0;
}

int cli_single_start(cli_single *s, int cancel_fd) {
        kb_kernel_options ko = cli_kernel_options(&s->root, s->spec, s->opts->team, s->base, s->bwrap, &s->hardening);
        ko.syscall_probe = s->syscall_probe;
        ko.boundary_probe = s->boundary_probe;
        ko.tcp = s->opts->tcp;
        ko.on_msg = s->on_msg;
        ko.on_msg_userdata = s->on_msg_userdata;
        ko.cancel_fd = cancel_fd;
        ko.deadline_ms = kb_now_ms() + s->opts->timeout_ms;
        return cli_kernel_start(&ko, &s->root, s->opts->timeout_ms, &s->kernel);
}

int cli_single_end(cli_single *s, int exit_code) {
        kb_kernel_destroy(&s->kernel, s->opts->keep);
        kb_transcript_source_destroy(&s->source);
        if (cli_transcript_close(&s->transcript, s->opts->transcript) && !exit_code)
                exit_code = KB_EXIT_FAIL;
        cli_root_close(&s->root);
        if (s->base) {
                if (s->opts->keep)
                        cli_keep_base_dir(s->base);
                else
                        kb_remove_tree(s->base);
        }
        free(s->base);
        free(s->bwrap);
        free(s->bwrap_version);
        free(s->syscall_probe);
        free(s->boundary_probe);
        kb_kernelspec_destroy(&s->spec);
        return exit_code;
}
