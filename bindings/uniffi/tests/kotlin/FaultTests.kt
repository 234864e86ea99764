// The generated Kotlin bindings against the server's fault rules, checked in
// the request journal: what the client shows and what it sent. Part of the
// test program in LikeKitTest.kt, which calls faultTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.TokenProvider
import kotlinx.coroutines.runBlocking

/** A rule that acts on the first call of `route` about `post` only. */
fun firstCall(route: String, post: Long, phase: String, action: String): String =
    """{"route": "$route", "post": $post, "nth": 1, "phase": "$phase", "action": $action}"""

/** The cap on an answer's size a client is given in the oversized case. */
const val ONE_MIB = 1L shl 20

/** A 200 answer spoiled one way, and what the SDK's error says about it. */
data class Broken(val name: String, val phase: String, val action: String, val kind: String, val cap: Long?, val message: String)

val BROKEN = listOf(
    Broken("truncated", "after", """{"kind": "truncate", "bytes": 12}""", "truncate", null, "unreadable body"),
    Broken("malformed", "before", """{"kind": "malformed"}""", "malformed", null, "unreadable body"),
    // Past the client's cap: refused for its size, before any of it is parsed.
    Broken(
        "oversized",
        "before",
        """{"kind": "oversized", "bytes": ${3L shl 20}}""",
        "oversized",
        ONE_MIB,
        "larger than $ONE_MIB bytes",
    ),
)

/** Runs `body` with the journal emptied and no fault rules, both before and after. */
private fun withFaults(admin: Admin, vararg rules: String, body: () -> Unit) {
    admin.clearRequests()
    admin.faults(*rules)
    try {
        body()
    } finally {
        admin.clearFaults()
        admin.clearRequests()
    }
}

fun faultTests(t: Harness, admin: Admin, viewer: Long, tokens: TokenProvider) {
    t.test("a like saved but its answer lost sticks, counts once, and the journal shows applied, then unchanged") {
        val post = admin.post()
        withFaults(admin, firstCall("like", post, "after", """{"kind": "drop"}""")) {
            LikeClient(admin.url, tokens, FAST_RETRY).use { c ->
                val rec = Recorder()
                c.subscribe(post, rec).use {
                    c.setLiked(post, true)
                    val confirmed = rec.awaitChange(10_000) { !it.pending }.view
                    expect(confirmed.liked && confirmed.count == 1L && confirmed.error == null) { "confirmed $confirmed" }
                    expect(rec.failures.isEmpty()) { "nobody hears \"didn't save\": ${rec.failures}" }
                    val stats = c.stats()
                    expectEqual(
                        Triple(2L, 1L, 0L),
                        Triple(stats.callsSent, stats.retries, stats.rollbacks),
                        "(calls sent, retries, rollbacks): the lost answer was retried",
                    )
                }
            }
            // Applied, answer lost; the retry changed nothing and was answered.
            val likes = admin.requests("route" to "like", "post" to post)
            expectEqual(
                listOf(listOf("applied", null, "drop", "after"), listOf("unchanged", 200, null, null)),
                likes.map { listOf(it.write, it.status, it.fault, it.faultPhase) },
                "(write, status, fault, phase) of the likes",
            )
            expectEqual(
                List(2) { Triple("POST", listOf(post), viewer) },
                likes.map { Triple(it.method, it.posts, it.user) },
                "(method, posts, user) of the likes",
            )
            // Counted once, for the viewer and for anyone else.
            expectEqual(true to 1L, admin.likesOf(post, viewer), "the viewer reads back (liked, count)")
            expectEqual(false to 1L, admin.likesOf(post, admin.user("Ben")), "another user reads back (liked, count)")
        }
    }

    for (broken in BROKEN) {
        t.test("${broken.name} 200 answers are LikeException.InvalidResponse, and a tap whose answer is ${broken.name} recovers") {
            val post = admin.post()
            val fastRetry = LikeClientOptions(
                retryMinDelayMs = 10,
                retryMaxDelayMs = 20,
                retryJitter = false,
                maxAnswerBytes = broken.cap,
            )
            // A read whose answer is broken: the error itself, then a good read.
            withFaults(admin, firstCall("likes", post, broken.phase, broken.action)) {
                LikeClient(admin.url, tokens, LikeClientOptions(maxAnswerBytes = broken.cap)).use { c ->
                    try {
                        runBlocking { c.refresh(post) }
                        throw AssertionError("no exception")
                    } catch (e: LikeException.InvalidResponse) {
                        expect(e.message!!.contains(broken.message)) { "message: ${e.message}" }
                    }
                    expectEqual(0L, runBlocking { c.refresh(post) }.count, "the next read is answered")
                }
                expectEqual(
                    listOf(listOf(200, broken.kind, broken.phase), listOf(200, null, null)),
                    admin.requests("route" to "likes", "post" to post).map { listOf(it.status, it.fault, it.faultPhase) },
                    "(status, fault, phase) of the reads",
                )
            }
            // A like whose first answer is broken is retried and sticks.
            withFaults(admin, firstCall("like", post, broken.phase, broken.action)) {
                LikeClient(admin.url, tokens, fastRetry).use { c ->
                    val rec = Recorder()
                    c.subscribe(post, rec).use {
                        c.setLiked(post, true)
                        val confirmed = rec.awaitChange(10_000) { !it.pending }.view
                        expect(confirmed.liked && confirmed.count == 1L && confirmed.error == null) { "confirmed $confirmed" }
                        expect(rec.failures.isEmpty()) { "failures ${rec.failures}" }
                        val stats = c.stats()
                        expectEqual(2L to 1L, stats.callsSent to stats.retries, "(calls sent, retries)")
                    }
                }
                // After the handler the like was written before its answer
                // broke; before it, only the retry wrote.
                val (first, retry) = if (broken.phase == "after") "applied" to "unchanged" else null to "applied"
                expectEqual(
                    listOf(listOf(first, 200, broken.kind), listOf(retry, 200, null)),
                    admin.requests("route" to "like", "post" to post).map { listOf(it.write, it.status, it.fault) },
                    "(write, status, fault) of the likes",
                )
                expectEqual(true to 1L, admin.likesOf(post, viewer), "the viewer reads back (liked, count)")
            }
        }
    }
}
