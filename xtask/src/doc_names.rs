//! Names in the generated bindings' docs, as each language spells them.
//!
//! The doc comments of `bindings/uniffi/src` are written once, in Rust,
//! and uniffi copies them into the Kotlin, Swift and Python it generates.
//! Their code spans name the API the Rust way (`` `LikeError::Config` ``,
//! `` `LikeClient::with_async_token_provider` ``, `` `post_id` ``), or one
//! binding's way (`` `maxIntentAgeMs` ``), which another language's reader
//! cannot find. [`for_language`] rewrites each such span into the name the
//! reader's language has: `LikeException.Config` and
//! `LikeClient.withAsyncTokenProvider` in Kotlin, `LikeError.config` in
//! Swift, `max_intent_age_ms` in Python.
//!
//! A span is rewritten only when the name it would become is declared in
//! the generated code itself (a word of a line that is not a comment or a
//! docstring), so wire codes (`` `rate_limited` ``), other languages'
//! calls named as such (Kotlin's `` `Dispatchers.Main.asCallbackDispatcher()` ``
//! in a sentence that says "Kotlin") and anything else stay as written.
//! Only comment lines are read (in Kotlin and Swift, code escapes names
//! with backticks too); the generated code is left as it is.

use std::collections::HashSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Kotlin,
    Swift,
    Python,
}

