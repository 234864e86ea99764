// The mock server's admin API (`/admin/...`, on only when the server runs
// with `--admin-key`) for Kotlin tests, on the JVM and on Android: a typed
// client over java.net.HttpURLConnection and the Kotlin standard library,
// following the operations and bodies of the server's `/openapi.json`.
package com.likekit.testing

import java.io.IOException
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.Proxy
import java.net.URI
import java.net.URLEncoder

/**
 * A client for one mock server's admin API, sending its key in `X-Admin-Key`.
 *
 * Every call blocks until the server answers: on Android call it off the
 * main thread, e.g. `withContext(Dispatchers.IO) { admin.createPost(42) }`,
 * and allow cleartext HTTP to the server in the app's network security
 * config. One client may be shared between threads. Proxies are not used.
 *
 * ```
 * val admin = LikeKitAdmin("http://127.0.0.1:8080", "dev")
 * admin.createUser(7, "Ana")
 * admin.createPost(42)
 * val token = admin.mintToken(7)
 * // The like of post 42 is saved, then its answer is lost.
 * admin.setFaults(FaultRules(listOf(
 *     FaultRule(FaultRoute.LIKE, post = 42, nth = 1, phase = FaultPhase.AFTER, action = FaultAction.Drop),
 * )))
 * // … the app under test likes post 42 with `token` …
 * check(admin.getPost(42).count == 1L) // retried, and counted once
 * ```
 *
 * Tests that share one server add their own rules, tagged, and remove them
 * by tag, leaving other tests' rules and their counters as they are:
 *
 * ```
 * admin.addFaults(listOf(FaultRule(FaultRoute.LIKE, user = 7, post = 42, failNext = 1, tag = "checkout-7")))
 * // … the test …
 * val mine = admin.getFaults(tag = "checkout-7") // its rules, with what each used up
 * val faulted = admin.requests(RequestFilter(faultTag = "checkout-7")).entries // what they did
 * admin.clearFaults(tag = "checkout-7")
 * admin.clearRequests(RequestFilter(user = 7))
 * ```
 *
 * A test that cannot wait for the app itself (a UI test driving another process) waits on the
 * server until the app's requests are there and answered:
 *
 * ```
 * // … the app under test likes post 42 …
 * val journal = admin.waitForRequests(RequestFilter(route = FaultRoute.LIKE, post = 42), count = 1, timeoutMs = 10_000)
 * check(journal.met == true) { "no answered like within 10 s: ${journal.entries}" }
 * ```
 *
 * Answers are read tolerantly: a field this client does not know (one a newer server added) is
 * ignored, while a field of the wrong type or a required one missing is the error `unreadable`.
 * A [Seed], which a test writes, is read as strictly as the server reads it: an unknown field is refused.
 *
 * @param baseUrl the server's `http://` or `https://` address, with or without a trailing slash.
 * @param adminKey the server's `--admin-key`.
 * @param timeoutMs the connect timeout, and the longest wait for each read of the answer.
 * @throws IllegalArgumentException for a base URL that is not http(s) or a timeout below 1.
 */
class LikeKitAdmin(baseUrl: String, private val adminKey: String, private val timeoutMs: Int = 30_000) {
    /** The server's address without a trailing slash. */
    val baseUrl: String = baseUrl.trimEnd('/')

    init {
        require(this.baseUrl.startsWith("http://") || this.baseUrl.startsWith("https://")) {
            "the base URL must start with http:// or https://: $baseUrl"
        }
        URI(this.baseUrl) // refuses a malformed address now rather than at the first call
        require(timeoutMs > 0) { "the timeout must be at least 1 ms, not $timeoutMs" }
    }

    /** One admin operation: its HTTP method and path template (`/admin/users/{id}/friends`). */
    data class Operation(val method: String, val path: String)

    companion object {
        /**
         * Every admin operation by its OpenAPI `operationId`. Each call takes its
         * method and path from here.
         */
        val OPERATIONS: Map<String, Operation> = linkedMapOf(
            "create_user" to Operation("POST", "/admin/users"),
            "get_user" to Operation("GET", "/admin/users/{id}"),
            "create_post" to Operation("POST", "/admin/posts"),
            "get_post" to Operation("GET", "/admin/posts/{id}"),
            "set_friends" to Operation("PUT", "/admin/users/{id}/friends"),
            "mint_token" to Operation("POST", "/admin/tokens"),
            "set_faults" to Operation("PUT", "/admin/faults"),
            "add_faults" to Operation("POST", "/admin/faults"),
            "get_faults" to Operation("GET", "/admin/faults"),
            "clear_faults" to Operation("DELETE", "/admin/faults"),
            "requests" to Operation("GET", "/admin/requests"),
            "clear_requests" to Operation("DELETE", "/admin/requests"),
            "reset" to Operation("POST", "/admin/reset"),
            "seed" to Operation("POST", "/admin/seed"),
        )

        private val PATH_PARAM = Regex("\\{([A-Za-z_][A-Za-z0-9_]*)\\}")
    }

    /**
     * `POST /admin/users`: creates user `id` named `name`, or renames it.
     *
     * @return [Created.NEW] when it did not exist (201), [Created.EXISTED] when it did (200).
     * @throws LikeKitAdminException `bad_name` for a blank or too long name, and any other failure.
     */
    fun createUser(id: Long, name: String): Created =
        call("create_user", body = linkedMapOf("id" to id, "name" to name)).created("NewUser") { f ->
            jsonId(f.req("id"), f.where("id"))
            jsonString(f.req("name"), f.where("name"))
        }

    /**
     * `POST /admin/posts`: creates post `id`; an existing one is left as it is.
     *
     * @return [Created.NEW] when it did not exist (201), [Created.EXISTED] when it did (200).
     * @throws LikeKitAdminException on any failure.
     */
    fun createPost(id: Long): Created =
        call("create_post", body = linkedMapOf("id" to id)).created("NewPost") { f -> jsonId(f.req("id"), f.where("id")) }

    /**
     * `GET /admin/users/{id}`: user `id` as stored, with its own (directed)
     * friend list in ascending order of id.
     *
     * @throws LikeKitAdminException `user_not_found` for a user that does not exist, and any other failure.
     */
    fun getUser(id: Long): StoredUser =
        call("get_user", mapOf("id" to id.toString())).decode("StoredUser", StoredUser::fromJsonValue)

