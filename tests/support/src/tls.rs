//! HTTPS for tests, made at test time: a throwaway certificate authority
//! ([`TestCa`]) and a TLS front ([`TlsFront`]) on a free loopback port that
//! terminates TLS with a certificate of that CA and forwards each
//! connection, byte for byte, to a plain-HTTP server on loopback (the
//! reference server, which speaks no TLS itself).
//!
//! Nothing here is trusted by anyone but the tests: the CA's key lives in
//! memory only and is gone with the process; its certificate (PEM) is what
//! a client under test is given as an extra root. The front forwards to
//! loopback addresses only.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use likekit_testing::tls::TlsFront;
//!
//! let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await?; // the plain server
//! let front = TlsFront::start(plain.local_addr()?).await?;
//! assert!(front.url().starts_with("https://127.0.0.1:"));
//! assert!(front.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::aws_lc_rs;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The names a [`TlsFront`]'s certificate is valid for: the loopback
/// address and `localhost`.
pub const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "::1", "localhost"];

/// How long a handshake may take before the front gives up on it.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A certificate authority made for one test run: a fresh key pair and a
/// self-signed CA certificate, valid from yesterday for 30 days.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl fmt::Debug for TestCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

impl TestCa {
    /// A new CA named `LikeKit test CA`.
    ///
    /// # Errors
    ///
    /// The key or the certificate could not be made.
    pub fn new() -> Result<Self, rcgen::Error> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "LikeKit test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        set_validity(&mut params);
        let cert = params.self_signed(&key)?;
        Ok(Self {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        })
    }

    /// The CA's certificate, PEM: what a client trusts as an extra root.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A server certificate for `names` (IP addresses or DNS names) signed
    /// by this CA, with its private key: the chain a TLS server presents.
    ///
    /// # Errors
    ///
    /// A name is not a valid DNS name, or the key or certificate could not
    /// be made.
    pub fn server_certificate(
        &self,
        names: &[&str],
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), rcgen::Error> {
        let (cert, key) = self.signed(names)?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        Ok((vec![cert.der().clone()], key))
    }

    /// A server certificate for `names`, signed by this CA, and its key.
    fn signed(&self, names: &[&str]) -> Result<(rcgen::Certificate, KeyPair), rcgen::Error> {
        let key = KeyPair::generate()?;
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names)?;
        params
            .distinguished_name
            .push(DnType::CommonName, "LikeKit test server");
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        set_validity(&mut params);
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok((cert, key))
    }
}

impl TestCa {
    /// A certificate for `names` signed by this CA, and its private key,
    /// both as PEM (for servers that read files: PostgreSQL, say).
    ///
    /// # Errors
    ///
    /// As rcgen's.
    pub fn server_certificate_pem(&self, names: &[&str]) -> Result<(String, String), rcgen::Error> {
        let (cert, key) = self.signed(names)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// Valid from yesterday for 30 days: short, as platform verifiers want of
/// server certificates (Apple's refuse validity periods over 825 days).
fn set_validity(params: &mut CertificateParams) {
    let today = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    let day = |days: u64| {
        let (y, m, d) = civil_from_days(days);
        rcgen::date_time_ymd(y, m, d)
    };
    params.not_before = day(today.saturating_sub(1));
    params.not_after = day(today + 30);
}

/// The Gregorian date `days` days after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    // A year of the Unix era fits an i32; days and months fit a u8.
    (
        i32::try_from(y).unwrap_or(i32::MAX),
        u8::try_from(m).unwrap_or(12),
        u8::try_from(d).unwrap_or(28),
    )
}

/// What a [`TlsFront`] has seen so far.
#[derive(Debug, Default)]
struct Counters {
    handshakes: AtomicU64,
    refused: AtomicU64,
}

/// An HTTPS front on `127.0.0.1:<free port>`: TLS with a certificate of its
/// own [`TestCa`] for [`LOOPBACK_NAMES`], each connection forwarded to a
/// plain server on loopback. Stops (with every connection) when dropped.
pub struct TlsFront {
    addr: SocketAddr,
    upstream: SocketAddr,
    ca_pem: String,
    counters: Arc<Counters>,
    task: JoinHandle<()>,
}

impl fmt::Debug for TlsFront {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsFront")
            .field("addr", &self.addr)
            .field("upstream", &self.upstream)
            .field("handshakes", &self.handshakes())
            .field("refused", &self.refused_handshakes())
            .finish()
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        // The accept loop owns the connections' tasks: aborting it ends them.
        self.task.abort();
    }
}

