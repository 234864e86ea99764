//! The binary's log lines, text or JSON, and the request's id and route on
//! every line written while a request is handled.
//!
//! The middleware runs each request inside `in_request`, which keeps the
//! request's id and route (the metrics' `route` label) in a task-local,
//! and inside a `request` span carrying the same two fields, for an
//! embedder's own subscriber. The binary's subscriber leaves that span out
//! ([`is_request_span`]) and [`Lines`] writes the fields from the
//! task-local where the span would have been: a span per request
//! costs a subscriber with `tracing_subscriber`'s registry and fmt layer
//! 2 to 3 µs of CPU (its slot, its fields formatted into a string, its
//! close), about a tenth of a view's over loopback at the default `info`
//! level, while a request almost never logs (figures in the server
//! README, "Request ids"). The lines read as before:
//! `… INFO request{request_id=7f3a… route=like}: target: message` in
//! text, and `"span":{"request_id":"7f3a…","route":"like","name":"request"}`
//! in JSON.

use std::fmt::{self, Write as _};
use std::future::Future;

use axum::http::HeaderValue;
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The header that carries a request's id, in and out.
pub(crate) static REQUEST_ID: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-request-id");

/// The name of the per-request span.
pub(crate) const REQUEST_SPAN: &str = "request";

/// The request a task is handling, as its log lines name it.
#[derive(Debug, Clone)]
struct Scope {
    id: HeaderValue,
    /// The metrics' `route` label (`like`, `batch`, `admin`…).
    route: &'static str,
}

tokio::task_local! {
    static REQUEST: Scope;
}

/// `work` with `id` and `route` (a `route` label of the metrics) as the
/// request of every line it logs.
pub(crate) fn in_request<F: Future>(
    id: HeaderValue,
    route: &'static str,
    work: F,
) -> impl Future<Output = F::Output> {
    REQUEST.scope(Scope { id, route }, work)
}

/// `work`, made here to run as a task of its own, with the request this
/// task is handling (if any) as the request of every line it logs, as
/// if it ran in the request's own task: a spawned task starts with no
/// task-local and outside every span, so its lines would name no request.
/// For work that serves one request only (a batch serving many names
/// none).
pub(crate) fn in_current_request<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let scope = REQUEST.try_with(Scope::clone).ok();
    // The `request` span too, for an embedder's own subscriber (the
    // binary's never makes it: this is then a disabled span's no-op).
    let work = tracing::Instrument::in_current_span(work);
    async move {
        match scope {
            Some(scope) => REQUEST.scope(scope, work).await,
            None => work.await,
        }
    }
}

/// The id of the request being handled on this task, if any.
pub fn current_request_id() -> Option<String> {
    current_request().map(|(id, _)| id)
}

/// The id and route of the request being handled on this task, if any.
fn current_request() -> Option<(String, &'static str)> {
    REQUEST
        .try_with(|scope| {
            let id = scope.id.to_str().unwrap_or_default().to_owned();
            (id, scope.route)
        })
        .ok()
}

/// Whether `metadata` is the middleware's per-request span, which the
/// binary's subscriber leaves out (a filter that says no to it makes the
/// span free: it is never created).
pub fn is_request_span(metadata: &Metadata<'_>) -> bool {
    metadata.is_span()
        && metadata.name() == REQUEST_SPAN
        && metadata.target().starts_with("likekit_server")
}

/// The binary's log lines: one line of text, or one JSON object, per event.
#[derive(Debug, Clone, Copy)]
pub struct Lines {
    /// JSON objects rather than text.
    pub json: bool,
}

impl<S, N> FormatEvent<S, N> for Lines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let request = current_request();
        if self.json {
            return json_line(ctx, writer, event, request);
        }
        let ansi = writer.has_ansi_escapes();
        SystemTime.format_time(&mut writer)?;
        let level = *event.metadata().level();
        if ansi {
            write!(writer, " {}{level:>5}\x1b[0m ", level_color(level))?;
        } else {
            write!(writer, " {level:>5} ")?;
        }
        if let Some((id, route)) = &request {
            // A client's id is any visible ASCII: one with characters a
            // reader of the line would take for its syntax (`}`, `=`, `:`,
            // quotes) is quoted, so that it cannot pass for fields.
            let plain = id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'));
            if plain {
                write!(writer, "{REQUEST_SPAN}{{request_id={id} route={route}}}: ")?;
            } else {
                write!(
                    writer,
                    "{REQUEST_SPAN}{{request_id={id:?} route={route}}}: "
                )?;
            }
        }
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                write!(writer, "{}", span.name())?;
                let extensions = span.extensions();
                if let Some(fields) = extensions
                    .get::<FormattedFields<N>>()
                    .filter(|f| !f.is_empty())
                {
                    write!(writer, "{{{fields}}}")?;
                }
                writer.write_str(": ")?;
            }
        }
        write!(writer, "{}: ", event.metadata().target())?;
        ctx.format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// The ANSI color of a level, as the text format of `tracing_subscriber`
