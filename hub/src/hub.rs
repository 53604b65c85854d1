//! Assembling the hub: state, background tasks and the full router
//! (DESIGN.md §3, "hub").
//!
//! The binary stays thin: it parses flags and calls [`Hub::build`],
//! [`Hub::start_background`] and [`Hub::router`]. Integration tests can do
//! the same without a Leptos configuration via [`Hub::api_router`].
//!
//! Two doors: the A2A gateway (`/gateway/*`), behind the peer auth chain,
//! and everything a browser uses (`/api/*` and the canvas pages), behind
//! the UI session guard ([`crate::web::ui_auth`]). Neither door's credentials
//! open the other.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::post;
use axum::Router;
use leptos::prelude::LeptosOptions;
use tokio::task::JoinHandle;
use tower_http::trace::TraceLayer;

use crate::agents::Agents;
use crate::cluster::{Change, Cluster, Reload, Replicated};
use crate::events::{EventBus, Shutdown};
use crate::gateway::{self, Gateway, MAX_REQUEST_BODY};
use crate::health::{Prober, StatusBoard};
use crate::registry::Registry;
use crate::store::budget_plans::HubPlans;
use crate::store::edges::EdgeStore;
use crate::store::idempotency::IdempotencyStore;
use crate::store::negotiations::Negotiations;
use crate::store::task_owners::TaskOwners;
use crate::store::task_records::TaskRecords;
use crate::web::bff::{self, BffState};
use crate::web::ui_auth::headers::HeaderPolicy;
use crate::web::ui_auth::people::People;
use crate::web::ui_auth::session::{SessionSettings, SessionStore};
use crate::web::ui_auth::users::UiUsers;
use crate::web::ui_auth::UiAuth;
use exchange::audit::AuditTrail;
use exchange::db::{Location, Store};
use exchange::inbox::Inbox;

/// Where the hub's inputs are.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// The topology file.
    pub topology: PathBuf,
    /// The hub's store (audit trail, idempotency records, edges,
    /// positions, tasks, the hub's inbox, UI sessions): a SQLite file, or
    /// the PostgreSQL database several replicas share.
    pub database: Location,
    /// The UI users file. Without one nobody can log in to the canvas
    /// (the gateway works regardless).
    pub ui_users: Option<PathBuf>,
    /// The agent config (`config/agents.yaml`). Without one every agent
    /// runs its deterministic path and nothing calls a model.
    pub agents: Option<PathBuf>,
}

