/* Analytic derivatives of the recursive Newton-Euler algorithm (and through
 * it of forward dynamics) with respect to q (in the tangent space of
 * tl_model_integrate) and u, and the configuration-space calculus
 * q (+) v / q1 (-) q0 with its Jacobians.
 *
 * Sources: J. Carpentier, N. Mansard, "Analytical Derivatives of Rigid Body
 * Dynamics Algorithms", RSS 2018 (the world-frame recursion, as Pinocchio's
 * computeRNEADerivatives); R. Featherstone, Rigid Body Dynamics Algorithms,
 * 2008 (spatial algebra, sec. 2; RNEA, Table 5.1). Lie-group Jacobians of
 * SO(3): J. Sola, J. Deray, D. Atchuthan, "A micro Lie theory for state
 * estimation in robotics", 2018, eqs. 143-146 (left Jacobian).
 *
 * Derivation (world axes about the world origin, as the rest of
 * src/dynamics). A tangent perturbation e of DOF l moves every body of l's
 * subtree rigidly by the twist S_l e (S_l = cdof of l; for a floating base
 * and a ball joint this is exactly what q (+) e does, tl_dyn_integrate_q),
 * and moves the subspaces S_k of the DOFs k that l "moves": the DOFs of the
 * descendant joints, and in a serial joint (universal, planar, the floating
 * base's rotations after its translations) the joint's later DOFs. Every
 * world quantity X carried by the moved part changes rigidly (S_l x X) plus
 * an intrinsic part. With w_l, alpha_l the velocity and acceleration (gravity
 * included as -g at the root) of the part not moved by l (the parent plus the
 * joint's DOFs l does not move) and for each body i the spatial inertia I_i,
 * velocity v_i and momentum h_i = I_i v_i:
 *   intrinsic dv_i/dq_l = -(S_l x w_l)
 *   intrinsic da_i/dq_l = -(S_l x alpha_l) - (S_l x w_l) x (v_i - w_l)
 *   d f_i / dq_l        = S_l x* f_i + I_i psi_l + D_i zeta_l
 *   d f_i / du_l        = I_i nu_l + D_i S_l
 * with psi_l = alpha_l x S_l + (S_l x w_l) x w_l, zeta_l = w_l x S_l,
 * nu_l = dS_l/dt + w_l x S_l and D_i = [v_i x*] I_i - I_i [v_i x] + [h_i x^]
 * ([h x^] y = y x* h). Summed over subtrees (composite Ic_B, D_B; F_B the
 * subtree force), and since (S_l x S_k) . F + S_k . (S_l x* F) = 0:
 *   l moves k:            dtau_k/dq_l = S_k . (Ic_B psi_l + D_B zeta_l), B = body of k
 *   k on l's body or above, not moved by l:
 *                         dtau_k/dq_l = S_k . (Ic_B psi_l + D_B zeta_l + S_l x* F_B), B = body of l
 *   k, l on one path:     dtau_k/du_l = S_k . (Ic_B nu_l + D_B S_l), B = the deeper body
 * and 0 for DOFs on different branches. D_B is kept as the composite
 * inertia rate Idot_B = sum ([v_i x*] I_i - I_i [v_i x]) (a packed inertia
 * with zero mass, spi_dot) plus the composite momentum (the antisymmetric
 * [h x^] part), so every product is a packed-inertia product. This is
 * Pinocchio's recursion (dAdq = a_parent x S + v_parent x (v_parent x S),
 * dVdq = v_parent x S for a 1-DOF joint) with the multi-DOF joints written
 * out. Cost O(nbody + sum over DOFs of the depth). */
#include <math.h>
#include <string.h>

#include "dynamics/dynamics.h"
#include "dynamics/joint_space.h"
#include "math/tl_cpu.h"
#include "math/tl_math.h"
#include "math/tl_vec2.h"

/* d/dt of the spatial inertia I = [m, h, I_O] (about the world origin) of
 * a body moving with the spatial velocity v = (w, nu):
 * Idot = [v x*] I - I [v x], again a packed inertia (the set is a linear
 * space): mass 0, first moment hdot = w x h + m nu, rotational part
 * [w] I_O - I_O [w] - (h nu^T + nu h^T) + 2 (nu . h) 1
 * (from [a][b] + [b][a] = b a^T + a b^T - 2 (a . b) 1). */
static void spi_dot(double Id[10], const double *I, const double v[6]) {
  const double m = I[0], *h = I + 1, w0 = v[0], w1 = v[1], w2 = v[2], *nu = v + 3;
  const double Ixx = I[4], Ixy = I[5], Ixz = I[6], Iyy = I[7], Iyz = I[8], Izz = I[9];
  /* P = [w] I_O (rows: w x column) */
  const double P00 = w1 * Ixz - w2 * Ixy, P01 = w1 * Iyz - w2 * Iyy, P02 = w1 * Izz - w2 * Iyz;
  const double P10 = w2 * Ixx - w0 * Ixz, P11 = w2 * Ixy - w0 * Iyz, P12 = w2 * Ixz - w0 * Izz;
  const double P20 = w0 * Ixy - w1 * Ixx, P21 = w0 * Iyy - w1 * Ixy, P22 = w0 * Iyz - w1 * Ixz;
  const double nh2 = 2.0 * (nu[0] * h[0] + nu[1] * h[1] + nu[2] * h[2]);
  Id[0] = 0.0;
  Id[1] = w1 * h[2] - w2 * h[1] + m * nu[0];
  Id[2] = w2 * h[0] - w0 * h[2] + m * nu[1];
  Id[3] = w0 * h[1] - w1 * h[0] + m * nu[2];
  Id[4] = 2.0 * P00 - 2.0 * h[0] * nu[0] + nh2;
  Id[5] = P01 + P10 - (h[0] * nu[1] + nu[0] * h[1]);
  Id[6] = P02 + P20 - (h[0] * nu[2] + nu[0] * h[2]);
  Id[7] = 2.0 * P11 - 2.0 * h[1] * nu[1] + nh2;
  Id[8] = P12 + P21 - (h[1] * nu[2] + nu[1] * h[2]);
  Id[9] = 2.0 * P22 - 2.0 * h[2] * nu[2] + nh2;
}

