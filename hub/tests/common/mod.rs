//! A real stack on loopback for integration tests: the `hub` and `peer`
//! binaries of this build, each a separate process with its own store in a
//! temporary directory, configured from the repository's own topology and
//! peer files (rewritten only for ports and test-only peers).
//!
//! The hub's store is a SQLite file, or — with `WS_TEST_STORE=postgres`, or
//! for replicas — a fresh database of the test PostgreSQL cluster
//! (`exchange::testing`): the same tests run on either engine. Replicas
//! ([`Stack::start_replicas`]) are several hub processes on that database
//! behind Debian's nginx ([`replicas`]).
//!
//! Nothing here is a mock: a "stalling" or "lying" peer is the same peer
//! binary started with its fault switches on.
//!
//! Ports: every process started here binds port 0 on its first start and
//! says in its log which port it got (`… listening on http://IP:PORT`,
//! [`reported_port`]); nothing picks a port and hopes it is still free
//! when the process binds it. The peers start first, then the hub with a
//! topology naming their ports; a restart binds the port it had. The
//! exceptions take a [`free_port`]: the replicas' nginx (it refuses port
//! 0) and an earlier hub build under `WS_HUB_BIN`.

#![allow(dead_code)]

pub mod a2a;
pub mod certs;
pub mod contracts;
pub mod dns;
pub mod listener;
pub mod load;
pub mod mcp;
pub mod model;
pub mod oidc;
pub mod replicas;
pub mod stores;

use serde_json::Value as Json;
use serde_yaml_ng::{Mapping, Value};
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository root (tests run with the package dir as cwd).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The reference peer's release binary. It is its own package (`peer`), so
/// cargo does not hand this package its path (`CARGO_BIN_EXE_*` covers a
/// package's own binaries only): it sits next to the hub's. `cargo test
/// --workspace` builds it (the peer package has integration tests);
/// `WS_PEER_BIN` overrides the path.
pub fn peer_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("WS_PEER_BIN") {
        return PathBuf::from(p);
    }
    let path = Path::new(env!("CARGO_BIN_EXE_hub"))
        .with_file_name(format!("peer{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "the peer binary is not at {} — build it first (`cargo build --release -p peer`, \
         or `cargo test --workspace`), or point WS_PEER_BIN at it",
        path.display()
    );
    path
}

/// The hub's binary: this build's, or `WS_HUB_BIN` (a benchmark of an
/// earlier build beside this one).
pub fn hub_bin() -> PathBuf {
    std::env::var_os("WS_HUB_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_hub")))
}

/// A port nobody listens on right now — and maybe somebody does by the
/// time it is bound: only for a process that cannot bind port 0 and say
/// which port it got (nginx).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// The port the topology lists for a system with no process yet, and a
/// peer's `hub_url` names before the hub runs: TCP 9 (discard), where
/// nothing listens on loopback, so connecting is refused at once
/// (`PEER_UNREACHABLE`). A peer whose port is this one binds port 0 when
/// started.
pub const NOBODY_PORT: u16 = 9;

fn loopback(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// The port `id`'s process binds: the one it had, or 0 (any) before it
/// first runs.
fn bind_port(ports: &BTreeMap<String, u16>, id: &str) -> u16 {
    match ports.get(id) {
        Some(&port) if port != NOBODY_PORT => port,
        _ => 0,
    }
}

/// Waits until `child` has said in `log` where it listens — the first line
/// with `marker` followed by `http://IP:PORT` — and answers the port;
/// panics with the log if the process exits first or says nothing for
/// 30 s (a restart that cannot have its port back exits at once).
pub async fn reported_port(child: &mut Child, log: &Path, marker: &str) -> u16 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let exited = child.try_wait().ok().flatten();
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(port) = listening_port(&text, marker) {
            return port;
        }
        if let Some(status) = exited {
            panic!(
                "the process ({status}) never said where it listens (`{marker}http://…`); {}:\n{text}",
                log.display()
            );
        }
        assert!(
            Instant::now() < deadline,
            "no `{marker}http://…` line within 30 s; {}:\n{text}",
            log.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The port of the first `{marker}http://IP:PORT` (or `https://`) in
/// `text`.
fn listening_port(text: &str, marker: &str) -> Option<u16> {
    text.lines().find_map(|line| {
        let rest = &line[line.find(marker)? + marker.len()..];
        let rest = rest
            .strip_prefix("http://")
            .or_else(|| rest.strip_prefix("https://"))?;
        let addr: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '[' | ']'))
            .collect();
        addr.parse::<std::net::SocketAddr>().ok().map(|a| a.port())
    })
}

/// `RUST_LOG` for a process whose line saying where it listens is an
/// info event of `target`: kept on whatever the filter (the test run's
/// `RUST_LOG`, or `quiet` — the binary's default when it is not `info`).
fn listening_log_env(
    extra: &[(String, String)],
    target: &str,
    quiet: Option<&str>,
) -> Vec<(String, String)> {
    let base = extra
        .iter()
        .rev()
        .find(|(k, _)| k == "RUST_LOG")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("RUST_LOG").ok())
        .or(quiet.map(str::to_string));
    base.map(|b| ("RUST_LOG".to_string(), format!("{b},{target}=info")))
        .into_iter()
        .collect()
}

/// Whether the hub binary says where it listens (`hub listening on
/// http://…`). An earlier build under `WS_HUB_BIN` may not: it is given a
/// [`free_port`] instead.
fn hub_reports_its_port() -> bool {
    std::env::var_os("WS_HUB_BIN").is_none()
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Writes an agent config whose prompt library is the repository's.
fn write_agents_file(path: &Path, text: &str) {
    let library = repo().join("config/prompts");
    let text = text.replace(
        "\nprompts: prompts\n",
        &format!("\nprompts: {}\n", library.display()),
    );
    std::fs::write(path, text).expect("write agents.yaml");
}

fn key(k: &str) -> Value {
    Value::String(k.to_string())
}

/// Faults a test peer is started with (the peer config's `faults`).
#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub stall_ms: u64,
    /// A task is accepted and started, but the answer saying so is held
    /// back this long (the caller cannot know it was accepted).
    pub accept_stall_ms: u64,
    pub break_schema: bool,
    pub fail: bool,
    /// Every A2A answer is a body that never ends.
    pub endless_answer: bool,
    /// The peer signs its card (config `sign_card`, not a fault: it rides
    /// here so a test names it where it names the rest).
    pub sign_card: bool,
    /// The signed card's description is changed after signing.
    pub tamper_card: bool,
    /// How negotiation replies are broken (`wrong_party`, `extra_key`,
    /// `unknown_column`, `unparseable`), if at all.
    pub negotiation: Option<&'static str>,
    /// How many replies to break; 0 breaks every one.
    pub negotiation_times: u32,
}

