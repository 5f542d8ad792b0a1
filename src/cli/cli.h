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

/* ---- usage texts (cli_usage.c) ---- */
extern const char cli_usage_main[];
extern const char cli_usage_info[];
extern const char cli_usage_simulate[];
/* Usage text of a command, or NULL if there is no such command. */
const char *cli_usage_of(const char *command);

/* ---- argument helpers (cli_args.c) ---- */
/* Print "talus: MESSAGE" on stderr (printf format). */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
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
/* Load a URDF; on failure print the loader's message and return NULL. */
tl_model *cli_load_model(const char *path, tl_base_type base, int verbose);
/* "floating" / "fixed" / "auto". */
const char *cli_base_name(tl_base_type base);

/* ---- JSON helpers (cli_json.c) ---- */
/* Add a string member; NULL is stored as JSON null. Returns 0 or -1 (no memory). */
int cli_json_add_string(cJSON *obj, const char *key, const char *value);
/* Add an array of n numbers. Non-finite numbers become null. */
int cli_json_add_numbers(cJSON *obj, const char *key, const double *v, int n);
/* Print `root` (formatted) to stdout followed by a newline, then delete it.
 * Returns CLI_EXIT_OK or CLI_EXIT_FAIL. root may be NULL (out of memory). */
int cli_json_print_and_free(cJSON *root);

#endif
