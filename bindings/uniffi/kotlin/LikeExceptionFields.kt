// The five fields every LikeException variant carries, as properties of
// LikeException itself, so that an app reads them without matching the
// variant first. Shipped beside the generated bindings, in their package.
// The values come from the core; this file only picks them out.
package com.likekit

/** The core's English message, for logs ("post not found: …"). */
val LikeException.reason: String get() = fields().reason

/**
 * The core's stable code: `post_not_found`, `rate_limited`, `bad_post_id`,
 * …, or the server's own code for a [LikeException.Server] or
 * [LikeException.Rejected] answer (`http_503` when its body had none).
 */
val LikeException.code: String get() = fields().code

/** Whether the same call may succeed if sent again (the client retried it already). */
val LikeException.isTransient: Boolean get() = fields().isTransient

/**
 * The HTTP status the error stands for: a [LikeException.Server] or
 * [LikeException.Rejected] answer's own; 401, 403, 404, 429 for
 * Unauthorized, Forbidden, NotFound, RateLimited; null when no answer was
 * classified or nothing was sent.
 */
val LikeException.status: Int? get() = fields().status

/** A [LikeException.RateLimited] answer's `Retry-After`, in milliseconds; null when there was none. */
val LikeException.retryAfterMs: Long? get() = fields().retryAfterMs

private class Fields(
    val reason: String,
    val code: String,
    val isTransient: Boolean,
    val status: Int?,
    val retryAfterMs: Long?,
)

// In each branch the variant's own properties are read (members win over
// these extensions).
private fun LikeException.fields(): Fields = when (this) {
    is LikeException.Network -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Timeout -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Server -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.RateLimited -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.InvalidResponse -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Unauthorized -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Forbidden -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.NotFound -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Rejected -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.InvalidId -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Config -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Shutdown -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Journal -> Fields(reason, code, isTransient, status, retryAfterMs)
    is LikeException.Expired -> Fields(reason, code, isTransient, status, retryAfterMs)
}