#if TL_LANES == 2
/* spi_dot of two bodies side by side (the same operations per lane). */
static inline void lanes_spi_dot(tl_lanes Id[10], const tl_lanes *I, const tl_lanes v[6]) {
  const tl_lanes m = I[0], *h = I + 1, w0 = v[0], w1 = v[1], w2 = v[2], *nu = v + 3;
  const tl_lanes Ixx = I[4], Ixy = I[5], Ixz = I[6], Iyy = I[7], Iyz = I[8], Izz = I[9];
  const tl_lanes P00 = w1 * Ixz - w2 * Ixy, P01 = w1 * Iyz - w2 * Iyy, P02 = w1 * Izz - w2 * Iyz;
  const tl_lanes P10 = w2 * Ixx - w0 * Ixz, P11 = w2 * Ixy - w0 * Iyz, P12 = w2 * Ixz - w0 * Izz;
  const tl_lanes P20 = w0 * Ixy - w1 * Ixx, P21 = w0 * Iyy - w1 * Ixy, P22 = w0 * Iyz - w1 * Ixz;
  const tl_lanes two = {2.0, 2.0};
  const tl_lanes nh2 = two * (nu[0] * h[0] + nu[1] * h[1] + nu[2] * h[2]);
  Id[0] = (tl_lanes){0.0, 0.0};
  Id[1] = w1 * h[2] - w2 * h[1] + m * nu[0];
  Id[2] = w2 * h[0] - w0 * h[2] + m * nu[1];
  Id[3] = w0 * h[1] - w1 * h[0] + m * nu[2];
  Id[4] = two * P00 - two * h[0] * nu[0] + nh2;
  Id[5] = P01 + P10 - (h[0] * nu[1] + nu[0] * h[1]);
  Id[6] = P02 + P20 - (h[0] * nu[2] + nu[0] * h[2]);
  Id[7] = two * P11 - two * h[1] * nu[1] + nh2;
  Id[8] = P12 + P21 - (h[1] * nu[2] + nu[1] * h[2]);
  Id[9] = two * P22 - two * h[2] * nu[2] + nh2;
}
#endif

/* Within one joint, does a perturbation of its DOF l move the subspace of
 * its later DOF k (l < k)? Serial joints (universal, planar) yes; the
 * floating base's translations move its rotation columns (S = (e, p x e));
 * a ball joint's (and the base's) rotation axes are fixed in the parent
 * (world) frame. */
static int moves_mate(const tl_model *m, int b, int l, int k) {
  switch (m->jnt_type[b]) {
    case TL_JOINT_UNIVERSAL:
    case TL_JOINT_PLANAR: return l < k;
    case TL_JOINT_FLOATING: return l - m->v_adr[b] < 3 && k - m->v_adr[b] >= 3;
    default: return 0;
  }
}

/* a . b over 12 doubles as four interleaved sums, lane j = (a_j b_j +
 * a_(j+4) b_(j+4)) + a_(j+8) b_(j+8), then (lane 0 + lane 2) + (lane 1 +
 * lane 3): one 4-lane vector (ymm in the AVX copy of the recursion, two SSE2
 * halves in the baseline), or the same expression in scalars: the same
 * bits in every build. */
#if TL_LANES == 2
typedef double drv_v4 __attribute__((vector_size(32)));
typedef drv_v4 drv_v4u __attribute__((aligned(8)));
static inline double dot12(const double a[12], const double b[12]) {
  const drv_v4u *x = (const drv_v4u *)a, *y = (const drv_v4u *)b;
  const drv_v4 v = (x[0] * y[0] + x[1] * y[1]) + x[2] * y[2];
  return (v[0] + v[2]) + (v[1] + v[3]);
}
/* a . b over 6 doubles: lanes (a_j b_j, j < 4) and (a_4 b_4, a_5 b_5), then
 * ((l0 + l2) + a_4 b_4) + ((l1 + l3) + a_5 b_5). */
static inline double dot6(const double a[6], const double b[6]) {
  const drv_v4 v = *(const drv_v4u *)a * *(const drv_v4u *)b;
  const tl_lanes w = tl_lanes_set(a[4], a[5]) * tl_lanes_set(b[4], b[5]);
  const tl_lanes h = (tl_lanes){v[0], v[1]} + (tl_lanes){v[2], v[3]} + w;
  return h[0] + h[1];
}
/* dot12(a, b) and dot12(a, c) together (the same expressions; the two
 * final reductions share their shuffles). */
