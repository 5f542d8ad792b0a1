/* Talus articulated system: state, kinematic and dynamic queries, control.
 *
 * A tl_system lives in a tl_world (tl_world_add_system). It owns a copy of
 * its model's parameters, its state (q, u) and its caches. Queries compute
 * from the current state; after tl_world_integrate1 they are already current.
 * Shapes: q has nq entries, u and every generalized force nv entries, dense
 * matrices are row-major (M: nv x nv, Jacobians: 3 x nv). Units SI, all
 * vectors in the world frame unless stated. Every function that takes an
 * array also takes its length and refuses a wrong one (TL_ERR_ARGUMENT), and
 * setters refuse NaN / Inf without changing anything. */
#ifndef TALUS_SYSTEM_H
#define TALUS_SYSTEM_H

#include "talus/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_system tl_system;

/* The system's own model (its parameters). */
const tl_model *tl_system_model(const tl_system *sys);
int tl_system_nq(const tl_system *sys);
int tl_system_nv(const tl_system *sys);
/* Position of the system in its world (order of tl_world_add_system), as in
 * tl_contact_info.system. */
int tl_system_index(const tl_system *sys);

/* ---- state ---- */
/* Set q (length nq) and u (length nv; NULL: zero velocity). Quaternions are
 * normalised; a zero or non-finite quaternion is refused, and so is any |q_i| > 1e9 (m or rad). */
tl_status tl_system_set_state(tl_system *sys, const double *q, int nq, const double *u, int nv,
                              tl_error *err);
tl_status tl_system_get_state(const tl_system *sys, double *q, int nq, double *u, int nv,
                              tl_error *err);
/* Name of entry `index` of q (velocity 0) or u (velocity 1) into buf (size
 * bytes, truncated): "u[7] (joint LF_KFE velocity)", "q[2] (base position z)",
 * "q[4] (base orientation (quaternion x))", "u[3] (base angular velocity x)".
 * Returns 0, or -1 for an index out of range (buf then empty). */
int tl_system_state_entry_name(const tl_system *sys, int velocity, int index, char *buf, size_t size);
/* The first entry of the state that is not finite or whose magnitude exceeds
 * `limit` (INFINITY: non-finite only), velocities u before coordinates q (the
 * integrator makes q from u, so u is where a blow-up shows first). Returns 1
 * and fills *velocity (1: u, 0: q), *index and *value (each may be NULL), or
 * 0 when every entry is finite and within the limit. */
int tl_system_find_nonfinite(const tl_system *sys, double limit, int *velocity, int *index, double *value);
/* Place the base, floating or fixed: for a floating base, set its position
 * (m, world) and orientation R (row-major, world from base) in q (its
 * velocity is kept); for a fixed base, move the pose at which it is welded
 * to the world (identity by default, or where the URDF's `world` joint puts
 * it). A fixed base can be moved at any time; it does not move by itself.
 * TL_ERR_ARGUMENT if pos is not 3 finite numbers or R is not a rotation
 * matrix (|R^T R - I| and |det R - 1| within 1e-9); nothing is changed then. */
tl_status tl_system_set_base_pose(tl_system *sys, const double pos[3], const double R[9], tl_error *err);

/* ---- kinematics (current state) ---- */
/* World pose of body `body`'s frame: origin pos[3] (m), rotation R[9] (world from body). */
tl_status tl_system_body_pose(tl_system *sys, int body, double pos[3], double R[9], tl_error *err);
/* Index of the frame named `name` into *index: a frame (URDF joint) name or a
 * URDF link name (tl_model_frame_index). TL_ERR_ARGUMENT naming `name` and the
 * robot when there is none (so a bad name never becomes a frame index -1). */
