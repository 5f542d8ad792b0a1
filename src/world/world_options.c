/* tl_world_options (talus/world.h): the defaults of a world's settings and
 * the one check of them, field by field, that tl_world_create_with_options
 * and tl_world_set_options apply before anything changes (src/world/world.c
 * applies them; the single setters there are thin wrappers). The struct
 * follows Box2D v3's b2WorldDef / b2DefaultWorldDef(): one plain struct of
 * settings, its defaults returned by value. */
#include <math.h>
#include <stddef.h>

#include "base/error.h"
#include "talus/limits.h"
#include "talus/world.h"

/* No padding anywhere: the fingerprint of a plugin engine's world
 * (src/engine/engine_link.c) hashes the struct's bytes, and plugins read it
 * as is from tl_engine_scene; padding bytes would be undefined. */
_Static_assert(sizeof(tl_world_options) == 16 * sizeof(double) + sizeof(tl_solver) + 3 * sizeof(int),
               "tl_world_options has padding: keep doubles first, then ints and enums in pairs");
_Static_assert(sizeof(tl_solver) == sizeof(int), "tl_solver is stored as an int");
_Static_assert(offsetof(tl_world_options, solver) == 16 * sizeof(double),
               "tl_world_options: the 16 doubles come first");

tl_world_options tl_world_options_default(void) {
  tl_world_options o = {0}; /* every byte 0 first: hashed as bytes */
  o.dt = 1e-3;
  o.gravity[0] = 0.0, o.gravity[1] = 0.0, o.gravity[2] = -9.81;
  o.solver_tol = 1e-10;
  o.sor = 1.0;
  o.erp = 0.2;
  o.cfm = 0.0;
  o.contact_compliance = 3e-3;
  o.contact_margin = 5e-3;
  o.slop = 0.0;
  o.max_recovery_speed = 1.0;
  o.limit_margin = 0.02;
  o.default_mu = 0.8;
  o.default_restitution = 0.0;
  o.default_threshold = 0.01;
  o.solver = TL_SOLVER_PER_CONTACT;
  o.solver_max_iter = 100;
  o.velocity_limits = 0;
  o.reserved = 0;
  return o;
}

static tl_status bad(tl_error *err, const char *field, const char *fmt, double v) {
  return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, field, "tl_world_options.%s = %g: expected %s", field, v, fmt);
}

/* v is finite and >= 0 */
static int nonneg(double v) { return v >= 0 && isfinite(v); }

tl_status tl_world_options_check(const tl_world_options *o, tl_error *err) {
  if (!o) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "options", "options must not be NULL");
  if (!(o->dt >= TL_DT_MIN && o->dt <= TL_DT_MAX)) /* the rule of tl_check_timestep (talus/limits.h) */
    return bad(err, "dt", "a time step in [1e-9, 1] s", o->dt);
  for (int i = 0; i < 3; i++)
    if (!isfinite(o->gravity[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "gravity",
                          "tl_world_options.gravity[%d] = %g: expected a finite number (m/s^2)", i, o->gravity[i]);
  if (!(o->solver_tol >= 0)) return bad(err, "solver_tol", ">= 0 (N s)", o->solver_tol);
  if (!(o->sor > 0 && o->sor < 2)) return bad(err, "sor", "0 < sor < 2", o->sor);
  if (!(o->erp >= 0 && o->erp <= 1)) return bad(err, "erp", "0 <= erp <= 1", o->erp);
  if (!nonneg(o->cfm)) return bad(err, "cfm", "a finite cfm >= 0", o->cfm);
  if (!(o->contact_compliance >= 0 && o->contact_compliance <= 1))
    return bad(err, "contact_compliance", "0 <= compliance <= 1", o->contact_compliance);
  if (!nonneg(o->contact_margin)) return bad(err, "contact_margin", "a finite margin >= 0 (m)", o->contact_margin);
  if (!nonneg(o->slop)) return bad(err, "slop", "a finite slop >= 0 (m)", o->slop);
  if (!(o->max_recovery_speed >= 0))
    return bad(err, "max_recovery_speed", "a speed >= 0 (m/s; +inf: no cap)", o->max_recovery_speed);
  if (!nonneg(o->limit_margin)) return bad(err, "limit_margin", "a finite margin >= 0 (rad or m)", o->limit_margin);
  if (!nonneg(o->default_mu)) return bad(err, "default_mu", "a finite friction coefficient >= 0", o->default_mu);
  if (!(o->default_restitution >= 0 && o->default_restitution <= 1))
    return bad(err, "default_restitution", "0 <= restitution <= 1", o->default_restitution);
  if (!nonneg(o->default_threshold))
    return bad(err, "default_threshold", "a finite threshold >= 0 (m/s)", o->default_threshold);
  if (o->solver != TL_SOLVER_PER_CONTACT && o->solver != TL_SOLVER_PGS && o->solver != TL_SOLVER_DANTZIG)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "solver",
                        "tl_world_options.solver = %d: expected TL_SOLVER_PER_CONTACT (0), TL_SOLVER_PGS (1) "
                        "or TL_SOLVER_DANTZIG (2)", (int)o->solver);
  if (o->solver_max_iter < 1)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "solver_max_iter",
                        "tl_world_options.solver_max_iter = %d: expected >= 1", o->solver_max_iter);
  if (o->velocity_limits != 0 && o->velocity_limits != 1)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "velocity_limits",
                        "tl_world_options.velocity_limits = %d: expected 0 or 1", o->velocity_limits);
  if (o->reserved != 0)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "reserved",
                        "tl_world_options.reserved = %d: expected 0 (start from tl_world_options_default())",
                        o->reserved);
  return TL_OK;
}
