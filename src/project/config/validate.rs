//! The checks `Config::parse` makes after deserialising: values serde accepts but evalock
//! does not (names, ranges, globs and paths that would leave the project, dangling grader
//! references), each reported at the line that writes it.

use super::locate::{
    key_span_in_table, location_of, policy_key_location, table_line, value_location,
};
use super::policy::{default_max_output_bytes, default_timeout_secs};
use super::{
    Config, GraderConfig, GraderKind, SkillsConfig, SuiteConfig, NORMALIZERS, SAMPLES_RANGE,
};
use crate::error::{Error, Result};
use crate::rules::RuleId;
use crate::text::line_of_first;
use std::collections::BTreeSet;

impl Config {
    /// The first problem in file order of concern: version, suites, baselines, skills
    /// globs, graders, skills settings, policy. Tests pin which error wins when a config
    /// has several, so the order is part of the behaviour.
    pub(super) fn validate(&self, path: &str, text: &str) -> Result<()> {
        self.refuse_unknown_version(path, text)?;
        let mut seen = BTreeSet::new();
        for suite in &self.suites {
            refuse_bad_or_repeated_suite_name(suite, &mut seen, path, text)?;
            self.validate_suite(suite, path, text)?;
        }
        self.refuse_colliding_baselines(path, text)?;
        if let Some(skills) = &self.skills {
            for pattern in skills.roots.iter().chain(&skills.marketplaces) {
                validate_glob(path, text, "skills", pattern)?;
            }
        }
        for (id, grader) in &self.graders {
            validate_grader(id, grader, path, text)?;
        }
        if let Some(skills) = &self.skills {
            skills.validate(path, text)?;
        }
        self.validate_policy(path, text)?;
        self.validate_gate(path, text)
    }

    /// `[rules]` names real rules and lowers no integrity rule; `[debt]` adopts no
    /// integrity rule.
    fn validate_gate(&self, path: &str, text: &str) -> Result<()> {
        for (name, level) in &self.rules {
            let at = || location_of(path, text, Some(level.span()));
            let Some(rule) = RuleId::parse(name) else {
                return Err(Error::malformed(
                    at(),
                    format!("`[rules]` names no rule `{name}`: `evalock rules` lists them"),
                ));
            };
            let default = rule.rule().severity;
            if rule.is_integrity() && level.get_ref().severity() < Some(default) {
                return Err(Error::malformed(
                    at(),
                    format!(
                        "{} {} guards what evalock pins and cannot be lowered below {default}",
                        rule.id(),
                        rule.name()
                    ),
                ));
            }
        }
        for entry in &self.debt.findings {
            let at = || location_of(path, text, Some(entry.rule.span()));
            match entry.rule_id() {
                None => {
                    return Err(Error::malformed(
                        at(),
                        format!(
                            "`[debt]` names no rule `{}`: `evalock rules` lists them",
                            entry.rule.get_ref()
                        ),
                    ))
                }
                Some(rule) if rule.is_integrity() => {
                    return Err(Error::malformed(
                        at(),
                        format!(
                            "{} {} guards what evalock pins and cannot be adopted as debt",
                            rule.id(),
                            rule.name()
                        ),
                    ))
                }
                Some(_) => {}
            }
            let valid_fingerprint = |fingerprint: &str| {
                fingerprint.len() == 16
                    && fingerprint
                        .bytes()
                        .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
            };
            match (&entry.fingerprint, &entry.digest) {
                (Some(fingerprint), None) if valid_fingerprint(fingerprint) => {}
                (None, Some(_)) => {}
                (Some(fingerprint), None) => {
                    return Err(Error::malformed(
                        at(),
                        format!("`[debt]` entry {} on {}: fingerprint `{fingerprint}` is not the 16 hex digits reports print", entry.rule.get_ref(), entry.path),
                    ))
                }
                _ => {
                    return Err(Error::malformed(
                        at(),
                        format!("`[debt]` entry {} on {} needs a `fingerprint` (the finding's, as `evalock check --format json` prints it), or the `digest` of the file as earlier entries wrote it, not both", entry.rule.get_ref(), entry.path),
                    ))
                }
            }
        }
        Ok(())
    }

