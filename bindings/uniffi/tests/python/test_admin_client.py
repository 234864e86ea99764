"""The admin client (`likekit_admin`) against the running server: its
operations and types are the ones `/openapi.json` describes, its errors are
typed, and every operation does what it says."""

import contextlib
import http.server
import inspect
import json
import os
import socket
import threading
import time
import urllib.parse
import urllib.request

import pytest

import likekit_admin
from likekit_admin import (
    FAULT_ACTIONS,
    OPERATIONS,
    Admin,
    AdminError,
    AsyncAdmin,
    Created,
    Drop,
    FaultAction,
    FaultMethod,
    FaultPhase,
    FaultRoute,
    FaultRule,
    FaultRules,
    Hang,
    Journal,
    JournalEntry,
    JournalFault,
    JournalRoute,
    Malformed,
    Oversized,
    RequestFilter,
    Reset,
    RuleState,
    Seed,
    SeedPost,
    SeedUser,
    SlowBody,
    Status,
    StoredPost,
    StoredUser,
    Truncate,
    WriteResult,
)

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def openapi(admin):
    with _NO_PROXY.open(admin.url + "/openapi.json", timeout=10) as response:
        return json.load(response)


def schema_of(spec, name):
    return spec["components"]["schemas"][name]


def resolve(spec, schema):
    while "$ref" in schema:
        schema = schema_of(spec, schema["$ref"].rsplit("/", 1)[1])
    return schema


def action_variants(spec):
    """The FaultAction schema's variants by their `kind`."""
    variants = {}
    for variant in schema_of(spec, "FaultAction")["oneOf"]:
        (kind,) = variant["properties"]["kind"]["enum"]
        variants[kind] = variant
    return variants


def flatten_variants(spec, schema):
    """The non-null variants of a `oneOf`, nested ones spread out."""
    variants = []
    for variant in schema["oneOf"]:
        variant = resolve(spec, variant)
        if "oneOf" in variant:
            variants += flatten_variants(spec, variant)
        elif variant.get("type") != "null":
            variants.append(variant)
    return variants


def assert_written_keys_are_properties(spec, value, schema, where):
    """Every key `value` has is a property of `schema`, recursively, and
    every enum value one the schema lists."""
    schema = resolve(spec, schema)
    if "oneOf" in schema:
        if value is None:
            return
        variants = flatten_variants(spec, schema)
        if isinstance(value, dict) and "kind" in value:
            variants = [
                v for v in variants if value["kind"] in v.get("properties", {}).get("kind", {}).get("enum", [])
            ]
        assert len(variants) == 1, f"{where}: {value!r} matches {len(variants)} variants"
        assert_written_keys_are_properties(spec, value, variants[0], where)
        return
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r} is not one of {schema['enum']}"
    if isinstance(value, dict) and "properties" in schema:
        for key, item in value.items():
            assert key in schema["properties"], f"{where}: {key!r} is not a property of the schema"
            assert_written_keys_are_properties(spec, item, schema["properties"][key], f"{where}.{key}")
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            assert_written_keys_are_properties(spec, item, schema["items"], f"{where}[{i}]")


def assert_comes_back(example, encoded, where):
    """Every key of `example` is in `encoded` with the same value and JSON
    type, recursively."""
    if isinstance(example, dict):
        assert type(encoded) is dict, f"{where}: {encoded!r} is not an object"
        for key, value in example.items():
            assert key in encoded, f"{where}: {key!r} did not come back"
            assert_comes_back(value, encoded[key], f"{where}.{key}")
    elif isinstance(example, list):
        assert type(encoded) is list and len(encoded) == len(example), f"{where}: {encoded!r}"
        for i, (a, b) in enumerate(zip(example, encoded)):
            assert_comes_back(a, b, f"{where}[{i}]")
    else:
        numbers = (int, float)
        same_type = type(encoded) is type(example) or (
            type(encoded) in numbers and type(example) in numbers
        )
        assert same_type and encoded == example, f"{where}: {example!r} came back as {encoded!r}"


# ---------------------------------------------------------------- conformance


