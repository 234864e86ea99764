

# ---------------------------------------------------------------------------
# Added by `cargo xtask bindings` (xtask/templates/likekit-additions.py).
#
# At exit: CPython ends a thread that calls into the interpreter while it is
# finalizing, and when that thread is one of LikeKit's runtime threads
# (running Rust code) the process aborts ("FATAL: exception not rethrown").
# An answer landing as the program exits would call an observer just then.
# So the runtime's threads are stopped first, while the interpreter still
# runs: calls still out are abandoned (a journal keeps their taps).
import atexit as _likekit_atexit

_likekit_atexit.register(stop_runtime, 1000)

# Records (PostView, LikeLine, Stats…):
# - print their fields in lists and in the REPL, each as its own repr
#   (strings quoted, nested records whole): the generated classes set their
#   fields in __init__ without declaring them, so the repr @dataclass makes
#   would show none;
# - compare with anything: the generated __eq__ read the other's fields
#   whatever it was, so `view != None` raised AttributeError. Another type
#   is now NotImplemented, which Python turns into "not equal".
import inspect as _likekit_inspect


def _likekit_repr(fields):
    def __repr__(self):
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in fields)
        return f"{type(self).__name__}({shown})"

    return __repr__


def _likekit_same_type_eq(eq):
    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return eq(self, other)

    return __eq__


_likekit_record, _likekit_fields = None, []
for _likekit_record in list(globals().values()):
    if (
        isinstance(_likekit_record, type)
        and hasattr(_likekit_record, "__dataclass_fields__")
        and "__str__" in vars(_likekit_record)
    ):
        _likekit_fields = [
            name
            for name, parameter in _likekit_inspect.signature(_likekit_record.__init__).parameters.items()
            if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ]
        _likekit_record.__repr__ = (  # type: ignore[method-assign]
            _likekit_repr(_likekit_fields) if _likekit_fields else _likekit_record.__str__
        )
        if "__eq__" in vars(_likekit_record):
            _likekit_record.__eq__ = _likekit_same_type_eq(vars(_likekit_record)["__eq__"])  # type: ignore[method-assign]
            # Defining __eq__ left them unhashable, as before: records are mutable.
            _likekit_record.__hash__ = None  # type: ignore[assignment]
del _likekit_record, _likekit_fields

# LikeError: equal, with one hash, when the variant and the five fields
# are, as in Kotlin and Swift (whose generated code calls the Rust type's Eq
# and Hash). Generated as it is, an exception compared by identity, so two
# reads of one rolled-back view were never `==`.
_LIKEKIT_ERROR_FIELDS = ("reason", "code", "is_transient", "status", "retry_after_ms")


def _likekit_error_key(error):
    return (type(error),) + tuple(getattr(error, name) for name in _LIKEKIT_ERROR_FIELDS)


def _likekit_error_eq(self, other):
    if not isinstance(other, LikeError):
        return NotImplemented
    return _likekit_error_key(self) == _likekit_error_key(other)


LikeError.__eq__ = _likekit_error_eq  # type: ignore[method-assign,assignment]
LikeError.__hash__ = lambda self: hash(_likekit_error_key(self))  # type: ignore[method-assign,assignment]

# LikeError as text: str() is the reason ("the server answered 503: …"),
# as a traceback or a log line shows it; repr() keeps every field. Copied
# or pickled (copy.deepcopy of a rolled-back view, a ProcessPoolExecutor),
# it is rebuilt from its five fields: generated as it is, its __init__
# takes five arguments and the base exception replayed one.
def _likekit_error_str(self):
    return self.reason


def _likekit_error_repr(self):
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _LIKEKIT_ERROR_FIELDS)
    return f"LikeError.{type(self).__name__}({shown})"


def _likekit_error_reduce(self):
    return (type(self), tuple(getattr(self, name) for name in _LIKEKIT_ERROR_FIELDS))


for _likekit_variant in [LikeError] + [
    variant for variant in vars(LikeError).values() if isinstance(variant, type) and issubclass(variant, LikeError)
]:
    _likekit_variant.__str__ = _likekit_error_str  # type: ignore[method-assign,assignment]
    _likekit_variant.__repr__ = _likekit_error_repr  # type: ignore[method-assign,assignment]
    _likekit_variant.__reduce__ = _likekit_error_reduce  # type: ignore[method-assign,assignment]
del _likekit_variant

