//! A typed client for the mock server's admin and fault API (the routes
//! under `/admin`, on only when the server has an admin key), with the
//! bodies of `likekit_proto::admin`.
//!
//! ```no_run
//! # async fn run() -> Result<(), likekit_testing::admin::AdminError> {
//! use likekit_proto::{PostId, UserId, admin::{FaultRoute, FaultRule, FaultRules}};
//! use likekit_testing::admin::AdminClient;
//!
//! let admin = AdminClient::new("http://127.0.0.1:8080", "dev")?;
//! let ana = UserId::new(7).unwrap();
//! admin.create_user(ana, "Ana").await?;
//! admin.create_post(PostId::new(42).unwrap()).await?;
//! let token = admin.mint_token(ana, 3600).await?;
//! // The train: every call takes 2 s.
//! admin
//!     .put_faults(&FaultRules::new(vec![FaultRule {
//!         latency_ms: 2000,
//!         ..FaultRule::new(FaultRoute::All)
//!     }]))
//!     .await?;
//! # let _ = token;
//! # Ok(())
//! # }
//! ```

use std::{fmt, time::Duration};

use likekit_proto::{
    ErrorBody, PostId, UserId,
    admin::{FaultRules, Friends, Journal, NewPost, NewUser, Seed, TokenRequest, TokenResponse},
};
use reqwest::{Method, StatusCode};
use serde::{Serialize, de::DeserializeOwned};

/// Whether an admin "create" made something new (201) or found it there
/// (200).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// 201: it did not exist.
    New,
    /// 200: it existed (a user is renamed; a post is left as it is).
    Existed,
}

/// Why an admin call failed.
#[derive(Debug)]
pub enum AdminError {
    /// The request did not get an answer (connection refused, timeout…).
    Http(reqwest::Error),
    /// The server answered an error: its status and `{"error": …}` body.
    Api {
        /// The HTTP status.
        status: StatusCode,
        /// The error body (code and message); a body that is not one is
        /// kept as the message under the code `unreadable`.
        body: ErrorBody,
    },
}

impl AdminError {
    /// The server's error code, if the server answered.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Http(_) => None,
            Self::Api { body, .. } => Some(&body.error.code),
        }
    }
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(err) => write!(f, "admin request failed: {err}"),
            Self::Api { status, body } => write!(
                f,
                "admin API answered {status}: {} ({})",
                body.error.code, body.error.message
            ),
        }
    }
}

impl std::error::Error for AdminError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Http(err) => Some(err),
            Self::Api { .. } => None,
        }
    }
}

impl From<reqwest::Error> for AdminError {
    fn from(err: reqwest::Error) -> Self {
        Self::Http(err)
    }
}

/// A client for one server's admin API, sending its key in `X-Admin-Key`.
#[derive(Debug, Clone)]
pub struct AdminClient {
    http: reqwest::Client,
    base_url: String,
    admin_key: String,
}

