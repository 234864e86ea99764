"""A process forked from one that has used LikeKit (Python's
`multiprocessing` with its default start method on Linux, a pre-forking
server such as gunicorn `--preload`, Celery's prefork pool): the child's
own clients work. The parent's runtime threads are not in the child, so
LikeKit starts one of the child's own."""

import asyncio
import json
import os
import signal
import time

import pytest

import likekit
from conftest import FAST_RETRY, FixedToken

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")


def run_forked(child):
    """Runs `child()` in a forked process; returns what it returned (as
    JSON), or fails if it raised or never ended."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        os.close(read_end)
        try:
            outcome = {"ok": child()}
        except BaseException as error:  # noqa: BLE001 - reported to the parent
            outcome = {"error": repr(error)}
        with os.fdopen(write_end, "w") as out:
            json.dump(outcome, out)
        os._exit(0)
    os.close(write_end)
    # A bound for a child that hangs (the bug this guards against), not a
    # speed target: the child's calls take milliseconds.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read_end)
        pytest.fail("the forked child never ended: a LikeKit call hung")
    with os.fdopen(read_end) as answer:
        outcome = json.load(answer)
    assert "error" not in outcome, outcome["error"]
    return outcome["ok"]


def test_a_forked_child_makes_clients_that_work(admin):
    user = admin.user("Fay")
    post = admin.post()
    token = admin.token(user)
    # The parent uses LikeKit first: its runtime is running when it forks.
    parent = likekit.LikeClient(admin.url, FixedToken(token), FAST_RETRY)
    assert asyncio.run(parent.refresh(post)).count == 0

    def child():
        client = likekit.LikeClient(admin.url, FixedToken(token), FAST_RETRY)
        client.set_liked(post, True)
        idle = asyncio.run(client.wait_idle(10_000))
        view = asyncio.run(client.refresh(post))
        return [idle, view.liked, view.count]

    assert run_forked(child) == [True, True, 1]
    # The parent's client goes on working.
    view = asyncio.run(parent.refresh(post))
    assert (view.liked, view.count) == (True, 1)
    del parent
