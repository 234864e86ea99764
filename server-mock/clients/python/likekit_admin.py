"""A typed client for the LikeKit mock server's admin API.

The routes under ``/admin`` are on only when the server runs with
``--admin-key K``; every call sends ``X-Admin-Key: K``. The operations and
bodies follow the server's OpenAPI document (``GET /openapi.json``): every
call looks its method and path up in :data:`OPERATIONS`, and every body is a
typed value with ``to_json()`` (a dict of the wire's exact shape) and
``from_json(dict)`` (which raises ``ValueError`` for a value of the wrong
type). Standard library only; proxies are never used.

Example::

    from likekit_admin import Admin, Drop, FaultPhase, FaultRoute, FaultRule

    admin = Admin("http://127.0.0.1:8080", "dev")
    admin.create_user(7, "Ana")
    admin.create_post(42)
    token = admin.mint_token(7)
    # The first like of post 42 is saved, then its answer is lost.
    admin.set_faults([
        FaultRule(FaultRoute.LIKE, post=42, nth=1, phase=FaultPhase.AFTER, action=Drop())
    ])
    ...  # the app under test likes post 42 with `token`
    likes = admin.requests(route=FaultRoute.LIKE, post=42).entries
    assert admin.get_post(42).count == 1  # retried, and counted once
    admin.clear_faults()

Tests that share one server add their own rules, tagged, and remove them
by tag, leaving other tests' rules and their counters as they are::

    admin.add_faults([FaultRule(FaultRoute.LIKE, user=7, post=42, fail_next=1, tag="checkout-7")])
    ...  # the test
    mine = admin.get_faults(tag="checkout-7")  # its rules, with what each used up
    faulted = admin.requests(fault_tag="checkout-7").entries  # what they did
    admin.clear_faults(tag="checkout-7")
    admin.clear_requests(user=7)

A test that cannot wait for the app itself (a UI test driving another
process) waits on the server until the app's requests are there and
answered::

    ...  # the app under test likes post 42
    journal = admin.wait_for_requests(1, route=FaultRoute.LIKE, post=42, timeout=10)
    assert journal.met, f"no answered like within 10 s: {journal.entries}"

The client is synchronous: each call holds its thread until the server
answers, and ``wait_for_requests`` for as long as the server waits. In an
async test, where the app's code (an async token provider, say) runs on
the test's own event loop, call it in a thread, or the loop stops and the
requests waited for are never made::

    journal = await asyncio.to_thread(admin.wait_for_requests, 1, post=42, timeout=10)

or use :class:`AsyncAdmin`, whose methods are this client's, each run in a
thread and awaited (``await AsyncAdmin(url, key).wait_for_requests(1,
post=42, timeout=10)``).

A filter given as ``None`` (``clear_faults(tag=None)``,
``clear_requests(user=None)``: a test's variable left unset) is refused
with ``TypeError`` rather than taken as no filter, which would read or
remove every test's rules or entries; leave a filter out to mean all.

Answers are read tolerantly: a field this client does not know (one a
newer server added) is ignored, while a field of the wrong type or a
required one missing is ``unreadable``. What a test writes is checked as
strictly as the server checks it: ``Seed.from_json`` and
``RequestFilter.from_json`` refuse a field they do not have.

Ids are ints from 1 to 2**63 - 1.

The admin API has no redirects: an answer that redirects (a proxy or a
load balancer before the server, an ``http://`` URL answered by a move to
``https://``) is not followed, so the admin key goes nowhere else, and is
``unreadable``, its message naming where it leads: give that address as the
URL.
"""

import asyncio
import enum
import http.client
import json
import math
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
    ClassVar,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Type,
    TypeVar,
    Union,
)

__all__ = [
    "OPERATIONS",
    "MAX_ID",
    "MAX_TAG_CHARS",
    "FAULT_ACTIONS",
    "Admin",
    "AsyncAdmin",
    "AdminError",
    "Created",
    "FaultRoute",
    "FaultMethod",
    "FaultPhase",
    "WriteResult",
    "JournalRoute",
    "JournalFault",
    "FaultAction",
    "Status",
    "Drop",
    "Reset",
    "Hang",
    "Truncate",
    "Malformed",
    "SlowBody",
    "Oversized",
    "FaultRule",
    "FaultRules",
    "RuleState",
    "JournalEntry",
    "Journal",
    "Seed",
    "SeedUser",
    "SeedPost",
    "StoredUser",
    "StoredPost",
    "RequestFilter",
]

#: Every admin operation: operationId → (HTTP method, path template), as in
#: the server's ``/openapi.json``.
OPERATIONS: Dict[str, Tuple[str, str]] = {
    "create_user": ("POST", "/admin/users"),
    "get_user": ("GET", "/admin/users/{id}"),
    "create_post": ("POST", "/admin/posts"),
    "get_post": ("GET", "/admin/posts/{id}"),
    "set_friends": ("PUT", "/admin/users/{id}/friends"),
    "mint_token": ("POST", "/admin/tokens"),
    "set_faults": ("PUT", "/admin/faults"),
    "add_faults": ("POST", "/admin/faults"),
    "get_faults": ("GET", "/admin/faults"),
    "clear_faults": ("DELETE", "/admin/faults"),
    "requests": ("GET", "/admin/requests"),
    "clear_requests": ("DELETE", "/admin/requests"),
    "reset": ("POST", "/admin/reset"),
    "seed": ("POST", "/admin/seed"),
}

#: The largest id: ids are ints from 1 to 2**63 - 1.
MAX_ID = 2**63 - 1
#: The longest fault rule ``tag``, in characters.
MAX_TAG_CHARS = 64
_MAX_U64 = 2**64 - 1


class AdminError(Exception):
    """An admin call that failed.

    ``status`` is the HTTP status, or ``None`` when no answer came
    (connection refused, timeout). ``code`` is the server's error code
    (``bad_name``, ``bad_admin_key``…), ``unreadable`` for an answer that is
    not the expected JSON, or ``no_answer`` when no answer came (as in every
    language's admin client). ``message`` says what happened.
    """

    def __init__(self, status: Optional[int], code: str, message: str):
        self.status = status
        self.code = code
        self.message = message
        super().__init__(status, code, message)

    def __str__(self) -> str:
        if self.status is None:
            return f"admin request failed: {self.message}"
        return f"admin API answered {self.status}: {self.code} ({self.message})"


class _Unset(enum.Enum):
    """The default of a filter left out, told apart from ``None``, which a
    call refuses: a filter given as ``None`` is a test's unset variable,
    not a wish to read or remove every test's rules or entries."""

    UNSET = "unset"

    def __repr__(self) -> str:
        return "<left out>"


# ---------------------------------------------------------------- decoding


def _fail(where: str, what: str, value: Any) -> ValueError:
    return ValueError(f"{where}: expected {what}, got {value!r}")


def _object(value: Any, where: str, known: Optional[Iterable[str]] = None) -> Mapping[str, Any]:
    """`value` as a JSON object; with `known`, refusing any other key."""
    if not isinstance(value, Mapping):
        raise _fail(where, "an object", value)
    if known is not None:
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
    return value


