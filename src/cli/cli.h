/* The `talus` command line: shared declarations (internal to src/cli/).
 * The command line is an application of the public API only
 * (the headers in include/talus/ and controllers/). */
#ifndef TALUS_CLI_H
#define TALUS_CLI_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "talus/talus.h"

/* Exit codes of the talus command. */
enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAIL = 1,     /* load error, engine error, out of memory */
  CLI_EXIT_USAGE = 2,    /* unknown command / option, bad option value */
  CLI_EXIT_DIVERGED = 3  /* simulate: the state became non-finite */
};

/* ---- commands (argv[0] is the command name) ---- */
int cli_info(int argc, char **argv);
int cli_simulate(int argc, char **argv);
/* `talus view`: simulate with the live view (--pose: the initial state only), until Ctrl-C. */
int cli_view(int argc, char **argv);
int cli_dynamics(int argc, char **argv);
int cli_compare(int argc, char **argv);
/* `talus sweep`: dynamics-randomization sweeps (cli_sweep.c; talus/sweep.h). */
int cli_sweep(int argc, char **argv);
/* `talus bench`: runs talus_bench (beside the talus binary) with argv[1..]. */
int cli_bench(int argc, char **argv);

/* ---- files beside the binary (cli_data.c) ---- */
/* The folder of the running talus binary (/proc/self/exe) into out. -1 after an error message. */
int cli_exe_dir(char *out, size_t len);
/* The path of `rel` (e.g. "robots/talus_quadruped/talus_quadruped.urdf") in Talus's data folder:
 * $TALUS_DATA_DIR, <bin>/../share/talus (installed), <bin>/share/talus (build tree), the first
 * where it exists. -1 after an error message naming every place looked in. */
int cli_data_file(const char *rel, char *out, size_t len);

/* ---- usage texts (cli_usage.c) ---- */
extern const char cli_usage_main[];
extern const char cli_usage_info[];
extern const char cli_usage_simulate[];
extern const char cli_usage_view[];
extern const char cli_usage_dynamics[];
extern const char cli_usage_bench[];
extern const char cli_usage_compare[];
extern const char cli_usage_sweep[];
/* Usage text of a command, or NULL if there is no such command. */
const char *cli_usage_of(const char *command);

/* ---- argument helpers (cli_args.c) ---- */
/* Print "talus: MESSAGE" on stderr (printf format). */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The flags every robot-loading command takes: --fixed-base and
 * --floating-base (into *base), --verbose / -v (into *verbose). Returns 1 if
 * arg was one of them. */
int cli_model_flag(const char *arg, tl_base_type *base, int *verbose);
/* Report an unknown option of `command` and return CLI_EXIT_USAGE. */
int cli_unknown_option(const char *command, const char *arg);
/* 1 if argv[*i] is `--name` or `--name=VALUE`. For a match, *value points at
 * VALUE (the text after '=' or the next argument, *i is then advanced).
 * Returns 0 when argv[*i] is not this option and -1 (after printing an
 * error) when the value is missing. */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value);
/* Parse a finite number from the whole of `text`; on failure print an error
 * naming option `opt` and return -1. */
int cli_parse_double(const char *opt, const char *text, double *out);
/* Parse a comma-separated list of finite numbers into a new array (*out,
 * free()), *n entries. Returns -1 (after printing an error) on bad input. */
int cli_parse_double_list(const char *opt, const char *text, double **out, int *n);
/* Load a URDF; on failure print the loader's message and return NULL.
 * Template variables given with --var (cli_take_vars) are passed on. */
tl_model *cli_load_model(const char *path, tl_base_type base, int verbose);
/* Remove every `--var NAME=VALUE` (or `--var=NAME=VALUE`) from argv[1..]
 * (argv[argc] stays NULL), keeping them for cli_load_model. Returns the new
 * argc, or -1 (after printing an error) for a malformed one. */
int cli_take_vars(int argc, char **argv);
/* "floating" / "fixed" / "auto". */
const char *cli_base_name(tl_base_type base);

/* ---- JSON helpers (cli_json.c) ---- */
/* Add a string member; NULL is stored as JSON null. Returns 0 or -1 (no memory). */
int cli_json_add_string(cJSON *obj, const char *key, const char *value);
/* A number item that prints so that it reads back exactly (cJSON's own
 * printing may lose the last bit); a non-finite number becomes null. NULL:
 * no memory. It is libtalus's tl_json_number (src/base/json_number.h), the
 * printer talus_bench's JSON uses too. */
cJSON *cli_json_number(double v);
/* Add a number member (see cli_json_number). Returns 0 or -1 (no memory). */
int cli_json_add_number(cJSON *obj, const char *key, double v);
/* Add an array of n numbers, each as cli_json_number (non-finite: null). */
int cli_json_add_numbers(cJSON *obj, const char *key, const double *v, int n);
/* Print `root` (formatted) to stdout followed by a newline, then delete it.
 * Returns CLI_EXIT_OK or CLI_EXIT_FAIL. root may be NULL (out of memory). */
int cli_json_print_and_free(cJSON *root);
/* The same into the file `path` (NULL: stdout). A file that could not be
 * written completely is removed. Errors name the file. */
int cli_json_write_and_free(cJSON *root, const char *path);
/* Read and parse the JSON file `path`; `what` names its role in messages
 * ("states file"). On failure print an error naming the file (and the line
 * and column of a syntax error) and return NULL. */
cJSON *cli_json_read_file(const char *path, const char *what);

#endif
