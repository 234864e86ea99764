"""The conformance suite, `sdk-core/conformance/scenarios.json`, replayed
through the generated Python module: each scenario on a client over a
`ScriptedServer`, as `run_on_client` in `sdk-core/tests/conformance.rs`
does it. `cargo xtask test` passes the file's path as LIKEKIT_CONFORMANCE.

Each step's view, events and calls are compared exactly with what the step
expects; a mismatch names the scenario, the step and what differed. The
last test changes one expected count and checks that the runner reports it,
so a runner that compares nothing cannot pass.
"""

import asyncio
import copy
import json
import os
import threading
import time

import pytest

import likekit

# How long the runner waits for an expected view, event or call, in seconds.
SETTLE = 2.0
SETTLE_MS = int(SETTLE * 1000)

_PATH = os.environ.get("LIKEKIT_CONFORMANCE")
_UNSET = "LIKEKIT_CONFORMANCE is not set: it names sdk-core/conformance/scenarios.json (run `cargo xtask test --only python`)"


def _load(path):
    with open(path, encoding="utf-8") as f:
        suite = json.load(f)
    assert suite.get("format") == 1, f"{path}: format {suite.get('format')!r}, expected 1"
    return suite["scenarios"]


SCENARIOS = _load(_PATH) if _PATH else None


def scenarios():
    """The scenarios of the file, or the test fails saying the variable is unset."""
    if SCENARIOS is None:
        pytest.fail(_UNSET, pytrace=False)
    return SCENARIOS


class Mismatch(AssertionError):
    """A step did not do what its scenario expects."""


def canonical(value):
    """`value` as one string, so that comparing two is exact as JSON values
    are (true is not 1, key order does not matter)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def same(a, b):
    return canonical(a) == canonical(b)


def show(value):
    return json.dumps(value, ensure_ascii=False)


def view_json(view):
    """A view as the scenarios write it."""
    if view is None:
        return None
    return {
        "post": view.post_id,
        "liked": view.liked,
        "count": view.count,
        "pending": view.pending,
        "line": view.line.text,
        "error": None if view.error is None else view.error.code,
    }


class Heard(likekit.LikeObserver):
    """Every event the observers hear, as the scenarios write it, in order."""

    def __init__(self):
        self._lock = threading.Lock()
        self._events = []

    def on_change(self, view):
        with self._lock:
            self._events.append({"changed": view_json(view)})

    def on_failure(self, post_id, wanted, error):
        with self._lock:
            self._events.append({"failed": {"post": post_id, "wanted": wanted, "error": error.code}})

    def count(self):
        with self._lock:
            return len(self._events)

    def since(self, taken):
        with self._lock:
            return list(self._events[taken:])


def scripted_failure(failure):
    if isinstance(failure, str):
        kinds = {
            "network": likekit.ScriptedFailure.NETWORK,
            "timeout": likekit.ScriptedFailure.TIMEOUT,
            "unreadable": likekit.ScriptedFailure.UNREADABLE,
        }
        if failure not in kinds:
            raise ValueError(f"unknown failure {failure!r}")
        return kinds[failure]()
    return likekit.ScriptedFailure.STATUS(
        status=failure["status"],
        retry_after_ms=failure.get("retry_after_ms"),
        code=failure.get("code"),
    )


def check(scenario, index, step, view, events, calls):
    wrong = []
    if not same(view, step["view"]):
        wrong.append(f"view: expected {show(step['view'])} got {show(view)}")
    if not same(events, step["events"]):
        wrong.append(f"events: expected {show(step['events'])} got {show(events)}")
    if not same(calls, step["calls"]):
        wrong.append(f"calls: expected {show(step['calls'])} got {show(calls)}")
    if wrong:
        raise Mismatch(f"scenario {show(scenario['name'])}, step {index}: " + "; ".join(wrong))


def settle_view(client, post, expected):
    """The post's view once it is `expected`, or as it is after SETTLE."""
    deadline = time.monotonic() + SETTLE
    while True:
        view = view_json(client.view(post))
        if same(view, expected) or time.monotonic() >= deadline:
            return view
        time.sleep(0.001)


