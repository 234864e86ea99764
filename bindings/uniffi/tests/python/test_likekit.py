"""The generated Python bindings against the real reference server."""

import asyncio
import queue
import threading
import time

import pytest

import likekit
from conftest import FAST_RETRY, FixedToken, Recorder, wait_idle
from likekit_admin import FaultRoute, FaultRule


def test_options_left_out_are_the_cores_and_default_options_shows_them(admin):
    left_out = likekit.LikeClientOptions()
    assert left_out.request_timeout_ms is None and left_out.max_retries is None
    defaults = likekit.default_options()
    assert defaults.request_timeout_ms == 10_000
    assert defaults.retry_min_delay_ms == 500
    assert defaults.max_retries == 4
    assert defaults.retry_seed is None
    likekit.LikeClient(admin.url, None, defaults)


def test_records_show_their_fields_in_lists_and_the_repl():
    options = likekit.default_options()
    assert repr(options) == str(options)
    assert "request_timeout_ms=10000" in repr([options])
    line = likekit.LikeLine(you=True, friends=["Ana"], others=1, total=3, text="Liked by you, Ana and 1 other")
    view = likekit.PostView(
        post_id=42, liked=True, count=3, friends=["Ana"], line=line, pending=False, error=None
    )
    assert repr([view]).startswith("[PostView(post_id=42, liked=True, count=3"), repr([view])
    # Each field as its own repr: strings quoted, nested records whole.
    assert "line=LikeLine(you=True, friends=['Ana'], others=1, total=3, text='Liked by you, Ana and 1 other')" in repr(view)
    assert eval(repr(line), vars(likekit)) == line, "the repr reads back"


def test_records_compare_with_anything():
    line = likekit.LikeLine(you=False, friends=[], others=0, total=0, text="")
    view = likekit.PostView(post_id=7, liked=False, count=0, friends=[], line=line, pending=False, error=None)
    last = None
    assert view != last and not (view == last), "a view is not None (redraw code starts with None)"
    assert view != 5 and view != "PostView"
    assert view == likekit.PostView(
        post_id=7, liked=False, count=0, friends=[], line=line, pending=False, error=None
    )
    assert view != likekit.PostView(post_id=7, liked=True, count=1, friends=[], line=line, pending=True, error=None)


# Every method that takes a post id, called with `post_id`.
TAKES_AN_ID = {
    "toggle": lambda c, post_id: c.toggle(post_id),
    "set_liked": lambda c, post_id: c.set_liked(post_id, True),
    "view": lambda c, post_id: c.view(post_id),
    "subscribe": lambda c, post_id: c.subscribe(post_id, Recorder()),
    "refresh": lambda c, post_id: asyncio.run(c.refresh(post_id)),
    "refresh_many": lambda c, post_id: asyncio.run(c.refresh_many([1, post_id])),
}


@pytest.mark.parametrize("method", TAKES_AN_ID)
@pytest.mark.parametrize("bad", [0, -1, -(2**63)])
def test_zero_and_negative_ids_are_invalid_id_bad_post_id(make_client, method, bad):
    client = make_client()
    with pytest.raises(likekit.LikeError.InvalidId) as refused:
        TAKES_AN_ID[method](client, bad)
    assert refused.value.reason == f"post ids are whole numbers from 1 to 9223372036854775807; got {bad}"
    assert (client.stats().taps, client.stats().calls_sent) == (0, 0), "nothing tapped or sent"


@pytest.mark.parametrize("method", TAKES_AN_ID)
@pytest.mark.parametrize("bad", [2**63, 2**64])
def test_ids_past_the_range_are_refused_by_the_generated_code(make_client, method, bad):
    # Python ints have no upper bound; the generated code checks that every
    # int fits the FFI's i64 before the call and raises ValueError itself,
    # so these never reach the library (and never become an InvalidId).
    client = make_client()
    with pytest.raises(ValueError, match="i64 requires"):
        TAKES_AN_ID[method](client, bad)
    assert client.stats().taps == 0