/// Why the hub could not start.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The topology file is missing or invalid.
    #[error(transparent)]
    Topology(#[from] crate::registry::LoadError),
    /// The agent config or its prompt library is missing or invalid.
    #[error(transparent)]
    Agents(#[from] crate::agents::AgentsError),
    /// The UI users file is missing or invalid.
    #[error(transparent)]
    UiUsers(#[from] crate::web::ui_auth::users::UsersError),
    /// The people store could not be read or provisioned.
    #[error(transparent)]
    People(#[from] crate::web::ui_auth::people::PeopleError),
    /// The database could not be opened or migrated.
    #[error(transparent)]
    Database(#[from] exchange::db::OpenError),
    /// Joining the other replicas failed.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    /// The rows of a gone hub process could not be settled.
    #[error(transparent)]
    TaskRecords(#[from] crate::store::task_records::TaskRecordsError),
    /// The idempotency claims of a gone hub process could not be freed.
    #[error(transparent)]
    Idempotency(#[from] crate::store::idempotency::IdempotencyError),
    /// The edge store could not be set up.
    #[error(transparent)]
    Edges(#[from] crate::store::edges::EdgeError),
    /// The session store could not be set up.
    #[error(transparent)]
    Sessions(#[from] crate::web::ui_auth::session::SessionError),
    /// The gateway's HTTP client could not be built.
    #[error(transparent)]
    Gateway(#[from] gateway::GatewayError),
    /// The prober's HTTP client could not be built.
    #[error("building the prober's HTTP client: {0}")]
    Prober(#[source] crate::net::tls::TlsError),
    /// The hub's TLS client material (`WS_TLS_PROVIDER_CA`,
    /// `WS_TLS_CLIENT_CERT`, `WS_TLS_CLIENT_KEY`) is unusable.
    #[error(transparent)]
    ProviderTls(crate::net::tls::TlsError),
    /// `WS_METRICS_ALLOW` is not a list of CIDRs.
    #[error("{0}")]
    MetricsAllow(String),
    /// A `WS_*_NETWORKS` list or `WS_EGRESS_DNS` is unusable.
    #[error(transparent)]
    Egress(#[from] crate::net::egress::EgressError),
    /// The hub's signing keys could not be read or made.
    #[error(transparent)]
    Signing(#[from] crate::signing::SigningError),
    /// `WS_PUBLIC_URL` is not an http(s) address.
    #[error("{0}")]
    PublicUrl(String),
    /// `WS_LOGIN_ADDRESS_LIMIT` or `WS_LOGIN_USER_LIMIT` is not `count/seconds`.
    #[error("{0}")]
    LoginLimits(String),
    /// `WS_TRAIL_SUMMARY_SECONDS` is not a positive number.
    #[error("{0}")]
    TrailSummary(String),
}

/// The hub's shared state.
#[derive(Debug, Clone)]
pub struct Hub {
    /// Who exists and who may talk to whom.
    pub registry: Arc<Registry>,
    /// Who is alive.
    pub board: Arc<StatusBoard>,
    /// What the hub trusts and presents when it calls an `https://`
    /// provider (the gateway's forwards and the prober's probes).
    provider_tls: Option<crate::net::tls::client::ProviderTls>,
    /// Forwards calls.
    pub gateway: Arc<Gateway>,
    /// The member issuers' keys and the hub's public addresses.
    pub identity: Arc<crate::identity::Identity>,
    /// What crossed each edge: counts, the inspector, `/metrics`.
    pub traffic: Arc<crate::traffic::Traffic>,
    /// The hub's audit trail.
    pub audit: AuditTrail,
    /// The keys the hub signs its cards and checkpoints with.
    pub keys: Arc<crate::signing::HubKeys>,
    /// The push relay: callers' webhooks, the provider's posts, deliveries.
    pub push: Arc<crate::push::PushRelay>,
    /// The hub's record of the tasks it forwarded.
    records: TaskRecords,
    /// Every negotiation turn that crossed the hub.
    negotiations: Negotiations,
    /// Live changes for canvases.
    pub events: EventBus,
    /// Fired when the hub stops.
    pub shutdown: Shutdown,
    /// Established edges and canvas positions.
    pub edges: Arc<EdgeStore>,
    /// The hub's own approval inbox (proposals from the hub's consults).
    pub inbox: Inbox,
    /// UI users and sessions.
    pub ui: UiAuth,
    /// The hub's own agents and their config.
    pub agents: Arc<Agents>,
    /// Who may scrape `/metrics`.
    pub metrics_door: crate::web::bff::traffic::MetricsDoor,
    /// Where the hub may connect, for what (`crate::net::egress`).
    pub egress: crate::net::egress::Egress,
    /// The hub's store.
    pub store: Store,
    /// This process among the replicas sharing the store.
    pub cluster: Cluster,
}

/// The hub's background tasks; aborted when dropped, so a test that drops
/// its hub leaves nothing probing behind.
#[derive(Debug)]
pub struct BackgroundTasks {
    handles: Vec<JoinHandle<()>>,
}

impl Drop for BackgroundTasks {
    fn drop(&mut self) {
        for h in &self.handles {
            h.abort();
        }
    }
}

impl Hub {
    /// Loads the topology and the UI users (refusing to start on an invalid
    /// one) and opens the hub's database.
    pub async fn build(config: &HubConfig) -> Result<Self, HubError> {
        let events = EventBus::new();
        let registry = Arc::new(Registry::open(&config.topology, events.clone())?);
        let agents = Arc::new(Agents::open(config.agents.clone(), events.clone())?);
        let users = match &config.ui_users {
            Some(path) => UiUsers::load(path)?,
            None => UiUsers::none(),
        };
        let loaded = registry.snapshot();
        let hub_id = loaded.topology.hub.id.clone();
        let store = crate::store::open(&config.database).await?;
        let cluster = Cluster::join(&store).await?;
        let records = TaskRecords::new(store.clone(), cluster.instance());
        let idempotency = IdempotencyStore::new(store.clone());
        settle_the_gone(&cluster, &records, &idempotency).await?;
        let edges = Arc::new(EdgeStore::open(store.clone(), &loaded.topology.initial_edges).await?);
        let inbox = Inbox::open(store.clone(), Arc::new(HubPlans));
        let sessions = SessionStore::open(&config.database).await?;
        let people = People::open(store.clone(), &users, cluster.clone()).await?;
        let board = Arc::new(StatusBoard::new(events.clone()));
        let provider_tls =
            crate::net::tls::client::ProviderTls::from_env().map_err(HubError::ProviderTls)?;
        let egress = crate::net::egress::Egress::from_env()?;
        let identity = Arc::new(crate::identity::Identity::new(&egress));
        let traffic = Arc::new(crate::traffic::Traffic::new());
        let audit = AuditTrail::open(store.clone(), hub_id);
        let negotiations = Negotiations::new(store.clone());
        let keys = crate::signing::HubKeys::open(store.clone()).await?;
        let push = crate::push::PushRelay::new(
            crate::store::push::PushTables::new(store.clone()),
            &egress,
            keys.clone(),
            identity.clone(),
            traffic.prometheus().push(),
        );
        let gateway = Arc::new(Gateway::new(gateway::Wiring {
            registry: registry.clone(),
            board: board.clone(),
            identity: identity.clone(),
            traffic: traffic.clone(),
            audit: audit.clone(),
            idempotency,
            owners: TaskOwners::new(store.clone()),
            records: records.clone(),
            negotiations: negotiations.clone(),
            cluster: cluster.clone(),
            quotas: Some(crate::quotas::Quotas::new(store.clone())),
            egress: egress.clone(),
            provider_tls: provider_tls.clone(),
            keys: keys.clone(),
            push: push.clone(),
        })?);
        let login_counters = traffic.prometheus().login();
        Ok(Self {
            registry,
            board,
            provider_tls,
            gateway,
            identity,
            traffic,
            audit,
            keys,
            push,
            records,
            negotiations,
            events,
            shutdown: Shutdown::new(),
            edges,
            inbox,
            ui: UiAuth {
                people: people.clone(),
                store: sessions,
                settings: SessionSettings::from_env().map_err(HubError::PublicUrl)?,
                throttle: Arc::new(login_throttle(&cluster, &store)?.with_counters(login_counters)),
            },
            agents,
            metrics_door: crate::web::bff::traffic::MetricsDoor::from_env()
                .map_err(HubError::MetricsAllow)?,
            egress,
            store,
            cluster,
        })
    }

    /// Starts the health prober (in one replica of several), the topology
    /// and agent-config watchers, the sweeper of expired UI sessions, the
    /// traffic publisher, the audit trail's signed checkpoints, and (among
    /// replicas) the listener that applies the others' changes.
    pub fn start_background(&self) -> Result<BackgroundTasks, HubError> {
        let prober = Prober::new(
            self.registry.clone(),
            self.board.clone(),
            self.provider_tls.as_ref(),
            &self.egress,
        )
        .map_err(HubError::Prober)?;
        let (registry, cluster) = (self.registry.clone(), self.cluster.clone());
        let topology = crate::registry::watch::spawn_for(
            registry.source().to_path_buf(),
            "the topology",
            move || {
                if registry.reload().is_ok() {
                    cluster.announce(Change::Topology {
                        digest: registry.snapshot().digest.clone(),
                    });
                }
            },
        );
        // The credential store beside the topology file: a credential an
        // admin rotated on the command line (or another replica kept)
        // authenticates from the next generation on.
        let registry = self.registry.clone();
        let credentials = crate::registry::watch::spawn_for(
            crate::registry::credentials::path_beside(self.registry.source()),
            "the credential store",
            move || {
                let _ = registry.reload();
            },
        );
        // People changed on the command line reach this replica within
        // seconds (a change made on the canvas is announced at once).
        let people = self.ui.people.clone();
        let people = tokio::spawn(async move {
            let mut every = tokio::time::interval(crate::web::ui_auth::people::RELOAD_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                if let Err(e) = people.reload().await {
                    tracing::warn!(error = %e, "re-reading the people store");
                }
            }
        });
        let (agents, cluster) = (self.agents.clone(), self.cluster.clone());
        let agents = crate::agents::watch(agents, move || cluster.announce(Change::Agents));
        let cluster = self.cluster.clone();
        let traffic = self.traffic.clone().spawn_publisher(
            self.registry.clone(),
            self.events.clone(),
            std::time::Duration::from_millis(500),
            move |own| cluster.share_traffic(own),
        );
        let mut handles = vec![
            self.cluster.spawn_prober(prober),
            topology,
            credentials,
            people,
            agents,
            tokio::spawn(self.ui.store.clone().sweep_expired()),
            traffic,
            self.gateway.spawn_stranger_summaries(
                gateway::strangers::summary_interval().map_err(HubError::TrailSummary)?,
                self.shutdown.wait(),
            ),
        ];
        // The audit trail's signed checkpoints (`signing` says when).
        handles.push(crate::signing::spawn_trail_checkpoints(
            self.keys.clone(),
            self.store.clone(),
        )?);
        let keys = self.keys.clone();
        handles.push(tokio::spawn(async move {
            let mut every = tokio::time::interval(keys.refresh_every());
            every.tick().await;
            loop {
                every.tick().await;
                if let Err(e) = keys.refresh().await {
                    tracing::warn!(error = %e, "could not refresh the signing keys");
                }
            }
        }));
        handles.extend(self.cluster.spawn_listener(Replicated {
            edges: self.edges.clone(),
            inbox: self.inbox.clone(),
            events: self.events.clone(),
            board: self.board.clone(),
            registry: self.registry.clone(),
            reload_agents: {
                let agents = self.agents.clone();
                Reload::new(move || {
                    let _ = agents.reload();
                })
            },
            traffic: self.traffic.clone(),
            people: Arc::new(self.ui.people.clone()),
        }));
        Ok(BackgroundTasks { handles })
    }

    /// What the BFF handlers (and the canvas's server function) read.
    pub fn bff_state(&self) -> BffState {
        BffState {
            registry: self.registry.clone(),
            board: self.board.clone(),
            events: self.events.clone(),
            shutdown: self.shutdown.clone(),
            edges: self.edges.clone(),
            gateway: self.gateway.clone(),
            traffic: self.traffic.clone(),
            audit: self.audit.clone(),
            keys: self.keys.clone(),
            records: self.records.clone(),
            negotiations: self.negotiations.clone(),
            inbox: self.inbox.clone(),
            agents: self.agents.clone(),
            cluster: self.cluster.clone(),
            onboarding: self.egress.clone(),
            people: self.ui.people.clone(),
        }
    }

    /// The gateway and `/api` routes, without the UI (integration tests
    /// serve this; it needs no Leptos configuration).
    pub fn api_router(&self) -> Router {
        self.routes(None).layer(TraceLayer::new_for_http())
    }

    /// Everything: gateway, `/api` and the Leptos canvas.
    pub fn router(&self, leptos_options: LeptosOptions) -> Router {
        let ui = crate::web::pages::ui_router(
            leptos_options,
            crate::web::pages::HubTopology::shared(self.bff_state()),
        );
        self.routes(Some(ui)).layer(TraceLayer::new_for_http())
    }

    fn routes(&self, ui: Option<Router>) -> Router {
        let gateway = Router::new()
            .route(
                "/gateway/v1/{provider}/{capability}",
                post(gateway::handler),
            )
            // The handler reads at most MAX_REQUEST_BODY bytes itself and
            // answers 413 in the CallResult shape (a tower limit layer would
            // answer plain text, and every gateway answer is JSON).
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BODY))
            .with_state(self.gateway.clone());
        let oidc_login = crate::web::ui_auth::oidc::OidcLogin {
            registry: self.registry.clone(),
            identity: self.identity.clone(),
            people: self.ui.people.clone(),
            // The code exchange goes out the way every identity fetch
            // does: the identity providers' address policy, no redirects.
            http: crate::net::egress::clients::reqwest12(
                &self.egress.gate(crate::net::egress::Purpose::Identity),
                reqwest::Client::builder(),
            )
            .build()
            .unwrap_or_default(),
        };
        let browser = bff::router(self.bff_state())
            .merge(self.ui.routes())
            .merge(oidc_login.routes());
        let browser = match ui {
            Some(ui) => browser.merge(ui),
            None => browser,
        };
        // The session guard covers the browser's door only: the gateway
        // and the A2A surface have the peer auth chain and never see a UI
        // cookie.
        // `/metrics` has its own door (an address allowlist): a scraper
        // holds no UI session.
        let metrics = Router::new()
            .route("/metrics", axum::routing::get(bff::traffic::metrics))
            .with_state((self.bff_state(), self.metrics_door.clone()));
        let headers = HeaderPolicy {
            tls: self.ui.settings.secure,
        };
        let identity = crate::identity::DoorState {
            registry: self.registry.clone(),
            identity: self.identity.clone(),
        };
        let push = Router::new()
            .route(
                &format!("{}/{{relay_id}}", crate::push::PATH),
                post(crate::push::receive::webhook),
            )
            .layer(DefaultBodyLimit::max(crate::push::receive::MAX_EVENT))
            .with_state(self.push.clone());
        let machine = gateway
            .merge(metrics)
            .merge(push)
            .merge(crate::surface::router(
                crate::surface::Surface {
                    gateway: self.gateway.clone(),
                    registry: self.registry.clone(),
                    identity: self.identity.clone(),
                    board: self.board.clone(),
                    keys: self.keys.clone(),
                    trail: self.audit.clone(),
                },
                identity.clone(),
            ))
            .layer(axum::middleware::from_fn_with_state(
                identity,
                crate::identity::door,
            ));
        let public = self.identity.clone();
        crate::net::machine::split(machine, self.ui.protect(browser))
            .layer(axum::middleware::from_fn(
                move |mut request: axum::extract::Request, next: axum::middleware::Next| {
                    crate::net::provider_hosts::rewrite(public.public(), &mut request);
                    next.run(request)
                },
            ))
            .layer(axum::middleware::from_fn_with_state(
                headers,
                crate::web::ui_auth::headers::security_headers,
            ))
    }
}

/// The login limits: in this process for a hub alone, in the shared
/// database for replicas (every replica counts every attempt); the known
/// sources of accounts in the store for both.
fn login_throttle(
    cluster: &Cluster,
    store: &Store,
) -> Result<crate::web::ui_auth::throttle::LoginThrottle, HubError> {
    use crate::web::ui_auth::throttle::{LoginLimits, LoginThrottle};
    let limits = LoginLimits::from_env().map_err(HubError::LoginLimits)?;
    Ok(if cluster.is_shared() {
        LoginThrottle::shared(limits, store.clone())
    } else {
        LoginThrottle::new(limits, store.clone())
    })
}

/// What hub processes that are gone left behind: task rows they were
/// forwarding become `unknown` (nobody will learn their answer), their
/// idempotency claims are freed (the key is retryable). A single hub's only
/// other process is its own earlier run.
async fn settle_the_gone(
    cluster: &Cluster,
    records: &TaskRecords,
    idempotency: &IdempotencyStore,
) -> Result<(), HubError> {
    for claimer in records.submitters().await? {
        if !cluster.claimer_runs(claimer.as_deref()).await {
            let n = records.orphan(claimer.as_deref()).await?;
            tracing::info!(rows = n, claimer = ?claimer, "task submissions of a gone hub process are unknown now");
        }
    }
    for claimer in idempotency.claimers().await? {
        if !cluster.is_alive(&claimer).await {
            idempotency.release_all(&claimer).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
