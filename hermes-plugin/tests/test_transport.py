"""The plugin's approval transport through Hermes' REAL invoke_approval_transport.

Each test stands a broker (the dashboard's side) in a temp HERMES_HOME, runs the transport as a
CLI process would (no broker of its own: it reaches the broker over the private socket), and
plays one or two Herald instances against the broker.
"""

import os
import socket
import stat
import tempfile
import threading
import time
import unittest

import support

h = None
core = None


def setUpModule():
    global h, core
    h = support.host()
    core = support.core()


class Bridge(unittest.TestCase):
    grace = 0.5

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.home = self.tmp.name
        self._env = {k: os.environ.get(k) for k in ("HERMES_HOME", "HERMES_SESSION_PLATFORM", "HERMES_SESSION_CHAT_NAME")}
        os.environ["HERMES_HOME"] = self.home
        self.broker = core.Broker(self.home, grace=self.grace).start()
        core._reset_for_tests(None)  # this process plays a CLI process: no broker of its own
        self.heralds = []

    def tearDown(self):
        for hd in self.heralds:
            hd.stop()
        self.broker.close()
        core._reset_for_tests(None)
        for k, v in self._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.tmp.cleanup()

    def herald(self, name="herald-1"):
        hd = support.FakeHerald(self.broker, name).start()
        self.heralds.append(hd)
        return hd

    def ask(self, **kw):
        """Run host_present on a thread, as Hermes' agent thread would; returns (thread, box)."""
        box = {}

        def run():
            try:
                box["request"], box["result"] = support.host_present(h, core, **kw)
            except BaseException as exc:  # surfaced by the test
                box["error"] = exc
        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t, box

    def done(self, t, box, timeout=15.0):
        t.join(timeout)
        self.assertFalse(t.is_alive(), "the host did not return")
        if "error" in box:
            raise box["error"]
        return box["result"]

    def outcome(self, rid):
        return support.eventually(lambda: self.broker._recent.get(rid), what=f"request {rid} finished")

    # --- the cases of issue 19 ---

    def test_answered(self):
        os.environ["HERMES_SESSION_PLATFORM"] = "telegram"
        os.environ["HERMES_SESSION_CHAT_NAME"] = "Ops chat"
        hd = self.herald()
        t, box = self.ask(command="rm -rf build")
        item = hd.wait_item()
        self.assertEqual(item["command"], "rm -rf build")
        self.assertEqual(item["allowed_choices"], ["once", "session", "always", "deny"])
        self.assertEqual(item["origin"]["surface"], "telegram")
        self.assertEqual(item["origin"]["chat"], "Ops chat")
        self.assertEqual(item["origin"]["session_key"], "sess-1")
        res = hd.answer(item, "session")
        self.assertEqual((res.status, res.body["status"]), (200, "answered"))
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("session", None))
        self.assertEqual(box["request"].request_id, item["id"])
        self.assertEqual(box["request"].digest, item["digest"])

    def test_timeout(self):
        hd = self.herald()
        t, box = self.ask(timeout=1.0)
        item = hd.wait_item()
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", "timeout"))
        rec = self.outcome(item["id"])
        self.assertIn(rec["outcome"], ("transport_timeout", "expired", "timeout"))
        late = hd.answer(item, "once")
        self.assertEqual((late.status, late.body["status"]), (410, "gone"))
        self.assertIn("timed out", late.body["detail"])

    def test_interrupt(self):
        hd = self.herald()
        interrupted = threading.Event()
        t, box = self.ask(is_interrupted=interrupted.is_set, poll_interval=0.05)
        item = hd.wait_item()
        interrupted.set()
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", "interrupted"))
        # The post hook told the broker: the request is gone, and the worker let go of its slot.
        rec = self.outcome(item["id"])
        self.assertEqual(rec["outcome"], "transport_interrupted")
        support.eventually(lambda: not core._active, what="the transport worker returned")
        late = hd.answer(item, "once")
        self.assertEqual(late.status, 410)
        self.assertIn("interrupted", late.body["detail"])

    def test_disallowed_choice_is_refused_by_the_route(self):
        hd = self.herald()
        t, box = self.ask(allow_session=False, allow_permanent=False)
        item = hd.wait_item()
        self.assertEqual(item["allowed_choices"], ["once", "deny"])
        for bad in ("always", "session", "yes"):
            res = hd.answer(item, bad)
            self.assertEqual((res.status, res.body["status"]), (422, "not_offered"), bad)
        res = hd.answer(item, "deny")
        self.assertEqual(res.status, 200)
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", None))

    def test_disallowed_choice_from_a_forged_channel_is_denied_by_hermes(self):
        # Even if the channel delivered a choice that was not offered, the plugin passes it to
        # request.respond and Hermes' own validation denies it.
        hd = self.herald()
        t, box = self.ask(allow_session=False, allow_permanent=False)
        item = hd.wait_item()
        with self.broker._lock:
            self.broker._items[item["id"]].allowed = tuple(core.CHOICES)
        self.assertEqual(hd.answer(item, "always").status, 200)
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", "invalid"))

    def test_no_herald_connected(self):
        t0 = time.monotonic()
        t, box = self.ask(timeout=30.0)
        result = self.done(t, box)
        elapsed = time.monotonic() - t0
        # The transport raised, so Hermes falls back as configured (error -> builtin/deny).
        self.assertEqual((result.choice, result.failure), ("deny", "error"))
        self.assertLess(elapsed, 10.0, "the grace period, not Hermes' 30 s timeout, ended the wait")
        rec = self.outcome(box["request"].request_id)
        self.assertEqual(rec["outcome"], "unwatched")

    def test_no_dashboard_running(self):
        self.broker.close()
        t, box = self.ask(timeout=30.0)
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", "error"))

    def test_two_heralds_answer_at_once(self):
        a, b = self.herald("herald-a"), self.herald("herald-b")
        t, box = self.ask()
        ia, ib = a.wait_item(), b.wait_item()
        self.assertEqual(ia["id"], ib["id"])
        go = threading.Barrier(2)
        res = {}

        def answer(hd, item, choice):
            go.wait()
            res[hd.name] = (choice, hd.answer(item, choice))
        ts = [threading.Thread(target=answer, args=(a, ia, "once")),
              threading.Thread(target=answer, args=(b, ib, "deny"))]
        for x in ts:
            x.start()
        for x in ts:
            x.join(10)
        statuses = sorted(r.status for _, r in res.values())
        self.assertEqual(statuses, [200, 409])
        winner = next(c for c, r in res.values() if r.status == 200)
        loser = next(r for c, r in res.values() if r.status == 409)
        self.assertEqual(loser.body["status"], "already_answered")
        self.assertEqual(loser.body["choice"], winner)
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), (winner, None))

    def test_late_answer(self):
        hd = self.herald()
        t, box = self.ask()
        item = hd.wait_item()
        self.assertEqual(hd.answer(item, "deny").status, 200)
        self.assertEqual(self.done(t, box).choice, "deny")
        late = hd.answer(item, "once")
        self.assertEqual((late.status, late.body["status"]), (409, "already_answered"))
        self.assertIn("already answered", late.body["detail"])

    # --- binding: a decision is bound to request id and digest ---

    def test_edited_or_replayed_answer_is_refused(self):
        hd = self.herald()
        t, box = self.ask()
        item = hd.wait_item()
        edited = hd.answer(item, "once", digest="0" * 64)
        self.assertEqual((edited.status, edited.body["status"]), (409, "mismatch"))
        unknown = self.broker.answer("f" * 32, item["digest"], "once", "x")
        self.assertEqual(unknown.status, 404)
        self.assertEqual(hd.answer(item, "deny").status, 200)
        self.assertEqual(self.done(t, box).choice, "deny")
        # The same answer sent again for the next request (a replay) does not fit it.
        t2, box2 = self.ask()
        support.eventually(lambda: any(i["id"] != item["id"] for i in hd.items.values()), what="second request")
        replay = self.broker.answer(item["id"], item["digest"], "once", "x")
        self.assertEqual(replay.status, 409)
        nxt = next(i for i in hd.items.values() if i["id"] != item["id"])
        self.assertEqual(hd.answer(nxt, "deny").status, 200)
        self.assertEqual(self.done(t2, box2).choice, "deny")

    # --- bounds ---

    def test_oversized_request_falls_back(self):
        self.herald()
        t, box = self.ask(command="x" * (core.MAX_TEXT + 1))
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", "error"))
        self.assertFalse(self.broker.poll_state()["items"])

    def test_pending_requests_are_bounded(self):
        hd = self.herald()
        with self.broker._lock:
            for i in range(core.MAX_PENDING):
                self.broker._add_locked(core._Item("approval", f"r{i}", "d", {"kind": "approval", "id": f"r{i}"},
                                                   ("deny",), time.monotonic() + 60))
        t, box = self.ask()
        result = self.done(t, box)
        self.assertEqual((result.choice, result.failure), ("deny", "error"))
        hd.stop()