@pytest.mark.parametrize("liked", ["false", "", 0, 1, None, [False]])
def test_liked_that_is_not_a_bool_is_a_type_error_before_anything_is_sent(admin, make_client, journal, liked):
    """`set_liked(post, "false")` once liked the post (the value was taken
    for its truth): a `liked` that is not True or False is refused."""
    post = admin.post()
    client = make_client()
    with pytest.raises(TypeError, match="expected True or False"):
        client.set_liked(post, liked)
    assert (client.stats().taps, client.stats().calls_sent) == (0, 0), "nothing tapped or sent"
    wait_idle(client)
    assert journal(post=post) == [], "nothing reached the server"
    assert admin.get_post(post).count == 0


def test_a_scripted_servers_bool_arguments_are_bools_too():
    server = likekit.ScriptedServer()
    with pytest.raises(TypeError, match="expected True or False, not str 'no'"):
        server.set_post(42, 10, "no", [], 1)
    server.set_post(42, 10, False, [], 1)


def test_the_server_answers_the_same_code_for_the_same_ids(admin, viewer):
    token = admin.token(viewer[0])
    for bad in ["0", "-1", str(2**63)]:
        status, body = admin.as_viewer("POST", f"/posts/{bad}/like", token)
        assert (status, body["error"]["code"]) == (400, "bad_post_id"), bad


def test_the_largest_id_goes_through(admin, make_client):
    largest = admin.post(2**63 - 1)
    client = make_client()
    assert client.set_liked(largest, True).post_id == largest
    wait_idle(client)
    view = asyncio.run(client.refresh(largest))
    assert (view.post_id, view.liked, view.count) == (largest, True, 1)


def test_bad_base_url_is_a_typed_config_error():
    with pytest.raises(likekit.LikeError.Config, match="base URL"):
        likekit.LikeClient("not a url")


@pytest.mark.parametrize(
    "field",
    [
        "request_timeout_ms",
        "retry_min_delay_ms",
        "retry_max_delay_ms",
        "max_retries",
        "max_posts",
        "max_answer_bytes",
        "max_intent_age_ms",
        "keep_while_offline_ms",
    ],
)
def test_a_negative_option_is_a_config_error_naming_it(field):
    # Not read as zero: max_retries=-1 is not "no retries", and
    # max_intent_age_ms=-1 would drop every saved tap at restore().
    options = likekit.LikeClientOptions(**{field: -1})
    with pytest.raises(likekit.LikeError.Config) as refused:
        likekit.LikeClient("http://127.0.0.1:9", options=options)
    assert str(refused.value) == f"invalid configuration: {field} must not be negative; got -1"


def test_optimistic_tap_shows_before_the_server_answers(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, latency_ms=1500))
    client = make_client()
    rec = Recorder()
    sub = client.subscribe(post, rec)
    view = client.set_liked(post, True)
    assert view.liked and view.pending and view.count == 1
    assert view.line.text == "Liked by you"
    assert client.has_pending_calls()
    # The observer heard of the tap before set_liked returned: the tap's
    # own view, pending, and nothing else yet.
    assert [(v.liked, v.pending) for v, _, _ in rec.changes] == [(True, True)]
    confirmed, _, _ = rec.await_change(lambda v: not v.pending, timeout=10)
    assert confirmed.liked and confirmed.count == 1
    # The answer's view came after the tap's, as the one change more.
    assert [(v.liked, v.pending) for v, _, _ in rec.changes] == [(True, True), (True, False)]
    sub.cancel()


def test_rollback_calls_on_failure_and_restores_the_count(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, error_rate=1.0, status=503))
    client = make_client(FAST_RETRY)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    assert client.set_liked(post, True).liked
    post_id, wanted, error, _ = rec.await_failure()
    assert (post_id, wanted) == (post, True)
    assert isinstance(error, likekit.LikeError.Server) and "503" in str(error)
    rec.await_change(lambda v: not v.liked and not v.pending)
    wait_idle(client)
    view = client.view(post)
    assert not view.liked and view.count == 0
    assert isinstance(view.error, likekit.LikeError.Server)
    stats = client.stats()
    assert (stats.retries, stats.rollbacks, stats.calls_sent) == (2, 1, 3)
    sub.cancel()


