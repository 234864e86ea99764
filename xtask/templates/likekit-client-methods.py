
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

    # Async iterators, as Kotlin's `views` Flow and Swift's `views`
    # AsyncStream: for an asyncio app, no observer class and no thread
    # hand-off of its own.
    async def views(self, post_id: int) -> typing.AsyncIterator["PostView"]:
        """One post's views, as an async iterator: the view the client holds
        now (when it knows the post), then every change — a tap's optimistic
        view at once, the confirmed one when the server answers, a
        rollback, a read::

            async for view in client.views(42):
                heart.render(view)

        Subscribes when the iteration starts and unsubscribes when it ends
        (a `break`, the task cancelled, the iterator closed); views arrive
        on the event loop that iterates, whichever thread LikeKit heard them
        on. Keeps only the newest view for a slow consumer. It never ends by
        itself: stop iterating (or cancel the task) at sign-out. A `break`
        unsubscribes once the iterator is collected, at once in CPython; to
        unsubscribe at a point of your choosing wrap it in
        ``contextlib.aclosing(client.views(42))``. An id outside
        1..2**63 - 1 raises `LikeError.InvalidId` when iterating starts."""
        loop = asyncio.get_running_loop()
        newest: typing.List[PostView] = []
        arrived = asyncio.Event()

        def keep(view: PostView) -> None:
            newest[:] = [view]
            arrived.set()

        subscription = self.subscribe_with_view(post_id, _LikeKitRelay(loop, keep, None))
        try:
            while True:
                await arrived.wait()
                arrived.clear()
                if newest:
                    yield newest.pop()
        finally:
            subscription.cancel()

    async def failures(self) -> typing.AsyncIterator["LikeFailure"]:
        """Every failure of every post of this client, as an async iterator
        of `LikeFailure` ("your like didn't save"): one subscription from the
        start of the iteration to its end. Keeps up to 64 for a slow
        consumer, dropping the oldest past that. It hears nothing from
        before it starts iterating: start it before `restore()` to hear that
        call's `Expired` failures (they are in `RestoreReport.expired`
        either way). Ends, and unsubscribes, as `views` does."""
        loop = asyncio.get_running_loop()
        waiting: "collections.deque[LikeFailure]" = collections.deque(maxlen=64)
        arrived = asyncio.Event()

        def keep(failure: LikeFailure) -> None:
            waiting.append(failure)
            arrived.set()

        subscription = self.subscribe_all(_LikeKitRelay(loop, None, keep))
        try:
            while True:
                await arrived.wait()
                arrived.clear()
                while waiting:
                    yield waiting.popleft()
        finally:
            subscription.cancel()
