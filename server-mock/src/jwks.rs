//! Tokens signed by an identity provider: its public keys, published as a
//! JSON Web Key Set (a file, or a URL read again in the background), with
//! RS256, ES256, ES384 and EdDSA signatures, and `iss` / `aud` checks when
//! configured.
//!
//! The algorithm of a token is the one its key names (or the one the key's
//! type allows), never the one the token's header asks for: a header that
//! asks for another is refused, which closes algorithm confusion (an RS256
//! key used as an HS256 secret) and `alg: none`. A key set that holds
//! symmetric keys (`oct`) is refused: this is for public keys only.
//!
//! Rotation: a token whose `kid` is not in the set, or whose signature
//! does not check out, is refused and asks for the set to be read again (at
//! most once every [`MIN_REFETCH`]); the set is also read again every
//! `refresh`. The set has changed when any key's parameters have (a key
//! replaced under the same `kid` included): the new keys are put in force
//! and the tokens remembered as verified are forgotten, so a removed or
//! replaced key stops working at once.
//!
//! A URL is read over `https://`; `http://` only on loopback (a key set
//! sent in the clear lets anyone on the path add keys). A URL set is
//! fetched before the server listens, and a set that cannot be read then
//! stops the start; later reads that fail leave the keys in force.

use std::{
    io::Read,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use jsonwebtoken::{
    Algorithm, DecodingKey, Header, Validation,
    errors::ErrorKind,
    jwk::{AlgorithmParameters, EllipticCurve, JwkSet, KeyAlgorithm, KeyOperations, PublicKeyUse},
};
use likekit_proto::UserId;

use crate::claims::{Claims, TokenError, signed_in, token_error};

/// The most keys kept from one set.
pub const MAX_KEYS: usize = 64;
/// The shortest time between two reads of the set asked for by unknown
/// `kid`s.
pub const MIN_REFETCH: Duration = Duration::from_secs(10);
/// The largest key set read (bytes).
const MAX_SET_BYTES: usize = 1 << 20;

/// Where the key set comes from. Shown (`Display`, `Debug`) without a user
/// name or password a URL may carry.
#[derive(Clone, PartialEq, Eq)]
pub enum JwksSource {
    /// A file, read at start and again on refresh.
    File(PathBuf),
    /// An `https://` URL (`http://` only on loopback), fetched at start
    /// and again on refresh.
    Url(String),
}

impl std::fmt::Display for JwksSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Url(url) => f.write_str(&without_credentials(url)),
        }
    }
}

impl std::fmt::Debug for JwksSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Self::File(_) => "File",
            Self::Url(_) => "Url",
        };
        f.debug_tuple(kind).field(&self.to_string()).finish()
    }
}

/// `url` with `***` for the user name and password it carries, if any.
fn without_credentials(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("***");
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        // Not a URL reqwest would fetch (the start refuses it): hide what
        // could be credentials.
        Err(_) => match url.split_once("://").zip(url.rfind('@')) {
            Some(((scheme, _), at)) => format!("{scheme}://***{}", &url[at..]),
            None => url.to_owned(),
        },
    }
}

/// Reads the key set file at `path`, no further than [`MAX_SET_BYTES`].
fn read_set_file(path: &Path) -> Result<Vec<u8>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut text = Vec::new();
    file.take(MAX_SET_BYTES as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if text.len() > MAX_SET_BYTES {
        return Err(format!(
            "{} holds more than {MAX_SET_BYTES} bytes",
            path.display()
        ));
    }
    Ok(text)
}

impl JwksSource {
    /// A URL for `http://` and `https://` text, a file otherwise.
    pub fn parse(text: &str) -> Self {
        if text.starts_with("https://") || text.starts_with("http://") {
            Self::Url(text.to_owned())
        } else {
            Self::File(PathBuf::from(text))
        }
    }
}

/// How tokens from an identity provider are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenPolicy {
    /// The provider's key set.
    pub jwks: JwksSource,
    /// The `iss` tokens must carry, if any.
    pub issuer: Option<String>,
    /// The `aud` tokens must carry (one of), if any.
    pub audience: Option<String>,
    /// How often the set is read again.
    pub refresh: Duration,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

struct Key {
    kid: Option<String>,
    algorithm: Algorithm,
    decoding: DecodingKey,
    /// The key as published: what a change of the set is judged by.
    jwk: jsonwebtoken::jwk::Jwk,
}

