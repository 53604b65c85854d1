//! An export for a counterparty: the segment of a chain that covers every
//! record of calls one system took part in, verifiable with no access to
//! the store.
//!
//! **What it holds** (a directory):
//! - `manifest.json`: `format` ([`FORMAT`]), the chain (`system`), the
//!   `counterparty`, the `anchor` `{seq, hash, count}` the segment starts
//!   after (`count`: the records the chain holds up to it, when its
//!   checkpoint signs one), the first and last seq, how many records and
//!   how many in full, when it was made;
//! - `records.jsonl`: every record of the chain after the anchor up to the
//!   end checkpoint, in seq order, one JSON object a line:
//!   `{seq, prev_hash, digest, hash}`, plus `record` (its content, the
//!   twelve members [`super::chain`] hashes) when the counterparty was its
//!   caller or provider. A record of anybody else shows no content and no
//!   name: only the hashes that keep the chain whole;
//! - `checkpoints.jsonl`: the chain's signed checkpoints from the anchor to
//!   the end ([`super::checkpoint::Checkpoint`], each with the count it
//!   signs);
//! - `jwks.json`: the signer's public keys. A counterparty should rather
//!   check the checkpoints against the keys the hub publishes
//!   (`/.well-known/jwks.json`, `hub trail verify --dir D --jwks FILE`):
//!   the export's own copy proves only that the export is consistent.
//!
//! **Which segment.** It starts after the last checkpoint *before* the
//! counterparty's first record (the anchor; the chain's start when there is
//! none, anchor seq 0 and 64 zeros) and ends at the first checkpoint *at or
//! after* its last record. A last record no checkpoint covers yet cannot be
//! exported ([`ExportError::NotCovered`]): the hub signs its head every
//! `WS_TRAIL_CHECKPOINT_SECONDS`, so exporting again after that succeeds.
//! The chain is verified before anything is written.
//!
//! **Verifying it** ([`verify_dir`]): the anchor checkpoint's signature,
//! then the chain from its hash — each full record's digest recomputed
//! from its content, each link recomputed — with every checkpoint's
//! signature, hash and count checked at its seq (the count from the
//! anchor's on: a record left out of the segment shows even where the
//! links around it were rewritten); and the last record must be the one a
//! checkpoint signs, or verification fails (records no checkpoint covers
//! prove nothing). An export whose anchor signs no count (a checkpoint
//! older than counts) takes it from its first checkpoint that does.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use jsonwebtoken::jwk::JwkSet;
use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::chain::{ChainHash, GENESIS};
use super::checkpoint::{self, Checkpoint};
use super::verify::{self, Broken, ChainReport, Entry, Problem, Walker};
use super::AuditError;
use crate::db::Store;

/// The `format` of an export's manifest.
pub const FORMAT: &str = "wall-street-trail-export/1";

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    /// The chain exported.
    pub system: String,
    /// Whose records are shown in full.
    pub counterparty: String,
    /// The link the segment starts after.
    pub anchor: Anchor,
    pub first_seq: i64,
    pub last_seq: i64,
    pub records: u64,
    /// Records shown in full (the counterparty's).
    pub full: u64,
    /// Records of the counterparty written before the chain began: not
    /// exported (nothing proves them).
    pub unchained_not_exported: u64,
    pub exported_at: String,
}

/// Where an export's segment starts: after the checkpoint at `seq`
/// (`seq` 0, [`GENESIS`] and count 0: the chain's start), which counts
/// `count` records up to it (`None`: a checkpoint older than counts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    pub seq: i64,
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// One line of `records.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub seq: i64,
    pub prev_hash: String,
    pub digest: String,
    pub hash: String,
    /// The content, for the counterparty's own records only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<serde_json::Value>,
}

