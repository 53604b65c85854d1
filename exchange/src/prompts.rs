//! The prompt library (DESIGN.md §5: "system prompts live in a prompt
//! library loaded by language and key, never in code").
//!
//! A directory holds one sub-directory per language (`en`, `zh`, ...) and
//! in it one Markdown file per key (`en/recommender.md`); the file's text
//! is the prompt. Everything is read once at start. English is the
//! fallback: a key missing for the asked language answers the English
//! text and says so ([`Prompt::fell_back`]), so the caller can log it;
//! a key missing in English is a load-time error of whoever requires it
//! ([`PromptLibrary::require`]), not a surprise at the first request.
//!
//! Placeholders are `{name}`, filled by [`Prompt::fill`]; a prompt names
//! only what its agent passes.

use std::collections::BTreeMap;
use std::path::Path;

/// The language every key must exist in.
pub const FALLBACK: &str = "en";

/// Every prompt, by language then key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptLibrary {
    by_lang: BTreeMap<String, BTreeMap<String, String>>,
}

/// One prompt as selected for a language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prompt<'a> {
    /// The text.
    pub text: &'a str,
    /// The language it is in.
    pub lang: &'a str,
    /// Whether the asked language lacked the key (the text is English).
    pub fell_back: bool,
}

impl Prompt<'_> {
    /// The text with each `{name}` replaced by its value.
    pub fn fill(&self, values: &[(&str, &str)]) -> String {
        let mut out = self.text.to_string();
        for (name, value) in values {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }
}

/// Why the library could not be loaded or lacks a key.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// The directory (or a file in it) could not be read.
    #[error("{path}: cannot read the prompt library: {source}")]
    Read {
        /// What could not be read.
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A required key is not in English.
    #[error("{dir}: prompt {key:?} is missing in {FALLBACK} (expected {dir}/{FALLBACK}/{key}.md)")]
    Missing {
        /// The library's directory.
        dir: String,
        /// The key.
        key: String,
    },
}

impl PromptLibrary {
    /// Reads every `<lang>/<key>.md` under `dir`.
    pub fn load(dir: &Path) -> Result<Self, PromptError> {
        let read_err = |path: &Path, source| PromptError::Read {
            path: path.display().to_string(),
            source,
        };
        let mut by_lang = BTreeMap::new();
        for lang in std::fs::read_dir(dir).map_err(|e| read_err(dir, e))? {
            let lang = lang.map_err(|e| read_err(dir, e))?;
            if !lang.path().is_dir() {
                continue;
            }
            let name = lang.file_name().to_string_lossy().to_string();
            let mut keys = BTreeMap::new();
            for file in std::fs::read_dir(lang.path()).map_err(|e| read_err(&lang.path(), e))? {
                let path = file.map_err(|e| read_err(&lang.path(), e))?.path();
                if path.extension().and_then(|e| e.to_str()) != Some("md") {
                    continue;
                }
                let Some(key) = path.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                let text = std::fs::read_to_string(&path).map_err(|e| read_err(&path, e))?;
                keys.insert(key.to_string(), text.trim_end().to_string());
            }
            by_lang.insert(name, keys);
        }
        Ok(Self { by_lang })
    }

    /// Built from texts: `(lang, key, text)`.
    #[cfg(test)]
    fn from_texts<'a>(texts: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> Self {
        let mut by_lang: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (lang, key, text) in texts {
            by_lang
                .entry(lang.into())
                .or_default()
                .insert(key.into(), text.into());
        }
        Self { by_lang }
    }

    /// Fails naming the first of `keys` that English lacks.
    pub fn require(&self, dir: &str, keys: &[&str]) -> Result<(), PromptError> {
        let en = self.by_lang.get(FALLBACK);
        for key in keys {
            if !en.is_some_and(|k| k.contains_key(*key)) {
                return Err(PromptError::Missing {
                    dir: dir.into(),
                    key: (*key).into(),
                });
            }
        }
        Ok(())
    }

    /// The prompt `key` in `lang` (a tag like `zh-CN` is looked up as
    /// `zh`), else in English; `None` if English lacks it too.
    pub fn get(&self, lang: &str, key: &str) -> Option<Prompt<'_>> {
        let primary = primary_subtag(lang);
        if let Some((l, text)) = self
            .by_lang
            .get_key_value(primary.as_str())
            .and_then(|(l, keys)| keys.get(key).map(|t| (l, t)))
        {
            return Some(Prompt {
                text,
                lang: l,
                fell_back: false,
            });
        }
        let (l, keys) = self.by_lang.get_key_value(FALLBACK)?;
        keys.get(key).map(|text| Prompt {
            text,
            lang: l,
            fell_back: true,
        })
    }
}

/// `zh-CN` → `zh`, lower case; anything odd → English.
pub fn primary_subtag(tag: &str) -> String {
    let p = tag
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if p.is_empty() || p.len() > 8 || !p.bytes().all(|b| b.is_ascii_lowercase()) {
        FALLBACK.to_string()
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_missing_in_a_language_falls_back_to_english_and_says_so() {
        let lib = PromptLibrary::from_texts([
            ("en", "recommender", "Rank."),
            ("en", "interpreter", "Say."),
            ("zh", "recommender", "排序。"),
        ]);
        let p = lib.get("zh-CN", "recommender").unwrap();
        assert_eq!((p.text, p.lang, p.fell_back), ("排序。", "zh", false));
        let p = lib.get("zh", "interpreter").unwrap();
        assert_eq!((p.text, p.lang, p.fell_back), ("Say.", "en", true));
        assert!(lib.get("en", "narrator").is_none());
        assert_eq!(primary_subtag("*"), "en");
    }

    #[test]
    fn require_names_the_missing_key() {
        let lib = PromptLibrary::from_texts([("en", "a", "x"), ("zh", "b", "y")]);
        let e = lib.require("config/prompts", &["a", "b"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "config/prompts: prompt \"b\" is missing in en (expected config/prompts/en/b.md)"
        );
    }

    #[test]
    fn fill_replaces_placeholders() {
        let lib = PromptLibrary::from_texts([("en", "c", "Fix this: {error}.")]);
        assert_eq!(
            lib.get("en", "c").unwrap().fill(&[("error", "no JSON")]),
            "Fix this: no JSON."
        );
    }
}
