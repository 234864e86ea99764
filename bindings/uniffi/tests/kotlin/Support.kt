// Shared by the Kotlin test program and the Kotlin bench: the server under
// test with fixtures made through its admin client, a recording observer,
// token providers, a JSON reader for public answers and a tiny harness.
package com.likekit.tests

import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.TokenProvider
import com.likekit.liveObjects
import com.likekit.testing.JournalEntry
import com.likekit.testing.LikeKitAdmin
import com.likekit.testing.RequestFilter
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/**
 * The reference server under test: its admin client ([admin]), and users,
 * posts and tokens made through it with ids fresh within this run.
 */
class TestServer(val url: String, val adminKey: String) {
    /** The server's admin API. */
    val admin = LikeKitAdmin(url, adminKey, timeoutMs = 10_000)
    private val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
    private val ids = AtomicLong(1000)

    /** A fresh id, unique within this run, for a user or a post. */
    fun nextId(): Long = ids.incrementAndGet()

    /** A new user named `name` whose own friends are `friends`. */
    fun user(name: String, friends: List<Long> = emptyList()): Long {
        val id = nextId()
        admin.createUser(id, name)
        if (friends.isNotEmpty()) admin.setFriends(id, friends)
        return id
    }

    /** The post `id` (a fresh one by default), created if it was not there. */
    fun post(id: Long = nextId()): Long {
        admin.createPost(id)
        return id
    }

    /** A sign-in token for `userId`, valid for an hour. */
    fun token(userId: Long): String = admin.mintToken(userId)

    /** Status and body of a request to the public API as a signed-in viewer. */
    fun asViewer(method: String, path: String, token: String): Pair<Int, String> {
        val request = HttpRequest.newBuilder(URI.create(url + path))
            .header("Authorization", "Bearer $token")
            .timeout(Duration.ofSeconds(10))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build()
        val response = http.send(request, HttpResponse.BodyHandlers.ofString())
        return response.statusCode() to response.body()
    }

    /**
     * The request journal's entries, oldest first, that `filter` selects.
     * Fails when the journal let older entries go: a missing call would then
     * prove nothing.
     */
    fun requests(filter: RequestFilter): List<JournalEntry> {
        val journal = admin.requests(filter)
        expectEqual(0L, journal.dropped, "entries the journal let go")
        return journal.entries
    }

    /** (liked_by_me, count) of `post` as the server has it for `userId`. */
    fun likesOf(post: Long, userId: Long): Pair<Boolean, Long> {
        val (status, body) = asViewer("GET", "/posts/$post/likes", token(userId))
        check(status == 200) { "GET /posts/$post/likes answered $status: $body" }
        val likes = TestJson.parse(body) as Map<*, *>
        return (likes["liked_by_me"] as Boolean) to (likes["count"] as Long)
    }

    companion object {
        fun fromEnv(): TestServer = TestServer(
            System.getenv("LIKEKIT_URL") ?: error("LIKEKIT_URL is not set (run through `cargo xtask test --only kotlin`)"),
            System.getenv("LIKEKIT_ADMIN_KEY") ?: error("LIKEKIT_ADMIN_KEY is not set"),
        )
    }
}

/**
 * JSON for the tests' own reading, apart from the admin client's: the
 * public API's answers and `/openapi.json`. Objects are maps (in the order
 * written), arrays lists, integers `Long` (or `ULong` above its range),
 * other numbers `Double`.
 */
object TestJson {
    fun parse(text: String): Any? {
        var at = 0
        fun fail(what: String): Nothing = throw IllegalArgumentException("not JSON: $what at $at in ${text.take(200)}")
        fun space() {
            while (at < text.length && text[at] in " \t\r\n") at++
        }
        fun eat(c: Char) {
            space()
            if (at >= text.length || text[at] != c) fail("expected '$c'")
            at++
        }
        fun string(): String {
            eat('"')
            val out = StringBuilder()
            while (true) {
                if (at >= text.length) fail("unterminated string")
                when (val c = text[at++]) {
                    '"' -> return out.toString()
                    '\\' -> when (val e = text[at++]) {
                        'u' -> out.append(text.substring(at, at + 4).toInt(16).toChar()).also { at += 4 }
                        'n' -> out.append('\n')
                        't' -> out.append('\t')
                        'r' -> out.append('\r')
                        'b' -> out.append('\b')
                        'f' -> out.append('\u000C')
                        '"', '\\', '/' -> out.append(e)
                        else -> fail("bad escape \\$e")
                    }
                    else -> out.append(c)
                }
            }
        }
        fun value(): Any? {
            space()
            if (at >= text.length) fail("no value")
            return when (text[at]) {
                '{' -> {
                    at++
                    val map = LinkedHashMap<String, Any?>()
                    space()
                    if (text[at] == '}') at++ else while (true) {
                        val key = string()
                        eat(':')
                        map[key] = value()
                        space()
                        if (text[at++] == '}') break else if (text[at - 1] != ',') fail("expected ',' or '}'")
                    }
                    map
                }
                '[' -> {
                    at++
                    val list = ArrayList<Any?>()
                    space()
                    if (text[at] == ']') at++ else while (true) {
                        list.add(value())
                        space()
                        if (text[at++] == ']') break else if (text[at - 1] != ',') fail("expected ',' or ']'")
                    }
                    list
                }
                '"' -> string()
                else -> {
                    val start = at
                    while (at < text.length && text[at] !in ",]} \t\r\n") at++
                    when (val word = text.substring(start, at)) {
                        "true" -> true
                        "false" -> false
                        "null" -> null
                        else -> word.toLongOrNull() ?: word.toULongOrNull() ?: word.toDoubleOrNull() ?: fail("bad literal $word")
                    }
                }
            }
        }
        val result = value()
        space()
        if (at != text.length) fail("text after the value")
        return result
    }

