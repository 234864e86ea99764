//! `likekit-tls-front`: an HTTPS front with a throwaway CA before a plain
//! HTTP server on loopback, for test runners in other languages.
//!
//! ```text
//! likekit-tls-front --upstream http://127.0.0.1:8080 --ca-file target/ca.pem
//! ```
//!
//! Makes a CA, writes its certificate (PEM) to the `--ca-file`, then prints
//! `listening on https://127.0.0.1:<port>` and forwards every connection to
//! the upstream (a loopback address, with or without `http://`) until it is
//! killed. The CA's key never leaves the process.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use likekit_testing::tls::{TestCa, TlsFront};

const USAGE: &str = "usage: likekit-tls-front --upstream http://127.0.0.1:PORT --ca-file PATH";

struct Args {
    upstream: SocketAddr,
    ca_file: PathBuf,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut upstream, mut ca_file) = (None, None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--upstream" => {
                let addr = value.strip_prefix("http://").unwrap_or(&value);
                let addr = addr.trim_end_matches('/');
                upstream = Some(
                    addr.parse::<SocketAddr>()
                        .map_err(|e| format!("--upstream {value}: {e}"))?,
                );
            }
            "--ca-file" => ca_file = Some(PathBuf::from(value)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        upstream: upstream.ok_or("--upstream is required")?,
        ca_file: ca_file.ok_or("--ca-file is required")?,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("likekit-tls-front: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let front = match TestCa::new() {
        Ok(ca) => match std::fs::write(&args.ca_file, ca.pem()) {
            Ok(()) => TlsFront::start_with(&ca, args.upstream).await,
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", args.ca_file.display()),
            )),
        },
        Err(e) => Err(std::io::Error::other(e)),
    };
    let front = match front {
        Ok(front) => front,
        Err(e) => {
            eprintln!("likekit-tls-front: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "listening on {}", front.url());
    let _ = stdout.flush();
    eprintln!(
        "likekit-tls-front: {} -> http://{} (CA in {})",
        front.url(),
        front.upstream(),
        args.ca_file.display()
    );
    // Serve until killed.
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}
