//! `hub receipt verify PATH... --jwks FILE|URL [--trail DIR]`: checks the
//! hub's signed receipts offline ([`exchange::receipt`]).
//!
//! A PATH is a file or a directory of files (not recursive), each holding
//! one receipt as a party keeps it: the compact JWS alone, or JSON that
//! carries it (`{"id", "receipt"}` as `/receipts/v1` answers, `{"receipts":
//! [...]}`, or `{"id", "jws"}` as an answer's metadata holds it). Each is
//! checked against the JWKS (the hub's published `/.well-known/jwks.json`,
//! a file or its URL); with `--trail DIR`, an export of the hub's trail
//! (`hub trail export`), the export is verified first and each receipt's
//! record must be in it, agreeing with the receipt where the export shows
//! the record in full. Prints one line a receipt and exits 1 if any fails.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use exchange::audit::export;
use exchange::receipt;
use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;

/// `hub receipt`.
#[derive(Debug, Args)]
pub struct ReceiptArgs {
    #[command(subcommand)]
    command: ReceiptCommand,
}

#[derive(Debug, Subcommand)]
enum ReceiptCommand {
    /// Verify receipts against the hub's JWKS (and a trail export).
    Verify(VerifyArgs),
}

#[derive(Debug, Args)]
struct VerifyArgs {
    /// Receipt files, or directories of them.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The hub's JWKS: a file, or its `http(s)://` URL.
    #[arg(long)]
    jwks: String,
    /// An export of the hub's trail the receipts' records must be in.
    #[arg(long)]
    trail: Option<PathBuf>,
}

/// Runs `hub receipt`.
pub async fn receipt(args: ReceiptArgs) -> anyhow::Result<()> {
    match args.command {
        ReceiptCommand::Verify(args) => verify(args).await,
    }
}

async fn verify(args: VerifyArgs) -> anyhow::Result<()> {
    let keys = read_keys(&args.jwks).await?;
    let trail = match &args.trail {
        None => None,
        Some(dir) => {
            let found = export::verify_dir(dir, Some(keys.clone()))
                .with_context(|| format!("reading the trail export in {}", dir.display()))?;
            if let Some(broken) = found.broken {
                anyhow::bail!(
                    "the trail export in {} does not verify: {broken}",
                    dir.display()
                );
            }
            let lines = read_lines(dir)?;
            println!(
                "trail export of chain `{}`: {} records verified against the JWKS",
                found.manifest.system,
                lines.len()
            );
            Some((found.manifest.system, lines))
        }
    };
    let mut files = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("reading the directory {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    let (mut good, mut bad) = (0usize, 0usize);
    for file in &files {
        let found = match read_receipts(file) {
            Ok(found) => found,
            Err(e) => {
                println!("FAIL {}: {e:#}", file.display());
                bad += 1;
                continue;
            }
        };
        for jws in found {
            match check(&jws, &keys, trail.as_ref()) {
                Ok(line) => {
                    println!("ok   {}: {line}", file.display());
                    good += 1;
                }
                Err(why) => {
                    println!("FAIL {}: {why}", file.display());
                    bad += 1;
                }
            }
        }
    }
    println!("{good} receipts verified, {bad} failed");
    if bad > 0 || good == 0 {
        anyhow::bail!("{bad} of {} receipts do not verify", good + bad);
    }
    Ok(())
}

/// One receipt's line, or why it fails.
fn check(
    jws: &str,
    keys: &JwkSet,
    trail: Option<&(String, Vec<export::Line>)>,
) -> Result<String, String> {
    let (r, kid) = receipt::verify(jws, keys).map_err(|e| e.to_string())?;
    let what = match (&r.reason, r.outcome) {
        (Some(reason), _) => reason.as_str().to_string(),
        (None, outcome) => outcome.as_str().to_string(),
    };
    let mut line = format!(
        "{} {} -> {} {} {what}, key {kid}",
        r.id, r.caller, r.provider, r.capability
    );
    if let Some((chain, lines)) = trail {
        let seq = receipt::locate(&r, chain, lines)?;
        line.push_str(&format!(", trail seq {seq}"));
    }
    Ok(line)
}

/// The receipts a file holds (module doc).
fn read_receipts(file: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(file).context("reading it")?;
    let text = text.trim();
    if !text.starts_with('{') {
        return Ok(vec![text.to_string()]);
    }
    let value: Value = serde_json::from_str(text).context("it is not JSON")?;
    let one = |v: &Value| -> Option<String> {
        v.get("receipt")
            .or_else(|| v.get("jws"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let Some(list) = value.get("receipts").and_then(Value::as_array) {
        return list
            .iter()
            .map(|v| one(v).context("an entry of `receipts` has no `receipt`"))
            .collect();
    }
    one(&value)
        .map(|jws| vec![jws])
        .context("it holds no `receipt` (nor `jws`, nor `receipts`)")
}

async fn read_keys(jwks: &str) -> anyhow::Result<JwkSet> {
    let text = if jwks.starts_with("http://") || jwks.starts_with("https://") {
        reqwest::get(jwks)
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("fetching the JWKS {jwks}"))?
            .text()
            .await
            .with_context(|| format!("reading the JWKS {jwks}"))?
    } else {
        std::fs::read_to_string(jwks).with_context(|| format!("reading the JWKS {jwks}"))?
    };
    serde_json::from_str(&text).with_context(|| format!("{jwks} is not a JWKS"))
}

fn read_lines(dir: &Path) -> anyhow::Result<Vec<export::Line>> {
    let path = dir.join("records.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{}, line {}", path.display(), i + 1))
        })
        .collect()
}
