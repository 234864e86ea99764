//! The `typescript` runner: `tsc --noEmit --strict` on a TypeScript file
//! that uses every member of the web package
//! (`bindings/wasm/tests/ts/usage.ts`), type-checked against the built
//! package's declarations as an app imports them (`likekit-wasm` and
//! `likekit-wasm/testing` through the package's `exports`), and tests of
//! the check itself.
//!
//! Its tests, each counted:
//!
//! * the usage file type-checks (declarations included: no
//!   `--skipLibCheck`, so a declaration the build generates wrongly fails
//!   here);
//! * every type, class, function and constant the two declaration files
//!   export is named in the usage file (the file's `{ [K in keyof …] }`
//!   maps already fail the check when a class gains a member it does not
//!   use);
//! * for each of [`MISSPELLINGS`], a copy of the usage file with that one
//!   member misspelled fails `tsc`, and `tsc` names the misspelled member:
//!   a check that passed everything would fail these;
//! * likekit-react's declarations (`bindings/react/src/index.d.ts`) used
//!   as an app uses them (`bindings/react/tests/ts/usage.ts`), against
//!   React's types (`@types/react`) and the built likekit-wasm, and a copy
//!   with one member misspelled that must fail.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::proc::{self, io_error, mkdir, remove, say};
use crate::tally::Tally;
use crate::{Ctx, install, web};

/// The options every check runs with: strict, no output, the package
/// resolved through its `package.json` `exports` as a bundler (Vite,
/// webpack, esbuild) resolves it.
const TSC_OPTIONS: &[&str] = &[
    "--noEmit",
    "--strict",
    "--target",
    "es2022",
    "--lib",
    "es2022,dom,esnext.disposable",
    "--module",
    "esnext",
    "--moduleResolution",
    "bundler",
    "--pretty",
    "false",
];

/// A change to the usage file that must fail the check: `from` (which must
/// occur in the file; its first occurrence is changed) becomes `to`, and
/// `tsc` must report an error that names `to`.
#[derive(Debug, Clone, Copy)]
pub struct Misspelling {
    /// The test's name.
    pub name: &'static str,
    pub from: &'static str,
    pub to: &'static str,
}

/// The misspellings tried: a class's method, a generated shape's field, a
/// field of a generated options type, a static method, and a method of the
/// admin client.
pub const MISSPELLINGS: &[Misspelling] = &[
    Misspelling {
        name: "a misspelled LikeClient method (toggle → toggel) fails tsc",
        from: "client.toggle(",
        to: "client.toggel(",
    },
    Misspelling {
        name: "a misspelled PostView field (lineParts → lineParst) fails tsc",
        from: "view.lineParts",
        to: "view.lineParst",
    },
    Misspelling {
        name: "a misspelled option (maxRetries → maxRetrys) fails tsc",
        from: "maxRetries: 2,",
        to: "maxRetrys: 2,",
    },
    Misspelling {
        name: "a misspelled static (LikeClient.scripted → scriptd) fails tsc",
        from: "LikeClient.scripted(",
        to: "LikeClient.scriptd(",
    },
    Misspelling {
        name: "a misspelled admin method (mintToken → mintTokn) fails tsc",
        from: "admin.mintToken(",
        to: "admin.mintTokn(",
    },
];

/// React's types, for the check of likekit-react's declarations.
pub const REACT_TYPES: install::Package = install::Package {
    name: "@types/react",
    version: "19.3.0",
};

/// The misspelling tried on likekit-react's usage file.
pub const REACT_MISSPELLING: Misspelling = Misspelling {
    name: "a misspelled likekit-react member (reload → reloda) fails tsc",
    from: "reload();",
    to: "reloda();",
};

/// The usage file, `bindings/wasm/tests/ts/usage.ts`.
fn usage_file(ctx: &Ctx) -> PathBuf {
    ctx.root
        .join("bindings")
        .join("wasm")
        .join("tests")
        .join("ts")
        .join("usage.ts")
}

/// Makes `import … from "likekit-wasm"` in `dir` resolve to the built
/// package: `dir/node_modules/likekit-wasm` links to `bindings/wasm/pkg`.
fn link_package(ctx: &Ctx, dir: &Path) -> Result<(), String> {
    let modules = dir.join("node_modules");
    mkdir(&modules)?;
    let link = modules.join(web::NPM_NAME);
    remove(&link)?;
    std::os::unix::fs::symlink(web::package_dir(ctx), &link).map_err(|e| io_error("link", &link, e))
}

