//! The stable error codes of [`ErrorBody`](crate::ErrorBody), one constant
//! each. The server answers with them; the client's errors carry them; the
//! bindings expose them as `code`.

/// 400: a post id that is not a whole number from 1 to `i64::MAX`.
pub const BAD_POST_ID: &str = "bad_post_id";
/// 400: a user id that is not a whole number from 1 to `i64::MAX`.
pub const BAD_USER_ID: &str = "bad_user_id";
/// 400: a query string the route cannot read (`posts=` empty, too long…).
pub const BAD_QUERY: &str = "bad_query";
/// 400: a body that is not the JSON the route takes.
pub const BAD_JSON: &str = "bad_json";
/// 400: any other malformed request.
pub const BAD_REQUEST: &str = "bad_request";
/// 401: no `Authorization: Bearer …` header.
pub const MISSING_TOKEN: &str = "missing_token";
/// 401: a token that is malformed, expired or forged.
pub const UNAUTHORIZED: &str = "unauthorized";
/// 403: the caller may not do this.
pub const FORBIDDEN: &str = "forbidden";
/// 404: the post does not exist.
pub const POST_NOT_FOUND: &str = "post_not_found";
/// 404: the user does not exist.
pub const USER_NOT_FOUND: &str = "user_not_found";
/// 404: no such route.
pub const NOT_FOUND: &str = "not_found";
/// 405: the route exists, the method does not.
pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
/// 408: the request took too long to arrive.
pub const REQUEST_TIMEOUT: &str = "request_timeout";
/// 413: the body is larger than the server takes.
pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
/// 415: a body without `Content-Type: application/json`.
pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
/// 429: too many writes; the answer carries `Retry-After`.
pub const RATE_LIMITED: &str = "rate_limited";
/// 500: the server failed.
pub const INTERNAL: &str = "internal";
/// 500/503: the store failed.
pub const STORAGE_ERROR: &str = "storage_error";
/// 503: the server is shutting down.
pub const SHUTTING_DOWN: &str = "shutting_down";
/// 503: the server cannot answer now.
pub const UNAVAILABLE: &str = "unavailable";
/// 503 on `/readyz`: the store did not answer a query in time.
pub const NOT_READY: &str = "not_ready";
