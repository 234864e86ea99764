// What every LikeException carries — code, isTransient, status,
// retryAfterMs, reason — read through the properties of LikeException
// itself (bindings/uniffi/kotlin/LikeExceptionFields.kt), for real errors:
// the server's answers, its fault rules, and the client's own refusals.
// Part of the test program in LikeKitTest.kt, which calls errorTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.TokenProvider
import com.likekit.code
import com.likekit.isTransient
import com.likekit.liveObjects
import com.likekit.reason
import com.likekit.retryAfterMs
import com.likekit.status
import com.likekit.testing.FaultAction
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import kotlinx.coroutines.runBlocking

/** One answer, one error: no retries, so that each case is one call. */
private val NO_RETRY = LikeClientOptions(maxRetries = 0)

/** What an app reads on any LikeException: (code, isTransient, status, retryAfterMs). */
private fun fieldsOf(e: LikeException): List<Any?> = listOf(e.code, e.isTransient, e.status, e.retryAfterMs)

/** The variant, by an exhaustive `when`, as an app matches on it. */
private fun variantOf(e: LikeException): String = when (e) {
    is LikeException.Network -> "Network"
    is LikeException.Timeout -> "Timeout"
    is LikeException.Server -> "Server"
    is LikeException.RateLimited -> "RateLimited"
    is LikeException.InvalidResponse -> "InvalidResponse"
    is LikeException.Unauthorized -> "Unauthorized"
    is LikeException.Forbidden -> "Forbidden"
    is LikeException.NotFound -> "NotFound"
    is LikeException.Rejected -> "Rejected"
    is LikeException.InvalidId -> "InvalidId"
    is LikeException.Config -> "Config"
    is LikeException.Shutdown -> "Shutdown"
    is LikeException.Journal -> "Journal"
    is LikeException.Expired -> "Expired"
}

/** The LikeException `call` throws; fails when it returns. */
private fun thrownBy(call: () -> Any?): LikeException {
    try {
        call()
    } catch (e: LikeException) {
        return e
    }
    throw AssertionError("no exception")
}

/** Checks the variant and the fields, and that the message shows the reason. */
private fun expectError(variant: String, fields: List<Any?>, e: LikeException, what: String) {
    expectEqual(variant, variantOf(e), "$what: variant")
    expectEqual(fields, fieldsOf(e), "$what: (code, isTransient, status, retryAfterMs)")
    expect(e.reason.isNotEmpty()) { "$what: no reason" }
    expect(e.message!!.contains(e.reason)) { "$what: the message ${e.message} leaves out the reason ${e.reason}" }
}

/** Runs `body` with `rules` in force, and none after. */
private fun withRules(server: TestServer, vararg rules: FaultRule, body: () -> Unit) {
    server.admin.setFaults(FaultRules(rules.toList()))
    try {
        body()
    } finally {
        server.admin.clearFaults()
    }
}

/** An answer every read of a post gets, and the error it becomes. */
private data class Answer(val name: String, val action: FaultAction, val variant: String, val fields: List<Any?>)

private val ANSWERS = listOf(
    Answer("a 503 with the mock's error body", FaultAction.Status(503), "Server", listOf("injected_fault", true, 503, null)),
    Answer("a 503 without an error body", FaultAction.Status(503, body = "\"down\""), "Server", listOf("http_503", true, 503, null)),
    Answer(
        "a 429 with Retry-After: 7",
        FaultAction.Status(429, retryAfterSecs = 7),
        "RateLimited",
        listOf("rate_limited", true, 429, 7000L),
    ),
    Answer(
        "a 400 bad_query",
        FaultAction.Status(400, body = """{"error":{"code":"bad_query","message":"posts= is empty"}}"""),
        "Rejected",
        listOf("bad_query", false, 400, null),
    ),
    Answer("a 403", FaultAction.Status(403), "Forbidden", listOf("forbidden", false, 403, null)),
    Answer("a malformed 200", FaultAction.Malformed, "InvalidResponse", listOf("invalid_response", true, null, null)),
)

