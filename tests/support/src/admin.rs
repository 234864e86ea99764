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
//!     .set_faults(&FaultRules::new(vec![FaultRule {
//!         latency_ms: 2000,
//!         ..FaultRule::new(FaultRoute::All)
//!     }]))
//!     .await?;
//! # let _ = token;
//! # Ok(())
//! # }
//! ```
//!
//! A test that cannot wait for the app itself (a UI test driving another
//! process) waits on the server for the app's requests instead:
//!
//! ```no_run
//! # async fn run(admin: likekit_testing::admin::AdminClient) -> Result<(), likekit_testing::admin::AdminError> {
//! use std::time::Duration;
//! use likekit_proto::{PostId, admin::{FaultRoute, RequestFilter}};
//!
//! let likes = RequestFilter {
//!     post: Some(PostId::new(42).unwrap()),
//!     ..RequestFilter::route(FaultRoute::Like)
//! };
//! // … tap like in the app under test …
//! let journal = admin.wait_for_requests(&likes, 1, Duration::from_secs(10)).await?;
//! assert_eq!(journal.met, Some(true), "the like was sent and answered: {journal:?}");
//! # Ok(())
//! # }
//! ```

use std::{fmt, time::Duration};

use likekit_proto::{
    ErrorBody, PostId, UserId,
    admin::{
        Ack, FaultFilter, FaultRule, FaultRules, Friends, Journal, NewFaultRules, NewPost, NewUser,
        RequestFilter, RequestWait, Seed, StoredPost, StoredUser, TokenRequest, TokenResponse,
    },
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
        /// The error body (code and message). An error answer whose body is
        /// not one, and a 2xx answer that is not the JSON the operation
        /// answers (a page from another server, say), have the code
        /// `unreadable` and the body's text in the message.
        body: ErrorBody,
    },
}

impl AdminError {
    /// The error's code: the server's (`bad_name`, `bad_admin_key`, …),
    /// `unreadable` for an answer that is not the expected JSON, or
    /// `no_answer` when no answer came — the same codes as every
    /// language's admin client.
    pub fn code(&self) -> &str {
        match self {
            Self::Http(_) => "no_answer",
            Self::Api { body, .. } => &body.error.code,
        }
    }

