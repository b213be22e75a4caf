"""Herald's dashboard routes, mounted by Hermes under /api/plugins/herald/.

Importing this file is what makes a process the dashboard role: it starts the broker that owns
the private channel in $HERMES_HOME/herald/. Every route sits behind the dashboard's own auth
(the session token, or the login cookie when the dashboard requires login) and checks it again
here, so a change in Hermes' middleware cannot open it.

    GET  v1/status                           the bridge's state
    GET  v1/poll?instance=&cursor=&client=&wait=
                                             long-poll: every waiting approval and notice, once
                                             something changed after cursor (or wait seconds)
    POST v1/answer {id, digest, choice, client}
                                             answer one approval; the first answer wins
"""

import asyncio
import importlib.util
import json
import signal
import sys
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

_CORE = "herald_bridge_core"


def _load_core():
    mod = sys.modules.get(_CORE)
    if mod is None:
        spec = importlib.util.spec_from_file_location(_CORE, Path(__file__).resolve().parent.parent / "herald_core.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[_CORE] = mod
        spec.loader.exec_module(mod)
    return mod


core = _load_core()
router = APIRouter()
_broker_error = ""
try:
    core.ensure_broker()
except Exception as exc:  # the route still answers, and says why the bridge is off
    _broker_error = str(exc)
    core.log.warning("Herald bridge: %s", exc)

_MAX_BODY = 4096


def _authorized(request: Request) -> bool:
    """The dashboard's own credentials, checked again: the token (loopback dashboards) or an
    authenticated login (dashboards that require login)."""
    ws = sys.modules.get("hermes_cli.web_server")
    if ws is None:
        return False
    if getattr(request.state, "token_authenticated", False):
        return True
    if getattr(request.app.state, "auth_required", False):
        # The login gate ran before us and let this request through.
        return getattr(request.state, "session", None) is not None
    check = getattr(ws, "_has_valid_session_token", None)
    return bool(check is not None and check(request))


def _server_exiting(loop) -> bool:
    """Whether the web server is shutting down (uvicorn's should_exit), so a long-poll lets go at
    once: uvicorn waits for open requests before it exits. Best effort: uvicorn installs its exit
    handler with signal.signal (recent) or on the event loop (older); otherwise the poll's own
    bound (POLL_WAIT_MAX) applies."""
    handlers = [signal.getsignal(signal.SIGTERM)]
    h = getattr(loop, "_signal_handlers", {}).get(signal.SIGTERM)
    if h is not None:
        handlers.append(getattr(h, "_callback", None))
    for handler in handlers:
        server = getattr(handler, "__self__", None)
        if getattr(server, "should_exit", False):
            return True
    return False


def _refuse() -> JSONResponse:
    return JSONResponse(status_code=401, content={"detail": "Unauthorized"})


def _broker():
    b = core.local_broker()
    if b is None:
        return None, JSONResponse(status_code=503, content={
            "status": "off", "detail": f"The Herald bridge is off in this dashboard: {_broker_error or 'not started'}"})
    return b, None


@router.get("/v1/status")
async def status(request: Request):
    if not _authorized(request):
        return _refuse()
    b, err = _broker()
    if err is not None:
        return err
    state = b.poll_state()
    return {"status": "on", "protocol": core.PROTOCOL, "instance": state["instance"],
            "pending": len(state["items"]), "watchers": state["watchers"], "grace_seconds": b.grace,
            "transport": callable(getattr(core, "present", None))}


@router.get("/v1/poll")
async def poll(request: Request, instance: str = "", cursor: int = 0, client: str = "", wait: float = 0):
    if not _authorized(request):
        return _refuse()
    b, err = _broker()
    if err is not None:
        return err
    b.observe(client, instance, cursor)
    wait = max(0.0, min(float(wait), core.POLL_WAIT_MAX))
    if wait > 0 and not b.changed(instance, cursor):
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        if not b.add_waiter(loop, fut):
            return JSONResponse(status_code=429, content={"detail": "Too many Herald connections to this dashboard."})
        try:
            # In slices, so a Herald that went away ends its poll at once and never holds up
            # the dashboard's shutdown (uvicorn waits for open requests).
            deadline = loop.time() + wait
            while not fut.done() and not b.changed(instance, cursor):
                left = deadline - loop.time()
                if left <= 0:
                    break
                try:
                    await asyncio.wait_for(asyncio.shield(fut), min(left, 0.5))
                except asyncio.TimeoutError:
                    if _server_exiting(loop) or await request.is_disconnected():
                        break
        finally:
            b.remove_waiter(fut)
    return b.poll_state()


@router.post("/v1/answer")
async def answer(request: Request):
    if not _authorized(request):
        return _refuse()
    b, err = _broker()
    if err is not None:
        return err
    # JSON only: a browser cannot send that cross-site without a preflight the dashboard refuses.
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return JSONResponse(status_code=415, content={"status": "invalid", "detail": "Send the answer as application/json."})
    if int(request.headers.get("content-length") or 0) > _MAX_BODY:
        return JSONResponse(status_code=413, content={"status": "invalid", "detail": "The answer is too large."})
    body = await request.body()
    if len(body) > _MAX_BODY:
        return JSONResponse(status_code=413, content={"status": "invalid", "detail": "The answer is too large."})
    try:
        data = json.loads(body or b"{}")
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return JSONResponse(status_code=400, content={"status": "invalid", "detail": "The answer is not a JSON object."})
    res = b.answer(data.get("id"), data.get("digest"), data.get("choice"), str(data.get("client") or ""))
    return JSONResponse(status_code=res.status, content=res.body)
