//! The manual (`book/`) cannot rot: its links lead somewhere, its
//! reference pages are what the code writes, its lists name what the code
//! has, and every sample marked to run against the demo runs, against a
//! real hub and real peers, and prints what the book says it prints.
//!
//! A sample is a fenced block whose info string is `sh,demo`,
//! `python,demo` (the Python a2a-sdk's venv) or `python,demo,mcp` (the
//! MCP SDKs' venv). It runs as written, with the demo's addresses
//! (`127.0.0.1:3000`, `{provider}.localhost:3000`) moved to the test
//! hub's port and the systems' tokens in `WS_TOKEN_<ID>`, as
//! `var/demo/tokens.env` gives them. It must exit 0; when the next block
//! is `text,output`, each of its lines must be a line of what the sample
//! printed. `scripts/book` builds the book itself (mdBook, warnings
//! refused).

mod common;

use common::{repo, Stack};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every Markdown file of the book, by path.
fn pages() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![repo().join("book/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("book/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fenced block: its info string, its text, the line it starts on.
#[derive(Debug, Clone)]
struct Block {
    info: String,
    text: String,
    line: usize,
}

/// The fenced blocks of a page, in order.
fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (n, line) in page.lines().enumerate() {
        let trimmed = line.trim_start();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_string(),
                    text: String::new(),
                    line: n + 1,
                })
            }
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some(b), None) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// The page's text outside fenced blocks and inline code.
fn prose(page: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let mut inline = false;
            for part in line.split('`') {
                if !inline {
                    out.push_str(part);
                }
                inline = !inline;
            }
            out.push('\n');
        }
    }
    out
}