    /**
     * `GET /admin/posts/{id}`: post `id` as stored (count, version, most
     * recent likers newest first), read past the server's view cache: a
     * count checked here right after a client's call is the committed one.
     *
     * ```
     * admin.getPost(42).count // 1: the like was counted once
     * ```
     *
     * @throws LikeKitAdminException `post_not_found` for a post that does not exist, and any other failure.
     */
    fun getPost(id: Long): StoredPost =
        call("get_post", mapOf("id" to id.toString())).decode("StoredPost", StoredPost::fromJsonValue)

    /**
     * `PUT /admin/users/{id}/friends`: replaces `user`'s own (directed) friend list.
     *
     * @throws LikeKitAdminException `user_not_found` (the user or a friend), `too_many_friends`.
     */
    fun setFriends(user: Long, friends: List<Long>) {
        call("set_friends", mapOf("id" to user.toString()), body = linkedMapOf("friends" to friends))
            .decode("Friends") { jsonIds(JsonFields.of(it, "Friends").req("friends"), "Friends.friends") }
    }

    /**
     * `POST /admin/tokens`: a sign-in token (`Authorization: Bearer …`) for `user`,
     * valid for `ttlSecs` seconds (1 to one year) from `validFromSecs` seconds from now
     * (a year either way; default now). Below zero the token was issued then:
     * `mintToken(user, validFromSecs = -7200)` expired an hour ago, for a test of a
     * client's token renewal with no wait; above zero it is refused (`invalid_token`)
     * until then.
     *
     * @throws LikeKitAdminException `bad_ttl` for a lifetime out of range, `bad_valid_from`
     *   for a start out of range, and any other failure.
     */
    fun mintToken(user: Long, ttlSecs: Long = 3600, validFromSecs: Long = 0): String {
        val answer = call(
            "mint_token",
            body = linkedMapOf("user_id" to user, "ttl_secs" to ttlSecs, "valid_from_secs" to validFromSecs),
        )
        return answer.decode("the token answer") { jsonString(JsonFields.of(it, "TokenResponse").req("token"), "TokenResponse.token") }
    }

    /**
     * `PUT /admin/faults`: replaces every fault rule. Every rule's counters
     * start over, other tests' too: tests that share a server use [addFaults].
     *
     * @return the rules now in force, with the seed their draws come from (the one given, or one the server picked).
     * @throws LikeKitAdminException `bad_fault_rules` for a rule out of range, and any other failure.
     */
    fun setFaults(rules: FaultRules): FaultRules =
        call("set_faults", body = rules.toJsonValue()).decode("FaultRules", FaultRules::fromJsonValue)

    /**
     * `PUT /admin/faults`: replaces every fault rule with `rules`, drawn from
     * `seed` (null: the server picks one and reports it), as
     * `setFaults(FaultRules(rules, seed))` does.
     *
     * ```
     * admin.setFaults(listOf(FaultRule(FaultRoute.ALL, latencyMs = 2_000)))
     * ```
     *
     * @return the rules now in force, with their seed.
     * @throws LikeKitAdminException `bad_fault_rules` for a rule out of range, and any other failure.
     */
    fun setFaults(rules: List<FaultRule>, seed: ULong? = null): FaultRules = setFaults(FaultRules(rules, seed))

    /**
     * `POST /admin/faults`: adds `rules` after the rules in force, which keep
     * their counters and the seed. Tag them ([FaultRule.tag]) to remove them
     * with `clearFaults(tag = …)`.
     *
     * @return every rule now in force, `rules` last, with the seed and what each has used up.
     * @throws LikeKitAdminException `bad_fault_rules` for a rule out of range; `too_many_rules` (409)
     *   when the rules in force and `rules` would be more than 256 (nothing is added then); any other failure.
     */
    fun addFaults(rules: List<FaultRule>): FaultRules =
        call("add_faults", body = linkedMapOf("rules" to rules.map { it.toJsonValue() }))
            .decode("FaultRules", FaultRules::fromJsonValue)

    /**
     * `GET /admin/faults`: every fault rule in force, their seed, and what
     * each has used up ([FaultRules.state]). The answer can be given back to
     * [setFaults] as it is: the server ignores its state and starts the
     * counters over. A test sharing the server reads its own rules with
     * `getFaults(tag = …)`.
     *
     * @throws LikeKitAdminException on any failure.
     */
    fun getFaults(): FaultRules = call("get_faults").decode("FaultRules", FaultRules::fromJsonValue)

    /**
     * `GET /admin/faults?tag=…`: only the rules tagged `tag` and their state,
     * in their order (none when no rule has it), with the seed. `tag` is a
     * `String`, never null: a tag the test left unset is a compile error, not
     * a read of every test's rules.
     *
     * @throws LikeKitAdminException `bad_query` for a tag that is not 1 to 64 visible ASCII
     *   characters, and any other failure.
     */
    fun getFaults(tag: String): FaultRules =
        call("get_faults", query = tagQuery(tag)).decode("FaultRules", FaultRules::fromJsonValue)

    /**
     * `DELETE /admin/faults`: removes every fault rule, other tests' too, and
     * the seed. A test sharing the server removes its own with
     * `clearFaults(tag = …)`.
     *
     * @return the rules left in force: none.
     * @throws LikeKitAdminException on any failure.
     */
    fun clearFaults(): FaultRules = call("clear_faults").decode("FaultRules", FaultRules::fromJsonValue)

    /**
     * `DELETE /admin/faults?tag=…`: removes only the rules tagged `tag`, none
     * when no rule has it; the others keep their counters and the seed. `tag`
     * is a `String`, never null: a tag the test left unset is a compile error,
     * not the removal of every test's rules.
     *
     * @return the rules left in force.
     * @throws LikeKitAdminException `bad_query` for a tag that is not 1 to 64 visible ASCII
     *   characters, and any other failure.
     */
    fun clearFaults(tag: String): FaultRules =
        call("clear_faults", query = tagQuery(tag)).decode("FaultRules", FaultRules::fromJsonValue)

    /** `?tag=…` of `/admin/faults`. */
    private fun tagQuery(tag: String): String = "?tag=${URLEncoder.encode(tag, "UTF-8")}"

    /**
     * `GET /admin/requests`: the request journal's entries that `filter` selects, oldest first.
     * `RequestFilter(faultTag = "checkout-7")` is what the rules tagged `checkout-7` did.
     * [waitForRequests] waits on the server until the requests are there and answered.
     *
     * @throws LikeKitAdminException `bad_query` for a filter the server refuses (a `faultTag`
     *   that is not 1 to 64 visible ASCII characters, say), and any other failure.
     */
    fun requests(filter: RequestFilter = RequestFilter()): Journal =
        call("requests", query = filter.toQuery()).decode("Journal", Journal::fromJsonValue)

