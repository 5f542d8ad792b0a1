/* talus_bench --json: the JSON report (bench_print_json in bench.h), built as
 * a cJSON tree and printed by cJSON. Every number goes through libtalus's
 * tl_json_number (src/base/json_number.h, the printer of `talus ... --json`
 * too): it reads back to the same double, and a NaN or Inf (a timing not
 * measured, a ratio without a peer figure) becomes null, so the output is
 * always valid JSON. A byte count of 0 means "not measured" and is null.
 *
 * Top level: generator, units, statistic, batches, batch_ms, seed,
 * cpus_online, load_average_1min, peer (null without one, then peer_note;
 * else ratio, peer_model, crosscheck, crosscheck_tolerance), columns,
 * peer_columns, memory, memory_talus_doc, memory_peer_doc, contact_step (the
 * settings and docs), derivatives (the derivative columns' docs and
 * Pinocchio's published figures, vector_lanes), robots[], step_derivatives (docs, then
 * one object per robot of the table) and scenes[]. What each key means is said in
 * the report itself (its doc strings) and in README.md's "talus bench". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../src/base/json_number.h" /* the bit-exact number (libtalus) */
#include "../src/math/tl_cpu.h"       /* the kernels' vector width (libtalus) */
#include "bench.h"
#include "bench_mem.h"

/* Set when an item could not be made or added (out of memory). */
static int json_failed;

/* Add item to o under key; on any failure (NULL item or o) item is freed and
 * json_failed set. */
static void put(cJSON *o, const char *key, cJSON *item) {
  if (!item || !o || !cJSON_AddItemToObject(o, key, item)) {
    cJSON_Delete(item);
    json_failed = 1;
  }
}