/// Why an export could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Audit(#[from] AuditError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}, line {line}: {why}")]
    Format {
        file: &'static str,
        line: usize,
        why: String,
    },
    #[error("the store holds no chained trail")]
    NoChain,
    #[error("the store holds several chains ({}): name one with --system", .0.join(", "))]
    SeveralChains(Vec<String>),
    #[error("no chained record of chain `{system}` involves `{counterparty}`")]
    NoRecords {
        system: String,
        counterparty: String,
    },
    #[error(
        "the last record involving the counterparty (seq {last_seq}) is not yet covered by a \
         checkpoint ({}): wait for the hub's next checkpoint (every \
         WS_TRAIL_CHECKPOINT_SECONDS) and export again",
        match .newest { Some(s) => format!("the newest covers seq {s}"), None => "there is none yet".into() }
    )]
    NotCovered { last_seq: i64, newest: Option<i64> },
    #[error("nothing exported: {0}")]
    Broken(Box<Broken>),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes the export of `counterparty`'s records from `system`'s chain
/// (the store's only chain when `None`) into `out`, signed checkpoints
/// checked against `jwks` (and `jwks` written beside them).
pub async fn export(
    store: &Store,
    system: Option<&str>,
    counterparty: &str,
    jwks: &serde_json::Value,
    out: &Path,
) -> Result<Manifest, ExportError> {
    if !store
        .has_table("audit_chain_head")
        .await
        .map_err(AuditError::from)?
    {
        return Err(ExportError::NoChain);
    }
    let system = match system {
        Some(s) => s.to_string(),
        None => {
            let mut all: Vec<String> =
                sqlx::query_scalar("SELECT system FROM audit_chain_head ORDER BY system")
                    .fetch_all(store.pool())
                    .await
                    .map_err(AuditError::from)?;
            match all.len() {
                0 => return Err(ExportError::NoChain),
                1 => all.remove(0),
                _ => return Err(ExportError::SeveralChains(all)),
            }
        }
    };
    let keys: JwkSet = serde_json::from_value(jwks.clone()).map_err(|e| ExportError::Format {
        file: "jwks",
        line: 0,
        why: e.to_string(),
    })?;
    let verified = verify::verify_store(store, Some(&system), &keys).await?;
    if let Some(broken) = verified.broken {
        return Err(ExportError::Broken(Box::new(broken)));
    }
    let span = sqlx::query(
        "SELECT MIN(seq) AS first, MAX(seq) AS last FROM audit_trail
         WHERE system = $1 AND hash IS NOT NULL AND (caller = $2 OR provider = $2)",
    )
    .bind(&system)
    .bind(counterparty)
    .fetch_one(store.pool())
    .await
    .map_err(AuditError::from)?;
    let (first, last): (Option<i64>, Option<i64>) = (
        span.try_get("first").map_err(AuditError::from)?,
        span.try_get("last").map_err(AuditError::from)?,
    );
    let (Some(first), Some(last)) = (first, last) else {
        return Err(ExportError::NoRecords {
            system,
            counterparty: counterparty.to_string(),
        });
    };
    let unchained: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM audit_trail
         WHERE system = $1 AND hash IS NULL AND (caller = $2 OR provider = $2)",
    )
    .bind(&system)
    .bind(counterparty)
    .fetch_one(store.pool())
    .await
    .map_err(AuditError::from)?;
    let before = checkpoint::list(store, &system, i64::MIN, first - 1).await?;
    let anchor = before.last().map_or(
        Anchor {
            seq: 0,
            hash: GENESIS.hex(),
            count: Some(0),
        },
        |c| Anchor {
            seq: c.seq,
            hash: c.hash.clone(),
            count: c.count,
        },
    );
    let after = checkpoint::list(store, &system, anchor.seq, i64::MAX).await?;
    let Some(end) = after.iter().find(|c| c.seq >= last).map(|c| c.seq) else {
        return Err(ExportError::NotCovered {
            last_seq: last,
            newest: after.last().map(|c| c.seq).or(anchor_seq(&anchor)),
        });
    };
    let checkpoints: Vec<&Checkpoint> = after.iter().filter(|c| c.seq <= end).collect();

    std::fs::create_dir_all(out).map_err(io(out))?;
    let records_path = out.join("records.jsonl");
    let mut records =
        std::io::BufWriter::new(std::fs::File::create(&records_path).map_err(io(&records_path))?);
    let (mut count, mut full, mut from) = (0u64, 0u64, anchor.seq);
    let (mut first_seq, mut last_seq) = (None, 0);
    loop {
        let rows = sqlx::query(
            "SELECT seq, system, role, at, caller, provider, capability, request_id, trace_id,
                    outcome, reason, duration_ms, detail, prev_hash, hash
             FROM audit_trail WHERE system = $1 AND seq > $2 AND seq <= $3
             ORDER BY seq LIMIT 1000",
        )
        .bind(&system)
        .bind(from)
        .bind(end)
        .fetch_all(store.pool())
        .await
        .map_err(AuditError::from)?;
        if rows.is_empty() {
            break;
        }
        for row in &rows {
            let seq: i64 = row.try_get("seq").map_err(AuditError::from)?;
            from = seq;
            let record = verify::row_record(row)
                .map_err(|why| AuditError::Corrupt(format!("seq {seq}: {why}")))?;
            let digest = verify::record_digest(&record)
                .map_err(|why| AuditError::Corrupt(format!("seq {seq}: {why}")))?;
            let hash = |name: &str| -> Result<String, ExportError> {
                let h: Option<String> = row.try_get(name).map_err(AuditError::from)?;
                h.ok_or_else(|| {
                    AuditError::Corrupt(format!("seq {seq} has no {name} inside the chain")).into()
                })
            };
            let involved = [&record["caller"], &record["provider"]]
                .iter()
                .any(|v| v.as_str() == Some(counterparty));
            let line = Line {
                seq,
                prev_hash: hash("prev_hash")?,
                digest: digest.hex(),
                hash: hash("hash")?,
                record: involved.then_some(record),
            };
            full += u64::from(involved);
            count += 1;
            first_seq.get_or_insert(seq);
            last_seq = seq;
            let text = serde_json::to_string(&line).map_err(|e| ExportError::Format {
                file: "records.jsonl",
                line: usize::try_from(count).unwrap_or(usize::MAX),
                why: e.to_string(),
            })?;
            writeln!(records, "{text}").map_err(io(&records_path))?;
        }
    }
    records.flush().map_err(io(&records_path))?;

    let checkpoints_path = out.join("checkpoints.jsonl");
    let mut text = String::new();
    for c in &checkpoints {
        text.push_str(&serde_json::to_string(c).unwrap_or_default());
        text.push('\n');
    }
    std::fs::write(&checkpoints_path, text).map_err(io(&checkpoints_path))?;
    let jwks_path = out.join("jwks.json");
    std::fs::write(&jwks_path, pretty(jwks)).map_err(io(&jwks_path))?;
    let manifest = Manifest {
        format: FORMAT.into(),
        system,
        counterparty: counterparty.to_string(),
        anchor,
        first_seq: first_seq.unwrap_or(0),
        last_seq,
        records: count,
        full,
        unchained_not_exported: u64::try_from(unchained).unwrap_or(0),
        exported_at: super::now(),
    };
    let manifest_path = out.join("manifest.json");
    let manifest_text = serde_json::to_value(&manifest)
        .map(|v| pretty(&v))
        .unwrap_or_default();
    std::fs::write(&manifest_path, manifest_text).map_err(io(&manifest_path))?;
    Ok(manifest)
}

