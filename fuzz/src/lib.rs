//! Fuzzing of every parser that reads outside input (DESIGN.md
//! reliability: a parser of outside input never panics, and refuses bad
//! input with an error naming what was wrong).
//!
//! cargo fuzz needs a nightly toolchain (`-Z` flags) and this project
//! builds on stable only, so the targets here are driven by proptest: each
//! [`Target`] is a pure function over bytes, run first on every file of its
//! committed corpus (`fuzz/corpus/<target>/`), then for a time budget
//! on generated inputs — corpus seeds mutated byte- and line-wise
//! ([`mutate`]) and structure-aware inputs drawn from the target's own
//! strategy ([`gen`]: JSON values, YAML documents, header lines). Every
//! input runs under `catch_unwind`; a panic, or a property the parser
//! promises that does not hold, is a crash: the input is written to
//! `fuzz/crashes/<target>/<hex-hash>` (one file per distinct
//! reason; the directory is git-ignored) and the run fails naming it.
//!
//! The corpus is what `--save` found interesting: an input whose outcome
//! class (`ok`, or the kind of refusal) no earlier input had, kept when it
//! is plain text of at most [`MAX_SAVED_BYTES`], up to
//! [`MAX_CORPUS_FILES`] files a target; next to the hand-written seeds
//! taken from the real formats. A crash, once fixed, is committed there
//! as a regression seed.
//!
//! # Layout
//!
//! | module | what it fuzzes |
//! |---|---|
//! | [`targets::envelope`] | the envelope headers: `A2A-Version`, `traceparent`, `X-Request-Id`, `Authorization` (`exchange::envelope`) |
//! | [`targets::jsonrpc`] | the JSON-RPC request of the A2A surface and its method names (`surface::jsonrpc::parse_request`, `bridge::Method::from_name`) |
//! | [`targets::bridge`] | the v0.3 ⇄ v1.0 translation of params, results, events and cards (`hub::bridge`) |
//! | [`targets::topology`] | the topology YAML (`registry::load::load_str`), contracts compiled included |
//! | [`targets::agents_config`] | the agent config YAML (`agents::config::load_str`) |
//! | [`targets::contract_path`] | the contract field paths (`contract::path::{parse, locate}`) |
//! | [`targets::forwarded`] | what replicas read from outside: `X-Forwarded-For` behind a trusted balancer (`listen::TrustedProxies::client`), the trusted-proxy list, the store's location (`exchange::db::Location`) |
//! | [`targets::access`] | who may do what: a request's route (`app::routes::ApiRoute::matching`), the guard's decision per role and scope (`ui_auth::authorize`), the UI users file, the hub's public addresses (`machine::PublicUrls`) |
//! | [`targets::egress_address`] | the egress policy's verdict on a URL's host or any IPv6 bit pattern (`egress::Policy::check`), against an oracle of its own |
//! | [`targets::mcp_args`] | the MCP tool arguments: the peer's data plane (`peer::skills::query::{referenced_columns, TableQuery::parse}`) and the hub's input contract (`contract::Contract::check_input`) |
//!
//! The harness: [`Target`] (what one target is), [`run`] (corpus, then the
//! budget), [`Report`] (what a run found); `src/bin/fuzz.rs` prints the
//! table and grows the corpus (`--save`), `tests/fuzz.rs` is the bounded
//! CI run (`WS_FUZZ_SECONDS`, default 5 per target).

pub mod gen;
pub mod mutate;
pub mod targets;

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{Duration, Instant};

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// What one input did, when nothing broke: its outcome class (`ok`, or the
/// kind of refusal). Classes tell inputs apart for `--save`: an input whose
/// class no corpus file has is worth keeping.
pub type Class = String;

/// A broken property: what the parser promised and did not do.
pub type Broken = String;

