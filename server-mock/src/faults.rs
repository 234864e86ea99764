//! Fault injection for client tests: rules that match requests to the
//! public routes and delay, refuse, cut or spoil them, before the request
//! is handled or after (see [`FaultRule`] for the language).
//!
//! [`Faults::plan`] walks the `before` rules when a request arrives and
//! returns a [`Plan`]: the delay and the act before the handler, and the
//! `after` rules the request matched. Those are walked
//! ([`AfterRules::walk`]) once the handler has answered, and only when it
//! answered 2xx: an `after` rule is about a request that was carried out
//! (a write that committed, a read that was answered), so an answer the
//! handler refused (401, 404, 429, …) uses none of it up. Every draw (a
//! rule's probability, its jitter, `drop_rate`, `error_rate`) comes from
//! the rule set's seed, the rule's number in the set and the call's number
//! for that rule. The middleware carries the plan out
//! ([`crate::middleware`]); an act is counted in its rule's `acted` when it
//! is carried out ([`Acting::carry_out`]).
//!
//! Rules are put as a set ([`Faults::set`]), added after those in force
//! ([`Faults::add`]) and removed by tag ([`Faults::remove_tagged`]); the
//! rules that stay keep their counters and their number, so their faults
//! go on as if nothing had changed.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use arc_swap::ArcSwap;
use axum::http::StatusCode;
use likekit_proto::{
    PostId, UserId,
    admin::{
        FaultAction, FaultMethod, FaultPhase, FaultRoute, FaultRule, FaultRules, RuleState,
        check_tag,
    },
};

pub use likekit_proto::admin::{MAX_LATENCY_MS, MAX_OVERSIZED_BYTES, MAX_RULES};

/// The smallest `oversized` action's `bytes`: its answer is a JSON object
/// of exactly that size, and none is shorter than `{}`.
pub(crate) const MIN_OVERSIZED_BYTES: u64 = 2;

#[derive(Debug)]
struct ActiveRule {
    rule: FaultRule,
    /// The rule's `tag`, shared with the plans that name the rule.
    tag: Option<Arc<str>>,
    /// Its number in the set, which its draws come from: its place when
    /// the set was put, and for a rule added later the next number after
    /// every rule the set has had. It stays when other rules are removed.
    number: u64,
    /// Calls counted so far: the requests a `before` rule matched; for an
    /// `after` rule, those of them its handler answered 2xx.
    calls: AtomicU64,
    /// Calls it fired on (selected, and the draw passed).
    fired: AtomicU64,
    /// Acts it carried out.
    acted: AtomicU64,
    fail_next_left: AtomicU64,
}

#[derive(Debug, Default)]
struct RuleSet {
    /// `None` before the first rule set and after a clear.
    seed: Option<u64>,
    /// Shared with the sets that follow this one (rules added or removed),
    /// so that a rule's counters go on across them.
    rules: Vec<Arc<ActiveRule>>,
    /// The number the next rule added gets.
    next_number: u64,
}

/// What a rule does to a request (one of [`FaultAction`], or an injected
/// error from today's fields).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Act {
    /// Answer this status with `body` (or the `injected_fault` error body).
    Status {
        status: StatusCode,
        body: Option<serde_json::Value>,
        retry_after_secs: Option<u64>,
    },
    Drop,
    Reset,
    Hang,
    Truncate(u32),
    Malformed,
    SlowBody {
        bytes: u32,
        interval: Duration,
    },
    Oversized(u64),
}

/// The act a rule chose for a request, not yet carried out. It is counted
/// in the rule's `acted` when it is ([`Acting::carry_out`]); dropped
/// before that (the request timeout or the client ended the request during
/// a latency), a `fail_next` failure it took is given back, so that the
/// rule's next call gets it.
#[derive(Debug)]
pub(crate) struct Acting {
    act: Act,
    /// The rule, as the journal names it.
    pub(crate) rule: RuleRef,
    active: Arc<ActiveRule>,
    took_fail_next: bool,
    carried_out: bool,
}

impl Acting {
    /// The act, to note before it is carried out.
    pub(crate) fn act(&self) -> &Act {
        &self.act
    }

    /// Counts the act in its rule's `acted`, and hands it over to be
    /// carried out.
    pub(crate) fn carry_out(mut self) -> Act {
        self.carried_out = true;
        self.active.acted.fetch_add(1, Ordering::AcqRel);
        std::mem::replace(&mut self.act, Act::Drop)
    }
}

impl Drop for Acting {
    fn drop(&mut self) {
        if !self.carried_out && self.took_fail_next {
            self.active.fail_next_left.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// What to do in one phase: wait, then act (or not).
#[derive(Debug, Default)]
pub(crate) struct Step {
    pub(crate) delay: Duration,
    /// The act, and the rule whose act it is.
    pub(crate) acting: Option<Acting>,
    /// The first rule whose latency is part of `delay`, for the journal
    /// when no rule acts.
    pub(crate) delayed_by: Option<RuleRef>,
}

impl Step {
    /// Whether the step neither waits nor acts.
    pub(crate) fn is_empty(&self) -> bool {
        self.delay.is_zero() && self.acting.is_none()
    }
}

/// A rule as the journal names it: its place in the set when the plan was
/// made, and its tag (which, unlike the place, no removal changes).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleRef {
    pub(crate) place: usize,
    pub(crate) tag: Option<Arc<str>>,
}

/// The faults for one request: its `before` step, and the `after` rules
/// to walk once the handler has answered.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) before: Step,
    pub(crate) after: AfterRules,
}

impl Plan {
    /// Whether the plan changes nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.rules.is_empty()
    }
}

/// The `after` rules a request matched when it arrived, in order, with
/// their places then and the seed.
#[derive(Debug, Default)]
pub(crate) struct AfterRules {
    seed: u64,
    rules: Vec<(usize, Arc<ActiveRule>)>,
}

impl AfterRules {
    /// What the `after` rules do to the handler's answer of `status`. Only
    /// a 2xx answer is theirs: on any other, none of them counts the call,
    /// fires, draws or acts, and the answer goes out as it is. On a 2xx
    /// they are walked as the `before` rules are on arrival.
    pub(crate) fn walk(&self, status: StatusCode) -> Step {
        let mut step = Step::default();
        if status.is_success() {
            for (place, active) in &self.rules {
                take_call(active, self.seed, *place, &mut step);
            }
        }
        step
    }
}

/// One request, as the rules see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) route: FaultRoute,
    pub(crate) method: FaultMethod,
    /// The post the path names, or the posts a batch read asks for.
    pub(crate) posts: &'a [PostId],
    /// The signed-in user, when a rule needs it and the token is valid.
    pub(crate) user: Option<UserId>,
}

#[derive(Debug, Default)]
pub(crate) struct Faults {
    set: ArcSwap<RuleSet>,
    /// Held by each change of the set, so that one never loses another
    /// (two tests adding rules at once both get theirs); requests read the
    /// set without it.
    changing: Mutex<()>,
}

