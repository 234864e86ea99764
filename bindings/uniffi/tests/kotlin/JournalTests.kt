// Taps that survive the app being killed: the intent journal
// (IntentJournal.file / IntentJournal.memory in LikeClientOptions.journal,
// maxIntentAgeMs, keepWhileOfflineMs, LikeClient.restore()) through the
// generated Kotlin bindings, against the real server. A child JVM on this
// program's own class path (JournalChild below) taps while its call is held
// on the server and is killed with SIGKILL; a new client on the same journal
// finishes the job. Part of the test program in LikeKitTest.kt, which calls
// journalTests.
//
// The kill is a real process's: closing a client in this process leaves its
// call running (and the journal locked) until the call ends, which is not
// what a killed app leaves.
package com.likekit.tests

import com.likekit.IntentJournal
import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.RestoreReport
import com.likekit.ScriptedServer
import com.likekit.TokenProvider
import com.likekit.code
import com.likekit.isTransient
import com.likekit.reason
import com.likekit.testing.FaultAction
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.testing.RequestFilter
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.runBlocking

/** Ana's journal key, and the name of her journal file (the key hex-encoded). */
private const val ANA = "ana"
private const val ANA_FILE = "likekit-intents-616e61.json"

/**
 * The app that is killed: with Ana's journal in `directory`, reads `post`
 * (the heart as the server has it), taps `taps` on it (`like` or `unlike`,
 * comma-separated, in order), prints `tapped` and waits to be killed.
 * Arguments: server URL, token, directory, post, taps.
 */
object JournalChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (url, token, directory, post, taps) = args
        val client = LikeClient(url, FixedToken(token), LikeClientOptions(journal = IntentJournal.file(directory, ANA)))
        runBlocking { client.refresh(post.toLong()) }
        for (tap in taps.split(",")) client.setLiked(post.toLong(), tap == "like")
        println("tapped")
        System.out.flush()
        Thread.sleep(120_000)
    }
}

/** Waits up to `timeoutMs` for `check` to hold. */
private fun waitFor(what: String, timeoutMs: Long = 15_000, check: () -> Boolean) {
    val deadline = System.currentTimeMillis() + timeoutMs
    while (!check()) {
        expect(System.currentTimeMillis() < deadline) { "timed out waiting for $what" }
        Thread.sleep(20)
    }
}

/** Runs `body` with a fresh directory, removed after. */
private fun withDirectory(body: (Path) -> Unit) {
    val dir = Files.createTempDirectory("likekit-journal")
    try {
        body(dir)
    } finally {
        dir.toFile().deleteRecursively()
    }
}

/** (post, liked) of each intent in Ana's journal file in `dir`. */
private fun intentsIn(dir: Path): List<Pair<Long, Boolean>> {
    val journal = TestJson.parse(Files.readString(dir.resolve(ANA_FILE))) as Map<*, *>
    return (journal["intents"] as List<*>).map { it as Map<*, *> }.map { (it["post"] as Long) to (it["liked"] as Boolean) }
}

/** Ana's journal holding one intent per (post, liked, tappedAtMs), as an earlier run writes it. */
private fun anaJournal(vararg intents: Triple<Long, Boolean, Long>): String = TestJson.write(
    linkedMapOf(
        "format" to 1,
        "viewer" to ANA,
        "intents" to intents.map { (post, liked, at) -> linkedMapOf("post" to post, "liked" to liked, "tapped_at_ms" to at) },
    ),
)

/**
 * Runs the child tapping `taps` on `post` while `route` is held 10 s about
 * it, and kills it with SIGKILL once its first call reached the server (a
 * call goes out only once the journal holds its intent, so the tap is then
 * on disk).
 */
