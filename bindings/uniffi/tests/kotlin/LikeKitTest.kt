// The generated Kotlin bindings against the real reference server.
//
// Run by `cargo xtask test --only kotlin`, which builds the library,
// generates the bindings, compiles this program with kotlinc against JNA,
// kotlinx-coroutines and the admin client (server-mock/clients/kotlin),
// starts `likekit-server` on a free loopback port and
// passes LIKEKIT_URL and LIKEKIT_ADMIN_KEY. Prints PASS/FAIL per test and
// ends with `kotlin: N passed, N failed`; exits non-zero on any failure.
package com.likekit.tests

import com.likekit.CallbackErrorListener
import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.TokenProvider
import com.likekit.defaultOptions
import com.likekit.liveObjects
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlin.system.exitProcess
import kotlinx.coroutines.runBlocking

/** Retries fast and without jitter, so that failure tests take milliseconds. */
val FAST_RETRY = LikeClientOptions(
    retryMinDelayMs = 10,
    retryMaxDelayMs = 20,
    maxRetries = 2,
    retryJitter = false,
)

fun main() {
    val server = TestServer.fromEnv()
    val url = server.url
    val t = Harness("kotlin")
    val mainThread = Thread.currentThread().name

    // One viewer for most tests; tests use fresh posts so they never interfere.
    val ana = server.user("Ana")
    val anaToken = FixedToken(server.token(ana))

    fun client(options: LikeClientOptions = LikeClientOptions(), tokens: TokenProvider? = anaToken) =
        LikeClient(url, tokens, options)

    fun idle(c: LikeClient) = expect(runBlocking { c.waitIdle(10_000) }) { "the client did not become idle" }

    t.test("LikeClientOptions() leaves every field to the core; defaultOptions() shows its values") {
        val leftOut = LikeClientOptions()
        expectEqual(null, leftOut.requestTimeoutMs, "request timeout left out")
        expectEqual(null, leftOut.maxRetries, "retries left out")
        val defaults = defaultOptions()
        expectEqual(10_000L, defaults.requestTimeoutMs, "request timeout")
        expectEqual(500L, defaults.retryMinDelayMs, "first retry delay")
        expectEqual(4L, defaults.maxRetries, "retries")
        expectEqual(null, defaults.retrySeed, "no seed")
        expectEqual(1L, FAST_RETRY.copy(maxRetries = 1).maxRetries, "one field changed")
        LikeClient(url, null, defaults).close()
    }

    t.test("0, -1 and Long.MIN_VALUE are LikeException.InvalidId (bad_post_id), and nothing is sent") {
        client().use { c ->
            for (bad in listOf(0L, -1L, Long.MIN_VALUE)) {
                val calls = listOf<Pair<String, () -> Any?>>(
                    "toggle" to { c.toggle(bad) },
                    "setLiked" to { c.setLiked(bad, true) },
                    "view" to { c.view(bad) },
                    "subscribe" to { c.subscribe(bad, Recorder()).close() },
                    "refresh" to { runBlocking { c.refresh(bad) } },
                    "refreshMany" to { runBlocking { c.refreshMany(listOf(server.post(), bad)) } },
                )
                for ((name, call) in calls) {
                    try {
                        call()
                        throw AssertionError("$name($bad): no exception")
                    } catch (e: LikeException.InvalidId) {
                        expectEqual(
                            "post ids are whole numbers from 1 to 9223372036854775807; got $bad",
                            e.reason,
                            "$name($bad)",
                        )
                    }
                }
            }
            val stats = c.stats()
            expectEqual(0L to 0L, stats.taps to stats.callsSent, "(taps, calls sent)")
        }
        // The server answers the same code for the same ids.
        for (bad in listOf("0", "-1")) {
            val (status, body) = server.asViewer("POST", "/posts/$bad/like", server.token(ana))
            expectEqual(400, status, "POST /posts/$bad/like")
            val error = (TestJson.parse(body) as Map<*, *>)["error"] as Map<*, *>
            expectEqual("bad_post_id", error["code"], "POST /posts/$bad/like answered $body; its code")
        }
    }

    t.test("the largest id, Long.MAX_VALUE, goes through") {
        val largest = server.post(Long.MAX_VALUE)
        client().use { c ->
            expectEqual(largest, c.setLiked(largest, true).postId, "tapped post")
            idle(c)
            val view = runBlocking { c.refresh(largest) }
            expect(view.liked && view.count == 1L && view.postId == Long.MAX_VALUE) { "read back $view" }
        }
    }

    t.test("a bad base URL is a typed LikeException.Config") {
        try {
            LikeClient("not a url", null, LikeClientOptions()).close()
            throw AssertionError("no exception")
        } catch (e: LikeException.Config) {
            expect(e.message!!.contains("base URL")) { "message: ${e.message}" }
        }
    }

    t.test("optimistic tap: the view changes before the server answers") {
        val post = server.post()
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, latencyMs = 1500))))
        try {
            client().use { c ->
                val rec = Recorder()
                c.subscribe(post, rec).use {
                    val tapped = System.nanoTime()
                    val view = c.setLiked(post, true)
                    expect(view.liked && view.pending) { "tap view $view" }
                    expectEqual(1L, view.count, "count at once")
                    expectEqual("Liked by you", view.line.text, "line at once")
                    expect(c.hasPendingCalls()) { "the call should still be out" }
                    // The observer heard of the tap before setLiked returned.
                    expect(rec.changes.isNotEmpty() && rec.changes[0].view.liked) { "no change before the tap returned" }
                    val confirmed = rec.awaitChange(10_000) { !it.pending }
                    val answeredAfterMs = (confirmed.atNanos - tapped) / 1_000_000
                    expect(answeredAfterMs >= 1400) { "the server answered after only $answeredAfterMs ms" }
                    expect(confirmed.view.liked && confirmed.view.count == 1L) { "confirmed ${confirmed.view}" }
                }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("rollback: failures past the retries call onFailure and restore the count") {
        val post = server.post()
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, errorRate = 1.0, status = 503))))
        try {
            client(FAST_RETRY).use { c ->
                val rec = Recorder()
                c.subscribe(post, rec).use {
                    expect(c.setLiked(post, true).liked) { "the tap shows at once" }
                    val failure = rec.awaitFailure()
                    expectEqual(post, failure.postId, "failed post")
                    expect(failure.wanted) { "a like was wanted" }
                    expect(failure.error is LikeException.Server) { "error ${failure.error}" }
                    expect(failure.error.message!!.contains("503")) { "message ${failure.error.message}" }
                    rec.awaitChange { !it.liked && !it.pending }
                    idle(c)
                    val view = c.view(post)!!
                    expect(!view.liked && view.count == 0L) { "rolled back view $view" }
                    expect(view.error is LikeException.Server) { "the view carries the error: ${view.error}" }
                    val stats = c.stats()
                    expectEqual(2L, stats.retries, "retries")
                    expectEqual(1L, stats.rollbacks, "rollbacks")
                    expectEqual(3L, stats.callsSent, "calls sent")
                }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("rapid taps coalesce into at most one more call") {
        val post = server.post()
        server.admin.setFaults(
            FaultRules(listOf(FaultRule(FaultRoute.LIKE, latencyMs = 300), FaultRule(FaultRoute.UNLIKE, latencyMs = 300))),
        )
        try {
            client().use { c ->
                c.toggle(post) // like: a call goes out
                c.toggle(post) // unlike: waits for the like's answer
                val last = c.toggle(post) // like: replaces it; the call out already carries it
                expect(last.liked && last.count == 1L) { "after three taps $last" }
                idle(c)
                var stats = c.stats()
                expectEqual(Triple(3L, 1L, 2L), Triple(stats.taps, stats.callsSent, stats.coalesced), "(taps, calls, coalesced)")
                expectEqual(stats.taps, stats.intentsSent + stats.coalesced, "taps = intents + coalesced")

                repeat(10) { c.toggle(post) } // ends where it started: liked
                idle(c)
                stats = c.stats()
                expect(stats.callsSent - 1 <= 2) { "10 rapid taps sent ${stats.callsSent - 1} calls" }
                val server = runBlocking { c.refresh(post) }
                expect(server.liked && server.count == 1L) { "server state $server" }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("refresh and refreshMany read others' likes and the friends line") {
        val ben = server.user("Ben")
        val cleo = server.user("Cleo", friends = listOf(ben))
        val (post, quiet, missing) = Triple(server.post(), server.post(), server.nextId())
        client(tokens = FixedToken(server.token(ben))).use { benClient ->
            benClient.setLiked(post, true)
            idle(benClient)
        }
        client(tokens = FixedToken(server.token(cleo))).use { c ->
            val rec = Recorder()
            c.subscribeAll(rec).use {
                val view = runBlocking { c.refresh(post) }
                expect(!view.liked && view.count == 1L) { "read $view" }
                expectEqual(listOf("Ben"), view.friends, "friends")
                expectEqual("Liked by Ben", view.line.text, "line")
                rec.awaitChange { it.postId == post && it.count == 1L }
                val mine = c.toggle(post)
                expectEqual("Liked by you and Ben", mine.line.text, "line after my tap")
                expectEqual(2L, mine.count, "count after my tap")
                idle(c)
                val views = runBlocking { c.refreshMany(listOf(post, quiet, missing, post)) }
                expectEqual(listOf(post, quiet), views.map { it.postId }, "posts read (the missing one left out)")
                expectEqual(2L, views[0].count, "count read back")
                expectEqual("", views[1].line.text, "no line at zero likes")
            }
        }
    }

    t.test("an unknown post is a typed LikeException.NotFound") {
        val missing = server.nextId()
        client(FAST_RETRY).use { c ->
            try {
                runBlocking { c.refresh(missing) }
                throw AssertionError("no exception")
            } catch (e: LikeException.NotFound) {
                expect(e.message!!.contains("not found")) { "message: ${e.message}" }
            }
            val rec = Recorder()
            c.subscribe(missing, rec).use {
                c.setLiked(missing, true)
                val failure = rec.awaitFailure()
                expect(failure.error is LikeException.NotFound) { "tap failure ${failure.error}" }
                idle(c)
                expectEqual(0L, c.stats().retries, "a 404 is not retried")
                expect(!c.view(missing)!!.liked) { "rolled back" }
            }
        }
    }

    t.test("observer callbacks arrive off the main thread without crashing") {
        val post = server.post()
        // The answer comes 200 ms after the tap, well after the tap's own
        // change was delivered.
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, latencyMs = 200))))
        try {
            client().use { c ->
                val rec = Recorder()
                c.subscribe(post, rec).use {
                    c.setLiked(post, true)
                    expectEqual(mainThread, rec.changes[0].thread, "the tap's own change comes on the tapping thread")
                    val confirmed = rec.awaitChange { !it.pending }
                    expect(confirmed.thread != mainThread) { "the answer came on ${confirmed.thread}" }
                    println("  the answer's change arrived on thread ${confirmed.thread}")
                }
            }
        } finally {
            server.admin.clearFaults()
        }
        // Taps from many threads at once, every event delivered.
        client().use { c ->
            val all = Recorder()
            c.subscribeAll(all).use {
                val posts = List(4) { server.post() }
                val threads = posts.map { p ->
                    Thread { repeat(25) { c.toggle(p) } } // odd: each ends liked
                }
                threads.forEach(Thread::start)
                threads.forEach(Thread::join)
                idle(c)
                for (p in posts) {
                    val view = c.view(p)!!
                    expect(view.liked && view.count == 1L && !view.pending) { "post $p ended $view" }
                }
                expect(all.changes.size >= 100) { "only ${all.changes.size} changes for 100 taps" }
            }
        }
    }

    t.test("an observer that throws breaks neither the client nor other observers") {
        val post = server.post()
        client().use { c ->
            val rec = Recorder()
            val thrower = object : LikeObserver {
                override fun onChange(view: PostView) = throw IllegalStateException("observer bug (expected in this test)")
                override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) = throw IllegalStateException("observer bug")
            }
            c.subscribe(post, rec).use {
                c.subscribe(post, thrower).use { c.setLiked(post, true) }
                expect(rec.changes.isNotEmpty()) { "the other observer heard nothing" }
                idle(c)
                c.setLiked(post, false)
                idle(c)
                val view = c.view(post)!!
                expect(!view.liked && !view.pending && view.error == null) { "after a throwing observer $view" }
                rec.awaitChange { !it.liked && !it.pending }
            }
        }
    }

    t.test("a callback error listener hears what an observer and a token provider threw") {
        val post = server.post()
        val heard = CopyOnWriteArrayList<Pair<String, String>>()
        val listener = CallbackErrorListener { callback, reason -> heard.add(callback to reason) }
        val throwingTokens = object : TokenProvider {
            override fun token(refresh: Boolean): String? = throw IllegalStateException("the keystore is locked (expected in this test)")
        }
        LikeClient(server.url, throwingTokens, FAST_RETRY.copy(callbackErrorListener = listener)).use { c ->
            val thrower = object : LikeObserver {
                override fun onChange(view: PostView) = throw IllegalStateException("observer bug (expected in this test)")
                override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) = Unit
            }
            val rec = Recorder()
            c.subscribe(post, rec).use {
                c.subscribe(post, thrower).use {
                    c.setLiked(post, true)
                    val failure = rec.awaitFailure(10_000)
                    expect(failure.error is LikeException.Unauthorized) { "failed with ${failure.error}" }
                }
            }
        }
        val byCallback = heard.groupBy({ it.first }, { it.second })
        expectEqual(setOf("a TokenProvider", "a LikeObserver in on_change"), byCallback.keys, "what threw")
        expect(byCallback.getValue("a TokenProvider").all { "IllegalStateException: the keystore is locked" in it }) {
            "the provider's reasons ${byCallback["a TokenProvider"]}"
        }
        expect(byCallback.getValue("a LikeObserver in on_change").all { "observer bug (expected in this test)" in it && "\tat " in it }) {
            "the observer's reasons, each with its stack trace ${byCallback["a LikeObserver in on_change"]}"
        }
    }

    t.test("cancel() and close() stop callbacks") {
        val post = server.post()
        client().use { c ->
            val rec = Recorder()
            val sub = c.subscribe(post, rec)
            expectEqual(post, sub.postId(), "watched post")
            c.setLiked(post, true)
            idle(c)
            val heard = rec.changes.size
            expect(heard >= 2) { "heard $heard changes" }
            sub.cancel()
            sub.cancel() // harmless
            expect(!sub.isActive()) { "still active after cancel" }
            c.setLiked(post, false)
            idle(c)
            expectEqual(heard, rec.changes.size, "changes after cancel")
            sub.close()

            val all = Recorder()
            c.subscribeAll(all).use { s ->
                expectEqual(null, s.postId(), "subscribeAll watches every post")
                c.setLiked(post, true)
                idle(c)
            }
            val heardAll = all.changes.size
            c.setLiked(post, false)
            idle(c)
            expectEqual(heardAll, all.changes.size, "changes after close")
        }
    }

    t.test("the token provider is asked for a fresh token after a 401") {
        val post = server.post()
        val good = server.token(ana)
        val asked = CopyOnWriteArrayList<Boolean>()
        val rotating = object : TokenProvider {
            override fun token(refresh: Boolean): String? {
                asked.add(refresh)
                return if (refresh) good else "expired"
            }
        }
        client(tokens = rotating).use { c ->
            c.setLiked(post, true)
            idle(c)
            val view = c.view(post)!!
            expect(view.liked && !view.pending && view.error == null) { "with a fresh token $view" }
            expectEqual(listOf(false, true), asked.take(2), "asked for (refresh)")
        }
        val other = server.post()
        client(FAST_RETRY, tokens = null).use { c ->
            val rec = Recorder()
            c.subscribe(other, rec).use {
                c.setLiked(other, true)
                expect(rec.awaitFailure().error is LikeException.Unauthorized) { "without a token" }
            }
        }
    }

    t.test("shutdown finishes the calls out, then refuses taps and reads") {
        val post = server.post()
        client().use { c ->
            c.setLiked(post, true)
            expect(runBlocking { c.shutdown(5_000) }) { "shutdown did not finish in time" }
            expect(c.isShutDown()) { "isShutDown" }
            val late = c.setLiked(post, false)
            expect(late.liked && !late.pending) { "a tap after shutdown changed the view: $late" }
            expect(late.error is LikeException.Shutdown) { "error ${late.error}" }
            try {
                runBlocking { c.refresh(post) }
                throw AssertionError("no exception")
            } catch (_: LikeException.Shutdown) {
            }
        }
    }

    // Fault rules and the request journal (FaultTests.kt).
    faultTests(t, server, ana, anaToken)

    // The intent journal: a killed app's taps restored by the next client (JournalTests.kt).
    journalTests(t, server, ana, anaToken)

    // The admin client against the server's own description (AdminClientTests.kt).
    adminClientTests(t, server)

    // Flows, StateFlow and executors (FlowTests.kt, on bindings/uniffi/kotlin).
    flowTests(t, server, anaToken)

    // A screen's model on the flows, through sign-out; views with errors in a StateFlow (ViewModelTests.kt).
    viewModelTests(t, server, anaToken)

    // Durations for the millisecond options and waits (DurationTests.kt, on bindings/uniffi/kotlin).
    durationTests(t, server, anaToken)

    // A suspend token provider (TokenTests.kt).
    tokenTests(t, server)

    // HTTPS through a front with a CA made at test time (HttpsTests.kt).
    httpsTests(t, server, ana, anaToken)
    errorTests(t, server, anaToken) // code, isTransient, status, retryAfterMs, reason (ErrorTests.kt)

    // The conformance scenarios on a client over a ScriptedServer (ConformanceTests.kt).
    conformanceTests(t)

    t.test("10,000 clients and 10,000 subscriptions created and dropped leave no live objects") {
        val post = server.post()
        val noop = object : LikeObserver {
            override fun onChange(view: PostView) {}
            override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
        }
        val baseline = liveObjects()
        var highest = baseline
        val started = System.nanoTime()
        for (i in 0 until 10_000) {
            client().use { c ->
                c.subscribe(post, noop).use {
                    if (i % 1_000 == 0) c.toggle(post) // some clients close with a call out
                    highest = maxOf(highest, liveObjects())
                }
            }
        }
        client().use { c ->
            for (i in 0 until 10_000) {
                val observer = object : LikeObserver {
                    override fun onChange(view: PostView) {}
                    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
                }
                (if (i % 2 == 0) c.subscribe(post, observer) else c.subscribeAll(observer)).close()
            }
        }
        println("  20,000 objects in ${(System.nanoTime() - started) / 1_000_000} ms; live at most $highest (baseline $baseline)")
        expect(highest <= baseline + 10) { "live objects grew to $highest during the loop" }
        // Clients closed with a call out let go of their references when it ends.
        val deadline = System.currentTimeMillis() + 10_000
        while (liveObjects() != baseline && System.currentTimeMillis() < deadline) Thread.sleep(20)
        expectEqual(baseline, liveObjects(), "live objects after the loop")
    }

    t.test("clients and subscriptions left to the garbage collector are released") {
        val post = server.post()
        val baseline = liveObjects()
        val released = CountDownLatch(1)
        // Held until counted: the collector may run at any time, and what it frees
        // before the count would make the count short.
        fun leak(): ArrayList<Any> {
            val held = ArrayList<Any>()
            repeat(200) {
                val c = client()
                held += c
                held += c.subscribe(post, Recorder())
            }
            return held
        }
        val held = leak()
        expect(liveObjects() >= baseline + 400) { "expected 400 more live objects, have ${liveObjects() - baseline}" }
        held.clear() // left to the collector: neither closed
        val deadline = System.currentTimeMillis() + 20_000
        while (liveObjects() != baseline && System.currentTimeMillis() < deadline) {
            System.gc()
            released.await(50, TimeUnit.MILLISECONDS)
        }
        expectEqual(baseline, liveObjects(), "live objects after collection")
    }

    println(t.summary())
    exitProcess(if (t.failed == 0 && t.passed > 0) 0 else 1)
}
