//! Connection hygiene: a client that never finishes its request head, or
//! sits idle on a kept-alive connection, is disconnected after the
//! header-read timeout (an HTTP/2 one with a GOAWAY first), while other
//! clients are served throughout; past
//! the cap on open connections, new ones wait until a slot frees. A
//! shutdown closes the silent ones at once and lets requests in flight
//! finish, on the operations port too; `/metrics` counts each listener's
//! connections.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use crate::common::{self, TestServer, test_config};
use likekit_server::{Config, net::ConnectionLimits};
use reqwest::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Waits until the server closes `stream` (end of stream or a reset), or
/// fails after `patience`. Anything the server writes first is read and
/// ignored.
async fn closed_by_the_server(mut stream: TcpStream, patience: Duration) -> Duration {
    let started = Instant::now();
    let mut buf = [0_u8; 1024];
    loop {
        match tokio::time::timeout(patience, stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => {}
            Err(_) => panic!("the connection is still open after {patience:?}"),
        }
    }
}

fn with_limits(limits: ConnectionLimits) -> Config {
    Config {
        connections: limits,
        ..test_config()
    }
}

/// A header-read timeout, and room for 10,000 connections.
fn with_header_timeout(header_read_timeout: Duration) -> Config {
    with_limits(ConnectionLimits {
        header_read_timeout,
        max_connections: 10_000,
        ..ConnectionLimits::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_heads_are_closed_after_the_timeout_and_others_are_served() {
    let t = TestServer::with(with_header_timeout(Duration::from_secs(1))).await;
    t.setup(&[(1, "Ana")], &[42]).await;
    let addr = t.server.addr();

    // 200 clients that start a request and never finish its head.
    let mut slow = Vec::new();
    for _ in 0..200 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /posts/42/likes HTTP/1.1\r\nHost: likes\r\nX-Slow: ")
            .await
            .unwrap();
        slow.push(stream);
    }
    // One that sent a whole request, read the answer, then went quiet on
    // its kept-alive connection.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /livez HTTP/1.1\r\nHost: likes\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0_u8; 256];
    let n = idle.read(&mut answer).await.unwrap();
    assert!(
        answer[..n].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&answer[..n])
    );

    // Meanwhile a normal client is served, again and again.
    let served = async {
        let started = Instant::now();
        let mut answers = 0;
        while started.elapsed() < Duration::from_millis(1500) {
            let r = t.view(1, 42).await;
            assert_eq!(r.status(), StatusCode::OK);
            answers += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        answers
    };
    let closing = async {
        let mut waits = Vec::new();
        for stream in slow {
            waits.push(tokio::spawn(closed_by_the_server(
                stream,
                Duration::from_secs(10),
            )));
        }
        let mut slowest = Duration::ZERO;
        for wait in waits {
            slowest = slowest.max(wait.await.unwrap());
        }
        slowest
    };
    let (answers, slowest) = tokio::join!(served, closing);
    assert!(
        answers >= 10,
        "only {answers} answers while the slow clients waited"
    );
    // All 200 closed within the timeout and a margin; none stayed.
    assert!(slowest < Duration::from_secs(10), "{slowest:?}");
    closed_by_the_server(idle, Duration::from_secs(10)).await;
    t.stop().await;
}

/// A cap on connections out of 1..=`MAX_CONNECTIONS` stops the start
/// with a configuration error (past 2^61 - 1 a semaphore cannot count it,
/// and the accept loop panicked, serving nothing); `net::serve` holds one
/// to the range and serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_out_of_range_is_refused_or_held_to_the_range() {
    use likekit_server::net::MAX_CONNECTIONS;
    for max_connections in [0, MAX_CONNECTIONS + 1, 1 << 61, usize::MAX] {
        let err = likekit_server::spawn(with_limits(ConnectionLimits {
            max_connections,
            ..ConnectionLimits::default()
        }))
        .await
        .unwrap_err();
        assert!(
            matches!(err, likekit_server::Error::Config(_)),
            "{max_connections}: {err}"
        );
        assert!(
            err.to_string().contains(&format!(
                "max_connections must be from 1 to {MAX_CONNECTIONS}"
            )),
            "{err}"
        );
    }
    let t = TestServer::with(with_limits(ConnectionLimits {
        max_connections: MAX_CONNECTIONS,
        ..ConnectionLimits::default()
    }))
    .await;
    assert_eq!(
        t.http.get(t.url("/livez")).send().await.unwrap().status(),
        StatusCode::OK
    );
    t.stop().await;

    let app = likekit_server::App::open(&test_config()).await.unwrap();
    for max_connections in [0, usize::MAX] {
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/livez", tcp.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(likekit_server::net::serve(
            tcp,
            app.router(),
            ConnectionLimits {
                max_connections,
                ..ConnectionLimits::default()
            },
            async {
                let _ = stopped.await;
            },
        ));
        let r = common::client().get(&url).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{max_connections}");
        let _ = stop.send(());
        serving.await.unwrap();
    }
    app.store().close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_a_connection_waits_for_a_free_slot() {
    let timeout = Duration::from_secs(1);
    let t = TestServer::with(with_limits(ConnectionLimits {
        header_read_timeout: timeout,
        max_connections: 3,
        ..ConnectionLimits::default()
    }))
    .await;
    let addr = t.server.addr();
    // Three connections take every slot and send nothing.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    // Give the server a moment to accept all three.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let asked = Instant::now();
    let r = common::client().get(t.url("/livez")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // Answered only once the silent ones were closed for their timeout.
    assert!(
        asked.elapsed() >= timeout / 2,
        "answered after {:?}, with every slot taken",
        asked.elapsed()
    );
    for stream in held {
        closed_by_the_server(stream, Duration::from_secs(10)).await;
    }
    t.stop().await;
}

/// A connection from `from` (an address of the loopback range) to `addr`.
async fn connect_from(from: [u8; 4], addr: std::net::SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(std::net::SocketAddr::from((from, 0))).unwrap();
    socket.connect(addr).await.unwrap()
}

/// `GET /livez` on `stream`, and its answer's status line (empty when the
/// server closed or reset the connection instead).
async fn livez_on(mut stream: TcpStream) -> String {
    let request = b"GET /livez HTTP/1.1\r\nHost: likekit\r\nConnection: close\r\n\r\n";
    let mut answer = Vec::new();
    if stream.write_all(request).await.is_err() {
        return String::new();
    }
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "no answer within 5 s");
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// With a cap per client address, one host holding its share cannot take
/// the rest: its next connection is closed at once, while another address
/// is served; once one of its own closes, it is served again. `/metrics`
/// counts the refused ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_past_its_share_is_closed_and_others_are_served() {
    let t = TestServer::with(Config {
        ops_listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        ..with_limits(ConnectionLimits {
            header_read_timeout: Duration::from_secs(30),
            max_connections: 100,
            max_connections_per_ip: 3,
        })
    })
    .await;
    let addr = t.server.addr();
    // Three silent connections from 127.0.0.1: its whole share.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from([127, 0, 0, 1], addr).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A fourth is closed at once, long before the header-read timeout.
    let fourth = connect_from([127, 0, 0, 1], addr).await;
    // (closed_by_the_server fails past its 5 s patience: the header-read
    // timeout, 30 s, would close it only much later)
    closed_by_the_server(fourth, Duration::from_secs(5)).await;
    // Another address is served meanwhile.
    let status = livez_on(connect_from([127, 0, 0, 2], addr).await).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    // One of 127.0.0.1's own closes: it is served again.
    drop(held.pop());
    // (Until the server sees that close, a new one is still past the share.)
    let mut served = String::new();
    let mut refused = 1;
    for _ in 0..50 {
        served = livez_on(connect_from([127, 0, 0, 1], addr).await).await;
        if !served.is_empty() {
            break;
        }
        refused += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(served, "HTTP/1.1 200 OK");
    let metrics = common::client()
        .get(format!("{}/metrics", t.server.ops_url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        series(
            &metrics,
            "likekit_connections_refused_per_ip_total{listener=\"public\"}"
        ),
        f64::from(refused),
        "{metrics}"
    );
    t.stop().await;
}

/// A client that sends only the start of what could be an HTTP/2 preface
/// (a `P` could also begin `POST`) and then nothing is held to the same
/// deadline as a half-sent HTTP/1 head; so is an HTTP/2 connection with no
/// request open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_http2_preface_is_closed_after_the_timeout() {
    let t = TestServer::with(with_header_timeout(Duration::from_secs(1))).await;
    let addr = t.server.addr();
    let mut waits = Vec::new();
    for start in [
        &b"P"[..],
        b"PRI * HTTP/2.0\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ] {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(start).await.unwrap();
        waits.push(tokio::spawn(closed_by_the_server(
            stream,
            Duration::from_secs(10),
        )));
    }
    for wait in waits {
        let after = wait.await.unwrap();
        assert!(
            after >= Duration::from_millis(500),
            "closed after {after:?}"
        );
    }
    let r = common::client().get(t.url("/livez")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    t.stop().await;
}

/// One HTTP/2 frame, as read off the connection.
#[derive(Debug)]
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const ACK: u8 = 0x1;
const END_STREAM: u8 = 0x1;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).unwrap().to_be_bytes();
    let mut out = vec![len[1], len[2], len[3], kind, flags];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Answers the server's SETTINGS or PING `f` with its ACK, as a client
/// must for the connection to go on.
async fn acknowledge(stream: &mut TcpStream, f: &Frame) {
    let payload: &[u8] = if f.kind == PING { &f.payload } else { &[] };
    stream
        .write_all(&frame(f.kind, ACK, 0, payload))
        .await
        .unwrap();
}

/// The next frame, or `None` once the server has closed the connection.
async fn read_frame(stream: &mut TcpStream) -> Option<Frame> {
    let mut head = [0_u8; 9];
    stream.read_exact(&mut head).await.ok()?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0; len];
    stream.read_exact(&mut payload).await.ok()?;
    Some(Frame {
        kind: head[3],
        flags: head[4],
        stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
        payload,
    })
}

