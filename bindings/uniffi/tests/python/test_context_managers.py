"""`async with LikeClient(...)` shuts the client down on leaving the block;
`with client.subscribe(...)` cancels the subscription on leaving its own."""

import asyncio
import gc

import pytest

import likekit
from conftest import Recorder, wait_idle


class Boom(Exception):
    """The app's own error, raised inside a block."""


def scripted_client(*posts):
    """A client on a `ScriptedServer` holding `posts` (count 10, not
    liked): its calls wait until the test answers them."""
    server = likekit.ScriptedServer()
    for post in posts:
        server.set_post(post, 10, False, [], 1)
    return server, likekit.LikeClient.scripted(server, likekit.LikeClientOptions(max_retries=0))


def test_async_with_shuts_the_client_down_at_the_end_of_the_block(admin, viewer):
    post = admin.post()

    async def session():
        made = likekit.LikeClient(admin.url, viewer[1])
        async with made as client:
            assert client is made
            assert not client.is_shut_down()
            assert client.set_liked(post, True).pending
        return client

    client = asyncio.run(session())
    assert client.is_shut_down()
    # Leaving the block gave the call out its time: it was saved.
    assert admin.get_post(post).count == 1
    late = client.set_liked(post, False)
    assert late.liked and not late.pending
    assert isinstance(late.error, likekit.LikeError.Shutdown)
    with pytest.raises(likekit.LikeError.Shutdown):
        asyncio.run(client.refresh(post))


def test_async_with_shuts_the_client_down_and_lets_the_blocks_exception_through(make_client):
    client = make_client()

    async def session():
        async with client:
            raise Boom("from the block")

    with pytest.raises(Boom, match="from the block"):
        asyncio.run(session())
    assert client.is_shut_down()
    with pytest.raises(likekit.LikeError.Shutdown):
        asyncio.run(client.refresh(1))


def test_a_cancelled_task_shuts_its_client_down_on_the_way_out(make_client):
    client = make_client()

    async def session():
        entered = asyncio.Event()

        async def screen():
            async with client:
                entered.set()
                await asyncio.Event().wait()  # until cancelled

        task = asyncio.create_task(screen())
        await entered.wait()
        assert not client.is_shut_down()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(session())
    assert client.is_shut_down()


def test_leaving_the_block_lets_calls_out_finish_and_cuts_off_the_rest():
    """Leaving awaits `shutdown` with a deadline (2 s): a call answered
    half a second after shutdown began is saved, one never answered is cut
    off when the deadline passes and rolled back with `Shutdown`."""
    server, client = scripted_client(1, 2)
    heard = Recorder()
    subscription = client.subscribe_all(heard)

    async def answer_post_1_while_shutting_down():
        calls = await server.wait_calls(2, 5_000)
        [first] = [call for call in calls if call.post_id == 1]
        for _ in range(1_000):
            if client.is_shut_down():
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("leaving the block did not shut the client down")
        # Well into the deadline, so that a much shorter one would have
        # cut this call off too.
        await asyncio.sleep(0.5)
        assert server.answer(first.id, 11, True, 2), "the call was cut off"

    async def session():
        async with client:
            await client.refresh_many([1, 2])
            client.set_liked(1, True)
            client.set_liked(2, True)
            answering = asyncio.create_task(answer_post_1_while_shutting_down())
        await answering

    asyncio.run(session())
    assert client.is_shut_down()
    heard.await_failure()
    saved = [view for view, *_ in heard.changes if view.post_id == 1]
    assert (saved[-1].liked, saved[-1].count, saved[-1].pending) == (True, 11, False)
    failures = [(post, wanted, error) for post, wanted, error, _ in heard.failures]
    assert [(post, wanted) for post, wanted, _ in failures] == [(2, True)], failures
    assert isinstance(failures[0][2], likekit.LikeError.Shutdown)
    cut_off = [view for view, *_ in heard.changes if view.post_id == 2][-1]
    assert (cut_off.liked, cut_off.count, cut_off.pending) == (False, 10, False)
    subscription.cancel()


def test_leaving_the_block_of_a_client_already_shut_down_is_harmless():
    """An app that wants its own deadline, or shutdown's answer, awaits
    `shutdown` in the block; leaving then shuts down again, which does
    nothing. A client shut down before the block enters and leaves it as
    well."""
    server, client = scripted_client(1)

    async def session():
        async with client:
            client.set_liked(1, True)
            assert [call.post_id for call in await server.wait_calls(1, 5_000)] == [1]
            assert not await client.shutdown(0), "the call never answered was cut off"
            assert client.is_shut_down()
        async with client as again:
            assert again is client

    asyncio.run(session())
    assert client.is_shut_down()


