//! The agent config YAML (`agents::config::load_str`): which of the hub's
//! agents are on, their model tiers and bounds.
//!
//! Properties beyond "no panic": those of a located refusal
//! ([`super::topology::check_file_error`]: at least one issue, each with a
//! line, a column and a message, every one shown as
//! `file:line:column: field: message`).

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

use crate::gen;
use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "agents_config",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &["config/agents.yaml", "config/agents.standin.yaml"],
};

/// The file name every message must name.
const FILE: &str = "fuzz/agents.yaml";

const DICTIONARY: &[&str] = &[
    "\n",
    ": ",
    "  ",
    "[]",
    "{}",
    "null",
    "~",
    "'",
    "\"",
    "#",
    "version: 1\n",
    "prompts: ",
    "tiers:",
    "agents:",
    "orchestrator:",
    "recommender:",
    "interpreter:",
    "narrator:",
    "negotiator:",
    "enabled: true",
    "tier: local",
    "temperature: ",
    "max_steps: ",
    "max_tokens: ",
    "deadline_ms: ",
    "- id: local",
    "base_url: ",
    "model: ",
    "api_key_env: ",
    "NaN",
    ".inf",
    "-1",
    "4294967296",
    "1e400",
];

/// The file's top-level keys.
const SECTIONS: &[&str] = &["version", "prompts", "tiers", "agents"];

const KEYS: &[&str] = &[
    "version",
    "prompts",
    "tiers",
    "agents",
    "orchestrator",
    "recommender",
    "interpreter",
    "narrator",
    "negotiator",
    "enabled",
    "tier",
    "model",
    "temperature",
    "max_steps",
    "max_tokens",
    "deadline_ms",
    "id",
    "base_url",
    "api_key_env",
    "reasoning_effort",
];

const WORDS: &[&str] = &[
    "prompts",
    "local",
    "http://127.0.0.1:8080/v1",
    "qwen2.5-1.5b-instruct",
    "WS_MODEL_KEY",
    "none",
    "low",
];

fn run(input: &[u8]) -> Result<Class, Broken> {
    let text = match super::text(input) {
        Ok(text) => text,
        Err(class) => return Ok(class),
    };
    match hub::agents::config::load_str(FILE, text) {
        Ok(_) => Ok("ok".into()),
        Err(e) => super::topology::check_file_error(FILE, SECTIONS, &e),
    }
}

/// Seeds with nodes replaced, and config-shaped YAML.
fn generate(seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        3 => gen::seed_variants(seeds, gen::parse_yaml, KEYS, WORDS).prop_map(|v| gen::to_yaml(&v)),
        1 => gen::yaml_bytes(KEYS, WORDS, 3),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_reach_past_validation() {
        for seed in [
            "corpus/agents_config/default.yaml",
            "corpus/agents_config/with-tier.yaml",
        ] {
            let text = std::fs::read(crate::crate_dir().join(seed)).expect("seed");
            assert_eq!(run(&text), Ok("ok".to_string()), "{seed}");
        }
    }
}
