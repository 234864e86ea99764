//! Records: what a post shows, the line under it, the counters and the
//! client's options, converted from and to the core's types.

use std::sync::Arc;
use std::time::Duration;

use likekit_core::{MachineConfig, PostId, RetryPolicy};

use crate::LikeError;

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
    /// next confirmed state: show "didn't save" while it is set and the
    /// view is not `pending`. A pending view with an error is a tap kept
    /// while offline (`keep_while_offline_ms`), still being tried.
    ///
    /// Equality: two views holding equal errors (the same variant and
    /// fields) are `==`, in Kotlin, Swift and Python, so a Kotlin
    /// `StateFlow` or `distinctUntilChanged` does not take a view read
    /// again for a new one.
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

/// How a [`LikeClient`](crate::LikeClient) behaves. Every field is
/// optional: a field left out (null/nil/None) takes the core's default, so
/// `LikeClientOptions()` is the usual start and
/// `LikeClientOptions(maxRetries = 2)` (Kotlin),
/// `LikeClientOptions(maxRetries: 2)` (Swift) or
/// `LikeClientOptions(max_retries=2)` (Python) changes one thing. The defaults are
/// the core's own (`RetryPolicy::default()`, `DEFAULT_REQUEST_TIMEOUT`,
/// `DEFAULT_MAX_ANSWER_BYTES`, `MachineConfig::default()`), never copied
/// here; `default_options()` shows their values. Times are in
/// milliseconds. A negative time or count is refused: the constructor
/// throws `Config` naming the field ("max_retries must not be negative;
/// got -1"), as the web package does, rather than reading it as zero (no
/// retries, or every saved tap too old at `restore()`).
#[derive(Clone, uniffi::Record)]
pub struct LikeClientOptions {
    /// How long one request may take, from opening the connection to the
    /// answer's last byte.
    #[uniffi(default = None)]
    pub request_timeout_ms: Option<i64>,
    /// The first retry's delay, before jitter.
    #[uniffi(default = None)]
    pub retry_min_delay_ms: Option<i64>,
    /// The longest delay between retries, before jitter.
    #[uniffi(default = None)]
    pub retry_max_delay_ms: Option<i64>,
    /// How much each delay grows.
    #[uniffi(default = None)]
    pub retry_factor: Option<f64>,
    /// Retries after the first attempt; 0 never retries.
    #[uniffi(default = None)]
    pub max_retries: Option<i64>,
    /// Add random jitter (0–100% of each delay).
    #[uniffi(default = None)]
    pub retry_jitter: Option<bool>,
    /// Seed the jitter, for reproducible tests.
    #[uniffi(default = None)]
    pub retry_seed: Option<i64>,
    /// How many posts the client keeps before forgetting idle ones.
    #[uniffi(default = None)]
    pub max_posts: Option<i64>,
    /// The most bytes of an answer's body the client reads; a longer answer
    /// fails the call as `InvalidResponse` (retried like any unreadable
    /// answer).
    #[uniffi(default = None)]
    pub max_answer_bytes: Option<i64>,
    /// Root certificates (PEM: one or more `-----BEGIN CERTIFICATE-----`
    /// blocks) trusted for `https` on top of the platform's, such as a
    /// private or test CA's; give the CA that signed the server's
    /// certificate. None trusts the platform's roots alone (Android: the
    /// bundled ones). PEM that holds no usable certificate makes the
    /// constructor throw `Config`.
    #[uniffi(default = None)]
    pub extra_root_certificates_pem: Option<String>,
    /// Where observers are called. None: by whichever thread is delivering,
    /// one call at a time, in order — the tapping thread for a tap's own
    /// change when no other delivery is under way (before the tap returns),
    /// else the thread already delivering, LikeKit's or another tapping
    /// thread — so UI code sets one.
    /// With a dispatcher every observer call goes through it, in order —
    /// the tap's own change too, after the tap returns (Kotlin:
    /// `Dispatchers.Main.asCallbackDispatcher()`; Swift:
    /// `MainQueueDispatcher()`).
    #[uniffi(default = None)]
    pub callback_dispatcher: Option<Arc<dyn crate::CallbackDispatcher>>,
    /// Where the viewer's unconfirmed taps are kept across starts
    /// (`IntentJournal.file(dir, viewer)`); none keeps them in memory only.
    /// One live client per journal: a second client given a journal that
    /// another live client uses is refused with `Journal`.
    #[uniffi(default = None)]
    pub journal: Option<Arc<crate::IntentJournal>>,
    /// How old a tap may grow before it is dropped instead of sent (at
    /// restore, and while kept offline); default one day.
    #[uniffi(default = None)]
    pub max_intent_age_ms: Option<i64>,
    /// Keep a tap pending while offline instead of rolling it back when
    /// its retries are used up, trying again every this many milliseconds
    /// until it saves, fails for good, or expires; none rolls back.
    #[uniffi(default = None)]
    pub keep_while_offline_ms: Option<i64>,
    /// Hears what the client's observers and token providers throw. None:
    /// LikeKit writes it on the native standard error, which Android
    /// discards.
    #[uniffi(default = None)]
    pub callback_error_listener: Option<Arc<dyn crate::CallbackErrorListener>>,
}