def run(scenario):
    """Replays `scenario` on a client over a ScriptedServer; raises Mismatch
    at the first step that differs."""
    server = likekit.ScriptedServer()
    options = likekit.LikeClientOptions(
        retry_min_delay_ms=1,
        retry_max_delay_ms=1,
        retry_jitter=False,
        max_retries=scenario.get("max_retries", 0),
    )
    client = likekit.LikeClient.scripted(server, options)
    heard = Heard()
    subscription = client.subscribe_all(heard)
    posts = {}  # call number -> its post
    taken = 0
    try:
        for index, step in enumerate(scenario["steps"]):
            where = f"scenario {show(scenario['name'])}, step {index}"
            act = step["do"]
            if act == "read":
                post, likes = step["post"], step["likes"]
                server.set_post(post, likes["count"], likes["liked_by_me"], likes["friends"], likes["version"])
                try:
                    view = view_json(asyncio.run(client.refresh(post)))
                except likekit.LikeError as error:
                    raise Mismatch(f"{where}: refresh({post}) raised {error!r}") from error
            elif act == "tap":
                view = view_json(client.set_liked(step["post"], step["liked"]))
            elif act in ("answer", "fail"):
                call = step["call"]
                if call not in posts:
                    raise Mismatch(f"{where}: call #{call} was never out")
                if act == "answer":
                    state = step["state"]
                    done = server.answer(call, state["count"], state["liked_by_me"], state["version"])
                else:
                    done = server.fail(call, scripted_failure(step["failure"]))
                if not done:
                    raise Mismatch(f"{where}: call #{call} is not waiting")
                view = settle_view(client, posts[call], step["view"])
            else:
                raise ValueError(f"{where}: unknown step {act!r}")

            # The expected events, or as many as come within SETTLE; then the
            # expected calls, or what is out after SETTLE.
            deadline = time.monotonic() + SETTLE
            while heard.count() < taken + len(step["events"]) and time.monotonic() < deadline:
                time.sleep(0.001)
            while True:
                calls = [c.text for c in server.calls()]
                if calls == step["calls"] or time.monotonic() >= deadline:
                    break
                time.sleep(0.001)
            for c in server.calls():
                posts[c.id] = c.post_id
            if not calls:
                # Nothing is out: once idle, every event has been heard.
                asyncio.run(client.wait_idle(SETTLE_MS))
            events = heard.since(taken)
            taken += len(events)
            if act in ("answer", "fail"):
                # The first look may have been the view from before the answer.
                view = view_json(client.view(posts[step["call"]]))
            check(scenario, index, step, view, events, calls)
    finally:
        subscription.cancel()
        # Ends any call a failed scenario left out, so nothing outlives it.
        asyncio.run(client.shutdown(100))


@pytest.mark.parametrize(
    "scenario",
    SCENARIOS if SCENARIOS is not None else [None],
    ids=[s["name"] for s in SCENARIOS] if SCENARIOS is not None else ["LIKEKIT_CONFORMANCE unset"],
)
def test_scenario(scenario):
    scenarios()
    run(scenario)


def with_a_wrong_count():
    """The first scenario with one expected count changed: the last step's
    whose view has a count. Returns it and that step's index."""
    scenario = copy.deepcopy(scenarios()[0])
    index = max(i for i, s in enumerate(scenario["steps"]) if isinstance(s["view"], dict) and "count" in s["view"])
    scenario["steps"][index]["view"]["count"] += 1
    return scenario, index


def test_the_runner_fails_a_changed_expectation():
    scenario, index = with_a_wrong_count()
    with pytest.raises(Mismatch) as raised:
        run(scenario)
    message = str(raised.value)
    assert f"scenario {show(scenario['name'])}, step {index}: " in message, message
    assert "view: expected" in message, message
    assert show(scenario["steps"][index]["view"]) in message, message
