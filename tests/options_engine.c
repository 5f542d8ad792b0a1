/* Guards: src/engine/engine_link.c (the fingerprint over the world's options), engine_scene.c
 * (tl_engine_scene.options as is); a fixture of test_world_options.c, mode plugin. */
/* The plugin "optcount" (talus-engine-optcount.so): an engine that does not
 * move anything and reports, through its notes, how often it built a world
 * and the bytes of the tl_world_options its last scene held:
 *   "create N options HEX" (N counts every create of this process; HEX the
 * options' bytes, two hex digits each). It offers every solver and feature,
 * so any valid options are accepted. The state is kept as pushed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "talus/engine_plugin.h"

struct tl_engine_world {
  int nsys;
  int *nq, *nv;
  double **q, **u;
  char notes[64 + 2 * sizeof(tl_world_options)];
};

static int ncreate; /* worlds built by this process */

static void caps(tl_engine_caps *c) {
  memset(c, 0, sizeof *c);
  c->joints = c->geoms = c->features = ~0u;
  c->solvers = (1u << TL_SOLVER_PER_CONTACT) | (1u << TL_SOLVER_PGS) | (1u << TL_SOLVER_DANTZIG);
  c->default_solver = TL_SOLVER_PER_CONTACT;
}

static void destroy(tl_engine_world *e) {
  if (!e) return;
  for (int i = 0; i < e->nsys; i++) free(e->q[i]), free(e->u[i]);
  free(e->q), free(e->u), free(e->nq), free(e->nv);
  free(e);
}

static tl_status create(const tl_engine_scene *s, tl_engine_world **out, tl_error *err) {
  tl_engine_world *e = calloc(1, sizeof *e);
  int n = s->nsystem;
  if (e) {
    e->q = calloc((size_t)n + 1, sizeof(double *)), e->u = calloc((size_t)n + 1, sizeof(double *));
    e->nq = calloc((size_t)n + 1, sizeof(int)), e->nv = calloc((size_t)n + 1, sizeof(int));
  }
  int ok = e && e->q && e->u && e->nq && e->nv;
  for (int i = 0; ok && i < n; i++, e->nsys = i) {
    e->nq[i] = s->systems[i].model.nq, e->nv[i] = s->systems[i].model.nv;
    e->q[i] = calloc((size_t)e->nq[i] + 1, sizeof(double));
    e->u[i] = calloc((size_t)e->nv[i] + 1, sizeof(double));
    ok = e->q[i] && e->u[i];
  }
  if (!ok) {
    destroy(e);
    return tl_engine_error(err, TL_ERR_MEMORY, NULL, "out of memory");
  }
  ncreate++;
  int k = snprintf(e->notes, sizeof e->notes, "create %d options ", ncreate);
  const unsigned char *b = (const unsigned char *)&s->options;
  for (size_t i = 0; i < sizeof s->options; i++) k += snprintf(e->notes + k, sizeof e->notes - (size_t)k, "%02x", b[i]);
  *out = e;
  return TL_OK;
}

static tl_status set_state(tl_engine_world *e, int i, const double *q, const double *u, tl_error *err) {
  (void)err;
  memcpy(e->q[i], q, (size_t)e->nq[i] * sizeof(double));
  memcpy(e->u[i], u, (size_t)e->nv[i] * sizeof(double));
  return TL_OK;
}

static tl_status get_state(const tl_engine_world *e, int i, double *q, double *u, tl_error *err) {
  (void)err;
  memcpy(q, e->q[i], (size_t)e->nq[i] * sizeof(double));
  memcpy(u, e->u[i], (size_t)e->nv[i] * sizeof(double));
  return TL_OK;
}

static tl_status two(tl_engine_world *e, int i, const double *a, const double *b, tl_error *err) {
  (void)e, (void)i, (void)a, (void)b, (void)err;
  return TL_OK;
}

static tl_status one(tl_engine_world *e, int i, const double *a, tl_error *err) {
  (void)e, (void)i, (void)a, (void)err;
  return TL_OK;
}

static tl_status phase(tl_engine_world *e, tl_error *err) {
  (void)e, (void)err;
  return TL_OK;
}

static int ncontact(const tl_engine_world *e) {
  (void)e;
  return 0;
}

static tl_status contact(const tl_engine_world *e, int k, tl_contact_info *out, tl_error *err) {
  (void)e, (void)out;
  return tl_engine_error(err, TL_ERR_ARGUMENT, "k", "contact %d: this engine finds none", k);
}

static tl_status applied(const tl_engine_world *e, int i, double *tau, tl_error *err) {
  (void)err;
  memset(tau, 0, (size_t)e->nv[i] * sizeof(double));
  return TL_OK;
}

static const char *notes(const tl_engine_world *e) { return e->notes; }

static const tl_engine_api api = {
    .abi_version = TL_ENGINE_ABI_VERSION,
    .api_size = sizeof(tl_engine_api),
    .name = "optcount",
    .version = "optcount 1",
    .description = "a test engine: counts the worlds it builds, reports the options of its scene, moves nothing",
    .capabilities = caps,
    .create = create,
    .destroy = destroy,
    .set_state = set_state,
    .get_state = get_state,
    .set_pd_gains = two,
    .set_pd_targets = two,
    .set_generalized_force = one,
    .set_external_force = one,
    .integrate1 = phase,
    .integrate2 = phase,
    .ncontact = ncontact,
    .contact = contact,
    .applied_generalized_force = applied,
    .solver_stats = NULL,
    .notes = notes,
};

__attribute__((visibility("default"))) const tl_engine_api *tl_engine_plugin_entry(int host_abi_version) {
  (void)host_abi_version;
  return &api;
}
