"""Herald bridge for Hermes: brings every approval on this Hermes profile to Herald.

One module, loaded once per process under the fixed name ``herald_bridge_core`` (see
``load_core`` in ``__init__.py`` and ``dashboard/plugin_api.py``), so the dashboard's route and
the plugin's hooks share one broker in the dashboard process.

Roles:

* **Dashboard process** (``dashboard/plugin_api.py`` was imported): a :class:`Broker` owns a unix
  socket in ``$HERMES_HOME/herald/`` and serves ``/api/plugins/herald/v1/*`` to Herald.
* **Every process** (``register(ctx)``): the observer hooks ``pre_approval_request`` and
  ``post_approval_response`` bring each approval to the broker as a notice (versions without
  transports), or remember the context (session, platform, chat) of a transport request.
* **Every process on 0.20.1+**: the approval transport ``herald`` (:func:`present`) forwards the
  host's request to the broker, blocks for Herald's answer and returns ``request.respond(choice)``.

Only the Python standard library is used here; the dashboard route uses FastAPI, which Hermes'
dashboard provides.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import struct
import sys
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path

log = logging.getLogger("herald.bridge")

PROTOCOL = 1
# Bounds. Everything a client of the channel or of the route sends is bounded.
MAX_LINE = 64 * 1024          # one channel message (a request with its context)
MAX_TEXT = 16 * 1024          # command or description
MAX_FIELD = 256               # ids, digests, surface, platform, titles
MAX_KEYS = 32                 # pattern keys
MAX_PENDING = 64              # approvals waiting for Herald at once
MAX_NOTICES = 64              # notices shown at once (the oldest goes first)
MAX_CONNS = 48                # channel connections at once
MAX_CLIENTS = 16              # Herald instances remembered
MAX_RECENT = 256              # finished requests remembered for late answers
MAX_POLLERS = 16              # long-polls waiting at once
POLL_WAIT_MAX = 8.0           # seconds a long-poll may wait (bounds the dashboard's shutdown)
CLIENT_TTL = 60.0             # a Herald that has not polled for this long is gone
DEFAULT_GRACE = 5.0           # seconds for a Herald to take a request before Hermes falls back
CHOICES = ("once", "session", "always", "deny")

SOCKET_DIR = "herald"
SOCKET_NAME = "bridge.sock"


class BridgeError(Exception):
    """A request could not be brought to Herald. Hermes then falls back as configured."""


# --------------------------------------------------------------------------------------------
# Paths and permission checks
# --------------------------------------------------------------------------------------------

def hermes_home() -> Path:
    """This profile's HERMES_HOME, as Hermes resolves it."""
    try:
        from hermes_constants import get_hermes_home  # provided by Hermes
        return Path(get_hermes_home())
    except Exception:
        env = os.environ.get("HERMES_HOME", "").strip()
        return Path(env) if env else Path.home() / ".hermes"


def socket_path(home: Path | None = None) -> Path:
    return Path(home or hermes_home()) / SOCKET_DIR / SOCKET_NAME


def _private_dir(path: Path, create: bool) -> None:
    """The channel's directory: a real directory owned by this user, closed to everyone else."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise BridgeError(f"the Herald bridge directory {path} does not exist: is the Hermes dashboard running?")
    if not stat.S_ISDIR(st.st_mode):
        raise BridgeError(f"{path} is not a directory; remove it and restart the Hermes dashboard")
    if st.st_uid != os.geteuid():
        raise BridgeError(f"{path} belongs to another user (uid {st.st_uid}); remove it and restart the Hermes dashboard")
    if st.st_mode & 0o077:
        raise BridgeError(f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o}); run chmod 700 {path}")


def _check_socket_file(path: Path) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise BridgeError("the Hermes dashboard is not running with the Herald plugin (no bridge socket)")
    if not stat.S_ISSOCK(st.st_mode):
        raise BridgeError(f"{path} is not a socket; remove it and restart the Hermes dashboard")
    if st.st_uid != os.geteuid():
        raise BridgeError(f"{path} belongs to another user (uid {st.st_uid}); refusing it")
    if st.st_mode & 0o077:
        raise BridgeError(f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o}); refusing it")


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a unix socket, or None where unknown."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return struct.unpack("3i", raw)[1]
        if sys.platform == "darwin":  # LOCAL_PEERCRED: struct xucred {u_int version; uid_t uid; ...}
            raw = sock.getsockopt(0, 0x001, 76)
            return struct.unpack_from("=Ii", raw)[1]
    except OSError:
        return None
    return None


def _same_user(sock: socket.socket) -> bool:
    uid = peer_uid(sock)
    return uid is None or uid == os.geteuid()


# --------------------------------------------------------------------------------------------
# Wire helpers (newline-delimited JSON over the unix socket)
# --------------------------------------------------------------------------------------------

class _Lines:
    """Reads bounded JSON lines from a socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    def read(self) -> dict | None:
        """The next message, or None at end of stream. Raises socket.timeout, BridgeError."""
        while b"\n" not in self.buf:
            if len(self.buf) > MAX_LINE:
                raise BridgeError("message too large")
            chunk = self.sock.recv(8192)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        if len(line) > MAX_LINE:
            raise BridgeError("message too large")
        try:
            msg = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise BridgeError("malformed message")
        if not isinstance(msg, dict):
            raise BridgeError("malformed message")
        return msg


