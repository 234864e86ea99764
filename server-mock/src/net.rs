//! Serving the router on a TCP listener whose connections a handler can
//! cut, so that a fault rule's "drop" reaches the client as a broken
//! connection rather than an HTTP answer.
//!
//! [`spawn`](crate::spawn) serves with it; serve an [`App`](crate::App)'s
//! router (or any router) the same way:
//!
//! ```no_run
//! # async fn run(app: likekit_server::App) -> std::io::Result<()> {
//! use likekit_server::net::{ConnInfo, Listener};
//!
//! let tcp = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(
//!     Listener::new(tcp),
//!     app.router().into_make_service_with_connect_info::<ConnInfo>(),
//! )
//! .await
//! # }
//! ```
//!
//! Served any other way the server works the same, except that a drop rule
//! answers 503 instead of cutting the connection.
//!
//! [`spawn`](crate::spawn) itself serves with [`serve`], its own accept
//! loop over hyper, for what `axum::serve` does not offer: a deadline for
//! a request's head (which is also how long a kept-alive connection may sit
//! idle) and a cap on open connections ([`ConnectionLimits`]).
//!
//! The deadline is kept here rather than by hyper's header-read timeout,
//! for two reasons. hyper's starts only once it knows the protocol, so a
//! client that sent the first bytes of an HTTP/2 preface (or only a `P`,
//! which could begin one) and then nothing held its connection forever;
//! and hyper arms a timer for every request head, which over loopback cost
//! about a microsecond per request. Here each connection has one timer
//! that wakes at most once per timeout (`Quiet`).
//!
//! A connection past its deadline is closed gracefully first, as one is
//! when the server stops: an HTTP/2 client gets a GOAWAY, so it opens no
//! new stream on a connection about to close (a load balancer that pools
//! HTTP/2 connections to the server retries nothing and sees no reset);
//! after `CLOSE_GRACE` (one second) the connection is cut whatever the client does.
//!
//! The deadline is postponed while an answer is being written, but not
//! for ever: a client that does not read its answers (an HTTP/2 one that
//! opens no flow-control window, an HTTP/1 one that leaves a large answer
//! unread) would otherwise keep its connection, and a slot under the
//! cap, as long as it likes. An answer's body marks each frame it hands
//! hyper (one relaxed store), and a connection whose answers have not
//! moved for the request timeout plus the header-read timeout is closed
//! the same way.
//!
//! Each connection runs in a task of the accept loop's own: dropping the
//! [`serve`] future (as [`spawn`](crate::spawn)'s shutdown does when its
//! grace has run out) aborts them, which closes every connection still
//! open.

use std::{
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{extract::connect_info::Connected, serve::IncomingStream};

use crate::metrics::ConnectionMetrics;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
};

/// Cuts one connection: once triggered, every read and write on it fails, so
/// hyper closes the socket without writing the pending answer; once
/// [`reset`](KillSwitch::reset), the socket is closed with a TCP reset.
#[derive(Debug, Clone, Default)]
pub(crate) struct KillSwitch(Arc<(AtomicBool, AtomicBool)>);

impl KillSwitch {
    pub(crate) fn trigger(&self) {
        self.0.0.store(true, Ordering::Release);
    }

    /// Like [`trigger`](KillSwitch::trigger), closing with a reset (RST)
    /// instead of an orderly close (FIN).
    pub(crate) fn reset(&self) {
        self.0.1.store(true, Ordering::Release);
        self.trigger();
    }

    fn check(&self, stream: &TcpStream) -> io::Result<()> {
        if self.0.0.load(Ordering::Acquire) {
            if self.0.1.load(Ordering::Acquire) {
                // SO_LINGER 0: closing the socket sends RST.
                let _ = stream.set_zero_linger();
            }
            Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "connection dropped by a fault rule",
            ))
        } else {
            Ok(())
        }
    }
}

/// A [`TcpStream`] that a fault rule can cut (the I/O type of [`Listener`]).
#[derive(Debug)]
pub struct KillableStream {
    inner: TcpStream,
    kill: KillSwitch,
}