    /// The HTTP status the server answered; `None` when no answer came
    /// (the code is then `no_answer`), as every language's admin client
    /// reports it.
    ///
    /// ```
    /// use likekit_proto::ErrorBody;
    /// use likekit_testing::admin::AdminError;
    /// use reqwest::StatusCode;
    ///
    /// let err = AdminError::Api {
    ///     status: StatusCode::NOT_FOUND,
    ///     body: ErrorBody::new("user_not_found", "there is no user 7"),
    /// };
    /// assert_eq!(err.status(), Some(StatusCode::NOT_FOUND));
    /// assert_eq!((err.code(), err.message().as_str()), ("user_not_found", "there is no user 7"));
    /// ```
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Http(_) => None,
            Self::Api { status, .. } => Some(*status),
        }
    }

    /// What went wrong: the server's message, the text of an `unreadable`
    /// answer, or why no answer came.
    pub fn message(&self) -> String {
        match self {
            Self::Http(err) => err.to_string(),
            Self::Api { body, .. } => body.error.message.clone(),
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

/// One operation of the admin API, as the server's OpenAPI document
/// (`/openapi.json`) names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Operation {
    /// Its `operationId`, which names the client method that sends it.
    pub id: &'static str,
    /// Its HTTP method.
    pub method: &'static str,
    /// Its path, `{id}` standing for a user's or a post's id.
    pub path: &'static str,
}

const fn operation(id: &'static str, method: &'static str, path: &'static str) -> Operation {
    Operation { id, method, path }
}

const CREATE_USER: Operation = operation("create_user", "POST", "/admin/users");
const GET_USER: Operation = operation("get_user", "GET", "/admin/users/{id}");
const CREATE_POST: Operation = operation("create_post", "POST", "/admin/posts");
const GET_POST: Operation = operation("get_post", "GET", "/admin/posts/{id}");
const SET_FRIENDS: Operation = operation("set_friends", "PUT", "/admin/users/{id}/friends");
const MINT_TOKEN: Operation = operation("mint_token", "POST", "/admin/tokens");
const SET_FAULTS: Operation = operation("set_faults", "PUT", "/admin/faults");
const ADD_FAULTS: Operation = operation("add_faults", "POST", "/admin/faults");
const GET_FAULTS: Operation = operation("get_faults", "GET", "/admin/faults");
const CLEAR_FAULTS: Operation = operation("clear_faults", "DELETE", "/admin/faults");
const REQUESTS: Operation = operation("requests", "GET", "/admin/requests");
const CLEAR_REQUESTS: Operation = operation("clear_requests", "DELETE", "/admin/requests");
const RESET: Operation = operation("reset", "POST", "/admin/reset");
const SEED: Operation = operation("seed", "POST", "/admin/seed");

/// Every admin operation, each sent by the [`AdminClient`] method of its
/// name. The server's OpenAPI tests check this list against the document,
/// as each language's own admin client is checked in its own tests
/// (`server-mock/clients/`).
pub const OPERATIONS: &[Operation] = &[
    CREATE_USER,
    GET_USER,
    CREATE_POST,
    GET_POST,
    SET_FRIENDS,
    MINT_TOKEN,
    SET_FAULTS,
    ADD_FAULTS,
    GET_FAULTS,
    CLEAR_FAULTS,
    REQUESTS,
    CLEAR_REQUESTS,
    RESET,
    SEED,
];

/// How long a call of [`AdminClient::new`]'s client may take; a journal
/// read that waits takes its wait longer.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

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
            .timeout(CALL_TIMEOUT)
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

    /// Sends `operation` (its path's `{id}` replaced by `id`), with `query`
    /// and `body` when given; an error answer becomes [`AdminError::Api`].
    async fn call<B: Serialize>(
        &self,
        operation: &Operation,
        request: Call<'_, B>,
    ) -> Result<(StatusCode, String), AdminError> {
        let path = match request.id {
            Some(id) => operation.path.replace("{id}", &id.to_string()),
            None => operation.path.to_owned(),
        };
        let method = Method::from_bytes(operation.method.as_bytes())
            .expect("the operations table holds HTTP methods");
        let mut http = self
            .http
            .request(method, format!("{}{path}", self.base_url))
            .header("X-Admin-Key", &self.admin_key);
        match request.query {
            Query::None => {}
            Query::Requests(filter) => http = http.query(filter),
            Query::Waiting(filter, wait) => {
                http = http.query(filter).query(&wait);
                // The answer comes when the wait ends: the call's own
                // limit starts from there.
                let waited = Duration::from_millis(wait.timeout_ms.unwrap_or_default());
                http = http.timeout(waited.saturating_add(CALL_TIMEOUT));
            }
            Query::Faults(filter) => http = http.query(filter),
        }
        if let Some(body) = request.body {
            http = http.json(body);
        }
        let response = http.send().await?;
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

    /// [`AdminClient::call`], the answer read as a `T`.
    async fn call_json<B: Serialize, T: DeserializeOwned>(
        &self,
        operation: &Operation,
        request: Call<'_, B>,
    ) -> Result<(StatusCode, T), AdminError> {
        let (status, text) = self.call(operation, request).await?;
        let value = serde_json::from_str(&text).map_err(|e| AdminError::Api {
            status,
            body: ErrorBody::new("unreadable", format!("{e}: {text}")),
        })?;
        Ok((status, value))
    }

    /// [`AdminClient::call`] of an operation that answers `{"ok": true}`;
    /// any other 2xx answer is `unreadable`, as in every language's client.
    async fn call_ack<B: Serialize>(
        &self,
        operation: &Operation,
        request: Call<'_, B>,
    ) -> Result<(), AdminError> {
        let (status, Ack { ok }) = self.call_json(operation, request).await?;
        if ok {
            Ok(())
        } else {
            Err(AdminError::Api {
                status,
                body: ErrorBody::new("unreadable", r#"answered {"ok": false}"#),
            })
        }
    }

    /// `create_user`: creates the user, or renames an existing one.
    ///
    /// # Errors
    ///
    /// `bad_name` and the other admin errors as [`AdminError::Api`].
    pub async fn create_user(&self, id: UserId, name: &str) -> Result<Created, AdminError> {
        let body = NewUser {
            id,
            name: name.to_owned(),
        };
        let (status, _): (_, NewUser) = self.call_json(&CREATE_USER, Call::body(&body)).await?;
        Ok(created(status))
    }

    /// `create_post`: creates the post; an existing one is left as it is.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn create_post(&self, id: PostId) -> Result<Created, AdminError> {
        let (status, _): (_, NewPost) = self
            .call_json(&CREATE_POST, Call::body(&NewPost { id }))
            .await?;
        Ok(created(status))
    }

    /// `get_user`: the user as stored, with its friend list (ascending
    /// ids).
    ///
    /// # Errors
    ///
    /// `user_not_found`, and the other admin errors, as
    /// [`AdminError::Api`].
    pub async fn get_user(&self, id: UserId) -> Result<StoredUser, AdminError> {
        let request = Call {
            id: Some(id.get()),
            ..Call::NONE
        };
        let (_, user) = self.call_json(&GET_USER, request).await?;
        Ok(user)
    }

    /// `get_post`: the post as stored (count, version, most recent likers
    /// newest first), read past the server's view cache: a count checked
    /// here right after a client's call is the committed one.
    ///
    /// ```no_run
    /// # async fn run(admin: likekit_testing::admin::AdminClient) {
    /// use likekit_proto::PostId;
    /// let post = admin.get_post(PostId::new(42).unwrap()).await.unwrap();
    /// assert_eq!(post.count, 1, "the like was counted once");
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `post_not_found`, and the other admin errors, as
    /// [`AdminError::Api`].
    pub async fn get_post(&self, id: PostId) -> Result<StoredPost, AdminError> {
        let request = Call {
            id: Some(id.get()),
            ..Call::NONE
        };
        let (_, post) = self.call_json(&GET_POST, request).await?;
        Ok(post)
    }

    /// `set_friends`: replaces the user's own (directed) friend list.
    ///
    /// # Errors
    ///
    /// `user_not_found` (the user or a friend), `too_many_friends`.
    pub async fn set_friends(&self, user: UserId, friends: &[UserId]) -> Result<(), AdminError> {
        let body = Friends {
            friends: friends.to_vec(),
        };
        let request = Call {
            id: Some(user.get()),
            ..Call::body(&body)
        };
        let _: (_, Friends) = self.call_json(&SET_FRIENDS, request).await?;
        Ok(())
    }

    /// `mint_token`: a sign-in token for `user`, valid for `ttl_secs`
    /// seconds from now.
    ///
    /// # Errors
    ///
    /// `bad_ttl` for a lifetime outside 1 s..1 year.
    pub async fn mint_token(&self, user: UserId, ttl_secs: u64) -> Result<String, AdminError> {
        self.mint_token_valid_from(user, 0, ttl_secs).await
    }

    /// `mint_token` with a start: a token for `user` valid from
    /// `valid_from_secs` seconds from now (below zero: in the past) for
    /// `ttl_secs` seconds. `mint_token_valid_from(user, -7200, 3600)` is a
    /// token that expired an hour ago, for a test of a client's token
    /// renewal with no wait; `mint_token_valid_from(user, 60, 3600)` one
    /// refused (`invalid_token`) for another minute.
    ///
    /// # Errors
    ///
    /// `bad_ttl` for a lifetime outside 1 s..1 year, `bad_valid_from` for a
    /// start more than a year from now either way.
    pub async fn mint_token_valid_from(
        &self,
        user: UserId,
        valid_from_secs: i64,
        ttl_secs: u64,
    ) -> Result<String, AdminError> {
        let body = TokenRequest {
            user_id: user,
            ttl_secs,
            valid_from_secs,
        };
        let (_, answer): (_, TokenResponse) =
            self.call_json(&MINT_TOKEN, Call::body(&body)).await?;
        Ok(answer.token)
    }

    /// `set_faults`: replaces every fault rule; returns the rules now in
    /// force, with the seed their draws come from. Every rule's counters
    /// start over, other tests' too: tests that share a server use
    /// [`AdminClient::add_faults`].
    ///
    /// # Errors
    ///
    /// `bad_fault_rules` for a rule out of range.
    pub async fn set_faults(&self, rules: &FaultRules) -> Result<FaultRules, AdminError> {
        let (_, rules) = self.call_json(&SET_FAULTS, Call::body(rules)).await?;
        Ok(rules)
    }

    /// `add_faults`: adds `rules` after the rules in force, which keep
    /// their counters and the seed; returns every rule now in force, with
    /// `rules` last. Tag them (`FaultRule::tag`) to remove them with
    /// [`AdminClient::clear_faults_tagged`].
    ///
    /// ```no_run
    /// # async fn run(admin: likekit_testing::admin::AdminClient) {
    /// use likekit_proto::{UserId, admin::{FaultRoute, FaultRule}};
    /// let ana = UserId::new(7).unwrap();
    /// // Ana's next like fails once; other tests' users are not touched.
    /// let rule = FaultRule {
    ///     user: Some(ana),
    ///     fail_next: 1,
    ///     tag: Some("checkout-test".into()),
    ///     ..FaultRule::new(FaultRoute::Like)
    /// };
    /// admin.add_faults(&[rule]).await.unwrap();
    /// // … the test …
    /// admin.clear_faults_tagged("checkout-test").await.unwrap();
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `bad_fault_rules` for a rule out of range; `too_many_rules` (409)
    /// when the rules in force and `rules` would be more than 256
    /// (`MAX_RULES`). Nothing is added then.
    pub async fn add_faults(&self, rules: &[FaultRule]) -> Result<FaultRules, AdminError> {
        let body = NewFaultRules::new(rules.to_vec());
        let (_, rules) = self.call_json(&ADD_FAULTS, Call::body(&body)).await?;
        Ok(rules)
    }

    /// `get_faults`: the rules in force, the seed their draws come from,
    /// and what each has used up (`state[i]` for `rules[i]`: calls matched,
    /// fired on and acted on, what is left of `fail_next` and `first`). The
    /// answer can be given back to [`AdminClient::set_faults`] as it is: the
    /// server ignores its `state` and starts the counters over.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn get_faults(&self) -> Result<FaultRules, AdminError> {
        let (_, rules) = self.call_json(&GET_FAULTS, Call::NONE).await?;
        Ok(rules)
    }

    /// `get_faults` with `?tag=`: only the rules tagged `tag`, each with
    /// its `state`, and the seed, so a test sharing the server reads its
    /// own rules (none when no rule has the tag).
    ///
    /// # Errors
    ///
    /// `bad_query` for a tag that is not 1 to 64 visible ASCII characters,
    /// and the other admin errors, as [`AdminError::Api`].
    pub async fn get_faults_tagged(&self, tag: &str) -> Result<FaultRules, AdminError> {
        let filter = FaultFilter::tag(tag);
        let request = Call {
            query: Query::Faults(&filter),
            ..Call::NONE
        };
        let (_, rules) = self.call_json(&GET_FAULTS, request).await?;
        Ok(rules)
    }

    /// `requests`: the request journal's entries that `filter` selects,
    /// oldest first. Each names its request's id (`request_id`, the
    /// answer's `X-Request-Id`); `RequestFilter::request_id` finds one.
    /// To wait on the server until the requests are there and answered,
    /// see [`wait_for_requests`](Self::wait_for_requests).
    ///
    /// ```no_run
    /// # async fn run(admin: likekit_testing::admin::AdminClient) {
    /// use likekit_proto::admin::{FaultRoute, RequestFilter};
    /// let likes = admin.requests(&RequestFilter::route(FaultRoute::Like)).await.unwrap();
    /// # let _ = likes;
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn requests(&self, filter: &RequestFilter) -> Result<Journal, AdminError> {
        let request = Call {
            query: Query::Requests(filter),
            ..Call::NONE
        };
        let (_, journal) = self.call_json(&REQUESTS, request).await?;
        Ok(journal)
    }

    /// `requests` with `wait_for` and `timeout_ms`: the server holds the
    /// answer until at least `count` entries match `filter` and none of
    /// them is in flight (the journal's `met` is then `Some(true)`), or
    /// until `timeout` has passed (`Some(false)`, with the entries there
    /// were then). For a test that cannot wait for the client itself,
    /// such as a UI test driving an app in another process. `met` is also
    /// `Some(false)` at once for a `count` above the journal's capacity, and
    /// when the server begins stopping. The call itself may take `timeout`
    /// plus 30 s before it gives up on an answer.
    ///
    /// ```no_run
    /// # async fn run(admin: likekit_testing::admin::AdminClient) {
    /// use std::time::Duration;
    /// use likekit_proto::{UserId, admin::RequestFilter};
    /// let ana = RequestFilter {
    ///     user: Some(UserId::new(7).unwrap()),
    ///     ..RequestFilter::default()
    /// };
    /// let journal = admin
    ///     .wait_for_requests(&ana, 2, Duration::from_secs(10))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(journal.met, Some(true), "Ana's two requests, answered");
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// `bad_query` for a `count` of 0 or a `timeout` above 60 s
    /// ([`RequestWait::MAX_TIMEOUT_MS`]); `journal_off` (409) from a
    /// server that keeps no journal; the other admin errors, as
    /// [`AdminError::Api`].
    pub async fn wait_for_requests(
        &self,
        filter: &RequestFilter,
        count: u64,
        timeout: Duration,
    ) -> Result<Journal, AdminError> {
        let wait = RequestWait {
            wait_for: Some(count),
            timeout_ms: Some(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
        };
        let request = Call {
            query: Query::Waiting(filter, wait),
            ..Call::NONE
        };
        let (_, journal) = self.call_json(&REQUESTS, request).await?;
        Ok(journal)
    }

    /// `clear_requests`: empties the request journal.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn clear_requests(&self) -> Result<(), AdminError> {
        self.call_ack(&CLEAR_REQUESTS, Call::NONE).await
    }

    /// `clear_requests` with a filter: removes only the journal entries
    /// `filter` matches (a test's own, by `user` or `post`), the filters of
    /// [`requests`](Self::requests); other tests' entries stay.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn clear_requests_matching(&self, filter: &RequestFilter) -> Result<(), AdminError> {
        let request = Call {
            query: Query::Requests(filter),
            ..Call::NONE
        };
        self.call_ack(&CLEAR_REQUESTS, request).await
    }

    /// `clear_faults`: removes every fault rule, other tests' too, and
    /// the seed; returns the rules now in force (none), as the other admin
    /// clients do.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn clear_faults(&self) -> Result<FaultRules, AdminError> {
        let (_, rules) = self.call_json(&CLEAR_FAULTS, Call::NONE).await?;
        Ok(rules)
    }

    /// `clear_faults` with `?tag=`: removes only the rules tagged `tag`
    /// (none when no rule has it); the others keep their counters and the
    /// seed. Returns the rules left in force.
    ///
    /// # Errors
    ///
    /// `bad_query` for a tag that is not 1 to 64 visible ASCII characters,
    /// and the other admin errors, as [`AdminError::Api`].
    pub async fn clear_faults_tagged(&self, tag: &str) -> Result<FaultRules, AdminError> {
        let filter = FaultFilter::tag(tag);
        let request = Call {
            query: Query::Faults(&filter),
            ..Call::NONE
        };
        let (_, rules) = self.call_json(&CLEAR_FAULTS, request).await?;
        Ok(rules)
    }

    /// `reset`: drops every like; users, friends and posts stay.
    ///
    /// # Errors
    ///
    /// Admin errors as [`AdminError::Api`].
    pub async fn reset(&self) -> Result<(), AdminError> {
        self.call_ack(&RESET, Call::NONE).await
    }

    /// `seed`: loads a seed document (idempotent): users are created or
    /// renamed and their friend lists replaced; posts are created and their
    /// likers added (a liker need not be a user).
    ///
    /// # Errors
    ///
    /// `user_not_found` (404) for a friend that is not a user; `bad_name`,
    /// `too_many_friends`, `bad_user_id`, `bad_post_id` or `bad_json` (400)
    /// for a document the server refuses. Nothing is loaded then.
    pub async fn seed(&self, seed: &Seed) -> Result<(), AdminError> {
        self.call_ack(&SEED, Call::body(seed)).await
    }
}

/// What one call sends beyond its operation: the path's `{id}`, a query
/// and a body.
struct Call<'a, B> {
    id: Option<u64>,
    query: Query<'a>,
    body: Option<&'a B>,
}

/// The query of a call, if any.
#[derive(Clone, Copy)]
enum Query<'a> {
    None,
    Requests(&'a RequestFilter),
    /// A journal read that waits: its filters, then its wait.
    Waiting(&'a RequestFilter, RequestWait),
    Faults(&'a FaultFilter),
}

impl Call<'static, ()> {
    const NONE: Self = Self {
        id: None,
        query: Query::None,
        body: None,
    };
}

impl<'a, B> Call<'a, B> {
    fn body(body: &'a B) -> Self {
        Self {
            id: None,
            query: Query::None,
            body: Some(body),
        }
    }
}

fn created(status: StatusCode) -> Created {
    if status == StatusCode::CREATED {
        Created::New
    } else {
        Created::Existed
    }
}
