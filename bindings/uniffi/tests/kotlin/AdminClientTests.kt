// The Kotlin admin client (com.likekit.testing, server-mock/clients/kotlin)
// against the server's own description, `/openapi.json`, and against the
// server itself. Part of the test program in LikeKitTest.kt, which calls
// adminClientTests.
package com.likekit.tests

import com.likekit.testing.Created
import com.likekit.testing.FaultAction
import com.likekit.testing.FaultMethod
import com.likekit.testing.FaultPhase
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.testing.Journal
import com.likekit.testing.JournalEntry
import com.likekit.testing.JournalFault
import com.likekit.testing.LikeKitAdmin
import com.likekit.testing.LikeKitAdminException
import com.likekit.testing.RequestFilter
import com.likekit.testing.RuleState
import com.likekit.testing.Seed
import com.likekit.testing.SeedPost
import com.likekit.testing.SeedUser
import com.likekit.testing.StoredPost
import com.likekit.testing.StoredUser
import com.likekit.testing.WriteResult
import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

/** Decoding then encoding with the client's type of each schema the examples are checked against. */
private val ROUND_TRIPS: Map<String, (String) -> String> = mapOf(
    "FaultRule" to { json -> FaultRule.fromJson(json).toJson() },
    "FaultRules" to { json -> FaultRules.fromJson(json).toJson() },
    "RuleState" to { json -> RuleState.fromJson(json).toJson() },
    "Journal" to { json -> Journal.fromJson(json).toJson() },
    "JournalEntry" to { json -> JournalEntry.fromJson(json).toJson() },
    "Seed" to { json -> Seed.fromJson(json).toJson() },
    "SeedUser" to { json -> SeedUser.fromJson(json).toJson() },
    "SeedPost" to { json -> SeedPost.fromJson(json).toJson() },
    "StoredUser" to { json -> StoredUser.fromJson(json).toJson() },
    "StoredPost" to { json -> StoredPost.fromJson(json).toJson() },
)

/** One action of each kind, in the order of [FaultAction.KINDS]. */
private val ONE_OF_EACH_ACTION: List<FaultAction> = listOf(
    FaultAction.Status(500),
    FaultAction.Drop,
    FaultAction.Reset,
    FaultAction.Hang,
    FaultAction.Truncate(12),
    FaultAction.Malformed,
    FaultAction.SlowBody(3, 20),
    FaultAction.Oversized(1L shl 20),
)

/** The server's `/openapi.json`, read with the tests' own JSON reader. */
private fun openApi(url: String): Map<*, *> {
    val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
    val request = HttpRequest.newBuilder(URI.create("$url/openapi.json")).timeout(Duration.ofSeconds(10)).GET().build()
    val response = http.send(request, HttpResponse.BodyHandlers.ofString())
    expectEqual(200, response.statusCode(), "GET /openapi.json")
    return TestJson.parse(response.body()) as Map<*, *>
}

private fun Any?.obj(): Map<*, *> = this as? Map<*, *> ?: throw AssertionError("expected a JSON object, got $this")

/** Whether two JSON numbers are the same number, whichever way each was written. */
private fun sameNumber(a: Any?, b: Any?): Boolean {
    fun whole(x: Any?) = x is Long || x is ULong
    fun real(x: Any?): Double? = when (x) {
        is Long -> x.toDouble()
        is ULong -> x.toDouble()
        is Double -> x
        else -> null
    }
    if (whole(a) && whole(b)) return a.toString() == b.toString()
    return real(a) != null && real(a) == real(b)
}

/** Every key of `expected` is in `actual` with the same value, recursively; the differences go to `problems`. */
private fun covers(expected: Any?, actual: Any?, path: String, problems: MutableList<String>) {
    when (expected) {
        is Map<*, *> -> {
            if (actual !is Map<*, *>) return run { problems += "$path: $actual is not an object" }
            for ((key, value) in expected) {
                if (!actual.containsKey(key)) {
                    problems += "$path.$key is missing"
                } else {
                    covers(value, actual[key], "$path.$key", problems)
                }
            }
        }
        is List<*> -> {
            if (actual !is List<*> || actual.size != expected.size) return run { problems += "$path: $actual is not ${expected.size} items" }
            expected.forEachIndexed { i, item -> covers(item, actual[i], "$path[$i]", problems) }
        }
        is Long, is ULong, is Double -> if (!sameNumber(expected, actual)) problems += "$path: $actual, not $expected"
        else -> if (expected != actual) problems += "$path: $actual, not $expected"
    }
}

/**
 * Every key of `value` is one of the properties its schema (followed
 * through `$ref`, and `oneOf` by `kind`) lists, recursively.
 */
private fun keysDescribed(value: Any?, schema: Map<*, *>, schemas: Map<*, *>, path: String, problems: MutableList<String>) {
    if (value == null) return
    fun resolve(s: Map<*, *>): Map<*, *> =
        (s["\$ref"] as? String)?.let { schemas[it.removePrefix("#/components/schemas/")].obj() } ?: s
    val resolved = resolve(schema)
    val alternatives = resolved["oneOf"] as? List<*>
    if (alternatives != null) {
        val some = alternatives.map { resolve(it.obj()) }.filter { it["type"] != "null" }
        val kind = (value as? Map<*, *>)?.get("kind")
        val chosen = some.singleOrNull()
            ?: some.firstOrNull { ((it["properties"] as? Map<*, *>)?.get("kind") as? Map<*, *>)?.get("enum") == listOf(kind) }
            ?: return run { problems += "$path: no alternative of its schema describes $value" }
        return keysDescribed(value, chosen, schemas, path, problems)
    }
    when (value) {
        is Map<*, *> -> {
            val properties = resolved["properties"] as? Map<*, *>
            if (properties == null) {
                // A free-form object (an injected answer's body).
                if ("object" !in resolved["type"].toString()) problems += "$path: an object where the schema has none"
                return
            }
            for ((key, item) in value) {
                val property = properties[key]
                if (property == null) {
                    problems += "$path.$key is not one of ${properties.keys}"
                } else {
                    keysDescribed(item, property.obj(), schemas, "$path.$key", problems)
                }
            }
        }
        is List<*> -> {
            val items = resolved["items"] as? Map<*, *> ?: return run { problems += "$path: an array where the schema has none" }
            value.forEachIndexed { i, item -> keysDescribed(item, items, schemas, "$path[$i]", problems) }
        }
    }
}

/** Runs `call`, which must fail with a [LikeKitAdminException]; returns it. */
private fun adminError(what: String, call: () -> Unit): LikeKitAdminException {
    try {
        call()
    } catch (e: LikeKitAdminException) {
        return e
    }
    throw AssertionError("$what: no LikeKitAdminException")
}

/** Runs `use` with the URL of a server that answers every request 200 with `body`, then stops it. */
private fun <T> withStubAnswer(body: String, use: (url: String) -> T): T {
    val stub = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
    stub.createContext("/") { exchange ->
        val bytes = body.toByteArray(Charsets.UTF_8)
        exchange.responseHeaders.add("Content-Type", "application/json")
        exchange.sendResponseHeaders(200, bytes.size.toLong())
        exchange.responseBody.use { it.write(bytes) }
    }
    stub.start()
    try {
        return use("http://127.0.0.1:${stub.address.port}")
    } finally {
        stub.stop(0)
    }
}