/// The key set in force, with its checks.
pub(crate) struct Jwks {
    policy: TokenPolicy,
    keys: RwLock<Arc<Vec<Key>>>,
    /// An unknown `kid` was seen: read the set again soon.
    wanted: AtomicBool,
    last_read: Mutex<Option<Instant>>,
    /// Held by the read under way: reads of the set are one at a time, so
    /// that a slow one can never put its older set in force after a later
    /// one put in the newer.
    reading: tokio::sync::Mutex<()>,
    http: reqwest::Client,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwks")
            .field("source", &self.policy.jwks)
            .field("keys", &self.keys.read().map(|k| k.len()).unwrap_or(0))
            .finish_non_exhaustive()
    }
}

/// The algorithm a key is for: the one it names, or the one its type
/// allows. Symmetric and unknown keys have none.
fn algorithm_of(jwk: &jsonwebtoken::jwk::Jwk) -> Result<Algorithm, String> {
    let named = jwk.common.key_algorithm.map(|alg| match alg {
        KeyAlgorithm::RS256 => Ok(Algorithm::RS256),
        KeyAlgorithm::RS384 => Ok(Algorithm::RS384),
        KeyAlgorithm::RS512 => Ok(Algorithm::RS512),
        KeyAlgorithm::PS256 => Ok(Algorithm::PS256),
        KeyAlgorithm::PS384 => Ok(Algorithm::PS384),
        KeyAlgorithm::PS512 => Ok(Algorithm::PS512),
        KeyAlgorithm::ES256 => Ok(Algorithm::ES256),
        KeyAlgorithm::ES384 => Ok(Algorithm::ES384),
        KeyAlgorithm::EdDSA => Ok(Algorithm::EdDSA),
        other => Err(format!(
            "a key for {other:?} is not a signing key this server takes"
        )),
    });
    let by_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Ok(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => Ok(Algorithm::ES256),
            EllipticCurve::P384 => Ok(Algorithm::ES384),
            _ => Err("an EC key on a curve other than P-256 or P-384".to_owned()),
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            Ok(Algorithm::EdDSA)
        }
        AlgorithmParameters::OctetKey(_) => {
            Err("a symmetric key (`oct`): a key set holds public keys only".to_owned())
        }
        _ => Err("a key of an unsupported type".to_owned()),
    }?;
    match named {
        Some(named) => {
            let named = named?;
            let family = |a: Algorithm| match a {
                Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512 => 0,
                Algorithm::ES256 | Algorithm::ES384 => 1,
                Algorithm::EdDSA => 2,
                _ => 3,
            };
            if family(named) == family(by_type) {
                Ok(named)
            } else {
                Err(format!("the key names {named:?} but is not a key for it"))
            }
        }
        None => Ok(by_type),
    }
}

/// The algorithms of a key set document's keys, in order, or why the set
/// is refused: the fuzz targets' view of the keys `--jwks` reads.
pub fn algorithms(document: &[u8]) -> Result<Vec<Algorithm>, String> {
    parse(document).map(|keys| keys.iter().map(|key| key.algorithm).collect())
}

/// Whether a key may verify signatures: its `use`, when it has one, is
/// `sig`, its `key_ops`, when it has them, include `verify` (RFC 7517,
/// 4.2 and 4.3), and its `alg`, when it has one, is not an encryption
/// algorithm (`RSA-OAEP` with no `use`). An identity provider may publish its encryption keys in
/// the same set (Keycloak's `use: enc`, `alg: RSA-OAEP`): they are left
/// out, never taken as signing keys.
fn for_signatures(jwk: &jsonwebtoken::jwk::Jwk) -> bool {
    let usable = matches!(
        jwk.common.public_key_use,
        None | Some(PublicKeyUse::Signature)
    );
    let operations = jwk
        .common
        .key_operations
        .as_ref()
        .is_none_or(|ops| ops.contains(&KeyOperations::Verify));
    // An encryption algorithm says what the key is for when `use` does not.
    let encrypts = matches!(
        jwk.common.key_algorithm,
        Some(KeyAlgorithm::RSA1_5 | KeyAlgorithm::RSA_OAEP | KeyAlgorithm::RSA_OAEP_256)
    );
    usable && operations && !encrypts
}

