//! The one middleware around every route ([`Observe`], a tower service):
//! the request id, fault rules, metrics, a log line, the body limit, the
//! request timeout, a JSON 500 for a handler's panic, and JSON for every
//! error answer.

use std::{
    any::Any,
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use futures_util::{
    FutureExt as _,
    future::{self, Either},
};
use tower::{Layer, Service, ServiceExt as _};
use tracing::Instrument as _;

use axum::{
    Json,
    body::{Body, Bytes, HttpBody as _},
    extract::{FromRequestParts as _, Query, Request},
    http::{HeaderValue, StatusCode, header, request::Parts},
    response::{IntoResponse, Response},
};
use likekit_proto::{
    PostId, UserId,
    admin::{FaultMethod, FaultPhase, FaultRoute, JournalEntry, JournalFault, WriteResult},
    code,
};

use crate::{
    auth::authenticate,
    error::ApiError,
    extract::{PathId, parse_post_list},
    faults::{self, Act, Call, Plan, RuleRef},
    journal::Written,
    logs::REQUEST_ID,
    metrics::Route,
    net::ConnInfo,
    state::{App, Shared},
};

/// The public routes fault rules apply to.
fn fault_route(route: Route) -> Option<FaultRoute> {
    match route {
        Route::Like => Some(FaultRoute::Like),
        Route::Unlike => Some(FaultRoute::Unlike),
        Route::Likes => Some(FaultRoute::Likes),
        Route::Batch => Some(FaultRoute::Batch),
        _ => None,
    }
}

/// The posts a request names, read as the handler reads them: the
/// `{post_id}` of `/posts/{post_id}/…` ([`PathId`]), or the `posts=` list
/// of a batch read ([`parse_post_list`], after the query is decoded as the
/// handler's `Query` decodes it). None when the handler refuses them (it
/// answers 400).
fn posts_named(route: FaultRoute, parts: &mut Parts) -> Vec<PostId> {
    if route == FaultRoute::Batch {
        return Query::<Vec<(String, String)>>::try_from_uri(&parts.uri)
            .ok()
            .and_then(|Query(pairs)| parse_post_list(&pairs).ok())
            .unwrap_or_default();
    }
    // The extractor reads the path parameters routing left in the
    // request's extensions: it is ready at once.
    PathId::<PostId>::from_request_parts(parts, &())
        .now_or_never()
        .and_then(Result::ok)
        .map(|PathId(post)| vec![post])
        .unwrap_or_default()
}

/// The most of a request's path and query the journal keeps: a batch read
/// of [`likekit_proto::MAX_BATCH_POSTS`] posts with the longest ids, commas
/// percent-encoded, fits in half of it. Without a bound, requests anyone
/// can send (signed in or not) with 64 KiB query strings would make the
/// journal's 10,000 entries hold over 600 MiB.
pub(crate) const JOURNALED_PATH_BYTES: usize = 4096;

/// `path` as the journal keeps it: whole up to [`JOURNALED_PATH_BYTES`],
/// else its first bytes up to that and `…`.
fn journaled_path(path: &str) -> String {
    if path.len() <= JOURNALED_PATH_BYTES {
        return path.to_owned();
    }
    let mut end = JOURNALED_PATH_BYTES - '…'.len_utf8();
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &path[..end])
}

/// The method of a request to a public route: the one method the route
/// takes (requests with another method are not public-route requests; see
/// [`Route::of`]).
fn method_of(route: FaultRoute) -> FaultMethod {
    match route {
        FaultRoute::Like => FaultMethod::Post,
        FaultRoute::Unlike => FaultMethod::Delete,
        FaultRoute::Likes | FaultRoute::Batch | FaultRoute::All => FaultMethod::Get,
    }
}

/// The signed-in user, when the request's token is valid (the handler's
/// own check, which answers 401 otherwise).
fn user_of(app: &Shared, request: &Request) -> Option<UserId> {
    authenticate(&app.auth, request.headers()).ok()
}

