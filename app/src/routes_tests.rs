use super::*;

#[test]
fn pages_are_picked_by_path() {
    assert_eq!(Page::from_path("/"), Page::Canvas);
    assert_eq!(Page::from_path(""), Page::Canvas);
    assert_eq!(Page::from_path("/inbox"), Page::Inbox);
    assert_eq!(Page::from_path("/inbox/"), Page::Inbox);
    assert_eq!(Page::from_path("/login"), Page::Login);
    assert_eq!(Page::from_path("/loginx"), Page::NotFound);
    assert_eq!(Page::from_path("/inbox/x"), Page::NotFound);
    for p in Page::ALL {
        assert_eq!(Page::from_path(p.path()), p);
    }
}

#[test]
fn query_params_are_decoded() {
    assert_eq!(
        query_param("?next=%2Finbox", "next").as_deref(),
        Some("/inbox")
    );
    assert_eq!(
        query_param("a=1&next=/x%3Fy%3D1", "next").as_deref(),
        Some("/x?y=1")
    );
    assert_eq!(query_param("?next=a+b", "next").as_deref(), Some("a b"));
    assert_eq!(query_param("?next", "next").as_deref(), Some(""));
    assert_eq!(query_param("?nextx=1", "next"), None);
    assert_eq!(query_param("", "next"), None);
    // Broken escapes stay as they are; non-UTF-8 is refused.
    assert_eq!(query_param("?next=%2", "next").as_deref(), Some("%2"));
    assert_eq!(query_param("?next=%ff", "next"), None);
}

#[test]
fn a_concrete_path_finds_its_route_and_id() {
    let edge = "hub->vendorcorp:orders.query";
    assert_eq!(
        ApiRoute::matching("POST", &edge_query(edge)),
        Some((
            ApiRoute::EdgeQuery,
            Some("hub-%3Evendorcorp%3Aorders.query")
        ))
    );
    assert_eq!(
        decode_segment("hub-%3Evendorcorp%3Aorders.query").as_deref(),
        Some(edge)
    );
    assert_eq!(
        ApiRoute::matching("GET", TOPOLOGY),
        Some((ApiRoute::Topology, None))
    );
    assert_eq!(ApiRoute::matching("DELETE", TOPOLOGY), None);
    assert_eq!(ApiRoute::matching("GET", "/api/nodes//metrics"), None);
    assert_eq!(ApiRoute::matching("GET", "/api/nodes/a/b/metrics"), None);
    assert_eq!(
        ApiRoute::matching("PUT", &person("ann")),
        Some((ApiRoute::UpdatePerson, Some("ann")))
    );
    for &route in ApiRoute::ALL {
        let path = route.path_with("x");
        assert_eq!(
            ApiRoute::matching(route.verb().as_str(), &path).map(|(r, _)| r),
            Some(route),
            "{path}"
        );
    }
}

#[test]
fn every_changing_route_needs_a_role_and_the_login_alone_is_public() {
    for &route in ApiRoute::ALL {
        let rights = route.rights();
        if matches!(route, ApiRoute::Login | ApiRoute::LoginProviders) {
            assert_eq!(rights.need, Need::Public);
            assert!(route == ApiRoute::Login || !route.verb().changes_state());
            continue;
        }
        assert!(matches!(rights.need, Need::Role(_)), "{route:?}");
        if route.template().contains("{id}") {
            assert_ne!(
                rights.reach,
                Reach::Part,
                "{route:?} names an id: it must check it"
            );
        }
    }
}

#[test]
fn edge_ids_stay_one_segment() {
    assert_eq!(
        encode_segment("hub->vendorcorp:orders.query"),
        "hub-%3Evendorcorp%3Aorders.query"
    );
    assert_eq!(encode_segment("a/b c"), "a%2Fb%20c");
}

#[test]
fn edge_paths_keep_the_id_in_one_segment() {
    assert_eq!(
        edge_query("hub->vendorcorp:orders.query"),
        "/api/edges/hub-%3Evendorcorp%3Aorders.query/query"
    );
    assert_eq!(
        edge_ask("hub->buyercorp:budget.consult"),
        "/api/edges/hub-%3Ebuyercorp%3Abudget.consult/ask"
    );
    assert_eq!(
        edge("hub->vendorcorp:orders.query"),
        "/api/edges/hub-%3Evendorcorp%3Aorders.query"
    );
}

#[test]
fn inbox_and_audit_paths() {
    assert_eq!(inbox_approve("a/b"), "/api/inbox/a%2Fb/approve");
    assert_eq!(inbox_reject("42"), "/api/inbox/42/reject");
    assert_eq!(
        node_audit("vendorcorp", 20),
        "/api/nodes/vendorcorp/audit?limit=20"
    );
}

#[test]
fn every_route_is_under_the_api_prefix() {
    for route in [
        API_UNKNOWN,
        TOPOLOGY,
        EVENTS,
        EDGES,
        EDGE,
        POSITIONS,
        EDGE_QUERY,
        EDGE_ASK,
        EDGE_CONTRACT,
        EDGE_NEGOTIATE,
        INBOX,
        INBOX_PAGE,
        INBOX_PENDING,
        INBOX_APPROVE,
        INBOX_REJECT,
        NODE_AUDIT,
        AGENTS,
        RECOMMENDATIONS,
        NODE_INTERPRET,
        SYSTEM_CREDENTIAL,
        NODE_TRAIL,
        PEOPLE,
        PERSON,
        PERSON_PASSWORD,
        LOGIN,
        LOGIN_PROVIDERS,
        LOGOUT,
        SESSION,
        FN_PREFIX,
        TOPOLOGY_FN,
    ] {
        assert!(route.starts_with(&format!("{API}/")), "{route}");
    }
    assert!(TOPOLOGY_FN.starts_with(&format!("{FN_PREFIX}/")));
    assert!(!LOGIN_PAGE.starts_with(API));
}