static inline void dot12x2(const double a[12], const double b[12], const double c[12], double *ab, double *ac) {
  const drv_v4u *x = (const drv_v4u *)a, *y = (const drv_v4u *)b, *z = (const drv_v4u *)c;
  const drv_v4 v = (x[0] * y[0] + x[1] * y[1]) + x[2] * y[2], w = (x[0] * z[0] + x[1] * z[1]) + x[2] * z[2];
  const tl_lanes tv = (tl_lanes){v[0], v[1]} + (tl_lanes){v[2], v[3]},
                 tw = (tl_lanes){w[0], w[1]} + (tl_lanes){w[2], w[3]};
  const tl_lanes h = (tl_lanes){tv[0], tw[0]} + (tl_lanes){tv[1], tw[1]};
  *ab = h[0], *ac = h[1];
}
/* dot6(a, b) and dot6(a, c) together. */
static inline void dot6x2(const double a[6], const double b[6], const double c[6], double *ab, double *ac) {
  const drv_v4 v = *(const drv_v4u *)a * *(const drv_v4u *)b, w = *(const drv_v4u *)a * *(const drv_v4u *)c;
  const tl_lanes a45 = tl_lanes_set(a[4], a[5]);
  const tl_lanes hv = (tl_lanes){v[0], v[1]} + (tl_lanes){v[2], v[3]} + a45 * tl_lanes_set(b[4], b[5]),
                 hw = (tl_lanes){w[0], w[1]} + (tl_lanes){w[2], w[3]} + a45 * tl_lanes_set(c[4], c[5]);
  const tl_lanes h = (tl_lanes){hv[0], hw[0]} + (tl_lanes){hv[1], hw[1]};
  *ab = h[0], *ac = h[1];
}
#else
static inline double dot12(const double a[12], const double b[12]);
static inline double dot6(const double a[6], const double b[6]);
static inline void dot12x2(const double a[12], const double b[12], const double c[12], double *ab, double *ac) {
  *ab = dot12(a, b), *ac = dot12(a, c);
}
static inline void dot6x2(const double a[6], const double b[6], const double c[6], double *ab, double *ac) {
  *ab = dot6(a, b), *ac = dot6(a, c);
}
static inline double dot12(const double a[12], const double b[12]) {
  double v[4];
  for (int j = 0; j < 4; j++) v[j] = (a[j] * b[j] + a[j + 4] * b[j + 4]) + a[j + 8] * b[j + 8];
  return (v[0] + v[2]) + (v[1] + v[3]);
}
static inline double dot6(const double a[6], const double b[6]) {
  const double h0 = (a[0] * b[0] + a[2] * b[2]) + a[4] * b[4], h1 = (a[1] * b[1] + a[3] * b[3]) + a[5] * b[5];
  return h0 + h1;
}
#endif

/* The per-body composites are kept in drv_I as 38 doubles per body: the
 * composite inertia Ic (10), the composite inertia rate Idot (10), the
 * composite momentum hB = sum I_i v_i (6), then (when RNEA's du = 0 pass is
 * reused) the du part of the body's acceleration (6) and of its subtree
 * force (6). Then
 * D_B y = Idot_B y + y x* hB and D_B^T y = Idot_B y - y x* hB ([h x^] is
 * antisymmetric, [v x*] I - I [v x] symmetric). Per DOF l, drv_vec holds
 * (psi, zeta | nu, S | G | H | r), 6 each (r: 12): the q entry of a DOF k
 * that l moves is r_k . (psi_l, zeta_l), the u entry r_k . (nu_l, S_l), with
 * r_k = (Ic S_k, D^T S_k) of k's body. */
#define CB 38
#define DV 48 /* doubles per DOF in drv_vec */

/* The per-DOF vectors of rnea_derivatives (psi, zeta, nu, S, G, H, r) of DOF
 * l (body b) for the velocity w and acceleration alpha of the part not moved
 * by l. */
static void dof_vectors(const tl_sysdata *d, const double *cb, double *vec, int l, int b, const double w[6],
                        const double al[6]) {
  const double *c = cb + CB * b, *IB = c, *IdB = c + 10, *hB = c + 20, *FB = d->cfrc + 6 * b;
  const double *S = d->cdof, *Sd = d->cdof_dot;
  double t[6], t2[6];
  const double *Sl = S + 6 * l;
  double *psi = vec + DV * l, *zeta = psi + 6, *nu = psi + 12, *Sc = psi + 18, *G = psi + 24,
         *H = psi + 30, *r = psi + 36;
  /* psi = alpha x S + (S x w) x w, zeta = w x S, nu = dS/dt + w x S */
  tl_sp_cross_motion(psi, al, Sl);
  tl_sp_cross_motion(zeta, w, Sl);
  tl_sp_cross_motion(t2, zeta, w);
  for (int i = 0; i < 6; i++) psi[i] -= t2[i], nu[i] = zeta[i] + Sd[6 * l + i], Sc[i] = Sl[i];
  /* r = (Ic S, D^T S) with D^T S = Idot S - S x* hB; H = Ic nu + D S = Ic nu + Idot S + S x* hB;
   * G = Ic psi + D zeta + S x* F */
  double IdS[6], Sh[6];
  tl_spi_mulv(r, IB, Sl);
  tl_spi_mulv(IdS, IdB, Sl);
  tl_sp_cross_force(Sh, Sl, hB);
  for (int i = 0; i < 6; i++) r[6 + i] = IdS[i] - Sh[i];
  tl_spi_mulv(H, IB, nu);
  for (int i = 0; i < 6; i++) H[i] += IdS[i] + Sh[i];
  tl_spi_mulv(G, IB, psi);
  tl_spi_mulv(t, IdB, zeta);
  tl_sp_cross_force(t2, zeta, hB);
  for (int i = 0; i < 6; i++) G[i] += t[i] + t2[i];
  tl_sp_cross_force(t2, Sl, FB);
  for (int i = 0; i < 6; i++) G[i] += t2[i];
}

#if TL_LANES == 2
/* r = v x m for motion vectors, lane-wise (as tl_sp_cross_motion). */
static inline void lanes_cross_motion(tl_lanes r[6], const tl_lanes v[6], const tl_lanes m[6]) {
  tl_lanes a[3], b[3];
  tl_lanes_cross(r, v, m);
  tl_lanes_cross(a, v, m + 3);
  tl_lanes_cross(b, v + 3, m);
  r[3] = a[0] + b[0], r[4] = a[1] + b[1], r[5] = a[2] + b[2];
}

/* The per-DOF vectors of tl_dyn_rnea_derivatives (psi, zeta, nu, S, G, H, r)
 * of two DOFs l0 (body b0) and l1 (body b1) whose whole joint is not moved
 * by them (w = the body's velocity, alpha its acceleration: 1-DOF joints
 * and a floating base's rotations), side by side in the two lanes: the same
 * operations in the same order as the scalar code below, so the same values
 * bit for bit, at about half the instructions. */