    fn refuse_unknown_version(&self, path: &str, text: &str) -> Result<()> {
        if self.version == 1 {
            return Ok(());
        }
        Err(Error::malformed(
            format!("{path}:{}", line_of_first(text, &["version"])),
            format!("unsupported config version {}: only 1 exists", self.version),
        ))
    }

    /// Everything about one suite but its name: its cases, normalizer, grader reference,
    /// completer, samples and the paths it reads.
    fn validate_suite(&self, suite: &SuiteConfig, path: &str, text: &str) -> Result<()> {
        let name = suite.name();
        let bad_identity = match &suite.id {
            Some(super::CaseIdRule::KeyPath(key_path))
                if key_path.is_empty() || key_path.split('.').any(str::is_empty) =>
            {
                Some(format!("suite `{name}`: `id = \"{key_path}\"` is no key path: name the field that holds each case's identity, such as \"metadata.case_id\""))
            }
            Some(super::CaseIdRule::Content { content })
                if content.is_empty() || content.iter().any(String::is_empty) =>
            {
                Some(format!("suite `{name}`: `id = {{ content = [...] }}` must name the fields whose content identifies a case, such as [\"input\"]"))
            }
            _ => None,
        };
        if let Some(message) = bad_identity {
            return Err(Error::malformed(
                location_of(path, text, Some(suite.name.span())),
                message,
            ));
        }
        if suite.cases.is_empty() {
            return Err(Error::malformed(
                location_of(path, text, Some(suite.name.span())),
                format!("suite `{name}` lists no `cases` globs"),
            ));
        }
        if !NORMALIZERS.contains(&suite.normalizer.as_str()) {
            return Err(Error::malformed(
                suite_key_location(suite, "normalizer", path, text),
                format!(
                    "suite `{name}`: unknown normalizer `{}` (use one of: {})",
                    suite.normalizer,
                    NORMALIZERS.join(", ")
                ),
            ));
        }
        if let Some(grader) = &suite.grader {
            if !self.graders.contains_key(grader)
                && !super::grader::IN_PROCESS_GRADER_IDS.contains(&grader.as_str())
            {
                return Err(Error::malformed(
                    suite_key_location(suite, "grader", path, text),
                    format!("suite `{name}` names grader `{grader}`, but there is no `[grader.{grader}]` table (the built-in graders are the default, `promptfoo`, `inspect-includes` and `inspect-exact`)"),
                ));
            }
        }
        if matches!(&suite.completer, Some(argv) if argv.is_empty()) {
            return Err(Error::malformed(
                suite_key_location(suite, "completer", path, text),
                format!("suite `{name}`: `completer` must name a program"),
            ));
        }
        refuse_samples_out_of_range(suite, path, text)?;
        if let Some(envelope) = &suite.envelope {
            for (key, value) in [("size", envelope.size), ("time", envelope.time)] {
                if value.is_some_and(|share| !(share.is_finite() && share >= 0.0)) {
                    return Err(Error::malformed(
                        suite_key_location(suite, "envelope", path, text),
                        format!("suite `{name}`: `envelope.{key}` must be a share of growth of 0 or more, such as 0.10 for 10 %"),
                    ));
                }
            }
        }
        validate_suite_paths(suite, path, text)
    }

    fn validate_policy(&self, path: &str, text: &str) -> Result<()> {
        if !(0.0..=1.0).contains(&self.policy.agreement_min) {
            return Err(Error::malformed(
                policy_key_location(path, text, "agreement_min"),
                "policy.agreement_min must be between 0.0 and 1.0",
            ));
        }
        if !(0.0..=1.0).contains(&self.policy.stretch_high) {
            return Err(Error::malformed(
                policy_key_location(path, text, "stretch_high"),
                "policy.stretch_high must be between 0.0 and 1.0",
            ));
        }
        if !(0.0..=1.0).contains(&self.policy.flaky_max) {
            return Err(Error::malformed(
                policy_key_location(path, text, "flaky_max"),
                "policy.flaky_max must be between 0.0 and 1.0",
            ));
        }
        // 0 would make every completion an EL504 error: nothing could ever pass.
        if self.policy.max_output_bytes == 0 {
            return Err(Error::malformed(
                policy_key_location(path, text, "max_output_bytes"),
                format!(
                    "policy.max_output_bytes must be at least 1 (the default is {}): with 0 every completion is too large",
                    default_max_output_bytes()
                ),
            ));
        }
        if let Some((key, location)) = self.zero_timeout(path, text) {
            return Err(Error::malformed(
                location,
                format!(
                    "{key} must be at least 1 second (the default is {}): with 0 no completer has any time",
                    default_timeout_secs()
                ),
            ));
        }
        Ok(())
    }