fn anchor_seq(anchor: &Anchor) -> Option<i64> {
    (anchor.seq > 0).then_some(anchor.seq)
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()) + "\n"
}

/// What [`verify_dir`] found.
#[derive(Debug, Clone)]
pub struct DirVerification {
    pub manifest: Manifest,
    /// The walk of the segment (when intact).
    pub report: Option<ChainReport>,
    /// Records shown in full.
    pub full: u64,
    /// The first broken link, if any.
    pub broken: Option<Broken>,
}

/// Verifies the export in `dir` (module doc), against `keys` when given,
/// else against the export's own `jwks.json`.
pub fn verify_dir(dir: &Path, keys: Option<JwkSet>) -> Result<DirVerification, ExportError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(io(&path))
    };
    let manifest: Manifest =
        serde_json::from_str(&read("manifest.json")?).map_err(|e| ExportError::Format {
            file: "manifest.json",
            line: e.line(),
            why: e.to_string(),
        })?;
    if manifest.format != FORMAT {
        return Err(ExportError::Format {
            file: "manifest.json",
            line: 0,
            why: format!("format `{}`, not `{FORMAT}`", manifest.format),
        });
    }
    let keys = match keys {
        Some(k) => k,
        None => serde_json::from_str(&read("jwks.json")?).map_err(|e| ExportError::Format {
            file: "jwks.json",
            line: e.line(),
            why: e.to_string(),
        })?,
    };
    let mut checkpoints: Vec<Checkpoint> = Vec::new();
    for (i, text) in read("checkpoints.jsonl")?.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        checkpoints.push(serde_json::from_str(text).map_err(|e| ExportError::Format {
            file: "checkpoints.jsonl",
            line: i + 1,
            why: e.to_string(),
        })?);
    }
    checkpoints.retain(|c| c.system == manifest.system);
    checkpoints.sort_by_key(|c| c.seq);
    let system = manifest.system.clone();
    let done = |report, full, broken| DirVerification {
        manifest: manifest.clone(),
        report,
        full,
        broken,
    };
    let broken_at = |seq, problem| Broken {
        system: system.clone(),
        seq,
        request_id: None,
        problem,
    };

    // The anchor: the chain's start, or a signed checkpoint of the export.
    let (start, start_seq, start_count) = if manifest.anchor.seq == 0 {
        if ChainHash::parse(&manifest.anchor.hash) != Some(GENESIS)
            || manifest.anchor.count.is_some_and(|n| n != 0)
        {
            let problem = Problem::Anchor(
                "seq 0 is the chain's start, whose hash is 64 zeros and count 0".into(),
            );
            return Ok(done(None, 0, Some(broken_at(0, problem))));
        }
        (GENESIS, None, Some(0))
    } else {
        let seq = manifest.anchor.seq;
        let Some(pos) = checkpoints.iter().position(|c| c.seq == seq) else {
            let problem = Problem::Anchor(format!("no checkpoint at its seq {seq}"));
            return Ok(done(None, 0, Some(broken_at(seq, problem))));
        };
        let anchor = checkpoints.remove(pos);
        if let Err(why) = anchor.verify_signature(&keys) {
            return Ok(done(
                None,
                0,
                Some(broken_at(seq, Problem::CheckpointSignature(why))),
            ));
        }
        if manifest.anchor.count != anchor.count {
            let problem = Problem::Anchor(format!(
                "its count is not the one the checkpoint at seq {seq} signs"
            ));
            return Ok(done(None, 0, Some(broken_at(seq, problem))));
        }
        match ChainHash::parse(&anchor.hash) {
            Some(h) if anchor.hash.eq_ignore_ascii_case(&manifest.anchor.hash) => {
                (h, Some(seq), anchor.count)
            }
            _ => {
                let problem = Problem::Anchor(format!(
                    "its hash is not the one the checkpoint at seq {seq} signs"
                ));
                return Ok(done(None, 0, Some(broken_at(seq, problem))));
            }
        }
    };

    let mut walker = Walker::new(
        &system,
        &keys,
        (start, start_seq, start_count),
        checkpoints,
        None,
    );
    let mut full = 0u64;
    for (i, text) in read("records.jsonl")?.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(text).map_err(|e| ExportError::Format {
            file: "records.jsonl",
            line: i + 1,
            why: e.to_string(),
        })?;
        let request_id = line
            .record
            .as_ref()
            .and_then(|r| r.get("request_id"))
            .and_then(serde_json::Value::as_str);
        let digest = match &line.record {
            Some(record) => {
                full += 1;
                verify::record_digest(record)
            }
            None => {
                ChainHash::parse(&line.digest).ok_or_else(|| "its digest is not a hash".to_string())
            }
        };
        let entry = Entry {
            seq: line.seq,
            request_id,
            digest,
            prev_hash: Some(ChainHash::parse(&line.prev_hash)),
            hash: Some(ChainHash::parse(&line.hash)),
        };
        if let Err(broken) = walker.step(entry) {
            return Ok(done(None, full, Some(*broken)));
        }
    }
    let report = match walker.finish() {
        Ok(r) => r,
        Err(broken) => return Ok(done(None, full, Some(*broken))),
    };
    if report.uncovered > 0 || report.records == 0 {
        let seq = report.last_seq.unwrap_or(manifest.anchor.seq);
        let problem = Problem::NotCovered {
            last_checkpoint: report.last_checkpoint.or(start_seq),
        };
        return Ok(done(Some(report), full, Some(broken_at(seq, problem))));
    }
    if report.last_seq != Some(manifest.last_seq) || report.records != manifest.records {
        let seq = report.last_seq.unwrap_or(manifest.anchor.seq);
        let problem = Problem::Incomplete(format!(
            "it holds {} records up to seq {seq}, its manifest {} up to seq {}",
            report.records, manifest.records, manifest.last_seq
        ));
        return Ok(done(Some(report), full, Some(broken_at(seq, problem))));
    }
    Ok(done(Some(report), full, None))
}

