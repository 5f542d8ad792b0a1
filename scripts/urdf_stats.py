#!/usr/bin/env python3
"""Print mass and zero-pose geometry statistics of a URDF file (stdlib only).

Usage: python3 scripts/urdf_stats.py [FILE.urdf]   (default: the Talus quadruped)

Prints
  - total mass, per-link mass, and a check of every inertia (positive definite,
    triangle inequality of the principal moments);
  - the whole-robot centre of mass in the zero pose;
  - the world z of the bottom of every <sphere> collision geom whose link name
    contains "FOOT" (or of every sphere if there is no such link), with the root
    link frame at the world origin and every joint at q = 0;
  - the lowest point of every collision geom, and per leg (the subtree below each
    joint attached to the root link) the lowest geom;
  - the root height that puts the lowest geom on the ground (z = 0), and the
    height at which the simulator drops the robot (lowest geom 1 cm above z = 0).

Forward kinematics: a joint's <origin> places the child link frame in the
parent link frame at q = 0; URDF rpy is fixed-axis roll, pitch, yaw, so
R = Rz(yaw) Ry(pitch) Rx(roll). RaiSim's <capsule radius length> extension is a
capsule along the local z axis, `length` being the distance between the cap
centres; <cylinder radius length> is also along local z.
"""
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def vec(text, n=3, default=0.0):
    if text is None:
        return [default] * n
    v = [float(s) for s in text.split()]
    if len(v) != n:
        raise ValueError("expected %d numbers, got %r" % (n, text))
    return v


def rpy_to_mat(r, p, y):
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def matvec(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def add(a, b):
    return [a[i] + b[i] for i in range(3)]


def compose(t1, t2):
    """(R1, p1) * (R2, p2)"""
    r1, p1 = t1
    r2, p2 = t2
    return (matmul(r1, r2), add(p1, matvec(r1, p2)))


def origin_of(elem):
    o = elem.find("origin") if elem is not None else None
    if o is None:
        return (rpy_to_mat(0, 0, 0), [0.0, 0.0, 0.0])
    return (rpy_to_mat(*vec(o.get("rpy"))), vec(o.get("xyz")))


def sym_eigen3(m):
    """Eigenvalues of a symmetric 3x3 matrix (closed form, Smith 1961)."""
    p1 = m[0][1] ** 2 + m[0][2] ** 2 + m[1][2] ** 2
    q = (m[0][0] + m[1][1] + m[2][2]) / 3.0
    if p1 == 0.0:
        return sorted([m[0][0], m[1][1], m[2][2]])
    p2 = sum((m[i][i] - q) ** 2 for i in range(3)) + 2.0 * p1
    p = math.sqrt(p2 / 6.0)
    b = [[(m[i][j] - (q if i == j else 0.0)) / p for j in range(3)] for i in range(3)]
    detb = (b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1])
            - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0])
            + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]))
    r = max(-1.0, min(1.0, detb / 2.0))
    phi = math.acos(r) / 3.0
    e1 = q + 2.0 * p * math.cos(phi)
    e3 = q + 2.0 * p * math.cos(phi + 2.0 * math.pi / 3.0)
    e2 = 3.0 * q - e1 - e3
    return sorted([e1, e2, e3])


def geom_lowest_z(gtype, size, rot, pos):
    """World z of the lowest point of a collision geom with pose (rot, pos)."""
    z_of = lambda local: pos[2] + sum(rot[2][k] * local[k] for k in range(3))
    if gtype == "sphere":
        return pos[2] - size[0]
    if gtype == "box":
        hx, hy, hz = size[0] / 2, size[1] / 2, size[2] / 2
        return min(z_of([sx * hx, sy * hy, sz * hz])
                   for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1))
    if gtype == "capsule":
        r, length = size
        return min(z_of([0, 0, length / 2]), z_of([0, 0, -length / 2])) - r
    if gtype == "cylinder":
        r, length = size
        az = rot[2][2]  # world z component of the cylinder axis
        rim = r * math.sqrt(max(0.0, 1.0 - az * az))
        return min(z_of([0, 0, length / 2]), z_of([0, 0, -length / 2])) - rim
    return None  # mesh: unknown extent


def parse_geom(col):
    g = col.find("geometry")
    if g is None or len(g) == 0:
        return None, None
    s = g[0]
    if s.tag == "sphere":
        return "sphere", [float(s.get("radius"))]
    if s.tag == "box":
        return "box", vec(s.get("size"))
    if s.tag in ("capsule", "cylinder"):
        return s.tag, [float(s.get("radius")), float(s.get("length"))]
    return s.tag, None