impl AsyncRead for KillableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.kill.check(&this.inner)?;
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for KillableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.kill.check(&this.inner)?;
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.kill.check(&this.inner)?;
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.kill.check(&this.inner)?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A TCP listener for `axum::serve` whose connections a fault rule can
/// cut. Every accepted connection has `TCP_NODELAY` set; a failed accept
/// (out of file descriptors…) is logged and retried after a pause.
#[derive(Debug)]
pub struct Listener(TcpListener);

impl Listener {
    /// Wraps a bound listener.
    pub fn new(listener: TcpListener) -> Self {
        Self(listener)
    }
}

impl axum::serve::Listener for Listener {
    type Io = KillableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    let io = KillableStream {
                        inner: stream,
                        kill: KillSwitch::default(),
                    };
                    return (io, addr);
                }
                Err(err) => {
                    // Like axum's own listener: out of file descriptors and
                    // similar errors are logged and retried after a pause
                    // (logged at most once a second: out of file
                    // descriptors, every retry fails).
                    crate::log_limit::limited!(tracing::Level::WARN, error = %err, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// How the server treats connections ([`serve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a client may take to send a request's head, from the
    /// moment the server waits for it: a new connection's first request,
    /// and each next one on a kept-alive connection (so it is also the
    /// idle keep-alive timeout). Past it the connection is closed. On an
    /// HTTP/2 connection it is how long the connection may have no request
    /// open. Default 10 s.
    pub header_read_timeout: std::time::Duration,
    /// The most connections open at once on one listener; more wait in
    /// the OS's accept queue until one closes. Default 10,000 (each takes
    /// a file descriptor: keep it under the process's limit, `ulimit -n`).
    /// The cap is per listener: with an operations listener
    /// ([`Config::ops_listen`](crate::Config::ops_listen)) each port has
    /// its own, so that a flood on the public port never keeps `/metrics`
    /// or the admin API out; up to twice this many may be open in all.
    /// 1 to [`MAX_CONNECTIONS`]: [`spawn`](crate::spawn) refuses a value
    /// out of that range ([`check`](Self::check)), and [`serve`] holds it
    /// to the range.
    pub max_connections: usize,
    /// The most connections open at once from one client address, on one
    /// listener; a connection past it is closed as soon as it is accepted,
    /// so that one host cannot take every one of `max_connections`. 0 (the
    /// default): no cap per address, as behind a load balancer or proxy,
    /// whose own address every connection comes from. An address is an
    /// IPv4 or IPv6 address as the socket gives it: a host with many IPv6
    /// addresses has a share for each.
    pub max_connections_per_ip: usize,
}

/// The largest [`ConnectionLimits::max_connections`]: a million
/// connections, each a file descriptor, is about as many as one process
/// may open at all (Linux allows at most 1,048,576 by default,
/// `fs.nr_open`).
///
/// ```
/// use likekit_server::net::{ConnectionLimits, MAX_CONNECTIONS};
/// let limits = ConnectionLimits { max_connections: MAX_CONNECTIONS + 1, ..Default::default() };
/// assert!(limits.check().is_err());
/// ```
pub const MAX_CONNECTIONS: usize = 1_000_000;

impl ConnectionLimits {
    /// Whether the limits can be served: `max_connections` from 1 to
    /// [`MAX_CONNECTIONS`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`](crate::Error::Config) saying which bound it breaks.
    pub fn check(&self) -> Result<(), crate::Error> {
        if (1..=MAX_CONNECTIONS).contains(&self.max_connections) {
            Ok(())
        } else {
            Err(crate::Error::Config(format!(
                "max_connections must be from 1 to {MAX_CONNECTIONS}; got {}",
                self.max_connections
            )))
        }
    }

    /// `max_connections`, held to 1..=[`MAX_CONNECTIONS`].
    fn slots(&self) -> usize {
        self.max_connections.clamp(1, MAX_CONNECTIONS)
    }
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: std::time::Duration::from_secs(10),
            max_connections: 10_000,
            max_connections_per_ip: 0,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets the
/// open connections finish their requests. The caller bounds how long:
/// dropping the future closes every connection still open. Requests get
/// [`ConnInfo`] as `ConnectInfo`, as with
/// `into_make_service_with_connect_info::<ConnInfo>()`; HTTP/1.1 and
/// HTTP/2 (prior knowledge) are both spoken.
///
/// A connection whose answers move no byte to the client for 30 s (the
/// default [`Config::request_timeout`](crate::Config::request_timeout))
/// plus the header-read timeout is closed: a client that does not read
/// holds no connection for ever. A `max_connections` of 0 serves one
/// connection at a time, one past [`MAX_CONNECTIONS`] that many.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let stall = limits
        .header_read_timeout
        .saturating_add(DEFAULT_REQUEST_TIMEOUT);
    serve_counted(listener, router, limits, stall, shutdown, None).await;
}

/// `Config::default().request_timeout`, for [`serve`], which is not told
/// the router's.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The connections open from each client address on one listener, held
/// to [`ConnectionLimits::max_connections_per_ip`].
struct PerAddress {
    cap: usize,
    open: std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>,
}

impl PerAddress {
    fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap,
            open: std::sync::Mutex::default(),
        })
    }

    /// A share for one more connection from `ip`, or `None` when that
    /// address has its cap open already. The share gives its place back
    /// when dropped.
    fn take(self: &Arc<Self>, ip: std::net::IpAddr) -> Option<AddressShare> {
        if self.cap == 0 {
            return Some(AddressShare(None));
        }
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(ip).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(AddressShare(Some((Arc::clone(self), ip))))
    }
}

