//! What the gate makes of findings, after every rule family has spoken: `[rules]`
//! severities, debt adopted in `[debt]`, `Evalock-Approved:` trailers, and EL110 when
//! evalock.toml loosens any of them against the base revision.
//!
//! Pure: the caller reads the files (`digest_of`) and the commits (`approvals`).

use crate::digest::Digest;
use crate::finding::{Finding, Location, Subject};
use crate::project::config::{Config, DebtEntry, DebtKey, CONFIG_FILE};
use crate::rules::{RuleId, Severity};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The trailer that approves an approvable refusal: `Evalock-Approved: <RULE> <path>: <reason>`.
pub const APPROVAL_TRAILER: &str = "Evalock-Approved";

/// One `Evalock-Approved:` trailer of a commit since the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub rule: RuleId,
    pub path: String,
    pub reason: String,
    /// The commit's short id.
    pub commit: String,
}

/// The approvals in the messages of `commits` (short id, message); a trailer that names
/// no rule or no reason approves nothing, and is returned as text to warn about.
pub fn approvals(commits: &[(String, String)]) -> (Vec<Approval>, Vec<String>) {
    let mut approvals = Vec::new();
    let mut unreadable = Vec::new();
    for (commit, message) in commits {
        for value in crate::source::trailer_values(message, APPROVAL_TRAILER) {
            match parse_approval(&value) {
                Some((rule, path, reason)) => approvals.push(Approval {
                    rule,
                    path,
                    reason,
                    commit: commit.clone(),
                }),
                None => unreadable.push(format!("{commit}: `{APPROVAL_TRAILER}: {value}`")),
            }
        }
    }
    (approvals, unreadable)
}

/// `<RULE> <path>: <reason>`, the rule by id or name.
fn parse_approval(value: &str) -> Option<(RuleId, String, String)> {
    let (rule, rest) = value.trim().split_once(char::is_whitespace)?;
    let rule = RuleId::parse(rule)?;
    let (path, reason) = rest
        .trim()
        .rsplit_once(": ")
        .or_else(|| rest.trim().split_once(':'))?;
    let (path, reason) = (path.trim(), reason.trim());
    (!path.is_empty() && !reason.is_empty()).then(|| (rule, path.to_owned(), reason.to_owned()))
}

/// The base revision's evalock.toml, and how reports name that revision.
pub struct Base<'a> {
    pub config: &'a Config,
    pub description: &'a str,
}

/// What [`apply`] took out of the findings.
#[derive(Debug, Default)]
pub struct Gated {
    /// Findings covered by `[debt]`: not reported one by one, counted in EL109.
    pub adopted: Vec<Finding>,
    /// Entries of `[debt]` that cover no finding: fixed, or their file changed.
    pub stale: Vec<DebtEntry>,
}

/// Applies `[rules]`, `[debt]` and the approvals to `findings`, and adds EL110 for what
/// evalock.toml loosened against `base`. `digest_of` gives a project file's digest in
/// the judged content.
pub fn apply(
    findings: &mut Vec<Finding>,
    config: &Config,
    base: Option<&Base>,
    approvals: &[Approval],
    digest_of: &dyn Fn(&str) -> Option<Digest>,
) -> Gated {
    set_severities(findings, config);
    if let Some(base) = base {
        findings.extend(loosened(config, base));
        findings.extend(loosened_policy(config, base));
    }
    approve(findings, approvals);
    let mut gated = adopt(findings, config, digest_of);
    let paid_down = base.map_or(0, |base| paid_down(config, base.config));
    if let Some(summary) = summary(&gated, paid_down, base) {
        findings.push(summary);
    }
    gated.stale.sort_by(|a, b| a.path.cmp(&b.path));
    gated
}