impl std::fmt::Debug for LikeClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LikeClientOptions")
            .field("request_timeout_ms", &self.request_timeout_ms)
            .field("retry_min_delay_ms", &self.retry_min_delay_ms)
            .field("retry_max_delay_ms", &self.retry_max_delay_ms)
            .field("retry_factor", &self.retry_factor)
            .field("max_retries", &self.max_retries)
            .field("retry_jitter", &self.retry_jitter)
            .field("retry_seed", &self.retry_seed)
            .field("max_posts", &self.max_posts)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .field(
                "extra_root_certificates_pem",
                &self.extra_root_certificates_pem.as_ref().map(|_| ".."),
            )
            .field(
                "callback_dispatcher",
                &self.callback_dispatcher.as_ref().map(|_| ".."),
            )
            .field("journal", &self.journal.as_ref().map(|_| ".."))
            .field("max_intent_age_ms", &self.max_intent_age_ms)
            .field("keep_while_offline_ms", &self.keep_while_offline_ms)
            .field(
                "callback_error_listener",
                &self.callback_error_listener.as_ref().map(|_| ".."),
            )
            .finish()
    }
}

/// The core's defaults, every field filled in: what each field left out of
/// `LikeClientOptions()` stands for. A client made with these behaves as
/// one made with `LikeClientOptions()`.
#[uniffi::export]
pub fn default_options() -> LikeClientOptions {
    let retry = RetryPolicy::default();
    LikeClientOptions {
        request_timeout_ms: Some(millis(likekit_core::DEFAULT_REQUEST_TIMEOUT)),
        retry_min_delay_ms: Some(millis(retry.min_delay)),
        retry_max_delay_ms: Some(millis(retry.max_delay)),
        retry_factor: Some(f64::from(retry.factor)),
        max_retries: Some(saturating(retry.max_retries as u64)),
        retry_jitter: Some(retry.jitter),
        retry_seed: retry.seed.map(|seed| seed as i64),
        max_posts: Some(saturating(MachineConfig::default().max_posts as u64)),
        max_answer_bytes: Some(saturating(likekit_core::DEFAULT_MAX_ANSWER_BYTES as u64)),
        // The core trusts no extra roots unless given some.
        extra_root_certificates_pem: None,
        // Observers run on LikeKit's threads unless told otherwise.
        callback_dispatcher: None,
        journal: None,
        max_intent_age_ms: Some(millis(likekit_core::DEFAULT_MAX_INTENT_AGE)),
        // Rolls back after the retries unless told otherwise.
        keep_while_offline_ms: None,
        // What a callback throws goes to standard error unless told otherwise.
        callback_error_listener: None,
    }
}

impl LikeClientOptions {
    /// The request timeout, if one was given.
    pub(crate) fn request_timeout(&self) -> Result<Option<Duration>, LikeError> {
        self.request_timeout_ms
            .map(|ms| duration(ms, "request_timeout_ms"))
            .transpose()
    }

    /// The core's [`RetryPolicy::default()`] with the fields given here.
    pub(crate) fn retry_policy(&self) -> Result<RetryPolicy, LikeError> {
        let default = RetryPolicy::default();
        Ok(RetryPolicy {
            min_delay: self
                .retry_min_delay_ms
                .map_or(Ok(default.min_delay), |ms| {
                    duration(ms, "retry_min_delay_ms")
                })?,
            max_delay: self
                .retry_max_delay_ms
                .map_or(Ok(default.max_delay), |ms| {
                    duration(ms, "retry_max_delay_ms")
                })?,
            // Narrowing is the point: the core's factor is an f32.
            factor: self.retry_factor.map_or(default.factor, |f| f as f32),
            max_retries: self
                .max_retries
                .map_or(Ok(default.max_retries), |n| size(n, "max_retries"))?,
            jitter: self.retry_jitter.unwrap_or(default.jitter),
            // Any 64 bits seed the jitter, a negative number's too.
            seed: self.retry_seed.map(|seed| seed as u64).or(default.seed),
        })
    }

