//! How the page carries its topology (small enough for 500 nodes;
//! DESIGN.md §6, the canvas): the first load travels inside the server's
//! HTML, serialised for hydration, and this is its packed form.
//!
//! The server's HTML draws only what is near the screen (`cull`); the
//! browser needs the whole graph, and gets it here, once. Packed because
//! the plain `TopologyView` JSON repeats every id, name and enum word
//! hundreds of times (383 KiB at 500 nodes and 1,000 edges): here every
//! string is written once in a table and referred to by number, nodes and
//! edges are arrays instead of objects, an edge's id is left out when it
//! is the usual `consumer->provider:capability`, and the kinds and
//! statuses are small numbers. `GET /api/topology` is unchanged.
//!
//! Pure data conversion (no reactive or browser code); the round trip is
//! tested below.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::dto::{
    edge_id, CapabilityKind, CapabilityRef, CapabilityView, CardSignatureView, EdgeView,
    InputGrant, NodeKind, NodePosition, NodeStatus, NodeView, ReasonCode, RuleView, TopologyView,
};

/// An enum written as a small number. Both directions are exhaustive
/// matches, so a new variant is a compile error here, never a number that
/// reads back as another variant.
trait Coded: Sized {
    fn code(self) -> u8;
    fn from_code(i: u8) -> Option<Self>;
}

macro_rules! coded {
    ($t:ident { $($v:ident = $n:literal),+ $(,)? }) => {
        impl Coded for $t {
            fn code(self) -> u8 {
                match self { $($t::$v => $n),+ }
            }
            fn from_code(i: u8) -> Option<Self> {
                match i { $($n => Some($t::$v),)+ _ => None }
            }
        }
    };
}

coded!(NodeKind { System = 0, Agent = 1, Datasource = 2, Hub = 3 });
coded!(NodeStatus { Healthy = 0, Degraded = 1, Unknown = 2 });
coded!(CapabilityKind { DataShare = 0, Consult = 1, Negotiation = 2, Task = 3 });
coded!(CardSignatureView { Unsigned = 0, Verified = 1, Failed = 2 });

fn decode<T: Coded>(i: u8) -> Result<T, String> {
    T::from_code(i).ok_or_else(|| format!("packed topology: no variant {i}"))
}

/// A topology load, packed (see the module's notes).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Packed {
    /// The load's sequence number.
    s: u64,
    /// What failed, for a failed load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<String>,
    /// The view, for a load that succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    v: Option<PackedView>,
}

/// A capability reference: (capability id, kind).
type PackedRef = (u32, u8);

#[derive(Debug, Clone, Serialize, Deserialize)]
struct PackedView {
    /// Every string, once.
    t: Vec<String>,
    /// Every reason code, once.
    c: Vec<ReasonCode>,
    /// The hub's id.
    h: u32,
    n: Vec<PackedNode>,
    e: Vec<PackedEdge>,
    r: Vec<PackedRule>,
    k: Vec<PackedCapability>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<u32>,
    /// Where the operator left nodes: (node, x, y).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    p: Vec<(u32, f64, f64)>,
    /// Where the server's layout puts each root: (node, x, y).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    l: Vec<(u32, f64, f64)>,
    /// The topology file's digest.
    #[serde(default)]
    d: String,
}

/// id, name, kind, system, description, status, reason, detail, since,
/// provides, consumes, card signature.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PackedNode(
    u32,
    u32,
    u8,
    Option<u32>,
    u32,
    u8,
    Option<u32>,
    Option<u32>,
    Option<u32>,
    Vec<PackedRef>,
    Vec<PackedRef>,
    #[serde(default)] u8,
);

/// consumer, provider, capability, kind, status, reason, and the id when
/// it is not the usual one.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PackedEdge(
    u32,
    u32,
    u32,
    u8,
    u8,
    Option<u32>,
    #[serde(default)] Option<u32>,
);

/// capability, kind, provider, consumers.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PackedRule(u32, u8, u32, Vec<u32>);

/// id, kind, description, deadline, input grants (field, allowed values).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PackedCapability(u32, u8, u32, u64, Vec<(u32, Vec<u32>)>);

/// The string and reason tables being filled while packing.
#[derive(Default)]
struct Tables {
    strings: Vec<String>,
    index: HashMap<String, u32>,
    reasons: Vec<ReasonCode>,
}

impl Tables {
    fn s(&mut self, v: &str) -> u32 {
        if let Some(&i) = self.index.get(v) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(v.to_string());
        self.index.insert(v.to_string(), i);
        i
    }

    fn reason(&mut self, r: &Option<ReasonCode>) -> Option<u32> {
        let r = r.as_ref()?;
        Some(match self.reasons.iter().position(|x| x == r) {
            Some(i) => i as u32,
            None => {
                self.reasons.push(*r);
                (self.reasons.len() - 1) as u32
            }
        })
    }

    fn refs(&mut self, caps: &[CapabilityRef]) -> Vec<PackedRef> {
        caps.iter()
            .map(|c| (self.s(&c.id), c.kind.code()))
            .collect()
    }
}