/// `[debt]` alone, for the audits: the findings it covers are taken out of `findings`
/// and returned, as [`apply`] takes them.
pub fn take_adopted(
    findings: &mut Vec<Finding>,
    config: &Config,
    digest_of: &dyn Fn(&str) -> Option<Digest>,
) -> Vec<Finding> {
    adopt(findings, config, digest_of).adopted
}

/// `[rules]` alone, for the findings of a run: levels apply, debt is `check`'s.
pub fn apply_severities(findings: &mut Vec<Finding>, config: &Config) {
    set_severities(findings, config);
}

/// `[rules]`: a rule set to `off` is dropped, any other level replaces the severity.
fn set_severities(findings: &mut Vec<Finding>, config: &Config) {
    if config.rules.is_empty() {
        return;
    }
    findings.retain_mut(|finding| match config.severity_of(finding.rule) {
        None => false,
        Some(severity) => {
            if severity != finding.rule.rule().severity {
                finding.severity = severity;
            }
            true
        }
    });
}

/// EL110: debt entries the base did not have, and rules whose level dropped below the
/// base's.
fn loosened(config: &Config, base: &Base) -> Vec<Finding> {
    let mut findings = Vec::new();
    for entry in grown_debt(config, base.config) {
        let rule = entry
            .rule_id()
            .map_or(entry.rule.get_ref().clone(), |rule| rule.id().to_owned());
        findings.push(
            Finding::new(
                RuleId::PolicyLoosened,
                Subject::default(),
                format!(
                    "evalock.toml adopts {rule} on {} as debt, which {} did not: debt never grows on its own",
                    entry.path, base.description
                ),
            )
            .at(Location::line(CONFIG_FILE, entry.line))
            .help(format!(
                "fix the finding instead (`evalock check` shows it once the entry is gone); if adopting it is intended, give a commit since the base the trailer `{APPROVAL_TRAILER}: EL110 {CONFIG_FILE}: <why>`"
            ))
            .discriminator(&format!(
                "debt\u{1f}{rule}\u{1f}{}\u{1f}{}",
                entry.path,
                entry.fingerprint.as_deref().unwrap_or("")
            )),
        );
    }
    for (id, grader) in &base.config.graders {
        let Some(labels) = &grader.labels else {
            continue;
        };
        let Some(now) = config.graders.get(id).filter(|now| now.labels.is_none()) else {
            continue;
        };
        findings.push(
            Finding::new(
                RuleId::PolicyLoosened,
                Subject::grader(id),
                format!(
                    "evalock.toml drops grader `{id}`'s labels ({labels}), which {} measured it against: an uncalibrated grader would no longer be flagged",
                    base.description
                ),
            )
            .at(Location::line(CONFIG_FILE, now.line))
            .help(format!(
                "keep `labels`; if dropping them is intended, give a commit since the base the trailer `{APPROVAL_TRAILER}: EL110 {CONFIG_FILE}: <why>`"
            ))
            .discriminator(&format!("labels\u{1f}{id}")),
        );
    }
    for rule in RuleId::ALL {
        let (now, then) = (config.rule_level(*rule), base.config.rule_level(*rule));
        if now >= then {
            continue;
        }
        let line = config
            .rule_lines
            .iter()
            .find(|(name, _)| RuleId::parse(name) == Some(*rule))
            .map_or(1, |(_, line)| *line);
        findings.push(
            Finding::new(
                RuleId::PolicyLoosened,
                Subject::default(),
                format!(
                    "evalock.toml lowers {} {} from {} to {}, compared with {}",
                    rule.id(),
                    rule.name(),
                    then.as_str(),
                    now.as_str(),
                    base.description
                ),
            )
            .at(Location::line(CONFIG_FILE, line))
            .help(format!(
                "if lowering it is intended, give a commit since the base the trailer `{APPROVAL_TRAILER}: EL110 {CONFIG_FILE}: <why>`"
            ))
            .discriminator(&format!("level\u{1f}{}", rule.id())),
        );
    }
    findings
}

pub use crate::project::config::POLICY_KEYS;

