//! Records: what a post shows, the line under it, the counters and the
//! client's options, converted from and to the core's types.

use std::time::Duration;

use likekit_core::{MachineConfig, RetryPolicy};

/// What a post's heart, count and line show right now, for the viewer: the
/// last state the server confirmed plus the viewer's pending tap.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct PostView {
    /// The post.
    pub post_id: i64,
    /// Whether the heart is filled.
    pub liked: bool,
    /// The count to show under the heart.
    pub count: i64,
    /// The viewer's friends among the post's recent likers, newest first.
    pub friends: Vec<String>,
    /// The "Liked by …" line, structured and in English.
    pub line: LikeLine,
    /// A like or unlike is on its way (or waiting to be retried).
    pub pending: bool,
    /// Why the viewer's last tap did not save, until the next tap or the
    /// next confirmed state: show "didn't save" while it is set.
    pub error: Option<crate::LikeError>,
}

/// The line under a post, "Liked by Ana and 1,203 others": its parts, to
/// localise, and `text`, the English sentence (empty at zero likes).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LikeLine {
    /// The viewer likes the post.
    pub you: bool,
    /// Friends to name (at most two), newest first.
    pub friends: Vec<String>,
    /// Likers not named.
    pub others: i64,
    /// Everyone who likes it: `you` + `friends` + `others`.
    pub total: i64,
    /// The English sentence: "Liked by you, Ana and 1,202 others",
    /// "1,204 likes", "1 like", or "" at zero.
    pub text: String,
}

/// What the client has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Stats {
    /// Taps seen.
    pub taps: i64,
    /// Calls sent, retries included.
    pub calls_sent: i64,
    /// Calls sent for a new intent (not retries).
    pub intents_sent: i64,
    /// Taps that needed no call of their own (a later tap replaced them
    /// while a call was out, or they asked for what was already shown).
    pub coalesced: i64,
    /// Calls sent again after a transient failure.
    pub retries: i64,
    /// Intents that failed for good and were rolled back.
    pub rollbacks: i64,
    /// Idle posts forgotten to stay within `max_posts`.
    pub evictions: i64,
}

/// How a [`LikeClient`](crate::LikeClient) behaves. Every field has the
/// core's default, so `LikeClientOptions()` (Kotlin, Python) or
/// `LikeClientOptions()` (Swift) is the usual start; `default_options()`
/// returns the same values. Times are in milliseconds; negative values
/// count as zero.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct LikeClientOptions {
    /// How long one request may take, answer included.
    #[uniffi(default = 10000)]
    pub request_timeout_ms: i64,
    /// The first retry's delay, before jitter.
    #[uniffi(default = 500)]
    pub retry_min_delay_ms: i64,
    /// The longest delay between retries, before jitter.
    #[uniffi(default = 8000)]
    pub retry_max_delay_ms: i64,
    /// How much each delay grows.
    #[uniffi(default = 2.0)]
    pub retry_factor: f64,
    /// Retries after the first attempt; 0 never retries.
    #[uniffi(default = 4)]
    pub max_retries: i64,
    /// Add random jitter (0–100% of each delay).
    #[uniffi(default = true)]
    pub retry_jitter: bool,
    /// Seed the jitter, for reproducible tests.
    #[uniffi(default = None)]
    pub retry_seed: Option<i64>,
    /// How many posts the client keeps before forgetting idle ones.
    #[uniffi(default = 10000)]
    pub max_posts: i64,
}

/// The core's defaults: the same values as `LikeClientOptions()`.
#[uniffi::export]
pub fn default_options() -> LikeClientOptions {
    let retry = RetryPolicy::default();
    LikeClientOptions {
        request_timeout_ms: millis(likekit_core::DEFAULT_REQUEST_TIMEOUT),
        retry_min_delay_ms: millis(retry.min_delay),
        retry_max_delay_ms: millis(retry.max_delay),
        retry_factor: f64::from(retry.factor),
        max_retries: saturating(retry.max_retries as u64),
        retry_jitter: retry.jitter,
        retry_seed: retry.seed.map(|seed| seed as i64),
        max_posts: saturating(MachineConfig::default().max_posts as u64),
    }
}