tl_status tl_system_frame_index(const tl_system *sys, const char *name, int *index, tl_error *err);
/* World pose of frame `frame` (see tl_system_frame_index). */
tl_status tl_system_frame_pose(tl_system *sys, int frame, double pos[3], double R[9], tl_error *err);
/* Dense Jacobians of the world point `point` (m, world frame) moving with
 * body `body`: Jp (3 x nv) maps u to the point's world linear velocity and Jr
 * (3 x nv) to the body's world angular velocity. Either may be NULL. Columns
 * of DOFs that are not ancestors of the body are zero. */
tl_status tl_system_point_jacobian(tl_system *sys, int body, const double point[3], double *Jp,
                                   double *Jr, int nv, tl_error *err);

/* World pose of collision geom `geom` (model geom index). */
tl_status tl_system_geom_pose(tl_system *sys, int geom, double pos[3], double R[9], tl_error *err);
/* World axis-aligned bounding box of collision geom `geom` (exact for
 * sphere, box, capsule and cylinder; mesh geoms: TL_ERR_UNSUPPORTED). */
tl_status tl_system_geom_aabb(tl_system *sys, int geom, double lo[3], double hi[3], tl_error *err);
/* World axis-aligned bounding box (lo, hi, m) of all the collision geometry of sys in its current
 * state: sphere, box, capsule and cylinder geoms exactly (tl_system_geom_aabb), mesh geoms by the
 * vertices of their convex hulls (what the collision step uses). Returns the number of geoms that
 * contributed; 0 when there is none (lo = +INFINITY, hi = -INFINITY). Used to place a robot
 * (`talus simulate`'s drop, world files' `clearance`). */
int tl_system_collision_aabb(tl_system *sys, double lo[3], double hi[3]);

/* Linear velocity v (world) of the world point `point` moving with body
 * `body`, and the body's angular velocity w (world); either may be NULL. */
tl_status tl_system_point_velocity(tl_system *sys, int body, const double point[3], double v[3],
                                   double w[3], tl_error *err);
/* Velocity of frame `frame`: linear velocity of its origin and angular
 * velocity, world frame; either may be NULL. */
tl_status tl_system_frame_velocity(tl_system *sys, int frame, double v[3], double w[3],
                                   tl_error *err);
/* Dense Jacobians of frame `frame`'s origin (see tl_system_point_jacobian). */
tl_status tl_system_frame_jacobian(tl_system *sys, int frame, double *Jp, double *Jr, int nv,
                                   tl_error *err);
/* Add a user frame rigidly attached to `body` at pos (m) and orientation R
 * (row-major, NULL = identity), both in the body frame. The name must be new.
 * *index (may be NULL) receives the frame index. Allocates: call at setup. */
tl_status tl_system_add_frame(tl_system *sys, const char *name, int body, const double pos[3],
                              const double R[9], int *index, tl_error *err);

/* Sparse Jacobian of a world point on `body`: only the columns of the DOFs
 * on the path from the body to the root (its ancestors), in increasing DOF
 * order. idx (cap entries) receives their indices; Jp and Jr (at least
 * 3 x cap doubles) receive the dense 3 x n blocks, row-major with row
 * stride n; *n receives n. Either Jp or Jr may be NULL. TL_ERR_ARGUMENT if
 * cap < n (tl_system_sparse_jacobian_size gives n). */
int tl_system_sparse_jacobian_size(const tl_system *sys, int body);
tl_status tl_system_sparse_point_jacobian(tl_system *sys, int body, const double point[3], int *idx,
                                          double *Jp, double *Jr, int cap, int *n, tl_error *err);
/* v = J u for a sparse 3 x n block J with column indices idx. */
void tl_system_sparse_jacobian_velocity(const int *idx, int n, const double *J, const double *u,
                                 double v[3]);
/* The velocity-product terms dJp/dt u (acc, m/s^2) and dJr/dt u (alpha,
 * rad/s^2) of the point `point` (world) on `body`: the point's classical
 * acceleration and the body's angular acceleration when du/dt = 0 and
 * gravity is off. Task-space acceleration = J du/dt + this. Either may be NULL. */
