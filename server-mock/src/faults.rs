//! Fault injection for client tests: latency, error answers and dropped
//! connections, per public route.
//!
//! Each request to a public route walks the rules in order; for every rule
//! whose route matches (or is `*`) it waits `latency_ms` plus a uniform
//! `0..=jitter_ms`, then drops the connection with probability `drop_rate`,
//! else fails if the rule still has `fail_next` failures left, else fails
//! with probability `error_rate`. The first drop or failure ends the walk.
//! Waiting is asynchronous: a slow rule never holds up other requests.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use arc_swap::ArcSwap;
use axum::http::StatusCode;
use likekit_proto::admin::{FaultRoute, FaultRule, FaultRules};

/// The most rules one `PUT /admin/faults` may set.
pub const MAX_RULES: usize = 64;
/// The longest latency (and jitter) a rule may ask for: ten minutes.
pub const MAX_LATENCY_MS: u64 = 600_000;

#[derive(Debug)]
struct ActiveRule {
    rule: FaultRule,
    fail_next_left: AtomicU64,
}

/// What to do with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Handle it normally.
    Pass,
    /// Answer this status with an `injected_fault` error.
    Fail(StatusCode),
    /// Close the connection without an answer.
    Drop,
}

#[derive(Debug, Default)]
pub(crate) struct Faults {
    rules: ArcSwap<Vec<ActiveRule>>,
}

/// Checks a rule set is usable.
pub(crate) fn validate(rules: &FaultRules) -> Result<(), String> {
    if rules.rules.len() > MAX_RULES {
        return Err(format!("at most {MAX_RULES} rules"));
    }
    for (i, rule) in rules.rules.iter().enumerate() {
        let probability = |name: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(format!("rule {i}: {name} must be between 0 and 1"))
            }
        };
        probability("error_rate", rule.error_rate)?;
        probability("drop_rate", rule.drop_rate)?;
        if !(400..=599).contains(&rule.status) {
            return Err(format!("rule {i}: status must be 400..=599"));
        }
        if rule.latency_ms > MAX_LATENCY_MS || rule.jitter_ms > MAX_LATENCY_MS {
            return Err(format!(
                "rule {i}: latency_ms and jitter_ms must be at most {MAX_LATENCY_MS}"
            ));
        }
    }
    Ok(())
}

impl Faults {
    /// Replaces every rule (call [`validate`] first).
    pub(crate) fn set(&self, rules: FaultRules) {
        let active = rules
            .rules
            .into_iter()
            .map(|rule| ActiveRule {
                fail_next_left: AtomicU64::new(rule.fail_next),
                rule,
            })
            .collect();
        self.rules.store(Arc::new(active));
    }

    /// Removes every rule.
    pub(crate) fn clear(&self) {
        self.rules.store(Arc::new(Vec::new()));
    }

    /// Applies the rules for `route` (waiting out any latency).
    /// Whether there are no rules (the common case: one cheap load, no
    /// reference count touched).
    pub(crate) fn is_empty(&self) -> bool {
        self.rules.load().is_empty()
    }

    pub(crate) async fn decide(&self, route: FaultRoute) -> Decision {
        let rules = self.rules.load_full();
        for active in rules.iter() {
            let rule = &active.rule;
            if rule.route != route && rule.route != FaultRoute::All {
                continue;
            }
            let jitter = if rule.jitter_ms > 0 {
                fastrand::u64(0..=rule.jitter_ms)
            } else {
                0
            };
            let delay = rule.latency_ms.saturating_add(jitter);
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            if rule.drop_rate > 0.0 && fastrand::f64() < rule.drop_rate {
                return Decision::Drop;
            }
            let status =
                StatusCode::from_u16(rule.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            let take_one =
                active
                    .fail_next_left
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                        left.checked_sub(1)
                    });
            if take_one.is_ok() {
                return Decision::Fail(status);
            }
            if rule.error_rate > 0.0 && fastrand::f64() < rule.error_rate {
                return Decision::Fail(status);
            }
        }
        Decision::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(route: FaultRoute) -> FaultRule {
        FaultRule::new(route)
    }

    #[tokio::test]
    async fn fail_next_counts_down_per_rule() {
        let faults = Faults::default();
        faults.set(FaultRules {
            rules: vec![FaultRule {
                fail_next: 2,
                status: 500,
                ..rule(FaultRoute::Like)
            }],
        });
        assert_eq!(faults.decide(FaultRoute::Unlike).await, Decision::Pass);
        assert_eq!(
            faults.decide(FaultRoute::Like).await,
            Decision::Fail(StatusCode::INTERNAL_SERVER_ERROR)
        );
        assert_eq!(
            faults.decide(FaultRoute::Like).await,
            Decision::Fail(StatusCode::INTERNAL_SERVER_ERROR)
        );
        assert_eq!(faults.decide(FaultRoute::Like).await, Decision::Pass);
    }

    #[tokio::test]
    async fn star_matches_every_route_and_clear_removes() {
        let faults = Faults::default();
        faults.set(FaultRules {
            rules: vec![FaultRule {
                drop_rate: 1.0,
                ..rule(FaultRoute::All)
            }],
        });
        for route in [
            FaultRoute::Like,
            FaultRoute::Unlike,
            FaultRoute::Likes,
            FaultRoute::Batch,
        ] {
            assert_eq!(faults.decide(route).await, Decision::Drop);
        }
        faults.clear();
        assert_eq!(faults.decide(FaultRoute::Like).await, Decision::Pass);
    }

    #[test]
    fn validation_catches_bad_rules() {
        let bad = [
            FaultRule {
                error_rate: 1.5,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                drop_rate: -0.1,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                status: 200,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                latency_ms: MAX_LATENCY_MS + 1,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                error_rate: f64::NAN,
                ..rule(FaultRoute::All)
            },
        ];
        for rule in bad {
            assert!(
                validate(&FaultRules {
                    rules: vec![rule.clone()]
                })
                .is_err(),
                "{rule:?}"
            );
        }
        assert!(
            validate(&FaultRules {
                rules: vec![rule(FaultRoute::Like)]
            })
            .is_ok()
        );
    }
}