    /**
     * `GET /admin/requests?wait_for=…&timeout_ms=…`: the server holds the answer until at least
     * `count` entries match `filter` and none of them is in flight ([Journal.met] is then `true`),
     * or until `timeoutMs` has passed (`false`, with the entries there were then). For a test that
     * cannot wait for the client itself, such as a UI test driving an app in another process.
     * [Journal.met] is also `false` at once for a `count` above the journal's capacity, and when the
     * server begins stopping. The call waits for its answer `timeoutMs` longer than the client's
     * own timeout.
     *
     * ```
     * val journal = admin.waitForRequests(RequestFilter(user = 7), count = 2, timeoutMs = 10_000)
     * check(journal.met == true) // Ana's two requests, answered
     * ```
     *
     * @param timeoutMs how long the server waits at most: 5,000 by default, at most 60,000.
     * @throws LikeKitAdminException `bad_query` for a `count` below 1 or a `timeoutMs` out of
     *   range; `journal_off` (409) from a server that keeps no journal; any other failure.
     */
    fun waitForRequests(filter: RequestFilter, count: Long, timeoutMs: Long = 5_000): Journal {
        val query = filter.toQuery().let { if (it.isEmpty()) "?" else "$it&" } + "wait_for=$count&timeout_ms=$timeoutMs"
        val readTimeoutMs = (this.timeoutMs + timeoutMs.coerceAtLeast(0)).coerceAtMost(Int.MAX_VALUE.toLong()).toInt()
        return call("requests", query = query, readTimeoutMs = readTimeoutMs).decode("Journal", Journal::fromJsonValue)
    }

    /**
     * `DELETE /admin/requests`: removes the request journal's entries that
     * `filter` selects (the filters of [requests]), so a test sharing the
     * server removes only its own (`RequestFilter(user = 7)`, or
     * `RequestFilter(faultTag = "checkout-7")` for what its tagged rules
     * acted on); without a filter, empties the journal for every test.
     * `seq` goes on counting.
     *
     * @throws LikeKitAdminException `bad_query` for a filter the server refuses, and any other failure.
     */
    fun clearRequests(filter: RequestFilter = RequestFilter()) {
        call("clear_requests", query = filter.toQuery()).decode("the acknowledgement", ::ack)
    }

    /**
     * `POST /admin/reset`: drops every like; users, friends and posts stay.
     *
     * @throws LikeKitAdminException on any failure.
     */
    fun reset() {
        call("reset").decode("the acknowledgement", ::ack)
    }

    /**
     * `POST /admin/seed`: loads users, friends, posts and likers (idempotent): users are created or
     * renamed and their friend lists replaced; posts are created and their likers added (a liker
     * need not be a user).
     *
     * @throws LikeKitAdminException `user_not_found` (404) for a friend that is not a user; `bad_name`,
     *   `too_many_friends`, `bad_user_id`, `bad_post_id` or `bad_json` (400) for a document the server
     *   refuses (nothing is loaded then); any other failure.
     */
    fun seed(seed: Seed) {
        call("seed", body = seed.toJsonValue()).decode("the acknowledgement", ::ack)
    }

    // ------------------------------------------------------------ the wire

    private class Answer(val operationId: String, val status: Int, val text: String) {
        /** The answer's body as `T`; an answer that is not one is the error `unreadable`. */
        fun <T> decode(what: String, read: (Any?) -> T): T = try {
            read(Json.parse(text))
        } catch (e: JsonException) {
            throw LikeKitAdminException(status, "unreadable", "$operationId answered $what that cannot be read (${e.message}): $text", e)
        }

        /** What a create did, once its answer (`type`, the body sent back) is checked by `check`. */
        fun created(type: String, check: (JsonFields) -> Unit): Created {
            decode(type) { check(JsonFields.of(it, type)) }
            return Created.of(status)
        }
    }

    private fun ack(value: Any?) {
        if (JsonFields.of(value, "Ack").opt("ok") != true) throw JsonException("Ack.ok is not true")
    }

    /**
     * Sends operation `operationId` with its path parameters, query (`?…` or
     * empty) and JSON body, and returns a 2xx answer; anything else is a
     * [LikeKitAdminException]. `readTimeoutMs` is the longest wait for each
     * read of the answer (the client's timeout unless a wait needs longer).
     */
    private fun call(
        operationId: String,
        pathParams: Map<String, String> = emptyMap(),
        query: String = "",
        body: Any? = null,
        readTimeoutMs: Int = timeoutMs,
    ): Answer {
        val operation = OPERATIONS[operationId] ?: error("no operation $operationId")
        val path = PATH_PARAM.replace(operation.path) { match ->
            val name = match.groupValues[1]
            val value = pathParams[name] ?: error("$operationId needs the path parameter $name")
            URLEncoder.encode(value, "UTF-8")
        }
        val (status, text, location) = exchange(operation.method, path + query, body?.let(Json::write), readTimeoutMs)
        if (status in 300..399) {
            // Never followed (`instanceFollowRedirects = false`): the admin API has no
            // redirects, and the admin key goes to no other address.
            val leads = location?.let { "redirected to $it" } ?: "redirected"
            throw LikeKitAdminException(
                status,
                "unreadable",
                "${operation.method} $path was $leads, which is not followed (the admin API has no redirects, " +
                    "and the admin key goes to no other address): if the server is there, give that address as the URL",
            )
        }
        if (status !in 200..299) throw LikeKitAdminException.fromAnswer(status, text)
        return Answer(operationId, status, text)
    }

    /** One request and its answer's (status, body, `Location`). */
    private fun exchange(method: String, pathAndQuery: String, body: String?, readTimeoutMs: Int): Triple<Int, String, String?> {
        val connection = try {
            URI(baseUrl + pathAndQuery).toURL().openConnection(Proxy.NO_PROXY) as HttpURLConnection
        } catch (e: IOException) {
            throw LikeKitAdminException(null, "no_answer", "$method $pathAndQuery: ${e.message ?: e}", e)
        }
        try {
            connection.requestMethod = method
            connection.connectTimeout = timeoutMs
            connection.readTimeout = readTimeoutMs
            connection.useCaches = false
            connection.instanceFollowRedirects = false
            connection.setRequestProperty("X-Admin-Key", adminKey)
            connection.setRequestProperty("Accept", "application/json")
            if (body != null) {
                // Buffered, never streamed (`setFixedLengthStreamingMode`): in streaming
                // mode HttpURLConnection meets a 401 by dropping the connection, and the
                // server's error body (`bad_admin_key` and its message) would be lost.
                connection.doOutput = true
                connection.setRequestProperty("Content-Type", "application/json")
                connection.outputStream.use { it.write(body.toByteArray(Charsets.UTF_8)) }
            }
            val status = connection.responseCode
            val stream: InputStream? = if (status >= 400) connection.errorStream else connection.inputStream
            val text = stream?.use { String(it.readBytes(), Charsets.UTF_8) } ?: ""
            return Triple(status, text, connection.getHeaderField("Location"))
        } catch (e: IOException) {
            connection.disconnect()
            throw LikeKitAdminException(null, "no_answer", "$method $pathAndQuery: ${e.message ?: e}", e)
        }
    }
}