/// colors it.
fn level_color(level: Level) -> &'static str {
    match level {
        Level::ERROR => "\x1b[31m",
        Level::WARN => "\x1b[33m",
        Level::INFO => "\x1b[32m",
        Level::DEBUG => "\x1b[34m",
        Level::TRACE => "\x1b[35m",
    }
}

/// One JSON object: `timestamp`, `level`, `fields`, `target`, and `span`
/// (the request's, or the innermost span of another kind).
fn json_line<S, N>(
    ctx: &FmtContext<'_, S, N>,
    mut writer: Writer<'_>,
    event: &Event<'_>,
    request: Option<(String, &'static str)>,
) -> fmt::Result
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    let mut timestamp = String::new();
    SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
    let mut fields = JsonFields(Map::new());
    event.record(&mut fields);
    // The keys in the order `tracing_subscriber`'s JSON lines have them.
    write!(
        writer,
        "{{\"timestamp\":{},\"level\":{},\"fields\":{},\"target\":{}",
        Value::from(timestamp),
        Value::from(event.metadata().level().as_str()),
        Value::Object(fields.0),
        Value::from(event.metadata().target()),
    )?;
    let span = match request {
        Some((id, route)) => {
            let mut span = Map::new();
            span.insert("request_id".into(), id.into());
            span.insert("route".into(), route.into());
            span.insert("name".into(), REQUEST_SPAN.into());
            Some(span)
        }
        None => ctx.lookup_current().map(|current| {
            let mut span = Map::new();
            let extensions = current.extensions();
            if let Some(formatted) = extensions.get::<FormattedFields<N>>() {
                // The fields as JSON when the subscriber formats them so
                // (`JsonFields`), else as the text they are.
                match serde_json::from_str::<Map<String, Value>>(&formatted.fields) {
                    Ok(object) => span.extend(object),
                    Err(_) if !formatted.fields.is_empty() => {
                        span.insert("fields".into(), formatted.fields.clone().into());
                    }
                    Err(_) => {}
                }
            }
            span.insert("name".into(), current.name().into());
            span
        }),
    };
    if let Some(span) = span {
        write!(writer, ",\"span\":{}", Value::Object(span))?;
    }
    writeln!(writer, "}}")
}

/// An event's fields as JSON values.
struct JsonFields(Map<String, Value>);

impl Visit for JsonFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0
            .insert(field.name().into(), crate::error::with_causes(value).into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        self.0.insert(field.name().into(), text.into());
    }
}