    /// The cache bound, if one was given.
    pub(crate) fn max_posts(&self) -> Result<Option<usize>, LikeError> {
        self.max_posts.map(|n| size(n, "max_posts")).transpose()
    }

    /// The answer cap, if one was given.
    pub(crate) fn max_answer_bytes(&self) -> Result<Option<usize>, LikeError> {
        self.max_answer_bytes
            .map(|n| size(n, "max_answer_bytes"))
            .transpose()
    }

    /// The intent age limit, if one was given.
    pub(crate) fn max_intent_age(&self) -> Result<Option<Duration>, LikeError> {
        self.max_intent_age_ms
            .map(|ms| duration(ms, "max_intent_age_ms"))
            .transpose()
    }

    /// The offline retry interval, if keeping taps while offline.
    pub(crate) fn keep_while_offline(&self) -> Result<Option<Duration>, LikeError> {
        self.keep_while_offline_ms
            .map(|ms| duration(ms, "keep_while_offline_ms"))
            .transpose()
    }

    /// The extra trusted roots' PEM, if any was given.
    pub(crate) fn extra_root_certificates_pem(&self) -> Option<&str> {
        self.extra_root_certificates_pem.as_deref()
    }
}

/// An option's milliseconds: 0 or more.
fn duration(ms: i64, field: &str) -> Result<Duration, LikeError> {
    non_negative(ms, field).map(Duration::from_millis)
}

