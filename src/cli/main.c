/* `talus`: command-line front end of the Talus simulator.
 *
 *   talus --help | --version | help [COMMAND]
 *   talus info URDF [options]
 *   talus simulate [URDF] [options]
 *   talus view [URDF | WORLD.xml] [options]
 *   talus dynamics URDF --states FILE [options]
 *   talus compare URDF|WORLD.xml --engines talus,ode,mujoco [options]
 *   talus sweep ROBOT|SPEC.xml [options]   (also under mpirun)
 *   talus bench [ARGS...]          (runs talus_bench, beside this binary)
 *
 * Exit codes: 0 ok, 1 load / engine error, 2 usage error, 3 the simulation
 * diverged (non-finite state). */
#include <string.h>

#include "cli.h"

typedef int (*cli_command_fn)(int argc, char **argv);

typedef struct cli_command {
  const char *name;
  cli_command_fn run;
} cli_command;

static const cli_command commands[] = {
    {"info", cli_info},
    {"simulate", cli_simulate},
    {"view", cli_view},
    {"dynamics", cli_dynamics},
    {"compare", cli_compare},
};

static const cli_command *find_command(const char *name) {
  for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); ++k)
    if (strcmp(commands[k].name, name) == 0) return &commands[k];
  return NULL;
}

/* `talus help [COMMAND]` */
static int run_help(int argc, char **argv) {
  if (argc < 2) {
    fputs(cli_usage_main, stdout);
    return CLI_EXIT_OK;
  }
  if (argc > 2) {
    cli_errorf("help takes at most one command name");
    return CLI_EXIT_USAGE;
  }
  const char *usage = cli_usage_of(argv[1]);
  if (!usage) {
    cli_errorf("unknown command '%s' (try 'talus --help')", argv[1]);
    return CLI_EXIT_USAGE;
  }
  fputs(usage, stdout);
  return CLI_EXIT_OK;
}

static int is_help_flag(const char *arg) {
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(cli_usage_main, stderr);
    return CLI_EXIT_USAGE;
  }
  const char *first = argv[1];
  if (is_help_flag(first)) {
    fputs(cli_usage_main, stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
    printf("talus %s\n", TALUS_VERSION);
    return CLI_EXIT_OK;
  }
  if (strcmp(first, "help") == 0) return run_help(argc - 1, argv + 1);
  if (first[0] == '-') {
    cli_errorf("unknown option '%s' (try 'talus --help')", first);
    return CLI_EXIT_USAGE;
  }
  /* bench: talus_bench takes the arguments exactly as given (no --var handling) */
  if (strcmp(first, "bench") == 0) return cli_bench(argc - 1, argv + 1);
  /* sweep: its --var values go into the sweep (they are part of its identity) */
  if (strcmp(first, "sweep") == 0) return cli_sweep(argc - 1, argv + 1);
  const cli_command *cmd = find_command(first);
  if (!cmd) {
    cli_errorf("unknown command '%s' (try 'talus --help')", first);
    return CLI_EXIT_USAGE;
  }
  argc = cli_take_vars(argc - 1, argv + 1) + 1; /* --var NAME=VALUE: URDF template variables */
  if (argc <= 0) return CLI_EXIT_USAGE;
  return cmd->run(argc - 1, argv + 1);
}