/// The fault rules' plan for a request to a public route.
fn plan_for(app: &Shared, route: FaultRoute, posts: &[PostId], request: &Request) -> Plan {
    let user = if app.faults.wants_user() {
        user_of(app, request)
    } else {
        None
    };
    app.faults.plan(&Call {
        route,
        method: method_of(route),
        posts,
        user,
    })
}

/// A journal entry begun when a request arrives (and listed at once, in
/// flight); finished by [`Arrival::finish`] with its answer.
struct Arrival {
    seq: u64,
    at_ms: u64,
    method: FaultMethod,
    route: FaultRoute,
    path: String,
    posts: Vec<PostId>,
    user: Option<UserId>,
}

impl Arrival {
    /// Lists the request with id `id` as it arrives.
    fn begin(
        app: &Shared,
        route: FaultRoute,
        posts: Vec<PostId>,
        request: &Request,
        id: &HeaderValue,
    ) -> Self {
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let mut arrival = Self {
            seq: 0,
            at_ms,
            method: method_of(route),
            route,
            path: request
                .uri()
                .path_and_query()
                .map_or_else(String::new, |p| journaled_path(p.as_str())),
            posts,
            user: user_of(app, request),
        };
        // Its `seq` is taken as it is listed, under the journal's lock, so
        // that a reader never sees a later `seq` before an earlier one.
        arrival.seq = app.journal.arrive(id, |seq| JournalEntry {
            seq,
            ..arrival.entry()
        });
        arrival
    }

    /// The entry as it stands on arrival (its `request_id` left empty:
    /// the journal keeps the request's id beside it).
    fn entry(&self) -> JournalEntry {
        JournalEntry {
            seq: self.seq,
            request_id: String::new(),
            at_ms: self.at_ms,
            duration_ms: 0,
            method: self.method,
            route: self.route,
            path: self.path.clone(),
            posts: self.posts.clone(),
            user: self.user,
            status: None,
            write: None,
            fault_rule: None,
            fault_tag: None,
            fault_phase: None,
            fault: None,
            in_flight: true,
        }
    }

    /// The entry of a request whose client went away before its answer
    /// was ready (it gave up during a rule's latency or `hang`, or a slow
    /// store): no status, since no answer reached it, and the write's
    /// result when the handler had answered (an `after` rule's latency
    /// runs after the write committed), else unknown.
    fn abandoned(self, faults: Option<&FaultPath>, elapsed: Duration) -> JournalEntry {
        let note = faults.and_then(FaultPath::noted);
        let write = faults.and_then(|f| f.written.get().copied());
        JournalEntry {
            duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            write: write.map(Written::result),
            in_flight: false,
            ..FaultNote::on(note.as_ref(), self.entry())
        }
    }

    /// The entry once the answer is ready: `faults` is what the fault
    /// path noted (kept even when the request timeout ended it), and
    /// `timed_out` whether the answer is the request timeout's.
    fn finish(
        self,
        response: &Response,
        faults: Option<&FaultPath>,
        timed_out: bool,
        elapsed: Duration,
    ) -> JournalEntry {
        let note = faults.and_then(FaultPath::noted);
        let note = note.as_ref();
        let cut = faults.is_some_and(|f| f.cut.load(Ordering::Acquire));
        let written = faults
            .and_then(|f| f.written.get().copied())
            .or_else(|| response.extensions().get::<Written>().copied());
        // A `before` act answers in the handler's place; a latency only
        // delays it.
        let handled =
            !note.is_some_and(|n| n.phase == FaultPhase::Before && n.act != JournalFault::Latency);
        // The handler's own status (an `after` rule may have replaced it).
        let status = faults
            .and_then(|f| f.answered.get().copied())
            .unwrap_or_else(|| response.status());
        // A 500 (the database failed: a lost connection during the commit,
        // a failed fsync; or the handler panicked) may come after the
        // write committed. 503 is the store refusing writes as it closes.
        let failed = status.is_server_error() && status != StatusCode::SERVICE_UNAVAILABLE;
        let write = match (self.route, written) {
            (_, Some(w)) => Some(w.result()),
            // A write the request timeout cut short, or one answered 500,
            // may still commit: its outcome is unknown, not refused.
            (FaultRoute::Like | FaultRoute::Unlike, None) if handled && !timed_out && !failed => {
                Some(WriteResult::Refused)
            }
            _ => None,
        };
        JournalEntry {
            duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            status: (!cut).then(|| response.status().as_u16()),
            write,
            in_flight: false,
            ..FaultNote::on(note, self.entry())
        }
    }
}