    /// The key and location of a timeout of 0 seconds, which gives no completer any time
    /// at all: the policy's first, else the first suite's.
    fn zero_timeout(&self, path: &str, text: &str) -> Option<(String, String)> {
        if self.policy.timeout_secs == 0 {
            return Some((
                "policy.timeout_secs".to_owned(),
                policy_key_location(path, text, "timeout_secs"),
            ));
        }
        self.suites
            .iter()
            .find(|suite| suite.timeout_secs == Some(0))
            .map(|suite| {
                (
                    format!("suite `{}`: timeout_secs", suite.name()),
                    suite_key_location(suite, "timeout_secs", path, text),
                )
            })
    }
}

/// Suite names become lock keys and file names, and two suites of one name would share
/// them.
fn refuse_bad_or_repeated_suite_name(
    suite: &SuiteConfig,
    seen: &mut BTreeSet<String>,
    path: &str,
    text: &str,
) -> Result<()> {
    let name = suite.name();
    let at = || location_of(path, text, Some(suite.name.span()));
    if !is_valid_name(name) {
        return Err(Error::malformed(
            at(),
            format!(
                "suite name `{name}` must be 1-64 characters of letters, digits, `-`, `_` or `.`"
            ),
        ));
    }
    if !seen.insert(name.to_owned()) {
        return Err(Error::malformed(
            at(),
            format!("suite `{name}` is defined twice"),
        ));
    }
    Ok(())
}

/// A key of the suite's table, for messages about its value; the suite's `name` when the
/// key is not written in the table.
fn suite_key_location(suite: &SuiteConfig, key: &str, path: &str, text: &str) -> String {
    let span =
        key_span_in_table(text, suite.name.span().start, key).unwrap_or_else(|| suite.name.span());
    location_of(path, text, Some(span))
}

fn refuse_samples_out_of_range(suite: &SuiteConfig, path: &str, text: &str) -> Result<()> {
    let Some(samples) = &suite.samples else {
        return Ok(());
    };
    if SAMPLES_RANGE.contains(samples.get_ref()) {
        return Ok(());
    }
    Err(Error::malformed(
        location_of(path, text, Some(samples.span())),
        format!(
            "suite `{}`: `samples` must be an integer from {} to {} (as a case's `n`), not {}",
            suite.name(),
            SAMPLES_RANGE.start(),
            SAMPLES_RANGE.end(),
            samples.get_ref()
        ),
    ))
}

/// The suite's case globs, prompts and baseline, which must all stay inside the project.
fn validate_suite_paths(suite: &SuiteConfig, path: &str, text: &str) -> Result<()> {
    let name = suite.name();
    for pattern in &suite.cases {
        validate_glob(path, text, &format!("suite `{name}`: case glob"), pattern)?;
    }
    for prompt in suite.prompt_paths() {
        validate_path(path, text, &format!("suite `{name}`: prompt"), &prompt)?;
    }
    if let Some(baseline) = &suite.baseline {
        validate_path(path, text, &format!("suite `{name}`: baseline"), baseline)?;
    }
    Ok(())
}

