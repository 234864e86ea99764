//! A PostgreSQL `--db` value as the server reads it before tokio-postgres
//! does: `Database`'s `FromStr`, then the PostgreSQL store's own reading
//! of `sslmode` and `sslrootcert`, which it takes out of the URL
//! (`split_db_url`), and the form logs and error messages show
//! (`redact_db_url`). The reference is tokio-postgres's own `Config`
//! parser, which the store hands what is left to.
//!
//! The input (read as UTF-8, invalid bytes replaced) is the value as it
//! is; or, when it holds a line break, a user name, a password and the
//! rest (`host:port/database?query`, which may hold more lines), one a
//! line, put together as `postgres://USER:PASSWORD@REST` with nothing
//! percent-encoded (an unencoded `?` in a password once made the store
//! miss the `sslmode` after it). For every input nothing panics, and:
//!
//! * a `postgres://` or `postgresql://` value (the scheme in any case) is
//!   a PostgreSQL database, with its scheme in lower case, and shows as
//!   its redacted form;
//! * no password shows in the redacted form: neither one tokio-postgres
//!   reads in the value (the credentials' and each `password`
//!   parameter's, or each `password` of a `key=value` string) nor the
//!   password of a value put together from lines. With a password's
//!   characters that shape no URL (all but whitespace and
//!   `@ : / ? & = % # ' \`) all `x`, or all `y`, the redacted forms are
//!   the same; and a password of four characters or more is not in the
//!   redacted form unless it is there with its characters changed too (a
//!   host of the same name);
//! * taking `sslmode` and `sslrootcert` out of what is left takes nothing
//!   more (the second reading is the first's result, without TLS);
//! * of a URL, tokio-postgres reads no `sslmode` in what is left (the
//!   store would refuse the URL if it did);
//! * when tokio-postgres reads a URL as given (an `sslmode` of
//!   `disable`, `prefer` or `require`, or none, and no `sslrootcert`), the
//!   store reads the same mode (none is `disable` here) or refuses
//!   `prefer`, and nothing else; and what is left reads as the same
//!   configuration but for `sslmode`. (Not so of a `key=value` string,
//!   which tokio-postgres stops reading quietly at a word starting with
//!   `=`: the store reads on, and refuses what it cannot read.)
//! * of a value put together from lines, with no `@` in the user name or
//!   the password (tokio-postgres ends the credentials at the first), the
//!   password changes nothing but itself in what is left, nor the TLS
//!   read; and tokio-postgres reads the password back as given,
//!   percent-decoded (when the user name has no `:` and no parameter sets
//!   another).
//!
//! The input is also read as a URL's `options` (as it is, and as
//! tokio-postgres reads them from what is left of a URL), which the store
//! sets once connected (`db_session_settings`): when they are taken, the
//! statement is `SELECT` and `set_config(E'…', E'…', false)` calls, every
//! literal well escaped, the last `synchronous_commit` `on`; and the
//! settings read back from it, written again as options, make the same
//! statement.

#![no_main]

use std::ops::Range;
use std::str::FromStr;

use libfuzzer_sys::fuzz_target;
use likekit_server::Database;
use likekit_server::fuzzing::{PgTls, SslMode, db_session_settings, redact_db_url, split_db_url};
use percent_encoding::percent_decode_str;
use tokio_postgres::Config;
use tokio_postgres::config::SslMode as ReadMode;

/// The URL prefixes tokio-postgres takes (in lower case only).
const SCHEMES: [&str; 2] = ["postgres://", "postgresql://"];

/// Whether `c` can change how a URL or a `key=value` string reads.
fn shapes(c: char) -> bool {
    c.is_whitespace() || "@:/?&=%#'\\".contains(c)
}

/// `text` with the characters of `spans` (sorted, apart) that shape
/// nothing changed to `fill`.
fn changed(text: &str, spans: &[Range<usize>], fill: char) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for span in spans {
        out.push_str(&text[from..span.start]);
        out.extend(
            text[span.clone()]
                .chars()
                .map(|c| if shapes(c) { c } else { fill }),
        );
        from = span.end;
    }
    out.push_str(&text[from..]);
    out
}

/// Where tokio-postgres reads a password in `url`, as its parser walks a
/// URL (the credentials end at the first `@`; the query starts at the
/// first `?` after them; a key runs to `=`, a value to `&`) or a
/// `key=value` string (whitespace around `=`, values quoted with `'` or
/// not, `\` escaping the next character).
fn password_spans(url: &str) -> Vec<Range<usize>> {
    let Some(scheme) = SCHEMES.iter().find(|s| url.starts_with(*s)) else {
        return key_value_password_spans(url);
    };
    let base = scheme.len();
    let s = &url[base..];
    let mut spans = Vec::new();
    let mut at = 0;
    if let Some(end) = s.find('@') {
        if let Some(colon) = s[..end].find(':') {
            spans.push(base + colon + 1..base + end);
        }
        at = end + 1;
    }
    let Some(question) = s[at..].find('?') else {
        return spans;
    };
    let mut pair = at + question + 1;
    while pair < s.len() {
        let Some(eq) = s[pair..].find('=') else { break };
        let key = &s[pair..pair + eq];
        let value = pair + eq + 1;
        let end = s[value..].find('&').map_or(s.len(), |amp| value + amp);
        if percent_decode_str(key)
            .decode_utf8()
            .is_ok_and(|k| k == "password")
        {
            spans.push(base + value..base + end);
        }
        pair = end + 1;
    }
    spans
}

