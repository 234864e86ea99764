// Shared by the Kotlin test program and the Kotlin bench: the server's
// admin API, a recording observer, token providers and a tiny harness.
package com.likekit.tests

import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.TokenProvider
import java.net.URI
import java.net.URLEncoder
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.nio.charset.StandardCharsets
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/** The reference server's admin API (`X-Admin-Key`), for test fixtures and faults. */
class Admin(val url: String, private val key: String) {
    private val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
    private val ids = AtomicLong(1000)

    /** A fresh id, unique within this run, for a user or a post. */
    fun nextId(): Long = ids.incrementAndGet()

    fun call(method: String, path: String, body: String? = null): String {
        val request = HttpRequest.newBuilder(URI.create(url + path))
            .header("X-Admin-Key", key)
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(10))
            .method(method, if (body == null) HttpRequest.BodyPublishers.noBody() else HttpRequest.BodyPublishers.ofString(body))
            .build()
        val response = http.send(request, HttpResponse.BodyHandlers.ofString())
        check(response.statusCode() in 200..299) { "$method $path answered ${response.statusCode()}: ${response.body()}" }
        return response.body()
    }

    fun user(name: String, friends: List<Long> = emptyList()): Long {
        val id = nextId()
        call("POST", "/admin/users", """{"id": $id, "name": "$name"}""")
        if (friends.isNotEmpty()) call("PUT", "/admin/users/$id/friends", """{"friends": ${friends.joinToString(",", "[", "]")}}""")
        return id
    }

    fun post(id: Long = nextId()): Long {
        call("POST", "/admin/posts", """{"id": $id}""")
        return id
    }

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

    fun token(userId: Long): String {
        val body = call("POST", "/admin/tokens", """{"user_id": $userId, "ttl_secs": 3600}""")
        return Regex("\"token\"\\s*:\\s*\"([^\"]+)\"").find(body)?.groupValues?.get(1)
            ?: error("no token in $body")
    }

    /** Replaces the fault rules; each rule is a JSON object. */
    fun faults(vararg rules: String) {
        call("PUT", "/admin/faults", """{"rules": [${rules.joinToString(",")}]}""")
    }

    fun clearFaults() {
        call("DELETE", "/admin/faults")
    }

    /**
     * The request journal's entries, oldest first, that match every filter
     * given: `"route" to "like"`, `"method" to "POST"`, `"post" to id`,
     * `"user" to id`, `"since" to seq`. Fails when the journal let older
     * entries go: a missing call would then prove nothing.
     */
    fun requests(vararg filters: Pair<String, Any>): List<JournalEntry> {
        val query = filters.joinToString("&") { (name, value) ->
            "$name=${URLEncoder.encode(value.toString(), StandardCharsets.UTF_8)}"
        }
        val body = call("GET", if (query.isEmpty()) "/admin/requests" else "/admin/requests?$query")
        val dropped = jsonField(body, "dropped")
        check(dropped == "0") { "the journal let go of $dropped entries" }
        // The entries are flat objects: every {…} without braces inside is one.
        return Regex("\\{[^{}]*\\}")
            .findAll(body.substringAfter("\"entries\""))
            .map { JournalEntry.parse(it.value) }
            .toList()
    }

    fun clearRequests() {
        call("DELETE", "/admin/requests")
    }

    /** (liked_by_me, count) of `post` as the server has it for `userId`. */
    fun likesOf(post: Long, userId: Long): Pair<Boolean, Long> {
        val (status, body) = asViewer("GET", "/posts/$post/likes", token(userId))
        check(status == 200) { "GET /posts/$post/likes answered $status: $body" }
        return (jsonField(body, "liked_by_me") == "true") to jsonField(body, "count")!!.toLong()
    }

    companion object {
        fun fromEnv(): Admin = Admin(
            System.getenv("LIKEKIT_URL") ?: error("LIKEKIT_URL is not set (run through `cargo xtask test --only kotlin`)"),
            System.getenv("LIKEKIT_ADMIN_KEY") ?: error("LIKEKIT_ADMIN_KEY is not set"),
        )
    }
}

/**
 * The raw value of `name` in a JSON object without nesting: a number,
 * `true`/`false`, a string with its quotes taken off, an array's text, or
 * `null` for JSON null and for a missing field.
 */
fun jsonField(json: String, name: String): String? {
    val value = Regex("\"$name\"\\s*:\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|\\[[^\\]]*\\]|[^,}\\s]+)")
        .find(json)?.groupValues?.get(1) ?: return null
    return when {
        value == "null" -> null
        value.startsWith("\"") -> value.substring(1, value.length - 1)
        else -> value
    }
}

/** One request to a public route, as the server's request journal has it. */
data class JournalEntry(
    val seq: Long,
    val atMs: Long,
    val durationMs: Long,
    val method: String,
    val route: String,
    val path: String,
    val posts: List<Long>,
    /** The signed-in user, when the token was valid. */
    val user: Long?,
    /** The answer's status; null when the connection was cut. */
    val status: Int?,
    /** `applied`, `unchanged`, `refused`, or null (a read, or refused before the handler). */
    val write: String?,
    val faultRule: Int?,
    val faultPhase: String?,
    val fault: String?,
) {
    companion object {
        fun parse(json: String): JournalEntry {
            fun field(name: String) = jsonField(json, name)
            fun number(name: String) = field(name)?.toLong() ?: error("no $name in $json")
            return JournalEntry(
                seq = number("seq"),
                atMs = number("at_ms"),
                durationMs = number("duration_ms"),
                method = field("method") ?: error("no method in $json"),
                route = field("route") ?: error("no route in $json"),
                path = field("path") ?: error("no path in $json"),
                posts = field("posts")!!.trim('[', ']').split(',').filter { it.isNotBlank() }.map { it.trim().toLong() },
                user = field("user")?.toLong(),
                status = field("status")?.toInt(),
                write = field("write"),
                faultRule = field("fault_rule")?.toInt(),
                faultPhase = field("fault_phase"),
                fault = field("fault"),
            )
        }
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

fun expect(condition: Boolean, message: () -> String) {
    if (!condition) throw AssertionError(message())
}

fun <T> expectEqual(expected: T, actual: T, what: String) {
    if (expected != actual) throw AssertionError("$what: expected $expected, got $actual")
}
