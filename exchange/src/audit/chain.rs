//! The hash chain: what a trail record's hash covers, and how records are
//! appended so that each links to the one before it.
//!
//! **What is hashed.** A record's *content* is the JSON object of exactly
//! these twelve members, as the store holds them:
//! `system, role, at, caller, provider, capability, request_id, trace_id,
//! outcome, reason, duration_ms, detail` — strings, `reason` a string or
//! `null`, `duration_ms` an integer. Its *digest* is SHA-256 of that
//! object's RFC 8785 (JCS) form. Its *hash* (its link) is
//! `SHA-256(prev_hash ‖ digest)`, over the 32 raw bytes of each, where
//! `prev_hash` is the hash of the record before it in the same chain, or 32
//! zero bytes ([`GENESIS`]) for a chain's first record. `seq` is not
//! hashed (the store numbers a row once it is inserted): the links order
//! the chain, and the verifier (`audit::verify`, above this module)
//! checks that seq order is link order.
//! Both hashes are stored as 64 lowercase hex digits. The digest is
//! computable on its own, so an export can show a record's digest and
//! link without its content (the export, `audit::export`).
//!
//! **One chain per `system`** of the table: the hub's replicas share one
//! table and one chain; a peer's file holds its own.
//!
//! **The store moves the head.** Each chain's last link, its seq and its
//! count live in `audit_chain_head`, and the store keeps them: a trigger
//! refuses a chained row whose `prev_hash` is not its chain's head at that
//! moment (with [`HEAD_MOVED`]) and makes every row it admits the new head
//! (migrations `6_audit_chain_link.sql` on SQLite, `5_…` on PostgreSQL).
//! So no append can fork a chain, whoever makes it, and an appender need
//! not write the head itself.
//!
//! **Two ways to append.** The writer task's group commits, the inbox's
//! decision transactions and other replicas append to one chain
//! concurrently.
//! - *Knowing the head* ([`append_known`]): the trail's writer remembers
//!   the link its last commit left and inserts its batch linked from it,
//!   one statement with no transaction around it (the statement is
//!   atomic): one round trip to the store for a whole batch. If anyone
//!   else appended since, the store refuses the whole statement and
//!   nothing is written; the writer then takes the head.
//! - *Taking the head* ([`append_on`]): inside the caller's transaction,
//!   the chain's row is first taken with an upsert that returns the last
//!   link (on SQLite the first write of a transaction takes the database's
//!   write lock; on PostgreSQL `ON CONFLICT DO UPDATE` takes the row's
//!   lock until commit), then the records are hashed and inserted in
//!   order. Nobody else can append to that chain between the lock and the
//!   commit, so the store numbers its rows (`seq`) in chain order.
//!
//! Either way one group commit stays one commit, whatever its number of
//! records.
//!
//! **The head counts.** Besides its last link and seq, the head holds how
//! many records its chain has (`count`, one more for each row the store
//! admits, moved with the link), so a checkpoint can sign it: a chain cut short and its head
//! moved back to the new end is then shorter than a checkpoint kept
//! elsewhere says.

use std::fmt;
use std::sync::LazyLock;

use serde::Serialize;
use sha2::{Digest as _, Sha256};
use sqlx::{AnyConnection, Row};

use super::{AuditRecord, ROWS_PER_STATEMENT};

/// A SHA-256 value of the chain: a record's digest or its link.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChainHash(pub [u8; 32]);

/// The link before a chain's first record: 32 zero bytes.
pub const GENESIS: ChainHash = ChainHash([0; 32]);

impl ChainHash {
    /// Its 64 lowercase hex digits, as stored and exported.
    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(64);
        for b in self.0 {
            out.push(char::from(DIGITS[usize::from(b >> 4)]));
            out.push(char::from(DIGITS[usize::from(b & 15)]));
        }
        out
    }

    /// Reads 64 hex digits (either case); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Self(out))
    }
}

impl fmt::Display for ChainHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for ChainHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChainHash({})", self.hex())
    }
}

