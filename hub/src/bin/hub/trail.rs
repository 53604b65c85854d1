//! `hub trail`: reading audit trails from outside the processes that write
//! them.
//!
//! - `hub trail --trace-id X --db a.db --db b.db ...` (or `hub trail
//!   rebuild ...`): rebuilds one interaction from several independent
//!   trails, read-only (a `--db` may be the replicas' `postgres://` URL).
//! - `hub trail verify --db X [--system S] [--jwks FILE] [--anchor FILE]`:
//!   walks every chain of a trail (the hub's or a peer's) and its signed
//!   checkpoints, and those of the anchor file the hub appended its
//!   checkpoints to (`WS_TRAIL_ANCHOR`): prints a summary and exits 0, or
//!   the first broken link (a truncation the anchor shows included) and
//!   exits 1.
//! - `hub trail verify --dir D [--jwks FILE]`: the same for an export,
//!   with no database; `--bundle FILE` for an export downloaded from the
//!   canvas as one JSON document.
//! - `hub trail export --db X --counterparty S --out D [--system C]`:
//!   writes S's verifiable segment of the hub's chain
//!   (`exchange::audit::export`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use exchange::audit::{self, export, verify, AuditRecord, AuditTrail};
use exchange::db::{Location, Store};
use jsonwebtoken::jwk::JwkSet;

/// `hub trail`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TrailArgs {
    #[command(subcommand)]
    command: Option<TrailCommand>,
    /// `rebuild` flags, when no subcommand is given.
    #[command(flatten)]
    rebuild: RebuildArgs,
}

#[derive(Debug, Subcommand)]
enum TrailCommand {
    /// Rebuild one interaction from several audit trails (the default:
    /// `hub trail --trace-id X --db ...`).
    Rebuild(RebuildArgs),
    /// Verify a trail's hash chains and signed checkpoints, or an export.
    Verify(VerifyArgs),
    /// Write a counterparty's verifiable segment of the hub's chain.
    Export(ExportArgs),
}

#[derive(Debug, Clone, Args)]
struct RebuildArgs {
    /// The trace id (32 hex digits) of the interaction.
    #[arg(long)]
    trace_id: Option<String>,
    /// A trail database to read (repeat for each system's file; the
    /// replicas' `postgres://` URL for theirs).
    #[arg(long = "db")]
    dbs: Vec<Location>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Args)]