static void dof_vectors_pair(const tl_sysdata *d, const double *cb, double *vec, int l0, int b0, int l1,
                             int b1) {
  tl_lanes S[6], Sd[6], w[6], al[6], IB[10], IdB[10], hB[6], FB[6];
  const double *c0 = cb + CB * b0, *c1 = cb + CB * b1;
  tl_lanes_load(S, d->cdof + 6 * l0, d->cdof + 6 * l1, 6);
  tl_lanes_load(Sd, d->cdof_dot + 6 * l0, d->cdof_dot + 6 * l1, 6);
  tl_lanes_load(w, d->cvel + 6 * b0, d->cvel + 6 * b1, 6);
  tl_lanes_load(al, d->cacc + 6 * b0, d->cacc + 6 * b1, 6);
  tl_lanes_load(IB, c0, c1, 10);
  tl_lanes_load(IdB, c0 + 10, c1 + 10, 10);
  tl_lanes_load(hB, c0 + 20, c1 + 20, 6);
  tl_lanes_load(FB, d->cfrc + 6 * b0, d->cfrc + 6 * b1, 6);
  tl_lanes psi[6], zeta[6], nu[6], t[6], t2[6], IdS[6], Sh[6], r[12], H[6], G[6];
  lanes_cross_motion(psi, al, S);
  lanes_cross_motion(zeta, w, S);
  lanes_cross_motion(t2, zeta, w);
  for (int i = 0; i < 6; i++) psi[i] = psi[i] - t2[i], nu[i] = zeta[i] + Sd[i];
  tl_lanes_spi_mulv(r, IB, S);
  tl_lanes_spi_mulv(IdS, IdB, S);
  tl_lanes_cross_force(Sh, S, hB);
  for (int i = 0; i < 6; i++) r[6 + i] = IdS[i] - Sh[i];
  tl_lanes_spi_mulv(H, IB, nu);
  for (int i = 0; i < 6; i++) H[i] = H[i] + (IdS[i] + Sh[i]);
  tl_lanes_spi_mulv(G, IB, psi);
  tl_lanes_spi_mulv(t, IdB, zeta);
  tl_lanes_cross_force(t2, zeta, hB);
  for (int i = 0; i < 6; i++) G[i] = G[i] + (t[i] + t2[i]);
  tl_lanes_cross_force(t2, S, FB);
  for (int i = 0; i < 6; i++) G[i] = G[i] + t2[i];
  double *p0 = vec + DV * l0, *p1 = vec + DV * l1;
  tl_lanes_store(p0, p1, psi, 6);
  tl_lanes_store(p0 + 6, p1 + 6, zeta, 6);
  tl_lanes_store(p0 + 12, p1 + 12, nu, 6);
  tl_lanes_store(p0 + 18, p1 + 18, S, 6);
  tl_lanes_store(p0 + 24, p1 + 24, G, 6);
  tl_lanes_store(p0 + 30, p1 + 30, H, 6);
  tl_lanes_store(p0 + 36, p1 + 36, r, 12);
}
#endif

