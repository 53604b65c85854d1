//! Who is alive: the health prober and the status board (DESIGN.md §4,
//! "Degradation").
//!
//! Every system of the current registry is probed on its own task every
//! `probe_interval_ms`: `GET /health` must answer within
//! `probe_timeout_ms` with the reference peer's identity
//! (`service == "wall-street-peer"`, `system == <id>`), so a port answered
//! by another program is caught; the agent card is checked less often.
//! Probes run concurrently and independently: a stalled peer only ever
//! delays its own probe.
//!
//! The [`StatusBoard`] combines two sources per system: the last probe and
//! the last gateway call. A system is degraded if its probe fails *or* its
//! last call failed on the provider's side; a successful call, or the probe
//! seeing the system recover, clears a call failure. Every change of the
//! combined status is published on the event bus.
//!
//! Replicas (`cluster`): only one of them probes (the leader), so the peers
//! see one prober whatever the replica count. The board tells a
//! [`ShareHealth`] what its own probes and calls changed; the other
//! replicas apply it with [`StatusBoard::apply_shared`] and
//! [`StatusBoard::apply_shared_call`], which share nothing further.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use app::dto::{HubEvent, NodeStatus};
use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::events::EventBus;
use crate::registry::model::System;
use crate::registry::Registry;
use crate::surface::bridge;
use exchange::envelope::A2aVersion;
use exchange::health::{CARD_PATH, HEALTH_PATH, PEER_SERVICE};
use exchange::http::{read_limited, transport_failure};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// The card is fetched on every `CARD_EVERY`-th round (and on every round
/// while the system is not healthy).
const CARD_EVERY: u64 = 5;
/// A probe answer larger than this is garbage, not a health document.
const MAX_PROBE_BODY: usize = 64 * 1024;

/// Health of one system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerStatus {
    /// Answers its health check, its card and its last call.
    Healthy,
    /// Failing, since when and why.
    Degraded {
        /// The reason code.
        reason: ReasonCode,
        /// Operator detail (no tokens, no URLs).
        detail: String,
        /// When it became degraded for this reason.
        since: DateTime<Utc>,
    },
    /// Not probed yet.
    Unknown,
}

impl PeerStatus {
    /// The canvas' three-valued status.
    pub fn node_status(&self) -> NodeStatus {
        match self {
            PeerStatus::Healthy => NodeStatus::Healthy,
            PeerStatus::Degraded { .. } => NodeStatus::Degraded,
            PeerStatus::Unknown => NodeStatus::Unknown,
        }
    }