/// `text` (a whole generated file) with the code spans of its comments
/// naming the API as `language` does.
pub fn for_language(text: &str, language: Language) -> String {
    let declared = declared_words(text, language);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let is_doc = match language {
            Language::Kotlin | Language::Swift => {
                let start = line.trim_start();
                start.starts_with('*') || start.starts_with("/*") || start.starts_with("//")
            }
            // Python's code has no backticks: every span is in a docstring
            // or a comment.
            Language::Python => true,
        };
        if is_doc {
            out.push_str(&rewrite_spans(line, |span| {
                rename(span, language, &declared)
            }));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Every word of the code's own lines: what a rename may lead to.
fn declared_words(text: &str, language: Language) -> HashSet<&str> {
    let mut words = HashSet::new();
    let mut in_docstring = false;
    for line in text.lines() {
        let start = line.trim_start();
        let code = match language {
            Language::Kotlin | Language::Swift => {
                !(start.starts_with('*') || start.starts_with("/*") || start.starts_with("//"))
            }
            Language::Python => {
                let quotes = line.matches("\"\"\"").count();
                let was = in_docstring;
                if quotes % 2 == 1 {
                    in_docstring = !in_docstring;
                }
                !was && quotes == 0 && !start.starts_with('#')
            }
        };
        if code {
            words.extend(
                line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty()),
            );
        }
    }
    words
}

/// `line` with each single-backtick code span passed through `rename`
/// (`None`: kept as it is).
fn rewrite_spans(line: &str, rename: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        // ``double`` spans (reStructuredText) and unclosed ones stay.
        if let Some(next) = after.strip_prefix('`') {
            out.push('`');
            rest = next;
            continue;
        }
        let Some(close) = after.find('`') else {
            rest = after;
            continue;
        };
        let span = &after[..close];
        match rename(span) {
            Some(renamed) => out.push_str(&renamed),
            None => out.push_str(span),
        }
        out.push('`');
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The name `span` has in `language`, when it names the API otherwise and
/// the new name is declared.
fn rename(span: &str, language: Language, declared: &HashSet<&str>) -> Option<String> {
    let (path, call) = match span.strip_suffix("()") {
        Some(path) => (path, "()"),
        None => (span, ""),
    };
    let (owner, member) = match path.split_once("::").or_else(|| path.split_once('.')) {
        Some((owner, member)) => (Some(owner), member),
        None => (None, path),
    };
    if !is_word(member) || owner.is_some_and(|o| !is_type(o)) {
        return None;
    }
    let error = owner.is_some_and(|o| o.ends_with("Error"));
    let owner = owner.map(|owner| type_name(owner, language));
    let member = if owner.is_some() && is_type(member) {
        // An enum's variant: uniffi's Swift starts a case in lower case,
        // but an error's (`LikeError.Config`) as declared.
        match language {
            Language::Swift if !error => lower_first(member),
            _ => member.to_owned(),
        }
    } else if owner.is_none() && is_type(member) {
        type_name(member, language)
    } else {
        match language {
            Language::Kotlin | Language::Swift => camel(member),
            Language::Python => snake(member),
        }
    };
    let renamed = match &owner {
        Some(owner) => format!("{owner}.{member}{call}"),
        None => format!("{member}{call}"),
    };
    let known =
        owner.as_deref().is_none_or(|o| declared.contains(o)) && declared.contains(member.as_str());
    (renamed != span && known).then_some(renamed)
}

/// An identifier: ASCII letters, digits and `_`, not starting with a digit.
fn is_word(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A type's name: a word starting in upper case, with a lower-case letter.
fn is_type(s: &str) -> bool {
    is_word(s)
        && s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.contains(|c: char| c.is_ascii_lowercase())
}

/// uniffi's Kotlin calls an error type `…Exception`, not `…Error`.
fn type_name(name: &str, language: Language) -> String {
    match (language, name.strip_suffix("Error")) {
        (Language::Kotlin, Some(stem)) if !stem.is_empty() => format!("{stem}Exception"),
        _ => name.to_owned(),
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// `with_async_token_provider` → `withAsyncTokenProvider`.
fn camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut upper = false;
    for c in s.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `maxIntentAgeMs` → `max_intent_age_ms`.
fn snake(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KOTLIN: &str = "\
/**
 * Fails with `LikeError::Config` or `LikeError::InvalidId`; see
 * `LikeClient::with_async_token_provider`, `LikeClientOptions.callback_dispatcher`,
 * `post_id` and `journal_problem()`. The server's code is `rate_limited`;
 * Kotlin's own `Dispatchers.Main.asCallbackDispatcher()` stays.
 */
sealed class LikeException : Exception() {
    class Config(val message: String) : LikeException()
    class InvalidId(val `postId`: Long) : LikeException()
}
class LikeClientOptions(var `callbackDispatcher`: Any?)
class LikeClient { companion object { fun withAsyncTokenProvider() {} }
    fun journalProblem(): String? = null
    // `post_id` in a code comment is a doc too
    fun f(`post_id`: Long) {}
}
";

    #[test]
    fn kotlin_names() {
        let out = for_language(KOTLIN, Language::Kotlin);
        assert!(
            out.contains(
                " * Fails with `LikeException.Config` or `LikeException.InvalidId`; see\n"
            ),
            "{out}"
        );
        assert!(out.contains(
            " * `LikeClient.withAsyncTokenProvider`, `LikeClientOptions.callbackDispatcher`,\n"
        ));
        assert!(out.contains(
            " * `postId` and `journalProblem()`. The server's code is `rate_limited`;\n"
        ));
        assert!(out.contains("`Dispatchers.Main.asCallbackDispatcher()` stays."));
        // Code is never touched, backticks and all.
        assert!(out.contains("    fun f(`post_id`: Long) {}\n"));
        assert!(out.contains("    // `postId` in a code comment"));
    }

    #[test]
    fn swift_names() {
        let swift = "\
/// `LikeError::InvalidId` and `LikeError::Shutdown`; `LikeClient::with_async_token_provider`;
/// `maxIntentAgeMs` stays, `post_id` becomes `postId`; `MachineConfig::default()` stays;
/// `ScriptedFailure::Timeout`.
enum LikeError: Swift.Error { case InvalidId(postId: Int64) }
public enum ScriptedFailure { case timeout }
public class LikeClient { public static func withAsyncTokenProvider() {}
    public func shutdown() {}
}
";
        let out = for_language(swift, Language::Swift);
        // An error's cases keep their capital (and `shutdown`, a method,
        // is no case of `LikeError`); other enums' cases start lower.
        assert!(out.starts_with(
            "/// `LikeError.InvalidId` and `LikeError::Shutdown`; `LikeClient.withAsyncTokenProvider`;\n\
             /// `maxIntentAgeMs` stays, `postId` becomes `postId`; `MachineConfig::default()` stays;\n\
             /// `ScriptedFailure.timeout`.\n"
        ), "{out}");
    }

    #[test]
    fn python_names() {
        let python = "\
class LikeError(Exception):
    \"\"\"Raised as `LikeError::Config`; taps older than `maxIntentAgeMs`
    are dropped with one `onFailure`. ``maxPosts`` is reST and stays.
    `LikeClient::subscribe` and `with_async_token_provider`.\"\"\"
    class Config(LikeError):
        pass
class LikeClientOptions:
    max_intent_age_ms: int
class LikeObserver:
    def on_failure(self): ...
class LikeClient:
    def subscribe(self): ...
";
        let out = for_language(python, Language::Python);
        assert!(
            out.contains(
                "    \"\"\"Raised as `LikeError.Config`; taps older than `max_intent_age_ms`\n\
             \x20   are dropped with one `on_failure`. ``maxPosts`` is reST and stays.\n\
             \x20   `LikeClient.subscribe` and `with_async_token_provider`.\"\"\"\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn only_names_the_code_declares_are_taken() {
        let declared: HashSet<&str> = ["LikeException", "Config", "postId"].into();
        let k = |span| rename(span, Language::Kotlin, &declared);
        assert_eq!(
            k("LikeError::Config").as_deref(),
            Some("LikeException.Config")
        );
        assert_eq!(k("post_id").as_deref(), Some("postId"));
        assert_eq!(k("bad_post_id"), None);
        assert_eq!(k("LikeError::Journal"), None);
        assert_eq!(k("a b"), None);
        assert_eq!(k(""), None);
        assert_eq!(k("x::y::z"), None);
        assert_eq!(camel("_private_name"), "privateName");
        assert_eq!(snake("retryAfterMs"), "retry_after_ms");
    }
}