# The loop a LikeKit coroutine (`refresh`, `wait_idle`, `shutdown`…) is
# awaited on is the one running it; the loop given to
# `uniffi_set_event_loop` is only for work LikeKit starts from its own
# threads, where none runs (an `AsyncTokenProvider`). Generated as it is,
# the given loop took every await over: once it closed (the next
# `asyncio.run`, the next test's loop), every await failed with "attached
# to a different loop", not a LikeError.
def _uniffi_get_event_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        if _UNIFFI_GLOBAL_EVENT_LOOP is not None:
            return _UNIFFI_GLOBAL_EVENT_LOOP
        raise


# A bool argument (`set_liked`'s `liked`, a `ScriptedServer`'s
# `liked_by_me`, a record's bool field) is True or False, nothing else:
# anything else is a TypeError before the call, as a str where an int goes
# is. Generated as it is, any value was taken for its truth, so
# `set_liked(post, "false")` liked the post.
def _likekit_check_bool(cls, value):
    if not isinstance(value, bool):
        raise TypeError(f"expected True or False, not {type(value).__name__} {value!r}")


_UniffiFfiConverterBoolean.check_lower = classmethod(_likekit_check_bool)  # type: ignore[method-assign,assignment]


# An AsyncTokenProvider's call. What it raises goes to Rust as its
# `repr()`, as a synchronous provider's does, and from there to the
# client's `CallbackErrorListener`, or else to standard error as one line
# (`likekit: an AsyncTokenProvider threw: …`). Generated as it is, the call
# also printed "UniFFI: Unhandled exception in trait interface call" and
# the traceback on standard error, listener or not.
#
# The call runs on the loop given to `uniffi_set_event_loop`. When there is
# none, or it has closed (the `asyncio.run` it belonged to has ended), or
# it ends while the provider runs (`asyncio.run` cancels what is left),
# the provider cannot answer: it is answered at once as having raised, a
# RuntimeError saying why, which the listener hears, and the request goes
# on with no token, as after a provider that raised. Generated as it is,
# the first two raised inside the ctypes callback ("Exception ignored on
# calling ctypes callback function"), and in all three the request waited
# for a token until its timeout.
def _likekit_no_loop_error(why):
    return _UniffiFfiConverterString.lower(
        repr(RuntimeError(f"{why}: call likekit.uniffi_set_event_loop(asyncio.get_running_loop()) "
                          "in the loop the app runs in (again after each asyncio.run)"))
    )


def _uniffi_trait_interface_call_async_with_error(
    make_call, uniffi_out_dropped_callback, handle_success, handle_error, error_type, lower_error
):
    held = []  # the call's handle, once Rust holds the call

    async def make_call_and_call_callback():
        # Either `handle_success` or `handle_error`, once: each consumes
        # the Rust side's reference to the call.
        try:
            try:
                call_result = await make_call()
            except error_type as e:
                handle_error(_UniffiRustCallStatus.CALL_ERROR, lower_error(e))
            else:
                handle_success(call_result)
        except asyncio.CancelledError:
            # Cancelled by Rust letting go (it takes the handle back first:
            # no one waits for an answer), or by the loop ending.
            if held and _likekit_still_held(held[0]):
                handle_error(
                    _UniffiRustCallStatus.CALL_UNEXPECTED_ERROR,
                    _likekit_no_loop_error("the event loop running the AsyncTokenProvider ended before it answered"),
                )
            raise
        except Exception as e:
            handle_error(
                _UniffiRustCallStatus.CALL_UNEXPECTED_ERROR,
                _UniffiFfiConverterString.lower(repr(e)),
            )

    try:
        eventloop = _uniffi_get_event_loop()
    except RuntimeError:
        handle_error(
            _UniffiRustCallStatus.CALL_UNEXPECTED_ERROR,
            _likekit_no_loop_error("no event loop to run the AsyncTokenProvider on"),
        )
        return
    call = make_call_and_call_callback()
    try:
        task = asyncio.run_coroutine_threadsafe(call, eventloop)
    except RuntimeError:  # "Event loop is closed"
        call.close()
        handle_error(
            _UniffiRustCallStatus.CALL_UNEXPECTED_ERROR,
            _likekit_no_loop_error("the event loop given to likekit.uniffi_set_event_loop is closed"),
        )
        return
    handle = _UNIFFI_FOREIGN_FUTURE_HANDLE_MAP.insert((eventloop, task))
    held.append(handle)
    uniffi_out_dropped_callback[0] = _UniffiForeignFutureDroppedCallbackStruct(
        handle, _uniffi_future_dropped_callback
    )


