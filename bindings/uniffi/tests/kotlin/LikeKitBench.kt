// `cargo xtask bench --only kotlin`: how long a tap takes from Kotlin to its
// observer callback, through the generated bindings and the release library.
//
// The server holds every like and unlike (injected latency), so no answer
// arrives during the run: each callback measured is the tap's own change,
// delivered on the tapping thread before the tap returns. Prints
// `likekit-metric kotlin_tap_to_callback_us=<median>` (and the p99).
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import kotlin.system.exitProcess
import kotlinx.coroutines.runBlocking

fun main() {
    val server = TestServer.fromEnv()
    val user = server.user("Bench")
    val post = server.post()
    server.admin.setFaults(
        FaultRules(listOf(FaultRule(FaultRoute.LIKE, latencyMs = 600_000), FaultRule(FaultRoute.UNLIKE, latencyMs = 600_000))),
    )

    var calledAt = 0L
    val observer = object : LikeObserver {
        override fun onChange(view: PostView) {
            if (calledAt == 0L) calledAt = System.nanoTime()
        }
        override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
    }
    val warmup = 5_000
    val runs = 20_000
    val samples = LongArray(runs)
    var missed = 0
    LikeClient(server.url, FixedToken(server.token(user)), LikeClientOptions()).use { client ->
        client.subscribe(post, observer).use {
            for (i in -warmup until runs) {
                calledAt = 0L
                val tapped = System.nanoTime()
                client.toggle(post)
                if (calledAt == 0L) {
                    missed++
                    continue
                }
                if (i >= 0) samples[i] = calledAt - tapped
            }
        }
        runBlocking { client.shutdown(0) }
    }
    server.admin.clearFaults()
    if (missed > 0) {
        println("error: $missed taps had no callback on the tapping thread")
        exitProcess(1)
    }
    samples.sort()
    val median = samples[runs / 2] / 1_000.0
    val p99 = samples[runs * 99 / 100] / 1_000.0
    println("kotlin tap to callback over $runs taps: median %.2f µs, p99 %.2f µs".format(median, p99))
    println("likekit-metric kotlin_tap_to_callback_us=%.3f kotlin_tap_to_callback_p99_us=%.3f".format(median, p99))
}