/// EL110 for a suite's envelope slack widened (absent means the defaults): each at the
/// suite's `envelope` line.
fn loosened_envelopes(config: &Config, base: &Base) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in &config.suites {
        let Some(then) = base.config.suite(suite.name()) else {
            continue;
        };
        let (now, then) = (
            suite.envelope.unwrap_or_default(),
            then.envelope.unwrap_or_default(),
        );
        let widened = [
            ("size", now.size_or_default(), then.size_or_default()),
            ("time", now.time_or_default(), then.time_or_default()),
        ];
        for (key, now, then) in widened.into_iter().filter(|(_, now, then)| now > then) {
            let line = config
                .gate_lines
                .envelopes
                .get(suite.name())
                .copied()
                .unwrap_or(1);
            findings.push(
                Finding::new(
                    RuleId::PolicyLoosened,
                    Subject::suite(suite.name()),
                    format!(
                        "evalock.toml loosens suite `{}`'s `envelope.{key}` from {then} to {now}, compared with {}",
                        suite.name(),
                        base.description
                    ),
                )
                .at(Location::line(CONFIG_FILE, line))
                .help(format!(
                    "if loosening it is intended, give a commit since the base the trailer `{APPROVAL_TRAILER}: EL110 {CONFIG_FILE}: <why>`"
                ))
                .discriminator(&format!("envelope\u{1f}{key}")),
            );
        }
    }
    findings
}