/// The targets of a page's Markdown links and images (`](target)`).
fn links(page: &str) -> Vec<String> {
    let text = prose(page);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// The ids mdBook gives a page's headings.
fn anchors(page: &str) -> BTreeSet<String> {
    prose_headings(page)
        .into_iter()
        .map(|h| {
            h.chars()
                .filter_map(|c| match c {
                    c if c.is_alphanumeric() => Some(c.to_ascii_lowercase()),
                    ' ' | '-' => Some('-'),
                    '_' => Some('_'),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

fn prose_headings(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().to_string());
        }
    }
    out
}

#[test]
fn every_link_in_the_book_leads_to_a_page_and_a_heading_that_exist() {
    let root = repo().join("book/src");
    let mut broken = Vec::new();
    let mut linked = BTreeSet::new();
    for page in pages() {
        let text = read(&page);
        for target in links(&text) {
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a directory").join(file)
            };
            let Ok(dest) = dest.canonicalize() else {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            };
            if !dest.starts_with(root.canonicalize().expect("book/src")) {
                broken.push(format!("{}: {target}: outside the book", page.display()));
                continue;
            }
            if !anchor.is_empty() && !anchors(&read(&dest)).contains(anchor) {
                broken.push(format!("{}: {target}: no such heading", page.display()));
            }
            if page.ends_with("SUMMARY.md") {
                linked.insert(dest);
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // Every page is a chapter: none is left out of the table of contents.
    for page in pages() {
        if !page.ends_with("SUMMARY.md") {
            let page = page.canonicalize().expect("a page");
            assert!(
                linked.contains(&page),
                "{} is in no chapter of SUMMARY.md",
                page.display()
            );
        }
    }
}

#[test]
fn the_reference_pages_are_what_the_code_writes() {
    let topology = read(&repo().join(hub::registry::schema::TOPOLOGY_REFERENCE));
    assert!(
        topology == hub::registry::schema::topology_reference(),
        "{} is not what `hub schema topology --markdown` writes: write it again with that command",
        hub::registry::schema::TOPOLOGY_REFERENCE
    );
    let out = Command::new(common::peer_bin())
        .args(["schema", "--markdown"])
        .output()
        .expect("peer schema runs");
    assert!(out.status.success(), "{out:?}");
    let published = read(&repo().join("book/src/reference/peer.md"));
    assert!(
        published == String::from_utf8_lossy(&out.stdout),
        "book/src/reference/peer.md is not what `peer schema --markdown` writes: write it again with that command"
    );
    // Every field of a system is on its page.
    for field in [
        "token_env",
        "provides",
        "consumes",
        "oidc",
        "mtls",
        "base_url",
    ] {
        assert!(
            topology.contains(&format!("| `{field}` |")),
            "the topology reference lacks `{field}`"
        );
    }
}

#[test]
fn the_lists_in_the_book_name_everything_the_code_has() {
    // The nine reason codes.
    let clients = read(&repo().join("book/src/clients/README.md"));
    for code in exchange::reason::ReasonCode::ALL {
        assert!(
            clients.contains(&format!("| `{}` |", code.as_str())),
            "clients/README.md does not list {}",
            code.as_str()
        );
    }
    // Every variable the hub, the peers and their library read.
    let env = read(&repo().join("book/src/reference/environment.md"));
    let mut missing = Vec::new();
    for crate_dir in ["hub/src", "peer/src", "exchange/src"] {
        for var in variables_read(&repo().join(crate_dir)) {
            let shown = if var.ends_with('_') {
                format!("`{var}<ID>`")
            } else {
                format!("`{var}`")
            };
            if !env.contains(&shown) {
                missing.push(var);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "reference/environment.md does not name {missing:?}"
    );
}

/// The `"WS_…"` literals of a crate's code, its tests left out.
fn variables_read(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source dir").flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "testing" {
                    stack.push(path);
                }
                continue;
            }
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "tests.rs" {
                continue;
            }
            let text = read(&path);
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("\"WS_") {
                rest = &rest[at + 1..];
                let end = rest.find('"').unwrap_or(rest.len());
                let var = &rest[..end];
                // The test suites' own switches are no setting of a system.
                let ours = !var.starts_with("WS_TEST_");
                if ours
                    && var
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                {
                    out.insert(var.to_string());
                }
            }
        }
    }
    out
}

/// A sample to run: where it is, how to run it, what it must print.
struct Sample {
    at: String,
    program: Vec<String>,
    code: String,
    expected: Vec<String>,
}

fn samples() -> Vec<Sample> {
    let mut out = Vec::new();
    for page in pages() {
        let all = blocks(&read(&page));
        for (i, block) in all.iter().enumerate() {
            let program: Vec<String> = match block.info.as_str() {
                "sh,demo" => vec!["bash".into(), "-euo".into(), "pipefail".into(), "-c".into()],
                "python,demo" => vec![
                    repo().join(".tools/venv/bin/python").display().to_string(),
                    "-c".into(),
                ],
                "python,demo,mcp" => vec![
                    repo()
                        .join(".tools/venv-mcp/bin/python")
                        .display()
                        .to_string(),
                    "-c".into(),
                ],
                other => {
                    assert!(
                        !other.contains("demo"),
                        "{}:{}: `{other}` is no kind of sample this test runs",
                        page.display(),
                        block.line
                    );
                    continue;
                }
            };
            let expected = all
                .get(i + 1)
                .filter(|next| next.info == "text,output")
                .map(|next| {
                    next.text
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            out.push(Sample {
                at: format!(
                    "{}:{}",
                    page.strip_prefix(repo()).unwrap_or(&page).display(),
                    block.line
                ),
                program,
                code: block.text.clone(),
                expected,
            });
        }
    }
    out
}

#[tokio::test]
async fn every_sample_in_the_book_runs_against_the_demo_and_prints_what_the_book_says() {
    let samples = samples();
    assert!(
        samples.len() >= 8,
        "the book's samples were not found: {}",
        samples.len()
    );
    // The demo as `scripts/stack` starts it: BuyerCorp's contract is the
    // one it negotiates at start (VendorCorp counters without `order_id`);
    // the hub has none until someone presses Negotiate.
    let stack = Stack::demo_without_contracts().await;
    stack
        .negotiate_orders(
            "buyercorp",
            "vendorcorp",
            &["region", "order_date", "order_value", "order_id"],
        )
        .await;
    let port = stack.hub_port.to_string();
    let mut failures = Vec::new();
    for sample in &samples {
        let code = sample.code.replace(":3000", &format!(":{port}"));
        let mut command = Command::new("timeout");
        command
            .arg("60")
            .args(&sample.program)
            .arg(&code)
            .current_dir(repo());
        for id in ["vendorcorp", "buyercorp", "helpdesk"] {
            command.env(common::token_env(id), stack.token(id));
        }
        let out = command.output().expect("the sample runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let printed: Vec<&str> = stdout.lines().map(str::trim).collect();
        let lacking: Vec<String> = sample
            .expected
            .iter()
            .map(|line| line.replace(":3000", &format!(":{port}")))
            .filter(|line| !printed.contains(&line.as_str()))
            .collect();
        println!("{}: {} -> {stdout}", sample.at, out.status);
        if !out.status.success() || !lacking.is_empty() {
            failures.push(format!(
                "{} ({}): lacking {lacking:?}\n--- stdout\n{stdout}--- stderr\n{}",
                sample.at,
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} samples failed:\n{}",
        failures.len(),
        samples.len(),
        failures.join("\n")
    );
}