/// A request's journal entry until it is finished: finished with the
/// answer when there is one, and as [`Arrival::abandoned`] when the
/// request is dropped first (its client went away), so that no entry stays
/// in flight for good.
struct Journaling {
    app: Arc<Shared>,
    arrival: Option<Arrival>,
    faults: Option<Arc<FaultPath>>,
    started: Instant,
}

impl Journaling {
    /// Finishes the entry with `response`.
    fn finish(&mut self, response: &Response, timed_out: bool, elapsed: Duration) {
        if let Some(arrival) = self.arrival.take() {
            self.app.journal.finish(arrival.finish(
                response,
                self.faults.as_deref(),
                timed_out,
                elapsed,
            ));
        }
    }
}

impl Drop for Journaling {
    fn drop(&mut self) {
        if let Some(arrival) = self.arrival.take() {
            let entry = arrival.abandoned(self.faults.as_deref(), self.started.elapsed());
            self.app.journal.finish(entry);
        }
    }
}

/// A request on the fault path: the connection a rule may cut, and what
/// the path noted for the journal. It lives beside the fault path rather
/// than in it, so that the request timeout, which drops the path, leaves
/// it readable.
#[derive(Debug)]
struct FaultPath {
    connection: Option<ConnInfo>,
    /// The rule that acts on the request, noted when its phase begins (its
    /// latency is part of its act); or, while none acts, the first whose
    /// latency delays it.
    note: Mutex<Option<FaultNote>>,
    /// The request's journal entry as it arrived, when the journal is on:
    /// the note is shown on it while the request is in flight.
    arrival: Option<JournalEntry>,
    /// What the handler did, noted as soon as it answered.
    written: OnceLock<Written>,
    /// The status the handler answered, before a rule replaced it.
    answered: OnceLock<StatusCode>,
    /// No answer reached the client: the connection was cut or held.
    cut: AtomicBool,
}

impl FaultPath {
    /// The fault path of `request`, whose journal entry is `arrival`.
    fn new(request: &Request, arrival: Option<&Arrival>) -> Arc<Self> {
        Arc::new(Self {
            connection: request
                .extensions()
                .get::<axum::extract::ConnectInfo<ConnInfo>>()
                .map(|info| info.0.clone()),
            note: Mutex::new(None),
            arrival: arrival.map(Arrival::entry),
            written: OnceLock::new(),
            answered: OnceLock::new(),
            cut: AtomicBool::new(false),
        })
    }

    /// Cuts the connection (with a reset, or an orderly close). The answer
    /// returned is never written; when the router is served without
    /// `net::Listener` there is no connection to cut, and it is the answer.
    fn cut(&self, reset: bool) -> Response {
        match &self.connection {
            Some(info) if reset => info.kill.reset(),
            Some(info) => info.kill.trigger(),
            None => tracing::warn!("fault rule: cannot cut a connection served elsewhere"),
        }
        self.cut.store(self.connection.is_some(), Ordering::Release);
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            code::CONNECTION_DROPPED,
            "fault rule: connection dropped",
        )
        .into_response()
    }

    /// Whether the rule acting on the request hangs it.
    fn hangs(&self) -> bool {
        self.noted().is_some_and(|n| n.act == JournalFault::Hang)
    }

    /// What the fault path noted so far.
    fn noted(&self) -> Option<FaultNote> {
        self.note.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Notes `note` for the journal, and shows it on the entry in flight.
    fn note(&self, app: &Shared, note: FaultNote) {
        if let Some(arrival) = &self.arrival {
            app.journal
                .update_in_flight(FaultNote::on(Some(&note), arrival.clone()));
        }
        *self.note.lock().unwrap_or_else(|e| e.into_inner()) = Some(note);
    }
}