def test_the_operations_are_the_servers(openapi):
    served = {
        (operation["operationId"], method.upper(), path)
        for path, item in openapi["paths"].items()
        if path.startswith("/admin/")
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert served, "no admin operations served"
    assert {(name, method, path) for name, (method, path) in OPERATIONS.items()} == served
    assert Admin.OPERATIONS is OPERATIONS
    for name in OPERATIONS:
        assert callable(getattr(Admin, name)), f"no method for {name}"


TYPES = {
    "FaultRule": FaultRule,
    "FaultRules": FaultRules,
    "RuleState": RuleState,
    "Journal": Journal,
    "JournalEntry": JournalEntry,
    "Seed": Seed,
    "SeedUser": SeedUser,
    "SeedPost": SeedPost,
    "StoredUser": StoredUser,
    "StoredPost": StoredPost,
}


@pytest.mark.parametrize("name", TYPES)
def test_every_example_comes_back_as_it_was(openapi, name):
    schema = schema_of(openapi, name)
    examples = schema.get("examples", [])
    assert examples, f"{name} has no examples"
    for example in examples:
        value = TYPES[name].from_json(example)
        assert isinstance(value, TYPES[name])
        encoded = value.to_json()
        assert_comes_back(example, encoded, name)
        assert_written_keys_are_properties(openapi, encoded, schema, name)
        assert TYPES[name].from_json(encoded) == value
        assert json.loads(json.dumps(encoded)) == encoded, "not plain JSON"


def sample_of(spec, schema):
    """A value of a query parameter's `schema`, to send: an enum's first
    value, 1, or a tag-shaped string."""
    schema = resolve(spec, schema)
    if "enum" in schema:
        return schema["enum"][0]
    return 1 if schema.get("type") == "integer" else "t"


@pytest.mark.parametrize("operation", ["requests", "clear_requests", "get_faults", "clear_faults"])
def test_the_filters_are_the_documents_query_parameters(openapi, operation):
    method, path = OPERATIONS[operation]
    parameters = openapi["paths"][path][method.lower()].get("parameters", [])
    names = [p["name"] for p in parameters]
    assert names, f"{operation} takes a query"
    if operation in ("requests", "clear_requests"):
        # GET also takes the wait of wait_for_requests; DELETE waits for nothing.
        wait = ["wait_for", "timeout_ms"] if operation == "requests" else []
        assert list(RequestFilter._KEYS) + wait == names
        filters = [p for p in parameters if p["name"] not in wait]
        given = RequestFilter(**{p["name"]: sample_of(openapi, p["schema"]) for p in filters})
        assert list(urllib.parse.parse_qs(given.query())) == list(RequestFilter._KEYS), "every filter given is sent"
        if wait:
            with _recording_stub(200, b'{"entries": [], "capacity": 1, "dropped": 0, "met": false}') as (url, seen):
                Admin(url, "key", timeout=5).wait_for_requests(1, given, timeout=0.25)
            (sent,) = seen
            query = urllib.parse.urlsplit(sent.split(" ", 1)[1]).query
            assert list(urllib.parse.parse_qs(query)) == names, "every filter and the wait are sent"
    else:
        # get_faults and clear_faults take the tag alone, by the same name.
        assert names == ["tag"]
        for call in (Admin.get_faults, Admin.clear_faults):
            assert list(inspect.signature(call).parameters) == ["self", "tag"]


@pytest.mark.parametrize(
    "name, enum",
    [
        ("FaultRoute", likekit_admin.FaultRoute),
        ("FaultMethod", likekit_admin.FaultMethod),
        ("FaultPhase", likekit_admin.FaultPhase),
        ("WriteResult", likekit_admin.WriteResult),
    ],
)
def test_the_enums_are_the_schemas(openapi, name, enum):
    assert [member.value for member in enum] == schema_of(openapi, name)["enum"]


def test_the_journal_entrys_route_and_fault_are_the_schemas_without_star_and_with_latency(openapi):
    # The schema's route for an entry is the rules' (with `*`); an entry names its request's own.
    route = resolve(openapi, schema_of(openapi, "JournalEntry")["properties"]["route"])
    assert [member.value for member in JournalRoute] == [r for r in route["enum"] if r != "*"]
    # What acted is an action's kind; a rule that only delayed is `latency`.
    assert [member.value for member in JournalFault] == list(action_variants(openapi)) + ["latency"]
    assert [member.value for member in JournalFault] == list(FAULT_ACTIONS) + ["latency"]


# One of each kind, every field set.
ACTIONS = [
    Status(429, body={"error": {"code": "slow_down", "message": "later"}}, retry_after_secs=2),
    Drop(),
    Reset(),
    Hang(),
    Truncate(12),
    Malformed(),
    SlowBody(4, 50),
    Oversized(2048),
]


def test_the_fault_action_kinds_are_the_schemas(openapi):
    variants = action_variants(openapi)
    assert list(FAULT_ACTIONS) == list(variants)
    assert [action.kind for action in ACTIONS] == list(variants)
    for action in ACTIONS:
        encoded = action.to_json()
        variant = variants[action.kind]
        assert set(encoded) == set(variant["properties"]), f"{action.kind}: every field is written"
        assert set(variant["required"]) <= set(encoded)
        assert_written_keys_are_properties(openapi, encoded, schema_of(openapi, "FaultAction"), action.kind)
        assert FaultAction.from_json(encoded) == action
        assert type(action).from_json(encoded) == action


def test_a_rule_writes_only_what_differs_from_the_defaults(openapi):
    assert FaultRule(FaultRoute.LIKE).to_json() == {"route": "like"}
    assert FaultRule.from_json({"route": "like"}) == FaultRule(FaultRoute.LIKE)
    everything = FaultRule(
        FaultRoute.ALL,
        method=FaultMethod.GET,
        post=42,
        user=7,
        nth=1,
        every=2,
        first=3,
        after=4,
        probability=0.5,
        phase=FaultPhase.AFTER,
        latency_ms=10,
        jitter_ms=5,
        error_rate=0.25,
        status=502,
        drop_rate=0.125,
        fail_next=1,
        action=Drop(),
        tag="every-field#1",
    )
    encoded = everything.to_json()
    assert set(encoded) == set(schema_of(openapi, "FaultRule")["properties"])
    assert encoded["route"] == "*" and encoded["action"] == {"kind": "drop"}
    assert FaultRule.from_json(encoded) == everything
    # The wire strings are taken for the enums.
    assert FaultRule("like", method="POST", phase="after") == FaultRule(
        FaultRoute.LIKE, method=FaultMethod.POST, phase=FaultPhase.AFTER
    )
    assert RequestFilter(route="like", post=42, since=3).query() == "route=like&post=42&since=3"
    assert RequestFilter(request_id="checkout 7").query() == "request_id=checkout+7"
    assert RequestFilter(user=7, fault_tag="checkout-7").query() == "user=7&fault_tag=checkout-7"
    assert RequestFilter.from_json({"fault_tag": "checkout-7"}) == RequestFilter(fault_tag="checkout-7")
    assert RequestFilter.from_json({"route": "*"}).route is FaultRoute.ALL


ENTRY = {
    "seq": 1,
    "request_id": "checkout-7f3a",
    "at_ms": 5,
    "duration_ms": 1,
    "method": "POST",
    "route": "like",
    "path": "/posts/1/like",
    "posts": [1],
    "in_flight": False,
}

WRONG = [
    (FaultRule, {"route": "nowhere"}),
    (FaultRule, {"route": "like", "post": "42"}),
    (FaultRule, {"route": "like", "post": 0}),
    (FaultRule, {"route": "like", "nth": True}),
    (FaultRule, {"route": "like", "probability": 2}),
    (FaultRule, {"route": "like", "phase": "during"}),
    (FaultRule, {"post": 42}),
    (FaultRule, {"route": "like", "action": {"kind": "explode"}}),
    (FaultRule, {"route": "like", "action": {"kind": "truncate"}}),
    (FaultRule, ["route", "like"]),
    (FaultRule, {"route": "like", "tag": ""}),
    (FaultRule, {"route": "like", "tag": "two words"}),
    (FaultRule, {"route": "like", "tag": "t" * 65}),
    (FaultRule, {"route": "like", "tag": "é"}),
    (FaultRule, {"route": "like", "tag": 5}),
    (FaultRules, {"rules": {"route": "like"}}),
    (FaultRules, {"rules": [], "seed": -1}),
    (FaultRules, {}),
    (FaultRules, {"rules": [], "state": {"matched": 1}}),
    (RuleState, {"matched": "1", "fired": 0, "acted": 0}),
    (RuleState, {"matched": 1, "fired": 0}),
    (RuleState, {"matched": 1, "fired": 0, "acted": 0, "fail_next_left": -1}),
    (JournalEntry, {k: v for k, v in ENTRY.items() if k != "request_id"}),
    (JournalEntry, {**ENTRY, "request_id": 7}),
    (JournalEntry, {**ENTRY, "seq": "1"}),
    (JournalEntry, {**ENTRY, "write": "maybe"}),
    (JournalEntry, {**ENTRY, "in_flight": 0}),
    (JournalEntry, {k: v for k, v in ENTRY.items() if k != "path"}),
    (JournalEntry, {**ENTRY, "route": "*"}),
    (JournalEntry, {**ENTRY, "fault": "explode"}),
    (JournalEntry, {**ENTRY, "fault": "DROP"}),
    (JournalEntry, {**ENTRY, "fault": 5}),
    (Journal, {"entries": [{**ENTRY, "route": "*"}], "capacity": 10, "dropped": 0}),
    (Journal, {"entries": [ENTRY], "capacity": 10}),
    (Journal, {"entries": [{**ENTRY, "posts": [1.5]}], "capacity": 10, "dropped": 0}),
    (Seed, {"users": {"id": 1, "name": "Ana"}}),
    (SeedUser, {"id": 1, "name": 7}),
    (SeedUser, {"id": 1, "name": "Ana", "friends": [0]}),
    (SeedPost, {"id": 2**63}),
    (SeedPost, {"id": 1, "likers": None}),
    (StoredUser, {"id": 1, "name": "Ana"}),
    (StoredUser, {"id": 1, "name": "Ana", "friends": ["Ben"]}),
    (StoredPost, {"id": 1, "count": -1, "version": 0, "recent_likers": []}),
    (StoredPost, {"id": 1, "count": 0, "version": 0}),
    (RequestFilter, {"since": -1}),
    (RequestFilter, {"request_id": 7}),
    (RequestFilter, {"fault_tag": "two words"}),
    (RequestFilter, {"fault_tag": ""}),
    (RequestFilter, {"faultTag": "checkout-7"}),
    # What a test writes is refused with a field the server would refuse.
    (Seed, {"users": [], "post": []}),
    (SeedUser, {"id": 1, "name": "Ana", "freinds": [2]}),
    (SeedPost, {"id": 1, "likes": [2]}),
]


@pytest.mark.parametrize("cls, value", WRONG, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(WRONG)])
def test_decoding_refuses_a_value_of_the_wrong_type(cls, value):
    with pytest.raises(ValueError):
        cls.from_json(value)


