/* Usage texts of the talus command. */
#include <string.h>

#include "cli.h"

const char cli_usage_main[] =
    "Usage: talus COMMAND [ARGS...]\n"
    "       talus --help | --version | help COMMAND\n"
    "\n"
    "Talus: articulated-robot simulation in generalized coordinates.\n"
    "\n"
    "Commands:\n"
    "  info URDF        print the compiled model: joints, bodies, frames, geoms\n"
    "  simulate [URDF]  drop a robot on the ground and run it (default: the\n"
    "                   talus_quadruped holding its pose with the stand controller)\n"
    "  help COMMAND     print the usage of COMMAND\n"
    "\n"
    "Options:\n"
    "  -h, --help       print this help and exit\n"
    "  -V, --version    print the version and exit\n"
    "\n"
    "Exit status: 0 ok, 1 load or engine error, 2 usage error,\n"
    "3 simulation diverged (non-finite state).\n";

const char cli_usage_info[] =
    "Usage: talus info URDF [--json] [--fixed-base | --floating-base] [--verbose]\n"
    "\n"
    "Load URDF and print the compiled model: robot name, base type, generalized\n"
    "coordinate dimension (gc_dim = nq), degrees of freedom (dof = nv), bodies,\n"
    "total mass; the movable joints in order (body i is carried by joint i; joint 0\n"
    "is the root) with their type, parent body, first q and u index, link and mass;\n"
    "the frames (one per URDF joint, fixed ones included); the collision geoms.\n"
    "\n"
    "Options:\n"
    "  --json            print one JSON object instead of tables: robot, urdf,\n"
    "                    base, gc_dim, dof, nbody, total_mass,\n"
    "                    joints [{index,name,type,body,parent,q_index,u_index,mass}],\n"
    "                    frames [{name,body,joint_type}],\n"
    "                    geoms [{name,link,type,body,size}], warnings []\n"
    "  --fixed-base      weld the root link to the world\n"
    "  --floating-base   give the root link a floating joint (6 DOF)\n"
    "                    (default: fixed iff the root link is \"world\" joined by\n"
    "                    a fixed joint)\n"
    "  --verbose         let the loader print skipped elements and warnings\n"
    "  -h, --help        print this help\n";

const char cli_usage_simulate[] =
    "Usage: talus simulate [URDF] [options]\n"
    "\n"
    "Load URDF (default: " TALUS_ROBOTS_DIR "/talus_quadruped/talus_quadruped.urdf),\n"
    "add it to a world with the ground plane z = 0 (friction 0.8), start it at its\n"
    "reference configuration with the given joint coordinates, zero velocity and,\n"
    "for a floating base, its lowest collision geom 1 cm above the ground, and step\n"
    "the world (integrate1, controller, integrate2).\n"
    "\n"
    "Options:\n"
    "  --duration S         simulated time in seconds, >= 0 (default 5)\n"
    "  --dt S               time step in seconds, > 0 (default 0.001)\n"
    "  --controller NAME    stand: hold the initial joint configuration with the\n"
    "                       implicit PD controller; none: no actuation\n"
    "                       (default stand)\n"
    "  --kp X               stand proportional gain, N m/rad (default 300)\n"
    "  --kd X               stand derivative gain, N m s/rad (default 10)\n"
    "  --q V1,V2,...        initial joint coordinates: nq - 7 values for a floating\n"
    "                       base, nq for a fixed one (joints only), or all nq values\n"
    "                       (floating base: x y z qw qx qy qz first; z is then\n"
    "                       replaced by the 1 cm drop height)\n"
    "  --fixed-base         weld the root link to the world\n"
    "  --floating-base      give the root link a floating joint\n"
    "  --json               print one JSON object on stdout: robot, urdf, base,\n"
    "                       dof, gc_dim, dt, steps, sim_time_s, wall_time_s,\n"
    "                       steps_per_second, realtime_factor, controller,\n"
    "                       base_height {min,max,final} (z of body 0, min/max over\n"
    "                       the last 80% of the run), max_penetration_m,\n"
    "                       mean_contacts, contact_links {LINK: fraction of steps\n"
    "                       in contact}, final_gc [nq], nan_detected\n"
    "  --verbose            let the loader print skipped elements and warnings\n"
    "  -h, --help           print this help\n"
    "\n"
    "A progress bar is drawn on stderr when it is a terminal. Exit status 3 when\n"
    "the state became non-finite (the report is still printed, nan_detected true).\n";

const char *cli_usage_of(const char *command) {
  if (strcmp(command, "info") == 0) return cli_usage_info;
  if (strcmp(command, "simulate") == 0) return cli_usage_simulate;
  return NULL;
}
