"""What every `likekit.LikeError` carries — `code`, `is_transient`,
`status`, `retry_after_ms`, `reason` — for real errors: the server's
answers, its fault rules, and the client's own refusals."""

import asyncio
import copy
import pickle

import pytest

import likekit
from conftest import FAST_RETRY, Recorder
from likekit_admin import FaultRoute, FaultRule, Malformed, Status

# One answer, one error: no retries, so that each case is one call.
NO_RETRY = likekit.LikeClientOptions(max_retries=0)


def fields(error):
    """What an app reads on any LikeError: (code, is_transient, status, retry_after_ms)."""
    return error.code, error.is_transient, error.status, error.retry_after_ms


def check(error, variant, expected):
    """The variant and the fields, and the reason as `str()`."""
    assert type(error) is variant, repr(error)
    assert fields(error) == expected, repr(error)
    assert error.reason and str(error) == error.reason, repr(error)


def raised(call):
    """The LikeError `call` raises."""
    with pytest.raises(likekit.LikeError) as caught:
        call()
    return caught.value


def test_an_unknown_post_is_not_found_post_not_found_not_transient(admin, make_client):
    client = make_client(NO_RETRY)
    error = raised(lambda: asyncio.run(client.refresh(admin.next_id())))
    # The variant stands for the 404: `status` is only for Server and Rejected.
    check(error, likekit.LikeError.NotFound, ("post_not_found", False, 404, None))
    assert "not found" in error.reason


# An answer every read of a post gets: the variant and fields it becomes.
ANSWERS = {
    "503, the mock's error body": (Status(503), likekit.LikeError.Server, ("injected_fault", True, 503, None)),
    "503 without an error body": (Status(503, body="down"), likekit.LikeError.Server, ("http_503", True, 503, None)),
    "429, Retry-After 7": (
        Status(429, retry_after_secs=7),
        likekit.LikeError.RateLimited,
        ("rate_limited", True, 429, 7000),
    ),
    "400 bad_query": (
        Status(400, body={"error": {"code": "bad_query", "message": "posts= is empty"}}),
        likekit.LikeError.Rejected,
        ("bad_query", False, 400, None),
    ),
    "403": (Status(403), likekit.LikeError.Forbidden, ("forbidden", False, 403, None)),
    "malformed 200": (Malformed(), likekit.LikeError.InvalidResponse, ("invalid_response", True, None, None)),
}


@pytest.mark.parametrize("answer", ANSWERS)
def test_an_answer_becomes_its_variant_and_fields(admin, faults, make_client, answer):
    action, variant, expected = ANSWERS[answer]
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKES, post=post, action=action))
    client = make_client(NO_RETRY)
    for _ in range(2):  # every read gets it
        check(raised(lambda: asyncio.run(client.refresh(post))), variant, expected)


def test_a_tap_failing_on_a_429_storm_reports_retry_after(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, post=post, action=Status(429, retry_after_secs=5)))
    client = make_client(NO_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    _, _, error, _ = rec.await_failure(timeout=10)
    check(error, likekit.LikeError.RateLimited, ("rate_limited", True, 429, 5000))
    rec.await_change(lambda v: not v.liked and not v.pending)
    check(client.view(post).error, likekit.LikeError.RateLimited, ("rate_limited", True, 429, 5000))
    sub.cancel()


def test_a_tap_failing_on_503s_past_its_retries_reports_status_503(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, post=post, action=Status(503)))
    client = make_client(FAST_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    _, _, error, _ = rec.await_failure(timeout=10)
    check(error, likekit.LikeError.Server, ("injected_fault", True, 503, None))
    assert client.stats().retries == 2, "transient: retried"
    sub.cancel()


def test_errors_and_views_holding_them_compare_by_variant_and_fields(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, post=post, action=Status(429, retry_after_secs=5)))
    client = make_client(NO_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    _, _, heard, _ = rec.await_failure(timeout=10)
    rec.await_change(lambda v: not v.liked and not v.pending)
    sub.cancel()
    first, second = client.view(post), client.view(post)
    assert first.error is not second.error, "each read makes its own error object"
    assert first == second, (first, second)
    assert first.error == second.error == heard
    assert hash(first.error) == hash(second.error) == hash(heard)
    assert len({first.error, second.error, heard}) == 1

    same_fields = ("limited", "rate_limited", True, 429, 5000)
    assert likekit.LikeError.RateLimited(*same_fields) == likekit.LikeError.RateLimited(*same_fields)
    assert likekit.LikeError.RateLimited(*same_fields) != likekit.LikeError.Server(*same_fields), "variant"
    assert likekit.LikeError.RateLimited(*same_fields) != likekit.LikeError.RateLimited(
        "limited", "rate_limited", True, 429, 6000
    ), "a field"
    assert heard != "rate_limited" and heard is not None


def test_errors_and_views_holding_them_copy_and_pickle_whole(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, post=post, action=Status(503)))
    client = make_client(NO_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    _, _, heard, _ = rec.await_failure(timeout=10)
    rec.await_change(lambda v: not v.liked and not v.pending)
    sub.cancel()
    view = client.view(post)
    copied = copy.deepcopy(view)
    assert copied == view and copied.error is not view.error
    for error in [heard, view.error, likekit.LikeError.Config("no URL", "config", False, None, None)]:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and again == error, (again, error)
        assert str(again) == error.reason and repr(again) == repr(error)
    assert str(heard) == heard.reason and "503" in heard.reason, heard.reason


def test_no_answer_in_time_is_timeout(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKES, post=post, latency_ms=3000))
    client = make_client(likekit.LikeClientOptions(max_retries=0, request_timeout_ms=300))
    check(raised(lambda: asyncio.run(client.refresh(post))), likekit.LikeError.Timeout, ("timeout", True, None, None))