def test_an_answer_with_fields_the_client_does_not_know_is_read_without_them():
    """A newer server may add a field to any answer: it is ignored, while a
    known field of the wrong type, or a missing one, is still refused."""
    newer = {
        "seed": 7,
        "rules": [{"route": "like", "nth": 2, "shadow": True, "action": {"kind": "truncate", "bytes": 3, "chunked": 1}}],
        "state": [{"matched": 1, "fired": 1, "acted": 0, "skipped": 0}],
        "generation": 4,
    }
    expected = FaultRules(
        [FaultRule(FaultRoute.LIKE, nth=2, action=Truncate(3))], seed=7, state=[RuleState(1, 1, 0)]
    )
    assert FaultRules.from_json(newer) == expected
    assert FaultAction.from_json({"kind": "drop", "bytes": 1}) == Drop()
    assert Truncate.from_json({"kind": "truncate", "bytes": 3, "chunked": 1}) == Truncate(3)
    with _stub(200, json.dumps(newer).encode()) as url:
        assert Admin(url, "key", timeout=5).get_faults() == expected
    journal = {"entries": [{**ENTRY, "region": "eu"}], "capacity": 10, "dropped": 0, "oldest_seq": 1}
    with _stub(200, json.dumps(journal).encode()) as url:
        assert [e.route for e in Admin(url, "key", timeout=5).requests().entries] == [JournalRoute.LIKE]
    post = {"id": 1, "count": 2, "version": 3, "recent_likers": [4], "hot": True}
    with _stub(200, json.dumps(post).encode()) as url:
        assert Admin(url, "key", timeout=5).get_post(1) == StoredPost(1, 2, 3, [4])

    for wrong in ({"rules": [{"route": "like", "nth": "2", "shadow": True}]}, {"rules": [{"shadow": True}]}):
        with _stub(200, json.dumps(wrong).encode()) as url, pytest.raises(AdminError) as unreadable:
            Admin(url, "key", timeout=5).get_faults()
        assert (unreadable.value.status, unreadable.value.code) == (200, "unreadable")


def test_an_entry_decodes_with_its_types():
    entry = JournalEntry.from_json(
        {**ENTRY, "user": 7, "status": None, "write": "applied", "fault_phase": "after", "fault": "drop"}
    )
    assert (entry.method, entry.route, entry.write, entry.fault_phase) == (
        FaultMethod.POST,
        JournalRoute.LIKE,
        WriteResult.APPLIED,
        FaultPhase.AFTER,
    )
    assert entry.route is JournalRoute.LIKE and entry.fault is JournalFault.DROP
    assert (entry.user, entry.status, entry.fault_rule) == (7, None, None)
    assert entry.to_json()["status"] is None and entry.to_json()["fault_rule"] is None
    # A journal route is the fault route of the same name, and filters by it.
    assert entry.route == FaultRoute.LIKE
    assert RequestFilter(route=entry.route).route is FaultRoute.LIKE
    assert JournalEntry.from_json({**ENTRY, "fault": None}).fault is None, "no fault touched it"


@pytest.mark.parametrize("fault", list(JournalFault), ids=[fault.value for fault in JournalFault])
def test_an_entry_decodes_each_fault_as_its_journal_fault(fault):
    entry = JournalEntry.from_json({**ENTRY, "fault_rule": 0, "fault_phase": "before", "fault": fault.value})
    assert entry.fault is fault
    written = entry.to_json()["fault"]
    assert type(written) is str and written == fault.value, "written as its wire string"
    assert JournalEntry.from_json(entry.to_json()) == entry


# ---------------------------------------------------------------- errors


def test_an_error_answer_is_an_admin_error_with_status_and_code(admin):
    with pytest.raises(AdminError) as blank:
        admin.create_user(admin.next_id(), "   ")
    assert (blank.value.status, blank.value.code) == (400, "bad_name")
    assert blank.value.message and "bad_name" in str(blank.value)

    with pytest.raises(AdminError) as ttl:
        admin.mint_token(admin.user("Ana"), ttl_secs=0)
    assert (ttl.value.status, ttl.value.code) == (400, "bad_ttl")
    with pytest.raises(AdminError) as start:
        admin.mint_token(admin.user("Ana"), valid_from_secs=31_536_001)
    assert (start.value.status, start.value.code) == (400, "bad_valid_from")
    assert "valid_from_secs" in str(start.value), start.value

    # A wrong key is the server's own 401 and message, for a call with a body as for one without.
    wrong_key = Admin(admin.url, "not the key", timeout=10)
    nobodys_rule = [FaultRule(FaultRoute.LIKES, post=admin.next_id())]
    calls = [
        wrong_key.get_faults,
        wrong_key.reset,
        lambda: wrong_key.create_user(admin.next_id(), "Ana"),
        lambda: wrong_key.create_post(admin.next_id()),
        lambda: wrong_key.set_friends(admin.next_id(), []),
        lambda: wrong_key.mint_token(admin.next_id()),
        lambda: wrong_key.set_faults(nobodys_rule),
        lambda: wrong_key.add_faults(nobodys_rule),
        lambda: wrong_key.seed(Seed(posts=[SeedPost(admin.next_id())])),
    ]
    for call in calls:
        with pytest.raises(AdminError) as refused:
            call()
        assert (refused.value.status, refused.value.code) == (401, "bad_admin_key")
        assert "X-Admin-Key" in refused.value.message, "the server's message"