def test_rapid_taps_coalesce(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, latency_ms=300), FaultRule(FaultRoute.UNLIKE, latency_ms=300))
    client = make_client()
    client.toggle(post)  # like: a call goes out
    client.toggle(post)  # unlike: waits for the like's answer
    last = client.toggle(post)  # like: replaces it; the call out already carries it
    assert last.liked and last.count == 1
    wait_idle(client)
    stats = client.stats()
    assert (stats.taps, stats.calls_sent, stats.coalesced) == (3, 1, 2)
    assert stats.taps == stats.intents_sent + stats.coalesced
    for _ in range(10):  # ends where it started: liked
        client.toggle(post)
    wait_idle(client)
    assert client.stats().calls_sent - 1 <= 2
    server = asyncio.run(client.refresh(post))
    assert server.liked and server.count == 1


def test_refresh_reads_others_likes_and_the_friends_line(admin, make_client):
    ben = admin.user("Ben")
    cleo = admin.user("Cleo", friends=[ben])
    post, quiet, missing = admin.post(), admin.post(), admin.next_id()
    ben_client = make_client(tokens=FixedToken(admin.token(ben)))
    ben_client.set_liked(post, True)
    wait_idle(ben_client)

    client = make_client(tokens=FixedToken(admin.token(cleo)))
    rec = Recorder()
    sub = client.subscribe_all(rec)
    view = asyncio.run(client.refresh(post))
    assert not view.liked and view.count == 1
    assert view.friends == ["Ben"]
    assert view.line.text == "Liked by Ben"
    rec.await_change(lambda v: v.post_id == post and v.count == 1)
    mine = client.toggle(post)
    assert (mine.line.text, mine.count) == ("Liked by you and Ben", 2)
    wait_idle(client)
    views = asyncio.run(client.refresh_many([post, quiet, missing, post]))
    assert [v.post_id for v in views] == [post, quiet]
    assert views[0].count == 2 and views[1].line.text == ""
    sub.cancel()


def test_unknown_post_is_a_typed_not_found(admin, make_client):
    missing = admin.next_id()
    client = make_client(FAST_RETRY)
    with pytest.raises(likekit.LikeError.NotFound, match="not found"):
        asyncio.run(client.refresh(missing))
    rec = Recorder()
    sub = client.subscribe(missing, rec)
    client.set_liked(missing, True)
    assert isinstance(rec.await_failure()[2], likekit.LikeError.NotFound)
    wait_idle(client)
    assert client.stats().retries == 0
    assert not client.view(missing).liked
    sub.cancel()


def test_callbacks_arrive_off_the_main_thread(admin, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, latency_ms=200))
    client = make_client()
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    main = threading.current_thread().name
    assert rec.changes[0][1] == main, "the tap's own change comes on the tapping thread"
    _, thread, _ = rec.await_change(lambda v: not v.pending)
    assert thread != main
    sub.cancel()