fun errorTests(t: Harness, server: TestServer, viewerTokens: TokenProvider) {
    fun client(options: LikeClientOptions = NO_RETRY, tokens: TokenProvider? = viewerTokens) =
        LikeClient(server.url, tokens, options)
    val liveBefore = liveObjects()

    t.test("an unknown post is NotFound: post_not_found, not transient, status 404") {
        val missing = server.nextId()
        client().use { c ->
            val e = thrownBy { runBlocking { c.refresh(missing) } }
            expectError("NotFound", listOf("post_not_found", false, 404, null), e, "refresh")
            expect(e.reason.contains("not found")) { "reason ${e.reason}" }
            // The variant's own properties are the same values.
            val notFound = e as LikeException.NotFound
            expectEqual(fieldsOf(e), listOf(notFound.code, notFound.isTransient, notFound.status, notFound.retryAfterMs), "members")
            expectEqual(e.reason, notFound.reason, "member reason")
        }
    }

    for (answer in ANSWERS) {
        t.test("${answer.name} is ${answer.variant} with ${answer.fields}") {
            val post = server.post()
            withRules(server, FaultRule(FaultRoute.LIKES, post = post, action = answer.action)) {
                client().use { c ->
                    expectError(answer.variant, answer.fields, thrownBy { runBlocking { c.refresh(post) } }, "refresh")
                    // Every read gets it: the same again.
                    expectError(answer.variant, answer.fields, thrownBy { runBlocking { c.refresh(post) } }, "second refresh")
                }
            }
        }
    }

    t.test("a tap that fails on a 429 storm tells the observer RateLimited with retryAfterMs, and the view keeps it") {
        val post = server.post()
        withRules(server, FaultRule(FaultRoute.LIKE, post = post, action = FaultAction.Status(429, retryAfterSecs = 5))) {
            client().use { c ->
                val rec = Recorder()
                c.subscribe(post, rec).use {
                    c.setLiked(post, true)
                    val failure = rec.awaitFailure(10_000)
                    expectError("RateLimited", listOf("rate_limited", true, 429, 5000L), failure.error, "onFailure")
                    rec.awaitChange { !it.liked && !it.pending }
                    val error = c.view(post)!!.error ?: throw AssertionError("the view carries no error")
                    expectError("RateLimited", listOf("rate_limited", true, 429, 5000L), error, "view.error")
                }
            }
        }
    }

    t.test("a tap that fails on 503s past its retries tells the observer Server with status 503") {
        val post = server.post()
        withRules(server, FaultRule(FaultRoute.LIKE, post = post, action = FaultAction.Status(503))) {
            client(FAST_RETRY).use { c ->
                val rec = Recorder()
                c.subscribe(post, rec).use {
                    c.setLiked(post, true)
                    val failure = rec.awaitFailure(10_000)
                    expectError("Server", listOf("injected_fault", true, 503, null), failure.error, "onFailure")
                    expectEqual(2L, c.stats().retries, "retries before giving up")
                }
            }
        }
    }

    t.test("no answer in time is Timeout: transient, no status") {
        val post = server.post()
        withRules(server, FaultRule(FaultRoute.LIKES, post = post, latencyMs = 3000)) {
            client(LikeClientOptions(maxRetries = 0, requestTimeoutMs = 300)).use { c ->
                expectError("Timeout", listOf("timeout", true, null, null), thrownBy { runBlocking { c.refresh(post) } }, "refresh")
            }
        }
    }

    t.test("a server nobody listens on is Network: transient, no status") {
        LikeClient("http://127.0.0.1:1", viewerTokens, NO_RETRY).use { c ->
            expectError("Network", listOf("network", true, null, null), thrownBy { runBlocking { c.refresh(42L) } }, "refresh")
        }
    }

    t.test("no token is Unauthorized: not transient") {
        val post = server.post()
        client(tokens = null).use { c ->
            expectError("Unauthorized", listOf("unauthorized", false, 401, null), thrownBy { runBlocking { c.refresh(post) } }, "refresh")
        }
    }

    t.test("a bad id is InvalidId with code bad_post_id and no status; a bad URL is Config; after shutdown, Shutdown") {
        client().use { c ->
            for (bad in listOf(0L, -1L)) {
                val e = thrownBy { c.toggle(bad) }
                expectError("InvalidId", listOf("bad_post_id", false, null, null), e, "toggle($bad)")
                expectEqual("post ids are whole numbers from 1 to 9223372036854775807; got $bad", e.reason, "reason")
            }
            runBlocking { c.shutdown(1_000) }
            expectError("Shutdown", listOf("shutdown", false, null, null), thrownBy { runBlocking { c.refresh(server.post()) } }, "refresh")
        }
        val e = thrownBy { LikeClient("not a url", null, LikeClientOptions()).close() }
        expectError("Config", listOf("config", false, null, null), e, "LikeClient(\"not a url\")")
        expect(e.reason.contains("base URL")) { "reason ${e.reason}" }
    }

    t.test("the clients of these tests are all released") {
        val deadline = System.currentTimeMillis() + 10_000
        while (liveObjects() > liveBefore && System.currentTimeMillis() < deadline) Thread.sleep(20)
        expect(liveObjects() <= liveBefore) { "live objects: ${liveObjects()}, before these tests: $liveBefore" }
    }
}
