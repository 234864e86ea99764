//! The line under a post: "Liked by Ana and 1,203 others".

use std::fmt;

/// How many friends' names the line spells out before it counts the rest.
pub const MAX_NAMED_FRIENDS: usize = 2;

/// The structured form of the line under a post, for one viewer.
///
/// `total == you as u64 + friends.len() as u64 + others` always holds, so a
/// platform can build its own localised sentence from the parts. The English
/// sentence is its [`fmt::Display`] (`line.to_string()`).
///
/// ```
/// use likekit_core::LikeLine;
/// let line = LikeLine::new(false, &["Ana".to_string()], 1204);
/// assert_eq!(line.to_string(), "Liked by Ana and 1,203 others");
/// assert_eq!(LikeLine::new(true, &[], 1).to_string(), "Liked by you");
/// assert_eq!(LikeLine::new(false, &[], 1204).to_string(), "1,204 likes");
/// assert_eq!(LikeLine::new(false, &[], 0).to_string(), "");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LikeLine {
    /// The viewer likes the post.
    pub you: bool,
    /// Friends to name, newest first (at most [`MAX_NAMED_FRIENDS`]).
    pub friends: Vec<String>,
    /// Everyone else who likes the post.
    pub others: u64,
    /// Everyone who likes the post.
    pub total: u64,
}

impl LikeLine {
    /// Builds the line from the displayed state: whether the viewer likes
    /// the post, the friends among its likers (newest first) and the count.
    ///
    /// A count that lags behind the names (a cache a second old) is raised
    /// to cover them, so the line never says "Ana and -1 others".
    pub fn new(you: bool, friends: &[String], count: u64) -> Self {
        let named: Vec<String> = friends.iter().take(MAX_NAMED_FRIENDS).cloned().collect();
        let shown = u64::from(you) + named.len() as u64;
        let total = count.max(shown);
        Self {
            you,
            friends: named,
            others: total - shown,
            total,
        }
    }

    /// Whether there is nothing to show (nobody likes the post).
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl fmt::Display for LikeLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = Vec::with_capacity(MAX_NAMED_FRIENDS + 1);
        if self.you {
            names.push("you");
        }
        names.extend(self.friends.iter().map(String::as_str));
        if names.is_empty() {
            return match self.total {
                0 => Ok(()),
                1 => f.write_str("1 like"),
                n => write!(f, "{} likes", group_thousands(n)),
            };
        }
        f.write_str("Liked by ")?;
        let last = names.len() - 1;
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                f.write_str(if i == last && self.others == 0 {
                    " and "
                } else {
                    ", "
                })?;
            }
            f.write_str(name)?;
        }
        match self.others {
            0 => Ok(()),
            1 => f.write_str(" and 1 other"),
            n => write!(f, " and {} others", group_thousands(n)),
        }
    }
}

/// Formats `n` with a comma between each group of three digits: `1,203`.
///
/// ```
/// assert_eq!(likekit_core::line::group_thousands(1_234_567), "1,234,567");
/// ```
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(you: bool, friends: &[&str], count: u64) -> String {
        let friends: Vec<String> = friends.iter().map(|s| s.to_string()).collect();
        LikeLine::new(you, &friends, count).to_string()
    }

    #[test]
    fn nobody() {
        assert_eq!(line(false, &[], 0), "");
        assert!(LikeLine::new(false, &[], 0).is_empty());
    }

    #[test]
    fn counts_only() {
        assert_eq!(line(false, &[], 1), "1 like");
        assert_eq!(line(false, &[], 2), "2 likes");
        assert_eq!(line(false, &[], 999), "999 likes");
        assert_eq!(line(false, &[], 1204), "1,204 likes");
        assert_eq!(line(false, &[], 12_345_678), "12,345,678 likes");
    }

    #[test]
    fn one_friend() {
        assert_eq!(line(false, &["Ana"], 1), "Liked by Ana");
        assert_eq!(line(false, &["Ana"], 2), "Liked by Ana and 1 other");
        assert_eq!(line(false, &["Ana"], 1204), "Liked by Ana and 1,203 others");
    }

    #[test]
    fn two_friends() {
        assert_eq!(line(false, &["Ana", "Ben"], 2), "Liked by Ana and Ben");
        assert_eq!(
            line(false, &["Ana", "Ben"], 3),
            "Liked by Ana, Ben and 1 other"
        );
        assert_eq!(
            line(false, &["Ana", "Ben"], 1204),
            "Liked by Ana, Ben and 1,202 others"
        );
    }

    #[test]
    fn more_friends_than_named_count_as_others() {
        let l = LikeLine::new(false, &["Ana".into(), "Ben".into(), "Cleo".into()], 3);
        assert_eq!(l.friends, ["Ana", "Ben"]);
        assert_eq!(l.others, 1);
        assert_eq!(l.to_string(), "Liked by Ana, Ben and 1 other");
    }

    #[test]
    fn you() {
        assert_eq!(line(true, &[], 1), "Liked by you");
        assert_eq!(line(true, &[], 2), "Liked by you and 1 other");
        assert_eq!(line(true, &[], 1204), "Liked by you and 1,203 others");
        assert_eq!(line(true, &["Ana"], 2), "Liked by you and Ana");
        assert_eq!(
            line(true, &["Ana"], 1204),
            "Liked by you, Ana and 1,202 others"
        );
        assert_eq!(
            line(true, &["Ana", "Ben"], 1204),
            "Liked by you, Ana, Ben and 1,201 others"
        );
    }

    #[test]
    fn stale_count_never_goes_negative() {
        let l = LikeLine::new(true, &["Ana".into()], 0);
        assert_eq!(l.total, 2);
        assert_eq!(l.others, 0);
        assert_eq!(l.to_string(), "Liked by you and Ana");
    }

    #[test]
    fn parts_add_up() {
        for count in [0, 1, 2, 3, 10, 1204] {
            for you in [false, true] {
                for n in 0..4 {
                    let friends: Vec<String> = (0..n).map(|i| format!("F{i}")).collect();
                    let l = LikeLine::new(you, &friends, count);
                    assert_eq!(
                        l.total,
                        u64::from(l.you) + l.friends.len() as u64 + l.others
                    );
                }
            }
        }
    }

    #[test]
    fn thousands() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(100_000), "100,000");
        assert_eq!(group_thousands(u64::MAX), "18,446,744,073,709,551,615");
    }
}