/// A record's hashed content: the fixed member set of the module doc, as
/// the store holds each value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Content<'a> {
    pub system: &'a str,
    pub role: &'a str,
    pub at: &'a str,
    pub caller: &'a str,
    pub provider: &'a str,
    pub capability: &'a str,
    pub request_id: &'a str,
    pub trace_id: &'a str,
    pub outcome: &'a str,
    pub reason: Option<&'a str>,
    pub duration_ms: i64,
    pub detail: &'a str,
}

/// Why a digest could not be made.
#[derive(Debug, thiserror::Error)]
#[error("a trail record has no canonical form: {0}")]
pub struct CanonicalError(pub(crate) String);

impl<'a> Content<'a> {
    /// The content of a record about to be written (`duration_ms` as the
    /// store keeps it: clamped to `i64`).
    pub fn of(record: &'a AuditRecord) -> Self {
        Self {
            system: &record.system,
            role: record.role.as_str(),
            at: &record.at,
            caller: &record.caller,
            provider: &record.provider,
            capability: &record.capability,
            request_id: &record.request_id,
            trace_id: &record.trace_id,
            outcome: record.outcome.as_str(),
            reason: record.reason.map(|r| r.as_str()),
            duration_ms: i64::try_from(record.duration_ms).unwrap_or(i64::MAX),
            detail: &record.detail,
        }
    }

    /// The content of a record as an export writes it (the members of
    /// [`AuditRecord`]'s JSON); `None` when a member is missing or of
    /// another type: such a record cannot be the one that was hashed.
    pub fn from_json(record: &'a serde_json::Value) -> Option<Self> {
        let text = |name: &str| record.get(name).and_then(serde_json::Value::as_str);
        let reason = match record.get("reason") {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(v.as_str()?),
        };
        Some(Self {
            system: text("system")?,
            role: text("role")?,
            at: text("at")?,
            caller: text("caller")?,
            provider: text("provider")?,
            capability: text("capability")?,
            request_id: text("request_id")?,
            trace_id: text("trace_id")?,
            outcome: text("outcome")?,
            reason,
            duration_ms: record.get("duration_ms")?.as_i64()?,
            detail: text("detail")?,
        })
    }

    /// SHA-256 of the content's JCS form.
    pub fn digest(&self) -> Result<ChainHash, CanonicalError> {
        let canonical = match self.jcs() {
            Some(written) => written,
            None => {
                serde_json_canonicalizer::to_vec(self).map_err(|e| CanonicalError(e.to_string()))?
            }
        };
        Ok(ChainHash(Sha256::digest(&canonical).into()))
    }

    /// The content's JCS form written member by member, in the order JCS
    /// sorts them, on every commit's path: a general canonicalizer builds
    /// and sorts a map of the members first, about 50,000 instructions a
    /// record. The bytes are the same: the members are strings, one
    /// optional string and one integer; JSON strings escape exactly as
    /// JCS's (`"`, `\`, the controls, `\b \t \n \f \r` short, the
    /// others `\u00xx`, nothing else), and an integer of at most 2^53 is
    /// its digits in both. A larger duration (a clamped one) is written
    /// by the canonicalizer: `None`.
    fn jcs(&self) -> Option<Vec<u8>> {
        const EXACT: i64 = 1 << 53;
        if !(-EXACT..=EXACT).contains(&self.duration_ms) {
            return None;
        }
        let strings = [
            self.at,
            self.caller,
            self.capability,
            self.detail,
            self.outcome,
            self.provider,
            self.request_id,
            self.role,
            self.system,
            self.trace_id,
        ];
        let mut out = Vec::with_capacity(192 + strings.iter().map(|s| s.len() + 2).sum::<usize>());
        let text = |out: &mut Vec<u8>, key: &str, value: &str| {
            out.extend_from_slice(key.as_bytes());
            // Writing into a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut *out, value);
        };
        text(&mut out, "{\"at\":", self.at);
        text(&mut out, ",\"caller\":", self.caller);
        text(&mut out, ",\"capability\":", self.capability);
        text(&mut out, ",\"detail\":", self.detail);
        out.extend_from_slice(b",\"duration_ms\":");
        out.extend_from_slice(self.duration_ms.to_string().as_bytes());
        text(&mut out, ",\"outcome\":", self.outcome);
        text(&mut out, ",\"provider\":", self.provider);
        match self.reason {
            Some(reason) => text(&mut out, ",\"reason\":", reason),
            None => out.extend_from_slice(b",\"reason\":null"),
        }
        text(&mut out, ",\"request_id\":", self.request_id);
        text(&mut out, ",\"role\":", self.role);
        text(&mut out, ",\"system\":", self.system);
        text(&mut out, ",\"trace_id\":", self.trace_id);
        out.push(b'}');
        Some(out)
    }
}