impl LikeClientOptions {
    pub(crate) fn request_timeout(&self) -> Duration {
        duration(self.request_timeout_ms)
    }

    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            min_delay: duration(self.retry_min_delay_ms),
            max_delay: duration(self.retry_max_delay_ms),
            factor: self.retry_factor as f32,
            max_retries: usize::try_from(self.max_retries).unwrap_or(0),
            jitter: self.retry_jitter,
            seed: self.retry_seed.map(|seed| seed as u64),
        }
    }

    pub(crate) fn max_posts(&self) -> usize {
        usize::try_from(self.max_posts).unwrap_or(0)
    }
}

fn duration(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Counts never come near 2⁶³; saturate rather than wrap if one did.
fn saturating(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A post id as the foreign side sees it: the same 64 bits.
pub(crate) fn foreign_id(id: likekit_core::PostId) -> i64 {
    id as i64
}

/// A post id from the foreign side: the same 64 bits (see the crate docs).
pub(crate) fn core_id(id: i64) -> likekit_core::PostId {
    id as u64
}

impl From<likekit_core::PostView> for PostView {
    fn from(view: likekit_core::PostView) -> Self {
        Self {
            post_id: foreign_id(view.post_id),
            liked: view.liked,
            count: saturating(view.count),
            friends: view.friends,
            line: view.line.into(),
            pending: view.pending,
            error: view.error.map(Into::into),
        }
    }
}

impl From<likekit_core::LikeLine> for LikeLine {
    fn from(line: likekit_core::LikeLine) -> Self {
        let text = line.to_string();
        Self {
            you: line.you,
            friends: line.friends,
            others: saturating(line.others),
            total: saturating(line.total),
            text,
        }
    }
}

impl From<likekit_core::Stats> for Stats {
    fn from(stats: likekit_core::Stats) -> Self {
        Self {
            taps: saturating(stats.taps),
            calls_sent: saturating(stats.calls_sent),
            intents_sent: saturating(stats.intents_sent),
            coalesced: saturating(stats.coalesced),
            retries: saturating(stats.retries),
            rollbacks: saturating(stats.rollbacks),
            evictions: saturating(stats.evictions),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_pass_through_bit_for_bit() {
        for id in [0, 1, 42, i64::MAX, -1, i64::MIN] {
            assert_eq!(foreign_id(core_id(id)), id);
        }
        assert_eq!(core_id(-1), u64::MAX);
    }

    #[test]
    fn options_round_trip_the_core_defaults() {
        let options = default_options();
        assert_eq!(options.retry_policy(), RetryPolicy::default());
        assert_eq!(
            options.request_timeout(),
            likekit_core::DEFAULT_REQUEST_TIMEOUT
        );
        assert_eq!(options.max_posts(), MachineConfig::default().max_posts);
    }

    #[test]
    fn negative_times_count_as_zero() {
        let options = LikeClientOptions {
            request_timeout_ms: -5,
            retry_min_delay_ms: -1,
            max_retries: -3,
            max_posts: -1,
            ..default_options()
        };
        assert_eq!(options.request_timeout(), Duration::ZERO);
        assert_eq!(options.retry_policy().min_delay, Duration::ZERO);
        assert_eq!(options.retry_policy().max_retries, 0);
        assert_eq!(options.max_posts(), 0);
    }

    #[test]
    fn views_carry_the_line_text() {
        let line = likekit_core::LikeLine::new(true, &["Ana".to_owned()], 1204);
        let view = PostView::from(likekit_core::PostView {
            post_id: 42,
            liked: true,
            count: 1204,
            friends: vec!["Ana".into()],
            line,
            pending: true,
            error: Some(likekit_core::LikeError::Timeout),
        });
        assert_eq!(view.post_id, 42);
        assert_eq!(view.line.text, "Liked by you, Ana and 1,202 others");
        assert_eq!((view.line.others, view.line.total), (1202, 1204));
        assert!(matches!(view.error, Some(crate::LikeError::Timeout { .. })));
    }
}