/** Runs `use` with the URL of a server that redirects every request (302) to `to` + its path, then stops it. */
private fun <T> withRedirectingStub(to: String, use: (url: String) -> T): T {
    val stub = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
    stub.createContext("/") { exchange ->
        exchange.responseHeaders.add("Location", to + exchange.requestURI)
        exchange.sendResponseHeaders(302, -1)
        exchange.close()
    }
    stub.start()
    try {
        return use("http://127.0.0.1:${stub.address.port}")
    } finally {
        stub.stop(0)
    }
}

/** Runs `use` with the URL of a server that answers every request 200 with `body` and the requests it saw, then stops it. */
private fun <T> withRecordingStub(body: String, use: (url: String, seen: List<String>) -> T): T {
    val seen = java.util.Collections.synchronizedList(mutableListOf<String>())
    val stub = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
    stub.createContext("/") { exchange ->
        seen += "${exchange.requestMethod} ${exchange.requestURI}"
        val bytes = body.toByteArray(Charsets.UTF_8)
        exchange.responseHeaders.add("Content-Type", "application/json")
        exchange.sendResponseHeaders(200, bytes.size.toLong())
        exchange.responseBody.use { it.write(bytes) }
    }
    stub.start()
    try {
        return use("http://127.0.0.1:${stub.address.port}", seen)
    } finally {
        stub.stop(0)
    }
}

/** A journal entry's fields up to `in_flight`, as JSON without its closing brace: add fields, then `}`. */
private const val ENTRY_START =
    """{"seq": 1, "request_id": "r", "at_ms": 1, "duration_ms": 1, "method": "GET", "path": "/posts/1/likes", "posts": [1], "in_flight": false"""

/** Runs `call`, which must refuse its input with an [IllegalArgumentException]. */
private fun refused(what: String, call: () -> Any?) {
    val value = try {
        call()
    } catch (_: IllegalArgumentException) {
        return
    }
    throw AssertionError("$what was accepted as $value")
}

