// A suspend token provider (AsyncTokenProvider) against the server: awaited
// before each request, asked again after a 401. Part of the test program in
// LikeKitTest.kt, which calls tokenTests.
package com.likekit.tests

import com.likekit.AsyncTokenProvider
import com.likekit.LikeClient
import com.likekit.LikeException
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking

/** Starts with a token the server refuses; renews (after a delay, as over the network) when asked to. */
class RenewingTokens(private val server: TestServer, private val user: Long) : AsyncTokenProvider {
    val asked = CopyOnWriteArrayList<Boolean>()

    @Volatile
    private var current = "not-a-token"

    override suspend fun token(refresh: Boolean): String? {
        asked.add(refresh)
        if (refresh) {
            delay(20)
            current = server.token(user)
        }
        return current
    }
}

fun tokenTests(t: Harness, server: TestServer) {
    t.test("a suspend token provider is awaited, and renews after a 401: the like saves") {
        val user = server.user("Renee")
        val post = server.post()
        val tokens = RenewingTokens(server, user)
        LikeClient.withAsyncTokenProvider(server.url, tokens, FAST_RETRY).use { c ->
            val rec = Recorder()
            c.subscribe(post, rec).use {
                c.setLiked(post, true)
                val confirmed = rec.awaitChange(10_000) { !it.pending }.view
                expect(confirmed.liked && confirmed.count == 1L && confirmed.error == null) { "confirmed $confirmed" }
            }
            expectEqual(listOf(false, true), tokens.asked.take(2), "asked, then asked to refresh once")
            expectEqual(true, server.likesOf(post, user).first, "the server has the like")
        }
    }

    t.test("a suspend token provider that gives up after a 401 is Unauthorized") {
        val post = server.post()
        val giveUp = object : AsyncTokenProvider {
            override suspend fun token(refresh: Boolean): String? = if (refresh) null else "not-a-token"
        }
        LikeClient.withAsyncTokenProvider(server.url, giveUp, FAST_RETRY).use { c ->
            val error = runCatching { runBlocking { c.refresh(post) } }.exceptionOrNull()
            expect(error is LikeException.Unauthorized) { "got $error" }
        }
    }
}
