#!/usr/bin/env python3
"""Write the corpus robots of issue 21 (section 3) and their meshes, reproducibly.

Usage: scripts/gen_robot_meshes.py [ROBOTS_DIR]   (default: robots/ of this checkout)

Four robots with the properties that broke Talus on first contact, written for Talus from scratch
(no third-party content), each in robots/<name>/ with its URDF, meshes and LICENSE:
  talus_dae_arm          fixed arm (root link `world`), 5 revolute joints; every visual AND collision
                         geometry is a COLLADA file with <up_axis>Z_UP</up_axis> (boxes and cylinders
                         as triangle meshes, each elongated along its link's z axis, so a collision
                         hull turned 90 degrees about x no longer matches its visual)
  talus_humanoid         floating humanoid, 18 DOF (6 per leg, 3 per arm), primitives except the
                         feet: convex STL soles (binary STL), whose lowest point is the robot's
  talus_base_arm         arm whose root link is `base` (not `world`), meant to be fixed: load it with
                         --fixed-base (the impedance and osc controllers weld it by default)
  talus_missing_visuals  a small cart whose visual meshes are referenced but absent (collision
                         primitives present): loaders must warn naming the files and go on
Everything is computed here: masses, centres of mass and inertias are those of the solid shapes
(uniform density), so every inertia obeys the triangle inequality; numbers are printed rounded to
1e-6. Running the script again writes the same bytes.
"""
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LICENSE = """{name}: written for the Talus project from scratch (scripts/gen_robot_meshes.py generates
the URDF and every mesh file). It contains no third-party content and is distributed under the
same terms as the rest of Talus, like the project's other robots in robots/.
"""


def f(x):
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def v3(a):
    return " ".join(f(x) for x in a)


# ---------------------------------------------------------------- solid shapes

def box_inertia(m, sx, sy, sz):
    return (m / 12 * (sy * sy + sz * sz), m / 12 * (sx * sx + sz * sz), m / 12 * (sx * sx + sy * sy))


def cyl_inertia(m, r, h):  # axis z
    a = m / 12 * (3 * r * r + h * h)
    return (a, a, m * r * r / 2)


def sphere_inertia(m, r):
    a = 0.4 * m * r * r
    return (a, a, a)


