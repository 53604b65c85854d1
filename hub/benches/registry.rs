//! The registry at scale: the rule check of every call and the canvas's
//! `GET /api/topology`, on the demo topology and on generated ones of
//! 1,000 systems / 10,000 rules and of 500 canvas nodes (DESIGN.md §1
//! rule 2, §2 "topology file").
//!
//! Prints, side by side:
//!
//! - **load**: parsing and validating the topology file (`load_str`, what a
//!   start or a reload pays);
//! - **rule check**: one call's registry decision — `system(provider)`,
//!   `capability(id)` and `permits(consumer, capability, provider)`, as
//!   `gateway::pipeline` asks them — per call, for permitted and refused
//!   pairs. O(1): the figure must not grow with the topology;
//! - **/api/topology**: building the canvas view (`bff::topology::topology_view`)
//!   and serialising it to JSON, with its size.
//!
//! Figures, not assertions (this machine is shared and noisy).
//! `scripts/cargo-env cargo bench -p hub --bench registry`.
//! Env: `BENCH_LOOKUPS` (rule checks per measurement, default 1,000,000).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use hub::events::EventBus;
use hub::health::StatusBoard;
use hub::registry::load::load_str;
use hub::registry::Loaded;
use hub::store::edges::Edge;
use hub::web::bff::topology::topology_view;

/// A generated topology: `systems` systems, `caps` capabilities; system
/// `i` provides `per` capabilities, each under a rule naming the `fan`
/// systems after it (and the hub) as consumers.
struct Shape {
    systems: usize,
    caps: usize,
    per: usize,
    fan: usize,
    agents: usize,
}

impl Shape {
    fn rules(&self) -> usize {
        self.systems * self.per
    }

    fn capability(&self, system: usize, k: usize) -> String {
        format!("cap.{:04}", (system * self.per + k) % self.caps)
    }

    /// The topology file's text.
    fn yaml(&self) -> String {
        let mut y = String::from("version: 1\nhub:\n  id: hub\nsystems:\n");
        for i in 0..self.systems {
            let provides: Vec<String> = (0..self.per).map(|k| self.capability(i, k)).collect();
            let mut consumes: Vec<String> = (1..=self.fan)
                .flat_map(|d| {
                    let p = (i + self.systems - d) % self.systems;
                    (0..self.per).map(move |k| (p, k))
                })
                .map(|(p, k)| self.capability(p, k))
                .collect();
            consumes.sort();
            consumes.dedup();
            let _ = writeln!(
                y,
                "  - id: sys{i:04}\n    name: System {i}\n    base_url: http://127.0.0.1:{}\n    \
                 token_env: WS_TOKEN_SYS{i:04}\n    ip_allowlist: [127.0.0.1/32]\n    \
                 provides: [{}]\n    consumes: [{}]",
                10_000 + i,
                provides.join(", "),
                consumes.join(", ")
            );
            if self.agents > 0 {
                y.push_str("    agents:\n");
                for a in 0..self.agents {
                    let _ = writeln!(
                        y,
                        "      - {{ id: agent{a}, name: Agent {a}, description: Agent {a} of system {i}. }}"
                    );
                }
                y.push_str("    datasources:\n");
                for d in 0..self.agents {
                    let _ = writeln!(
                        y,
                        "      - {{ id: ds{d}, name: Store {d}, description: Store {d} of system {i}. }}"
                    );
                }
            }
        }
        y.push_str("capabilities:\n");
        for c in 0..self.caps {
            let _ = writeln!(
                y,
                "  - id: cap.{c:04}\n    kind: data-share\n    description: Capability {c}.\n    \
                 response_schema: {{ type: object, properties: {{ n: {{ type: integer }} }} }}"
            );
        }
        y.push_str("rules:\n");
        for i in 0..self.systems {
            let consumers: Vec<String> = (1..=self.fan)
                .map(|d| format!("sys{:04}", (i + d) % self.systems))
                .chain(["hub".to_string()])
                .collect();
            for k in 0..self.per {
                let _ = writeln!(
                    y,
                    "  - {{ capability: {}, provider: sys{i:04}, consumers: [{}] }}",
                    self.capability(i, k),
                    consumers.join(", ")
                );
            }
        }
        y
    }

    /// Every permitted edge: each rule's consumers among the systems.
    fn edges(&self) -> Vec<Edge> {
        let mut edges = Vec::new();
        for i in 0..self.systems {
            for d in 1..=self.fan {
                let consumer = format!("sys{:04}", (i + d) % self.systems);
                let provider = format!("sys{i:04}");
                let capability = self.capability(i, d % self.per);
                edges.push(Edge {
                    id: hub::registry::model::edge_id(&consumer, &provider, &capability),
                    consumer,
                    provider,
                    capability,
                    created_at: "2026-12-01T00:00:00Z".into(),
                });
            }
        }
        edges
    }
}