private fun tapAndKill(server: TestServer, viewer: Long, dir: Path, post: Long, taps: List<String>, route: FaultRoute) {
    server.admin.clearRequests()
    server.admin.setFaults(FaultRules(listOf(FaultRule(route, post = post, latencyMs = 10_000))))
    try {
        val java = ProcessHandle.current().info().command().orElse(Paths.get(System.getProperty("java.home"), "bin", "java").toString())
        val command = listOfNotNull(
            java,
            System.getProperty("jna.library.path")?.let { "-Djna.library.path=$it" },
            "-cp",
            System.getProperty("java.class.path"),
            JournalChild::class.java.name,
            server.url,
            server.token(viewer),
            dir.toString(),
            post.toString(),
            taps.joinToString(","),
        )
        val child = ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start()
        try {
            expectEqual("tapped", child.inputStream.bufferedReader().readLine(), "the child's first line")
            waitFor("the call to reach the server") { server.requests(RequestFilter(route = route, post = post)).isNotEmpty() }
            // Taps after the first are written down while its call goes out
            // (nothing holds the call for them): kill once the last one is.
            val last = post to (taps.last() == "like")
            waitFor("the last tap written down") { runCatching { last in intentsIn(dir) }.getOrDefault(false) }
        } finally {
            child.destroyForcibly() // SIGKILL
            expect(child.waitFor(10, TimeUnit.SECONDS)) { "the child outlived SIGKILL" }
        }
    } finally {
        server.admin.clearFaults()
    }
}