def test_no_answer_is_an_admin_error_without_status():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    with pytest.raises(AdminError) as refused:
        Admin(f"http://127.0.0.1:{closed}", "key", timeout=5).get_faults()
    assert (refused.value.status, refused.value.code) == (None, "no_answer")

    # A server that takes the connection and never answers.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        with pytest.raises(AdminError) as timed_out:
            Admin(f"http://127.0.0.1:{silent.getsockname()[1]}", "key", timeout=0.3).get_faults()
        assert time.monotonic() - started < 5
    assert (timed_out.value.status, timed_out.value.code) == (None, "no_answer")
    assert "timed out" in timed_out.value.message


class _Stub(http.server.BaseHTTPRequestHandler):
    """Answers every request with the server's `answer` (status, body), and
    notes it in the server's `seen`."""

    def _answer(self):
        self.server.seen.append(f"{self.command} {self.path}")
        status, body = self.server.answer
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.mark.parametrize(
    "status, body, message",
    [
        (502, b"bad gateway", "bad gateway"),
        (500, b'{"error": "flat"}', '{"error": "flat"}'),
        (200, b"<html>", "<html>"),
        (200, b'{"rules": "none"}', "FaultRules.rules"),
    ],
)
def test_an_unreadable_answer_is_code_unreadable(status, body, message):
    with _stub(status, body) as url, pytest.raises(AdminError) as unreadable:
        Admin(url, "key", timeout=5).get_faults()
    assert (unreadable.value.status, unreadable.value.code) == (status, "unreadable")
    assert message in unreadable.value.message


@pytest.mark.parametrize("body", [b"<html>not the mock</html>", b"{}", b'{"ok": false}'])
@pytest.mark.parametrize(
    "operation",
    ["create_user", "create_post", "set_friends", "reset", "clear_requests", "seed"],
)
def test_every_call_checks_its_2xx_answer(operation, body):
    """A page from another server answering 200 to any path is
    ``unreadable`` for every operation, never a silent success."""
    calls = {
        "create_user": lambda admin: admin.create_user(7, "Ana"),
        "create_post": lambda admin: admin.create_post(42),
        "set_friends": lambda admin: admin.set_friends(7, []),
        "reset": lambda admin: admin.reset(),
        "clear_requests": lambda admin: admin.clear_requests(),
        "seed": lambda admin: admin.seed(Seed()),
    }
    with _stub(200, body) as url, pytest.raises(AdminError) as unreadable:
        calls[operation](Admin(url, "key", timeout=5))
    assert (unreadable.value.status, unreadable.value.code) == (200, "unreadable")


@pytest.mark.parametrize("url", ["127.0.0.1:8080", "localhost:8080", "ftp://127.0.0.1:8080", "http//x", "http://"])
def test_a_base_url_that_is_not_http_is_refused_at_once(url):
    with pytest.raises(ValueError, match="http:// or https://"):
        Admin(url, "key")


@pytest.mark.parametrize("field, value", [("route", "*"), ("fault", "explode")])
def test_a_journal_entry_of_a_route_or_fault_the_client_does_not_type_is_unreadable(field, value):
    body = json.dumps({"entries": [{**ENTRY, field: value}], "capacity": 10, "dropped": 0}).encode()
    with _stub(200, body) as url, pytest.raises(AdminError) as unreadable:
        Admin(url, "key", timeout=5).requests()
    assert (unreadable.value.status, unreadable.value.code) == (200, "unreadable")
    assert f"JournalEntry.{field}" in unreadable.value.message


