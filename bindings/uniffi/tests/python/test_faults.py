"""The generated Python bindings against the server's fault rules, checked
in the request journal: what the client shows and what it sent."""

import asyncio
import time

import pytest

import likekit
from conftest import FAST_RETRY, Recorder, wait_idle
from likekit_admin import (
    Drop,
    FaultMethod,
    FaultPhase,
    FaultRoute,
    FaultRule,
    Malformed,
    Oversized,
    Status,
    Truncate,
    WriteResult,
)

AFTER, BEFORE = FaultPhase.AFTER, FaultPhase.BEFORE
APPLIED, UNCHANGED = WriteResult.APPLIED, WriteResult.UNCHANGED


def read_back(admin, post, user_id):
    """(liked_by_me, count) of `post` as the server has it for `user_id`."""
    status, body = admin.as_viewer("GET", f"/posts/{post}/likes", admin.token(user_id))
    assert status == 200, body
    return body["liked_by_me"], body["count"]


def first_call(route, post, phase, action):
    """A rule that acts on the first call of `route` about `post` only."""
    return FaultRule(route, post=post, nth=1, phase=phase, action=action)


def test_a_like_saved_but_its_answer_lost_sticks_and_counts_once(
    admin, viewer, faults, journal, make_client
):
    post = admin.post()
    faults(first_call(FaultRoute.LIKE, post, AFTER, Drop()))
    client = make_client(FAST_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)

    client.set_liked(post, True)
    confirmed, _, _ = rec.await_change(lambda v: not v.pending, timeout=10)

    assert (confirmed.liked, confirmed.count, confirmed.error) == (True, 1, None)
    assert rec.failures == [], "nobody hears \"didn't save\""
    stats = client.stats()
    assert (stats.calls_sent, stats.retries, stats.rollbacks) == (2, 1, 0), "the lost answer was retried"
    # The journal tells the story: applied, answer lost; the retry changed
    # nothing and was answered.
    likes = journal(route=FaultRoute.LIKE, post=post)
    seen = [(e.write, e.status, e.fault, e.fault_phase) for e in likes]
    assert seen == [(APPLIED, None, "drop", AFTER), (UNCHANGED, 200, None, None)]
    assert [(e.method, e.posts, e.user) for e in likes] == [(FaultMethod.POST, [post], viewer[0])] * 2
    # Counted once, for the viewer and for anyone else; in the store, one
    # real change (version 1), past any cache.
    assert read_back(admin, post, viewer[0]) == (True, 1)
    assert read_back(admin, post, admin.user("Ben")) == (False, 1)
    stored = admin.get_post(post)
    assert (stored.count, stored.version, stored.recent_likers) == (1, 1, [viewer[0]])
    sub.cancel()


# The cap on an answer's size the client is given (None: the core's 16 MiB).
ONE_MIB = 1 << 20
# phase, action, the clients' cap, what the error's message says
BROKEN = {
    "truncated": (AFTER, Truncate(12), None, "unreadable body"),
    "malformed": (BEFORE, Malformed(), None, "unreadable body"),
    # Past the clients' cap: refused for its size, before any of it is parsed.
    "oversized": (BEFORE, Oversized(3 << 20), ONE_MIB, "larger than 1048576 bytes"),
}


@pytest.mark.parametrize("what", BROKEN)
def test_a_broken_200_answer_is_invalid_response_and_the_retry_recovers(
    admin, viewer, faults, journal, make_client, what
):
    phase, action, cap, message = BROKEN[what]
    post = admin.post()

    # A read whose answer is broken: the error itself, then a good read.
    faults(first_call(FaultRoute.LIKES, post, phase, action))
    reader = make_client(likekit.LikeClientOptions(max_answer_bytes=cap))
    with pytest.raises(likekit.LikeError.InvalidResponse) as unreadable:
        asyncio.run(reader.refresh(post))
    assert message in str(unreadable.value)
    assert asyncio.run(reader.refresh(post)).count == 0, "the next read is answered"
    reads = journal(route=FaultRoute.LIKES, post=post)
    assert [(e.status, e.fault, e.fault_phase) for e in reads] == [
        (200, action.kind, phase),
        (200, None, None),
    ]

    # A like whose first answer is broken is retried and sticks.
    faults(first_call(FaultRoute.LIKE, post, phase, action))
    client = make_client(
        likekit.LikeClientOptions(
            retry_min_delay_ms=10, retry_max_delay_ms=20, retry_jitter=False, max_answer_bytes=cap
        )
    )
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    confirmed, _, _ = rec.await_change(lambda v: not v.pending, timeout=10)
    assert (confirmed.liked, confirmed.count, confirmed.error) == (True, 1, None)
    assert rec.failures == []
    assert (client.stats().calls_sent, client.stats().retries) == (2, 1)
    likes = journal(route=FaultRoute.LIKE, post=post)
    # After the handler the like was written before its answer broke; before
    # it, only the retry wrote.
    first_write, retry_write = (APPLIED, UNCHANGED) if phase == AFTER else (None, APPLIED)
    assert [(e.write, e.status, e.fault) for e in likes] == [
        (first_write, 200, action.kind),
        (retry_write, 200, None),
    ]
    assert read_back(admin, post, viewer[0]) == (True, 1)
    sub.cancel()


def test_five_quick_taps_are_at_most_two_calls_and_no_delete(admin, viewer, faults, journal, make_client):
    post = admin.post()
    # Slow answers, so that the taps land while the first call is out.
    faults(FaultRule(FaultRoute.ALL, post=post, latency_ms=100))
    client = make_client()
    for tap in range(5):
        if tap:
            time.sleep(0.01)
        client.toggle(post)
    assert client.has_pending_calls(), "the taps landed after the first call was answered"
    wait_idle(client)

    view = client.view(post)
    assert (view.liked, view.count, view.pending) == (True, 1, False), "an odd number of taps"
    calls = [e.method for e in journal(post=post)]
    assert 1 <= len(calls) <= 2, f"five taps, calls: {calls}"
    assert calls[0] == FaultMethod.POST
    assert journal(post=post, method=FaultMethod.DELETE) == [], f"the burst ends liked, as its first call: {calls}"
    stats = client.stats()
    assert (stats.taps, stats.calls_sent) == (5, len(calls))
    assert read_back(admin, post, viewer[0]) == (True, 1)


def test_a_retry_waits_for_retry_after(admin, faults, journal, make_client):
    post = admin.post()
    faults(first_call(FaultRoute.LIKE, post, BEFORE, Status(429, retry_after_secs=1)))
    # Its own backoff is 10-20 ms: only Retry-After can make it wait longer.
    client = make_client(FAST_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    confirmed, _, _ = rec.await_change(lambda v: not v.pending, timeout=10)
    assert (confirmed.liked, confirmed.count) == (True, 1)
    assert rec.failures == []

    likes = journal(route=FaultRoute.LIKE, post=post)
    assert len(likes) == 2, f"a 429, then one retry: {likes}"
    first, retry = likes
    assert (first.status, retry.status) == (429, 200)
    assert (first.write, first.fault, first.fault_phase) == (None, "status", BEFORE), (
        "refused before the handler"
    )
    assert retry.write == APPLIED
    waited = retry.at_ms - (first.at_ms + first.duration_ms)
    assert waited >= 1000, f"the retry came {waited} ms after the 429"
    assert client.stats().retries == 1
    sub.cancel()
