//! Who may do what: the roles a person holds, the part of the exchange a
//! member-scoped person is bound to, and what each `/api` route needs of
//! both (the route table in [`crate::routes`] names it per route).
//!
//! Both sides read these types: the hub decides with them on every
//! request (its session guard and the route's own check), the browser uses
//! them only to leave out the controls a person could not use anyway.
//!
//! | role | may |
//! |---|---|
//! | `viewer` | read the map, its health and traffic, redacted figures, drawers, the inbox |
//! | `operator` | a viewer's reads, and change the exchange: edges, rules, onboarding, the hub's own calls along an edge |
//! | `approver` | a viewer's reads, and decide the hub's inbox |
//! | `admin` | everything: people and roles, credential rotation |
//!
//! A person is **exchange-wide** or **member-scoped** ([`Scope`]): bound to
//! one system, a person sees and acts on that system's part only — its own
//! nodes, the edges and rules it is part of, its traffic, contracts,
//! inbox entries and trail — with its role's powers there, and never an
//! exchange-wide action (onboarding, removing a system, people, the hub's
//! inbox decisions).

use serde::{Deserialize, Serialize};

/// What a person may do (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads.
    Viewer,
    /// Reads, and changes the exchange.
    Operator,
    /// Reads, and decides the inbox.
    Approver,
    /// Everything.
    Admin,
}

impl Role {
    /// Every role, least first.
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Operator, Role::Approver, Role::Admin];

    /// Its name in files, on the command line and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    /// The role named `name`, if there is one.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == name.trim())
    }

    /// Whether a person holding this role may use what needs `needed`:
    /// everybody reads, an admin does everything, otherwise only the
    /// role itself.
    pub fn grants(self, needed: Role) -> bool {
        needed == Role::Viewer || self == Role::Admin || self == needed
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The part of the exchange a person is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The whole exchange.
    Exchange,
    /// One member system (its id): its part only.
    Member(String),
}

impl Scope {
    /// The system a member-scoped person is bound to.
    pub fn member(&self) -> Option<&str> {
        match self {
            Scope::Exchange => None,
            Scope::Member(system) => Some(system),
        }
    }

    /// Whether this person's part includes system `system` itself (an
    /// exchange-wide person's includes every system).
    pub fn covers(&self, system: &str) -> bool {
        self.member().is_none_or(|own| own == system)
    }

    /// Whether an exchange between `consumer` and `provider` is part of
    /// this person's view (one of the two is its system).
    pub fn covers_either(&self, consumer: &str, provider: &str) -> bool {
        self.member()
            .is_none_or(|own| own == consumer || own == provider)
    }
}

/// Who may call an `/api` route at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Anybody, logged in or not (the login).
    Public,
    /// A logged-in person holding a role that [grants](Role::grants) this
    /// one.
    Role(Role),
}

/// How far a member-scoped person may reach with a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Exchange-wide people only: a member-scoped person gets 403.
    Exchange,
    /// Everyone with the role; the answer holds a member-scoped person's
    /// part only.
    Part,
    /// The route's `{id}` is a node: a member-scoped person may name its
    /// own system's nodes only.
    OwnNode,
    /// The route's `{id}` is an edge (established or observed): a
    /// member-scoped person may name one its system is part of.
    OwnEdge,
    /// The request's body names the systems it touches: the handler
    /// checks them against the person's scope before doing anything.
    Body,
}

impl Reach {
    /// Whether a person of `scope` may call a route of this reach naming
    /// `id` (its `{id}`, decoded). An exchange-wide person always may; a
    /// member-scoped one as the variants say. What [`Reach::Part`] and
    /// [`Reach::Body`] leave open, the route's handler decides.
    pub fn admits(self, scope: &Scope, id: Option<&str>) -> bool {
        if scope.member().is_none() {
            return true;
        }
        match self {
            Reach::Exchange => false,
            Reach::Part | Reach::Body => true,
            Reach::OwnNode => id.is_some_and(|id| scope.covers(node_system(id))),
            Reach::OwnEdge => id
                .and_then(edge_ends)
                .is_some_and(|(consumer, provider)| scope.covers_either(consumer, provider)),
        }
    }
}

/// The system a canvas node belongs to: a system node's id is the system's,
/// an agent's or a datasource's is `<system>/<kind>/<id>`.
pub fn node_system(node: &str) -> &str {
    node.split('/').next().unwrap_or(node)
}

/// The consumer and the provider of a canvas edge id
/// (`<consumer>-><provider>:<capability>`, established or observed).
pub fn edge_ends(edge: &str) -> Option<(&str, &str)> {
    let (consumer, rest) = edge.split_once("->")?;
    let (provider, _capability) = rest.split_once(':')?;
    Some((consumer, provider))
}

/// What a route needs: a role, and how far a member-scoped person reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rights {
    /// Who may call it.
    pub need: Need,
    /// How far a member-scoped person reaches.
    pub reach: Reach,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_grant_reads_to_all_and_everything_to_admins() {
        for r in Role::ALL {
            assert!(r.grants(Role::Viewer), "{r}");
            assert!(Role::Admin.grants(r), "{r}");
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert!(!Role::Viewer.grants(Role::Operator));
        assert!(!Role::Operator.grants(Role::Approver));
        assert!(!Role::Approver.grants(Role::Operator));
        assert!(!Role::Operator.grants(Role::Admin));
        assert_eq!(Role::parse("root"), None);
    }

    #[test]
    fn a_member_reaches_its_own_nodes_and_edges_only() {
        let s = Scope::Member("buyercorp".into());
        assert!(Reach::OwnNode.admits(&s, Some("buyercorp")));
        assert!(Reach::OwnNode.admits(&s, Some("buyercorp/agent/planner")));
        assert!(!Reach::OwnNode.admits(&s, Some("vendorcorp")));
        assert!(!Reach::OwnNode.admits(&s, Some("buyercorpx/agent/a")));
        assert!(!Reach::OwnNode.admits(&s, None));
        assert!(Reach::OwnEdge.admits(&s, Some("buyercorp->vendorcorp:orders.query")));
        assert!(Reach::OwnEdge.admits(&s, Some("hub->buyercorp:budget.consult")));
        assert!(!Reach::OwnEdge.admits(&s, Some("hub->vendorcorp:orders.query")));
        assert!(!Reach::OwnEdge.admits(&s, Some("buyercorp")));
        assert!(!Reach::Exchange.admits(&s, None));
        assert!(Reach::Part.admits(&s, None));
        for r in [Reach::Exchange, Reach::OwnNode, Reach::OwnEdge] {
            assert!(r.admits(&Scope::Exchange, Some("anything")));
        }
    }

    #[test]
    fn a_member_scope_covers_its_system_only() {
        let s = Scope::Member("buyercorp".into());
        assert!(s.covers("buyercorp") && !s.covers("vendorcorp"));
        assert!(s.covers_either("buyercorp", "vendorcorp"));
        assert!(!s.covers_either("hub", "vendorcorp"));
        assert!(Scope::Exchange.covers("anything"));
    }
}