static inline void rnea_derivatives_body(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq,
                                         double *dtau_du, int after_h, int clear) {
  const tl_model *m = d->m;
  const int nb = m->nbody, nv = m->nv;
  const double *S = d->cdof, *Sd = d->cdof_dot, *u = d->u;
  double *cb = d->drv_I, *vec = d->drv_vec;
  /* accelerations (gravity as -g at the root) and subtree forces F_B in cfrc: a whole RNEA, or
   * (after_h) its du = 0 pass already there plus the du parts below */
  if (!after_h) tl_dyn_rnea(d, g, du, 1, NULL);
  /* per body: I, Idot = spi_dot(I, v), I v (two bodies at a time where tl_lanes has two lanes); a fixed
   * base's root (no DOF) serves no DOF: its composites are not formed */
  const int b_first = tl_dyn_first_moving_body(m);
  int b0 = b_first;
#if TL_LANES == 2
  for (; b0 + 1 < nb; b0 += 2) {
    double *c0 = cb + CB * b0, *c1 = c0 + CB;
    const double *I0 = d->cinert + TL_SPI_SIZE * b0, *v0 = d->cvel + 6 * b0;
    tl_lanes I[10], v[6], Id[10], hv[6];
    tl_lanes_load(I, I0, I0 + TL_SPI_SIZE, 10);
    tl_lanes_load(v, v0, v0 + 6, 6);
    lanes_spi_dot(Id, I, v);
    tl_lanes_spi_mulv(hv, I, v);
    memcpy(c0, I0, TL_SPI_SIZE * sizeof(double));
    memcpy(c1, I0 + TL_SPI_SIZE, TL_SPI_SIZE * sizeof(double));
    tl_lanes_store(c0 + 10, c1 + 10, Id, 10);
    tl_lanes_store(c0 + 20, c1 + 20, hv, 6);
  }
#endif
  for (; b0 < nb; b0++) {
    double *c = cb + CB * b0;
    const double *I = d->cinert + TL_SPI_SIZE * b0, *v = d->cvel + 6 * b0;
    memcpy(c, I, TL_SPI_SIZE * sizeof(double));
    spi_dot(c + 10, I, v);
    tl_spi_mulv(c + 20, I, v);
  }
  if (after_h) {
    /* a_du of b (c + 26) = the parent's + sum of S_k du_k, added to cacc; then I_b a_du (c + 32) */
    for (int b = 0; b < nb; b++) {
      double *ad = cb + CB * b + 26, *acc = d->cacc + 6 * b;
      const int v0 = m->v_adr[b], nj = m->jnt_nv[b];
      if (b > 0) {
        memcpy(ad, cb + CB * m->parent[b] + 26, 6 * sizeof(double));
        for (int k = v0; k < v0 + nj; k++)
          for (int i = 0; i < 6; i++) ad[i] += S[6 * k + i] * du[k];
      } else if (m->jnt_type[0] == TL_JOINT_FLOATING) { /* (dw, dv + p x dw), as rnea.c */
        double pdw[3];
        tl_v3_cross(pdw, d->xpos, du + 3);
        for (int i = 0; i < 3; i++) ad[i] = du[3 + i], ad[3 + i] = du[i] + pdw[i];
      } else {
        memset(ad, 0, 6 * sizeof(double));
        for (int k = 0; k < nj; k++)
          for (int i = 0; i < 6; i++) ad[i] += S[6 * k + i] * du[k];
      }
      for (int i = 0; i < 6; i++) acc[i] += ad[i];
    }
    b0 = b_first;
    if (b_first) memset(cb + 32, 0, 6 * sizeof(double)); /* the fixed root's a_du = 0 */
#if TL_LANES == 2
    for (; b0 + 1 < nb; b0 += 2) {
      double *c0 = cb + CB * b0, *c1 = c0 + CB;
      tl_lanes I[10], a[6], f[6];
      tl_lanes_load(I, c0, c1, 10);
      tl_lanes_load(a, c0 + 26, c1 + 26, 6);
      tl_lanes_spi_mulv(f, I, a);
      tl_lanes_store(c0 + 32, c1 + 32, f, 6);
    }
#endif
    for (; b0 < nb; b0++) tl_spi_mulv(cb + CB * b0 + 32, cb + CB * b0, cb + CB * b0 + 26);
  }
  for (int b = nb - 1; b > 0; b--) {
    double *cp = cb + CB * m->parent[b];
    const double *c = cb + CB * b;
    if (m->parent[b] >= b_first)
      for (int i = 0; i < 26; i++) cp[i] += c[i];
    if (after_h)
      for (int i = 32; i < 38; i++) cp[i] += c[i];
  }
  if (after_h)
    for (int b = 0; b < nb; b++)
      for (int i = 0; i < 6; i++) d->cfrc[6 * b + i] += cb[CB * b + 32 + i];
  /* per DOF l: psi, zeta, nu, S, G (q column seen from above), H (u column) */
  const int kf = m->jnt_type[0] == TL_JOINT_FLOATING ? 6 : 0;
#if TL_LANES == 2
  int pend_l = -1, pend_b = -1; /* a DOF waiting for a partner in dof_vectors_pair */
#endif
  for (int b = 0; b < nb; b++) {
    int v0 = m->v_adr[b], nj = m->jnt_nv[b];
    if (nj == 0) continue;
    double vp[6], ap[6]; /* the parent's velocity and acceleration, for joints of several DOFs */
    if (nj > 1) {
      memset(vp, 0, sizeof vp);
      memset(ap, 0, sizeof ap);
      if (b > 0) {
        memcpy(vp, d->cvel + 6 * m->parent[b], sizeof vp);
        memcpy(ap, d->cacc + 6 * m->parent[b], sizeof ap);
      } else if (g) {
        tl_v3_scale(ap + 3, g, -1.0);
      }
    }
    for (int l = v0; l < v0 + nj; l++) {
      double w[6], al[6];
      const int base_rot = kf && b == 0 && l >= 3, base_trans = kf && b == 0 && l < 3;
      /* a ball joint's axes are fixed in the parent: none of its DOFs moves another, so w and alpha
       * are the body's own velocity and acceleration (to rounding: cvel, cacc sum the same terms) */
      const int whole = nj == 1 || base_rot || m->jnt_type[b] == TL_JOINT_SPHERICAL;
#if TL_LANES == 2
      if (whole) { /* two such DOFs at a time */
        if (pend_l < 0) {
          pend_l = l, pend_b = b;
        } else {
          dof_vectors_pair(d, cb, vec, pend_l, pend_b, l, b);
          pend_l = -1;
        }
        continue;
      }
#endif
      if (whole) { /* the whole joint is not moved by l */
        memcpy(w, d->cvel + 6 * b, sizeof w);
        memcpy(al, d->cacc + 6 * b, sizeof al);
      } else if (base_trans) { /* no angular part: psi = zeta = nu = 0 exactly */
        memset(w, 0, sizeof w);
        memset(al, 0, sizeof al);
      } else {
        memcpy(w, vp, sizeof w);
        memcpy(al, ap, sizeof al);
        for (int k = v0; k < v0 + nj; k++) {
          if (k > l && moves_mate(m, b, l, k)) continue;
          double duk = du ? du[k] : 0.0;
          for (int i = 0; i < 6; i++) {
            w[i] += S[6 * k + i] * u[k];
            al[i] += S[6 * k + i] * duk + Sd[6 * k + i] * u[k];
          }
        }
      }
      dof_vectors(d, cb, vec, l, b, w, al);
    }
  }
#if TL_LANES == 2
  if (pend_l >= 0) /* the last one alone */
    dof_vectors(d, cb, vec, pend_l, pend_b, d->cvel + 6 * pend_b, d->cacc + 6 * pend_b);
#endif
  if (clear) {
    memset(dtau_dq, 0, (size_t)nv * nv * sizeof(double));
    memset(dtau_du, 0, (size_t)nv * nv * sizeof(double));
  }
  /* A floating base's DOFs (0..5) above a DOF k >= 6, in closed form: its
   * translations have psi = zeta = nu = 0 exactly (their partial velocity and
   * acceleration have no angular part, dS/dt = 0), so (k, l) has no q entry
   * and the u entry r . (0, S_l) = r[9 + l]; the rows l of the base read a
   * force X as S_l . X = X_lin (translations) and (X_ang + X_lin x p)
   * (rotations about the base origin p), as crba.c and rnea.c do. */
  const double *p0 = d->xpos;
  for (int b = 0; b < nb; b++) {
    int v0 = m->v_adr[b], nj = m->jnt_nv[b];
    for (int k = v0; k < v0 + nj; k++) {
      const double *Sk = S + 6 * k, *pk = vec + DV * k, *Gk = pk + 24, *Hk = pk + 30, *r = pk + 36;
      double *rowq = dtau_dq + (size_t)k * nv, *rowu = dtau_du + (size_t)k * nv;
      rowq[k] = dot6(Sk, Gk);
      rowu[k] = dot6(Sk, Hk);
      int l = m->dof_parent[k];
      for (; l >= (k >= kf ? kf : 0); l = m->dof_parent[l]) {
        const double *pl = vec + DV * l, *Sl = pl + 18;
        /* (k, l): l above k */
        if (l < v0 || moves_mate(m, b, l, k)) {
          dot12x2(r, pl, pl + 12, rowq + l, rowu + l);
        } else {
          rowq[l] = dot6(Sk, pl + 24);
          rowu[l] = dot12(r, pl + 12);
        }
        /* (l, k): k below l, never moves l */
        dot6x2(Sl, Gk, Hk, dtau_dq + (size_t)l * nv + k, dtau_du + (size_t)l * nv + k);
      }
      if (l < 0) continue;
      /* l == 5: the floating base, k >= 6 below it */
      double gp[3], hp[3];
      tl_v3_cross(gp, Gk + 3, p0);
      tl_v3_cross(hp, Hk + 3, p0);
      for (int j = 0; j < 3; j++) {
        dot12x2(r, vec + DV * (3 + j), vec + DV * (3 + j) + 12, rowq + 3 + j, rowu + 3 + j);
        rowu[j] = r[9 + j];
        dtau_dq[(size_t)j * nv + k] = Gk[3 + j];
        dtau_du[(size_t)j * nv + k] = Hk[3 + j];
        dtau_dq[(size_t)(3 + j) * nv + k] = Gk[j] + gp[j];
        dtau_du[(size_t)(3 + j) * nv + k] = Hk[j] + hp[j];
      }
    }
  }
}

