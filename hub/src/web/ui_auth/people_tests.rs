use super::*;
use crate::web::ui_auth::users::hash_password;
use exchange::db::Location;

async fn store() -> Store {
    crate::store::open(&Location::Memory)
        .await
        .expect("a migrated store")
}

fn file(entries: &[(&str, &str, Option<&str>)]) -> UiUsers {
    let hash = hash_password("pw").expect("hash");
    let text: String = entries
        .iter()
        .map(|(name, role, system)| {
            let system = system
                .map(|s| format!("    system: {s}\n"))
                .unwrap_or_default();
            format!(
                "  - username: {name}\n    password_hash: \"{hash}\"\n    role: {role}\n{system}"
            )
        })
        .collect();
    UiUsers::parse("ui-users.yaml", &format!("users:\n{text}")).expect("valid file")
}

#[tokio::test]
async fn the_file_provisions_people_and_leaving_it_removes_them() {
    let store = store().await;
    let people = People::open(
        store.clone(),
        &file(&[("op", "admin", None), ("ann", "viewer", Some("buyercorp"))]),
        Cluster::solo(),
    )
    .await
    .expect("opens");
    let ann = people.get("ann").expect("ann");
    assert_eq!(ann.role, Role::Viewer);
    assert_eq!(ann.scope, Scope::Member("buyercorp".into()));
    assert_eq!(ann.origin, Origin::File);
    assert!(tokio::task::spawn_blocking({
        let p = people.clone();
        move || p.verify("op", "pw") && !p.verify("op", "nope") && !p.verify("nobody", "pw")
    })
    .await
    .expect("join"));
    // An admin adds someone; the next start without ann keeps them.
    let password = people
        .add("bob", Role::Approver, Scope::Exchange, None)
        .await
        .expect("added");
    assert_eq!(password.len(), 20);
    let again = People::open(store, &file(&[("op", "admin", None)]), Cluster::solo())
        .await
        .expect("opens again");
    assert!(again.get("ann").is_none(), "left the file");
    assert_eq!(again.get("bob").map(|p| p.role), Some(Role::Approver));
    assert!(
        tokio::task::spawn_blocking(move || again.verify("bob", &password))
            .await
            .expect("join")
    );
}

#[tokio::test]
async fn changes_are_refused_by_name_and_close_the_persons_streams() {
    let people = People::open(
        store().await,
        &file(&[("op", "admin", None)]),
        Cluster::solo(),
    )
    .await
    .expect("opens");
    let mut revoked = people.revocations();
    people
        .add(
            "cat",
            Role::Operator,
            Scope::Member("vendorcorp".into()),
            Some("given"),
        )
        .await
        .expect("added");
    assert!(matches!(
        people.add("cat", Role::Viewer, Scope::Exchange, None).await,
        Err(PeopleError::Exists(_))
    ));
    assert!(matches!(
        people
            .add("no way", Role::Viewer, Scope::Exchange, None)
            .await,
        Err(PeopleError::BadUsername)
    ));
    assert!(matches!(
        people
            .add("dan", Role::Admin, Scope::Member("vendorcorp".into()), None)
            .await,
        Err(PeopleError::ScopedAdmin)
    ));
    assert!(matches!(
        people.update("op", Role::Viewer, Scope::Exchange).await,
        Err(PeopleError::FromFile(_))
    ));
    people
        .update("cat", Role::Viewer, Scope::Member("vendorcorp".into()))
        .await
        .expect("updated");
    assert_eq!(
        revoked.try_recv().expect("a revocation"),
        Revocation::Person("cat".into())
    );
    people.remove("cat").await.expect("removed");
    assert_eq!(
        revoked.try_recv().expect("a revocation"),
        Revocation::Person("cat".into())
    );
    assert!(people.get("cat").is_none());
    assert!(matches!(
        people.remove("cat").await,
        Err(PeopleError::Unknown(_))
    ));
}

#[tokio::test]
async fn the_last_exchange_wide_admin_stays() {
    let people = People::open(store().await, &UiUsers::none(), Cluster::solo())
        .await
        .expect("opens");
    people
        .add("root", Role::Admin, Scope::Exchange, None)
        .await
        .expect("added");
    assert!(matches!(
        people.update("root", Role::Operator, Scope::Exchange).await,
        Err(PeopleError::LastAdmin)
    ));
    assert!(matches!(
        people.remove("root").await,
        Err(PeopleError::LastAdmin)
    ));
    people
        .add("root2", Role::Admin, Scope::Exchange, None)
        .await
        .expect("added");
    people.remove("root").await.expect("another admin remains");
}

#[tokio::test]
async fn an_identity_providers_person_never_takes_over_another() {
    let people = People::open(
        store().await,
        &file(&[("op", "admin", None)]),
        Cluster::solo(),
    )
    .await
    .expect("opens");
    assert!(matches!(
        people
            .from_identity_provider("op", Role::Operator, "buyercorp")
            .await,
        Err(PeopleError::Exists(_))
    ));
    let eve = people
        .from_identity_provider("eve@buyercorp", Role::Approver, "buyercorp")
        .await
        .expect("made");
    assert_eq!(eve.scope, Scope::Member("buyercorp".into()));
    assert_eq!(eve.origin, Origin::IdentityProvider);
    assert!(
        !tokio::task::spawn_blocking(move || people.verify("eve@buyercorp", ""))
            .await
            .expect("join"),
        "no password"
    );
}