/// One peer of a test stack.
#[derive(Clone, Debug)]
pub struct PeerSpec {
    /// Id in the topology and headers.
    pub id: String,
    /// Which repository peer config and topology section it is cloned from.
    pub template: String,
    pub faults: Faults,
    /// Whether to start its process (a registered-but-dead peer is not).
    pub start: bool,
    /// A model tier for its negotiation agent: the base URL of an
    /// OpenAI-compatible endpoint (the stand-in), if any.
    pub model: Option<String>,
    /// More top-level keys of its peer config, written over the template's
    /// ([`PeerSpec::with_config`]).
    pub config: Vec<(String, Value)>,
}

impl PeerSpec {
    /// A repository peer as configured (`vendorcorp`, `buyercorp`, `helpdesk`, `logistics`).
    pub fn stock(id: &str) -> Self {
        Self {
            id: id.into(),
            template: id.into(),
            faults: Faults::default(),
            start: true,
            model: None,
            config: Vec::new(),
        }
    }
    /// A clone of `template` under a new id, with faults.
    pub fn clone_of(id: &str, template: &str, faults: Faults) -> Self {
        Self {
            id: id.into(),
            template: template.into(),
            faults,
            start: true,
            model: None,
            config: Vec::new(),
        }
    }
    /// Registered in the topology but never started.
    pub fn not_started(mut self) -> Self {
        self.start = false;
        self
    }
    /// Its negotiation agent drafts with the model at `base_url`.
    pub fn with_model(mut self, base_url: &str) -> Self {
        self.model = Some(base_url.to_string());
        self
    }
    /// Its peer config's `key` is `value` (say `tls`: then it serves
    /// HTTPS, and the topology names it at `https://localhost:PORT`).
    pub fn with_config(mut self, key: &str, value: Json) -> Self {
        let value = serde_yaml_ng::to_value(value).expect("a YAML value");
        self.config.push((key.to_string(), value));
        self
    }
    /// Whether its config makes it serve HTTPS.
    fn serves_tls(&self) -> bool {
        self.config.iter().any(|(k, _)| k == "tls")
    }
}

/// A running stack; dropping it kills every process it started.
pub struct Stack {
    pub dir: tempfile::TempDir,
    /// The port the hub (or the replicas' balancer) listens on; 0 until it
    /// first runs.
    pub hub_port: u16,
    pub topology_path: PathBuf,
    /// The UI users file the hub runs with ([`PEOPLE`]).
    pub ui_users_path: PathBuf,
    /// [`UI_USER`]'s password for this stack.
    pub ui_password: String,
    /// The agent config the hub runs with (a copy of
    /// `config/agents.yaml`; [`Stack::write_agents`] swaps it).
    pub agents_path: PathBuf,
    pub tokens: BTreeMap<String, String>,
    /// The port the topology lists for each system: the one its process
    /// bound, or [`NOBODY_PORT`] before it first runs.
    pub peer_ports: BTreeMap<String, u16>,
    /// Ports of the MCP data planes (peers whose config has `mcp`), the
    /// same way.
    pub mcp_ports: BTreeMap<String, u16>,
    pub specs: Vec<PeerSpec>,
    /// Where the hub keeps its state (a file here, or a PostgreSQL
    /// database).
    pub hub_store: exchange::db::Location,
    hub: Option<Child>,
    /// Several hub processes behind a load balancer, when started so.
    replicas: Option<replicas::Replicas>,
    peers: BTreeMap<String, Child>,
    planes: BTreeMap<String, Child>,
    topology: Value,
    /// More environment for every process the stack starts
    /// ([`Stack::start_with_env`]).
    extra_env: Vec<(String, String)>,
}

/// The env var holding a system's token, as the repository's files name it.
pub fn token_env(id: &str) -> String {
    format!("WS_TOKEN_{}", id.to_ascii_uppercase())
}

impl Stack {
    /// The demo's three peers, stock, with the hub: what the end-to-end
    /// checks of the whole exchange run against.
    pub async fn demo() -> Stack {
        Stack::start(Self::demo_peers()).await
    }

    /// The demo's three peers with no contract negotiated: a test
    /// negotiates the one it needs.
    pub async fn demo_without_contracts() -> Stack {
        Stack::start_without_contracts(Self::demo_peers()).await
    }

    /// The specs of the demo's three peers, stock.
    fn demo_peers() -> Vec<PeerSpec> {
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec()
    }

    /// Writes configs for `specs` (plus rules letting `buyercorp` and the hub
    /// consume every cloned provider's capabilities), starts everything,
    /// and negotiates — through the hub, as the demo does — the data
    /// contracts BuyerCorp and the hub read VendorCorp's orders under
    /// ([`Stack::grant_demo_contracts`]).
    pub async fn start(specs: Vec<PeerSpec>) -> Stack {
        let stack = Stack::start_without_contracts(specs).await;
        stack.grant_demo_contracts().await;
        stack
    }

    /// [`Stack::start`] with more environment for every process it starts
    /// (the hub and the peers, now and on a restart), say
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub async fn start_with_env(specs: Vec<PeerSpec>, env: &[(&str, &str)]) -> Stack {
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let stack = Stack::launch(specs, env).await;
        stack.grant_demo_contracts().await;
        stack
    }

    /// [`Stack::start`] without negotiating any contract: every read of a
    /// data-share is `NO_CONTRACT` until a test negotiates one.
    pub async fn start_without_contracts(specs: Vec<PeerSpec>) -> Stack {
        Stack::launch(specs, Vec::new()).await
    }

    async fn launch(specs: Vec<PeerSpec>, extra_env: Vec<(String, String)>) -> Stack {
        Stack::launch_with(specs, extra_env, 1, None).await
    }

