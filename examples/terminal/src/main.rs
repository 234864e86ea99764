//! `likekit-demo-terminal`: tap hearts in a terminal against a running
//! likekit-server. See `--help`.

use std::io::{self, BufReader};
use std::process::ExitCode;

use likekit_demo_terminal::{Options, USAGE, run};

#[tokio::main]
async fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let input = Box::new(BufReader::new(io::stdin()));
    match run(options, input, Box::new(io::stdout())).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
