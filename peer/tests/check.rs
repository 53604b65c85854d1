//! `peer check`, run as the real binary: every shipped peer config is
//! accepted, and a broken one is refused with exit code 1 and every problem
//! on its own `file:line:column: field: message` line (what an operator
//! sees before starting a peer).
//!
//! Being an integration test of this package, it also makes
//! `cargo test --workspace` build the `peer` binary that the hub's test
//! harness starts.

use std::path::Path;
use std::process::Command;

fn config_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/peers")
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

/// The 1-based line of the shipped vendorcorp config that starts with
/// `prefix`.
fn line_of(prefix: &str) -> usize {
    let text = std::fs::read_to_string(config_dir().join("vendorcorp.yaml")).expect("read");
    text.lines()
        .position(|l| l.starts_with(prefix))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no line starts with {prefix}"))
}

/// Writes the shipped vendorcorp config, edited by `edits`, to a temporary
/// `broken.yaml` and runs `peer check` on it: (path, exit code, stderr).
fn check_broken(edits: &[(&str, &str)]) -> (String, Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = std::fs::read_to_string(config_dir().join("vendorcorp.yaml")).expect("read");
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, text).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_peer"))
        .arg("check")
        .arg("--config")
        .arg(&broken)
        .output()
        .expect("run peer check");
    (
        broken.display().to_string(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_broken_config_is_refused_naming_file_and_field() {
    let (file, code, stderr) = check_broken(&[("listen: 127.0.0.1:3101", "listen: nowhere")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("broken.yaml") && stderr.contains("listen"),
        "{stderr}"
    );
    let line = line_of("listen:");
    assert!(
        stderr.starts_with(&format!("{file}:{line}:1: listen: ")),
        "{stderr}"
    );
}

#[test]
fn every_problem_is_reported_on_its_own_line_in_file_order() {
    let (file, code, stderr) = check_broken(&[
        ("    table: orders", "    table: order"),
        (
            "token_env: WS_TOKEN_VENDORCORP",
            "token_env: sk_live_9f8e7d",
        ),
        ("listen: 127.0.0.1:3101", "listen: nowhere"),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    let located: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix(file.as_str()).unwrap_or(l))
        .collect();
    assert_eq!(located.len(), 3, "{stderr}");
    let want = [
        format!(":{}:1: listen: ", line_of("listen:")),
        format!(":{}:1: token_env: ", line_of("token_env:")),
        format!(":{}:5: skills[0].table: ", line_of("    table:")),
    ];
    for (got, want) in located.iter().zip(&want) {
        assert!(got.starts_with(want.as_str()), "{want} in:\n{stderr}");
    }
    // A token pasted where its env var's name belongs is not repeated.
    assert!(!stderr.contains("sk_live_9f8e7d"), "{stderr}");
}
