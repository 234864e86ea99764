// Kotlin faces of LikeClient for coroutines and Compose: a Flow of one
// post's views, a StateFlow for a screen, a Flow of failures, and
// observers called on an Executor or dispatcher the app chooses, and a
// callback error listener from a function. Shipped beside the
// generated bindings, in their package, and built with them; it needs
// kotlinx-coroutines-core.
package com.likekit

import java.util.concurrent.Executor
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.asExecutor
import kotlinx.coroutines.channels.BufferOverflow
import kotlinx.coroutines.channels.ProducerScope
import kotlinx.coroutines.channels.awaitClose
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.flow.callbackFlow
import kotlinx.coroutines.flow.conflate
import kotlinx.coroutines.flow.distinctUntilChanged
import kotlinx.coroutines.flow.stateIn
import kotlinx.coroutines.isActive

/**
 * One post's views: the view the client holds now (when it knows the post),
 * then every change — a tap's optimistic view at once, the confirmed one
 * when the server answers, a rollback, a read.
 *
 * Cold and conflated: each collector subscribes when it starts and
 * unsubscribes when its coroutine is cancelled (the subscription is the
 * only thing held); a slow collector skips to the latest view rather than
 * queueing every one. Views arrive in the collector's context: collect in
 * a main-thread scope (`lifecycleScope`, `collectAsState()`) to draw them.
 * The flow fails with [LikeException.InvalidId] for an id outside
 * 1..2⁶³−1.
 *
 * A client already closed (`close()`, at sign-out) ends the flow: a
 * collector that starts after it completes at once, with no value and no
 * exception, so a screen still collecting as the viewer signs out does not
 * crash. A collector cancelled before it ran subscribes nothing. One still
 * collecting when the client is closed hears nothing more: cancel it first
 * (see the sign-out order in the README).
 *
 * ```
 * val view by client.views(42L).collectAsState(initial = null)
 * ```
 */
fun LikeClient.views(postId: Long): Flow<PostView> =
    callbackFlow {
        // Orders the first view with the changes delivered on LikeKit's
        // threads (which hold no lock of the client's while they call the
        // observer, so reading the view under this one cannot deadlock).
        val order = Any()
        val client = this@views
        whileCollected(
            client,
            subscribe = {
                client.subscribe(
                    postId,
                    object : LikeObserver {
                        override fun onChange(view: PostView) {
                            synchronized(order) { trySend(view) }
                        }

                        override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
                    },
                )
            },
            then = {
                // After subscribing, so no change falls between the two; and
                // under the lock, so a change delivered meanwhile comes before
                // the view read here (which is then as new) or after it: the
                // newest always comes last.
                synchronized(order) { client.view(postId)?.let { trySend(it) } }
            },
        )
    }.conflate().distinctUntilChanged()

/**
 * One post's view as a [StateFlow] shared by the collectors of [scope] (a
 * ViewModel's `viewModelScope`, say): its value starts as the view the
 * client holds now — null while it knows nothing of the post (read it with
 * [LikeClient.refresh]) — and follows [views] while [started] keeps it
 * subscribed (by default while someone collects, and five seconds more to
 * ride out a configuration change).
 *
 * Its [StateFlow.value] is the view as of the last change it heard, and
 * it hears changes only while [started] keeps it subscribed: with
 * `WhileSubscribed`, while no one collects it (a screen in the back stack)
 * it may be stale. To decide a tap, read [LikeClient.view] (what the client
 * holds now), or tap with [LikeClient.toggle], which reads it itself.
 *
 * A client already closed (`close()`, at sign-out) gives a [StateFlow]
 * whose value is null and stays null, as its [views] end at once: a
 * ViewModel made for a screen as the viewer signs out (during an exit
 * transition, say) gets nothing to draw rather than an exception in its
 * constructor. Unlike every call on a closed client, it does not throw
 * `IllegalStateException`.
 *
 * @throws LikeException.InvalidId for an id outside 1..2⁶³−1 (on a client
 *   not closed).
 */
fun LikeClient.viewState(
    postId: Long,
    scope: CoroutineScope,
    started: SharingStarted = SharingStarted.WhileSubscribed(5_000),
): StateFlow<PostView?> = views(postId).stateIn(scope, started, viewUnlessClosed(postId))

/** [LikeClient.view], or null once `close()` has destroyed the client. */
private fun LikeClient.viewUnlessClosed(postId: Long): PostView? =
    try {
        view(postId)
    } catch (destroyed: IllegalStateException) {
        // What a call on a destroyed client throws; any other stays.
        if (!uniffiIsDestroyed) throw destroyed
        null
    }

/** A like or unlike that did not save, after any retries: tell the viewer. */
data class LikeFailure(
    /** The post. */
    val postId: Long,
    /** True: the like did not save; false: the unlike did not. */
    val wanted: Boolean,
    /** Why. */
    val error: LikeException,
)

