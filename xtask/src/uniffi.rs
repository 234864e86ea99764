//! The Kotlin, Swift and Python bindings (`bindings/uniffi`): generating
//! them (`cargo xtask bindings`), their test runners (`kotlin`, `python`,
//! `swift`) and the Kotlin bench.
//!
//! Generation builds `likekit-ffi` and runs the workspace's own
//! `uniffi-bindgen` in library mode, then lays the output out in
//! `bindings/uniffi/generated/` (gitignored):
//!
//! ```text
//! kotlin/com/likekit/likekit.kt       the Kotlin package com.likekit
//! kotlin/com/likekit/*.kt             the hand-written faces (from bindings/uniffi/kotlin)
//! python/likekit.py                   the Python module, with the library beside it
//! swift/Package.swift                 a Swift package: LikeKit (sources) over LikeKitFFI
//! swift/Sources/LikeKit/LikeKit.swift
//! swift/Sources/LikeKit/*.swift       the hand-written Swift (from bindings/uniffi/swift)
//! swift/Sources/LikeKitFFI/           the C header and module map
//! swift/Sources/LikeKitTesting/       the mock server's admin client (from server-mock/clients/swift)
//! swift/XCFrameworkHeaders/           the same, for `xcodebuild -create-xcframework`
//! swift/Tests/LikeKitTests/           the Swift tests (from bindings/uniffi/tests/swift)
//! ```
//!
//! Each runner starts the real `likekit-server` (in-memory database, a
//! random admin key, no write rate limit) on a free loopback port and hands
//! the tests `LIKEKIT_URL` and `LIKEKIT_ADMIN_KEY`; the tests make their own
//! users, posts, tokens and faults through the admin API. The Kotlin and
//! Python runners also start `likekit-tls-front` (an HTTPS front with a
//! throwaway CA, from `likekit-testing`) before their server and pass
//! `LIKEKIT_TLS_URL` and `LIKEKIT_TLS_CA` (the CA's PEM file).

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::doc_names::{self, Language};
use crate::figures::{Figures, parse_metrics};
use crate::proc::{copy, io_error, remove, say, write};
use crate::server::TestServer;
use crate::tally::{self, Tally};
use crate::{Ctx, install, proc};

const FFI_PACKAGE: &str = "likekit-ffi";
const BINDGEN_PACKAGE: &str = "uniffi-bindgen";
/// The cdylib's file name on this machine (`liblikekit_ffi.so` on Linux,
/// `.dylib` on macOS).
fn cdylib() -> String {
    use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
    format!("{DLL_PREFIX}likekit_ffi{DLL_SUFFIX}")
}
const GENERATED: &str = "bindings/uniffi/generated";
const TESTS: &str = "bindings/uniffi/tests";
/// Hand-written Kotlin shipped in the generated package, beside the
/// generated file.
const KOTLIN_FACES: &str = "bindings/uniffi/kotlin";
/// Hand-written Swift shipped in the generated module `LikeKit`.
const SWIFT_FACES: &str = "bindings/uniffi/swift";
/// The admin API's client per language (`<language>/`), shipped beside the
/// bindings for an app's own tests against the mock server.
pub const ADMIN_CLIENTS: &str = "server-mock/clients";

/// Where generation put things.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The folder holding the built library (for `-Djna.library.path`).
    pub lib_dir: PathBuf,
    pub kotlin: PathBuf,
    pub python: PathBuf,
    pub swift: PathBuf,
}

// ---------------------------------------------------------------- generation

/// `cargo xtask bindings [--release]`: builds the library and generates the
/// Kotlin, Swift and Python bindings.
pub fn bindings(ctx: &Ctx, release: bool) -> Result<(), String> {
    let generated = generate(ctx, release)?;
    say(&format!(
        "Kotlin  {}  (compile with kotlinc against JNA and kotlinx-coroutines; see the README)",
        generated.kotlin.display()
    ));
    say(&format!(
        "Python  {}  (import likekit; the library sits beside it)",
        generated.python.display()
    ));
    say(&format!(
        "Swift   {}  (a Swift package; add LikeKitFFI.xcframework for iOS, see the README)",
        generated.swift.display()
    ));
    say(&format!(
        "library {}",
        generated.lib_dir.join(cdylib()).display()
    ));
    Ok(())
}