def box_mesh(sx, sy, sz, c=(0, 0, 0)):
    """Vertices and outward triangles of a box centred at c."""
    V = [(c[0] + sx / 2 * i, c[1] + sy / 2 * j, c[2] + sz / 2 * k) for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    T = []
    for a, b, cc, d in quads:
        T += [(a, b, cc), (a, cc, d)]
    return V, T


def prism_mesh(outline, z0, z1):
    """A convex prism: the convex polygon `outline` (counter-clockwise, xy) from z0 to z1."""
    n = len(outline)
    V = [(x, y, z0) for x, y in outline] + [(x, y, z1) for x, y in outline]
    T = []
    for i in range(1, n - 1):
        T.append((0, i + 1, i))          # bottom, normal -z
        T.append((n, n + i, n + i + 1))  # top, normal +z
    for i in range(n):
        j = (i + 1) % n
        T += [(i, j, n + j), (i, n + j, n + i)]
    return V, T


def cylinder_mesh(r, h, n=20, c=(0, 0, 0)):
    outline = [(c[0] + r * math.cos(2 * math.pi * i / n), c[1] + r * math.sin(2 * math.pi * i / n)) for i in range(n)]
    return prism_mesh(outline, c[2] - h / 2, c[2] + h / 2)


def merge(*meshes):
    V, T = [], []
    for mv, mt in meshes:
        o = len(V)
        V += mv
        T += [(a + o, b + o, c + o) for a, b, c in mt]
    return V, T


# ---------------------------------------------------------------- writers

def write_dae(path, name, mesh, rgb):
    V, T = mesh
    pos = " ".join(v3(v) for v in V)
    idx = " ".join(f"{a} {b} {c}" for a, b, c in T)
    text = f"""<?xml version="1.0" encoding="utf-8"?>
<!-- {name}: written by scripts/gen_robot_meshes.py for Talus. Z_UP on purpose: the file's z is the
     link's z, as ROS tools show COLLADA files (issue 21: collision and visual must agree). -->
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>
    <contributor><authoring_tool>talus scripts/gen_robot_meshes.py</authoring_tool></contributor>
    <unit name="meter" meter="1"/>
    <up_axis>Z_UP</up_axis>
  </asset>
  <library_effects>
    <effect id="{name}-effect"><profile_COMMON><technique sid="common"><lambert>
      <diffuse><color>{v3(rgb)} 1</color></diffuse>
    </lambert></technique></profile_COMMON></effect>
  </library_effects>
  <library_materials>
    <material id="{name}-material" name="{name}-material"><instance_effect url="#{name}-effect"/></material>
  </library_materials>
  <library_geometries>
    <geometry id="{name}-mesh" name="{name}">
      <mesh>
        <source id="{name}-positions">
          <float_array id="{name}-positions-array" count="{3 * len(V)}">{pos}</float_array>
          <technique_common>
            <accessor source="#{name}-positions-array" count="{len(V)}" stride="3">
              <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <vertices id="{name}-vertices"><input semantic="POSITION" source="#{name}-positions"/></vertices>
        <triangles material="{name}-material" count="{len(T)}">
          <input semantic="VERTEX" source="#{name}-vertices" offset="0"/>
          <p>{idx}</p>
        </triangles>
      </mesh>
    </geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="Scene" name="Scene">
      <node id="{name}" name="{name}" type="NODE">
        <instance_geometry url="#{name}-mesh">
          <bind_material><technique_common>
            <instance_material symbol="{name}-material" target="#{name}-material"/>
          </technique_common></bind_material>
        </instance_geometry>
      </node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#Scene"/></scene>
</COLLADA>
"""
    with open(path, "w") as fh:
        fh.write(text)


def write_stl(path, name, mesh):
    V, T = mesh
    out = bytearray(f"{name}: scripts/gen_robot_meshes.py (Talus)".encode().ljust(80, b" ")[:80])
    out += struct.pack("<I", len(T))
    for a, b, c in T:
        pa, pb, pc = V[a], V[b], V[c]
        u = [pb[i] - pa[i] for i in range(3)]
        w = [pc[i] - pa[i] for i in range(3)]
        n = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
        ln = math.sqrt(sum(x * x for x in n)) or 1.0
        out += struct.pack("<3f", *(x / ln for x in n))
        for p in (pa, pb, pc):
            out += struct.pack("<3f", *p)
        out += b"\0\0"
    with open(path, "wb") as fh:
        fh.write(bytes(out))


# ---------------------------------------------------------------- URDF pieces

def inertial(m, com, I):
    assert m > 0 and all(x > 0 for x in I)
    assert I[0] + I[1] >= I[2] and I[1] + I[2] >= I[0] and I[0] + I[2] >= I[1], "triangle inequality"
    return (f'    <inertial>\n      <origin xyz="{v3(com)}" rpy="0 0 0"/>\n      <mass value="{f(m)}"/>\n'
            f'      <inertia ixx="{f(I[0])}" ixy="0" ixz="0" iyy="{f(I[1])}" iyz="0" izz="{f(I[2])}"/>\n'
            f'    </inertial>\n')


def geom_xml(g):
    kind = g[0]
    if kind == "box":
        return f'<box size="{v3(g[1])}"/>'
    if kind == "cylinder":
        return f'<cylinder radius="{f(g[1])}" length="{f(g[2])}"/>'
    if kind == "sphere":
        return f'<sphere radius="{f(g[1])}"/>'
    return f'<mesh filename="{g[1]}"/>'


def shape(tag, g, xyz=(0, 0, 0), rpy=(0, 0, 0), material=None):
    mat = f'\n      <material name="{material}"/>' if material and tag == "visual" else ""
    return (f'    <{tag}>\n      <origin xyz="{v3(xyz)}" rpy="{v3(rpy)}"/>\n'
            f'      <geometry>{geom_xml(g)}</geometry>{mat}\n    </{tag}>\n')


def link(name, body=""):
    return f'  <link name="{name}">\n{body}  </link>\n'


def joint(name, kind, parent, child, xyz, rpy=(0, 0, 0), axis=None, limit=None):
    s = f'  <joint name="{name}" type="{kind}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
    s += f'    <origin xyz="{v3(xyz)}" rpy="{v3(rpy)}"/>\n'
    if axis:
        s += f'    <axis xyz="{v3(axis)}"/>\n'
    if limit:
        lo, hi, eff, vel = limit
        s += f'    <limit lower="{f(lo)}" upper="{f(hi)}" effort="{f(eff)}" velocity="{f(vel)}"/>\n'
        s += '    <dynamics damping="0.05" friction="0"/>\n'
    return s + "  </joint>\n"


MATERIALS = {"grey": (0.6, 0.62, 0.65), "orange": (0.95, 0.5, 0.1), "dark": (0.2, 0.2, 0.22), "blue": (0.2, 0.4, 0.8)}


def urdf(name, comment, body):
    mats = "".join(f'  <material name="{k}"><color rgba="{v3(c)} 1"/></material>\n' for k, c in MATERIALS.items())
    return f'<?xml version="1.0"?>\n<!--\n{comment.rstrip()}\n-->\n<robot name="{name}">\n{mats}{body}</robot>\n'


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


# ---------------------------------------------------------------- (a) talus_dae_arm

def dae_arm(top):
    name = "talus_dae_arm"
    d = os.path.join(top, name)
    os.makedirs(os.path.join(d, "meshes"), exist_ok=True)
    # link: (mesh, mass, kind, dims, centre) ; every shape elongated along z of its link
    parts = [
        ("base", 4.0, "cyl", (0.07, 0.12), (0, 0, 0.06)),
        ("shoulder", 1.5, "cyl", (0.05, 0.12), (0, 0, 0.06)),
        ("upper_arm", 1.2, "box", (0.06, 0.06, 0.30), (0, 0, 0.15)),
        ("forearm", 0.8, "box", (0.05, 0.05, 0.25), (0, 0, 0.125)),
        ("wrist", 0.4, "box", (0.04, 0.04, 0.10), (0, 0, 0.05)),
        ("flange", 0.2, "cyl", (0.035, 0.06), (0, 0, 0.03)),
    ]
    body = link("world")
    for pname, m, kind, dims, c in parts:
        if kind == "cyl":
            mesh = cylinder_mesh(dims[0], dims[1], c=c)
            I = cyl_inertia(m, *dims)
        else:
            mesh = box_mesh(*dims, c=c)
            I = box_inertia(m, *dims)
        write_dae(os.path.join(d, "meshes", f"{pname}.dae"), pname, mesh,
                  MATERIALS["orange" if pname in ("shoulder", "forearm", "flange") else "grey"])
        g = ("mesh", f"meshes/{pname}.dae")
        body += link(pname, inertial(m, c, I) + shape("visual", g) + shape("collision", g))
    lim = lambda a: (-a, a, 60.0, 3.0)  # noqa: E731
    body += joint("world_to_base", "fixed", "world", "base", (0, 0, 0))
    # q = 0 is a bent pose (bends built into the joint origins, as in talus_quadruped): the arm
    # leans forward, its elbow up, the flange pointing down-forward, well above the ground
    body += joint("j1_yaw", "revolute", "base", "shoulder", (0, 0, 0.12), axis=(0, 0, 1), limit=lim(2.9))
    body += joint("j2_shoulder", "revolute", "shoulder", "upper_arm", (0, 0, 0.12), rpy=(0, 0.4, 0),
                  axis=(0, 1, 0), limit=lim(1.8))
    body += joint("j3_elbow", "revolute", "upper_arm", "forearm", (0, 0, 0.30), rpy=(0, 1.2, 0), axis=(0, 1, 0),
                  limit=lim(2.4))
    body += joint("j4_wrist_pitch", "revolute", "forearm", "wrist", (0, 0, 0.25), rpy=(0, 0.6, 0), axis=(0, 1, 0),
                  limit=lim(2.0))
    body += joint("j5_wrist_roll", "revolute", "wrist", "flange", (0, 0, 0.10), axis=(0, 0, 1), limit=lim(3.0))
    comment = f"""  {name}: a 5-joint arm on a fixed base (root link `world`) whose visual AND collision
  geometry are COLLADA files with <up_axis>Z_UP</up_axis> (meshes/*.dae: boxes and cylinders as
  triangle meshes, each elongated along its link's z axis). Issue 21: a loader that turns Z_UP
  files to Y-up for physics but not for drawing puts every collision hull 90 degrees off its visual.
  Written for Talus from scratch by scripts/gen_robot_meshes.py (do not edit: run the script).
  Joints j1 (z), j2..j4 (y), j5 (z); q = 0 is a bent pose (bends in the joint origins), so the
  operational-space controller starts away from the straight-up singularity. Masses and inertias
  are those of the solid shapes (uniform density)."""
    write(os.path.join(d, f"{name}.urdf"), urdf(name, comment, body))
    write(os.path.join(d, "LICENSE"), LICENSE.format(name=name))


# ---------------------------------------------------------------- (b) talus_humanoid

def humanoid(top):
    name = "talus_humanoid"
    d = os.path.join(top, name)
    os.makedirs(os.path.join(d, "meshes"), exist_ok=True)
    # foot sole: convex rounded rectangle 0.17 x 0.08 (toe 0.105 ahead of the ankle), 0.03 thick,
    # its bottom 0.06 below the ankle axis
    L, W, H, r = 0.17, 0.08, 0.03, 0.02
    xf, xb, zb = 0.105, -0.065, -0.06
    outline = []
    for cx, cy, a0 in ((xf - r, W / 2 - r, 0), (xb + r, W / 2 - r, 90), (xb + r, -W / 2 + r, 180), (xf - r, -W / 2 + r, 270)):
        for k in range(4):
            a = math.radians(a0 + 30 * k)
            outline.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    foot = prism_mesh(outline, zb, zb + H)
    write_stl(os.path.join(d, "meshes", "foot.stl"), "foot", foot)
    foot_com = ((xf + xb) / 2, 0, zb + H / 2)
    body = ""
    # trunk: pelvis (root) + torso and head merged by fixed joints
    body += link("pelvis", inertial(2.0, (0, 0, 0), box_inertia(2.0, 0.10, 0.20, 0.08)) +
                 shape("visual", ("box", (0.10, 0.20, 0.08)), material="dark") +
                 shape("collision", ("box", (0.10, 0.20, 0.08))))
    body += link("torso", inertial(4.0, (0, 0, 0), box_inertia(4.0, 0.12, 0.22, 0.24)) +
                 shape("visual", ("box", (0.12, 0.22, 0.24)), material="blue") +
                 shape("collision", ("box", (0.12, 0.22, 0.24))))
    body += link("head", inertial(0.8, (0, 0, 0), sphere_inertia(0.8, 0.07)) +
                 shape("visual", ("sphere", 0.07), material="grey") + shape("collision", ("sphere", 0.07)))
    body += joint("pelvis_to_torso", "fixed", "pelvis", "torso", (0, 0, 0.17))
    body += joint("torso_to_head", "fixed", "torso", "head", (0, 0, 0.21))
    small = lambda m, r: inertial(m, (0, 0, 0), sphere_inertia(m, r))  # noqa: E731
    for side, s in (("l", 1), ("r", -1)):
        # leg: hip yaw (z), hip roll (x), hip pitch (y), knee (y), ankle pitch (y), ankle roll (x)
        body += link(f"{side}_hip_yaw_link", small(0.3, 0.04))
        body += link(f"{side}_hip_roll_link", small(0.3, 0.04))
        body += link(f"{side}_thigh", inertial(1.2, (0, 0, -0.11), cyl_inertia(1.2, 0.035, 0.22)) +
                     shape("visual", ("cylinder", 0.035, 0.20), (0, 0, -0.11), material="grey") +
                     shape("collision", ("cylinder", 0.035, 0.16), (0, 0, -0.11)))
        body += link(f"{side}_shank", inertial(0.8, (0, 0, -0.11), cyl_inertia(0.8, 0.03, 0.22)) +
                     shape("visual", ("cylinder", 0.03, 0.20), (0, 0, -0.11), material="grey") +
                     shape("collision", ("cylinder", 0.03, 0.16), (0, 0, -0.11)))
        body += link(f"{side}_ankle_link", small(0.1, 0.02))
        body += link(f"{side}_foot", inertial(0.4, foot_com, box_inertia(0.4, L, W, H)) +
                     shape("visual", ("mesh", "meshes/foot.stl"), material="dark") +
                     shape("collision", ("mesh", "meshes/foot.stl")))
        body += joint(f"{side}_hip_yaw", "revolute", "pelvis", f"{side}_hip_yaw_link", (0, s * 0.07, -0.06),
                      axis=(0, 0, 1), limit=(-0.6, 0.6, 40, 6))
        body += joint(f"{side}_hip_roll", "revolute", f"{side}_hip_yaw_link", f"{side}_hip_roll_link", (0, 0, 0),
                      axis=(1, 0, 0), limit=(-0.5, 0.5, 40, 6))
        body += joint(f"{side}_hip_pitch", "revolute", f"{side}_hip_roll_link", f"{side}_thigh", (0, 0, 0),
                      axis=(0, 1, 0), limit=(-1.6, 0.6, 60, 6))
        body += joint(f"{side}_knee", "revolute", f"{side}_thigh", f"{side}_shank", (0, 0, -0.22),
                      axis=(0, 1, 0), limit=(-0.1, 2.2, 60, 6))
        body += joint(f"{side}_ankle_pitch", "revolute", f"{side}_shank", f"{side}_ankle_link", (0, 0, -0.22),
                      axis=(0, 1, 0), limit=(-0.8, 0.8, 40, 6))
        body += joint(f"{side}_ankle_roll", "revolute", f"{side}_ankle_link", f"{side}_foot", (0, 0, 0),
                      axis=(1, 0, 0), limit=(-0.4, 0.4, 30, 6))
        # arm: shoulder pitch (y), shoulder roll (x), elbow (y); hanging beside the torso
        body += link(f"{side}_shoulder_link", small(0.2, 0.03))
        body += link(f"{side}_upper_arm", inertial(0.5, (0, 0, -0.09), cyl_inertia(0.5, 0.028, 0.18)) +
                     shape("visual", ("cylinder", 0.028, 0.17), (0, 0, -0.09), material="blue") +
                     shape("collision", ("cylinder", 0.028, 0.14), (0, 0, -0.09)))
        body += link(f"{side}_forearm", inertial(0.4, (0, 0, -0.09), cyl_inertia(0.4, 0.025, 0.18)) +
                     shape("visual", ("cylinder", 0.025, 0.17), (0, 0, -0.09), material="grey") +
                     shape("collision", ("cylinder", 0.025, 0.14), (0, 0, -0.09)))
        body += joint(f"{side}_shoulder_pitch", "revolute", "torso", f"{side}_shoulder_link", (0, s * 0.16, 0.08),
                      axis=(0, 1, 0), limit=(-2.5, 2.5, 20, 6))
        body += joint(f"{side}_shoulder_roll", "revolute", f"{side}_shoulder_link", f"{side}_upper_arm", (0, 0, 0),
                      rpy=(s * 0.1, 0, 0), axis=(1, 0, 0), limit=(-1.5, 1.5, 20, 6))
        body += joint(f"{side}_elbow", "revolute", f"{side}_upper_arm", f"{side}_forearm", (0, 0, -0.18),
                      axis=(0, 1, 0), limit=(-2.4, 0.1, 20, 6))
    comment = f"""  {name}: a small humanoid (about 15.2 kg, 0.8 m, 18 DOF) with mesh feet, written for Talus
  from scratch by scripts/gen_robot_meshes.py (do not edit: run the script).
  Floating base: the root link is `pelvis` (torso and head are merged into it by fixed joints).
  Legs (l, r): hip_yaw (z), hip_roll (x), hip_pitch (y), knee (y), ankle_pitch (y), ankle_roll (x);
  arms: shoulder_pitch (y), shoulder_roll (x), elbow (y). q = 0 stands upright, arms hanging.
  Every collision geom is a primitive except the feet: meshes/foot.stl, a convex rounded sole
  (0.17 x 0.08 x 0.03 m, binary STL) whose bottom, 0.06 m below the ankle, is the lowest point of
  the robot (0.56 m below the pelvis origin); the shank cylinders end 0.08 m above it. A placement
  that only looks at primitive geoms starts this robot with its feet in the ground (issue 21).
  Masses and inertias are those of the solid shapes (uniform density)."""
    write(os.path.join(d, f"{name}.urdf"), urdf(name, comment, body))
    write(os.path.join(d, "LICENSE"), LICENSE.format(name=name))


# ---------------------------------------------------------------- (c) talus_base_arm

def base_arm(top):
    name = "talus_base_arm"
    d = os.path.join(top, name)
    body = link("base", inertial(3.0, (0, 0, 0.03), box_inertia(3.0, 0.16, 0.16, 0.06)) +
                shape("visual", ("box", (0.16, 0.16, 0.06)), (0, 0, 0.03), material="dark") +
                shape("collision", ("box", (0.16, 0.16, 0.06)), (0, 0, 0.03)))
    segs = [("turret", 0.8, 0.045, 0.10), ("link1", 0.7, 0.035, 0.22), ("link2", 0.5, 0.03, 0.20),
            ("link3", 0.25, 0.025, 0.10)]
    for lname, m, r, h in segs:
        body += link(lname, inertial(m, (0, 0, h / 2), cyl_inertia(m, r, h)) +
                     shape("visual", ("cylinder", r, h), (0, 0, h / 2), material="orange") +
                     shape("collision", ("cylinder", r, h * 0.8), (0, 0, h / 2)))
    body += joint("yaw", "revolute", "base", "turret", (0, 0, 0.06), axis=(0, 0, 1), limit=(-3.0, 3.0, 30, 3))
    body += joint("shoulder", "revolute", "turret", "link1", (0, 0, 0.10), rpy=(0, 0.5, 0), axis=(0, 1, 0),
                  limit=(-1.8, 1.8, 30, 3))
    body += joint("elbow", "revolute", "link1", "link2", (0, 0, 0.22), rpy=(0, 1.1, 0), axis=(0, 1, 0),
                  limit=(-2.4, 2.4, 20, 3))
    body += joint("wrist", "revolute", "link2", "link3", (0, 0, 0.20), rpy=(0, 0.5, 0), axis=(0, 1, 0),
                  limit=(-2.0, 2.0, 10, 3))
    comment = f"""  {name}: a 4-joint arm whose root link is `base`, not `world`: it is meant to be bolted down
  (`talus simulate {name}.urdf` with the fixed-base option; the impedance and osc controllers weld it by default),
  but nothing in the file says so, so a plain `talus simulate` gives it a floating base and it lies
  on the ground, as a user's first try would. Written for Talus from scratch by
  scripts/gen_robot_meshes.py (do not edit: run the script). Primitives only. Joints: yaw (z),
  shoulder, elbow, wrist (y); q = 0 is a bent pose (bends in the joint origins). Masses and
  inertias are those of the solid shapes (uniform density)."""
    write(os.path.join(d, f"{name}.urdf"), urdf(name, comment, body))
    write(os.path.join(d, "LICENSE"), LICENSE.format(name=name))


# ---------------------------------------------------------------- (d) talus_missing_visuals

def missing_visuals(top):
    name = "talus_missing_visuals"
    d = os.path.join(top, name)
    body = link("chassis", inertial(5.0, (0, 0, 0), box_inertia(5.0, 0.40, 0.24, 0.10)) +
                shape("visual", ("mesh", "meshes/chassis.stl"), material="grey") +
                shape("collision", ("box", (0.40, 0.24, 0.10))))
    for wname, x, y in (("front_left", 0.14, 0.15), ("front_right", 0.14, -0.15), ("rear_left", -0.14, 0.15),
                        ("rear_right", -0.14, -0.15)):
        body += link(f"{wname}_wheel", inertial(0.4, (0, 0, 0), cyl_inertia(0.4, 0.06, 0.04)) +
                     shape("visual", ("mesh", "meshes/wheel.dae"), rpy=(1.570796, 0, 0), material="dark") +
                     shape("collision", ("cylinder", 0.06, 0.04), rpy=(1.570796, 0, 0)))
        body += joint(f"{wname}_wheel_joint", "continuous", "chassis", f"{wname}_wheel", (x, y, -0.04),
                      axis=(0, 1, 0))
    body += link("mast", inertial(0.3, (0, 0, 0.1), cyl_inertia(0.3, 0.015, 0.2)) +
                 shape("visual", ("mesh", "meshes/mast.obj"), (0, 0, 0.1), material="grey") +
                 shape("collision", ("cylinder", 0.015, 0.2), (0, 0, 0.1)))
    body += joint("chassis_to_mast", "fixed", "chassis", "mast", (-0.1, 0, 0.05))
    comment = f"""  {name}: a four-wheeled cart whose visual meshes (meshes/chassis.stl, meshes/wheel.dae,
  meshes/mast.obj) are referenced but ABSENT on purpose (no meshes/ folder); its collision geometry
  is primitives (box, cylinders). Issue 21: the robot must load and run, every missing file named in
  a warning, and the links drawn without (or with their collision geometry). Written for Talus from
  scratch by scripts/gen_robot_meshes.py (do not edit: run the script). Masses and inertias are those
  of the solid shapes (uniform density)."""
    write(os.path.join(d, f"{name}.urdf"), urdf(name, comment, body))
    write(os.path.join(d, "LICENSE"), LICENSE.format(name=name))


def main(argv):
    top = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "robots")
    dae_arm(top)
    humanoid(top)
    base_arm(top)
    missing_visuals(top)
    print(f"gen_robot_meshes: wrote talus_dae_arm, talus_humanoid, talus_base_arm, talus_missing_visuals in {top}")


if __name__ == "__main__":
    main(sys.argv)
