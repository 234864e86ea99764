// The kotlin.time.Duration forms of LikeKit's times
// (bindings/uniffi/kotlin/LikeKitDurations.kt): options, shutdown, waitIdle
// and retryAfter, what they refuse, and that the times reach the core. Part
// of the test program in LikeKitTest.kt, which calls durationTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.ScriptedFailure
import com.likekit.ScriptedServer
import com.likekit.awaitCalls
import com.likekit.TokenProvider
import com.likekit.code
import com.likekit.isTransient
import com.likekit.keepWhileOffline
import com.likekit.liveObjects
import com.likekit.maxIntentAge
import com.likekit.reason
import com.likekit.requestTimeout
import com.likekit.retryAfter
import com.likekit.retryAfterMs
import com.likekit.retryMaxDelay
import com.likekit.retryMinDelay
import com.likekit.shutdown
import com.likekit.status
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.waitIdle
import com.likekit.withKeepWhileOffline
import com.likekit.withMaxIntentAge
import com.likekit.withRequestTimeout
import com.likekit.withRetryMaxDelay
import com.likekit.withRetryMinDelay
import kotlin.time.Duration
import kotlin.time.Duration.Companion.days
import kotlin.time.Duration.Companion.microseconds
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.runBlocking

/** The LikeException `call` throws; fails when it returns. */
private fun refusal(call: () -> Any?): LikeException {
    try {
        call()
    } catch (e: LikeException) {
        return e
    }
    throw AssertionError("no exception")
}