/// Makes a panic a log line like any other, in place of the Rust
/// runtime's own message on stderr (which is no log line, and breaks a
/// `--log-format json` stream): `ERROR a thread panicked` with `panic`
/// (its message), `location` (`file:line:column`) and, when
/// `RUST_BACKTRACE` asks for one, `backtrace`; at most one a second
/// (`log_limit`: a bug every request meets panics on every request). A
/// handler's panic is also answered 500 and logged as `a handler
/// panicked` with its request's id (the middleware's catcher).
///
/// The server's program installs it once its log is set up; a program
/// that embeds the server may too. It replaces the process's panic hook.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let panic = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(a panic without a message)");
        let location = info
            .location()
            .map(|at| format!("{}:{}:{}", at.file(), at.line(), at.column()))
            .unwrap_or_default();
        let backtrace = std::backtrace::Backtrace::capture();
        let backtrace = (backtrace.status() == std::backtrace::BacktraceStatus::Captured)
            .then(|| backtrace.to_string());
        crate::log_limit::limited!(
            Level::ERROR,
            panic,
            location = %location,
            backtrace = backtrace.as_deref(),
            "a thread panicked"
        );
    }));
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io;
    use std::sync::{Arc, Mutex, PoisonError};

    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::fmt::format::JsonFields as JsonSpanFields;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// Everything written, shared with the test (a log's `MakeWriter`:
    /// `.with_writer(move || buffer.clone())`).
    #[derive(Clone, Default)]
    pub(crate) struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        pub(crate) fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
                .into_owned()
        }
    }

    /// Logs one line in a request and one outside, as the binary's
    /// subscriber writes them; and says whether the request span was made.
    async fn lines(json: bool) -> (String, bool) {
        lines_for(json, "checkout-7f3a").await
    }

    /// [`lines`], in a request with the id `request_id`.
    async fn lines_for(json: bool, request_id: &'static str) -> (String, bool) {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(move || writer.clone())
            .with_ansi(false);
        let filter = filter_fn(|metadata| !is_request_span(metadata));
        let subscriber: Box<dyn Subscriber + Send + Sync> = if json {
            Box::new(
                tracing_subscriber::registry().with(
                    layer
                        .fmt_fields(JsonSpanFields::new())
                        .event_format(Lines { json })
                        .with_filter(filter),
                ),
            )
        } else {
            Box::new(
                tracing_subscriber::registry()
                    .with(layer.event_format(Lines { json }).with_filter(filter)),
            )
        };
        let _default = tracing::subscriber::set_default(subscriber);
        let id = HeaderValue::from_static(request_id);
        let span_made = in_request(id, "like", async {
            let span = tracing::info_span!(REQUEST_SPAN, request_id, route = "like");
            assert_eq!(current_request_id().as_deref(), Some(request_id));
            tracing::warn!(post = 42, "the store is slow");
            !span.is_disabled()
        })
        .await;
        assert_eq!(current_request_id(), None);
        let other = tracing::info_span!("other", n = 1);
        other.in_scope(|| tracing::info!("outside a request"));
        (buffer.text(), span_made)
    }

    /// A task spawned while a request is handled names the request when
    /// made by `in_current_request`, and none otherwise.
    #[tokio::test]
    async fn a_task_spawned_in_a_request_keeps_its_request() {
        let id = HeaderValue::from_static("spawned-7");
        let (kept, plain) = in_request(id, "unlike", async {
            let kept = tokio::spawn(in_current_request(async { current_request() }));
            let plain = tokio::spawn(async { current_request() });
            (kept.await.ok().flatten(), plain.await.ok().flatten())
        })
        .await;
        assert_eq!(kept, Some(("spawned-7".to_owned(), "unlike")));
        assert_eq!(plain, None);
        let outside = tokio::spawn(in_current_request(async { current_request_id() })).await;
        assert_eq!(outside.ok().flatten(), None);
    }

    // One test for both formats: subscribers set as thread defaults on
    // two threads at once race over the callsites' cached interest (the
    // span could be made on one of them), which one global subscriber, as
    // the binary has, never does.
    #[tokio::test]
    async fn lines_in_a_request_carry_its_id() {
        text_lines_in_a_request_name_it().await;
        json_lines_in_a_request_carry_its_span().await;
    }

    async fn text_lines_in_a_request_name_it() {
        let (text, span_made) = lines(false).await;
        assert!(!span_made, "the request span is left out, never made");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with(
                " WARN request{request_id=checkout-7f3a route=like}: likekit_server::logs::tests: the store is slow post=42"
            ),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].ends_with(" INFO other{n=1}: likekit_server::logs::tests: outside a request"),
            "{}",
            lines[1]
        );
        // A client's id that could pass for the line's own syntax is quoted.
        let (text, _) = lines_for(false, r#"0001}:likekit_server::state:"fake"=1"#).await;
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.contains(
                r#" WARN request{request_id="0001}:likekit_server::state:\"fake\"=1" route=like}: likekit_server::logs::tests: the store is slow"#
            ),
            "{first}"
        );
    }

    async fn json_lines_in_a_request_carry_its_span() {
        let (text, span_made) = lines(true).await;
        assert!(!span_made);
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["level"], "WARN");
        assert_eq!(
            lines[0]["fields"],
            serde_json::json!({"message": "the store is slow", "post": 42})
        );
        assert_eq!(
            lines[0]["span"],
            serde_json::json!({"request_id": "checkout-7f3a", "route": "like", "name": "request"})
        );
        assert_eq!(lines[0]["target"], "likekit_server::logs::tests");
        assert!(
            lines[0]["timestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        assert_eq!(
            lines[1]["span"],
            serde_json::json!({"n": 1, "name": "other"})
        );
        let keys: Vec<&str> = text.lines().next().map_or(Vec::new(), |line| {
            ["timestamp", "level", "fields", "target", "span"]
                .into_iter()
                .filter(|key| line.contains(&format!("\"{key}\":")))
                .collect()
        });
        assert_eq!(keys.len(), 5);
        assert!(text.starts_with("{\"timestamp\":"), "{text}");
    }
}
