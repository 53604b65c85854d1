//! Checkpoints anchored outside the store: a file the signer appends
//! every checkpoint it signs to, so a chain cut short inside the store —
//! its last rows, its head and the checkpoints after them deleted together
//! — can be told from the chain it was.
//!
//! Inside the store such a cut leaves nothing to see: what remains is a
//! shorter chain whose head, links and checkpoints all agree. Only a copy
//! of a later checkpoint held elsewhere proves that the chain once reached
//! further. The anchor is that copy: one JSON line per checkpoint (the
//! [`Checkpoint`] as exported, `count` included), appended, flushed and
//! synced to disk before the next. Keep it where the store's owner cannot
//! rewrite it (another disk, another machine, an append-only mount).
//!
//! [`read`] takes the file back. A last line without its newline is a
//! write the signer did not finish (a crash while appending): it is left
//! out and said so, since the signer had not yet relied on it. Any other
//! line that is not a checkpoint is an error naming its line.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::checkpoint::Checkpoint;

/// Why the anchor could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    /// Opening, appending or syncing failed.
    #[error("the trail anchor {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line is not a checkpoint.
    #[error("the trail anchor {path}, line {line}: not a checkpoint: {why}")]
    Line {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

/// The file a signer appends its checkpoints to.
#[derive(Debug)]
pub struct AnchorFile {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl AnchorFile {
    /// Opens `path` for appending (created if missing): a signer that
    /// cannot write its anchor should not start.
    pub fn open(path: &Path) -> Result<Self, AnchorError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| AnchorError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `checkpoint` as one line, and waits until it is on disk.
    /// Blocking I/O: call it off the async workers.
    pub fn append(&self, checkpoint: &Checkpoint) -> Result<(), AnchorError> {
        let io = |source| AnchorError::Io {
            path: self.path.clone(),
            source,
        };
        let mut line = serde_json::to_string(checkpoint).map_err(|e| AnchorError::Line {
            path: self.path.clone(),
            line: 0,
            why: e.to_string(),
        })?;
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(line.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        file.sync_data().map_err(io)
    }
}

/// An anchor file as read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anchored {
    /// Every checkpoint it holds, in file order.
    pub checkpoints: Vec<Checkpoint>,
    /// Whether its last line was an unfinished write (left out).
    pub torn_tail: bool,
}

impl Anchored {
    /// `system`'s checkpoints, in seq order (one per seq).
    pub fn of(&self, system: &str) -> Vec<Checkpoint> {
        let mut mine: Vec<Checkpoint> = self
            .checkpoints
            .iter()
            .filter(|c| c.system == system)
            .cloned()
            .collect();
        mine.sort_by_key(|c| c.seq);
        mine.dedup();
        mine
    }

    /// The chains it names, sorted.
    pub fn systems(&self) -> Vec<String> {
        let mut out: Vec<String> = self.checkpoints.iter().map(|c| c.system.clone()).collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Reads the anchor at `path` (module doc).
pub fn read(path: &Path) -> Result<Anchored, AnchorError> {
    let text = std::fs::read_to_string(path).map_err(|source| AnchorError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = Anchored::default();
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Checkpoint>(line) {
            Ok(c) => out.checkpoints.push(c),
            Err(_) if i + 1 == lines.len() && !raw.ends_with('\n') => out.torn_tail = true,
            Err(e) => {
                return Err(AnchorError::Line {
                    path: path.to_path_buf(),
                    line: i + 1,
                    why: e.to_string(),
                })
            }
        }
    }
    Ok(out)
}