/// One fuzz target.
pub struct Target {
    /// Its name: the corpus and crash directory, the CLI argument.
    pub name: &'static str,
    /// Runs the parser on one input: its class, or the broken property.
    pub run: fn(&[u8]) -> Result<Class, Broken>,
    /// Structure-aware inputs, given the seeds (corpus and repository
    /// files) to vary.
    pub generate: fn(&[Vec<u8>]) -> BoxedStrategy<Vec<u8>>,
    /// Tokens worth inserting while mutating (field names, enum values).
    pub dictionary: &'static [&'static str],
    /// Real files of the repository used as seeds too, relative to the
    /// workspace root (not copied into the corpus: they may be large).
    pub repo_seeds: &'static [&'static str],
}

/// What a run of one target found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target's name.
    pub target: &'static str,
    /// Committed corpus files run.
    pub corpus_files: usize,
    /// Inputs run, corpus included.
    pub executions: u64,
    /// Distinct outcome classes seen.
    pub outcomes: BTreeSet<Class>,
    /// Each distinct crash (by its reason): the file the first input
    /// that caused it was written to, and why.
    pub crashes: Vec<(PathBuf, String)>,
    /// Inputs that crashed, repeats of a known reason included.
    pub crashed_inputs: u64,
    /// Inputs added to the corpus (`--save`).
    pub saved: usize,
    /// Wall time.
    pub seconds: f64,
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Time for generated inputs, after the corpus.
    pub budget: Duration,
    /// Write inputs of a new outcome class into the corpus.
    pub save: bool,
    /// The fuzz crate's directory (`corpus/` and `crashes/` are under it).
    pub root: PathBuf,
}

/// Most files `--save` lets a target's corpus grow to.
pub const MAX_CORPUS_FILES: usize = 30;
/// Largest input `--save` keeps.
pub const MAX_SAVED_BYTES: usize = 4096;
/// Largest generated input (a mutated seed is cut back to this).
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

impl Options {
    /// `budget`, no saving, this crate's directory.
    pub fn new(budget: Duration) -> Self {
        Self {
            budget,
            save: false,
            root: crate_dir(),
        }
    }
}

/// `fuzz`, where this crate's sources are.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace root (`repo_seeds` are relative to it).
pub fn workspace_dir() -> PathBuf {
    crate_dir().join("..")
}

/// A target by name.
pub fn target(name: &str) -> Option<&'static Target> {
    targets::ALL.iter().copied().find(|t| t.name == name)
}

