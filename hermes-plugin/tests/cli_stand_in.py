"""Stands in for a Hermes CLI process, for Herald's Go end-to-end tests (integration/bridge_test.go).

It runs the plugin's approval transport through Hermes' REAL invoke_approval_transport
(../shared/hermes-peer-extra), reaching the dashboard's broker through the private socket in
$HERMES_HOME, exactly as a CLI process of that profile would.

stdin, one per line:  ask COMMAND
stdout:               ASKED <request id>
                      RESULT <request id> <choice> <failure or -> <wall clock at return, ns>
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import support  # noqa: E402


def main():
    h = support.host()
    core = support.core()
    timeout = float(os.environ.get("HERALD_STAND_IN_TIMEOUT", "60"))
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("ask "):
            continue
        command = line[4:]

        def asked(request):
            print("ASKED", request.request_id, flush=True)

        request, result = support.host_present(h, core, command=command, session_key="cli-session-1",
                                               timeout=timeout, on_request=asked)
        import time
        print("RESULT", request.request_id, result.choice, result.failure or "-", time.time_ns(), flush=True)


if __name__ == "__main__":
    main()
