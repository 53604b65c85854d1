//! What the panel's parts know besides their own props: the
//! [`Directory`] of the registry view the canvas drew (handed down by
//! context) and the [`PartyCtx`] every party section is given.

use std::collections::HashMap;
use std::sync::Arc;

use super::words::queryable_columns;
use crate::dto::{CapabilityKind, TopologyView};

/// What the panel's parts need of the registry view the canvas drew:
/// display names and each data-share's queryable columns. Read from the
/// scene once, when the panel opens, and handed down by context, so that
/// the parts are plain functions of their props and of this.
#[derive(Debug, Clone, Default)]
pub(super) struct Directory {
    names: Arc<HashMap<String, String>>,
    columns: Arc<HashMap<String, Vec<String>>>,
}

impl Directory {
    pub(super) fn from_view(view: &TopologyView) -> Self {
        let names = view
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.name.clone()))
            .collect();
        let columns = view
            .capabilities
            .iter()
            .filter(|c| c.kind == CapabilityKind::DataShare)
            .map(|c| (c.id.clone(), queryable_columns(&c.input_grants)))
            .collect();
        Directory {
            names: Arc::new(names),
            columns: Arc::new(columns),
        }
    }

    /// Display name of a node, falling back to its id.
    pub(super) fn name(&self, id: &str) -> String {
        self.names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// The queryable columns of data-share `capability` (none if unknown).
    pub(super) fn columns(&self, capability: &str) -> Vec<String> {
        self.columns.get(capability).cloned().unwrap_or_default()
    }
}

/// What every party section needs of the view.
#[derive(Debug, Clone)]
pub(super) struct PartyCtx {
    pub(super) provider: String,
    pub(super) negotiation: Option<String>,
    /// The data-share's queryable columns.
    pub(super) columns: Vec<String>,
}
