//! The shipped configuration files agree across the two parties of a
//! data-share grant: the hub's topology (its `input_schema`) and each data
//! owner's own peer config (its `negotiable_columns`). The hub links no peer
//! code, so the peer files are read here as plain YAML.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The two halves of each shipped data-share grant say the same thing:
/// the columns the hub's `input_schema` lets a query name are exactly
/// the columns the data owner grants (a drift would refuse good
/// queries at one side; it could never widen what is read).
#[test]
fn shipped_grants_match_the_hubs_input_contracts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config");
    let yaml = |path: PathBuf| -> serde_json::Value {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
    };
    let mut capabilities = Vec::new();
    for file in ["topology.yaml", "peers/logistics.topology.yaml"] {
        if let Some(list) = yaml(root.join(file))["capabilities"].as_array() {
            capabilities.extend(list.iter().cloned());
        }
    }
    let mut checked = 0;
    for name in ["vendorcorp", "logistics"] {
        let peer = yaml(root.join(format!("peers/{name}.yaml")));
        let skills = peer["skills"].as_array().cloned().unwrap_or_default();
        for skill in skills.iter().filter(|s| s["handler"] == "table_query") {
            let capability = skill["capability"].as_str().unwrap_or_default();
            let cap = capabilities
                .iter()
                .find(|cap| cap["id"] == capability)
                .unwrap_or_else(|| panic!("{capability} has no topology section"));
            let hub: BTreeSet<String> = hub::contract::input_grants(&cap["input_schema"])
                .into_iter()
                .flat_map(|(_, allowed)| allowed)
                .collect();
            let owner: BTreeSet<String> = skill["negotiable_columns"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect();
            assert_eq!(
                hub, owner,
                "{capability}: hub input_schema vs {name}'s negotiable_columns"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2);
}