class Notices(unittest.TestCase):
    """Versions without transports: the observer hooks show a notice, answered where asked."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.home = self.tmp.name
        self._env = {k: os.environ.get(k) for k in ("HERMES_HOME", "HERMES_SESSION_PLATFORM", "HERMES_SESSION_CHAT_NAME")}
        os.environ["HERMES_HOME"] = self.home
        os.environ["HERMES_SESSION_PLATFORM"] = "telegram"
        os.environ["HERMES_SESSION_CHAT_NAME"] = "Ops chat"
        self.broker = core.Broker(self.home, grace=0.5).start()

    def tearDown(self):
        self.broker.close()
        core._reset_for_tests(None)
        for k, v in self._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.tmp.cleanup()

    def roundtrip(self):
        hd = support.FakeHerald(self.broker, "herald-1").start()
        try:
            kw = dict(command="rm -rf build", description="recursive delete", pattern_key="rm_rf",
                      pattern_keys=["rm_rf"], session_key="agent:main:telegram:dm:1", surface="gateway")
            core.on_pre_approval_request(**kw)
            item = hd.wait_item("notice")
            self.assertEqual(item["command"], "rm -rf build")
            self.assertEqual(item["allowed_choices"], [])
            self.assertEqual(item["origin"]["surface"], "telegram")
            self.assertEqual(item["origin"]["chat"], "Ops chat")
            res = hd.answer(item, "once", digest="")
            self.assertEqual((res.status, res.body["status"]), (409, "notice"))
            self.assertIn("where it was asked", res.body["detail"])
            core.on_post_approval_response(**kw, choice="deny")
            rec = support.eventually(lambda: self.broker._recent.get(item["id"]), what="notice ended")
            self.assertEqual(rec["outcome"], "deny")
        finally:
            hd.stop()

    def test_notice_from_another_process(self):
        core._reset_for_tests(None)
        self.roundtrip()

    def test_notice_in_the_dashboard_process(self):
        core._reset_for_tests(self.broker)
        self.roundtrip()

    def test_smart_verdicts_are_not_shown(self):
        core._reset_for_tests(self.broker)
        core.on_pre_approval_request(command="rm -rf x", surface="smart", session_key="s")
        self.assertFalse(self.broker.poll_state()["items"])


class Channel(unittest.TestCase):
    """The private channel: owner and permissions are checked; never a network port."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.home = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_socket_is_private(self):
        b = core.Broker(self.home, grace=0.1).start()
        try:
            st = os.lstat(b.path)
            self.assertTrue(stat.S_ISSOCK(st.st_mode))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
            self.assertEqual(stat.S_IMODE(os.lstat(b.path.parent).st_mode), 0o700)
            self.assertEqual(b._sock.family, socket.AF_UNIX)
        finally:
            b.close()

    def test_open_directory_is_refused(self):
        d = os.path.join(self.home, core.SOCKET_DIR)
        os.mkdir(d, 0o755)
        os.chmod(d, 0o755)
        with self.assertRaisesRegex(core.BridgeError, "open to other users"):
            core.Broker(self.home).start()
        with self.assertRaisesRegex(core.BridgeError, "open to other users"):
            core._connect(self.home)

    def test_symlinked_directory_is_refused(self):
        real = os.path.join(self.home, "elsewhere")
        os.mkdir(real, 0o700)
        os.symlink(real, os.path.join(self.home, core.SOCKET_DIR))
        with self.assertRaisesRegex(core.BridgeError, "not a directory"):
            core.Broker(self.home).start()

    def test_second_dashboard_does_not_steal_the_socket(self):
        b = core.Broker(self.home).start()
        try:
            with self.assertRaisesRegex(core.BridgeError, "already serves"):
                core.Broker(self.home).start()
        finally:
            b.close()

    def test_stale_socket_is_replaced(self):
        b = core.Broker(self.home).start()
        b._sock.shutdown(socket.SHUT_RDWR)  # the old dashboard died without cleaning up
        b._sock.close()
        b2 = core.Broker(self.home).start()
        b2.close()


if __name__ == "__main__":
    unittest.main()
