

# ---------------------------------------------------------------------------
# Added by `cargo xtask bindings` (xtask/templates/likekit-exit.py).
#
# CPython ends a thread that calls into the interpreter while it is
# finalizing, and when that thread is one of LikeKit's runtime threads
# (running Rust code) the process aborts ("FATAL: exception not rethrown").
# An answer landing as the program exits would call an observer just then.
# So the runtime's threads are stopped first, while the interpreter still
# runs: calls still out are abandoned (a journal keeps their taps).
import atexit as _likekit_atexit

_likekit_atexit.register(stop_runtime, 1000)