/// An HTTP/2 connection left idle past the timeout is closed gracefully:
/// the client gets a GOAWAY (no error) before the close, so it opens no
/// new stream on a connection about to go, and, once it has answered the
/// server's PING, a last GOAWAY naming the last stream served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http2_connection_gets_a_goaway_before_it_closes() {
    let t = TestServer::with(with_header_timeout(Duration::from_secs(1))).await;
    let mut stream = TcpStream::connect(t.server.addr()).await.unwrap();
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend(frame(SETTINGS, 0, 0, &[]));
    // GET /livez on stream 1: `:method GET`, `:scheme http` from HPACK's
    // static table, `:path` and `:authority` as literals.
    let mut block = vec![0x82, 0x86, 0x04, 6];
    block.extend_from_slice(b"/livez");
    block.extend_from_slice(&[0x01, 5]);
    block.extend_from_slice(b"likes");
    hello.extend(frame(HEADERS, 0x4 | END_STREAM, 1, &block));
    stream.write_all(&hello).await.unwrap();

    let mut answered = None;
    let mut goaways = Vec::new();
    let read_all = async {
        while let Some(f) = read_frame(&mut stream).await {
            match f.kind {
                SETTINGS | PING if f.flags & ACK == 0 => acknowledge(&mut stream, &f).await,
                DATA | HEADERS if f.stream == 1 && f.flags & END_STREAM != 0 => {
                    answered = Some(Instant::now());
                }
                GOAWAY => {
                    let [a, b, c, d, e, f2, g, h] = f.payload[..8] else {
                        panic!("a GOAWAY of {} bytes", f.payload.len())
                    };
                    let last = u32::from_be_bytes([a, b, c, d]) & 0x7fff_ffff;
                    let code = u32::from_be_bytes([e, f2, g, h]);
                    goaways.push((Instant::now(), last, code));
                }
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read_all)
        .await
        .expect("the idle connection is still open after 10 s");

    let answered = answered.expect("the request on stream 1 was not answered");
    let (first, _, code) = *goaways.first().expect("closed without a GOAWAY");
    assert_eq!(code, 0, "GOAWAY with error code {code}");
    let quiet = first - answered;
    assert!(
        quiet >= Duration::from_millis(500),
        "GOAWAY {quiet:?} after the answer"
    );
    let (_, last, _) = *goaways.last().unwrap();
    assert_eq!(last, 1, "the last GOAWAY names stream {last}: {goaways:?}");
    t.stop().await;
}

/// Bytes arriving do not move the deadline: a client that trickles its
/// head a byte at a time, never quiet for long, is still closed once the
/// head has taken longer than the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_trickled_byte_by_byte_is_closed_after_the_timeout() {
    let timeout = Duration::from_secs(1);
    let t = TestServer::with(with_header_timeout(timeout)).await;
    let mut stream = TcpStream::connect(t.server.addr()).await.unwrap();
    let started = Instant::now();
    let head = b"GET /livez HTTP/1.1\r\nHost: likes\r\nX-Trickle: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut sent = 0;
    for byte in head {
        if stream.write_all(&[*byte]).await.is_err() {
            break;
        }
        sent += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Every byte was sent within 100 ms of the one before (the whole head
    // would take 15 s), yet the server closed the connection partway.
    assert!(
        sent < head.len(),
        "the whole trickled head was taken, after {:?}",
        started.elapsed()
    );
    t.stop().await;
}

/// The deadline is for a request's head, not its answer: an answer that
/// takes longer than the timeout, to start or to stream, is not cut, and
/// the connection's idle time counts from the answer's end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_slower_than_the_timeout_is_not_cut() {
    let timeout = Duration::from_secs(1);
    let t = TestServer::with(with_header_timeout(timeout)).await;
    t.setup(&[(1, "Ana")], &[42]).await;
    let rules = serde_json::json!({"rules": [
        {"route": "likes", "nth": 1, "latency_ms": 1500},
        {"route": "likes", "nth": 2, "phase": "after",
         "action": {"kind": "slow_body", "bytes": 16, "interval_ms": 600}},
    ]});
    let r = t
        .admin(reqwest::Method::PUT, "/admin/faults", Some(rules))
        .await;
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());

    // One kept-alive connection for both views.
    let mut stream = TcpStream::connect(t.server.addr()).await.unwrap();
    let token = t.token(1);
    let head = format!(
        "GET /posts/42/likes HTTP/1.1\r\nHost: likes\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    for view in 1..=2 {
        let asked = Instant::now();
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = read_answer(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "view {view}: {answer}");
        assert!(answer.ends_with('}'), "view {view}: {answer}");
        assert!(
            asked.elapsed() > timeout,
            "view {view} took {:?}, not longer than the timeout",
            asked.elapsed()
        );
    }
    let idle = closed_by_the_server(stream, Duration::from_secs(10)).await;
    assert!(idle >= timeout / 2, "closed {idle:?} after the last answer");
    t.stop().await;
}