    /// The demo's peers and `count` hub replicas on one PostgreSQL
    /// database behind nginx, with the demo's contracts negotiated:
    /// [`Stack::hub_url`] is the balancer.
    pub async fn start_replicas(count: usize, env: &[(&str, &str)]) -> Stack {
        Stack::start_replicas_with(count, Vec::new(), env).await
    }

    /// [`Stack::start_replicas`] with more peers besides the demo's.
    pub async fn start_replicas_with(
        count: usize,
        more: Vec<PeerSpec>,
        env: &[(&str, &str)],
    ) -> Stack {
        Stack::start_replicas_on(count, more, env, None).await
    }

    /// [`Stack::start_replicas_with`] on the database `store` names (a
    /// cluster the test owns, to stop under load); `None`: a fresh database
    /// of the shared test cluster.
    pub async fn start_replicas_on(
        count: usize,
        more: Vec<PeerSpec>,
        env: &[(&str, &str)],
        store: Option<exchange::db::Location>,
    ) -> Stack {
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut specs: Vec<PeerSpec> = ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec();
        specs.extend(more);
        let stack = Stack::launch_with(specs, env, count, store).await;
        stack.grant_demo_contracts().await;
        stack
    }

    async fn launch_with(
        specs: Vec<PeerSpec>,
        extra_env: Vec<(String, String)>,
        replica_count: usize,
        store: Option<exchange::db::Location>,
    ) -> Stack {
        let dir = tempfile::tempdir().expect("tempdir");
        let hub_store = if let Some(store) = store {
            store
        } else if replica_count > 1 || test_store_is_postgres() {
            exchange::testing::fresh_database().await
        } else {
            exchange::db::Location::File(dir.path().join("hub.db"))
        };
        let mut topology = yaml(&repo().join("config/topology.yaml"));
        let base_systems: Vec<Value> = topology["systems"]
            .as_sequence()
            .cloned()
            .unwrap_or_default();
        let mut systems = Vec::new();
        let mut extra_rules = Vec::new();
        let mut tokens = BTreeMap::new();
        let mut peer_ports = BTreeMap::new();
        let mut mcp_ports = BTreeMap::new();
        // Every system is listed where nobody listens until its process
        // has bound a port of its own (`start_peer`).
        for spec in &specs {
            peer_ports.insert(spec.id.clone(), NOBODY_PORT);
            tokens.insert(
                token_env(&spec.id),
                format!("tok-{}-{}", spec.id, uuid_like()),
            );
            let mut system = base_systems
                .iter()
                .find(|s| s["id"].as_str() == Some(&spec.template))
                .cloned()
                .unwrap_or_else(|| panic!("{} is not in config/topology.yaml", spec.template));
            let m = system.as_mapping_mut().expect("system is a mapping");
            m.insert(key("id"), key(&spec.id));
            if spec.id != spec.template {
                m.insert(
                    key("name"),
                    key(&format!("{} ({})", spec.id, spec.template)),
                );
                for cap in m
                    .get(key("provides"))
                    .and_then(Value::as_sequence)
                    .cloned()
                    .unwrap_or_default()
                {
                    let mut rule = Mapping::new();
                    rule.insert(key("capability"), cap.clone());
                    rule.insert(key("provider"), key(&spec.id));
                    rule.insert(
                        key("consumers"),
                        Value::Sequence(vec![key("buyercorp"), key("hub")]),
                    );
                    extra_rules.push(Value::Mapping(rule));
                }
            }
            m.insert(key("base_url"), key(&loopback(NOBODY_PORT)));
            m.insert(key("token_env"), key(&token_env(&spec.id)));
            if let Some(plane) = m.get_mut(key("data_plane")).and_then(Value::as_mapping_mut) {
                mcp_ports.insert(spec.id.clone(), NOBODY_PORT);
                plane.insert(key("base_url"), key(&loopback(NOBODY_PORT)));
            }
            systems.push(system);
        }
        // Callers that are not started still exist as systems (buyercorp's token is used by tests).
        for base in &base_systems {
            let id = base["id"].as_str().unwrap_or_default().to_string();
            if !specs.iter().any(|s| s.id == id) {
                let mut system = base.clone();
                peer_ports.insert(id.clone(), NOBODY_PORT);
                tokens.insert(token_env(&id), format!("tok-{id}-{}", uuid_like()));
                let m = system.as_mapping_mut().expect("mapping");
                m.insert(key("base_url"), key(&loopback(NOBODY_PORT)));
                m.insert(key("token_env"), key(&token_env(&id)));
                if let Some(plane) = m.get_mut(key("data_plane")).and_then(Value::as_mapping_mut) {
                    plane.insert(key("base_url"), key(&loopback(NOBODY_PORT)));
                }
                systems.push(system);
            }
        }
        // Tokens of peers that join later by config are exported up front,
        // as an operator would before adding the topology section.
        tokens
            .entry(token_env("logistics"))
            .or_insert_with(|| format!("tok-logistics-{}", uuid_like()));
        let top = topology.as_mapping_mut().expect("topology is a mapping");
        top.insert(key("systems"), Value::Sequence(systems));
        let mut rules = top
            .get(key("rules"))
            .and_then(Value::as_sequence)
            .cloned()
            .unwrap_or_default();
        rules.extend(extra_rules);
        top.insert(key("rules"), Value::Sequence(rules));
        let topology_path = dir.path().join("topology.yaml");
        let ui_password = format!("pw-{}", uuid_like());
        let ui_users_path = dir.path().join("ui-users.yaml");
        let hash = hub::web::ui_auth::users::hash_password(&ui_password).expect("hash");
        let people: String = PEOPLE
            .iter()
            .map(|(name, role, system)| {
                let system = system.map(|s| format!("    system: {s}\n")).unwrap_or_default();
                format!("  - username: {name}\n    password_hash: \"{hash}\"\n    role: {role}\n{system}")
            })
            .collect();
        std::fs::write(&ui_users_path, format!("users:\n{people}")).expect("write ui users");

        let agents_path = dir.path().join("agents.yaml");
        write_agents_file(
            &agents_path,
            &std::fs::read_to_string(repo().join("config/agents.yaml")).expect("agents.yaml"),
        );
        let mut stack = Stack {
            dir,
            hub_port: 0,
            topology_path,
            ui_users_path,
            ui_password,
            agents_path,
            tokens,
            peer_ports,
            mcp_ports,
            specs: specs.clone(),
            hub_store,
            hub: None,
            replicas: (replica_count > 1).then(|| replicas::Replicas::new(replica_count)),
            peers: BTreeMap::new(),
            planes: BTreeMap::new(),
            topology,
            extra_env,
        };
        // The peers first, each on a port of its own choosing (a peer's
        // server never calls the hub: its `hub_url` is for the `call` and
        // `negotiate` commands); then the hub, on a topology naming them.
        for spec in &specs {
            if spec.start {
                stack.start_peer(&spec.id).await;
            }
        }
        stack.write_topology();
        stack.start_hub().await;
        // Now the hub has a port: into the config files of the peers.
        let started: Vec<String> = stack.peers.keys().cloned().collect();
        for id in started {
            stack.write_peer_config(&id);
        }
        stack
    }

