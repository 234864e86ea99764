// The generated Kotlin bindings against the server's fault rules, checked in
// the request journal: what the client shows and what it sent. Part of the
// test program in LikeKitTest.kt, which calls faultTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.TokenProvider
import com.likekit.testing.FaultAction
import com.likekit.testing.FaultMethod
import com.likekit.testing.FaultPhase
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.testing.JournalFault
import com.likekit.testing.RequestFilter
import com.likekit.testing.WriteResult
import kotlinx.coroutines.runBlocking

/** A rule that acts on the first call of `route` about `post` only. */
fun firstCall(route: FaultRoute, post: Long, phase: FaultPhase, action: FaultAction): FaultRule =
    FaultRule(route, post = post, nth = 1, phase = phase, action = action)

/** The cap on an answer's size a client is given in the oversized case. */
const val ONE_MIB = 1L shl 20

/** A 200 answer spoiled one way, and what the SDK's error says about it. */
data class Broken(val name: String, val phase: FaultPhase, val action: FaultAction, val cap: Long?, val message: String)

val BROKEN = listOf(
    Broken("truncated", FaultPhase.AFTER, FaultAction.Truncate(12), null, "unreadable body"),
    Broken("malformed", FaultPhase.BEFORE, FaultAction.Malformed, null, "unreadable body"),
    // Past the client's cap: refused for its size, before any of it is parsed.
    Broken("oversized", FaultPhase.BEFORE, FaultAction.Oversized(3L shl 20), ONE_MIB, "larger than $ONE_MIB bytes"),
)

/** Runs `body` with the journal emptied and no fault rules, both before and after. */
private fun withFaults(server: TestServer, vararg rules: FaultRule, body: () -> Unit) {
    server.admin.clearRequests()
    server.admin.setFaults(FaultRules(rules.toList()))
    try {
        body()
    } finally {
        server.admin.clearFaults()
        server.admin.clearRequests()
    }
}

fun faultTests(t: Harness, server: TestServer, viewer: Long, tokens: TokenProvider) {
    t.test("a like saved but its answer lost sticks, counts once, and the journal shows applied, then unchanged") {
        val post = server.post()
        withFaults(server, firstCall(FaultRoute.LIKE, post, FaultPhase.AFTER, FaultAction.Drop)) {
            LikeClient(server.url, tokens, FAST_RETRY).use { c ->
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
            val likes = server.requests(RequestFilter(route = FaultRoute.LIKE, post = post))
            expectEqual(
                listOf(listOf(WriteResult.APPLIED, null, JournalFault.DROP, FaultPhase.AFTER), listOf(WriteResult.UNCHANGED, 200, null, null)),
                likes.map { listOf(it.write, it.status, it.fault, it.faultPhase) },
                "(write, status, fault, phase) of the likes",
            )
            expectEqual(
                List(2) { Triple(FaultMethod.POST, listOf(post), viewer) },
                likes.map { Triple(it.method, it.posts, it.user) },
                "(method, posts, user) of the likes",
            )
            // Counted once, for the viewer and for anyone else; in the store, one
            // real change (version 1), past any cache.
            expectEqual(true to 1L, server.likesOf(post, viewer), "the viewer reads back (liked, count)")
            expectEqual(false to 1L, server.likesOf(post, server.user("Ben")), "another user reads back (liked, count)")
            val stored = server.admin.getPost(post)
            expectEqual(
                Triple(1L, 1L, listOf(viewer)),
                Triple(stored.count, stored.version, stored.recentLikers),
                "the stored post's (count, version, recent likers)",
            )
        }
    }

    for (broken in BROKEN) {
        t.test("${broken.name} 200 answers are LikeException.InvalidResponse, and a tap whose answer is ${broken.name} recovers") {
            val post = server.post()
            val fastRetry = LikeClientOptions(
                retryMinDelayMs = 10,
                retryMaxDelayMs = 20,
                retryJitter = false,
                maxAnswerBytes = broken.cap,
            )
            // A read whose answer is broken: the error itself, then a good read.
            withFaults(server, firstCall(FaultRoute.LIKES, post, broken.phase, broken.action)) {
                LikeClient(server.url, tokens, LikeClientOptions(maxAnswerBytes = broken.cap)).use { c ->
                    try {
                        runBlocking { c.refresh(post) }
                        throw AssertionError("no exception")
                    } catch (e: LikeException.InvalidResponse) {
                        expect(e.message!!.contains(broken.message)) { "message: ${e.message}" }
                    }
                    expectEqual(0L, runBlocking { c.refresh(post) }.count, "the next read is answered")
                }
                expectEqual(
                    listOf(listOf(200, JournalFault.fromWire(broken.action.kind), broken.phase), listOf(200, null, null)),
                    server.requests(RequestFilter(route = FaultRoute.LIKES, post = post)).map { listOf(it.status, it.fault, it.faultPhase) },
                    "(status, fault, phase) of the reads",
                )
            }
            // A like whose first answer is broken is retried and sticks.
            withFaults(server, firstCall(FaultRoute.LIKE, post, broken.phase, broken.action)) {
                LikeClient(server.url, tokens, fastRetry).use { c ->
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
                val (first, retry) = if (broken.phase == FaultPhase.AFTER) WriteResult.APPLIED to WriteResult.UNCHANGED else null to WriteResult.APPLIED
                expectEqual(
                    listOf(listOf(first, 200, JournalFault.fromWire(broken.action.kind)), listOf(retry, 200, null)),
                    server.requests(RequestFilter(route = FaultRoute.LIKE, post = post)).map { listOf(it.write, it.status, it.fault) },
                    "(write, status, fault) of the likes",
                )
                expectEqual(true to 1L, server.likesOf(post, viewer), "the viewer reads back (liked, count)")
            }
        }
    }
}
