//! Running other programs: one place for spawning, streaming and error text.
//! Commands are built as `std::process::Command`s; [`stream`] runs one
//! through `duct` to merge its standard output and error into one stream.

use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// Says what xtask is doing.
pub fn say(what: &str) {
    out(&format!("xtask: {what}\n"));
}

/// Writes `text` to standard output as it is. A closed pipe (`cargo xtask
/// test | head`) is no reason to panic: the run goes on to its exit status.
pub fn out(text: &str) {
    let _ = io::stdout().lock().write_all(text.as_bytes());
}

/// Error text for a file operation.
pub fn io_error(what: &str, path: &Path, e: io::Error) -> String {
    format!("could not {what} {}: {e}", path.display())
}

/// Makes a folder and its parents.
pub fn mkdir(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))
}

/// Writes a file, making its folder first.
pub fn write(path: &Path, text: &str) -> Result<(), String> {
    mkdir(path.parent().unwrap_or(path))?;
    fs::write(path, text).map_err(|e| io_error("write", path, e))
}

/// Copies a file, making the target's folder first.
pub fn copy(from: &Path, to: &Path) -> Result<(), String> {
    mkdir(to.parent().unwrap_or(to))?;
    fs::copy(from, to)
        .map(drop)
        .map_err(|e| io_error("copy", from, e))
}

/// Removes a file, or a folder with everything in it, if it is there.
pub fn remove(path: &Path) -> Result<(), String> {
    let removed = match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => return Ok(()),
    };
    removed.map_err(|e| io_error("remove", path, e))
}

/// A command line as a person would type it, for messages.
pub fn display(cmd: &Command) -> String {
    let program = cmd.get_program();
    let is_our_cargo = std::env::var_os("CARGO").is_some_and(|cargo| cargo == program);
    let program = if is_our_cargo {
        "cargo".into()
    } else {
        program.to_string_lossy()
    };
    let args = cmd.get_args().map(|a| {
        let a = a.to_string_lossy();
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=./:,@+%".contains(c));
        if plain {
            a.into_owned()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    });
    std::iter::once(program.into_owned())
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Error text for a command that could not be started.
pub fn spawn_error(cmd: &Command, err: &io::Error) -> String {
    if err.kind() == io::ErrorKind::NotFound {
        let program = cmd.get_program().to_string_lossy();
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

/// What a command that ran and succeeded printed, standard output and
/// standard error together (some tools, such as `java -version`, answer on
/// standard error), trimmed; `None` when the program is missing or fails.
/// For probing what is installed.
pub fn capture(cmd: &mut Command) -> Option<String> {
    let out = cmd.stdin(Stdio::null()).output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.success().then(|| text.trim().to_owned())
}

/// Runs a command with its standard output and standard error merged into
/// one stream, passed through to our standard output as it arrives, each
/// line also handed to `on_line`. Returns how the command exited.
pub fn stream(cmd: &Command, mut on_line: impl FnMut(&str)) -> Result<ExitStatus, String> {
    let shown = display(cmd);
    let mut expression = duct::cmd(cmd.get_program(), cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        expression = expression.dir(dir);
    }
    for (name, value) in cmd.get_envs() {
        expression = match value {
            Some(value) => expression.env(name, value),
            None => expression.env_remove(name),
        };
    }
    let reader = expression
        .stderr_to_stdout()
        .stdin_null()
        .unchecked()
        .reader()
        .map_err(|e| spawn_error(cmd, &e))?;
    let mut lines = BufReader::new(&reader);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                // Our own terminal going away is no reason to stop the child.
                let _ = io::stdout().lock().write_all(&line);
                on_line(String::from_utf8_lossy(&line).trim_end());
            }
            Err(e) => return Err(format!("reading the output of `{shown}` failed: {e}")),
        }
    }
    match reader.try_wait() {
        Ok(Some(output)) => Ok(output.status),
        Ok(None) => Err(format!("`{shown}` closed its output but did not exit")),
        Err(e) => Err(format!("waiting for `{shown}` failed: {e}")),
    }
}

/// Finds a program on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

/// Whether a path is a file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The cargo that runs us (cargo sets `CARGO` for `cargo run`), else `cargo`.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let status = stream(&cmd, |line| seen.push(line.to_owned())).expect("sh runs");
        assert_eq!(seen, ["one", "two", "three"]);
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn missing_program_is_named() {
        let err =
            stream(&Command::new("likekit-no-such-program"), |_| {}).expect_err("cannot start");
        assert!(
            err.contains("`likekit-no-such-program` is not installed"),
            "{err}"
        );
    }
}
