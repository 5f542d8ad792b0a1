/* Contact impulses with the exact Coulomb cone: the per-contact iteration of
 * Hwangbo, Lee and Hutter, "Per-contact iteration method for solving contact
 * dynamics", IEEE RA-L 3(2), 2018.
 *
 * For one contact with Delassus block G (3x3) and impulse-free velocity b,
 * the solution is one of: (1) opening, lambda = 0, when b_n >= 0; (2)
 * sticking, lambda = -G^-1 b, when that lies inside the cone; (3) sliding,
 * lambda on the cone surface with v_n = 0 and the tangential velocity
 * opposite to the tangential impulse. Case (3) is a root of a function of
 * one angle, found by bracketing and bisection to machine precision, so the
 * result lies on the cone exactly: no pyramid approximation anywhere. */
#include <math.h>
#include <string.h>

#include "contact/contact.h"
#include "math/tl_math.h"

/* Solve the symmetric 3x3 system G x = r by Cramer's rule; returns 0 if singular. */
static int solve3(const double G[9], const double r[3], double x[3]) {
  double c0[3] = {G[0], G[3], G[6]}, c1[3] = {G[1], G[4], G[7]}, c2[3] = {G[2], G[5], G[8]};
  double t[3];
  tl_v3_cross(t, c1, c2);
  double det = tl_v3_dot(c0, t);
  if (!(fabs(det) > 0)) return 0;
  x[0] = tl_v3_dot(r, t) / det;
  tl_v3_cross(t, c2, c0);
  x[1] = tl_v3_dot(r, t) / det;
  tl_v3_cross(t, c0, c1);
  x[2] = tl_v3_dot(r, t) / det;
  return 1;
}

/* On the cone surface at friction direction angle th with v_n = 0: the
 * impulse (returned in lam) and the signed 2D cross product between the
 * tangential velocity and the friction direction (the root function).
 * *ok = 0 when the normal impulse there is not positive. */
static double slide_residual(const double G[9], const double b[3], double mu, double th,
                             double lam[3], double *dot, int *ok) {
  double c = cos(th), s = sin(th);
  double den = G[8] + mu * (G[6] * c + G[7] * s);
  double ln = den > 0 ? -b[2] / den : -1.0;
  *ok = ln > 0;
  lam[0] = mu * ln * c;
  lam[1] = mu * ln * s;
  lam[2] = ln;
  double vt0 = G[0] * lam[0] + G[1] * lam[1] + G[2] * lam[2] + b[0];
  double vt1 = G[3] * lam[0] + G[4] * lam[1] + G[5] * lam[2] + b[1];
  *dot = vt0 * c + vt1 * s;
  return vt0 * s - vt1 * c;
}

/* Sliding solution: scan the friction direction angle for sign changes of
 * the root function (where the normal impulse is positive), bisect each to
 * machine precision, and accept the root whose tangential velocity opposes
 * the friction impulse (dot <= 0). */
static int slide_solve(const double G[9], const double b[3], double mu, double th0, double lam[3]) {
  enum { NGRID = 64 };
  double prev_f = 0, prev_th = 0, dot, l[3];
  int prev_ok = 0, ok;
  for (int i = 0; i <= NGRID; i++) {
    double th = th0 + (2.0 * TL_PI * i) / NGRID;
    double f = slide_residual(G, b, mu, th, l, &dot, &ok);
    if (ok && f == 0 && dot <= 0) {
      memcpy(lam, l, sizeof(l));
      return 1;
    }
    if (ok && prev_ok && (f > 0) != (prev_f > 0)) {
      double lo = prev_th, hi = th, flo = prev_f;
      for (int it = 0; it < 200 && hi - lo > 1e-15 * (1 + fabs(lo)); it++) {
        double mid = 0.5 * (lo + hi), fm = slide_residual(G, b, mu, mid, l, &dot, &ok);
        if ((fm > 0) == (flo > 0)) {
          lo = mid;
          flo = fm;
        } else {
          hi = mid;
        }
      }
      slide_residual(G, b, mu, 0.5 * (lo + hi), l, &dot, &ok);
      if (ok && dot <= 0) {
        memcpy(lam, l, sizeof(l));
        return 1;
      }
    }
    prev_f = f;
    prev_th = th;
    prev_ok = ok;
  }
  return 0;
}

/* Fast path: secant iteration on the angle from a guess th0 (the current
 * impulse direction when warm started). Accepts only a converged root with a
 * positive normal impulse and a tangential velocity opposing the friction. */
static int slide_secant(const double G[9], const double b[3], double mu, double th0, double lam[3]) {
  double dot, l[3];
  int ok;
  double t0 = th0, t1 = th0 + 1e-3;
  double f0 = slide_residual(G, b, mu, t0, l, &dot, &ok), f1 = slide_residual(G, b, mu, t1, l, &dot, &ok);
  for (int it = 0; it < 30 && ok; it++) {
    if (f1 == f0) break;
    double t2 = t1 - f1 * (t1 - t0) / (f1 - f0);
    if (fabs(t2 - t1) > 0.5) break; /* wandering: leave it to the bracketing scan */
    t0 = t1;
    f0 = f1;
    t1 = t2;
    f1 = slide_residual(G, b, mu, t1, l, &dot, &ok);
    if (fabs(t1 - t0) < 1e-14) {
      if (ok && dot <= 0) {
        memcpy(lam, l, sizeof(l));
        return 1;
      }
      break;
    }
  }
  return 0;
}

void tl_cone_contact_solve(const double G[9], const double b[3], double mu, double lambda[3]) {
  if (b[2] >= 0) { /* opening */
    memset(lambda, 0, 3 * sizeof(double));
    return;
  }
  double r[3] = {-b[0], -b[1], -b[2]}, x[3];
  if (solve3(G, r, x) && x[2] > 0 && sqrt(x[0] * x[0] + x[1] * x[1]) <= mu * x[2]) { /* sticking */
    memcpy(lambda, x, sizeof(x));
    return;
  }
  if (mu <= 0) { /* frictionless: v_n = 0 with zero tangential impulse */
    lambda[0] = lambda[1] = 0;
    lambda[2] = -b[2] / G[8];
    return;
  }
  /* sliding: from the warm-start direction, else the one opposing the free slip */
  double th0 = lambda[0] != 0 || lambda[1] != 0 ? atan2(lambda[1], lambda[0]) : atan2(-b[1], -b[0]);
  if (slide_secant(G, b, mu, th0, lambda)) return;
  if (slide_solve(G, b, mu, th0 - TL_PI / 64, lambda)) return;
  /* degenerate geometry: project the sticking impulse onto the cone */
  double ln = x[2] > 0 ? x[2] : -b[2] / G[8], t = sqrt(x[0] * x[0] + x[1] * x[1]);
  double k = t > mu * ln && t > 0 ? mu * ln / t : 1.0;
  lambda[0] = x[0] * k;
  lambda[1] = x[1] * k;
  lambda[2] = ln;
}
