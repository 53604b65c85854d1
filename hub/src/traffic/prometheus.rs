//! `/metrics` (DESIGN.md §3 "hub … `/metrics`", §6): the traffic counts as
//! Prometheus metrics, in the OpenMetrics text format, through the
//! `prometheus-client` crate.
//!
//! Counted as exchanges finish (labels: registry ids only, see
//! [`Labels`]):
//!
//! | metric | labels |
//! |---|---|
//! | `wallstreet_calls_total` | caller, provider, capability, method, outcome (`connected`, `replayed`, `not_connected`) |
//! | `wallstreet_call_failures_total` | caller, provider, capability, reason (one of the nine reason codes) |
//! | `wallstreet_retries_total` | caller, provider, capability |
//! | `wallstreet_call_duration_seconds` (histogram) | caller, provider, capability |
//! | `wallstreet_login_password_checks_total` | — (UI logins whose password was checked: argon2 runs) |
//! | `wallstreet_login_throttled_total` | limit (`address`, `user`, `known_source`, `capacity`) |
//! | `wallstreet_unidentified_refusals_total` | door (`gateway`, `a2a`, `mcp`), reason (a reason code), credential (`no_credential`, `malformed_credential`, `unknown_token`, `invalid_access_token`): calls refused at the door whose credential named no system |
//!
//! Read from the hub's store at scrape time ([`Snapshot`]), so they
//! survive a restart:
//!
//! | metric | labels |
//! |---|---|
//! | `wallstreet_tasks` (gauge) | caller, provider, capability, state |
//! | `wallstreet_unfinished_tasks` (gauge) | caller, provider, capability |
//! | `wallstreet_human_decisions` (gauge) | system, capability, decision (`approved`, `rejected`) |
//! | `wallstreet_peer_up` (gauge) | system |

use std::sync::Mutex;

use app::dto::TrafficOutcome;
use prometheus_client::encoding::text::{encode, encode_registry};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::{Exchange, Labels};
use crate::store::task_records::RecordState;