static void put_str(cJSON *o, const char *key, const char *s) {
  put(o, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}
static void put_num(cJSON *o, const char *key, double v) { put(o, key, tl_json_number(v)); }
static void put_int(cJSON *o, const char *key, long v) { put(o, key, tl_json_number((double)v)); }
static void put_bool(cJSON *o, const char *key, int v) { put(o, key, cJSON_CreateBool(v)); }
/* A byte count (0: not measured -> null). */
static void put_bytes(cJSON *o, const char *key, size_t v) {
  put(o, key, v ? tl_json_number((double)v) : cJSON_CreateNull());
}

/* A new object added to o under key (NULL if that failed). */
static cJSON *put_obj(cJSON *o, const char *key) {
  cJSON *c = cJSON_CreateObject();
  put(o, key, c);
  return json_failed ? NULL : c;
}

/* A new object appended to the array a (NULL if that failed). */
static cJSON *push_obj(cJSON *a) {
  cJSON *c = cJSON_CreateObject();
  if (!c || !a || !cJSON_AddItemToArray(a, c)) {
    cJSON_Delete(c);
    json_failed = 1;
    return NULL;
  }
  return c;
}

static void json_memory(cJSON *robot, const robot_result *r, const char *no_peer) {
  cJSON *m = put_obj(robot, "memory");
  put_bytes(m, "model_bytes", r->model_bytes);
  put_bytes(m, "world_bytes", r->world_bytes);
  put_bytes(m, "model_bytes_freed", r->model_bytes_end);
  put_bytes(m, "world_bytes_freed", r->world_bytes_end);
  if (!no_peer) {
    put_bytes(m, "peer_model_bytes", r->peer_model_bytes);
    put_bytes(m, "peer_data_bytes", r->peer_data_bytes);
    put_num(m, "model_ratio", bench_bytes_ratio(r->peer_model_bytes, r->model_bytes));
    put_num(m, "data_ratio", bench_bytes_ratio(r->peer_data_bytes, r->world_bytes));
    put_str(m, "peer_detail", r->peer_mem_detail);
  }
  put_bool(m, "tracking_ok", bench_mem_ok());
}

static void json_contact_peer(cJSON *peers, const contact_result *c, int k) {
  const contact_peer_result *p = &c->peer[k];
  cJSON *o = put_obj(peers, bench_contact_engine_key[k]);
  put_bool(o, "built", p->built);
  if (p->built) {
    put_num(o, "us", p->us);
    put_num(o, "ratio", bench_ratio(p->us, c->us));
    put_int(o, "contacts", p->ncontact);
    put_int(o, "active", p->nactive);
    put_num(o, "base_z", p->z);
    put_num(o, "base_z_difference_m", fabs(p->z - c->z));
    put_bool(o, "stance_ok", strcmp(bench_contact_verdict(c, p), "ok") == 0);
    put_int(o, "steps", p->steps);
    put_bytes(o, "model_bytes", p->model_bytes);
    put_bytes(o, "data_bytes", p->data_bytes);
    put_num(o, "model_ratio", bench_bytes_ratio(p->model_bytes, c->model_bytes));
    put_num(o, "data_ratio", bench_bytes_ratio(p->data_bytes, c->world_bytes));
    put_num(o, "crosscheck_max", p->xcheck_max);
  }
  if (p->failed[0]) put_str(o, "error_step", p->failed);
  if (p->error[0]) put_str(o, "error", p->error);
  if (p->note[0]) put_str(o, "note", p->note);
}

static void json_contact(cJSON *robot, const contact_result *c, const char *no_peer) {
  cJSON *o = put_obj(robot, "contact_step");
  put_num(o, "kp", c->spec->kp);
  put_num(o, "kd", c->spec->kd);
  put_str(o, "gains", c->spec->why);
  if (c->error[0]) {
    put_str(o, "error", c->error);
    return;
  }
  put_num(o, "us", c->us);
  put_int(o, "contacts", c->ncontact);
  put_int(o, "active", c->nactive);
  put_int(o, "active_on_feet", c->nfoot);
  put_num(o, "base_z", c->z);
  put_num(o, "start_z", c->z0);
  put_int(o, "joints_moved_into_limits", c->nclamped);
  put_int(o, "steps", c->steps);
  put_bytes(o, "model_bytes", c->model_bytes);
  put_bytes(o, "world_bytes", c->world_bytes);
  put_bytes(o, "world_bytes_freed", c->world_bytes_end);
  if (c->failed[0]) put_str(o, "error_step", c->failed);
  if (!no_peer) {
    cJSON *peers = put_obj(o, "peers");
    for (int k = 0; k < CONTACT_NPEER; ++k)
      if (c->peer[k].attempted) json_contact_peer(peers, c, k);
  }
}

static void json_robot(cJSON *robots, const robot_result *r, const char *no_peer) {
  cJSON *o = push_obj(robots);
  put_str(o, "robot", r->e->label);
  put_str(o, "urdf", r->e->path);
  put_str(o, "base", r->e->base == TL_BASE_FIXED ? "fixed" : "floating");
  if (r->error[0]) {
    put_str(o, "error", r->error);
    return;
  }
  put_int(o, "nq", r->nq);
  put_int(o, "nv", r->nv);
  put_int(o, "nbody", r->nbody);
  put_int(o, "nframe", r->nframe);
  put_str(o, "jacobian_frame", r->frame);
  put_int(o, "jacobian_frame_dofs", r->frame_dofs);
  char key[64];
  for (int k = 0; k < NCOL; ++k) {
    snprintf(key, sizeof key, "%s_us", bench_col_key[k]);
    put_num(o, key, r->us[k]);
  }
  for (int k = 0; k < NCOL; ++k) {
    if (!r->failed[k][0]) continue;
    snprintf(key, sizeof key, "%s_error", bench_col_key[k]);
    put_str(o, key, r->failed[k]);
  }
  for (int k = 0; k < ND; ++k) {
    snprintf(key, sizeof key, "%s_us", bench_deriv_key[k]);
    put_num(o, key, r->d_us[k]);
    if (!r->d_failed[k][0]) continue;
    snprintf(key, sizeof key, "%s_error", bench_deriv_key[k]);
    put_str(o, key, r->d_failed[k]);
  }
  put_num(o, "rnea_derivatives_fd_ratio", bench_ratio(r->d_us[D_RNEA_FD], r->d_us[D_RNEA]));
  put_num(o, "aba_derivatives_fd_ratio", bench_ratio(r->d_us[D_ABA_FD], r->d_us[D_ABA]));
  put_num(o, "aba_derivatives_over_aba", bench_ratio(r->d_us[D_ABA], r->us[C_ABA]));
  put_num(o, "rnea_derivatives_over_rnea", bench_ratio(r->d_us[D_RNEA], r->us[C_RNEA]));
  put_num(o, "rnea_derivatives_fd_difference", r->d_check[0]);
  put_num(o, "aba_derivatives_fd_difference", r->d_check[1]);
  if (!no_peer) {
    for (int k = 0; k < NCOL; ++k) {
      snprintf(key, sizeof key, "%s_peer_us", bench_col_key[k]);
      put_num(o, key, r->peer_us[k]);
    }
    for (int k = 0; k < NCOL; ++k) {
      snprintf(key, sizeof key, "%s_ratio", bench_col_key[k]);
      put_num(o, key, bench_ratio(r->peer_us[k], r->us[k]));
    }
    for (int k = 0; k < NCOL; ++k) {
      if (!r->peer_failed[k][0]) continue;
      snprintf(key, sizeof key, "%s_peer_error", bench_col_key[k]);
      put_str(o, key, r->peer_failed[k]);
    }
    if (r->peer_error[0]) put_str(o, "peer_error", r->peer_error);
    if (r->peer_note[0]) put_str(o, "peer_note", r->peer_note);
    if (r->peer) {
      cJSON *x = put_obj(o, "crosscheck");
      for (int k = 0; k < NCHECK; ++k) put_num(x, bench_xcheck_key[k], r->xcheck[k]);
      put_num(x, "max", r->xcheck_max);
      put_bool(o, "crosscheck_ok", r->xcheck_max <= XCHECK_TOL);
    }
  }
  json_memory(o, r, no_peer);
  if (r->has_contact) json_contact(o, &r->contact, no_peer);
}

/* step_derivatives.<robot> */
static void json_step_deriv(cJSON *sd, const robot_result *r, const char *no_peer) {
  const step_deriv_result *d = &r->contact.deriv;
  cJSON *o = put_obj(sd, r->e->label);
  if (d->error[0]) {
    put_str(o, "error", d->error);
  } else {
    put_int(o, "nv", d->nv);
    put_int(o, "contacts", d->ncontact);
    put_num(o, "us", d->us);
    put_str(o, "mode_used", d->used == TL_DERIV_ANALYTIC ? "analytic" : "fd_centred");
    put_num(o, "fd_centred_us", d->fd_us);
    put_num(o, "step_us", r->contact.us);
    if (d->failed[0][0]) put_str(o, "error_analytic", d->failed[0]);
    if (d->failed[1][0]) put_str(o, "error_fd", d->failed[1]);
  }
  cJSON *mj = put_obj(put_obj(o, "peers"), "mujoco");
  put_bool(mj, "built", d->peer_built);
  put_num(mj, "us", d->peer_us);
  put_num(mj, "forward_us", d->peer_fwd_us);
  put_num(mj, "ratio", bench_ratio(d->peer_us, d->us));
  put_num(mj, "forward_ratio", bench_ratio(d->peer_fwd_us, d->us));
  put_num(mj, "ratio_fd_centred", bench_ratio(d->peer_us, d->fd_us));
  if (d->peer_built) put_int(mj, "nu", d->peer_nu);
  if (no_peer)
    put_str(mj, "reason", no_peer);
  else if (!d->peer_built)
    put_str(mj, "reason", d->peer_error[0] ? d->peer_error : "no peer model");
  if (d->peer_failed[0][0]) put_str(mj, "error_centred", d->peer_failed[0]);
  if (d->peer_failed[1][0]) put_str(mj, "error_forward", d->peer_failed[1]);
}

static void json_scene(cJSON *scenes, const scene_result *r, const char *no_peer) {
  cJSON *o = push_obj(scenes);
  put_str(o, "scene", r->name);
  if (r->error[0]) {
    put_str(o, "error", r->error);
    return;
  }
  put_str(o, "doc", r->doc);
  put_int(o, "boxes", r->nbox);
  put_int(o, "settle_steps", r->settle_steps);
  put_num(o, "us", r->us);
  put_int(o, "contacts", r->ncontact);
  put_int(o, "active", r->nactive);
  put_num(o, "drift_m", r->drift);
  put_int(o, "sweeps", r->sweeps);
  put_bool(o, "converged", r->converged);
  put_num(o, "signorini", r->signorini);
  if (r->failed[0]) put_str(o, "error_step", r->failed);
  if (!no_peer) {
    cJSON *peers = put_obj(o, "peers");
    for (int k = 0; k < CONTACT_NPEER; ++k) {
      const scene_peer_result *p = &r->peer[k];
      cJSON *q = put_obj(peers, bench_contact_engine_key[k]);
      put_bool(q, "built", p->built);
      if (p->built) {
        put_num(q, "us", p->us);
        put_num(q, "ratio", bench_ratio(p->us, r->us));
        put_int(q, "contacts", p->ncontact);
        put_int(q, "active", p->nactive);
        put_num(q, "drift_m", p->drift);
      }
      if (p->error[0]) put_str(q, "error", p->error);
    }
  }
}

/* The run's settings and what its figures mean (every key before robots). */
static void json_header(cJSON *root, const bench_run *run, const char *no_peer) {
  put_str(root, "generator", "talus_bench (talus " TALUS_VERSION ")");
  put_str(root, "units", "microseconds per call");
  put_str(root, "statistic", "median over batches of the batch mean");
  double load;
  long ncpu;
  bench_machine_load(&load, &ncpu);
  put_int(root, "batches", run->batches);
  put_num(root, "batch_ms", run->batch_ms);
  put_int(root, "seed", (long)BENCH_SEED);
  put_int(root, "cpus_online", ncpu);
  put_num(root, "load_average_1min", load);
  if (no_peer) {
    char note[400];
    snprintf(note, sizeof note, "no peer measured: %s; Talus figures only, no ratios", no_peer);
    put(root, "peer", cJSON_CreateNull());
    put_str(root, "peer_note", note);
  } else {
    put_str(root, "peer", bench_peer_label());
    put_str(root, "ratio",
            "<column>_ratio = <column>_peer_us / <column>_us (peer time / Talus time, same "
            "run, robot and state): > 1 means Talus is faster");
    put_str(root, "peer_model", bench_doc_peer_model());
    put_str(root, "crosscheck",
            "max |peer - talus| / max |talus| per quantity at the benchmark state, in the "
            "peer's coordinates; crosscheck_ok is false above the tolerance, and then the "
            "ratios are not comparable");
    put_num(root, "crosscheck_tolerance", XCHECK_TOL);
  }
  cJSON *cols = put_obj(root, "columns");
  for (int k = 0; k < NCOL; ++k) put_str(cols, bench_col_key[k], bench_col_doc[k]);
  if (!no_peer) {
    cJSON *pcols = put_obj(root, "peer_columns");
    for (int k = 0; k < NCOL; ++k) put_str(pcols, bench_col_key[k], bench_doc_peer_column(k));
  }
  put_str(root, "memory",
          "bytes allocated for one robot at load / creation; talus: <talus_doc>; peer: "
          "<peer_doc>; <x>_ratio = peer bytes / Talus bytes (> 1: Talus uses less)");
  put_str(root, "memory_talus_doc", bench_talus_mem_doc);
  if (!no_peer) put_str(root, "memory_peer_doc", bench_doc_peer_memory());
  cJSON *dv = put_obj(root, "derivatives");
  for (int k = 0; k < ND; ++k) put_str(dv, bench_deriv_key[k], bench_deriv_doc[k]);
  put_str(dv, "ratios",
          "<x>_derivatives_fd_ratio = <x>_derivatives_fd_us / <x>_derivatives_us (Talus's own "
          "finite differences against its analytic derivatives, same run; > 1: analytic faster); "
          "aba_derivatives_over_aba = aba_derivatives_us / aba_us (issue 24's target: at most 4), "
          "rnea_derivatives_over_rnea likewise; <x>_derivatives_fd_difference = max |fd - analytic| / "
          "max |analytic| over the matrices at the benchmark state (eps 1e-6: about 1e-7 expected; "
          "the two columns compute the same matrices); no peer column: MuJoCo has no analytic derivatives");
  put_str(dv, "pinocchio_published", bench_deriv_published);
  put_num(dv, "pinocchio_published_arm_7dof_us", 3.0);
  put_num(dv, "pinocchio_published_humanoid_36dof_us", 17.0);
  put_int(dv, "vector_lanes", tl_cpu_lanes());
  put_str(dv, "vector_lanes_doc", bench_lanes_doc);
  cJSON *cs = put_obj(root, "contact_step");
  put_num(cs, "dt", 0.001);
  put_num(cs, "ground_friction", CONTACT_GROUND_MU);
  put_num(cs, "drop_m", CONTACT_DROP);
  put_int(cs, "settle_steps", CONTACT_SETTLE_STEPS);
  put_num(cs, "base_height_tolerance_m", CONTACT_Z_TOL);
  put_str(cs, "left_out", contact_left_out);
  put_str(cs, "talus",
          "tl_world_step with tl_world_add_ground and the world's default solver (exact "
          "Coulomb cone per contact, speculative contacts within a 5 mm margin), implicit PD "
          "(kp, kd) holding the reference configuration; timed after settle_steps steps while "
          "the robot goes on standing");
  if (!no_peer) {
    cJSON *peers = put_obj(cs, "peers");
    put_str(peers, bench_contact_engine_key[0], bench_doc_peer_contact(1));
    put_str(peers, bench_contact_engine_key[1], bench_doc_peer_contact(2));
    put_str(peers, bench_contact_engine_key[CONTACT_ODE], bench_contact_ode_doc());
  }
  put_str(cs, "keys",
          "us: microseconds per step (Talus; peers.<name>.us: the peer in those "
          "settings); ratio = peer us / Talus us; contacts, active: contacts after the last "
          "step, all and with a positive normal impulse; base_z: base height after the "
          "timed steps (m); stance_ok: Talus and that peer within base_height_tolerance_m "
          "and above half the start height");
}

int bench_print_json(const bench_run *run) {
  const char *no_peer = bench_no_peer_reason(run->use_peer);
  json_failed = 0;
  cJSON *root = cJSON_CreateObject();
  if (!root) json_failed = 1;
  json_header(root, run, no_peer);
  cJSON *robots = cJSON_CreateArray();
  put(root, "robots", robots);
  for (int i = 0; i < run->n && !json_failed; ++i) json_robot(robots, &run->res[i], no_peer);
  cJSON *sd = put_obj(root, "step_derivatives");
  put_str(sd, "doc", bench_step_deriv_doc);
  if (!no_peer) put_str(sd, "mujoco", bench_doc_peer_deriv());
  for (int i = 0; i < run->n && !json_failed; ++i)
    if (run->res[i].has_contact && run->res[i].contact.deriv.attempted)
      json_step_deriv(sd, &run->res[i], no_peer);
  cJSON *scenes = cJSON_CreateArray();
  put(root, "scenes", scenes);
  for (int i = 0; i < run->nscene && !json_failed; ++i)
    json_scene(scenes, &run->scenes[i], no_peer);
  char *text = json_failed ? NULL : cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) {
    fprintf(stderr, "talus_bench: out of memory while writing the JSON report\n");
    return 1;
  }
  int ok = fputs(text, stdout) >= 0 && fputc('\n', stdout) != EOF;
  cJSON_free(text);
  if (fflush(stdout) != 0 || !ok) {
    fprintf(stderr, "talus_bench: could not write the JSON report to stdout\n");
    return 1;
  }
  return 0;
}