/// [`password_spans`] of a `key=value` string; a value that does not
/// end (an unterminated quote) runs to the end.
fn key_value_password_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut chars = text.char_indices().peekable();
    let skip_ws = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_ws(&mut chars);
        let Some(&(key_start, _)) = chars.peek() else {
            break;
        };
        while chars
            .next_if(|&(_, c)| !c.is_whitespace() && c != '=')
            .is_some()
        {}
        let key_end = chars.peek().map_or(text.len(), |&(at, _)| at);
        if key_end == key_start {
            break;
        }
        skip_ws(&mut chars);
        if chars.next_if(|&(_, c)| c == '=').is_none() {
            break;
        }
        skip_ws(&mut chars);
        let quoted = chars.next_if(|&(_, c)| c == '\'').is_some();
        let start = chars.peek().map_or(text.len(), |&(at, _)| at);
        let mut end = text.len();
        while let Some(&(at, c)) = chars.peek() {
            if (quoted && c == '\'') || (!quoted && c.is_whitespace()) {
                end = at;
                break;
            }
            chars.next();
            if c == '\\' {
                chars.next();
            }
        }
        if quoted {
            chars.next();
        }
        if &text[key_start..key_end] == "password" && start < end {
            spans.push(start..end);
        }
    }
    spans
}

/// The mode the store must read where tokio-postgres read `read`: none
/// (`prefer` there) is `disable` here.
fn expected_mode(read: ReadMode) -> SslMode {
    match read {
        ReadMode::Require => SslMode::Require,
        _ => SslMode::Disable,
    }
}

/// The settings of a statement [`db_session_settings`] made, in order; or
/// where it is not `SELECT` and `set_config(E'name', E'value', false)`
/// calls with every literal escaped (`''` for a quote, `\\` for a
/// backslash).
fn read_settings(sql: &str) -> Result<Vec<(String, String)>, String> {
    fn literal(rest: &mut &str) -> Result<String, String> {
        *rest = rest
            .strip_prefix("E'")
            .ok_or_else(|| format!("no literal at {rest:?}"))?;
        let mut text = String::new();
        let mut chars = rest.char_indices();
        while let Some((at, c)) = chars.next() {
            match c {
                '\'' => match chars.clone().next() {
                    Some((_, '\'')) => {
                        chars.next();
                        text.push('\'');
                    }
                    _ => {
                        *rest = &rest[at + 1..];
                        return Ok(text);
                    }
                },
                '\\' => match chars.next() {
                    Some((_, '\\')) => text.push('\\'),
                    other => return Err(format!("a lone backslash before {other:?}")),
                },
                c => text.push(c),
            }
        }
        Err("a literal that does not end".to_owned())
    }
    let mut rest = sql
        .strip_prefix("SELECT ")
        .ok_or("no SELECT at the start")?;
    let mut settings = Vec::new();
    loop {
        rest = rest
            .strip_prefix("set_config(")
            .ok_or_else(|| format!("no set_config at {rest:?}"))?;
        let name = literal(&mut rest)?;
        rest = rest.strip_prefix(", ").ok_or("no comma after the name")?;
        let value = literal(&mut rest)?;
        rest = rest
            .strip_prefix(", false)")
            .ok_or("no `, false)` after the value")?;
        settings.push((name, value));
        if rest.is_empty() {
            return Ok(settings);
        }
        rest = rest.strip_prefix(", ").ok_or("no comma between calls")?;
    }
}

/// `text` as a word of a startup packet's `options`: whitespace and `\`
/// each escaped with a `\`.
fn option_word(text: &str) -> String {
    let mut word = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_whitespace() || c == '\\' {
            word.push('\\');
        }
        word.push(c);
    }
    word
}

/// The checks of `options` read as a URL's `options`.
fn check_settings(options: &str) {
    let Ok(sql) = db_session_settings(options) else {
        return;
    };
    let settings =
        read_settings(&sql).unwrap_or_else(|why| panic!("{options:?} made {sql:?}: {why}"));
    let (last, given) = settings.split_last().expect("synchronous_commit at least");
    assert_eq!(
        (last.0.as_str(), last.1.as_str()),
        ("synchronous_commit", "on"),
        "{options:?} made {sql:?}"
    );
    let again: Vec<String> = given
        .iter()
        .map(|(name, value)| format!("-c {}={}", option_word(name), option_word(value)))
        .collect();
    let again = again.join(" ");
    assert_eq!(
        db_session_settings(&again).as_deref(),
        Ok(sql.as_str()),
        "{options:?} made {sql:?}, and its settings written back as {again:?} another"
    );
}

