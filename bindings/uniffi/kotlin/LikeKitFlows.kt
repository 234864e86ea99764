// Kotlin faces of LikeClient for coroutines and Compose: a Flow of one
// post's views, a StateFlow for a screen, a Flow of failures, a read that
// never throws, observers called on an Executor or dispatcher the app
// chooses, and a callback error listener from a function. Shipped beside
// the generated bindings, in their package, and built with them; it needs
// kotlinx-coroutines-core.
package com.likekit

import java.lang.ref.WeakReference
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
        val client = this@views
        whileCollected(client) {
            // The view held now comes first, in order with the changes
            // (a change still on its way when this subscribes comes before
            // it, never after): the newest always comes last.
            client.subscribeWithView(
                postId,
                object : LikeObserver {
                    override fun onChange(view: PostView) {
                        trySend(view)
                    }

                    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {}
                },
            )
        }
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

/**
 * What the post shows now, as [LikeClient.view] reads it, or null where
 * `view` would throw: null while the client knows nothing of the post (as
 * `view`), once `close()` has destroyed the client (where `view` throws
 * `IllegalStateException`), and for an id outside 1..2⁶³−1 (where it
 * throws [LikeException.InvalidId]).
 *
 * For code that may run as the viewer signs out, when nothing can catch
 * what it throws: a composable's first view during an exit transition, a
 * ViewModel's initial state.
 *
 * ```
 * val initial = remember(client, postId) { client.viewOrNull(postId) }
 * val view by remember(client, postId) { client.views(postId) }.collectAsState(initial)
 * ```
 */
fun LikeClient.viewOrNull(postId: Long): PostView? =
    try {
        viewUnlessClosed(postId)
    } catch (invalid: LikeException.InvalidId) {
        null
    }

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
 * The producer of [views] and [failures]: [subscribe], then wait until the
 * collector goes; the subscription made, if any, is cancelled however this
 * ends.
 *
 * `callbackFlow` starts its producer even when the collector was cancelled
 * before it ran (a screen left as it opened, around sign-out): such a
 * producer subscribes nothing. A client that `close()` has destroyed —
 * before the producer ran, or while it was subscribing — ends
 * the flow normally instead of throwing `IllegalStateException` into the
 * collector's scope (uncaught, on Android, it ends the app).
 */
