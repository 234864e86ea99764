// The conformance suite (sdk-core/conformance/scenarios.json, whose path is
// in LIKEKIT_CONFORMANCE) replayed through the Kotlin bindings: each
// scenario on a client over a ScriptedServer, step by step, as
// `run_on_client` in sdk-core/tests/conformance.rs does it. Part of the test
// program in LikeKitTest.kt, which calls conformanceTests.
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.ScriptedFailure
import com.likekit.ScriptedServer
import com.likekit.code
import java.io.File
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.runBlocking

/** How long the runner waits for an expected view, event or call, in ms. */
private const val SETTLE_MS = 2_000L

fun conformanceTests(t: Harness) {
    val (text, scenarios) = try {
        val text = conformanceText()
        text to scenariosOf(text)
    } catch (e: Throwable) {
        t.test("conformance: the scenario file is read") { throw e }
        return
    }
    for (scenario in scenarios) {
        t.test("conformance: ${scenario.name}") {
            runScenario(scenario)?.let { throw AssertionError(it) }
        }
    }
    t.test("conformance: the runner fails a scenario whose expected count was changed") {
        val scenario = withAWrongCount(scenariosOf(text).first())
        val error = runScenario(scenario) ?: throw AssertionError("the runner passed ${scenario.name} with a wrong count")
        expect(error.contains("view: expected")) { "the mismatch does not name the view: $error" }
        expect(error.contains(scenario.name)) { "the mismatch does not name the scenario: $error" }
    }
}

/** The scenario file's text, from the path in LIKEKIT_CONFORMANCE. */
private fun conformanceText(): String {
    val path = System.getenv("LIKEKIT_CONFORMANCE")
        ?: throw AssertionError("LIKEKIT_CONFORMANCE is not set (run through `cargo xtask test --only kotlin`)")
    return File(path).readText()
}

/** One scenario of the file, its JSON as read (maps, lists, Longs). */
private class ConformanceScenario(val name: String, val maxRetries: Long, val steps: List<Map<*, *>>)

private fun scenariosOf(text: String): List<ConformanceScenario> {
    val suite = TestJson.parse(text) as Map<*, *>
    expectEqual(1L, suite["format"], "the scenario file's format")
    val scenarios = (suite["scenarios"] as List<*>).map { s ->
        val scenario = s as Map<*, *>
        ConformanceScenario(
            name = scenario["name"] as String,
            maxRetries = (scenario["max_retries"] as Long?) ?: 0L,
            steps = (scenario["steps"] as List<*>).map { it as Map<*, *> },
        )
    }
    expect(scenarios.isNotEmpty()) { "the scenario file has no scenarios" }
    return scenarios
}

/** `scenario` with its last expected view's count one higher. */
private fun withAWrongCount(scenario: ConformanceScenario): ConformanceScenario {
    val step = scenario.steps.last { (it["view"] as? Map<*, *>)?.containsKey("count") == true }
    @Suppress("UNCHECKED_CAST")
    val view = step["view"] as MutableMap<String, Any?>
    view["count"] = (view["count"] as Long) + 1
    return scenario
}

/** A view as the scenarios write it. */
private fun viewJson(v: PostView?): Any? = v?.let {
    mapOf(
        "post" to it.postId,
        "liked" to it.liked,
        "count" to it.count,
        "pending" to it.pending,
        "line" to it.line.text,
        "error" to it.error?.code,
    )
}

/** Records every event any post's observers hear, as the scenarios write it. */
private class ConformanceEventLog : LikeObserver {
    val heard = CopyOnWriteArrayList<Any?>()

    override fun onChange(view: PostView) {
        heard.add(mapOf("changed" to viewJson(view)))
    }

    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {
        heard.add(mapOf("failed" to mapOf("post" to postId, "wanted" to wanted, "error" to error.code)))
    }
}

private fun Map<*, *>.long(key: String): Long =
    this[key] as? Long ?: throw AssertionError("$key is not a whole number in ${TestJson.write(this)}")

private fun failureOf(failure: Any?): ScriptedFailure = when (failure) {
    "network" -> ScriptedFailure.Network
    "timeout" -> ScriptedFailure.Timeout
    "unreadable" -> ScriptedFailure.Unreadable
    is Map<*, *> -> ScriptedFailure.Status(
        status = failure.long("status").toUShort(),
        retryAfterMs = failure["retry_after_ms"] as Long?,
        code = failure["code"] as String?,
    )
    else -> throw AssertionError("unknown failure ${TestJson.write(failure)}")
}

