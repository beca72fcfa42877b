/* cmd_kernelspecs.c: `kbound kernelspecs`: list what kernelspec discovery finds. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include <kbound/kernel.h>
#include <kbound/kernelspec.h>
#include "cli.h"

static json_object *strv_array(char **v) {
        json_object *a = json_object_new_array();
        for (char **s = v; s && *s; s++)
                json_object_array_add(a, json_object_new_string(*s));
        return a;
}

/* {"kernelspecs": {NAME: {"resource_dir", "spec": kernel.json's fields}}}, as jupyter_client's
 * KernelSpecManager.get_all_specs() and `jupyter kernelspec list --json` give it. Owned by the
 * caller's next call: a static tree. */
static json_object *jupyter_shape(kb_kernelspec **list) {
        static json_object *root;
        json_object_put(root);
        root = json_object_new_object();
        json_object *specs = json_object_new_object();
        for (kb_kernelspec **s = list; *s; s++) {
                json_object *entry = json_object_new_object(), *spec = json_object_new_object(),
                            *env = json_object_new_object();
                for (char **e = (*s)->env; e && *e; e++) {
                        const char *eq = strchr(*e, '=');
                        if (!eq)
                                continue;
                        char name[256];
                        snprintf(name, sizeof name, "%.*s", (int) (eq - *e), *e);
                        json_object_object_add(env, name, json_object_new_string(eq + 1));
                }
                json_object_object_add(spec, "argv", strv_array((*s)->argv));
                json_object_object_add(spec, "env", env);
                json_object_object_add(spec, "display_name",
                                       json_object_new_string((*s)->display_name ? (*s)->display_name : ""));
                json_object_object_add(spec, "language", json_object_new_string((*s)->language ? (*s)->language : ""));
                json_object_object_add(spec, "interrupt_mode", json_object_new_string((*s)->interrupt_mode));
                json_object *metadata = (*s)->metadata_json ? json_tokener_parse((*s)->metadata_json) : NULL;
                json_object_object_add(spec, "metadata", metadata ? metadata : json_object_new_object());
                json_object_object_add(entry, "resource_dir", json_object_new_string((*s)->resource_dir));
                json_object_object_add(entry, "spec", spec);
                json_object_object_add(specs, (*s)->name, entry);
        }
        json_object_object_add(root, "kernelspecs", specs);
        return root;
}

int cmd_kernelspecs(int argc, char **argv) {
        static const struct option own[] = {
                {"json", no_argument, NULL, 'j'},
                {"json-list", no_argument, NULL, 'l'},
                {},
        };
        static const char *const accepts[] = {"json",           "json-list", "rootfs", "image", "image-max-size",
                                              "image-no-cache", "prefix",    "help",   NULL};
        cli_opts opts;
        if (cli_opts_init(&opts, "kernelspecs", accepts, own) < 0)
                return KB_EXIT_USAGE;
        bool as_json = false, as_list = false;
        int c;
        while ((c = cli_opts_next(&opts, argc, argv, "jlh")) != -1) {
                switch (c) {
                case 'j':
                        as_json = true;
                        break;
                case 'l':
                        as_list = true;
                        break;
                case 'h':
                        cli_put_flowed(
                                stdout,
                                "Usage: kbound kernelspecs [--json | --json-list] [--prefix DIR]... [--rootfs DIR | "
                                "--image PATH]\n\n"
                                "Lists kernelspecs in Jupyter's search order (JUPYTER_PATH, the user data dir and\n"
                                "the environment's sys.prefix/share/jupyter (--prefix DIR, $VIRTUAL_ENV,\n"
                                "$CONDA_PREFIX, the venv of python3 on PATH) in jupyter_core's order, then\n"
                                "/usr/local/share/jupyter, /usr/share/jupyter); the first of a name wins.\n"
                                "With --rootfs, those inside the unpacked image DIR; with --image, inside an OCI\n"
                                "image layout or a docker/OCI archive, unpacked for the run (docs/rootfs.md).\n"
                                "Their folders are shown as paths inside the image.\n\n"
                                "  --json       the list as `jupyter kernelspec list --json` prints it:\n"
                                "               {\"kernelspecs\": {NAME: {\"resource_dir\", \"spec\"}}}\n"
                                "  --json-list  an array of {name, resource_dir, language, display_name,\n"
                                "               interrupt_mode}\n");
                        return 0;
                default:
                        return KB_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("kernelspecs: unexpected argument '%s'", argv[optind]);
                return KB_EXIT_USAGE;
        }
        const char *rootfs_opt = opts.rootfs, *image_opt = opts.image;
        char **dirs = NULL;
        kb_kernelspec **list = NULL;
        size_t broken = 0;
        _cleanup_free_ char *base = NULL;
        cli_root root = {.prefixes = opts.prefixes, .root_fd = -1};
        kb_sandbox_user sandbox_user;
        int r;
        if (image_opt && (r = cli_sandbox_user("kernelspecs", NULL, &sandbox_user)))
                return r;
        root.user = image_opt ? &sandbox_user : NULL;
        r = cli_root_open("kernelspecs", rootfs_opt, image_opt, opts.image_max, opts.image_no_cache, &base, &root);
        if (r)
                goto done;
        if ((r = cli_search_dirs(&root, &dirs)))
                goto done;
        r = root.rootfs ? kb_kernelspec_list_in_root(root.root_fd, dirs, &list, &broken)
                        : kb_kernelspec_list(dirs, &list, &broken);
        kb_strv_free(dirs);
        if (r < 0) {
                cli_error("cannot list kernelspecs: %s", strerror(-r));
                r = KB_EXIT_ENFORCE;
                goto done;
        }
        if (as_json) {
                puts(json_object_to_json_string_ext(jupyter_shape(list),
                                                    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
        } else if (as_list) {
                json_object *arr = json_object_new_array();
                for (kb_kernelspec **s = list; *s; s++) {
                        json_object *o = json_object_new_object();
                        json_object_object_add(o, "name", json_object_new_string((*s)->name));
                        json_object_object_add(o, "resource_dir", json_object_new_string((*s)->resource_dir));
                        json_object_object_add(o, "language",
                                               json_object_new_string((*s)->language ? (*s)->language : ""));
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
        r = 0;
done:
        cli_root_close(&root);
        if (base)
                kb_remove_tree(base);
        return r;
}
