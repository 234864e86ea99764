// LikeKit as an Android screen's model uses it, without Android: a
// ViewModel-shaped class whose StateFlow a "screen" collects on a main
// thread, taps, a "didn't save" notice, sign-out and a model made on a
// closed client; and the equality a StateFlow relies on, for views that
// carry an error. Part of the test program in LikeKitTest.kt, which calls
// viewModelTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.LikeFailure
import com.likekit.PostView
import com.likekit.ScriptedFailure
import com.likekit.ScriptedServer
import com.likekit.TokenProvider
import com.likekit.asCallbackDispatcher
import com.likekit.awaitCalls
import com.likekit.failures
import com.likekit.liveObjects
import com.likekit.reason
import com.likekit.shutdown
import com.likekit.testing.FaultAction
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.viewState
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.job
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.distinctUntilChanged
import kotlinx.coroutines.flow.filter
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.launchIn
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.plus
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield

/** Waits up to ten seconds for `condition`: a deadline, not a measure. */
private fun until(what: () -> String, condition: () -> Boolean) {
    val deadline = System.currentTimeMillis() + 10_000
    while (!condition()) {
        if (System.currentTimeMillis() > deadline) throw AssertionError(what())
        Thread.sleep(10)
    }
}

/**
 * A screen's model as an app writes one (an androidx `ViewModel`, less
 * Android): `scope` stands for `viewModelScope` (the main dispatcher,
 * cancelled by [onCleared]), the state is `viewState`, the notices are
 * what a snackbar would show.
 */
private class PostViewModel(
    private val client: LikeClient,
    private val postId: Long,
    main: CoroutineDispatcher,
    handler: CoroutineExceptionHandler,
) {
    val scope = CoroutineScope(SupervisorJob() + main + handler)
    val state: StateFlow<PostView?> = client.viewState(postId, scope)
    val notices = CopyOnWriteArrayList<String>()
    val hearing: Job = client.failures
        .filter { it.postId == postId }
        .onEach { notices.add(if (it.wanted) "Your like didn't save" else "Your unlike didn't save") }
        .launchIn(scope)

    /** What the screen's `LaunchedEffect` starts: read the post. */
    fun load() = scope.launch {
        try {
            client.refresh(postId)
        } catch (e: LikeException) {
            notices.add("Couldn't load likes: ${e.reason}")
        }
    }

    fun tap() {
        client.toggle(postId)
    }

    fun onCleared() = scope.cancel()
}

/** Taps post 42 of [c] and fails its call with [status]; returns the view rolled back. */
private fun rollBack(c: LikeClient, scripted: ScriptedServer, status: UShort): PostView {
    c.setLiked(42L, true)
    val call = runBlocking { scripted.awaitCalls() }.single()
    scripted.fail(call.id, ScriptedFailure.Status(status, null, null))
    expect(runBlocking { c.waitIdle(10_000) }) { "the rollback was heard" }
    val view = c.view(42L)
    expect(view != null && !view.liked && view.error is LikeException.Server) { "rolled back with a $status: $view" }
    return view!!
}

/** [body] with a client over a ScriptedServer whose post 42 was rolled back with a 503: its view carries the error. */
private fun withRolledBack(body: (LikeClient, ScriptedServer) -> Unit) {
    ScriptedServer().use { scripted ->
        scripted.setPost(42L, 10, false, listOf("Ana"), 1)
        LikeClient.scripted(scripted, LikeClientOptions(maxRetries = 0)).use { c ->
            runBlocking { c.refresh(42L) }
            rollBack(c, scripted, 503u)
            body(c, scripted)
        }
    }
}

