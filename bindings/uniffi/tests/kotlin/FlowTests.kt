// The Kotlin faces (bindings/uniffi/kotlin/LikeKitFlows.kt) against the
// server: Flows of views and failures, a StateFlow, the read that never
// throws, observers on an executor, and a client whose observers all run on
// a chosen dispatcher. Part of the test program in LikeKitTest.kt, which
// calls flowTests.
package com.likekit.tests

import com.likekit.CallbackDispatcher
import com.likekit.CallbackErrorListener
import com.likekit.DispatchedCall
import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.asCallbackDispatcher
import com.likekit.awaitCalls
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.ScriptedFailure
import com.likekit.ScriptedServer
import com.likekit.TokenProvider
import com.likekit.failures
import com.likekit.liveObjects
import com.likekit.on
import com.likekit.subscribe
import com.likekit.subscribeAll
import com.likekit.viewOrNull
import com.likekit.viewState
import com.likekit.views
import com.likekit.testing.FaultAction
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.testing.RequestFilter
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.util.ArrayDeque
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executor
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.flow.launchIn
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout

/** Waits up to `timeoutMs` for `condition`. */
private fun eventually(timeoutMs: Long, what: () -> String, condition: () -> Boolean) {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!condition()) {
        if (System.currentTimeMillis() > deadline) throw AssertionError(what())
        Thread.sleep(10)
    }
}

/**
 * An executor the test runs by hand, on its own thread: tasks wait in
 * order until [runAll], so what runs when is the test's to say.
 */
private class HandRunExecutor : Executor {
    private val lock = Object()
    private val waiting = ArrayDeque<Runnable>()

    override fun execute(command: Runnable) {
        synchronized(lock) {
            waiting.addLast(command)
            lock.notifyAll()
        }
    }

    /** Waits up to `timeoutMs` until at least `count` tasks are waiting. */
    fun awaitWaiting(count: Int, timeoutMs: Long = 5_000) {
        val deadline = System.currentTimeMillis() + timeoutMs
        synchronized(lock) {
            while (waiting.size < count) {
                val left = deadline - System.currentTimeMillis()
                check(left > 0) { "$count tasks waited for, ${waiting.size} waiting after $timeoutMs ms" }
                lock.wait(left)
            }
        }
    }

    /** Runs the tasks waiting now, in order, on this thread: how many ran. */
    fun runAll(): Int {
        val tasks = synchronized(lock) { waiting.toList().also { waiting.clear() } }
        tasks.forEach { it.run() }
        return tasks.size
    }
}

/** An observer that writes down what it hears, as text, and throws as told. */
private class Telling(
    private val throwOnChange: (Int) -> Boolean = { false },
    private val throwOnFailure: Boolean = false,
) : LikeObserver {
    val heard = CopyOnWriteArrayList<String>()

    override fun onChange(view: PostView) {
        heard.add("change liked=${view.liked}")
        if (throwOnChange(heard.count { it.startsWith("change") })) {
            throw IllegalStateException("observer bug in onChange (expected in this test)")
        }
    }

    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {
        heard.add("failure wanted=$wanted ${error::class.simpleName}")
        if (throwOnFailure) throw IllegalStateException("observer bug in onFailure (expected in this test)")
    }
}

/** `on`, kept for older code: what its test calls. */
@Suppress("DEPRECATION")
private fun LikeObserver.onExecutor(executor: Executor): LikeObserver = on(executor)

/** A client over a ScriptedServer that holds post 42 (10 likes, not the viewer's). */
private fun scriptedClient(): Pair<ScriptedServer, LikeClient> {
    val server = ScriptedServer()
    server.setPost(42L, count = 10, likedByMe = false, friends = emptyList(), version = 1)
    return server to LikeClient.scripted(server, LikeClientOptions(maxRetries = 0))
}