/// Runs the request through the fault plan: the `before` delay and act
/// (the handler never runs when there is one), the handler, then, when it
/// answered 2xx, the `after` rules' delay and act on its answer (any other
/// answer goes out as it is, and no `after` rule counts it). An act is
/// counted in its rule's `acted` as it is carried out, so one the request
/// timeout cuts short is not. What the journal needs is noted in `path` as
/// it happens.
async fn with_faults<S>(
    app: Arc<Shared>,
    plan: Plan,
    path: Arc<FaultPath>,
    request: Request,
    inner: S,
) -> Result<Response, Infallible>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let app = &*app;
    let Plan { before, after } = plan;
    if let Some(acting) = &before.acting {
        path.note(
            app,
            FaultNote::of(Some(acting.rule.clone()), FaultPhase::Before, acting.act()),
        );
    } else if !before.delay.is_zero() {
        path.note(
            app,
            FaultNote::latency(before.delayed_by.clone(), FaultPhase::Before),
        );
    }
    if !before.delay.is_zero() {
        tokio::time::sleep(before.delay).await;
    }
    if let Some(acting) = before.acting {
        app.metrics.faults_injected.increment(1);
        return Ok(perform(acting.carry_out(), None, &path).await);
    }
    let Ok(response) = inner.oneshot(request).await;
    // What the handler did, for the journal, before its answer is delayed
    // or replaced.
    if let Some(written) = response.extensions().get::<Written>() {
        let _ = path.written.set(*written);
    }
    let _ = path.answered.set(response.status());
    let after = after.walk(response.status());
    // An act is named over a latency; of two latencies, the first.
    if let Some(acting) = &after.acting {
        path.note(
            app,
            FaultNote::of(Some(acting.rule.clone()), FaultPhase::After, acting.act()),
        );
    } else if !after.delay.is_zero() && path.noted().is_none() {
        path.note(
            app,
            FaultNote::latency(after.delayed_by.clone(), FaultPhase::After),
        );
    }
    if !after.delay.is_zero() {
        tokio::time::sleep(after.delay).await;
    }
    match after.acting {
        Some(acting) => {
            app.metrics.faults_injected.increment(1);
            Ok(perform(acting.carry_out(), Some(response), &path).await)
        }
        None => Ok(response),
    }
}

/// Which rule acted on a request, when, and how, for the journal.
#[derive(Debug, Clone)]
struct FaultNote {
    rule: Option<RuleRef>,
    phase: FaultPhase,
    act: JournalFault,
}

impl FaultNote {
    /// `entry` naming the rule `note` notes (none: no rule acted or
    /// delayed it).
    fn on(note: Option<&FaultNote>, entry: JournalEntry) -> JournalEntry {
        JournalEntry {
            fault_rule: note.and_then(FaultNote::place),
            fault_tag: note.and_then(FaultNote::tag),
            fault_phase: note.map(|n| n.phase),
            fault: note.map(|n| n.act),
            ..entry
        }
    }

    fn of(rule: Option<RuleRef>, phase: FaultPhase, act: &Act) -> Self {
        let act = match act {
            Act::Status { .. } => JournalFault::Status,
            Act::Drop => JournalFault::Drop,
            Act::Reset => JournalFault::Reset,
            Act::Hang => JournalFault::Hang,
            Act::Truncate(_) => JournalFault::Truncate,
            Act::Malformed => JournalFault::Malformed,
            Act::SlowBody { .. } => JournalFault::SlowBody,
            Act::Oversized(_) => JournalFault::Oversized,
        };
        Self { rule, phase, act }
    }