/// Runs `target`: every corpus file, then generated inputs until the
/// budget is spent.
pub fn run(target: &Target, options: &Options) -> Report {
    install_panic_hook();
    let started = Instant::now();
    let corpus_dir = options.root.join("corpus").join(target.name);
    let crash_dir = options.root.join("crashes").join(target.name);
    let mut corpus = read_dir_files(&corpus_dir);
    let corpus_files = corpus.len();
    let mut report = Report {
        target: target.name,
        corpus_files,
        executions: 0,
        outcomes: BTreeSet::new(),
        crashes: Vec::new(),
        crashed_inputs: 0,
        saved: 0,
        seconds: 0.0,
    };
    let exec = |input: &[u8], report: &mut Report| -> Option<Class> {
        report.executions += 1;
        match execute(target, input) {
            Ok(class) => Some(class),
            Err(why) => {
                report.crashed_inputs += 1;
                // One file per reason: a bug found once is found.
                if report.crashes.iter().all(|(_, known)| *known != why) {
                    let file = write_hashed(&crash_dir, input);
                    report.crashes.push((file, why));
                }
                None
            }
        }
    };
    // (1) The committed corpus: every file, whatever its size.
    for (_, input) in &corpus {
        if let Some(class) = exec(input, &mut report) {
            report.outcomes.insert(class);
        }
    }
    // The repository's own files seed the mutator too.
    for seed in target.repo_seeds {
        if let Ok(bytes) = std::fs::read(workspace_dir().join(seed)) {
            if let Some(class) = exec(&bytes, &mut report) {
                report.outcomes.insert(class);
            }
            corpus.push((PathBuf::from(seed), bytes));
        }
    }
    if corpus.is_empty() {
        corpus.push((PathBuf::new(), Vec::new()));
    }
    let seeds: Vec<Vec<u8>> = corpus.into_iter().map(|(_, bytes)| bytes).collect();

    // (2) Generated inputs, for the budget.
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &time_seed()),
    );
    let mutations = mutate::strategy(target.dictionary);
    let generated = (target.generate)(&seeds);
    let deadline = started + options.budget;
    let mut saved_count = corpus_files;
    let mut round: u64 = 0;
    while Instant::now() < deadline {
        round += 1;
        let input = if round.is_multiple_of(2) {
            match generated.new_tree(&mut runner) {
                Ok(tree) => tree.current(),
                Err(_) => continue,
            }
        } else {
            match mutations.new_tree(&mut runner) {
                Ok(tree) => mutate::apply(&seeds, &tree.current()),
                Err(_) => continue,
            }
        };
        if let Some(class) = exec(&input, &mut report) {
            let new = report.outcomes.insert(class);
            if new
                && options.save
                && saved_count < MAX_CORPUS_FILES
                && input.len() <= MAX_SAVED_BYTES
                && is_plain_text(&input)
            {
                write_hashed(&corpus_dir, &input);
                saved_count += 1;
                report.saved += 1;
            }
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// One input under `catch_unwind`: its class, or why it is a crash (the
/// panic's message, or the broken property).
pub fn execute(target: &Target, input: &[u8]) -> Result<Class, String> {
    IN_TARGET.with(|flag| flag.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    IN_TARGET.with(|flag| flag.set(false));
    match result {
        Ok(Ok(class)) => Ok(class),
        Ok(Err(broken)) => Err(format!("broken property: {broken}")),
        Err(_) => {
            let message = LAST_PANIC.with(|m| m.borrow_mut().take());
            Err(format!(
                "panic: {}",
                message.unwrap_or_else(|| "(no message)".into())
            ))
        }
    }
}

thread_local! {
    /// Set while a target runs on this thread: its panics are recorded,
    /// not printed.
    static IN_TARGET: Cell<bool> = const { Cell::new(false) };
    /// The last recorded panic of this thread, with its location.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic hook that records a target's panics (the input is the report)
/// and leaves every other panic to the previous hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_TARGET.with(Cell::get) {
                LAST_PANIC.with(|m| *m.borrow_mut() = Some(info.to_string()));
            } else {
                previous(info);
            }
        }));
    });
}

/// `input`'s hash as 16 hex digits: the file name of a crash or a corpus
/// entry (the same input always lands in the same file).
pub fn hex_hash(input: &[u8]) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    input.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Writes `input` into `dir` under its hash; the file's path (written or
/// not: a crash report must still name it).
fn write_hashed(dir: &Path, input: &[u8]) -> PathBuf {
    let file = dir.join(hex_hash(input));
    let _ = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&file, input));
    file
}

/// The files of `dir` (not recursive), sorted by name; none if it does not
/// exist.
fn read_dir_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| std::fs::read(&p).ok().map(|bytes| (p, bytes)))
        .collect();
    files.sort();
    files
}

/// UTF-8 without control characters other than tab and line breaks:
/// what `--save` commits (the corpus stays reviewable text; the mutator
/// makes the binary variants of it again on every run).
pub fn is_plain_text(input: &[u8]) -> bool {
    std::str::from_utf8(input).is_ok_and(|s| {
        s.chars()
            .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
    })
}

/// 32 seed bytes from the clock: every run explores other inputs; a crash
/// is reproduced from its saved file, not from the seed.
fn time_seed() -> [u8; 32] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let thread = {
        let mut h = std::hash::DefaultHasher::new();
        std::thread::current().id().hash(&mut h);
        h.finish()
    };
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(&nanos.to_le_bytes());
    seed[16..24].copy_from_slice(&thread.to_le_bytes());
    seed[24..].copy_from_slice(&std::process::id().to_le_bytes().repeat(2));
    seed
}

/// The first `n` words of `text`, for an outcome class (what kind of
/// refusal, without the values it quotes).
pub fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .map(|w| {
            w.chars()
                .filter(|c| c.is_ascii_alphabetic() || *c == '_')
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
