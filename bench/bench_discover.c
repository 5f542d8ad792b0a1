/* talus_bench: finding the robots (see bench_find_robots in bench.h): every
 * URDF under the shared robots folder, then the project's own quadruped,
 * labelled and given the base their source projects use. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

static int has_suffix(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void add_robot(robot_list *l, const char *path, const char *folder) {
  if (l->n >= MAX_ROBOTS) return;
  robot_entry *e = &l->r[l->n++];
  memset(e, 0, sizeof(*e));
  snprintf(e->path, sizeof e->path, "%s", path);
  snprintf(e->folder, sizeof e->folder, "%s", folder);
}

/* Every *.urdf under dir (recursively); `folder`: the top folder, NULL at the top. */
static void find_urdfs(robot_list *l, const char *dir, const char *folder) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (ent->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (is_dir(path))
      find_urdfs(l, path, folder ? folder : ent->d_name);
    else if (has_suffix(ent->d_name, ".urdf") && folder)
      add_robot(l, path, folder);
  }
  closedir(d);
}

static int by_path(const void *a, const void *b) {
  return strcmp(((const robot_entry *)a)->path, ((const robot_entry *)b)->path);
}

/* Label: the folder, or folder/stem when the folder holds several URDFs; base from the table. */
static void finish_list(robot_list *l) {
  static const char *const fixed[] = {"panda", "ur5", "kuka_iiwa", "double_pendulum", "cartpole"};
  for (int i = 0; i < l->n; ++i) {
    robot_entry *e = &l->r[i];
    int same = 0;
    for (int j = 0; j < l->n; ++j) same += strcmp(l->r[j].folder, e->folder) == 0;
    const char *slash = strrchr(e->path, '/');
    const char *stem = slash ? slash + 1 : e->path;
    char folder[64], name[64], label[sizeof e->label];
    snprintf(folder, sizeof folder, "%.63s", e->folder);
    snprintf(name, sizeof name, "%.*s", (int)(strlen(stem) - 5), stem); /* without .urdf */
    if (same > 1)
      snprintf(label, sizeof label, "%s/%s", folder, name);
    else
      snprintf(label, sizeof label, "%s", folder);
    memcpy(e->label, label, sizeof label);
    e->base = TL_BASE_FLOATING;
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; ++k)
      if (strncmp(e->folder, fixed[k], strlen(fixed[k])) == 0) e->base = TL_BASE_FIXED;
  }
}

void bench_find_robots(robot_list *l, const char *dir, const char *only) {
  if (!is_dir(dir))
    fprintf(stderr, "talus_bench: %s is not a folder: only the project's own robot is timed\n",
            dir);
  else
    find_urdfs(l, dir, NULL);
  qsort(l->r, (size_t)l->n, sizeof(robot_entry), by_path);
  add_robot(l, TALUS_ROBOTS_DIR "/talus_quadruped/talus_quadruped.urdf", "talus_quadruped");
  finish_list(l);
  if (only) { /* keep the robots whose label contains `only` */
    int k = 0;
    for (int i = 0; i < l->n; ++i)
      if (strstr(l->r[i].label, only)) l->r[k++] = l->r[i];
    l->n = k;
  }
}