def test_with_without_async_is_a_type_error_that_says_async_with():
    server, client = scripted_client()
    ran = []

    for where in ("outside a loop", "inside a running loop"):
        with pytest.raises(TypeError, match=r"use `async with LikeClient\(\.\.\.\) as client:`"):
            if where == "outside a loop":
                with client:
                    ran.append(where)
            else:

                async def in_a_coroutine():
                    with client:
                        ran.append(where)

                asyncio.run(in_a_coroutine())

    assert ran == [], "the block must not run"
    assert not client.is_shut_down(), "a refused `with` changes nothing"
    asyncio.run(client.shutdown(0))


def test_with_a_subscription_keeps_it_for_the_block_and_cancels_it_on_leaving(admin, make_client):
    post = admin.post()
    client = make_client()
    heard = Recorder()

    # No name needed: the `with` keeps the subscription alive.
    with client.subscribe(post, heard):
        gc.collect()
        client.set_liked(post, True)
        wait_idle(client)
        assert heard.changes, "the subscription ended inside its block"
    before = len(heard.changes)
    client.set_liked(post, False)
    wait_idle(client)
    assert len(heard.changes) == before, "heard after leaving the block"

    with client.subscribe_all(Recorder()) as subscription:
        assert subscription.is_active() and subscription.post_id() is None
    assert not subscription.is_active()


def test_a_subscription_block_left_by_an_exception_cancels_it(make_client):
    client = make_client()

    with pytest.raises(Boom):
        with client.subscribe(1, Recorder()) as subscription:
            assert subscription.is_active()
            raise Boom()
    assert not subscription.is_active()


def _mypy(tmp_path, source, *flags):
    """mypy's verdict on an app module `source` that imports likekit."""
    import os
    import subprocess
    import sys

    app = tmp_path / "app.py"
    app.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--cache-dir", os.devnull, *flags, str(app)],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": os.path.dirname(likekit.__file__)},
    )


def test_type_checkers_see_async_with_and_a_subscriptions_with(tmp_path):
    """The context managers are written into the classes, where an app's
    mypy sees them: `async with` gives the client, `with` a subscription."""
    checked = _mypy(
        tmp_path,
        "import likekit\n"
        "\n"
        "async def run(observer: likekit.LikeObserver) -> None:\n"
        "    async with likekit.LikeClient('http://127.0.0.1:1') as client:\n"
        "        with client.subscribe(1, observer) as subscription:\n"
        "            subscription.cancel()\n"
        "        client.toggle(1)\n",
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_type_checkers_flag_with_without_async_on_a_client(tmp_path):
    """`with client:` is refused at run time with advice, and by mypy before
    it runs: the client's `__enter__` is out of type checkers' sight."""
    checked = _mypy(
        tmp_path,
        "import likekit\n"
        "\n"
        "def run(client: likekit.LikeClient) -> None:\n"
        "    with client:\n"
        "        client.toggle(1)\n",
    )
    assert checked.returncode != 0, checked.stdout
    assert "__enter__" in checked.stdout, checked.stdout


def test_type_checkers_check_what_a_client_is_made_with(tmp_path):
    """The arguments with defaults are typed as what they take (the
    generated `typing.Union[object, …]` let anything through), and
    `uniffi_set_event_loop` takes the running loop or None."""
    good = _mypy(
        tmp_path,
        "import asyncio\n"
        "import likekit\n"
        "\n"
        "async def run(tokens: likekit.TokenProvider, renewing: likekit.AsyncTokenProvider) -> None:\n"
        "    likekit.uniffi_set_event_loop(asyncio.get_running_loop())\n"
        "    options = likekit.LikeClientOptions(max_retries=2)\n"
        "    likekit.LikeClient('http://127.0.0.1:1')\n"
        "    likekit.LikeClient('http://127.0.0.1:1', None)\n"
        "    likekit.LikeClient('http://127.0.0.1:1', tokens, options)\n"
        "    likekit.LikeClient.with_async_token_provider('http://127.0.0.1:1', renewing)\n"
        "    likekit.LikeClient.scripted(likekit.ScriptedServer(), options)\n"
        "    likekit.ScriptedFailure.NETWORK()\n"
        "    likekit.uniffi_set_event_loop(None)\n",
        "--strict",
    )
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _mypy(
        tmp_path,
        "import likekit\n"
        "\n"
        "def run(server: likekit.ScriptedServer) -> None:\n"
        "    likekit.LikeClient('http://127.0.0.1:1', 'a-token-string')\n"
        "    likekit.LikeClient('http://127.0.0.1:1', None, {'max_retries': 2})\n"
        "    likekit.LikeClient.scripted(server, 'fast')\n"
        "    likekit.uniffi_set_event_loop('loop')\n",
    )
    flagged = sorted(
        int(line.split(":")[1]) for line in bad.stdout.splitlines() if "error: Argument" in line
    )
    assert flagged == [4, 5, 6, 7], bad.stdout
