//! `peer check`, run as the real binary: every shipped peer config is
//! accepted, and a broken one is refused with the file and field named and
//! exit code 1 (what an operator sees before starting a peer).
//!
//! Being an integration test of this package, it also makes
//! `cargo test --workspace` build the `peer` binary that the hub's test
//! harness starts.

use std::path::Path;
use std::process::Command;

fn config_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/peers")
}

#[test]
fn every_shipped_config_checks_ok() {
    for name in ["vendorcorp", "buyercorp", "helpdesk", "logistics"] {
        let path = config_dir().join(format!("{name}.yaml"));
        let out = Command::new(env!("CARGO_BIN_EXE_peer"))
            .arg("check")
            .arg("--config")
            .arg(&path)
            .output()
            .expect("run peer check");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(&format!(": ok ({name} ")), "{stdout}");
    }
}

#[test]
fn a_broken_config_is_refused_naming_file_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(config_dir().join("vendorcorp.yaml")).expect("read");
    let broken = dir.path().join("broken.yaml");
    std::fs::write(
        &broken,
        text.replace("listen: 127.0.0.1:3101", "listen: nowhere"),
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_peer"))
        .arg("check")
        .arg("--config")
        .arg(&broken)
        .output()
        .expect("run peer check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("broken.yaml") && stderr.contains("listen"),
        "{stderr}"
    );
}