/// The signing keys of a key set document (keys for another use are left
/// out: [`for_signatures`]).
fn parse(text: &[u8]) -> Result<Vec<Key>, String> {
    let set: JwkSet =
        serde_json::from_slice(text).map_err(|e| format!("not a JSON Web Key Set: {e}"))?;
    let mut keys = Vec::new();
    for (at, jwk) in set.keys.iter().enumerate() {
        if !for_signatures(jwk) {
            continue;
        }
        let algorithm = algorithm_of(jwk).map_err(|e| format!("key {at}: {e}"))?;
        let decoding = DecodingKey::from_jwk(jwk).map_err(|e| format!("key {at}: {e}"))?;
        keys.push(Key {
            kid: jwk.common.key_id.clone(),
            algorithm,
            decoding,
            jwk: jwk.clone(),
        });
    }
    if keys.is_empty() {
        return Err(if set.keys.is_empty() {
            "the key set holds no key".into()
        } else {
            "the key set holds no key for signatures (every key's `use` or `key_ops` is for \
             something else)"
                .into()
        });
    }
    if keys.len() > MAX_KEYS {
        return Err(format!(
            "the key set holds {} keys; at most {MAX_KEYS} are kept",
            keys.len()
        ));
    }
    Ok(keys)
}

impl Jwks {
    /// The policy's key set: a file is read now (a bad one fails the
    /// start); a URL is checked now (`https://`, or `http://` on loopback)
    /// and fetched by [`refresh`](Self::refresh), which the server calls
    /// before it listens.
    pub(crate) fn open(policy: TokenPolicy) -> Result<Self, crate::Error> {
        if let JwksSource::Url(url) = &policy.jwks {
            check_url(url).map_err(|e| crate::Error::Config(format!("the key set: {e}")))?;
        }
        let keys = match &policy.jwks {
            JwksSource::File(path) => {
                let text = read_set_file(path)
                    .map_err(|e| crate::Error::Config(format!("the key set: {e}")))?;
                parse(&text).map_err(|e| {
                    crate::Error::Config(format!("the key set {}: {e}", path.display()))
                })?
            }
            JwksSource::Url(_) => Vec::new(),
        };
        Self::with_keys(policy, keys)
    }

    /// The policy's checks with the keys of `document` (read as a file's
    /// set is read), for the fuzz targets: the policy's source is not read.
    pub(crate) fn from_document(policy: TokenPolicy, document: &[u8]) -> Result<Self, String> {
        Self::with_keys(policy, parse(document)?).map_err(|e| e.to_string())
    }