/**
 * An admin call that failed.
 *
 * @property status the HTTP status the server answered; null when no answer came
 *   (connection refused, timeout; `code` is then `no_answer`).
 * @property code the server's error code (`bad_name`, `bad_admin_key`, …), or `unreadable`
 *   when the answer was not the error body (`message` is then its text) or not the value expected.
 * @property message what went wrong, as the server put it.
 */
class LikeKitAdminException(
    val status: Int?,
    val code: String,
    override val message: String,
    cause: Throwable? = null,
) : RuntimeException(message, cause) {
    override fun toString(): String =
        "LikeKitAdminException(${status ?: "no answer"}, $code): $message"

    internal companion object {
        /** The error a non-2xx answer carries in `{"error": {"code", "message"}}`. */
        fun fromAnswer(status: Int, text: String): LikeKitAdminException {
            val error = try {
                val detail = JsonFields.of(JsonFields.of(Json.parse(text), "ErrorBody").req("error"), "ErrorDetail")
                jsonString(detail.req("code"), "code") to jsonString(detail.req("message"), "message")
            } catch (_: JsonException) {
                null
            }
            return if (error != null) {
                LikeKitAdminException(status, error.first, error.second)
            } else {
                LikeKitAdminException(status, "unreadable", text)
            }
        }
    }
}

/**
 * What `requests` selects from the journal (and `clearRequests` removes); each filter given must match.
 * A field left null filters nothing: `RequestFilter(user = id)` with a null `id` selects every
 * user's entries, and `clearRequests` with it removes them all, so build a filter from values
 * the test has.
 *
 * @property route only requests to this route ([FaultRoute.ALL]: every route).
 * @property method only requests with this method.
 * @property post only requests naming this post.
 * @property user only requests signed in as this user.
 * @property since only entries whose `seq` is larger.
 * @property requestId only the request whose answer carried this `X-Request-Id`.
 * @property faultTag only the entries whose `faultTag` is this: the requests a rule with this
 *   tag acted on (or delayed), so a test sharing the server reads or removes what its own tagged
 *   rules did (1 to 64 visible ASCII characters; another is `bad_query`). `fault_tag` on the wire.
 */
data class RequestFilter(
    val route: FaultRoute? = null,
    val method: FaultMethod? = null,
    val post: Long? = null,
    val user: Long? = null,
    val since: Long? = null,
    val requestId: String? = null,
    val faultTag: String? = null,
) {
    /** `?route=like&post=42`, or empty when nothing is filtered. */
    internal fun toQuery(): String {
        val pairs = listOfNotNull(
            route?.let { "route" to it.wire },
            method?.let { "method" to it.wire },
            post?.let { "post" to it.toString() },
            user?.let { "user" to it.toString() },
            since?.let { "since" to it.toString() },
            requestId?.let { "request_id" to it },
            faultTag?.let { "fault_tag" to it },
        )
        if (pairs.isEmpty()) return ""
        return pairs.joinToString("&", prefix = "?") { (name, value) -> "$name=${URLEncoder.encode(value, "UTF-8")}" }
    }
}

// ------------------------------------------------------------ enums

/** An enum whose values have a name on the wire. */
interface WireName {
    /** The value's name in JSON. */
    val wire: String
}

/** The value of `E` named `wire`; [IllegalArgumentException] for any other name. */
internal inline fun <reified E> wireEnum(wire: String, what: String, kind: String): E
    where E : Enum<E>, E : WireName =
    enumValues<E>().firstOrNull { it.wire == wire } ?: throw JsonException("$what: unknown $kind \"$wire\"")

/** What [LikeKitAdmin.createUser] and [LikeKitAdmin.createPost] did. */
enum class Created {
    /** 201: it did not exist. */
    NEW,

    /** 200: it existed (a user is renamed; a post is left as it is). */
    EXISTED,
    ;

    internal companion object {
        fun of(status: Int): Created = if (status == 201) NEW else EXISTED
    }
}

/** Which public routes a [FaultRule] applies to; [wire] is its name in JSON. */
enum class FaultRoute(override val wire: String) : WireName {
    /** `POST /posts/{id}/like` */
    LIKE("like"),

    /** `DELETE /posts/{id}/like` */
    UNLIKE("unlike"),

    /** `GET /posts/{id}/likes` */
    LIKES("likes"),

    /** `GET /likes?posts=…` */
    BATCH("batch"),

    /** Every public route. */
    ALL("*");

    /** The JSON string, quoted. */
    fun toJson(): String = Json.write(wire)

