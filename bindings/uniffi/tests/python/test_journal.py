"""Taps that survive the app being killed: the intent journal through the
generated Python bindings, against the real server. A child process taps
and is killed with SIGKILL; a new client on the same journal finishes the
job."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import likekit
from conftest import FAST_RETRY, FixedToken, Recorder, wait_idle
from likekit_admin import FaultRoute, FaultRule, Status

# The child: taps as asked, says so once the call is on the wire, then
# waits to be killed.
CHILD = r"""
import asyncio, sys, time, likekit
url, token, directory, post, taps = sys.argv[1:6]

class Token(likekit.TokenProvider):
    def token(self, refresh):
        return token

journal = likekit.IntentJournal.file(directory, "ana")
client = likekit.LikeClient(url, Token(), likekit.LikeClientOptions(journal=journal))
asyncio.run(client.refresh(int(post)))  # the heart as the server has it
for tap in taps.split(","):
    client.set_liked(int(post), tap == "like")
print("tapped", flush=True)
time.sleep(120)
"""


def read_back(admin, post, user_id):
    """(liked_by_me, count) of `post` as the server has it for `user_id`."""
    status, body = admin.as_viewer("GET", f"/posts/{post}/likes", admin.token(user_id))
    assert status == 200, body
    return body["liked_by_me"], body["count"]


def wait_for(what, check, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def tap_and_kill(admin, viewer, tmp_path, post, taps, route):
    """Runs the child tapping `taps` on `post` while `route` is held 10 s,
    and kills it once its first call reached the server."""
    admin.clear_requests()
    admin.set_faults([FaultRule(route, post=post, latency_ms=10_000)])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.dirname(likekit.__file__), *sys.path, env.get("PYTHONPATH", "")] if p
    )
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, admin.url, admin.token(viewer[0]), str(tmp_path), str(post), ",".join(taps)],
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert child.stdout.readline().strip() == b"tapped"
        # A call is sent only once the journal holds its intent: when the
        # server sees it, the tap is on disk.
        wait_for("the call to reach the server", lambda: admin.entries(route=route, post=post))
        # Taps after the first are written down while its call goes out
        # (nothing holds the call for them): kill once the last one is.
        last = {"post": post, "liked": taps[-1] == "like"}
        wait_for("the last tap written down", lambda: last_tap_written(tmp_path, last))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        child.stdout.close()
    admin.clear_faults()


def last_tap_written(tmp_path, last):
    try:
        intents = json.loads((tmp_path / "likekit-intents-616e61.json").read_text())["intents"]
    except (OSError, ValueError):
        return False
    return any(i["post"] == last["post"] and i["liked"] == last["liked"] for i in intents)


def restart(admin, viewer, tmp_path, rec=None):
    journal = likekit.IntentJournal.file(str(tmp_path), "ana")
    client = likekit.LikeClient(admin.url, viewer[1], likekit.LikeClientOptions(journal=journal))
    sub = client.subscribe_all(rec) if rec else None
    return client, client.restore(), sub


def test_a_like_survives_the_process_being_killed(admin, viewer, tmp_path):
    post = admin.post()
    tap_and_kill(admin, viewer, tmp_path, post, ["like"], FaultRoute.LIKE)
    admin.clear_requests()
    client, report, _ = restart(admin, viewer, tmp_path)
    assert report.problem is None and report.expired == []
    [view] = report.restored
    assert (view.post_id, view.liked, view.pending) == (post, True, True), "pending at once"
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (True, 1), "liked, counted once"
    assert len(admin.entries(route=FaultRoute.LIKE, post=post)) == 1, "one call after the restart"
    asyncio.run(client.shutdown(1_000))


def test_an_unlike_survives_too(admin, viewer, tmp_path):
    post = admin.post()
    status, _ = admin.as_viewer("POST", f"/posts/{post}/like", admin.token(viewer[0]))
    assert status == 200
    tap_and_kill(admin, viewer, tmp_path, post, ["unlike"], FaultRoute.UNLIKE)
    client, report, _ = restart(admin, viewer, tmp_path)
    assert [(v.liked, v.pending) for v in report.restored] == [(False, True)]
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (False, 0)
    asyncio.run(client.shutdown(1_000))


def test_like_unlike_like_before_the_kill_leaves_one_intent(admin, viewer, tmp_path):
    post = admin.post()
    tap_and_kill(admin, viewer, tmp_path, post, ["like", "unlike", "like"], FaultRoute.LIKE)
    [kept] = json.loads((tmp_path / "likekit-intents-616e61.json").read_text())["intents"]
    assert (kept["post"], kept["liked"]) == (post, True), "only the last intent"
    admin.clear_requests()
    client, report, _ = restart(admin, viewer, tmp_path)
    assert [v.liked for v in report.restored] == [True]
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (True, 1)
    sent = admin.entries(post=post)
    assert len([e for e in sent if e.route in (FaultRoute.LIKE, FaultRoute.UNLIKE)]) <= 1, sent
    asyncio.run(client.shutdown(1_000))


def test_another_viewer_on_the_same_directory_sends_nothing_of_anas(admin, viewer, tmp_path):
    post = admin.post()
    tap_and_kill(admin, viewer, tmp_path, post, ["like"], FaultRoute.LIKE)
    admin.clear_requests()
    ben = admin.user("Ben")
    journal = likekit.IntentJournal.file(str(tmp_path), "ben")
    client = likekit.LikeClient(admin.url, FixedToken(admin.token(ben)), likekit.LikeClientOptions(journal=journal))
    report = client.restore()
    assert (report.restored, report.expired, report.problem) == ([], [], None)
    time.sleep(0.2)
    assert admin.entries(post=post) == [], "nothing sent"
    asyncio.run(client.shutdown(1_000))


def test_an_expired_intent_fails_once_and_sends_nothing(admin, viewer, tmp_path):
    post = admin.post()
    two_days_ago = int(time.time() * 1000) - 2 * 24 * 3600 * 1000
    (tmp_path / "likekit-intents-616e61.json").write_text(
        json.dumps({"format": 1, "viewer": "ana", "intents": [{"post": post, "liked": True, "tapped_at_ms": two_days_ago}]})
    )
    admin.clear_requests()
    rec = Recorder()
    client, report, _sub = restart(admin, viewer, tmp_path, rec)
    assert report.restored == []
    [expired] = report.expired
    assert (expired.post_id, expired.wanted, expired.error.code) == (post, True, "expired")
    assert [(p, w, type(e).__name__) for p, w, e, _ in rec.failures] == [(post, True, "Expired")]
    wait_idle(client)
    assert admin.entries(post=post) == [], "nothing sent"
    assert json.loads((tmp_path / "likekit-intents-616e61.json").read_text())["intents"] == []
    asyncio.run(client.shutdown(1_000))


def test_a_damaged_journal_is_reported_once_and_replaced(admin, viewer, tmp_path):
    for i, damaged in enumerate([b'{"format":1,"viewer":"ana","intents":[{"po', b"\x00\xff", b'{"format":7}']):
        directory = tmp_path / str(i)
        directory.mkdir()
        path = directory / "likekit-intents-616e61.json"
        path.write_bytes(damaged)
        client, report, _ = restart(admin, viewer, directory)
        assert isinstance(report.problem, likekit.LikeError.Journal), report
        assert report.problem.code == "journal_damaged", report.problem
        assert report.restored == [] and report.expired == []
        assert client.restore().problem is None, "reported once"
        wait_for("the journal to be replaced", lambda: path.read_bytes() != damaged)
        assert json.loads(path.read_text()) == {"format": 1, "viewer": "ana", "intents": []}
        asyncio.run(client.shutdown(1_000))


def test_a_second_client_on_one_journal_is_refused(tmp_path):
    first = likekit.IntentJournal.file(str(tmp_path), "ana")
    try:
        likekit.IntentJournal.file(str(tmp_path), "ana")
        raise AssertionError("a second client opened the same journal")
    except likekit.LikeError.Journal as e:
        assert "in use" in e.reason and e.code == "journal_in_use", e
    del first
    likekit.IntentJournal.file(str(tmp_path), "ana")


def test_a_viewer_key_the_file_cannot_be_named_by_is_a_config_error(tmp_path):
    likekit.IntentJournal.file(str(tmp_path), "v" * 114)
    for key in ["", "v" * 115]:
        try:
            likekit.IntentJournal.file(str(tmp_path), key)
            raise AssertionError(f"a viewer key of {len(key)} bytes was taken")
        except likekit.LikeError.Config as e:
            assert "a viewer key of 1 to 114 bytes" in e.reason and e.code == "config", e


def test_one_journal_serves_one_live_client_at_a_time(admin, viewer, tmp_path):
    journal = likekit.IntentJournal.file(str(tmp_path), "ana")
    options = likekit.LikeClientOptions(journal=journal)
    first = likekit.LikeClient(admin.url, viewer[1], options)
    for what, again in [
        ("the same options", options),
        ("the same journal in other options", likekit.LikeClientOptions(max_retries=0, journal=journal)),
    ]:
        try:
            likekit.LikeClient(admin.url, viewer[1], again)
            raise AssertionError(f"{what}: a second client took the journal")
        except likekit.LikeError.Journal as e:
            assert "in use" in e.reason and e.code == "journal_in_use", (what, e)
    memory = likekit.IntentJournal.memory("ana")
    scripted = likekit.LikeClient.scripted(likekit.ScriptedServer(), likekit.LikeClientOptions(journal=memory))
    try:
        likekit.LikeClient.scripted(likekit.ScriptedServer(), likekit.LikeClientOptions(journal=memory))
        raise AssertionError("a second scripted client took a memory journal")
    except likekit.LikeError.Journal as e:
        assert "in use" in e.reason and e.code == "journal_in_use", e
    del scripted
    # closed with nothing in flight: free for the next sign-in
    del first
    second = likekit.LikeClient(admin.url, viewer[1], options)
    assert second.restore().problem is None
    asyncio.run(second.shutdown(1_000))


def test_a_tap_cut_off_by_shutdown_is_sent_by_the_next_sign_in(admin, viewer, tmp_path):
    post = admin.post()
    journal = likekit.IntentJournal.file(str(tmp_path), "ana")
    options = likekit.LikeClientOptions(journal=journal)
    client = likekit.LikeClient(admin.url, viewer[1], options)
    admin.set_faults([FaultRule(FaultRoute.LIKE, post=post, latency_ms=10_000)])
    try:
        client.set_liked(post, True)
        wait_for("the call to reach the server", lambda: admin.entries(route=FaultRoute.LIKE, post=post))
        # sign-out: let calls finish for a while, then let the client go
        assert asyncio.run(client.shutdown(100)) is False
        del client
    finally:
        admin.clear_faults()
    client = likekit.LikeClient(admin.url, viewer[1], options)
    report = client.restore()
    assert [(v.post_id, v.liked, v.pending) for v in report.restored] == [(post, True, True)]
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (True, 1)
    asyncio.run(client.shutdown(1_000))


def test_a_client_released_without_shutdown_keeps_its_tap_for_the_next_sign_in(admin, viewer, tmp_path):
    """Released (`del`, as Kotlin's close() in onCleared) while its call is
    out: the call is abandoned as at shutdown's deadline, so the tap stays
    in the journal, and nothing goes out without the token."""
    import gc

    post = admin.post()
    journal = likekit.IntentJournal.file(str(tmp_path), "ana")
    options = likekit.LikeClientOptions(journal=journal)
    client = likekit.LikeClient(admin.url, viewer[1], options)
    admin.set_faults([FaultRule(FaultRoute.LIKE, post=post, latency_ms=2_000)])
    try:
        client.set_liked(post, True)
        del client
        gc.collect()
        time.sleep(2.5)  # past the latency: a call that went on would be answered
    finally:
        admin.clear_faults()
    # Whatever reached the server came with the viewer's token.
    assert all(e.user == viewer[0] for e in admin.entries(route=FaultRoute.LIKE, post=post))
    deadline = time.monotonic() + 5
    while True:  # the journal is free once the abandoned call has ended
        try:
            client = likekit.LikeClient(admin.url, viewer[1], options)
            break
        except likekit.LikeError.Journal as e:
            assert e.code == "journal_in_use" and time.monotonic() < deadline, e
            time.sleep(0.05)
    report = client.restore()
    assert [(v.post_id, v.liked, v.pending) for v in report.restored] == [(post, True, True)]
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (True, 1)
    asyncio.run(client.shutdown(1_000))


def test_keep_while_offline_holds_the_tap_then_saves(admin, viewer, faults, make_client):
    post = admin.post()
    faults(FaultRule(FaultRoute.LIKE, post=post, action=Status(503)))
    options = likekit.LikeClientOptions(
        retry_min_delay_ms=10, retry_max_delay_ms=20, max_retries=1, retry_jitter=False, keep_while_offline_ms=100
    )
    client = make_client(options)
    rec = Recorder()
    sub = client.subscribe(post, rec)
    client.set_liked(post, True)
    # retries used up: still pending, the view saying why
    rec.await_change(lambda v: v.pending and v.error is not None, timeout=10)
    tries = admin.wait_for_requests(4, route=FaultRoute.LIKE, post=post, timeout=15)
    assert tries.met, f"a few offline tries, answered ({len(tries.entries)} seen)"
    view = client.view(post)
    assert view.liked and view.pending and rec.failures == []
    admin.clear_faults()
    confirmed, _, _ = rec.await_change(lambda v: not v.pending, timeout=10)
    assert (confirmed.liked, confirmed.count, confirmed.error) == (True, 1, None)
    sub.cancel()

    # the default rolls back as ever
    other = admin.post()
    faults(FaultRule(FaultRoute.LIKE, post=other, action=Status(503)))
    client = make_client(FAST_RETRY)
    rec = Recorder()
    sub = client.subscribe(other, rec)
    client.set_liked(other, True)
    rec.await_failure(timeout=10)
    assert not client.view(other).liked
    sub.cancel()


def test_journal_problem_reports_a_failed_save_until_one_works(tmp_path):
    journal_file = tmp_path / "likekit-intents-616e61.json"
    # The journal saves through "<file>.new"; a directory there makes every
    # save fail (even as root), and removing it lets the next one through.
    blocker = tmp_path / "likekit-intents-616e61.json.new"
    server = likekit.ScriptedServer()
    journal = likekit.IntentJournal.file(str(tmp_path), "ana")
    client = likekit.LikeClient.scripted(server, likekit.LikeClientOptions(journal=journal))
    assert client.restore().problem is None
    assert client.journal_problem() is None, "nothing wrong yet"
    wait_idle(client)  # any save restore started has ended (its "<file>.new" renamed)

    blocker.mkdir()
    assert client.set_liked(9, True).pending
    assert len(asyncio.run(server.wait_calls(1, 15_000))) == 1, "the like call, sent all the same"
    wait_for("the failed save to be reported", lambda: client.journal_problem() is not None)
    problem = client.journal_problem()
    assert isinstance(problem, likekit.LikeError.Journal), problem
    assert (problem.code, problem.is_transient) == ("journal_unwritable", False)
    assert "cannot write" in problem.reason, problem.reason
    kept = json.loads(journal_file.read_text())["intents"] if journal_file.exists() else []
    assert kept == [], "the tap is not in the file"

    blocker.rmdir()  # no tap needed: the save is tried again on a timer
    wait_for("the save to be tried again", lambda: client.journal_problem() is None)
    assert [(i["post"], i["liked"]) for i in json.loads(journal_file.read_text())["intents"]] == [(9, True)]
    [call] = server.calls()
    assert server.answer(call.id, 1, True, 2)
    wait_idle(client)
    assert json.loads(journal_file.read_text())["intents"] == [], "the confirmed tap leaves the journal"
    assert client.journal_problem() is None
    asyncio.run(client.shutdown(1_000))

    plain = likekit.LikeClient.scripted(likekit.ScriptedServer())
    assert plain.journal_problem() is None, "no journal, nothing to report"


def test_journal_problem_keeps_reporting_a_journal_that_could_not_be_read(tmp_path):
    # A directory where the file should be: reading it fails with an I/O
    # error (not damaged content), so the client leaves it alone.
    (tmp_path / "likekit-intents-616e61.json").mkdir()
    server = likekit.ScriptedServer()
    journal = likekit.IntentJournal.file(str(tmp_path), "ana")
    client = likekit.LikeClient.scripted(server, likekit.LikeClientOptions(journal=journal))
    assert isinstance(client.journal_problem(), likekit.LikeError.Journal), "before restore"
    report = client.restore()
    assert isinstance(report.problem, likekit.LikeError.Journal), report
    assert report.problem.code == "journal_unreadable", report.problem
    client.set_liked(5, True)
    wait_for("the like call", lambda: len(server.calls()) == 1)
    assert server.answer(server.calls()[0].id, 1, True, 2)
    wait_idle(client)
    problem = client.journal_problem()
    assert isinstance(problem, likekit.LikeError.Journal), "still reported after restore and a tap"
    assert "cannot read" in problem.reason, problem.reason
    assert (tmp_path / "likekit-intents-616e61.json").is_dir(), "left untouched"
    assert not (tmp_path / "likekit-intents-616e61.json.new").exists(), "never written"
    asyncio.run(client.shutdown(1_000))