def _required(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    return obj[key]


def _int(value: Any, where: str, lo: int = 0, hi: int = _MAX_U64) -> int:
    # bool is an int in Python, never in JSON.
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _fail(where, f"a whole number from {lo} to {hi}", value)
    return value


def _id(value: Any, where: str) -> int:
    return _int(value, where, 1, MAX_ID)


_T = TypeVar("_T")
_E = TypeVar("_E", bound=enum.Enum)


def _opt(decode: Callable[[Any, str], _T], value: Any, where: str) -> Optional[_T]:
    return None if value is None else decode(value, where)


def _float(value: Any, where: str, lo: float = 0.0, hi: float = 1.0) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not lo <= value <= hi
    ):
        raise _fail(where, f"a number from {lo} to {hi}", value)
    return float(value)


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, "a string", value)
    return value


def _tag(value: Any, where: str) -> str:
    """A fault rule's tag: 1 to 64 visible ASCII characters (``!`` to ``~``)."""
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_TAG_CHARS
        or not all("!" <= c <= "~" for c in value)
    ):
        raise _fail(where, f"1 to {MAX_TAG_CHARS} visible ASCII characters (! to ~)", value)
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, "true or false", value)
    return value


def _list(value: Any, where: str) -> List[Any]:
    if not isinstance(value, list):
        raise _fail(where, "an array", value)
    return value


def _ids(value: Any, where: str) -> List[int]:
    return [_id(item, f"{where}[{i}]") for i, item in enumerate(_list(value, where))]


def _enum(cls: Type[_E], value: Any, where: str) -> _E:
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        try:
            return cls(value)
        except ValueError:
            pass
    raise _fail(where, f"one of {[m.value for m in cls]}", value)


# ---------------------------------------------------------------- enums


class FaultRoute(str, enum.Enum):
    """Which public routes a fault rule applies to, or a journal filter
    selects (a journal entry's own route is a :class:`JournalRoute`)."""

    LIKE = "like"
    """``POST /posts/{id}/like``"""
    UNLIKE = "unlike"
    """``DELETE /posts/{id}/like``"""
    LIKES = "likes"
    """``GET /posts/{id}/likes``"""
    BATCH = "batch"
    """``GET /likes?posts=…``"""
    ALL = "*"
    """Every public route."""

    def __str__(self) -> str:
        return self.value


class FaultMethod(str, enum.Enum):
    """An HTTP method a fault rule may be limited to."""

    GET = "GET"
    POST = "POST"
    DELETE = "DELETE"

    def __str__(self) -> str:
        return self.value


class FaultPhase(str, enum.Enum):
    """When a fault rule acts: before the request is handled, or after."""

    BEFORE = "before"
    """A like or unlike never happens."""
    AFTER = "after"
    """The write has committed; then the answer is delayed, replaced, cut or lost."""

    def __str__(self) -> str:
        return self.value


class WriteResult(str, enum.Enum):
    """What a like or unlike did, as the request journal records it."""

    APPLIED = "applied"
    """The (user, post) row changed: the count moved by one."""
    UNCHANGED = "unchanged"
    """The row was already as asked: nothing changed."""
    REFUSED = "refused"
    """The handler answered an error: nothing changed (a write answered 500
    has no result: it may have committed)."""

    def __str__(self) -> str:
        return self.value


class JournalRoute(str, enum.Enum):
    """The route a journal entry names: its request's own, so never ``*``,
    which only fault rules and filters use. Each member equals the
    :class:`FaultRoute` of the same name (both are their wire string), so
    ``entry.route == FaultRoute.LIKE`` holds and ``RequestFilter(route=entry.route)``
    selects it."""

    LIKE = "like"
    """``POST /posts/{id}/like``"""
    UNLIKE = "unlike"
    """``DELETE /posts/{id}/like``"""
    LIKES = "likes"
    """``GET /posts/{id}/likes``"""
    BATCH = "batch"
    """``GET /likes?posts=…``"""

    def __str__(self) -> str:
        return self.value


class JournalFault(str, enum.Enum):
    """What a fault did to a request, as a journal entry's ``fault`` names
    it: the ``kind`` of the :class:`FaultAction` that acted (``status`` also
    for ``error_rate`` and ``fail_next``, ``drop`` also for ``drop_rate``),
    or ``latency`` for a rule that only delayed the request. The server
    writes no other value: the set grows only with the fault actions, and so
    with this client."""

    STATUS = "status"
    """A status answered in place of the real one."""
    DROP = "drop"
    """The connection closed without an answer."""
    RESET = "reset"
    """The connection reset."""
    HANG = "hang"
    """No answer: held until the server's request timeout."""
    TRUNCATE = "truncate"
    """The answer's body cut short."""
    MALFORMED = "malformed"
    """A body that is not JSON."""
    SLOW_BODY = "slow_body"
    """The body sent a few bytes at a time."""
    OVERSIZED = "oversized"
    """A 200 answer of valid JSON padded to a given size."""
    LATENCY = "latency"
    """No act: a rule's latency only delayed the request."""

    def __str__(self) -> str:
        return self.value


class Created(enum.Enum):
    """What ``create_user``/``create_post`` did; the value is the HTTP status."""

    NEW = 201
    """It did not exist."""
    EXISTED = 200
    """It existed (a user is renamed; a post is left as it is)."""


# ---------------------------------------------------------------- fault actions


class FaultAction:
    """What a fault rule does when it fires: one of :class:`Status`,
    :class:`Drop`, :class:`Reset`, :class:`Hang`, :class:`Truncate`,
    :class:`Malformed`, :class:`SlowBody`, :class:`Oversized`. On the wire an
    object tagged by ``"kind"``."""

    kind: ClassVar[str]
    _fields: ClassVar[Tuple[str, ...]] = ()

    def to_json(self) -> Dict[str, Any]:
        """The wire's object: ``{"kind": …, …}``."""
        out: Dict[str, Any] = {"kind": self.kind}
        for name in self._fields:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    @classmethod
    def from_json(cls, value: Any) -> "FaultAction":
        """The action `value` describes; ``ValueError`` when it is none (an
        unknown kind, a field of the wrong type or missing). Fields this
        client does not know are ignored."""
        where = "FaultAction"
        obj = _object(value, where)
        kind = _required(obj, "kind", where)
        action = FAULT_ACTIONS.get(kind) if isinstance(kind, str) else None
        if action is None:
            raise _fail(f"{where}.kind", f"one of {list(FAULT_ACTIONS)}", kind)
        if cls is not FaultAction and action is not cls:
            raise _fail(f"{where}.kind", repr(cls.kind), kind)
        return action._decode(obj)

    @classmethod
    def _decode(cls, obj: Mapping[str, Any]) -> "FaultAction":
        return cls()


@dataclass(frozen=True)
class Status(FaultAction):
    """Answer `status` (200..=599) with `body` (any JSON; by default the
    ``injected_fault`` error body), and ``Retry-After`` when given."""

    kind: ClassVar[str] = "status"
    _fields: ClassVar[Tuple[str, ...]] = ("status", "body", "retry_after_secs")
    status: int
    body: Any = None
    retry_after_secs: Optional[int] = None

    @classmethod
    def _decode(cls, obj: Mapping[str, Any]) -> "Status":
        return cls(
            status=_int(_required(obj, "status", "Status"), "Status.status", 0, 65535),
            body=obj.get("body"),
            retry_after_secs=_opt(_int, obj.get("retry_after_secs"), "Status.retry_after_secs"),
        )