    fn with_keys(policy: TokenPolicy, keys: Vec<Key>) -> Result<Self, crate::Error> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            match redirect_refusal(attempt.previous(), attempt.url()) {
                Some(why) => attempt.error(why),
                None => attempt.follow(),
            }
        });
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(redirects)
            .build()
            .map_err(|e| crate::Error::Config(format!("the key set's HTTP client: {e}")))?;
        // No keys yet (a URL not fetched): due at once.
        let last_read = (!keys.is_empty()).then(Instant::now);
        Ok(Self {
            policy,
            keys: RwLock::new(Arc::new(keys)),
            wanted: AtomicBool::new(false),
            last_read: Mutex::new(last_read),
            reading: tokio::sync::Mutex::new(()),
            http,
        })
    }

    /// How many keys are in force.
    pub(crate) fn key_count(&self) -> usize {
        self.keys.read().map(|k| k.len()).unwrap_or(0)
    }

    /// The key set's source, issuer and audience, for the start-up log.
    pub(crate) fn policy(&self) -> &TokenPolicy {
        &self.policy
    }

    /// Whether the set should be read again now: no read is under way,
    /// and its refresh period has passed, or an unknown `kid` asked for it
    /// (at most every [`MIN_REFETCH`]).
    pub(crate) fn due(&self) -> bool {
        if self.reading.try_lock().is_err() {
            return false;
        }
        let last = *self
            .last_read
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match last {
            None => true,
            Some(at) => {
                let since = at.elapsed();
                since >= self.policy.refresh
                    || (self.wanted.load(Ordering::Relaxed) && since >= MIN_REFETCH)
            }
        }
    }

    /// Reads the set again and puts it in force; `Ok(true)` when it changed
    /// (a key added, removed, or replaced, under the same `kid` or none).
    /// On failure the keys in force stay. Reads are one at a time: one
    /// asked for while another is under way starts when it is over.
    pub(crate) async fn refresh(&self) -> Result<bool, String> {
        let _reading = self.reading.lock().await;
        *self
            .last_read
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        self.wanted.store(false, Ordering::Relaxed);
        let text =
            match &self.policy.jwks {
                JwksSource::File(path) => {
                    let path = path.clone();
                    tokio::task::spawn_blocking(move || read_set_file(&path))
                        .await
                        .map_err(|e| format!("cannot read the key set: {e}"))??
                }
                JwksSource::Url(fetched) => {
                    let url = without_credentials(fetched);
                    let mut answer = self.http.get(fetched).send().await.map_err(|e| {
                        format!("cannot fetch {url}: {}", crate::error::with_causes(&e))
                    })?;
                    if !answer.status().is_success() {
                        return Err(format!("{url} answered {}", answer.status()));
                    }
                    let too_big = || format!("{url} sent more than {MAX_SET_BYTES} bytes");
                    if answer
                        .content_length()
                        .is_some_and(|n| n > MAX_SET_BYTES as u64)
                    {
                        return Err(too_big());
                    }
                    // Read in chunks, and no further than the limit.
                    let mut body = Vec::new();
                    while let Some(chunk) = answer.chunk().await.map_err(|e| {
                        format!("cannot read {url}: {}", crate::error::with_causes(&e))
                    })? {
                        if body.len() + chunk.len() > MAX_SET_BYTES {
                            return Err(too_big());
                        }
                        body.extend_from_slice(&chunk);
                    }
                    body
                }
            };
        let keys = parse(&text)?;
        let mut current = self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = !same_keys(&current, &keys);
        if changed {
            *current = Arc::new(keys);
        }
        Ok(changed)
    }

    /// The user and expiry of `token`, whose header is `header`, if one of
    /// the set's keys signed it and its claims pass.
    pub(crate) fn verify(&self, token: &str, header: &Header) -> Result<(UserId, u64), TokenError> {
        let keys = Arc::clone(
            &self
                .keys
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if keys.is_empty() {
            // Only a URL set not fetched yet (a set with no key is refused).
            self.wanted.store(true, Ordering::Relaxed);
            return Err(TokenError::Invalid(
                "the identity provider's key set has not been read yet".into(),
            ));
        }
        let key = match &header.kid {
            Some(kid) => keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None if keys.len() == 1 => keys.first(),
            None => {
                return Err(TokenError::Invalid(
                    "the token names no key (`kid`) and the key set has several".into(),
                ));
            }
        };
        let Some(key) = key else {
            self.wanted.store(true, Ordering::Relaxed);
            return Err(TokenError::Invalid(
                "the token's key (`kid`) is not known".into(),
            ));
        };
        if header.alg != key.algorithm {
            return Err(TokenError::Invalid(format!(
                "the token's key is for {:?}, not {:?}",
                key.algorithm, header.alg
            )));
        }
        let mut validation = Validation::new(key.algorithm);
        // A configured `iss` or `aud` must also be present: checking a
        // claim's value does not make it required.
        let mut required = vec!["exp", "sub"];
        if self.policy.issuer.is_some() {
            required.push("iss");
        }
        if self.policy.audience.is_some() {
            required.push("aud");
        }
        validation.set_required_spec_claims(&required);
        validation.leeway = 0;
        validation.validate_nbf = true;
        match &self.policy.issuer {
            Some(issuer) => validation.set_issuer(&[issuer]),
            None => validation.iss = None,
        }
        match &self.policy.audience {
            Some(audience) => validation.set_audience(&[audience]),
            None => validation.validate_aud = false,
        }
        let data =
            jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation).map_err(|err| {
                if matches!(err.kind(), ErrorKind::InvalidSignature) {
                    // Perhaps the key was replaced under the same `kid`.
                    self.wanted.store(true, Ordering::Relaxed);
                }
                token_error(&err)
            })?;
        signed_in(data.claims)
    }
}

/// Whether two sets hold the same keys: the same parameters in the same
/// order, not just the same `kid`s (a provider may replace a key and keep
/// its `kid`, or publish one key with none).
fn same_keys(a: &[Key], b: &[Key]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.jwk == y.jwk)
}

/// Why `url` is not a place to read a key set from: not `https://`, or
/// `http://` to a host other than loopback (`localhost`, `127.0.0.0/8`,
/// `::1`).
/// Why a key set's fetch must not follow a redirect to `next` after
/// `previous`, if it must not: more than 10 redirects, a URL the key set
/// itself could not have ([`check_url`]), or one that leaves https (a set
/// asked for over https:// is not taken from http://, loopback or not).
fn redirect_refusal(previous: &[reqwest::Url], next: &reqwest::Url) -> Option<String> {
    if previous.len() >= 10 {
        return Some("more than 10 redirects".into());
    }
    if next.scheme() != "https" && previous.iter().any(|url| url.scheme() == "https") {
        return Some(format!(
            "redirected from https:// to {}: a key set asked for over https:// \
             is not read in the clear",
            without_credentials(next.as_str())
        ));
    }
    check_url(next.as_str())
        .err()
        .map(|why| format!("redirected: {why}"))
}

