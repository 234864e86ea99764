"""Fixtures for the Python tests of the generated LikeKit bindings.

Run by `cargo xtask test --only python`, which generates the `likekit`
module next to the library, starts `likekit-server` on a free loopback port
and passes LIKEKIT_URL and LIKEKIT_ADMIN_KEY.
"""

import asyncio
import itertools
import json
import os
import threading
import time
import urllib.error
import urllib.request

import pytest

import likekit
from likekit_admin import Admin

_ids = itertools.count(1000)
# The public API is on loopback: never through a proxy.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# Retries fast and without jitter, so that failure tests take milliseconds.
FAST_RETRY = likekit.LikeClientOptions(
    retry_min_delay_ms=10, retry_max_delay_ms=20, max_retries=2, retry_jitter=False
)


class ServerAdmin(Admin):
    """The admin client, with fresh ids and the helpers the tests share."""

    def next_id(self):
        return next(_ids)

    def user(self, name, friends=()):
        """A new user named `name` with these friends: their id."""
        user_id = self.next_id()
        self.create_user(user_id, name)
        if friends:
            self.set_friends(user_id, friends)
        return user_id

    def post(self, post_id=None):
        """A post (new unless `post_id` names one): its id."""
        post_id = self.next_id() if post_id is None else post_id
        self.create_post(post_id)
        return post_id

    def token(self, user_id):
        """A sign-in token for `user_id`, valid for an hour."""
        return self.mint_token(user_id)

    def as_viewer(self, method, path, token):
        """Status and JSON body of a request to the public API as a viewer."""
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with _NO_PROXY.open(request, timeout=10) as response:
                return response.status, json.loads(response.read().decode() or "null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read().decode() or "null")

    def entries(self, **filters):
        """The request journal's entries (JournalEntry), oldest first, that
        match every filter given (`route`, `method`, `post`, `user`,
        `since`). Fails when the journal let older entries go: a missing
        call would then prove nothing."""
        journal = self.requests(**filters)
        assert journal.dropped == 0, f"the journal let go of {journal.dropped} entries"
        return journal.entries


class FixedToken(likekit.TokenProvider):
    """Always the same token, as an app with a signed-in user would give."""

    def __init__(self, token):
        self._token = token

    def token(self, refresh):
        return None if refresh else self._token


class Recorder(likekit.LikeObserver):
    """Records every event with the thread it arrived on."""

    def __init__(self):
        self.changes = []  # (view, thread name, monotonic ns)
        self.failures = []  # (post_id, wanted, error, thread name)
        self._arrived = threading.Condition()

    def on_change(self, view):
        with self._arrived:
            self.changes.append((view, threading.current_thread().name, time.monotonic_ns()))
            self._arrived.notify_all()

    def on_failure(self, post_id, wanted, error):
        with self._arrived:
            self.failures.append((post_id, wanted, error, threading.current_thread().name))
            self._arrived.notify_all()

    def _await(self, find, what, timeout):
        with self._arrived:
            if not self._arrived.wait_for(find, timeout):
                raise AssertionError(f"{what} within {timeout} s; saw {[c[0] for c in self.changes]}")
            return find()

    def await_change(self, matches, timeout=5.0):
        return self._await(
            lambda: next((c for c in self.changes if matches(c[0])), None), "no matching change", timeout
        )

    def await_failure(self, timeout=5.0):
        return self._await(lambda: self.failures[0] if self.failures else None, "no failure", timeout)


def wait_idle(client, timeout_ms=10_000):
    assert asyncio.run(client.wait_idle(timeout_ms)), "the client did not become idle"


@pytest.fixture(scope="session")
def admin():
    url = os.environ.get("LIKEKIT_URL")
    key = os.environ.get("LIKEKIT_ADMIN_KEY")
    if not url or not key:
        pytest.fail("LIKEKIT_URL and LIKEKIT_ADMIN_KEY are not set (run `cargo xtask test --only python`)")
    return ServerAdmin(url, key, timeout=10)


@pytest.fixture(scope="session")
def viewer(admin):
    """A signed-in viewer: (user id, token provider)."""
    user_id = admin.user("Ana")
    return user_id, FixedToken(admin.token(user_id))


@pytest.fixture
def faults(admin):
    """Sets fault rules (FaultRule) for one test and clears them after it."""

    def set_faults(*rules):
        in_force = admin.set_faults(rules)
        assert in_force.rules == list(rules), "the server changed the rules"
        return in_force

    yield set_faults
    admin.clear_faults()


@pytest.fixture
def journal(admin):
    """The request journal, emptied before and after one test."""
    admin.clear_requests()
    yield admin.entries
    admin.clear_requests()


@pytest.fixture
def make_client(admin, viewer):
    """Makes clients for one test and shuts them down after it, so that no
    background work outlives the test."""
    made = []

    def make(options=None, tokens=viewer[1]):
        client = likekit.LikeClient(admin.url, tokens, options or likekit.LikeClientOptions())
        made.append(client)
        return client

    yield make
    for client in made:
        asyncio.run(client.shutdown(1_000))
