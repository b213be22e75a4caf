"""Shared test support: the plugin, the real host contract from ../shared, a fake Herald."""

import importlib.util
import logging
import os
import sys
import threading
import time
import unittest
from pathlib import Path

# Never write bytecode: not into the plugin, and never into ../shared (read-only in CI).
sys.dont_write_bytecode = True

PLUGIN_ROOT = Path(__file__).resolve().parent.parent          # hermes-plugin/
PLUGIN_DIR = PLUGIN_ROOT / "herald"
REPO = PLUGIN_ROOT.parent
SHARED = Path(os.environ.get("HERALD_SHARED") or (REPO.parent / "shared"))
EXTRA = SHARED / "hermes-peer-extra"
PEER = SHARED / "hermes-peer"


def shared_missing(what: Path) -> str | None:
    """None when what exists; else the one-line reason to skip (or fail, in CI)."""
    if what.exists():
        return None
    return f"{what} is absent; the Hermes plugin tests need ../shared (in CI, CI=true makes this a failure)"


def require(what: Path) -> None:
    reason = shared_missing(what)
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        raise AssertionError(reason)
    raise unittest.SkipTest(reason)


def host():
    """hermes_cli.approval_transport from ../shared/hermes-peer-extra, read-only."""
    require(EXTRA / "hermes_cli" / "approval_transport.py")
    spec = importlib.util.spec_from_file_location("herald_test_approval_transport",
                                                  EXTRA / "hermes_cli" / "approval_transport.py")
    mod = sys.modules.get(spec.name)
    if mod is None:
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        # Its warnings ("Approval transport timed out ...") are expected in these tests.
        logging.getLogger(spec.name).setLevel(logging.ERROR)
    return mod


def core():
    """The plugin's core, loaded the way the plugin loads it."""
    spec = importlib.util.spec_from_file_location("herald_plugin_under_test", PLUGIN_DIR / "__init__.py",
                                                  submodule_search_locations=[str(PLUGIN_DIR)])
    mod = sys.modules.get(spec.name)
    if mod is None:
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
    return mod.load_core()


def host_present(h, c, *, command="rm -rf build", session_key="sess-1", allow_session=True,
                 allow_permanent=True, timeout=10.0, is_interrupted=None, poll_interval=1.0,
                 on_request=None):
    """What Hermes does for a selected transport (tools/approval.py
    _present_with_selected_transport @ NousResearch/hermes-agent main, PR #82003): build the
    request, fire pre_approval_request with its id, run the REAL invoke_approval_transport, fire
    post_approval_response with the result."""
    request = h.ApprovalRequest.create(
        command=command, description="recursive delete", pattern_key="rm_rf",
        pattern_keys=("rm_rf",), session_key=session_key, surface="cli",
        allow_session=allow_session, allow_permanent=allow_permanent, timeout_seconds=timeout)
    if on_request is not None:
        on_request(request)
    hook = dict(command=request.command, description=request.description, pattern_key="rm_rf",
                pattern_keys=["rm_rf"], session_key=session_key, surface="transport:herald",
                request_id=request.request_id, request_digest=request.digest)
    c.on_pre_approval_request(**hook)
    result = h.invoke_approval_transport(c.present, request, timeout_seconds=timeout,
                                         poll_interval=poll_interval, is_interrupted=is_interrupted)
    choice = result.choice if result.failure is None else f"transport_{result.failure}"
    c.on_post_approval_response(**hook, choice=choice)
    return request, result


class FakeHerald:
    """A Herald instance polling the broker the way the route's long-poll does."""

    def __init__(self, broker, name):
        self.b = broker
        self.name = name
        self.instance = ""
        self.cursor = 0
        self.items = {}
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._thread = None

    def poll(self, wait=0.5):
        self.b.observe(self.name, self.instance, self.cursor)
        self.b.wait_changed(self.instance, self.cursor, wait)
        st = self.b.poll_state()
        with self._changed:
            self.instance, self.cursor = st["instance"], st["cursor"]
            self.items = {i["id"]: i for i in st["items"]}
            self._changed.notify_all()
        return st

    def start(self):
        def loop():
            while not self._stop.is_set():
                self.poll(0.2)
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def wait_item(self, kind="approval", timeout=10.0):
        end = time.monotonic() + timeout
        with self._changed:
            while True:
                for it in self.items.values():
                    if it["kind"] == kind:
                        return it
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.name}: no {kind} arrived within {timeout} s")
                self._changed.wait(left)

    def answer(self, item, choice, digest=None):
        return self.b.answer(item["id"], item["digest"] if digest is None else digest, choice, self.name)


def eventually(pred, timeout=10.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.01)
    raise AssertionError(f"{what} did not happen within {timeout} s")