/// EL110 for `[policy]` settings the change made more lenient, and acknowledgements it
/// added: each at its line.
fn loosened_policy(config: &Config, base: &Base) -> Vec<Finding> {
    let (now, then) = (&config.policy, &base.config.policy);
    let mut loosened: Vec<(&'static str, String, String)> = Vec::new();
    if now.agreement_min < then.agreement_min {
        loosened.push((
            "agreement_min",
            then.agreement_min.to_string(),
            now.agreement_min.to_string(),
        ));
    }
    if now.flaky_max > then.flaky_max {
        loosened.push((
            "flaky_max",
            then.flaky_max.to_string(),
            now.flaky_max.to_string(),
        ));
    }
    if now.stretch_high > then.stretch_high {
        loosened.push((
            "stretch_high",
            then.stretch_high.to_string(),
            now.stretch_high.to_string(),
        ));
    }
    if then.fail_on_diff && !now.fail_on_diff {
        loosened.push(("fail_on_diff", "true".into(), "false".into()));
    }
    if now.max_output_bytes > then.max_output_bytes {
        loosened.push((
            "max_output_bytes",
            then.max_output_bytes.to_string(),
            now.max_output_bytes.to_string(),
        ));
    }
    if now.timeout_secs > then.timeout_secs {
        loosened.push((
            "timeout_secs",
            then.timeout_secs.to_string(),
            now.timeout_secs.to_string(),
        ));
    }
    let mut findings = loosened_envelopes(config, base);
    findings.extend(loosened
        .into_iter()
        .map(|(key, then, now)| {
            let line = config.gate_lines.policy.get(key).copied().unwrap_or(1);
            Finding::new(
                RuleId::PolicyLoosened,
                Subject::default(),
                format!(
                    "evalock.toml loosens `[policy] {key}` from {then} to {now}, compared with {}",
                    base.description
                ),
            )
            .at(Location::line(CONFIG_FILE, line))
            .help(format!(
                "if loosening it is intended, give a commit since the base the trailer `{APPROVAL_TRAILER}: EL110 {CONFIG_FILE}: <why>`"
            ))
            .discriminator(&format!("policy\u{1f}{key}"))
        }));
    let acknowledged = |config: &Config| -> Vec<(String, String, crate::digest::Digest)> {
        config
            .skills
            .iter()
            .flat_map(|skills| &skills.acknowledgements)
            .map(|entry| {
                (
                    entry.rule.get_ref().clone(),
                    entry.file.clone(),
                    entry.digest,
                )
            })
            .collect()
    };
    let before: BTreeSet<_> = acknowledged(base.config).into_iter().collect();
    for (index, entry) in acknowledged(config).into_iter().enumerate() {
        if before.contains(&entry) {
            continue;
        }
        let line = config
            .gate_lines
            .acknowledgements
            .get(index)
            .copied()
            .unwrap_or(1);
        findings.push(
            Finding::new(
                RuleId::PolicyLoosened,
                Subject::default(),
                format!(
                    "evalock.toml acknowledges {} on {}, which {} did not",
                    entry.0, entry.1, base.description
                ),
            )
            .at(Location::line(CONFIG_FILE, line))
            .help(format!(
                "an acknowledgement silences a warning: give a commit since the base the trailer `{APPROVAL_TRAILER}: EL110 {CONFIG_FILE}: <who reviewed it, how>`"
            ))
            .discriminator(&format!("acknowledge\u{1f}{}\u{1f}{}", entry.0, entry.1)),
        );
    }
    findings
}

/// An approvable refusal that a trailer names (rule and path) becomes a note that says
/// who approved it and why, for the review to read.
fn approve(findings: &mut [Finding], approvals: &[Approval]) {
    for finding in findings.iter_mut() {
        if !finding.rule.is_approvable() || finding.severity < Severity::Error {
            continue;
        }
        let path = finding
            .location
            .as_ref()
            .map(|location| location.path.as_str());
        let Some(approval) = approvals
            .iter()
            .find(|approval| approval.rule == finding.rule && Some(approval.path.as_str()) == path)
        else {
            continue;
        };
        finding.severity = Severity::Note;
        finding.message = format!(
            "{} (approved in {}: {})",
            finding.message, approval.commit, approval.reason
        );
        finding.help = format!(
            "approved by the `{APPROVAL_TRAILER}:` trailer of commit {}: the review approves it, or asks for it to be dropped",
            approval.commit
        );
    }
}

/// Takes out the findings `[debt]` covers: each fingerprint entry one finding of its rule
/// on its file with its fingerprint; an entry of the earlier form every finding of its
/// rule on its file while the file's bytes are as they were.
fn adopt(
    findings: &mut Vec<Finding>,
    config: &Config,
    digest_of: &dyn Fn(&str) -> Option<Digest>,
) -> Gated {
    let entries = &config.debt.findings;
    if entries.is_empty() {
        return Gated::default();
    }
    let mut used = vec![false; entries.len()];
    // Entries by what they cover; an entry listed twice covers two equal findings.
    let mut by_fingerprint: HashMap<(RuleId, &str, &str), Vec<usize>> = HashMap::new();
    let mut by_file: HashMap<(RuleId, &str), Vec<usize>> = HashMap::new();
    for (index, entry) in entries.iter().enumerate() {
        let Some(rule) = entry.rule_id() else {
            continue;
        };
        match &entry.fingerprint {
            Some(fingerprint) => by_fingerprint
                .entry((rule, entry.path.as_str(), fingerprint.as_str()))
                .or_default()
                .push(index),
            None => by_file
                .entry((rule, entry.path.as_str()))
                .or_default()
                .push(index),
        }
    }
    let mut adopted = Vec::new();
    let mut digests = BTreeMap::new();
    findings.retain(|finding| {
        if finding.rule.is_integrity()
            || finding.severity < Severity::Warn
            || never_adopted(finding)
        {
            return true;
        }
        let Some(path) = finding
            .location
            .as_ref()
            .map(|location| location.path.as_str())
        else {
            return true;
        };
        let exact = by_fingerprint
            .get(&(finding.rule, path, finding.fingerprint.as_str()))
            .and_then(|candidates| candidates.iter().find(|index| !used[**index]));
        if let Some(index) = exact {
            used[*index] = true;
            adopted.push(finding.clone());
            return false;
        }
        let Some(candidates) = by_file.get(&(finding.rule, path)) else {
            return true;
        };
        let digest = *digests
            .entry(path.to_owned())
            .or_insert_with(|| digest_of(path));
        let covering = candidates
            .iter()
            .find(|index| digest.is_some() && entries[**index].digest == digest);
        match covering {
            Some(index) => {
                used[*index] = true;
                adopted.push(finding.clone());
                false
            }
            None => true,
        }
    });
    let stale = entries
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(entry, _)| entry.clone())
        .collect();
    Gated { adopted, stale }
}