fun journalTests(t: Harness, server: TestServer, viewer: Long, tokens: TokenProvider) {
    fun idle(c: LikeClient) = expect(runBlocking { c.waitIdle(10_000) }) { "the client did not become idle" }

    /** A new client on Ana's journal in `dir`, listened to by `rec`, restored. */
    fun restarted(dir: Path, rec: Recorder? = null, options: LikeClientOptions = LikeClientOptions(), body: (LikeClient, RestoreReport) -> Unit) {
        IntentJournal.file(dir.toString(), ANA).use { journal ->
            LikeClient(server.url, tokens, options.copy(journal = journal)).use { c ->
                val all = rec?.let { c.subscribeAll(it) }
                try {
                    body(c, c.restore())
                } finally {
                    all?.close()
                }
            }
        }
    }

    t.test("a like whose app was killed with its call held is restored liked and pending at once, and reaches the server once") {
        val post = server.post()
        withDirectory { dir ->
            tapAndKill(server, viewer, dir, post, listOf("like"), FaultRoute.LIKE)
            expectEqual(listOf(post to true), intentsIn(dir), "(post, liked) the killed app left in its journal")
            server.admin.clearRequests()
            restarted(dir) { c, report ->
                expectEqual(null, report.problem, "problem")
                expect(report.expired.isEmpty()) { "expired ${report.expired}" }
                expectEqual(
                    listOf(Triple(post, true, true)),
                    report.restored.map { Triple(it.postId, it.liked, it.pending) },
                    "(post, liked, pending) restored",
                )
                idle(c)
                expectEqual(true to 1L, server.likesOf(post, viewer), "the viewer reads back (liked, count)")
                expectEqual(1, server.requests(RequestFilter(route = FaultRoute.LIKE, post = post)).size, "likes sent after the restart")
                expectEqual(emptyList<Pair<Long, Boolean>>(), intentsIn(dir), "intents kept once the like saved")
            }
        }
    }

    t.test("an unlike whose app was killed is restored and saves too") {
        val post = server.post()
        val (status, body) = server.asViewer("POST", "/posts/$post/like", server.token(viewer))
        expectEqual(200, status, "the like before ($body)")
        withDirectory { dir ->
            tapAndKill(server, viewer, dir, post, listOf("unlike"), FaultRoute.UNLIKE)
            restarted(dir) { c, report ->
                expectEqual(listOf(false to true), report.restored.map { it.liked to it.pending }, "(liked, pending) restored")
                idle(c)
                expectEqual(false to 0L, server.likesOf(post, viewer), "the viewer reads back (liked, count)")
            }
        }
    }

    t.test("like, unlike, like before the kill leaves one intent: at most one call after the restart, and the server ends liked") {
        val post = server.post()
        withDirectory { dir ->
            tapAndKill(server, viewer, dir, post, listOf("like", "unlike", "like"), FaultRoute.LIKE)
            expectEqual(listOf(post to true), intentsIn(dir), "only the last intent is kept")
            server.admin.clearRequests()
            restarted(dir) { c, report ->
                expectEqual(listOf(true), report.restored.map { it.liked }, "liked restored")
                idle(c)
                expectEqual(true to 1L, server.likesOf(post, viewer), "the viewer reads back (liked, count)")
                val sent = server.requests(RequestFilter(post = post)).filter { it.route == FaultRoute.LIKE || it.route == FaultRoute.UNLIKE }
                expect(sent.size <= 1) { "calls after the restart: ${sent.map { "${it.method} ${it.path}" }}" }
            }
        }
    }

    t.test("another viewer's client on the same directory restores nothing and sends nothing of Ana's") {
        val post = server.post()
        withDirectory { dir ->
            tapAndKill(server, viewer, dir, post, listOf("like"), FaultRoute.LIKE)
            val anas = Files.readAllBytes(dir.resolve(ANA_FILE))
            server.admin.clearRequests()
            val ben = server.user("Ben")
            IntentJournal.file(dir.toString(), "ben").use { journal ->
                LikeClient(server.url, FixedToken(server.token(ben)), LikeClientOptions(journal = journal)).use { c ->
                    val report = c.restore()
                    expect(report.restored.isEmpty() && report.expired.isEmpty() && report.problem == null) { "Ben's report $report" }
                    idle(c)
                    Thread.sleep(200)
                    expectEqual(emptyList<Any>(), server.requests(RequestFilter(post = post)).map { "${it.method} ${it.path}" }, "sent about Ana's post")
                    expectEqual(0L, c.stats().callsSent, "Ben's calls")
                }
            }
            expect(anas.contentEquals(Files.readAllBytes(dir.resolve(ANA_FILE)))) { "Ana's journal changed" }
            expectEqual(false to 0L, server.likesOf(post, ben), "Ben reads back (liked, count)")
        }
    }

    t.test("an intent older than a day (the default maxIntentAgeMs) fails once with Expired and sends nothing") {
        val post = server.post()
        withDirectory { dir ->
            val twoDaysAgo = System.currentTimeMillis() - 2 * 24 * 3_600_000L
            Files.writeString(dir.resolve(ANA_FILE), anaJournal(Triple(post, true, twoDaysAgo)))
            server.admin.clearRequests()
            val rec = Recorder()
            restarted(dir, rec) { c, report ->
                expect(report.restored.isEmpty() && report.problem == null) { "report $report" }
                val expired = report.expired.single()
                expectEqual(post to true, expired.postId to expired.wanted, "(post, wanted) expired")
                expect(expired.error is LikeException.Expired) { "expired with ${expired.error}" }
                expectEqual("expired" to false, expired.error.code to expired.error.isTransient, "(code, transient)")
                idle(c)
                expectEqual(
                    listOf(Triple(post, true, "Expired")),
                    rec.failures.map { Triple(it.postId, it.wanted, it.error::class.simpleName) },
                    "(post, wanted, error) observers heard",
                )
                expectEqual(emptyList<Any>(), server.requests(RequestFilter(post = post)).map { "${it.method} ${it.path}" }, "sent")
                expectEqual(emptyList<Pair<Long, Boolean>>(), intentsIn(dir), "intents kept")
            }
        }
    }

    t.test("maxIntentAgeMs decides: a 10-minute-old intent expires at 60 s and a fresh one beside it is sent") {
        val (old, fresh) = server.post() to server.post()
        withDirectory { dir ->
            val now = System.currentTimeMillis()
            Files.writeString(dir.resolve(ANA_FILE), anaJournal(Triple(old, true, now - 600_000), Triple(fresh, true, now - 1_000)))
            server.admin.clearRequests()
            val rec = Recorder()
            restarted(dir, rec, LikeClientOptions(maxIntentAgeMs = 60_000)) { c, report ->
                expectEqual(listOf(old to true), report.expired.map { it.postId to it.wanted }, "(post, wanted) expired")
                expectEqual(listOf(fresh to true), report.restored.map { it.postId to it.pending }, "(post, pending) restored")
                idle(c)
                expectEqual(listOf(old), rec.failures.map { it.postId }, "posts observers heard fail")
                expect(rec.failures.single().error is LikeException.Expired) { "failure ${rec.failures}" }
                expectEqual(emptyList<Any>(), server.requests(RequestFilter(post = old)).map { "${it.method} ${it.path}" }, "sent about the old one")
                expectEqual(1, server.requests(RequestFilter(route = FaultRoute.LIKE, post = fresh)).size, "likes of the fresh one")
                expectEqual(true to 1L, server.likesOf(fresh, viewer), "the fresh one reads back (liked, count)")
            }
        }
    }

    t.test("a damaged journal is LikeException.Journal in restore().problem, once; the client starts empty and the next save replaces it") {
        val post = server.post()
        val damaged = listOf(
            "truncated" to """{"format":1,"viewer":"ana","intents":[{"post":$post,"liked":tr""".toByteArray(),
            "not text" to byteArrayOf(0, 0xff.toByte(), 0xfe.toByte()),
            "a newer format" to """{"format":7}""".toByteArray(),
            "another viewer's" to """{"format":1,"viewer":"ben","intents":[{"post":$post,"liked":true,"tapped_at_ms":${System.currentTimeMillis()}}]}""".toByteArray(),
        )
        server.admin.clearRequests()
        for ((name, bytes) in damaged) {
            withDirectory { dir ->
                val file = dir.resolve(ANA_FILE)
                Files.write(file, bytes)
                restarted(dir) { c, report ->
                    val problem = report.problem
                    expect(problem is LikeException.Journal) { "$name: problem $problem" }
                    expectEqual("journal_damaged" to false, problem!!.code to problem.isTransient, "$name: (code, transient)")
                    expect(report.restored.isEmpty() && report.expired.isEmpty()) { "$name: report $report" }
                    expectEqual(null, c.restore().problem, "$name: the problem on the second restore")
                    waitFor("$name: the journal to be replaced") { !Files.readAllBytes(file).contentEquals(bytes) }
                    expectEqual(
                        mapOf("format" to 1L, "viewer" to ANA, "intents" to emptyList<Any>()),
                        TestJson.parse(Files.readString(file)),
                        "$name: the journal after",
                    )
                    idle(c)
                    val stats = c.stats()
                    expectEqual(0L to 0L, stats.taps to stats.callsSent, "$name: (taps, calls sent)")
                    expectEqual(null, c.view(post), "$name: the post's view")
                }
            }
        }
        expectEqual(emptyList<Any>(), server.requests(RequestFilter(post = post)).map { "${it.method} ${it.path}" }, "sent")
    }

    t.test("a second IntentJournal.file for the same directory and viewer is refused with LikeException.Journal while the first lives") {
        withDirectory { dir ->
            fun refused(what: String) {
                try {
                    IntentJournal.file(dir.toString(), ANA).close()
                    throw AssertionError("$what: a second journal opened")
                } catch (e: LikeException.Journal) {
                    expect(e.reason.contains("in use")) { "$what: reason ${e.reason}" }
                    expectEqual("journal_in_use", e.code, "$what: code")
                }
            }
            val first = IntentJournal.file(dir.toString(), ANA)
            refused("beside a journal")
            IntentJournal.file(dir.toString(), "ben").close() // another viewer's is its own
            // A client holding the journal keeps it locked after the journal's own handle is closed.
            val client = LikeClient(server.url, tokens, LikeClientOptions(journal = first))
            first.close()
            refused("beside a client")
            client.close()
            IntentJournal.file(dir.toString(), ANA).close()
        }
    }

    t.test("a client closed while its call waits on the token provider frees its journal for a client made at once (sign-out, sign-in), which restores the tap") {
        val post = server.post()
        val token = server.token(viewer)
        // The sign-in SDK is slow to answer the like's token request: the
        // closed client's abandoned call holds the journal until it does.
        val asked = java.util.concurrent.CountDownLatch(1)
        val answer = java.util.concurrent.CountDownLatch(1)
        val slow = object : TokenProvider {
            override fun token(refresh: Boolean): String? {
                asked.countDown()
                answer.await(10, TimeUnit.SECONDS)
                return token
            }
        }
        IntentJournal.memory(ANA).use { journal ->
            val options = FAST_RETRY.copy(journal = journal)
            val first = LikeClient(server.url, slow, options)
            first.setLiked(post, true)
            expect(asked.await(10, TimeUnit.SECONDS)) { "the like's token was never asked for" }
            first.close()
            // The provider answers a moment later, on its own thread; the
            // next sign-in's client, made at once, waits for the journal.
            val answering = Thread {
                Thread.sleep(300)
                answer.countDown()
            }.apply { start() }
            try {
                LikeClient(server.url, tokens, options).use { next ->
                    val report = next.restore()
                    expectEqual(null, report.problem, "problem")
                    expectEqual(listOf(post to true), report.restored.map { it.postId to it.liked }, "(post, liked) restored")
                    idle(next)
                    expectEqual(true to 1L, server.likesOf(post, viewer), "the viewer reads back (liked, count)")
                }
            } finally {
                answer.countDown()
                answering.join()
            }
        }
    }

    t.test("one journal given to a second client while the first lives is refused with LikeException.Journal; free again once that client is closed") {
        withDirectory { dir ->
            fun refused(what: String, options: LikeClientOptions) {
                try {
                    LikeClient(server.url, tokens, options).close()
                    throw AssertionError("$what: a second client took the journal")
                } catch (e: LikeException.Journal) {
                    expect(e.reason.contains("in use")) { "$what: reason ${e.reason}" }
                    expectEqual("journal_in_use", e.code, "$what: code")
                }
            }
            IntentJournal.file(dir.toString(), ANA).use { journal ->
                val options = LikeClientOptions(journal = journal)
                LikeClient(server.url, tokens, options).use {
                    refused("the same options", options)
                    refused("the same journal in other options", FAST_RETRY.copy(journal = journal))
                }
                // Closed with nothing in flight: the journal is free for the next sign-in.
                LikeClient(server.url, tokens, options).use { c -> expectEqual(null, c.restore().problem, "problem") }
            }
            IntentJournal.memory(ANA).use { journal ->
                LikeClient.scripted(ScriptedServer(), LikeClientOptions(journal = journal)).use {
                    try {
                        LikeClient.scripted(ScriptedServer(), LikeClientOptions(journal = journal)).close()
                        throw AssertionError("a second scripted client took a memory journal")
                    } catch (e: LikeException.Journal) {
                        expect(e.reason.contains("in use")) { "memory: reason ${e.reason}" }
                        expectEqual("journal_in_use", e.code, "memory: code")
                    }
                }
            }
        }
    }

    t.test("keepWhileOfflineMs with a memory journal holds the tap pending through 503s, then it saves") {
        val post = server.post()
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = post, action = FaultAction.Status(503)))))
        server.admin.clearRequests()
        try {
            IntentJournal.memory(ANA).use { journal ->
                val options = FAST_RETRY.copy(maxRetries = 1, journal = journal, keepWhileOfflineMs = 100)
                LikeClient(server.url, tokens, options).use { c ->
                    val report = c.restore()
                    expect(report.restored.isEmpty() && report.expired.isEmpty() && report.problem == null) { "a new memory journal's report $report" }
                    val rec = Recorder()
                    c.subscribe(post, rec).use {
                        c.setLiked(post, true)
                        // Retries used up: still pending, the view saying why.
                        val held = rec.awaitChange(10_000) { it.pending && it.error != null }.view
                        expect(held.error is LikeException.Server) { "held with ${held.error}" }
                        val tries = server.admin.waitForRequests(RequestFilter(route = FaultRoute.LIKE, post = post), count = 4, timeoutMs = 15_000)
                        expectEqual(true, tries.met, "a few offline tries, answered (${tries.entries.size} seen)")
                        val view = c.view(post)!!
                        expect(view.liked && view.pending) { "view while offline $view" }
                        expect(rec.failures.isEmpty()) { "failures ${rec.failures}" }
                        server.admin.clearFaults()
                        val confirmed = rec.awaitChange(10_000) { !it.pending }.view
                        expectEqual(Triple(true, 1L, null), Triple(confirmed.liked, confirmed.count, confirmed.error), "(liked, count, error) confirmed")
                    }
                }
            }
        } finally {
            server.admin.clearFaults()
        }
    }

    t.test("a tap kept offline past maxIntentAgeMs fails once with Expired and rolls back") {
        val post = server.post()
        server.admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = post, action = FaultAction.Status(503)))))
        try {
            IntentJournal.memory(ANA).use { journal ->
                val options = FAST_RETRY.copy(maxRetries = 1, journal = journal, keepWhileOfflineMs = 50, maxIntentAgeMs = 500)
                LikeClient(server.url, tokens, options).use { c ->
                    val rec = Recorder()
                    c.subscribe(post, rec).use {
                        c.setLiked(post, true)
                        val failure = rec.awaitFailure(10_000)
                        expectEqual(post to true, failure.postId to failure.wanted, "(post, wanted) failed")
                        expect(failure.error is LikeException.Expired) { "failed with ${failure.error}" }
                        val rolledBack = rec.awaitChange { !it.pending }.view
                        expectEqual(false to 0L, rolledBack.liked to rolledBack.count, "(liked, count) rolled back")
                        idle(c)
                        val sent = server.requests(RequestFilter(route = FaultRoute.LIKE, post = post)).size
                        Thread.sleep(300)
                        expectEqual(sent, server.requests(RequestFilter(route = FaultRoute.LIKE, post = post)).size, "likes sent after it expired")
                        expectEqual(1, rec.failures.size, "failures heard")
                    }
                }
            }
        } finally {
            server.admin.clearFaults()
        }
    }
}