/// The calls the rule check answers: `(consumer, capability, provider)`,
/// half permitted and half not (a consumer one step outside the fan).
fn questions(loaded: &Loaded) -> Vec<(String, String, String)> {
    let t = &loaded.topology;
    let mut qs = Vec::new();
    for r in t.rules.iter().step_by((t.rules.len() / 512).max(1)) {
        let consumer = &r.consumers[0];
        qs.push((consumer.clone(), r.capability.clone(), r.provider.clone()));
        let outside = t
            .systems
            .iter()
            .map(|s| &s.id)
            .find(|id| *id != &r.provider && !r.consumers.contains(id))
            .cloned()
            .unwrap_or_else(|| "nobody".into());
        qs.push((outside, r.capability.clone(), r.provider.clone()));
    }
    qs
}

/// Mean time of one registry decision over `n` calls.
fn rule_check(loaded: &Loaded, n: usize) -> (Duration, usize) {
    let t = &loaded.topology;
    let qs = questions(loaded);
    let mut permitted = 0usize;
    let started = Instant::now();
    for i in 0..n {
        let (consumer, capability, provider) = &qs[i % qs.len()];
        let known = t.system(black_box(provider)).is_some()
            && t.capability(black_box(capability)).is_some();
        if known && t.permits(black_box(consumer), capability, provider) {
            permitted += 1;
        }
    }
    (started.elapsed() / n as u32, permitted)
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = None;
    for _ in 0..runs {
        let started = Instant::now();
        let out = f();
        let took = started.elapsed();
        best = match best {
            Some((b, o)) if b <= took => Some((b, o)),
            _ => Some((took, out)),
        };
    }
    best.expect("at least one run")
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let lookups: usize = std::env::var("BENCH_LOOKUPS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1_000_000);
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let demo_text = std::fs::read_to_string(repo.join("config/topology.yaml"))
        .expect("config/topology.yaml is readable");

    // Names, the topology text, the edges the canvas would show.
    let scale = Shape {
        systems: 1_000,
        caps: 1_000,
        per: 10,
        fan: 10,
        agents: 0,
    };
    let canvas = Shape {
        systems: 100,
        caps: 100,
        per: 10,
        fan: 10,
        agents: 2,
    };
    let cases: Vec<(String, String, Vec<Edge>)> = vec![
        ("demo (config/topology.yaml)".into(), demo_text, Vec::new()),
        (
            format!("{} systems / {} rules", scale.systems, scale.rules()),
            scale.yaml(),
            scale.edges(),
        ),
        (
            format!(
                "canvas: {} nodes / {} edges",
                1 + canvas.systems * (1 + 2 * canvas.agents),
                canvas.systems * canvas.fan
            ),
            canvas.yaml(),
            canvas.edges(),
        ),
    ];

    println!(
        "{:<32} {:>10} {:>12} {:>14} {:>14} {:>10}",
        "topology", "load", "rule check", "topology_view", "+ to JSON", "JSON"
    );
    for (name, text, edges) in &cases {
        let (load, loaded) = best_of(3, || load_str("bench.yaml", text));
        let loaded = match loaded {
            Ok(l) => l,
            Err(e) => panic!("{name}: the generated topology does not load:\n{e}"),
        };
        // The first question builds the index (once per generation).
        let _ = loaded.topology.permits("", "", "");
        let (per_call, permitted) = rule_check(&loaded, lookups);
        assert!(permitted > 0, "{name}: no question was permitted");
        let board = StatusBoard::new(EventBus::new());
        let positions = BTreeMap::new();
        let (view, built) = best_of(5, || {
            topology_view(&loaded, &board, edges, &positions, None)
        });
        let (json, bytes) = best_of(5, || {
            let v = topology_view(&loaded, &board, edges, &positions, None);
            serde_json::to_vec(&v).map(|b| b.len())
        });
        let bytes = bytes.expect("the view serialises");
        println!(
            "{:<32} {:>10} {:>9.0} ns {:>14} {:>14} {:>6} KiB   ({} nodes, {} edges)",
            name,
            ms(load),
            per_call.as_secs_f64() * 1e9,
            ms(view),
            ms(json),
            bytes / 1024,
            built.nodes.len(),
            built.edges.len()
        );
    }
    println!(
        "\nrule check = system(provider) + capability(id) + permits(consumer, capability, provider), \
         mean of {lookups} calls over permitted and refused pairs; load/view best of 3/5."
    );
}