/// The checks of every value; `password` is where a value put together
/// from lines holds its password.
fn check(value: &str, password: Option<Range<usize>>) {
    let url = match Database::from_str(value) {
        Ok(Database::Postgres(url)) => {
            let (scheme, rest) = value.split_once("://").expect("a URL has a scheme");
            assert_eq!(url, format!("{}://{rest}", scheme.to_ascii_lowercase()));
            assert_eq!(
                Database::Postgres(url.clone()).to_string(),
                redact_db_url(&url)
            );
            url
        }
        // What the library takes as a PostgreSQL URL is not only what
        // `--db` does: read it as given.
        _ => value.to_owned(),
    };
    // The value's length and spans are unchanged by a lower-cased scheme.
    let shown = redact_db_url(&url);
    let mut secrets = password_spans(&url);
    secrets.extend(password.clone());
    // One password at a time: a password may hold another's key (a
    // `?password=` in the credentials), which changing its letters would
    // unmake.
    for span in secrets {
        let one = std::slice::from_ref(&span);
        let as_x = redact_db_url(&changed(&url, one, 'x'));
        let as_y = redact_db_url(&changed(&url, one, 'y'));
        assert_eq!(
            as_x, as_y,
            "the password {span:?} of {url:?} shows in its redacted form"
        );
        let text = &url[span];
        if text.chars().count() >= 4 && !as_x.contains(text) {
            assert!(
                !shown.contains(text),
                "{url:?} shows its password {text:?}: {shown:?}"
            );
        }
    }
    let is_url = SCHEMES.iter().any(|s| url.starts_with(s));
    let given = Config::from_str(&url);
    let split = split_db_url(&url);
    let (left, tls) = match split {
        Ok(split) => split,
        Err(refusal) => {
            // (tokio-postgres stops reading a `key=value` string quietly
            // at a word starting with `=`; the store refuses more there.)
            if is_url && given.is_ok() {
                assert!(
                    refusal.contains("may or may not"),
                    "{url:?} is refused ({refusal}) where tokio-postgres reads it"
                );
            }
            return;
        }
    };
    assert_eq!(
        split_db_url(&left),
        Ok((left.clone(), PgTls::default())),
        "{url:?} left {left:?}, read again"
    );
    let read_left = Config::from_str(&left);
    if let Ok(config) = &read_left
        && let Some(options) = config.get_options()
    {
        check_settings(options);
    }
    if is_url && let Ok(config) = &read_left {
        assert_eq!(
            config.get_ssl_mode(),
            ReadMode::Prefer,
            "tokio-postgres reads an sslmode in {left:?}, left of {url:?} (read as {tls:?})"
        );
    }
    // (Not of a `key=value` string: tokio-postgres stops reading one
    // quietly at a word starting with `=`, where the store reads on.)
    if let (true, Ok(mut given), Ok(config)) = (is_url, given, &read_left) {
        assert_eq!(
            tls,
            PgTls {
                mode: expected_mode(given.get_ssl_mode()),
                ca_file: None
            },
            "{url:?}: tokio-postgres reads sslmode {:?}",
            given.get_ssl_mode()
        );
        given.ssl_mode(ReadMode::Prefer);
        assert!(
            given == *config,
            "{url:?} left {left:?}, which reads otherwise"
        );
    }
    let Some(password) = password else { return };
    let text = &url[password.clone()];
    let user = &url["postgres://".len()..password.start - 1];
    if user.contains('@') || text.contains('@') {
        return;
    }
    let other = changed(&url, std::slice::from_ref(&password), 'x');
    let (other_left, other_tls) = split_db_url(&other).expect("the same URL but for letters");
    assert_eq!(other_tls, tls, "{url:?} and {other:?} read differently");
    assert_eq!(
        other_left,
        changed(&left, std::slice::from_ref(&password), 'x'),
        "{url:?} and {other:?} are left differently"
    );
    if let Ok(config) = read_left
        && !user.contains(':')
        && password_spans(&left).len() == 1
    {
        let decoded: Vec<u8> = percent_decode_str(text).collect();
        assert_eq!(
            config.get_password(),
            Some(&decoded[..]),
            "{url:?} left {left:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check_settings(&text);
    match text.split_once('\n') {
        None => check(&text, None),
        Some((user, rest)) => {
            let (password, rest) = rest.split_once('\n').unwrap_or((rest, ""));
            let url = format!("postgres://{user}:{password}@{rest}");
            let start = "postgres://".len() + user.len() + 1;
            check(&url, Some(start..start + password.len()));
        }
    }
});
