//! TLS to PostgreSQL, with libpq's `sslmode` words: read from the URL
//! (`sslmode`, `sslrootcert`) or set in [`PgTls`], spoken with rustls.
//!
//! | `sslmode` | encrypted | the certificate is checked |
//! | --- | --- | --- |
//! | `disable` (the default here) | no | — |
//! | `require` | yes | no; with a CA file its chain, to that file (as libpq with a root certificate: `verify-ca`) |
//! | `verify-ca` | yes | its chain, to the CA file |
//! | `verify-full` | yes | its chain and that it names the host |
//!
//! As libpq: `verify-ca` and `verify-full` need the CA certificates that
//! sign the server's (`sslrootcert`, or `--db-ca-file`), and without them
//! the start stops, rather than checking against roots nobody chose; and
//! `sslrootcert=system` takes the public CAs (Mozilla's list, built into
//! the server) with `verify-full` only. (libpq would also read
//! `~/.postgresql/root.crt` when it exists; the server reads no file it
//! is not given.)
//!
//! `prefer` and `allow` (libpq's "TLS if the server offers it") are
//! refused: a connection that may or may not be encrypted is not a
//! setting a service should run with. Without `sslmode` nothing changes
//! from before: no TLS, for a database on loopback or a private network
//! (`disable`, where libpq's default is `prefer`). A CA file with
//! `disable` (or no `sslmode`) is refused rather than left unused: it asks
//! for a check that would not happen. Client certificates (`sslcert`,
//! `sslkey`) are refused as not supported (see `postgres_url`).

use std::sync::Arc;

use rustls::{
    DigitallySignedStruct, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::CryptoProvider,
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject},
};

use crate::store::postgres_url::SYSTEM_ROOTS;
pub use crate::store::postgres_url::{PgTls, SslMode};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Whether `tls` names the public CAs (`sslrootcert=system`) rather than
/// a file.
fn system_roots(tls: &PgTls) -> bool {
    tls.ca_file
        .as_deref()
        .is_some_and(|file| file == std::path::Path::new(SYSTEM_ROOTS))
}

/// The mode `tls` is spoken with: `require` with a CA file is `verify-ca`
/// (as libpq). Refused: a CA file with `disable`; `verify-ca` or
/// `verify-full` without one; `sslrootcert=system` with a mode weaker than
/// `verify-full` (libpq's rules).
fn effective_mode(tls: &PgTls) -> Result<SslMode, String> {
    if system_roots(tls) && tls.mode != SslMode::VerifyFull {
        let mode = match tls.mode {
            SslMode::Disable => "disable (or absent, which is disable here)",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        };
        return Err(format!(
            "sslrootcert=system (the public CAs) checks the server's name too, so it \
             takes sslmode=verify-full only (libpq's rule), and sslmode is {mode}: set \
             sslmode=verify-full, or give the file of the CA that signs the server's \
             certificate"
        ));
    }
    match (tls.mode, &tls.ca_file) {
        (SslMode::Disable, Some(path)) => Err(format!(
            "a CA file ({}, from --db-ca-file or sslrootcert) needs TLS, and sslmode is \
             disable (or absent, which is disable here): add sslmode=verify-full (or \
             verify-ca, require) to the database URL, or drop the CA file",
            path.display()
        )),
        (mode @ (SslMode::VerifyCa | SslMode::VerifyFull), None) => {
            let mode = if mode == SslMode::VerifyCa {
                "verify-ca"
            } else {
                "verify-full"
            };
            Err(format!(
                "sslmode={mode} checks the server's certificate against the CA that signs \
                 it, and none is given: add sslrootcert=/path/to/ca.pem to the database URL \
                 (or --db-ca-file), or sslrootcert=system for the public CAs (with \
                 verify-full); as libpq, the server does not guess"
            ))
        }
        (SslMode::Require, Some(_)) => Ok(SslMode::VerifyCa),
        (mode, _) => Ok(mode),
    }
}

/// The rustls configuration for `tls` (`None` for [`SslMode::Disable`]).
pub(crate) fn client_config(tls: &PgTls) -> Result<Option<rustls::ClientConfig>, String> {
    let mode = effective_mode(tls)?;
    if mode == SslMode::Disable {
        return Ok(None);
    }
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS to PostgreSQL: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::Require => Arc::new(AnyCertificate(provider)),
        _ => {
            let mut roots = rustls::RootCertStore::empty();
            match &tls.ca_file {
                Some(_) if system_roots(tls) => {
                    let (added, _) = roots.add_parsable_certificates(
                        webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().cloned(),
                    );
                    debug_assert!(added > 0);
                }
                Some(path) => {
                    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                        .map_err(|e| format!("the CA file {}: {e}", path.display()))?
                        .collect::<Result<_, _>>()
                        .map_err(|e| format!("the CA file {}: {e}", path.display()))?;
                    let (added, _) = roots.add_parsable_certificates(certs);
                    if added == 0 {
                        return Err(format!(
                            "the CA file {} holds no usable certificate",
                            path.display()
                        ));
                    }
                }
                None => {
                    return Err("TLS to PostgreSQL: no CA certificates to check against".into());
                }
            }
            let chain = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(|e| format!("TLS to PostgreSQL: {e}"))?;
            if mode == SslMode::VerifyCa {
                Arc::new(ChainOnly(chain))
            } else {
                chain
            }
        }
    };
    Ok(Some(
        builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth(),
    ))
}