/// One connection's place in [`PerAddress`] (none without a cap).
struct AddressShare(Option<(Arc<PerAddress>, std::net::IpAddr)>);

impl Drop for AddressShare {
    fn drop(&mut self) {
        if let Some((per_address, ip)) = self.0.take() {
            let mut open = per_address.open.lock().unwrap_or_else(|e| e.into_inner());
            if let std::collections::hash_map::Entry::Occupied(mut count) = open.entry(ip) {
                *count.get_mut() -= 1;
                if *count.get() == 0 {
                    count.remove();
                }
            }
        }
    }
}

/// Keeps a listener's open-connections gauge right, however a
/// connection's task ends.
struct OpenConnection(Option<ConnectionMetrics>);

impl OpenConnection {
    fn new(metrics: Option<ConnectionMetrics>) -> Self {
        if let Some(metrics) = &metrics {
            metrics.accepted.increment(1);
            metrics.open.increment(1.0);
        }
        Self(metrics)
    }

    fn timed_out(&self) {
        if let Some(metrics) = &self.0 {
            metrics.timed_out.increment(1);
        }
    }

    /// Counts a connection closed at once: its address had its share open.
    fn refused_for_address(metrics: Option<&ConnectionMetrics>) {
        if let Some(metrics) = metrics {
            metrics.refused_per_ip.increment(1);
        }
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        if let Some(metrics) = &self.0 {
            metrics.open.decrement(1.0);
        }
    }
}

