//! The status board: every system's health, combined from its last probe
//! and its last gateway call, with the agent card and the data plane the
//! prober last saw; every change published on the event bus and handed to
//! the other replicas ([`ShareHealth`]).

use exchange::jws::CardSignature;
use exchange::text::clip;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, RwLock};

use app::dto::HubEvent;
use serde_json::Value;

use super::PeerStatus;
use crate::bridge;
use crate::events::EventBus;
use exchange::envelope::A2aVersion;
use exchange::reason::{NotConnected, ReasonCode};

#[derive(Debug, Clone)]
struct Entry {
    probe: PeerStatus,
    call_failure: Option<PeerStatus>,
    effective: PeerStatus,
}

impl Entry {
    fn new() -> Self {
        Self {
            probe: PeerStatus::Unknown,
            call_failure: None,
            effective: PeerStatus::Unknown,
        }
    }

    fn combine(&self) -> PeerStatus {
        match (&self.probe, &self.call_failure) {
            (PeerStatus::Degraded { .. }, _) => self.probe.clone(),
            (_, Some(failure)) => failure.clone(),
            (probe, None) => probe.clone(),
        }
    }
}

/// A provider's agent card as the prober last fetched it: the A2A version
/// it declares and the card itself in v1.0 shape (a v0.3 card is
/// translated by the [version bridge](crate::bridge)).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderCard {
    /// The version the provider speaks: how the gateway calls it.
    pub version: A2aVersion,
    /// The card, v1.0 shape. Peer text: the hub's own cards copy names,
    /// descriptions and skills from it, nothing else.
    pub card: Value,
    /// What its signatures said when the prober checked them against the
    /// provider's published keys.
    pub signature: CardSignature,
    /// The keys that verified them (none for a card that is unsigned or
    /// failed): what a provider's signature of an answer is checked
    /// against ([`exchange::receipt::ANSWER_SIGNATURE_KEY`]).
    pub keys: Option<jsonwebtoken::jwk::JwkSet>,
}

impl ProviderCard {
    /// The JSON-RPC URL the card declares for the version the provider
    /// speaks, if it lies under `base_url` (the registry's address of the
    /// provider): a card cannot send the hub's calls, with the hub's token
    /// for this provider, anywhere the registry did not put it.
    pub fn jsonrpc_url(&self, base_url: &str) -> Option<String> {
        let base = base_url.trim_end_matches('/');
        self.card
            .get("supportedInterfaces")?
            .as_array()?
            .iter()
            .filter(|i| i.get("protocolBinding").and_then(Value::as_str) == Some("JSONRPC"))
            .filter(|i| {
                i.get("protocolVersion")
                    .and_then(Value::as_str)
                    .and_then(A2aVersion::parse)
                    == Some(self.version)
            })
            .filter_map(|i| i.get("url").and_then(Value::as_str))
            .find(|url| {
                url.strip_prefix(base)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .map(str::to_string)
    }
}

/// What a probe knows of one system, as one replica shares it with the
/// others: the probe's status, the card, the data plane's status.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthSnapshot {
    /// The probe's own status (not combined with calls).
    pub probe: PeerStatus,
    /// The agent card last fetched.
    pub card: Option<Arc<ProviderCard>>,
    /// The data plane's last identity check.
    pub plane: Option<PeerStatus>,
}

/// Where a board sends what its own probes and calls changed, so other
/// hub processes on the same store can apply it (`cluster`).
pub trait ShareHealth: Send + Sync + std::fmt::Debug {
    /// A probe changed what is known of `system`.
    fn probed(&self, system: &str, snapshot: HealthSnapshot);
    /// A call changed `system`'s combined status: it failed (`Err`) or
    /// cleared an earlier failure (`Ok`).
    fn called(&self, system: &str, outcome: &Result<(), NotConnected>);
}

/// Every system's current health; the source of node and edge status.
#[derive(Debug)]
pub struct StatusBoard {
    entries: RwLock<HashMap<String, Entry>>,
    cards: RwLock<HashMap<String, Arc<ProviderCard>>>,
    /// Each data plane's last identity check (`tools/list` answered by
    /// this build's peer), apart from its system's agent.
    planes: RwLock<HashMap<String, PeerStatus>>,
    events: EventBus,
    /// Where local changes go for other replicas (none: a single hub).
    share: OnceLock<Arc<dyn ShareHealth>>,
}

impl StatusBoard {
    /// An empty board publishing changes on `events`.
    pub fn new(events: EventBus) -> Self {
        Self {
            entries: RwLock::new(HashMap::new()),
            cards: RwLock::new(HashMap::new()),
            planes: RwLock::new(HashMap::new()),
            events,
            share: OnceLock::new(),
        }
    }

