"""A program that exits while LikeKit still works in the background exits
cleanly. CPython ends a thread that calls into the interpreter while it is
finalizing, and one of LikeKit's runtime threads ended that way aborts the
process; the module stops its runtime from an `atexit` hook instead, before
the interpreter finalizes. Each case runs in a child process of its own,
since stopping the runtime is for good."""

import os
import subprocess
import sys

import likekit
from likekit_admin import FaultRoute, FaultRule

# Taps, then exits while the like's answer is held by the server. A module
# global whose __del__ sleeps keeps the interpreter finalizing past the
# moment the answer lands (module globals are cleared in the order they
# were made, so it goes before the client): the answer would then reach
# the observer from a runtime thread.
EXITS_WHILE_A_CALL_IS_OUT = r"""
import sys, time, likekit
url, token, post = sys.argv[1:4]

class SlowExit:
    def __del__(self):
        time.sleep(1.0)

keeper = SlowExit()

class Token(likekit.TokenProvider):
    def token(self, refresh):
        return token

class Quiet(likekit.LikeObserver):
    def on_change(self, view):
        pass

    def on_failure(self, post_id, wanted, error):
        pass

client = likekit.LikeClient(url, Token())
subscription = client.subscribe(int(post), Quiet())
client.set_liked(int(post), True)
print("tapped", flush=True)
"""

# Stops the runtime by hand, then asks for a client.
STOPS_THE_RUNTIME = r"""
import sys, likekit
url, token = sys.argv[1:3]

class Token(likekit.TokenProvider):
    def token(self, refresh):
        return token

likekit.stop_runtime(1000)
likekit.stop_runtime(1000)  # again: nothing more happens
try:
    likekit.LikeClient(url, Token())
except likekit.LikeError.Config as error:
    print("config:", error, flush=True)
"""


def run_child(program, *args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.dirname(likekit.__file__), *sys.path, env.get("PYTHONPATH", "")] if p
    )
    return subprocess.run(
        [sys.executable, "-c", program, *map(str, args)],
        capture_output=True,
        env=env,
        timeout=60,
    )


def test_exiting_while_an_answer_is_on_its_way_exits_cleanly(admin, viewer):
    post = admin.post()
    admin.set_faults([FaultRule(FaultRoute.LIKE, post=post, latency_ms=300)])
    try:
        child = run_child(EXITS_WHILE_A_CALL_IS_OUT, admin.url, admin.token(viewer[0]), post)
    finally:
        admin.clear_faults()
    stderr = child.stderr.decode(errors="replace")
    assert child.returncode == 0, f"exit status {child.returncode}: {stderr}"
    assert child.stdout.decode().strip() == "tapped"
    assert "FATAL" not in stderr and "panicked" not in stderr, stderr


def test_after_stop_runtime_a_new_client_is_a_config_error(admin, viewer):
    child = run_child(STOPS_THE_RUNTIME, admin.url, admin.token(viewer[0]))
    stderr = child.stderr.decode(errors="replace")
    assert child.returncode == 0, f"exit status {child.returncode}: {stderr}"
    out = child.stdout.decode()
    assert out.startswith("config:") and "stop_runtime" in out, out