tl_status tl_system_point_bias_acceleration(tl_system *sys, int body, const double point[3],
                                            double acc[3], double alpha[3], tl_error *err);

/* ---- dynamics (current state) ---- */
/* Joint-space mass matrix M (nv x nv, row-major), rotor inertia on the
 * diagonal. Composite rigid body algorithm (Featherstone 2008, Table 6.2). */
tl_status tl_system_mass_matrix(tl_system *sys, double *M, int nv, tl_error *err);
/* Nonlinear term h = Coriolis + centrifugal + gravity (nv), so that
 * tau = M du/dt + h. Recursive Newton-Euler (Featherstone 2008, Table 5.1). */
tl_status tl_system_nonlinear_term(tl_system *sys, double *h, int nv, tl_error *err);
/* Nonlinear term for an arbitrary gravity vector g (m/s^2, world). */
tl_status tl_system_nonlinear_term_gravity(tl_system *sys, const double g[3], double *h, int nv,
                                           tl_error *err);
/* M^-1 (nv x nv) through the tree-sparse L^T D L factorization M = L^T D L
 * (Featherstone 2008, Table 6.3) and M^-1 = L^-1 D^-1 L^-T formed on the
 * tree sparsity of L^-1 (no per-column solves). */
tl_status tl_system_inverse_mass_matrix(tl_system *sys, double *Minv, int nv, tl_error *err);
/* The inverse of the effective mass matrix the integrator uses:
 * (M + dt (Kd + D) + dt^2 (Kp + K))^-1 with the PD gains, joint damping D and
 * joint stiffness K of the system and the world's time step. */
tl_status tl_system_effective_inverse_mass_matrix(tl_system *sys, double *Minv, int nv,
                                                  tl_error *err);
/* y = M x (nv), touching only the tree's non-zero entries of M. */
tl_status tl_system_mass_matrix_multiply(tl_system *sys, const double *x, double *y, int nv,
                                         tl_error *err);
/* Mass (kg), COM (world, m) and rotational inertia about that COM (world
 * axes, kg m^2, row-major: `inertia`) of the subtree rooted at `body` (composite body). */
tl_status tl_system_composite_inertia(tl_system *sys, int body, double *mass, double com[3],
                                      double inertia[9], tl_error *err);
/* Linear momentum (kg m/s, world). */
tl_status tl_system_linear_momentum(tl_system *sys, double p[3], tl_error *err);
/* Angular momentum about the world point `point` (kg m^2/s, world). */
tl_status tl_system_angular_momentum(tl_system *sys, const double point[3], double L[3],
                                     tl_error *err);
/* Generalized momentum M u (nv). */
tl_status tl_system_generalized_momentum(tl_system *sys, double *p, int nv, tl_error *err);
/* Inverse dynamics, RNEA: tau = M(q) du + h(q, u) for the current q, u and
 * the given generalized acceleration du (nv); world gravity; rotor inertia
 * included. Featherstone 2008, Table 5.1. */
tl_status tl_system_inverse_dynamics(tl_system *sys, const double *du, double *tau, int nv,
                                     tl_error *err);
/* Forward dynamics: du = M^-1 (tau - h) for the current q, u and the
 * generalized force tau (nv); world gravity; rotor inertia included. By the
 * articulated-body algorithm (Featherstone 2008, Table 7.1), or, when M, h
 * and the factorization of M are already cached at this state (after
 * tl_system_inverse_mass_matrix), by a solve with that factorization
 * (Table 6.4); the two agree to rounding. */
tl_status tl_system_forward_dynamics(tl_system *sys, const double *tau, double *du, int nv,
                                     tl_error *err);

