//! The `--only NAME[,NAME…]` filter shared by `test` and `bench`.

/// Picks the named entries from `names` (all of them when `--only` is not
/// given), keeping their order in `names`. Unknown names and unknown options
/// are errors that list what exists.
pub fn parse_only<'a>(
    args: &[String],
    names: &[&'a str],
    command: &str,
) -> Result<Vec<&'a str>, String> {
    let mut wanted: Vec<String> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let list = if arg == "--only" {
            args.next()
                .ok_or_else(|| format!("`--only` needs a name; one of: {}", names.join(", ")))?
                .as_str()
        } else if let Some(list) = arg.strip_prefix("--only=") {
            list
        } else {
            return Err(format!(
                "unknown option `{arg}` for `cargo xtask {command}` (see `cargo xtask help`)"
            ));
        };
        wanted.extend(
            list.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
        );
    }
    if let Some(unknown) = wanted.iter().find(|w| !names.contains(&w.as_str())) {
        return Err(format!(
            "no {command} suite named `{unknown}`; known: {}",
            names.join(", ")
        ));
    }
    Ok(names
        .iter()
        .copied()
        .filter(|n| wanted.is_empty() || wanted.iter().any(|w| w == n))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["rust", "kotlin", "python"];

    fn parse(args: &[&str]) -> Result<Vec<&'static str>, String> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        parse_only(&args, NAMES, "test")
    }

    #[test]
    fn everything_by_default() {
        assert_eq!(parse(&[]), Ok(vec!["rust", "kotlin", "python"]));
    }

    #[test]
    fn only_keeps_the_declared_order() {
        assert_eq!(
            parse(&["--only", "python,rust"]),
            Ok(vec!["rust", "python"])
        );
        assert_eq!(parse(&["--only=kotlin"]), Ok(vec!["kotlin"]));
        assert_eq!(
            parse(&["--only", "kotlin", "--only", "rust"]),
            Ok(vec!["rust", "kotlin"])
        );
    }

    #[test]
    fn unknown_names_and_options_are_errors() {
        let err = parse(&["--only", "swift"]).expect_err("unknown");
        assert!(
            err.contains("`swift`") && err.contains("rust, kotlin, python"),
            "{err}"
        );
        assert!(parse(&["--only"]).is_err());
        assert!(parse(&["--fast"]).is_err());
    }
}