/// An option's count: 0 or more.
fn size(n: i64, field: &str) -> Result<usize, LikeError> {
    // Every i64 from 0 up fits a usize on the 64-bit targets the bindings
    // ship for; a 32-bit one saturates.
    non_negative(n, field).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// A number that must not be negative (an option, a scripted count):
/// `Config` naming it otherwise, as the Kotlin `Duration` options and the
/// web package refuse theirs.
pub(crate) fn non_negative(n: i64, what: &str) -> Result<u64, LikeError> {
    u64::try_from(n).map_err(|_| {
        likekit_core::LikeError::Config {
            message: format!("{what} must not be negative; got {n}"),
        }
        .into()
    })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A wait or deadline given in milliseconds; a negative one is 0.
pub(crate) fn wait_ms(ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// Counts never come near 2⁶³; saturate rather than wrap if one did.
fn saturating(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A post id as the foreign side sees it. Every id fits: ids are
/// 1 to 2⁶³−1.
pub(crate) fn foreign_id(id: PostId) -> i64 {
    id.as_i64()
}

/// A post id from the foreign side, through the core's one constructor:
/// zero and negative numbers are [`LikeError::InvalidId`]
/// (code `bad_post_id`), the same error every binding gives.
///
/// # Errors
///
/// [`LikeError::InvalidId`] for an id below 1.
pub(crate) fn core_id(id: i64) -> Result<PostId, crate::LikeError> {
    PostId::try_from(id).map_err(|e| likekit_core::LikeError::from(e).into())
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
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_go_through_the_core_constructor() {
        for id in [1, 42, i64::MAX] {
            assert_eq!(core_id(id).map(foreign_id), Ok(id));
        }
        for bad in [0, -1, i64::MIN] {
            let e = core_id(bad).unwrap_err();
            let core = likekit_core::LikeError::from(PostId::try_from(bad).unwrap_err());
            assert_eq!(core.code(), "bad_post_id");
            assert_eq!(e, crate::LikeError::from(core));
            assert!(
                matches!(&e, crate::LikeError::InvalidId { reason: message, .. }
                if message.starts_with("post ids are whole numbers") && message.ends_with(&format!("got {bad}")))
            );
        }
    }

    #[test]
    fn options_left_out_are_the_core_defaults() {
        let options = LikeClientOptions {
            request_timeout_ms: None,
            retry_min_delay_ms: None,
            retry_max_delay_ms: None,
            retry_factor: None,
            max_retries: None,
            retry_jitter: None,
            retry_seed: None,
            max_posts: None,
            max_answer_bytes: None,
            extra_root_certificates_pem: None,
            callback_dispatcher: None,
            journal: None,
            max_intent_age_ms: None,
            keep_while_offline_ms: None,
            callback_error_listener: None,
        };
        assert_eq!(options.retry_policy(), Ok(RetryPolicy::default()));
        assert_eq!(options.request_timeout(), Ok(None));
        assert_eq!(options.max_posts(), Ok(None));
        assert_eq!(options.max_answer_bytes(), Ok(None));
        assert_eq!(options.max_intent_age(), Ok(None));
        assert_eq!(options.keep_while_offline(), Ok(None));
        assert_eq!(options.extra_root_certificates_pem(), None);
    }

    #[test]
    fn options_round_trip_the_core_defaults() {
        let options = default_options();
        assert_eq!(options.retry_policy(), Ok(RetryPolicy::default()));
        assert_eq!(
            options.request_timeout(),
            Ok(Some(likekit_core::DEFAULT_REQUEST_TIMEOUT))
        );
        assert_eq!(
            options.max_posts(),
            Ok(Some(MachineConfig::default().max_posts))
        );
        assert_eq!(
            options.max_answer_bytes(),
            Ok(Some(likekit_core::DEFAULT_MAX_ANSWER_BYTES))
        );
        assert_eq!(
            options.max_intent_age(),
            Ok(Some(likekit_core::DEFAULT_MAX_INTENT_AGE))
        );
        assert_eq!(options.extra_root_certificates_pem(), None);
    }

    #[test]
    fn options_given_replace_one_default_each() {
        let options = LikeClientOptions {
            retry_min_delay_ms: Some(10),
            max_retries: Some(2),
            retry_jitter: Some(false),
            retry_seed: Some(7),
            ..default_options()
        };
        let policy = options.retry_policy().unwrap();
        assert_eq!(policy.min_delay, Duration::from_millis(10));
        assert_eq!(policy.max_retries, 2);
        assert!(!policy.jitter);
        assert_eq!(policy.seed, Some(7));
        assert_eq!(policy.max_delay, RetryPolicy::default().max_delay);
    }

    #[test]
    fn a_negative_time_or_count_is_refused_naming_the_field() {
        let refused = |options: LikeClientOptions, field: &str, value: i64| {
            let e = builder_error(&options);
            assert_eq!(
                e,
                Some(LikeError::from(likekit_core::LikeError::Config {
                    message: format!("{field} must not be negative; got {value}"),
                })),
                "{field}"
            );
        };
        let base = default_options;
        refused(
            LikeClientOptions {
                request_timeout_ms: Some(-5),
                ..base()
            },
            "request_timeout_ms",
            -5,
        );
        refused(
            LikeClientOptions {
                retry_min_delay_ms: Some(-1),
                ..base()
            },
            "retry_min_delay_ms",
            -1,
        );
        refused(
            LikeClientOptions {
                retry_max_delay_ms: Some(-1),
                ..base()
            },
            "retry_max_delay_ms",
            -1,
        );
        refused(
            LikeClientOptions {
                max_retries: Some(-1),
                ..base()
            },
            "max_retries",
            -1,
        );
        refused(
            LikeClientOptions {
                max_posts: Some(-2),
                ..base()
            },
            "max_posts",
            -2,
        );
        refused(
            LikeClientOptions {
                max_answer_bytes: Some(i64::MIN),
                ..base()
            },
            "max_answer_bytes",
            i64::MIN,
        );
        refused(
            LikeClientOptions {
                max_intent_age_ms: Some(-1),
                ..base()
            },
            "max_intent_age_ms",
            -1,
        );
        refused(
            LikeClientOptions {
                keep_while_offline_ms: Some(-1),
                ..base()
            },
            "keep_while_offline_ms",
            -1,
        );
        // Zero is a count like any other (no retries), and a negative seed
        // is 64 bits of seed.
        let options = LikeClientOptions {
            max_retries: Some(0),
            retry_seed: Some(-7),
            ..base()
        };
        let policy = options.retry_policy().unwrap();
        assert_eq!(policy.max_retries, 0);
        assert_eq!(policy.seed, Some((-7i64) as u64));
    }

    /// The first option `options` has that the constructor refuses.
    fn builder_error(options: &LikeClientOptions) -> Option<LikeError> {
        options
            .retry_policy()
            .err()
            .or_else(|| options.request_timeout().err())
            .or_else(|| options.max_posts().err())
            .or_else(|| options.max_answer_bytes().err())
            .or_else(|| options.max_intent_age().err())
            .or_else(|| options.keep_while_offline().err())
    }

    #[test]
    fn views_carry_the_line_text() {
        let line = likekit_core::LikeLine::new(true, &["Ana".to_owned()], 1204);
        let view = PostView::from(likekit_core::PostView {
            post_id: PostId::new(42).unwrap(),
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
