//! Running other programs: one place for spawning, streaming and error text.

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// A command line as a person would type it, for messages.
pub fn display(cmd: &Command) -> String {
    let program = cmd.get_program();
    let is_our_cargo = std::env::var_os("CARGO").is_some_and(|cargo| cargo == program);
    let mut out = if is_our_cargo {
        "cargo".to_owned()
    } else {
        quote(program)
    };
    for arg in cmd.get_args() {
        out.push(' ');
        out.push_str(&quote(arg));
    }
    out
}

fn quote(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./:,@+%".contains(c));
    if plain {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Error text for a command that could not be started.
pub fn spawn_error(cmd: &Command, err: &io::Error) -> String {
    let program = cmd.get_program().to_string_lossy();
    if err.kind() == io::ErrorKind::NotFound {
        format!(
            "`{program}` is not installed or not on PATH (needed for `{}`)",
            display(cmd)
        )
    } else {
        format!("could not start `{}`: {err}", display(cmd))
    }
}

/// Runs a command with the terminal attached; an error if it cannot start or
/// does not succeed.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd.status().map_err(|e| spawn_error(cmd, &e))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", display(cmd)))
    }
}

/// The trimmed standard output of a command that ran and succeeded; `None`
/// when the program is missing or fails. For probing what is installed.
pub fn capture(cmd: &mut Command) -> Option<String> {
    let out = cmd
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Like [`capture`], but standard output and standard error together
/// (some tools, such as `java -version`, answer on standard error).
pub fn capture_any(cmd: &mut Command) -> Option<String> {
    let out = cmd.stdin(Stdio::null()).output().ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    out.status.success().then(|| text.trim().to_owned())
}

/// Runs a command with its standard output and standard error merged into one
/// stream, in the order it wrote them. Every line is passed through to our
/// standard output as it arrives and handed to `on_line` with terminal colour
/// codes removed.
pub fn stream(mut cmd: Command, mut on_line: impl FnMut(&str)) -> Result<ExitStatus, String> {
    let shown = display(&cmd);
    let (reader, writer) =
        io::pipe().map_err(|e| format!("could not make a pipe for `{shown}`: {e}"))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| format!("could not make a pipe for `{shown}`: {e}"))?;
    cmd.stdin(Stdio::null()).stdout(writer).stderr(writer_err);
    let mut child = cmd.spawn().map_err(|e| spawn_error(&cmd, &e))?;
    // The command still holds the pipe's write ends; drop them so the read
    // side sees end-of-file when the child exits.
    drop(cmd);

    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let stdout = io::stdout();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                {
                    let mut out = stdout.lock();
                    // Our own terminal going away is no reason to stop the child.
                    let _ = out.write_all(&line).and_then(|()| out.flush());
                }
                let text = String::from_utf8_lossy(&line);
                on_line(strip_ansi(text.trim_end_matches(['\n', '\r'])).as_str());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("reading the output of `{shown}` failed: {e}"));
            }
        }
    }
    child
        .wait()
        .map_err(|e| format!("waiting for `{shown}` failed: {e}"))
}

/// Removes ANSI escape sequences (colours, cursor moves) from a line.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in '@'..='~'.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            // Intermediates (space to '/'), then one final byte.
            while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
            chars.next();
        }
    }
    out
}

/// Finds a program on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

/// Whether a path is a file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The cargo that runs us (cargo sets `CARGO` for `cargo run`), else `cargo`.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_codes() {
        assert_eq!(
            strip_ansi("\u{1b}[1m\u{1b}[32m     Running\u{1b}[0m unittests"),
            "     Running unittests"
        );
        assert_eq!(strip_ansi("plain"), "plain");
        assert_eq!(strip_ansi("a\u{1b}(Bb"), "ab");
    }

    #[test]
    fn displays_commands_quoted() {
        let mut cmd = Command::new("cargo");
        cmd.args(["test", "--workspace", "two words", "it's"]);
        assert_eq!(
            display(&cmd),
            r"cargo test --workspace 'two words' 'it'\''s'"
        );
    }

    #[test]
    fn streams_merged_output_in_order() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo one; echo two >&2; echo three; exit 3"]);
        let mut seen = Vec::new();
        let status = stream(cmd, |line| seen.push(line.to_owned())).expect("sh runs");
        assert_eq!(seen, ["one", "two", "three"]);
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn missing_program_is_named() {
        let cmd = Command::new("likekit-no-such-program");
        let err = stream(cmd, |_| {}).expect_err("cannot start");
        assert!(
            err.contains("`likekit-no-such-program` is not installed"),
            "{err}"
        );
    }
}
