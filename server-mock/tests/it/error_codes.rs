//! The error codes have one home, `likekit_proto::code`: the README's
//! table of errors names exactly the codes of `code::ALL`, each with the
//! same statuses, and an answer without a JSON body gets a code of that
//! list or `http_<status>`.

#![allow(clippy::unwrap_used)]

use std::{collections::BTreeSet, ops::RangeInclusive};

use axum::{
    body::Body,
    extract::Path,
    http::{Request, StatusCode, header},
    routing::get,
};
use likekit_server::wire::{ErrorBody, code};
use tower::ServiceExt as _;

use crate::common::test_config;

/// The crate README, where the table of errors is.
const README: &str = include_str!("../../README.md");

/// One row of the README's table of errors.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    /// The README's line number, for messages.
    line: usize,
    statuses: RangeInclusive<u16>,
    /// `None` for an answer with no body (the HTTP layer's own).
    code: Option<String>,
}

/// The rows of the first table under `## Errors`, whatever prose is
/// around it. A row that cannot be read is an error naming its line.
fn errors_table(readme: &str) -> Result<Vec<Row>, String> {
    let mut lines = readme.lines().enumerate();
    lines
        .by_ref()
        .find(|(_, line)| line.trim_end() == "## Errors")
        .ok_or("no `## Errors` section")?;
    let mut section = lines
        .take_while(|(_, line)| !line.starts_with("## ") && !line.starts_with("# "))
        .skip_while(|(_, line)| !line.trim_start().starts_with('|'));
    let (at, header) = section.next().ok_or("no table under `## Errors`")?;
    let heads: Vec<String> = cells(header)
        .iter()
        .map(|cell| cell.to_ascii_lowercase())
        .collect();
    if heads != ["status", "code", "when"] {
        return Err(format!(
            "line {}: the table's columns are {heads:?}, not status, code, when",
            at + 1
        ));
    }
    let (at, rule) = section.next().ok_or("the table has no header rule")?;
    if !cells(rule)
        .iter()
        .all(|cell| !cell.is_empty() && cell.chars().all(|c| matches!(c, '-' | ':')))
    {
        return Err(format!("line {}: not a header rule: {rule}", at + 1));
    }
    section
        .take_while(|(_, line)| line.trim_start().starts_with('|'))
        .map(|(at, line)| row(at + 1, line))
        .collect()
}

/// The cells of a table line, trimmed, without the outer pipes.
fn cells(line: &str) -> Vec<&str> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = line.strip_suffix('|').unwrap_or(line);
    line.split('|').map(str::trim).collect()
}

fn row(line: usize, text: &str) -> Result<Row, String> {
    let cells = cells(text);
    let [status, code, when, ..] = cells[..] else {
        return Err(format!("line {line}: fewer than three cells: {text}"));
    };
    if when.is_empty() {
        return Err(format!("line {line}: no `when`: {text}"));
    }
    let number = |n: &str| {
        n.trim()
            .parse::<u16>()
            .map_err(|_| format!("line {line}: status {status:?} is not a status or a range"))
    };
    let statuses = match status.split_once(['–', '-']) {
        Some((low, high)) => number(low)?..=number(high)?,
        None => number(status)?..=number(status)?,
    };
    if statuses.is_empty() || *statuses.start() < 100 || *statuses.end() > 599 {
        return Err(format!("line {line}: status {status:?} is out of range"));
    }
    let code = match code {
        "(no body)" => None,
        _ => {
            let name = code
                .strip_prefix('`')
                .and_then(|c| c.strip_suffix('`'))
                .filter(|c| {
                    !c.is_empty()
                        && c.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                })
                .ok_or(format!(
                    "line {line}: code {code:?} is neither one `code` nor (no body)"
                ))?;
            Some(name.to_owned())
        }
    };
    Ok(Row {
        line,
        statuses,
        code,
    })
}