/// Refuses what the server's request timeout would always cut short,
/// counted from the request's arrival:
///
/// - a `slow_body` whose pause between pieces is not shorter than it: the
///   server closes a connection whose answer moves nothing for the request
///   timeout plus the header-read timeout (a client that does not read),
///   and a pause that long would be taken for one;
/// - an `action` behind a `latency_ms` that is not shorter than it: the
///   client would always get the 503 `timeout`, never the action.
///
/// A `jitter_ms` that reaches past the timeout is taken: the calls whose
/// drawn wait stays below it get the action, the others time out, and
/// those acts are not counted (`acted` counts acts carried out). It is
/// the one bound the OpenAPI document can state of the rule (a maximum of
/// one field; JSON Schema has no sum of two). A rule with only the first
/// language's acts (`drop_rate`, `error_rate`, `fail_next`) behind such a
/// latency is taken, as it always was: it times the request out, and
/// spends nothing.
pub(crate) fn check_pauses(rules: &FaultRules, request_timeout: Duration) -> Result<(), String> {
    let timeout_ms = request_timeout.as_millis();
    for (i, rule) in rules.rules.iter().enumerate() {
        if let Some(FaultAction::SlowBody { interval_ms, .. }) = &rule.action
            && u128::from(*interval_ms) >= timeout_ms
        {
            return Err(format!(
                "rules[{i}].action.interval_ms: must be below the server's request timeout \
                 ({timeout_ms} ms); got {interval_ms}"
            ));
        }
        if rule.action.is_some() && u128::from(rule.latency_ms) >= timeout_ms {
            return Err(format!(
                "rules[{i}].latency_ms: with an action, must be below the server's request \
                 timeout ({timeout_ms} ms), or the request always times out before the action; \
                 got {}",
                rule.latency_ms
            ));
        }
    }
    Ok(())
}

/// Whether an answer with `status` may carry a body: not a 204 (No
/// Content), 205 (Reset Content) or 304 (Not Modified), RFC 9110 15.3.5,
/// 15.3.6 and 15.4.5 (the 1xx answers are not staged).
pub(crate) fn carries_body(status: StatusCode) -> bool {
    !matches!(
        status,
        StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT | StatusCode::NOT_MODIFIED
    )
}