/// Reads one HTTP/1.1 answer with a `content-length` from `stream`.
async fn read_answer(stream: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0_u8; 1024];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(
            n > 0,
            "closed mid-answer: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().unwrap())
                })
                .expect("a content-length");
            if got.len() >= end + 4 + length {
                return text;
            }
        }
    }
}

/// A shutdown closes the connections that have not sent a byte yet, at
/// once: nothing is served on them once the server has stopped, and they
/// do not stay open until their header-read timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_closes_connections_that_sent_nothing() {
    let t = TestServer::with(with_limits(ConnectionLimits {
        header_read_timeout: Duration::from_secs(60),
        max_connections: 100,
        ..ConnectionLimits::default()
    }))
    .await;
    let addr = t.server.addr();
    let silent = TcpStream::connect(addr).await.unwrap();
    // Give the server a moment to accept it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    t.stop().await;
    let waited = closed_by_the_server(silent, Duration::from_secs(10)).await;
    assert!(waited < Duration::from_secs(10), "{waited:?}");
}

/// With an operations listener, a shutdown lets a request in flight there
/// finish, as on the public port, even when the public port has nothing
/// left to drain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_lets_an_operations_request_finish() {
    let t = TestServer::with(Config {
        ops_listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        ..test_config()
    })
    .await;
    let ops = t.server.ops_addr().unwrap();
    let body = br#"{"rules": []}"#;
    let mut stream = TcpStream::connect(ops).await.unwrap();
    let head = format!(
        "PUT /admin/faults HTTP/1.1\r\nHost: likes\r\nX-Admin-Key: {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        common::ADMIN_KEY,
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Half the body: the request is in flight, its handler waits for the rest.
    stream.write_all(&body[..5]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let stopping = tokio::spawn(t.stop());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!stopping.is_finished(), "stopped with a request in flight");
    stream.write_all(&body[5..]).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .unwrap()
        .unwrap();
}

