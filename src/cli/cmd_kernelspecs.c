/* cmd_kernelspecs.c: `kbound kernelspecs`: list what kernelspec discovery finds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include <kbound/kernelspec.h>
#include "cli.h"

int cmd_kernelspecs(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "rootfs", required_argument, NULL, 'R' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        bool as_json = false;
        const char *rootfs_opt = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "jh", options, NULL)) != -1) {
                switch (c) {
                case 'j':
                        as_json = true;
                        break;
                case 'R':
                        rootfs_opt = optarg;
                        break;
                case 'h':
                        printf("Usage: kbound kernelspecs [--json] [--rootfs DIR]\n\n"
                               "Lists kernelspecs in Jupyter's search order (JUPYTER_PATH, the user data dir,\n"
                               "/usr/local/share/jupyter, /usr/share/jupyter); the first of a name wins.\n"
                               "With --rootfs, those inside the unpacked image DIR (docs/rootfs.md); their\n"
                               "folders are shown as paths inside the image.\n");
                        return 0;
                default:
                        return KB_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("kernelspecs: unexpected argument '%s'", argv[optind]);
                return KB_EXIT_USAGE;
        }
        char **dirs = NULL;
        kb_kernelspec **list = NULL;
        size_t broken = 0;
        _cleanup_free_ char *rootfs = NULL;
        _cleanup_close_ int rootfs_fd = -1;
        int r;
        if (rootfs_opt && (r = cli_rootfs_open(rootfs_opt, &rootfs, &rootfs_fd)))
                return r;
        r = rootfs ? kb_kernelspec_rootfs_search_path(&dirs) : kb_kernelspec_search_path(environ, &dirs);
        if (r >= 0)
                r = rootfs ? kb_kernelspec_list_in_root(rootfs_fd, dirs, &list, &broken)
                           : kb_kernelspec_list(dirs, &list, &broken);
        kb_strv_free(dirs);
        if (r < 0) {
                cli_error("cannot list kernelspecs: %s", strerror(-r));
                return KB_EXIT_ENFORCE;
        }
        if (as_json) {
                json_object *arr = json_object_new_array();
                for (kb_kernelspec **s = list; *s; s++) {
                        json_object *o = json_object_new_object();
                        json_object_object_add(o, "name", json_object_new_string((*s)->name));
                        json_object_object_add(o, "resource_dir", json_object_new_string((*s)->resource_dir));
                        json_object_object_add(o, "language", json_object_new_string((*s)->language ? (*s)->language : ""));
                        json_object_object_add(o, "display_name",
                                               json_object_new_string((*s)->display_name ? (*s)->display_name : ""));
                        json_object_object_add(o, "interrupt_mode", json_object_new_string((*s)->interrupt_mode));
                        json_object_array_add(arr, o);
                }
                puts(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
                json_object_put(arr);
        } else {
                for (kb_kernelspec **s = list; *s; s++)
                        printf("%-16s %-10s %-8s %s\n", (*s)->name, (*s)->language ? (*s)->language : "?",
                               (*s)->interrupt_mode, (*s)->resource_dir);
        }
        if (broken)
                cli_error("%zu kernelspec folder(s) with a broken kernel.json were skipped", broken);
        kb_kernelspec_list_free(list);
        return 0;
}