impl TlsFront {
    /// Starts a front with a new [`TestCa`] before the plain server at
    /// `upstream`, which must be a loopback address.
    ///
    /// # Errors
    ///
    /// `upstream` is not on loopback, no port could be had, or the CA or
    /// certificate could not be made.
    pub async fn start(upstream: SocketAddr) -> io::Result<Self> {
        let ca = TestCa::new().map_err(io::Error::other)?;
        Self::start_with(&ca, upstream).await
    }

    /// Starts a front whose certificate `ca` signs, before the plain server
    /// at `upstream` (a loopback address).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub async fn start_with(ca: &TestCa, upstream: SocketAddr) -> io::Result<Self> {
        if !upstream.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the TLS front forwards to loopback only, not {upstream}"),
            ));
        }
        let (chain, key) = ca
            .server_certificate(&LOOPBACK_NAMES)
            .map_err(io::Error::other)?;
        let mut config =
            ServerConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(io::Error::other)?
                .with_no_client_auth()
                .with_single_cert(chain, key)
                .map_err(io::Error::other)?;
        // Bytes are forwarded to an HTTP/1.1 server as they come.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(accept_loop(
            listener,
            acceptor,
            upstream,
            Arc::clone(&counters),
        ));
        Ok(Self {
            addr,
            upstream,
            ca_pem: ca.pem().to_owned(),
            counters,
            task,
        })
    }

    /// `https://127.0.0.1:<port>`, no trailing slash.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The address the front listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The plain server it forwards to.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// The PEM of the CA that signed the front's certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Handshakes that completed (each one's connection was forwarded).
    pub fn handshakes(&self) -> u64 {
        self.counters.handshakes.load(Ordering::SeqCst)
    }

    /// Handshakes that failed: the client refused the certificate, spoke
    /// something else, or hung up; nothing of theirs was forwarded.
    pub fn refused_handshakes(&self) -> u64 {
        self.counters.refused.load(Ordering::SeqCst)
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    upstream: SocketAddr,
    counters: Arc<Counters>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // A failed accept (out of descriptors, say) is the one
                // client's problem; keep serving the others.
                let Ok((client, _)) = accepted else { continue };
                connections.spawn(forward(client, acceptor.clone(), upstream, Arc::clone(&counters)));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// One connection: the TLS handshake, then bytes both ways until either
/// side closes.
async fn forward(
    client: TcpStream,
    acceptor: TlsAcceptor,
    upstream: SocketAddr,
    counters: Arc<Counters>,
) {
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(client)).await;
    let Ok(Ok(mut tls)) = handshake else {
        counters.refused.fetch_add(1, Ordering::SeqCst);
        return;
    };
    counters.handshakes.fetch_add(1, Ordering::SeqCst);
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return; // the client sees its connection close
    };
    let _ = server.set_nodelay(true);
    let _ = tokio::io::copy_bidirectional(&mut tls, &mut server).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }

    #[tokio::test]
    async fn the_front_forwards_only_to_loopback() {
        let err = TlsFront::start("192.0.2.1:80".parse().unwrap())
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn certificates_are_pem_and_der() {
        let ca = TestCa::new().unwrap();
        assert!(ca.pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let (chain, _key) = ca.server_certificate(&LOOPBACK_NAMES).unwrap();
        assert_eq!(chain.len(), 1);
    }
}