/// Checks a rule set is usable. A refusal names the field the way a
/// `bad_json` refusal does (`rules[2].action.status: …`) and the value
/// given.
pub(crate) fn validate(rules: &FaultRules) -> Result<(), String> {
    if rules.rules.len() > MAX_RULES {
        return Err(format!(
            "rules: at most {MAX_RULES} rules; got {}",
            rules.rules.len()
        ));
    }
    for (i, rule) in rules.rules.iter().enumerate() {
        let probability = |name: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(format!("rules[{i}].{name}: must be from 0 to 1; got {p}"))
            }
        };
        probability("error_rate", rule.error_rate)?;
        probability("drop_rate", rule.drop_rate)?;
        probability("probability", rule.probability)?;
        if !(400..=599).contains(&rule.status) {
            return Err(format!(
                "rules[{i}].status: must be from 400 to 599; got {}",
                rule.status
            ));
        }
        for (name, value) in [
            ("latency_ms", rule.latency_ms),
            ("jitter_ms", rule.jitter_ms),
        ] {
            if value > MAX_LATENCY_MS {
                return Err(format!(
                    "rules[{i}].{name}: must be at most {MAX_LATENCY_MS}; got {value}"
                ));
            }
        }
        for (name, value) in [
            ("nth", rule.nth),
            ("every", rule.every),
            ("first", rule.first),
        ] {
            if value == Some(0) {
                return Err(format!("rules[{i}].{name}: must be at least 1; got 0"));
            }
        }
        if let Some(tag) = &rule.tag {
            check_tag(tag).map_err(|rule| format!("rules[{i}].tag: {rule}"))?;
        }
        never_fires(rule).map_err(|why| format!("rules[{i}].{why}"))?;
        never_acts(rule).map_err(|why| format!("rules[{i}].{why}"))?;
        let Some(action) = &rule.action else {
            continue;
        };
        match action {
            FaultAction::Status { status, .. } if !(200..=599).contains(status) => {
                return Err(format!(
                    "rules[{i}].action.status: must be from 200 to 599; got {status}"
                ));
            }
            FaultAction::Status {
                status,
                body: Some(_),
                ..
            } if StatusCode::from_u16(*status).is_ok_and(|s| !carries_body(s)) => {
                return Err(format!(
                    "rules[{i}].action.body: a {status} answer carries no body; leave it out"
                ));
            }
            FaultAction::Truncate { .. } | FaultAction::SlowBody { .. }
                if rule.phase != FaultPhase::After =>
            {
                return Err(format!(
                    "rules[{i}].phase: truncate and slow_body shape the real answer, so the \
                     phase must be \"after\""
                ));
            }
            FaultAction::SlowBody { bytes: 0, .. } => {
                return Err(format!(
                    "rules[{i}].action.bytes: must be at least 1; got 0"
                ));
            }
            FaultAction::SlowBody { interval_ms, .. } if *interval_ms > MAX_LATENCY_MS => {
                return Err(format!(
                    "rules[{i}].action.interval_ms: must be at most {MAX_LATENCY_MS}; got \
                     {interval_ms}"
                ));
            }
            FaultAction::Oversized { bytes } if *bytes < MIN_OVERSIZED_BYTES => {
                return Err(format!(
                    "rules[{i}].action.bytes: must be at least {MIN_OVERSIZED_BYTES} (the \
                     answer is a JSON object of that size, and `{{}}` is the smallest); got \
                     {bytes}"
                ));
            }
            FaultAction::Oversized { bytes } if *bytes > MAX_OVERSIZED_BYTES => {
                return Err(format!(
                    "rules[{i}].action.bytes: must be at most {MAX_OVERSIZED_BYTES}; got {bytes}"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The one method each route answers (`*` takes them all).
fn route_method(route: FaultRoute) -> Option<FaultMethod> {
    match route {
        FaultRoute::Like => Some(FaultMethod::Post),
        FaultRoute::Unlike => Some(FaultMethod::Delete),
        FaultRoute::Likes | FaultRoute::Batch => Some(FaultMethod::Get),
        FaultRoute::All => None,
    }
}

/// Refuses a rule whose conditions no request can meet, which would be
/// accepted and then never fire: a method its route never answers. The
/// refusal starts with the field to change. (Call conditions that select
/// no call, `nth: 5` with `first: 4`, are taken: the OpenAPI document
/// cannot say so of one field against another, and a contract test would
/// then send such a rule as valid; `GET /admin/faults` shows such a rule
/// firing never, in its `state`.)
fn never_fires(rule: &FaultRule) -> Result<(), String> {
    let name = |method: FaultMethod| match method {
        FaultMethod::Get => "GET",
        FaultMethod::Post => "POST",
        FaultMethod::Delete => "DELETE",
    };
    if let (Some(method), Some(only)) = (rule.method, route_method(rule.route))
        && method != only
    {
        let route = serde_json::to_value(rule.route).unwrap_or_default();
        return Err(format!(
            "method: route {route} is only ever {}, so a rule for {} never fires",
            name(only),
            name(method)
        ));
    }
    Ok(())
}

/// The largest seed the server picks: 2^53 − 1, JavaScript's largest
/// exact integer, so that a picked seed is a plain number in every
/// client's JSON (a test pastes it back as written). A seed given may be
/// any u64.
pub(crate) const MAX_PICKED_SEED: u64 = (1 << 53) - 1;

/// A seed for a rule set put without one.
fn picked_seed() -> u64 {
    fastrand::u64(..=MAX_PICKED_SEED)
}

/// Refuses a rule part that could never act, which would be accepted and
/// then do nothing. When a rule fires it tries, in order, `drop_rate`'s
/// draw, `fail_next` while some are left, `error_rate`'s draw, then its
/// `action`; the first that applies acts. Refused, on a rule with an
/// `action`:
///
/// - a `status` other than 503 that neither `error_rate` nor `fail_next`
///   answers: it reads as the action's status, and is never answered;
/// - a `drop_rate` or an `error_rate` of 1, which acts on every call the
///   rule fires on, so the action never does.
///
/// The first fault language's fields among themselves (no `action`) are
/// taken as they always were, since a rule body of that language stays
/// valid: a `status` that nothing answers is unused, and a `drop_rate` of
/// 1 hides `fail_next` and `error_rate`. A rule with no effect at all is
/// taken too: it counts the calls it matches, which `GET /admin/faults`
/// reports. (The OpenAPI document states each refusal here, and a
/// contract tester's generator gives up on a document that states more
/// cases; see `openapi::rules_that_act`.)
fn never_acts(rule: &FaultRule) -> Result<(), String> {
    if rule.action.is_none() {
        return Ok(());
    }
    let answers_status = rule.error_rate > 0.0 || rule.fail_next > 0;
    if rule.status != 503 && !answers_status {
        return Err(format!(
            "status: {} is what error_rate and fail_next answer, and this rule has neither; \
             to answer it, use an action: {{\"kind\": \"status\", \"status\": {}}}",
            rule.status, rule.status
        ));
    }
    if rule.drop_rate >= 1.0 {
        return Err(
            "action: drop_rate 1 drops every call the rule fires on, so the action never runs"
                .to_owned(),
        );
    }
    if rule.error_rate >= 1.0 {
        return Err(
            "action: error_rate 1 answers every call the rule fires on, so the action never \
             runs"
                .to_owned(),
        );
    }
    Ok(())
}

/// A uniform draw in `0..1` from (seed, rule number, call, which draw):
/// the same four numbers always give the same draw (splitmix64's
/// finalizer).
fn draw(seed: u64, rule: u64, call: u64, which: u64) -> f64 {
    let mut z = seed
        ^ rule.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ call.wrapping_mul(0xbf58_476d_1ce4_e5b9)
        ^ which.wrapping_mul(0x94d0_49bb_1331_11eb);
    for _ in 0..2 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
    }
    (z >> 11) as f64 / (1u64 << 53) as f64
}

impl ActiveRule {
    /// `rule`, numbered `number`, with nothing used up.
    fn new(rule: FaultRule, number: u64) -> Arc<Self> {
        Arc::new(Self {
            number,
            tag: rule.tag.as_deref().map(Arc::from),
            calls: AtomicU64::new(0),
            fired: AtomicU64::new(0),
            acted: AtomicU64::new(0),
            fail_next_left: AtomicU64::new(rule.fail_next),
            rule,
        })
    }

    /// The rule at place `place`, as a plan names it.
    fn named(&self, place: usize) -> RuleRef {
        RuleRef {
            place,
            tag: self.tag.clone(),
        }
    }

    /// Whether the rule is about this request (route, method, post, user).
    fn matches(&self, call: &Call<'_>) -> bool {
        let rule = &self.rule;
        (rule.route == call.route || rule.route == FaultRoute::All)
            && rule.method.is_none_or(|m| m == call.method)
            && rule.post.is_none_or(|p| call.posts.contains(&p))
            && rule.user.is_none_or(|u| call.user == Some(u))
    }

    /// What the rule has used up so far.
    fn state(&self) -> RuleState {
        let rule = &self.rule;
        let matched = self.calls.load(Ordering::Acquire);
        RuleState {
            matched,
            fired: self.fired.load(Ordering::Acquire),
            acted: self.acted.load(Ordering::Acquire),
            fail_next_left: (rule.fail_next > 0)
                .then(|| self.fail_next_left.load(Ordering::Acquire)),
            first_left: rule.first.map(|first| first.saturating_sub(matched)),
        }
    }

    /// Whether the call conditions select call number `n`.
    fn selects(&self, n: u64) -> bool {
        let rule = &self.rule;
        rule.nth.is_none_or(|nth| n == nth)
            && rule.every.is_none_or(|every| n % every == 0)
            && rule.first.is_none_or(|first| n <= first)
            && rule.after.is_none_or(|after| n > after)
    }
}

/// Counts one call for `active` (at place `place`), and, unless a rule
/// before it in `step` acts already, fires it on that call when its
/// conditions select the call and its draw passes: its latency is added
/// to `step`, and its act, if it has one for this call, is the step's.
fn take_call(active: &Arc<ActiveRule>, seed: u64, place: usize, step: &mut Step) {
    let n = active.calls.fetch_add(1, Ordering::AcqRel) + 1;
    if step.acting.is_some() {
        return;
    }
    let rule = &active.rule;
    let number = active.number;
    if !active.selects(n) || draw(seed, number, n, 0) >= rule.probability {
        return;
    }
    active.fired.fetch_add(1, Ordering::AcqRel);
    let jitter = if rule.jitter_ms > 0 {
        (draw(seed, number, n, 1) * (rule.jitter_ms + 1) as f64) as u64
    } else {
        0
    };
    let delay = Duration::from_millis(rule.latency_ms.saturating_add(jitter));
    if !delay.is_zero() {
        step.delay += delay;
        if step.delayed_by.is_none() {
            step.delayed_by = Some(active.named(place));
        }
    }
    let injected = || Act::Status {
        status: StatusCode::from_u16(rule.status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
        body: None,
        retry_after_secs: None,
    };
    let mut took_fail_next = false;
    let act = if rule.drop_rate > 0.0 && draw(seed, number, n, 2) < rule.drop_rate {
        Some(Act::Drop)
    } else if active
        .fail_next_left
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
            left.checked_sub(1)
        })
        .is_ok()
    {
        took_fail_next = true;
        Some(injected())
    } else if rule.error_rate > 0.0 && draw(seed, number, n, 3) < rule.error_rate {
        Some(injected())
    } else {
        rule.action.as_ref().map(act_of)
    };
    step.acting = act.map(|act| Acting {
        act,
        rule: active.named(place),
        active: Arc::clone(active),
        took_fail_next,
        carried_out: false,
    });
}

impl RuleSet {
    /// The rules as put, their seed, and what each has used up (a `state`
    /// given in the `PUT` is not kept: the counters start at 0).
    fn in_force(&self) -> FaultRules {
        FaultRules {
            seed: self.seed,
            rules: self.rules.iter().map(|a| a.rule.clone()).collect(),
            state: self.rules.iter().map(|a| a.state()).collect(),
        }
    }
}

/// Why [`Faults::add`] added nothing: the rules would be more than
/// [`MAX_RULES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooManyRules {
    /// The rules in force.
    pub(crate) in_force: usize,
    /// The rules to add.
    pub(crate) added: usize,
    /// The tags holding the most rules in force, with their counts (at
    /// most three; `None` for the rules without a tag): most often a
    /// test that did not remove its rules.
    pub(crate) holders: Vec<(Option<Arc<str>>, usize)>,
}

/// [`TooManyRules`] when `added` rules beside the rules in force would be
/// more than [`MAX_RULES`].
fn room(in_force: &[Arc<ActiveRule>], added: usize) -> Result<(), TooManyRules> {
    if in_force.len().saturating_add(added) <= MAX_RULES {
        return Ok(());
    }
    let mut counts: Vec<(Option<Arc<str>>, usize)> = Vec::new();
    for rule in in_force {
        match counts.iter_mut().find(|(tag, _)| *tag == rule.tag) {
            Some((_, count)) => *count += 1,
            None => counts.push((rule.tag.clone(), 1)),
        }
    }
    // The most first; between equal counts, the tag seen first.
    counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    counts.truncate(3);
    Err(TooManyRules {
        in_force: in_force.len(),
        added,
        holders: counts,
    })
}

impl std::fmt::Display for TooManyRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rules: at most {MAX_RULES} rules in force; {} are, and {} more would make {}",
            self.in_force,
            self.added,
            self.in_force.saturating_add(self.added)
        )?;
        for (i, (tag, count)) in self.holders.iter().enumerate() {
            f.write_str(if i == 0 { " (the most: " } else { ", " })?;
            match tag {
                Some(tag) => write!(f, "{count} tagged {tag}")?,
                None => write!(f, "{count} without a tag")?,
            }
        }
        if !self.holders.is_empty() {
            f.write_str("; a test removes its own with DELETE /admin/faults?tag=…)")?;
        }
        Ok(())
    }
}