/// Where the README's table and `code::ALL` disagree, one line each: a
/// code without a row, a row for a code that does not exist, a code with
/// other statuses, a code listed twice; and an `http_<status>` row whose
/// status is not its own.
fn disagreements(readme: &str) -> Vec<String> {
    let rows = match errors_table(readme) {
        Ok(rows) => rows,
        Err(unreadable) => return vec![unreadable],
    };
    let mut found = Vec::new();
    let mut named = BTreeSet::new();
    for row in &rows {
        let Some(name) = &row.code else { continue };
        if !named.insert(name.as_str()) {
            found.push(format!("line {}: `{name}` has a row already", row.line));
        }
        if let Some(status) = code::http_status(name) {
            if row.statuses != (status..=status) {
                found.push(format!(
                    "line {}: `{name}` is answered with {status}, not {:?}",
                    row.line, row.statuses
                ));
            }
            continue;
        }
        match code::ALL.iter().find(|(c, _)| c == name) {
            None => found.push(format!(
                "line {}: `{name}` is not in likekit_proto::code::ALL",
                row.line
            )),
            Some((_, statuses)) if *statuses != row.statuses => found.push(format!(
                "line {}: `{name}` is {:?} in the README, {statuses:?} in code::ALL",
                row.line, row.statuses
            )),
            Some(_) => {}
        }
    }
    for (name, statuses) in code::ALL {
        if !named.contains(name) {
            found.push(format!(
                "`{name}` ({statuses:?}) has no row in the README's table of errors"
            ));
        }
    }
    found
}