    /// Replaces the hub's agent config with `text` (its `prompts:` pointed
    /// at the repository's library); the hub re-reads it.
    pub fn write_agents(&self, text: &str) {
        write_agents_file(&self.agents_path, text);
    }

    /// Rewrites the topology file from the in-memory copy (the hub reloads it).
    pub fn write_topology(&self) {
        let text = serde_yaml_ng::to_string(&self.topology).expect("topology serialises");
        std::fs::write(&self.topology_path, text).expect("write topology");
    }

    /// Adds a peer the way an operator would: starts the same peer binary
    /// with its own config, then pastes its topology section
    /// (`config/peers/<id>.topology.yaml`: system, capabilities, rules)
    /// into the topology file, which the running hub reloads. No code
    /// changes.
    pub async fn add_peer_by_config(&mut self, id: &str) {
        self.specs.push(PeerSpec::stock(id));
        self.start_peer(id).await;
        self.register_section(id);
    }

    /// Pastes `config/peers/<id>.topology.yaml` (system, capabilities,
    /// rules) into the topology file, the system on the port its process
    /// bound and with the token env var the tests use; the running hub
    /// reloads it.
    fn register_section(&mut self, id: &str) {
        let section = yaml(&repo().join(format!("config/peers/{id}.topology.yaml")));
        let port = self.peer_ports[id];
        let mut system = section["system"].clone();
        let m = system
            .as_mapping_mut()
            .expect("system section is a mapping");
        m.insert(key("base_url"), key(&loopback(port)));
        m.insert(key("token_env"), key(&token_env(id)));
        let top = self.topology.as_mapping_mut().expect("mapping");
        for (field, extra) in [
            ("systems", vec![system]),
            (
                "capabilities",
                section["capabilities"]
                    .as_sequence()
                    .cloned()
                    .unwrap_or_default(),
            ),
            (
                "rules",
                section["rules"].as_sequence().cloned().unwrap_or_default(),
            ),
        ] {
            let mut list = top
                .get(key(field))
                .and_then(Value::as_sequence)
                .cloned()
                .unwrap_or_default();
            list.extend(extra);
            top.insert(key(field), Value::Sequence(list));
        }
        self.write_topology();
    }

