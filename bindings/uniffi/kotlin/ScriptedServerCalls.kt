// Waiting for a ScriptedServer's calls from a test. Shipped beside the
// generated bindings, in their package.
package com.likekit

import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/**
 * The calls waiting for an answer, oldest first, once at least [count]
 * are waiting: what to read after a tap, instead of [ScriptedServer.calls].
 *
 * A tap returns before its call goes out: the call reaches the server
 * from LikeKit's own threads a moment later, so `calls()` read right
 * after `setLiked` or `toggle` is sometimes still empty, and
 * `server.calls().single()` there makes a flaky test.
 *
 * ```
 * client.setLiked(42L, true)
 * val call = server.awaitCalls().single()
 * server.fail(call.id, ScriptedFailure.Status(503u, null, null))
 * ```
 *
 * The wait is [ScriptedServer.waitCalls] (the same in every language),
 * with a [Duration] and a failure when too few came. It waits in real
 * time, on LikeKit's threads, so it works the same in `runTest` (whose
 * virtual time would otherwise skip the wait).
 *
 * @throws IllegalArgumentException for a negative [count].
 * @throws IllegalStateException when fewer than [count] are waiting after
 *   [timeout], naming the calls that are.
 */
suspend fun ScriptedServer.awaitCalls(count: Int = 1, timeout: Duration = 5.seconds): List<ScriptedCall> {
    require(count >= 0) { "count must not be negative; got $count" }
    val calls = waitCalls(count.toUInt(), waitMillis(timeout))
    check(calls.size >= count) {
        "$count calls waited for, ${calls.size} waiting after $timeout: ${calls.map { it.text }}"
    }
    return calls
}
