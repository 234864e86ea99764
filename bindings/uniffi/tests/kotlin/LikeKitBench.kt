// `cargo xtask bench --only kotlin`: how long a tap takes from Kotlin to its
// observer callback, and to a Flow collector on another thread, through the
// generated bindings and the release library.
//
// The server holds every like and unlike (injected latency), so no answer
// arrives during the run: each callback measured is the tap's own change,
// delivered on the tapping thread before the tap returns; each Flow
// emission is that change passed through `views()` to a collector on its
// own thread (a hand-off, as to an app's main thread). Prints
// `likekit-metric kotlin_tap_to_callback_us=<median>` and
// `kotlin_tap_to_flow_us=<median>` (and their p99).
package com.likekit.tests

import com.likekit.LikeClient
import com.likekit.LikeClientOptions
import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.testing.FaultRoute
import com.likekit.testing.FaultRule
import com.likekit.testing.FaultRules
import com.likekit.views
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.cancel
import kotlinx.coroutines.flow.launchIn
import kotlinx.coroutines.flow.onEach
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
    if (missed > 0) {
        println("error: $missed taps had no callback on the tapping thread")
        exitProcess(1)
    }
    report("callback", samples)
    report("flow", tapToFlow(server, FixedToken(server.token(user)), server.post(), warmup, runs))
    server.admin.clearFaults()
}

/**
 * Tap to the moment a `views()` collector on its own thread receives the
 * tap's view, one tap at a time (each waits for its emission).
 */
fun tapToFlow(server: TestServer, tokens: FixedToken, post: Long, warmup: Int, runs: Int): LongArray {
    val samples = LongArray(runs)
    val received = AtomicLong(0)
    val receivedAt = AtomicLong(0)
    val thread = Executors.newSingleThreadExecutor { Thread(it, "collector") }
    val scope = CoroutineScope(thread.asCoroutineDispatcher())
    LikeClient(server.url, tokens, LikeClientOptions()).use { client ->
        runBlocking { client.refresh(post) }
        client.views(post).onEach {
            receivedAt.set(System.nanoTime())
            received.incrementAndGet()
        }.launchIn(scope)
        while (received.get() == 0L) Thread.onSpinWait() // the current view
        for (i in -warmup until runs) {
            val before = received.get()
            val tapped = System.nanoTime()
            client.toggle(post)
            while (received.get() == before) Thread.onSpinWait()
            if (i >= 0) samples[i] = receivedAt.get() - tapped
        }
        scope.cancel()
        runBlocking { client.shutdown(0) }
    }
    thread.shutdown()
    return samples
}

/** Prints the median and p99 of `samples` (ns) as `kotlin_tap_to_<what>_us`. */
fun report(what: String, samples: LongArray) {
    samples.sort()
    val median = samples[samples.size / 2] / 1_000.0
    val p99 = samples[samples.size * 99 / 100] / 1_000.0
    println("kotlin tap to $what over ${samples.size} taps: median %.2f µs, p99 %.2f µs".format(median, p99))
    println("likekit-metric kotlin_tap_to_${what}_us=%.3f kotlin_tap_to_${what}_p99_us=%.3f".format(median, p99))
}