/// How often each key stands in `entries`.
fn debt_counts(entries: &[DebtEntry]) -> BTreeMap<DebtKey<'_>, usize> {
    let mut counts = BTreeMap::new();
    for entry in entries {
        *counts.entry(entry.key()).or_insert(0) += 1;
    }
    counts
}

/// The entries of `config` that `base` did not have (counted: a second entry of one
/// finding is growth too). An entry by fingerprint that replaces one of the earlier form,
/// same rule and file, is not growth: it covers less.
fn grown_debt<'a>(config: &'a Config, base: &Config) -> Vec<&'a DebtEntry> {
    let mut remaining = debt_counts(&base.debt.findings);
    let rewritten: BTreeSet<(Option<RuleId>, &str)> = base
        .debt
        .findings
        .iter()
        .filter(|entry| entry.is_by_file_digest())
        .map(|entry| (entry.rule_id(), entry.path.as_str()))
        .collect();
    config
        .debt
        .findings
        .iter()
        .filter(|entry| {
            if let Some(count) = remaining.get_mut(&entry.key()).filter(|count| **count > 0) {
                *count -= 1;
                return false;
            }
            !(entry.fingerprint.is_some()
                && rewritten.contains(&(entry.rule_id(), entry.path.as_str())))
        })
        .collect()
}

