//! The rules a store applies to what it is given, one home each: every
//! backend calls them before it writes, and the admin API calls the same
//! functions so that it can answer with each rule's own error code.
//!
//! Ids need no rule here: a [`UserId`] or a
//! [`PostId`](likekit_proto::PostId) is valid by construction.

use std::collections::HashSet;

use likekit_proto::{UserId, admin::Seed, code};

use super::StoreError;

pub use likekit_proto::admin::{MAX_FRIENDS, MAX_NAME_CHARS};

/// A broken rule: a stable error code (`bad_name`, `too_many_friends`) and
/// a message for people.
///
/// ```
/// use likekit_server::store::rules;
/// assert_eq!(rules::check_name("  ").unwrap_err().code, "bad_name");
/// assert!(rules::check_name("Ana").is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RuleViolation {
    /// The error code the admin API answers with.
    pub code: &'static str,
    /// What is wrong, for people.
    pub message: String,
}

impl From<RuleViolation> for StoreError {
    fn from(violation: RuleViolation) -> Self {
        Self::Invalid(violation.message)
    }
}

/// A display name has 1 to [`MAX_NAME_CHARS`] characters, is not blank,
/// and holds no control character (U+0000 to U+001F, U+007F to U+009F: a
/// name is one line of display text, and PostgreSQL's `text` cannot hold
/// U+0000 at all).
///
/// # Errors
///
/// `bad_name` otherwise.
pub fn check_name(name: &str) -> Result<(), RuleViolation> {
    if name.trim().is_empty()
        || name.chars().count() > MAX_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(RuleViolation {
            code: code::BAD_NAME,
            message: format!(
                "a name must have 1 to {MAX_NAME_CHARS} characters, not be blank, and hold no control characters"
            ),
        });
    }
    Ok(())
}

/// A friend list has at most [`MAX_FRIENDS`] entries (repeats count; they
/// are stored once).
///
/// # Errors
///
/// `too_many_friends` otherwise.
pub fn check_friends(friends: &[UserId]) -> Result<(), RuleViolation> {
    if friends.len() > MAX_FRIENDS {
        return Err(RuleViolation {
            code: code::TOO_MANY_FRIENDS,
            message: format!("at most {MAX_FRIENDS} friends per user"),
        });
    }
    Ok(())
}

/// Every user of a seed document has a valid name and friend list.
///
/// # Errors
///
/// The first broken rule, its message beginning with the user's place in
/// the document and id (`users[3] (user 12): a name must have …`), so a
/// long seed file's fault can be found.
pub fn check_seed(seed: &Seed) -> Result<(), RuleViolation> {
    seed.users.iter().enumerate().try_for_each(|(at, user)| {
        check_name(&user.name)
            .and_then(|()| check_friends(&user.friends))
            .map_err(|broken| RuleViolation {
                message: format!("users[{at}] (user {}): {}", user.id, broken.message),
                ..broken
            })
    })
}

/// Each id once, first occurrence first: a friend list as it is stored.
///
/// ```
/// use likekit_server::{store::rules::unique, wire::UserId};
/// let ids: Vec<UserId> = [3, 1, 3, 2, 1].map(|n| UserId::new(n).unwrap()).to_vec();
/// assert_eq!(unique(&ids), [3, 1, 2].map(|n| UserId::new(n).unwrap()));
/// ```
pub fn unique(ids: &[UserId]) -> Vec<UserId> {
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter().copied().filter(|id| seen.insert(*id)).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use likekit_proto::admin::SeedUser;

    use super::*;

    #[test]
    fn names_are_bounded_and_not_blank() {
        assert!(check_name("A").is_ok());
        assert!(check_name(&"é".repeat(MAX_NAME_CHARS)).is_ok());
        assert!(check_name("Ana María\u{a0}O'Neil 🙂").is_ok());
        for bad in [
            "",
            " \t",
            &"x".repeat(MAX_NAME_CHARS + 1),
            "A\0B",
            "Ana\n",
            "A\u{1b}[31mB",
            "A\u{85}B",
            "A\u{7f}",
        ] {
            let err = check_name(bad).unwrap_err();
            assert_eq!(err.code, "bad_name", "{bad:?}");
            assert_eq!(
                StoreError::from(err.clone()),
                StoreError::Invalid(err.message)
            );
        }
    }

    #[test]
    fn friend_lists_are_bounded_and_seeds_checked() {
        let one = UserId::MIN;
        assert!(check_friends(&vec![one; MAX_FRIENDS]).is_ok());
        let err = check_friends(&vec![one; MAX_FRIENDS + 1]).unwrap_err();
        assert_eq!(err.code, "too_many_friends");
        let seed = |name: &str| Seed {
            users: vec![SeedUser {
                id: one,
                name: name.into(),
                friends: vec![],
            }],
            posts: vec![],
        };
        assert!(check_seed(&seed("Ana")).is_ok());
        let err = check_seed(&seed("")).unwrap_err();
        assert_eq!(err.code, "bad_name");
        assert!(
            err.message
                .starts_with("users[0] (user 1): a name must have"),
            "{}",
            err.message
        );
        // The first broken entry is named, among good ones.
        let mut three = seed("Ana");
        for (id, name) in [(2, "Ben"), (3, " ")] {
            three.users.push(SeedUser {
                id: UserId::new(id).unwrap(),
                name: name.into(),
                friends: vec![],
            });
        }
        three.users[1].friends = vec![one; MAX_FRIENDS + 1];
        let err = check_seed(&three).unwrap_err();
        assert_eq!(err.code, "too_many_friends");
        assert_eq!(
            err.message,
            format!("users[1] (user 2): at most {MAX_FRIENDS} friends per user")
        );
    }
}