#[test]
fn the_readme_table_names_exactly_the_codes_of_the_wire_crate() {
    let rows = errors_table(README).unwrap();
    assert!(
        rows.len() > code::ALL.len(),
        "{} rows for {} codes",
        rows.len(),
        code::ALL.len()
    );
    let found = disagreements(README);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The README with `from` replaced by `to` (which must be there once).
fn changed(from: &str, to: &str) -> String {
    assert_eq!(README.matches(from).count(), 1, "{from}");
    README.replacen(from, to, 1)
}

/// The check finds each way the table and the constants can part, and
/// prose around the table changes nothing.
#[test]
fn the_check_finds_every_kind_of_disagreement() {
    let row = "| 409 | `too_many_rules` |";
    let missing = changed(row, "| 409 | (no body) |");
    assert_eq!(
        disagreements(&missing),
        ["`too_many_rules` (409..=409) has no row in the README's table of errors"]
    );

    let unknown = disagreements(&changed(row, "| 409 | `too_many_ruels` |"));
    assert_eq!(unknown.len(), 2, "{unknown:?}");
    assert!(unknown[0].ends_with("`too_many_ruels` is not in likekit_proto::code::ALL"));
    assert!(unknown[1].starts_with("`too_many_rules` (409..=409) has no row"));

    let other_status = disagreements(&changed(row, "| 400 | `too_many_rules` |"));
    assert_eq!(other_status.len(), 1, "{other_status:?}");
    assert!(
        other_status[0]
            .ends_with("`too_many_rules` is 400..=400 in the README, 409..=409 in code::ALL"),
        "{other_status:?}"
    );

    let range = "| 200–599 | `injected_fault` |";
    let narrower = disagreements(&changed(range, "| 400-599 | `injected_fault` |"));
    assert_eq!(narrower.len(), 1, "{narrower:?}");

    let twice = disagreements(&changed(row, &format!("{row} again |\n{row}")));
    assert_eq!(twice.len(), 1, "{twice:?}");
    assert!(twice[0].ends_with("`too_many_rules` has a row already"));

    let wrong_pattern = disagreements(&changed("| 416 | `http_416` |", "| 416 | `http_412` |"));
    assert_eq!(wrong_pattern.len(), 2, "{wrong_pattern:?}");

    let unreadable = disagreements(&changed(row, "| 409 | too_many_rules |"));
    assert_eq!(unreadable.len(), 1, "{unreadable:?}");
    assert!(unreadable[0].contains("neither one `code` nor (no body)"));

    // Prose (with a pipe) before and after the table, and a second table
    // further down the section, are not rows.
    let prose = changed(
        "| status | code | when |",
        "Read it | slowly.\n\n| status | code | when |",
    )
    .replacen(
        "\n## Tests",
        "\nMore | prose.\n\n| a | b | c |\n| - | - | - |\n| 1 | `x` | y |\n\n## Tests",
        1,
    );
    let read = |readme: &str| -> Vec<_> {
        let rows = errors_table(readme).unwrap();
        rows.into_iter().map(|r| (r.statuses, r.code)).collect()
    };
    assert_eq!(read(&prose), read(README));
    assert!(disagreements(&prose).is_empty());
}

/// What a route of your own answers in plain text is given a JSON body
/// with a code of `code::ALL` at that status, or `http_<status>`; the
/// codes only such answers get (`unauthorized`, `forbidden`,
/// `request_timeout`, `unavailable`) among them.
#[tokio::test]
async fn plain_text_error_answers_get_a_listed_code() {
    async fn plain(Path(status): Path<u16>) -> (StatusCode, &'static str) {
        (StatusCode::from_u16(status).unwrap(), "plain text")
    }
    let app = likekit_server::App::open(&test_config()).await.unwrap();
    let router = app.wrap(axum::Router::new().route("/status/{status}", get(plain)));
    let mut listed = BTreeSet::new();
    for status in 400..=599_u16 {
        let request = Request::get(format!("/status/{status}"))
            .body(Body::empty())
            .unwrap();
        let answer = router.clone().oneshot(request).await.unwrap();
        assert_eq!(answer.status().as_u16(), status);
        assert!(
            answer.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("application/json"),
            "{status}"
        );
        let bytes = axum::body::to_bytes(answer.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: ErrorBody = serde_json::from_slice(&bytes).unwrap();
        let given = body.error.code;
        match code::http_status(&given) {
            Some(own) => assert_eq!(own, status, "{given}"),
            None => {
                let statuses = code::ALL
                    .iter()
                    .find(|(c, _)| *c == given)
                    .map(|(_, s)| s)
                    .unwrap_or_else(|| panic!("{status}: `{given}` is not in code::ALL"));
                assert!(statuses.contains(&status), "{status}: `{given}`");
                listed.insert(given);
            }
        }
    }
    let expected = [
        code::BAD_REQUEST,
        code::UNAUTHORIZED,
        code::FORBIDDEN,
        code::NOT_FOUND,
        code::METHOD_NOT_ALLOWED,
        code::REQUEST_TIMEOUT,
        code::PAYLOAD_TOO_LARGE,
        code::UNSUPPORTED_MEDIA_TYPE,
        code::RATE_LIMITED,
        code::INTERNAL,
        code::UNAVAILABLE,
    ];
    assert_eq!(
        listed,
        expected
            .into_iter()
            .map(String::from)
            .collect::<BTreeSet<_>>()
    );
}

/// The codes a description of the OpenAPI document names: each part
/// (parts are joined with `; `) begins with one or more codes in
/// backticks, separated by `, `; what follows them is prose.
fn described_codes(description: &str) -> Vec<&str> {
    let mut codes = Vec::new();
    for part in description.split("; ") {
        let mut rest = part;
        while let Some((name, after)) = rest.strip_prefix('`').and_then(|r| r.split_once('`')) {
            codes.push(name);
            match after.strip_prefix(", ") {
                Some(next) if next.starts_with('`') => rest = next,
                _ => break,
            }
        }
    }
    codes
}

#[test]
fn codes_are_read_from_the_head_of_each_part_of_a_description() {
    assert_eq!(
        described_codes("`rate_limited`, with Retry-After"),
        ["rate_limited"]
    );
    assert_eq!(
        described_codes("`bad_fault_rules`: a `seed` or `state` given; `bad_json`"),
        ["bad_fault_rules", "bad_json"]
    );
    assert_eq!(
        described_codes("`missing_token`, `invalid_token`, `token_expired`"),
        ["missing_token", "invalid_token", "token_expired"]
    );
    assert_eq!(described_codes("The post's likes"), Vec::<&str>::new());
}

/// Every error answer the OpenAPI document describes names codes of
/// `code::ALL` at that status (its descriptions are written by hand in the
/// handlers' attributes).
#[tokio::test]
async fn the_openapi_document_names_only_listed_codes_at_their_statuses() {
    let app = likekit_server::App::open(&test_config()).await.unwrap();
    let request = Request::get("/openapi.json").body(Body::empty()).unwrap();
    let answer = app.router().oneshot(request).await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(answer.into_body(), 1 << 22)
        .await
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let mut named = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                let Ok(status) = status.parse::<u16>() else {
                    continue;
                };
                if status < 400 {
                    continue;
                }
                let description = response["description"].as_str().unwrap();
                for name in described_codes(description) {
                    let known = code::ALL
                        .iter()
                        .any(|(c, statuses)| *c == name && statuses.contains(&status))
                        || code::http_status(name) == Some(status);
                    assert!(
                        known,
                        "{method} {path} {status}: `{name}` is not a code of code::ALL at {status}: {description}"
                    );
                    named.insert(name.to_owned());
                }
            }
        }
    }
    // The document names most of the codes (not those only code of your
    // own or a fault rule gets).
    assert!(named.len() >= 25, "{named:?}");
}