/// [`serve`], counting the listener's connections in `metrics`, and
/// closing a connection whose answers have moved nothing for `stall` (the
/// request timeout plus the header-read timeout: no handler, and so no
/// answer's head, takes longer than the request timeout).
pub(crate) async fn serve_counted(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    stall: Duration,
    shutdown: impl std::future::Future<Output = ()>,
    metrics: Option<ConnectionMetrics>,
) {
    use futures_util::FutureExt as _;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use tower::Service as _;

    // No timer for hyper: without one it keeps no header-read timeout of
    // its own; the connection's `Quiet` keeps ours.
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.slots()));
    let per_address = PerAddress::new(limits.max_connections_per_ip);
    if let Some(metrics) = &metrics {
        metrics.max.set(limits.slots() as f64);
    }
    // Tells the connections that the server stops: those still waiting for
    // their first byte close at once, the others finish the requests they
    // have (an HTTP/2 one sends a GOAWAY first).
    let (closing, closed) = tokio::sync::watch::channel(false);
    // The connections' tasks: dropped with this future (a shutdown whose
    // grace has run out), they are aborted and their sockets closed.
    let mut connections = tokio::task::JoinSet::new();
    let mut listener = Listener::new(listener);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = async {
            // A slot first, then the connection: past the cap, clients
            // wait in the accept queue rather than being taken and starved.
            let slot = Arc::clone(&slots).acquire_owned().await;
            let (io, remote) = axum::serve::Listener::accept(&mut listener).await;
            (slot, io, remote)
        };
        let (slot, io, remote) = tokio::select! {
            accepted = accepted => accepted,
            () = &mut shutdown => break,
        };
        // Past its address's share the connection is closed here, its
        // slot given back, before it costs a task.
        let Some(share) = per_address.take(remote.ip()) else {
            OpenConnection::refused_for_address(metrics.as_ref());
            drop((io, slot));
            continue;
        };
        let open = OpenConnection::new(metrics.clone());
        let info = ConnInfo {
            remote,
            kill: io.kill.clone(),
        };
        let router = router.clone();
        let quiet = Arc::new(Quiet::new());
        let service = {
            let quiet = Arc::clone(&quiet);
            hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(info.clone()));
                let answering = quiet.answering();
                router.clone().call(request).map(move |answer| {
                    answer.map(|response| response.map(|body| Answered { body, answering }))
                })
            })
        };
        let builder = builder.clone();
        let timeout = limits.header_read_timeout;
        let mut closed = closed.clone();
        // Ended ones first, so that the set holds no more than the open ones.
        while connections.try_join_next().is_some() {}
        connections.spawn(async move {
            // Until its first byte a connection is not handed to hyper, so
            // that a client that sends nothing is closed at once when the
            // server stops (a graceful close would wait for it).
            let mut peek = [0_u8; 1];
            let first = tokio::select! {
                first = io.inner.peek(&mut peek) => first,
                _ = quiet.expired(timeout, stall) => {
                    open.timed_out();
                    return;
                }
                _ = closed.wait_for(|closed| *closed) => return,
            };
            if !matches!(first, Ok(n) if n > 0) {
                return;
            }
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(io), service)
                .into_owned();
            let mut connection = std::pin::pin!(connection);
            // Asked to close, for the server's shutdown (no bound: the
            // caller bounds the shutdown) or for being quiet too long
            // (bounded by `CLOSE_GRACE`).
            let mut stopping = false;
            let mut cut_at: Option<tokio::time::Instant> = None;
            loop {
                tokio::select! {
                    // The connection first: it is what wakes this task on
                    // every request.
                    biased;
                    served = connection.as_mut() => {
                        if let Err(err) = served {
                            tracing::debug!(error = %err, %remote, "connection ended with an error");
                        }
                        break;
                    }
                    why = quiet.expired(timeout, stall), if cut_at.is_none() => {
                        open.timed_out();
                        match why {
                            Expired::Idle => tracing::debug!(%remote, "connection closing: no request head within the header-read timeout"),
                            Expired::Stalled => tracing::debug!(%remote, "connection closing: its answers have not moved (the client does not read them)"),
                        }
                        // HTTP/2: a GOAWAY, so that the client opens no new
                        // stream here; an idle HTTP/1 connection closes.
                        connection.as_mut().graceful_shutdown();
                        cut_at = Some(tokio::time::Instant::now() + CLOSE_GRACE);
                    }
                    _ = closed.wait_for(|closed| *closed), if !stopping => {
                        stopping = true;
                        connection.as_mut().graceful_shutdown();
                    }
                    // Dropping the connection closes its socket: a head
                    // half sent gets no answer.
                    () = tokio::time::sleep_until(cut_at.unwrap_or_else(tokio::time::Instant::now)), if cut_at.is_some() => break,
                }
            }
            drop((open, slot, share, closed));
        });
    }
    drop((listener, closed));
    closing.send_replace(true);
    while connections.join_next().await.is_some() {}
}

/// Why [`Quiet::expired`] completed.
enum Expired {
    /// No request head came within the timeout.
    Idle,
    /// Answers were being written but none moved for the stall time.
    Stalled,
}

