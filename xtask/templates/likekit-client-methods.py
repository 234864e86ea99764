
    # Added by `cargo xtask bindings` (xtask/templates/likekit-client-methods.py),
    # in the class so that type checkers see them.
    #
    # An async context manager, as aiohttp's ClientSession and httpx's
    # AsyncClient are: `async with LikeClient(...) as client:` shuts the
    # client down however the block is left (at its end, by an exception, by
    # the task being cancelled), so an app cannot leave calls and retries
    # running by forgetting `await client.shutdown(...)`.
    #
    # The deadline is the sign-out one the README uses everywhere: 2 s lets a
    # call already out on a slow mobile network be answered, yet does not
    # hold the exit for the full request timeout (10 s) when the server is
    # gone; a call cut off rolls back with `LikeError.Shutdown`, and with a
    # journal its tap stays there for the next start. An app that wants
    # another deadline, or to know whether every call finished, awaits
    # `shutdown` itself inside the block: shutting down again on leaving then
    # does nothing and returns at once (`shutdown` is harmless to repeat), so
    # the earlier call's deadline is the one that counts, and a client
    # already shut down leaves the block quietly.
    async def __aenter__(self) -> "LikeClient":
        """The client itself: it is ready once made."""
        return self

    async def __aexit__(
        self,
        exc_type: typing.Optional[typing.Type[BaseException]],
        exc: typing.Optional[BaseException],
        tb: typing.Any,
    ) -> None:
        """Awaits `shutdown(2000)`: calls out get up to 2 s to finish, then
        are cut off. The block's exception, if any, goes on (nothing is
        swallowed)."""
        await self.shutdown(2000)
