//! A PostgreSQL URL as the server reads it before tokio-postgres does:
//! its `sslmode` and `sslrootcert` taken out ([`split_url`]), its
//! `options` read as the settings a connection makes once connected
//! ([`session_settings`]), and its password hidden for logs
//! ([`redact_url`]).
//!
//! Plain text work, without tokio-postgres, so not behind the `postgres`
//! feature: [`Database`](super::Database) shows its URL with
//! [`redact_url`] in every build, and the `server_db_url` fuzz target of
//! `fuzz/` (which builds the server without its stores) reaches both
//! through [`crate::fuzzing`].

use std::path::PathBuf;

/// How much of TLS the connections to PostgreSQL use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// No TLS (the default).
    #[default]
    Disable,
    /// Encrypted; the server's certificate is not checked, unless a CA
    /// file is given: then its chain is, as [`VerifyCa`](Self::VerifyCa)
    /// (libpq's rule).
    Require,
    /// Encrypted; the certificate's chain is checked, not its name.
    VerifyCa,
    /// Encrypted; the chain and the host name are checked.
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Result<Self, String> {
        match text {
            "disable" => Ok(Self::Disable),
            "require" => Ok(Self::Require),
            "verify-ca" => Ok(Self::VerifyCa),
            "verify-full" => Ok(Self::VerifyFull),
            "prefer" | "allow" => Err(format!(
                "sslmode={text} may or may not encrypt; use require, verify-ca or verify-full (or disable)"
            )),
            other => Err(format!("unknown sslmode {other:?}")),
        }
    }
}

/// TLS to PostgreSQL: the mode, and the CA certificates (PEM) that sign the
/// server's certificate (`None`: no check with `require`; `verify-ca` and
/// `verify-full` need one, as libpq does). The file name `system` is no
/// file: the public CAs, as libpq's `sslrootcert=system`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PgTls {
    /// `sslmode`.
    pub mode: SslMode,
    /// `sslrootcert`: a PEM file of CA certificates, or `system`.
    pub ca_file: Option<PathBuf>,
}

/// The `sslrootcert` that names no file but the public CAs (libpq 16's
/// `sslrootcert=system`); a file of that name is written `./system`.
pub const SYSTEM_ROOTS: &str = "system";

/// The libpq parameters of client certificates, which the server does not
/// take (it signs in with a password, or none on a trusted network).
const CLIENT_CERTIFICATE_KEYS: &[&str] = &["sslcert", "sslkey", "sslpassword", "sslcertmode"];

/// `url` without its `sslmode` and `sslrootcert` parameters (which
/// tokio-postgres does not take in their libpq forms), and the TLS they
/// ask for. Both URL (`?sslmode=…&…`) and key/value forms are read.
///
/// `sslrootcert=system` without an `sslmode` is `verify-full`, as libpq
/// has it. A client certificate (`sslcert`, `sslkey`) is refused, saying
/// so. Only the values of the two parameters taken are decoded and read;
/// no other value (a `password` above all) is ever part of an error.
pub(crate) fn split_url(url: &str) -> Result<(String, PgTls), String> {
    let mut tls = PgTls::default();
    let mut mode_given = false;
    let mut take = |key: &str, value: &dyn Fn() -> Result<String, String>| match key {
        "sslmode" => {
            tls.mode = SslMode::parse(&value()?)?;
            mode_given = true;
            Ok(true)
        }
        "sslrootcert" => {
            tls.ca_file = Some(PathBuf::from(value()?));
            Ok(true)
        }
        key if CLIENT_CERTIFICATE_KEYS.contains(&key) => Err(format!(
            "{key}: client certificates are not supported; sign the server's \
             PostgreSQL role in with a password (SCRAM), and keep sslmode and \
             sslrootcert for checking the database's own certificate"
        )),
        _ => Ok(false),
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        // The query starts where tokio-postgres starts it: at the first `?`
        // after the credentials, which end at the first `@`. A password with
        // an unencoded `?` is not a query, then.
        let after_credentials = url.find('@').map_or(0, |at| at + 1);
        let Some(question) = url[after_credentials..].find('?') else {
            return Ok((url.to_owned(), tls));
        };
        let (base, query) = (
            &url[..after_credentials + question],
            &url[after_credentials + question + 1..],
        );
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            // A key is read whatever its bytes (one that is not UTF-8 is
            // no key taken here, and tokio-postgres refuses it); a value
            // is decoded only when its key is taken, and never shown.
            let key = percent_encoding::percent_decode_str(key).decode_utf8_lossy();
            let value = || {
                percent_encoding::percent_decode_str(value)
                    .decode_utf8()
                    .map(|text| text.into_owned())
                    .map_err(|_| format!("the value of {key} is not UTF-8 once percent-decoded"))
            };
            if !take(&key, &value)? {
                kept.push(pair);
            }
        }
        let url = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok((url, system_implies_verify_full(tls, mode_given)))
    } else {
        // The pairs taken are cut out, each with the whitespace before it
        // (the first with none), and the rest left as it is: joined anew,
        // a string with leading whitespace could start with
        // `postgres://` and read as a URL, and a quoted value's spaces
        // would change.
        let mut left = String::with_capacity(url.len());
        let (mut kept_from, mut last_end) = (0, 0);
        for (start, pair) in words(url) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if take(key, &|| Ok(value.trim_matches('\'').to_owned()))? {
                let cut_from = if last_end == 0 { start } else { last_end };
                left.push_str(&url[kept_from..cut_from]);
                kept_from = start + pair.len();
            }
            last_end = start + pair.len();
        }
        left.push_str(&url[kept_from..]);
        Ok((left, system_implies_verify_full(tls, mode_given)))
    }
}

