
    # Added by `cargo xtask bindings` (xtask/templates/likekit-subscription-methods.py),
    # in the class so that type checkers see them.
    #
    # A context manager: `with client.subscribe(id, observer):` keeps the
    # subscription for the block (the `with` holds it, so it needs no name)
    # and cancels it on leaving, as Kotlin's `use` closes it. `cancel` is not
    # a coroutine, so a plain `with` serves async code too.
    def __enter__(self) -> "LikeSubscription":
        return self

    def __exit__(
        self,
        exc_type: typing.Optional[typing.Type[BaseException]],
        exc: typing.Optional[BaseException],
        tb: typing.Any,
    ) -> None:
        self.cancel()