    /// Sends every later change of this board's own probes and calls to
    /// `share` (set once).
    pub fn share_with(&self, share: Arc<dyn ShareHealth>) {
        let _ = self.share.set(share);
    }

    /// What the probes know of `system` now.
    pub fn snapshot(&self, system: &str) -> HealthSnapshot {
        HealthSnapshot {
            probe: self.probe_status(system),
            card: self.card(system),
            plane: self.plane_status(system),
        }
    }

    fn share_probe(&self, system: &str) {
        if let Some(share) = self.share.get() {
            share.probed(system, self.snapshot(system));
        }
    }

    /// Applies what another replica's probe found (its leader's): the same
    /// changes and events as a probe here, shared no further.
    pub fn apply_shared(&self, system: &str, snapshot: HealthSnapshot) {
        if let Some(card) = snapshot.card {
            if let Ok(mut m) = self.cards.write() {
                m.insert(system.to_string(), card);
            }
        }
        if let Some(plane) = snapshot.plane {
            self.set_plane(system, plane);
        }
        let _ = match snapshot.probe {
            PeerStatus::Healthy => self.probe_result(system, Ok(())),
            PeerStatus::Degraded { reason, detail, .. } => {
                self.probe_result(system, Err(NotConnected::new(reason, detail)))
            }
            PeerStatus::Unknown => false,
        };
    }

    /// Applies a call outcome another replica shared.
    pub fn apply_shared_call(&self, system: &str, outcome: Result<(), NotConnected>) {
        self.call_result(system, outcome);
    }

    /// The agent card `system` last served, if the prober has fetched one.
    pub fn card(&self, system: &str) -> Option<Arc<ProviderCard>> {
        self.cards.read().ok()?.get(system).cloned()
    }

    /// The A2A version `system` speaks: its card's, v1.0 until a card is
    /// known.
    pub fn version(&self, system: &str) -> A2aVersion {
        self.card(system).map_or(A2aVersion::V1_0, |c| c.version)
    }

    /// Records the card `system` served (as fetched, either version) and
    /// what its signatures said.
    pub fn record_card(
        &self,
        system: &str,
        card: Value,
        signature: CardSignature,
        keys: Option<jsonwebtoken::jwk::JwkSet>,
    ) -> Result<(), NotConnected> {
        let version = bridge::version_of_card(&card);
        let card = match version {
            A2aVersion::V1_0 => card,
            A2aVersion::V0_3 => bridge::card_to_v1(card).map_err(|e| {
                NotConnected::new(ReasonCode::PeerError, format!("agent card (v0.3): {e}"))
            })?,
        };
        let keys = keys.filter(|_| matches!(signature, CardSignature::Verified { .. }));
        let card = Arc::new(ProviderCard {
            version,
            card,
            signature,
            keys,
        });
        let before = match self.cards.write() {
            Ok(mut m) => m.insert(system.to_string(), card.clone()),
            Err(_) => return Ok(()),
        };
        let changed = before.as_ref() != Some(&card);
        if before.map(|b| b.signature.clone()) != Some(card.signature.clone()) {
            match &card.signature {
                CardSignature::Unsigned => {
                    tracing::info!(system, "agent card signature: unsigned")
                }
                CardSignature::Verified { kid } => {
                    tracing::info!(system, kid = %clip(kid, 64), "agent card signature: verified")
                }
                CardSignature::Failed { why } => {
                    tracing::warn!(system, why = %why, "agent card signature: FAILED")
                }
            }
        }
        if changed {
            self.share_probe(system);
        }
        Ok(())
    }