fn pack_view(v: &TopologyView) -> PackedView {
    let mut t = Tables::default();
    let h = t.s(&v.hub_id);
    let n = v
        .nodes
        .iter()
        .map(|n| {
            PackedNode(
                t.s(&n.id),
                t.s(&n.name),
                n.node_type.code(),
                n.system.as_deref().map(|s| t.s(s)),
                t.s(&n.description),
                n.status.code(),
                t.reason(&n.reason),
                n.detail.as_deref().map(|s| t.s(s)),
                n.since.as_deref().map(|s| t.s(s)),
                t.refs(&n.provides),
                t.refs(&n.consumes),
                n.card_signature.code(),
            )
        })
        .collect();
    let e = v
        .edges
        .iter()
        .map(|e| {
            let usual = e.id == edge_id(&e.consumer, &e.provider, &e.capability);
            PackedEdge(
                t.s(&e.consumer),
                t.s(&e.provider),
                t.s(&e.capability),
                e.kind.code(),
                e.status.code(),
                t.reason(&e.reason),
                (!usual).then(|| t.s(&e.id)),
            )
        })
        .collect();
    let r = v
        .rules
        .iter()
        .map(|r| {
            PackedRule(
                t.s(&r.capability),
                r.kind.code(),
                t.s(&r.provider),
                r.consumers.iter().map(|c| t.s(c)).collect(),
            )
        })
        .collect();
    let k = v
        .capabilities
        .iter()
        .map(|c| {
            PackedCapability(
                t.s(&c.id),
                c.kind.code(),
                t.s(&c.description),
                c.deadline_ms,
                c.input_grants
                    .iter()
                    .map(|g| (t.s(&g.field), g.allowed.iter().map(|a| t.s(a)).collect()))
                    .collect(),
            )
        })
        .collect();
    let x = v.reload_error.as_deref().map(|s| t.s(s));
    let mut spots = |list: &[NodePosition]| -> Vec<(u32, f64, f64)> {
        list.iter().map(|p| (t.s(&p.node), p.x, p.y)).collect()
    };
    let p = spots(&v.positions);
    let l = spots(&v.layout);
    PackedView {
        t: t.strings,
        c: t.reasons,
        h,
        n,
        e,
        r,
        k,
        x,
        p,
        l,
        d: v.digest.clone(),
    }
}

fn unpack_view(v: PackedView) -> Result<TopologyView, String> {
    let t = &v.t;
    let s = |i: u32| -> Result<String, String> {
        t.get(i as usize)
            .cloned()
            .ok_or_else(|| format!("packed topology: no string {i}"))
    };
    let reason = |i: Option<u32>| -> Result<Option<ReasonCode>, String> {
        i.map(|i| {
            v.c.get(i as usize)
                .copied()
                .ok_or_else(|| format!("packed topology: no reason {i}"))
        })
        .transpose()
    };
    let opt = |i: Option<u32>| i.map(s).transpose();
    let refs = |r: &[PackedRef]| -> Result<Vec<CapabilityRef>, String> {
        r.iter()
            .map(|&(id, kind)| {
                Ok(CapabilityRef {
                    id: s(id)?,
                    kind: decode(kind)?,
                })
            })
            .collect()
    };
    let nodes =
        v.n.iter()
            .map(|n| {
                Ok(NodeView {
                    id: s(n.0)?,
                    name: s(n.1)?,
                    node_type: decode(n.2)?,
                    system: opt(n.3)?,
                    description: s(n.4)?,
                    status: decode(n.5)?,
                    reason: reason(n.6)?,
                    detail: opt(n.7)?,
                    since: opt(n.8)?,
                    provides: refs(&n.9)?,
                    consumes: refs(&n.10)?,
                    card_signature: decode(n.11)?,
                })
            })
            .collect::<Result<_, String>>()?;
    let edges =
        v.e.iter()
            .map(|e| {
                let (consumer, provider, capability) = (s(e.0)?, s(e.1)?, s(e.2)?);
                let id = match e.6 {
                    Some(i) => s(i)?,
                    None => edge_id(&consumer, &provider, &capability),
                };
                Ok(EdgeView {
                    id,
                    consumer,
                    provider,
                    capability,
                    kind: decode(e.3)?,
                    status: decode(e.4)?,
                    reason: reason(e.5)?,
                })
            })
            .collect::<Result<_, String>>()?;
    let rules =
        v.r.iter()
            .map(|r| {
                Ok(RuleView {
                    capability: s(r.0)?,
                    kind: decode(r.1)?,
                    provider: s(r.2)?,
                    consumers: r.3.iter().map(|&c| s(c)).collect::<Result<_, String>>()?,
                })
            })
            .collect::<Result<_, String>>()?;
    let capabilities =
        v.k.iter()
            .map(|c| {
                Ok(CapabilityView {
                    id: s(c.0)?,
                    kind: decode(c.1)?,
                    description: s(c.2)?,
                    deadline_ms: c.3,
                    input_grants: c
                        .4
                        .iter()
                        .map(|(field, allowed)| {
                            Ok(InputGrant {
                                field: s(*field)?,
                                allowed: allowed
                                    .iter()
                                    .map(|&a| s(a))
                                    .collect::<Result<_, String>>()?,
                            })
                        })
                        .collect::<Result<_, String>>()?,
                })
            })
            .collect::<Result<_, String>>()?;
    let spots = |list: &[(u32, f64, f64)]| -> Result<Vec<NodePosition>, String> {
        list.iter()
            .map(|&(node, x, y)| {
                Ok(NodePosition {
                    node: s(node)?,
                    x,
                    y,
                })
            })
            .collect()
    };
    let positions = spots(&v.p)?;
    let layout = spots(&v.l)?;
    Ok(TopologyView {
        hub_id: s(v.h)?,
        nodes,
        edges,
        rules,
        capabilities,
        reload_error: opt(v.x)?,
        positions,
        layout,
        digest: v.d,
    })
}