fn validate_grader(id: &str, grader: &GraderConfig, path: &str, text: &str) -> Result<()> {
    if !is_valid_name(id) {
        return Err(Error::malformed(
            format!("{path}:{}", line_of_first(text, &[id])),
            format!("grader id `{id}` must be 1-64 characters of letters, digits, `-`, `_` or `.`"),
        ));
    }
    if grader.kind == GraderKind::Command && grader.argv().is_none_or(<[String]>::is_empty) {
        let grader_line = line_of_first(
            text,
            &[&format!("[grader.{id}]"), &format!("[grader.\"{id}\"]"), id],
        );
        return Err(Error::malformed(
            format!("{path}:{grader_line}"),
            format!("grader `{id}` is a command grader but has no `command`: add `command = [\"program\", \"arg\"]`"),
        ));
    }
    for pattern in &grader.sources {
        validate_glob(path, text, &format!("grader `{id}`: source"), pattern)?;
    }
    Ok(())
}

impl SkillsConfig {
    fn validate(&self, path: &str, text: &str) -> Result<()> {
        let at_table = || format!("{path}:{}", table_line(text, "[skills]"));
        for pattern in self.roots.iter().chain(&self.vendored) {
            crate::source::compile_folder_globs(std::slice::from_ref(pattern))
                .map_err(|error| Error::malformed(at_table(), error.to_string()))?;
        }
        for marketplace in &self.marketplaces {
            crate::digest::validate_relative_path(marketplace).map_err(|error| {
                Error::malformed(at_table(), format!("skills.marketplaces: {error}"))
            })?;
        }
        for (name, pattern) in &self.risky_patterns {
            super::compile_pattern(name, pattern.get_ref()).map_err(|message| {
                Error::malformed(
                    location_of(path, text, Some(pattern.span())),
                    format!("skills.risky_patterns.{name}: {message}"),
                )
            })?;
        }
        for acknowledgement in &self.acknowledgements {
            let at = || location_of(path, text, Some(acknowledgement.rule.span()));
            let rule = crate::rules::RuleId::parse(acknowledgement.rule.get_ref());
            if !matches!(
                rule,
                Some(
                    crate::rules::RuleId::SkillExecutable | crate::rules::RuleId::SkillRiskyContent
                )
            ) {
                return Err(Error::malformed(
                    at(),
                    format!(
                        "skills.acknowledge: rule `{}` cannot be acknowledged; only EL205 (declared executables) and EL206 (risky content) can",
                        acknowledgement.rule.get_ref()
                    ),
                ));
            }
            crate::digest::validate_relative_path(&acknowledgement.file)
                .map_err(|error| Error::malformed(at(), format!("skills.acknowledge: {error}")))?;
            if acknowledgement.reason.trim().is_empty() {
                return Err(Error::malformed(
                    at(),
                    "skills.acknowledge: give a `reason` (who reviewed the file, and how)",
                ));
            }
        }
        Ok(())
    }
}

/// The longest suite or grader name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Names that are safe as lock keys and file names.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

/// A project-relative path: no `..`, not absolute; evalock never reads or writes outside
/// the project.
fn validate_path(path: &str, text: &str, what: &str, value: &str) -> Result<()> {
    crate::digest::validate_relative_path(value).map_err(|error| {
        Error::malformed(
            value_location(path, text, value),
            format!("{what} `{value}`: {error}; use a path inside the project"),
        )
    })
}

/// A glob relative to the project root that compiles and cannot match outside it.
fn validate_glob(path: &str, text: &str, what: &str, pattern: &str) -> Result<()> {
    let reason = if pattern.starts_with('/') {
        Some("absolute paths are not allowed")
    } else if pattern.split('/').any(|part| part == "..") {
        Some("`..` is not allowed")
    } else if pattern.contains(['\0', '\n', '\r']) {
        Some("NUL and newline are not allowed in paths")
    } else {
        None
    };
    if let Some(reason) = reason {
        return Err(Error::malformed(
            value_location(path, text, pattern),
            format!(
                "{what} `{}`: {reason}; use a glob relative to the project root",
                pattern.escape_debug()
            ),
        ));
    }
    globset::Glob::new(pattern).map(|_| ()).map_err(|error| {
        Error::malformed(
            value_location(path, text, pattern),
            format!("{what}: invalid glob `{pattern}`: {error}"),
        )
    })
}