    /// The combined status of `system` (`Unknown` if never seen).
    pub fn status(&self, system: &str) -> PeerStatus {
        self.entries
            .read()
            .ok()
            .and_then(|m| m.get(system).map(|e| e.effective.clone()))
            .unwrap_or(PeerStatus::Unknown)
    }

    /// The status of `system` according to its probes alone.
    pub fn probe_status(&self, system: &str) -> PeerStatus {
        self.entries
            .read()
            .ok()
            .and_then(|m| m.get(system).map(|e| e.probe.clone()))
            .unwrap_or(PeerStatus::Unknown)
    }

    /// Records a probe result.
    pub fn record_probe(&self, system: &str, outcome: Result<(), NotConnected>) {
        if self.probe_result(system, outcome) {
            self.share_probe(system);
        }
    }

    /// Applies a probe result; whether the probe's own state changed.
    fn probe_result(&self, system: &str, outcome: Result<(), NotConnected>) -> bool {
        let before = self.probe_status(system);
        let _ = self.update(system, |e| {
            let was_degraded = matches!(e.probe, PeerStatus::Degraded { .. });
            match outcome {
                Ok(()) => {
                    if was_degraded {
                        // It was down and came back: whatever the last call
                        // ran into is history.
                        e.call_failure = None;
                    }
                    e.probe = PeerStatus::Healthy;
                }
                Err(nc) => e.probe = PeerStatus::degraded(nc, &e.probe),
            }
        });
        !self.probe_status(system).same_state(&before)
    }

    /// Records the provider-side outcome of a gateway call.
    pub fn record_call(&self, system: &str, outcome: Result<(), NotConnected>) {
        let shared = self.share.get().map(|_| outcome.clone());
        if self.call_result(system, outcome) {
            if let (Some(share), Some(outcome)) = (self.share.get(), shared) {
                share.called(system, &outcome);
            }
        }
    }

    /// Applies a call outcome; whether the combined status changed.
    fn call_result(&self, system: &str, outcome: Result<(), NotConnected>) -> bool {
        self.update(system, |e| match outcome {
            Ok(()) => {
                e.call_failure = None;
                if e.probe == PeerStatus::Unknown {
                    e.probe = PeerStatus::Healthy;
                }
            }
            Err(nc) => {
                let previous = e.call_failure.clone().unwrap_or(PeerStatus::Unknown);
                e.call_failure = Some(PeerStatus::degraded(nc, &previous));
            }
        })
    }

    /// The data plane of `system`: `None` before its first check (or for
    /// a system that runs none).
    pub fn plane_status(&self, system: &str) -> Option<PeerStatus> {
        self.planes.read().ok()?.get(system).cloned()
    }

    /// Records a data plane's identity check. A change redraws the canvas
    /// (its datasource nodes show the plane), nothing else: a dead data
    /// plane does not degrade the agent, which still answers.
    pub fn record_plane(&self, system: &str, outcome: Result<(), NotConnected>) {
        let previous = self.plane_status(system).unwrap_or(PeerStatus::Healthy);
        let next = match outcome {
            Ok(()) => PeerStatus::Healthy,
            Err(nc) => PeerStatus::degraded(nc, &previous),
        };
        if self.set_plane(system, next) {
            self.share_probe(system);
        }
    }

    /// Sets a data plane's status; whether it changed (then the canvas is
    /// told to redraw).
    fn set_plane(&self, system: &str, next: PeerStatus) -> bool {
        let changed = {
            let Ok(mut m) = self.planes.write() else {
                return false;
            };
            let changed = m.get(system).is_none_or(|p| !p.same_state(&next));
            m.insert(system.to_string(), next.clone());
            changed
        };
        if changed {
            tracing::info!(%system, status = ?next.node_status(), reason = ?next.reason(), "data plane status changed");
            self.events.publish(HubEvent::TopologyChanged);
        }
        changed
    }

