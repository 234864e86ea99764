//! Helpers shared by the HTTP-level tests: a real server on a loopback port
//! and a client that talks to it.

#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use likekit_server::{Config, ServerHandle, wire::ErrorBody};
use likekit_testing::{
    admin::AdminClient,
    suite::{p, u},
};
use reqwest::{Method, Response, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub const ADMIN_KEY: &str = "test-admin-key";
pub const TOKEN_SECRET: &str = "test-token-secret";

/// The config most tests want: admin on, a known token secret, no rate
/// limit, a short cache.
pub fn test_config() -> Config {
    Config {
        admin_key: Some(ADMIN_KEY.into()),
        token_secret: Some(TOKEN_SECRET.into()),
        write_rate_limit: None,
        cache_ttl: Duration::from_millis(200),
        ..Config::default()
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// A server on a loopback port, a raw HTTP client, and the typed admin
/// client. Ids are plain numbers here: the raw-HTTP tests also send ids
/// that are not valid.
pub struct TestServer {
    pub server: ServerHandle,
    pub http: reqwest::Client,
    pub admin_client: AdminClient,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::with(test_config()).await
    }

    pub async fn with(config: Config) -> Self {
        Self::from_handle(likekit_server::spawn(config).await.unwrap())
    }

    pub fn from_handle(server: ServerHandle) -> Self {
        let admin_client = AdminClient::with_client(
            client(),
            server.base_url(),
            server.admin_key().unwrap_or_default(),
        );
        Self {
            server,
            http: client(),
            admin_client,
        }
    }

    pub async fn stop(self) {
        self.server.shutdown().await.unwrap();
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.server.base_url(), path)
    }

    pub fn token(&self, user: u64) -> String {
        self.server.mint_token(u(user), Duration::from_secs(3600))
    }

    /// A request as `user`.
    pub fn as_user(&self, user: u64, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(self.token(user))
    }

    pub async fn like(&self, user: u64, post: u64) -> Response {
        self.as_user(user, Method::POST, &format!("/posts/{post}/like"))
            .send()
            .await
            .unwrap()
    }

    pub async fn unlike(&self, user: u64, post: u64) -> Response {
        self.as_user(user, Method::DELETE, &format!("/posts/{post}/like"))
            .send()
            .await
            .unwrap()
    }

    pub async fn view(&self, user: u64, post: u64) -> Response {
        self.as_user(user, Method::GET, &format!("/posts/{post}/likes"))
            .send()
            .await
            .unwrap()
    }

    /// An admin request with the right key and a JSON body (if any).
    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Response {
        let mut request = self
            .http
            .request(method, self.url(path))
            .header("X-Admin-Key", ADMIN_KEY);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.unwrap()
    }

    /// Creates users (id, name) and posts through the admin API.
    pub async fn setup(&self, users: &[(u64, &str)], posts: &[u64]) {
        for &(id, name) in users {
            self.admin_client
                .create_user(u(id), name)
                .await
                .unwrap_or_else(|e| panic!("create user {id}: {e}"));
        }
        for &id in posts {
            self.admin_client
                .create_post(p(id))
                .await
                .unwrap_or_else(|e| panic!("create post {id}: {e}"));
        }
    }
}

/// Reads a 200 JSON body as `T`.
pub async fn ok_json<T: DeserializeOwned>(response: Response) -> T {
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "body: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("bad body {text}: {e}"))
}

/// Asserts a JSON error answer with this status and code.
pub async fn expect_error(response: Response, status: StatusCode, code: &str) -> ErrorBody {
    let got = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    assert_eq!(got, status, "body: {text}");
    assert!(
        content_type.starts_with("application/json"),
        "content type {content_type:?} for {text}"
    );
    let body: ErrorBody =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not an error body {text}: {e}"));
    assert_eq!(body.error.code, code, "body: {text}");
    assert!(!body.error.message.is_empty());
    body
}

/// Polls `check` until it returns `Some`, or panics after `deadline`.
pub async fn eventually<T, F, Fut>(deadline: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let until = tokio::time::Instant::now() + deadline;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The real `likekit-server` binary, started on a free loopback port.
pub struct ServerProcess {
    pub child: std::process::Child,
    pub base_url: String,
    pub stderr_path: std::path::PathBuf,
}

impl ServerProcess {
    /// Starts the binary with `args` (plus `--listen 127.0.0.1:0`) and waits
    /// for its "listening on" line. Its log goes to `log_file`.
    pub fn start(args: &[&str], log_file: &std::path::Path) -> Self {
        use std::io::BufRead as _;
        let log = std::fs::File::create(log_file).unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_likekit-server"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("LIKEKIT_TOKEN_SECRET")
            .env_remove("LIKEKIT_ADMIN_KEY")
            .env_remove("LIKEKIT_DB")
            .env_remove("LIKEKIT_LISTEN")
            .env("RUST_LOG", "info")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        let base_url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                let log = std::fs::read_to_string(log_file).unwrap_or_default();
                panic!("unexpected first line {line:?}; log:\n{log}")
            })
            .to_string();
        Self {
            child,
            base_url,
            stderr_path: log_file.to_path_buf(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        self.child.wait().unwrap()
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Never leave a server behind when a test fails half-way.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
