"""`LikeClient.views` and `LikeClient.failures`: async iterators over a
post's views and the client's failures, as Kotlin's Flow and Swift's
AsyncStream give them."""

import asyncio
import contextlib

import pytest

import likekit
from conftest import FAST_RETRY
from likekit_admin import FaultRoute, FaultRule, Status

# A bound for an iteration that never yields (the bug these guard
# against), not a speed target.
BOUND = 20


async def next_matching(views, matches):
    """The first view `views` yields that `matches`."""
    async def first():
        async for view in views:
            if matches(view):
                return view
        raise AssertionError("the iterator ended")

    return await asyncio.wait_for(first(), BOUND)


def test_views_yields_the_held_view_then_a_taps_optimistic_and_confirmed_views(admin, viewer, make_client, faults):
    post = admin.post()
    client = make_client(FAST_RETRY)
    # The like is held a moment at the server: its pending view is the
    # newest for that long, so the iterator, which keeps only the newest,
    # yields it.
    faults(FaultRule(FaultRoute.LIKE, post=post, latency_ms=500))

    async def scenario():
        await client.refresh(post)
        seen = []
        async with contextlib.aclosing(client.views(post)) as views:
            held = await asyncio.wait_for(views.__anext__(), BOUND)
            seen.append(held)
            client.set_liked(post, True)
            seen.append(await next_matching(views, lambda v: v.pending))
            seen.append(await next_matching(views, lambda v: not v.pending))
        return seen

    held, pending, confirmed = asyncio.run(scenario())
    assert (held.post_id, held.liked, held.count, held.pending) == (post, False, 0, False)
    assert (pending.liked, pending.count, pending.pending) == (True, 1, True)
    assert (confirmed.liked, confirmed.count, confirmed.pending, confirmed.error) == (True, 1, False, None)


def test_views_unsubscribes_when_the_iteration_ends(admin, make_client):
    post = admin.post()
    client = make_client(FAST_RETRY)

    async def scenario():
        await client.refresh(post)
        before = likekit.live_objects()
        views = client.views(post)
        await asyncio.wait_for(views.__anext__(), BOUND)
        during = likekit.live_objects()
        await views.aclose()
        return before, during, likekit.live_objects()

    before, during, after = asyncio.run(scenario())
    assert during > before, "iterating holds a subscription"
    assert after == before, "closing the iterator let it go"


def test_views_of_a_bad_id_raises_invalid_id_when_iterating_starts(make_client):
    client = make_client(FAST_RETRY)

    async def scenario():
        async for _ in client.views(0):
            pass

    with pytest.raises(likekit.LikeError.InvalidId):
        asyncio.run(scenario())


def test_failures_yields_a_like_that_did_not_save(admin, make_client, faults):
    post = admin.post()
    client = make_client(FAST_RETRY)
    faults(FaultRule(FaultRoute.LIKE, post=post, action=Status(503)))

    async def scenario():
        async with contextlib.aclosing(client.failures()) as failures:
            pending = asyncio.ensure_future(asyncio.wait_for(failures.__anext__(), BOUND))
            await asyncio.sleep(0)  # subscribed before the tap
            client.set_liked(post, True)
            return await pending

    failure = asyncio.run(scenario())
    assert isinstance(failure, likekit.LikeFailure)
    assert (failure.post_id, failure.wanted) == (post, True)
    assert isinstance(failure.error, likekit.LikeError), failure.error
    assert client.view(post).liked is False, "rolled back"
