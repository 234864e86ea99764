//! The LikeKit terminal demo: a few posts, a line per post with its heart,
//! count and "Liked by …", and a key per post to tap its heart, against a
//! running `likekit-server`.
//!
//! With `--train` the demo sets the server's fault rules (`PUT
//! /admin/faults`) so that every call takes 2 seconds: the heart still
//! fills the moment you tap, and the line says "saving…" until the server
//! answers. `f` makes every like and unlike fail: the heart fills, the
//! client retries, then it rolls back and tells you the like didn't save.
//!
//! The program is line-based (type a number and Enter) so that it runs in
//! any terminal and can be driven from a script or a test.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use likekit_core::{
    LikeClient, LikeEvent, LikeFailure, PostId, PostView, RetryPolicy, StaticToken, UserId,
};
use likekit_proto::admin::{FaultRoute, FaultRule, FaultRules};
use likekit_testing::admin::AdminClient;

/// `--help`.
pub const USAGE: &str = "\
likekit-demo-terminal: tap hearts against a running likekit-server

usage: likekit-demo-terminal [--server URL] (--token TOKEN | --admin-key KEY)
                             [--user ID] [--posts 42,1,2] [--train] [--fail]

  --server URL      the server (default http://127.0.0.1:8787, as `cargo xtask demo`)
  --token TOKEN     sign in with this token
  --admin-key KEY   the server's admin key: mints a token for --user, and
                    lets the demo set fault rules (--train, --fail, t, f)
  --user ID         who you are when the demo mints the token (default 1, Ana)
  --posts IDS       the posts to show (default 42,1,2,3,4,5)
  --train           every call takes 2 s (a train): the heart fills at once anyway
  --fail            every like and unlike fails: watch it roll back

keys (then Enter): a post's number taps its heart; r reads every post again;
t turns the train on or off; f turns failures on or off; s shows the
client's counters; q quits (after pending taps are saved, up to 10 s).";

/// How long a call may take on the demo's train, in milliseconds.
pub const TRAIN_LATENCY_MS: u64 = 2000;

/// The command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The server's base URL.
    pub server: String,
    /// A sign-in token given on the command line.
    pub token: Option<String>,
    /// The server's admin key.
    pub admin_key: Option<String>,
    /// The user to mint a token for.
    pub user: UserId,
    /// The posts to show.
    pub posts: Vec<PostId>,
    /// Start with 2-second calls.
    pub train: bool,
    /// Start with every like and unlike failing.
    pub fail: bool,
}

impl Options {
    /// Parses the arguments (without the program name). `Ok(None)` for
    /// `--help`.
    ///
    /// # Errors
    ///
    /// A message for a bad or missing argument.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Self>, String> {
        let mut options = Self {
            server: "http://127.0.0.1:8787".into(),
            token: None,
            admin_key: None,
            user: UserId::MIN,
            posts: [42, 1, 2, 3, 4, 5]
                .into_iter()
                .filter_map(PostId::checked)
                .collect(),
            train: false,
            fail: false,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag.to_owned(), Some(value.to_owned()))
                }
                _ => (arg.clone(), None),
            };
            let mut value = |name: &str| {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--server" => options.server = value("--server")?,
                "--token" => options.token = Some(value("--token")?),
                "--admin-key" => options.admin_key = Some(value("--admin-key")?),
                "--user" => {
                    options.user = value("--user")?
                        .parse()
                        .map_err(|_| "--user takes a user id".to_owned())?;
                }
                "--posts" => {
                    options.posts = value("--posts")?
                        .split(',')
                        .map(|p| p.trim().parse::<PostId>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| "--posts takes post ids, such as 42,1,2".to_owned())?;
                    if options.posts.is_empty() {
                        return Err("--posts needs at least one post".into());
                    }
                }
                "--train" => options.train = true,
                "--fail" => options.fail = true,
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if options.token.is_none() && options.admin_key.is_none() {
            return Err("give --token, or --admin-key to mint one".into());
        }
        if (options.train || options.fail) && options.admin_key.is_none() {
            return Err(
                "--train and --fail set the server's fault rules: they need --admin-key".into(),
            );
        }
        Ok(Some(options))
    }
}

/// Where the demo writes, shared with the observer (which runs on the
/// client's threads).
type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Out, text: &str) {
    let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            s.push(',');
        }
        s.push(c);
    }
    s
}

/// One post's line: `[1] post 42    ♥  1,205  Liked by you, Ben and 1,203 others  (saving…)`.
///
/// The count shown is the line's total, which never falls below the people
/// the line names (a read may carry a count a moment older than the
/// viewer's own like).
pub fn render(key: usize, view: &PostView) -> String {
    let heart = if view.liked { "♥" } else { "♡" };
    let mut line = format!(
        "[{key}] post {:<5} {heart} {:>6}",
        view.post_id,
        thousands(view.line.total)
    );
    let text = view.line.to_string();
    if !text.is_empty() {
        line.push_str("  ");
        line.push_str(&text);
    }
    if view.pending {
        line.push_str("  (saving…)");
    } else if view.error.is_some() {
        line.push_str("  (didn't save)");
    }
    line
}