/// A record's link: `SHA-256(prev ‖ digest)`.
pub fn link(prev: &ChainHash, digest: &ChainHash) -> ChainHash {
    let mut h = Sha256::new();
    h.update(prev.0);
    h.update(digest.0);
    ChainHash(h.finalize().into())
}

/// Takes `system`'s chain head (creating it at [`GENESIS`]) for the rest
/// of the caller's transaction and returns its last link.
async fn lock_head(conn: &mut AnyConnection, system: &str) -> Result<ChainHash, sqlx::Error> {
    let row = sqlx::query(
        "INSERT INTO audit_chain_head (system, hash, seq) VALUES ($1, $2, 0)
         ON CONFLICT (system) DO UPDATE SET seq = audit_chain_head.seq
         RETURNING hash",
    )
    .bind(system)
    .bind(GENESIS.hex())
    .fetch_one(&mut *conn)
    .await?;
    let hash: String = row.try_get(0)?;
    ChainHash::parse(&hash).ok_or_else(|| {
        sqlx::Error::Decode(
            format!("audit_chain_head of `{system}` holds an unreadable hash").into(),
        )
    })
}

/// One record to append, with the receipt kept in its row, if any.
pub(crate) type Appended<'a> = (&'a AuditRecord, Option<&'a super::Stamp>);

/// The `INSERT` of `rows` chained records (1 to [`ROWS_PER_STATEMENT`]),
/// built once: 16 bound values a row.
fn insert_sql(rows: usize) -> &'static str {
    static SQL: LazyLock<Vec<String>> = LazyLock::new(|| {
        (1..=ROWS_PER_STATEMENT)
            .map(|n| {
                format!(
                    "INSERT INTO audit_trail (system, role, at, caller, provider, capability,
                        request_id, trace_id, outcome, reason, duration_ms, detail, prev_hash,
                        hash, receipt_id, receipt) VALUES {}",
                    crate::db::value_rows(n, 16)
                )
            })
            .collect()
    });
    &SQL[rows.clamp(1, ROWS_PER_STATEMENT) - 1]
}

/// What both engines' triggers refuse a chained row with when its
/// `prev_hash` is not its chain's head (the migrations' text).
pub const HEAD_MOVED: &str = "audit chain head moved";

/// Whether the store refused an append because its chain's head was not
/// the link the appender believed ([`HEAD_MOVED`]).
pub(crate) fn head_moved(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .is_some_and(|d| d.message().contains(HEAD_MOVED))
}

