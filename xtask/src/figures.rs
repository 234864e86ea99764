//! Figures: the named numbers a bench prints (`likekit-metric name=value`
//! lines) and `cargo xtask bench` gathers into `bench/REPORT.md`. Every
//! suite adds its figures to one [`Figures`]; the suite table and the
//! report are `bench.rs`.

use std::collections::BTreeMap;

/// Named figures gathered in one run.
pub type Figures = BTreeMap<String, f64>;

/// Parses `likekit-metric name=value [name=value…]` lines.
pub fn parse_metrics(line: &str) -> Vec<(String, f64)> {
    let Some(rest) = line.trim().strip_prefix("likekit-metric ") else {
        return Vec::new();
    };
    rest.split_whitespace()
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            let value = value.parse::<f64>().ok().filter(|v| v.is_finite())?;
            (!name.is_empty()).then(|| (name.to_owned(), value))
        })
        .collect()
}

/// `value` rounded, with a comma between each group of three digits.
pub fn group_thousands(value: f64) -> String {
    let rounded = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, digit) in rounded.chars().enumerate() {
        if i > 0 && (rounded.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if value < 0.0 && rounded != "0" {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_metric_lines() {
        assert_eq!(
            parse_metrics("likekit-metric memory_per_post_bytes=184"),
            [("memory_per_post_bytes".to_owned(), 184.0)]
        );
        assert_eq!(
            parse_metrics("  likekit-metric a=1.5 b=2 junk c=x\n"),
            [("a".to_owned(), 1.5), ("b".to_owned(), 2.0)]
        );
        assert!(parse_metrics("machine/tap_to_changed time: [410 ns 412 ns 415 ns]").is_empty());
        assert!(parse_metrics("likekit-metric =3 inf=inf").is_empty());
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group_thousands(1_234_567.4), "1,234,567");
        assert_eq!(group_thousands(999.0), "999");
        assert_eq!(group_thousands(-1_000.0), "-1,000");
        assert_eq!(group_thousands(-0.2), "0");
    }
}
