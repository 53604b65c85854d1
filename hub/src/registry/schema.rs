//! The topology file's JSON Schema, generated from the types the loader
//! reads ([`super::model`]), so it cannot say other than what the loader
//! accepts about the file's shape. It is published at
//! [`TOPOLOGY_PUBLISHED`] (`hub schema topology` prints it) for editors:
//! the shipped examples name it in a `yaml-language-server` modeline, so
//! a topology file is checked as it is typed.
//!
//! The schema is the file's *shape*: fields, types, the forms of a
//! contract's rules, unknown fields refused. What needs the whole file —
//! a rule naming a system that exists, an id used twice, a contract that
//! fits its response schema — is the loader's alone, and it says where
//! (file, line, field).

use serde_json::Value;

use super::model::Topology;

/// Where the topology file's schema is published, from the repository's
/// root.
pub const TOPOLOGY_PUBLISHED: &str = "docs/schema/topology.schema.json";

/// Where the schema of one system's section (onboarding, the files beside
/// the reference peers' configs) is published, from the repository's root.
pub const SECTION_PUBLISHED: &str = "docs/schema/topology-section.schema.json";

/// Where the topology file's reference page is published, from the
/// repository's root (`hub schema topology --markdown` prints it).
pub const TOPOLOGY_REFERENCE: &str = "book/src/reference/topology.md";

/// The topology file's schema (JSON Schema 2020-12).
pub fn topology() -> Value {
    schemars::schema_for!(Topology).to_value()
}

/// The topology file's reference page, written from [`topology`].
pub fn topology_reference() -> String {
    exchange::schema_doc::markdown(
        &topology(),
        "The topology file",
        "What `hub serve --topology FILE` reads (the demo's is \
         `config/topology.yaml`): every system, capability and rule, and the \
         hub's own settings. Written from the types the loader reads the file \
         into, so it says what the loader accepts; editors validate a file as \
         it is typed against `docs/schema/topology.schema.json` (`hub schema \
         topology` prints it), which the shipped examples name in a \
         `yaml-language-server` modeline. What needs the whole file — a rule \
         naming a system that exists, an id used twice, a contract that fits \
         its response schema — the loader says when the hub starts or reloads, \
         with file, line and field.",
    )
}