fun viewModelTests(t: Harness, server: TestServer, tokens: TokenProvider) {
    t.test("a view read twice with the same error is == (same hash): a StateFlow keeps the one it holds") {
        withRolledBack { c, scripted ->
            val first = c.view(42L)!!
            val again = c.view(42L)!!
            expect(first.error !== again.error) { "two reads, two error objects" }
            expectEqual(first, again, "the same view, read twice")
            expectEqual(first.hashCode(), again.hashCode(), "their hash codes")
            expectEqual(1, hashSetOf(first.error, again.error).size, "the two errors in a set")
            expectEqual(
                LikeFailure(42L, true, first.error!!),
                LikeFailure(42L, true, again.error!!),
                "failures holding equal errors",
            )
            val state = MutableStateFlow(first)
            state.value = again
            expect(state.value === first) { "a StateFlow took an equal view for a new one" }
            val passed = runBlocking { flowOf(first, again).distinctUntilChanged().toList() }
            expectEqual(1, passed.size, "views distinctUntilChanged passes")
            // Errors that differ are not equal: a 500 after the 503.
            val other = rollBack(c, scripted, 500u)
            expect(other != first) { "a view with a 500 equals one with a 503: $other" }
            expect(other.error != first.error) { "a 500 equals a 503" }
        }
    }

    t.test("viewState of a view with an error: its views() starting reads it again, and the StateFlow emits nothing new") {
        withRolledBack { c, _ ->
            // runBlocking's one thread runs every coroutine below, in turn,
            // and nothing comes from another thread (nothing is tapped): so
            // each yield lets every coroutine waiting run once, and a
            // hundred run the sharing start (subscribe, read, emit) through.
            runBlocking {
                val screen = this + Job(coroutineContext[Job])
                val state = c.viewState(42L, screen, SharingStarted.Eagerly)
                val initial = state.value
                val seen = mutableListOf<PostView?>()
                screen.launch { state.collect { seen.add(it) } }
                repeat(100) { yield() }
                screen.cancel()
                expect(initial?.error != null) { "the initial view carries the error: $initial" }
                expect(state.value === initial) { "the StateFlow replaced its value with an equal one: ${state.value}" }
                expectEqual(listOf(initial), seen, "what its collector saw")
            }
        }
    }

    t.test("viewState of a closed client: null, with no exception and nothing subscribed, as views() and failures end") {
        val post = server.post()
        val uncaught = CopyOnWriteArrayList<Throwable>()
        val handler = CoroutineExceptionHandler { _, e -> uncaught.add(e) }
        val baseline = settledLiveObjects()
        val c = LikeClient(server.url, tokens, FAST_RETRY)
        runBlocking { c.refresh(post) }
        val live = CoroutineScope(SupervisorJob() + Dispatchers.Default + handler)
        val invalid = runCatching { c.viewState(0L, live) }.exceptionOrNull()
        live.cancel()
        expect(invalid is LikeException.InvalidId) { "viewState(0) of a live client: $invalid" }
        c.close()
        // Eagerly: its sharing coroutine, the scope's one child, collects
        // views() at once; on a closed client that ends, and so does it.
        val eager = CoroutineScope(SupervisorJob() + Dispatchers.Default + handler)
        val state = c.viewState(post, eager, SharingStarted.Eagerly)
        expectEqual(null, state.value, "the value (Eagerly)")
        runBlocking { withTimeout(10_000) { eager.coroutineContext.job.children.forEach { it.join() } } }
        expectEqual(null, state.value, "the value once its views() ended")
        eager.cancel()
        // The default (WhileSubscribed) and Lazily: the same to a collector.
        val lazy = CoroutineScope(SupervisorJob() + Dispatchers.Default + handler)
        for (started in listOf(SharingStarted.WhileSubscribed(5_000), SharingStarted.Lazily)) {
            val later = c.viewState(post, lazy, started)
            expectEqual(null, runBlocking { withTimeout(10_000) { later.first() } }, "collected ($started)")
        }
        lazy.cancel()
        expect(uncaught.isEmpty()) { "uncaught: $uncaught" }
        until({ "live objects: ${liveObjects()} (baseline $baseline)" }) { liveObjects() == baseline }
    }

    t.test("a ViewModel against the mock: collected on the main thread, taps, a notice, sign-out, then a model made on the closed client") {
        val post = server.post()
        val main = Executors.newSingleThreadExecutor { Thread(it, "main") }
        val mainDispatcher = main.asCoroutineDispatcher()
        val uncaught = CopyOnWriteArrayList<Throwable>()
        val handler = CoroutineExceptionHandler { _, e -> uncaught.add(e) }
        val baseline = settledLiveObjects()
        try {
            val client = LikeClient(server.url, tokens, FAST_RETRY.copy(callbackDispatcher = main.asCallbackDispatcher()))
            val vm = PostViewModel(client, post, mainDispatcher, handler)
            // The screen: `collectAsState()` in a composition on the main thread.
            val screen = CoroutineScope(SupervisorJob() + mainDispatcher + handler)
            val drawn = CopyOnWriteArrayList<Pair<PostView?, String>>()
            screen.launch { vm.state.collect { drawn.add(it to Thread.currentThread().name) } }
            vm.load()
            until({ "the post read: $drawn" }) { drawn.lastOrNull()?.first?.count == 0L }
            // The like is held a second at the server, so that the pending
            // view is there to draw: a StateFlow hands a collector only the
            // latest value, and a fast answer could replace it first.
            server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = post, latencyMs = 1_000))))
            try {
                main.submit { vm.tap() }.get(10, TimeUnit.SECONDS)
                until({ "the optimistic view drawn: $drawn" }) { drawn.any { it.first?.pending == true } }
            } finally {
                server.admin.clearFaults()
            }
            until({ "the like confirmed: $drawn" }) { drawn.last().first.let { it != null && it.liked && !it.pending } }
            expect(drawn.first { it.first?.pending == true }.first?.liked == true) { "the optimistic view was the like: $drawn" }
            // An unlike the server fails every time: rolled back, one notice.
            server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.UNLIKE, post = post, action = FaultAction.Status(503)))))
            try {
                main.submit { vm.tap() }.get(10, TimeUnit.SECONDS)
                until({ "the notice: ${vm.notices}" }) { vm.notices.isNotEmpty() }
                until({ "the rollback drawn: $drawn" }) { drawn.last().first.let { it != null && it.liked && !it.pending && it.error != null } }
            } finally {
                server.admin.clearFaults()
            }
            main.submit {}.get(10, TimeUnit.SECONDS)
            expectEqual(listOf("Your unlike didn't save"), vm.notices.toList(), "notices")
            expect(drawn.all { it.second == "main" }) { "every view drawn on the main thread: ${drawn.map { it.second }}" }

            // Sign-out, in order: the screen leaves and its model goes, then shutdown, then close.
            screen.cancel()
            vm.onCleared()
            expect(runBlocking { client.shutdown(2.seconds) }) { "nothing was out at sign-out" }
            client.close()
            // The navigation makes the screen's model again on its way out
            // (an exit transition): on the closed client it has nothing to
            // draw, and its failures end.
            val late = PostViewModel(client, post, mainDispatcher, handler)
            val lateScreen = CoroutineScope(SupervisorJob() + mainDispatcher + handler)
            val lateDrawn = CopyOnWriteArrayList<PostView?>()
            lateScreen.launch { late.state.collect { lateDrawn.add(it) } }
            runBlocking { withTimeout(10_000) { late.hearing.join() } }
            main.submit {}.get(10, TimeUnit.SECONDS)
            expectEqual(listOf<PostView?>(null), lateDrawn.toList(), "what the late screen drew")
            lateScreen.cancel()
            late.onCleared()
            main.submit {}.get(10, TimeUnit.SECONDS)
            expect(uncaught.isEmpty()) { "uncaught: $uncaught" }
            until({ "live objects: ${liveObjects()} (baseline $baseline)" }) { liveObjects() == baseline }
        } finally {
            main.shutdown()
        }
    }

    t.test("awaitCalls: a tap's call, which reaches a ScriptedServer after the tap returns, every time") {
        // calls() read right after the tap is sometimes still empty.
        repeat(50) {
            ScriptedServer().use { scripted ->
                scripted.setPost(42L, 10, false, emptyList(), 1)
                LikeClient.scripted(scripted, LikeClientOptions(maxRetries = 0)).use { c ->
                    c.setLiked(42L, true)
                    val call = runBlocking { scripted.awaitCalls() }.single()
                    expectEqual("like 42 #0", call.text, "the call")
                    expect(scripted.answer(call.id, 11, true, 2)) { "call #${call.id} answered" }
                    expect(runBlocking { c.waitIdle(10_000) }) { "idle" }
                }
            }
        }
        ScriptedServer().use { scripted ->
            LikeClient.scripted(scripted, LikeClientOptions(maxRetries = 0)).use { c ->
                c.setLiked(7L, true)
                val short = runCatching { runBlocking { scripted.awaitCalls(2, 200.milliseconds) } }.exceptionOrNull()
                expect(short is IllegalStateException && short.message!!.contains("like 7 #0")) { "two calls waited for, one out: $short" }
                runBlocking { c.shutdown(0.seconds) }
            }
        }
    }
}