/// Talks to the admin API: tokens and fault rules.
struct Admin {
    client: AdminClient,
    server: String,
}

impl Admin {
    fn new(server: &str, key: String) -> Result<Self, String> {
        let client = AdminClient::new(server, key).map_err(|e| e.to_string())?;
        Ok(Self {
            client,
            server: server.to_owned(),
        })
    }

    async fn token(&self, user: UserId) -> Result<String, String> {
        self.client
            .mint_token(user, 24 * 3600)
            .await
            .map_err(|e| format!("minting a token on {} failed: {e}", self.server))
    }

    /// Sets the rules for the train and the failures, or clears them.
    async fn faults(&self, train: bool, fail: bool) -> Result<(), String> {
        let mut rules = Vec::new();
        if train {
            rules.push(FaultRule {
                latency_ms: TRAIN_LATENCY_MS,
                ..FaultRule::new(FaultRoute::All)
            });
        }
        if fail {
            for route in [FaultRoute::Like, FaultRoute::Unlike] {
                rules.push(FaultRule {
                    error_rate: 1.0,
                    status: 503,
                    ..FaultRule::new(route)
                });
            }
        }
        self.client
            .set_faults(&FaultRules::new(rules))
            .await
            .map(drop)
            .map_err(|e| format!("setting fault rules on {} failed: {e}", self.server))
    }
}

/// The retry policy for the demo: quick enough that a failing like rolls
/// back within seconds even on the train.
pub fn demo_retry_policy() -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(300),
        max_delay: Duration::from_secs(2),
        max_retries: 2,
        ..RetryPolicy::default()
    }
}

/// Runs the demo until `q` or the end of `input`.
///
/// # Errors
///
/// A message when the server cannot be reached or refuses the setup.
pub async fn run(
    options: Options,
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
) -> Result<(), String> {
    let out: Out = Arc::new(Mutex::new(output));
    let server = options.server.trim_end_matches('/').to_owned();
    let admin = options
        .admin_key
        .clone()
        .map(|key| Admin::new(&server, key))
        .transpose()?;
    let token = match (&options.token, &admin) {
        (Some(token), _) => token.clone(),
        (None, Some(admin)) => admin.token(options.user).await?,
        (None, None) => return Err("no token".into()),
    };
    let client = LikeClient::builder()
        .base_url(&server)
        .token_provider(StaticToken::new(token))
        .retry_policy(demo_retry_policy())
        .build()
        .map_err(|e| e.to_string())?;

    // The key of each post: its place in the list, from 1.
    let keys: HashMap<PostId, usize> = options
        .posts
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, i + 1))
        .collect();
    // While the page is read and listed, its changes are not printed one
    // by one: the list that follows shows them.
    let reading = Arc::new(AtomicBool::new(false));
    let observer_out = Arc::clone(&out);
    let observer_keys = keys.clone();
    let observer_reading = Arc::clone(&reading);
    let _subscription = client.subscribe_all(move |event: &LikeEvent| match event {
        LikeEvent::Changed(view) => {
            if observer_reading.load(Ordering::Acquire) {
                return;
            }
            if let Some(key) = observer_keys.get(&view.post_id) {
                say(&observer_out, &format!("  {}", render(*key, view)));
            }
        }
        LikeEvent::Failed(LikeFailure {
            post_id,
            wanted,
            error,
        }) => {
            let what = if *wanted { "like" } else { "unlike" };
            say(
                &observer_out,
                &format!("  ✗ post {post_id}: your {what} didn't save ({error})"),
            );
        }
    });

    let (mut train, mut fail) = (options.train, options.fail);
    if let Some(admin) = &admin {
        if train || fail {
            admin.faults(train, fail).await?;
        }
    }
    say(
        &out,
        &format!(
            "LikeKit terminal demo at {server}{}\n{}",
            network(train, fail),
            "type a post's number and Enter to tap its heart; h for help"
        ),
    );
    // Whether the last read of the posts got through: a post the client
    // holds nothing for is then not on the server, else just not read yet.
    let mut read = show_all(&client, &options.posts, &out, &reading).await;

    // stdin is read on a thread of its own; lines arrive here.
    let (tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    while let Some(line) = lines.recv().await {
        let command = line.trim();
        if let Ok(key) = command.parse::<usize>() {
            match options.posts.get(key.wrapping_sub(1)) {
                // The observer prints the new line, at once.
                Some(&post) => drop(client.toggle(post)),
                None => say(&out, &format!("  no post [{key}]")),
            }
            continue;
        }
        match command {
            "q" | "quit" | "exit" => break,
            "" | "l" => list(&client, &options.posts, read, &out),
            "r" => read = show_all(&client, &options.posts, &out, &reading).await,
            "s" => say(&out, &format!("  {}", stats(&client))),
            "t" | "f" => {
                let Some(admin) = &admin else {
                    say(&out, "  the network can only be changed with --admin-key");
                    continue;
                };
                if command == "t" {
                    train = !train;
                } else {
                    fail = !fail;
                }
                match admin.faults(train, fail).await {
                    Ok(()) => say(&out, &format!("  network:{}", network(train, fail))),
                    Err(e) => say(&out, &format!("  {e}")),
                }
            }
            "h" | "help" | "?" => say(&out, USAGE),
            other => say(&out, &format!("  unknown key {other:?}; h for help")),
        }
    }

    if client.has_pending_calls() {
        say(&out, "saving pending taps (up to 10 s)…");
    }
    let clean = client.shutdown(Duration::from_secs(10)).await;
    if !clean {
        say(&out, "some taps could not be saved in time");
    }
    if let Some(admin) = &admin {
        if train || fail {
            admin.faults(false, false).await?;
        }
    }
    say(&out, &stats(&client));
    Ok(())
}