/// The content type of what [`Metrics::render`] writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EdgeLabels {
    caller: String,
    provider: String,
    capability: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    caller: String,
    provider: String,
    capability: String,
    method: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    caller: String,
    provider: String,
    capability: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskLabels {
    caller: String,
    provider: String,
    capability: String,
    state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    system: String,
    capability: String,
    decision: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SystemLabels {
    system: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UnidentifiedLabels {
    door: String,
    reason: String,
    credential: String,
}

/// What the UI login counts (`ui_auth::throttle`): how many passwords were
/// checked (each an argon2 run), and how many attempts a limit refused
/// before any was. Cheap to clone: every clone counts into the same
/// metrics.
#[derive(Clone, Debug, Default)]
pub struct LoginCounters {
    checks: Counter,
    throttled: Family<LimitLabels, Counter>,
}

impl LoginCounters {
    /// One password checked.
    pub fn password_checked(&self) {
        self.checks.inc();
    }

    /// Passwords checked so far.
    pub fn password_checks(&self) -> u64 {
        self.checks.get()
    }

    /// One attempt refused by `limit` before its password was checked.
    pub fn throttled(&self, limit: &str) {
        self.throttled
            .get_or_create(&LimitLabels {
                limit: limit.to_string(),
            })
            .inc();
    }
}

/// What the push relay counts ([`crate::push`]): each delivery attempt's
/// outcome, `delivered`, `retried` (an attempt failed, another follows) or
/// `dead_letter` (the last attempt failed). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct PushCounters {
    deliveries: Family<OutcomeLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

impl PushCounters {
    /// One delivery attempt ended `outcome`.
    pub fn count(&self, outcome: &'static str) {
        self.deliveries
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }

    /// How many attempts ended `outcome`.
    pub fn get(&self, outcome: &'static str) -> u64 {
        self.deliveries
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .get()
    }
}

/// What only the hub's store and status board know, read at scrape time.
/// Each id in it must be a registry id (the caller of [`Metrics::render`]
/// builds it from the registry and the store).
#[derive(Debug, Default)]
pub struct Snapshot {
    /// (caller, provider, capability, state, count).
    pub tasks: Vec<(Labels, RecordState, u64)>,
    /// (system, capability, decision, count).
    pub decisions: Vec<(String, String, &'static str, u64)>,
    /// (system, up).
    pub peers: Vec<(String, bool)>,
}

/// The counted metrics.
pub struct Metrics {
    registry: Mutex<Registry>,
    calls: Family<CallLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    retries: Family<EdgeLabels, Counter>,
    durations: Family<EdgeLabels, Histogram>,
    login: LoginCounters,
    unidentified: Family<UnidentifiedLabels, Counter>,
    push: PushCounters,
}

fn duration_histogram() -> Histogram {
    // 1 ms … ~16 s.
    Histogram::new([
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 16.0,
    ])
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers the counted metrics.
    pub fn new() -> Self {
        let calls = Family::<CallLabels, Counter>::default();
        let failures = Family::<FailureLabels, Counter>::default();
        let retries = Family::<EdgeLabels, Counter>::default();
        let durations = Family::<EdgeLabels, Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        let mut registry = Registry::with_prefix("wallstreet");
        registry.register(
            "calls",
            "Exchanges through the hub that ended, by outcome",
            calls.clone(),
        );
        registry.register(
            "call_failures",
            "Exchanges that ended not_connected, by reason code",
            failures.clone(),
        );
        registry.register(
            "retries",
            "Exchanges that repeated an idempotency key already used",
            retries.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "How long an exchange took in the hub (the caller's wait)",
            durations.clone(),
        );
        let login = LoginCounters::default();
        registry.register(
            "login_password_checks",
            "UI login attempts whose password was checked (each one argon2 run)",
            login.checks.clone(),
        );
        registry.register(
            "login_throttled",
            "UI login attempts refused by a limit before their password was checked",
            login.throttled.clone(),
        );
        let unidentified = Family::<UnidentifiedLabels, Counter>::default();
        registry.register(
            "unidentified_refusals",
            "Calls refused at the door whose credential named no system (summarised in the \
             trail, not recorded one by one)",
            unidentified.clone(),
        );
        let push = PushCounters::default();
        registry.register(
            "push_deliveries",
            "Push relay delivery attempts to callers' webhooks, by outcome (delivered, retried, \
             dead_letter)",
            push.deliveries.clone(),
        );
        Self {
            registry: Mutex::new(registry),
            calls,
            failures,
            retries,
            durations,
            login,
            unidentified,
            push,
        }
    }

    /// Counts one call refused at `door` with `reason` whose credential
    /// (`credential`) named no system.
    pub fn refused_unidentified(&self, door: &str, reason: &str, credential: &str) {
        self.unidentified
            .get_or_create(&UnidentifiedLabels {
                door: door.to_string(),
                reason: reason.to_string(),
                credential: credential.to_string(),
            })
            .inc();
    }

    /// The push relay's counters.
    pub fn push(&self) -> PushCounters {
        self.push.clone()
    }

    /// The UI login's counters, for the login limits to count into.
    pub fn login(&self) -> LoginCounters {
        self.login.clone()
    }

    /// Counts one exchange under `labels`.
    pub fn observe(&self, labels: &Labels, ex: &Exchange<'_>) {
        let edge = EdgeLabels {
            caller: labels.caller.clone(),
            provider: labels.provider.clone(),
            capability: labels.capability.clone(),
        };
        let outcome = match ex.outcome {
            TrafficOutcome::Connected => "connected",
            TrafficOutcome::Replayed => "replayed",
            TrafficOutcome::NotConnected => "not_connected",
        };
        self.calls
            .get_or_create(&CallLabels {
                caller: edge.caller.clone(),
                provider: edge.provider.clone(),
                capability: edge.capability.clone(),
                method: ex.method.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
        if ex.outcome == TrafficOutcome::NotConnected {
            let reason = ex.reason.unwrap_or(exchange::reason::ReasonCode::PeerError);
            self.failures
                .get_or_create(&FailureLabels {
                    caller: edge.caller.clone(),
                    provider: edge.provider.clone(),
                    capability: edge.capability.clone(),
                    reason: reason.as_str().to_string(),
                })
                .inc();
        }
        if ex.retry {
            self.retries.get_or_create(&edge).inc();
        }
        self.durations
            .get_or_create(&edge)
            .observe(ex.duration.as_secs_f64());
    }

    /// The OpenMetrics text of the counted metrics and `snapshot`.
    pub fn render(&self, snapshot: &Snapshot) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        if let Ok(registry) = self.registry.lock() {
            encode_registry(&mut out, &registry)?;
        }
        let tasks = Family::<TaskLabels, Gauge>::default();
        let unfinished = Family::<EdgeLabels, Gauge>::default();
        for (labels, state, n) in &snapshot.tasks {
            let n = i64::try_from(*n).unwrap_or(i64::MAX);
            tasks
                .get_or_create(&TaskLabels {
                    caller: labels.caller.clone(),
                    provider: labels.provider.clone(),
                    capability: labels.capability.clone(),
                    state: state.as_str().to_string(),
                })
                .set(n);
            if !state.is_final() {
                unfinished
                    .get_or_create(&EdgeLabels {
                        caller: labels.caller.clone(),
                        provider: labels.provider.clone(),
                        capability: labels.capability.clone(),
                    })
                    .inc_by(n);
            }
        }
        let decisions = Family::<DecisionLabels, Gauge>::default();
        for (system, capability, decision, n) in &snapshot.decisions {
            decisions
                .get_or_create(&DecisionLabels {
                    system: system.clone(),
                    capability: capability.clone(),
                    decision: (*decision).to_string(),
                })
                .set(i64::try_from(*n).unwrap_or(i64::MAX));
        }
        let peers = Family::<SystemLabels, Gauge>::default();
        for (system, up) in &snapshot.peers {
            peers
                .get_or_create(&SystemLabels {
                    system: system.clone(),
                })
                .set(i64::from(*up));
        }
        let mut stored = Registry::with_prefix("wallstreet");
        stored.register("tasks", "Tasks the hub forwarded, by state", tasks);
        stored.register(
            "unfinished_tasks",
            "Tasks the hub forwarded that are not in a final state",
            unfinished,
        );
        stored.register(
            "human_decisions",
            "Proposed actions in the hub's inbox a human approved or rejected",
            decisions,
        );
        stored.register(
            "peer_up",
            "1 if the prober last found the peer healthy",
            peers,
        );
        encode(&mut out, &stored)?;
        Ok(out)
    }
}