fn check_url(fetched: &str) -> Result<(), String> {
    let url = without_credentials(fetched);
    let parsed = reqwest::Url::parse(fetched).map_err(|e| format!("{url} is not a URL: {e}"))?;
    let loopback = parsed.host_str().is_some_and(|host| {
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err(format!(
            "{url}: a key set is read over https:// (http:// only on loopback: \
             keys sent in the clear can be replaced on the way)"
        )),
        other => Err(format!("{url}: the scheme {other}:// is not https://")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A redirect may not leave https, not even for loopback (where
    /// http:// is taken as a first URL), and is held to the URL's rule.
    #[test]
    fn a_redirect_never_leaves_https() {
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        let from_https = [url("https://id.example/jwks.json")];
        for next in ["http://127.0.0.1:9/jwks.json", "http://localhost/keys"] {
            let why = redirect_refusal(&from_https, &url(next)).unwrap();
            assert!(why.contains("from https://"), "{why}");
            // The same URL is fine as a first fetch, or after http.
            assert_eq!(check_url(next), Ok(()));
            assert_eq!(redirect_refusal(&[url("http://[::1]/a")], &url(next)), None);
        }
        assert_eq!(
            redirect_refusal(&from_https, &url("https://cdn.example/jwks.json")),
            None
        );
        let why =
            redirect_refusal(&[url("http://localhost/a")], &url("http://id.example/k")).unwrap();
        assert!(why.starts_with("redirected: "), "{why}");
        let ten = vec![url("https://id.example/a"); 10];
        assert_eq!(
            redirect_refusal(&ten, &url("https://id.example/b")).as_deref(),
            Some("more than 10 redirects")
        );
    }

    #[test]
    fn symmetric_and_empty_sets_are_refused() {
        let oct = br#"{"keys":[{"kty":"oct","k":"c2VjcmV0","alg":"HS256","kid":"a"}]}"#;
        assert!(parse(oct).unwrap_err().contains("symmetric"));
        assert!(parse(br#"{"keys":[]}"#).unwrap_err().contains("no key"));
        assert!(
            parse(b"not json")
                .unwrap_err()
                .contains("not a JSON Web Key Set")
        );
    }

    /// Encryption keys published beside the signing keys (Keycloak's
    /// `use: enc` with `alg: RSA-OAEP`, or such an `alg` alone) are left
    /// out, not refused, and never verify a token; a set with nothing else
    /// is refused.
    #[test]
    fn keys_for_another_use_are_left_out() {
        let ed = r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"sig"}"#;
        let enc = r#"{"kty":"OKP","crv":"Ed25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08","kid":"enc","use":"enc"}"#;
        let oaep =
            r#"{"kty":"RSA","kid":"oaep","use":"enc","alg":"RSA-OAEP","n":"sXch","e":"AQAB"}"#;
        let wrap = r#"{"kty":"OKP","crv":"Ed25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08","kid":"wrap","key_ops":["wrapKey"]}"#;
        let verify = r#"{"kty":"OKP","crv":"Ed25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08","kid":"verify","use":"sig","key_ops":["verify"]}"#;
        // an encryption algorithm with no `use`
        let oaep_only =
            r#"{"kty":"RSA","kid":"oaep-256","alg":"RSA-OAEP-256","n":"sXch","e":"AQAB"}"#;
        let set = format!(r#"{{"keys":[{oaep},{ed},{enc},{wrap},{oaep_only},{verify}]}}"#);
        let keys = parse(set.as_bytes()).unwrap();
        let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref().unwrap()).collect();
        assert_eq!(kids, ["sig", "verify"]);
        let only_enc = format!(r#"{{"keys":[{enc},{oaep}]}}"#);
        let refused = parse(only_enc.as_bytes()).unwrap_err();
        assert!(refused.contains("no key for signatures"), "{refused}");
    }

    #[test]
    fn a_key_naming_an_algorithm_of_another_family_is_refused() {
        let ed = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","alg":"RS256"}]}"#;
        assert!(parse(ed).unwrap_err().contains("not a key for it"));
        let ed = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
        assert_eq!(parse(ed).unwrap()[0].algorithm, Algorithm::EdDSA);
    }

    #[test]
    fn key_sets_are_read_over_https_or_on_loopback() {
        for ok in [
            "https://id.example/jwks.json",
            "http://127.0.0.1:8080/jwks.json",
            "http://127.8.0.1/jwks.json",
            "http://localhost/jwks.json",
            "http://[::1]:9000/jwks.json",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://id.example/jwks.json",
            "http://10.0.0.1/jwks.json",
            "http://localhost.id.example/jwks.json",
            "http://[::2]/jwks.json",
            "ftp://id.example/jwks.json",
            "https://",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        let err = Jwks::open(TokenPolicy {
            jwks: JwksSource::Url("http://id.example/jwks.json".into()),
            issuer: None,
            audience: None,
            refresh: Duration::from_secs(60),
        })
        .unwrap_err();
        assert!(err.to_string().contains("https://"), "{err}");
    }

    #[test]
    fn a_set_not_read_yet_says_so() {
        let jwks = Jwks::open(TokenPolicy {
            jwks: JwksSource::Url("https://id.example/jwks.json".into()),
            issuer: None,
            audience: None,
            refresh: Duration::from_secs(60),
        })
        .unwrap();
        assert!(jwks.due(), "a URL set not read yet is due at once");
        let header = Header::new(Algorithm::ES256);
        let Err(TokenError::Invalid(why)) = jwks.verify("x.y.z", &header) else {
            panic!("no key, no token");
        };
        assert!(why.contains("not been read"), "{why}");
    }

    #[test]
    fn a_key_replaced_under_its_kid_is_a_change() {
        let a = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"k"}]}"#;
        let b = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08","kid":"k"}]}"#;
        let (a, a_again, b) = (parse(a).unwrap(), parse(a).unwrap(), parse(b).unwrap());
        assert!(same_keys(&a, &a_again));
        assert!(!same_keys(&a, &b));
    }

    #[test]
    fn sources_from_text() {
        assert_eq!(
            JwksSource::parse("https://id.example/jwks.json"),
            JwksSource::Url("https://id.example/jwks.json".into())
        );
        assert_eq!(
            JwksSource::parse("/etc/likekit/jwks.json"),
            JwksSource::File("/etc/likekit/jwks.json".into())
        );
    }

    /// A URL's user name and password are never shown: not by the source,
    /// not in the error of a fetch.
    #[test]
    fn a_url_is_shown_without_its_credentials() {
        let source = JwksSource::parse("http://idp:hunter2@127.0.0.1:1/jwks.json");
        assert_eq!(source.to_string(), "http://***@127.0.0.1:1/jwks.json");
        assert_eq!(
            format!("{source:?}"),
            r#"Url("http://***@127.0.0.1:1/jwks.json")"#
        );
        assert_eq!(
            JwksSource::parse("https://id.example/jwks.json").to_string(),
            "https://id.example/jwks.json"
        );
        let refused = check_url("ftp://idp:hunter2@id.example/jwks.json").unwrap_err();
        assert!(!refused.contains("hunter2"), "{refused}");
        let jwks = Jwks::open(TokenPolicy {
            jwks: source,
            issuer: None,
            audience: None,
            refresh: Duration::from_secs(60),
        })
        .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let failed = runtime.block_on(jwks.refresh()).unwrap_err();
        assert!(
            failed.contains("cannot fetch http://***@127.0.0.1:1/"),
            "{failed}"
        );
        assert!(!failed.contains("hunter2"), "{failed}");
    }

    /// A key set file is read no further than 1 MiB: a larger one is
    /// refused at start (and on refresh), whatever it holds.
    #[test]
    fn a_key_set_file_over_1_mib_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jwks.json");
        let mut padded = vec![b' '; MAX_SET_BYTES];
        padded.extend_from_slice(br#"{"keys": []}"#);
        std::fs::write(&path, padded).unwrap();
        let refused = read_set_file(&path).unwrap_err();
        assert!(refused.contains("more than 1048576 bytes"), "{refused}");
        let refused = Jwks::open(TokenPolicy {
            jwks: JwksSource::File(path),
            issuer: None,
            audience: None,
            refresh: Duration::from_secs(60),
        })
        .unwrap_err();
        assert!(
            refused.to_string().contains("more than 1048576 bytes"),
            "{refused}"
        );
    }
}