/// Builds `likekit-ffi` (debug, or release) and generates the three
/// bindings from it. The debug library and uniffi-bindgen come from the
/// workspace build every runner shares ([`crate::build::workspace`]); the
/// release library is built on its own, for packaging.
pub fn generate(ctx: &Ctx, release: bool) -> Result<Generated, String> {
    let mut bindgen;
    if release {
        let mut build = proc::cargo();
        build
            .current_dir(&ctx.root)
            .args(["build", "--release", "--package", FFI_PACKAGE]);
        say(&format!("building the library ({})", proc::display(&build)));
        proc::run(&mut build)?;
        bindgen = proc::cargo();
        bindgen.args(["run", "--quiet", "--package", BINDGEN_PACKAGE, "--"]);
    } else {
        bindgen = Command::new(crate::build::debug_program(ctx, BINDGEN_PACKAGE)?);
    }
    let lib_dir = ctx
        .target_dir
        .join(if release { "release" } else { "debug" });
    let library = lib_dir.join(cdylib());
    if !library.is_file() {
        return Err(format!("the build left no {}", library.display()));
    }

    let out = ctx.root.join(GENERATED);
    let raw = out.join(".raw");
    remove(&raw)?;
    bindgen
        .current_dir(&ctx.root)
        .args(["generate", "--library"])
        .arg(&library)
        .args(["-l", "kotlin", "-l", "python", "-l", "swift"])
        .args(["--no-format", "-o"])
        .arg(&raw);
    say(&format!(
        "generating bindings ({})",
        proc::display(&bindgen)
    ));
    proc::run(&mut bindgen)?;

    let generated = Generated {
        lib_dir,
        kotlin: out.join("kotlin"),
        python: out.join("python"),
        swift: out.join("swift"),
    };
    // Kotlin: the package folder as generated. Python: the module with the
    // library beside it, where it looks first. Swift: a package (its
    // .build cache is kept between runs).
    let swift = &generated.swift;
    remove(&generated.kotlin)?;
    remove(&generated.python)?;
    for stale in ["Package.swift", "Sources", "Tests", "XCFrameworkHeaders"] {
        remove(&swift.join(stale))?;
    }
    let kotlin_file = "com/likekit/likekit.kt";
    copy_docs(
        &raw.join(kotlin_file),
        &generated.kotlin.join(kotlin_file),
        Language::Kotlin,
    )?;
    // The hand-written Kotlin faces (Flow, executors) go beside it, in its
    // package.
    copy_files_ending(
        &ctx.root.join(KOTLIN_FACES),
        "kt",
        &generated.kotlin.join("com/likekit"),
    )?;
    let module = fs::read_to_string(raw.join("likekit.py"))
        .map_err(|e| io_error("read", &raw.join("likekit.py"), e))?;
    let module = typed_like_error(&doc_names::for_language(
        &plain_links(&module),
        Language::Python,
    ))?;
    let module = typed_signatures(&module)?;
    let module = with_methods(&module, "LikeClient", PYTHON_CLIENT_METHODS)?;
    let module = with_methods(&module, "LikeSubscription", PYTHON_SUBSCRIPTION_METHODS)?;
    write(
        &generated.python.join("likekit.py"),
        &format!("{module}{PYTHON_ADDITIONS}"),
    )?;
    copy(&library, &generated.python.join(cdylib()))?;
    write(&swift.join("Package.swift"), PACKAGE_SWIFT)?;
    copy_docs(
        &raw.join("LikeKit.swift"),
        &swift.join("Sources/LikeKit/LikeKit.swift"),
        Language::Swift,
    )?;
    copy(
        &raw.join("LikeKitFFI.h"),
        &swift.join("Sources/LikeKitFFI/LikeKitFFI.h"),
    )?;
    write(
        &swift.join("Sources/LikeKitFFI/module.modulemap"),
        MODULE_MAP,
    )?;
    // The headers `xcodebuild -create-xcframework` packs with the static
    // library for iOS (the library is linked from the framework itself).
    copy(
        &raw.join("LikeKitFFI.h"),
        &swift.join("XCFrameworkHeaders/LikeKitFFI.h"),
    )?;
    write(
        &swift.join("XCFrameworkHeaders/module.modulemap"),
        XCFRAMEWORK_MODULE_MAP,
    )?;
    // The hand-written Swift (the error's properties) beside the generated
    // file, in its module.
    copy_files_ending(
        &ctx.root.join(SWIFT_FACES),
        "swift",
        &swift.join("Sources/LikeKit"),
    )?;
    copy_files_ending(
        &ctx.root.join(ADMIN_CLIENTS).join("swift"),
        "swift",
        &swift.join("Sources/LikeKitTesting"),
    )?;
    copy_files_ending(
        &ctx.root.join(TESTS).join("swift"),
        "swift",
        &swift.join("Tests/LikeKitTests"),
    )?;
    remove(&raw)?;
    say(&format!(
        "generated Kotlin, Python and Swift into {}",
        out.display()
    ));
    Ok(generated)
}