struct VerifyArgs {
    /// The trail's store: a SQLite file (the hub's or a peer's, opened
    /// read-only) or the replicas' `postgres://` URL.
    #[arg(long, required_unless_present_any = ["dir", "bundle"], conflicts_with_all = ["dir", "bundle"])]
    db: Option<Location>,
    /// An export directory (`hub trail export`), verified without a store.
    #[arg(long, conflicts_with = "bundle")]
    dir: Option<PathBuf>,
    /// An export as one JSON document (what the canvas's
    /// `GET /api/nodes/{id}/trail` downloads), verified without a store.
    #[arg(long)]
    bundle: Option<PathBuf>,
    /// Only this chain (a `system` of the trail).
    #[arg(long, conflicts_with = "dir")]
    system: Option<String>,
    /// Check checkpoints against this JWKS file (the hub's published
    /// `/.well-known/jwks.json`) instead of the store's keys or the
    /// export's `jwks.json`.
    #[arg(long)]
    jwks: Option<PathBuf>,
    /// The anchor file the hub appended its checkpoints to
    /// (`WS_TRAIL_ANCHOR`): the store's chains must reach every checkpoint
    /// it holds, and agree with it.
    #[arg(long, conflicts_with = "dir")]
    anchor: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
struct ExportArgs {
    /// The hub's store (SQLite file, opened read-only, or `postgres://`).
    #[arg(long)]
    db: Location,
    /// The system whose calls are exported in full (as caller or provider).
    #[arg(long)]
    counterparty: String,
    /// The directory to write (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// The chain to export, when the store holds several.
    #[arg(long)]
    system: Option<String>,
}

/// Runs `hub trail ...`.
pub async fn trail(args: TrailArgs) -> anyhow::Result<()> {
    match args.command {
        None => rebuild(args.rebuild).await,
        Some(TrailCommand::Rebuild(r)) => rebuild(r).await,
        Some(TrailCommand::Verify(v)) => verify_command(v).await,
        Some(TrailCommand::Export(e)) => export_command(e).await,
    }
}

/// A trail's store, read-only when it is a file (a mistyped path must not
/// become an empty trail); its file name's stem for a file, else `hub`.
async fn open(location: &Location) -> anyhow::Result<(Store, String)> {
    Ok(match location {
        Location::File(path) => (
            Store::open_read_only(path).await?,
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        other => (Store::open(other).await?, "hub".to_string()),
    })
}

async fn rebuild(args: RebuildArgs) -> anyhow::Result<()> {
    let Some(trace_id) = args.trace_id else {
        anyhow::bail!(
            "give --trace-id X --db FILE... (rebuild an interaction), or a subcommand: \
             verify, export (hub trail --help)"
        );
    };
    if args.dbs.is_empty() {
        anyhow::bail!("give at least one --db: a trail to read");
    }
    let mut trails = Vec::new();
    for location in &args.dbs {
        // The owner name is only used when appending, which this never does:
        // each record names its own system.
        let (store, owner) = open(location).await?;
        trails.push(AuditTrail::read_only(store, owner));
    }
    let records = audit::rebuild(&trails, &trace_id)
        .await
        .context("reading the trails")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&records)?);
    } else {
        print_table(&records);
    }
    if records.is_empty() {
        anyhow::bail!("no record of trace {trace_id} in the given trails");
    }
    Ok(())
}

fn read_jwks(path: &Path) -> anyhow::Result<JwkSet> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the JWKS {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a JWKS", path.display()))
}

async fn verify_command(args: VerifyArgs) -> anyhow::Result<()> {
    let override_keys = args.jwks.as_deref().map(read_jwks).transpose()?;
    if let Some(dir) = &args.dir {
        return verify_export(dir, override_keys, args.jwks.is_some());
    }
    if let Some(file) = &args.bundle {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let bundle: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", file.display()))?;
        let dir = tempfile::tempdir().context("a directory to unpack the bundle into")?;
        export::write_bundle(&bundle, dir.path())
            .with_context(|| format!("unpacking {}", file.display()))?;
        return verify_export(dir.path(), override_keys, args.jwks.is_some());
    }
    let Some(location) = &args.db else {
        anyhow::bail!("give --db (a trail's store) or --dir (an export)");
    };
    let (store, _) = open(location).await?;
    let keys = match override_keys {
        Some(k) => k,
        None => {
            let jwks = hub::signing::stored_jwks(&store)
                .await
                .context("reading the store's signing keys")?;
            serde_json::from_value(jwks).context("the store's signing keys as a JWKS")?
        }
    };
    let anchor = args
        .anchor
        .as_deref()
        .map(audit::anchor::read)
        .transpose()?;
    let found =
        verify::verify_store_anchored(&store, args.system.as_deref(), &keys, anchor.as_ref())
            .await
            .with_context(|| format!("verifying the trail in {location}"))?;
    for chain in &found.chains {
        println!("{chain}");
    }
    if let Some(broken) = &found.broken {
        println!("BROKEN: {broken}");
        anyhow::bail!("the trail in {location} does not verify");
    }
    if found.chains.is_empty() {
        anyhow::bail!("no trail in {location}");
    }
    let last = found.chains.iter().filter_map(|c| c.last_checkpoint).max();
    println!(
        "verified: {} chain{}, {} records, {} checkpoints{}",
        found.chains.len(),
        if found.chains.len() == 1 { "" } else { "s" },
        found.records(),
        found.checkpoints(),
        match last {
            Some(seq) => format!(", the last covering seq {seq}"),
            None => String::new(),
        }
    );
    match (&args.anchor, &anchor) {
        (Some(path), Some(anchor)) => {
            let held: u64 = found.chains.iter().map(|c| c.anchored).sum();
            println!(
                "anchor {}: {held} checkpoints held outside the store, every one reached{}",
                path.display(),
                if anchor.torn_tail {
                    " (its last line, an unfinished write, left out)"
                } else {
                    ""
                }
            );
        }
        _ if last.is_some() => println!(
            "(without --anchor a chain cut short at its end, head and later checkpoints \
             deleted with it, cannot be told from a shorter chain)"
        ),
        _ => {}
    }
    Ok(())
}

