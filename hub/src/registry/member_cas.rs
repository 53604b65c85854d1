//! The members' CAs, read once per registry generation.
//!
//! A system whose topology entry names `mtls.ca` has its client
//! certificates issued by that CA. The PEM file is read when a generation
//! is loaded, with the file's other checks: an unreadable or unusable CA
//! is a located error of the topology (`systems[i].mtls.ca`), and a
//! reload reads it again (a member rotating its CA edits nothing else).

use std::collections::HashMap;
use std::path::Path;

use exchange::located::{Issue, Locator, Seg};

use super::model::Topology;
use crate::net::tls::client_auth::MemberCa;

/// Each system's CA, by system id.
#[derive(Debug, Clone, Default)]
pub struct MemberCas {
    by_system: HashMap<String, MemberCa>,
}

impl MemberCas {
    /// The CAs `topology` names, read relative to `dir` (the topology
    /// file's directory); each that cannot be used is an issue.
    pub fn read(topology: &Topology, dir: &Path, locator: &Locator) -> Result<Self, Vec<Issue>> {
        let mut by_system = HashMap::new();
        let mut issues = Vec::new();
        for (i, system) in topology.systems.iter().enumerate() {
            let Some(ca) = system.mtls.as_ref().and_then(|m| m.ca.as_deref()) else {
                continue;
            };
            match MemberCa::from_pem_file(&dir.join(ca)) {
                Ok(member_ca) => {
                    by_system.insert(system.id.clone(), member_ca);
                }
                Err(e) => issues.push(locator.issue(
                    &[
                        Seg::key("systems"),
                        Seg::Index(i),
                        Seg::key("mtls"),
                        Seg::key("ca"),
                    ],
                    e.to_string(),
                )),
            }
        }
        if issues.is_empty() {
            Ok(Self { by_system })
        } else {
            Err(issues)
        }
    }

    /// System `id`'s CA, if its entry names one.
    pub fn of(&self, id: &str) -> Option<&MemberCa> {
        self.by_system.get(id)
    }
}