def main():
    default = Path(__file__).resolve().parent.parent / "robots" / "talus_quadruped" / "talus_quadruped.urdf"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    robot = ET.parse(path).getroot()
    links = {l.get("name"): l for l in robot.findall("link")}
    joints = robot.findall("joint")
    children = {}
    child_links = set()
    for j in joints:
        p = j.find("parent").get("link")
        c = j.find("child").get("link")
        children.setdefault(p, []).append(j)
        child_links.add(c)
    roots = [n for n in links if n not in child_links]
    if len(roots) != 1:
        sys.exit("expected one root link, found %r" % roots)
    root = roots[0]

    # Zero-pose forward kinematics, depth first in file order.
    pose = {root: (rpy_to_mat(0, 0, 0), [0.0, 0.0, 0.0])}
    leg_of = {root: None}
    order = []
    stack = [root]
    while stack:
        ln = stack.pop()
        order.append(ln)
        for j in reversed(children.get(ln, [])):
            c = j.find("child").get("link")
            pose[c] = compose(pose[ln], origin_of(j))
            leg_of[c] = j.get("name") if ln == root else leg_of[ln]
            stack.append(c)

    print("robot %r (%s)" % (robot.get("name"), path))
    print("root link %r; %d links, %d joints (%s)" % (
        root, len(links), len(joints),
        ", ".join("%d %s" % (sum(1 for j in joints if j.get("type") == t), t)
                  for t in sorted({j.get("type") for j in joints}))))

    # Masses and inertia checks.
    total = 0.0
    com_sum = [0.0, 0.0, 0.0]
    bad = 0
    print("\nper-link mass [kg]     principal moments about the COM [kg m^2]")
    for name in order:
        inert = links[name].find("inertial")
        if inert is None:
            print("  %-16s  (no inertial)" % name)
            continue
        m = float(inert.find("mass").get("value"))
        i = inert.find("inertia")
        ixx, ixy, ixz, iyy, iyz, izz = (float(i.get(k, "0")) for k in
                                        ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        ev = sym_eigen3([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        flags = []
        if m <= 0:
            flags.append("NON-POSITIVE MASS")
        if ev[0] <= 0:
            flags.append("NOT POSITIVE DEFINITE")
        if ev[0] + ev[1] < ev[2] * (1 - 1e-12):
            flags.append("TRIANGLE INEQUALITY VIOLATED")
        bad += len(flags)
        print("  %-16s %9.5f   %.6g %.6g %.6g %s" % (name, m, ev[0], ev[1], ev[2],
                                                   " ".join(flags)))
        total += m
        rot, pos = compose(pose[name], origin_of(inert))
        com_sum = add(com_sum, [m * x for x in pos])
    print("\ntotal mass: %.5f kg" % total)
    if total > 0:
        com = [x / total for x in com_sum]
        print("centre of mass in the zero pose (root frame): (%.4f, %.4f, %.4f) m" % tuple(com))
    print("inertia problems: %d" % bad)

    # Collision geoms.
    geoms = []  # (link, type, lowest z, centre)
    for name in order:
        for col in links[name].findall("collision"):
            gtype, size = parse_geom(col)
            if gtype is None:
                continue
            rot, pos = compose(pose[name], origin_of(col))
            low = geom_lowest_z(gtype, size, rot, pos) if size else None
            geoms.append((name, gtype, low, pos, size))

    feet = [g for g in geoms if g[1] == "sphere" and "FOOT" in g[0].upper()]
    if not feet:
        feet = [g for g in geoms if g[1] == "sphere"]
    if feet:
        print("\nfoot spheres, zero pose, root frame at the origin:")
        for name, _, low, pos, size in feet:
            print("  %-10s centre (%.4f, %.4f, %.4f)  radius %.3f  bottom z = %.4f" % (
                name, pos[0], pos[1], pos[2], size[0], low))

    known = [g for g in geoms if g[2] is not None]
    if not known:
        print("\nno collision geoms with a known extent")
        return 0 if bad == 0 else 1
    print("\nlowest point of each collision geom (z, root frame):")
    for name, gtype, low, pos, size in known:
        print("  %-12s %-8s %.4f" % (name, gtype, low))
    legs = {}
    for g in known:
        leg = leg_of[g[0]] or "(root)"
        if leg not in legs or g[2] < legs[leg][2]:
            legs[leg] = g
    print("\nlowest geom per subtree of the root link:")
    for leg, (name, gtype, low, _, _) in legs.items():
        print("  below %-8s: %-10s %-8s z = %.4f" % (leg, name, gtype, low))
    lowest = min(known, key=lambda g: g[2])
    print("\nlowest geom overall: %s %s at z = %.4f" % (lowest[0], lowest[1], lowest[2]))
    if feet:
        foot_low = min(f[2] for f in feet)
        others = [g for g in known if g not in feet]
        if others:
            nxt = min(others, key=lambda g: g[2])
            print("lowest non-foot geom: %s %s at z = %.4f (%.4f m above the feet)" % (
                nxt[0], nxt[1], nxt[2], nxt[2] - foot_low))
    print("root height with the lowest geom on the ground: %.4f m" % -lowest[2])
    print("root height when dropped (lowest geom 1 cm above the ground): %.4f m" % (0.01 - lowest[2]))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