    /// Adds a provider that speaks A2A v0.3, the way an operator would add
    /// any peer: its topology section (`config/peers/<id>.topology.yaml`)
    /// into the topology file, its token into the hub's environment (the
    /// hub restarts on the same database), and its process: the agent on
    /// the Python a2a-sdk 0.3 line (`hub/tests/agents/v03_provider.py`,
    /// run from `.tools/venv03`). Waits until the hub's prober has read its
    /// card, so a call after this one is made in v0.3.
    pub async fn add_v03_provider(&mut self, id: &str) {
        let python = repo().join(".tools/venv03/bin/python");
        assert!(
            python.exists(),
            "{} missing: run scripts/setup test",
            python.display()
        );
        let mut program = Command::new(python);
        program
            .arg(repo().join("hub/tests/agents/v03_provider.py"))
            .args(["--system", id, "--name", id, "--listen"]);
        // It logs `system=<id> listening on http://…` to stderr.
        self.start_registered(id, program, "listening on ", Vec::new())
            .await;
        // The prober fetches cards on its first round: wait for it.
        let card_url = format!("{}/a2a/{id}/.well-known/agent-card.json", self.hub_url());
        let caller = self.topology["rules"]
            .as_sequence()
            .and_then(|rules| rules.iter().find(|r| r["provider"].as_str() == Some(id)))
            .and_then(|r| {
                r["consumers"]
                    .as_sequence()?
                    .first()?
                    .as_str()
                    .map(str::to_string)
            })
            .expect("a rule for the v0.3 provider");
        let client = reqwest::Client::new();
        for _ in 0..100 {
            let card: Option<Json> = match client
                .get(&card_url)
                .bearer_auth(self.token(&caller))
                .send()
                .await
            {
                Ok(r) => r.json().await.ok(),
                Err(_) => None,
            };
            // The provider's own card names the agent; the registry's name
            // is the fallback until the prober has read it.
            if card.as_ref().and_then(|c| c["version"].as_str()) == Some("0.3-fixture") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the hub never read {id}'s card: {}", self.hub_log());
    }

    /// Adds the benchmark's echo provider (`peer echo`, answering every
    /// `SendMessage` at once) the way an operator adds any peer: its
    /// topology section (`config/peers/<id>.topology.yaml`), its token in
    /// the hub's environment (the hub restarts on the same database), its
    /// process. Waits until a call through the hub connects.
    pub async fn add_echo(&mut self, id: &str) {
        let mut program = Command::new(peer_bin());
        program.args(["echo", "--system", id, "--listen"]);
        // `peer echo` logs warnings only, but for its listening line.
        let env = listening_log_env(&self.extra_env, "peer::echo", Some("warn"));
        self.start_registered(id, program, "echo provider listening on ", env)
            .await;
    }

    /// Starts `program` (its arguments ending in `--listen`) as provider
    /// `id`: a token in the hub's environment, the process on port 0 with
    /// `--token-env` and `env` besides the stack's (its stderr line
    /// `{marker}http://…` names the port), its topology section on that
    /// port, then the hub restarted on the same database to read both.
    async fn start_registered(
        &mut self,
        id: &str,
        mut program: Command,
        marker: &str,
        env: Vec<(String, String)>,
    ) {
        self.tokens
            .insert(token_env(id), format!("tok-{id}-{}", uuid_like()));
        let log_path = self.dir.path().join(format!("{id}.log"));
        let log = std::fs::File::create(&log_path).expect("log");
        let child = program
            .arg("127.0.0.1:0")
            .arg("--token-env")
            .arg(token_env(id))
            .envs(self.envs())
            .envs(env)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn provider {id}: {e}"));
        self.peers.insert(id.to_string(), child);
        let child = self.peers.get_mut(id).expect("just started");
        let port = reported_port(child, &log_path, marker).await;
        self.peer_ports.insert(id.to_string(), port);
        wait_ready(&format!("{}/health", loopback(port)), &log_path).await;
        self.register_section(id);
        self.kill_hub();
        self.start_hub().await;
    }

    /// The topology the hub was given, for tests that edit it.
    pub fn topology_mut(&mut self) -> &mut Value {
        &mut self.topology
    }

    /// System `id`'s entry in the topology, for tests that edit it.
    pub fn system_mut(&mut self, id: &str) -> &mut Value {
        self.topology["systems"]
            .as_sequence_mut()
            .expect("systems")
            .iter_mut()
            .find(|s| s["id"].as_str() == Some(id))
            .unwrap_or_else(|| panic!("{id} is not in the topology"))
    }

    /// Edits the topology, writes it, and waits (up to 15 s) until the
    /// one hub process has reloaded it.
    pub async fn reload_topology(&mut self, edit: impl FnOnce(&mut Self)) {
        let before = self.hub_log().matches("topology reloaded").count();
        edit(self);
        self.write_topology();
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.hub_log().matches("topology reloaded").count() <= before {
            assert!(
                Instant::now() < deadline,
                "the hub did not reload the topology:\n{}",
                self.hub_log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn peer_config_path(&self, id: &str) -> PathBuf {
        self.dir.path().join(format!("{id}.peer.yaml"))
    }

    /// Database file of a peer (its audit trail and data live there).
    pub fn peer_db(&self, id: &str) -> PathBuf {
        self.dir.path().join(format!("{id}.db"))
    }

    /// The hub's store, opened for reading (a file read-only; the
    /// PostgreSQL database as it is).
    pub async fn hub_store(&self) -> exchange::db::Store {
        match &self.hub_store {
            exchange::db::Location::File(path) => exchange::db::Store::open_read_only(path)
                .await
                .expect("open the hub's file"),
            other => exchange::db::Store::open(other)
                .await
                .expect("open the hub's database"),
        }
    }

    /// The hub's audit trail, read-only.
    pub async fn hub_trail(&self) -> exchange::audit::AuditTrail {
        exchange::audit::AuditTrail::read_only(self.hub_store().await, "hub")
    }

    /// The config file a peer runs with (written on first start).
    pub fn peer_config(&self, id: &str) -> PathBuf {
        self.peer_config_path(id)
    }

    fn envs(&self) -> Vec<(String, String)> {
        self.tokens
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(self.extra_env.iter().cloned())
            .collect()
    }

    /// Writes the config file peer `id` runs with: its template with this
    /// stack's system id, ports (0 for one not bound yet), hub URL, store,
    /// faults and model tier.
    fn write_peer_config(&self, id: &str) {
        let spec = self
            .specs
            .iter()
            .find(|s| s.id == id)
            .cloned()
            .expect("known peer");
        let port = bind_port(&self.peer_ports, id);
        let mut cfg = yaml(&repo().join(format!("config/peers/{}.yaml", spec.template)));
        let m = cfg.as_mapping_mut().expect("peer config is a mapping");
        m.insert(key("system"), key(id));
        m.insert(key("listen"), key(&format!("127.0.0.1:{port}")));
        m.insert(key("token_env"), key(&token_env(id)));
        // Nobody listens there before the hub runs (a peer's server never
        // calls the hub; `launch` rewrites this once it does).
        let hub_port = if self.hub_port == 0 {
            NOBODY_PORT
        } else {
            self.hub_port
        };
        m.insert(key("hub_url"), key(&loopback(hub_port)));
        m.insert(
            key("database"),
            key(&self.peer_db(id).display().to_string()),
        );
        // Dataset paths (csv) are relative to the peer's config file: the
        // copy lives elsewhere, so point it at the repository's file.
        if let Some(ds) = m.get_mut(key("dataset")).and_then(Value::as_mapping_mut) {
            if let Some(p) = ds
                .get(key("path"))
                .and_then(Value::as_str)
                .map(str::to_string)
            {
                let abs = repo().join("config/peers").join(p);
                ds.insert(key("path"), key(&abs.display().to_string()));
            }
        }
        let mut faults = Mapping::new();
        faults.insert(key("stall_ms"), Value::Number(spec.faults.stall_ms.into()));
        faults.insert(key("break_schema"), Value::Bool(spec.faults.break_schema));
        faults.insert(key("fail"), Value::Bool(spec.faults.fail));
        if spec.faults.endless_answer {
            faults.insert(key("endless_answer"), Value::Bool(true));
        }
        if spec.faults.tamper_card {
            faults.insert(key("tamper_card"), Value::Bool(true));
        }
        if spec.faults.sign_card {
            m.insert(key("sign_card"), Value::Bool(true));
        }
        if spec.faults.accept_stall_ms > 0 {
            faults.insert(
                key("accept_stall_ms"),
                Value::Number(spec.faults.accept_stall_ms.into()),
            );
        }
        if let Some(n) = spec.faults.negotiation {
            faults.insert(key("negotiation"), key(n));
            faults.insert(
                key("negotiation_times"),
                Value::Number(spec.faults.negotiation_times.into()),
            );
        }
        m.insert(key("faults"), Value::Mapping(faults));
        if let Some(base_url) = &spec.model {
            let model: Value = serde_yaml_ng::from_str(&format!(
                "tier: {{ id: standin, base_url: \"{base_url}\", model: standin }}\nprompts: {}\ndeadline_ms: 5000\n",
                repo().join("config/prompts").display()
            ))
            .expect("model section");
            m.insert(key("model"), model);
        }
        for (k, v) in &spec.config {
            m.insert(key(k), v.clone());
        }
        let mcp_port = bind_port(&self.mcp_ports, id);
        // Before the agent has its port, the plane's `listen` would equal
        // the agent's (`127.0.0.1:0`), which a peer config refuses: the
        // section comes once the agent has bound (`start_plane`).
        match m.get_mut(key("mcp")).and_then(Value::as_mapping_mut) {
            Some(mcp) if self.mcp_ports.contains_key(id) && (port, mcp_port) != (0, 0) => {
                mcp.insert(key("listen"), key(&format!("127.0.0.1:{mcp_port}")));
            }
            _ => {
                m.remove(key("mcp"));
            }
        }
        let path = self.peer_config_path(id);
        std::fs::write(&path, serde_yaml_ng::to_string(&cfg).expect("yaml"))
            .expect("write peer config");
    }

    /// Starts (or restarts) a peer process, and its data plane if it has
    /// one, and waits for their /health. A first start binds port 0 and
    /// reads the port from the peer's log (`peer listening on http://…`);
    /// a restart binds the port it had, so the topology and every config
    /// naming it stay right. A first start while the hub runs (a peer
    /// registered but not started) points the topology at the new port and
    /// waits until the hub reaches the peer there.
    pub async fn start_peer(&mut self, id: &str) {
        let first = bind_port(&self.peer_ports, id) == 0;
        self.kill_peer(id);
        self.write_peer_config(id);
        let log_path = self.dir.path().join(format!("{id}.log"));
        let log = std::fs::File::create(&log_path).expect("log");
        let child = Command::new(peer_bin())
            .args(["serve", "--config"])
            .arg(self.peer_config_path(id))
            .current_dir(repo())
            .envs(self.envs())
            .envs(listening_log_env(&self.extra_env, "peer::server", None))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn peer");
        self.peers.insert(id.to_string(), child);
        let child = self.peers.get_mut(id).expect("just started");
        let port = reported_port(child, &log_path, "peer listening on ").await;
        self.peer_ports.insert(id.to_string(), port);
        // An HTTPS peer may ask for a certificate this client does not
        // hold: its listening line (logged once it has bound) is enough.
        if !self.peer_serves_tls(id) {
            wait_ready(&format!("{}/health", loopback(port)), &log_path).await;
        }
        if self.mcp_ports.contains_key(id) {
            self.start_plane(id).await;
        }
        if first {
            self.write_peer_config(id);
            if self.point_topology_at(id) && self.hub_runs() {
                self.write_topology();
                self.wait_hub_reaches(id).await;
            }
        }
    }

    /// Starts (or restarts) a peer's MCP data plane (`peer mcp`, its own
    /// process on the peer's store) and waits for its /health: on port 0
    /// the first time (read from its log, `mcp data plane listening on
    /// http://…`), then on that port. Its first start is [`Stack::start_peer`]'s.
    pub async fn start_plane(&mut self, id: &str) {
        // A restart: the running plane goes first (a second one could not
        // bind its port, and the first would outlive the stack).
        self.kill_plane(id);
        let first = bind_port(&self.mcp_ports, id) == 0;
        if first {
            // The section with `listen` on port 0, now the agent has its own.
            self.write_peer_config(id);
        }
        let log_path = self.dir.path().join(format!("{id}-mcp.log"));
        let log = std::fs::File::create(&log_path).expect("log");
        let child = Command::new(peer_bin())
            .args(["mcp", "--config"])
            .arg(self.peer_config_path(id))
            .current_dir(repo())
            .envs(self.envs())
            // `peer mcp` logs warnings only, but for its listening line.
            .envs(listening_log_env(
                &self.extra_env,
                "peer::mcp",
                Some("warn"),
            ))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn peer mcp");
        self.planes.insert(id.to_string(), child);
        let child = self.planes.get_mut(id).expect("just started");
        let port = reported_port(child, &log_path, "mcp data plane listening on ").await;
        self.mcp_ports.insert(id.to_string(), port);
        wait_ready(&format!("{}/health", loopback(port)), &log_path).await;
        if first {
            self.write_peer_config(id);
            self.point_topology_at(id);
        }
    }

    /// Points `id`'s system in the in-memory topology at the ports its
    /// processes bound; false if the topology has no such system (yet).
    fn point_topology_at(&mut self, id: &str) -> bool {
        let agent = self.peer_ports.contains_key(id).then(|| self.peer_url(id));
        let plane = self.mcp_ports.get(id).copied();
        let Some(system) = self
            .topology
            .get_mut("systems")
            .and_then(Value::as_sequence_mut)
            .and_then(|systems| systems.iter_mut().find(|s| s["id"].as_str() == Some(id)))
        else {
            return false;
        };
        let m = system.as_mapping_mut().expect("system is a mapping");
        if let Some(url) = agent {
            m.insert(key("base_url"), key(&url));
        }
        if let (Some(port), Some(dp)) = (
            plane,
            m.get_mut(key("data_plane")).and_then(Value::as_mapping_mut),
        ) {
            dp.insert(key("base_url"), key(&loopback(port)));
        }
        true
    }

    /// Whether a hub process (or a replica) runs.
    fn hub_runs(&self) -> bool {
        self.hub.is_some()
            || self
                .replicas
                .as_ref()
                .is_some_and(replicas::Replicas::running)
    }

    /// Waits until the hub's status board shows `id` healthy: its prober
    /// reached the peer at the address the topology file names now (the
    /// one listed before had nobody), so the hub has loaded that file.
    async fn wait_hub_reaches(&self, id: &str) {
        let ui = self.ui().await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let topology = ui.get_json("/api/topology").await;
            let healthy = topology["nodes"]
                .as_array()
                .and_then(|nodes| nodes.iter().find(|n| n["id"] == id))
                .is_some_and(|n| n["status"] == "healthy");
            if healthy {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the hub never reached {id} at {} within 30 s: {topology}\n{}",
                self.peer_url(id),
                self.hub_log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Kills a peer's MCP data plane (SIGKILL), leaving its agent running.
    pub fn kill_plane(&mut self, id: &str) {
        if let Some(mut child) = self.planes.remove(id) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills a peer process (SIGKILL: as dead as it gets).
    pub fn kill_peer(&mut self, id: &str) {
        if let Some(mut child) = self.peers.remove(id) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts (or restarts) the hub on the same database and waits for it
    /// (every replica and the balancer, for replicas).
    pub async fn start_hub(&mut self) {
        if let Some(count) = self.replicas.as_ref().map(replicas::Replicas::len) {
            for i in 0..count {
                self.start_replica(i).await;
            }
            self.start_balancer().await;
            return;
        }
        // Port 0 the first time (the hub names the port it got in its
        // log), then the same port again.
        let log = self.dir.path().join("hub.log");
        let port = if self.hub_port == 0 && !hub_reports_its_port() {
            free_port()
        } else {
            self.hub_port
        };
        let child = self.spawn_hub(port, &log, &[]);
        let child = self.hub.insert(child);
        self.hub_port = if hub_reports_its_port() {
            reported_port(child, &log, "hub listening on ").await
        } else {
            port
        };
        // Every `/api` route but the login needs a session: a 401 from
        // `/api/session` is the hub up and guarding.
        wait_answering(&format!("{}/api/session", self.hub_url()), 401, &log).await;
    }

    /// A hub process on `port` (0: any), logging to `log`, with `env`
    /// besides the stack's.
    fn spawn_hub(&self, port: u16, log: &Path, env: &[(String, String)]) -> Child {
        let file = std::fs::File::create(log).expect("log");
        Command::new(hub_bin())
            .arg("serve")
            .arg("--topology")
            .arg(&self.topology_path)
            .arg("--database")
            .arg(self.hub_store.to_argument())
            .arg("--ui-users")
            .arg(&self.ui_users_path)
            .arg("--agents")
            .arg(&self.agents_path)
            .current_dir(repo())
            .envs(self.envs())
            .envs(env.iter().cloned())
            .envs(listening_log_env(&self.extra_env, "hub", None))
            .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
            .env("LEPTOS_OUTPUT_NAME", "wall-street")
            .env("LEPTOS_SITE_ROOT", repo().join("target/site"))
            .env("LEPTOS_SITE_PKG_DIR", "pkg")
            .env("LEPTOS_ENV", "PROD")
            // The hub logs (tracing) to stdout, panics to stderr: both in
            // its log.
            .stdout(file.try_clone().expect("log"))
            .stderr(file)
            .spawn()
            .expect("spawn hub")
    }

    /// Logs in as [`UI_USER`] and answers a client carrying the session.
    pub async fn ui(&self) -> UiClient {
        UiClient::login(&self.hub_url(), UI_USER, &self.ui_password)
            .await
            .unwrap_or_else(|status| panic!("login refused with {status}: {}", self.hub_log()))
    }

    /// The hub process's id, while it runs.
    pub fn hub_pid(&self) -> Option<u32> {
        self.hub.as_ref().map(Child::id)
    }

    /// Stops the hub process (every replica and the balancer).
    pub fn kill_hub(&mut self) {
        if let Some(mut child) = self.hub.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(r) = self.replicas.as_mut() {
            r.kill_all();
        }
    }

    /// The hub's published keys (`/.well-known/jwks.json`).
    pub async fn hub_jwks(&self) -> jsonwebtoken::jwk::JwkSet {
        reqwest::get(format!("{}/.well-known/jwks.json", self.hub_url()))
            .await
            .expect("the hub's JWKS")
            .json()
            .await
            .expect("a JWKS")
    }

    pub fn hub_url(&self) -> String {
        loopback(self.hub_port)
    }

    /// Where peer `id`'s server is: `https://localhost:PORT` for one whose
    /// config has `tls` (the name its certificate carries), else
    /// `http://127.0.0.1:PORT`.
    pub fn peer_url(&self, id: &str) -> String {
        let port = self.peer_ports[id];
        if self.peer_serves_tls(id) {
            format!("https://localhost:{port}")
        } else {
            loopback(port)
        }
    }

    fn peer_serves_tls(&self, id: &str) -> bool {
        self.specs.iter().any(|s| s.id == id && s.serves_tls())
    }

    /// Drops `name` from the environment the stack gives the processes it
    /// starts from now on (a restarted hub runs without it).
    pub fn remove_env(&mut self, name: &str) {
        self.extra_env.retain(|(k, _)| k != name);
    }

    pub fn token(&self, id: &str) -> String {
        self.tokens[&token_env(id)].clone()
    }

    /// A gateway call as `caller`, with its real token, from 127.0.0.1.
    pub fn call(&self, caller: &str, provider: &str, capability: &str) -> GatewayCall {
        GatewayCall {
            url: format!("{}/gateway/v1/{provider}/{capability}", self.hub_url()),
            headers: vec![
                (
                    "authorization".into(),
                    format!("Bearer {}", self.token(caller)),
                ),
                ("x-caller-system".into(), caller.into()),
                ("a2a-version".into(), "1.0".into()),
            ],
            body: serde_json::json!({}),
            local_address: None,
        }
    }

    /// Reads the hub log (for assertion messages): every replica's, for
    /// replicas.
    pub fn hub_log(&self) -> String {
        match &self.replicas {
            None => std::fs::read_to_string(self.dir.path().join("hub.log")).unwrap_or_default(),
            Some(r) => (0..r.len())
                .map(|i| {
                    format!(
                        "--- replica {i} ---\n{}",
                        std::fs::read_to_string(self.replica_log(i)).unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.kill_hub();
        let ids: Vec<String> = self.peers.keys().cloned().collect();
        for id in ids {
            self.kill_peer(&id);
        }
        let planes: Vec<String> = self.planes.keys().cloned().collect();
        for id in planes {
            self.kill_plane(&id);
        }
    }
}

/// One gateway request under construction.
pub struct GatewayCall {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Json,
    pub local_address: Option<std::net::IpAddr>,
}

/// What the hub answered, and how long it took.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub json: Json,
    pub elapsed: Duration,
    pub traceparent: Option<String>,
    /// The hub's signed receipt of the call (`wall-street-receipt`).
    pub receipt: Option<String>,
}

impl Answer {
    /// The reason code of a `not_connected` answer (panics with the body otherwise).
    pub fn reason(&self) -> &str {
        assert_eq!(
            self.json["status"], "not_connected",
            "expected not_connected, got {}",
            self.json
        );
        self.json["reason"].as_str().unwrap_or("<none>")
    }
    pub fn result(&self) -> &Json {
        assert_eq!(
            self.json["status"], "connected",
            "expected connected, got {}",
            self.json
        );
        &self.json["result"]
    }
}

impl GatewayCall {
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| n != name);
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
    pub fn without_header(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| n != name);
        self
    }
    pub fn body(mut self, body: Json) -> Self {
        self.body = body;
        self
    }
    pub fn source_ip(mut self, ip: &str) -> Self {
        self.local_address = Some(ip.parse().expect("ip"));
        self
    }
    pub async fn send(self) -> Answer {
        let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(30));
        if let Some(ip) = self.local_address {
            builder = builder.local_address(ip);
        }
        let client = builder.build().expect("client");
        let mut req = client.post(&self.url).json(&self.body);
        for (n, v) in &self.headers {
            req = req.header(n.as_str(), v.as_str());
        }
        let started = Instant::now();
        let resp = req.send().await.expect("the hub answers every call");
        let status = resp.status().as_u16();
        let traceparent = resp
            .headers()
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let receipt = resp
            .headers()
            .get(exchange::receipt::HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let json: Json = resp.json().await.expect("the hub answers JSON");
        Answer {
            status,
            json,
            elapsed: started.elapsed(),
            traceparent,
            receipt,
        }
    }
}

/// The UI user every test stack has.
pub const UI_USER: &str = "operator";
/// Everybody the stack's UI users file provisions, all with the stack's
/// UI password: the admin [`UI_USER`], and one person per role and scope
/// the role tests log in as (username, role, member system).
pub const PEOPLE: &[(&str, &str, Option<&str>)] = &[
    (UI_USER, "admin", None),
    ("a-viewer", "viewer", None),
    ("an-operator", "operator", None),
    ("an-approver", "approver", None),
    ("buyer-operator", "operator", Some("buyercorp")),
    ("vendor-viewer", "viewer", Some("vendorcorp")),
];

/// A browser's view of the hub: an HTTP client that follows no redirect
/// and sends the session cookie and the CSRF token it got at login.
#[derive(Clone, Debug)]
pub struct UiClient {
    pub base: String,
    /// `ws_session=<id>`.
    pub cookie: String,
    /// The session's CSRF token.
    pub csrf: String,
    /// The whole `Set-Cookie` header of the login answer.
    pub set_cookie: String,
    pub client: reqwest::Client,
}

/// A client that follows no redirect (a 303 must be seen as a 303).
pub fn plain_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

impl UiClient {
    /// `POST /api/login`; the HTTP status when refused.
    pub async fn login(base: &str, username: &str, password: &str) -> Result<UiClient, u16> {
        let client = plain_client();
        let resp = client
            .post(format!("{base}/api/login"))
            .json(&serde_json::json!({"username": username, "password": password}))
            .send()
            .await
            .expect("the hub answers a login");
        let status = resp.status().as_u16();
        if status != 200 {
            return Err(status);
        }
        let set_cookie = resp
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let cookie = set_cookie.split(';').next().unwrap_or_default().to_string();
        let session: Json = resp.json().await.expect("a SessionView");
        Ok(UiClient {
            base: base.to_string(),
            cookie,
            csrf: session["csrf_token"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            set_cookie,
            client,
        })
    }

    /// A request with the session cookie and the CSRF token.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("x-csrf-token", &self.csrf)
    }

    /// A GET with the session cookie; status and body text.
    pub async fn get(&self, path: &str) -> (u16, String) {
        let resp = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap_or_default())
    }

    /// A GET that must answer 200 with JSON.
    pub async fn get_json(&self, path: &str) -> Json {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: not JSON: {e}: {body}"))
    }

    /// Saves an onboarding section against the topology file's digest
    /// `base` (`POST /api/systems`); status and the JSON answer.
    pub async fn save_section(&self, base: &str, section: &str) -> (u16, Json) {
        let (status, body) = self
            .send(
                reqwest::Method::POST,
                "/api/systems",
                &serde_json::json!({ "base": base, "section": section }),
            )
            .await;
        (
            status,
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")),
        )
    }

    /// A state-changing request with a JSON body; status and body text.
    pub async fn send(&self, method: reqwest::Method, path: &str, body: &Json) -> (u16, String) {
        let resp = self
            .request(method.clone(), path)
            .json(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap_or_default())
    }
}

/// Waits until `url` answers `status` (the process is up), or panics with
/// the log.
async fn wait_answering(url: &str, status: u16, log: &Path) {
    wait_for(url, log, |s| s == status, &format!("answer {status}")).await
}

/// Waits until `url` answers any 2xx.
async fn wait_ready(url: &str, log: &Path) {
    wait_for(url, log, |s| (200..300).contains(&s), "become ready").await
}

async fn wait_for(url: &str, log: &Path, ok: impl Fn(u16) -> bool, what: &str) {
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(r) = client
            .get(url)
            .timeout(Duration::from_millis(500))
            .send()
            .await
        {
            if ok(r.status().as_u16()) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{url} did not {what} within 30 s; log:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

fn uuid_like() -> String {
    use std::time::SystemTime;
    let n = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{n:x}")
}

/// Opens a trail file of another process read-only.
pub async fn trail(db: &Path, system: &str) -> exchange::audit::AuditTrail {
    let store = exchange::db::Store::open_read_only(db)
        .await
        .expect("open trail");
    exchange::audit::AuditTrail::read_only(store, system)
}

/// A read-only native pool on a peer's SQLite file (its own tables).
pub async fn peer_pool(db: &Path) -> sqlx::SqlitePool {
    use std::str::FromStr;
    let options =
        sqlx::sqlite::SqliteConnectOptions::from_str(&format!("sqlite://{}", db.display()))
            .expect("a path")
            .read_only(true);
    sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", db.display()))
}

/// The samples of `metric` on the `/metrics` of the hub (or replica) at
/// `base`: each sample's labels (`{a="x"}`, or empty) and its value.
pub async fn metric_samples(base: &str, metric: &str) -> BTreeMap<String, u64> {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(metric)?;
            let (labels, value) = rest.rsplit_once(' ')?;
            Some((labels.to_string(), value.trim().parse().ok()?))
        })
        .collect()
}

/// Whether the hub's store in these tests is PostgreSQL
/// (`WS_TEST_STORE=postgres`: the integration suite's PostgreSQL run).
pub fn test_store_is_postgres() -> bool {
    std::env::var("WS_TEST_STORE").is_ok_and(|v| v == "postgres")
}