/* ---- analytic derivatives (docs/derivatives.md) ----
 * Derivatives of exactly tl_system_inverse_dynamics and
 * tl_system_forward_dynamics at the current (q, u): tau = M(q) du + h(q, u)
 * with the world's gravity, Coriolis and centrifugal terms and rotor
 * inertia (on M's diagonal). Those two functions, and so these derivatives,
 * do not contain joint springs, joint damping, PD, friction, limits,
 * contacts, mimic constraints or the external forces of
 * tl_system_add_external_force: the step adds those (world.c); their
 * derivatives are part of the step derivatives (docs/derivatives.md gives
 * the passive terms' closed forms: d/dq = -K, d/du = -D; the _passive
 * variants below include springs, damping and external forces). All matrices are
 * nv x nv, row-major, entry (i, j) = d out_i / d in_j. Derivatives with
 * respect to q are along the nv tangent directions of tl_model_integrate
 * (column j: d/deps of out(q (+) eps e_j)); with respect to u, du, tau the
 * plain partials. Units: dtau_dq N/rad, N m/rad, N/m ...; dtau_du N s/rad
 * ...; ddu_dq 1/s^2; ddu_du 1/s; ddu_dtau = M^-1. Algorithm: Carpentier and
 * Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS
 * 2018 (the recursive world-frame derivatives of RNEA, Pinocchio's
 * computeRNEADerivatives), in Talus's world-axes spatial algebra
 * (Featherstone, Rigid Body Dynamics Algorithms, 2008); every joint type
 * (floating base, ball, universal, planar, revolute, prismatic). No
 * allocation (scratch sized when the system was created). Errors:
 * TL_ERR_ARGUMENT for a NULL array, nv != the system's nv or a non-finite
 * input (nothing written). */
/* dtau_dq = d tau / dq, dtau_du = d tau / du of tau = RNEA(q, u, du) for
 * the given generalized acceleration du (nv); d tau / d du = M
 * (tl_system_mass_matrix). Cost O(nbody + sum of DOF depths). */
tl_status tl_system_inverse_dynamics_derivatives(tl_system *sys, const double *du, double *dtau_dq,
                                                 double *dtau_du, int nv, tl_error *err);
/* ddu_dq, ddu_du, ddu_dtau (= M^-1) of du = ABA(q, u, tau) for the given
 * generalized force tau (nv): du = M^-1 (tau - h) is solved with the
 * tree-sparse L^T D L factorization of M (equal to ABA's du to rounding),
 * then ddu_dx = -M^-1 dtau_dx (x = q, u) with dtau_dx the inverse-dynamics
 * derivatives at that du (as Pinocchio's computeABADerivatives), M^-1 from
 * the tree-sparse L^T D L factorization (tl_system_inverse_mass_matrix) and
 * the products by sparse solves. TL_ERR_INVALID if M is not positive
 * definite. */
tl_status tl_system_forward_dynamics_derivatives(tl_system *sys, const double *tau, double *ddu_dq,
                                                 double *ddu_du, double *ddu_dtau, int nv,
                                                 tl_error *err);
/* Derivative of the world placement of frame `frame` with respect to q in
 * the tangent space of tl_model_integrate: dp_dq (3 x nv, m per tangent unit)
 * and dR_dq (3 x nv, rad per tangent unit) such that
 *   p(q (+) d) = p(q) + dp_dq d + O(|d|^2),
 *   R(q (+) d) = exp([dR_dq d]x) R(q) + O(|d|^2)  (world-frame rotation vector).
 * These are the frame Jacobians of tl_system_frame_jacobian: the tangent
 * space is velocity x time, so d(placement)/dq = d(placement)/dt per unit u
 * (checked against finite differences in tests/test_derivatives.c). For a
 * cost on the orientation error e = log(R R_target^T), de/dq =
 * Jl(e)^-1 dR_dq (tl_model_difference_jacobians' Jl). Either may be NULL. */
tl_status tl_system_frame_placement_derivatives(tl_system *sys, int frame, double *dp_dq, double *dR_dq,
                                                int nv, tl_error *err);

