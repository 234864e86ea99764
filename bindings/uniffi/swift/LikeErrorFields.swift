// The five fields every LikeError case carries, as properties of LikeError
// itself, so that an app reads them without matching the case first.
// Shipped beside the generated bindings, in the LikeKit module. The values
// come from the core; this file only picks them out.

extension LikeError {
    /// The core's English message, for logs ("post not found: …").
    public var reason: String { fields.reason }

    /// The core's stable code: `post_not_found`, `rate_limited`,
    /// `bad_post_id`, …, or the server's own code for a `Server` or
    /// `Rejected` answer (`http_503` when its body had none).
    public var code: String { fields.code }

    /// Whether the same call may succeed if sent again (the client retried
    /// it already).
    public var isTransient: Bool { fields.isTransient }

    /// The HTTP status the error stands for (a `Server` or `Rejected`
    /// answer's own; 401, 403, 404, 429 for `Unauthorized`, `Forbidden`,
    /// `NotFound`, `RateLimited`); nil when no answer was classified.
    public var status: Int32? { fields.status }

    /// A `RateLimited` answer's `Retry-After`, in milliseconds; nil when
    /// there was none.
    public var retryAfterMs: Int64? { fields.retryAfterMs }

    private var fields: (reason: String, code: String, isTransient: Bool, status: Int32?, retryAfterMs: Int64?) {
        switch self {
        case let .Network(reason, code, isTransient, status, retryAfterMs),
            let .Timeout(reason, code, isTransient, status, retryAfterMs),
            let .Server(reason, code, isTransient, status, retryAfterMs),
            let .RateLimited(reason, code, isTransient, status, retryAfterMs),
            let .InvalidResponse(reason, code, isTransient, status, retryAfterMs),
            let .Unauthorized(reason, code, isTransient, status, retryAfterMs),
            let .Forbidden(reason, code, isTransient, status, retryAfterMs),
            let .NotFound(reason, code, isTransient, status, retryAfterMs),
            let .Rejected(reason, code, isTransient, status, retryAfterMs),
            let .InvalidId(reason, code, isTransient, status, retryAfterMs),
            let .Config(reason, code, isTransient, status, retryAfterMs),
            let .Shutdown(reason, code, isTransient, status, retryAfterMs),
            let .Journal(reason, code, isTransient, status, retryAfterMs),
            let .Expired(reason, code, isTransient, status, retryAfterMs):
            return (reason, code, isTransient, status, retryAfterMs)
        }
    }
}