/// With a shutdown delay, a stopping server first says so on `/readyz`
/// (503 `not_ready`) while it goes on serving every other request, on new
/// connections too; once the delay has passed it stops accepting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_delay_turns_readiness_off_first_and_keeps_serving() {
    let delay = Duration::from_millis(1500);
    let t = TestServer::with(Config {
        shutdown_delay: delay,
        ..test_config()
    })
    .await;
    t.setup(&[(1, "Ana")], &[42]).await;
    let ready = t.url("/readyz");
    let addr = t.server.addr();
    assert_eq!(
        t.http.get(&ready).send().await.unwrap().status(),
        StatusCode::OK
    );

    // A client that has not connected yet, so every request below opens a
    // connection of its own after the stop was asked.
    let fresh = || {
        reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap()
    };
    let (view, token) = (t.url("/posts/42/likes"), t.token(1));
    let asked = Instant::now();
    let stopping = tokio::spawn(t.stop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = fresh().get(&ready).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_ready", "{body}");
    let r = fresh().get(&view).bearer_auth(&token).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(asked.elapsed() < delay, "the checks took past the delay");

    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .unwrap()
        .unwrap();
    assert!(
        asked.elapsed() >= delay,
        "stopped after {:?}",
        asked.elapsed()
    );
    assert!(TcpStream::connect(addr).await.is_err(), "still accepting");
}

