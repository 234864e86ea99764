"""An async token provider (`likekit.AsyncTokenProvider`): awaited before
each request on the app's event loop, asked again after a 401."""

import asyncio
import dataclasses
import os
import sys
import threading

import pytest

import likekit
from conftest import FAST_RETRY, Recorder
from likekit_admin import AsyncAdmin, FaultRoute, FaultRule


@pytest.fixture
def event_loop_thread():
    """An event loop running in its own thread, given to LikeKit for async
    providers (LikeKit asks from its own threads), and taken back after."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="app-loop", daemon=True)
    thread.start()
    likekit.uniffi_set_event_loop(loop)
    try:
        yield loop
    finally:
        likekit.uniffi_set_event_loop(None)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


class Renewing(likekit.AsyncTokenProvider):
    """Starts with a token that expired an hour ago; renews (after a delay,
    as over the network) when asked to."""

    def __init__(self, admin, user_id):
        self.admin = admin
        self.user_id = user_id
        self.current = admin.mint_token(user_id, valid_from_secs=-7200)
        self.asked = []
        self.threads = []

    async def token(self, refresh):
        self.asked.append(refresh)
        self.threads.append(threading.current_thread().name)
        if refresh:
            await asyncio.sleep(0.02)
            self.current = self.admin.token(self.user_id)
        return self.current


def test_an_async_provider_renews_after_a_401_and_the_like_saves(admin, event_loop_thread):
    user = admin.user("Renee")
    post = admin.post()
    tokens = Renewing(admin, user)
    client = likekit.LikeClient.with_async_token_provider(admin.url, tokens, FAST_RETRY)
    recorder = Recorder()
    subscription = client.subscribe(post, recorder)
    try:
        client.set_liked(post, True)
        confirmed = recorder.await_change(lambda view: not view.pending, timeout=10)[0]
        assert confirmed.liked and confirmed.count == 1 and confirmed.error is None, confirmed
        assert tokens.asked[:2] == [False, True], tokens.asked
        assert set(tokens.threads) == {"app-loop"}, "awaited on the app's loop"
        status, body = admin.as_viewer("GET", f"/posts/{post}/likes", admin.token(user))
        assert (status, body["liked_by_me"], body["count"]) == (200, True, 1), body
    finally:
        subscription.cancel()
        del client


def test_a_provider_call_is_let_go_of_without_touching_the_loop_from_another_thread(admin, event_loop_thread):
    """Once a provider's answer is taken, LikeKit lets its call go from its
    own thread: that must not use the loop's non-thread-safe API, which a
    loop in debug mode (`python -X dev`) refuses."""
    event_loop_thread.call_soon_threadsafe(event_loop_thread.set_debug, True)
    unraisable = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        user = admin.user("Dev")
        post = admin.post()

        class Fixed(likekit.AsyncTokenProvider):
            async def token(self, refresh):
                return admin.token(user)

        client = likekit.LikeClient.with_async_token_provider(admin.url, Fixed(), FAST_RETRY)
        for _ in range(3):
            view = asyncio.run(client.refresh(post))
            assert view.error is None and view.count == 0, view
        del client
    finally:
        sys.unraisablehook = hook
    assert [repr(u.exc_value) for u in unraisable] == []


def test_a_loop_given_for_providers_does_not_take_over_awaits(make_client, admin):
    """`uniffi_set_event_loop` is for LikeKit's own threads: a coroutine is
    awaited on the loop running it, so once the given loop has closed (the
    next `asyncio.run`, the next test's loop), awaits still work."""
    post = admin.post()
    client = make_client()

    async def first():
        likekit.uniffi_set_event_loop(asyncio.get_running_loop())
        return (await client.refresh(post)).count

    async def second():
        return (await client.refresh(post)).count

    try:
        assert asyncio.run(first()) == 0
        assert asyncio.run(second()) == 0, "awaited on the loop running it"
    finally:
        likekit.uniffi_set_event_loop(None)


def test_a_slow_provider_delays_only_its_own_requests(make_client, admin):
    """A synchronous provider that blocks (a keychain, a renewal over the
    network) holds only the requests that asked it, and those only until
    their request timeout: another client's read goes through meanwhile,
    on the same shared runtime."""
    posts = [admin.post() for _ in range(3)]
    release = threading.Event()
    waiting = threading.Semaphore(0)

    class Blocking(likekit.TokenProvider):
        def __init__(self, token):
            self.token_value = token

        def token(self, refresh):
            waiting.release()
            release.wait(30)
            return self.token_value

    token = admin.token(admin.user("Slow"))
    slow = make_client(likekit.LikeClientOptions(request_timeout_ms=500), tokens=Blocking(token))
    fast = make_client()

    async def scenario():
        # Two reads hold the slow provider: as many as the runtime has workers.
        held = [asyncio.ensure_future(slow.refresh(post)) for post in posts[:2]]
        try:
            for _ in held:
                assert await asyncio.to_thread(waiting.acquire, True, 10), "the slow provider was asked"
            view = await asyncio.wait_for(fast.refresh(posts[2]), 10)
            assert view.count == 0
            # The provider still blocks: its reads end at their request timeout.
            outcomes = await asyncio.gather(*held, return_exceptions=True)
        finally:
            release.set()
        return [type(outcome) for outcome in outcomes]

    assert asyncio.run(scenario()) == [likekit.LikeError.Timeout] * 2


def like_is_unauthorized(client, post):
    """Likes `post` with `client` and waits for the like to fail: the
    failure's error, checked to be `Unauthorized`."""
    recorder = Recorder()
    subscription = client.subscribe(post, recorder)
    try:
        client.set_liked(post, True)
        _post, wanted, error, _thread = recorder.await_failure(timeout=10)
        assert wanted is True
        assert type(error) is likekit.LikeError.Unauthorized, repr(error)
        return error
    finally:
        subscription.cancel()


def test_an_async_provider_that_gives_up_is_unauthorized(admin, event_loop_thread):
    class GiveUp(likekit.AsyncTokenProvider):
        async def token(self, refresh):
            return None if refresh else "not-a-token"

    client = likekit.LikeClient.with_async_token_provider(admin.url, GiveUp(), FAST_RETRY)
    assert like_is_unauthorized(client, admin.post()).status == 401


class LockedKeychain(likekit.TokenProvider):
    """A token provider that always throws."""

    def token(self, refresh):
        raise RuntimeError("the keychain is locked (expected in this test)")


class LockedKeychainAsync(likekit.AsyncTokenProvider):
    """An async token provider that always throws."""

    async def token(self, refresh):
        raise RuntimeError("the keychain is locked (expected in this test)")


def client_with_a_locked_keychain(admin, kind, options):
    """A client whose token provider (sync or async, by `kind`) throws, and
    the name LikeKit gives that provider."""
    if kind == "sync":
        return likekit.LikeClient(admin.url, LockedKeychain(), options), "a TokenProvider"
    client = likekit.LikeClient.with_async_token_provider(admin.url, LockedKeychainAsync(), options)
    return client, "an AsyncTokenProvider"


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_provider_that_throws_gives_no_token_and_one_line(admin, event_loop_thread, capfd, kind):
    client, what = client_with_a_locked_keychain(admin, kind, FAST_RETRY)
    like_is_unauthorized(client, admin.post())
    err = capfd.readouterr().err
    assert f"likekit: {what} threw:" in err, err
    assert "the keychain is locked" in err, err
    assert "panicked" not in err, err
    # The line alone: no traceback printed besides it (the generated code
    # printed one for an async provider).
    assert "Traceback" not in err and "UniFFI" not in err, err


class Heard(likekit.CallbackErrorListener):
    """A callback error listener that keeps what it hears, and throws too
    when told to."""

    def __init__(self, throws=False):
        self.heard = []
        self.throws = throws
        self.event = threading.Event()

    def on_callback_error(self, callback, reason):
        self.heard.append((callback, reason))
        self.event.set()
        if self.throws:
            raise RuntimeError("the listener is broken too (expected in this test)")


def with_listener(listener):
    """FAST_RETRY with `listener` as the callback error listener."""
    return dataclasses.replace(FAST_RETRY, callback_error_listener=listener)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_listener_hears_what_a_provider_threw_instead_of_stderr(admin, event_loop_thread, capfd, kind):
    listener = Heard()
    client, what = client_with_a_locked_keychain(admin, kind, with_listener(listener))
    like_is_unauthorized(client, admin.post())
    assert listener.heard, "the listener heard nothing"
    callbacks = {callback for callback, _reason in listener.heard}
    assert callbacks == {what}, listener.heard
    assert all("the keychain is locked" in reason for _c, reason in listener.heard), listener.heard
    # The same text for both: the exception's repr(), no traceback.
    assert all(
        reason == "RuntimeError('the keychain is locked (expected in this test)')" for _c, reason in listener.heard
    ), listener.heard
    err = capfd.readouterr().err
    assert err == "", "the listener heard it; nothing on stderr"


class ThrowingObserver(likekit.LikeObserver):
    """An observer that throws on every change."""

    def on_change(self, view):
        raise RuntimeError("observer bug (expected in this test)")

    def on_failure(self, post_id, wanted, error):
        pass


def test_a_listener_hears_what_an_observer_threw(admin, viewer, capfd):
    listener = Heard()
    client = likekit.LikeClient(admin.url, viewer[1], with_listener(listener))
    post = admin.post()
    sub = client.subscribe(post, ThrowingObserver())
    client.set_liked(post, True)
    assert listener.event.wait(10), "the listener heard nothing"
    callback, reason = listener.heard[0]
    assert callback == "a LikeObserver in on_change"
    assert "observer bug (expected in this test)" in reason
    assert "RuntimeError" in reason, reason
    sub.cancel()
    asyncio.run(client.shutdown(1_000))
    assert "likekit:" not in capfd.readouterr().err


def test_a_listener_that_throws_leaves_both_on_stderr(admin, viewer, capfd):
    listener = Heard(throws=True)
    client = likekit.LikeClient(admin.url, viewer[1], with_listener(listener))
    post = admin.post()
    sub = client.subscribe(post, ThrowingObserver())
    client.set_liked(post, True)
    assert listener.event.wait(10), "the listener heard nothing"
    asyncio.run(client.shutdown(1_000))
    sub.cancel()
    err = capfd.readouterr().err
    assert "likekit: a CallbackErrorListener threw:" in err, err
    assert "the listener is broken too" in err, err
    assert "likekit: a LikeObserver in on_change threw:" in err, err
    assert "observer bug (expected in this test)" in err, err
    assert "panicked" not in err, err


class NeverAsked(likekit.AsyncTokenProvider):
    """An async provider that must not run: it fails the test if it does."""

    def __init__(self):
        self.ran = False

    async def token(self, refresh):
        self.ran = True
        return None


@pytest.mark.parametrize("given", ["closed", "none"])
def test_an_async_provider_without_a_running_loop_fails_its_token_at_once_and_says_why(admin, capfd, given):
    """The loop given to `uniffi_set_event_loop` has closed (its
    `asyncio.run` ended), or none was given: the provider cannot run. The
    listener hears why, and the request goes on with no token
    (`Unauthorized`), as after a provider that raised, rather than waiting
    for a token until its timeout (`Timeout`)."""
    if given == "closed":
        gone = asyncio.new_event_loop()  # as after its asyncio.run
        gone.close()
        likekit.uniffi_set_event_loop(gone)
    else:
        likekit.uniffi_set_event_loop(None)
    listener = Heard()
    provider = NeverAsked()
    client = likekit.LikeClient.with_async_token_provider(admin.url, provider, with_listener(listener))
    try:
        like_is_unauthorized(client, admin.post())
    finally:
        likekit.uniffi_set_event_loop(None)
    assert not provider.ran
    assert listener.heard, "the listener heard nothing"
    callback, reason = listener.heard[0]
    assert callback == "an AsyncTokenProvider"
    why = "is closed" if given == "closed" else "no event loop"
    assert reason.startswith("RuntimeError(") and why in reason, reason
    assert "likekit.uniffi_set_event_loop(asyncio.get_running_loop())" in reason, reason
    assert capfd.readouterr().err == "", "the listener heard it; nothing on stderr"
    asyncio.run(client.shutdown(1_000))


def test_an_async_provider_whose_loop_ends_before_it_answers_fails_its_token(admin, faults, capfd):
    """`asyncio.run` ends while the provider still awaits (its task is
    cancelled): the request is told at once that no token comes, and the
    listener hears why."""
    listener = Heard()
    recorder = Recorder()
    post = admin.post()
    # The answer to the request sent without a token comes after the loop
    # has closed, so that its renewal is asked of a closed loop, not of one
    # closing.
    faults(FaultRule(FaultRoute.LIKE, post=post, latency_ms=1000))

    class Waiting(likekit.AsyncTokenProvider):
        def __init__(self):
            self.started = None

        async def token(self, refresh):
            self.started.set()
            await asyncio.Event().wait()  # never set: a renewal that hangs

    provider = Waiting()

    async def app():
        provider.started = asyncio.Event()
        likekit.uniffi_set_event_loop(asyncio.get_running_loop())
        client = likekit.LikeClient.with_async_token_provider(admin.url, provider, with_listener(listener))
        subscription = client.subscribe(post, recorder)
        client.set_liked(post, True)
        await provider.started.wait()
        return client, subscription  # asyncio.run cancels the provider's task

    try:
        client, subscription = asyncio.run(app())
    finally:
        # As an app whose loop has ended does: the renewal the request
        # without a token leads to is then refused at once ("no event
        # loop"), never handed to a loop that is still closing.
        likekit.uniffi_set_event_loop(None)
    _post, wanted, error, _thread = recorder.await_failure(timeout=10)
    assert type(error) is likekit.LikeError.Unauthorized, repr(error)
    assert listener.heard, "the listener heard nothing"
    callback, reason = listener.heard[0]
    assert callback == "an AsyncTokenProvider"
    assert "ended before it answered" in reason, reason
    assert capfd.readouterr().err == ""
    subscription.cancel()
    asyncio.run(client.shutdown(1_000))


def test_an_async_test_waits_on_the_server_with_async_admin_while_its_provider_runs(admin):
    """The admin client is synchronous: `wait_for_requests` called on the
    loop an async provider runs on would hold that loop, and the like it
    waits for could not get its token. `AsyncAdmin` waits in a thread."""
    user = admin.user("Aya")
    post = admin.post()
    asked = []

    class OnTheLoop(likekit.AsyncTokenProvider):
        async def token(self, refresh):
            asked.append(threading.current_thread().name)
            return None if refresh else admin.token(user)

    async def scenario():
        likekit.uniffi_set_event_loop(asyncio.get_running_loop())
        waiting = AsyncAdmin(admin.url, os.environ["LIKEKIT_ADMIN_KEY"], timeout=10)
        async with likekit.LikeClient.with_async_token_provider(admin.url, OnTheLoop(), FAST_RETRY) as client:
            client.set_liked(post, True)
            return await waiting.wait_for_requests(1, route=FaultRoute.LIKE, post=post, timeout=10)

    try:
        journal = asyncio.run(scenario())
    finally:
        likekit.uniffi_set_event_loop(None)
    assert journal.met, journal
    assert [(entry.status, entry.user) for entry in journal.entries] == [(200, user)], journal.entries
    assert asked and set(asked) == {threading.main_thread().name}, "the provider ran on the test's loop"
