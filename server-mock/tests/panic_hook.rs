//! The server's panic hook (`logs::install_panic_hook`): a panic is a log
//! line like any other — in the JSON log a JSON object, with the panic's
//! message and where it happened — at most one a second, with the panics
//! left out counted in the next. A binary of its own: the hook is the
//! process's, and would take other tests' failures.

#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::Captured;
use likekit_server::logs::{self, Lines};
use serde_json::Value;
use tracing_subscriber::{
    fmt::format::JsonFields, layer::SubscriberExt as _, util::SubscriberInitExt as _,
};

/// Panics on a thread of its own, and waits for it.
fn panic_on_a_thread(message: &'static str) {
    assert!(
        std::thread::spawn(move || panic!("{message}"))
            .join()
            .is_err()
    );
}

#[test]
fn a_panic_is_a_json_log_line_with_its_message_and_place() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || writer.clone())
                .with_ansi(false)
                .fmt_fields(JsonFields::new())
                .event_format(Lines { json: true }),
        )
        .init();
    logs::install_panic_hook();

    panic_on_a_thread("the first bug");
    for _ in 0..3 {
        panic_on_a_thread("the same bug again");
    }
    let lines = || -> Vec<Value> {
        captured
            .lines()
            .iter()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    };
    let first = lines();
    assert_eq!(first.len(), 1, "one line within the second: {first:?}");
    assert_eq!(first[0]["level"], "ERROR");
    let fields = &first[0]["fields"];
    assert_eq!(fields["message"], "a thread panicked");
    assert_eq!(fields["panic"], "the first bug");
    let location = fields["location"].as_str().unwrap();
    assert!(location.starts_with(&format!("{}:", file!())), "{location}");
    assert!(fields.get("suppressed").is_none(), "{fields}");

    // A second later, the next panic is written, counting the three left
    // out.
    std::thread::sleep(Duration::from_millis(1_100));
    panic_on_a_thread("a later bug");
    let all = lines();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["fields"]["panic"], "a later bug");
    assert_eq!(all[1]["fields"]["suppressed"], 3);
}
