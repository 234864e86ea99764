// The Kotlin bindings over HTTPS: the real server behind an HTTPS front
// whose CA is made at test time (xtask's Kotlin runner starts it and passes
// LIKEKIT_TLS_URL and LIKEKIT_TLS_CA). Part of the test program in
// LikeKitTest.kt, which calls httpsTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeException
import com.likekit.TokenProvider
import java.io.File
import kotlinx.coroutines.runBlocking

fun httpsTests(t: Harness, server: TestServer, viewer: Long, tokens: TokenProvider) {
    val url = System.getenv("LIKEKIT_TLS_URL")
    val caFile = System.getenv("LIKEKIT_TLS_CA")

    t.test("taps and reads over HTTPS with the test CA as an extra root") {
        expect(url != null && caFile != null) { "LIKEKIT_TLS_URL and LIKEKIT_TLS_CA are not set (run `cargo xtask test --only kotlin`)" }
        expect(url!!.startsWith("https://")) { "not an https URL: $url" }
        val post = server.post()
        val options = FAST_RETRY.copy(extraRootCertificatesPem = File(caFile!!).readText())
        LikeClient(url, tokens, options).use { c ->
            runBlocking { c.refresh(post) }
            val rec = Recorder()
            c.subscribe(post, rec).use {
                c.setLiked(post, true)
                val confirmed = rec.awaitChange(10_000) { !it.pending }.view
                expect(confirmed.liked && confirmed.count == 1L && confirmed.error == null) { "confirmed $confirmed" }
            }
            expectEqual(true to 1L, server.likesOf(post, viewer), "the server has the like")
            c.setLiked(post, false)
            expect(runBlocking { c.waitIdle(10_000) }) { "idle" }
            expectEqual(false to 0L, server.likesOf(post, viewer), "and the unlike")
        }
    }

    t.test("without the test CA the HTTPS call fails as a Network error, and the tap rolls back") {
        val post = server.post()
        LikeClient(url!!, tokens, FAST_RETRY).use { c ->
            val error = runCatching { runBlocking { c.refresh(post) } }.exceptionOrNull()
            expect(error is LikeException.Network) { "got $error" }
            val rec = Recorder()
            c.subscribe(post, rec).use {
                c.setLiked(post, true)
                val failure = rec.awaitFailure(10_000)
                expect(failure.error is LikeException.Network) { "failure ${failure.error}" }
            }
            expectEqual(false to 0L, server.likesOf(post, viewer), "nothing reached the server")
        }
    }

    t.test("PEM that holds no certificate is LikeException.Config") {
        val error = runCatching {
            LikeClient(url!!, tokens, FAST_RETRY.copy(extraRootCertificatesPem = "not a certificate")).close()
        }.exceptionOrNull()
        expect(error is LikeException.Config) { "got $error" }
    }
}
