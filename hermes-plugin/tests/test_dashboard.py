"""The REAL Hermes 0.19.0 dashboard (../shared/hermes-peer) loads the plugin from
HERMES_HOME/plugins: its route is served behind the dashboard token, and its observer hook
brings a real approval of the stub agent to the route as a notice with the session's title.

The plugin is enabled through Hermes' managed scope (HERMES_MANAGED_DIR/config.yaml,
plugins.enabled), because the peer rewrites HERMES_HOME/config.yaml on every start.
"""

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import support

TOKEN = "herald-plugin-test-token"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_dashboard(version="0.19.0", timeout=120.0):
    """Start the real dashboard with the plugin installed and enabled; returns (proc, port, tmp)."""
    support.require(support.PEER / "run")
    tmp = tempfile.mkdtemp(prefix="herald-plugin-")
    home = os.path.join(tmp, "home")
    managed = os.path.join(tmp, "managed")
    os.makedirs(os.path.join(home, "plugins"))
    os.makedirs(managed)
    shutil.copytree(support.PLUGIN_DIR, os.path.join(home, "plugins", "herald"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    # run accepts a HERMES_HOME that is empty or a stub home from an earlier run; this one is a
    # stub home with the plugin added (serve.py rewrites config.yaml at start).
    with open(os.path.join(home, "config.yaml"), "w") as fh:
        fh.write("# written by hermes-peer serve.py (ws) on every start\n")
    with open(os.path.join(managed, "config.yaml"), "w") as fh:
        fh.write("plugins:\n  enabled: [herald]\n")
    port = free_port()
    env = dict(os.environ, HERMES_HOME=home, HERMES_MANAGED_DIR=managed)
    err = open(os.path.join(tmp, "stderr.log"), "w")
    proc = subprocess.Popen([str(support.PEER / "run"), "ws", "--version", version, str(port), TOKEN],
                            stdout=subprocess.PIPE, stderr=err, env=env, text=True)
    end = time.monotonic() + timeout
    line = ""
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line.startswith("READY") or not line:
            break
    proc.herald_stderr = err
    if not line.startswith("READY"):
        proc.kill()
        proc.wait()
        err.close()
        with open(os.path.join(tmp, "stderr.log")) as fh:
            raise AssertionError("the Hermes dashboard did not start:\n" + fh.read()[-3000:])
    return proc, port, tmp


def stop_dashboard(proc, tmp):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    proc.herald_stderr.close()
    shutil.rmtree(tmp, ignore_errors=True)


def http(port, path, token=TOKEN, body=None):
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["X-Hermes-Session-Token"] = token
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=40) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


class RealDashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        support.require(support.PEER / "run")
        cls.proc, cls.port, cls.tmp = start_dashboard()

    @classmethod
    def tearDownClass(cls):
        stop_dashboard(cls.proc, cls.tmp)

    def test_route_is_behind_the_token(self):
        for path in ("/api/plugins/herald/v1/status", "/api/plugins/herald/v1/poll"):
            self.assertEqual(http(self.port, path, token=None)[0], 401, path)
            self.assertEqual(http(self.port, path, token="wrong-token")[0], 401, path)
        self.assertEqual(http(self.port, "/api/plugins/herald/v1/answer", token=None,
                              body={"id": "x", "digest": "y", "choice": "once"})[0], 401)
        code, st = http(self.port, "/api/plugins/herald/v1/status")
        self.assertEqual(code, 200)
        self.assertEqual(st["status"], "on")
        self.assertEqual(st["protocol"], 1)
        # Answers are bounded JSON.
        code, body = http(self.port, "/api/plugins/herald/v1/answer", body={"id": "x" * 5000, "digest": "", "choice": "once"})
        self.assertEqual(code, 413)
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/plugins/herald/v1/answer",
                                     data=b'{"id":"x","digest":"y","choice":"once"}',
                                     headers={"X-Hermes-Session-Token": TOKEN, "Content-Type": "text/plain"})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req, timeout=10)
        self.assertEqual(cm.exception.code, 415)
        code, body = http(self.port, "/api/plugins/herald/v1/answer", body={"id": "f" * 32, "digest": "d", "choice": "once"})
        self.assertEqual((code, body["status"]), (404, "unknown"))
        sock = os.path.join(self.tmp, "home", "herald", "bridge.sock")
        self.assertEqual(os.stat(sock).st_mode & 0o777, 0o600)

    def test_observer_hook_brings_a_real_approval_as_a_notice(self):
        import websockets  # Debian python3-websockets, installed with the peer

        async def scenario():
            async with websockets.connect(f"ws://127.0.0.1:{self.port}/api/ws?token={TOKEN}") as ws:
                ids = iter(range(1, 10 ** 6))

                async def call(method, params):
                    rid = next(ids)
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
                    while True:
                        m = json.loads(await asyncio.wait_for(ws.recv(), 30))
                        if m.get("id") == rid:
                            return m

                created = await call("session.create", {"title": "Deploy the blog"})
                sid = created["result"]["session_id"]
                await call("prompt.submit", {"session_id": sid, "text": "approve-me: rm -rf ./build"})
                while True:
                    m = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    if m.get("method") == "event" and m["params"].get("type") == "approval.request":
                        break
                code, st = await asyncio.to_thread(http, self.port, "/api/plugins/herald/v1/poll")
                self.assertEqual(code, 200)
                notices = [i for i in st["items"] if i["kind"] == "notice"]
                self.assertEqual(len(notices), 1, st)
                n = notices[0]
                self.assertEqual(n["command"], "rm -rf ./build")
                self.assertEqual(n["allowed_choices"], [])
                self.assertEqual(n["origin"]["title"], "Deploy the blog")
                self.assertEqual(n["origin"]["session_id"], sid)
                self.assertEqual(n["origin"]["surface"], "dashboard")
                # A notice is answered where it was asked, never through the bridge.
                code, body = await asyncio.to_thread(http, self.port, "/api/plugins/herald/v1/answer",
                                                     TOKEN, {"id": n["id"], "digest": "", "choice": "once"})
                self.assertEqual((code, body["status"]), (409, "notice"))
                # Long-poll: answering on /api/ws ends the notice, and the waiting poll returns.
                poll = asyncio.create_task(asyncio.to_thread(
                    http, self.port,
                    f"/api/plugins/herald/v1/poll?instance={st['instance']}&cursor={st['cursor']}&wait=20&client=t"))
                await call("approval.respond", {"session_id": sid, "choice": "deny"})
                code, st2 = await poll
                self.assertEqual(code, 200)
                self.assertFalse([i for i in st2["items"] if i["id"] == n["id"]])
                ended = [r for r in st2["recent"] if r["id"] == n["id"]]
                self.assertEqual(ended[0]["outcome"], "deny")

        asyncio.run(scenario())


if __name__ == "__main__":
    unittest.main()
