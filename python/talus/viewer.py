"""talus.Viewer: the live view of a World in the browser, as a control panel for your own loop.

    import talus
    world = talus.World(dt=0.001); world.add_ground(); robot = world.add_system(model)
    viewer = talus.Viewer(world)                  # prints nothing; viewer.url is the address
    viewer.run(lambda w: robot.set_pd_targets(q_ref), params=[("kp", 0, 500, 100, "N m/rad")])

run() steps the world in real time (or as the page asks): pause, step 1 / N, speed, reset (to the
state when run() started), saved states (snapshot / restore, the 8 newest kept), pushes (force messages, applied as external forces for their duration),
parameter sliders (their values in viewer.params, and on_param(name, value) if given). For a loop
of your own, call viewer.poll() for the page's events and viewer.publish() after each step.
Protocol and controls: docs/viewer.md.
"""
import math
import time

import numpy as np

from ._talus import _Viewer

__all__ = ["Viewer"]


class Viewer:
    def __init__(self, world, host=None, port=0, fps=60.0, shared_control=False, history=10.0):
        self.world = world
        self._v = _Viewer(world, host=host, port=port, fps=fps, shared_control=shared_control, history=history)
        self.params = {}

    @property
    def port(self):
        return self._v.port

    @property
    def url(self):
        return f"http://127.0.0.1:{self._v.port}/"

    def poll(self):
        """The page's pending events (list of dict, oldest first; see _Viewer.poll)."""
        return self._v.poll()

    def publish(self, now=False):
        """A frame to the page when one is due (call after each step)."""
        self._v.publish(now)

    def set_params(self, params):
        """Sliders: [(name, min, max, value, unit), ...]; their values are kept in self.params."""
        self._v.set_params(list(params))
        self.params = {p[0]: float(p[3]) for p in params}

    def close(self):
        self._v.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def run(self, controller_fn=None, duration=None, speed=1.0, params=None, on_param=None):
        """Step the world until `duration` s of simulated time have passed (None: until Ctrl-C or close),
        obeying the page. controller_fn(world) runs between integrate1 and integrate2 of every step.
        Returns the number of steps taken."""
        w = self.world
        if params:
            self.set_params(params)
        start = w.snapshot_save()
        t_end = None if duration is None else w.time + duration
        paused, budget, steps, pushes, saved = False, 0, 0, [], []
        wall0, sim0 = time.monotonic(), w.time
        rtf_wall, rtf_sim, rtf = wall0, sim0, math.nan
        last_status = 0.0
        try:
            while t_end is None or w.time < t_end - 0.5 * w.dt:
                for e in self._v.poll():
                    k = e["type"]
                    if k == "pause":
                        paused, budget = True, 0
                        self._v.publish(True)  # the page shows where it stopped
                    elif k == "run":
                        paused, budget = False, 0
                    elif k == "step":
                        paused, budget = True, budget + e["n"]
                    elif k == "speed":
                        speed = e["factor"]
                    elif k == "reset":
                        w.snapshot_restore(start)
                        steps, pushes, budget = 0, [], 0
                        self._v.rewind()
                    elif k == "snapshot":
                        saved = (saved + [(w.snapshot_save(), steps, w.time)])[-8:]
                    elif k == "restore" and e["index"] < len(saved):
                        w.snapshot_restore(saved[e["index"]][0])
                        steps, pushes, budget = saved[e["index"]][1], [], 0
                        self._v.rewind()
                    elif k == "force":
                        sys_ = w.systems[e["system"]]
                        p, R = sys_.body_pose(e["body"])
                        local = R.T @ (np.asarray(e["point"]) - p)
                        n = max(1, round(e["duration"] / w.dt))
                        if e["id"]:
                            pushes = [q for q in pushes if q[3] != e["id"]]
                        pushes.append([sys_, e["body"], local, e["id"], np.asarray(e["force"]), n])
                    elif k == "param":
                        self.params[e["name"]] = e["value"]
                        if on_param:
                            on_param(e["name"], e["value"])
                    wall0, sim0 = time.monotonic(), w.time
                now = time.monotonic()
                if paused and budget == 0:
                    if now - last_status > 0.02:
                        self._v.set_status(w.time, steps, True, speed, 0.0, [s[2] for s in saved])
                        last_status = now
                    time.sleep(0.005)
                    wall0, sim0 = time.monotonic(), w.time
                    continue
                last_of_steps = budget == 1
                if budget:
                    budget -= 1
                w.integrate1()
                if controller_fn:
                    controller_fn(w)
                for q in pushes:
                    p, R = q[0].body_pose(q[1])
                    q[0].add_external_force(q[1], q[4], p + R @ q[2])
                    q[5] -= 1
                pushes = [q for q in pushes if q[5] > 0]
                w.integrate2()
                steps += 1
                self._v.publish(last_of_steps)  # after step n: the page shows the state reached
                now = time.monotonic()
                if now - rtf_wall >= 0.5:
                    rtf, rtf_wall, rtf_sim = (w.time - rtf_sim) / (now - rtf_wall), now, w.time
                if now - last_status > 0.02 or paused:
                    self._v.set_status(w.time, steps, paused and budget == 0, speed, rtf, [s[2] for s in saved])
                    last_status = now
                if speed and not paused:
                    ahead = (w.time - sim0) / speed - (now - wall0)
                    if ahead > 0.002:
                        time.sleep(ahead)
        except KeyboardInterrupt:
            pass
        return steps