def _send(sock: socket.socket, msg: dict, lock: threading.Lock | None = None) -> None:
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8") + b"\n"
    if lock is None:
        sock.sendall(data)
        return
    with lock:
        sock.sendall(data)


def _text(v, limit: int) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        v = str(v)
    if len(v) > limit:
        raise BridgeError(f"a field is longer than {limit} characters")
    return v


def _clean_origin(o) -> dict:
    if not isinstance(o, dict):
        return {}
    out = {}
    for k in ("surface", "platform", "session_key", "session_id", "chat", "title", "process", "hermes_surface"):
        v = o.get(k)
        if isinstance(v, str) and v:
            out[k] = v[:MAX_FIELD]
    return out


def _clean_request(r) -> dict:
    """A transport request as the channel carries it, checked and bounded."""
    if not isinstance(r, dict):
        raise BridgeError("malformed request")
    keys = r.get("pattern_keys") or []
    if not isinstance(keys, (list, tuple)) or len(keys) > MAX_KEYS:
        raise BridgeError("too many pattern keys")
    choices = r.get("allowed_choices") or []
    if not isinstance(choices, (list, tuple)) or not choices or any(c not in CHOICES for c in choices):
        raise BridgeError("unknown choices")
    try:
        timeout = float(r.get("timeout_seconds") or 0)
    except (TypeError, ValueError):
        raise BridgeError("malformed timeout")
    rid = _text(r.get("request_id"), MAX_FIELD)
    digest = _text(r.get("digest"), MAX_FIELD)
    if not rid or not digest:
        raise BridgeError("a request needs an id and a digest")
    return {
        "request_id": rid,
        "digest": digest,
        "command": _text(r.get("command"), MAX_TEXT),
        "description": _text(r.get("description"), MAX_TEXT),
        "pattern_key": _text(r.get("pattern_key"), MAX_FIELD),
        "pattern_keys": [_text(k, MAX_FIELD) for k in keys],
        "surface": _text(r.get("surface"), MAX_FIELD),
        "allowed_choices": list(choices),
        "timeout_seconds": max(0.0, min(timeout, 24 * 3600.0)),
    }


# --------------------------------------------------------------------------------------------
# The broker (dashboard process)
# --------------------------------------------------------------------------------------------

class _Item:
    __slots__ = ("id", "digest", "kind", "seq", "wire", "created", "expires", "seen_by", "allowed",
                 "conn", "send_lock", "done")

    def __init__(self, kind, rid, digest, wire, allowed, expires, conn=None):
        self.id = rid
        self.digest = digest
        self.kind = kind
        self.seq = 0
        self.wire = wire
        self.created = time.time()
        self.expires = expires
        self.seen_by: set[str] = set()
        self.allowed = tuple(allowed)
        self.conn = conn
        self.send_lock = threading.Lock()
        self.done = False


class Answer:
    """The outcome of a POST /v1/answer: an HTTP status and a JSON body."""

    def __init__(self, status: int, body: dict):
        self.status = status
        self.body = body


