//! One edge's numbers (DESIGN.md §6): counters since the hub
//! started, the last minute's calls for the canvas, the recent waits for
//! p50/p95, and the inspector's ring. Everything is bounded: the window
//! keeps at most [`WINDOW_CAP`] calls, the waits [`WAITS_CAP`].

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use app::dto::{
    EdgeTrafficView, ExchangeView, LastCallView, MetricsView, ReasonCountView, TrafficOutcome,
};
use exchange::reason::ReasonCode;
use tokio::time::Instant;

use super::{inspector, Exchange};

/// The window of the canvas's edge label.
pub const WINDOW: Duration = Duration::from_secs(60);
/// Most calls the window remembers (a busier edge shows this many).
pub const WINDOW_CAP: usize = 4096;
/// How many recent waits p50/p95 are computed over.
pub const WAITS_CAP: usize = 512;

/// The numbers of one (caller, provider, capability).
#[derive(Debug, Default)]
pub struct EdgeStats {
    calls: u64,
    succeeded: u64,
    retries: u64,
    failures: HashMap<ReasonCode, u64>,
    /// When each recent call ended, and whether it failed.
    window: VecDeque<(Instant, bool)>,
    waits: VecDeque<u64>,
    last: Option<LastCallView>,
    ring: VecDeque<ExchangeView>,
    /// The window's count as last published, to notice it dropping.
    published: u32,
    /// The inspector's sampling: when the budget was last refilled, and
    /// how many entries it holds ([`EdgeStats::take_entry`]).
    entries: Option<(Instant, f64)>,
}

/// How many exchanges of one edge the inspector takes at once…
const ENTRY_BURST: f64 = 2.0 * inspector::CAPACITY as f64;
/// …and how many a second after that.
const ENTRIES_PER_SECOND: f64 = inspector::CAPACITY as f64;

impl EdgeStats {
    /// Counts one exchange.
    pub fn record(&mut self, now: Instant, ex: &Exchange<'_>) {
        self.calls += 1;
        let failed = ex.outcome == TrafficOutcome::NotConnected;
        if failed {
            let reason = ex.reason.unwrap_or(ReasonCode::PeerError);
            *self.failures.entry(reason).or_default() += 1;
        } else {
            self.succeeded += 1;
        }
        if ex.retry {
            self.retries += 1;
        }
        if self.window.len() == WINDOW_CAP {
            self.window.pop_front();
        }
        self.window.push_back((now, failed));
        if self.waits.len() == WAITS_CAP {
            self.waits.pop_front();
        }
        self.waits
            .push_back(u64::try_from(ex.duration.as_millis()).unwrap_or(u64::MAX));
        self.last = Some(super::last_call(ex));
    }

    /// Whether the exchange ending `now` enters the inspector: every one
    /// on a quiet edge, a sample on a busy one (at most [`ENTRY_BURST`] at
    /// once, [`ENTRIES_PER_SECOND`] after that). Counting is not sampled.
    pub fn take_entry(&mut self, now: Instant) -> bool {
        let (last, held) = self.entries.unwrap_or((now, ENTRY_BURST));
        let held = (held + now.saturating_duration_since(last).as_secs_f64() * ENTRIES_PER_SECOND)
            .min(ENTRY_BURST);
        let (taken, left) = if held >= 1.0 {
            (true, held - 1.0)
        } else {
            (false, held)
        };
        self.entries = Some((now, left));
        taken
    }

    /// Keeps one exchange in the inspector's ring.
    pub fn inspect(&mut self, view: ExchangeView) {
        if self.ring.len() == inspector::CAPACITY {
            self.ring.pop_back();
        }
        self.ring.push_front(view);
    }

    /// The ring, newest first.
    pub fn exchanges(&self) -> Vec<ExchangeView> {
        self.ring.iter().cloned().collect()
    }

    fn trim(&mut self, now: Instant) {
        while let Some((at, _)) = self.window.front() {
            if now.duration_since(*at) > WINDOW {
                self.window.pop_front();
            } else {
                break;
            }
        }
    }

    /// Drops calls that left the window; true when the published count is
    /// now stale.
    pub fn expire(&mut self, now: Instant) -> bool {
        self.trim(now);
        u32::try_from(self.window.len()).unwrap_or(u32::MAX) != self.published
    }

    /// The edge label's numbers now.
    pub fn traffic(&self, edge: String, now: Instant) -> EdgeTrafficView {
        let recent = self
            .window
            .iter()
            .filter(|(at, _)| now.duration_since(*at) <= WINDOW);
        let (mut calls, mut failures) = (0u32, 0u32);
        for (_, failed) in recent {
            calls += 1;
            failures += u32::from(*failed);
        }
        EdgeTrafficView {
            edge,
            window_secs: u32::try_from(WINDOW.as_secs()).unwrap_or(u32::MAX),
            calls,
            failures,
            last: self.last.clone(),
        }
    }

    /// Remembers what was published (called with the drained views).
    pub fn published(&mut self, calls: u32) {
        self.published = calls;
    }
}

/// Sums of several edges' stats, for a drawer.
#[derive(Debug, Default)]
pub struct Totals {
    calls: u64,
    succeeded: u64,
    retries: u64,
    failures: HashMap<ReasonCode, u64>,
    waits: Vec<u64>,
}

impl Totals {
    /// Adds one edge.
    pub fn add(&mut self, s: &EdgeStats) {
        self.calls += s.calls;
        self.succeeded += s.succeeded;
        self.retries += s.retries;
        for (r, n) in &s.failures {
            *self.failures.entry(*r).or_default() += n;
        }
        self.waits.extend(s.waits.iter().copied());
    }

    /// The drawer's view.
    pub fn into_view(mut self, scope: String) -> MetricsView {
        self.waits.sort_unstable();
        let mut failures: Vec<ReasonCountView> = self
            .failures
            .into_iter()
            .map(|(reason, count)| ReasonCountView { reason, count })
            .collect();
        failures.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(a.reason.as_str().cmp(b.reason.as_str()))
        });
        MetricsView {
            scope,
            calls: self.calls,
            succeeded: self.succeeded,
            success_rate: (self.calls > 0).then(|| self.succeeded as f64 / self.calls as f64),
            failures,
            retries: self.retries,
            wait_p50_ms: percentile(&self.waits, 50),
            wait_p95_ms: percentile(&self.waits, 95),
            // What only the hub's store knows is added by the BFF.
            approvals: 0,
            rejections: 0,
            unfinished_tasks: 0,
        }
    }
}

/// The `p`th percentile of sorted values (nearest rank); none when empty.
pub fn percentile(sorted: &[u64], p: usize) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}