/// The generated Python defines `LikeError` twice: a bare `Exception`
/// first, then a namespace whose variants subclass it and are hung on it.
/// Type checkers read only the first, so `error.code` and
/// `except LikeError.NotFound` were errors to mypy. The first definition
/// gets the fields every variant has, and each variant as a class
/// attribute, for type checkers (at run time nothing changes).
fn typed_like_error(module: &str) -> Result<String, String> {
    let bare = "class LikeError(Exception):";
    let start = module
        .find(bare)
        .ok_or("the generated Python has no `class LikeError(Exception):`")?;
    let body_end = module[start..]
        .find("\n    pass\n")
        .map(|at| start + at)
        .ok_or("the generated `LikeError` base has no `pass` body")?;
    let namespace = module
        .find("class LikeError:  # type: ignore")
        .ok_or("the generated Python has no `LikeError` namespace")?;
    let variants: Vec<&str> = module[namespace..]
        .lines()
        .skip(1)
        .take_while(|line| !line.starts_with("LikeError = "))
        .filter_map(|line| line.strip_prefix("    class "))
        .filter_map(|rest| rest.strip_suffix("(_UniffiTempLikeError):"))
        .collect();
    if variants.is_empty() {
        return Err("the generated `LikeError` namespace has no variants".into());
    }
    let mut typed = String::from(
        "\n    # For type checkers (added by `cargo xtask bindings`): the fields every\n    \
         # variant has, and the variants.\n    \
         reason: str\n    code: str\n    is_transient: bool\n    \
         status: typing.Optional[int]\n    retry_after_ms: typing.Optional[int]\n",
    );
    for variant in variants {
        typed.push_str(&format!(
            "    {variant}: typing.ClassVar[typing.Type[\"LikeError\"]]\n"
        ));
    }
    Ok(format!(
        "{}{typed}{}",
        &module[..body_end],
        &module[body_end + "\n    pass".len()..]
    ))
}

/// The generated Python annotates an argument with a default as
/// `typing.Union[object, T] = _DEFAULT`, which any value matches, so an
/// app's type checker took a `str` for a token provider or for the
/// options. Each becomes `T` (`_DEFAULT` is typed `typing.Any`, so the
/// default still checks). `uniffi_set_event_loop` takes what
/// `asyncio.get_running_loop()` returns and `None` (which takes the loop
/// back), not only an `asyncio.BaseEventLoop`. And a constructor without
/// arguments (`ScriptedServer()`, `ScriptedFailure.NETWORK()`) says it
/// returns `None`, without which `mypy --strict` calls it untyped.
fn typed_signatures(module: &str) -> Result<String, String> {
    let union = "typing.Union[object, ";
    let mut typed = String::with_capacity(module.len());
    let mut rest = module;
    let mut found = 0;
    while let Some(at) = rest.find(union) {
        typed.push_str(&rest[..at]);
        let inner = &rest[at + union.len()..];
        let mut depth = 0usize;
        let close = inner
            .char_indices()
            .find_map(|(i, c)| match c {
                '[' => {
                    depth += 1;
                    None
                }
                ']' if depth == 0 => Some(i),
                ']' => {
                    depth -= 1;
                    None
                }
                _ => None,
            })
            .ok_or("the generated Python has a `typing.Union[object, …` that is not closed")?;
        typed.push_str(&inner[..close]);
        rest = &inner[close + 1..];
        found += 1;
    }
    typed.push_str(rest);
    if found == 0 {
        return Err(
            "the generated Python has no `typing.Union[object, …]` default: \
                    if uniffi now writes the real type, drop this step"
                .into(),
        );
    }
    let loop_setter = "def uniffi_set_event_loop(eventloop: asyncio.BaseEventLoop):";
    if !typed.contains(loop_setter) {
        return Err(format!("the generated Python has no `{loop_setter}`"));
    }
    Ok(typed
        .replace(
            loop_setter,
            "def uniffi_set_event_loop(eventloop: typing.Optional[asyncio.AbstractEventLoop]) -> None:",
        )
        .replace("def __init__(self, ):", "def __init__(self, ) -> None:"))
}