/// `tsc` with [`TSC_OPTIONS`] on `file`: whether it passed, and what it
/// printed.
fn tsc(node_modules: &Path, file: &Path, extra: &[&str]) -> Result<(bool, String), String> {
    let mut cmd = Command::new("node");
    cmd.arg(node_modules.join("typescript").join("bin").join("tsc"))
        .args(TSC_OPTIONS)
        .args(extra)
        .arg(file);
    let shown = proc::display(&cmd);
    proc::say(&shown);
    let out = cmd.output().map_err(|e| proc::spawn_error(&cmd, &e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((out.status.success(), text))
}

/// The names a declaration file exports: `export interface X`,
/// `export type X`, `export class X`, `export declare const X`, …
pub fn exported_names(declarations: &str) -> Vec<String> {
    const KINDS: &[&str] = &["interface", "type", "class", "function", "const", "enum"];
    let mut names = Vec::new();
    for line in declarations.lines() {
        let Some(rest) = line.trim_start().strip_prefix("export ") else {
            continue;
        };
        let rest = rest.strip_prefix("declare ").unwrap_or(rest);
        let Some((kind, rest)) = rest.split_once(' ') else {
            continue;
        };
        if !KINDS.contains(&kind) {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        // `export default function __wbg_init`: imported as the default.
        if !name.is_empty() && !name.starts_with("__") && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Whether `word` occurs in `text` as a whole identifier.
pub fn names_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// `text` with its first `from` replaced by `to`, or `None` when `from`
/// does not occur.
pub fn misspell(text: &str, misspelling: &Misspelling) -> Option<String> {
    text.contains(misspelling.from)
        .then(|| text.replacen(misspelling.from, misspelling.to, 1))
}

/// The name `tsc` should report for a misspelling: the identifier `to`
/// introduces (`toggel` in `client.toggel(`).
fn misspelled_name(misspelling: &Misspelling) -> &'static str {
    let to = misspelling.to;
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // The first identifier that differs from the original's.
    let words = |s: &'static str| s.split(|c: char| !ident(c)).filter(|w| !w.is_empty());
    words(to)
        .find(|w| !words(misspelling.from).any(|f| f == *w))
        .unwrap_or(to)
}

/// Records one test's result, printed as it is counted.
fn count(tally: &mut Tally, name: &str, result: Result<(), String>) {
    match result {
        Ok(()) => {
            proc::out(&format!("typescript: PASS {name}\n"));
            tally.passed += 1;
        }
        Err(why) => {
            proc::out(&format!("typescript: FAIL {name}: {why}\n"));
            tally.failed += 1;
            tally.notes.push(format!("{name} failed: {why}"));
        }
    }
}

/// The `typescript` runner (see the module docs).
pub fn run(ctx: &Ctx) -> Result<Tally, String> {
    if proc::which("node").is_none() {
        return Err("`node` (Node.js 20 or newer) is not on PATH".into());
    }
    let node_modules = install::npm(ctx, &[install::TYPESCRIPT, REACT_TYPES])?;
    web::build_package(ctx)?;
    let usage = usage_file(ctx);
    let text = fs::read_to_string(&usage).map_err(|e| io_error("read", &usage, e))?;
    let mut tally = Tally::default();

    let dir = usage.parent().unwrap_or(&usage);
    link_package(ctx, dir)?;
    let (passed, output) = tsc(&node_modules, &usage, &[])?;
    proc::out(&output);
    count(
        &mut tally,
        "usage.ts type-checks with --strict against the built package",
        if passed {
            Ok(())
        } else {
            Err("tsc reported errors (above)".into())
        },
    );

    let mut unused = Vec::new();
    for file in ["likekit_wasm.d.ts", "testing.d.ts"] {
        let path = web::package_dir(ctx).join(file);
        let declarations = fs::read_to_string(&path).map_err(|e| io_error("read", &path, e))?;
        let names = exported_names(&declarations);
        say(&format!("{file} exports {} names", names.len()));
        unused.extend(
            names
                .into_iter()
                .filter(|name| !names_word(&text, name))
                .map(|name| format!("{file}: {name}")),
        );
    }
    count(
        &mut tally,
        "usage.ts names every type, class, function and constant the package exports",
        if unused.is_empty() {
            Ok(())
        } else {
            Err(format!("not named in usage.ts: {}", unused.join(", ")))
        },
    );

    let scratch = ctx.target_dir.join("typescript");
    remove(&scratch)?;
    link_package(ctx, &scratch)?;
    for (i, misspelling) in MISSPELLINGS.iter().enumerate() {
        let result = match misspell(&text, misspelling) {
            None => Err(format!(
                "usage.ts no longer contains `{}`: update MISSPELLINGS in xtask/src/typescript.rs",
                misspelling.from
            )),
            Some(changed) => {
                let copy = scratch.join(format!("misspelled-{i}.ts"));
                proc::write(&copy, &changed)?;
                let (passed, output) = tsc(&node_modules, &copy, &[])?;
                misspelling_caught(passed, &output, misspelling)
            }
        };
        count(&mut tally, misspelling.name, result);
    }
    check_react(ctx, &node_modules, &mut tally)?;
    Ok(tally)
}

/// Whether `tsc` failed on `output` with an error naming `misspelling`'s new word.
fn misspelling_caught(passed: bool, output: &str, misspelling: &Misspelling) -> Result<(), String> {
    let wanted = misspelled_name(misspelling);
    let named = output
        .lines()
        .find(|line| line.contains("error TS") && names_word(line, wanted));
    match (passed, named) {
        (true, _) => Err(format!(
            "tsc passed a copy with `{}` written `{}`",
            misspelling.from, misspelling.to
        )),
        (false, None) => Err(format!(
            "tsc failed but named no error about `{wanted}`:\n{output}"
        )),
        (false, Some(line)) => {
            proc::say(&format!("as it should, tsc said: {}", line.trim()));
            Ok(())
        }
    }
}

/// likekit-react's declarations: `bindings/react/tests/ts/usage.ts`
/// type-checks, and a copy with [`REACT_MISSPELLING`] does not. In
/// `target/typescript-react`, laid out as an app's install: the package
/// copied (`package.json`, `src/index.d.ts`) into `node_modules` beside
/// links to React's types and the built likekit-wasm, and the usage file
/// beside that `node_modules`.
fn check_react(ctx: &Ctx, node_modules: &Path, tally: &mut Tally) -> Result<(), String> {
    let package = crate::react::package_dir(ctx);
    let scratch = ctx.target_dir.join("typescript-react");
    let modules = scratch.join("node_modules");
    let installed = modules.join("likekit-react");
    let links = [
        (web::NPM_NAME, web::package_dir(ctx)),
        (REACT_TYPES.name, node_modules.join(REACT_TYPES.name)),
    ];
    crate::react::link_modules(&modules, &links)?;
    for file in ["package.json", "src/index.d.ts"] {
        let (from, to) = (package.join(file), installed.join(file));
        mkdir(to.parent().unwrap_or(&installed))?;
        fs::copy(&from, &to).map_err(|e| io_error("copy", &from, e))?;
    }
    // Checked from a copy beside them: inside bindings/react, the import
    // of "likekit-react" would be the package's reference to itself.
    let usage = package.join("tests").join("ts").join("usage.ts");
    let text = fs::read_to_string(&usage).map_err(|e| io_error("read", &usage, e))?;
    let copy = scratch.join("usage.ts");
    proc::write(&copy, &text)?;
    say(&format!(
        "checking {} as {}",
        usage.display(),
        copy.display()
    ));
    let (passed, output) = tsc(node_modules, &copy, &[])?;
    proc::out(&output);
    count(
        tally,
        "likekit-react's usage.ts type-checks with --strict against React's types and the built package",
        if passed {
            Ok(())
        } else {
            Err("tsc reported errors (above)".into())
        },
    );

    let result = match misspell(&text, &REACT_MISSPELLING) {
        None => Err(format!(
            "bindings/react/tests/ts/usage.ts no longer contains `{}`",
            REACT_MISSPELLING.from
        )),
        Some(changed) => {
            let copy = scratch.join("misspelled.ts");
            proc::write(&copy, &changed)?;
            let (passed, output) = tsc(node_modules, &copy, &[])?;
            misspelling_caught(passed, &output, &REACT_MISSPELLING)
        }
    };
    count(tally, REACT_MISSPELLING.name, result);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_exported_names() {
        let declarations = "export type PostId = number | string;\n\
             export interface PostView {\n  postId: PostId;\n}\n\
             export class LikeClient {\n  free(): void;\n}\n\
             export declare const OPERATIONS: Readonly<Record<OperationId, Operation>>;\n\
             export declare function parseJson(text: string): unknown;\n\
             export function initSync(module: SyncInitInput): InitOutput;\n\
             export default function __wbg_init (module_or_path?: InitInput): Promise<InitOutput>;\n\
             export type PostId = number | string;\n";
        assert_eq!(
            exported_names(declarations),
            [
                "PostId",
                "PostView",
                "LikeClient",
                "OPERATIONS",
                "parseJson",
                "initSync"
            ]
        );
    }

    #[test]
    fn matches_whole_identifiers_only() {
        assert!(names_word("type PostId = 1; x.PostIdInput", "PostId"));
        assert!(!names_word("x.PostIdInput", "PostId"));
        assert!(!names_word("$PostId", "PostId"));
        assert!(names_word("error TS2551: Property 'toggel' does", "toggel"));
    }

    #[test]
    fn misspells_the_first_occurrence_and_names_the_new_word() {
        let m = MISSPELLINGS[0];
        assert_eq!(
            misspell("client.toggle(1); client.toggle(2)", &m).as_deref(),
            Some("client.toggel(1); client.toggle(2)")
        );
        assert_eq!(misspell("nothing here", &m), None);
        assert_eq!(misspelled_name(&m), "toggel");
        assert_eq!(misspelled_name(&MISSPELLINGS[2]), "maxRetrys");
        for m in MISSPELLINGS {
            assert_ne!(m.from, m.to);
        }
    }
}