impl Faults {
    /// Replaces every rule (call [`validate`] first); returns the rules
    /// with the seed in use (the given one, or one picked now).
    pub(crate) fn set(&self, rules: FaultRules) -> FaultRules {
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let seed = rules.seed.unwrap_or_else(picked_seed);
        let active: Vec<_> = rules
            .rules
            .into_iter()
            .zip(0..)
            .map(|(rule, number)| ActiveRule::new(rule, number))
            .collect();
        let set = Arc::new(RuleSet {
            seed: Some(seed),
            next_number: active.len() as u64,
            rules: active,
        });
        self.set.store(set.clone());
        set.in_force()
    }

    /// Adds `rules` after those in force (call [`validate`] on them first),
    /// which keep their counters, their numbers and the seed (one is
    /// picked now when there is none); returns every rule now in force,
    /// the added ones last. Nothing is added when the rules would be more
    /// than [`MAX_RULES`].
    pub(crate) fn add(&self, rules: Vec<FaultRule>) -> Result<FaultRules, TooManyRules> {
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.set.load_full();
        room(&now.rules, rules.len())?;
        let mut active = now.rules.clone();
        let mut next_number = now.next_number;
        for rule in rules {
            active.push(ActiveRule::new(rule, next_number));
            next_number += 1;
        }
        let set = Arc::new(RuleSet {
            seed: Some(now.seed.unwrap_or_else(picked_seed)),
            rules: active,
            next_number,
        });
        self.set.store(set.clone());
        Ok(set.in_force())
    }

    /// Removes the rules tagged `tag`; the others keep their counters,
    /// their numbers and the seed. Returns how many were removed, and the
    /// rules left in force.
    pub(crate) fn remove_tagged(&self, tag: &str) -> (usize, FaultRules) {
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.set.load_full();
        let kept: Vec<_> = now
            .rules
            .iter()
            .filter(|a| a.rule.tag.as_deref() != Some(tag))
            .cloned()
            .collect();
        let removed = now.rules.len() - kept.len();
        let set = Arc::new(RuleSet {
            seed: now.seed,
            rules: kept,
            next_number: now.next_number,
        });
        self.set.store(set.clone());
        (removed, set.in_force())
    }

    /// Whether `added` more rules fit beside those in force now: checked
    /// before the rules themselves, so that too many rules are a
    /// [`TooManyRules`] whatever else is wrong with them. ([`Faults::add`]
    /// checks again as it adds.)
    pub(crate) fn check_room(&self, added: usize) -> Result<(), TooManyRules> {
        room(&self.set.load().rules, added)
    }

    /// The rules in force, their seed, and what each has used up.
    pub(crate) fn get(&self) -> FaultRules {
        self.set.load().in_force()
    }

    /// The rules in force tagged `tag`, in their order, with what each has
    /// used up, and the seed.
    pub(crate) fn get_tagged(&self, tag: &str) -> FaultRules {
        let mut in_force = self.get();
        let (rules, state) = in_force
            .rules
            .into_iter()
            .zip(in_force.state)
            .filter(|(rule, _)| rule.tag.as_deref() == Some(tag))
            .unzip();
        in_force.rules = rules;
        in_force.state = state;
        in_force
    }

    /// Removes every rule, and the seed with them.
    pub(crate) fn clear(&self) {
        let _changing = self.changing.lock().unwrap_or_else(|e| e.into_inner());
        self.set.store(Arc::default());
    }

    /// Whether there are no rules (the common case: one cheap load, no
    /// reference count touched).
    pub(crate) fn is_empty(&self) -> bool {
        self.set.load().rules.is_empty()
    }

    /// Whether some rule is limited to one user (the middleware then reads
    /// the request's token before the handler does).
    pub(crate) fn wants_user(&self) -> bool {
        self.set.load().rules.iter().any(|a| a.rule.user.is_some())
    }

    /// What the rules do to `call` as it arrives: the `before` rules it
    /// matches are walked now, and the `after` rules it matches are kept,
    /// to walk once the handler answers ([`AfterRules::walk`]). Each rule
    /// walked counts the call, so that a rule's call numbers are the calls
    /// it is about whatever the rules before it did; the rules after the
    /// one that acts count it but do not fire (no latency, no draw, no
    /// `fail_next` used). When a `before` rule acts the handler never
    /// runs, and no `after` rule sees the request.
    pub(crate) fn plan(&self, call: &Call<'_>) -> Plan {
        let set = self.set.load();
        let seed = set.seed.unwrap_or_default();
        let mut plan = Plan::default();
        for (place, active) in set.rules.iter().enumerate() {
            if !active.matches(call) {
                continue;
            }
            match active.rule.phase {
                FaultPhase::Before => take_call(active, seed, place, &mut plan.before),
                FaultPhase::After => plan.after.rules.push((place, Arc::clone(active))),
            }
        }
        if plan.before.acting.is_some() {
            plan.after.rules.clear();
        }
        plan.after.seed = seed;
        plan
    }
}