/* ---- the same with the step's passive and external forces (docs/derivatives.md) ----
 * tau_p = -D u + K e_s(q) + ext: joint damping D and stiffness K per DOF
 * (tl_system_set_joint_damping / _spring, URDF <dynamics damping>,
 * stiffness), the spring deflection e_s = mount (-) q exactly as the step
 * computes it (scalar joints: spring_mount - q; a ball joint: the rotation
 * vector log(mount q^-1) in its parent frame; none on a floating base), and
 * ext the generalized force of the external forces added for the next step
 * (tl_system_add_external_force / _body_point / _torque). N, N m; nv. */
tl_status tl_system_passive_force(tl_system *sys, double *tau_p, int nv, tl_error *err);
/* dtp_dq, dtp_du (nv x nv, row-major, q in the tangent space as above) of
 * tau_p: springs -K (a ball joint's 3x3 block -K Jl(-e_s)^-1), damping -D,
 * and the q dependence of the external forces: a force f (world frame) at a
 * point fixed to a body, and a world-frame torque, give J(q)^T f whose
 * derivative is taken as if the forces were added again at q (the point
 * moves with the body, f and the torque keep their world direction). That
 * record of the forces lasts as long as ext (a step clears both); an
 * external generalized force set any other way (a snapshot restored with
 * different forces) counts as constant. Source: Featherstone 2008 (spatial
 * algebra), Sola et al. 2018 (Jl). */
tl_status tl_system_passive_force_derivatives(tl_system *sys, double *dtp_dq, double *dtp_du, int nv,
                                              tl_error *err);
/* Derivatives (as tl_system_inverse_dynamics_derivatives) of
 * tau = M(q) du + h(q, u) - tau_p(q, u): the generalized force the actuators
 * must add to the step's passive and external forces for the acceleration
 * du, rotor inertia and gravity included. */
tl_status tl_system_inverse_dynamics_passive_derivatives(tl_system *sys, const double *du, double *dtau_dq,
                                                         double *dtau_du, int nv, tl_error *err);
/* Derivatives (as tl_system_forward_dynamics_derivatives) of
 * du = M^-1 (tau + tau_p(q, u) - h(q, u)) = ABA(q, u, tau + tau_p): the
 * continuous dynamics the step integrates, without PD, friction, limits and
 * contacts; ddu_dx = -M^-1 (dtau/dx - dtau_p/dx) at that du, ddu_dtau = M^-1. */
tl_status tl_system_forward_dynamics_passive_derivatives(tl_system *sys, const double *tau, double *ddu_dq,
                                                         double *ddu_du, double *ddu_dtau, int nv,
                                                         tl_error *err);

/* System centre of mass (world, m). */
tl_status tl_system_com(tl_system *sys, double com[3], tl_error *err);
/* Kinetic energy 1/2 u^T M u and gravitational potential energy sum m g^T... (J). */
double tl_system_kinetic_energy(tl_system *sys);
double tl_system_potential_energy(tl_system *sys);

/* Time integration scheme (see tl_integrator in talus/types.h). */
tl_status tl_system_set_integrator(tl_system *sys, tl_integrator integrator, tl_error *err);
tl_integrator tl_system_integrator(const tl_system *sys);

/* ---- control, applied in tl_world_integrate2 ----
 * Implicit PD: tau = Kp (q_target - q) + Kd (u_target - u) + tau_ff, where
 * q and u are the END-of-step values, so the gains enter the effective mass
 * M + dt Kd + dt^2 Kp and stay stable at high gains (RaiSim's stable PD;
 * Tan, Liu, Turk, "Stable proportional-derivative controllers", 2011).
 * Gains are per DOF (nv). Targets are in coordinate dimension (q_target: nq)
 * and velocity dimension (u_target: nv). Orientation errors are rotation
 * vectors: log(q_target q^-1) in the parent joint frame for ball joints and
 * in the world frame for the floating base (whose position error is the
 * world-frame difference; base gains act like a spring to the world and are
 * usually zero). A scalar position target outside the joint's position limits
 * is used at the nearer limit (the stored target is kept as given), so the PD
 * never pushes into a limit it cannot pass. The targets start at the default
 * configuration (tl_model_default_q). An optional vector given as NULL means
 * zero (its length is then not checked): u_target NULL = zero velocity
 * targets. */