static void rnea_derivatives_base(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq,
                                  double *dtau_du, int after_h, int clear) {
  rnea_derivatives_body(d, g, du, dtau_dq, dtau_du, after_h, clear);
}
#ifdef TL_CPU_X86_AVX
/* The recursion once more under target("avx") (VEX encoding: three-operand
 * forms, fewer register moves; the same operations, nothing fused, so the
 * same bits), every call in it inlined (flatten) so that its helpers are
 * compiled for AVX too; taken at run time (math/tl_cpu.h). */
__attribute__((target("avx"), flatten)) static void rnea_derivatives_avx(tl_sysdata *d, const double g[3],
                                                                        const double *du, double *dtau_dq,
                                                                        double *dtau_du, int after_h,
                                                                        int clear) {
  rnea_derivatives_body(d, g, du, dtau_dq, dtau_du, after_h, clear);
}
#endif
static void rnea_derivatives(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq, double *dtau_du,
                             int after_h, int clear) {
#ifdef TL_CPU_X86_AVX
  if (tl_cpu_lanes() >= 4) {
    rnea_derivatives_avx(d, g, du, dtau_dq, dtau_du, after_h, clear);
    return;
  }
#endif
  rnea_derivatives_base(d, g, du, dtau_dq, dtau_du, after_h, clear);
}

void tl_dyn_rnea_derivatives(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq,
                             double *dtau_du) {
  rnea_derivatives(d, g, du, dtau_dq, dtau_du, 0, 1);
}

void tl_dyn_rnea_derivatives_path(tl_sysdata *d, const double g[3], const double *du, double *dtau_dq,
                                  double *dtau_du, int after_h) {
  rnea_derivatives(d, g, du, dtau_dq, dtau_du, after_h, d->m->nv <= TL_DRV_SMALL_NV);
}

/* X <- -A X (n x n row-major; A = M^-1 dense and symmetric, n a
 * compile-time constant in each case below, so every loop unrolls): row i
 * of the result is -sum_k A[i][k] X[k], accumulated in that order. */
static inline void small_neg_mul(const double *restrict A, double *restrict X, const int n) {
  double T[TL_DRV_SMALL_NV * TL_DRV_SMALL_NV];
  memcpy(T, X, (size_t)n * n * sizeof(double));
  for (int i = 0; i < n; i++) {
    double acc[TL_DRV_SMALL_NV];
    for (int j = 0; j < n; j++) acc[j] = -A[i * n] * T[j];
    for (int k = 1; k < n; k++) {
      const double a = A[i * n + k];
      for (int j = 0; j < n; j++) acc[j] -= a * T[k * n + j];
    }
    for (int j = 0; j < n; j++) X[i * n + j] = acc[j];
  }
}

int tl_dyn_neg_mul_small(const double *Minv, double *X, double *Y, int n) {
  switch (n) {
#define CASE(N)                                                                                         \
  case N:                                                                                               \
    small_neg_mul(Minv, X, N);                                                                          \
    if (Y) small_neg_mul(Minv, Y, N);                                                                   \
    return 1;
    CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8)
#undef CASE
    default: return 0;
  }
}

/* ---------------- passive and external forces (springs, damping, world-frame forces) ---------------- */

/* The spring deflection e_s = mount (-) q of body b's joint (nv doubles),
 * as the step's spring_error (src/native/step.c): none on a floating base. */
static void spring_deflection(const tl_sysdata *d, int b, double *e) {
  const tl_model *m = d->m;
  if (m->jnt_type[b] == TL_JOINT_FLOATING) {
    memset(e, 0, 6 * sizeof(double));
    return;
  }
  const double *mount = m->jnt_type[b] == TL_JOINT_SPHERICAL ? m->jnt_spring_quat + 4 * b
                                                             : m->dof_spring_mount + m->v_adr[b];
  tl_js_error(m->jnt_type[b], m->jnt_nv[b], d->q + m->q_adr[b], mount, e);
}

