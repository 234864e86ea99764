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

use std::{
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
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
                    // similar errors are logged and retried after a pause.
                    tracing::warn!(error = %err, "accept failed");
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
    /// idle keep-alive timeout). Past it the connection is closed. Default
    /// 10 s.
    pub header_read_timeout: std::time::Duration,
    /// The most connections open at once; more wait in the OS's accept
    /// queue until one closes. Default 10,000 (each takes a file
    /// descriptor: keep it under the process's limit, `ulimit -n`).
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: std::time::Duration::from_secs(10),
            max_connections: 10_000,
        }
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets the
/// open connections finish their requests (the caller bounds how long).
/// Requests get [`ConnInfo`] as `ConnectInfo`, as with
/// `into_make_service_with_connect_info::<ConnInfo>()`; HTTP/1.1 and
/// HTTP/2 (prior knowledge) are both spoken.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    serve_counted(listener, router, limits, shutdown, None).await;
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
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        if let Some(metrics) = &self.0 {
            metrics.open.decrement(1.0);
        }
    }
}

/// [`serve`], counting the listener's connections in `metrics`.
pub(crate) async fn serve_counted(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
    metrics: Option<ConnectionMetrics>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use tower::Service as _;

    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    if let Some(metrics) = &metrics {
        metrics.max.set(limits.max_connections.max(1) as f64);
    }
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    // Tells the connections still waiting for their first byte that the
    // server stops: they close at once instead of holding the shutdown
    // until their timeout (each holds a graceful-shutdown watcher).
    let (closing, closed) = tokio::sync::watch::channel(false);
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
        let open = OpenConnection::new(metrics.clone());
        let info = ConnInfo {
            remote,
            kill: io.kill.clone(),
        };
        let router = router.clone();
        let service = hyper::service::service_fn(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(info.clone()));
                router.clone().call(request)
            },
        );
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let first_byte = limits.header_read_timeout;
        let mut closed = closed.clone();
        tokio::spawn(async move {
            // hyper's timer starts once it knows the protocol, which it
            // learns from the first bytes: a client that sends none is held
            // to the same deadline here, and closed when the server stops.
            let mut peek = [0_u8; 1];
            let opened = tokio::select! {
                opened = tokio::time::timeout(first_byte, io.inner.peek(&mut peek)) => opened,
                _ = closed.wait_for(|closed| *closed) => Ok(Ok(0)),
            };
            match opened {
                Ok(Ok(n)) if n > 0 => {
                    let connection = builder
                        .serve_connection_with_upgrades(TokioIo::new(io), service)
                        .into_owned();
                    if let Err(err) = watcher.watch(connection).await {
                        if err
                            .downcast_ref::<hyper::Error>()
                            .is_some_and(hyper::Error::is_timeout)
                        {
                            open.timed_out();
                        }
                        tracing::debug!(error = %err, %remote, "connection ended with an error");
                    }
                }
                Err(_elapsed) => open.timed_out(),
                Ok(_) => {}
            }
            drop((open, slot));
        });
    }
    drop(listener);
    closing.send_replace(true);
    graceful.shutdown().await;
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
