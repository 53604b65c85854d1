//! Reading a peer file: serde first (the shape, [`super::model`]), then
//! the semantic checks (`super::validate`), every problem located as
//! `file:line:column: field` with the shared locator
//! (`exchange::located`), the way the hub loads its topology file. A YAML
//! or shape error is then the only one: the meaning of a file that does
//! not parse is not checked. A relative CSV, prompts, `tls` or `hub_tls`
//! path is resolved against the file's directory, and the `tls` and
//! `hub_tls` files must exist.

use super::model::{DatasetConfig, PeerConfig};
use exchange::located::{parse_yaml, Issue, Locator, Seg};
use std::path::Path;

/// A config file that cannot be used; the message names the file, and for
/// a file that was read, every problem with its line, column and field. A
/// YAML or shape error (a syntax error, an unknown, missing or mistyped
/// field) is then the only one: the meaning of a file that does not parse
/// is not checked.
pub type ConfigError = exchange::located::FileError;

impl PeerConfig {
    /// Reads and validates the file at `path`. A relative CSV, prompts,
    /// `tls` or `hub_tls` path is resolved against the file's directory so
    /// the config works from any working directory; a `tls` or `hub_tls`
    /// file that is missing is a located problem like any other.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = ConfigError::read(path, "peer config")?;
        let mut config = Self::parse(&text, &path.display().to_string())?;
        if let DatasetConfig::Csv { path: csv, .. } = &mut config.dataset {
            if csv.is_relative() {
                if let Some(dir) = path.parent() {
                    *csv = dir.join(&*csv);
                }
            }
        }
        if let Some(model) = &mut config.model {
            if model.prompts.is_relative() {
                if let Some(dir) = path.parent() {
                    model.prompts = dir.join(&model.prompts);
                }
            }
        }
        let mut files = Vec::new();
        if let Some(tls) = &mut config.tls {
            files.extend([
                Some(&mut tls.cert),
                Some(&mut tls.key),
                tls.client_ca.as_mut(),
            ]);
        }
        if let Some(tls) = &mut config.hub_tls {
            files.extend([tls.ca.as_mut(), tls.cert.as_mut(), tls.key.as_mut()]);
        }
        for file in files.into_iter().flatten() {
            if file.is_relative() {
                if let Some(dir) = path.parent() {
                    *file = dir.join(&*file);
                }
            }
        }
        let issues = config.check_files(&text);
        if !issues.is_empty() {
            return Err(ConfigError::Invalid {
                file: path.display().to_string(),
                issues,
            });
        }
        Ok(config)
    }

    /// Parses and validates YAML text; `file` only labels the errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        let invalid = |issues| ConfigError::Invalid {
            file: file.to_string(),
            issues,
        };
        let config: PeerConfig = parse_yaml(text)
            .map_err(|issue| invalid(vec![relocate(issue, &Locator::new(text))]))?;
        let issues = config.validate(text);
        if issues.is_empty() {
            Ok(config)
        } else {
            Err(invalid(issues))
        }
    }
}

/// serde locates an error inside the tagged `dataset` mapping at the start
/// of the document (the mapping is buffered until its `kind` is known), so
/// an issue placed before its own field's line is moved to that line.
fn relocate(issue: Issue, loc: &Locator) -> Issue {
    let (line, column) = loc.position(&field_path(&issue.field));
    if (issue.line, issue.column) < (line, column) {
        Issue {
            line,
            column,
            ..issue
        }
    } else {
        issue
    }
}

/// The segments of a rendered field path (`skills[0].negotiable_columns[1]`);
/// the peer's keys contain no `.` or `[`.
fn field_path(field: &str) -> Vec<Seg<'_>> {
    let mut path = Vec::new();
    for part in field.split('.') {
        let mut pieces = part.split('[');
        if let Some(key) = pieces.next().filter(|k| !k.is_empty()) {
            path.push(Seg::key(key));
        }
        for index in pieces {
            match index.trim_end_matches(']').parse() {
                Ok(i) => path.push(Seg::Index(i)),
                Err(_) => return path,
            }
        }
    }
    path
}