def _likekit_still_held(handle):
    try:
        _UNIFFI_FOREIGN_FUTURE_HANDLE_MAP.get(handle)
    except InternalError:
        return False
    return True


# An AsyncTokenProvider's call, once Rust lets go of it (after every
# answer, not only a cut-off one), is cancelled if it has not ended. Rust
# lets go from one of LikeKit's threads, and the generated code then used
# the loop's `call_soon`, which is not thread-safe (a loop in debug mode,
# `python -X dev`, refuses it, and a sleeping loop was not woken to cancel
# a hung provider). The call is a `concurrent.futures.Future`, whose
# `cancel` is thread-safe and cancels the task on its own loop.
@_UNIFFI_FOREIGN_FUTURE_DROPPED_CALLBACK
def _uniffi_future_dropped_callback(handle):
    (eventloop, task) = _UNIFFI_FOREIGN_FUTURE_HANDLE_MAP.remove(handle)
    if not task.done() and not eventloop.is_closed():
        task.cancel()


# No `with` without `async` on a LikeClient (its `async with` is in the
# class: xtask/templates/likekit-client-methods.py): shutting down is a
# coroutine, and a `with` would have to run a loop of its own for it
# (`asyncio.run`), which cannot be done inside a running loop, so code that
# worked in a script would fail on leaving the block once moved into an
# async function. Python's own error for a missing `__enter__` ("does not
# support the context manager protocol") does not say what to do; this one
# does. Set here, out of type checkers' sight, so that they flag `with
# client:` too. (`__exit__` is there only so that Python calls
# `__enter__`; it is never reached.)
def _likekit_client_enter(self):
    raise TypeError(
        "use `async with LikeClient(...) as client:`, not `with`: leaving the block "
        "awaits `client.shutdown(...)`, a coroutine (outside an event loop, call "
        "`asyncio.run(client.shutdown(2000))` yourself)"
    )


def _likekit_client_exit(self, exc_type, exc, tb):
    return None


_likekit_client_enter.__name__ = "__enter__"
_likekit_client_enter.__qualname__ = "LikeClient.__enter__"
_likekit_client_exit.__name__ = "__exit__"
_likekit_client_exit.__qualname__ = "LikeClient.__exit__"
LikeClient.__enter__ = _likekit_client_enter  # type: ignore[attr-defined]
LikeClient.__exit__ = _likekit_client_exit  # type: ignore[attr-defined]
del _likekit_client_enter, _likekit_client_exit


# `LikeClient.views` and `LikeClient.failures` (async iterators, in the
# class: xtask/templates/likekit-client-methods.py): what they yield, and
# the observer that hands LikeKit's calls to the iterating loop.
import collections


@dataclass(frozen=True)
class LikeFailure:
    """A like or unlike that did not save, as `LikeClient.failures()` yields
    it: the post, what the viewer wanted (`True`: the like), and why. The
    post is back at its confirmed state; tell the viewer "your like didn't
    save"."""

    post_id: int
    wanted: bool
    error: LikeError


class _LikeKitRelay(LikeObserver):
    """Hands each change (`on_view`) or failure (`on_failed`) to `loop`, from
    whichever thread LikeKit calls on. Once the loop is closed (the
    iteration's `asyncio.run` has ended) there is no one to hand them to,
    and they are let go."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_view: typing.Optional[typing.Callable[[PostView], None]],
        on_failed: typing.Optional[typing.Callable[[LikeFailure], None]],
    ) -> None:
        self._loop = loop
        self._on_view = on_view
        self._on_failed = on_failed

    def _hand(self, call: typing.Callable[[typing.Any], None], value: typing.Any) -> None:
        try:
            self._loop.call_soon_threadsafe(call, value)
        except RuntimeError:  # the loop is closed
            pass

    def on_change(self, view: PostView) -> None:
        if self._on_view is not None:
            self._hand(self._on_view, view)

    def on_failure(self, post_id: int, wanted: bool, error: LikeError) -> None:
        if self._on_failed is not None:
            self._hand(self._on_failed, LikeFailure(post_id, wanted, error))


__all__.append("LikeFailure")