    companion object {
        /** The route named `wire`; [IllegalArgumentException] for any other name. */
        fun fromWire(wire: String): FaultRoute = wireEnum(wire, "FaultRoute", "route")

        /** The route a JSON string names; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): FaultRoute = fromJsonValue(Json.parse(json), "FaultRoute")

        internal fun fromJsonValue(value: Any?, what: String): FaultRoute =
            wireEnum(jsonString(value, what), what, "route")
    }
}

/** An HTTP method of a public route; [wire] is its name in JSON. */
enum class FaultMethod(override val wire: String) : WireName {
    GET("GET"),
    POST("POST"),
    DELETE("DELETE");

    /** The JSON string, quoted. */
    fun toJson(): String = Json.write(wire)

    companion object {
        /** The method named `wire`; [IllegalArgumentException] for any other name. */
        fun fromWire(wire: String): FaultMethod = wireEnum(wire, "FaultMethod", "method")

        /** The method a JSON string names; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): FaultMethod = fromJsonValue(Json.parse(json), "FaultMethod")

        internal fun fromJsonValue(value: Any?, what: String): FaultMethod =
            wireEnum(jsonString(value, what), what, "method")
    }
}

/** When a [FaultRule] acts; [wire] is its name in JSON. */
enum class FaultPhase(override val wire: String) : WireName {
    /** Before the request is handled: a like or unlike never happens. */
    BEFORE("before"),

    /** After it was handled: the write has committed, then the answer is delayed, replaced, cut or lost. */
    AFTER("after");

    /** The JSON string, quoted. */
    fun toJson(): String = Json.write(wire)

    companion object {
        /** The phase named `wire`; [IllegalArgumentException] for any other name. */
        fun fromWire(wire: String): FaultPhase = wireEnum(wire, "FaultPhase", "phase")

        /** The phase a JSON string names; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): FaultPhase = fromJsonValue(Json.parse(json), "FaultPhase")

        internal fun fromJsonValue(value: Any?, what: String): FaultPhase =
            wireEnum(jsonString(value, what), what, "phase")
    }
}

/** What a like or unlike did, as the journal records it; [wire] is its name in JSON. */
enum class WriteResult(override val wire: String) : WireName {
    /** The (user, post) row changed: the count moved by one. */
    APPLIED("applied"),

    /** The row was already as asked (a retry, a repeated tap): nothing changed. */
    UNCHANGED("unchanged"),

    /** The handler answered an error: nothing changed (a write answered 500 has no result: it may have committed). */
    REFUSED("refused");

    /** The JSON string, quoted. */
    fun toJson(): String = Json.write(wire)

    companion object {
        /** The result named `wire`; [IllegalArgumentException] for any other name. */
        fun fromWire(wire: String): WriteResult = wireEnum(wire, "WriteResult", "write result")

        /** The result a JSON string names; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): WriteResult = fromJsonValue(Json.parse(json), "WriteResult")

        internal fun fromJsonValue(value: Any?, what: String): WriteResult =
            wireEnum(jsonString(value, what), what, "write result")
    }
}

/**
 * What a fault did to a request, as the journal's `fault` names it; [wire] is its name in JSON.
 *
 * The [FaultAction] kind of what acted ([STATUS] also for `errorRate` and `failNext`, [DROP] also
 * for `dropRate`), or [LATENCY] for a rule that only delayed the request. The server writes no
 * other value: the set grows only with [FaultAction], and so with this client.
 */
enum class JournalFault(override val wire: String) : WireName {
    /** A status answered in place of the real one ([FaultAction.Status], `errorRate`, `failNext`). */
    STATUS("status"),

    /** The connection closed without an answer ([FaultAction.Drop], `dropRate`). */
    DROP("drop"),

    /** The connection reset ([FaultAction.Reset]). */
    RESET("reset"),

    /** No answer: held until the server's request timeout ([FaultAction.Hang]). */
    HANG("hang"),

    /** The answer's body cut short ([FaultAction.Truncate]). */
    TRUNCATE("truncate"),

    /** A body that is not JSON ([FaultAction.Malformed]). */
    MALFORMED("malformed"),

    /** The body sent a few bytes at a time ([FaultAction.SlowBody]). */
    SLOW_BODY("slow_body"),

    /** A 200 answer of valid JSON padded to a given size ([FaultAction.Oversized]). */
    OVERSIZED("oversized"),

    /** No act: a rule's latency only delayed the request. */
    LATENCY("latency");

    /** The JSON string, quoted. */
    fun toJson(): String = Json.write(wire)

    companion object {
        /** The fault named `wire`; [IllegalArgumentException] for any other name. */
        fun fromWire(wire: String): JournalFault = wireEnum(wire, "JournalFault", "fault")

        /** The fault a JSON string names; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): JournalFault = fromJsonValue(Json.parse(json), "JournalFault")

        internal fun fromJsonValue(value: Any?, what: String): JournalFault =
            wireEnum(jsonString(value, what), what, "fault")
    }
}

// ------------------------------------------------------------ fault rules

/** What a [FaultRule] does when it fires (after its latency), tagged by `"kind"` in JSON. */
sealed class FaultAction {
    /** The `kind` it is tagged with. */
    abstract val kind: String

    /** This action as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal open fun fields(): Map<String, Any?> = emptyMap()

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf<String, Any?>("kind" to kind).apply { putAll(fields()) }

    /**
     * Answer `status` (200..599) with `body` (JSON text; by default the
     * `injected_fault` error body), and `Retry-After` when `retryAfterSecs` is given.
     *
     * @throws IllegalArgumentException when `body` is not JSON.
     */
    data class Status(val status: Int, val body: String? = null, val retryAfterSecs: Long? = null) : FaultAction() {
        private val bodyValue: Any? = body?.let(Json::parse)
        override val kind get() = "status"

        override fun fields(): Map<String, Any?> = linkedMapOf<String, Any?>("status" to status).apply {
            if (body != null) put("body", bodyValue)
            if (retryAfterSecs != null) put("retry_after_secs", retryAfterSecs)
        }
    }

    /** Close the connection without an answer. */
    data object Drop : FaultAction() {
        override val kind get() = "drop"
    }

    /** Reset the connection (TCP RST) without an answer. */
    data object Reset : FaultAction() {
        override val kind get() = "reset"
    }

    /** Never answer: hold the request until the server's request timeout, then close. */
    data object Hang : FaultAction() {
        override val kind get() = "hang"
    }

    /** Answer the first `bytes` bytes of the real answer's body. Phase [FaultPhase.AFTER] only. */
    data class Truncate(val bytes: Long) : FaultAction() {
        override val kind get() = "truncate"
        override fun fields(): Map<String, Any?> = linkedMapOf("bytes" to bytes)
    }

    /** Answer with a body that is not JSON: status 200 in phase [FaultPhase.BEFORE]; in phase [FaultPhase.AFTER], the real answer's status. */
    data object Malformed : FaultAction() {
        override val kind get() = "malformed"
    }

    /** Send the real answer's body `bytes` at a time, one piece every `intervalMs`. Phase [FaultPhase.AFTER] only. */
    data class SlowBody(val bytes: Long, val intervalMs: Long) : FaultAction() {
        override val kind get() = "slow_body"
        override fun fields(): Map<String, Any?> = linkedMapOf("bytes" to bytes, "interval_ms" to intervalMs)
    }

    /** Answer 200 with valid JSON of `bytes` bytes (padding). */
    data class Oversized(val bytes: Long) : FaultAction() {
        override val kind get() = "oversized"
        override fun fields(): Map<String, Any?> = linkedMapOf("bytes" to bytes)
    }

    companion object {
        /** Every `kind`, in the order of the API's description. */
        val KINDS: List<String> = listOf("status", "drop", "reset", "hang", "truncate", "malformed", "slow_body", "oversized")

        /** The action a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): FaultAction = fromJsonValue(Json.parse(json), "FaultAction")

        internal fun fromJsonValue(value: Any?, type: String): FaultAction {
            val f = JsonFields.of(value, type)
            val u32 = 0xFFFF_FFFFL
            return when (val kind = jsonString(f.req("kind"), f.where("kind"))) {
                "status" -> Status(
                    status = jsonInt(f.req("status"), f.where("status"), 0, 65_535),
                    body = f.opt("body")?.let(Json::write),
                    retryAfterSecs = f.opt("retry_after_secs")?.let { jsonCount(it, f.where("retry_after_secs")) },
                )
                "drop" -> Drop
                "reset" -> Reset
                "hang" -> Hang
                "truncate" -> Truncate(jsonLong(f.req("bytes"), f.where("bytes"), 0, u32))
                "malformed" -> Malformed
                "slow_body" -> SlowBody(
                    bytes = jsonLong(f.req("bytes"), f.where("bytes"), 0, u32),
                    intervalMs = jsonCount(f.req("interval_ms"), f.where("interval_ms")),
                )
                "oversized" -> Oversized(jsonCount(f.req("bytes"), f.where("bytes")))
                else -> throw JsonException("${f.where("kind")}: unknown kind \"$kind\"")
            }
        }
    }
}

/**
 * One fault rule: which requests it matches (`route`, and `method`, `post`,
 * `user` when given), which of their calls it fires on (`nth`, `every`,
 * `first`, `after`, drawn with `probability`), and what it does then: wait
 * `latencyMs` plus up to `jitterMs`, then `dropRate`, `failNext` and
 * `errorRate` (answering `status`), then `action`. A rule for a `method` its route never
 * answers (`like` is only POST, `unlike` only DELETE, `likes` and `batch` only GET) is refused
 * (`bad_fault_rules`).
 *
 * Encoded, it holds only the fields set or different from their defaults.
 *
 * @property nth only the nth matching call (1 is the first).
 * @property every only every `every`-th matching call.
 * @property first only the first `first` matching calls.
 * @property after only the calls after the first `after` matching ones.
 * @property probability the chance (0..1) that it fires on a call it selects.
 * @property latencyMs fixed delay when it fires (at most 600 000).
 * @property jitterMs extra random delay, uniform in 0..jitterMs.
 * @property errorRate chance (0..1) of answering `status` instead of handling.
 * @property status the status `errorRate` and `failNext` answer (400..599); another than 503 without
 *   either is refused.
 * @property dropRate chance (0..1) of dropping the connection without an answer.
 * @property failNext answer `status` to the next N matching requests, then stop.
 * @property tag a name of the test's choosing (1 to 64 visible ASCII characters, `!` to `~`), so that
 *   `clearFaults(tag = …)` removes this test's rules and no other; it changes nothing the rule does.
 */
data class FaultRule(
    val route: FaultRoute,
    val method: FaultMethod? = null,
    val post: Long? = null,
    val user: Long? = null,
    val nth: Long? = null,
    val every: Long? = null,
    val first: Long? = null,
    val after: Long? = null,
    val probability: Double = 1.0,
    val phase: FaultPhase = FaultPhase.BEFORE,
    val latencyMs: Long = 0,
    val jitterMs: Long = 0,
    val errorRate: Double = 0.0,
    val status: Int = 503,
    val dropRate: Double = 0.0,
    val failNext: Long = 0,
    val action: FaultAction? = null,
    val tag: String? = null,
) {
    /** This rule as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf<String, Any?>("route" to route.wire).apply {
        method?.let { put("method", it.wire) }
        post?.let { put("post", it) }
        user?.let { put("user", it) }
        nth?.let { put("nth", it) }
        every?.let { put("every", it) }
        first?.let { put("first", it) }
        after?.let { put("after", it) }
        if (probability != 1.0) put("probability", probability)
        if (phase != FaultPhase.BEFORE) put("phase", phase.wire)
        if (latencyMs != 0L) put("latency_ms", latencyMs)
        if (jitterMs != 0L) put("jitter_ms", jitterMs)
        if (errorRate != 0.0) put("error_rate", errorRate)
        if (status != 503) put("status", status)
        if (dropRate != 0.0) put("drop_rate", dropRate)
        if (failNext != 0L) put("fail_next", failNext)
        action?.let { put("action", it.toJsonValue()) }
        tag?.let { put("tag", it) }
    }

    companion object {
        /** The rule a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): FaultRule = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): FaultRule {
            val f = JsonFields.of(value, "FaultRule")
            fun count(name: String) = f.opt(name)?.let { jsonCount(it, f.where(name)) }
            fun countOr(name: String, default: Long) = f.notNull(name)?.let { jsonCount(it, f.where(name)) } ?: default
            fun rate(name: String, default: Double) = f.notNull(name)?.let { jsonDouble(it, f.where(name)) } ?: default
            return FaultRule(
                route = FaultRoute.fromJsonValue(f.req("route"), f.where("route")),
                method = f.opt("method")?.let { FaultMethod.fromJsonValue(it, f.where("method")) },
                post = f.opt("post")?.let { jsonId(it, f.where("post")) },
                user = f.opt("user")?.let { jsonId(it, f.where("user")) },
                nth = count("nth"),
                every = count("every"),
                first = count("first"),
                after = count("after"),
                probability = rate("probability", 1.0),
                phase = f.notNull("phase")?.let { FaultPhase.fromJsonValue(it, f.where("phase")) } ?: FaultPhase.BEFORE,
                latencyMs = countOr("latency_ms", 0),
                jitterMs = countOr("jitter_ms", 0),
                errorRate = rate("error_rate", 0.0),
                status = f.notNull("status")?.let { jsonInt(it, f.where("status"), 0, 65_535) } ?: 503,
                dropRate = rate("drop_rate", 0.0),
                failNext = countOr("fail_next", 0),
                action = f.opt("action")?.let { FaultAction.fromJsonValue(it, f.where("action")) },
                tag = f.opt("tag")?.let { jsonString(it, f.where("tag")) },
            )
        }
    }
}

/**
 * What one fault rule has used up since its rules were set (read-only: the
 * server reports it).
 *
 * @property matched the requests it matched: its call number so far (what `nth`, `every`, `first`, `after` count).
 * @property fired the calls it fired on: selected, and the probability draw passed (its latency applied).
 * @property acted the requests it acted on (answered, cut or spoiled); the journal names it as their `faultRule`.
 * @property failNextLeft for a rule with `failNext`: how many of those failures are left.
 * @property firstLeft for a rule with `first`: how many of its first calls are still to come.
 */
data class RuleState(
    val matched: Long = 0,
    val fired: Long = 0,
    val acted: Long = 0,
    val failNextLeft: Long? = null,
    val firstLeft: Long? = null,
) {
    /** This state as JSON (without the null fields). */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf<String, Any?>(
        "matched" to matched,
        "fired" to fired,
        "acted" to acted,
    ).apply {
        failNextLeft?.let { put("fail_next_left", it) }
        firstLeft?.let { put("first_left", it) }
    }

    companion object {
        /** The state a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): RuleState = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): RuleState {
            val f = JsonFields.of(value, "RuleState")
            return RuleState(
                matched = jsonCount(f.req("matched"), f.where("matched")),
                fired = jsonCount(f.req("fired"), f.where("fired")),
                acted = jsonCount(f.req("acted"), f.where("acted")),
                failNextLeft = f.opt("fail_next_left")?.let { jsonCount(it, f.where("fail_next_left")) },
                firstLeft = f.opt("first_left")?.let { jsonCount(it, f.where("first_left")) },
            )
        }
    }
}

/**
 * The fault rules, applied in order (at most 256), and the seed every
 * probability and jitter is drawn from (null: the server picks one and
 * reports it). The same seed and the same calls give the same faults.
 *
 * @property state in an answer, what each rule has used up: `state[i]` for
 *   `rules[i]` (empty without rules). Read-only: the server ignores it in
 *   `setFaults`, which starts every counter over, so rules read with
 *   `getFaults` can be set again as they are.
 */
data class FaultRules(
    val rules: List<FaultRule>,
    val seed: ULong? = null,
    val state: List<RuleState> = emptyList(),
) {
    /** These rules as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf<String, Any?>().apply {
        seed?.let { put("seed", it) }
        put("rules", rules.map { it.toJsonValue() })
        if (state.isNotEmpty()) put("state", state.map { it.toJsonValue() })
    }

    companion object {
        /** The rules a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): FaultRules = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): FaultRules {
            val f = JsonFields.of(value, "FaultRules")
            return FaultRules(
                rules = jsonList(f.req("rules"), f.where("rules")).map(FaultRule::fromJsonValue),
                seed = f.opt("seed")?.let { jsonULong(it, f.where("seed")) },
                state = f.opt("state")?.let { jsonList(it, f.where("state")).map(RuleState::fromJsonValue) } ?: emptyList(),
            )
        }
    }
}

// ------------------------------------------------------------ the journal

/**
 * One request to a public route, as the request journal has it.
 *
 * Decoding refuses a `route` of `*` and a `fault` this client does not know (the server writes
 * neither), so [LikeKitAdmin.requests] answers such an entry as the error `unreadable`; an entry
 * made with [FaultRoute.ALL] throws [IllegalArgumentException].
 *
 * @property seq its place in the journal: 1, 2, 3, … in order of arrival.
 * @property requestId its id, as its answer's `X-Request-Id` gives it (the client's own, or the server's).
 * @property atMs when it arrived, in milliseconds since the Unix epoch.
 * @property durationMs how long it took until its answer (or until the connection was cut).
 * @property route the request's own route: never [FaultRoute.ALL], which only rules and filters use.
 * @property path its path and query.
 * @property posts the post it names, or the posts a batch read asks for.
 * @property user the signed-in user, when the token was valid.
 * @property status the answer's status; null when no answer was written (a fault cut or held the connection).
 * @property write for a like or unlike that reached the handler: what it did
 *   (null when the request timeout cut it short: it may or may not have committed).
 * @property faultRule the fault rule that acted on it (its place in the rule set when it acted:
 *   removing rules by tag moves the rules after them up).
 * @property faultPhase when that rule acted.
 * @property fault what it did: the [FaultAction] kind that acted, or [JournalFault.LATENCY] for a rule
 *   that only delayed it.
 * @property inFlight not answered yet: `status`, `durationMs`, `write` and the fault fields come with the answer.
 * @property faultTag that rule's `tag`, when it has one: unlike [faultRule], no removal changes it,
 *   so a test sharing the server finds what its own rules did by their tag.
 */
data class JournalEntry(
    val seq: Long,
    val requestId: String,
    val atMs: Long,
    val durationMs: Long,
    val method: FaultMethod,
    val route: FaultRoute,
    val path: String,
    val posts: List<Long>,
    val user: Long?,
    val status: Int?,
    val write: WriteResult?,
    val faultRule: Int?,
    val faultPhase: FaultPhase?,
    val fault: JournalFault?,
    val inFlight: Boolean,
    val faultTag: String? = null,
) {
    init {
        require(route != FaultRoute.ALL) { "a journal entry names its request's own route, never ${route.wire}" }
    }

    /** This entry as JSON, every field written (null ones as null). */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf(
        "seq" to seq,
        "request_id" to requestId,
        "at_ms" to atMs,
        "duration_ms" to durationMs,
        "method" to method.wire,
        "route" to route.wire,
        "path" to path,
        "posts" to posts,
        "user" to user,
        "status" to status,
        "write" to write?.wire,
        "fault_rule" to faultRule,
        "fault_tag" to faultTag,
        "fault_phase" to faultPhase?.wire,
        "fault" to fault?.wire,
        "in_flight" to inFlight,
    )

    companion object {
        /** The entry a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): JournalEntry = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): JournalEntry {
            val f = JsonFields.of(value, "JournalEntry")
            return JournalEntry(
                seq = jsonCount(f.req("seq"), f.where("seq")),
                requestId = jsonString(f.req("request_id"), f.where("request_id")),
                atMs = jsonCount(f.req("at_ms"), f.where("at_ms")),
                durationMs = jsonCount(f.req("duration_ms"), f.where("duration_ms")),
                method = FaultMethod.fromJsonValue(f.req("method"), f.where("method")),
                route = journalRoute(f.req("route"), f.where("route")),
                path = jsonString(f.req("path"), f.where("path")),
                posts = jsonIds(f.req("posts"), f.where("posts")),
                user = f.opt("user")?.let { jsonId(it, f.where("user")) },
                status = f.opt("status")?.let { jsonInt(it, f.where("status"), 0, 65_535) },
                write = f.opt("write")?.let { WriteResult.fromJsonValue(it, f.where("write")) },
                faultRule = f.opt("fault_rule")?.let { jsonInt(it, f.where("fault_rule"), 0, Int.MAX_VALUE) },
                faultPhase = f.opt("fault_phase")?.let { FaultPhase.fromJsonValue(it, f.where("fault_phase")) },
                fault = f.opt("fault")?.let { JournalFault.fromJsonValue(it, f.where("fault")) },
                inFlight = jsonBoolean(f.req("in_flight"), f.where("in_flight")),
                faultTag = f.opt("fault_tag")?.let { jsonString(it, f.where("fault_tag")) },
            )
        }

        /** An entry's route: a [FaultRoute] other than [FaultRoute.ALL]. */
        private fun journalRoute(value: Any?, what: String): FaultRoute {
            val route = FaultRoute.fromJsonValue(value, what)
            if (route == FaultRoute.ALL) throw JsonException("$what: an entry's route is its request's own, not \"${route.wire}\"")
            return route
        }
    }
}

/**
 * The answer of `requests`: the matching entries, oldest first.
 *
 * @property capacity how many entries the journal holds at most (`--journal-size`).
 * @property dropped how many older entries were let go to stay within it.
 * @property lastSeq the `seq` of the last request that arrived, whether the filter matches it or not
 *   (0 before the first): read it before the test acts, then `RequestFilter(since = lastSeq)` selects
 *   only what came after.
 * @property met only on a read that waited ([LikeKitAdmin.waitForRequests]): `true` when the entries
 *   it waited for are there, none of them in flight; `false` when the wait ran out first (or the
 *   server began stopping, or it asked for more than the journal holds). Null on a read that did not wait.
 */
data class Journal(
    val entries: List<JournalEntry>,
    val capacity: Long,
    val dropped: Long,
    val met: Boolean? = null,
    val lastSeq: Long = 0,
) {
    /** This journal as JSON (`met` only when it has one). */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf<String, Any?>(
        "entries" to entries.map { it.toJsonValue() },
        "capacity" to capacity,
        "dropped" to dropped,
        "last_seq" to lastSeq,
    ).apply { met?.let { put("met", it) } }

    companion object {
        /** The journal a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): Journal = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): Journal {
            val f = JsonFields.of(value, "Journal")
            return Journal(
                entries = jsonList(f.req("entries"), f.where("entries")).map(JournalEntry::fromJsonValue),
                capacity = jsonCount(f.req("capacity"), f.where("capacity")),
                dropped = jsonCount(f.req("dropped"), f.where("dropped")),
                met = f.opt("met")?.let { jsonBoolean(it, f.where("met")) },
                // 0 from a server older than the field (`since = 0` selects every entry).
                lastSeq = f.opt("last_seq")?.let { jsonCount(it, f.where("last_seq")) } ?: 0,
            )
        }
    }
}

// ------------------------------------------------------------ what the store holds

/**
 * A user as the store holds it (the answer of [LikeKitAdmin.getUser]).
 *
 * @property friends the user's own (directed) friend list, in ascending order of id.
 */
data class StoredUser(val id: Long, val name: String, val friends: List<Long>) {
    /** This user as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf("id" to id, "name" to name, "friends" to friends)

    companion object {
        /** The user a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): StoredUser = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): StoredUser {
            val f = JsonFields.of(value, "StoredUser")
            return StoredUser(
                id = jsonId(f.req("id"), f.where("id")),
                name = jsonString(f.req("name"), f.where("name")),
                friends = jsonIds(f.req("friends"), f.where("friends")),
            )
        }
    }
}

/**
 * A post as the store holds it (the answer of [LikeKitAdmin.getPost]), read
 * past the server's view cache.
 *
 * @property count how many users like it: its like rows, as committed.
 * @property version grows by one with every real change of its likes (a like that
 *   added a row, an unlike that removed one); 0 after a reset.
 * @property recentLikers its most recent likers, newest first, at most 100. An unlike
 *   removes its user; the list is not refilled from older likes.
 */
data class StoredPost(val id: Long, val count: Long, val version: Long, val recentLikers: List<Long>) {
    /** This post as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf(
        "id" to id,
        "count" to count,
        "version" to version,
        "recent_likers" to recentLikers,
    )

    companion object {
        /** The post a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): StoredPost = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): StoredPost {
            val f = JsonFields.of(value, "StoredPost")
            return StoredPost(
                id = jsonId(f.req("id"), f.where("id")),
                count = jsonCount(f.req("count"), f.where("count")),
                version = jsonCount(f.req("version"), f.where("version")),
                recentLikers = jsonIds(f.req("recent_likers"), f.where("recent_likers")),
            )
        }
    }
}

// ------------------------------------------------------------ seeding

/**
 * A seed document (also the server's `--seed FILE`): users, then posts with their likers.
 * [fromJson] refuses a field the document does not have, as the server does, so a misspelt
 * `"freinds"` is an error rather than a user seeded without friends; so do [SeedUser.fromJson]
 * and [SeedPost.fromJson].
 */
data class Seed(val users: List<SeedUser> = emptyList(), val posts: List<SeedPost> = emptyList()) {
    /** This seed as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf(
        "users" to users.map { it.toJsonValue() },
        "posts" to posts.map { it.toJsonValue() },
    )

    companion object {
        /** The seed a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): Seed = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): Seed {
            val f = JsonFields.of(value, "Seed").only("users", "posts")
            return Seed(
                users = f.notNull("users")?.let { jsonList(it, f.where("users")).map(SeedUser::fromJsonValue) } ?: emptyList(),
                posts = f.notNull("posts")?.let { jsonList(it, f.where("posts")).map(SeedPost::fromJsonValue) } ?: emptyList(),
            )
        }
    }
}

/** A user in a [Seed]: id, display name and the user's own friends. */
data class SeedUser(val id: Long, val name: String, val friends: List<Long> = emptyList()) {
    /** This user as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf("id" to id, "name" to name, "friends" to friends)

    companion object {
        /** The user a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): SeedUser = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): SeedUser {
            val f = JsonFields.of(value, "SeedUser").only("id", "name", "friends")
            return SeedUser(
                id = jsonId(f.req("id"), f.where("id")),
                name = jsonString(f.req("name"), f.where("name")),
                friends = f.notNull("friends")?.let { jsonIds(it, f.where("friends")) } ?: emptyList(),
            )
        }
    }
}

/** A post in a [Seed] and the users who like it, oldest first. */
data class SeedPost(val id: Long, val likers: List<Long> = emptyList()) {
    /** This post as JSON. */
    fun toJson(): String = Json.write(toJsonValue())

    internal fun toJsonValue(): Map<String, Any?> = linkedMapOf("id" to id, "likers" to likers)

    companion object {
        /** The post a JSON object describes; [IllegalArgumentException] for anything else. */
        fun fromJson(json: String): SeedPost = fromJsonValue(Json.parse(json))

        internal fun fromJsonValue(value: Any?): SeedPost {
            val f = JsonFields.of(value, "SeedPost").only("id", "likers")
            return SeedPost(
                id = jsonId(f.req("id"), f.where("id")),
                likers = f.notNull("likers")?.let { jsonIds(it, f.where("likers")) } ?: emptyList(),
            )
        }
    }
}