/**
 * Every failure of every post of this client, as they happen ("your like
 * didn't save"): one subscription while collected, cancelled with the
 * collecting coroutine. Not conflated: each failure arrives (up to 64
 * waiting for a slow collector; past that the oldest are dropped first).
 *
 * Cold: it subscribes once the collecting coroutine has started running,
 * some time after `launch`, and hears nothing from before. So
 * [LikeClient.restore]'s `Expired` failures may come before it listens:
 * take them from the [RestoreReport.expired] that `restore()` returns, or
 * hear them through [LikeClient.subscribeAll], which is subscribed when it
 * returns, called before `restore()`.
 *
 * As [views], a client already closed ends the flow at once, normally,
 * and a collector cancelled before it ran subscribes nothing.
 */
val LikeClient.failures: Flow<LikeFailure>
    get() =
        callbackFlow {
            val client = this@failures
            whileCollected(client, subscribe = {
                client.subscribeAll(
                    object : LikeObserver {
                        override fun onChange(view: PostView) {}

                        override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {
                            trySend(LikeFailure(postId, wanted, error))
                        }
                    },
                )
            })
        }.buffer(64, BufferOverflow.DROP_OLDEST)

/**
 * The producer of [views] and [failures]: [subscribe], then [then], then
 * wait until the collector goes; the subscription made, if any, is
 * cancelled however this ends.
 *
 * `callbackFlow` starts its producer even when the collector was cancelled
 * before it ran (a screen left as it opened, around sign-out): such a
 * producer subscribes nothing. A client that `close()` has destroyed —
 * before the producer ran, or while it was subscribing or reading — ends
 * the flow normally instead of throwing `IllegalStateException` into the
 * collector's scope (uncaught, on Android, it ends the app).
 */
private suspend fun <T> ProducerScope<T>.whileCollected(
    client: LikeClient,
    subscribe: () -> LikeSubscription,
    then: () -> Unit = {},
) {
    var subscription: LikeSubscription? = null
    try {
        if (isActive) {
            try {
                subscription = subscribe()
                then()
            } catch (destroyed: IllegalStateException) {
                // What a call on a destroyed client throws; any other stays.
                if (!client.uniffiIsDestroyed) throw destroyed
                channel.close()
            }
        }
        // Returns once the channel is closed (above, or by the collector);
        // throws at once in a cancelled producer.
        awaitClose()
    } finally {
        subscription?.close()
    }
}

/**
 * This observer, called on [executor] instead of LikeKit's own threads —
 * for example `ContextCompat.getMainExecutor(context)` for the main thread,
 * or a single-thread executor. Calls keep their order when the executor
 * runs tasks in order (the main thread and single-thread executors do).
 *
 * ```
 * subscription = client.subscribe(42L, observer.on(mainExecutor))  // keep it: collected, it ends
 * ```
 */
fun LikeObserver.on(executor: Executor): LikeObserver {
    val inner = this
    return object : LikeObserver {
        override fun onChange(view: PostView) {
            executor.execute { inner.onChange(view) }
        }

        override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {
            executor.execute { inner.onFailure(postId, wanted, error) }
        }
    }
}

/**
 * A [CallbackDispatcher] for [LikeClientOptions.callbackDispatcher] that
 * runs every observer call of the client on this executor, in order — for
 * example `ContextCompat.getMainExecutor(context)`, or a single-thread
 * executor. The tap's own change then arrives after the tap returns.
 *
 * ```
 * val client = LikeClient(url, tokens, LikeClientOptions(callbackDispatcher = mainExecutor.asCallbackDispatcher()))
 * ```
 */
fun Executor.asCallbackDispatcher(): CallbackDispatcher {
    val executor = this
    return object : CallbackDispatcher {
        override fun dispatch(call: DispatchedCall) {
            executor.execute { call.use { it.run() } }
        }
    }
}

/**
 * A [CallbackDispatcher] that runs every observer call of the client on
 * this coroutine dispatcher, in order — `Dispatchers.Main` for the main
 * thread:
 *
 * ```
 * LikeClientOptions(callbackDispatcher = Dispatchers.Main.asCallbackDispatcher())
 * ```
 */
fun CoroutineDispatcher.asCallbackDispatcher(): CallbackDispatcher = asExecutor().asCallbackDispatcher()

/**
 * A [CallbackErrorListener] for [LikeClientOptions.callbackErrorListener]
 * from a function: it hears what the client's observers and token
 * providers throw, which would otherwise go to native standard error
 * (discarded on Android). `callback` names what threw (`a TokenProvider`,
 * `a LikeObserver in on_change`, …); `reason` is the exception's text with
 * its stack trace. It is called on the thread where the callback threw:
 * return quickly.
 *
 * ```
 * LikeClientOptions(callbackErrorListener = CallbackErrorListener { callback, reason ->
 *     Log.e("LikeKit", "$callback threw: $reason")
 * })
 * ```
 */
fun CallbackErrorListener(onError: (callback: String, reason: String) -> Unit): CallbackErrorListener =
    object : CallbackErrorListener {
        override fun onCallbackError(callback: String, reason: String) = onError(callback, reason)
    }