tl_status tl_system_set_pd_gains(tl_system *sys, const double *kp, const double *kd, int nv,
                                 tl_error *err);
tl_status tl_system_set_pd_targets(tl_system *sys, const double *q_target, int nq,
                                   const double *u_target, int nv, tl_error *err);
/* The PD targets now in force (either output may be NULL; lengths nq / nv).
 * q_target as given (quaternions normalised), not clamped into the limits. */
tl_status tl_system_get_pd_targets(const tl_system *sys, double *q_target, int nq, double *u_target,
                                   int nv, tl_error *err);
/* Feedforward generalized force tau_ff (nv; NULL: zero), applied every step until changed.
 * Actuation limits (URDF <limit effort>) bound tau_ff + PD together. */
tl_status tl_system_set_generalized_force(tl_system *sys, const double *tau, int nv,
                                          tl_error *err);
/* The actuator generalized force applied over the last step (nv): tau_ff
 * plus the PD force at the end-of-step state, after saturation, exactly as
 * the integrator used it (N, N m). */
tl_status tl_system_applied_generalized_force(const tl_system *sys, double *tau, int nv,
                                              tl_error *err);

/* ---- contact wrenches (the contacts of the last step) ----
 * The wrench the contacts exerted on body `body` over the last step: force
 * (N) = the sum of the contact impulses on that body (tl_contact_info.impulse,
 * the other side's with the opposite sign) / dt, and torque (N m) = the sum of
 * (contact point - point) x contact force, about the world point `point` (m;
 * NULL: the body frame's origin). World frame. Contacts with static geometry,
 * other systems and this system's other bodies all count; none: zeros. A
 * fixed link's contacts belong to the body it is merged into. Contacts are
 * those found by the last tl_world_integrate1, impulses those of the last
 * tl_world_integrate2. Either output may be NULL. TL_ERR_ARGUMENT for a bad
 * body or point. */
tl_status tl_system_body_contact_wrench(tl_system *sys, int body, const double point[3], double force[3],
                                        double torque[3], tl_error *err);
/* The same for the body of frame `frame`, the torque about the frame's origin. */
tl_status tl_system_frame_contact_wrench(tl_system *sys, int frame, double force[3], double torque[3],
                                         tl_error *err);