class Broker:
    """Holds every request and notice waiting on this profile and hands them to Herald.

    Thread-safe. Channel clients are served on threads; the dashboard's async route calls
    :meth:`poll_state`, :meth:`observe`, :meth:`answer` and :meth:`add_waiter`.
    """

    def __init__(self, home: Path | None = None, grace: float | None = None):
        self.home = Path(home or hermes_home())
        self.path = socket_path(self.home)
        self.grace = configured_grace() if grace is None else float(grace)
        self.instance = uuid.uuid4().hex
        self._lock = threading.Condition()
        self._items: "OrderedDict[str, _Item]" = OrderedDict()
        self._recent: "OrderedDict[str, dict]" = OrderedDict()
        self._clients: "OrderedDict[str, float]" = OrderedDict()
        self._cursor = 0
        self._waiters: list = []           # (loop, future) of waiting long-polls
        self._conns = 0
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    # ---- lifecycle ----

    def start(self) -> "Broker":
        _private_dir(self.path.parent, create=True)
        if len(os.fsencode(str(self.path))) >= 104:
            raise BridgeError(f"the bridge socket path {self.path} is too long for a unix socket; use a shorter HERMES_HOME")
        if os.path.lexists(self.path):
            _check_socket_file(self.path)
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            probe.settimeout(0.5)
            try:
                probe.connect(str(self.path))
                raise BridgeError(f"another Hermes dashboard of this profile already serves {self.path}")
            except (ConnectionRefusedError, FileNotFoundError, socket.timeout):
                os.unlink(self.path)  # stale, ours (checked above)
            finally:
                probe.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(16)
        self._sock = sock
        self._thread = threading.Thread(target=self._accept_loop, name="herald-bridge", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        with self._lock:
            self._closed = True
            items = list(self._items.values())
            for it in items:
                self._finish_locked(it, "closed")
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept loop
            except OSError:
                pass
            try:
                self._sock.close()
            except OSError:
                pass
            try:
                if os.path.exists(self.path):
                    os.unlink(self.path)
            except OSError:
                pass
        for it in items:
            if it.conn is not None:
                try:
                    it.conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    # ---- channel server ----

    def _accept_loop(self) -> None:
        sock = self._sock
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            if not _same_user(conn):
                log.warning("Herald bridge: refused a connection from another user")
                conn.close()
                continue
            with self._lock:
                if self._conns >= MAX_CONNS:
                    full = True
                else:
                    full = False
                    self._conns += 1
            if full:
                try:
                    _send(conn, {"op": "refused", "reason": "too many Hermes processes are waiting on Herald"})
                finally:
                    conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="herald-bridge-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10.0)
            lines = _Lines(conn)
            msg = lines.read()
            if msg is None:
                return
            op = msg.get("op")
            if op == "ask":
                self._serve_ask(conn, lines, msg)
            elif op == "notice":
                self._serve_notice(conn, lines, msg)
            else:
                _send(conn, {"op": "refused", "reason": "unknown operation"})
        except (BridgeError, OSError, ValueError) as exc:
            try:
                _send(conn, {"op": "refused", "reason": str(exc)})
            except OSError:
                pass
        finally:
            with self._lock:
                self._conns -= 1
            try:
                conn.close()
            except OSError:
                pass

    def _serve_ask(self, conn, lines, msg) -> None:
        req = _clean_request(msg.get("request"))
        origin = _clean_origin(msg.get("origin"))
        now = time.monotonic()
        wire = dict(req, kind="approval", id=req["request_id"], origin=origin)
        item = _Item("approval", req["request_id"], req["digest"], wire, req["allowed_choices"],
                     now + req["timeout_seconds"], conn)
        with self._lock:
            if self._closed:
                raise BridgeError("the Hermes dashboard is shutting down")
            if item.id in self._items or item.id in self._recent:
                raise BridgeError("this request was already brought to Herald")
            if sum(1 for i in self._items.values() if i.kind == "approval") >= MAX_PENDING:
                raise BridgeError(f"{MAX_PENDING} approvals are already waiting on Herald")
            self._add_locked(item)
            grace_end = now + self.grace
            while not item.seen_by and not item.done:
                left = grace_end - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(min(left, 0.5))
            if not item.seen_by and not item.done:
                self._finish_locked(item, "unwatched")
                raise BridgeError(f"no Herald took the request within {self.grace:g} s")
            if item.done:
                return
        try:
            self._wait_ask(conn, lines, item)
        finally:
            self._end(item, "gone")

    def _wait_ask(self, conn, lines, item) -> None:
        _send(conn, {"op": "shown"}, item.send_lock)
        # Wait for the asking process to cancel, to go away, or for the request to expire. The
        # answer itself is written to conn by answer(), on the answering thread.
        while True:
            left = item.expires - time.monotonic()
            if left <= 0:
                self._end(item, "expired", notify_client={"op": "expired"})
                return
            conn.settimeout(left)
            try:
                m = lines.read()
            except socket.timeout:
                continue
            except (OSError, BridgeError):
                m = None
            if m is None:
                self._end(item, "gone")
                return
            if m.get("op") == "cancel":
                outcome = str(m.get("outcome") or "cancelled")[:64]
                self._end(item, outcome, notify_client={"op": "cancelled"})
                return

    def _serve_notice(self, conn, lines, msg) -> None:
        n = msg.get("notice")
        if not isinstance(n, dict):
            raise BridgeError("malformed notice")
        item = self.add_notice(n)
        outcome = "gone"
        try:
            conn.settimeout(None)
            m = lines.read()
            if m is not None and m.get("op") == "notice_end":
                outcome = str(m.get("outcome") or "answered")[:64]
        except (OSError, BridgeError):
            pass
        finally:
            self.end_notice(item.id, outcome)

    # ---- items ----

    def _add_locked(self, item: _Item) -> None:
        self._cursor += 1
        item.seq = self._cursor
        self._items[item.id] = item
        self._wake_locked()

    def _finish_locked(self, item: _Item, outcome: str, choice: str | None = None) -> None:
        if item.done:
            return
        item.done = True
        self._items.pop(item.id, None)
        rec = {"id": item.id, "kind": item.kind, "outcome": outcome, "at": time.time()}
        if choice is not None:
            rec["choice"] = choice
        self._recent[item.id] = rec
        while len(self._recent) > MAX_RECENT:
            self._recent.popitem(last=False)
        self._cursor += 1
        self._wake_locked()

    def _end(self, item: _Item, outcome: str, notify_client: dict | None = None) -> None:
        with self._lock:
            if item.done:
                return
            self._finish_locked(item, outcome)
        if notify_client is not None and item.conn is not None:
            try:
                _send(item.conn, notify_client, item.send_lock)
            except OSError:
                pass

    def _wake_locked(self) -> None:
        self._lock.notify_all()
        waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            try:
                loop.call_soon_threadsafe(_resolve, fut)
            except RuntimeError:
                pass  # loop closed

    def add_notice(self, n: dict) -> _Item:
        """Show an approval that must be answered where it was asked (no choices)."""
        nid = "notice-" + uuid.uuid4().hex
        wire = {
            "kind": "notice",
            "id": nid,
            "command": _text(n.get("command"), MAX_TEXT),
            "description": _text(n.get("description"), MAX_TEXT),
            "pattern_key": _text(n.get("pattern_key"), MAX_FIELD),
            "surface": _text(n.get("surface"), MAX_FIELD),
            "allowed_choices": [],
            "origin": _clean_origin(n.get("origin")),
        }
        item = _Item("notice", nid, "", wire, (), float("inf"))
        with self._lock:
            notices = [i for i in self._items.values() if i.kind == "notice"]
            if len(notices) >= MAX_NOTICES:
                self._finish_locked(notices[0], "dropped")
            self._add_locked(item)
        return item

    def end_notice(self, nid: str, outcome: str) -> None:
        with self._lock:
            item = self._items.get(nid)
            if item is not None:
                self._finish_locked(item, outcome)

    # ---- Herald's side (the route) ----

    def observe(self, client: str, instance: str, cursor: int) -> None:
        """A Herald polled: it holds everything up to cursor of this instance."""
        client = (client or "anonymous")[:64]
        with self._lock:
            self._clients[client] = time.monotonic()
            self._clients.move_to_end(client)
            while len(self._clients) > MAX_CLIENTS:
                self._clients.popitem(last=False)
            if instance != self.instance:
                return
            seen = False
            for it in self._items.values():
                if it.seq <= cursor and client not in it.seen_by:
                    it.seen_by.add(client)
                    seen = True
            if seen:
                self._lock.notify_all()

    def changed(self, instance: str, cursor: int) -> bool:
        with self._lock:
            return instance != self.instance or cursor != self._cursor

    def wait_changed(self, instance: str, cursor: int, timeout: float) -> None:
        """Block until something changed after cursor, or timeout (for synchronous callers)."""
        end = time.monotonic() + timeout
        with self._lock:
            while instance == self.instance and cursor == self._cursor:
                left = end - time.monotonic()
                if left <= 0:
                    return
                self._lock.wait(left)

    def add_waiter(self, loop, fut) -> bool:
        with self._lock:
            if len(self._waiters) >= MAX_POLLERS:
                return False
            self._waiters.append((loop, fut))
            return True

    def remove_waiter(self, fut) -> None:
        with self._lock:
            self._waiters = [w for w in self._waiters if w[1] is not fut]

    def poll_state(self) -> dict:
        now_m = time.monotonic()
        with self._lock:
            items = []
            for it in self._items.values():
                w = dict(it.wire)
                if it.kind == "approval":
                    w["expires_in"] = max(0.0, round(it.expires - now_m, 3))
                w["created_at"] = it.created
                items.append(w)
            watchers = sum(1 for t in self._clients.values() if now_m - t < CLIENT_TTL)
            return {
                "protocol": PROTOCOL,
                "instance": self.instance,
                "cursor": self._cursor,
                "items": items,
                "recent": list(self._recent.values())[-32:],
                "watchers": watchers,
            }

    def answer(self, rid: str, digest: str, choice: str, client: str = "") -> Answer:
        """Herald's answer. The first one wins; every other gets a clear refusal."""
        if not isinstance(rid, str) or not isinstance(digest, str) or not isinstance(choice, str):
            return Answer(400, {"status": "invalid", "detail": "an answer needs id, digest and choice as strings"})
        with self._lock:
            item = self._items.get(rid)
            if item is None:
                rec = self._recent.get(rid)
                if rec is None:
                    return Answer(404, {"status": "unknown", "detail": "Hermes is not waiting for this approval (unknown request)."})
                if rec["outcome"] == "answered":
                    # by_you: this client's own earlier answer (its reply was lost); not a conflict.
                    return Answer(409, {"status": "already_answered", "choice": rec.get("choice"),
                                        "by_you": bool(client) and rec.get("by") == client[:64],
                                        "detail": f"This approval was already answered ({rec.get('choice')})."})
                return Answer(410, {"status": "gone", "outcome": rec["outcome"],
                                    "detail": f"Hermes is no longer waiting for this approval ({_say(rec['outcome'])})."})
            if item.kind == "notice":
                where = (item.wire.get("origin") or {}).get("surface") or "Hermes"
                return Answer(409, {"status": "notice", "detail": f"Answer this approval where it was asked ({where})."})
            if digest != item.digest:
                return Answer(409, {"status": "mismatch",
                                    "detail": "Refused: this answer is for a different version of the request (id or digest do not match)."})
            if choice not in item.allowed:
                return Answer(422, {"status": "not_offered",
                                    "detail": f"Refused: {choice!r} was not offered for this request."})
            # Written before the item is finished, under the lock: the connection's thread closes
            # the connection only once the item is finished, so the answer is never lost to that
            # race, and a second answer can only ever see a finished item.
            try:
                _send(item.conn, {"op": "answer", "id": item.id, "digest": item.digest, "choice": choice},
                      item.send_lock)
            except OSError:
                self._finish_locked(item, "gone")
                return Answer(410, {"status": "gone", "outcome": "gone",
                                    "detail": "The Hermes process that asked has exited; the command was not run."})
            self._finish_locked(item, "answered", choice)
            self._recent[item.id]["by"] = (client or "")[:64]
        return Answer(200, {"status": "answered", "choice": choice})


def _resolve(fut) -> None:
    if not fut.done():
        fut.set_result(True)


_OUTCOMES = {
    "expired": "it timed out",
    "timeout": "it timed out",
    "transport_timeout": "it timed out",
    "interrupted": "the turn was interrupted",
    "transport_interrupted": "the turn was interrupted",
    "gone": "the process that asked has exited",
    "unwatched": "no Herald took it in time, so Hermes asked on its own prompt",
    "closed": "the Hermes dashboard stopped",
    "dropped": "too many notices",
}


def _say(outcome: str) -> str:
    if outcome.startswith("transport_"):
        return _OUTCOMES.get(outcome, "Hermes gave up on it (" + outcome[len("transport_"):] + ")")
    return _OUTCOMES.get(outcome, outcome)


# --------------------------------------------------------------------------------------------
# Process-wide state: the broker (dashboard process only), hook context, active transports
# --------------------------------------------------------------------------------------------

_state_lock = threading.Lock()
_broker: Broker | None = None
_contexts: "OrderedDict[str, dict]" = OrderedDict()    # request_id -> origin from the pre hook
_active: dict = {}                                     # request_id -> (sock, send_lock)
_notices: dict = {}                                    # (session_key, pattern_key, command) -> [handle]


def configured_grace() -> float:
    env = os.environ.get("HERALD_BRIDGE_GRACE_SECONDS", "").strip()
    if env:
        try:
            return max(0.0, float(env))
        except ValueError:
            pass
    try:
        from hermes_cli.config import load_config  # provided by Hermes
        cfg = load_config() or {}
        v = ((cfg.get("herald") or {}).get("grace_seconds"))
        if v is not None:
            return max(0.0, float(v))
    except Exception:
        pass
    return DEFAULT_GRACE


def ensure_broker(home: Path | None = None) -> Broker:
    """Start this process's broker (the dashboard's), once."""
    global _broker
    with _state_lock:
        if _broker is None:
            _broker = Broker(home).start()
            import atexit
            atexit.register(_broker.close)
        return _broker


def local_broker() -> Broker | None:
    return _broker


def _reset_for_tests(broker: Broker | None = None) -> None:
    global _broker
    with _state_lock:
        _broker = broker
        _contexts.clear()
        _active.clear()
        _notices.clear()


def _connect(home: Path | None = None, timeout: float = 2.0) -> socket.socket:
    path = socket_path(home)
    _private_dir(path.parent, create=False)
    _check_socket_file(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError as exc:
        sock.close()
        raise BridgeError(f"the Hermes dashboard does not answer on the Herald bridge ({exc.strerror or exc})")
    if not _same_user(sock):
        sock.close()
        raise BridgeError("the Herald bridge socket is served by another user; refusing it")
    return sock


# --------------------------------------------------------------------------------------------
# Origin: where an approval was asked
# --------------------------------------------------------------------------------------------

def _session_env(name: str) -> str:
    try:
        from gateway.session_context import get_session_env  # provided by Hermes
        return get_session_env(name, "") or ""
    except Exception:
        return os.environ.get(name, "") or ""


def _dashboard_session(session_key: str) -> tuple[str, str]:
    """(live session id, title) when session_key is a dashboard (/api/ws) session of this process."""
    srv = sys.modules.get("tui_gateway.server")
    if srv is None or not session_key:
        return "", ""
    try:
        with srv._sessions_lock:
            found = [(sid, s) for sid, s in srv._sessions.items() if s.get("session_key") == session_key]
        if not found:
            return "", ""
        sid, sess = found[0]
        title = ""
        try:
            title = srv._session_live_title(sess, session_key)
        except Exception:
            title = str(sess.get("pending_title") or "")
        return sid, title
    except Exception:
        return "", ""


def current_origin(surface: str, session_key: str) -> dict:
    """Session, platform and chat of the approval being asked on this thread."""
    platform = _session_env("HERMES_SESSION_PLATFORM")
    chat = _session_env("HERMES_SESSION_CHAT_NAME")
    origin = {"hermes_surface": surface or "", "session_key": session_key or ""}
    sid, title = _dashboard_session(session_key)
    if sid:
        origin["surface"] = "dashboard"
        origin["session_id"] = sid
        origin["process"] = "dashboard"
    elif platform and platform not in ("cli", "local"):
        origin["surface"] = platform
    elif surface == "cli" or (surface or "").startswith("transport") and not platform:
        origin["surface"] = "cli"
    else:
        origin["surface"] = platform or surface or "hermes"
    if platform:
        origin["platform"] = platform
    if chat:
        origin["chat"] = chat
    if title:
        origin["title"] = title
    return _clean_origin(origin)


# --------------------------------------------------------------------------------------------
# Observer hooks (every version)
# --------------------------------------------------------------------------------------------

class _NoticeHandle:
    def __init__(self, local: Broker | None, nid: str | None, sock: socket.socket | None):
        self.local, self.nid, self.sock = local, nid, sock

    def end(self, outcome: str) -> None:
        if self.local is not None and self.nid:
            self.local.end_notice(self.nid, outcome)
            return
        if self.sock is not None:
            try:
                _send(self.sock, {"op": "notice_end", "outcome": outcome})
            except OSError:
                pass
            finally:
                self.sock.close()


def _open_notice(notice: dict) -> _NoticeHandle | None:
    b = local_broker()
    if b is not None:
        item = b.add_notice(notice)
        return _NoticeHandle(b, item.id, None)
    try:
        sock = _connect(timeout=0.5)
    except BridgeError:
        return None  # no dashboard with the plugin: nothing to show
    try:
        _send(sock, {"op": "notice", "notice": notice})
        return _NoticeHandle(None, None, sock)
    except OSError:
        sock.close()
        return None


def on_pre_approval_request(command="", description="", pattern_key="", pattern_keys=(),
                            session_key="", surface="", request_id=None, request_digest=None, **_):
    """Observer hook: remember a transport request's context, or show a notice."""
    try:
        if surface == "smart":
            return None  # the auxiliary model decides; nobody is asked
        origin = current_origin(surface, session_key)
        if request_id:
            with _state_lock:
                _contexts[str(request_id)] = origin
                while len(_contexts) > MAX_PENDING * 2:
                    _contexts.popitem(last=False)
            return None
        notice = {"command": (command or "")[:MAX_TEXT], "description": (description or "")[:MAX_TEXT],
                  "pattern_key": (pattern_key or "")[:MAX_FIELD], "surface": surface or "", "origin": origin}
        handle = _open_notice(notice)
        if handle is not None:
            key = (session_key, pattern_key, command)
            with _state_lock:
                _notices.setdefault(key, []).append(handle)
    except Exception:
        log.debug("Herald bridge: pre_approval_request hook failed", exc_info=True)
    return None


def on_post_approval_response(command="", description="", pattern_key="", pattern_keys=(),
                              session_key="", surface="", choice="", request_id=None, **_):
    """Observer hook: end a notice, or stop waiting for Herald once Hermes has decided."""
    try:
        if request_id:
            with _state_lock:
                _contexts.pop(str(request_id), None)
                active = _active.pop(str(request_id), None)
            if active is not None:
                sock, lock = active
                try:
                    _send(sock, {"op": "cancel", "outcome": str(choice or "cancelled")}, lock)
                except OSError:
                    pass
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            return None
        key = (session_key, pattern_key, command)
        with _state_lock:
            handles = _notices.get(key)
            handle = handles.pop(0) if handles else None
            if handles == []:
                _notices.pop(key, None)
        if handle is not None:
            handle.end(str(choice or "answered"))
    except Exception:
        log.debug("Herald bridge: post_approval_response hook failed", exc_info=True)
    return None


# --------------------------------------------------------------------------------------------
# The approval transport (0.20.1+)
# --------------------------------------------------------------------------------------------

def present(request):
    """Hermes' approval transport: bring the request to Herald and return its answer.

    Raises BridgeError when no Herald takes the request within the grace period, so Hermes
    falls back as configured (``transport_fallback: builtin`` shows its own prompt).
    """
    rid = request.request_id
    with _state_lock:
        origin = _contexts.pop(rid, None)
    if origin is None:
        origin = current_origin(getattr(request, "surface", ""), "")
    wire = {
        "request_id": rid,
        "digest": request.digest,
        "command": request.command,
        "description": request.description,
        "pattern_key": request.pattern_key,
        "pattern_keys": list(request.pattern_keys),
        "surface": request.surface,
        "allowed_choices": list(request.allowed_choices),
        "timeout_seconds": float(request.timeout_seconds),
    }
    msg = {"op": "ask", "request": wire, "origin": origin}
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8")
    if len(data) >= MAX_LINE:
        raise BridgeError("the request is too large for the Herald bridge")
    deadline = time.monotonic() + float(request.timeout_seconds)
    sock = _connect()
    lock = threading.Lock()
    with _state_lock:
        _active[rid] = (sock, lock)
    try:
        _send(sock, msg, lock)
        lines = _Lines(sock)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                try:
                    _send(sock, {"op": "cancel", "outcome": "timeout"}, lock)
                except OSError:
                    pass
                raise BridgeError("Herald did not answer before Hermes' approval timeout")
            sock.settimeout(left)
            try:
                m = lines.read()
            except socket.timeout:
                continue
            if m is None:
                raise BridgeError("the Herald bridge closed before an answer")
            op = m.get("op")
            if op == "shown":
                continue
            if op == "answer":
                if m.get("id") != rid or m.get("digest") != request.digest:
                    raise BridgeError("the Herald bridge answered another request; refusing it")
                return request.respond(str(m.get("choice")))
            if op == "refused":
                raise BridgeError(str(m.get("reason") or "refused")[:200])
            if op in ("expired", "cancelled"):
                raise BridgeError(f"the request {op} before Herald answered")
    finally:
        with _state_lock:
            _active.pop(rid, None)
        try:
            sock.close()
        except OSError:
            pass