    /// The reason, when degraded.
    pub fn reason(&self) -> Option<ReasonCode> {
        match self {
            PeerStatus::Degraded { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    /// The detail, when degraded.
    pub fn detail(&self) -> Option<&str> {
        match self {
            PeerStatus::Degraded { detail, .. } => Some(detail),
            _ => None,
        }
    }

    /// Same kind and reason: what counts as "no change" for events.
    fn same_state(&self, other: &PeerStatus) -> bool {
        self.node_status() == other.node_status() && self.reason() == other.reason()
    }

    fn degraded(nc: NotConnected, previous: &PeerStatus) -> PeerStatus {
        let since = match previous {
            PeerStatus::Degraded { reason, since, .. } if *reason == nc.reason => *since,
            _ => Utc::now(),
        };
        PeerStatus::Degraded {
            reason: nc.reason,
            detail: nc.detail,
            since,
        }
    }
}

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
/// translated by the [version bridge](crate::surface::bridge)).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderCard {
    /// The version the provider speaks: how the gateway calls it.
    pub version: A2aVersion,
    /// The card, v1.0 shape. Peer text: the hub's own cards copy names,
    /// descriptions and skills from it, nothing else.
    pub card: Value,
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

    /// Records the card `system` served (as fetched, either version).
    pub fn record_card(&self, system: &str, card: Value) -> Result<(), NotConnected> {
        let version = bridge::version_of_card(&card);
        let card = match version {
            A2aVersion::V1_0 => card,
            A2aVersion::V0_3 => bridge::card_to_v1(card).map_err(|e| {
                NotConnected::new(ReasonCode::PeerError, format!("agent card (v0.3): {e}"))
            })?,
        };
        let card = Arc::new(ProviderCard { version, card });
        let changed = match self.cards.write() {
            Ok(mut m) => m.insert(system.to_string(), card.clone()).as_ref() != Some(&card),
            Err(_) => false,
        };
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

/// Probes every system of the registry, forever.
#[derive(Debug, Clone)]
pub struct Prober {
    registry: Arc<Registry>,
    board: Arc<StatusBoard>,
    client: reqwest::Client,
}

impl Prober {
    /// A prober feeding `board`. Probes use their own HTTP client without a
    /// connection pool: each probe is a fresh connection, which is what
    /// "does the port answer" means.
    pub fn new(registry: Arc<Registry>, board: Arc<StatusBoard>) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .build()?;
        Ok(Self {
            registry,
            board,
            client,
        })
    }

    /// Starts the probe loop. Each round spawns one probe task per system
    /// that has no probe still running, so a stalled peer never delays the
    /// others (nor piles up probes of its own).
    pub fn spawn(self) -> JoinHandle<()> {
        tokio::spawn(async move {
            let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
            let mut round: u64 = 0;
            loop {
                let loaded = self.registry.snapshot();
                let hub = &loaded.topology.hub;
                let interval = Duration::from_millis(hub.probe_interval_ms.max(50));
                let timeout = Duration::from_millis(hub.probe_timeout_ms.max(1));
                let ids: HashSet<String> = loaded
                    .topology
                    .systems
                    .iter()
                    .map(|s| s.id.clone())
                    .collect();
                self.board.retain(&ids);
                for system in &loaded.topology.systems {
                    let fresh = in_flight
                        .lock()
                        .map(|mut set| set.insert(system.id.clone()))
                        .unwrap_or(false);
                    if !fresh {
                        continue;
                    }
                    let with_card = round.is_multiple_of(CARD_EVERY)
                        || self.board.probe_status(&system.id) != PeerStatus::Healthy;
                    let (me, system, in_flight) = (self.clone(), system.clone(), in_flight.clone());
                    tokio::spawn(async move {
                        let outcome = me.probe(&system, timeout, with_card).await;
                        me.board.record_probe(&system.id, outcome);
                        if system.data_plane.is_some() {
                            let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                            let plane = crate::gateway::mcp::probe_identity(&system, ms).await;
                            me.board.record_plane(&system.id, plane);
                        }
                        if let Ok(mut set) = in_flight.lock() {
                            set.remove(&system.id);
                        }
                    });
                }
                round = round.wrapping_add(1);
                tokio::time::sleep(interval).await;
            }
        })
    }

    /// One probe of one system: health (identity included), then the card
    /// when asked. Never takes longer than `timeout` per request.
    pub async fn probe(
        &self,
        system: &System,
        timeout: Duration,
        with_card: bool,
    ) -> Result<(), NotConnected> {
        let base = system.base_url.trim_end_matches('/');
        let health = self
            .get_json(&system.id, &format!("{base}{HEALTH_PATH}"), timeout)
            .await?;
        let service = health.get("service").and_then(Value::as_str);
        match service {
            Some(PEER_SERVICE) => {}
            Some(other) => {
                return Err(NotConnected::new(
                    ReasonCode::UnknownPeer,
                    format!("port answered by {}", clip(other, 80)),
                ))
            }
            None => {
                return Err(NotConnected::new(
                    ReasonCode::UnknownPeer,
                    "port answered by an unidentified service",
                ))
            }
        }
        match health.get("system").and_then(Value::as_str) {
            Some(id) if id == system.id => {}
            other => {
                return Err(NotConnected::new(
                    ReasonCode::UnknownPeer,
                    format!(
                        "port answered by {PEER_SERVICE} of system {}",
                        clip(other.unwrap_or("?"), 80)
                    ),
                ))
            }
        }
        if with_card {
            let card = self
                .get_json(&system.id, &format!("{base}{CARD_PATH}"), timeout)
                .await
                .map_err(|nc| NotConnected::new(nc.reason, format!("agent card: {}", nc.detail)))?;
            if !card.get("name").is_some_and(Value::is_string) {
                return Err(NotConnected::new(
                    ReasonCode::PeerError,
                    "agent card has no name",
                ));
            }
            self.board.record_card(&system.id, card)?;
        }
        Ok(())
    }

    async fn get_json(
        &self,
        id: &str,
        url: &str,
        timeout: Duration,
    ) -> Result<Value, NotConnected> {
        let fetch = async {
            let resp = self.client.get(url).send().await?;
            let status = resp.status();
            let body = read_limited(resp, MAX_PROBE_BODY).await?;
            Ok::<_, reqwest::Error>((status, body))
        };
        let (status, body) = match tokio::time::timeout(timeout, fetch).await {
            Err(_) => {
                return Err(NotConnected::new(
                    ReasonCode::Timeout,
                    format!("{id} did not answer within {} ms", timeout.as_millis()),
                ))
            }
            Ok(Err(e)) => return Err(transport_failure(id, &e)),
            Ok(Ok(x)) => x,
        };
        let Some(body) = body else {
            return Err(NotConnected::new(ReasonCode::PeerError, "answer too large"));
        };
        if status != reqwest::StatusCode::OK {
            return Err(NotConnected::new(
                ReasonCode::PeerError,
                format!("HTTP {}", status.as_u16()),
            ));
        }
        serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| NotConnected::new(ReasonCode::PeerError, "answer is not a JSON object"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use axum::{Json, Router};
    use serde_json::json;
    use tokio::net::TcpListener;

    fn system(id: &str, port: u16) -> System {
        System {
            id: id.into(),
            name: id.into(),
            node_type: Default::default(),
            base_url: format!("http://127.0.0.1:{port}"),
            token_env: "UNUSED".into(),
            ip_allowlist: vec![],
            provides: vec![],
            consumes: vec![],
            agents: vec![],
            datasources: vec![],
            data_plane: None,
        }
    }

    fn prober() -> (Prober, Arc<StatusBoard>, EventBus) {
        let bus = EventBus::new();
        let loaded =
            crate::registry::load::load_str("t.yaml", include_str!("../../config/topology.yaml"))
                .expect("valid");
        let reg = Arc::new(Registry::with_loaded("t.yaml", loaded, bus.clone()));
        let board = Arc::new(StatusBoard::new(bus.clone()));
        (Prober::new(reg, board.clone()).expect("client"), board, bus)
    }

    /// A fake peer answering as `service`/`system`, on `listener`.
    fn serve(listener: TcpListener, service: &'static str, system: &'static str) -> JoinHandle<()> {
        let app = Router::new()
            .route(
                HEALTH_PATH,
                get(move || async move { Json(json!({"service": service, "system": system})) }),
            )
            .route(CARD_PATH, get(|| async { Json(json!({"name": "Fake"})) }));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        })
    }

    const T: Duration = Duration::from_millis(500);

    #[tokio::test]
    async fn healthy_then_degraded_then_healthy_again() {
        let (prober, board, bus) = prober();
        let mut events = bus.subscribe();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let sys = system("vendorcorp", port);
        assert_eq!(board.status("vendorcorp"), PeerStatus::Unknown);

        let server = serve(listener, PEER_SERVICE, "vendorcorp");
        board.record_probe("vendorcorp", prober.probe(&sys, T, true).await);
        assert_eq!(board.status("vendorcorp"), PeerStatus::Healthy);

        server.abort();
        let _ = server.await;
        board.record_probe("vendorcorp", prober.probe(&sys, T, false).await);
        let down = board.status("vendorcorp");
        assert_eq!(down.reason(), Some(ReasonCode::PeerUnreachable), "{down:?}");

        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("rebind");
        let _server = serve(listener, PEER_SERVICE, "vendorcorp");
        board.record_probe("vendorcorp", prober.probe(&sys, T, true).await);
        assert_eq!(board.status("vendorcorp"), PeerStatus::Healthy);

        let seen: Vec<NodeStatus> = std::iter::from_fn(|| events.try_recv().ok())
            .filter_map(|e| match e {
                HubEvent::StatusChanged { status, .. } => Some(status),
                _ => None,
            })
            .collect();
        assert_eq!(
            seen,
            [
                NodeStatus::Healthy,
                NodeStatus::Degraded,
                NodeStatus::Healthy
            ],
            "one event per change, none for repeats"
        );
    }

    #[tokio::test]
    async fn identity_mismatch_is_unknown_peer() {
        let (prober, _, _) = prober();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let _s = serve(listener, "some-other-program", "vendorcorp");
        let err = prober
            .probe(&system("vendorcorp", port), T, true)
            .await
            .expect_err("mismatch");
        assert_eq!(err.reason, ReasonCode::UnknownPeer);
        assert_eq!(err.detail, "port answered by some-other-program");

        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let _s = serve(listener, PEER_SERVICE, "helpdesk");
        let err = prober
            .probe(&system("vendorcorp", port), T, true)
            .await
            .expect_err("wrong system");
        assert_eq!(err.reason, ReasonCode::UnknownPeer);
    }

    #[tokio::test]
    async fn a_stalled_peer_times_out_and_garbage_is_peer_error() {
        let (prober, _, _) = prober();
        let app = Router::new()
            .route(
                HEALTH_PATH,
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    "late"
                }),
            )
            .route(CARD_PATH, get(|| async { "not json" }));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let _s = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let started = std::time::Instant::now();
        let err = prober
            .probe(
                &system("vendorcorp", port),
                Duration::from_millis(200),
                false,
            )
            .await
            .expect_err("stalled");
        assert_eq!(err.reason, ReasonCode::Timeout);
        assert!(started.elapsed() < Duration::from_secs(2));

        let garbage = Router::new().route(HEALTH_PATH, get(|| async { "<html>hi</html>" }));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let _g = tokio::spawn(async move {
            let _ = axum::serve(listener, garbage).await;
        });
        let err = prober
            .probe(&system("vendorcorp", port), T, false)
            .await
            .expect_err("garbage");
        assert_eq!(err.reason, ReasonCode::PeerError);
    }

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
