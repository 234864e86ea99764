//! Helpers shared by the HTTP-level tests: a real server on a loopback port
//! and a client that talks to it.

#![allow(dead_code, clippy::unwrap_used)]

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use likekit_server::{
    Config, ServerHandle,
    wire::{ErrorBody, LikeState, PostLikes},
};
use likekit_testing::{
    admin::AdminClient,
    suite::{p, u},
};
use reqwest::{Method, Response, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

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
            server.ops_url(),
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
            .request(method, format!("{}{path}", self.server.ops_url()))
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

fn state(count: u64, liked_by_me: bool, version: u64) -> LikeState {
    LikeState {
        count,
        liked_by_me,
        version,
    }
}

/// The seed table over HTTP, on any backend: first like +1; the same like
/// retried changes nothing; unlike -1; unlike retried and an unlike by
/// someone who never liked change nothing; a later like +1. After each step
/// the stored count equals the rows and the answer; a view agrees at the end.
pub async fn http_seed_table(t: &TestServer) {
    t.setup(&[(7, "Ana"), (8, "Ben")], &[42]).await;
    // (step, user, like?, expected answer)
    let table: [(&str, u64, bool, LikeState); 6] = [
        ("first like", 7, true, state(1, true, 1)),
        ("same like retried", 7, true, state(1, true, 1)),
        ("unlike", 7, false, state(0, false, 2)),
        ("unlike retried", 7, false, state(0, false, 2)),
        (
            "unlike by someone who never liked",
            8,
            false,
            state(0, false, 2),
        ),
        ("like again later", 7, true, state(1, true, 3)),
    ];
    for (step, user, like, expected) in table {
        let response = if like {
            t.like(user, 42).await
        } else {
            t.unlike(user, 42).await
        };
        let got: LikeState = ok_json(response).await;
        assert_eq!(got, expected, "{step}");
        let audit = t.server.store().audit().await.unwrap();
        assert_eq!(audit[0].count, audit[0].rows, "{step}: count == rows");
        assert_eq!(audit[0].count, expected.count, "{step}: stored count");
    }
    let view: PostLikes = ok_json(t.view(8, 42).await).await;
    assert_eq!((view.count, view.liked_by_me, view.version), (1, false, 3));
    let own: PostLikes = ok_json(t.view(7, 42).await).await;
    assert!(own.liked_by_me, "the viewer's own like");
}

/// `PUT /admin/users/{id}/friends` with repeated ids out of order, on any
/// backend: the answer is the list as stored, each id once and in
/// ascending order, exactly as `GET /admin/users/{id}` reads it back.
pub async fn http_friends_answered_as_stored(t: &TestServer) {
    t.setup(&[(7, "Ana"), (8, "Ben"), (9, "Cy")], &[]).await;
    for (given, stored) in [
        (json!([8, 8, 7]), json!([7, 8])),
        (json!([9, 7, 9, 8, 7]), json!([7, 8, 9])),
        (json!([]), json!([])),
    ] {
        let r = t
            .admin(
                Method::PUT,
                "/admin/users/7/friends",
                Some(json!({ "friends": given })),
            )
            .await;
        let answered: Value = ok_json(r).await;
        assert_eq!(answered, json!({ "friends": stored }), "{given}");
        let read: Value = ok_json(t.admin(Method::GET, "/admin/users/7", None).await).await;
        assert_eq!(read["friends"], answered["friends"], "{given}");
    }
}

/// The shape of [`http_random_likes_with_duplicates`].
#[derive(Debug, Clone, Copy)]
pub struct RandomLikes {
    pub posts: u64,
    pub tasks: u64,
    pub users_per_task: u64,
    pub ops_per_task: usize,
    /// Task `k` draws from a generator seeded with `rng_base + k`.
    pub rng_base: u64,
}

/// Many clients like and unlike the same few posts (1 to `posts`; other
/// posts are left alone) at random, every request delivered twice at once.
/// Each user belongs to one task, so the task knows each user's final state
/// while the server sees all users at once.
/// Afterwards each count equals its rows and an independent tally, the
/// answers never contradict each other, and views show the final counts.
pub async fn http_random_likes_with_duplicates(t: Arc<TestServer>, shape: RandomLikes) {
    t.setup(&[], &(1..=shape.posts).collect::<Vec<_>>()).await;
    let mut tasks = Vec::new();
    for task in 0..shape.tasks {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = fastrand::Rng::with_seed(shape.rng_base + task);
            let mut wants: BTreeMap<(u64, u64), bool> = BTreeMap::new();
            for _ in 0..shape.ops_per_task {
                let user = 1 + task * shape.users_per_task + rng.u64(0..shape.users_per_task);
                let post = rng.u64(1..=shape.posts);
                let like = rng.bool();
                let send = || async {
                    let response = if like {
                        t.like(user, post).await
                    } else {
                        t.unlike(user, post).await
                    };
                    ok_json::<LikeState>(response).await
                };
                let (a, b) = tokio::join!(send(), send());
                assert_eq!((a.liked_by_me, b.liked_by_me), (like, like));
                wants.insert((user, post), like);
            }
            wants
        }));
    }
    let mut tally: BTreeMap<u64, u64> = BTreeMap::new();
    for task in tasks {
        for ((_, post), liked) in task.await.unwrap() {
            *tally.entry(post).or_default() += u64::from(liked);
        }
    }

    let audit: Vec<_> = (t.server.store().audit().await.unwrap().into_iter())
        .filter(|post| post.post.get() <= shape.posts)
        .collect();
    assert_eq!(audit.len() as u64, shape.posts);
    for post in &audit {
        assert_eq!(post.count, post.rows, "post {}: count == rows", post.post);
        assert_eq!(
            post.count,
            tally.get(&post.post.get()).copied().unwrap_or(0),
            "post {}: count == tally",
            post.post
        );
    }
    // And the API agrees (the cache catches up within its TTL).
    for post in &audit {
        eventually(
            Duration::from_secs(5),
            "views to show the final count",
            || async {
                let view: PostLikes = ok_json(t.view(999, post.post.get()).await).await;
                (view.count == post.count && view.version == post.version).then_some(())
            },
        )
        .await;
    }
}