/**
 * Runs `scenario` on a client over a ScriptedServer: null when every step
 * gave the view, events and calls it expects, else what differed first.
 */
private fun runScenario(scenario: ConformanceScenario): String? {
    val options = LikeClientOptions(
        retryMinDelayMs = 1,
        retryMaxDelayMs = 1,
        retryJitter = false,
        maxRetries = scenario.maxRetries,
    )
    return ScriptedServer().use { server ->
        LikeClient.scripted(server, options).use { client ->
            val log = ConformanceEventLog()
            client.subscribeAll(log).use { runSteps(scenario, server, client, log) }
        }
    }
}

private fun runSteps(scenario: ConformanceScenario, server: ScriptedServer, client: LikeClient, log: ConformanceEventLog): String? {
    // Scenario call number -> its post.
    val posts = HashMap<Long, Long>()
    var taken = 0
    for ((index, step) in scenario.steps.withIndex()) {
        fun broken(what: String): Nothing = throw AssertionError("scenario \"${scenario.name}\", step $index: $what")
        val expectedView = step["view"]
        val expectedEvents = step["events"] as List<*>
        val expectedCalls = (step["calls"] as List<*>).map { it as String }
        fun postOf(call: Long): Long = posts[call] ?: broken("call #$call was never sent")
        // The post of an answered or failed call, whose view is looked at
        // again once everything settled.
        var answered: Long? = null
        var view: Any? = when (val act = step["do"]) {
            "read" -> {
                val post = step.long("post")
                val likes = step["likes"] as Map<*, *>
                server.setPost(
                    post,
                    likes.long("count"),
                    likes["liked_by_me"] as Boolean,
                    (likes["friends"] as List<*>).map { it as String },
                    likes.long("version"),
                )
                viewJson(runBlocking { client.refresh(post) })
            }
            "tap" -> viewJson(client.setLiked(step.long("post"), step["liked"] as Boolean))
            "answer" -> {
                val call = step.long("call")
                val post = postOf(call)
                val state = step["state"] as Map<*, *>
                if (!server.answer(call, state.long("count"), state["liked_by_me"] as Boolean, state.long("version"))) {
                    broken("call #$call is not waiting")
                }
                answered = post
                settleView(client, post, expectedView)
            }
            "fail" -> {
                val call = step.long("call")
                val post = postOf(call)
                if (!server.fail(call, failureOf(step["failure"]))) broken("call #$call is not waiting")
                answered = post
                settleView(client, post, expectedView)
            }
            else -> broken("unknown step ${TestJson.write(act)}")
        }
        // The expected events, or as many as come within SETTLE_MS; then
        // the expected calls, or what is out after SETTLE_MS.
        val deadline = System.currentTimeMillis() + SETTLE_MS
        while (log.heard.size < taken + expectedEvents.size && System.currentTimeMillis() < deadline) {
            Thread.sleep(1)
        }
        var calls: List<String>
        while (true) {
            calls = server.calls().map { it.text }
            if (calls == expectedCalls || System.currentTimeMillis() >= deadline) break
            Thread.sleep(1)
        }
        for (call in server.calls()) posts[call.id] = call.postId
        if (calls.isEmpty()) {
            // Nothing is out: once idle, every event has been heard.
            runBlocking { client.waitIdle(SETTLE_MS) }
        }
        val heard = log.heard.toList()
        val events = heard.subList(taken, heard.size)
        taken = heard.size
        // The first look may have been the view from before the answer.
        answered?.let { view = viewJson(client.view(it)) }

        val wrong = ArrayList<String>()
        if (view != expectedView) {
            wrong.add("view: expected ${TestJson.write(expectedView)} got ${TestJson.write(view)}")
        }
        if (events != expectedEvents) {
            wrong.add("events: expected ${TestJson.write(expectedEvents)} got ${TestJson.write(events)}")
        }
        if (calls != expectedCalls) {
            wrong.add("calls: expected ${TestJson.write(expectedCalls)} got ${TestJson.write(calls)}")
        }
        if (wrong.isNotEmpty()) return "scenario \"${scenario.name}\", step $index: ${wrong.joinToString("; ")}"
    }
    return null
}

/** The post's view, as the scenarios write it, once it is `expected`, or as it is after SETTLE_MS. */
private fun settleView(client: LikeClient, post: Long, expected: Any?): Any? {
    val deadline = System.currentTimeMillis() + SETTLE_MS
    while (true) {
        val view = viewJson(client.view(post))
        if (view == expected || System.currentTimeMillis() >= deadline) return view
        Thread.sleep(1)
    }
}