private suspend fun <T> ProducerScope<T>.whileCollected(
    client: LikeClient,
    subscribe: () -> LikeSubscription,
) {
    var subscription: LikeSubscription? = null
    try {
        if (isActive) {
            try {
                subscription = subscribe()
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
 * Calls [observer] with every change of [postId] and every failure of the
 * viewer's tap on it, as [LikeClient.subscribe] does, but on [executor]
 * instead of LikeKit's own threads — for example
 * `ContextCompat.getMainExecutor(context)` for the main thread, or a
 * single-thread executor. Calls keep their order when the executor runs
 * tasks in order (the main thread and single-thread executors do).
 *
 * Each call is a task on [executor] that looks at the subscription before
 * it calls [observer]: once the subscription is closed (`close()`,
 * `cancel()`, or taken by the garbage collector), the tasks still waiting
 * in the executor's queue call nothing. Close it on the executor's thread,
 * as a screen on the main thread does, and no call comes after `close()`
 * returns; closed from another thread, a call already under way may
 * still finish.
 *
 * What [observer] throws stays in its task, never thrown on the
 * executor's thread (on Android's main thread that would end the app):
 * it goes to [errorListener] — give it the listener of the client's
 * [LikeClientOptions.callbackErrorListener] — named as LikeKit names what
 * an observer throws (`a LikeObserver in on_change`, `… in on_failure`)
 * with the exception's text and stack trace, on the executor's thread;
 * without one, that line goes to `System.err` (on Android, logcat's
 * `System.err` tag). The next call comes as usual. An `Error` (out of
 * memory, say) is not caught.
 *
 * The subscription, like any, ends once nothing refers to it: keep it in
 * a field for as long as [observer] should hear.
 *
 * ```
 * subscription = client.subscribe(42L, mainExecutor, observer, errorListener)
 * // later, on the main thread: subscription.close()
 * ```
 *
 * @throws LikeException.InvalidId for an id outside 1..2⁶³−1; nothing is
 *   watched.
 */
fun LikeClient.subscribe(
    postId: Long,
    executor: Executor,
    observer: LikeObserver,
    errorListener: CallbackErrorListener? = null,
): LikeSubscription {
    val relay = ExecutorRelay(observer, executor, errorListener)
    return subscribe(postId, relay).also(relay::serve)
}

/**
 * Calls [observer] with the changes and failures of every post, as
 * [LikeClient.subscribeAll] does, but on [executor]: as
 * [subscribe] with an executor, tasks still waiting once the subscription
 * is closed call nothing, and what [observer] throws goes to
 * [errorListener] (else `System.err`), never up the executor's thread.
 *
 * ```
 * failures = client.subscribeAll(mainExecutor, snackbarObserver, errorListener)
 * ```
 */
fun LikeClient.subscribeAll(
    executor: Executor,
    observer: LikeObserver,
    errorListener: CallbackErrorListener? = null,
): LikeSubscription {
    val relay = ExecutorRelay(observer, executor, errorListener)
    return subscribeAll(relay).also(relay::serve)
}

/**
 * This observer, called on [executor] instead of LikeKit's own threads.
 * What it throws goes to `System.err`, not up the executor's thread. But
 * the observer it returns cannot know when its subscription is closed, so
 * calls already waiting in the executor's queue still run after `close()`:
 * use `client.subscribe(postId, executor, observer)` or
 * `client.subscribeAll(executor, observer)`, whose tasks look at the
 * subscription first.
 */
@Deprecated(
    "Calls already queued on the executor still run after the subscription is closed. " +
        "Use client.subscribe(postId, executor, observer) or client.subscribeAll(executor, observer).",
)
fun LikeObserver.on(executor: Executor): LikeObserver = ExecutorRelay(this, executor, null)

/**
 * [observer] called on [executor]: each call a task that first looks at the
 * subscription it serves ([serve]) and calls nothing once that has ended,
 * and keeps what [observer] throws from the executor's thread.
 */
private class ExecutorRelay(
    private val observer: LikeObserver,
    private val executor: Executor,
    private val errorListener: CallbackErrorListener?,
) : LikeObserver {
    /**
     * The subscription served, once `subscribe` has returned it (none
     * before: it is live, since no one can have closed it yet). Weak: the
     * subscription holds this relay (through the core and the generated
     * code's table of callbacks), so a strong reference here would keep a
     * subscription the app let go from ever being collected.
     */
    @Volatile private var served: WeakReference<LikeSubscription>? = null

    /** Set once a task found the subscription ended: it never comes back. */
    @Volatile private var ended = false

    fun serve(subscription: LikeSubscription) {
        served = WeakReference(subscription)
    }

    override fun onChange(view: PostView) = post("on_change") { observer.onChange(view) }

    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) =
        post("on_failure") { observer.onFailure(postId, wanted, error) }

    /**
     * Queues `call` on the executor. An executor that refuses it (shut
     * down) throws here, on LikeKit's thread, which reports it as this
     * observer's exception.
     */
    private fun post(method: String, call: () -> Unit) {
        executor.execute {
            if (live()) {
                try {
                    call()
                } catch (thrown: Exception) {
                    report("a LikeObserver in $method", thrown)
                }
            }
        }
    }

    /** Whether the subscription served still delivers. */
    private fun live(): Boolean {
        if (ended) return false
        val reference = served ?: return true
        val subscription = reference.get()
        val live = subscription != null &&
            !subscription.uniffiIsDestroyed &&
            try {
                subscription.isActive()
            } catch (destroyed: IllegalStateException) {
                // Closed on another thread since the line above; any other stays.
                if (!subscription.uniffiIsDestroyed) throw destroyed
                false
            }
        if (!live) ended = true
        return live
    }

    /** What LikeKit does with an observer's exception, on this thread. */
    private fun report(callback: String, thrown: Exception) {
        val reason = (thrown as? CallbackException.Threw)?.reason ?: thrown.stackTraceToString()
        val listener = errorListener
        if (listener != null) {
            try {
                listener.onCallbackError(callback, reason)
                return
            } catch (alsoThrown: Exception) {
                System.err.println("likekit: a CallbackErrorListener threw: ${alsoThrown.stackTraceToString()}")
            }
        }
        System.err.println("likekit: $callback threw: $reason")
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
 *
 * The client holds its listener (as it holds its token provider) until it
 * is closed, through the native library, where the garbage collector does
 * not look: a lambda that captures the object owning the client (a
 * ViewModel's `this`, an Activity) keeps that object and the client alive
 * together. `close()` the client when its owner goes (`onCleared`), which
 * lets both go; a client left to the garbage collector instead is never
 * collected, and keeps its journal locked (the next sign-in gets
 * `journal_in_use`), unless its listener and provider capture nothing of
 * its owner.
 */
fun CallbackErrorListener(onError: (callback: String, reason: String) -> Unit): CallbackErrorListener =
    object : CallbackErrorListener {
        override fun onCallbackError(callback: String, reason: String) = onError(callback, reason)
    }
