// kotlin.time.Duration forms of LikeKit's times, which the generated code
// takes as Long milliseconds: the options' five times, the waits of
// shutdown and waitIdle, and a RateLimited answer's Retry-After. Shipped
// beside the generated bindings, in their package. Each converts and
// forwards: what a time may be is the core's to say, but for a negative
// option, which a millisecond field would take as zero.
package com.likekit

import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/** [LikeClientOptions.requestTimeoutMs] as a [Duration]; null when left to the core. */
val LikeClientOptions.requestTimeout: Duration? get() = requestTimeoutMs?.milliseconds

/** [LikeClientOptions.retryMinDelayMs] as a [Duration]; null when left to the core. */
val LikeClientOptions.retryMinDelay: Duration? get() = retryMinDelayMs?.milliseconds

/** [LikeClientOptions.retryMaxDelayMs] as a [Duration]; null when left to the core. */
val LikeClientOptions.retryMaxDelay: Duration? get() = retryMaxDelayMs?.milliseconds

/** [LikeClientOptions.maxIntentAgeMs] as a [Duration]; null when left to the core. */
val LikeClientOptions.maxIntentAge: Duration? get() = maxIntentAgeMs?.milliseconds

/** [LikeClientOptions.keepWhileOfflineMs] as a [Duration]; null when not kept offline. */
val LikeClientOptions.keepWhileOffline: Duration? get() = keepWhileOfflineMs?.milliseconds

/**
 * These options with [LikeClientOptions.requestTimeoutMs] set to [timeout]:
 * how long one request may take, answer included.
 *
 * ```
 * val options = LikeClientOptions(journal = journal)
 *     .withRequestTimeout(15.seconds)
 *     .withMaxIntentAge(7.days)
 * ```
 *
 * As every `with…` here, it takes whole milliseconds, a part of one
 * rounded up (so a time above zero stays above zero), and
 * [Duration.INFINITE] as the longest time the option holds
 * ([Long.MAX_VALUE] milliseconds: in effect, never).
 *
 * @throws LikeException.Config for a negative [timeout]. The client's
 *   constructor refuses zero, as it does `requestTimeoutMs = 0`.
 */
fun LikeClientOptions.withRequestTimeout(timeout: Duration): LikeClientOptions =
    copy(requestTimeoutMs = optionMillis("requestTimeout", timeout))

/**
 * These options with [LikeClientOptions.retryMinDelayMs] set to [delay]:
 * the first retry's delay, before jitter.
 *
 * @throws LikeException.Config for a negative [delay].
 */
fun LikeClientOptions.withRetryMinDelay(delay: Duration): LikeClientOptions =
    copy(retryMinDelayMs = optionMillis("retryMinDelay", delay))

/**
 * These options with [LikeClientOptions.retryMaxDelayMs] set to [delay]:
 * the longest delay between retries, before jitter.
 *
 * @throws LikeException.Config for a negative [delay].
 */
fun LikeClientOptions.withRetryMaxDelay(delay: Duration): LikeClientOptions =
    copy(retryMaxDelayMs = optionMillis("retryMaxDelay", delay))

/**
 * These options with [LikeClientOptions.maxIntentAgeMs] set to [age]: how
 * old a tap may grow before it is dropped instead of sent (at `restore()`,
 * and while kept offline). [Duration.INFINITE]: never dropped for its age.
 *
 * @throws LikeException.Config for a negative [age].
 */
fun LikeClientOptions.withMaxIntentAge(age: Duration): LikeClientOptions =
    copy(maxIntentAgeMs = optionMillis("maxIntentAge", age))

/**
 * These options with [LikeClientOptions.keepWhileOfflineMs] set to
 * [every]: a tap whose retries are used up on transient failures stays
 * pending and is tried again every [every], instead of rolling back.
 *
 * @throws LikeException.Config for a negative [every]. The client's
 *   constructor refuses zero, as it does `keepWhileOfflineMs = 0`.
 */
fun LikeClientOptions.withKeepWhileOffline(every: Duration): LikeClientOptions =
    copy(keepWhileOfflineMs = optionMillis("keepWhileOffline", every))

/**
 * [LikeClient.shutdown] with its deadline as a [Duration]: calls still
 * out get up to [deadline] to finish. A negative [deadline] counts as
 * zero, as `shutdown(-1)` and coroutines' `withTimeout` do, so a deadline
 * computed at sign-out never throws; [Duration.INFINITE] waits for every
 * call.
 *
 * ```
 * client.shutdown(2.seconds)
 * ```
 */
suspend fun LikeClient.shutdown(deadline: Duration): Boolean = shutdown(waitMillis(deadline))

/**
 * [LikeClient.waitIdle] with its timeout as a [Duration]. A negative
 * [timeout] counts as zero, as `waitIdle(-1)` and coroutines'
 * `withTimeout` do.
 */
suspend fun LikeClient.waitIdle(timeout: Duration): Boolean = waitIdle(waitMillis(timeout))

/**
 * [retryAfterMs] as a [Duration]: a [LikeException.RateLimited] answer's
 * `Retry-After`; null when there was none.
 *
 * ```
 * is LikeException.RateLimited -> retryLater(e.retryAfter ?: 1.seconds)
 * ```
 */
val LikeException.retryAfter: Duration? get() = retryAfterMs?.milliseconds

/** A wait's milliseconds: below zero is zero, a part of one rounded up. */
internal fun waitMillis(wait: Duration): Long = if (wait.isNegative()) 0L else wait.millisRoundedUp()

/**
 * An option's milliseconds, or [LikeException.Config] naming [option] for
 * a negative time, which the millisecond fields would take as zero.
 */
private fun optionMillis(option: String, time: Duration): Long {
    if (time.isNegative()) {
        // The core's Config, its code and classification as the core gives
        // them (the Kotlin tests compare it with one the core threw).
        throw LikeException.Config(
            reason = "invalid configuration: $option must not be negative; got $time",
            code = "config",
            isTransient = false,
            status = null,
            retryAfterMs = null,
        )
    }
    return time.millisRoundedUp()
}

/** Whole milliseconds of a time not negative, a part of one rounded up; INFINITE is [Long.MAX_VALUE]. */
private fun Duration.millisRoundedUp(): Long {
    if (isInfinite()) return Long.MAX_VALUE
    // A finite Duration holds at most 2^62 - 1 whole milliseconds: + 1 fits.
    val whole = inWholeMilliseconds
    return if (this > whole.milliseconds) whole + 1 else whole
}
