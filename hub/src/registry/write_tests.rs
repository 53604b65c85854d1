use super::*;
use crate::events::EventBus;
use crate::registry::edit::Block;

const DEMO: &str = include_str!("../../../config/topology.yaml");

fn registry() -> (tempfile::TempDir, std::sync::Arc<Registry>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("topology.yaml");
    std::fs::write(&path, DEMO).expect("write");
    let reg = Registry::open(&path, EventBus::new()).expect("loads");
    (dir, std::sync::Arc::new(reg))
}

/// Drops the seeded edge BuyerCorp → VendorCorp: a valid change.
fn drop_first_edge(_: &Loaded) -> Result<Change, WriteError> {
    Ok(Change {
        edits: vec![Edit::Remove {
            block: Block::InitialEdges,
            index: 0,
        }],
        credential: Some(CredentialChange::Set {
            name: "WS_TOKEN_TEST_ONLY".into(),
            token: "secret-value".into(),
        }),
    })
}

#[tokio::test]
async fn a_change_is_validated_written_atomically_kept_and_reloaded() {
    let (dir, reg) = registry();
    let base = reg.snapshot().digest.clone();
    let written = reg.change(&base, drop_first_edge).await.expect("written");
    assert_eq!(written.before, base);
    assert_eq!(reg.snapshot().digest, written.after, "reloaded");
    assert_eq!(reg.snapshot().topology.initial_edges.len(), 1);
    let previous =
        std::fs::read_to_string(dir.path().join("topology.yaml.previous")).expect("previous kept");
    assert_eq!(previous, DEMO);
    let held = credentials::HeldTokens::read(dir.path());
    assert_eq!(held.get("WS_TOKEN_TEST_ONLY"), Some("secret-value"));
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with(".topology.") || n.starts_with(".credentials."))
        .filter(|n| n != ".topology.yaml.lock")
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[tokio::test]
async fn a_stale_base_writes_nothing() {
    let (dir, reg) = registry();
    let err = reg
        .change("not-the-digest", drop_first_edge)
        .await
        .expect_err("refused");
    assert!(matches!(err, WriteError::Changed), "{err}");
    assert!(err.to_string().contains("changed since"));
    let now = std::fs::read_to_string(dir.path().join("topology.yaml")).expect("read");
    assert_eq!(now, DEMO);
    assert!(!dir.path().join("credentials.env").exists());
}

#[tokio::test]
async fn an_invalid_change_is_refused_with_its_located_problem() {
    let (dir, reg) = registry();
    let base = reg.snapshot().digest.clone();
    let err = reg
        .change(&base, |loaded: &Loaded| {
            let mut rule = loaded.topology.rules[0].clone();
            rule.consumers.push("nobody".into());
            Ok(Change {
                edits: vec![Edit::SetList {
                    block: Block::Rules,
                    index: 0,
                    field: "consumers",
                    values: rule.consumers.clone(),
                    item: serde_yaml_ng::to_value(&rule).expect("value"),
                }],
                credential: Some(CredentialChange::Set {
                    name: "WS_TOKEN_X".into(),
                    token: "t".into(),
                }),
            })
        })
        .await
        .expect_err("refused");
    let WriteError::Invalid(e) = &err else {
        panic!("{err}");
    };
    let issue = &e.issues()[0];
    assert_eq!(issue.field, "rules[0].consumers[2]");
    assert!(issue.message.contains("nobody"), "{}", issue.message);
    let now = std::fs::read_to_string(dir.path().join("topology.yaml")).expect("read");
    assert_eq!(now, DEMO);
    assert!(!dir.path().join("credentials.env").exists());
    assert!(!dir.path().join("topology.yaml.previous").exists());
}

#[tokio::test]
async fn two_writers_from_one_view_one_wins_the_other_is_told() {
    let (_dir, reg) = registry();
    let base = reg.snapshot().digest.clone();
    let (a, b) = tokio::join!(
        reg.change(&base, drop_first_edge),
        reg.change(&base, drop_first_edge)
    );
    let outcomes = [a.is_ok(), b.is_ok()];
    assert_eq!(outcomes.iter().filter(|ok| **ok).count(), 1, "{a:?} {b:?}");
    let loser = a.err().or(b.err()).expect("one lost");
    assert!(matches!(loser, WriteError::Changed), "{loser}");
    assert_eq!(reg.snapshot().topology.initial_edges.len(), 1);
}