/// libpq's rule: `sslrootcert=system` without an `sslmode` is
/// `verify-full` (a weaker mode given with it is refused later, where the
/// TLS configuration is made).
fn system_implies_verify_full(mut tls: PgTls, mode_given: bool) -> PgTls {
    if !mode_given
        && tls
            .ca_file
            .as_deref()
            .is_some_and(|file| file == std::path::Path::new(SYSTEM_ROOTS))
    {
        tls.mode = SslMode::VerifyFull;
    }
    tls
}

/// The words of `text` (split at whitespace), each with where it starts.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(from)) => {
                words.push((from, &text[from..at]));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push((from, &text[from..]));
    }
    words
}

/// The one statement a PostgreSQL connection runs as it opens: the
/// `defaults` it does not set, then `given`'s settings (a URL's `options`),
/// then `synchronous_commit = on`, last so that nothing turns it off; each
/// a `set_config` call, which reads a value as the startup packet would
/// (`search_path=a,b` is two schemas), with the name and the value as
/// escaped string literals. `given` may hold only settings (`-c
/// name=value`, `-cname=value` or `--name=value`, a `\` escaping the next
/// character as PostgreSQL reads them; a name's `-` read as `_`).
///
/// # Errors
///
/// A word that is not a setting, a setting without a value, or a name that
/// is not letters, digits, `_` and `.`, each said in the URL's terms.
pub(crate) fn session_settings(
    given: Option<&str>,
    defaults: &[(&str, &str)],
) -> Result<String, String> {
    let mut taken: Vec<(String, String)> = Vec::new();
    let mut words = option_words(given.unwrap_or("")).into_iter();
    while let Some(word) = words.next() {
        let setting = if word == "-c" {
            words.next().ok_or_else(|| {
                "the URL's options end with `-c` and no `name=value` after it".to_owned()
            })?
        } else if let Some(rest) = word.strip_prefix("--").or_else(|| word.strip_prefix("-c")) {
            rest.to_owned()
        } else {
            return Err(format!(
                "the URL's options hold `{word}`, which is not a setting: only settings \
                 are taken (`-c name=value`), set as each connection opens"
            ));
        };
        let Some((name, value)) = setting.split_once('=') else {
            return Err(format!(
                "the URL's options set `{setting}` without a value (`-c name=value`)"
            ));
        };
        let name = name.replace('-', "_");
        let named = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !named || value.contains('\0') {
            return Err(format!(
                "the URL's options set `{setting}`, which names no setting"
            ));
        }
        taken.push((name, value.to_owned()));
    }
    let sets = |name: &str| taken.iter().any(|(taken, _)| taken == name);
    let mut settings: Vec<(String, String)> = defaults
        .iter()
        .filter(|(name, _)| !sets(name))
        .map(|&(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    settings.extend(taken);
    settings.push(("synchronous_commit".to_owned(), "on".to_owned()));
    let literal = |text: &str| format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"));
    let calls: Vec<String> = settings
        .iter()
        .map(|(name, value)| format!("set_config({}, {}, false)", literal(name), literal(value)))
        .collect();
    Ok(format!("SELECT {}", calls.join(", ")))
}

/// The words of a startup packet's `options` as PostgreSQL splits them: at
/// whitespace, a `\` taking the next character as it is.
fn option_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            words.extend(word.take());
            continue;
        }
        let c = if c == '\\' {
            chars.next().unwrap_or(c)
        } else {
            c
        };
        word.get_or_insert_with(String::new).push(c);
    }
    words.extend(word);
    words
}

