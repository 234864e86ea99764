//! The demo against a real server: a tap on a 2-second network shows the
//! filled heart at once and is saved before the demo exits; with failures
//! it rolls back with a message.

#![allow(clippy::unwrap_used)]

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use likekit_core::{PostId, UserId};
use likekit_demo_terminal::{Options, run};
use likekit_proto::admin::{Seed, SeedPost, SeedUser};
use likekit_server::{Config, ServerHandle};

const ADMIN_KEY: &str = "demo-test-admin";
const ANA: UserId = UserId::checked(1).unwrap();
const BEN: UserId = UserId::checked(2).unwrap();
const POST: PostId = PostId::checked(42).unwrap();
const SEVEN: PostId = PostId::checked(7).unwrap();

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

async fn server() -> ServerHandle {
    let server = likekit_server::spawn(Config {
        admin_key: Some(ADMIN_KEY.into()),
        write_rate_limit: None,
        ..Config::default()
    })
    .await
    .unwrap();
    server
        .seed(&Seed {
            users: vec![
                SeedUser {
                    id: ANA,
                    name: "Ana".into(),
                    friends: vec![BEN],
                },
                SeedUser {
                    id: BEN,
                    name: "Ben".into(),
                    friends: vec![ANA],
                },
            ],
            posts: vec![
                SeedPost {
                    id: POST,
                    likers: vec![BEN],
                },
                SeedPost {
                    id: SEVEN,
                    likers: vec![],
                },
            ],
        })
        .await
        .unwrap();
    server
}

async fn demo(server: &ServerHandle, extra: &[&str], input: &str) -> String {
    let mut args = vec![
        "--server".to_string(),
        server.base_url(),
        "--admin-key".into(),
        ADMIN_KEY.into(),
        "--posts".into(),
        "42,7".into(),
    ];
    args.extend(extra.iter().map(ToString::to_string));
    let options = Options::parse(args).unwrap().unwrap();
    let out = Captured::default();
    run(
        options,
        Box::new(Cursor::new(input.to_owned())),
        Box::new(out.clone()),
    )
    .await
    .unwrap();
    out.text()
}

#[tokio::test]
async fn on_the_train_the_heart_fills_at_once_and_is_saved() {
    let server = server().await;
    let text = demo(&server, &["--train"], "1\n").await;
    println!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("on a train"), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("[1] post 42    ♡      1  Liked by Ben"))
    );
    // the tap: filled at once, saving…, then saved
    let instant = lines
        .iter()
        .position(|l| l.contains("♥      2  Liked by you and Ben  (saving…)"))
        .expect("the instant heart");
    let saved = lines
        .iter()
        .position(|l| l.trim_end().ends_with("♥      2  Liked by you and Ben"))
        .expect("the saved heart");
    assert!(instant < saved);
    assert!(!text.contains("didn't save"));
    assert!(server.store().liked(ANA, &[POST]).await.unwrap()[0]);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn with_failures_the_heart_rolls_back_with_a_message() {
    let server = server().await;
    let text = demo(&server, &["--fail"], "2\n").await;
    println!("{text}");
    assert!(
        text.contains("[2] post 7     ♥      1  Liked by you  (saving…)"),
        "{text}"
    );
    assert!(text.contains("✗ post 7: your like didn't save"), "{text}");
    assert!(
        text.contains("[2] post 7     ♡      0  (didn't save)"),
        "{text}"
    );
    assert!(!server.store().liked(ANA, &[SEVEN]).await.unwrap()[0]);
    assert!(text.contains("rollbacks 1"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn keys_for_reading_listing_stats_and_the_network() {
    let server = server().await;
    let text = demo(&server, &["--user", "2"], "2\nr\ns\nt\nt\nx\nq\n1\n").await;
    println!("{text}");
    assert!(text.contains("good network"));
    assert!(text.contains("on a train"));
    assert!(text.contains("unknown key \"x\""));
    assert!(text.contains("taps 1 · calls 1"));
    // Ben already liked post 42; the tap after `q` is never read
    assert!(server.store().liked(BEN, &[SEVEN]).await.unwrap()[0]);
    assert!(server.store().liked(BEN, &[POST]).await.unwrap()[0]);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_post_without_a_view_is_not_on_the_server_or_not_read_yet() {
    let server = server().await;
    // Post 9 is not in the seed: the read gets through without it.
    let text = demo(&server, &["--posts", "42,9"], "l\n").await;
    println!("{text}");
    assert!(text.contains("[2] post 9: not on the server"), "{text}");
    assert!(!text.contains("not read yet"), "{text}");

    // A token the server refuses: the read fails, and no post is said to
    // be missing from the server, in the list after the read or later.
    let args = [
        "--server",
        &server.base_url(),
        "--token",
        "not-a-token",
        "--posts",
        "42,9",
    ];
    let options = Options::parse(args.iter().map(ToString::to_string))
        .unwrap()
        .unwrap();
    let out = Captured::default();
    run(
        options,
        Box::new(Cursor::new("l\n".to_owned())),
        Box::new(out.clone()),
    )
    .await
    .unwrap();
    let text = out.text();
    println!("{text}");
    assert!(text.contains("reading the posts failed"), "{text}");
    assert_eq!(
        text.matches("[1] post 42: not read yet").count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.matches("[2] post 9: not read yet").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("not on the server"), "{text}");
    server.shutdown().await.unwrap();
}
