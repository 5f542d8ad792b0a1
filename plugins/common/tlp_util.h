/* Shared helpers of the project's engine plugins (plugins/ode, plugins/mujoco),
 * compiled into each plugin: kinematics of a tl_engine_model in Talus's
 * conventions (q, u -> body poses and velocities, and back from a maximal-
 * coordinate state), the PD and spring errors exactly as the native engine
 * computes them (both call src/dynamics/joint_space.h), option parsing. No
 * Talus library calls (joint_space.h is static inline). */
#ifndef TALUS_PLUGIN_UTIL_H
#define TALUS_PLUGIN_UTIL_H

#include <math.h>
#include <stddef.h>

#include "talus/engine_plugin.h"

/* A point contact (a collision sphere of radius 0, URDF <sphere radius="0"/>)
 * in an engine that needs a positive size (MuJoCo refuses 0; ODE creates no
 * contact for it): a sphere of this radius, m. */
#define TLP_POINT_RADIUS 1e-4
static inline double tlp_sphere_radius(double r) { return r > 0 ? r : TLP_POINT_RADIUS; }

/* Body poses and velocities at (q, u): for each body b, the world position
 * xpos[3b] of its frame origin, its rotation xrot[9b] (world from body),
 * its angular velocity w[3b] and the linear velocity v[3b] of its frame
 * origin (world). u may be NULL (w, v not written; they may be NULL too).
 * A fixed base sits at jnt_pos[0], jnt_rot[0] at rest. Featherstone, Rigid
 * Body Dynamics Algorithms, 2008, sec. 4.3 (the same joint transforms as
 * src/dynamics/kinematics.c). */
void tlp_fk(const tl_engine_model *m, const double *q, const double *u, double *xpos, double *xrot,
            double *w, double *v);

/* Joint coordinates q and velocities u (the joint's own entries) of body b
 * from the world pose and velocity (origin velocity v, angular velocity w)
 * of its parent body (p*) and of itself (c*): the inverse of tlp_fk for one
 * joint, used to read a maximal-coordinate state back. Revolute and
 * universal angles are unwrapped to the nearest multiple of 2 pi of q_prev
 * (the joint's previous coordinates; NULL: in (-pi, pi]). The parent's
 * values are ignored for the root. */
void tlp_joint_state(const tl_engine_model *m, int b, const double pp[3], const double pR[9],
                     const double pw[3], const double pv[3], const double cp[3], const double cR[9],
                     const double cw[3], const double cv[3], const double *q_prev, double *q, double *u);

/* PD position error of body b's joint (velocity dimension): q_target - q for
 * scalar coordinates, a target outside the position limits taken at the
 * nearer limit; log(q_target q^-1) in the parent joint frame for a ball
 * joint; for the floating base the world position difference and rotation
 * vector (as tl_system_set_pd_targets documents). */
void tlp_pd_error(const tl_engine_model *m, int b, const double *q, const double *q_target, double *e);
/* Deflection of body b's joint spring from its rest position (zero for the base). */
void tlp_spring_error(const tl_engine_model *m, int b, const double *q, double *e);

/* Names of joint and geom types and of an engine feature bit, as the
 * library's tl_joint_type_name / tl_geom_type_name / tl_engine_feature_name
 * ("?" if unknown), for plugins that do not call into the library. */
const char *tlp_joint_name(tl_joint_type t);
const char *tlp_geom_name(tl_geom_type t);
const char *tlp_feature_name(unsigned feature);

/* Value of key in "k1=v1,k2=v2" (copied into val, cap bytes): 1 found, 0 not. */
int tlp_option(const char *options, const char *key, char *val, size_t cap);
/* The first key of options not in the NULL-terminated list known, into bad
 * (cap bytes): 1 if there is one, 0 if every key is known. */
int tlp_unknown_option(const char *options, const char *const *known, char *bad, size_t cap);
/* TL_OK if every key of options is in the NULL-terminated list known; else
 * TL_ERR_ARGUMENT, "<engine>: unknown option 'k=v' (known1, known2, ...)". */
tl_status tlp_check_options(const char *engine, const char *options, const char *const *known, tl_error *err);
/* Integer option key (decimal, the whole value) within [lo, hi] into *out:
 * 1 found and valid, 0 absent (*out untouched), -1 found but not such an
 * integer (its text in val, cap bytes, for the message). */
int tlp_option_long(const char *options, const char *key, long lo, long hi, long *out, char *val, size_t cap);
/* Number option key (strtod, the whole value) into *out: 1 found, 0 absent
 * (*out untouched), -1 not a number (its text in val); the caller checks
 * the range. */
int tlp_option_double(const char *options, const char *key, double *out, char *val, size_t cap);

/* Append one line (printf format) to a plugin's notes buffer (cap bytes,
 * NUL-terminated), lines separated by '\n'; a full buffer takes no more. */
void tlp_note(char *notes, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* TL_OK if 0 <= i < nsys, else TL_ERR_ARGUMENT naming "sys". */
tl_status tlp_check_system(int i, int nsys, tl_error *err);

/* Feed-forward or motor force x within the effort limit +-eff:
 * fmax(-eff, fmin(eff, x)), as both adapters clamp it. */
static inline double tlp_clamp_effort(double x, double eff) { return fmax(-eff, fmin(eff, x)); }

/* Effective friction, restitution, threshold, erp and cfm of a contact
 * between geoms of materials ma, mb with friction coefficients fa, fb (the
 * native rule: the pair table, else the smaller friction and the defaults). */
void tlp_pair_material(const tl_engine_scene *s, const char *ma, const char *mb, double fa, double fb,
                       double *mu, double *restitution, double *threshold, double *erp, double *cfm);

/* 1 if geoms (system sa, body ba, group ga / mask ma) and (sb, bb, gb / mb)
 * may collide under the native rules: not two static geoms, not one body,
 * not bodies of one system unless its self-collision is on (never a body
 * and its parent), the filter (ga & mb) && (gb & ma), the ignore list.
 * sb = -1: static geometry (bb ignored). */
int tlp_may_collide(const tl_engine_scene *s, int sa, int ba, unsigned ga, unsigned maska, int sb, int bb,
                    unsigned gb, unsigned maskb);

#endif