def test_taps_from_many_threads(admin, make_client):
    client = make_client()
    rec = Recorder()
    sub = client.subscribe_all(rec)
    posts = [admin.post() for _ in range(4)]
    threads = [
        threading.Thread(target=lambda p=p: [client.toggle(p) for _ in range(25)]) for p in posts
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wait_idle(client)
    for p in posts:
        view = client.view(p)
        assert view.liked and view.count == 1 and not view.pending
    assert len(rec.changes) >= 100
    sub.cancel()


def test_a_throwing_observer_breaks_nothing(admin, make_client, capfd):
    class Thrower(likekit.LikeObserver):
        def on_change(self, view):
            raise RuntimeError("observer bug (expected in this test)")

        def on_failure(self, post_id, wanted, error):
            raise RuntimeError("observer bug")

    post = admin.post()
    client = make_client()
    rec = Recorder()
    sub = client.subscribe(post, rec)
    thrower = client.subscribe(post, Thrower())
    client.set_liked(post, True)
    thrower.cancel()
    assert rec.changes, "the other observer heard nothing"
    wait_idle(client)
    client.set_liked(post, False)
    wait_idle(client)
    view = client.view(post)
    assert not view.liked and not view.pending and view.error is None
    sub.cancel()
    # The throw is one line on standard error, not a panic.
    err = capfd.readouterr().err
    assert "likekit: a LikeObserver in on_change threw:" in err, err
    assert "observer bug (expected in this test)" in err, err
    assert "panicked" not in err, err


def test_cancel_and_release_stop_callbacks(admin, make_client):
    post = admin.post()
    client = make_client()
    rec = Recorder()
    sub = client.subscribe(post, rec)
    assert sub.post_id() == post
    client.set_liked(post, True)
    wait_idle(client)
    heard = len(rec.changes)
    assert heard >= 2
    sub.cancel()
    sub.cancel()  # harmless
    assert not sub.is_active()
    client.set_liked(post, False)
    wait_idle(client)
    assert len(rec.changes) == heard

    everything = Recorder()
    sub = client.subscribe_all(everything)
    assert sub.post_id() is None
    client.set_liked(post, True)
    wait_idle(client)
    del sub  # releasing the handle unsubscribes
    heard = len(everything.changes)
    client.set_liked(post, False)
    wait_idle(client)
    assert len(everything.changes) == heard


def test_token_provider_is_asked_again_after_a_401(admin, viewer, make_client):
    post = admin.post()
    good = admin.token(viewer[0])
    asked = []

    class Rotating(likekit.TokenProvider):
        def token(self, refresh):
            asked.append(refresh)
            return good if refresh else "expired"

    client = make_client(tokens=Rotating())
    client.set_liked(post, True)
    wait_idle(client)
    view = client.view(post)
    assert view.liked and not view.pending and view.error is None
    assert asked[:2] == [False, True]

    other = admin.post()
    anonymous = make_client(FAST_RETRY, tokens=None)
    rec = Recorder()
    sub = anonymous.subscribe(other, rec)
    anonymous.set_liked(other, True)
    assert isinstance(rec.await_failure()[2], likekit.LikeError.Unauthorized)
    sub.cancel()


def test_shutdown_finishes_calls_then_refuses(admin, make_client):
    post = admin.post()
    client = make_client()
    client.set_liked(post, True)
    assert asyncio.run(client.shutdown(5_000))
    assert client.is_shut_down()
    late = client.set_liked(post, False)
    assert late.liked and not late.pending
    assert isinstance(late.error, likekit.LikeError.Shutdown)
    with pytest.raises(likekit.LikeError.Shutdown):
        asyncio.run(client.refresh(post))


def test_creating_and_dropping_leaves_no_live_objects(admin, viewer):
    post = admin.post()
    tokens = viewer[1]

    class Quiet(likekit.LikeObserver):
        def on_change(self, view):
            pass

        def on_failure(self, post_id, wanted, error):
            pass

    baseline = likekit.live_objects()
    highest = baseline
    for i in range(10_000):
        client = likekit.LikeClient(admin.url, tokens)
        sub = client.subscribe(post, Quiet())
        if i % 1_000 == 0:
            client.toggle(post)  # some clients go with a call out
        highest = max(highest, likekit.live_objects())
        del sub, client
    client = likekit.LikeClient(admin.url, tokens)
    for i in range(10_000):
        sub = client.subscribe(post, Quiet()) if i % 2 == 0 else client.subscribe_all(Quiet())
        del sub
    del client
    assert highest <= baseline + 10, f"live objects grew to {highest}"
    # Clients dropped with a call out let go of their references when it ends.
    deadline = time.monotonic() + 10
    while likekit.live_objects() != baseline and time.monotonic() < deadline:
        time.sleep(0.02)
    assert likekit.live_objects() == baseline


def test_a_callback_dispatcher_runs_every_observer_call_where_the_app_wants(admin, make_client):
    handed = queue.Queue()

    class OneThread(likekit.CallbackDispatcher):
        def dispatch(self, call):
            handed.put(call)

    release = threading.Event()

    def work():
        release.wait(10)  # held, so that nothing reaches the observer early
        while (call := handed.get()) is not None:
            call.run()

    worker = threading.Thread(target=work, name="likekit-callbacks")
    worker.start()
    try:
        post = admin.post()
        client = make_client(likekit.LikeClientOptions(callback_dispatcher=OneThread()))
        rec = Recorder()
        sub = client.subscribe(post, rec)
        view = client.set_liked(post, True)
        assert view.liked and view.pending
        assert rec.changes == [], "the tap's own change waits for the dispatcher"
        release.set()
        confirmed, thread, _ = rec.await_change(lambda v: v.liked and not v.pending)
        assert thread == "likekit-callbacks"
        assert [c[1] for c in rec.changes] == ["likekit-callbacks"] * len(rec.changes)
        assert rec.changes[0][0].pending, "the tap's own change first"
        assert confirmed.count == view.count
        sub.cancel()
    finally:
        release.set()
        handed.put(None)
        worker.join(10)


def test_a_dispatcher_that_throws_has_its_calls_run_in_place_without_a_panic(admin, make_client, capfd):
    class Throws(likekit.CallbackDispatcher):
        def __init__(self):
            self.thrown = 0

        def dispatch(self, call):
            self.thrown += 1
            raise RuntimeError("the queue is closed (expected in this test)")

    dispatcher = Throws()
    post = admin.post()
    client = make_client(likekit.LikeClientOptions(callback_dispatcher=dispatcher))
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    # In place: the tap's own change on the tapping thread, before the tap returns.
    assert [(c[0].liked, c[0].pending, c[1]) for c in rec.changes] == [(True, True, "MainThread")]
    rec.await_change(lambda v: v.liked and not v.pending)
    wait_idle(client)
    assert dispatcher.thrown >= 2, "every call was offered to the dispatcher first"
    sub.cancel()
    # A throw is an ordinary error, not a panic on standard error.
    err = capfd.readouterr().err
    assert "panicked" not in err and "Callback interface failure" not in err, err


def test_wait_calls_returns_a_taps_call_that_calls_may_not_show_yet():
    async def tap_and_read(server, client):
        client.set_liked(42, True)
        return await server.wait_calls(1, 5_000)

    # The call leaves from LikeKit's threads after the tap returns, so
    # calls() read at once is sometimes empty; wait_calls is not.
    for _ in range(30):
        server = likekit.ScriptedServer()
        server.set_post(42, 10, False, [], 1)
        client = likekit.LikeClient.scripted(server, likekit.LikeClientOptions(max_retries=0))
        [call] = asyncio.run(tap_and_read(server, client))
        assert (call.id, call.post_id, call.like, call.text) == (0, 42, True, "like 42 #0")
        assert server.answer(call.id, 11, True, 2)
        wait_idle(client)
        assert client.view(42).count == 11

    # Fewer than asked for: the calls waiting when the time ran out.
    server = likekit.ScriptedServer()
    client = likekit.LikeClient.scripted(server, likekit.LikeClientOptions(max_retries=0))
    client.set_liked(7, True)
    assert [c.text for c in asyncio.run(server.wait_calls(2, 200))] == ["like 7 #0"]
    # A negative timeout is no wait at all; a count already reached returns at once.
    assert [c.text for c in asyncio.run(server.wait_calls(1, -1))] == ["like 7 #0"]
    assert asyncio.run(server.wait_calls(0, 60_000)) == server.calls()
    asyncio.run(client.shutdown(0))


def test_retry_now_sends_a_retry_waiting_out_its_backoff_at_once(admin, make_client, faults):
    """An app that knows the network is back calls `retry_now`: a retry in
    its minute's backoff goes out then."""
    post = admin.post()
    # The first like fails (503, no Retry-After); its retry would wait a minute.
    faults(FaultRule(FaultRoute.LIKE, post=post, fail_next=1))
    client = make_client(
        likekit.LikeClientOptions(
            retry_min_delay_ms=60_000, retry_max_delay_ms=60_000, max_retries=3, retry_jitter=False
        )
    )
    client.set_liked(post, True)
    assert admin.wait_for_requests(1, route=FaultRoute.LIKE, post=post, timeout=10).met
    assert client.has_pending_calls(), "its retry waits"
    # Whether its failure is taken in yet or not: the wait it starts ends.
    client.retry_now()
    # Well within the minute: a bound for a retry never sent, not a speed target.
    wait_idle(client, timeout_ms=20_000)
    view = client.view(post)
    assert (view.liked, view.pending, view.error) == (True, False, None), view
    assert [e.status for e in admin.entries(route=FaultRoute.LIKE, post=post)] == [503, 200]