@dataclass(frozen=True)
class Drop(FaultAction):
    """Close the connection without an answer."""

    kind: ClassVar[str] = "drop"


@dataclass(frozen=True)
class Reset(FaultAction):
    """Reset the connection (TCP RST) without an answer."""

    kind: ClassVar[str] = "reset"


@dataclass(frozen=True)
class Hang(FaultAction):
    """Never answer: hold the request until the server's request timeout."""

    kind: ClassVar[str] = "hang"


@dataclass(frozen=True)
class Truncate(FaultAction):
    """Answer with the first `bytes` bytes of the real body. Phase ``after`` only."""

    kind: ClassVar[str] = "truncate"
    _fields: ClassVar[Tuple[str, ...]] = ("bytes",)
    bytes: int

    @classmethod
    def _decode(cls, obj: Mapping[str, Any]) -> "Truncate":
        return cls(_int(_required(obj, "bytes", "Truncate"), "Truncate.bytes", 0, 2**32 - 1))


@dataclass(frozen=True)
class Malformed(FaultAction):
    """Answer with a body that is not JSON: status 200 in phase ``before``;
    in phase ``after``, the real answer's status."""

    kind: ClassVar[str] = "malformed"


@dataclass(frozen=True)
class SlowBody(FaultAction):
    """Send the real body `bytes` at a time, one piece every `interval_ms`.
    Phase ``after`` only."""

    kind: ClassVar[str] = "slow_body"
    _fields: ClassVar[Tuple[str, ...]] = ("bytes", "interval_ms")
    bytes: int
    interval_ms: int

    @classmethod
    def _decode(cls, obj: Mapping[str, Any]) -> "SlowBody":
        return cls(
            _int(_required(obj, "bytes", "SlowBody"), "SlowBody.bytes", 0, 2**32 - 1),
            _int(_required(obj, "interval_ms", "SlowBody"), "SlowBody.interval_ms"),
        )


@dataclass(frozen=True)
class Oversized(FaultAction):
    """Answer 200 with valid JSON of `bytes` bytes (padding), streamed."""

    kind: ClassVar[str] = "oversized"
    _fields: ClassVar[Tuple[str, ...]] = ("bytes",)
    bytes: int

    @classmethod
    def _decode(cls, obj: Mapping[str, Any]) -> "Oversized":
        return cls(_int(_required(obj, "bytes", "Oversized"), "Oversized.bytes"))


#: Every fault action: its ``kind`` → its class.
FAULT_ACTIONS: Dict[str, Type[FaultAction]] = {
    action.kind: action
    for action in (Status, Drop, Reset, Hang, Truncate, Malformed, SlowBody, Oversized)
}


# ---------------------------------------------------------------- bodies


@dataclass
class FaultRule:
    """One fault rule: which requests it matches (`route`, and `method`,
    `post`, `user` when given), which of their calls it fires on (`nth`,
    `every`, `first`, `after`, `probability`), and what it does then
    (`latency_ms` + up to `jitter_ms`, `drop_rate`, `fail_next`,
    `error_rate` with `status`, then `action`). A rule for a `method` its
    route never answers (`like` is only POST, `unlike` only DELETE,
    `likes` and `batch` only GET) is refused (``bad_fault_rules``). `tag` is a name of the
    test's choosing (1 to 64 visible ASCII characters, ``!`` to ``~``) for
    ``clear_faults(tag=…)``; it changes nothing the rule does. Enum fields
    also take their wire strings. ``to_json`` writes only the fields that
    differ from their defaults."""

    route: FaultRoute
    method: Optional[FaultMethod] = None
    post: Optional[int] = None
    user: Optional[int] = None
    nth: Optional[int] = None
    every: Optional[int] = None
    first: Optional[int] = None
    after: Optional[int] = None
    probability: float = 1.0
    phase: FaultPhase = FaultPhase.BEFORE
    latency_ms: int = 0
    jitter_ms: int = 0
    error_rate: float = 0.0
    status: int = 503
    drop_rate: float = 0.0
    fail_next: int = 0
    action: Optional[FaultAction] = None
    tag: Optional[str] = None

    _DEFAULTS: ClassVar[Dict[str, Any]] = {
        "probability": 1.0,
        "phase": FaultPhase.BEFORE,
        "latency_ms": 0,
        "jitter_ms": 0,
        "error_rate": 0.0,
        "status": 503,
        "drop_rate": 0.0,
        "fail_next": 0,
    }
    _KEYS: ClassVar[Tuple[str, ...]] = (
        "route", "method", "post", "user", "nth", "every", "first", "after", "probability",
        "phase", "latency_ms", "jitter_ms", "error_rate", "status", "drop_rate", "fail_next",
        "action", "tag",
    )

    def __post_init__(self) -> None:
        self.route = _enum(FaultRoute, self.route, "FaultRule.route")
        self.method = _opt(lambda v, w: _enum(FaultMethod, v, w), self.method, "FaultRule.method")
        self.phase = _enum(FaultPhase, self.phase, "FaultRule.phase")
        if self.action is not None and not isinstance(self.action, FaultAction):
            raise _fail("FaultRule.action", "a FaultAction", self.action)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object, without the fields left at their defaults."""
        out: Dict[str, Any] = {}
        for key in self._KEYS:
            value = getattr(self, key)
            if value is None or (key in self._DEFAULTS and value == self._DEFAULTS[key]):
                continue
            if isinstance(value, enum.Enum):
                value = value.value
            elif isinstance(value, FaultAction):
                value = value.to_json()
            out[key] = value
        return out

    @classmethod
    def from_json(cls, value: Any) -> "FaultRule":
        """The rule `value` describes; ``ValueError`` for a wrong type or a
        missing ``route``. Fields this client does not know are ignored."""
        w = "FaultRule"
        obj = _object(value, w)
        d = cls._DEFAULTS

        def ms(key: str) -> int:
            return _int(obj.get(key, d[key]), f"{w}.{key}", 0, 600_000)

        def rate(key: str) -> float:
            return _float(obj.get(key, d[key]), f"{w}.{key}")

        return cls(
            route=_enum(FaultRoute, _required(obj, "route", w), f"{w}.route"),
            method=_opt(lambda v, x: _enum(FaultMethod, v, x), obj.get("method"), f"{w}.method"),
            post=_opt(_id, obj.get("post"), f"{w}.post"),
            user=_opt(_id, obj.get("user"), f"{w}.user"),
            nth=_opt(_int, obj.get("nth"), f"{w}.nth"),
            every=_opt(_int, obj.get("every"), f"{w}.every"),
            first=_opt(_int, obj.get("first"), f"{w}.first"),
            after=_opt(_int, obj.get("after"), f"{w}.after"),
            probability=rate("probability"),
            phase=_enum(FaultPhase, obj.get("phase", d["phase"]), f"{w}.phase"),
            latency_ms=ms("latency_ms"),
            jitter_ms=ms("jitter_ms"),
            error_rate=rate("error_rate"),
            status=_int(obj.get("status", d["status"]), f"{w}.status", 0, 65535),
            drop_rate=rate("drop_rate"),
            fail_next=_int(obj.get("fail_next", d["fail_next"]), f"{w}.fail_next"),
            action=_opt(lambda v, x: FaultAction.from_json(v), obj.get("action"), f"{w}.action"),
            tag=_opt(_tag, obj.get("tag"), f"{w}.tag"),
        )


@dataclass
class RuleState:
    """What one fault rule has used up since its rules were set (read-only,
    reported by the server): the requests it `matched` (its call number),
    the calls it `fired` on (selected, and the probability draw passed: its
    latency applied), the requests it `acted` on (answered, cut or
    spoiled), and what is left of its `fail_next` and `first` (``None`` for
    a rule without them)."""

    matched: int = 0
    fired: int = 0
    acted: int = 0
    fail_next_left: Optional[int] = None
    first_left: Optional[int] = None

    def to_json(self) -> Dict[str, Any]:
        """The wire's object, without the ``None`` fields."""
        out: Dict[str, Any] = {"matched": self.matched, "fired": self.fired, "acted": self.acted}
        if self.fail_next_left is not None:
            out["fail_next_left"] = self.fail_next_left
        if self.first_left is not None:
            out["first_left"] = self.first_left
        return out

    @classmethod
    def from_json(cls, value: Any) -> "RuleState":
        """The state `value` describes; ``ValueError`` for a wrong type.
        Fields this client does not know are ignored."""
        w = "RuleState"
        obj = _object(value, w)
        return cls(
            matched=_int(_required(obj, "matched", w), f"{w}.matched"),
            fired=_int(_required(obj, "fired", w), f"{w}.fired"),
            acted=_int(_required(obj, "acted", w), f"{w}.acted"),
            fail_next_left=_opt(_int, obj.get("fail_next_left"), f"{w}.fail_next_left"),
            first_left=_opt(_int, obj.get("first_left"), f"{w}.first_left"),
        )