impl Packed {
    /// Packs a load (its sequence number and its view or error).
    pub fn pack(seq: u64, result: &Result<TopologyView, String>) -> Self {
        match result {
            Ok(view) => Packed {
                s: seq,
                e: None,
                v: Some(pack_view(view)),
            },
            Err(e) => Packed {
                s: seq,
                e: Some(e.clone()),
                v: None,
            },
        }
    }

    /// The load back: its sequence number and its view or error. A packed
    /// form that does not hold together is an error.
    pub fn unpack(self) -> Result<(u64, Result<TopologyView, String>), String> {
        let result = match (self.v, self.e) {
            (Some(v), _) => Ok(unpack_view(v)?),
            (None, Some(e)) => Err(e),
            (None, None) => return Err("packed topology: neither a view nor an error".into()),
        };
        Ok((self.s, result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canvas::graph::tests::demo;

    #[test]
    fn every_variant_reads_back_as_itself_and_a_stray_number_is_refused() {
        use NodeKind::*;
        for k in [System, Agent, Datasource, Hub] {
            assert_eq!(decode::<NodeKind>(k.code()), Ok(k));
        }
        for st in [
            NodeStatus::Healthy,
            NodeStatus::Degraded,
            NodeStatus::Unknown,
        ] {
            assert_eq!(decode::<NodeStatus>(st.code()), Ok(st));
        }
        use CapabilityKind as C;
        for k in [C::DataShare, C::Consult, C::Negotiation, C::Task] {
            assert_eq!(decode::<CapabilityKind>(k.code()), Ok(k));
        }
        assert_eq!(
            decode::<NodeStatus>(3),
            Err("packed topology: no variant 3".to_string())
        );
    }

    #[test]
    fn a_view_survives_the_round_trip_and_shrinks() {
        let mut view = demo();
        view.nodes[1].status = NodeStatus::Degraded;
        view.nodes[1].reason = Some(ReasonCode::Timeout);
        view.nodes[1].detail = Some("no answer in 300 ms".into());
        view.edges[0].id = "an unusual id".into();
        view.edges[1].status = NodeStatus::Degraded;
        view.edges[1].reason = Some(ReasonCode::Timeout);
        view.nodes[1].card_signature = CardSignatureView::Verified;
        view.nodes[2].card_signature = CardSignatureView::Failed;
        view.capabilities.push(CapabilityView {
            id: "orders.query".into(),
            kind: CapabilityKind::DataShare,
            description: "Orders.".into(),
            deadline_ms: 900,
            input_grants: vec![InputGrant {
                field: "group_by".into(),
                allowed: vec!["region".into(), "product".into()],
            }],
        });
        view.reload_error = Some("line 3: bad".into());
        view.positions.push(NodePosition {
            node: "vendorcorp".into(),
            x: 10.5,
            y: -3.0,
        });
        view.layout = vec![
            NodePosition {
                node: "hub".into(),
                x: 0.0,
                y: 44.0,
            },
            NodePosition {
                node: "vendorcorp".into(),
                x: 1080.0,
                y: 0.5,
            },
        ];
        let packed = Packed::pack(7, &Ok(view.clone()));
        let json = serde_json::to_string(&packed).unwrap_or_default();
        let plain = serde_json::to_string(&view).unwrap_or_default();
        assert!(
            json.len() * 2 < plain.len(),
            "{} vs {}",
            json.len(),
            plain.len()
        );
        let back: Packed = serde_json::from_str(&json).unwrap_or(Packed::pack(0, &Err("x".into())));
        assert_eq!(back.unpack(), Ok((7, Ok(view))));
        let failed = Packed::pack(3, &Err("no topology".into()));
        assert_eq!(failed.unpack(), Ok((3, Err("no topology".to_string()))));
    }

    #[test]
    fn a_view_without_a_layout_packs_none_and_an_old_payload_reads_back() {
        let view = demo();
        let json = serde_json::to_string(&Packed::pack(1, &Ok(view.clone()))).unwrap_or_default();
        assert!(!json.contains("\"l\":"), "{json}");
        let back: Packed = serde_json::from_str(&json).unwrap_or(Packed::pack(0, &Err("x".into())));
        assert_eq!(back.unpack(), Ok((1, Ok(view))));
    }
}
