//! Established edges and canvas positions, persisted in the hub's database
//! (DESIGN.md §2, "edge": an established connection `consumer → provider`
//! for one capability; persisted).
//!
//! The registry says which edges are *legal* (rules); this store says which
//! were *made*. Making one is the canvas's job, and [`EdgeStore::create`]
//! re-checks the rule itself: the browser is never trusted. An edge whose
//! rule later disappears stays stored but is not shown or used (its rule
//! may come back).
//!
//! Both tables are mirrored in memory: the canvas's topology view is built
//! synchronously (during server-side rendering too), so it reads the mirror;
//! every write goes to the store first and to the mirror only once stored.
//! Replicas on one PostgreSQL database each keep a mirror: a change made by
//! another replica arrives as a notification (`cluster`) and
//! [`EdgeStore::refresh`] re-reads both tables.

use std::collections::BTreeMap;
use std::sync::RwLock;

use exchange::db::Store;
use sqlx::AnyPool;
use sqlx::Row;

use crate::registry::model::{edge_id, EdgeSpec, Topology};
use crate::registry::Loaded;
use exchange::reason::NotConnected;

/// Most positions one save may carry, and longest node id accepted: a
/// canvas sends a few hundred; anything bigger is not a canvas.
pub const MAX_POSITIONS: usize = 10_000;
const MAX_NODE_ID: usize = 200;

/// An established edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// `<consumer>-><provider>:<capability>`.
    pub id: String,
    /// Consuming system (or the hub).
    pub consumer: String,
    /// Providing system.
    pub provider: String,
    /// Capability id.
    pub capability: String,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// Why an edge was not made or removed.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// The consumer is not in the registry.
    #[error("no system `{0}` in the registry")]
    UnknownSystem(String),
    /// The registry's route refuses it, as it would refuse the call
    /// (`UNKNOWN_PEER` or `NOT_PERMITTED`, in the same words).
    #[error("{}", .0.detail)]
    Refused(NotConnected),
    /// The edge is already established.
    #[error("the edge {0} already exists")]
    Exists(String),
    /// No such edge.
    #[error("no edge {0}")]
    NotFound(String),
    /// A position is not a finite number or names no plausible node.
    #[error("{0}")]
    BadPosition(String),
    /// The hub's store failed.
    #[error("edge store: {0}")]
    Store(#[from] sqlx::Error),
}

/// The store.
#[derive(Debug)]
pub struct EdgeStore {
    store: Store,
    edges: RwLock<Vec<Edge>>,
    positions: RwLock<BTreeMap<String, (f64, f64)>>,
}