impl AdminClient {
    /// A client for the server at `base_url` (`http://127.0.0.1:8080`, no
    /// trailing slash needed) with its admin key. Proxies are not used
    /// (test servers are on loopback); calls time out after 30 s.
    ///
    /// # Errors
    ///
    /// [`AdminError::Http`] when the HTTP client cannot be built.
    pub fn new(
        base_url: impl Into<String>,
        admin_key: impl Into<String>,
    ) -> Result<Self, AdminError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(Self::with_client(http, base_url, admin_key))
    }

    /// Like [`AdminClient::new`], on an HTTP client of your own.
    pub fn with_client(
        http: reqwest::Client,
        base_url: impl Into<String>,
        admin_key: impl Into<String>,
    ) -> Self {
        Self {
            http,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            admin_key: admin_key.into(),
        }
    }

    async fn call<B: Serialize>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<(StatusCode, String), AdminError> {
        let mut request = self
            .http
            .request(method, format!("{}/admin{path}", self.base_url))
            .header("X-Admin-Key", &self.admin_key);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await?;
        let status = response.status();
        let text = response.text().await?;
        if status.is_success() {
            Ok((status, text))
        } else {
            let body =
                serde_json::from_str(&text).unwrap_or_else(|_| ErrorBody::new("unreadable", text));
            Err(AdminError::Api { status, body })
        }
    }

    async fn call_json<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<(StatusCode, T), AdminError> {
        let (status, text) = self.call(method, path, body).await?;
        let value = serde_json::from_str(&text).map_err(|e| AdminError::Api {
            status,
            body: ErrorBody::new("unreadable", format!("{e}: {text}")),
        })?;
        Ok((status, value))
    }

    /// `POST /admin/users`: creates the user, or renames an existing one.
    ///
    /// # Errors
    ///
    /// `bad_name` and the other admin errors as [`AdminError::Api`].
    pub async fn create_user(&self, id: UserId, name: &str) -> Result<Created, AdminError> {
        let body = NewUser {
            id,
            name: name.to_owned(),
        };
        let (status, _): (_, NewUser) = self.call_json(Method::POST, "/users", Some(&body)).await?;
        Ok(created(status))
    }

    /// `POST /admin/posts`: creates the post; an existing one is left as
    /// it is.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn create_post(&self, id: PostId) -> Result<Created, AdminError> {
        let (status, _): (_, NewPost) = self
            .call_json(Method::POST, "/posts", Some(&NewPost { id }))
            .await?;
        Ok(created(status))
    }

    /// `PUT /admin/users/{id}/friends`: replaces the user's own (directed)
    /// friend list.
    ///
    /// # Errors
    ///
    /// `user_not_found` (the user or a friend), `too_many_friends`.
    pub async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), AdminError> {
        let body = Friends {
            friends: friends.to_vec(),
        };
        let _: (_, Friends) = self
            .call_json(Method::PUT, &format!("/users/{user}/friends"), Some(&body))
            .await?;
        Ok(())
    }

    /// `POST /admin/tokens`: a sign-in token for `user`, valid for
    /// `ttl_secs` seconds.
    ///
    /// # Errors
    ///
    /// `bad_ttl` for a lifetime outside 1 s..1 year.
    pub async fn mint_token(&self, user: UserId, ttl_secs: u64) -> Result<String, AdminError> {
        let body = TokenRequest {
            user_id: user,
            ttl_secs,
        };
        let (_, answer): (_, TokenResponse) =
            self.call_json(Method::POST, "/tokens", Some(&body)).await?;
        Ok(answer.token)
    }

    /// `PUT /admin/faults`: replaces every fault rule; returns the rules now
    /// in force.
    ///
    /// # Errors
    ///
    /// `bad_fault_rules` for a rule out of range.
    pub async fn put_faults(&self, rules: &FaultRules) -> Result<FaultRules, AdminError> {
        let (_, rules) = self.call_json(Method::PUT, "/faults", Some(rules)).await?;
        Ok(rules)
    }

    /// `GET /admin/faults`: the rules in force and the seed their draws
    /// come from.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn faults(&self) -> Result<FaultRules, AdminError> {
        let (_, rules) = self
            .call_json::<(), _>(Method::GET, "/faults", None)
            .await?;
        Ok(rules)
    }

    /// `GET /admin/requests?…`: the request journal's entries that
    /// `filters` select (`route=like&post=42`, `since=17`; empty for all),
    /// oldest first.
    ///
    /// # Errors
    ///
    /// `bad_query` and the other admin errors as [`AdminError::Api`].
    pub async fn requests(&self, filters: &str) -> Result<Journal, AdminError> {
        let path = if filters.is_empty() {
            "/requests".to_owned()
        } else {
            format!("/requests?{filters}")
        };
        let (_, journal) = self.call_json::<(), _>(Method::GET, &path, None).await?;
        Ok(journal)
    }

    /// `DELETE /admin/requests`: empties the request journal.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn clear_requests(&self) -> Result<(), AdminError> {
        let _: (_, serde_json::Value) = self
            .call_json::<(), _>(Method::DELETE, "/requests", None)
            .await?;
        Ok(())
    }

    /// `DELETE /admin/faults`: removes every fault rule.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn clear_faults(&self) -> Result<(), AdminError> {
        let _: (_, FaultRules) = self
            .call_json::<(), _>(Method::DELETE, "/faults", None)
            .await?;
        Ok(())
    }

    /// `POST /admin/reset`: drops every like; users, friends and posts stay.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn reset(&self) -> Result<(), AdminError> {
        self.call::<()>(Method::POST, "/reset", None).await?;
        Ok(())
    }

    /// `POST /admin/seed`: loads a seed document (idempotent).
    ///
    /// # Errors
    ///
    /// `user_not_found` for a friend that is not a user, `bad_request` for
    /// a broken rule.
    pub async fn seed(&self, seed: &Seed) -> Result<(), AdminError> {
        self.call(Method::POST, "/seed", Some(seed)).await?;
        Ok(())
    }
}

fn created(status: StatusCode) -> Created {
    if status == StatusCode::CREATED {
        Created::New
    } else {
        Created::Existed
    }
}