void tl_dyn_passive_force(const tl_sysdata *d, const double *ext, double *tau_p) {
  const tl_model *m = d->m;
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], nj = m->jnt_nv[b], stiff = 0;
    double e[6] = {0, 0, 0, 0, 0, 0};
    for (int k = 0; k < nj; k++) stiff |= m->dof_stiffness[v0 + k] != 0;
    if (stiff) spring_deflection(d, b, e);
    for (int k = 0; k < nj; k++) {
      int v = v0 + k;
      tau_p[v] = -m->dof_damping[v] * d->u[v] + m->dof_stiffness[v] * e[k] + (ext ? ext[v] : 0.0);
    }
  }
}

void tl_dyn_passive_derivatives(const tl_sysdata *d, const double *ext_w, double scale, double *dq,
                                double *du) {
  const tl_model *m = d->m;
  const int nv = m->nv, kf = m->nbody > 0 && m->jnt_type[0] == TL_JOINT_FLOATING ? 3 : 0;
  const double *S = d->cdof;
  for (int b = 0; b < m->nbody; b++) {
    const int v0 = m->v_adr[b], nj = m->jnt_nv[b];
    int stiff = 0;
    for (int k = v0; k < v0 + nj; k++) {
      du[(size_t)k * nv + k] -= scale * m->dof_damping[k];
      stiff |= m->dof_stiffness[k] != 0;
    }
    if (!stiff || m->jnt_type[b] == TL_JOINT_FLOATING) continue;
    if (m->jnt_type[b] == TL_JOINT_SPHERICAL) {
      /* e = log(mount q^-1), q (+) x = exp(x) q: e(x) = log(exp(e) exp(-x)) = e - Jr(e)^-1 x,
       * Jr(e)^-1 = Jl(-e)^-1 */
      double e[3], me[3], Ji[9];
      spring_deflection(d, b, e);
      tl_v3_scale(me, e, -1.0);
      tl_dyn_so3_left_jacobian(Ji, me, 1);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          dq[(size_t)(v0 + i) * nv + v0 + j] -= scale * m->dof_stiffness[v0 + i] * Ji[3 * i + j];
    } else {
      for (int k = v0; k < v0 + nj; k++) dq[(size_t)k * nv + k] -= scale * m->dof_stiffness[k];
    }
  }
  if (!ext_w) return;
  for (int b = 0; b < m->nbody; b++) {
    const double *F = ext_w + 15 * b, *P = F + 6;
    int any = 0;
    for (int i = 0; i < 15; i++) any |= F[i] != 0;
    if (!any || m->jnt_nv[b] == 0) continue;
    const double trP = P[0] + P[4] + P[8];
    for (int k = m->v_adr[b] + m->jnt_nv[b] - 1; k >= 0; k = m->dof_parent[k]) {
      const double *Sk = S + 6 * k;
      double *row = dq + (size_t)k * nv;
      for (int l = m->v_adr[b] + m->jnt_nv[b] - 1; l >= kf; l = m->dof_parent[l]) {
        const double *Sl = S + 6 * l, *wl = Sl, *vl = Sl + 3;
        /* the points move with the body: d tau_O = v_l x f + P w_l - tr(P) w_l */
        double dt[3], Pw[3];
        tl_v3_cross(dt, vl, F + 3);
        tl_m3_mulv(Pw, P, wl);
        for (int i = 0; i < 3; i++) dt[i] += Pw[i] - trP * wl[i];
        double val = tl_v3_dot(Sk, dt);
        /* l above k turns k's axis: d S_k = S_l x S_k */
        if (l < k && (m->dof_body[l] != m->dof_body[k] || moves_mate(m, m->dof_body[k], l, k))) {
          double X[6];
          tl_sp_cross_motion(X, Sl, Sk);
          val += tl_sp_dot(X, F);
        }
        row[l] += scale * val;
      }
    }
  }
}

/* ---------------- configuration-space calculus (public: talus/model.h) ---------------- */

#include "base/error.h"

/* Checks shared by the four calls: model, lengths, finite entries, non-zero
 * quaternions. */
static tl_status check_q(const tl_model *m, const double *q, int nq, const char *what, tl_error *err) {
  if (!q) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s must not be NULL", what);
  if (nq != m->nq)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s has length %d, expected nq = %d", what, nq,
                        m->nq);
  for (int i = 0; i < nq; i++)
    if (!isfinite(q[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s[%d] is %g: expected a finite number", what,
                          i, q[i]);
  for (int b = 0; b < m->nbody; b++) {
    int off = tl_js_quat_offset(m->jnt_type[b]);
    if (off < 0) continue;
    const double *qq = q + m->q_adr[b] + off;
    if (qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3] < 1e-24)
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what,
                          "%s[%d..%d] (quaternion of joint '%s') is zero", what, (int)(qq - q),
                          (int)(qq - q) + 3, m->joint_name[b]);
  }
  return TL_OK;
}

static tl_status check_v(const tl_model *m, const double *v, int nv, const char *what, tl_error *err) {
  if (!v) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s must not be NULL", what);
  if (nv != m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s has length %d, expected nv = %d", what, nv,
                        m->nv);
  for (int i = 0; i < nv; i++)
    if (!isfinite(v[i]))
      return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, what, "%s[%d] is %g: expected a finite number", what,
                          i, v[i]);
  return TL_OK;
}

tl_status tl_model_integrate(const tl_model *m, const double *q, int nq, const double *v, int nv,
                             double *q_out, tl_error *err) {
  tl_status st;
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if ((st = check_q(m, q, nq, "q", err)) || (st = check_v(m, v, nv, "v", err))) return st;
  if (!q_out) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "q_out", "q_out must not be NULL");
  if (q_out != q) memmove(q_out, q, (size_t)nq * sizeof(double));
  tl_dyn_integrate_q(m, q_out, v, 1.0); /* the integrator's own rule: q (+) dt u == this with v = dt u */
  return TL_OK;
}