class _Redirect(http.server.BaseHTTPRequestHandler):
    """Answers every request with the server's `answer` (a 3xx status) and
    `Location: <server.location>`, noting it in `seen` with its admin key."""

    def _answer(self):
        self.server.seen.append((f"{self.command} {self.path}", self.headers.get("X-Admin-Key")))
        self.send_response(self.server.answer)
        self.send_header("Location", self.server.location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(status):
    """A redirect (a proxy before the server, say) is refused as
    ``unreadable``, naming where it led; the key is never sent there."""
    with _recording_stub(200, b'{"ok": true}') as (elsewhere, seen_elsewhere):
        redirect = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
        redirect.answer = status
        redirect.location = f"{elsewhere}/elsewhere"
        redirect.seen = []
        threading.Thread(target=redirect.serve_forever, daemon=True).start()
        try:
            with pytest.raises(AdminError) as refused:
                Admin(f"http://127.0.0.1:{redirect.server_address[1]}", "secret-key", timeout=5).reset()
        finally:
            redirect.shutdown()
            redirect.server_close()
    assert (refused.value.status, refused.value.code) == (status, "unreadable")
    assert f"POST /admin/reset was redirected to {elsewhere}/elsewhere" in refused.value.message
    assert "as the URL" in refused.value.message
    assert redirect.seen == [("POST /admin/reset", "secret-key")]
    assert seen_elsewhere == [], "nothing was sent where it led"


@pytest.mark.parametrize(
    "timeout, error",
    [(None, TypeError), ("5", TypeError), (True, TypeError), (0, ValueError), (-1, ValueError),
     (float("nan"), ValueError), (float("inf"), ValueError)],
)
def test_a_timeout_that_is_not_a_number_of_seconds_above_0_is_refused_at_once(timeout, error):
    with pytest.raises(error, match="timeout must be a number of seconds above 0"):
        Admin("http://127.0.0.1:8080", "key", timeout=timeout)
    with pytest.raises(error, match="timeout must be a number of seconds above 0"):
        AsyncAdmin("http://127.0.0.1:8080", "key", timeout=timeout)
    assert Admin("http://127.0.0.1:8080", "key", timeout=0.5).timeout == 0.5


def test_async_admin_has_every_method_of_admin_with_its_signature():
    """`AsyncAdmin` is `Admin` for async tests: the same calls, each a
    coroutine run in a thread."""
    public = lambda cls: {name for name in vars(cls) if not name.startswith("_")}  # noqa: E731
    assert public(AsyncAdmin) == public(Admin) - {"OPERATIONS"}, "the same methods"
    for name in public(Admin) - {"OPERATIONS"}:
        assert inspect.iscoroutinefunction(getattr(AsyncAdmin, name)), name
        assert inspect.signature(getattr(AsyncAdmin, name)) == inspect.signature(getattr(Admin, name)), name


def test_async_admin_calls_in_a_thread_and_raises_the_same_errors(admin):
    import asyncio

    waiting = AsyncAdmin(admin.url, os.environ["LIKEKIT_ADMIN_KEY"], timeout=10)
    post = admin.next_id()

    async def scenario():
        await waiting.create_post(post)
        with pytest.raises(AdminError) as missing:
            await waiting.get_post(admin.next_id())
        return (await waiting.get_post(post)).count, missing.value.code

    assert asyncio.run(scenario()) == (0, "post_not_found")


@contextlib.contextmanager
def _recording_stub(status, body):
    """The URL of a server that answers every request `status` with
    `body`, and the list of the requests it saw (``"GET /admin/faults"``),
    while the block runs."""
    stub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    stub.answer = (status, body)
    stub.seen = []
    thread = threading.Thread(target=stub.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{stub.server_address[1]}", stub.seen
    finally:
        stub.shutdown()
        stub.server_close()


@contextlib.contextmanager
def _stub(status, body):
    """The URL of a server that answers every request `status` with
    `body`, while the block runs."""
    with _recording_stub(status, body) as (url, _):
        yield url


@pytest.mark.parametrize(
    "call",
    [
        lambda admin: admin.get_faults(tag=None),
        lambda admin: admin.get_faults(None),
        lambda admin: admin.clear_faults(tag=None),
        lambda admin: admin.clear_faults(7),
        lambda admin: admin.requests(user=None),
        lambda admin: admin.requests(None),
        lambda admin: admin.clear_requests(user=None),
        lambda admin: admin.clear_requests(post=42, since=None),
        lambda admin: admin.clear_requests(None),
    ],
    ids=[
        "get_faults-tag-None",
        "get_faults-None",
        "clear_faults-tag-None",
        "clear_faults-7",
        "requests-user-None",
        "requests-None",
        "clear_requests-user-None",
        "clear_requests-since-None",
        "clear_requests-None",
    ],
)
def test_a_filter_given_as_none_is_refused_before_anything_is_sent(call):
    """A test whose tag or id is unset must not read or remove every
    test's rules or journal entries: ``None`` is refused, not taken as no
    filter."""
    with _recording_stub(200, b'{"ok": true, "rules": []}') as (url, seen):
        with pytest.raises(TypeError, match="None|a tag is a string"):
            call(Admin(url, "key", timeout=5))
        assert seen == [], "nothing was sent"


def test_a_filter_left_out_selects_everything_and_one_given_is_sent():
    with _recording_stub(200, b'{"ok": true, "rules": []}') as (url, seen):
        stub = Admin(url, "key", timeout=5)
        stub.get_faults()
        stub.clear_faults()
        stub.clear_faults(tag="checkout-7")
        stub.clear_requests()
        stub.clear_requests(RequestFilter(user=7))
        stub.clear_requests(user=7, post=42)
    assert seen == [
        "GET /admin/faults",
        "DELETE /admin/faults",
        "DELETE /admin/faults?tag=checkout-7",
        "DELETE /admin/requests",
        "DELETE /admin/requests?user=7",
        "DELETE /admin/requests?post=42&user=7",
    ]


# ---------------------------------------------------------------- operations


def test_set_get_and_clear_faults_round_trip_with_a_seed(admin):
    post, user = admin.post(), admin.user("Ana")
    # Every kind of action and every field, all about a post nobody reads.
    rules = [
        FaultRule(FaultRoute.ALL, post=post, phase=FaultPhase.AFTER, action=action)
        if action.kind in ("truncate", "slow_body")
        else FaultRule(FaultRoute.ALL, post=post, action=action)
        for action in ACTIONS
    ]
    rules.append(
        FaultRule(
            FaultRoute.LIKE,
            method=FaultMethod.POST,
            post=post,
            user=user,
            nth=4,
            every=2,
            first=10,
            after=1,
            probability=0.5,
            latency_ms=20,
            jitter_ms=10,
            error_rate=0.25,
            status=502,
            drop_rate=0.125,
            fail_next=1,
        )
    )
    sent = FaultRules(rules, seed=20_240_601)
    try:
        in_force = admin.set_faults(sent)
        assert (in_force.rules, in_force.seed) == (sent.rules, sent.seed)
        # Nothing used yet: what is left of `fail_next` and `first` is whole.
        assert in_force.state[-1] == RuleState(fail_next_left=1, first_left=10)
        assert in_force.state[:-1] == [RuleState()] * len(ACTIONS)
        assert admin.get_faults() == in_force

        cleared = admin.clear_faults()
        assert cleared.rules == []
        assert admin.get_faults().rules == []

        # Without a seed the server picks one and reports it.
        picked = admin.set_faults([FaultRule(FaultRoute.LIKES, post=post, latency_ms=1)])
        assert isinstance(picked.seed, int)
        assert admin.get_faults() == picked
    finally:
        admin.clear_faults()
    assert admin.get_faults().rules == []


def test_get_faults_says_what_each_rule_has_used_up(admin):
    user, post = admin.user("Ana"), admin.post()
    token = admin.token(user)
    try:
        admin.set_faults(
            [
                FaultRule(FaultRoute.LIKES, post=post, fail_next=2),
                FaultRule(FaultRoute.LIKES, post=post, first=5, latency_ms=1),
            ]
        )
        statuses = [admin.as_viewer("GET", f"/posts/{post}/likes", token)[0] for _ in range(3)]
        assert statuses == [503, 503, 200]
        used = admin.get_faults()
        assert [rule.fail_next for rule in used.rules] == [2, 0], "the rules as they were set"
        assert used.state == [
            RuleState(matched=3, fired=3, acted=2, fail_next_left=0),
            # The two failed reads are counted, not fired on: the rule
            # before it acted on them.
            RuleState(matched=3, fired=1, acted=0, first_left=2),
        ]
        # What was read can be set again as it is: the counters start over.
        again = admin.set_faults(used)
        assert again.rules == used.rules
        assert again.state == [RuleState(fail_next_left=2), RuleState(first_left=5)]
        assert admin.as_viewer("GET", f"/posts/{post}/likes", token)[0] == 503
    finally:
        admin.clear_faults()
    assert admin.get_faults().state == []


def test_tests_sharing_the_server_add_rules_and_remove_theirs_by_tag(admin):
    ana, ana_post = admin.user("Ana"), admin.post()
    ben, ben_post = admin.user("Ben"), admin.post()
    ana_token, ben_token = admin.token(ana), admin.token(ben)

    def like(token, post):
        return admin.as_viewer("POST", f"/posts/{post}/like", token)[0]

    # Other tests' rules, if any, come first and stay.
    others = len(admin.get_faults().rules)
    try:
        # Test B: Ben's first like of his post fails once.
        b = admin.add_faults(
            [FaultRule(FaultRoute.LIKE, user=ben, post=ben_post, fail_next=1, status=500, tag="sharing-b")]
        )
        ben_rule = b.rules[-1]
        assert ben_rule.tag == "sharing-b"
        assert isinstance(b.seed, int), "the rules in force have a seed"
        assert like(ben_token, ben_post) == 500, "B's first like"

        # Test A adds its own rule meanwhile.
        a = admin.add_faults(
            [FaultRule(FaultRoute.LIKE, user=ana, post=ana_post, fail_next=1, status=500, tag="sharing-a")]
        )
        assert a.seed == b.seed, "the seed stays"
        assert [rule.tag for rule in a.rules[others:]] == ["sharing-b", "sharing-a"], "A's rule comes last"
        assert a.state[others:] == [
            RuleState(matched=1, fired=1, acted=1, fail_next_left=0),  # B's stays used up
            RuleState(fail_next_left=1),
        ]
        assert like(ben_token, ben_post) == 200, "B's next like goes through"
        assert like(ana_token, ana_post) == 500, "A's first like"

        # A is done: only its rule goes; B's keeps its counters and the seed stays.
        left = admin.clear_faults(tag="sharing-a")
        assert left.seed == b.seed
        assert left.rules[others:] == [ben_rule]
        assert left.state[others:] == [RuleState(matched=2, fired=2, acted=1, fail_next_left=0)]
        # The journal names each test's fault by its rule's tag, which stays
        # when a removal moves the rules.
        faulted = [
            [(e.fault_tag, e.fault_rule) for e in admin.requests(route=FaultRoute.LIKE, post=post).entries if e.fault]
            for post in (ana_post, ben_post)
        ]
        assert faulted == [[("sharing-a", others + 1)], [("sharing-b", others)]], faulted
        assert like(ana_token, ana_post) == 200, "A's rule is gone"
        assert admin.as_viewer("DELETE", f"/posts/{ben_post}/like", ben_token)[0] == 200
        assert like(ben_token, ben_post) == 200, "B's rule is still used up"

        assert admin.clear_faults(tag="sharing-a").rules == left.rules, "a tag no rule has removes nothing"
        with pytest.raises(AdminError) as bad_tag:
            admin.clear_faults(tag="two words")
        assert (bad_tag.value.status, bad_tag.value.code) == (400, "bad_query")
        none = admin.clear_faults(tag="sharing-b")
        assert none.rules[others:] == []
        assert none.seed == b.seed, "a removal by tag keeps the seed"
    finally:
        admin.clear_faults(tag="sharing-a")
        admin.clear_faults(tag="sharing-b")
    assert len(admin.get_faults().rules) == others


def test_a_test_reads_its_own_rules_by_tag_and_what_they_did_by_fault_tag(admin):
    ana, ben, post = admin.user("Ana"), admin.user("Ben"), admin.post()
    tokens = {ana: admin.token(ana), ben: admin.token(ben)}

    def read(user):
        return admin.as_viewer("GET", f"/posts/{post}/likes", tokens[user])[0]

    def seen(**filters):
        return [(e.user, e.status, e.fault_tag, e.fault) for e in admin.requests(**filters).entries]

    others = len(admin.get_faults().rules)
    try:
        # A's rule fails Ana's first read; B's only delays Ben's.
        in_force = admin.add_faults(
            [
                FaultRule(FaultRoute.LIKES, user=ana, post=post, fail_next=1, status=500, tag="by-tag-a"),
                FaultRule(FaultRoute.LIKES, user=ben, post=post, latency_ms=1, tag="by-tag-b"),
            ]
        )
        rule_a, rule_b = in_force.rules[others:]
        assert read(ana) == 500, "A's rule acts on Ana's first read"
        assert read(ana) == 200, "then it is used up"
        assert read(ben) == 200, "B's rule delays Ben's read"

        # Each test reads its own rules, with what each has used up, and the seed.
        mine = admin.get_faults(tag="by-tag-a")
        assert mine.rules == [rule_a]
        assert mine.state == [RuleState(matched=2, fired=2, acted=1, fail_next_left=0)]
        assert mine.seed == in_force.seed
        assert admin.get_faults(tag="by-tag-b").rules == [rule_b]
        assert admin.get_faults(tag="by-tag-c").rules == [], "a tag no rule has"

        # And what its rules did, by their tag.
        assert seen(fault_tag="by-tag-a") == [(ana, 500, "by-tag-a", JournalFault.STATUS)]
        assert seen(fault_tag="by-tag-b") == [(ben, 200, "by-tag-b", JournalFault.LATENCY)]
        assert admin.requests(RequestFilter(fault_tag="by-tag-a", user=ben)).entries == [], "both must match"

        # A bad tag is the server's bad_query, and removes nothing.
        refused = [
            ("tag: ", lambda: admin.get_faults(tag="two words")),
            ("fault_tag: ", lambda: admin.requests(fault_tag="two words")),
            ("fault_tag: ", lambda: admin.clear_requests(fault_tag="")),
        ]
        for named, call in refused:
            with pytest.raises(AdminError) as bad:
                call()
            assert (bad.value.status, bad.value.code) == (400, "bad_query")
            assert bad.value.message.startswith(named), bad.value.message
        everything = seen(post=post)
        assert everything == [
            (ana, 500, "by-tag-a", JournalFault.STATUS),
            (ana, 200, None, None),
            (ben, 200, "by-tag-b", JournalFault.LATENCY),
        ]

        # A is done: the entries its rule acted on go; B's and the untouched one stay.
        admin.clear_requests(fault_tag="by-tag-a")
        assert seen(post=post) == everything[1:]
    finally:
        admin.clear_faults(tag="by-tag-a")
        admin.clear_faults(tag="by-tag-b")
        admin.clear_requests(post=post)
    assert len(admin.get_faults().rules) == others


def test_a_real_servers_entries_decode_into_their_exact_route_and_fault(admin):
    ana, ben, post = admin.user("Ana"), admin.user("Ben"), admin.post()
    token, ben_token = admin.token(ana), admin.token(ben)
    tag = "exact-journal"
    others = len(admin.get_faults().rules)
    try:
        admin.add_faults(
            [
                # A rule for every route acts on Ana's first read; the entry names the read's own route.
                FaultRule(FaultRoute.ALL, user=ana, post=post, nth=1, action=Status(500), tag=tag),
                # Ben's read is slowed after it was answered; Ana's next read is only delayed.
                FaultRule(FaultRoute.LIKES, user=ben, post=post, phase=FaultPhase.AFTER, action=SlowBody(4, 1), tag=tag),
                FaultRule(FaultRoute.LIKES, user=ana, post=post, latency_ms=1, tag=tag),
            ]
        )
        reads = [admin.as_viewer("GET", f"/posts/{post}/likes", t)[0] for t in (token, ben_token, token)]
        assert reads == [500, 200, 200]
        assert admin.as_viewer("POST", f"/posts/{post}/like", token)[0] == 200, "a like no rule acts on"

        entries = admin.entries(post=post)
        assert [(e.route, e.fault, e.fault_phase, e.fault_tag) for e in entries] == [
            (JournalRoute.LIKES, JournalFault.STATUS, FaultPhase.BEFORE, tag),
            (JournalRoute.LIKES, JournalFault.SLOW_BODY, FaultPhase.AFTER, tag),
            (JournalRoute.LIKES, JournalFault.LATENCY, FaultPhase.BEFORE, tag),
            (JournalRoute.LIKE, None, None, None),
        ]
        # The members themselves, not strings that equal them.
        assert [type(e.route) for e in entries] == [JournalRoute] * 4
        assert [type(e.fault) for e in entries[:3]] == [JournalFault] * 3
    finally:
        admin.clear_faults(tag=tag)
        admin.clear_requests(post=post)
    assert len(admin.get_faults().rules) == others


def test_adding_past_256_rules_is_too_many_rules_and_adds_nothing(admin):
    post = admin.next_id()  # never requested: the rules act on nothing
    others = len(admin.get_faults().rules)
    try:
        full = admin.add_faults(
            [FaultRule(FaultRoute.LIKES, post=post, tag="full-house")] * (256 - others)
        )
        assert len(full.rules) == 256
        with pytest.raises(AdminError) as over:
            admin.add_faults([FaultRule(FaultRoute.LIKES, post=post, tag="one-too-many")])
        assert (over.value.status, over.value.code) == (409, "too_many_rules")
        assert "256" in over.value.message
        assert admin.get_faults() == full, "nothing was added"
    finally:
        admin.clear_faults(tag="full-house")
    assert len(admin.get_faults().rules) == others


def test_wait_for_requests_answers_once_they_are_there_and_answered_or_when_it_runs_out(admin):
    """The server holds the answer until the like is answered (``met``),
    not while it is in flight; a wait for more than there is runs out
    (not ``met``). Each wait outlasts the client's own half second."""
    ana, post = admin.user("Ana"), admin.post()
    token = admin.token(ana)
    tag = "wait-for-requests"
    quick = Admin(admin.url, os.environ["LIKEKIT_ADMIN_KEY"], timeout=0.5)
    admin.add_faults([FaultRule(FaultRoute.LIKE, post=post, latency_ms=600, tag=tag)])
    try:
        answers = {}

        def wait():
            answers["journal"] = quick.wait_for_requests(1, route=FaultRoute.LIKE, post=post, timeout=10)

        waiting = threading.Thread(target=wait)
        waiting.start()
        waiting.join(0.2)
        assert waiting.is_alive(), f"answered before any like: {answers}"
        sent = time.monotonic()
        liking = threading.Thread(
            target=lambda: answers.setdefault("like", admin.as_viewer("POST", f"/posts/{post}/like", token))
        )
        liking.start()
        waiting.join(0.3)
        assert waiting.is_alive(), f"answered while the like was in flight: {answers}"
        waiting.join(15)
        liking.join(15)
        assert time.monotonic() - sent >= 0.6, "answered before the like's 600 ms latency"
        assert answers["like"][0] == 200
        journal = answers["journal"]
        assert journal.met is True
        assert [(e.status, e.in_flight) for e in journal.entries] == [(200, False)]

        # Two asked for, one there: the wait runs out and says so.
        started = time.monotonic()
        short = quick.wait_for_requests(2, RequestFilter(route=FaultRoute.LIKE, post=post), timeout=0.8)
        assert time.monotonic() - started >= 0.8
        assert (short.met, len(short.entries)) == (False, 1)
        assert admin.requests(route=FaultRoute.LIKE, post=post).met is None, "a read that does not wait"

        for count, timeout in ((0, 1), (1, 60.001)):
            with pytest.raises(AdminError) as refused:
                admin.wait_for_requests(count, post=post, timeout=timeout)
            assert (refused.value.status, refused.value.code) == (400, "bad_query")
        with pytest.raises(TypeError):
            admin.wait_for_requests(1, post=None)
        with pytest.raises(TypeError):
            admin.wait_for_requests("1", post=post)
    finally:
        admin.clear_faults(tag=tag)
        admin.clear_requests(post=post)


def test_a_journal_carries_met_only_when_it_waited():
    waited = Journal.from_json({"entries": [], "capacity": 10, "dropped": 0, "met": True})
    assert waited == Journal([], 10, 0, met=True)
    assert waited.to_json()["met"] is True
    assert "met" not in Journal([], 10, 0).to_json()
    with pytest.raises(ValueError, match="Journal.met"):
        Journal.from_json({"entries": [], "capacity": 10, "dropped": 0, "met": "yes"})


def test_clear_requests_with_a_filter_keeps_another_users_entries(admin):
    ana, ben, post = admin.user("Ana"), admin.user("Ben"), admin.post()
    for user in (ana, ben, ana):
        assert admin.as_viewer("GET", f"/posts/{post}/likes", admin.token(user))[0] == 200
    assert [entry.user for entry in admin.requests(post=post).entries] == [ana, ben, ana]

    admin.clear_requests(user=ana, post=post)
    left = admin.requests(post=post).entries
    assert [entry.user for entry in left] == [ben], "Ben's read stays"
    admin.clear_requests(RequestFilter(user=ana))
    assert admin.requests(post=post).entries == left, "nothing more of Ana's to remove"
    with pytest.raises(TypeError):
        admin.clear_requests(RequestFilter(post=post), user=ben)
    admin.clear_requests(post=post)
    assert admin.requests(post=post).entries == []


def test_the_journal_names_each_request_by_its_id(admin):
    user, post = admin.user("Ana"), admin.post()
    request = urllib.request.Request(
        f"{admin.url}/posts/{post}/likes",
        headers={"Authorization": f"Bearer {admin.token(user)}", "X-Request-Id": "checkout-7f3a"},
    )
    with _NO_PROXY.open(request, timeout=10) as response:
        assert response.headers["X-Request-Id"] == "checkout-7f3a"
    status, _ = admin.as_viewer("GET", f"/posts/{post}/likes", admin.token(user))
    assert status == 200
    given, made = admin.requests(post=post).entries
    assert given.request_id == "checkout-7f3a"
    assert made.request_id and made.request_id != given.request_id, "the server's own id"
    assert admin.requests(request_id="checkout-7f3a").entries == [given]
    assert admin.requests(RequestFilter(request_id=made.request_id, post=post)).entries == [made]
    assert admin.requests(request_id=made.request_id, route="like").entries == []


def test_set_faults_takes_the_rules_and_an_optional_seed(admin):
    post = admin.next_id()  # never requested: the rules act on nothing
    rules = [FaultRule(FaultRoute.LIKES, post=post, latency_ms=1), FaultRule(FaultRoute.BATCH, post=post, tag="as-list")]
    try:
        seeded = admin.set_faults(rules, seed=42)
        assert (seeded.rules, seeded.seed) == (rules, 42)
        assert admin.set_faults(FaultRules(rules, seed=42)) == seeded, "the same set as FaultRules"
        picked = admin.set_faults(rules)
        assert picked.rules == rules and isinstance(picked.seed, int), "the server picks a seed"
        assert admin.get_faults() == picked
        with pytest.raises(TypeError, match="not both"):
            admin.set_faults(FaultRules(rules, seed=1), seed=2)
        assert admin.get_faults() == picked, "nothing was set"
    finally:
        admin.clear_faults()


def test_a_refused_rule_set_is_an_admin_error_and_changes_nothing(admin):
    post = admin.post()
    kept = admin.set_faults([FaultRule(FaultRoute.LIKES, post=post, latency_ms=1)])
    try:
        with pytest.raises(AdminError) as refused:
            # A cut answer needs the real answer: phase `after` only.
            admin.set_faults([FaultRule(FaultRoute.LIKE, post=post, action=Truncate(3))])
        assert (refused.value.status, refused.value.code) == (400, "bad_fault_rules")
        assert admin.get_faults() == kept
    finally:
        admin.clear_faults()


def test_users_posts_friends_tokens_seed_journal_and_reset(admin):
    ana, ben, post = admin.next_id(), admin.next_id(), admin.next_id()
    assert admin.create_user(ana, "Anna") is Created.NEW
    assert admin.create_user(ana, "Ana") is Created.EXISTED
    assert admin.create_post(post) is Created.NEW
    assert admin.create_post(post) is Created.EXISTED

    seed = Seed(users=[SeedUser(ana, "Ana"), SeedUser(ben, "Ben")], posts=[SeedPost(post, likers=[ben])])
    admin.seed(seed)
    admin.seed(seed)  # loading it again changes nothing
    admin.set_friends(ana, [ben])

    admin.clear_requests()
    token = admin.mint_token(ana, ttl_secs=60)
    status, body = admin.as_viewer("GET", f"/posts/{post}/likes", token)
    assert status == 200, body
    assert (body["count"], body["liked_by_me"], body["friends"]) == (1, False, ["Ben"])

    (read,) = admin.requests(RequestFilter(route=FaultRoute.LIKES, post=post)).entries
    assert isinstance(read, JournalEntry)
    assert (read.method, read.route, read.path, read.posts) == (
        FaultMethod.GET,
        JournalRoute.LIKES,
        f"/posts/{post}/likes",
        [post],
    )
    assert (read.user, read.status, read.write, read.fault, read.in_flight) == (ana, 200, None, None, False)
    assert admin.requests(user=ana, method="GET").entries == [read]
    assert admin.requests(post=post, since=read.seq).entries == []
    assert admin.requests(route=FaultRoute.LIKE, post=post).entries == []
    with pytest.raises(TypeError):
        admin.requests(RequestFilter(post=post), user=ana)

    admin.reset()
    status, body = admin.as_viewer("GET", f"/posts/{post}/likes", token)
    assert (status, body["count"]) == (200, 0), "reset dropped the like"
    assert len(admin.requests(post=post).entries) == 2
    admin.clear_requests()
    journal = admin.requests(post=post)
    assert (journal.entries, journal.dropped) == ([], 0)
    assert journal.capacity > 0


def test_get_user_and_get_post_read_back_what_the_store_holds(admin):
    ana, ben, cy = admin.user("Ana"), admin.user("Ben"), admin.user("Cy")
    admin.set_friends(ben, [cy, ana])
    assert admin.get_user(ben) == StoredUser(ben, "Ben", [ana, cy]), "friends in ascending order"
    assert admin.get_user(cy) == StoredUser(cy, "Cy", [])

    post = admin.post()
    assert admin.get_post(post) == StoredPost(post, count=0, version=0, recent_likers=[])
    for user in (ana, cy, ben):
        status, body = admin.as_viewer("POST", f"/posts/{post}/like", admin.token(user))
        assert status == 200, body
    # A like that changes nothing moves nothing; an unlike moves the count back.
    cy_token = admin.token(cy)
    assert admin.as_viewer("POST", f"/posts/{post}/like", cy_token)[0] == 200
    assert admin.as_viewer("DELETE", f"/posts/{post}/like", cy_token)[0] == 200
    assert admin.get_post(post) == StoredPost(post, count=2, version=4, recent_likers=[ben, ana])

    missing = admin.next_id()
    with pytest.raises(AdminError) as no_user:
        admin.get_user(missing)
    assert (no_user.value.status, no_user.value.code) == (404, "user_not_found")
    with pytest.raises(AdminError) as no_post:
        admin.get_post(missing)
    assert (no_post.value.status, no_post.value.code) == (404, "post_not_found")
    with pytest.raises(AdminError) as bad_id:
        admin.get_post(0)
    assert (bad_id.value.status, bad_id.value.code) == (400, "bad_post_id")


def test_the_client_type_checks_under_mypy_strict():
    """A QA team's own `mypy --strict` sees the client's types, not `Any`:
    the module itself passes it (mypy is installed beside pytest)."""
    import os
    import subprocess
    import sys

    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", os.devnull, likekit_admin.__file__],
        capture_output=True,
        text=True,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr


def test_minted_tokens_may_start_in_the_past_or_the_future(admin):
    """`valid_from_secs` mints the tokens a client's renewal is tested with,
    with no wait: one already expired, one not valid yet."""
    ana, post = admin.user("Ana"), admin.post()

    def code_of(token):
        status, body = admin.as_viewer("GET", f"/posts/{post}/likes", token)
        return status, (body.get("error") or {}).get("code")

    assert code_of(admin.mint_token(ana, valid_from_secs=-7200)) == (401, "token_expired")
    assert code_of(admin.mint_token(ana, valid_from_secs=60)) == (401, "invalid_token")
    assert code_of(admin.mint_token(ana, ttl_secs=3600, valid_from_secs=-600)) == (200, None)