    /// Forgets systems no longer in the topology.
    pub fn retain(&self, systems: &HashSet<String>) {
        if let Ok(mut m) = self.entries.write() {
            m.retain(|id, _| systems.contains(id));
        }
        if let Ok(mut m) = self.cards.write() {
            m.retain(|id, _| systems.contains(id));
        }
        if let Ok(mut m) = self.planes.write() {
            m.retain(|id, _| systems.contains(id));
        }
    }

    /// Changes `system`'s entry; whether its combined status changed (then
    /// the change is published).
    fn update(&self, system: &str, change: impl FnOnce(&mut Entry)) -> bool {
        let event = {
            let Ok(mut m) = self.entries.write() else {
                return false;
            };
            let entry = m.entry(system.to_string()).or_insert_with(Entry::new);
            change(entry);
            let next = entry.combine();
            let changed = !next.same_state(&entry.effective);
            entry.effective = next.clone();
            changed.then(|| HubEvent::StatusChanged {
                system: system.to_string(),
                status: next.node_status(),
                reason: next.reason(),
                detail: next.detail().map(str::to_string),
            })
        };
        // Published after the lock is released.
        if let Some(ev) = event {
            match &ev {
                HubEvent::StatusChanged {
                    status,
                    reason,
                    detail,
                    ..
                } => {
                    tracing::info!(%system, ?status, ?reason, detail = detail.as_deref().unwrap_or(""), "status changed")
                }
                HubEvent::TopologyChanged
                | HubEvent::InboxChanged { .. }
                | HubEvent::AgentsChanged
                | HubEvent::Traffic { .. } => {}
            }
            self.events.publish(ev);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_call_degrades_until_a_good_call_or_a_recovery() {
        let board = StatusBoard::new(EventBus::new());
        board.record_probe("x", Ok(()));
        board.record_call(
            "x",
            Err(NotConnected::new(ReasonCode::SchemaInvalid, "bad")),
        );
        assert_eq!(board.status("x").reason(), Some(ReasonCode::SchemaInvalid));
        board.record_probe("x", Ok(()));
        assert_eq!(
            board.status("x").reason(),
            Some(ReasonCode::SchemaInvalid),
            "a healthy probe alone does not clear a failed last call"
        );
        board.record_call("x", Ok(()));
        assert_eq!(board.status("x"), PeerStatus::Healthy);

        board.record_call(
            "x",
            Err(NotConnected::new(ReasonCode::PeerUnreachable, "down")),
        );
        board.record_probe(
            "x",
            Err(NotConnected::new(ReasonCode::PeerUnreachable, "down")),
        );
        board.record_probe("x", Ok(()));
        assert_eq!(
            board.status("x"),
            PeerStatus::Healthy,
            "recovery clears the call failure"
        );
    }

    #[test]
    fn a_card_names_the_endpoint_only_under_the_registered_base_url() {
        let card = |url: &str| ProviderCard {
            signature: CardSignature::Unsigned,
            keys: None,
            version: A2aVersion::V0_3,
            card: json!({"supportedInterfaces": [
                {"url": "http://127.0.0.1:9/elsewhere", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"}]}),
        };
        let base = "http://127.0.0.1:3105";
        assert_eq!(
            card("http://127.0.0.1:3105/").jsonrpc_url(base).as_deref(),
            Some("http://127.0.0.1:3105/")
        );
        assert_eq!(
            card("http://127.0.0.1:3105/rpc")
                .jsonrpc_url(base)
                .as_deref(),
            Some("http://127.0.0.1:3105/rpc")
        );
        for elsewhere in [
            "http://127.0.0.1:31050/",
            "http://10.0.0.1:3105/",
            "http://127.0.0.1:3105.evil/",
        ] {
            assert_eq!(card(elsewhere).jsonrpc_url(base), None, "{elsewhere}");
        }
    }
}