/// How long a connection closed for being quiet may take to close: an
/// HTTP/2 one sends a GOAWAY and waits for the client's answer to the PING
/// that follows it (a second GOAWAY then names the last stream served, and
/// the connection closes); an idle HTTP/1 one closes at once. A client
/// that answers neither, or is still sending a request head, is cut when
/// this runs out.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// One connection's header-read deadline. The connection is *quiet* while
/// no request of it is with the router and no answer of it is being
/// written; it may stay quiet for at most the timeout. One timer per
/// connection checks that, and sleeps again until the deadline moves on,
/// so requests themselves arm nothing: each only counts itself in and out
/// ([`Quiet::answering`]).
///
/// A client that trickles a head byte by byte is still closed: bytes read
/// do not count, only answers finished.
///
/// While requests are open the timer still wakes once per timeout, to see
/// whether their answers move (`moved`): one that has not for the stall
/// time is a client that does not read.
struct Quiet {
    opened: Instant,
    /// Requests handed to the router whose answers are not yet written
    /// (HTTP/2 has several at once).
    busy: AtomicUsize,
    /// When the last answer was written, in µs since `opened`.
    since: AtomicU64,
    /// Set by an answer's body at each frame it yields (and at its end);
    /// the timer takes it back.
    moved: AtomicBool,
    /// When the timer last saw `moved` set, in µs since `opened`: kept
    /// here, not in the timer, because the timer's future is made again
    /// when the server starts to stop, and a new one must not take an
    /// answer that moved a moment ago for one that never did.
    moved_at: AtomicU64,
}

impl Quiet {
    fn new() -> Self {
        Self {
            opened: Instant::now(),
            busy: AtomicUsize::new(0),
            since: AtomicU64::new(0),
            moved: AtomicBool::new(false),
            moved_at: AtomicU64::new(0),
        }
    }

    /// Counts a request in, until the returned guard (which its answer's
    /// body carries) is dropped.
    fn answering(self: &Arc<Self>) -> Answering {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Answering(Arc::clone(self))
    }

    /// Completes once the connection has been quiet for `timeout`, or
    /// its answers have not moved for `stall`.
    async fn expired(&self, timeout: Duration, stall: Duration) -> Expired {
        let mut deadline = self.opened + timeout;
        loop {
            tokio::time::sleep_until(deadline.into()).await;
            let now = Instant::now();
            let since = self.opened + Duration::from_micros(self.since.load(Ordering::Acquire));
            if self.busy.load(Ordering::Acquire) > 0 {
                if self.moved.swap(false, Ordering::Relaxed) {
                    let at = u64::try_from((now - self.opened).as_micros()).unwrap_or(u64::MAX);
                    self.moved_at.store(at, Ordering::Relaxed);
                }
                let moved_at =
                    self.opened + Duration::from_micros(self.moved_at.load(Ordering::Relaxed));
                // An answer that ended is progress too; so is a request
                // that began after a quiet time (`since` is at most one
                // timeout before it).
                if now >= moved_at.max(since) + stall {
                    return Expired::Stalled;
                }
                // The answer's end will move the deadline; look again one
                // timeout from now at the latest.
                deadline = now + timeout;
                continue;
            }
            let due = since + timeout;
            if now >= due {
                return Expired::Idle;
            }
            deadline = due;
        }
    }
}

/// A request of a [`Quiet`] connection, counted out when dropped: with its
/// answer's body, once hyper has taken the whole body (or the connection
/// ended): a small body is taken at once, a large one as the socket drains.
struct Answering(Arc<Quiet>);

impl Drop for Answering {
    fn drop(&mut self) {
        let quiet = &self.0;
        let at = u64::try_from(quiet.opened.elapsed().as_micros()).unwrap_or(u64::MAX);
        // Before the count, so that a timer that sees no request also sees
        // when the last one ended.
        quiet.since.fetch_max(at, Ordering::AcqRel);
        quiet.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body, carrying its request's [`Answering`] until hyper has
/// written it.
struct Answered<B> {
    body: B,
    answering: Answering,
}

impl<B: hyper::body::Body + Unpin> hyper::body::Body for Answered<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if frame.is_ready() {
            // hyper asks for a frame only once it has room to write it.
            this.answering.0.moved.store(true, Ordering::Relaxed);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// What each request knows about its connection: serve with
/// `into_make_service_with_connect_info::<ConnInfo>()` so that fault rules
/// find the connection to cut.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub(crate) remote: SocketAddr,
    pub(crate) kill: KillSwitch,
}

impl ConnInfo {
    /// The client's address.
    pub fn remote(&self) -> SocketAddr {
        self.remote
    }
}

impl Connected<IncomingStream<'_, Listener>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, Listener>) -> Self {
        Self {
            remote: *stream.remote_addr(),
            kill: stream.io().kill.clone(),
        }
    }
}