/// How many of the base's debt entries are gone now.
fn paid_down(config: &Config, base: &Config) -> usize {
    let mut remaining = debt_counts(&config.debt.findings);
    base.debt
        .findings
        .iter()
        .filter(|entry| match remaining.get_mut(&entry.key()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .count()
}

/// EL109: one line for all adopted findings, and the progress made against the base.
fn summary(gated: &Gated, paid_down: usize, base: Option<&Base>) -> Option<Finding> {
    let count = gated.adopted.len();
    if count == 0 && paid_down == 0 {
        return None;
    }
    let progress = match (paid_down, base) {
        (0, _) | (_, None) => String::new(),
        (paid, Some(base)) => format!(
            "; {paid} {} paid down since {}",
            if paid == 1 { "entry" } else { "entries" },
            base.description
        ),
    };
    let message = format!(
        "{count} adopted {}{progress}, see `evalock debt`",
        if count == 1 { "finding" } else { "findings" }
    );
    let finding = Finding::new(RuleId::AdoptedDebt, Subject::default(), message)
        .at(Location::file(CONFIG_FILE));
    Some(match count {
        0 => finding.severity(Severity::Note),
        _ => finding,
    })
}

/// A credential in the history is rotated and an instruction hidden from the user
/// removed, never carried as debt. An instruction in a skill's visible prose (a warning)
/// was seen by whoever adopts it.
pub fn never_adopted(finding: &Finding) -> bool {
    match finding.rule {
        RuleId::McpSecretInline | RuleId::McpHiddenInstructions => true,
        RuleId::SkillHiddenInstructions => finding.severity >= Severity::Error,
        _ => false,
    }
}

/// One entry `[debt]` should hold: a finding's rule, file and fingerprint, with its
/// message for the reader of evalock.toml.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AdoptedFinding {
    pub rule: RuleId,
    pub path: String,
    pub fingerprint: String,
    pub message: String,
}

/// The debt `[debt]` should hold for `findings` as they stand: one entry for every
/// finding a policy rule raises at `warn` or above, sorted by rule, path and message.
pub fn debt_for(findings: &[Finding]) -> Vec<AdoptedFinding> {
    let mut entries = Vec::new();
    for finding in findings {
        if finding.rule.is_integrity()
            || never_adopted(finding)
            || finding.severity < Severity::Warn
        {
            continue;
        }
        let Some(location) = &finding.location else {
            continue;
        };
        // evalock.toml changes with the debt it records, and the lock with every `lock`.
        if [CONFIG_FILE, crate::project::lock::LOCK_FILE].contains(&location.path.as_str()) {
            continue;
        }
        entries.push(AdoptedFinding {
            rule: finding.rule,
            path: location.path.clone(),
            fingerprint: finding.fingerprint.clone(),
            message: finding.message.clone(),
        });
    }
    entries.sort();
    entries
}

/// Longest message kept in the comment beside a `[debt]` entry.
const DEBT_COMMENT_CHARS: usize = 100;

/// `[debt]` as evalock.toml writes it: one line per entry, with what the finding said.
pub fn render_debt(entries: &[AdoptedFinding]) -> String {
    let mut out = String::from(
        "\n# Findings that were here when evalock was adopted. Each entry covers one finding,\n# known by its fingerprint (its rule, subject and what it found, never its line): an\n# edit elsewhere in the file leaves it adopted, a new or changed violation is judged in\n# full. `evalock debt` lists them; fix one, then delete its line. Debt never grows on\n# its own: `evalock lock` never adds to it, and a pull request that does is refused.\n[debt]\nfindings = [\n",
    );
    for entry in entries {
        let said: String = entry
            .message
            .chars()
            .map(|character| match character.is_control() {
                true => ' ',
                false => character,
            })
            .collect();
        out.push_str(&format!(
            "  {{ rule = \"{}\", path = {}, fingerprint = \"{}\" }}, # {}\n",
            entry.rule.id(),
            toml_string(&entry.path),
            entry.fingerprint,
            crate::text::shorten(&said, DEBT_COMMENT_CHARS)
        ));
    }
    out.push_str("]\n");
    out
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            character if character.is_control() => {
                out.push_str(&format!("\\u{:04X}", u32::from(character)))
            }
            character => out.push(character),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_name_a_rule_a_path_and_a_reason() {
        let commits = vec![(
            "1a2b3c4".to_owned(),
            "widen tools\n\nEvalock-Approved: EL209 skills/pdf/SKILL.md: the PDF skill now writes files\nEvalock-Approved: nonsense\nEvalock-Approved: EL209 skills/x/SKILL.md\n".to_owned(),
        )];
        let (approvals, unreadable) = approvals(&commits);
        assert_eq!(
            approvals,
            vec![Approval {
                rule: RuleId::SkillPermissionEscalation,
                path: "skills/pdf/SKILL.md".to_owned(),
                reason: "the PDF skill now writes files".to_owned(),
                commit: "1a2b3c4".to_owned(),
            }]
        );
        assert_eq!(unreadable.len(), 2, "{unreadable:?}");
    }

    #[test]
    fn rendered_debt_reads_back_as_config() {
        let text = format!(
            "version = 1\n{}",
            render_debt(&[AdoptedFinding {
                rule: RuleId::SkillVersion,
                path: "skills/a \"b\"/SKILL.md".to_owned(),
                fingerprint: "0123456789abcdef".to_owned(),
                message: "skill `a` has no version\nsecond line".to_owned(),
            }])
        );
        let config = Config::parse(CONFIG_FILE, text.as_bytes()).unwrap();
        assert_eq!(config.debt.findings.len(), 1);
        assert_eq!(config.debt.findings[0].path, "skills/a \"b\"/SKILL.md");
        assert_eq!(
            config.debt.findings[0].fingerprint.as_deref(),
            Some("0123456789abcdef")
        );
        assert!(
            text.contains("# skill `a` has no version second line"),
            "{text}"
        );
    }
}