@dataclass
class FaultRules:
    """Every fault rule, applied in order, and the seed of the generator
    their probabilities and jitter are drawn from (``None``: the server
    picks one and reports it). In an answer, `state[i]` is what
    `rules[i]` has used up; it is read-only: the server ignores it in
    ``set_faults`` (every set starts the counters over), so rules read with
    ``get_faults`` can be set again as they are."""

    rules: List[FaultRule] = field(default_factory=list)
    seed: Optional[int] = None
    state: List[RuleState] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object: ``{"seed"?: …, "rules": […], "state"?: […]}``."""
        out: Dict[str, Any] = {} if self.seed is None else {"seed": self.seed}
        out["rules"] = [rule.to_json() for rule in self.rules]
        if self.state:
            out["state"] = [state.to_json() for state in self.state]
        return out

    @classmethod
    def from_json(cls, value: Any) -> "FaultRules":
        """The rules `value` describes; ``ValueError`` for a wrong type or a
        missing ``rules``. Fields this client does not know are ignored."""
        obj = _object(value, "FaultRules")
        rules = _list(_required(obj, "rules", "FaultRules"), "FaultRules.rules")
        state = _list(obj.get("state", []), "FaultRules.state")
        return cls(
            rules=[FaultRule.from_json(rule) for rule in rules],
            seed=_opt(_int, obj.get("seed"), "FaultRules.seed"),
            state=[RuleState.from_json(item) for item in state],
        )


@dataclass
class JournalEntry:
    """One request to a public route, as the request journal records it.
    `route` is the request's own (never ``*``). `status` is ``None`` when no
    answer was written; `write` is set for a like or unlike that reached its
    handler (``None`` when the request timeout cut it short: it may or may
    not have committed); `fault_rule`, `fault_phase` and `fault` (the
    :class:`JournalFault` it did) say which rule acted on it, and `fault_tag` is
    that rule's tag (its place, `fault_rule`, moves when rules before it are
    removed; its tag does not); `in_flight` is true until its answer is ready. `request_id` is the id its answer
    carries in ``X-Request-Id`` (the client's own, or the server's).
    Decoding refuses a `route` of ``*`` and a `fault` this client does not
    know, so :meth:`Admin.requests` answers such an entry as ``unreadable``."""

    seq: int
    request_id: str
    at_ms: int
    duration_ms: int
    method: FaultMethod
    route: JournalRoute
    path: str
    posts: List[int]
    user: Optional[int] = None
    status: Optional[int] = None
    write: Optional[WriteResult] = None
    fault_rule: Optional[int] = None
    fault_phase: Optional[FaultPhase] = None
    fault: Optional[JournalFault] = None
    in_flight: bool = False
    fault_tag: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        """The wire's object, every field present (``None`` as null)."""

        def plain(value: Any) -> Any:
            return value.value if isinstance(value, enum.Enum) else value

        return {
            "seq": self.seq,
            "request_id": self.request_id,
            "at_ms": self.at_ms,
            "duration_ms": self.duration_ms,
            "method": plain(self.method),
            "route": plain(self.route),
            "path": self.path,
            "posts": list(self.posts),
            "user": self.user,
            "status": self.status,
            "write": plain(self.write),
            "fault_rule": self.fault_rule,
            "fault_tag": self.fault_tag,
            "fault_phase": plain(self.fault_phase),
            "fault": plain(self.fault),
            "in_flight": self.in_flight,
        }

    @classmethod
    def from_json(cls, value: Any) -> "JournalEntry":
        """The entry `value` describes; ``ValueError`` for a wrong type.
        Fields this client does not know are ignored."""
        w = "JournalEntry"
        obj = _object(value, w)

        def req(key: str) -> Any:
            return _required(obj, key, w)

        return cls(
            seq=_int(req("seq"), f"{w}.seq"),
            request_id=_str(req("request_id"), f"{w}.request_id"),
            at_ms=_int(req("at_ms"), f"{w}.at_ms"),
            duration_ms=_int(req("duration_ms"), f"{w}.duration_ms"),
            method=_enum(FaultMethod, req("method"), f"{w}.method"),
            route=_enum(JournalRoute, req("route"), f"{w}.route"),
            path=_str(req("path"), f"{w}.path"),
            posts=_ids(req("posts"), f"{w}.posts"),
            user=_opt(_id, obj.get("user"), f"{w}.user"),
            status=_opt(lambda v, x: _int(v, x, 0, 65535), obj.get("status"), f"{w}.status"),
            write=_opt(lambda v, x: _enum(WriteResult, v, x), obj.get("write"), f"{w}.write"),
            fault_rule=_opt(lambda v, x: _int(v, x, 0, 2**32 - 1), obj.get("fault_rule"), f"{w}.fault_rule"),
            fault_phase=_opt(lambda v, x: _enum(FaultPhase, v, x), obj.get("fault_phase"), f"{w}.fault_phase"),
            fault=_opt(lambda v, x: _enum(JournalFault, v, x), obj.get("fault"), f"{w}.fault"),
            in_flight=_bool(req("in_flight"), f"{w}.in_flight"),
            fault_tag=_opt(_str, obj.get("fault_tag"), f"{w}.fault_tag"),
        )