/// `url` with any password replaced by `***`, for logs. Errs on the side
/// of hiding, for whichever way a reader may take the text:
///
/// * in a URL (`scheme://…`), the credentials end at the last `@` (a
///   password with an unencoded `/`, `?` or `@` stays hidden; a user name
///   with `/` or `?` is hidden too, as it may be a password's end);
/// * a `password` parameter is hidden after any `?` or `&` (a query may
///   start at the first `?`, or after the credentials, which a parser may
///   end at the first `@` or the last), its value up to the next `&` (an
///   `@` in it does not end it), however its key is percent-encoded;
/// * a `password` of a libpq `key=value` string is hidden however it is
///   spaced (`password = …`) or quoted (`password='a b'`).
pub(crate) fn redact_url(url: &str) -> String {
    let mut hidden = key_value_passwords(url);
    if let Some((scheme, rest)) = url.split_once("://")
        && is_scheme(scheme)
    {
        let base = scheme.len() + "://".len();
        if let Some(at) = rest.rfind('@')
            && let Some(colon) = rest[..at].find(':')
        {
            let from = if rest[..colon].contains(['/', '?']) {
                0
            } else {
                colon + 1
            };
            hidden.push((base + from..base + at, "***"));
        }
        hidden.extend(
            query_passwords(rest)
                .into_iter()
                .map(|span| (base + span.start..base + span.end, "password=***")),
        );
    }
    hidden.sort_by_key(|(span, _)| (span.start, std::cmp::Reverse(span.end)));
    let mut shown = String::with_capacity(url.len());
    let mut from = 0;
    let mut spans = hidden.into_iter().peekable();
    while let Some((mut span, mut with)) = spans.next() {
        // Overlapping spans are hidden as one; one within another keeps
        // the outer one's replacement.
        while let Some((next, _)) = spans.next_if(|(next, _)| next.start < span.end) {
            if next.end > span.end {
                span.end = next.end;
                with = "***";
            }
        }
        shown.push_str(&url[from..span.start]);
        shown.push_str(with);
        from = span.end;
    }
    shown.push_str(&url[from..]);
    shown
}