fun adminClientTests(t: Harness, server: TestServer) {
    val admin = server.admin

    t.test("admin client: OPERATIONS is exactly the /admin/ operations of /openapi.json") {
        val paths = openApi(server.url)["paths"].obj()
        val described = paths.flatMap { (path, item) ->
            if (!(path as String).startsWith("/admin/")) return@flatMap emptyList()
            item.obj().mapNotNull { (method, operation) ->
                ((operation as? Map<*, *>)?.get("operationId") as? String)?.let { Triple(it, (method as String).uppercase(), path) }
            }
        }.toSet()
        expect(described.isNotEmpty()) { "/openapi.json describes no admin operation" }
        val ours = LikeKitAdmin.OPERATIONS.map { (id, op) -> Triple(id, op.method, op.path) }.toSet()
        expectEqual(described, ours, "(operationId, method, path) of every admin operation")
    }

    t.test("admin client: every schema example decodes and encodes back whole, with only the schema's properties") {
        val schemas = openApi(server.url)["components"].obj()["schemas"].obj()
        val problems = mutableListOf<String>()
        for ((name, roundTrip) in ROUND_TRIPS) {
            val schema = schemas[name].obj()
            val examples = schema["examples"] as? List<*> ?: emptyList<Any?>()
            expect(examples.isNotEmpty()) { "$name has no examples" }
            examples.forEachIndexed { i, example ->
                val written = TestJson.parse(roundTrip(TestJson.write(example)))
                covers(example, written, "$name example $i", problems)
                keysDescribed(written, schema, schemas, "$name example $i (as written)", problems)
            }
        }
        expect(problems.isEmpty()) { problems.joinToString("\n") }
    }

    t.test("admin client: FaultRoute, FaultMethod, FaultPhase, WriteResult and FaultAction kinds are the schemas' enums") {
        val schemas = openApi(server.url)["components"].obj()["schemas"].obj()
        fun enumOf(name: String) = schemas[name].obj()["enum"]
        expectEqual(enumOf("FaultRoute"), FaultRoute.entries.map { it.wire }, "FaultRoute")
        expectEqual(enumOf("FaultMethod"), FaultMethod.entries.map { it.wire }, "FaultMethod")
        expectEqual(enumOf("FaultPhase"), FaultPhase.entries.map { it.wire }, "FaultPhase")
        expectEqual(enumOf("WriteResult"), WriteResult.entries.map { it.wire }, "WriteResult")
        val kinds = (schemas["FaultAction"].obj()["oneOf"] as List<*>).map {
            (it.obj()["properties"].obj()["kind"].obj()["enum"] as List<*>).single()
        }
        expectEqual(kinds, FaultAction.KINDS, "FaultAction kinds")
        expectEqual(kinds, ONE_OF_EACH_ACTION.map { it.kind }, "the kind of each FaultAction class")
        for (action in ONE_OF_EACH_ACTION) {
            expectEqual(action, FaultAction.fromJson(action.toJson()), "${action.kind} decoded from ${action.toJson()}")
        }
        for (route in FaultRoute.entries) expectEqual(route, FaultRoute.fromJson(route.toJson()), "route ${route.wire}")

        // A journal entry's fault: an action's kind, or latency; its route: the schema's, but never "*".
        expectEqual(kinds + "latency", JournalFault.entries.map { it.wire }, "JournalFault: the action kinds, then latency")
        for (fault in JournalFault.entries) expectEqual(fault, JournalFault.fromJson(fault.toJson()), "fault ${fault.wire}")
        val route = schemas["JournalEntry"].obj()["properties"].obj()["route"].obj()
        val routeSchema = (route["\$ref"] as? String)?.let { schemas[it.substringAfterLast('/')].obj() } ?: route
        val entryRoutes = (routeSchema["enum"] as List<*>).filter { it != "*" }
        expectEqual(FaultRoute.entries.filter { it != FaultRoute.ALL }.map { it.wire }, entryRoutes, "the routes a journal entry names")
        for (wire in entryRoutes) {
            val entry = JournalEntry.fromJson("""$ENTRY_START, "route": "$wire"}""")
            expectEqual(wire, entry.route.wire, "an entry of route $wire")
        }
    }

    t.test("admin client: a journal entry's fault decodes as its JournalFault; a route of * or an unknown fault is refused, and unreadable from the server") {
        fun entry(fields: String) = JournalEntry.fromJson("""$ENTRY_START, $fields}""")
        for (fault in JournalFault.entries) {
            val decoded = entry(""""route": "likes", "fault_rule": 0, "fault_phase": "after", "fault": "${fault.wire}"""")
            expectEqual(fault, decoded.fault, "the fault of an entry with \"${fault.wire}\"")
            expectEqual(FaultRoute.LIKES to FaultPhase.AFTER, decoded.route to decoded.faultPhase, "its route and phase")
            expectEqual(decoded, JournalEntry.fromJson(decoded.toJson()), "decoded again from ${decoded.toJson()}")
            expectEqual(fault.wire, (TestJson.parse(decoded.toJson()) as Map<*, *>)["fault"], "written as its wire name")
        }
        expectEqual(null, entry(""""route": "like", "fault": null""").fault, "an entry no fault touched")

        refused("an entry whose route is *") { entry(""""route": "*"""") }
        refused("an entry whose fault is unknown") { entry(""""route": "likes", "fault": "explode"""") }
        refused("an entry whose fault is in upper case") { entry(""""route": "likes", "fault": "DROP"""") }
        refused("an entry whose fault is a number") { entry(""""route": "likes", "fault": 5""") }
        refused("an unknown JournalFault") { JournalFault.fromJson("\"explode\"") }
        refused("an entry made with FaultRoute.ALL") {
            JournalEntry(
                seq = 1, requestId = "r", atMs = 1, durationMs = 1, method = FaultMethod.GET, route = FaultRoute.ALL, path = "/",
                posts = emptyList(), user = null, status = 200, write = null, faultRule = null, faultPhase = null, fault = null,
                inFlight = false,
            )
        }

        // From a server: the call fails as unreadable, naming the field.
        for ((field, fields) in listOf("route" to """"route": "*"""", "fault" to """"route": "likes", "fault": "explode"""")) {
            val journal = """{"entries": [$ENTRY_START, $fields}], "capacity": 10, "dropped": 0}"""
            val unreadable = withStubAnswer(journal) { url -> adminError("a journal with $fields") { LikeKitAdmin(url, "key").requests() } }
            expectEqual(200 to "unreadable", unreadable.status to unreadable.code, "(status, code) of a journal with $fields")
            expect(unreadable.message.contains("JournalEntry.$field")) { "message: ${unreadable.message}" }
        }
    }

    t.test("admin client: a real server's journal entries decode into their exact route and JournalFault after a rule acted") {
        val (ana, ben, post) = Triple(server.user("Ana"), server.user("Ben"), server.post())
        val (token, benToken) = server.token(ana) to server.token(ben)
        val tag = "exact-journal"
        val others = admin.getFaults().rules.size
        try {
            admin.addFaults(
                listOf(
                    // A rule for every route acts on Ana's first read; the entry names the read's own route.
                    FaultRule(FaultRoute.ALL, user = ana, post = post, nth = 1, action = FaultAction.Status(500), tag = tag),
                    // Ben's read is spoiled after it was answered; Ana's next read is only delayed.
                    FaultRule(FaultRoute.LIKES, user = ben, post = post, phase = FaultPhase.AFTER, action = FaultAction.Malformed, tag = tag),
                    FaultRule(FaultRoute.LIKES, user = ana, post = post, latencyMs = 1, tag = tag),
                ),
            )
            val reads = listOf(token, benToken, token).map { server.asViewer("GET", "/posts/$post/likes", it).first }
            expectEqual(listOf(500, 200, 200), reads, "the statuses of three reads")
            expectEqual(200, server.asViewer("POST", "/posts/$post/like", token).first, "a like no rule acts on")

            val entries = server.requests(RequestFilter(post = post))
            val faults: List<JournalFault?> = entries.map { it.fault }
            expectEqual(listOf(JournalFault.STATUS, JournalFault.MALFORMED, JournalFault.LATENCY, null), faults, "what each fault did")
            expectEqual(
                listOf(FaultRoute.LIKES, FaultRoute.LIKES, FaultRoute.LIKES, FaultRoute.LIKE),
                entries.map { it.route },
                "each entry's own route, never ALL",
            )
            expectEqual(
                listOf(FaultPhase.BEFORE, FaultPhase.AFTER, FaultPhase.BEFORE, null),
                entries.map { it.faultPhase },
                "when each acted",
            )
            expectEqual(listOf(tag, tag, tag, null), entries.map { it.faultTag }, "the rules' tag")
        } finally {
            admin.clearFaults(tag = tag)
            admin.clearRequests(RequestFilter(post = post))
        }
        expectEqual(others, admin.getFaults().rules.size, "the other tests' rules, as they were")
    }

    t.test("admin client: RequestFilter's fields are the journal's query parameters of /openapi.json, and the server takes each") {
        val paths = openApi(server.url)["paths"].obj()
        fun parameters(path: String, method: String): Set<Any?> =
            ((paths[path].obj()[method].obj()["parameters"] as? List<*>) ?: emptyList<Any?>()).map { it.obj()["name"] }.toSet()
        // camelCase here, snake_case on the wire.
        val capital = Regex("[A-Z]")
        val fields = RequestFilter::class.java.declaredFields
            .filter { !java.lang.reflect.Modifier.isStatic(it.modifiers) && !it.isSynthetic }
            .map { field -> field.name.replace(capital) { "_" + it.value.lowercase() } }
            .toSet()
        // GET also takes the wait of waitForRequests; DELETE waits for nothing.
        expectEqual(parameters("/admin/requests", "get"), fields + setOf("wait_for", "timeout_ms"), "get /admin/requests: RequestFilter's fields and the wait's")
        expectEqual(parameters("/admin/requests", "delete"), fields, "delete /admin/requests: RequestFilter's fields")
        for (method in listOf("get", "delete")) {
            expectEqual(setOf<Any?>("tag"), parameters("/admin/faults", method), "$method /admin/faults: the tag alone")
        }
        // Every filter at once: the server knows each name the client sends (an unknown one is bad_query).
        val every = RequestFilter(FaultRoute.LIKES, FaultMethod.GET, server.nextId(), server.nextId(), 0L, "no-such-id", "no-such-tag")
        expectEqual(emptyList<JournalEntry>(), admin.requests(every).entries, "every filter at once")
        val waited = admin.waitForRequests(every, count = 1, timeoutMs = 1)
        expectEqual(false to emptyList<JournalEntry>(), waited.met to waited.entries, "(met, entries) of a wait with every filter")
        admin.clearRequests(every)
    }

    t.test("admin client: waitForRequests answers once the requests are there and answered (met), or when its timeout runs out (not met), past the client's own timeout") {
        val (ana, post) = server.user("Ana") to server.post()
        val token = server.token(ana)
        val tag = "wait-for-requests"
        val likes = RequestFilter(route = FaultRoute.LIKE, post = post)
        // Each wait below outlasts this client's own half second.
        val quick = LikeKitAdmin(server.url, server.adminKey, timeoutMs = 500)
        admin.addFaults(listOf(FaultRule(FaultRoute.LIKE, post = post, latencyMs = 600, tag = tag)))
        try {
            val waiting = CompletableFuture.supplyAsync { quick.waitForRequests(likes, count = 1, timeoutMs = 10_000) }
            Thread.sleep(200)
            expect(!waiting.isDone) { "answered before any like: ${runCatching { waiting.get() }}" }
            val sent = System.nanoTime()
            val liked = CompletableFuture.supplyAsync { server.asViewer("POST", "/posts/$post/like", token).first }
            Thread.sleep(300)
            expect(!waiting.isDone) { "answered while the like was in flight: ${runCatching { waiting.get() }}" }
            val journal = waiting.get(15, TimeUnit.SECONDS)
            val waitedMs = (System.nanoTime() - sent) / 1_000_000
            expect(waitedMs >= 600) { "answered ${waitedMs} ms after the like was sent, before its 600 ms latency: $journal" }
            expectEqual(200, liked.get(15, TimeUnit.SECONDS), "the like's status")
            expectEqual(true, journal.met, "met")
            expectEqual(listOf(200 to false), journal.entries.map { it.status to it.inFlight }, "(status, in flight) of the like")

            // Two asked for, one there: the wait runs out and says so.
            val started = System.nanoTime()
            val short = quick.waitForRequests(likes, count = 2, timeoutMs = 800)
            val shortMs = (System.nanoTime() - started) / 1_000_000
            expect(shortMs >= 800) { "answered after $shortMs ms, before the wait's 800: $short" }
            expectEqual(false to 1, short.met to short.entries.size, "(met, entries) of a wait that ran out")
            expectEqual(null, admin.requests(likes).met, "met of a read that does not wait")

            for ((count, timeoutMs) in listOf(0L to 1_000L, 1L to 60_001L)) {
                val refusal = adminError("waitForRequests($count, $timeoutMs)") { admin.waitForRequests(likes, count, timeoutMs) }
                expectEqual(400 to "bad_query", refusal.status to refusal.code, "(status, code) of waitForRequests($count, $timeoutMs)")
            }
        } finally {
            admin.clearFaults(tag = tag)
            admin.clearRequests(RequestFilter(post = post))
        }

        // `met` is read, and written back, only when there is one.
        val waitedJson = """{"entries": [], "capacity": 10, "dropped": 0, "met": true}"""
        expectEqual(Journal(emptyList(), 10, 0, met = true), Journal.fromJson(waitedJson), "a journal that waited")
        expectEqual(true, (TestJson.parse(Journal.fromJson(waitedJson).toJson()) as Map<*, *>)["met"], "met written back")
        expect("met" !in (TestJson.parse(Journal(emptyList(), 10, 0).toJson()) as Map<*, *>)) { "met written without a wait" }
        refused("a met that is not a boolean") { Journal.fromJson("""{"entries": [], "capacity": 10, "dropped": 0, "met": "yes"}""") }
    }

    t.test("admin client: errors are LikeKitAdminException with the status and code answered, or no status without an answer") {
        val blank = adminError("createUser with a blank name") { admin.createUser(server.nextId(), "  ") }
        expectEqual(400 to "bad_name", blank.status to blank.code, "(status, code) of a blank name")
        expect(blank.message.contains("blank")) { "message: ${blank.message}" }

        // A wrong key is the server's own 401 and message, for a call with a body as for one without.
        val wrongKey = LikeKitAdmin(server.url, server.adminKey + "-wrong")
        val nobodysRule = listOf(FaultRule(FaultRoute.LIKES, post = server.nextId()))
        val refusedCalls: List<Pair<String, () -> Any?>> = listOf(
            "getFaults" to { wrongKey.getFaults() },
            "reset" to { wrongKey.reset() },
            "createUser" to { wrongKey.createUser(server.nextId(), "Ana") },
            "createPost" to { wrongKey.createPost(server.nextId()) },
            "setFriends" to { wrongKey.setFriends(server.nextId(), emptyList()) },
            "mintToken" to { wrongKey.mintToken(server.nextId()) },
            "setFaults" to { wrongKey.setFaults(nobodysRule) },
            "addFaults" to { wrongKey.addFaults(nobodysRule) },
            "seed" to { wrongKey.seed(Seed(posts = listOf(SeedPost(server.nextId())))) },
        )
        for ((name, call) in refusedCalls) {
            val unauthorised = adminError("$name with a wrong key") { call() }
            expectEqual(401 to "bad_admin_key", unauthorised.status to unauthorised.code, "(status, code) of $name with a wrong key")
            expect(unauthorised.message.contains("X-Admin-Key")) { "$name: the server's message, not ${unauthorised.message}" }
        }

        val missing = server.nextId()
        val noUser = adminError("setFriends of an unknown user") { admin.setFriends(missing, emptyList()) }
        expectEqual(404 to "user_not_found", noUser.status to noUser.code, "(status, code) of an unknown user")

        val badRule = adminError("a probability of 2") {
            admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.LIKE, post = missing, probability = 2.0))))
        }
        expectEqual(400 to "bad_fault_rules", badRule.status to badRule.code, "(status, code) of a bad rule")
        expectEqual(emptyList<FaultRule>(), admin.getFaults().rules, "rules in force after a refused set")

        // A port nobody listens on: no answer, so no status.
        val port = ServerSocket(0).use { it.localPort }
        val nobody = LikeKitAdmin("http://127.0.0.1:$port", server.adminKey, timeoutMs = 2_000)
        val unanswered = adminError("a closed port") { nobody.reset() }
        expectEqual(null to "no_answer", unanswered.status to unanswered.code, "(status, code) without an answer")
        expect(unanswered.cause != null) { "the I/O error is kept as the cause" }

        refused("a base URL without http") { LikeKitAdmin("127.0.0.1:8080", "key") }
    }

    t.test("admin client: a redirect is never followed: unreadable, naming where it led, and nothing reaches the other address") {
        withRecordingStub("""{"ok":true}""") { elsewhere, seen ->
            withRedirectingStub(elsewhere) { moved ->
                val error = adminError("reset through a redirect") { LikeKitAdmin(moved, "stub-key").reset() }
                expectEqual(302 to "unreadable", error.status to error.code, "(status, code)")
                expect(error.message.contains("redirected to $elsewhere/admin/reset")) { "message: ${error.message}" }
                expectEqual(emptyList<String>(), seen.toList(), "requests that reached the other address")
            }
        }
    }

    t.test("admin client: every call checks its 2xx answer; a page from another server is unreadable, never a silent success") {
        for (page in listOf("<html>not the mock</html>", "{}", """{"ok": false}""")) {
            withStubAnswer(page) { url ->
                val stub = LikeKitAdmin(url, "key")
                val calls: List<Pair<String, () -> Any?>> = listOf(
                    "createUser" to { stub.createUser(7, "Ana") },
                    "createPost" to { stub.createPost(42) },
                    "setFriends" to { stub.setFriends(7, emptyList()) },
                    "reset" to { stub.reset() },
                    "clearRequests" to { stub.clearRequests() },
                    "seed" to { stub.seed(Seed()) },
                )
                for ((name, call) in calls) {
                    val unreadable = adminError("$name given $page") { call() }
                    expectEqual(200 to "unreadable", unreadable.status to unreadable.code, "(status, code) of $name given $page")
                }
            }
        }
    }

    t.test("admin client: users, posts, friends, tokens, seed, reset and the journal's filters answer as typed") {
        val (ana, ben, post) = Triple(server.nextId(), server.nextId(), server.nextId())
        expectEqual(Created.NEW, admin.createUser(ana, "Ana"), "a new user is created")
        expectEqual(Created.EXISTED, admin.createUser(ana, "Ana B."), "an existing user is renamed")
        expectEqual(Created.NEW, admin.createPost(post), "a new post is created")
        expectEqual(Created.EXISTED, admin.createPost(post), "an existing post is left")

        // Ben likes the post, seeded; Ana counts Ben as a friend.
        admin.seed(Seed(users = listOf(SeedUser(ben, "Ben")), posts = listOf(SeedPost(post, likers = listOf(ben)))))
        admin.setFriends(ana, listOf(ben))
        val token = admin.mintToken(ana, ttlSecs = 60)
        expect(token.count { it == '.' } == 2) { "a JWT has three parts: $token" }

        admin.clearRequests()
        val (status, body) = server.asViewer("GET", "/posts/$post/likes", token)
        expectEqual(200, status, "GET /posts/$post/likes with the minted token: $body")
        val likes = TestJson.parse(body).obj()
        expectEqual(1L to listOf("Ben"), likes["count"] to likes["friends"], "(count, friends) after the seed")

        val journal = admin.requests(RequestFilter(route = FaultRoute.LIKES, method = FaultMethod.GET, post = post, user = ana))
        expectEqual(0L, journal.dropped, "entries let go")
        expect(journal.capacity > 0) { "capacity ${journal.capacity}" }
        val read = journal.entries.singleOrNull() ?: throw AssertionError("one read in ${journal.entries}")
        expectEqual(
            listOf(FaultMethod.GET, FaultRoute.LIKES, "/posts/$post/likes", listOf(post), ana, 200, null, null, false),
            listOf(read.method, read.route, read.path, read.posts, read.user, read.status, read.write, read.fault, read.inFlight),
            "(method, route, path, posts, user, status, write, fault, in flight) of the read",
        )
        expectEqual(listOf(read), admin.requests(RequestFilter(route = FaultRoute.ALL, post = post)).entries, "every route")
        expectEqual(emptyList<JournalEntry>(), admin.requests(RequestFilter(post = post, since = read.seq)).entries, "since its seq")
        expectEqual(emptyList<JournalEntry>(), admin.requests(RequestFilter(post = post, user = ben)).entries, "as another user")
        expectEqual(emptyList<JournalEntry>(), admin.requests(RequestFilter(post = post, method = FaultMethod.POST)).entries, "another method")

        admin.reset()
        expectEqual(false to 0L, server.likesOf(post, ana), "(liked, count) after reset")
        admin.clearRequests()
        expectEqual(emptyList<JournalEntry>(), admin.requests().entries, "the journal after clearRequests")
    }

    t.test("admin client: mintToken(validFromSecs) mints a token already expired or not valid yet, and refuses a start past a year") {
        val (ana, post) = server.nextId() to server.nextId()
        admin.createUser(ana, "Ana")
        admin.createPost(post)
        val codeOf = { token: String ->
            val (status, body) = server.asViewer("GET", "/posts/$post/likes", token)
            status to ((TestJson.parse(body).obj()["error"] as? Map<*, *>)?.get("code"))
        }
        expectEqual(401 to "token_expired", codeOf(admin.mintToken(ana, validFromSecs = -7200)), "two hours back, an hour's lifetime")
        expectEqual(401 to "invalid_token", codeOf(admin.mintToken(ana, validFromSecs = 60)), "a minute ahead")
        expectEqual(200 to null, codeOf(admin.mintToken(ana, ttlSecs = 3600, validFromSecs = -600)), "ten minutes back")
        val tooEarly = adminError("a start past a year back") { admin.mintToken(ana, validFromSecs = -31_536_001) }
        expectEqual(400 to "bad_valid_from", tooEarly.status to tooEarly.code, "(status, code) of a start past a year back")
        expect(tooEarly.message.contains("valid_from_secs")) { "message: ${tooEarly.message}" }
    }

    t.test("admin client: getUser and getPost read back what the store holds; unknown ones are user_not_found and post_not_found") {
        val (ana, ben, cy) = Triple(server.user("Ana"), server.user("Ben"), server.user("Cy"))
        admin.setFriends(ben, listOf(cy, ana))
        expectEqual(StoredUser(ben, "Ben", listOf(ana, cy)), admin.getUser(ben), "Ben, his friends in ascending order")
        expectEqual(StoredUser(cy, "Cy", emptyList()), admin.getUser(cy), "Cy, without friends")

        val post = server.post()
        expectEqual(StoredPost(post, 0, 0, emptyList()), admin.getPost(post), "a new post")
        for (user in listOf(ana, cy, ben)) {
            val (status, body) = server.asViewer("POST", "/posts/$post/like", server.token(user))
            expectEqual(200, status, "user $user likes post $post: $body")
        }
        // A like that changes nothing moves nothing; an unlike moves the count back.
        val cyToken = server.token(cy)
        expectEqual(200, server.asViewer("POST", "/posts/$post/like", cyToken).first, "Cy likes again")
        expectEqual(200, server.asViewer("DELETE", "/posts/$post/like", cyToken).first, "Cy unlikes")
        expectEqual(StoredPost(post, 2, 4, listOf(ben, ana)), admin.getPost(post), "the post after three likes, a repeat and an unlike")

        val missing = server.nextId()
        val noUser = adminError("getUser of an unknown user") { admin.getUser(missing) }
        expectEqual(404 to "user_not_found", noUser.status to noUser.code, "(status, code) of an unknown user")
        val noPost = adminError("getPost of an unknown post") { admin.getPost(missing) }
        expectEqual(404 to "post_not_found", noPost.status to noPost.code, "(status, code) of an unknown post")
        val badId = adminError("getPost of post 0") { admin.getPost(0) }
        expectEqual(400 to "bad_post_id", badId.status to badId.code, "(status, code) of post 0")
    }

    t.test("admin client: fault rules with every field set come back from setFaults and getFaults as sent") {
        val post = server.nextId() // never requested: the rules act on nothing
        val everything = FaultRule(
            route = FaultRoute.LIKE,
            method = FaultMethod.POST,
            post = post,
            user = post,
            nth = 3,
            every = 3,
            first = 4,
            after = 1,
            probability = 0.5,
            phase = FaultPhase.AFTER,
            latencyMs = 10,
            jitterMs = 5,
            errorRate = 0.25,
            status = 429,
            dropRate = 0.125,
            failNext = 1,
            action = FaultAction.Status(418, body = """{"error":{"code":"teapot","message":"short and stout"}}""", retryAfterSecs = 7),
            tag = "every-field#1",
        )
        val others = ONE_OF_EACH_ACTION.drop(1).map { FaultRule(FaultRoute.ALL, post = post, phase = FaultPhase.AFTER, action = it) }
        val sent = FaultRules(listOf(everything) + others, seed = ULong.MAX_VALUE)
        try {
            val inForce = admin.setFaults(sent)
            expectEqual(sent, inForce.copy(state = emptyList()), "the rules in force")
            expectEqual(
                listOf(RuleState(failNextLeft = 1, firstLeft = 4)) + others.map { RuleState() },
                inForce.state,
                "nothing used yet",
            )
            expectEqual(inForce, admin.getFaults(), "the rules read back")
            val picked = admin.setFaults(FaultRules(listOf(FaultRule(FaultRoute.BATCH, post = post))))
            expect(picked.seed != null) { "the server picks a seed: $picked" }
            expectEqual(picked, admin.getFaults(), "the rules and the seed picked, read back")
        } finally {
            val cleared = admin.clearFaults()
            expectEqual(emptyList<FaultRule>(), cleared.rules, "rules after clearFaults")
        }
        expectEqual(emptyList<FaultRule>(), admin.getFaults().rules, "rules read back after clearFaults")
    }

    t.test("admin client: setFaults takes the rules and an optional seed, as a list or as FaultRules") {
        val post = server.nextId() // never requested: the rules act on nothing
        val rules = listOf(FaultRule(FaultRoute.LIKES, post = post, latencyMs = 1), FaultRule(FaultRoute.BATCH, post = post, tag = "set-as-list"))
        try {
            val seeded = admin.setFaults(rules, seed = 42uL)
            expectEqual(rules to 42uL, seeded.rules to seeded.seed, "(rules, seed) set as a list with a seed")
            expectEqual(seeded, admin.setFaults(FaultRules(rules, seed = 42uL)), "the same set as FaultRules")
            val picked = admin.setFaults(rules)
            expectEqual(rules, picked.rules, "the rules set as a list alone")
            expect(picked.seed != null) { "the server picks a seed: $picked" }
            expectEqual(picked, admin.getFaults(), "read back")
        } finally {
            admin.clearFaults()
        }
    }

    t.test("admin client: getFaults and clearFaults take a tag that is never null; a null from Java is refused before anything is sent") {
        val overloads = listOf("getFaults", "clearFaults").flatMap { name ->
            LikeKitAdmin::class.java.methods.filter { it.name.startsWith(name) }.map { "${it.name}(${it.parameterTypes.joinToString { p -> p.simpleName }})" }
        }
        expectEqual(setOf("getFaults()", "getFaults(String)", "clearFaults()", "clearFaults(String)"), overloads.toSet(), "the filter overloads")
        withRecordingStub("""{"rules": []}""") { url, seen ->
            val stub = LikeKitAdmin(url, "key")
            for (name in listOf("getFaults", "clearFaults")) {
                val withTag = LikeKitAdmin::class.java.getMethod(name, String::class.java)
                val thrown = runCatching { withTag.invoke(stub, null) }.exceptionOrNull()
                expect(thrown is java.lang.reflect.InvocationTargetException && thrown.cause is NullPointerException) {
                    "$name(null) from Java: $thrown"
                }
            }
            expectEqual(emptyList<String>(), seen.toList(), "requests sent")
            stub.clearFaults(tag = "checkout-7")
            expectEqual(listOf("DELETE /admin/faults?tag=checkout-7"), seen.toList(), "a tag given is sent")
        }
    }

    t.test("admin client: answers are read tolerantly (an unknown field is ignored; a wrong type or a missing field is still unreadable); a Seed refuses one") {
        // A newer server's answer, with a field this client does not know at every level.
        val newer = """{"seed": 7, "rules": [{"route": "like", "nth": 2, "shadow": true, "action": {"kind": "truncate", "bytes": 3, "chunked": 1}}],""" +
            """ "state": [{"matched": 1, "fired": 1, "acted": 0, "skipped": 0}], "generation": 4}"""
        val expected = FaultRules(listOf(FaultRule(FaultRoute.LIKE, nth = 2, action = FaultAction.Truncate(3))), seed = 7uL, state = listOf(RuleState(1, 1, 0)))
        expectEqual(expected, FaultRules.fromJson(newer), "decoded")
        expectEqual(expected, withStubAnswer(newer) { url -> LikeKitAdmin(url, "key").getFaults() }, "getFaults from a newer server")
        val entry = """{"entries": [$ENTRY_START, "route": "likes", "region": "eu"}], "capacity": 10, "dropped": 0, "oldest_seq": 1}"""
        val journal = withStubAnswer(entry) { url -> LikeKitAdmin(url, "key").requests() }
        expectEqual(listOf(FaultRoute.LIKES), journal.entries.map { it.route }, "requests from a newer server")
        val post = withStubAnswer("""{"id": 1, "count": 2, "version": 3, "recent_likers": [4], "hot": true}""") { url -> LikeKitAdmin(url, "key").getPost(1) }
        expectEqual(StoredPost(1, 2, 3, listOf(4)), post, "getPost from a newer server")

        // Still refused: a known field of the wrong type, a required one missing.
        for (wrong in listOf("""{"rules": [{"route": "like", "nth": "2", "shadow": true}]}""", """{"rules": [{"shadow": true}]}""")) {
            val unreadable = withStubAnswer(wrong) { url -> adminError("getFaults answered $wrong") { LikeKitAdmin(url, "key").getFaults() } }
            expectEqual(200 to "unreadable", unreadable.status to unreadable.code, "(status, code) of $wrong")
        }

        // A seed is what a test writes: a misspelt field is refused, as the server refuses it.
        refused("a seed with a misspelt field") { Seed.fromJson("""{"users": [], "post": []}""") }
        refused("a seed user with a misspelt field") { SeedUser.fromJson("""{"id": 1, "name": "Ana", "freinds": [2]}""") }
        refused("a seed post with a misspelt field") { SeedPost.fromJson("""{"id": 1, "likes": [2]}""") }
    }

    t.test("admin client: getFaults says what each rule has used up, and its answer can be set again as it is") {
        val (ana, post) = server.nextId() to server.nextId()
        admin.createUser(ana, "Ana")
        admin.createPost(post)
        val token = server.token(ana)
        try {
            admin.setFaults(
                FaultRules(
                    listOf(
                        FaultRule(FaultRoute.LIKES, post = post, failNext = 2),
                        FaultRule(FaultRoute.LIKES, post = post, first = 5, latencyMs = 1),
                    ),
                ),
            )
            val statuses = (1..3).map { server.asViewer("GET", "/posts/$post/likes", token).first }
            expectEqual(listOf(503, 503, 200), statuses, "three reads")
            val used = admin.getFaults()
            expectEqual(listOf(2L, 0L), used.rules.map { it.failNext }, "the rules as they were set")
            expectEqual(
                listOf(
                    RuleState(matched = 3, fired = 3, acted = 2, failNextLeft = 0),
                    // The two failed reads are counted, not fired on: the rule before acted.
                    RuleState(matched = 3, fired = 1, acted = 0, firstLeft = 2),
                ),
                used.state,
                "what each rule used up",
            )
            val again = admin.setFaults(used)
            expectEqual(used.rules, again.rules, "the rules set again")
            expectEqual(listOf(RuleState(failNextLeft = 2), RuleState(firstLeft = 5)), again.state, "the counters start over")
            expectEqual(503, server.asViewer("GET", "/posts/$post/likes", token).first, "a read after setting them again")
        } finally {
            admin.clearFaults()
        }
        expectEqual(emptyList<RuleState>(), admin.getFaults().state, "no state without rules")
    }

    t.test("admin client: tests sharing the server add rules with addFaults and remove theirs by tag; a used-up rule stays used up") {
        val (ana, anaPost) = server.user("Ana") to server.post()
        val (ben, benPost) = server.user("Ben") to server.post()
        val (anaToken, benToken) = server.token(ana) to server.token(ben)
        fun like(token: String, post: Long) = server.asViewer("POST", "/posts/$post/like", token).first
        // Other tests' rules, if any, come first and stay.
        val others = admin.getFaults().rules.size
        try {
            // Test B: Ben's first like of his post fails once.
            val b = admin.addFaults(listOf(FaultRule(FaultRoute.LIKE, user = ben, post = benPost, failNext = 1, status = 500, tag = "sharing-b")))
            val benRule = b.rules.last()
            expectEqual("sharing-b", benRule.tag, "the tag comes back")
            expect(b.seed != null) { "the rules in force have a seed: $b" }
            expectEqual(500, like(benToken, benPost), "B's first like")

            // Test A adds its own rule meanwhile.
            val a = admin.addFaults(listOf(FaultRule(FaultRoute.LIKE, user = ana, post = anaPost, failNext = 1, status = 500, tag = "sharing-a")))
            expectEqual(b.seed, a.seed, "the seed stays")
            expectEqual(listOf("sharing-b", "sharing-a"), a.rules.drop(others).map { it.tag }, "A's rule comes last")
            expectEqual(
                listOf(RuleState(matched = 1, fired = 1, acted = 1, failNextLeft = 0), RuleState(failNextLeft = 1)),
                a.state.drop(others),
                "B's rule stays used up; A's is whole",
            )
            expectEqual(200, like(benToken, benPost), "B's next like goes through")
            expectEqual(500, like(anaToken, anaPost), "A's first like")

            // A is done: only its rule goes; B's keeps its counters and the seed stays.
            val left = admin.clearFaults(tag = "sharing-a")
            expectEqual(b.seed, left.seed, "the seed after removing A's rules")
            expectEqual(listOf(benRule), left.rules.drop(others), "the rules left")
            expectEqual(listOf(RuleState(matched = 2, fired = 2, acted = 1, failNextLeft = 0)), left.state.drop(others), "B's counters")
            // The journal names each test's fault by its rule's tag, which stays when a removal moves the rules.
            val faulted = listOf(anaPost, benPost).map { post ->
                admin.requests(RequestFilter(route = FaultRoute.LIKE, post = post)).entries
                    .filter { it.fault != null }
                    .map { it.faultTag to it.faultRule }
            }
            expectEqual(listOf(listOf("sharing-a" to others + 1), listOf("sharing-b" to others)), faulted, "(tag, place) of each faulted like")
            expectEqual(200, like(anaToken, anaPost), "A's like after its rule is gone")
            expectEqual(200, server.asViewer("DELETE", "/posts/$benPost/like", benToken).first, "B unlikes")
            expectEqual(200, like(benToken, benPost), "B likes again: its rule is still used up")

            expectEqual(left.rules, admin.clearFaults(tag = "sharing-a").rules, "a tag no rule has removes nothing")
            val badTag = adminError("a tag with a space") { admin.clearFaults(tag = "two words") }
            expectEqual(400 to "bad_query", badTag.status to badTag.code, "(status, code) of a tag with a space")
            val none = admin.clearFaults(tag = "sharing-b")
            expectEqual(emptyList<FaultRule>(), none.rules.drop(others), "B's rule removed")
            expectEqual(b.seed, none.seed, "the seed stays with no rule of theirs left")
        } finally {
            admin.clearFaults(tag = "sharing-a")
            admin.clearFaults(tag = "sharing-b")
        }
        expectEqual(others, admin.getFaults().rules.size, "the other tests' rules, as they were")
    }

    t.test("admin client: a test reads its own rules with getFaults(tag) and what they did with RequestFilter(faultTag)") {
        val (ana, ben, post) = Triple(server.user("Ana"), server.user("Ben"), server.post())
        val tokens = mapOf(ana to server.token(ana), ben to server.token(ben))
        fun read(user: Long) = server.asViewer("GET", "/posts/$post/likes", tokens.getValue(user)).first
        fun seen(filter: RequestFilter) = admin.requests(filter).entries.map { listOf(it.user, it.status, it.faultTag, it.fault) }
        val others = admin.getFaults().rules.size
        try {
            // A's rule fails Ana's first read; B's only delays Ben's.
            val inForce = admin.addFaults(
                listOf(
                    FaultRule(FaultRoute.LIKES, user = ana, post = post, failNext = 1, status = 500, tag = "by-tag-a"),
                    FaultRule(FaultRoute.LIKES, user = ben, post = post, latencyMs = 1, tag = "by-tag-b"),
                ),
            )
            val (ruleA, ruleB) = inForce.rules.drop(others)
            expectEqual(500, read(ana), "A's rule acts on Ana's first read")
            expectEqual(200, read(ana), "then it is used up")
            expectEqual(200, read(ben), "B's rule delays Ben's read")

            // Each test reads its own rules, with what each has used up, and the seed.
            val mine = admin.getFaults(tag = "by-tag-a")
            expectEqual(listOf(ruleA), mine.rules, "A's rules")
            expectEqual(listOf(RuleState(matched = 2, fired = 2, acted = 1, failNextLeft = 0)), mine.state, "what A's rule used up")
            expectEqual(inForce.seed, mine.seed, "the seed")
            expectEqual(listOf(ruleB), admin.getFaults(tag = "by-tag-b").rules, "B's rules")
            expectEqual(emptyList<FaultRule>(), admin.getFaults(tag = "by-tag-c").rules, "a tag no rule has")

            // And what its rules did, by their tag.
            val a = listOf<Any?>(ana, 500, "by-tag-a", JournalFault.STATUS)
            val b = listOf<Any?>(ben, 200, "by-tag-b", JournalFault.LATENCY)
            expectEqual(listOf(a), seen(RequestFilter(faultTag = "by-tag-a")), "what A's rule did")
            expectEqual(listOf(b), seen(RequestFilter(faultTag = "by-tag-b")), "what B's rule did")
            expectEqual(emptyList<List<Any?>>(), seen(RequestFilter(faultTag = "by-tag-a", user = ben)), "both filters must match")

            // A bad tag is the server's bad_query, and removes nothing.
            val refused = listOf(
                "tag: " to adminError("getFaults, a tag with a space") { admin.getFaults(tag = "two words") },
                "fault_tag: " to adminError("requests, a faultTag with a space") { admin.requests(RequestFilter(faultTag = "two words")) },
                "fault_tag: " to adminError("clearRequests, an empty faultTag") { admin.clearRequests(RequestFilter(faultTag = "")) },
            )
            for ((named, bad) in refused) {
                expectEqual(400 to "bad_query", bad.status to bad.code, "(status, code) of a bad tag")
                expect(bad.message.startsWith(named)) { "message: ${bad.message}" }
            }
            val untouched = listOf<Any?>(ana, 200, null, null)
            expectEqual(listOf(a, untouched, b), seen(RequestFilter(post = post)), "the post's entries")

            // A is done: the entries its rule acted on go; B's and the untouched one stay.
            admin.clearRequests(RequestFilter(faultTag = "by-tag-a"))
            expectEqual(listOf(untouched, b), seen(RequestFilter(post = post)), "after removing A's")
        } finally {
            admin.clearFaults(tag = "by-tag-a")
            admin.clearFaults(tag = "by-tag-b")
            admin.clearRequests(RequestFilter(post = post))
        }
        expectEqual(others, admin.getFaults().rules.size, "the other tests' rules, as they were")
    }

    t.test("admin client: addFaults past 256 rules in force is too_many_rules (409), and adds nothing") {
        val post = server.nextId() // never requested: the rules act on nothing
        val others = admin.getFaults().rules.size
        try {
            val full = admin.addFaults(List(256 - others) { FaultRule(FaultRoute.LIKES, post = post, tag = "full-house") })
            expectEqual(256, full.rules.size, "rules in force")
            val over = adminError("a 257th rule") {
                admin.addFaults(listOf(FaultRule(FaultRoute.LIKES, post = post, tag = "one-too-many")))
            }
            expectEqual(409 to "too_many_rules", over.status to over.code, "(status, code) of one rule too many")
            expect(over.message.contains("256")) { "message: ${over.message}" }
            expectEqual(full, admin.getFaults(), "nothing was added")
        } finally {
            admin.clearFaults(tag = "full-house")
        }
        expectEqual(others, admin.getFaults().rules.size, "rules in force after removing the test's")
    }

    t.test("admin client: clearRequests(filter) removes only the entries it matches; another user's stay") {
        val (ana, ben, post) = Triple(server.user("Ana"), server.user("Ben"), server.post())
        for (user in listOf(ana, ben, ana)) {
            expectEqual(200, server.asViewer("GET", "/posts/$post/likes", server.token(user)).first, "user $user reads post $post")
        }
        expectEqual(listOf(ana, ben, ana), admin.requests(RequestFilter(post = post)).entries.map { it.user }, "the reads")
        admin.clearRequests(RequestFilter(user = ana, post = post))
        val left = admin.requests(RequestFilter(post = post)).entries
        expectEqual(listOf(ben), left.map { it.user }, "Ben's read stays")
        admin.clearRequests(RequestFilter(user = ana))
        expectEqual(left, admin.requests(RequestFilter(post = post)).entries, "nothing more of Ana's to remove")
        admin.clearRequests(RequestFilter(post = post))
        expectEqual(emptyList<JournalEntry>(), admin.requests(RequestFilter(post = post)).entries, "the post's entries removed")
    }

    t.test("admin client: the journal names each request by its X-Request-Id and finds it by that id") {
        val (ana, post) = server.nextId() to server.nextId()
        admin.createUser(ana, "Ana")
        admin.createPost(post)
        val token = server.token(ana)
        val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
        val given = HttpRequest.newBuilder(URI.create("${server.url}/posts/$post/likes"))
            .header("Authorization", "Bearer $token")
            .header("X-Request-Id", "checkout-7f3a")
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build()
        val answer = http.send(given, HttpResponse.BodyHandlers.ofString())
        expectEqual("checkout-7f3a", answer.headers().firstValue("x-request-id").orElse(null), "the id echoed")
        expectEqual(200, server.asViewer("GET", "/posts/$post/likes", token).first, "a read without an id")
        val entries = admin.requests(RequestFilter(post = post)).entries
        expectEqual(2, entries.size, "two reads: $entries")
        val (first, second) = entries
        expectEqual("checkout-7f3a", first.requestId, "the client's id")
        expect(second.requestId.isNotEmpty() && second.requestId != first.requestId) { "the server's own id: $second" }
        expectEqual(listOf(first), admin.requests(RequestFilter(requestId = "checkout-7f3a")).entries, "found by its id")
        expectEqual(listOf(second), admin.requests(RequestFilter(requestId = second.requestId, post = post)).entries, "with another filter")
        expectEqual(
            emptyList<JournalEntry>(),
            admin.requests(RequestFilter(requestId = second.requestId, route = FaultRoute.LIKE)).entries,
            "not a like",
        )
    }

    t.test("admin client: JSON escapes, \\uXXXX, 64-bit numbers and defaults; wrong types and broken text refused") {
        val name = SeedUser.fromJson(
            """{"id": 9223372036854775807, "name": "\"A\" \\ \/ \b\f\n\r\t \u00e9\uD83D\uDE00 \u0001 é😀", "friends": []}""",
        )
        expectEqual(SeedUser(Long.MAX_VALUE, "\"A\" \\ / \b\u000C\n\r\t é😀 \u0001 é😀"), name, "decoded")
        expectEqual(name, SeedUser.fromJson(name.toJson()), "decoded again from ${name.toJson()}")
        // The server reads what the client writes the same way: the name comes
        // back in a friend's "Liked by" list. (Without its control characters,
        // which no name may hold: a name is one line of display text.)
        val shown = name.name.filter { !it.isISOControl() }
        val (odd, viewer, post) = Triple(server.user(shown), server.nextId(), server.nextId())
        admin.seed(Seed(users = listOf(SeedUser(viewer, "Viewer", friends = listOf(odd))), posts = listOf(SeedPost(post, likers = listOf(odd)))))
        val (status, body) = server.asViewer("GET", "/posts/$post/likes", server.token(viewer))
        expectEqual(200, status, "GET /posts/$post/likes: $body")
        expectEqual(listOf(shown), (TestJson.parse(body) as Map<*, *>)["friends"], "the friends who like it")
        val refused = runCatching { admin.createUser(server.nextId(), name.name) }.exceptionOrNull()
        expectEqual("bad_name", (refused as? LikeKitAdminException)?.code, "a name with control characters: $refused")

        val seed = FaultRules.fromJson("""{"seed": 18446744073709551615, "rules": []}""")
        expectEqual(ULong.MAX_VALUE, seed.seed, "an unsigned 64-bit seed")
        expectEqual("""{"seed":18446744073709551615,"rules":[]}""", seed.toJson(), "the seed written")

        // Only what was set or differs from its default is written.
        expectEqual("""{"route":"like"}""", FaultRule(FaultRoute.LIKE).toJson(), "a bare rule")
        expectEqual(
            """{"route":"*","probability":0.5,"phase":"after","status":429,"action":{"kind":"slow_body","bytes":3,"interval_ms":20}}""",
            FaultRule(FaultRoute.ALL, probability = 0.5, phase = FaultPhase.AFTER, status = 429, action = FaultAction.SlowBody(3, 20)).toJson(),
            "a rule with a few fields",
        )
        expectEqual("""{"route":"like","tag":"checkout-7"}""", FaultRule(FaultRoute.LIKE, tag = "checkout-7").toJson(), "a tagged rule")
        val server503 = FaultRule.fromJson("""{"route": "likes", "latency_ms": 0, "error_rate": 1, "status": 503}""")
        expectEqual(FaultRule(FaultRoute.LIKES, errorRate = 1.0), server503, "a rule as the server writes it")

        refused("a route that is a number") { FaultRule.fromJson("""{"route": 5}""") }
        refused("an unknown route") { FaultRule.fromJson("""{"route": "sideways"}""") }
        refused("a rule without a route") { FaultRule.fromJson("""{"nth": 1}""") }
        refused("nth as a string") { FaultRule.fromJson("""{"route": "like", "nth": "1"}""") }
        refused("nth with a fraction") { FaultRule.fromJson("""{"route": "like", "nth": 1.5}""") }
        refused("a tag that is a number") { FaultRule.fromJson("""{"route": "like", "tag": 5}""") }
        refused("a null latency") { FaultRule.fromJson("""{"route": "like", "latency_ms": null}""") }
        refused("an unknown action") { FaultAction.fromJson("""{"kind": "explode"}""") }
        refused("a truncate without bytes") { FaultAction.fromJson("""{"kind": "truncate"}""") }
        refused("a status body that is not JSON") { FaultAction.Status(500, body = "not json") }
        refused("post id 0") { SeedPost.fromJson("""{"id": 0}""") }
        refused("a stored post without recent_likers") { StoredPost.fromJson("""{"id": 1, "count": 0, "version": 0}""") }
        refused("a stored post with a negative count") { StoredPost.fromJson("""{"id": 1, "count": -1, "version": 0, "recent_likers": []}""") }
        refused("a stored user whose friends are names") { StoredUser.fromJson("""{"id": 1, "name": "Ana", "friends": ["Ben"]}""") }
        refused("a lower-case method") { FaultMethod.fromJson("\"get\"") }
        refused("an entry without in_flight") {
            JournalEntry.fromJson("""{"seq": 1, "request_id": "r", "at_ms": 1, "duration_ms": 1, "method": "GET", "route": "likes", "path": "/", "posts": []}""")
        }
        refused("an entry without request_id") {
            JournalEntry.fromJson("""{"seq": 1, "at_ms": 1, "duration_ms": 1, "method": "GET", "route": "likes", "path": "/", "posts": [], "in_flight": false}""")
        }
        refused("a rule state without acted") { RuleState.fromJson("""{"matched": 1, "fired": 1}""") }
        refused("a state that is not a list") { FaultRules.fromJson("""{"rules": [], "state": {"matched": 1}}""") }
        refused("a journal whose capacity is a string") { Journal.fromJson("""{"entries": [], "capacity": "10", "dropped": 0}""") }
        refused("a seed that is an array") { Seed.fromJson("[]") }
        for (broken in listOf("", "{", """{"users": [}""", "{} x", """{"users": [], "users": []}""", "01", """{"id": 1,}""", "\"\\x\"", "[1 2]")) {
            refused("the text $broken") { Seed.fromJson(broken) }
        }
        expectEqual(Seed(), Seed.fromJson(""" { "users" : [ ] } """), "an empty seed, with spaces")
    }
}