@dataclass
class Journal:
    """The journal's entries that matched a query, oldest first; how many
    entries it holds at most (`capacity`) and how many older ones it let go
    of (`dropped`). `met` is only on a read that waited
    (:meth:`Admin.wait_for_requests`): ``True`` when the entries it waited
    for are there, none of them in flight; ``False`` when the wait ran out
    first (or the server began stopping, or it asked for more than the
    journal holds). ``None`` on a read that did not wait. `last_seq` is the
    `seq` of the last request that arrived, whether the filters match it or
    not (0 before the first): read it before the test acts, then
    ``since=last_seq`` selects only what came after."""

    entries: List[JournalEntry]
    capacity: int
    dropped: int
    met: Optional[bool] = None
    last_seq: int = 0

    def to_json(self) -> Dict[str, Any]:
        """The wire's object (`met` only when there is one)."""
        out: Dict[str, Any] = {
            "entries": [entry.to_json() for entry in self.entries],
            "capacity": self.capacity,
            "dropped": self.dropped,
            "last_seq": self.last_seq,
        }
        if self.met is not None:
            out["met"] = self.met
        return out

    @classmethod
    def from_json(cls, value: Any) -> "Journal":
        """The journal `value` describes; ``ValueError`` for a wrong type.
        Fields this client does not know are ignored."""
        obj = _object(value, "Journal")
        entries = _list(_required(obj, "entries", "Journal"), "Journal.entries")
        return cls(
            entries=[JournalEntry.from_json(entry) for entry in entries],
            capacity=_int(_required(obj, "capacity", "Journal"), "Journal.capacity"),
            dropped=_int(_required(obj, "dropped", "Journal"), "Journal.dropped"),
            met=_opt(_bool, obj.get("met"), "Journal.met"),
            # 0 from a server older than the field (``since=0`` selects every entry).
            last_seq=_opt(_int, obj.get("last_seq"), "Journal.last_seq") or 0,
        )


@dataclass
class SeedUser:
    """A user of a :class:`Seed`: id, display name and (directed) friends."""

    id: int
    name: str
    friends: List[int] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object."""
        return {"id": self.id, "name": self.name, "friends": list(self.friends)}

    @classmethod
    def from_json(cls, value: Any) -> "SeedUser":
        """The user `value` describes; ``ValueError`` for a wrong type or an unknown field."""
        obj = _object(value, "SeedUser", ("id", "name", "friends"))
        return cls(
            id=_id(_required(obj, "id", "SeedUser"), "SeedUser.id"),
            name=_str(_required(obj, "name", "SeedUser"), "SeedUser.name"),
            friends=_ids(obj.get("friends", []), "SeedUser.friends"),
        )


@dataclass
class SeedPost:
    """A post of a :class:`Seed` and the users who like it, oldest first."""

    id: int
    likers: List[int] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object."""
        return {"id": self.id, "likers": list(self.likers)}

    @classmethod
    def from_json(cls, value: Any) -> "SeedPost":
        """The post `value` describes; ``ValueError`` for a wrong type or an unknown field."""
        obj = _object(value, "SeedPost", ("id", "likers"))
        return cls(
            id=_id(_required(obj, "id", "SeedPost"), "SeedPost.id"),
            likers=_ids(obj.get("likers", []), "SeedPost.likers"),
        )


@dataclass
class Seed:
    """A seed document (as ``--seed FILE`` or ``POST /admin/seed``): users
    with their friends, posts with their likers."""

    users: List[SeedUser] = field(default_factory=list)
    posts: List[SeedPost] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object."""
        return {
            "users": [user.to_json() for user in self.users],
            "posts": [post.to_json() for post in self.posts],
        }

    @classmethod
    def from_json(cls, value: Any) -> "Seed":
        """The seed `value` describes; ``ValueError`` for a wrong type or an unknown field."""
        obj = _object(value, "Seed", ("users", "posts"))
        return cls(
            users=[SeedUser.from_json(u) for u in _list(obj.get("users", []), "Seed.users")],
            posts=[SeedPost.from_json(p) for p in _list(obj.get("posts", []), "Seed.posts")],
        )


@dataclass
class StoredUser:
    """A user as the store holds it (the answer of ``get_user``): its
    display name and its own (directed) friend list, in ascending order of
    id."""

    id: int
    name: str
    friends: List[int] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object."""
        return {"id": self.id, "name": self.name, "friends": list(self.friends)}

    @classmethod
    def from_json(cls, value: Any) -> "StoredUser":
        """The user `value` describes; ``ValueError`` for a wrong type.
        Fields this client does not know are ignored."""
        w = "StoredUser"
        obj = _object(value, w)
        return cls(
            id=_id(_required(obj, "id", w), f"{w}.id"),
            name=_str(_required(obj, "name", w), f"{w}.name"),
            friends=_ids(_required(obj, "friends", w), f"{w}.friends"),
        )


@dataclass
class StoredPost:
    """A post as the store holds it (the answer of ``get_post``), read past
    the server's view cache: its `count` (its like rows, as committed), its
    `version` (one more with every like that added a row and every unlike
    that removed one; 0 after a reset) and its `recent_likers`, newest
    first, at most 100 (an unlike removes its user; the list is not
    refilled from older likes)."""

    id: int
    count: int = 0
    version: int = 0
    recent_likers: List[int] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The wire's object."""
        return {
            "id": self.id,
            "count": self.count,
            "version": self.version,
            "recent_likers": list(self.recent_likers),
        }

    @classmethod
    def from_json(cls, value: Any) -> "StoredPost":
        """The post `value` describes; ``ValueError`` for a wrong type.
        Fields this client does not know are ignored."""
        w = "StoredPost"
        obj = _object(value, w)
        return cls(
            id=_id(_required(obj, "id", w), f"{w}.id"),
            count=_int(_required(obj, "count", w), f"{w}.count"),
            version=_int(_required(obj, "version", w), f"{w}.version"),
            recent_likers=_ids(_required(obj, "recent_likers", w), f"{w}.recent_likers"),
        )