    /// The rule's place in the set when it acted, for `fault_rule`.
    fn place(&self) -> Option<u32> {
        self.rule.as_ref().and_then(|r| u32::try_from(r.place).ok())
    }

    /// The rule's tag, for `fault_tag`.
    fn tag(&self) -> Option<String> {
        self.rule.as_ref()?.tag.as_deref().map(str::to_owned)
    }

    /// A rule that only delayed the request.
    fn latency(rule: Option<RuleRef>, phase: FaultPhase) -> Self {
        Self {
            rule,
            phase,
            act: JournalFault::Latency,
        }
    }
}

/// A body that is not JSON, for `malformed`.
const MALFORMED: &str = "{\"count\": 1, \"liked_by_me\": tru";

/// Carries out one act; `answer` is the handler's answer (phase `after`).
async fn perform(act: Act, answer: Option<Response>, path: &FaultPath) -> Response {
    let status = answer.as_ref().map_or(StatusCode::OK, |a| a.status());
    match act {
        Act::Status {
            status,
            body,
            retry_after_secs,
        } => {
            let retry_after =
                retry_after_secs.or((status == StatusCode::TOO_MANY_REQUESTS).then_some(1));
            let mut response = match body {
                // No body, and no header that describes one: hyper would
                // send a `Content-Length` header given here on a 204 or
                // 304 and then no body, which strict clients refuse.
                _ if !faults::carries_body(status) => {
                    let mut empty = Response::new(Body::empty());
                    *empty.status_mut() = status;
                    empty
                }
                Some(body) => (status, Json(body)).into_response(),
                None => ApiError::new(
                    status,
                    code::INJECTED_FAULT,
                    format!("fault rule: answering {}", status.as_u16()),
                )
                .into_response(),
            };
            if let Some(secs) = retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs));
            }
            response
        }
        Act::Drop => path.cut(false),
        Act::Reset => path.cut(true),
        // Held until the request timeout, which cuts the connection (see
        // `Observe`): however much of the request's time is already spent,
        // the client never gets an answer.
        Act::Hang => future::pending().await,
        Act::Malformed => json_body(status, Body::from(MALFORMED), Some(MALFORMED.len() as u64)),
        Act::Truncate(bytes) => {
            let body = real_body(answer).await;
            let cut_at = body.len().min(bytes as usize);
            let kept = body.slice(..cut_at);
            json_body(status, Body::from(kept), Some(cut_at as u64))
        }
        Act::SlowBody { bytes, interval } => {
            let body = real_body(answer).await;
            let length = body.len() as u64;
            let pieces = futures_util::stream::unfold(body, move |mut rest| async move {
                if rest.is_empty() {
                    return None;
                }
                tokio::time::sleep(interval).await;
                let piece = rest.split_to(rest.len().min(bytes as usize));
                Some((Ok::<_, std::convert::Infallible>(piece), rest))
            });
            json_body(status, Body::from_stream(pieces), Some(length))
        }
        Act::Oversized(bytes) => {
            let (body, length) = oversized(bytes);
            json_body(StatusCode::OK, body, Some(length))
        }
    }
}

/// `{"padding":"` and `"}` around an oversized body's filler.
const OVERSIZED_FRAME: u64 = 14;

/// A JSON object of exactly `bytes` bytes (at least
/// [`MIN_OVERSIZED_BYTES`](crate::faults::MIN_OVERSIZED_BYTES), which the
/// rules' checks hold it to), and its length: `{"padding":"xx…"}`, or,
/// shorter than that frame, `{` and `}` around spaces. Streamed in 64 KiB
/// pieces so the server never holds it whole.
fn oversized(bytes: u64) -> (Body, u64) {
    const PIECE: u64 = 64 * 1024;
    let bytes = bytes.max(crate::faults::MIN_OVERSIZED_BYTES);
    let (open, fill, close): (&'static [u8], u8, &'static [u8]) = if bytes < OVERSIZED_FRAME {
        (b"{", b' ', b"}")
    } else {
        (b"{\"padding\":\"", b'x', b"\"}")
    };
    let filler = bytes - (open.len() + close.len()) as u64;
    let pieces = std::iter::once(Bytes::from_static(open))
        .chain((0..filler.div_ceil(PIECE)).map(move |i| {
            let n = (filler - i * PIECE).min(PIECE) as usize;
            Bytes::from(vec![fill; n])
        }))
        .chain(std::iter::once(Bytes::from_static(close)))
        .map(Ok::<_, std::convert::Infallible>);
    (Body::from_stream(futures_util::stream::iter(pieces)), bytes)
}

