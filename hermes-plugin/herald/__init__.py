"""Hermes plugin ``herald``: every approval on this profile reaches Herald.

See herald_core.py for the roles, and Herald's README ("Bridge: approvals from every surface").
"""

import importlib.util
import sys
from pathlib import Path

_CORE = "herald_bridge_core"


def load_core():
    """herald_core.py, loaded once per process under one name so the dashboard route and the
    hooks share one broker."""
    mod = sys.modules.get(_CORE)
    if mod is None:
        spec = importlib.util.spec_from_file_location(_CORE, Path(__file__).with_name("herald_core.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[_CORE] = mod
        spec.loader.exec_module(mod)
    return mod


def register(ctx):
    core = load_core()
    ctx.register_hook("pre_approval_request", core.on_pre_approval_request)
    ctx.register_hook("post_approval_response", core.on_post_approval_response)
    # Approval transports exist from Hermes 0.20.1; older versions get notices only.
    register_transport = getattr(ctx, "register_approval_transport", None)
    if callable(register_transport):
        register_transport("herald", core.present)