/// `methods` (a class body's lines, indented) added to the body of the
/// generated Python's `class`, right after its docstring, where type
/// checkers see them (the additions appended to the module set attributes
/// they do not see): the context managers of `LikeClient` and
/// `LikeSubscription`. (After the docstring, not at the body's end: a
/// docstring's lines may start in the first column, as a module's next
/// statement does.)
fn with_methods(module: &str, class: &str, methods: &str) -> Result<String, String> {
    let head = format!("\nclass {class}(");
    let start = if module.starts_with(&head[1..]) {
        0
    } else {
        module
            .find(&head)
            .ok_or_else(|| format!("the generated Python has no `class {class}(…)`"))?
            + 1
    };
    let missing = || format!("the generated Python's `class {class}` ends early");
    let mut at = start + module[start..].find('\n').ok_or_else(missing)? + 1;
    if module[at..].trim_start_matches(' ').starts_with("\"\"\"") {
        let open = at + module[at..].find("\"\"\"").ok_or_else(missing)? + 3;
        let close = open + module[open..].find("\"\"\"").ok_or_else(missing)? + 3;
        at = close + module[close..].find('\n').ok_or_else(missing)? + 1;
    }
    Ok(format!(
        "{}{}\n\n{}",
        &module[..at],
        methods.trim_end(),
        &module[at..]
    ))
}

/// Copies the generated file `from` to `to` with [`plain_links`], and the
/// names in its docs spelled as `language` spells them
/// ([`doc_names::for_language`]).
fn copy_docs(from: &Path, to: &Path, language: Language) -> Result<(), String> {
    let text = fs::read_to_string(from).map_err(|e| io_error("read", from, e))?;
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error("create", parent, e))?;
    }
    write(to, &doc_names::for_language(&plain_links(&text), language))
}