@dataclass
class RequestFilter:
    """Which journal entries ``requests`` returns (and ``clear_requests``
    removes): those matching every
    field given (`since`: entries after that ``seq``; `request_id`: the
    request whose answer carried that ``X-Request-Id``; `fault_tag`: the
    entries whose ``fault_tag`` it is, the requests a rule with that tag
    acted on or delayed, so a test sharing the server reads or removes what
    its own tagged rules did — 1 to 64 visible ASCII characters, else
    ``bad_query``). Enum fields also take their wire strings. A field
    left ``None`` filters nothing: ``RequestFilter(user=uid)`` with an
    unset ``uid`` selects every user's entries, so build a filter from
    values the test has (the keyword form, ``clear_requests(user=uid)``,
    refuses ``None``)."""

    route: Optional[FaultRoute] = None
    method: Optional[FaultMethod] = None
    post: Optional[int] = None
    user: Optional[int] = None
    since: Optional[int] = None
    request_id: Optional[str] = None
    fault_tag: Optional[str] = None

    _KEYS: ClassVar[Tuple[str, ...]] = (
        "route",
        "method",
        "post",
        "user",
        "since",
        "request_id",
        "fault_tag",
    )

    def __post_init__(self) -> None:
        self.route = _opt(lambda v, w: _enum(FaultRoute, v, w), self.route, "RequestFilter.route")
        self.method = _opt(lambda v, w: _enum(FaultMethod, v, w), self.method, "RequestFilter.method")

    def to_json(self) -> Dict[str, Any]:
        """The fields given, as the query's parameters."""
        out: Dict[str, Any] = {}
        for key in self._KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = value.value if isinstance(value, enum.Enum) else value
        return out

    @classmethod
    def from_json(cls, value: Any) -> "RequestFilter":
        """The filter `value` describes; ``ValueError`` for a wrong type or an unknown field."""
        w = "RequestFilter"
        obj = _object(value, w, cls._KEYS)
        return cls(
            route=_opt(lambda v, x: _enum(FaultRoute, v, x), obj.get("route"), f"{w}.route"),
            method=_opt(lambda v, x: _enum(FaultMethod, v, x), obj.get("method"), f"{w}.method"),
            post=_opt(_id, obj.get("post"), f"{w}.post"),
            user=_opt(_id, obj.get("user"), f"{w}.user"),
            since=_opt(_int, obj.get("since"), f"{w}.since"),
            request_id=_opt(_str, obj.get("request_id"), f"{w}.request_id"),
            fault_tag=_opt(_tag, obj.get("fault_tag"), f"{w}.fault_tag"),
        )

    def query(self) -> str:
        """The URL query (``route=like&post=42``), empty when nothing is given."""
        return urllib.parse.urlencode(self.to_json())


# ---------------------------------------------------------------- the client