/// An answer with `body` as JSON and its length.
fn json_body(status: StatusCode, body: Body, length: Option<u64>) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(length) = length {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    }
    response
}

/// The handler's answer body, read whole (answers are small).
async fn real_body(answer: Option<Response>) -> Bytes {
    let Some(answer) = answer else {
        return Bytes::new();
    };
    axum::body::to_bytes(answer.into_body(), 1 << 20)
        .await
        .unwrap_or_default()
}

/// The request's id: the client's `X-Request-Id` when it is 1 to 128
/// visible ASCII characters, else one made here (16 hex digits: a random
/// start for this process, then a counter).
fn request_id(request: &Request) -> HeaderValue {
    if let Some(given) = request.headers().get(&REQUEST_ID)
        && (1..=128).contains(&given.len())
        && given.as_bytes().iter().all(|b| b.is_ascii_graphic())
    {
        return given.clone();
    }
    static NEXT: std::sync::OnceLock<std::sync::atomic::AtomicU64> = std::sync::OnceLock::new();
    let next = NEXT.get_or_init(|| std::sync::atomic::AtomicU64::new(fastrand::u64(..)));
    let id = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // Written in place: no `format!` string on every request.
    let mut hex = [0_u8; 16];
    for (i, digit) in hex.iter_mut().enumerate() {
        *digit = b"0123456789abcdef"[((id >> (60 - 4 * i)) & 0xf) as usize];
    }
    HeaderValue::from_bytes(&hex).unwrap_or_else(|_| HeaderValue::from_static("0"))
}

/// An answer on its way.
type BoxedAnswer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// The server's one middleware, as a tower layer around every route:
/// [`Observe`].
#[derive(Clone)]
pub(crate) struct ObserveLayer(pub(crate) App);

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            app: self.0.0.clone(),
            inner,
        }
    }
}

/// Applies the fault rules to the public like/view routes, records metrics
/// and a log line, gives the request an id (echoed in `X-Request-Id` and
/// carried by every log line of the request, through its span), bounds the
/// request's body and the time it may take (injected latency included),
/// answers a handler's panic with a JSON 500, and turns any error answer
/// that is not JSON (axum's built-in rejections) into an `{"error": …}`
/// body.
///
/// One service for all of it, written as a tower service rather than with
/// `axum::middleware::from_fn`: a request pays for one layer, without a
/// boxed copy of the routes behind it and without moving its state through
/// a stack of wrappers (`cargo bench -p likekit-bench --bench view_path`
/// measures the difference as its `middleware` rung).
#[derive(Clone)]
pub(crate) struct Observe<S> {
    app: Arc<Shared>,
    inner: S,
}