/* ---- joint reaction wrenches (the last step; ODE's dJointGetFeedback) ----
 * The wrench that the parent body exerted on the child body through joint
 * `joint` over the last step: everything the joint transmits together, its
 * constraint (the directions it does not move in), the actuator (PD,
 * feed-forward), limit, spring, damping, friction and mimic forces. joint is
 * the body / movable-joint index 0 .. nbody - 1 (tl_model_body_name,
 * tl_model_joint_name); joint 0 is the root joint: for a fixed base the
 * support reaction the world exerts on the base, for a floating base the
 * generalized force applied on the base's DOFs (zero, to rounding, unless
 * base PD gains or a feed-forward act on them). Fixed URDF joints are not
 * joints of their own (their links are merged into one rigid body with their
 * movable ancestor): tl_system_frame_wrench gives the wrench across one.
 * f (N) and n (N m, about the joint frame's origin) are expressed in the
 * axes of the child's joint frame (the body frame of `joint`), like
 * Pinocchio's data.f but in the joint frame, at the configuration the step
 * evaluated its forces at: its start q_prev (the wrench is an average over
 * the step, the frame is that of the step's start; the current q differs by
 * dt u). Either output may be NULL.
 * Method: the recursive Newton-Euler backward pass (Featherstone, Rigid Body
 * Dynamics Algorithms, 2008, Table 5.1) at the step's start state with the
 * step's acceleration du = (u+ - u)/dt and, as external forces, gravity, the
 * contact forces of the step (the impulses of tl_world_contact / dt, at
 * their points), the external forces of tl_system_add_external_* and the loop
 * constraints', so that for an Euler system it is consistent with the
 * semi-implicit step to rounding: the projection on the joint's motion
 * subspace equals the generalized force the step applied at that joint (PD
 * at the end-of-step state, springs, damping, friction and limit impulses /
 * dt) minus the reflected rotor inertia's torque (rotor inertia) du, which
 * stays in the actuator. For an RK4 system (no contacts) it is the same
 * formula, consistent with the RK4 step to O(dt). Computed on request (the
 * step pays nothing for it), O(nbody + contacts); allocates nothing.
 * Ask right after the step (tl_world_step or tl_world_integrate2); between
 * tl_world_integrate1 and tl_world_integrate2 the world's contacts are the
 * coming step's. Errors: TL_ERR_ARGUMENT for a bad joint index; TL_ERR_INVALID
 * before the first step, or when q or the time step were changed since the
 * last step (Euler systems: q must equal q_prev (+) dt u bit for bit);
 * TL_ERR_UNSUPPORTED on an engine that cannot tell them (plugins: ODE,
 * MuJoCo) and when the last step's external forces came as one generalized
 * force without their points (restored from a snapshot). */
tl_status tl_system_joint_wrench(tl_system *sys, int joint, double f[3], double n[3], tl_error *err);
/* Every joint's wrench at once (one pass): out (n = 6 nbody doubles) holds
 * joint b's [f (3), n (3)] at out[6 b], as tl_system_joint_wrench. */
tl_status tl_system_joint_wrenches(tl_system *sys, double *out, int n, tl_error *err);
/* The wrench across frame `frame` (tl_system_frame_index) over the last
 * step, as tl_system_joint_wrench: f (N) and n (N m, about the frame's
 * origin) in the frame's axes at the step's start. For the frame of a fixed
 * URDF joint inside a merged body: what the links on the parent side exerted
 * on the links beyond the joint (the child link and everything fixed to it,
 * with the bodies hanging from them), i.e. the links' own inertial and
 * gravity forces (each link's URDF inertial at the body's motion), plus the
 * wrenches of the movable joints they carry, less the contact forces on
 * their geoms (Newton-Euler of that part: Featherstone 2008, sec. 5.3). The
 * external forces of tl_system_add_external_* and loop constraints name a
 * body, not a link: if any acted on that body in the last step,
 * TL_ERR_UNSUPPORTED. For any other frame (a movable joint's, the root's,
 * a user frame): the wrench of its body's joint, moved to the frame's origin
 * and axes. Errors as tl_system_joint_wrench; TL_ERR_ARGUMENT for a bad
 * frame index. */
tl_status tl_system_frame_wrench(tl_system *sys, int frame, double f[3], double n[3], tl_error *err);

/* ---- external forces: applied during the next step only (RaiSim), or cleared ---- */
/* Force f (N, world) at the world point `point` (m) fixed to body `body`;
 * point NULL: at the body's COM. */
tl_status tl_system_add_external_force(tl_system *sys, int body, const double f[3],
                                       const double point[3], tl_error *err);
/* Force f (N, world) at the point `point_body` given in body `body`'s frame (m). */
tl_status tl_system_add_external_force_body_point(tl_system *sys, int body, const double f[3],
                                                  const double point_body[3], tl_error *err);
/* Pure torque (N m, world) on body `body`. */
tl_status tl_system_add_external_torque(tl_system *sys, int body, const double torque[3],
                                        tl_error *err);
