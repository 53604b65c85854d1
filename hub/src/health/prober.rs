//! The prober: every system of the registry probed on its own task, its
//! `/health` (with the reference peer's identity), now and then its agent
//! card, and its data plane's identity; each result recorded on the
//! [status board](super::StatusBoard).
//!
//! Every request goes out by the egress path (purpose `Member`,
//! `WS_MEMBER_NETWORKS`): a fresh connection per probe, the address it
//! connects to checked, no redirect followed (a redirect is a failed
//! probe saying so), at most [`MAX_PROBE_BODY`] read. A refusal of the
//! policy is the board's reason: the canvas shows it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::{PeerStatus, StatusBoard};
use crate::dataplane::HeaderCarrier;
use crate::net::egress::{Egress, FetchError, Fetcher, Limits, Purpose};
use crate::net::tls::client::ProviderTls;
use crate::net::tls::TlsError;
use crate::registry::model::System;
use crate::registry::Registry;
use exchange::health::{CARD_PATH, HEALTH_PATH, PEER_SERVICE};
use exchange::http::transport_failure;
use exchange::jws::{self, CardSignature, JWKS_PATH};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// The card is fetched on every `CARD_EVERY`-th round (and on every round
/// while the system is not healthy).
const CARD_EVERY: u64 = 5;
/// A probe answer larger than this is garbage, not a health document.
const MAX_PROBE_BODY: usize = 64 * 1024;

/// Probes every system of the registry, forever.
#[derive(Debug, Clone)]
pub struct Prober {
    registry: Arc<Registry>,
    board: Arc<StatusBoard>,
    client: Fetcher,
    /// The data planes' identity checks.
    planes: HeaderCarrier,
}

impl Prober {
    /// A prober feeding `board`, going out by `egress`. Probes use their
    /// own HTTP clients without a connection pool: each probe is a fresh
    /// connection, which is what "does the port answer" means. An
    /// `https://` provider is probed with `tls` (the CAs the hub trusts,
    /// the certificate it presents).
    pub fn new(
        registry: Arc<Registry>,
        board: Arc<StatusBoard>,
        tls: Option<&ProviderTls>,
        egress: &Egress,
    ) -> Result<Self, TlsError> {
        let mut builder = reqwest::Client::builder().pool_max_idle_per_host(0);
        if let Some(tls) = tls {
            builder = tls.reqwest(builder)?;
        }
        let client = egress
            .fetcher(Purpose::Member, builder)
            .map_err(|e| TlsError::Client(e.to_string()))?;
        let planes =
            HeaderCarrier::new(egress, false).map_err(|e| TlsError::Client(e.to_string()))?;
        Ok(Self {
            registry,
            board,
            client,
            planes,
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
                    let tokens = loaded.tokens.clone();
                    tokio::spawn(async move {
                        let outcome = me.probe(&system, timeout, with_card).await;
                        me.board.record_probe(&system.id, outcome);
                        if system.data_plane.is_some() {
                            let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                            let plane =
                                crate::dataplane::probe_identity(&me.planes, &system, &tokens, ms)
                                    .await;
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
            let (signature, keys) = self.check_signature(system, &card, timeout).await;
            self.board.record_card(&system.id, card, signature, keys)?;
        }
        Ok(())
    }

    /// What the card's signatures say, checked against the keys the
    /// provider publishes: at the JWKS URL its signature names (`jku`),
    /// which must lie under the registry's address of the provider (a card
    /// cannot vouch for itself with keys from anywhere), else at
    /// `{base}/.well-known/jwks.json`; with the keys, which then also
    /// verify the provider's signatures of its answers.
    async fn check_signature(
        &self,
        system: &System,
        card: &Value,
        timeout: Duration,
    ) -> (CardSignature, Option<jsonwebtoken::jwk::JwkSet>) {
        if card
            .get("signatures")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            return (CardSignature::Unsigned, None);
        }
        let base = system.base_url.trim_end_matches('/');
        let url = match jws::key_url(card) {
            None => format!("{base}{JWKS_PATH}"),
            Some(url)
                if url
                    .strip_prefix(base)
                    .is_some_and(|rest| rest.starts_with('/')) =>
            {
                url
            }
            Some(_) => {
                return (
                    CardSignature::Failed {
                        why: "the signature's key URL (jku) is not under the provider's address"
                            .into(),
                    },
                    None,
                )
            }
        };
        let keys = match self.get_json(&system.id, &url, timeout).await {
            Ok(keys) => keys,
            Err(nc) => {
                return (
                    CardSignature::Failed {
                        why: format!("the provider's keys: {}", nc.detail),
                    },
                    None,
                )
            }
        };
        match serde_json::from_value::<jsonwebtoken::jwk::JwkSet>(keys) {
            Ok(keys) => (jws::verify_card(card, &keys), Some(keys)),
            Err(_) => (
                CardSignature::Failed {
                    why: "the provider's keys are not a JWKS".into(),
                },
                None,
            ),
        }
    }

    async fn get_json(
        &self,
        id: &str,
        url: &str,
        timeout: Duration,
    ) -> Result<Value, NotConnected> {
        let limits = Limits {
            max_bytes: MAX_PROBE_BODY,
            timeout,
        };
        let fetched = match self.client.get(url, "application/json", limits).await {
            Ok(fetched) => fetched,
            Err(FetchError::Timeout { .. }) => {
                return Err(NotConnected::new(
                    ReasonCode::Timeout,
                    format!("{id} did not answer within {} ms", timeout.as_millis()),
                ))
            }
            Err(FetchError::Refused(refusal)) => {
                return Err(NotConnected::new(
                    ReasonCode::PeerUnreachable,
                    refusal.detail(id),
                ))
            }
            Err(FetchError::TooLarge { .. }) => {
                return Err(NotConnected::new(ReasonCode::PeerError, "answer too large"))
            }
            Err(FetchError::Transport(e)) => return Err(transport_failure(id, &e)),
            Err(e @ FetchError::BadUrl { .. }) => {
                return Err(NotConnected::new(ReasonCode::PeerError, e.to_string()))
            }
        };
        if fetched.status.is_redirection() {
            // Whatever the redirect names, the hub does not go there: the
            // registry says where a system is.
            return Err(NotConnected::new(
                ReasonCode::PeerError,
                format!(
                    "HTTP {}: a redirect, which the hub's egress policy does not follow",
                    fetched.status.as_u16()
                ),
            ));
        }
        if fetched.status != reqwest::StatusCode::OK {
            return Err(NotConnected::new(
                ReasonCode::PeerError,
                format!("HTTP {}", fetched.status.as_u16()),
            ));
        }
        serde_json::from_slice::<Value>(&fetched.body)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| NotConnected::new(ReasonCode::PeerError, "answer is not a JSON object"))
    }
}

#[cfg(test)]
#[path = "prober_tests.rs"]
mod tests;