fn verify_export(dir: &Path, keys: Option<JwkSet>, own_keys: bool) -> anyhow::Result<()> {
    let found = export::verify_dir(dir, keys)
        .with_context(|| format!("reading the export in {}", dir.display()))?;
    let m = &found.manifest;
    if let Some(broken) = &found.broken {
        println!("BROKEN: {broken}");
        anyhow::bail!("the export in {} does not verify", dir.display());
    }
    let Some(report) = &found.report else {
        anyhow::bail!("the export in {} holds no chain", dir.display());
    };
    let anchor = if m.anchor.seq == 0 {
        "from the chain's start".to_string()
    } else {
        format!("anchored at the checkpoint of seq {}", m.anchor.seq)
    };
    println!(
        "export of chain `{}` for `{}`: {} records (seq {}–{}), {} of them in full, {anchor}",
        m.system, m.counterparty, report.records, m.first_seq, m.last_seq, found.full
    );
    println!(
        "verified: {} checkpoints, the last covering seq {}; keys: {}",
        report.checkpoints,
        report.last_checkpoint.unwrap_or(0),
        if own_keys {
            "the given JWKS"
        } else {
            "the export's own jwks.json (check them against the hub's published \
             /.well-known/jwks.json, or pass --jwks)"
        }
    );
    Ok(())
}

async fn export_command(args: ExportArgs) -> anyhow::Result<()> {
    let (store, _) = open(&args.db).await?;
    let jwks = hub::signing::stored_jwks(&store)
        .await
        .context("reading the store's signing keys")?;
    let m = export::export(
        &store,
        args.system.as_deref(),
        &args.counterparty,
        &jwks,
        &args.out,
    )
    .await
    .with_context(|| format!("exporting from {}", args.db))?;
    let anchor = if m.anchor.seq == 0 {
        "from the chain's start".to_string()
    } else {
        format!("after the checkpoint of seq {}", m.anchor.seq)
    };
    println!(
        "exported chain `{}` for `{}` to {}: {} records (seq {}–{}), {} in full, {anchor}",
        m.system,
        m.counterparty,
        args.out.display(),
        m.records,
        m.first_seq,
        m.last_seq,
        m.full
    );
    if m.unchained_not_exported > 0 {
        println!(
            "{} older records of `{}` predate the chain and are not exported",
            m.unchained_not_exported, m.counterparty
        );
    }
    Ok(())
}

/// The serde spelling of a unit enum value (`not_connected`), as `--json` shows it.
fn wire_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn print_table(records: &[AuditRecord]) {
    let rows: Vec<[String; 9]> = records
        .iter()
        .map(|r| {
            [
                r.at.clone(),
                r.system.clone(),
                wire_name(&r.role),
                r.caller.clone(),
                format!("{} / {}", r.provider, r.capability),
                wire_name(&r.outcome),
                r.reason.map(|c| c.to_string()).unwrap_or_default(),
                format!("{} ms", r.duration_ms),
                r.request_id.clone(),
            ]
        })
        .collect();
    let header = [
        "at",
        "trail",
        "role",
        "caller",
        "provider / capability",
        "outcome",
        "reason",
        "took",
        "request id",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    println!("{}", line(header.to_vec()));
    for row in &rows {
        println!("{}", line(row.iter().map(String::as_str).collect()));
    }
}