void tl_system_clear_external_forces(tl_system *sys);

/* ---- run-time model changes (dynamics randomization) ----
 * Each call validates, applies, recomputes what depends on the value (merged
 * body inertias, total mass, caches: RaiSim's updateMassInfo is built in)
 * and refuses a change that would make M singular at the current state; on
 * any error nothing is changed. */
/* Inertial parameters of URDF link `link` (fixed links included): mass (kg),
 * COM (m) in the link frame, inertia about the COM in link-frame axes
 * (kg m^2, row-major). */
tl_status tl_system_link_inertial(const tl_system *sys, const char *link, double *mass, double com[3],
                                  double inertia[9], tl_error *err);
tl_status tl_system_set_link_inertial(tl_system *sys, const char *link, double mass,
                                      const double com[3], const double inertia[9], tl_error *err);
/* Placement of movable joint `body`'s frame in its parent body frame
 * (pos m, R row-major or NULL to keep), and its axis (revolute, prismatic,
 * universal's first axis; normalised). */
tl_status tl_system_set_joint_placement(tl_system *sys, int body, const double pos[3], const double R[9],
                                        tl_error *err);
tl_status tl_system_set_joint_axis(tl_system *sys, int body, const double axis[3], tl_error *err);
/* Per-DOF passive parameters (>= 0): reflected rotor inertia (kg m^2 or kg),
 * viscous damping, Coulomb friction (N m or N), spring stiffness and rest
 * position (spring_mount). */
tl_status tl_system_set_rotor_inertia(tl_system *sys, int dof, double value, tl_error *err);
tl_status tl_system_set_joint_damping(tl_system *sys, int dof, double value, tl_error *err);
tl_status tl_system_set_joint_friction(tl_system *sys, int dof, double value, tl_error *err);
tl_status tl_system_set_joint_spring(tl_system *sys, int dof, double stiffness, double mount, tl_error *err);
/* Rest orientation (quaternion w x y z, normalised) of the spring of
 * spherical joint `body`; its stiffness is set per DOF as above (the mount
 * argument there is ignored for spherical joints). */
tl_status tl_system_set_spherical_spring_mount(tl_system *sys, int body, const double quat[4], tl_error *err);
/* Position limits (+-INFINITY: none; 1-DOF joints) and actuation limit
 * (effort > 0, INFINITY: none; any joint DOF, per axis for spherical and
 * universal joints) of DOF `dof`. */
tl_status tl_system_set_joint_limits(tl_system *sys, int dof, double lower, double upper, double effort,
                                     tl_error *err);
/* Velocity limit of DOF `dof` (rad/s or m/s, > 0, INFINITY: none; URDF
 * <limit velocity>), enforced when the world's velocity limits are on
 * (tl_world_set_velocity_limits). */
tl_status tl_system_set_joint_velocity_limit(tl_system *sys, int dof, double velocity, tl_error *err);

/* ---- collision properties ---- */
/* Material name of geom `geom` (see tl_world_set_material_pair). */
tl_status tl_system_set_geom_material(tl_system *sys, int geom, const char *material, tl_error *err);
/* Coulomb friction coefficient of geom `geom` (used without a material pair). */
tl_status tl_system_set_geom_friction(tl_system *sys, int geom, double mu, tl_error *err);
/* ODE-style filter: geoms a and b collide iff (group_a & mask_b) && (group_b & mask_a). */
tl_status tl_system_set_collision_filter(tl_system *sys, int geom, unsigned group, unsigned mask,
                                         tl_error *err);
/* Collide geoms on different bodies of this system (never a body with its
 * parent). Off by default. */
void tl_system_set_self_collision(tl_system *sys, int on);

/* Deprecated: the name before issue 22 (one prefix per header: tl_system_*). */
#define tl_sparse_jacobian_velocity tl_system_sparse_jacobian_velocity

#ifdef __cplusplus
}
#endif
#endif