fn network(train: bool, fail: bool) -> String {
    let mut s = String::new();
    if train {
        let _ = write!(s, " · on a train ({TRAIN_LATENCY_MS} ms calls)");
    }
    if fail {
        s.push_str(" · every like and unlike fails");
    }
    if s.is_empty() {
        s.push_str(" · good network");
    }
    s
}

fn stats(client: &LikeClient) -> String {
    let s = client.stats();
    format!(
        "taps {} · calls {} · coalesced {} · retries {} · rollbacks {}",
        s.taps, s.calls_sent, s.coalesced, s.retries, s.rollbacks
    )
}

/// Prints every post as the client shows it now. `read` says whether the
/// last read of the posts got through: a post the client holds nothing for
/// is then not on the server; after a failed read it is not read yet.
fn list(client: &LikeClient, posts: &[PostId], read: bool, out: &Out) {
    for (i, &post) in posts.iter().enumerate() {
        match client.view(post) {
            Some(view) => say(out, &format!("  {}", render(i + 1, &view))),
            None => say(out, &missing(i + 1, post, read)),
        }
    }
}

/// The line of a post the client holds nothing for: `read` as in [`list`].
fn missing(key: usize, post: PostId, read: bool) -> String {
    let why = if read {
        "not on the server"
    } else {
        "not read yet (r reads again)"
    };
    format!("  [{key}] post {post}: {why}")
}

/// Reads every post (one request) and prints them. Whether the read got
/// through.
async fn show_all(client: &LikeClient, posts: &[PostId], out: &Out, reading: &AtomicBool) -> bool {
    reading.store(true, Ordering::Release);
    let read = client.refresh_many(posts).await;
    reading.store(false, Ordering::Release);
    if let Err(e) = &read {
        say(out, &format!("  reading the posts failed: {e}"));
    }
    list(client, posts, read.is_ok(), out);
    read.is_ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>, String> {
        Options::parse(args.iter().map(ToString::to_string))
    }

    #[test]
    fn arguments() {
        let o = parse(&["--admin-key=k", "--user", "3", "--posts", "7, 8", "--train"])
            .unwrap()
            .unwrap();
        assert_eq!(o.admin_key.as_deref(), Some("k"));
        let posts: Vec<u64> = o.posts.iter().map(|p| p.get()).collect();
        assert_eq!(
            (o.user.get(), posts.as_slice(), o.train),
            (3, &[7, 8][..], true)
        );
        assert!(
            parse(&["--token", "t", "--posts", "0"]).is_err(),
            "0 is no post"
        );
        assert!(
            parse(&["--token", "t", "--user", "-1"]).is_err(),
            "-1 is no user"
        );
        assert_eq!(parse(&["--help"]).unwrap(), None);
        assert!(parse(&[]).is_err(), "no way to sign in");
        assert!(
            parse(&["--token", "t", "--train"]).is_err(),
            "faults need the admin key"
        );
        assert!(parse(&["--token"]).is_err());
        assert!(parse(&["--token", "t", "--posts", "a"]).is_err());
        assert!(parse(&["--token", "t", "--bogus"]).is_err());
    }

    #[test]
    fn lines() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_204), "1,204");
        assert_eq!(thousands(1_234_567), "1,234,567");
        let view = PostView {
            post_id: PostId::new(42).unwrap(),
            liked: true,
            count: 1_205,
            friends: vec!["Ben".into()],
            line: likekit_core::LikeLine::new(true, &["Ben".to_string()], 1_205),
            pending: true,
            error: None,
        };
        assert_eq!(
            render(1, &view),
            "[1] post 42    ♥  1,205  Liked by you, Ben and 1,203 others  (saving…)"
        );
        let seven = PostId::new(7).unwrap();
        assert_eq!(missing(2, seven, true), "  [2] post 7: not on the server");
        assert_eq!(
            missing(2, seven, false),
            "  [2] post 7: not read yet (r reads again)"
        );
    }
}