    fun write(value: Any?): String = when (value) {
        null -> "null"
        is String -> buildString {
            append('"')
            for (c in value) {
                when {
                    c == '"' || c == '\\' -> append('\\').append(c)
                    c < ' ' -> append("\\u%04x".format(c.code))
                    else -> append(c)
                }
            }
            append('"')
        }
        is Map<*, *> -> value.entries.joinToString(",", "{", "}") { (k, v) -> write(k as String) + ":" + write(v) }
        is List<*> -> value.joinToString(",", "[", "]") { write(it) }
        else -> value.toString()
    }
}

/** Always the same token, as an app with a signed-in user would give. */
class FixedToken(private val token: String) : TokenProvider {
    override fun token(refresh: Boolean): String? = if (refresh) null else token
}

/** Records every event with the thread it arrived on. */
class Recorder : LikeObserver {
    data class Change(val view: PostView, val thread: String, val atNanos: Long)
    data class Failure(val postId: Long, val wanted: Boolean, val error: LikeException, val thread: String)

    val changes = CopyOnWriteArrayList<Change>()
    val failures = CopyOnWriteArrayList<Failure>()
    private val lock = ReentrantLock()
    private val arrived = lock.newCondition()

    override fun onChange(view: PostView) {
        changes.add(Change(view, Thread.currentThread().name, System.nanoTime()))
        lock.withLock { arrived.signalAll() }
    }

    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {
        failures.add(Failure(postId, wanted, error, Thread.currentThread().name))
        lock.withLock { arrived.signalAll() }
    }

    private fun <T> await(timeoutMs: Long, what: () -> String, find: () -> T?): T {
        val deadline = System.currentTimeMillis() + timeoutMs
        lock.withLock {
            while (true) {
                find()?.let { return it }
                val left = deadline - System.currentTimeMillis()
                check(left > 0) { "${what()} within $timeoutMs ms; saw changes ${changes.map { it.view }}" }
                arrived.await(left, TimeUnit.MILLISECONDS)
            }
        }
    }

    /** The first change that matches, waiting up to `timeoutMs` for it. */
    fun awaitChange(timeoutMs: Long = 5000, matches: (PostView) -> Boolean): Change =
        await(timeoutMs, { "no matching change" }) { changes.firstOrNull { matches(it.view) } }

    /** The first failure, waiting up to `timeoutMs` for it. */
    fun awaitFailure(timeoutMs: Long = 5000): Failure =
        await(timeoutMs, { "no failure" }) { failures.firstOrNull() }
}

/** Counts passes and failures; each test is a named block. */
class Harness(private val suite: String) {
    var passed = 0
        private set
    var failed = 0
        private set

    fun test(name: String, body: () -> Unit) {
        val started = System.nanoTime()
        try {
            body()
            passed++
            println("PASS $name (${(System.nanoTime() - started) / 1_000_000} ms)")
        } catch (t: Throwable) {
            failed++
            println("FAIL $name: $t")
            t.printStackTrace(System.out)
        }
    }

    /** The closing line the runner reads: `kotlin: N passed, N failed`. */
    fun summary(): String = "$suite: $passed passed, $failed failed"
}

/**
 * [liveObjects] once what earlier tests let go has been released: a closed
 * client releases what it held when its background work ends, moments
 * after `close()`, and an object an earlier test left to the collector
 * (a subscription, a scripted server) only when a collection finds it, so
 * a count read at once may still include them, and a baseline taken then
 * is never reached again once they go. Asks for collections and waits up
 * to ten seconds for the count to reach zero, then returns it as it is.
 */
fun settledLiveObjects(): Long {
    val deadline = System.currentTimeMillis() + 10_000
    while (liveObjects() != 0L && System.currentTimeMillis() < deadline) {
        System.gc()
        Thread.sleep(10)
    }
    return liveObjects()
}

fun expect(condition: Boolean, message: () -> String) {
    if (!condition) throw AssertionError(message())
}

fun <T> expectEqual(expected: T, actual: T, what: String) {
    if (expected != actual) throw AssertionError("$what: expected $expected, got $actual")
}