fun flowTests(t: Harness, server: TestServer, tokens: TokenProvider) {
    t.test("views(): the optimistic view before the server answers, then the confirmed one, on the collector's dispatcher") {
        val post = server.post()
        // Every like of this post is held 2 s before it is handled.
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = post, latencyMs = 2_000))))
        try {
            LikeClient(server.url, tokens, FAST_RETRY).use { c ->
                runBlocking { c.refresh(post) }
                val dispatcher = Executors.newSingleThreadExecutor { Thread(it, "likekit-ui") }
                val seen = CopyOnWriteArrayList<Pair<PostView, String>>()
                val scope = CoroutineScope(dispatcher.asCoroutineDispatcher())
                try {
                    c.views(post).onEach { seen.add(it to Thread.currentThread().name) }.launchIn(scope)
                    eventually(5_000, { "the current view first: $seen" }) { seen.isNotEmpty() }
                    expect(!seen[0].first.liked) { "starts empty: $seen" }
                    c.setLiked(post, true)
                    eventually(5_000, { "the optimistic view: $seen" }) { seen.any { it.first.liked && it.first.pending } }
                    // The server has not answered the like yet: its journal
                    // holds it in flight, or has not seen it.
                    val likes = server.requests(RequestFilter(route = FaultRoute.LIKE, post = post))
                    expect(likes.all { it.status == null }) { "answered before the optimistic view: $likes" }
                    eventually(5_000, { "the confirmed view: $seen" }) { seen.any { it.first.liked && !it.first.pending } }
                    val confirmed = seen.last().first
                    expect(confirmed.count == 1L && confirmed.error == null) { "confirmed $confirmed" }
                    expect(seen.all { it.second == "likekit-ui" }) { "every view on the collector's dispatcher: ${seen.map { it.second }}" }
                } finally {
                    scope.cancel()
                    dispatcher.shutdown()
                }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("views() and viewState() of a post not read yet: nothing, then its first read, even with no like") {
        val post = server.post()
        LikeClient(server.url, tokens, FAST_RETRY).use { c ->
            val scope = CoroutineScope(Dispatchers.Default)
            val seen = CopyOnWriteArrayList<PostView>()
            val baseline = liveObjects()
            try {
                c.views(post).onEach { seen.add(it) }.launchIn(scope)
                val state = c.viewState(post, scope)
                scope.launch { state.collect {} }
                // Both collectors subscribed (two subscriptions live).
                eventually(5_000, { "subscribed: ${liveObjects() - baseline}" }) { liveObjects() >= baseline + 2 }
                expect(c.view(post) == null) { "no view before the first read: ${c.view(post)}" }
                Thread.sleep(200)
                expect(seen.isEmpty()) { "no made-up view before the first read: $seen" }
                expect(state.value == null) { "viewState null before the first read: ${state.value}" }
                val read = runBlocking { c.refresh(post) }
                expect(read.count == 0L && !read.liked) { "a new post: $read" }
                eventually(5_000, { "the first read, heard: $seen" }) { seen.isNotEmpty() }
                expect(seen == listOf(read)) { "the read's view alone: $seen" }
                eventually(5_000, { "viewState follows: ${state.value}" }) { state.value == read }
            } finally {
                scope.cancel()
            }
        }
    }

    t.test("cancelling the collecting scope unsubscribes: live objects back at their baseline") {
        val post = server.post()
        LikeClient(server.url, tokens, FAST_RETRY).use { c ->
            val baseline = liveObjects()
            val scope = CoroutineScope(Dispatchers.Default)
            val views = CopyOnWriteArrayList<PostView>()
            repeat(20) { scope.launch { c.views(post).collect { views.add(it) } } }
            val state = c.viewState(post, scope)
            scope.launch { state.collect {} }
            eventually(5_000, { "20 subscriptions and a shared one: ${liveObjects() - baseline} live" }) {
                liveObjects() >= baseline + 21
            }
            c.toggle(post)
            eventually(5_000, { "every collector saw the tap" }) { views.count { it.liked } >= 20 }
            eventually(5_000, { "the StateFlow follows: ${state.value}" }) { state.value?.liked == true }
            scope.cancel()
            eventually(5_000, { "live objects after cancel: ${liveObjects()} (baseline $baseline)" }) {
                liveObjects() == baseline
            }
            runBlocking { c.waitIdle(10_000) }
        }
    }

    t.test("failures: a like that does not save arrives once, with the error's data, until the scope ends") {
        val post = server.post()
        server.admin.setFaults(
            FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = post, action = FaultAction.Status(503)))),
        )
        try {
            LikeClient(server.url, tokens, FAST_RETRY).use { c ->
                runBlocking {
                    withTimeout(10_000) {
                        val baseline = liveObjects()
                        val failure = async(Dispatchers.Default) { c.failures.first() }
                        // Collecting before the tap: wait for the subscription.
                        eventually(5_000, { "the failures flow subscribed" }) { liveObjects() > baseline }
                        c.setLiked(post, true)
                        val got = failure.await()
                        expectEqual(post, got.postId, "post")
                        expectEqual(true, got.wanted, "wanted")
                        expect(got.error is LikeException.Server) { "a 503 is a server error: ${got.error}" }
                    }
                }
                val rolledBack = c.view(post)
                expect(rolledBack != null && !rolledBack.liked && rolledBack.error != null) { "rolled back: $rolledBack" }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("an observer on an executor is called on its thread, in order") {
        val post = server.post()
        LikeClient(server.url, tokens, FAST_RETRY).use { c ->
            val executor = Executors.newSingleThreadExecutor { Thread(it, "likekit-main") }
            val threads = CopyOnWriteArrayList<String>()
            val liked = CopyOnWriteArrayList<Boolean>()
            val done = CountDownLatch(1)
            val observer = object : LikeObserver {
                override fun onChange(view: PostView) {
                    threads.add(Thread.currentThread().name)
                    liked.add(view.liked)
                    if (!view.pending && liked.size >= 4) done.countDown()
                }

                override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
            }
            c.subscribe(post, executor, observer).use {
                c.setLiked(post, true)
                c.setLiked(post, false)
                c.setLiked(post, true)
                expect(done.await(10, TimeUnit.SECONDS)) { "the changes arrived: $liked" }
            }
            executor.shutdown()
            expect(threads.all { it == "likekit-main" }) { "every call on the executor: $threads" }
            // The taps' own views, in order (an answer's view may fall between them).
            var next = 0
            for (value in liked) if (next < 3 && value == listOf(true, false, true)[next]) next++
            expectEqual(3, next, "the taps' views in order in $liked")
            expectEqual(true, liked.last(), "the last view is the last tap")
        }
    }

    t.test("a callbackDispatcher runs every observer call on its thread, in order, the tap's own change after the tap returns") {
        val post = server.post()
        val executor = Executors.newSingleThreadExecutor { Thread(it, "likekit-callbacks") }
        val options = FAST_RETRY.copy(callbackDispatcher = executor.asCallbackDispatcher())
        try {
            LikeClient(server.url, tokens, options).use { c ->
                val seen = CopyOnWriteArrayList<Triple<String, Boolean, Boolean>>()
                val observer = object : LikeObserver {
                    override fun onChange(view: PostView) {
                        seen.add(Triple(Thread.currentThread().name, view.liked, view.pending))
                    }

                    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
                }
                c.subscribeAll(observer).use {
                    // Hold the dispatcher's thread: nothing can reach the
                    // observer until it is let go.
                    val release = CountDownLatch(1)
                    executor.execute { release.await(10, TimeUnit.SECONDS) }
                    val view = c.setLiked(post, true)
                    expect(view.liked && view.pending) { "the tap's view: $view" }
                    expectEqual(0, seen.size, "observer calls before the dispatcher ran")
                    release.countDown()
                    eventually(10_000, { "the confirmed view: $seen" }) { seen.any { it.second && !it.third } }
                    expect(seen.all { it.first == "likekit-callbacks" }) { "every call on the dispatcher's thread: $seen" }
                    expectEqual(Triple("likekit-callbacks", true, true), seen.first(), "the tap's own change first")
                    expectEqual(Triple("likekit-callbacks", true, false), seen.last(), "the confirmed change last")
                    // Flows of such a client still see every view.
                    c.setLiked(post, false)
                    val unliked = runBlocking { withTimeout(10_000) { c.views(post).first { !it.liked && !it.pending } } }
                    expect(!unliked.liked) { "views() after the unlike: $unliked" }
                }
            }
        } finally {
            executor.shutdown()
        }
    }

    t.test("a callbackDispatcher that throws has every observer call run in place, on the thread that had it") {
        val post = server.post()
        val thrown = java.util.concurrent.atomic.AtomicInteger()
        val throws = object : CallbackDispatcher {
            override fun dispatch(call: DispatchedCall) {
                thrown.incrementAndGet()
                throw IllegalStateException("the queue is closed (expected in this test)")
            }
        }
        LikeClient(server.url, tokens, FAST_RETRY.copy(callbackDispatcher = throws)).use { c ->
            val seen = CopyOnWriteArrayList<Triple<String, Boolean, Boolean>>()
            val observer = object : LikeObserver {
                override fun onChange(view: PostView) {
                    seen.add(Triple(Thread.currentThread().name, view.liked, view.pending))
                }

                override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
            }
            c.subscribe(post, observer).use {
                c.setLiked(post, true)
                val tapper = Thread.currentThread().name
                // The confirmed change may already follow it, from the
                // thread that had the answer.
                val atReturn = seen.toList()
                expectEqual(Triple(tapper, true, true), atReturn.firstOrNull(), "the tap's own change, in place, before the tap returned: $atReturn")
                eventually(10_000, { "the confirmed view: $seen" }) { seen.any { it.second && !it.third } }
                expect(thrown.get() >= 2) { "every call offered to the dispatcher first: ${thrown.get()}" }
            }
        }
    }

    t.test("views() of an invalid id fails the flow with LikeException.InvalidId") {
        LikeClient(server.url, tokens, FAST_RETRY).use { c ->
            val error = runCatching { runBlocking { c.views(0L).first() } }.exceptionOrNull()
            expect(error is LikeException.InvalidId) { "got $error" }
        }
    }

    t.test("collectors started and cancelled around sign-out (shutdown, close) touch nothing: no uncaught exception, no subscription left") {
        val post = server.post()
        val uncaught = CopyOnWriteArrayList<Throwable>()
        val handler = CoroutineExceptionHandler { _, e -> uncaught.add(e) }
        val previous = Thread.getDefaultUncaughtExceptionHandler()
        Thread.setDefaultUncaughtExceptionHandler { _, e -> uncaught.add(e) }
        // The collectors' thread, as an app's main thread: held in half the
        // cycles so that their producers run only after close(); free in
        // the others, racing it.
        val ui = Executors.newSingleThreadExecutor { Thread(it, "likekit-ui") }
        val baseline = settledLiveObjects()
        try {
            repeat(200) { cycle ->
                val held = CountDownLatch(1)
                if (cycle % 2 == 0) ui.execute { held.await(10, TimeUnit.SECONDS) }
                val c = LikeClient(server.url, tokens, FAST_RETRY)
                val scope = CoroutineScope(SupervisorJob() + ui.asCoroutineDispatcher() + handler)
                // Started here, as a screen does on its own thread: each
                // collector suspends at once, its producer queued on `ui`.
                scope.launch(start = CoroutineStart.UNDISPATCHED) { c.views(post).collect {} }
                scope.launch(start = CoroutineStart.UNDISPATCHED) { c.failures.collect {} }
                scope.cancel() // the screen leaves
                runBlocking { c.shutdown(100) }
                c.close()
                held.countDown()
                runBlocking { withTimeout(10_000) { scope.coroutineContext[Job]!!.join() } }
            }
            // What the collectors' thread had queued has run.
            ui.submit {}.get(10, TimeUnit.SECONDS)
            expect(uncaught.isEmpty()) { "uncaught: ${uncaught.take(3).joinToString { it.toString() }} (${uncaught.size} in all)" }
            eventually(10_000, { "live objects: ${liveObjects()} (baseline $baseline)" }) { liveObjects() == baseline }
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous)
            ui.shutdown()
        }
    }

    t.test("views() and failures of a closed client end at once, with no value and no exception") {
        val post = server.post()
        val baseline = liveObjects()
        val c = LikeClient(server.url, tokens, FAST_RETRY)
        runBlocking { c.refresh(post) }
        c.close()
        runBlocking {
            withTimeout(10_000) {
                expectEqual(emptyList<PostView>(), c.views(post).toList(), "views() of a closed client")
                expectEqual(emptyList<Any>(), c.failures.toList(), "failures of a closed client")
            }
        }
        eventually(10_000, { "live objects: ${liveObjects()} (baseline $baseline)" }) { liveObjects() == baseline }
    }

    t.test("subscribe(id, executor, observer): what the observer throws goes to the error listener on the executor's thread, never up it, and the next call comes") {
        val (_, c) = scriptedClient()
        val executor = HandRunExecutor()
        val heard = CopyOnWriteArrayList<Triple<String, String, Thread>>()
        val listener = CallbackErrorListener { callback, reason -> heard.add(Triple(callback, reason, Thread.currentThread())) }
        val observer = Telling(throwOnChange = { it == 1 })
        c.use {
            runBlocking { c.refresh(42L) }
            c.subscribe(42L, executor, observer, listener).use {
                c.setLiked(42L, true)
                c.setLiked(42L, false)
                executor.awaitWaiting(2)
                expectEqual(emptyList<String>(), observer.heard.toList(), "calls before the executor ran them")
                val escaped = runCatching { executor.runAll() }
                expect(escaped.isSuccess) { "thrown on the executor's thread: ${escaped.exceptionOrNull()}" }
                expectEqual(
                    listOf("change liked=true", "change liked=false"),
                    observer.heard.toList(),
                    "both calls, the second after the first threw",
                )
                expectEqual(listOf("a LikeObserver in on_change"), heard.map { it.first }, "what the listener heard")
                val reason = heard.single().second
                expect("observer bug in onChange (expected in this test)" in reason && "\tat " in reason) {
                    "the exception's text and stack trace: $reason"
                }
                expect(heard.single().third === Thread.currentThread()) { "heard on ${heard.single().third}, not the executor's thread" }
            }
            runBlocking { c.shutdown(0) }
        }
    }

    t.test("subscribe(id, executor, observer) with no error listener: what the observer throws goes to System.err, never up the executor's thread") {
        val (scripted, c) = scriptedClient()
        val executor = HandRunExecutor()
        val observer = Telling(throwOnFailure = true)
        val err = ByteArrayOutputStream()
        val previous = System.err
        c.use {
            runBlocking { c.refresh(42L) }
            c.subscribe(42L, executor, observer).use {
                c.setLiked(42L, true)
                val call = runBlocking { scripted.awaitCalls() }.single()
                expect(scripted.fail(call.id, ScriptedFailure.Status(503u, null, null))) { "the call was not waiting" }
                // The tap's change, the failure, the rollback's change.
                executor.awaitWaiting(3)
                System.setErr(PrintStream(err, true))
                val escaped = try {
                    runCatching { executor.runAll() }
                } finally {
                    System.setErr(previous)
                }
                expect(escaped.isSuccess) { "thrown on the executor's thread: ${escaped.exceptionOrNull()}" }
                expectEqual(
                    listOf("change liked=true", "failure wanted=true Server", "change liked=false"),
                    observer.heard.toList(),
                    "every call, the rollback after the failure threw",
                )
                val written = err.toString()
                expect("likekit: a LikeObserver in on_failure threw: " in written && "observer bug in onFailure (expected in this test)" in written) {
                    "System.err: $written"
                }
            }
        }
    }

    t.test("subscribe(id, executor, observer) and subscribeAll(executor, observer): calls still queued when the subscription is closed or cancelled call nothing") {
        val (_, c) = scriptedClient()
        val executor = HandRunExecutor()
        c.use {
            runBlocking { c.refresh(42L) }
            val one = Telling()
            val oneSubscription = c.subscribe(42L, executor, one)
            val all = Telling()
            val allSubscription = c.subscribeAll(executor, all)
            // Delivered while subscribed: the relay delivers at all.
            c.setLiked(42L, true)
            executor.awaitWaiting(2)
            expectEqual(2, executor.runAll(), "tasks run while subscribed")
            expectEqual(listOf("change liked=true"), one.heard.toList(), "subscribe's observer, subscribed")
            expectEqual(listOf("change liked=true"), all.heard.toList(), "subscribeAll's observer, subscribed")
            // Queued, then the subscriptions end before the executor runs them.
            c.setLiked(42L, false)
            executor.awaitWaiting(2)
            oneSubscription.close()
            allSubscription.cancel()
            expect(!allSubscription.isActive()) { "cancelled, still active" }
            expectEqual(2, executor.runAll(), "tasks queued before the end")
            expectEqual(listOf("change liked=true"), one.heard.toList(), "after close(): nothing more")
            expectEqual(listOf("change liked=true"), all.heard.toList(), "after cancel(): nothing more")
            allSubscription.close()
            runBlocking { c.shutdown(0) }
        }
    }

    t.test("observer.on(executor), kept for older code: what the observer throws does not escape the executor's thread") {
        val (_, c) = scriptedClient()
        val executor = HandRunExecutor()
        val observer = Telling(throwOnChange = { true })
        val previous = System.err
        c.use {
            runBlocking { c.refresh(42L) }
            c.subscribe(42L, observer.onExecutor(executor)).use {
                c.setLiked(42L, true)
                executor.awaitWaiting(1)
                System.setErr(PrintStream(ByteArrayOutputStream(), true))
                val escaped = try {
                    runCatching { executor.runAll() }
                } finally {
                    System.setErr(previous)
                }
                expect(escaped.isSuccess) { "thrown on the executor's thread: ${escaped.exceptionOrNull()}" }
                expectEqual(listOf("change liked=true"), observer.heard.toList(), "the call")
            }
            runBlocking { c.shutdown(0) }
        }
    }

    t.test("viewOrNull: the view the client holds, or null where view() throws: a post not read, an invalid id, a closed client") {
        val (_, c) = scriptedClient()
        expectEqual(null, c.viewOrNull(42L), "a post not read yet")
        val read = runBlocking { c.refresh(42L) }
        expectEqual(read, c.viewOrNull(42L), "the view read")
        expectEqual(c.view(42L), c.viewOrNull(42L), "what view() reads")
        expect(runCatching { c.view(0L) }.exceptionOrNull() is LikeException.InvalidId) { "view(0) throws InvalidId" }
        expectEqual(null, c.viewOrNull(0L), "an invalid id")
        expectEqual(null, c.viewOrNull(-1L), "a negative id")
        c.close()
        expect(runCatching { c.view(42L) }.exceptionOrNull() is IllegalStateException) { "view() of a closed client throws" }
        expectEqual(null, c.viewOrNull(42L), "a closed client")
    }
}