impl EdgeStore {
    /// Opens the store in the hub's (migrated) database. The first time
    /// in the life of the database, `seed` (the topology file's
    /// `initial_edges`, already validated against the rules) is stored:
    /// an edge someone removed later stays removed. Of replicas starting
    /// together, one seeds (the `edges_seeded` mark is inserted once).
    pub async fn open(store: Store, seed: &[EdgeSpec]) -> Result<Self, EdgeError> {
        let mut tx = store.pool().begin().await?;
        let first = sqlx::query(
            "INSERT INTO hub_marks (name, at) VALUES ('edges_seeded', $1)
             ON CONFLICT (name) DO NOTHING",
        )
        .bind(exchange::audit::now())
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if first {
            for e in seed {
                sqlx::query(
                    "INSERT INTO edges (id, consumer, provider, capability, created_at)
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                )
                .bind(e.id())
                .bind(&e.consumer)
                .bind(&e.provider)
                .bind(&e.capability)
                .bind(exchange::audit::now())
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        let (edges, positions) = read_all(store.pool()).await?;
        Ok(Self {
            store,
            edges: RwLock::new(edges),
            positions: RwLock::new(positions),
        })
    }

    /// Re-reads both tables into the mirror: another replica changed them.
    pub async fn refresh(&self) -> Result<(), EdgeError> {
        let (edges, positions) = read_all(self.store.pool()).await?;
        if let Ok(mut e) = self.edges.write() {
            *e = edges;
        }
        if let Ok(mut p) = self.positions.write() {
            *p = positions;
        }
        Ok(())
    }

    /// Every stored edge, oldest first, whether or not a rule still allows it.
    pub fn all(&self) -> Vec<Edge> {
        self.edges.read().map(|e| e.clone()).unwrap_or_default()
    }

    /// The stored edges a rule of `topology` still allows, oldest first:
    /// what the canvas shows and what drawers may call.
    pub fn visible(&self, topology: &Topology) -> Vec<Edge> {
        self.all()
            .into_iter()
            .filter(|e| topology.permits(&e.consumer, &e.capability, &e.provider))
            .collect()
    }

    /// The visible edge with this id.
    pub fn get(&self, topology: &Topology, id: &str) -> Option<Edge> {
        self.visible(topology).into_iter().find(|e| e.id == id)
    }

    /// Establishes `consumer → provider` for `capability` if a rule of
    /// `topology` allows it. The check is made here, on the server's own
    /// registry, whatever the canvas believed.
    pub async fn create(
        &self,
        registry: &Loaded,
        consumer: &str,
        provider: &str,
        capability: &str,
    ) -> Result<Edge, EdgeError> {
        let topology = &registry.topology;
        if consumer != topology.hub.id && topology.system(consumer).is_none() {
            return Err(EdgeError::UnknownSystem(exchange::text::clip(consumer, 64)));
        }
        registry
            .route(consumer, provider, capability)
            .map_err(EdgeError::Refused)?;
        let edge = Edge {
            id: edge_id(consumer, provider, capability),
            consumer: consumer.to_string(),
            provider: provider.to_string(),
            capability: capability.to_string(),
            created_at: exchange::audit::now(),
        };
        let inserted = sqlx::query(
            "INSERT INTO edges (id, consumer, provider, capability, created_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&edge.id)
        .bind(&edge.consumer)
        .bind(&edge.provider)
        .bind(&edge.capability)
        .bind(&edge.created_at)
        .execute(self.store.pool())
        .await?
        .rows_affected();
        if inserted == 0 {
            return Err(EdgeError::Exists(edge.id));
        }
        if let Ok(mut edges) = self.edges.write() {
            edges.push(edge.clone());
        }
        Ok(edge)
    }

    /// Removes a stored edge (visible or not).
    pub async fn delete(&self, id: &str) -> Result<(), EdgeError> {
        let removed = sqlx::query("DELETE FROM edges WHERE id = $1")
            .bind(id)
            .execute(self.store.pool())
            .await?
            .rows_affected();
        if removed == 0 {
            return Err(EdgeError::NotFound(exchange::text::clip(id, 200)));
        }
        if let Ok(mut edges) = self.edges.write() {
            edges.retain(|e| e.id != id);
        }
        Ok(())
    }

    /// Stored positions, by node id.
    pub fn positions(&self) -> BTreeMap<String, (f64, f64)> {
        self.positions.read().map(|p| p.clone()).unwrap_or_default()
    }

    /// Merges `positions` into the stored ones (one transaction: all or
    /// nothing).
    pub async fn save_positions(&self, positions: &[(String, f64, f64)]) -> Result<(), EdgeError> {
        if positions.len() > MAX_POSITIONS {
            return Err(EdgeError::BadPosition(format!(
                "at most {MAX_POSITIONS} positions per save"
            )));
        }
        for (node, x, y) in positions {
            if node.is_empty() || node.len() > MAX_NODE_ID {
                return Err(EdgeError::BadPosition(format!(
                    "a node id must be 1 to {MAX_NODE_ID} bytes"
                )));
            }
            if !x.is_finite() || !y.is_finite() {
                return Err(EdgeError::BadPosition(format!(
                    "the position of {} is not a finite number",
                    exchange::text::clip(node, 64)
                )));
            }
        }
        let now = exchange::audit::now();
        let mut tx = self.store.pool().begin().await?;
        for (node, x, y) in positions {
            sqlx::query(
                "INSERT INTO node_positions (node, x, y, updated_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT(node) DO UPDATE SET x = excluded.x, y = excluded.y,
                    updated_at = excluded.updated_at",
            )
            .bind(node)
            .bind(x)
            .bind(y)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        if let Ok(mut stored) = self.positions.write() {
            for (node, x, y) in positions {
                stored.insert(node.clone(), (*x, *y));
            }
        }
        Ok(())
    }
}

/// Both tables, as the mirror holds them.
async fn read_all(
    pool: &AnyPool,
) -> Result<(Vec<Edge>, BTreeMap<String, (f64, f64)>), sqlx::Error> {
    let edges = sqlx::query(
        "SELECT id, consumer, provider, capability, created_at FROM edges ORDER BY seq",
    )
    .fetch_all(pool)
    .await?
    .iter()
    .map(|r| {
        Ok(Edge {
            id: r.try_get("id")?,
            consumer: r.try_get("consumer")?,
            provider: r.try_get("provider")?,
            capability: r.try_get("capability")?,
            created_at: r.try_get("created_at")?,
        })
    })
    .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let positions = sqlx::query("SELECT node, x, y FROM node_positions")
        .fetch_all(pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("node")?, (r.try_get("x")?, r.try_get("y")?))))
        .collect::<Result<BTreeMap<String, (f64, f64)>, sqlx::Error>>()?;
    Ok((edges, positions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded() -> Loaded {
        crate::registry::load::load_str(
            "config/topology.yaml",
            include_str!("../../../config/topology.yaml"),
        )
        .expect("shipped topology is valid")
    }

    fn visible_ids(store: &EdgeStore, t: &Topology) -> Vec<String> {
        store.visible(t).into_iter().map(|e| e.id).collect()
    }

    #[tokio::test]
    async fn seeds_once_checks_rules_and_survives_reopening() {
        for db in crate::store::test_stores().await {
            seeds_once(db.store).await;
        }
    }

    async fn seeds_once(db: Store) {
        let l = loaded();
        let t = &l.topology;
        assert_eq!(t.initial_edges.len(), 2, "the shipped file seeds two edges");
        {
            let store = EdgeStore::open(db.clone(), &t.initial_edges)
                .await
                .expect("store");
            assert_eq!(
                visible_ids(&store, t),
                [
                    "buyercorp->vendorcorp:orders.query",
                    "hub->helpdesk:ticket.classify"
                ]
            );
            let err = store
                .create(&l, "vendorcorp", "buyercorp", "budget.consult")
                .await
                .expect_err("no rule");
            assert_eq!(
                err.to_string(),
                "no rule lets vendorcorp consume budget.consult from buyercorp"
            );
            assert!(matches!(
                store
                    .create(&l, "nobody", "buyercorp", "budget.consult")
                    .await,
                Err(EdgeError::UnknownSystem(_))
            ));
            let e = store
                .create(&l, "helpdesk", "buyercorp", "budget.consult")
                .await
                .expect("permitted");
            assert_eq!(e.id, "helpdesk->buyercorp:budget.consult");
            assert!(matches!(
                store
                    .create(&l, "helpdesk", "buyercorp", "budget.consult")
                    .await,
                Err(EdgeError::Exists(_))
            ));
            store
                .delete("hub->helpdesk:ticket.classify")
                .await
                .expect("deleted");
            assert!(matches!(
                store.delete("hub->helpdesk:ticket.classify").await,
                Err(EdgeError::NotFound(_))
            ));
            store
                .save_positions(&[("vendorcorp".into(), 10.0, -2.5)])
                .await
                .expect("saved");
            store
                .save_positions(&[("vendorcorp".into(), 11.0, 3.0), ("hub".into(), 0.0, 0.0)])
                .await
                .expect("merged");
            assert!(store
                .save_positions(&[("x".into(), f64::NAN, 0.0)])
                .await
                .is_err());
        }
        // Reopened (a restart, or another replica) on the same database.
        let store = EdgeStore::open(db.clone(), &t.initial_edges)
            .await
            .expect("store");
        assert_eq!(
            visible_ids(&store, t),
            [
                "buyercorp->vendorcorp:orders.query",
                "helpdesk->buyercorp:budget.consult"
            ],
            "the seed is not applied again; the deleted edge stays deleted"
        );
        assert_eq!(store.positions().get("vendorcorp"), Some(&(11.0, 3.0)));
        assert_eq!(store.positions().len(), 2);

        // A rule that disappears hides its edges without deleting them.
        let mut fewer = t.clone();
        fewer.rules.retain(|r| r.capability != "orders.query");
        assert_eq!(store.visible(&fewer).len(), 1);
        assert_eq!(store.all().len(), 2);
        assert!(store
            .get(&fewer, "buyercorp->vendorcorp:orders.query")
            .is_none());

        // Another store on the same database (another replica) makes an
        // edge: this mirror shows it once it refreshes.
        let other = EdgeStore::open(db.clone(), &t.initial_edges)
            .await
            .expect("other");
        other
            .create(&l, "hub", "helpdesk", "ticket.classify")
            .await
            .expect("made by the other");
        other
            .save_positions(&[("hub".into(), 5.0, 6.0)])
            .await
            .expect("moved by the other");
        assert!(store.get(t, "hub->helpdesk:ticket.classify").is_none());
        store.refresh().await.expect("refresh");
        assert!(store.get(t, "hub->helpdesk:ticket.classify").is_some());
        assert_eq!(store.positions().get("hub"), Some(&(5.0, 6.0)));
    }
}