/// Inserts `mine` (records of one chain, in order) linked from `prev`, in
/// statements of [`ROWS_PER_STATEMENT`] rows; the last link.
async fn insert_linked(
    conn: &mut AnyConnection,
    mine: &[Appended<'_>],
    mut prev: ChainHash,
) -> Result<ChainHash, sqlx::Error> {
    for chunk in mine.chunks(ROWS_PER_STATEMENT) {
        let mut links = Vec::with_capacity(chunk.len());
        for (r, receipt) in chunk {
            let digest = match receipt {
                Some(stamp) => stamp.record,
                None => Content::of(r)
                    .digest()
                    .map_err(|e| sqlx::Error::Encode(Box::new(e)))?,
            };
            let hash = link(&prev, &digest);
            links.push((prev.hex(), hash.hex()));
            prev = hash;
        }
        let mut query = sqlx::query(insert_sql(chunk.len()));
        for ((r, receipt), (prev_hex, hash_hex)) in chunk.iter().zip(links) {
            query = query
                .bind(&r.system)
                .bind(r.role.as_str())
                .bind(&r.at)
                .bind(&r.caller)
                .bind(&r.provider)
                .bind(&r.capability)
                .bind(&r.request_id)
                .bind(&r.trace_id)
                .bind(r.outcome.as_str())
                .bind(r.reason.map(|r| r.as_str()))
                .bind(i64::try_from(r.duration_ms).unwrap_or(i64::MAX))
                .bind(&r.detail)
                .bind(prev_hex)
                .bind(hash_hex)
                .bind(receipt.map(|s| s.id.as_str()))
                .bind(receipt.map(|s| s.jws.as_str()));
        }
        query.execute(&mut *conn).await?;
    }
    Ok(prev)
}

/// Appends `records` to their chains inside the transaction open on
/// `conn` (the caller commits): each system's head taken once (in name
/// order, so two transactions never wait on each other's heads), the
/// records hashed and inserted in the order given (the store moves each
/// head). Returns each system's last link.
pub(crate) async fn append_on<'r>(
    conn: &mut AnyConnection,
    records: &[Appended<'r>],
) -> Result<Vec<(&'r str, ChainHash)>, sqlx::Error> {
    let mut systems: Vec<&'r str> = records.iter().map(|(r, _)| r.system.as_str()).collect();
    systems.sort_unstable();
    systems.dedup();
    let mut tips = Vec::with_capacity(systems.len());
    for system in systems {
        let prev = lock_head(conn, system).await?;
        let mine: Vec<Appended<'r>> = records
            .iter()
            .copied()
            .filter(|(r, _)| r.system == system)
            .collect();
        tips.push((system, insert_linked(conn, &mine, prev).await?));
    }
    Ok(tips)
}

/// Appends `records`, all of one chain, linked from `known`, the link the
/// caller believes is that chain's head, outside any transaction of the
/// caller's: one statement for up to [`ROWS_PER_STATEMENT`] records, a
/// transaction of its own for more. Returns the new last link. If the
/// head is not `known` the store refuses it and nothing is written
/// ([`head_moved`] tells that error): take the head ([`append_on`]).
pub(crate) async fn append_known(
    conn: &mut AnyConnection,
    records: &[Appended<'_>],
    known: ChainHash,
) -> Result<ChainHash, sqlx::Error> {
    if records.len() <= ROWS_PER_STATEMENT {
        return insert_linked(conn, records, known).await;
    }
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let last = insert_linked(&mut tx, records, known).await?;
    tx.commit().await?;
    Ok(last)
}

/// A chain's head as the store holds it: its last link, that record's
/// seq, and how many records the chain holds (0, 0 and [`GENESIS`] before
/// its first record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub seq: i64,
    pub hash: ChainHash,
    pub count: i64,
}

/// The head of `system`'s chain, if it has one.
pub async fn head(
    store: &crate::db::Store,
    system: &str,
) -> Result<Option<Head>, super::AuditError> {
    let row = sqlx::query("SELECT seq, hash, count FROM audit_chain_head WHERE system = $1")
        .bind(system)
        .fetch_optional(store.pool())
        .await?;
    let Some(row) = row else { return Ok(None) };
    let hash: String = row.try_get("hash")?;
    Ok(Some(Head {
        seq: row.try_get("seq")?,
        count: row.try_get("count")?,
        hash: ChainHash::parse(&hash).ok_or_else(|| {
            super::AuditError::Corrupt(format!("the chain head of `{system}`: hash {hash:?}"))
        })?,
    }))
}