/// The server's binary with none of the shell's `LIKEKIT_*` settings
/// (every flag has one: a `LIKEKIT_JWKS` or `LIKEKIT_SEED` left in the
/// shell would change the server under test), nor the test run's own
/// (`LIKEKIT_PG_BIN`, `LIKEKIT_TEST_CITUS_URL`), which the server would warn
/// of as no setting of its.
pub fn server_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_likekit-server"));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("LIKEKIT_") {
            command.env_remove(name);
        }
    }
    command
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
        Self::start_with_env(args, &[], log_file)
    }

    /// As [`start`](Self::start), with `env` set for the server.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)], log_file: &std::path::Path) -> Self {
        let mut command = server_command();
        command
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied());
        Self::start_command(command, log_file)
    }

    /// As [`start`](Self::start), with a command of the caller's (its
    /// arguments, environment and working folder; `--listen` is not
    /// added).
    pub fn start_command(mut command: std::process::Command, log_file: &std::path::Path) -> Self {
        use std::io::BufRead as _;
        let log = std::fs::File::create(log_file).unwrap();
        let mut child = command
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

/// Log output captured for a test's own tracing subscriber
/// (`with_writer(move || captured.clone())`): every clone writes to the
/// same buffer.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The server binary's JSON log lines (a request's id in `span`), at
    /// `INFO` and above, written to the returned `Captured` for as long as
    /// the guard lives, on this thread. The filter is asked at every line,
    /// as the binary's is: a line of another test's thread, which has no
    /// subscriber, is not taken as written, and leaves the once-a-second
    /// limits alone.
    pub fn json_lines() -> (Self, tracing::subscriber::DefaultGuard) {
        use tracing_subscriber::{
            Layer as _, filter::dynamic_filter_fn, fmt::format::JsonFields,
            layer::SubscriberExt as _,
        };
        let captured = Self::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || writer.clone())
                .with_ansi(false)
                .fmt_fields(JsonFields::new())
                .event_format(likekit_server::logs::Lines { json: true })
                .with_filter(dynamic_filter_fn(|metadata, _| {
                    *metadata.level() <= tracing::Level::INFO
                        && !likekit_server::logs::is_request_span(metadata)
                })),
        );
        (captured, tracing::subscriber::set_default(subscriber))
    }

    /// The lines written so far.
    pub fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }
}
