# Guards: nothing by itself: the headless-Chromium driver of test_viewer.py, test_plot_panels.py and
# test_live_control.py.
"""A small driver of headless Chromium over the DevTools protocol (--remote-debugging-pipe).

Used by test_viewer.py: open a page (file:// recording or the live view's http:// address), wait
until <body> has data-talus-frames or data-talus-error, collect every console message, uncaught
exception and browser log entry, and take PNG screenshots. Only the Python standard library.

Chromium's flags are those of the headless WebGL recipe (SwiftShader, no GPU, no sandbox, a new
profile folder, no background networking). --dump-dom / --screenshot with --virtual-time-budget
were tried first: virtual time runs out before SwiftShader's frame reaches the screenshot about
half the time, and pages that wait on a socket never advance; the protocol waits for real events.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
    "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
    "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
]


class Browser:
    def __init__(self, chromium, width=1280, height=800):
        self.profile = tempfile.mkdtemp(prefix="talus-chromium-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # Chromium reads commands from fd 3 and writes replies to fd 4 (in the child: moved out of
        # the way first, so neither dup2 overwrites the other pipe end)
        def child_fds():
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            r, w = os.dup2(r, 100), os.dup2(w, 101)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
            pass_fds=(3, 4), preexec_fn=child_fds)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        self.width, self.height = width, height
        targets = self.call("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"][0]
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    # ---- the pipe: JSON messages separated by NUL bytes
    def _read(self, timeout):
        end = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from chromium")
            r, _, _ = select.select([self.from_child], [], [], left)
            if r:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed its pipe (crashed?)")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        """Collect events for a while."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            try:
                m = self._read(left)
            except TimeoutError:
                return
            if "method" in m:
                self.events.append(m)

    def evaluate(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def open(self, url, timeout=60):
        """Navigate and wait for data-talus-frames or data-talus-error; returns (frames, error)."""
        # a new document every time (a change of the #hash alone would not reload the page)
        self.call("Page.navigate", url="about:blank")
        self.pump(0.1)
        self.call("Page.navigate", url=url)
        end = time.monotonic() + timeout
        probe = ("document.body ? [document.body.getAttribute('data-talus-frames'), "
                 "document.body.getAttribute('data-talus-error')] : [null, null]")
        while time.monotonic() < end:
            frames, error = self.evaluate(probe) or [None, None]
            if frames is not None or error is not None:
                return frames, error
            self.pump(0.1)
        return None, None

    def screenshot(self, path, settle=0.5):
        """A PNG of the page after `settle` s, taken from a freshly drawn frame."""
        self.pump(settle)
        data = self.call("Page.captureScreenshot", format="png", fromSurface=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def messages(self):
        """Console messages, exceptions and log entries seen so far: [(level, text)]."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                out.append((p.get("type", "log"), text))
            elif e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(("exception", d.get("exception", {}).get("description", d.get("text", ""))))
            elif e["method"] == "Log.entryAdded":
                en = p.get("entry", {})
                out.append((en.get("level", "info"), f"[{en.get('source', '')}] {en.get('text', '')}"))
        return out

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_child, self.from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)