impl<S> Service<Request> for Observe<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxedAnswer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let app = self.app.clone();
        let started = Instant::now();
        let id = request_id(&request);
        let method = request.method().clone();
        let route = Route::of(
            &method,
            request
                .extensions()
                .get::<axum::extract::MatchedPath>()
                .map(|p| p.as_str()),
        );
        let public = fault_route(route);
        let journal = app.journal.is_on();
        let faulty = !app.faults.is_empty();
        // The posts, read as the handler reads them, when the journal or a
        // rule wants them.
        let posts = match public {
            Some(public) if journal || faulty => {
                let (mut parts, body) = request.into_parts();
                let posts = posts_named(public, &mut parts);
                request = Request::from_parts(parts, body);
                posts
            }
            _ => Vec::new(),
        };
        let arrival = public
            .filter(|_| journal)
            .map(|public| Arrival::begin(&app, public, posts.clone(), &request, &id));
        let mut fault_path = None;

        // The body limit: a declared length past it is refused at once; a
        // body that may come is read through a limit (the extractors
        // answer 413 when it is crossed).
        let limit = app.max_body_bytes;
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let work = if declared.is_some_and(|n| n > limit as u64) {
            Either::Right(Either::Right(future::ready(Ok(ApiError::for_status(
                StatusCode::PAYLOAD_TOO_LARGE,
            )
            .into_response()))))
        } else if declared.is_none() && !request.body().is_end_stream() {
            // A body of no declared length (chunked) is read whole, through
            // the limit, before the rules and the handler see the request:
            // past the limit it is a 413 on every route, also on one whose
            // handler never reads a body (a like), and nothing is done. A
            // request without a body, or with a `Content-Length` (which
            // hyper holds the body to), never comes here.
            let path = public
                .filter(|_| faulty)
                .map(|_| FaultPath::new(&request, arrival.as_ref()));
            fault_path = path.clone();
            let (app, inner) = (app.clone(), self.inner.clone());
            let read: BoxedAnswer = Box::pin(async move {
                let request = match read_whole(request, limit).await {
                    Ok(request) => request,
                    Err(refusal) => return Ok(refusal),
                };
                let plan = public
                    .filter(|_| path.is_some())
                    .map(|public| plan_for(&app, public, &posts, &request))
                    .filter(|plan| !plan.is_empty());
                match (plan, path) {
                    (Some(plan), Some(path)) => with_faults(app, plan, path, request, inner).await,
                    _ => inner.oneshot(request).await,
                }
            });
            Either::Right(Either::Left(read))
        } else {
            if !request.body().is_end_stream() {
                request = request.map(|body| Body::new(http_body_util::Limited::new(body, limit)));
            }
            let plan = public
                .filter(|_| faulty)
                .map(|public| plan_for(&app, public, &posts, &request))
                .filter(|plan| !plan.is_empty());
            match plan {
                None => Either::Left(self.inner.call(request)),
                Some(plan) => {
                    let path = FaultPath::new(&request, arrival.as_ref());
                    fault_path = Some(path.clone());
                    // Boxed: the fault path's state (sleeps, acts, bodies)
                    // is large, and every other request would carry it.
                    let faults: BoxedAnswer = Box::pin(with_faults(
                        app.clone(),
                        plan,
                        path,
                        request,
                        self.inner.clone(),
                    ));
                    Either::Right(Either::Left(faults))
                }
            }
        };

        // The request's id and route for every line it logs: in a
        // task-local that the binary's log lines read (`logs`), and in a
        // span for an embedder's own subscriber (the binary's leaves the
        // span out, uncreated).
        let span = tracing::info_span!(
            crate::logs::REQUEST_SPAN,
            request_id = id.to_str().unwrap_or_default(),
            route = route.label()
        );
        let request_id = id.clone();
        // Only with the journal on: a request that is not journaled pays
        // nothing for it.
        let mut journaling = arrival.map(|arrival| Journaling {
            app: app.clone(),
            arrival: Some(arrival),
            faults: fault_path.clone(),
            started,
        });
        Box::pin(crate::logs::in_request(
            request_id,
            route.label(),
            async move {
                let handled = std::panic::AssertUnwindSafe(work).catch_unwind();
                let mut handled = std::pin::pin!(handled);
                // Most answers (a cached view) are ready at the first poll:
                // the timer is armed only for one that is not.
                let answer = match future::poll_immediate(handled.as_mut()).await {
                    Some(answer) => Ok(answer),
                    None => {
                        let left = app.request_timeout.saturating_sub(started.elapsed());
                        tokio::time::timeout(left, handled).await
                    }
                };
                let timed_out = answer.is_err();
                let mut response = match answer {
                    Ok(Ok(Ok(response))) => response,
                    Ok(Err(panic)) => panic_response(panic),
                    Err(_) => match fault_path.as_deref().filter(|f| f.hangs()) {
                        // A `hang` never answers: its connection is cut.
                        Some(hung) => hung.cut(false),
                        None => ApiError::new(
                            StatusCode::SERVICE_UNAVAILABLE,
                            code::TIMEOUT,
                            "the request took too long",
                        )
                        .into_response(),
                    },
                };
                let status = response.status();
                if (status.is_client_error() || status.is_server_error()) && !is_json(&response) {
                    let mut json = ApiError::for_status(status).into_response();
                    for (name, value) in response.headers() {
                        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                            json.headers_mut().append(name.clone(), value.clone());
                        }
                    }
                    response = json;
                }
                let elapsed = started.elapsed();
                if let Some(journaling) = journaling.as_mut() {
                    journaling.finish(&response, timed_out, elapsed);
                }
                app.metrics.observe(route, status, elapsed.as_secs_f64());
                tracing::debug!(
                    %method,
                    route = route.label(),
                    status = status.as_u16(),
                    elapsed_ms = elapsed.as_secs_f64() * 1e3,
                    "request"
                );
                response.headers_mut().insert(REQUEST_ID.clone(), id);
                Ok(response)
            }
            .instrument(span),
        ))
    }
}