/// The four files of an export as one JSON document (`format`,
/// `manifest`, `records`, `checkpoints`, `jwks`): what a browser downloads
/// from the hub. [`write_bundle`] turns it back into the directory
/// [`verify_dir`] checks.
pub fn read_bundle(dir: &Path, format: &str) -> Result<serde_json::Value, ExportError> {
    let json = |file: &'static str| -> Result<serde_json::Value, ExportError> {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        serde_json::from_str(&text).map_err(|e| ExportError::Format {
            file,
            line: 0,
            why: e.to_string(),
        })
    };
    let lines = |file: &'static str| -> Result<Vec<serde_json::Value>, ExportError> {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| ExportError::Format {
                    file,
                    line: i + 1,
                    why: e.to_string(),
                })
            })
            .collect()
    };
    Ok(serde_json::json!({
        "format": format,
        "manifest": json("manifest.json")?,
        "records": lines("records.jsonl")?,
        "checkpoints": lines("checkpoints.jsonl")?,
        "jwks": json("jwks.json")?,
    }))
}

/// Writes `bundle` ([`read_bundle`]'s shape) as an export directory in
/// `out`, each record and checkpoint on its own line as it came.
pub fn write_bundle(bundle: &serde_json::Value, out: &Path) -> Result<(), ExportError> {
    let part = |key: &'static str| {
        bundle.get(key).ok_or(ExportError::Format {
            file: "bundle",
            line: 0,
            why: format!("no `{key}`"),
        })
    };
    let write = |file: &str, text: String| -> Result<(), ExportError> {
        let path = out.join(file);
        std::fs::write(&path, text).map_err(io(&path))
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    write("manifest.json", part("manifest")?.to_string())?;
    write("jwks.json", part("jwks")?.to_string())?;
    for (key, file) in [
        ("records", "records.jsonl"),
        ("checkpoints", "checkpoints.jsonl"),
    ] {
        let items = part(key)?.as_array().ok_or(ExportError::Format {
            file: "bundle",
            line: 0,
            why: format!("`{key}` is not a list"),
        })?;
        let text: String = items.iter().map(|v| format!("{v}\n")).collect();
        write(file, text)?;
    }
    Ok(())
}