class Admin:
    """A client for one server's admin API. Every method raises
    :class:`AdminError` when the call fails: an error answer, no answer
    (``no_answer``), or a 2xx answer that is not the JSON the operation
    answers (``unreadable``: a page from another server, say)."""

    #: The operations this client calls (the module's :data:`OPERATIONS`).
    OPERATIONS: ClassVar[Dict[str, Tuple[str, str]]] = OPERATIONS

    def __init__(
        self, url: str, key: str, timeout: float = 30.0, *, context: Optional[ssl.SSLContext] = None
    ):
        """A client for the server at `url` (``http://127.0.0.1:8080``) with
        its admin `key`. `timeout` (seconds) bounds the connect and each wait
        for data from the server, not the whole call: an answer that keeps
        arriving, however slowly, is waited for. A `url` that is not
        ``http://`` or ``https://`` raises ``ValueError``; a `timeout` that is
        not a number (``None``, a string) ``TypeError``, and one that is not
        above 0 and finite ``ValueError``, here rather than at the first
        call. `context` is the TLS setting of an ``https://`` server: the
        system's trusted roots by default; for a server whose certificate a
        test CA signed, ``ssl.create_default_context(cafile=...)``."""
        if not isinstance(url, str) or not re.match(r"https?://[^/?#]", url):
            raise ValueError(f"the base URL must start with http:// or https://: {url!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError(f"timeout must be a number of seconds above 0; got {timeout!r}")
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a number of seconds above 0; got {timeout!r}")
        if context is not None and not isinstance(context, ssl.SSLContext):
            raise TypeError(f"context must be an ssl.SSLContext or None; got {context!r}")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._key = key
        handlers: List[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({}), _NoRedirects()]
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self) -> str:
        return f"Admin({self.url!r})"

    def _call(
        self,
        operation: str,
        body: Any = None,
        query: str = "",
        timeout: Optional[float] = None,
        **path: int,
    ) -> Tuple[int, Any]:
        """Calls `operation` and returns its status and decoded JSON answer;
        `timeout` (seconds) replaces the client's own for this call."""
        method, template = self.OPERATIONS[operation]
        target = re.sub(
            r"\{(\w+)\}", lambda m: urllib.parse.quote(str(path[m.group(1)]), safe=""), template
        )
        headers = {"X-Admin-Key": self._key, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            self.url + target + (f"?{query}" if query else ""),
            data=data,
            method=method,
            headers=headers,
        )
        try:
            with self._opener.open(request, timeout=self.timeout if timeout is None else timeout) as response:
                status, text = response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            try:
                text = error.read().decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                text = ""
            finally:
                error.close()
            if 300 <= error.code < 400:
                location = error.headers.get("Location") if error.headers else None
                leads = f"redirected to {location}" if location else "redirected (with no Location)"
                raise AdminError(
                    error.code,
                    "unreadable",
                    f"{method} {target} was {leads}, which is not followed (the admin API has "
                    "no redirects, and the admin key goes to no other address): if the server "
                    "is there, give that address as the URL",
                ) from None
            raise _error_answer(error.code, text) from None
        except (OSError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", error)
            raise AdminError(None, "no_answer", f"{method} {target}: {reason}") from error
        try:
            return status, json.loads(text)
        except ValueError as error:
            raise AdminError(status, "unreadable", f"{error}: {text}") from None

    def _decode(self, status: int, decode: Callable[[Any], _T], value: Any) -> _T:
        try:
            return decode(value)
        except ValueError as error:
            raise AdminError(status, "unreadable", str(error)) from None

    def _ack(self, operation: str, body: Any = None, query: str = "") -> None:
        """Calls `operation`, whose answer is ``{"ok": true}``."""
        status, answer = self._call(operation, body, query)
        self._decode(status, _check_ack, answer)

    def create_user(self, id: int, name: str) -> Created:
        """Creates user `id` named `name`, or renames an existing one."""
        status, answer = self._call("create_user", {"id": id, "name": name})
        self._decode(status, _new_user, answer)
        return Created.NEW if status == 201 else Created.EXISTED

    def create_post(self, id: int) -> Created:
        """Creates post `id`; an existing one is left as it is."""
        status, answer = self._call("create_post", {"id": id})
        self._decode(status, _new_post, answer)
        return Created.NEW if status == 201 else Created.EXISTED

    def get_user(self, id: int) -> StoredUser:
        """User `id` as stored, with its friend list in ascending order of
        id; ``user_not_found`` when there is none."""
        status, answer = self._call("get_user", id=id)
        return self._decode(status, StoredUser.from_json, answer)

    def get_post(self, id: int) -> StoredPost:
        """Post `id` as stored (count, version, most recent likers newest
        first), read past the server's view cache: a count checked here
        right after a client's call is the committed one.
        ``post_not_found`` when there is none."""
        status, answer = self._call("get_post", id=id)
        return self._decode(status, StoredPost.from_json, answer)

    def set_friends(self, user: int, friends: Iterable[int]) -> None:
        """Replaces `user`'s own (directed) friend list."""
        status, answer = self._call("set_friends", {"friends": list(friends)}, id=user)
        self._decode(status, _friends, answer)

    def mint_token(self, user: int, ttl_secs: int = 3600, valid_from_secs: int = 0) -> str:
        """A sign-in token for `user`, valid for `ttl_secs` seconds from
        `valid_from_secs` seconds from now (a year either way; default 0,
        now). Below zero the token was issued then: ``mint_token(user,
        valid_from_secs=-7200)`` expired an hour ago, for a test of a
        client's token renewal with no wait; above zero it is refused
        (``invalid_token``) until then."""
        body = {"user_id": user, "ttl_secs": ttl_secs, "valid_from_secs": valid_from_secs}
        status, answer = self._call("mint_token", body)
        return self._decode(status, _token, answer)

    def set_faults(
        self, rules: Union[FaultRules, Iterable[FaultRule]], seed: Optional[int] = None
    ) -> FaultRules:
        """Replaces every fault rule with `rules`, drawn from `seed` (``None``:
        one the server picks); returns the rules in force, with their seed.
        `rules` is a list of :class:`FaultRule` or a whole :class:`FaultRules`
        (which carries its own seed: giving `seed` as well is a
        ``TypeError``). Every rule's counters start over, other tests' too:
        tests that share a server use :meth:`add_faults`."""
        if isinstance(rules, FaultRules):
            if seed is not None:
                raise TypeError("set_faults() takes the seed in its FaultRules or as seed=, not both")
            document = rules
        else:
            document = FaultRules(list(rules), seed)
        status, answer = self._call("set_faults", document.to_json())
        return self._decode(status, FaultRules.from_json, answer)

    def add_faults(self, rules: Iterable[FaultRule]) -> FaultRules:
        """Adds `rules` after the rules in force, which keep their counters
        and the seed; returns every rule now in force, `rules` last, with
        the seed and ``state``. Tag them (``FaultRule.tag``) to remove them
        with ``clear_faults(tag=…)``. When the rules in force and `rules`
        would be more than 256, nothing is added: ``too_many_rules`` (409)."""
        status, answer = self._call("add_faults", {"rules": [rule.to_json() for rule in rules]})
        return self._decode(status, FaultRules.from_json, answer)

    def get_faults(self, tag: Union[str, _Unset] = _Unset.UNSET) -> FaultRules:
        """The fault rules in force, the seed their draws come from, and
        what each has used up (``state``). With a `tag`, only the rules
        tagged `tag` and their ``state``, in their order (none when no rule
        has it), with the seed: a test sharing the server reads its own
        rules (``get_faults(tag="checkout-7")``). A tag that is not 1 to 64
        visible ASCII characters is ``bad_query``; ``tag=None`` is a
        ``TypeError`` (leave `tag` out to read every rule)."""
        query = _tag_query("get_faults", tag, "to read every rule")
        status, answer = self._call("get_faults", query=query)
        return self._decode(status, FaultRules.from_json, answer)

    def clear_faults(self, tag: Union[str, _Unset] = _Unset.UNSET) -> FaultRules:
        """Without a `tag`, removes every fault rule (other tests' too) and
        the seed; with one, only the rules tagged `tag` (none when no rule
        has it): the others keep their counters and the seed. Returns the
        rules left in force. A tag that is not 1 to 64 visible ASCII
        characters is ``bad_query``; ``tag=None`` is a ``TypeError``, so a
        test whose tag is unset never removes every test's rules."""
        query = _tag_query("clear_faults", tag, "to remove every rule")
        status, answer = self._call("clear_faults", query=query)
        return self._decode(status, FaultRules.from_json, answer)

    def requests(self, filter: Union[RequestFilter, _Unset] = _Unset.UNSET, **filters: Any) -> Journal:
        """The request journal's entries that `filter` (or the same fields
        as keywords: ``route``, ``method``, ``post``, ``user``, ``since``,
        ``request_id``, ``fault_tag``) selects, oldest first.
        ``requests(fault_tag="checkout-7")`` is what the rules tagged
        ``checkout-7`` did. A keyword given as ``None``, or ``None`` for
        `filter`, is a ``TypeError`` (leave it out to select every entry).
        :meth:`wait_for_requests` waits on the server until the requests are
        there and answered."""
        given = _journal_filter("requests", filter, filters)
        status, answer = self._call("requests", query=given.query())
        return self._decode(status, Journal.from_json, answer)

    def wait_for_requests(
        self,
        count: int,
        filter: Union[RequestFilter, _Unset] = _Unset.UNSET,
        *,
        timeout: float = 5.0,
        **filters: Any,
    ) -> Journal:
        """Like :meth:`requests`, but the server holds the answer until at
        least `count` entries match and none of them is in flight (the
        journal's ``met`` is then ``True``), or until `timeout` seconds have
        passed (``False``, with the entries there were then): for a test
        that cannot wait for the client itself, such as a UI test driving
        an app in another process. ``met`` is also ``False`` at once for a
        `count` above the journal's capacity, and when the server begins
        stopping. The filters are those of :meth:`requests`
        (``wait_for_requests(2, user=7, timeout=10)``). The call waits for
        its answer `timeout` longer than the client's own timeout.
        ``bad_query`` for a `count` below 1 or a `timeout` above 60 s;
        ``journal_off`` (409) from a server that keeps no journal."""
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"wait_for_requests({count!r}): the count is an int")
        given = _journal_filter("wait_for_requests", filter, filters)
        wait = urllib.parse.urlencode({"wait_for": count, "timeout_ms": round(timeout * 1000)})
        query = f"{given.query()}&{wait}" if given.query() else wait
        status, answer = self._call("requests", query=query, timeout=self.timeout + max(timeout, 0))
        return self._decode(status, Journal.from_json, answer)

    def clear_requests(self, filter: Union[RequestFilter, _Unset] = _Unset.UNSET, **filters: Any) -> None:
        """Removes the request journal's entries that `filter` (or the same
        keywords as :meth:`requests`) selects, so a test sharing the server
        removes only its own (``clear_requests(user=7)``, or
        ``clear_requests(fault_tag="checkout-7")`` for what its tagged rules
        acted on); with no filter, empties the journal for every test. A
        keyword given as ``None``, or ``None`` for `filter`, is a
        ``TypeError``, so a test whose id is unset never empties the
        journal for every test."""
        given = _journal_filter("clear_requests", filter, filters)
        self._ack("clear_requests", query=given.query())

    def reset(self) -> None:
        """Drops every like; users, friends and posts stay."""
        self._ack("reset")

    def seed(self, seed: Seed) -> None:
        """Loads `seed` (users, friends, posts, likers); loading it again
        changes nothing. Users are created or renamed and their friend lists
        replaced; posts are created and their likers added (a liker need not
        be a user). ``user_not_found`` (404) for a friend that is not a user;
        ``bad_name``, ``too_many_friends``, ``bad_user_id``, ``bad_post_id``
        or ``bad_json`` (400) for a document the server refuses (nothing is
        loaded then)."""
        self._ack("seed", seed.to_json())


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: the answer is left as it came, an
    ``HTTPError`` of its 3xx status (which :meth:`Admin._call` reports), and
    the request, with its admin key, goes nowhere else."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class AsyncAdmin:
    """:class:`Admin` for async tests: the same methods, taking the same
    arguments and raising the same errors, each a coroutine that runs the
    call in a thread (``asyncio.to_thread``), so the event loop goes on
    meanwhile. An async test whose app code runs on its loop (an async
    token provider, observers on the loop) needs this for
    ``wait_for_requests``: called directly, it would hold the loop while
    the server waits, and the requests waited for would never be made.

    Example::

        admin = AsyncAdmin(url, key)
        await admin.create_post(42)
        ...  # the app on this loop likes post 42
        journal = await admin.wait_for_requests(1, route=FaultRoute.LIKE, post=42, timeout=10)

    ``admin.admin`` is the synchronous client underneath, for the calls
    that need no waiting."""

    def __init__(
        self, url: str, key: str, timeout: float = 30.0, *, context: Optional[ssl.SSLContext] = None
    ):
        """As :class:`Admin`'s (the same checks)."""
        self.admin = Admin(url, key, timeout, context=context)

    def __repr__(self) -> str:
        return f"AsyncAdmin({self.admin.url!r})"

    async def create_user(self, id: int, name: str) -> Created:
        """:meth:`Admin.create_user`, in a thread."""
        return await asyncio.to_thread(self.admin.create_user, id, name)

    async def create_post(self, id: int) -> Created:
        """:meth:`Admin.create_post`, in a thread."""
        return await asyncio.to_thread(self.admin.create_post, id)

    async def get_user(self, id: int) -> StoredUser:
        """:meth:`Admin.get_user`, in a thread."""
        return await asyncio.to_thread(self.admin.get_user, id)

    async def get_post(self, id: int) -> StoredPost:
        """:meth:`Admin.get_post`, in a thread."""
        return await asyncio.to_thread(self.admin.get_post, id)

    async def set_friends(self, user: int, friends: Iterable[int]) -> None:
        """:meth:`Admin.set_friends`, in a thread."""
        await asyncio.to_thread(self.admin.set_friends, user, friends)

    async def mint_token(self, user: int, ttl_secs: int = 3600, valid_from_secs: int = 0) -> str:
        """:meth:`Admin.mint_token`, in a thread."""
        return await asyncio.to_thread(self.admin.mint_token, user, ttl_secs, valid_from_secs)

    async def set_faults(
        self, rules: Union[FaultRules, Iterable[FaultRule]], seed: Optional[int] = None
    ) -> FaultRules:
        """:meth:`Admin.set_faults`, in a thread."""
        return await asyncio.to_thread(self.admin.set_faults, rules, seed)

    async def add_faults(self, rules: Iterable[FaultRule]) -> FaultRules:
        """:meth:`Admin.add_faults`, in a thread."""
        return await asyncio.to_thread(self.admin.add_faults, rules)

    async def get_faults(self, tag: Union[str, _Unset] = _Unset.UNSET) -> FaultRules:
        """:meth:`Admin.get_faults`, in a thread."""
        return await asyncio.to_thread(self.admin.get_faults, tag)

    async def clear_faults(self, tag: Union[str, _Unset] = _Unset.UNSET) -> FaultRules:
        """:meth:`Admin.clear_faults`, in a thread."""
        return await asyncio.to_thread(self.admin.clear_faults, tag)

    async def requests(self, filter: Union[RequestFilter, _Unset] = _Unset.UNSET, **filters: Any) -> Journal:
        """:meth:`Admin.requests`, in a thread."""
        return await asyncio.to_thread(self.admin.requests, filter, **filters)

    async def wait_for_requests(
        self,
        count: int,
        filter: Union[RequestFilter, _Unset] = _Unset.UNSET,
        *,
        timeout: float = 5.0,
        **filters: Any,
    ) -> Journal:
        """:meth:`Admin.wait_for_requests`, in a thread: the loop goes on
        while the server waits."""
        return await asyncio.to_thread(self.admin.wait_for_requests, count, filter, timeout=timeout, **filters)

    async def clear_requests(self, filter: Union[RequestFilter, _Unset] = _Unset.UNSET, **filters: Any) -> None:
        """:meth:`Admin.clear_requests`, in a thread."""
        await asyncio.to_thread(self.admin.clear_requests, filter, **filters)

    async def reset(self) -> None:
        """:meth:`Admin.reset`, in a thread."""
        await asyncio.to_thread(self.admin.reset)

    async def seed(self, seed: Seed) -> None:
        """:meth:`Admin.seed`, in a thread."""
        await asyncio.to_thread(self.admin.seed, seed)