fn act_of(action: &FaultAction) -> Act {
    match action {
        FaultAction::Status {
            status,
            body,
            retry_after_secs,
        } => Act::Status {
            status: StatusCode::from_u16(*status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            body: body.clone(),
            retry_after_secs: *retry_after_secs,
        },
        FaultAction::Drop {} => Act::Drop,
        FaultAction::Reset {} => Act::Reset,
        FaultAction::Hang {} => Act::Hang,
        FaultAction::Truncate { bytes } => Act::Truncate(*bytes),
        FaultAction::Malformed {} => Act::Malformed,
        FaultAction::SlowBody { bytes, interval_ms } => Act::SlowBody {
            bytes: *bytes,
            interval: Duration::from_millis(*interval_ms),
        },
        FaultAction::Oversized { bytes } => Act::Oversized(*bytes),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rule(route: FaultRoute) -> FaultRule {
        FaultRule::new(route)
    }

    fn call(route: FaultRoute) -> Call<'static> {
        let method = match route {
            FaultRoute::Like => FaultMethod::Post,
            FaultRoute::Unlike => FaultMethod::Delete,
            _ => FaultMethod::Get,
        };
        Call {
            route,
            method,
            posts: &[],
            user: None,
        }
    }

    /// What the rules did to one call, carried out as the middleware
    /// does: the delay of each phase and the rule it names, and the act
    /// (counted in its rule's `acted`), its phase and its rule.
    #[derive(Debug, PartialEq)]
    struct Outcome {
        delays: [Duration; 2],
        delayed_by: [Option<RuleRef>; 2],
        act: Option<Act>,
        phase: Option<FaultPhase>,
        rule: Option<RuleRef>,
    }

    /// `call` through the rules, its handler answering `status` (when a
    /// `before` rule lets it run).
    fn outcome(faults: &Faults, call: &Call<'_>, status: StatusCode) -> Outcome {
        let Plan { before, after } = faults.plan(call);
        let mut outcome = Outcome {
            delays: [before.delay, Duration::ZERO],
            delayed_by: [before.delayed_by, None],
            act: None,
            phase: None,
            rule: None,
        };
        let (phase, acting) = match before.acting {
            Some(acting) => (FaultPhase::Before, acting),
            None => {
                let step = after.walk(status);
                outcome.delays[1] = step.delay;
                outcome.delayed_by[1] = step.delayed_by;
                let Some(acting) = step.acting else {
                    return outcome;
                };
                (FaultPhase::After, acting)
            }
        };
        outcome.rule = Some(acting.rule.clone());
        outcome.act = Some(acting.carry_out());
        outcome.phase = Some(phase);
        outcome
    }

    /// The act on `call`, its handler answering 200.
    fn act(faults: &Faults, call: &Call<'_>) -> Option<Act> {
        outcome(faults, call, StatusCode::OK).act
    }

    const FAIL_500: Option<Act> = Some(Act::Status {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        body: None,
        retry_after_secs: None,
    });

    #[test]
    fn fail_next_counts_down_per_rule() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![FaultRule {
            fail_next: 2,
            status: 500,
            ..rule(FaultRoute::Like)
        }]));
        assert_eq!(act(&faults, &call(FaultRoute::Unlike)), None);
        assert_eq!(act(&faults, &call(FaultRoute::Like)), FAIL_500);
        assert_eq!(act(&faults, &call(FaultRoute::Like)), FAIL_500);
        assert_eq!(act(&faults, &call(FaultRoute::Like)), None);
    }

    /// `get` reports, per rule, the calls matched, fired on and acted on,
    /// and what is left of `fail_next` and `first`; a new `set` starts
    /// them over, whatever `state` it is given.
    #[test]
    fn get_reports_what_each_rule_used_up() {
        let faults = Faults::default();
        let set = faults.set(FaultRules::new(vec![
            FaultRule {
                latency_ms: 5,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                fail_next: 2,
                ..rule(FaultRoute::Likes)
            },
            FaultRule {
                first: Some(5),
                action: Some(FaultAction::Drop {}),
                ..rule(FaultRoute::All)
            },
        ]));
        let fresh = RuleState {
            fail_next_left: Some(2),
            ..RuleState::default()
        };
        assert_eq!(set.state[1], fresh);
        let acts: Vec<_> = [
            FaultRoute::Likes,
            FaultRoute::Likes,
            FaultRoute::Likes,
            FaultRoute::Like,
        ]
        .into_iter()
        .map(|route| act(&faults, &call(route)))
        .collect();
        let injected = Some(Act::Status {
            status: StatusCode::SERVICE_UNAVAILABLE,
            body: None,
            retry_after_secs: None,
        });
        assert_eq!(
            acts,
            [injected.clone(), injected, Some(Act::Drop), Some(Act::Drop)]
        );
        let used = faults.get();
        assert_eq!(used.rules, set.rules, "the rules read back as put");
        let state = |matched, fired, acted| RuleState {
            matched,
            fired,
            acted,
            ..RuleState::default()
        };
        assert_eq!(
            used.state,
            [
                state(4, 4, 0),
                RuleState {
                    fail_next_left: Some(0),
                    ..state(3, 3, 2)
                },
                RuleState {
                    first_left: Some(1),
                    ..state(4, 2, 2)
                },
            ]
        );
        // Put back as read, the rules start over.
        let again = faults.set(used);
        assert_eq!(again.state[1], fresh);
        assert_eq!(faults.get().state[0], RuleState::default());
        faults.clear();
        assert!(faults.get().state.is_empty());
    }

    /// A rule's call numbers count every request it matches, also those
    /// an earlier rule acted on: `nth: 2` is the second like, and the
    /// later rule's `fail_next` is not used up by a request it did not
    /// answer.
    #[test]
    fn rules_after_the_one_that_acts_still_count_the_call() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![
            FaultRule {
                nth: Some(1),
                action: Some(FaultAction::Reset {}),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                nth: Some(2),
                action: Some(FaultAction::Drop {}),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                fail_next: 1,
                status: 500,
                ..rule(FaultRoute::Like)
            },
        ]));
        let likes: Vec<_> = (0..4)
            .map(|_| act(&faults, &call(FaultRoute::Like)))
            .collect();
        assert_eq!(likes, [Some(Act::Reset), Some(Act::Drop), FAIL_500, None]);
    }

    #[test]
    fn star_matches_every_route_and_clear_removes() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![FaultRule {
            drop_rate: 1.0,
            ..rule(FaultRoute::All)
        }]));
        for route in [
            FaultRoute::Like,
            FaultRoute::Unlike,
            FaultRoute::Likes,
            FaultRoute::Batch,
        ] {
            assert_eq!(act(&faults, &call(route)), Some(Act::Drop));
        }
        faults.clear();
        assert!(faults.plan(&call(FaultRoute::Like)).is_empty());
    }

    #[test]
    fn call_numbers_select_calls() {
        let faults = Faults::default();
        let drop = Some(FaultAction::Drop {});
        faults.set(FaultRules::new(vec![
            FaultRule {
                nth: Some(2),
                action: drop.clone(),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                every: Some(3),
                action: Some(FaultAction::Reset {}),
                ..rule(FaultRoute::Unlike)
            },
            FaultRule {
                after: Some(1),
                first: Some(3),
                action: Some(FaultAction::Malformed {}),
                ..rule(FaultRoute::Likes)
            },
        ]));
        let likes: Vec<_> = (0..4)
            .map(|_| act(&faults, &call(FaultRoute::Like)))
            .collect();
        assert_eq!(likes, [None, Some(Act::Drop), None, None]);
        let unlikes: Vec<_> = (0..6)
            .map(|_| act(&faults, &call(FaultRoute::Unlike)))
            .collect();
        let reset = Some(Act::Reset);
        assert_eq!(unlikes, [None, None, reset.clone(), None, None, reset]);
        let reads: Vec<_> = (0..4)
            .map(|_| act(&faults, &call(FaultRoute::Likes)))
            .collect();
        let m = Some(Act::Malformed);
        assert_eq!(reads, [None, m.clone(), m, None]);
    }

    #[test]
    fn method_post_and_user_narrow_a_rule() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![FaultRule {
            method: Some(FaultMethod::Delete),
            post: Some(PostId::new(42).unwrap()),
            user: Some(UserId::new(7).unwrap()),
            action: Some(FaultAction::Drop {}),
            ..rule(FaultRoute::All)
        }]));
        let p42 = [PostId::new(42).unwrap()];
        let p43 = [PostId::new(43).unwrap()];
        let u7 = Some(UserId::new(7).unwrap());
        let mut c = Call {
            route: FaultRoute::Unlike,
            method: FaultMethod::Delete,
            posts: &p42,
            user: u7,
        };
        assert_eq!(act(&faults, &c), Some(Act::Drop));
        c.posts = &p43;
        assert_eq!(act(&faults, &c), None);
        c.posts = &p42;
        c.user = Some(UserId::new(8).unwrap());
        assert_eq!(act(&faults, &c), None);
        c.user = u7;
        c.method = FaultMethod::Post;
        c.route = FaultRoute::Like;
        assert_eq!(act(&faults, &c), None);
        assert!(faults.wants_user());
    }

    #[test]
    fn a_picked_seed_is_a_plain_number_in_javascript() {
        let faults = Faults::default();
        for _ in 0..1_000 {
            let seed = faults
                .set(FaultRules::new(vec![rule(FaultRoute::Like)]))
                .seed;
            assert!(seed.is_some_and(|seed| seed <= MAX_PICKED_SEED), "{seed:?}");
        }
        // A seed given is kept whatever it is.
        let given = FaultRules {
            seed: Some(u64::MAX),
            ..FaultRules::new(vec![rule(FaultRoute::Like)])
        };
        assert_eq!(faults.set(given).seed, Some(u64::MAX));
    }

    #[test]
    fn a_seed_replays_the_same_faults() {
        let rules = |seed| FaultRules {
            seed: Some(seed),
            state: Vec::new(),
            rules: vec![FaultRule {
                probability: 0.3,
                jitter_ms: 50,
                action: Some(FaultAction::Status {
                    status: 500,
                    body: None,
                    retry_after_secs: None,
                }),
                ..rule(FaultRoute::All)
            }],
        };
        let run = |seed| {
            let faults = Faults::default();
            faults.set(rules(seed));
            (0..200)
                .map(|_| outcome(&faults, &call(FaultRoute::Like), StatusCode::OK))
                .collect::<Vec<_>>()
        };
        let (a, b, c) = (run(7), run(7), run(8));
        assert_eq!(a, b);
        assert_ne!(a, c);
        let fired = a.iter().filter(|o| o.act.is_some()).count();
        assert!((30..=90).contains(&fired), "30% of 200 fired {fired} times");
        // The seed is reported back, also one the server picked.
        let faults = Faults::default();
        let set = faults.set(FaultRules::new(Vec::new()));
        assert_eq!(faults.get().seed, set.seed);
        assert!(set.seed.is_some());
    }

    fn named(place: usize, tag: Option<&str>) -> Option<RuleRef> {
        Some(RuleRef {
            place,
            tag: tag.map(Arc::from),
        })
    }

    /// The `before` rules' latencies add up when the request arrives, the
    /// `after` rules' once it was handled; the first rule that acts in a
    /// phase names it, and the first latency of each phase is noted.
    #[test]
    fn phases_latency_and_the_first_act() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![
            FaultRule {
                latency_ms: 100,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                phase: FaultPhase::After,
                latency_ms: 20,
                action: Some(FaultAction::Truncate { bytes: 5 }),
                tag: Some("cut".into()),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                latency_ms: 30,
                ..rule(FaultRoute::Like)
            },
        ]));
        let like = outcome(&faults, &call(FaultRoute::Like), StatusCode::OK);
        assert_eq!(
            like,
            Outcome {
                delays: [Duration::from_millis(130), Duration::from_millis(20)],
                delayed_by: [named(0, None), named(1, Some("cut"))],
                act: Some(Act::Truncate(5)),
                phase: Some(FaultPhase::After),
                rule: named(1, Some("cut")),
            }
        );
        // After a removal by tag the rule's place changes, its tag does not.
        let tagged = |tag: &str| FaultRule {
            action: Some(FaultAction::Drop {}),
            tag: Some(tag.into()),
            ..rule(FaultRoute::Unlike)
        };
        faults.add(vec![tagged("a"), tagged("b")]).expect("added");
        faults.remove_tagged("a");
        let unlike = outcome(&faults, &call(FaultRoute::Unlike), StatusCode::OK);
        assert_eq!(unlike.rule, named(3, Some("b")));
    }

    /// An `after` rule earlier in the list stops no `before` rule: those
    /// were walked when the request arrived. A `before` rule that acts
    /// keeps the request from the handler, and from every `after` rule:
    /// none of them counts it.
    #[test]
    fn the_phases_are_walked_apart() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![
            FaultRule {
                phase: FaultPhase::After,
                action: Some(FaultAction::Drop {}),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                latency_ms: 500,
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                nth: Some(2),
                action: Some(FaultAction::Reset {}),
                ..rule(FaultRoute::Like)
            },
        ]));
        let first = outcome(&faults, &call(FaultRoute::Like), StatusCode::OK);
        assert_eq!(first.delays, [Duration::from_millis(500), Duration::ZERO]);
        assert_eq!(
            (first.act, first.phase),
            (Some(Act::Drop), Some(FaultPhase::After))
        );
        let second = outcome(&faults, &call(FaultRoute::Like), StatusCode::OK);
        assert_eq!(
            (second.act, second.phase),
            (Some(Act::Reset), Some(FaultPhase::Before))
        );
        let state = faults.get().state;
        assert_eq!(
            (state[0].matched, state[0].acted),
            (1, 1),
            "the reset like never reached the after rule"
        );
        assert_eq!((state[1].matched, state[1].fired), (2, 2));
    }

    /// An `after` rule is about answers the handler gave 2xx: any other
    /// answer (no token, no such post, rate limited, a bad request) passes
    /// as it is and uses none of the rule up, not its call numbers, its
    /// draws or its `fail_next`. Its first 2xx call is its call 1.
    #[test]
    fn an_after_rule_counts_only_the_answers_that_were_carried_out() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![
            FaultRule {
                phase: FaultPhase::After,
                first: Some(1),
                latency_ms: 40,
                action: Some(FaultAction::Drop {}),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                phase: FaultPhase::After,
                fail_next: 1,
                status: 500,
                ..rule(FaultRoute::Unlike)
            },
        ]));
        let refused = [
            StatusCode::UNAUTHORIZED,
            StatusCode::NOT_FOUND,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::BAD_REQUEST,
            StatusCode::INTERNAL_SERVER_ERROR,
        ];
        for status in refused {
            for route in [FaultRoute::Like, FaultRoute::Unlike] {
                let passed = outcome(&faults, &call(route), status);
                assert_eq!(passed.act, None, "{status}");
                assert_eq!(passed.delays, [Duration::ZERO; 2], "{status}");
            }
        }
        assert_eq!(
            faults.get().state,
            [
                RuleState {
                    first_left: Some(1),
                    ..RuleState::default()
                },
                RuleState {
                    fail_next_left: Some(1),
                    ..RuleState::default()
                },
            ]
        );
        let like = outcome(&faults, &call(FaultRoute::Like), StatusCode::OK);
        assert_eq!(like.act, Some(Act::Drop));
        assert_eq!(like.delays[1], Duration::from_millis(40));
        assert_eq!(act(&faults, &call(FaultRoute::Unlike)), FAIL_500);
        assert_eq!(act(&faults, &call(FaultRoute::Like)), None, "first: 1");
        assert_eq!(act(&faults, &call(FaultRoute::Unlike)), None);
        let state = faults.get().state;
        assert_eq!(
            (state[0].matched, state[0].fired, state[0].acted),
            (2, 1, 1)
        );
        assert_eq!(state[1].fail_next_left, Some(0));
    }

    /// An act is counted in `acted` when it is carried out. One that never
    /// is (the request timeout or the client ended the request during its
    /// latency) counts nothing, and gives its `fail_next` failure back.
    #[test]
    fn an_act_counts_once_carried_out_and_a_dropped_one_gives_back_its_failure() {
        let faults = Faults::default();
        faults.set(FaultRules::new(vec![FaultRule {
            latency_ms: 60_000,
            fail_next: 1,
            status: 500,
            ..rule(FaultRoute::Like)
        }]));
        let plan = faults.plan(&call(FaultRoute::Like));
        assert!(plan.before.acting.is_some());
        let taken = faults.get().state[0];
        assert_eq!(
            (taken.fired, taken.acted, taken.fail_next_left),
            (1, 0, Some(0))
        );
        drop(plan);
        let given_back = faults.get().state[0];
        assert_eq!((given_back.acted, given_back.fail_next_left), (0, Some(1)));
        assert_eq!(act(&faults, &call(FaultRoute::Like)), FAIL_500);
        let spent = faults.get().state[0];
        assert_eq!(
            (
                spent.matched,
                spent.fired,
                spent.acted,
                spent.fail_next_left
            ),
            (2, 2, 1, Some(0))
        );
    }

    /// Test B's `fail_next: 1` rule fails B's first like; test A then adds
    /// a rule of its own. B's rule stays used up: B's next like goes
    /// through. (A `PUT` of the rules read back would have armed it again.)
    #[test]
    fn adding_keeps_the_rules_in_force_and_what_they_used_up() {
        let (a, b) = (UserId::new(1).unwrap(), UserId::new(2).unwrap());
        let like_by = |user| Call {
            user: Some(user),
            ..call(FaultRoute::Like)
        };
        let faults = Faults::default();
        let set = faults.set(FaultRules {
            seed: Some(5),
            ..FaultRules::new(vec![FaultRule {
                user: Some(b),
                fail_next: 1,
                status: 500,
                ..rule(FaultRoute::Like)
            }])
        });
        assert_eq!(act(&faults, &like_by(b)), FAIL_500);
        let added = faults
            .add(vec![FaultRule {
                user: Some(a),
                fail_next: 1,
                status: 500,
                tag: Some("a".into()),
                ..rule(FaultRoute::Like)
            }])
            .unwrap();
        assert_eq!(added.seed, set.seed, "the seed stays");
        assert_eq!(added.rules.len(), 2);
        assert_eq!(added.rules[1].tag.as_deref(), Some("a"), "added last");
        assert_eq!(
            added.state[0],
            RuleState {
                matched: 1,
                fired: 1,
                acted: 1,
                fail_next_left: Some(0),
                first_left: None,
            }
        );
        assert_eq!(
            act(&faults, &like_by(b)),
            None,
            "B's rule is not armed again"
        );
        assert_eq!(act(&faults, &like_by(a)), FAIL_500);
        assert_eq!(act(&faults, &like_by(a)), None);
        // Put back as read, it would have been.
        faults.set(faults.get());
        assert_eq!(act(&faults, &like_by(b)), FAIL_500);
    }

    /// Rules put and then added draw as the same rules put at once.
    #[test]
    fn added_rules_draw_as_if_put_with_the_others() {
        let chancy = |route, p| FaultRule {
            probability: p,
            jitter_ms: 40,
            action: Some(FaultAction::Drop {}),
            ..rule(route)
        };
        let rules = [
            chancy(FaultRoute::Likes, 0.5),
            chancy(FaultRoute::Like, 0.3),
            chancy(FaultRoute::All, 0.2),
        ];
        let run = |faults: &Faults| {
            (0..60)
                .map(|i| {
                    let route = [FaultRoute::Like, FaultRoute::Likes, FaultRoute::Unlike][i % 3];
                    outcome(faults, &call(route), StatusCode::OK)
                })
                .collect::<Vec<_>>()
        };
        let at_once = Faults::default();
        at_once.set(FaultRules {
            seed: Some(9),
            ..FaultRules::new(rules.to_vec())
        });
        let in_steps = Faults::default();
        in_steps.set(FaultRules {
            seed: Some(9),
            ..FaultRules::new(rules[..1].to_vec())
        });
        in_steps.add(rules[1..2].to_vec()).unwrap();
        in_steps.add(rules[2..].to_vec()).unwrap();
        assert_eq!(run(&at_once), run(&in_steps));
        // With no rules set, adding picks a seed, as a PUT without one does.
        let fresh = Faults::default();
        assert!(fresh.add(rules.to_vec()).unwrap().seed.is_some());
    }

    /// Removing a test's rules by tag leaves every other rule as it was:
    /// its counters, and its draws (its number stays when it moves up).
    #[test]
    fn removing_by_tag_keeps_the_other_rules_as_they_were() {
        let tagged = |tag: &str, route| FaultRule {
            tag: Some(tag.into()),
            latency_ms: 1,
            ..rule(route)
        };
        let chancy = FaultRule {
            probability: 0.4,
            action: Some(FaultAction::Reset {}),
            tag: Some("b".into()),
            ..rule(FaultRoute::Likes)
        };
        let rules = || FaultRules {
            seed: Some(3),
            ..FaultRules::new(vec![
                tagged("a", FaultRoute::Like),
                chancy.clone(),
                tagged("a", FaultRoute::All),
            ])
        };
        let acts = |faults: &Faults, n| {
            (0..n)
                .map(|_| act(faults, &call(FaultRoute::Likes)))
                .collect::<Vec<_>>()
        };
        let kept = Faults::default();
        kept.set(rules());
        let removed = Faults::default();
        removed.set(rules());
        assert_eq!(acts(&kept, 20), acts(&removed, 20));
        let before = removed.get().state[1];
        let (count, left) = removed.remove_tagged("a");
        assert_eq!(count, 2);
        assert_eq!(left.rules, std::slice::from_ref(&chancy));
        assert_eq!(left.state, [before], "the counters go on");
        assert_eq!(left.seed, Some(3), "the seed stays");
        assert_eq!(acts(&kept, 40), acts(&removed, 40), "the same draws");
        assert_eq!(removed.get().state[0].matched, 60);
        // A tag no rule has removes nothing.
        let (count, left) = removed.remove_tagged("nobody");
        assert_eq!((count, left.rules.len()), (0, 1));
        // A rule added after a removal takes a number no rule had.
        removed.add(vec![chancy.clone()]).unwrap();
        let numbers: Vec<u64> = removed.set.load().rules.iter().map(|a| a.number).collect();
        assert_eq!(numbers, [1, 3]);
    }

    /// A rule no request can match is refused, naming the field to change;
    /// one that some call meets is kept. Each accepted rule is checked to
    /// fire by `plan`, so the check refuses only what could never fire.
    #[test]
    fn a_rule_that_can_never_fire_is_refused() {
        let with = |route, method, nth, every, first, after| FaultRule {
            method,
            nth,
            every,
            first,
            after,
            fail_next: 1_000,
            ..rule(route)
        };
        let refused = [
            (
                with(
                    FaultRoute::Like,
                    Some(FaultMethod::Get),
                    None,
                    None,
                    None,
                    None,
                ),
                "rules[0].method: route \"like\" is only ever POST, so a rule for GET never fires",
            ),
            (
                with(
                    FaultRoute::Unlike,
                    Some(FaultMethod::Post),
                    None,
                    None,
                    None,
                    None,
                ),
                "rules[0].method: route \"unlike\" is only ever DELETE, so a rule for POST never fires",
            ),
            (
                with(
                    FaultRoute::Batch,
                    Some(FaultMethod::Delete),
                    None,
                    None,
                    None,
                    None,
                ),
                "rules[0].method: route \"batch\" is only ever GET, so a rule for DELETE never fires",
            ),
        ];
        for (rule, why) in refused {
            assert_eq!(validate(&FaultRules::new(vec![rule])).unwrap_err(), why);
        }

        let kept = [
            with(
                FaultRoute::Like,
                Some(FaultMethod::Post),
                None,
                None,
                None,
                None,
            ),
            with(
                FaultRoute::All,
                Some(FaultMethod::Delete),
                None,
                None,
                None,
                None,
            ),
            with(FaultRoute::Likes, None, None, None, Some(4), Some(3)),
            with(FaultRoute::Likes, None, Some(4), Some(2), Some(4), Some(3)),
            with(FaultRoute::Likes, None, None, Some(5), Some(10), Some(5)),
            with(FaultRoute::Likes, None, None, Some(3), None, Some(7)),
        ];
        for rule in kept {
            assert!(
                validate(&FaultRules::new(vec![rule.clone()])).is_ok(),
                "{rule:?}"
            );
            // Some call number fires it: the check refused nothing that works.
            let route = rule.route;
            let faults = Faults::default();
            faults.set(FaultRules::new(vec![rule.clone()]));
            let mut call = call(if route == FaultRoute::All {
                FaultRoute::Unlike
            } else {
                route
            });
            if let Some(method) = rule.method {
                call.method = method;
            }
            assert!(
                (1..=12).any(|_| !faults.plan(&call).is_empty()),
                "{rule:?} never fired in 12 calls"
            );
        }
    }

    /// A part of a rule that could never act is refused, naming it; the
    /// combinations that act in turn are kept, and so is every body of the
    /// first fault language (route, latency, jitter, error_rate, status,
    /// drop_rate, fail_next), which behaves as it always did.
    #[test]
    fn a_rule_part_that_could_never_act_is_refused() {
        let refused = [
            // A status beside an action reads as the action's.
            (
                FaultRule {
                    status: 500,
                    action: Some(FaultAction::Drop {}),
                    ..rule(FaultRoute::Like)
                },
                "rules[0].status: 500 is what error_rate and fail_next answer",
            ),
            (
                FaultRule {
                    drop_rate: 1.0,
                    action: Some(FaultAction::Reset {}),
                    ..rule(FaultRoute::Like)
                },
                "rules[0].action: drop_rate 1 drops every call",
            ),
            (
                FaultRule {
                    error_rate: 1.0,
                    action: Some(FaultAction::Drop {}),
                    ..rule(FaultRoute::Like)
                },
                "rules[0].action: error_rate 1 answers every call",
            ),
        ];
        for (rule, starts) in refused {
            let err = validate(&FaultRules::new(vec![rule])).unwrap_err();
            assert!(err.starts_with(starts), "{err}");
        }
        let first_language = [
            // A latency rule written as the first language allowed.
            FaultRule {
                latency_ms: 2000,
                status: 500,
                error_rate: 0.0,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                drop_rate: 1.0,
                error_rate: 0.5,
                status: 500,
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                drop_rate: 1.0,
                fail_next: 2,
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                drop_rate: 0.3,
                status: 502,
                ..rule(FaultRoute::Likes)
            },
            FaultRule {
                jitter_ms: 10,
                status: 429,
                ..rule(FaultRoute::Unlike)
            },
            // No effect: it counts calls, as it did.
            FaultRule {
                status: 500,
                ..rule(FaultRoute::Like)
            },
        ];
        let kept = [
            FaultRule {
                status: 500,
                error_rate: 0.5,
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                status: 429,
                fail_next: 1,
                action: Some(FaultAction::Drop {}),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                drop_rate: 0.5,
                error_rate: 1.0,
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                drop_rate: 1.0,
                ..rule(FaultRoute::Like)
            },
            // No effect at all: it counts the calls it matches.
            rule(FaultRoute::Like),
        ];
        for kept in first_language.iter().chain(&kept) {
            assert!(
                validate(&FaultRules::new(vec![kept.clone()])).is_ok(),
                "{kept:?}"
            );
        }
        // They behave as they did: the latency rule only delays, and a
        // drop_rate of 1 drops every call before fail_next is used.
        let faults = Faults::default();
        faults.set(FaultRules::new(first_language[..3].to_vec()));
        let like = outcome(&faults, &call(FaultRoute::Like), StatusCode::OK);
        assert_eq!(like.delays[0], Duration::from_millis(2000));
        assert_eq!((like.act, like.rule), (Some(Act::Drop), named(1, None)));
        let view = outcome(&faults, &call(FaultRoute::Likes), StatusCode::OK);
        assert_eq!(
            (view.delays[0], view.act),
            (Duration::from_millis(2000), None)
        );
        assert_eq!(faults.get().state[2].fail_next_left, Some(2));
    }

    /// An action behind a latency the request timeout always cuts short is
    /// refused, as a `slow_body` pause that long is; a jitter past it
    /// (some calls still act), the first language's acts behind one (they
    /// time the request out, as they always did) and a latency alone (an
    /// injected timeout) are taken.
    #[test]
    fn an_action_the_request_timeout_always_cuts_short_is_refused() {
        let timeout = Duration::from_secs(1);
        let check = |rule: FaultRule| check_pauses(&FaultRules::new(vec![rule]), timeout);
        let drop = Some(FaultAction::Drop {});
        for latency_ms in [1_000, 5_000] {
            let err = check(FaultRule {
                latency_ms,
                action: drop.clone(),
                ..rule(FaultRoute::Like)
            })
            .unwrap_err();
            assert_eq!(
                err,
                format!(
                    "rules[0].latency_ms: with an action, must be below the server's request \
                     timeout (1000 ms), or the request always times out before the action; got \
                     {latency_ms}"
                )
            );
        }
        for kept in [
            FaultRule {
                latency_ms: 999,
                action: drop.clone(),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                latency_ms: 600,
                jitter_ms: 5_000,
                action: drop.clone(),
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                latency_ms: 5_000,
                ..rule(FaultRoute::Like)
            },
            FaultRule {
                latency_ms: 5_000,
                error_rate: 0.5,
                fail_next: 1,
                drop_rate: 0.5,
                ..rule(FaultRoute::Like)
            },
        ] {
            assert_eq!(check(kept.clone()), Ok(()), "{kept:?}");
        }
    }

    /// No more than `MAX_RULES` in force: an add past it adds nothing.
    #[test]
    fn adding_past_the_most_rules_adds_nothing() {
        let faults = Faults::default();
        let tagged = |tag: &str| FaultRule {
            tag: Some(tag.to_owned()),
            ..rule(FaultRoute::Like)
        };
        let mut rules = vec![rule(FaultRoute::Like); 4];
        rules.extend(vec![tagged("cart"); 100]);
        rules.extend(vec![tagged("checkout-7"); 120]);
        rules.extend(vec![tagged("a"); 1]);
        rules.extend(vec![tagged("b"); 29]);
        assert_eq!(rules.len(), MAX_RULES - 2);
        faults.set(FaultRules::new(rules));
        let before = faults.get();
        let tag = |tag: &str| Some(Arc::from(tag));
        assert_eq!(
            faults.check_room(3),
            Err(TooManyRules {
                in_force: MAX_RULES - 2,
                added: 3,
                holders: vec![(tag("checkout-7"), 120), (tag("cart"), 100), (tag("b"), 29)],
            })
        );
        assert_eq!(faults.check_room(2), Ok(()));
        let err = faults.add(vec![rule(FaultRoute::Likes); 3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rules: at most 256 rules in force; 254 are, and 3 more would make 257 (the most: \
             120 tagged checkout-7, 100 tagged cart, 29 tagged b; a test removes its own \
             with DELETE /admin/faults?tag=…)"
        );
        // Rules without a tag are named as such.
        faults.set(FaultRules::new(vec![rule(FaultRoute::Like); MAX_RULES]));
        assert_eq!(
            faults.check_room(1).unwrap_err().to_string(),
            "rules: at most 256 rules in force; 256 are, and 1 more would make 257 (the most: \
             256 without a tag; a test removes its own with DELETE /admin/faults?tag=…)"
        );
        faults.set(FaultRules::new(before.rules.clone()));
        let before = faults.get();
        assert_eq!(faults.get(), before);
        assert_eq!(
            faults
                .add(vec![rule(FaultRoute::Likes); 2])
                .unwrap()
                .rules
                .len(),
            MAX_RULES
        );
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
            FaultRule {
                probability: 2.0,
                ..rule(FaultRoute::All)
            },
            FaultRule {
                every: Some(0),
                ..rule(FaultRoute::All)
            },
            FaultRule {
                nth: Some(0),
                ..rule(FaultRoute::All)
            },
            // A rule for none of the first 0 calls would never fire.
            FaultRule {
                first: Some(0),
                ..rule(FaultRoute::All)
            },
            FaultRule {
                action: Some(FaultAction::Truncate { bytes: 3 }),
                ..rule(FaultRoute::All)
            },
            FaultRule {
                phase: FaultPhase::After,
                action: Some(FaultAction::SlowBody {
                    bytes: 0,
                    interval_ms: 10,
                }),
                ..rule(FaultRoute::All)
            },
            FaultRule {
                action: Some(FaultAction::Status {
                    status: 99,
                    body: None,
                    retry_after_secs: None,
                }),
                ..rule(FaultRoute::All)
            },
            FaultRule {
                action: Some(FaultAction::Status {
                    status: 204,
                    body: Some(serde_json::json!({"ok": true})),
                    retry_after_secs: None,
                }),
                ..rule(FaultRoute::All)
            },
            FaultRule {
                action: Some(FaultAction::Oversized {
                    bytes: MAX_OVERSIZED_BYTES + 1,
                }),
                ..rule(FaultRoute::All)
            },
        ];
        for rule in bad {
            assert!(
                validate(&FaultRules::new(vec![rule.clone()])).is_err(),
                "{rule:?}"
            );
        }
        for tag in ["", "two words", "é", &"t".repeat(65)] {
            let tagged = FaultRule {
                tag: Some(tag.into()),
                ..rule(FaultRoute::All)
            };
            let err = validate(&FaultRules::new(vec![rule(FaultRoute::Like), tagged])).unwrap_err();
            assert!(
                err.starts_with("rules[1].tag: must be 1 to 64 visible ASCII characters"),
                "{err}"
            );
        }
        assert!(validate(&FaultRules::new(vec![rule(FaultRoute::Like)])).is_ok());
    }
}