fun durationTests(t: Harness, server: TestServer, tokens: TokenProvider) {
    t.test("Duration options set the millisecond fields, a part of a millisecond rounded up, and read back") {
        val options = LikeClientOptions(maxRetries = 2)
            .withRequestTimeout(15.seconds)
            .withRetryMinDelay(1.5.milliseconds)
            .withRetryMaxDelay(500.microseconds)
            .withMaxIntentAge(7.days)
            .withKeepWhileOffline(Duration.ZERO)
        expectEqual(
            listOf<Long?>(15_000, 2, 1, 604_800_000, 0),
            listOf(
                options.requestTimeoutMs,
                options.retryMinDelayMs,
                options.retryMaxDelayMs,
                options.maxIntentAgeMs,
                options.keepWhileOfflineMs,
            ),
            "the millisecond fields",
        )
        expectEqual(2L, options.maxRetries, "a field given in the constructor is kept")
        expectEqual(
            listOf<Duration?>(15.seconds, 2.milliseconds, 1.milliseconds, 7.days, Duration.ZERO),
            listOf(options.requestTimeout, options.retryMinDelay, options.retryMaxDelay, options.maxIntentAge, options.keepWhileOffline),
            "read back as Durations",
        )
        val leftOut = LikeClientOptions()
        expectEqual(
            listOf<Duration?>(null, null, null, null, null),
            listOf(leftOut.requestTimeout, leftOut.retryMinDelay, leftOut.retryMaxDelay, leftOut.maxIntentAge, leftOut.keepWhileOffline),
            "fields left to the core",
        )
        val never = LikeClientOptions().withMaxIntentAge(Duration.INFINITE)
        expectEqual(Long.MAX_VALUE, never.maxIntentAgeMs, "INFINITE: the longest age the field holds")
        expectEqual(Duration.INFINITE, never.maxIntentAge, "and back")
        ScriptedServer().use { LikeClient.scripted(it, never).close() }
    }

    t.test("a negative Duration option is LikeException.Config naming it, as the core gives Config") {
        // The core's own Config, for a time it refuses (zero).
        val core = refusal { LikeClient(server.url, tokens, LikeClientOptions(requestTimeoutMs = 0)).close() }
        expect(core is LikeException.Config) { "the core refuses a zero timeout with Config: $core" }
        val cases = listOf<Pair<String, () -> LikeClientOptions>>(
            "requestTimeout" to { LikeClientOptions().withRequestTimeout((-1).seconds) },
            "retryMinDelay" to { LikeClientOptions().withRetryMinDelay((-1).milliseconds) },
            "retryMaxDelay" to { LikeClientOptions().withRetryMaxDelay(-Duration.INFINITE) },
            "maxIntentAge" to { LikeClientOptions().withMaxIntentAge((-1).days) },
            "keepWhileOffline" to { LikeClientOptions().withKeepWhileOffline((-1).microseconds) },
        )
        for ((option, make) in cases) {
            val e = refusal(make)
            expect(e is LikeException.Config) { "$option: $e" }
            expectEqual(
                listOf(core.code, core.isTransient, core.status, core.retryAfterMs),
                listOf(e.code, e.isTransient, e.status, e.retryAfterMs),
                "$option: (code, isTransient, status, retryAfterMs) as the core's Config",
            )
            expect(e.reason.startsWith("invalid configuration: $option must not be negative; got -")) { "$option: ${e.reason}" }
            expect(e.message!!.contains(e.reason)) { "$option: the message ${e.message} leaves out the reason" }
        }
        // Zero is the core's to refuse, as the millisecond field's zero is.
        val zero = refusal { LikeClient(server.url, tokens, LikeClientOptions().withRequestTimeout(Duration.ZERO)).close() }
        expect(zero is LikeException.Config && zero.reason == core.reason) { "a zero timeout given as a Duration: $zero" }
    }

    t.test("a request timeout given as a Duration reaches the core: a held call times out") {
        val post = server.post()
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKES, post = post, latencyMs = 5_000))))
        try {
            LikeClient(server.url, tokens, FAST_RETRY.withRequestTimeout(300.milliseconds)).use { c ->
                val e = refusal { runBlocking { c.refresh(post) } }
                expect(e is LikeException.Timeout) { "a read held 5 s with a 300 ms timeout: $e" }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("shutdown and waitIdle take a Duration; a negative one counts as zero") {
        val post = server.post()
        val baseline = settledLiveObjects()
        LikeClient(server.url, tokens, FAST_RETRY).use { c ->
            c.setLiked(post, true)
            expect(runBlocking { c.waitIdle(10.seconds) }) { "idle within 10 s" }
            expect(c.view(post)?.let { it.liked && !it.pending } == true) { "confirmed: ${c.view(post)}" }
            expect(runBlocking { c.waitIdle((-1).seconds) }) { "an idle client is idle at once" }
            expect(runBlocking { c.shutdown((-5).seconds) }) { "nothing was out" }
            expect(c.isShutDown()) { "shut down" }
            expect(refusal { runBlocking { c.refresh(post) } } is LikeException.Shutdown) { "reads refused after shutdown" }
        }
        val held = server.post()
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = held, latencyMs = 1_500))))
        try {
            LikeClient(server.url, tokens, FAST_RETRY).use { c ->
                c.setLiked(held, true)
                expect(!runBlocking { c.shutdown(100.milliseconds) }) { "a call held 1.5 s is cut off at a 100 ms deadline" }
            }
        } finally {
            server.admin.clearFaults()
        }
        // The cut-off call's request ends when the server answers it; then
        // the closed client lets go of what it held.
        val deadline = System.currentTimeMillis() + 10_000
        while (liveObjects() != baseline) {
            expect(System.currentTimeMillis() < deadline) { "live objects: ${liveObjects()} (baseline $baseline)" }
            Thread.sleep(10)
        }
    }

    t.test("retryAfter: a RateLimited answer's Retry-After as a Duration, null without one") {
        ScriptedServer().use { scripted ->
            scripted.setPost(42L, 1, false, emptyList(), 1)
            LikeClient.scripted(scripted, LikeClientOptions(maxRetries = 0)).use { c ->
                val rec = Recorder()
                c.subscribe(42L, rec).use {
                    c.setLiked(42L, true)
                    val call = runBlocking { scripted.awaitCalls() }.single()
                    scripted.fail(call.id, ScriptedFailure.Status(429u, 1_500L, null))
                    val failure = rec.awaitFailure(5_000)
                    expect(failure.error is LikeException.RateLimited) { "a 429: ${failure.error}" }
                    expectEqual(1_500.milliseconds, failure.error.retryAfter, "retryAfter")
                    expectEqual(null, refusal { c.view(0L) }.retryAfter, "an error with no Retry-After")
                }
            }
        }
    }
}