/// `sslmode=require` without a CA file: any certificate (the handshake's
/// signatures are still checked, so the session is encrypted to whoever
/// holds the key).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `sslmode=verify-ca`: the chain is checked, the name is not.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::store::postgres_url::split_url;

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate").unwrap();
        let tls = PgTls {
            mode: SslMode::VerifyFull,
            ca_file: Some(path),
        };
        assert!(
            client_config(&tls)
                .unwrap_err()
                .contains("no usable certificate")
        );
        let tls = PgTls {
            mode: SslMode::VerifyFull,
            ca_file: Some("/no/such/ca.pem".into()),
        };
        assert!(client_config(&tls).unwrap_err().contains("the CA file"));
    }

    #[test]
    fn a_ca_file_is_used_with_require_and_refused_without_tls() {
        let ca = PathBuf::from("/etc/likekit/db-ca.pem");
        let with = |mode| PgTls {
            mode,
            ca_file: Some(ca.clone()),
        };
        // As libpq: `require` with a root certificate checks the chain.
        assert_eq!(
            effective_mode(&with(SslMode::Require)),
            Ok(SslMode::VerifyCa)
        );
        assert_eq!(
            effective_mode(&PgTls {
                mode: SslMode::Require,
                ca_file: None
            }),
            Ok(SslMode::Require)
        );
        assert_eq!(
            effective_mode(&with(SslMode::VerifyFull)),
            Ok(SslMode::VerifyFull)
        );
        // The file is read, so one that is not a CA file stops the start.
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("ca.pem");
        std::fs::write(&junk, "not a certificate").unwrap();
        let require = PgTls {
            mode: SslMode::Require,
            ca_file: Some(junk),
        };
        assert!(
            client_config(&require)
                .unwrap_err()
                .contains("no usable certificate")
        );
        // No TLS, no use for a CA file: refused, naming the fix. Without
        // `sslmode` the mode is `disable`.
        let (_, absent) = split_url("postgres://db/likes").unwrap();
        for tls in [
            with(SslMode::Disable),
            PgTls {
                ca_file: Some(ca.clone()),
                ..absent
            },
        ] {
            let err = client_config(&tls).unwrap_err();
            assert!(err.contains("sslmode=verify-full"), "{err}");
            assert!(err.contains("db-ca.pem"), "{err}");
        }
    }

    /// As libpq: `verify-ca` and `verify-full` without a CA file stop the
    /// start, naming the fix, rather than trust roots nobody chose.
    #[test]
    fn verifying_without_a_ca_is_refused() {
        for (url, mode) in [
            ("postgres://db/likes?sslmode=verify-ca", "verify-ca"),
            ("postgres://db/likes?sslmode=verify-full", "verify-full"),
        ] {
            let (_, tls) = split_url(url).unwrap();
            let err = client_config(&tls).unwrap_err();
            assert!(err.contains(&format!("sslmode={mode}")), "{err}");
            assert!(err.contains("sslrootcert="), "{err}");
            assert!(err.contains("--db-ca-file"), "{err}");
        }
        // `require` alone still encrypts without a check.
        let (_, tls) = split_url("postgres://db/likes?sslmode=require").unwrap();
        assert!(client_config(&tls).unwrap().is_some());
    }

    /// `sslrootcert=system`: the public CAs with `verify-full` (implied when
    /// no `sslmode` is given); with a weaker mode, refused (libpq's rule).
    #[test]
    fn sslrootcert_system_is_the_public_cas_with_verify_full() {
        for url in [
            "postgres://db/likes?sslrootcert=system",
            "postgres://db/likes?sslrootcert=system&sslmode=verify-full",
        ] {
            let (_, tls) = split_url(url).unwrap();
            assert_eq!(effective_mode(&tls), Ok(SslMode::VerifyFull), "{url}");
            assert!(client_config(&tls).unwrap().is_some(), "{url}");
        }
        for weaker in ["require", "verify-ca", "disable"] {
            let url = format!("postgres://db/likes?sslrootcert=system&sslmode={weaker}");
            let (_, tls) = split_url(&url).unwrap();
            let err = client_config(&tls).unwrap_err();
            assert!(err.contains("sslmode=verify-full"), "{url}: {err}");
            assert!(err.contains(weaker), "{url}: {err}");
        }
        // `--db-ca-file system` reads as the URL's `sslrootcert` does.
        let (_, mut tls) = split_url("postgres://db/likes?sslmode=verify-full").unwrap();
        tls.ca_file = Some(SYSTEM_ROOTS.into());
        assert!(client_config(&tls).unwrap().is_some());
    }
}
