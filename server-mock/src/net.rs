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
