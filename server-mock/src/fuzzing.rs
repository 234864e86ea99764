//! Not a stable API: the parsers and checks the fuzz targets of `fuzz/`
//! call directly. Hidden from the documentation; it may change or go in any
//! release.

pub use crate::body::read as read_body;
pub use crate::extract::parse_post_list;
pub use crate::jwks::algorithms as jwks_algorithms;
/// What [`split_db_url`] reads, in every build (the server's public API
/// has them only with the `postgres` feature).
pub use crate::store::postgres_url::{PgTls, SslMode};
/// The bound of [`read_body`].
pub use utoipa::ToSchema;

/// The checks `PUT` and `POST /admin/faults` make of fault rules read from
/// a body (ranges, tags, action fields), beyond what reading checks.
///
/// # Errors
///
/// The refusal's message, as the `bad_fault_rules` answer carries it.
pub fn check_fault_rules(rules: &crate::wire::admin::FaultRules) -> Result<(), String> {
    crate::faults::validate(rules)
}

use crate::{TokenError, TokenPolicy, Tokens, auth::Authenticator, jwks::Jwks, wire::UserId};

/// Tokens checked as a server started with `--jwks` and no token
/// secret checks them (its own HS256 tokens refused), against the keys
/// of one key set document that is never read again.
#[derive(Debug)]
pub struct JwksTokens(Authenticator);

impl JwksTokens {
    /// The keys of `document`, with `iss` and `aud` required when given;
    /// the document's refusal otherwise.
    pub fn new(
        document: &[u8],
        issuer: Option<&str>,
        audience: Option<&str>,
    ) -> Result<Self, String> {
        let policy = TokenPolicy {
            jwks: crate::JwksSource::File("(a document given in memory)".into()),
            issuer: issuer.map(str::to_owned),
            audience: audience.map(str::to_owned),
            refresh: std::time::Duration::MAX,
        };
        let jwks = Jwks::from_document(policy, document)?;
        // The server's own secret, which a server with a key set and no
        // `--token-secret` has but does not take tokens under.
        let tokens = Tokens::new(b"a secret no token is signed with").map_err(|e| e.to_string())?;
        Ok(Self(Authenticator::with_jwks(tokens, jwks, false)))
    }

    /// The user `token` signs in, or why it is refused.
    pub fn verify(&self, token: &str) -> Result<UserId, TokenError> {
        self.0.verify(token)
    }
}

/// A PostgreSQL URL (or `key=value` string) as the PostgreSQL store reads
/// `--db` before tokio-postgres sees it: without its `sslmode` and
/// `sslrootcert`, and the TLS they ask for; or why it is refused.
///
/// # Errors
///
/// An `sslmode` that is not one of those taken, an `sslmode` or
/// `sslrootcert` that is not UTF-8 once percent-decoded, a client
/// certificate, or a CA the mode needs and was not given.
pub fn split_db_url(url: &str) -> Result<(String, PgTls), String> {
    crate::store::postgres_url::split_url(url)
}

/// The statement a PostgreSQL connection runs as it opens, for a URL whose
/// `options` are `options` (the store's own timeouts, 5 s and 2 s, as the
/// defaults): `SELECT` and a `set_config(E'name', E'value', false)` call
/// per setting; or why the options are refused.
///
/// # Errors
///
/// Options that hold anything but settings (`-c name=value`).
pub fn db_session_settings(options: &str) -> Result<String, String> {
    crate::store::postgres_url::session_settings(
        Some(options),
        &[("statement_timeout", "5s"), ("lock_timeout", "2s")],
    )
}

/// A database URL as logs and error messages show it: without its
/// password.
pub fn redact_db_url(url: &str) -> String {
    crate::store::redact_url(url)
}