/// The value of one series in a Prometheus text exposition.
fn series(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

/// `/metrics` counts each listener's connections: accepted, open now,
/// closed for the header-read timeout (silent ones and half-sent heads
/// alike), and the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_counted_by_listener() {
    let t = TestServer::with(Config {
        ops_listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        connections: ConnectionLimits {
            header_read_timeout: Duration::from_secs(1),
            max_connections: 50,
            ..ConnectionLimits::default()
        },
        ..test_config()
    })
    .await;
    let metrics_url = format!("{}/metrics", t.server.ops_url());
    let metrics = || async {
        t.http
            .get(&metrics_url)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let addr = t.server.addr();
    const OPEN: &str = "likekit_connections_open{listener=\"public\"}";

    // Two that send nothing, one that sends half a request head.
    let mut held = vec![
        TcpStream::connect(addr).await.unwrap(),
        TcpStream::connect(addr).await.unwrap(),
    ];
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"GET /livez HTTP/1.1\r\nHost: lik")
        .await
        .unwrap();
    held.push(half);
    let started = Instant::now();
    let mut text = metrics().await;
    while series(&text, OPEN) < 3.0 && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        text = metrics().await;
    }
    assert_eq!(series(&text, OPEN), 3.0, "{text}");
    assert_eq!(
        series(&text, "likekit_connections_max{listener=\"public\"}"),
        50.0
    );

    for stream in held {
        closed_by_the_server(stream, Duration::from_secs(10)).await;
    }
    // The gauge drops when the connection's task has ended, a moment after
    // the client sees the close.
    let started = Instant::now();
    let mut text = metrics().await;
    while series(&text, OPEN) > 0.0 && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        text = metrics().await;
    }
    assert_eq!(series(&text, OPEN), 0.0, "{text}");
    assert_eq!(
        series(
            &text,
            "likekit_connections_accepted_total{listener=\"public\"}"
        ),
        3.0
    );
    assert_eq!(
        series(
            &text,
            "likekit_connections_timed_out_total{listener=\"public\"}"
        ),
        3.0
    );
    // The metrics requests themselves came to the operations listener.
    assert!(
        series(
            &text,
            "likekit_connections_accepted_total{listener=\"ops\"}"
        ) >= 1.0
    );
    t.stop().await;
}