tl_status tl_model_difference(const tl_model *m, const double *q0, const double *q1, int nq, double *v_out,
                              int nv, tl_error *err) {
  tl_status st;
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if ((st = check_q(m, q0, nq, "q0", err)) || (st = check_q(m, q1, nq, "q1", err))) return st;
  if (!v_out || nv != m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "v_out", "v_out must not be NULL and have length nv = %d",
                        m->nv);
  for (int b = 0; b < m->nbody; b++)
    tl_js_difference(m->jnt_type[b], m->jnt_nv[b], q0 + m->q_adr[b], q1 + m->q_adr[b], v_out + m->v_adr[b]);
  return TL_OK;
}

void tl_dyn_so3_left_jacobian(double J[9], const double w[3], int inverse) {
  double th2 = tl_v3_dot(w, w), th = sqrt(th2), A, B;
  if (!inverse) {
    A = th > 1e-4 ? (1.0 - cos(th)) / th2 : 0.5 - th2 / 24.0;
    B = th > 1e-4 ? (th - sin(th)) / (th2 * th) : 1.0 / 6.0 - th2 / 120.0;
  } else {
    A = -0.5;
    B = th > 1e-4 ? 1.0 / th2 - (1.0 + cos(th)) / (2.0 * th * sin(th)) : 1.0 / 12.0 + th2 / 720.0;
  }
  double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0}, W2[9];
  tl_m3_mul(W2, W, W);
  for (int i = 0; i < 9; i++) J[i] = (i % 4 == 0 ? 1.0 : 0.0) + A * W[i] + B * W2[i];
}

/* Write the 3x3 block B at (r, c) of the nv x nv row-major matrix J. */
static void put3(double *J, int nv, int r, int c, const double B[9], double scale) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) J[(r + i) * nv + c + j] = scale * B[3 * i + j];
}

tl_status tl_model_integrate_jacobians(const tl_model *m, const double *q, const double *v, int nq,
                                       double *J_q, double *J_v, int nv, tl_error *err) {
  tl_status st;
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if ((st = check_q(m, q, nq, "q", err)) || (st = check_v(m, v, nv, "v", err))) return st;
  size_t n2 = (size_t)nv * nv;
  if (J_q) memset(J_q, 0, n2 * sizeof(double));
  if (J_v) memset(J_v, 0, n2 * sizeof(double));
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], r = v0;
    const double *w = v + v0;
    switch (m->jnt_type[b]) {
      case TL_JOINT_FLOATING:
        for (int i = 0; i < 3; i++) {
          if (J_q) J_q[(v0 + i) * nv + v0 + i] = 1.0;
          if (J_v) J_v[(v0 + i) * nv + v0 + i] = 1.0;
        }
        r = v0 + 3;
        w = v + v0 + 3;
        /* fall through */
      case TL_JOINT_SPHERICAL: {
        double e[4], R[9], Jl[9];
        tl_quat_exp(e, w);
        tl_quat_to_m3(R, e);
        tl_dyn_so3_left_jacobian(Jl, w, 0);
        if (J_q) put3(J_q, nv, r, r, R, 1.0);  /* exp(w) exp(d) = exp(R(w) d) exp(w) */
        if (J_v) put3(J_v, nv, r, r, Jl, 1.0); /* exp(w + d) = exp(Jl(w) d) exp(w) */
        break;
      }
      default:
        for (int i = v0; i < v0 + m->jnt_nv[b]; i++) {
          if (J_q) J_q[i * nv + i] = 1.0;
          if (J_v) J_v[i * nv + i] = 1.0;
        }
        break;
    }
  }
  return TL_OK;
}

tl_status tl_model_difference_jacobians(const tl_model *m, const double *q0, const double *q1, int nq,
                                        double *J_q0, double *J_q1, int nv, tl_error *err) {
  tl_status st;
  if (!m) return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "model", "model must not be NULL");
  if ((st = check_q(m, q0, nq, "q0", err)) || (st = check_q(m, q1, nq, "q1", err))) return st;
  if (nv != m->nv)
    return tl_error_set(err, TL_ERR_ARGUMENT, NULL, 0, "nv", "the Jacobians are nv x nv with nv = %d, not %d",
                        m->nv, nv);
  size_t n2 = (size_t)nv * nv;
  if (J_q0) memset(J_q0, 0, n2 * sizeof(double));
  if (J_q1) memset(J_q1, 0, n2 * sizeof(double));
  for (int b = 0; b < m->nbody; b++) {
    int v0 = m->v_adr[b], r = v0;
    const double *a = q0 + m->q_adr[b], *c = q1 + m->q_adr[b];
    switch (m->jnt_type[b]) {
      case TL_JOINT_FLOATING:
        for (int i = 0; i < 3; i++) {
          if (J_q0) J_q0[(v0 + i) * nv + v0 + i] = -1.0;
          if (J_q1) J_q1[(v0 + i) * nv + v0 + i] = 1.0;
        }
        r = v0 + 3;
        a += 3;
        c += 3;
        /* fall through */
      case TL_JOINT_SPHERICAL: {
        double w[3], e[4], R[9], Ji[9], JR[9];
        tl_js_quat_difference(w, c, a);
        tl_quat_exp(e, w);
        tl_quat_to_m3(R, e);
        tl_dyn_so3_left_jacobian(Ji, w, 1);
        tl_m3_mul(JR, Ji, R);
        if (J_q1) put3(J_q1, nv, r, r, Ji, 1.0);  /* log(exp(d) exp(w)) = w + Jl^-1(w) d */
        if (J_q0) put3(J_q0, nv, r, r, JR, -1.0); /* exp(w) exp(-d) = exp(-R(w) d) exp(w) */
        break;
      }
      default:
        for (int i = v0; i < v0 + m->jnt_nv[b]; i++) {
          if (J_q0) J_q0[i * nv + i] = -1.0;
          if (J_q1) J_q1[i * nv + i] = 1.0;
        }
        break;
    }
  }
  return TL_OK;
}
