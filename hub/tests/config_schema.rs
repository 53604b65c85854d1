//! The configuration files' published JSON Schemas (`docs/schema/`,
//! `hub::registry::schema`, `peer schema`): each is exactly what the
//! loader's types generate, every shipped example names its schema in a
//! `yaml-language-server` modeline, validates against it and loads, and
//! the schema and the loader refuse the same mistakes of shape.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use hub::onboarding::section::Section;
use hub::registry::schema::{self, SECTION_PUBLISHED, TOPOLOGY_PUBLISHED};
use serde_json::Value;

/// Which file a shipped example is.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Topology,
    Section,
    /// A reference peer's config, read by the `peer` binary.
    Peer,
}

impl Kind {
    fn published(self) -> &'static str {
        match self {
            Kind::Topology => TOPOLOGY_PUBLISHED,
            Kind::Section => SECTION_PUBLISHED,
            Kind::Peer => "docs/schema/peer.schema.json",
        }
    }

    fn generated(self) -> Value {
        match self {
            Kind::Topology => schema::topology(),
            Kind::Section => Section::schema(),
            Kind::Peer => {
                let out = Command::new(common::peer_bin())
                    .arg("schema")
                    .output()
                    .expect("peer schema");
                assert!(out.status.success(), "peer schema: {out:?}");
                serde_json::from_slice(&out.stdout).expect("peer schema prints JSON")
            }
        }
    }

    /// Whether the loader accepts `text` (the file at `path`), and why not.
    fn loads(self, path: &Path, text: &str) -> Result<(), String> {
        match self {
            Kind::Topology => hub::registry::load::load_str("example", text)
                .map(drop)
                .map_err(|e| e.to_string()),
            Kind::Section => Section::parse(text).map(drop),
            Kind::Peer => {
                let out = Command::new(common::peer_bin())
                    .args(["check", "--config"])
                    .arg(path)
                    .output()
                    .expect("peer check");
                match out.status.success() {
                    true => Ok(()),
                    false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
                }
            }
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every topology file and section the repository ships.
fn shipped() -> Vec<(PathBuf, Kind)> {
    let mut out = vec![(root().join("config/topology.yaml"), Kind::Topology)];
    let peers = std::fs::read_dir(root().join("config/peers")).expect("config/peers");
    let mut sections: Vec<PathBuf> = peers
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".topology.yaml"))
        .collect();
    sections.sort();
    assert!(sections.len() >= 3, "the peers' sections: {sections:?}");
    out.extend(sections.into_iter().map(|p| (p, Kind::Section)));
    for peer in ["buyercorp", "helpdesk", "logistics", "vendorcorp"] {
        out.push((root().join(format!("config/peers/{peer}.yaml")), Kind::Peer));
    }
    out
}

fn published(kind: Kind) -> Value {
    let path = root().join(kind.published());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The schema's complaints about `text` (YAML), one line each.
fn violations(kind: Kind, text: &str) -> Vec<String> {
    let value: Value = serde_yaml_ng::from_str(text).expect("YAML");
    let validator = jsonschema::validator_for(&published(kind)).expect("a valid schema");
    validator
        .iter_errors(&value)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

#[test]
fn the_published_schemas_are_what_the_loaders_types_generate() {
    for (kind, command) in [(Kind::Topology, "topology"), (Kind::Section, "section")] {
        assert!(
            published(kind) == kind.generated(),
            "{} differs from the loader's types: run `{command} > {}`",
            kind.published(),
            kind.published()
        );
    }
}

#[test]
fn every_shipped_example_names_its_schema_validates_and_loads() {
    for (path, kind) in shipped() {
        let text = std::fs::read_to_string(&path).expect("the example");
        let modeline = text
            .lines()
            .find_map(|l| l.strip_prefix("# yaml-language-server: $schema="))
            .unwrap_or_else(|| panic!("{}: no yaml-language-server modeline", path.display()));
        let named = path.parent().expect("a directory").join(modeline.trim());
        assert_eq!(
            named.canonicalize().expect("the named schema exists"),
            root()
                .join(kind.published())
                .canonicalize()
                .expect("published"),
            "{}",
            path.display()
        );
        assert_eq!(
            violations(kind, &text),
            Vec::<String>::new(),
            "{}",
            path.display()
        );
        if let Err(e) = kind.loads(&path, &text) {
            panic!("{}: the loader refuses it: {e}", path.display());
        }
    }
}

#[test]
fn the_schema_and_the_loader_refuse_the_same_mistakes_of_shape() {
    let path = root().join("config/topology.yaml");
    let text = std::fs::read_to_string(&path).expect("the topology");
    let mistakes: [(&str, &str, &str); 6] = [
        (
            "an unknown top-level field",
            "version: 1\n",
            "version: 1\nversoin: 1\n",
        ),
        (
            "a version that is not a number",
            "version: 1\n",
            "version: one\n",
        ),
        (
            "a misspelt system field",
            "    base_url: http://127.0.0.1:3101\n",
            "    base_ur: http://127.0.0.1:3101\n",
        ),
        (
            "an unknown capability kind",
            "    kind: data-share\n",
            "    kind: data_share\n",
        ),
        (
            "a rounding past nine decimals",
            "groups[].value: { round: 2 }",
            "groups[].value: { round: 20 }",
        ),
        (
            "a rule that is not one of the forms",
            "budget: { round: 0 }",
            "budget: { hide: 0 }",
        ),
    ];
    for (what, from, to) in mistakes {
        assert!(text.contains(from), "{what}: `{from}` is in the topology");
        let wrong = text.replacen(from, to, 1);
        assert!(
            !violations(Kind::Topology, &wrong).is_empty(),
            "{what}: the schema accepts it"
        );
        assert!(
            Kind::Topology.loads(&path, &wrong).is_err(),
            "{what}: the loader accepts it"
        );
    }

    // A peer's file: a misspelt field, refused by the schema and by
    // `peer check` (which reads the file, so the mistake is written to one).
    let path = root().join("config/peers/vendorcorp.yaml");
    let text = std::fs::read_to_string(&path).expect("the peer config");
    assert!(text.contains("\nname: VendorCorp\n"));
    let wrong = text.replacen("\nname: VendorCorp\n", "\nnmae: VendorCorp\n", 1);
    assert!(
        !violations(Kind::Peer, &wrong).is_empty(),
        "a misspelt peer field: the schema accepts it"
    );
    let dir = tempfile::tempdir().expect("a directory");
    let copy = dir.path().join("vendorcorp.yaml");
    std::fs::write(&copy, &wrong).expect("the copy");
    let refused = Kind::Peer
        .loads(&copy, &wrong)
        .expect_err("peer check accepts it");
    assert!(refused.contains("nmae"), "{refused}");
}