/// The core's doc comments carry rustdoc's links, which the generated
/// Kotlin, Swift and Python copy as they are: `[`LikeError`]` and
/// `[`run`](Self::run)` read as noise there (and KDoc takes `[…]` for a
/// link of its own). Each becomes the code span it shows, `` `run` ``; a
/// link without backticks to a Rust path, `[a post](Self::post)`, its
/// text. Only those two shapes are touched, which the generated code itself
/// does not have.
fn plain_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        // The link's text: up to the `]` on the same line.
        let Some(close) = after.find(']').filter(|&c| !after[..c].contains('\n')) else {
            out.push('[');
            rest = after;
            continue;
        };
        let label = &after[..close];
        let tail = &after[close + 1..];
        let target_end = tail
            .strip_prefix('(')
            .and_then(|t| t.find(')').filter(|&e| !t[..e].contains(['\n', ' '])))
            .map(|e| e + 2);
        let is_code = label.len() >= 2 && label.starts_with('`') && label.ends_with('`');
        match (is_code, target_end) {
            (true, Some(end)) => {
                out.push_str(label);
                rest = &tail[end..];
            }
            (true, None) => {
                out.push_str(label);
                rest = tail;
            }
            (false, Some(end))
                if !label.is_empty()
                    && !label.contains(['[', '(', ')'])
                    && tail[1..end - 1].contains("::")
                    && !tail.starts_with("(::") =>
            {
                out.push_str(label);
                rest = &tail[end..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Copies the files of `from` whose extension is `extension` into `to`,
/// under the same names.
fn copy_files_ending(from: &Path, extension: &str, to: &Path) -> Result<(), String> {
    for source in files_ending(from, extension)? {
        copy(&source, &to.join(source.file_name().unwrap_or_default()))?;
    }
    Ok(())
}

/// The files in `dir` whose extension is `extension`, sorted.
fn files_ending(dir: &Path, extension: &str) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| io_error("read", dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    Ok(files)
}

/// The module map of the C module the generated Swift imports. For Linux
/// and macOS builds against the plain library it links `likekit_ffi`; an
/// iOS app uses `LikeKitFFI.xcframework` instead, which carries its own.
const MODULE_MAP: &str = include_str!("../templates/module.modulemap");

/// The module map inside `LikeKitFFI.xcframework`.
const XCFRAMEWORK_MODULE_MAP: &str = include_str!("../templates/xcframework.modulemap");

/// The Swift package laid out around the generated sources.
const PACKAGE_SWIFT: &str = include_str!("../templates/Package.swift");

/// Appended to the generated Python module: stops LikeKit's runtime when
/// the interpreter exits (`stop_runtime` in the binding), gives the
/// records a `repr()` that shows their fields and a same-type `==`,
/// `LikeError` equality by variant and fields, refuses a bool argument
/// that is not a bool, reports what an `AsyncTokenProvider` raises (or a
/// missing or closed event loop) as a synchronous provider's error, and
/// gives `LikeClient` a `with` that says to use `async with`.
const PYTHON_ADDITIONS: &str = include_str!("../templates/likekit-additions.py");

/// `LikeClient`'s `async with`, written into its class ([`with_methods`]).
const PYTHON_CLIENT_METHODS: &str = include_str!("../templates/likekit-client-methods.py");

/// `LikeSubscription`'s `with`, written into its class ([`with_methods`]).
const PYTHON_SUBSCRIPTION_METHODS: &str =
    include_str!("../templates/likekit-subscription-methods.py");

// ---------------------------------------------------------------- the server

/// Starts the reference server for one runner (no write rate limit: the
/// tests tap fast on purpose; its log goes to `target/uniffi-tests`) and
/// passes it to the test program `cmd`.
fn start_server(ctx: &Ctx, name: &str, cmd: &mut Command) -> Result<TestServer, String> {
    let logs = ctx.target_dir.join("uniffi-tests");
    let no_limit = ["--write-rate-limit".as_ref(), "0".as_ref()];
    let server = TestServer::start(ctx, name, &logs, &no_limit)?;
    server.env(cmd);
    cmd.env("LIKEKIT_CONFORMANCE", ctx.conformance_scenarios());
    // Tests make observers throw on purpose; one line per panic is enough.
    cmd.env("RUST_BACKTRACE", "0");
    one_root_certificate(&logs, cmd);
    Ok(server)
}

/// The memory tests build 10,000 clients. Each client's HTTP stack loads
/// and parses the system's root certificates (about 20 ms in a debug
/// build), which would make that loop measure PEM parsing for minutes. The
/// programs talk plain HTTP on loopback, so they get a root store of one
/// certificate (`SSL_CERT_FILE`, and `SSL_CERT_DIR` pointing at an empty
/// folder under `out`); nothing else about the client changes.
fn one_root_certificate(out: &Path, cmd: &mut Command) {
    let Ok(pems) = files_ending(Path::new("/etc/ssl/certs"), "pem") else {
        say("no /etc/ssl/certs: the 10,000-client loops load the full root store and run slowly");
        return;
    };
    let empty = out.join("no-more-certs");
    if let (Some(first), Ok(())) = (
        pems.iter().find(|p| p.is_file()),
        fs::create_dir_all(&empty),
    ) {
        cmd.env("SSL_CERT_FILE", first).env("SSL_CERT_DIR", &empty);
    }
}

// ---------------------------------------------------------------- Kotlin

/// Compiles `sources` into `jar` unless the stamp beside it says they, the
/// compiler and the class path are unchanged — the class path's jars
/// themselves too (their size and time), so that programs are compiled
/// again against bindings whose API changed.
fn kotlinc_cached(
    kotlin: &install::Kotlin,
    sources: &[PathBuf],
    classpath: &str,
    jar: &Path,
) -> Result<(), String> {
    let mut hasher = DefaultHasher::new();
    (install::KOTLIN_COMPILER.version, classpath).hash(&mut hasher);
    for entry in classpath.split(':') {
        let meta = fs::metadata(entry).map_err(|e| io_error("read", Path::new(entry), e))?;
        (meta.len(), meta.modified().ok()).hash(&mut hasher);
    }
    for source in sources {
        fs::read(source)
            .map_err(|e| io_error("read", source, e))?
            .hash(&mut hasher);
    }
    let wanted = format!("{:016x}", hasher.finish());
    let stamp = jar.with_extension("stamp");
    if jar.is_file() && fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        say(&format!("{} is up to date", jar.display()));
        return Ok(());
    }
    let mut cmd = Command::new(&kotlin.kotlinc);
    cmd.args(sources)
        .args(["-cp", classpath, "-nowarn", "-d"])
        .arg(jar);
    say(&format!(
        "compiling {} ({} file(s)) with kotlinc",
        jar.display(),
        sources.len()
    ));
    remove(&stamp)?;
    proc::run(&mut cmd)?;
    write(&stamp, &wanted)
}

/// A Kotlin program (`main_class` of the test and bench sources in
/// `bindings/uniffi/tests/kotlin`) on the JVM, against freshly generated
/// bindings and the reference server. The bindings and the programs are
/// two jars under `target/uniffi-kotlin`, rebuilt only when their sources
/// change.
fn kotlin_program(
    ctx: &Ctx,
    release: bool,
    main_class: &str,
) -> Result<(Command, TestServer), String> {
    let generated = generate(ctx, release)?;
    let kotlin = install::kotlinc(ctx)?;
    let jna = install::jna_jar()?;
    let out = ctx.target_dir.join("uniffi-kotlin");
    let deps = format!("{}:{}", jna.display(), kotlin.coroutines_jar.display());
    let bindings_jar = out.join("likekit.jar");
    let generated_kt = files_ending(&generated.kotlin.join("com/likekit"), "kt")?;
    kotlinc_cached(&kotlin, &generated_kt, &deps, &bindings_jar)?;
    // The admin client stands alone: an app's tests use it without the
    // bindings.
    let admin_jar = out.join("likekit-admin.jar");
    let admin_sources = files_ending(&ctx.root.join(ADMIN_CLIENTS).join("kotlin"), "kt")?;
    kotlinc_cached(&kotlin, &admin_sources, &deps, &admin_jar)?;
    let sources = files_ending(&ctx.root.join(TESTS).join("kotlin"), "kt")?;
    let tests_jar = out.join("likekit-tests.jar");
    let with_bindings = format!("{deps}:{}:{}", bindings_jar.display(), admin_jar.display());
    kotlinc_cached(&kotlin, &sources, &with_bindings, &tests_jar)?;

    let classpath = format!(
        "{with_bindings}:{}:{}",
        kotlin.stdlib_jar.display(),
        tests_jar.display()
    );
    let mut cmd = Command::new("java");
    cmd.current_dir(&ctx.root)
        .arg(format!(
            "-Djna.library.path={}",
            generated.lib_dir.display()
        ))
        .args(["-cp", &classpath, main_class]);
    let name = if release { "kotlin-bench" } else { "kotlin" };
    let server = start_server(ctx, name, &mut cmd)?;
    Ok((cmd, server))
}

/// The `kotlin` runner. The test program cannot write JUnit XML, so it
/// prints `PASS name` / `FAIL name: why` per test and a closing
/// `kotlin: N passed, N failed`, which must agree with those lines.
pub fn run_kotlin(ctx: &Ctx) -> Result<Tally, String> {
    let (mut cmd, server) = kotlin_program(ctx, false, "com.likekit.tests.LikeKitTestKt")?;
    let _front = TlsFront::start(ctx, "kotlin", &server, &mut cmd)?;
    let shown = proc::display(&cmd);
    say(&shown);
    let mut log = KotlinLog::default();
    let status = proc::stream(&cmd, |line| log.line(line))?;
    Ok(log.tally().settle(status.success(), &shown))
}

/// The Kotlin test program's lines, counted.
#[derive(Debug, Default)]
pub struct KotlinLog {
    tally: Tally,
    summary: Option<String>,
}

impl KotlinLog {
    fn line(&mut self, line: &str) {
        if line.starts_with("PASS ") {
            self.tally.passed += 1;
        } else if let Some(what) = line.strip_prefix("FAIL ") {
            self.tally.failed += 1;
            self.tally.notes.push(what.to_owned());
        } else if let Some(summary) = line.strip_prefix("kotlin: ") {
            self.summary = Some(summary.trim().to_owned());
        }
    }

    fn tally(mut self) -> Tally {
        let t = &mut self.tally;
        let counted = format!("{} passed, {} failed", t.passed, t.failed);
        if self.summary.as_deref() != Some(counted.as_str()) || t.passed + t.failed == 0 {
            t.failed += 1;
            t.notes.push(format!(
                "the program's summary ({}) does not match its {counted}",
                self.summary.as_deref().unwrap_or("missing")
            ));
        }
        self.tally
    }
}

/// The `kotlin` bench suite: tap to observer callback through the release
/// library.
pub fn bench_kotlin(ctx: &Ctx, figures: &mut Figures) -> Result<(), String> {
    let (cmd, _server) = kotlin_program(ctx, true, "com.likekit.tests.LikeKitBenchKt")?;
    let shown = proc::display(&cmd);
    say(&shown);
    let status = proc::stream(&cmd, |line| figures.extend(parse_metrics(line)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

// ---------------------------------------------------------------- Python

/// The `python` runner: pytest over `bindings/uniffi/tests/python`, its
/// JUnit report counted.
pub fn run_python(ctx: &Ctx) -> Result<Tally, String> {
    let python = install::pip(ctx, &[install::PYTEST, install::MYPY])?;
    let generated = generate(ctx, false)?;
    let report = ctx.target_dir.join("uniffi-tests").join("pytest.xml");
    let mut cmd = Command::new(python);
    cmd.current_dir(&ctx.root)
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-v"])
        .arg(format!("--junitxml={}", report.display()))
        .arg(ctx.root.join(TESTS).join("python"))
        .env(
            "PYTHONPATH",
            std::env::join_paths([
                generated.python.clone(),
                ctx.root.join(ADMIN_CLIENTS).join("python"),
            ])
            .map_err(|e| format!("PYTHONPATH: {e}"))?,
        )
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let server = start_server(ctx, "python", &mut cmd)?;
    let _front = TlsFront::start(ctx, "python", &server, &mut cmd)?;
    tally::run_junit(&cmd, &report)
}

/// The program `likekit-tls-front` (from `likekit-testing`), an HTTPS
/// front with a throwaway CA before a runner's server; stopped when
/// dropped.
#[derive(Debug)]
struct TlsFront {
    child: std::process::Child,
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TlsFront {
    const BIN: &str = "likekit-tls-front";

    /// Builds and starts the front before `server` and passes it to `cmd`:
    /// `LIKEKIT_TLS_URL` (`https://127.0.0.1:<port>`) and `LIKEKIT_TLS_CA`
    /// (a file with the CA's PEM, to trust as an extra root). Its log goes
    /// to `target/uniffi-tests/<name>-tls-front.log`.
    fn start(
        ctx: &Ctx,
        name: &str,
        server: &TestServer,
        cmd: &mut Command,
    ) -> Result<Self, String> {
        let program = crate::build::debug_program(ctx, Self::BIN)?;
        let logs = ctx.target_dir.join("uniffi-tests");
        proc::mkdir(&logs)?;
        let ca_file = logs.join(format!("{name}-tls-ca.pem"));
        remove(&ca_file)?;
        let log_path = logs.join(format!("{name}-tls-front.log"));
        let log = fs::File::create(&log_path).map_err(|e| io_error("create", &log_path, e))?;
        let mut front = Command::new(program);
        front
            .arg("--upstream")
            .arg(&server.url)
            .arg("--ca-file")
            .arg(&ca_file)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(log);
        let child = front.spawn().map_err(|e| proc::spawn_error(&front, &e))?;
        let mut front = TlsFront { child };
        let what = format!("the {name} TLS front");
        let url =
            crate::server::wait_for_url(&mut front.child, &what, &log_path.display().to_string())?;
        say(&format!("{what} at {url} -> {}", server.url));
        cmd.env("LIKEKIT_TLS_URL", url)
            .env("LIKEKIT_TLS_CA", &ca_file);
        Ok(front)
    }
}

// ---------------------------------------------------------------- Swift

/// The `swift` runner: generates the Swift package every run; builds it and
/// runs its tests only where a Swift toolchain is installed.
pub fn run_swift(ctx: &Ctx) -> Result<Tally, String> {
    let generated = generate(ctx, false)?;
    let Some(swift) = proc::which("swift") else {
        let note = format!(
            "Swift skipped: no Swift toolchain on this machine (`swift` is not on PATH); the package was generated at {} but not compiled or tested",
            generated.swift.display()
        );
        say(&note);
        return Ok(Tally {
            skipped: 1,
            notes: vec![note],
            ..Tally::default()
        });
    };
    let report = ctx.target_dir.join("uniffi-tests").join("swift.xml");
    let mut cmd = Command::new(swift);
    cmd.current_dir(&generated.swift)
        .arg("test")
        .arg("--xunit-output")
        .arg(&report)
        .env("LIKEKIT_LIB_DIR", &generated.lib_dir)
        .env("LD_LIBRARY_PATH", &generated.lib_dir);
    let _server = start_server(ctx, "swift", &mut cmd)?;
    tally::run_junit(&cmd, &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_go_after_their_class_docstring() -> Result<(), String> {
        let module = "import typing\n\nclass A(P):\n    \"\"\"Doc.\n\nA line in the first column.\"\"\"\n\n    def f(self):\n        pass\n\n\nclass B:\n    pass\n";
        let out = with_methods(module, "A", "\n    def g(self) -> None:\n        pass\n")?;
        assert_eq!(
            out,
            "import typing\n\nclass A(P):\n    \"\"\"Doc.\n\nA line in the first column.\"\"\"\n\n    def g(self) -> None:\n        pass\n\n\n    def f(self):\n        pass\n\n\nclass B:\n    pass\n"
        );
        let bare = with_methods("class A(P):\n    x = 1\n", "A", "    y = 2\n")?;
        assert_eq!(bare, "class A(P):\n    y = 2\n\n    x = 1\n");
        assert!(with_methods(module, "C", "").is_err());
        Ok(())
    }

    #[test]
    fn defaults_are_typed_as_what_they_default() -> Result<(), String> {
        let module = "def uniffi_set_event_loop(eventloop: asyncio.BaseEventLoop):\n\
                      def f(a: str,b: typing.Union[object, typing.Optional[T]] = _DEFAULT,\
                      c: typing.Union[object, O] = _DEFAULT):\n    def __init__(self, ):\n";
        assert_eq!(
            typed_signatures(module)?,
            "def uniffi_set_event_loop(eventloop: typing.Optional[asyncio.AbstractEventLoop]) -> None:\n\
             def f(a: str,b: typing.Optional[T] = _DEFAULT,c: O = _DEFAULT):\n    \
             def __init__(self, ) -> None:\n"
        );
        assert!(typed_signatures("def f(a: str):\n").is_err());
        assert!(typed_signatures("def f(b: typing.Union[object, T = _DEFAULT):\n").is_err());
        Ok(())
    }

    #[test]
    fn rustdoc_links_become_what_they_show() {
        assert_eq!(
            plain_links("calls waiting for a [`CallbackDispatcher`]: call [`run`](Self::run) once"),
            "calls waiting for a `CallbackDispatcher`: call `run` once"
        );
        assert_eq!(
            plain_links("see [the journal](LikeClientBuilder::journal)."),
            "see the journal."
        );
        // Code and text that are not rustdoc links stay as they are.
        for kept in [
            "val xs = listOf(1)[0]",
            "posts[i] = views[post_id]",
            "a list [1, 2] (two)",
            "[`unclosed",
            "[link text](a target with spaces)",
            "handlers[i](x)",
            "xs[i](::f)",
            "/// [LikeError] in KDoc",
        ] {
            assert_eq!(plain_links(kept), kept);
        }
    }

    #[test]
    fn kotlin_log() {
        let count = |lines: &[&str]| {
            let mut log = KotlinLog::default();
            lines.iter().for_each(|l| log.line(l));
            log.tally()
        };
        let tally = count(&[
            "PASS optimistic tap (1500 ms)",
            "FAIL rollback: java.lang.AssertionError: retries",
            "  at Foo.kt:1",
            "kotlin: 1 passed, 1 failed",
        ]);
        assert_eq!((tally.passed, tally.failed), (1, 1));
        assert_eq!(tally.notes, ["rollback: java.lang.AssertionError: retries"]);
        let crashed = count(&["PASS a (1 ms)", "PASS b (2 ms)"]);
        assert_eq!((crashed.passed, crashed.failed), (2, 1));
        assert_eq!(count(&["kotlin: 0 passed, 0 failed"]).failed, 1);
    }

    #[test]
    fn the_package_links_the_ffi_module() {
        assert!(MODULE_MAP.contains("link \"likekit_ffi\""));
        assert!(PACKAGE_SWIFT.contains(".binaryTarget(name: \"LikeKitFFI\""));
        assert!(PACKAGE_SWIFT.contains(".systemLibrary(name: \"LikeKitFFI\""));
    }

    #[test]
    fn apple_links_the_static_librarys_frameworks() {
        for framework in ["Security", "CoreFoundation"] {
            assert!(
                PACKAGE_SWIFT.contains(&format!(".linkedFramework(\"{framework}\"")),
                "Package.swift links {framework}"
            );
            assert!(
                XCFRAMEWORK_MODULE_MAP.contains(&format!("link framework \"{framework}\"")),
                "the XCFramework's module map links {framework}"
            );
        }
        assert!(PACKAGE_SWIFT.contains("linkerSettings: linkLibDir + appleFrameworks"));
    }
}