/// `request` with its body read whole through `limit`: the 413
/// `payload_too_large` past it, a 400 when the body cannot be read (the
/// client broke off, or sent a malformed chunk).
async fn read_whole(request: Request, limit: usize) -> Result<Request, Response> {
    use http_body_util::BodyExt as _;
    let (parts, body) = request.into_parts();
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(whole) => Ok(Request::from_parts(parts, Body::from(whole.to_bytes()))),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE).into_response())
        }
        Err(err) => Err(ApiError::bad_request(
            code::BAD_REQUEST,
            format!("the request body could not be read: {err}"),
        )
        .into_response()),
    }
}

/// Whether an answer's body is JSON.
fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// A handler's panic, as a JSON 500 (and an error log line, at most once
/// a second: `log_limit`).
fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    // Once per request when every request meets the same bug.
    crate::log_limit::limited!(tracing::Level::ERROR, panic = detail, "a handler panicked");
    ApiError::internal("internal server error").into_response()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_a_json_500() {
        let response = panic_response(Box::new("boom"));
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        let body: likekit_proto::ErrorBody = serde_json::from_slice(&body).unwrap();
        assert_eq!(body.error.code, "internal");
    }

    #[test]
    fn made_request_ids_are_sixteen_hex_digits_counting_up() {
        let request = || Request::new(Body::empty());
        let first = request_id(&request());
        let second = request_id(&request());
        let parse = |id: &HeaderValue| {
            let text = id.to_str().unwrap();
            assert_eq!(text.len(), 16, "{text}");
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
            u64::from_str_radix(text, 16).unwrap()
        };
        // Other tests may take ids in between.
        let step = parse(&second).wrapping_sub(parse(&first));
        assert!((1..1_000_000).contains(&step), "{step}");
        let mut given = request();
        given
            .headers_mut()
            .insert(&REQUEST_ID, HeaderValue::from_static("trace-7"));
        assert_eq!(request_id(&given), "trace-7");
    }

    #[tokio::test]
    async fn an_oversized_body_is_a_json_object_of_exactly_the_size_asked() {
        for bytes in [2, 3, 13, 14, 15, 100, 64 * 1024 + 17, 3 << 20] {
            let (body, length) = oversized(bytes);
            let response = json_body(StatusCode::OK, body, Some(length));
            let announced: u64 = response.headers()[header::CONTENT_LENGTH]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            assert_eq!(body.len() as u64, announced, "{bytes}");
            assert_eq!(announced, bytes);
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert!(json.is_object(), "{bytes}");
            if bytes >= OVERSIZED_FRAME {
                assert!(json["padding"].is_string(), "{bytes}");
            }
        }
    }
}