def test_a_server_nobody_listens_on_is_network():
    client = likekit.LikeClient("http://127.0.0.1:1", None, NO_RETRY)
    try:
        check(raised(lambda: asyncio.run(client.refresh(42))), likekit.LikeError.Network, ("network", True, None, None))
    finally:
        asyncio.run(client.shutdown(1_000))


def test_no_token_is_unauthorized(admin, make_client):
    client = make_client(NO_RETRY, tokens=None)
    error = raised(lambda: asyncio.run(client.refresh(admin.post())))
    check(error, likekit.LikeError.Unauthorized, ("unauthorized", False, 401, None))


@pytest.mark.parametrize("bad", [0, -1])
def test_a_bad_id_is_invalid_id_bad_post_id_without_status(make_client, bad):
    error = raised(lambda: make_client().toggle(bad))
    check(error, likekit.LikeError.InvalidId, ("bad_post_id", False, None, None))
    assert error.reason == f"post ids are whole numbers from 1 to 9223372036854775807; got {bad}"


def test_a_bad_base_url_is_config():
    error = raised(lambda: likekit.LikeClient("not a url", None, likekit.LikeClientOptions()))
    check(error, likekit.LikeError.Config, ("config", False, None, None))
    assert "base URL" in error.reason


def test_after_shutdown_calls_are_shutdown(admin, make_client):
    client = make_client()
    assert asyncio.run(client.shutdown(1_000))
    error = raised(lambda: asyncio.run(client.refresh(admin.post())))
    check(error, likekit.LikeError.Shutdown, ("shutdown", False, None, None))


def test_an_app_can_branch_on_the_variant_or_on_the_fields(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKES, post=post, action=Status(429, retry_after_secs=3)))
    client = make_client(NO_RETRY)
    try:
        asyncio.run(client.refresh(post))
    except likekit.LikeError.RateLimited as error:
        assert error.retry_after_ms == 3000
    else:
        raise AssertionError("no RateLimited")
    try:
        asyncio.run(client.refresh(post))
    except likekit.LikeError as error:
        assert (error.code, error.is_transient) == ("rate_limited", True)
        assert repr(error).startswith("LikeError.RateLimited(reason='rate limited by the server'")
    else:
        raise AssertionError("no LikeError")


def test_the_documented_error_api_type_checks(tmp_path):
    """An app's own mypy sees the five fields on every `LikeError` and each
    variant to catch (the generated module defines `LikeError` twice, and a
    type checker reads only the first: before, `error.code` and
    `except LikeError.NotFound` were mypy errors)."""
    import os
    import subprocess
    import sys

    app = tmp_path / "app.py"
    app.write_text(
        "import likekit\n"
        "\n"
        "def shown(error: likekit.LikeError) -> str:\n"
        "    return f'{error.code} {error.reason} {error.is_transient} {error.status} {error.retry_after_ms}'\n"
        "\n"
        "def tap(client: likekit.LikeClient) -> None:\n"
        "    try:\n"
        "        client.set_liked(1, True)\n"
        "    except likekit.LikeError.NotFound as missing:\n"
        "        print(shown(missing))\n"
        "    except likekit.LikeError.RateLimited as limited:\n"
        "        wait: int | None = limited.retry_after_ms\n"
        "        print(wait)\n"
        "    except likekit.LikeError as error:\n"
        "        print(shown(error), error.code.upper())\n"
    )
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", os.devnull, str(app)],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": os.path.dirname(likekit.__file__)},
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