def _tag_query(call: str, tag: Union[str, _Unset], every: str) -> str:
    """``tag=…`` of `call`'s query, or empty when `tag` was left out; a tag
    that is not a string (``None``, an unset variable) is a ``TypeError``."""
    if isinstance(tag, _Unset):
        return ""
    if not isinstance(tag, str):
        raise TypeError(f"{call}(tag={tag!r}): a tag is a string; leave tag out {every}")
    return urllib.parse.urlencode({"tag": tag})


def _journal_filter(call: str, filter: Union[RequestFilter, _Unset], filters: Dict[str, Any]) -> RequestFilter:
    """The filter of `call`: `filter`, or the keyword `filters`. ``None``
    for either is a ``TypeError``: it would select every entry."""
    if isinstance(filter, _Unset):
        unset = [name for name, value in filters.items() if value is None]
        if unset:
            given = ", ".join(f"{name}=None" for name in unset)
            raise TypeError(
                f"{call}({given}): a filter given as None would select every entry; "
                "leave it out, or give it a value"
            )
        return RequestFilter(**filters)
    if not isinstance(filter, RequestFilter):
        raise TypeError(f"{call}() takes a RequestFilter or keyword filters, not {filter!r}")
    if filters:
        raise TypeError(f"{call}() takes a RequestFilter or keyword filters, not both")
    return filter


def _token(value: Any) -> str:
    """The token of a ``{"token": "…"}`` answer."""
    return _str(_required(_object(value, "TokenResponse"), "token", "TokenResponse"), "TokenResponse.token")


def _new_user(value: Any) -> None:
    """Checks the answer of ``create_user``: the user sent back."""
    obj = _object(value, "NewUser")
    _id(_required(obj, "id", "NewUser"), "NewUser.id")
    _str(_required(obj, "name", "NewUser"), "NewUser.name")


def _new_post(value: Any) -> None:
    """Checks the answer of ``create_post``: the post sent back."""
    _id(_required(_object(value, "NewPost"), "id", "NewPost"), "NewPost.id")


def _friends(value: Any) -> None:
    """Checks the answer of ``set_friends``: the friend list sent back."""
    _ids(_required(_object(value, "Friends"), "friends", "Friends"), "Friends.friends")


def _check_ack(value: Any) -> None:
    """Checks an ``{"ok": true}`` answer."""
    if _required(_object(value, "Ack"), "ok", "Ack") is not True:
        raise _fail("Ack.ok", "true", value["ok"])


def _error_answer(status: int, text: str) -> AdminError:
    """The error an answer of `status` with body `text` means."""
    try:
        error = json.loads(text)["error"]
        code, message = error["code"], error["message"]
        if isinstance(code, str) and isinstance(message, str):
            return AdminError(status, code, message)
    except (ValueError, TypeError, KeyError):
        pass
    return AdminError(status, "unreadable", text)