/// A URL scheme (`postgres`, `mysql`): a letter, then letters, digits,
/// `+`, `-` and `.`.
fn is_scheme(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Every `key=value` pair of `rest` (a URL after its scheme) that starts
/// after a `?` or an `&` and runs to the next `&`, whose key
/// percent-decodes to `password`: key and value.
fn query_passwords(rest: &str) -> Vec<std::ops::Range<usize>> {
    rest.match_indices(['?', '&'])
        .filter_map(|(at, _)| {
            let start = at + 1;
            let end = rest[start..]
                .find('&')
                .map_or(rest.len(), |amp| start + amp);
            let (key, _) = rest[start..end].split_once('=')?;
            (percent_encoding::percent_decode_str(key).decode_utf8_lossy() == "password")
                .then_some(start..end)
        })
        .collect()
}

/// The values of `password` in `text` read as a libpq `key=value` string
/// (`key = value`, whitespace around `=` allowed, a value quoted with `'`
/// or not, `\` escaping the next character), each with its quotes. A
/// word that is not a `key=value` pair is passed over, and the reading
/// goes on with the next, so a `password` after it is still found; an
/// unterminated quote runs to the end.
fn key_value_passwords(text: &str) -> Vec<(std::ops::Range<usize>, &'static str)> {
    let mut hidden = Vec::new();
    let mut chars = text.char_indices().peekable();
    let at = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        chars.peek().map_or(text.len(), |&(at, _)| at)
    };
    let skip_whitespace = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    };
    loop {
        skip_whitespace(&mut chars);
        let key_start = at(&mut chars);
        if key_start == text.len() {
            return hidden;
        }
        while chars
            .next_if(|&(_, c)| !c.is_whitespace() && c != '=')
            .is_some()
        {}
        let key = &text[key_start..at(&mut chars)];
        skip_whitespace(&mut chars);
        if chars.next_if(|&(_, c)| c == '=').is_none() {
            continue;
        }
        skip_whitespace(&mut chars);
        let value_start = at(&mut chars);
        let quoted = chars.next_if(|&(_, c)| c == '\'').is_some();
        while let Some((_, c)) = chars.next_if(|&(_, c)| {
            if quoted {
                c != '\''
            } else {
                !c.is_whitespace()
            }
        }) {
            if c == '\\' {
                chars.next();
            }
        }
        if quoted {
            chars.next_if(|&(_, c)| c == '\'');
        }
        let value_end = at(&mut chars);
        if key == "password" && value_end > value_start {
            hidden.push((value_start..value_end, "***"));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_leave_the_url() {
        let (url, tls) =
            split_url("postgres://u:p@db:5432/likes?sslmode=verify-full&application_name=x&sslrootcert=/ca.pem")
                .unwrap();
        assert_eq!(url, "postgres://u:p@db:5432/likes?application_name=x");
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.ca_file, Some(PathBuf::from("/ca.pem")));
        let (url, tls) = split_url("host=db user=u sslmode=require dbname=likes").unwrap();
        assert_eq!(url, "host=db user=u dbname=likes");
        assert_eq!(tls.mode, SslMode::Require);
        let (url, tls) = split_url("postgres://db/likes").unwrap();
        assert_eq!(
            (url.as_str(), tls),
            ("postgres://db/likes", PgTls::default())
        );
        assert!(
            split_url("postgres://db/likes?sslmode=prefer")
                .unwrap_err()
                .contains("may or may not")
        );
        assert!(
            split_url("postgres://db/likes?sslmode=sure")
                .unwrap_err()
                .contains("unknown")
        );
        // A `?` in the password is not the query; a percent-encoded key is
        // still `sslmode` (tokio-postgres decodes keys too).
        let (url, tls) = split_url("postgres://ana:pa?ss@db/likes?sslmode=require").unwrap();
        assert_eq!(url, "postgres://ana:pa?ss@db/likes");
        assert_eq!(tls.mode, SslMode::Require);
        let (url, tls) =
            split_url("postgres://db/likes?ssl%6Dode=verify-full&sslrootcert=%2Fetc%2Fca.pem")
                .unwrap();
        assert_eq!(url, "postgres://db/likes");
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.ca_file, Some(PathBuf::from("/etc/ca.pem")));
    }

    #[test]
    fn urls_are_shown_without_passwords() {
        assert_eq!(
            redact_url("postgres://ana:s3cret@db.example:5432/likes?sslmode=disable"),
            "postgres://ana:***@db.example:5432/likes?sslmode=disable"
        );
        assert_eq!(
            redact_url("postgresql://ana@localhost/likes?password=s3cret&application_name=x"),
            "postgresql://ana@localhost/likes?password=***&application_name=x"
        );
        assert_eq!(
            redact_url("postgres://localhost/likes"),
            "postgres://localhost/likes"
        );
        assert_eq!(
            redact_url("host=db user=ana password=s3cret dbname=likes"),
            "host=db user=ana password=*** dbname=likes"
        );
        // A password with an unencoded `/`, `?` or `@` stays hidden whole.
        for (url, shown) in [
            (
                "postgres://ana:Sup3r/Secret@db/likes",
                "postgres://ana:***@db/likes",
            ),
            (
                "postgres://ana:Sup3r?Secret@db/likes",
                "postgres://ana:***@db/likes",
            ),
            (
                "postgres://ana:Sup@r@db/likes?sslmode=require",
                "postgres://ana:***@db/likes?sslmode=require",
            ),
            (
                "postgres://db/likes?pass%77ord=s3cret",
                "postgres://db/likes?password=***",
            ),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    /// Passwords the `server_db_url` fuzz target found partly shown: a
    /// quoted or spaced `key=value` password, and an `@` in a `password`
    /// parameter, which made the credentials' rule show the value's end.
    #[test]
    fn a_password_shows_whatever_its_form() {
        for (given, shown) in [
            (
                "host=db user=ana password='s3 cret' sslmode=require dbname=likes",
                "host=db user=ana password=*** sslmode=require dbname=likes",
            ),
            (
                "host=db password = hunter2 dbname=likes",
                "host=db password = *** dbname=likes",
            ),
            (
                r"host=db password=it\ is\'s dbname=likes",
                "host=db password=*** dbname=likes",
            ),
            ("host=db password='unterminated", "host=db password=***"),
            // Not a pair: passed over, and the password after it found.
            ("host=db oops password=s3cret", "host=db oops password=***"),
            // A value with `://` is not a URL.
            ("x://y=1 password=s3cret", "x://y=1 password=***"),
            (
                "postgres://ana:pw@db/likes?password=se@cret",
                "postgres://ana:***",
            ),
            (
                "postgres://db/likes?password=se@cret&sslmode=require",
                "postgres://db/likes?password=***&sslmode=require",
            ),
        ] {
            assert_eq!(redact_url(given), shown, "{given}");
        }
    }

    /// Found by the `server_db_url` fuzz target: the `key=value` form was
    /// joined anew, so leading whitespace went and what was left could
    /// read as a URL, and a quoted value's spaces changed.
    #[test]
    fn a_key_value_string_is_left_as_it_was_but_for_the_pairs_taken() {
        for (given, left) in [
            (
                "host=db sslmode=require dbname=likes",
                "host=db dbname=likes",
            ),
            ("sslmode=require host=db", " host=db"),
            ("sslmode=require sslrootcert=/ca.pem  host=db", "  host=db"),
            (
                " postgres://ana@db/likes?sslmode=disable",
                " postgres://ana@db/likes?sslmode=disable",
            ),
            (
                "application_name='a  b' sslmode=require",
                "application_name='a  b'",
            ),
        ] {
            let (split, _) = split_url(given).unwrap();
            assert_eq!(split, left, "{given:?}");
            assert_eq!(
                split_url(&split).unwrap(),
                (split.clone(), PgTls::default())
            );
        }
    }

    /// A parameter's value is decoded only when the server takes it
    /// (`sslmode`, `sslrootcert`): a `password` that is no UTF-8 once
    /// decoded is left for tokio-postgres (which refuses it without
    /// showing it), and no refusal here shows any other value.
    #[test]
    fn no_value_but_the_ones_taken_is_decoded_or_shown() {
        for url in [
            "postgres://ana@db/likes?password=%FF%FEs3cret&sslmode=require",
            "postgres://ana@db/likes?sslmode=require&password=%C3s3cret",
            "postgres://ana:%FFs3cret@db/likes?sslmode=require",
        ] {
            let (left, tls) = split_url(url).unwrap();
            assert_eq!(tls.mode, SslMode::Require, "{url}");
            assert!(!left.contains("sslmode"), "{url}: {left}");
            assert!(left.contains("s3cret"), "kept for tokio-postgres: {left}");
        }
        // A refusal names the parameter, never a value beside it.
        for url in [
            "postgres://db/likes?password=%FFs3cret&sslrootcert=%FF%FE",
            "postgres://db/likes?password=%FFs3cret&sslmode=%FF",
            "postgres://db/likes?password=s3cret&sslcert=/c.pem",
        ] {
            let err = split_url(url).unwrap_err();
            assert!(!err.contains("s3cret"), "{url}: {err}");
            assert!(!err.contains("%FF"), "{url}: {err}");
        }
        let err = split_url("postgres://db/likes?sslrootcert=%FF%FE").unwrap_err();
        assert!(err.contains("sslrootcert"), "{err}");
    }

    /// Client certificates are refused as such, in both forms, whatever
    /// else the URL says.
    #[test]
    fn client_certificates_are_refused_as_not_supported() {
        for url in [
            "postgres://ana@db/likes?sslmode=verify-full&sslcert=/etc/c.pem&sslkey=/etc/c.key",
            "postgres://ana@db/likes?sslkey=/etc/c.key",
            "postgres://ana@db/likes?sslpassword=x",
            "host=db sslmode=verify-full sslcert=/etc/c.pem",
        ] {
            let err = split_url(url).unwrap_err();
            assert!(
                err.contains("client certificates are not supported"),
                "{url}: {err}"
            );
        }
    }

    /// `sslrootcert=system` is libpq's: the public CAs, and `verify-full`
    /// unless an `sslmode` is given (a weaker one is refused where the TLS
    /// configuration is made).
    #[test]
    fn sslrootcert_system_implies_verify_full() {
        for url in [
            "postgres://ana@db/likes?sslrootcert=system",
            "host=db sslrootcert=system",
        ] {
            let (_, tls) = split_url(url).unwrap();
            assert_eq!(tls.mode, SslMode::VerifyFull, "{url}");
            assert_eq!(tls.ca_file, Some(PathBuf::from(SYSTEM_ROOTS)));
        }
        for (url, mode) in [
            (
                "postgres://db/x?sslrootcert=system&sslmode=require",
                SslMode::Require,
            ),
            (
                "postgres://db/x?sslmode=disable&sslrootcert=system",
                SslMode::Disable,
            ),
            ("postgres://db/x?sslrootcert=./system", SslMode::Disable),
        ] {
            assert_eq!(split_url(url).unwrap().1.mode, mode, "{url}");
        }
    }
}