/// When the shutdown's grace runs out, the connections still open are
/// closed: a request whose body never comes does not keep its connection
/// after the server has stopped, and the shutdown returns within the grace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_closes_the_connections_left_when_its_grace_ends() {
    let grace = Duration::from_secs(1);
    let t = TestServer::with(Config {
        shutdown_grace: grace,
        ..test_config()
    })
    .await;
    let mut stream = TcpStream::connect(t.server.addr()).await.unwrap();
    let head = format!(
        "PUT /admin/faults HTTP/1.1\r\nHost: likes\r\nX-Admin-Key: {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        common::ADMIN_KEY,
    );
    // A head and one byte of a body of 100: the handler waits for the rest
    // (up to the request timeout, 30 s).
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let stopping = Instant::now();
    t.stop().await;
    let stopped = stopping.elapsed();
    assert!(stopped < grace + Duration::from_secs(3), "{stopped:?}");
    let waited = closed_by_the_server(stream, Duration::from_secs(3)).await;
    assert!(waited < Duration::from_secs(3), "{waited:?}");
}

/// A client that does not read a large answer (a file of the web root,
/// written in many frames) holds its connection, and a slot under the cap,
/// no longer than the request timeout plus (at most twice) the header-read
/// timeout once the answer stops moving; other clients are served
/// meanwhile. (Small answers need no such rule: hyper takes their whole
/// body at once, the request counts as answered and the idle timeout
/// applies, pipelined or not.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_its_answer_is_closed() {
    const SIZE: usize = 32 << 20;
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("big.bin"), vec![7_u8; SIZE]).unwrap();
    let timeout = Duration::from_secs(1);
    let t = TestServer::with(Config {
        request_timeout: Duration::from_secs(1),
        web_root: Some(root.path().to_path_buf()),
        ..with_header_timeout(timeout)
    })
    .await;
    t.setup(&[(1, "Ana")], &[42]).await;

    // A small receive window, so the answer backs up into the server.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(t.server.addr()).await.unwrap();
    stream
        .write_all(b"GET /big.bin HTTP/1.1\r\nHost: likes\r\n\r\n")
        .await
        .unwrap();

    // Others are served meanwhile, for as long as the rule may take: the
    // request timeout and twice the header-read timeout (the timer looks
    // once per header-read timeout), then the second the close may take.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        let r = t.view(1, 42).await;
        assert_eq!(r.status(), StatusCode::OK);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // What the server wrote before it gave up, then the end: not the
    // whole file.
    let mut got = 0;
    let mut buf = vec![0_u8; 64 * 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("the connection ends")
        {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    assert!(got < SIZE, "{got} bytes");
    t.stop().await;
}

/// An HTTP/2 client that opens no flow-control window (its SETTINGS say
/// `INITIAL_WINDOW_SIZE` 0, and it sends no WINDOW_UPDATE) gets its
/// answer's head but never its body; its connection is closed once the
/// answer has not moved for the request timeout and the header-read
/// timeout, with a GOAWAY first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_client_with_no_window_is_closed() {
    let t = TestServer::with(Config {
        request_timeout: Duration::from_secs(1),
        ..with_header_timeout(Duration::from_secs(1))
    })
    .await;
    let mut stream = TcpStream::connect(t.server.addr()).await.unwrap();
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    // SETTINGS_INITIAL_WINDOW_SIZE (0x4) = 0.
    hello.extend(frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0, 0]));
    let mut block = vec![0x82, 0x86, 0x04, 6];
    block.extend_from_slice(b"/livez");
    block.extend_from_slice(&[0x01, 5]);
    block.extend_from_slice(b"likes");
    hello.extend(frame(HEADERS, 0x4 | END_STREAM, 1, &block));
    let opened = Instant::now();
    stream.write_all(&hello).await.unwrap();

    let mut data = 0;
    let mut goaway = false;
    let read_all = async {
        while let Some(f) = read_frame(&mut stream).await {
            match f.kind {
                SETTINGS | PING if f.flags & ACK == 0 => acknowledge(&mut stream, &f).await,
                DATA => data += f.payload.len(),
                GOAWAY => goaway = true,
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read_all)
        .await
        .expect("the connection with no window is still open after 10 s");
    let took = opened.elapsed();
    assert_eq!(data, 0, "a body was sent with no window");
    assert!(goaway, "closed without a GOAWAY");
    assert!(took >= Duration::from_secs(2), "closed after {took:?}");
    t.stop().await;
}
