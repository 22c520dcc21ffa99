//! The rule table: every rule evalock can report, as data.
//!
//! `--help`, SARIF rule metadata, the README's rule reference and review comments all
//! read this table; nothing restates a rule by hand.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a finding is. Ordered: `Refuse` is the most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warn,
    Error,
    Refuse,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warn => "warn",
            Severity::Error => "error",
            Severity::Refuse => "refuse",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the rule table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub id: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
    pub help: &'static str,
}

macro_rules! rule_table {
    ($( $variant:ident => ($id:literal, $name:literal, $severity:ident, $summary:literal, $help:literal), )*) => {
        /// A stable rule identifier; `RuleId::rule()` gives its table row.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleId { $( $variant, )* }

        /// Every rule, in id order.
        pub static RULES: &[Rule] = &[ $( Rule {
            id: $id, name: $name, severity: Severity::$severity, summary: $summary, help: $help,
        }, )* ];

        impl RuleId {
            pub const ALL: &'static [RuleId] = &[ $( RuleId::$variant, )* ];

            pub fn rule(self) -> &'static Rule {
                &RULES[self as usize]
            }
        }
    };
}

rule_table! {
    CaseUnlocked => ("EL101", "case-unlocked", Refuse,
        "a case's digest differs from the lock, or a case/lock entry is missing",
        "review the change, bump the case's `version` if its contract changed, then run `evalock lock`"),
    CaseEditedInPlace => ("EL102", "case-edited-in-place", Refuse,
        "compared with the base revision, a case kept its id and version but its content changed",
        "a shipped case is never edited in place: bump its `version` (or add a new case and retire the old one), then run `evalock lock`"),
    CaseRemoved => ("EL103", "case-removed", Refuse,
        "a case in the base lock is gone: removed instead of retired, or a retired case deleted",
        "restore the case and mark it `\"retired\": true` instead of deleting it, then run `evalock lock`"),
    DuplicateCaseId => ("EL104", "duplicate-case-id", Refuse,
        "two cases share an id within a suite, also when the ids differ only in Unicode normalisation (NFC)",
        "give each case a unique `id`; retire the old one instead of reusing its id"),
    MalformedCase => ("EL105", "malformed-case", Refuse,
        "a case file cannot be parsed (or is a Git LFS pointer), or a case is not an object with a string `id` (a warning: a number finer than a double, which the digest cannot see edited)",
        "fix the file at the reported line and column"),
    PromptUnlocked => ("EL107", "prompt-unlocked", Refuse,
        "the prompt digest differs from the lock",
        "review the prompt change, then run `evalock lock` (and re-record baselines that depend on it)"),
    BaseUnreadable => ("EL108", "base-unreadable", Warn,
        "the base revision's evalock.toml, lock or baselines cannot be read, so nothing was compared with it (in-place edits, removed cases, grown permissions and re-recorded baselines go unchecked against it)",
        "repair the file on the base branch; this change is judged on its own meanwhile, so review it for what the comparison would have caught"),
    AdoptedDebt => ("EL109", "adopted-debt", Warn,
        "findings that were in the repository when evalock was adopted are recorded as debt in `[debt]` of evalock.toml and not judged again until their file changes",
        "pay the debt down: `evalock debt` lists what is adopted; fix a finding, then delete its entry"),
    PolicyLoosened => ("EL110", "policy-loosened", Refuse,
        "compared with the base, the gate was loosened: more debt or acknowledgements, a lower rule severity, a looser `[policy]` setting, envelope slack or noise floor, a grader's `labels` dropped, or a case that at a new version drops `mutate`/`expect_pass` entries or raises `expect.max_chars`",
        "if the change is intended, give a commit since the base an `Evalock-Approved: EL110 <path>: <reason>` trailer naming the file the finding points at"),
    SkillTampered => ("EL201", "skill-tampered", Refuse,
        "a skill file changed (bytes or mode), is missing or unlisted compared with the lock or skill.json, or cannot be pinned; or a configured skills root or marketplace finds no skill",
        "review the skill change, then run `evalock lock` to pin it"),
    SkillProvenance => ("EL202", "skill-provenance", Refuse,
        "a vendored or registry skill lacks a source repository and a real 40-hex commit",
        "record `source.repo` and the full 40-character `source.commit` in skill.json"),
    SkillVersion => ("EL203", "skill-version", Refuse,
        "the skill's version is not semver",
        "set `version` (skill.json) or `metadata.version` (SKILL.md) to a semver such as 1.0.0"),
    SkillPermissions => ("EL204", "skill-permissions", Refuse,
        "no permissions declared, or permissions outside the allowlist",
        "declare `permissions` in skill.json (or `allowed-tools` in SKILL.md) within `skills.allowed_permissions`"),
    SkillExecutable => ("EL205", "skill-executable", Refuse,
        "executable content is undeclared (refuse) or declared (warn: needs sandbox review)",
        "list every script under `executables` in skill.json (or `metadata.executables` in SKILL.md), review it in a sandbox, then acknowledge its digest in evalock.toml"),
    SkillRiskyContent => ("EL206", "skill-risky-content", Refuse,
        "a skill file contains a risky command such as `curl … | sh`, `rm -rf /`, `base64 -d` or `eval(`",
        "remove the risky line, or acknowledge it in evalock.toml after review"),
    SkillNameCollision => ("EL207", "skill-name-collision", Refuse,
        "two skills share a name",
        "rename one of the skills (folder and `name` together)"),
    SkillNameInvalid => ("EL208", "skill-name-invalid", Error,
        "the skill's name or description violates the agentskills specification or differs from its folder",
        "use 1-64 lowercase letters, digits and single hyphens, equal to the folder name; description 1-1024 characters"),
    SkillPermissionEscalation => ("EL209", "skill-permission-escalation", Refuse,
        "compared with the base revision, a skill's `allowed-tools` or permissions, or `[skills] allowed_permissions`, grew",
        "review the new permissions; if they are intended, give a commit since the base the trailer `Evalock-Approved: EL209 <path>: <why>`, naming the file the finding points at"),
    SkillUnpinned => ("EL210", "skill-unpinned", Refuse,
        "a registry skill is pinned by version or tag without a content digest",
        "set `source.version` to the exact version you mirrored and `source.digest` to the content digest evalock prints, then run `evalock lock`"),
    SkillHiddenInstructions => ("EL211", "skill-hidden-instructions", Refuse,
        "a skill or plugin manifest hides instructions to the model: in a description (\"ignore previous instructions\", `<IMPORTANT>` blocks, \"do not tell the user\", reading credentials, invisible characters, HTML comments, base64 text) or where a SKILL.md body's reader cannot see them (invisible characters, instructions inside HTML comments); the same phrases in the body's visible prose are a warning",
        "remove it: a description says what the skill does and when to use it, and nothing a reviewer cannot read belongs in a skill; if the skill came from elsewhere, report it to its maintainers and remove it until it is fixed"),
    SkillChangedUnversioned => ("EL212", "skill-changed-unversioned", Refuse,
        "compared with the base revision, a skill's files changed (bytes or mode) but its version did not",
        "bump the skill's version (`metadata.version` in SKILL.md, or `version` in skill.json), then run `evalock lock`; if the change needs no new version, give a commit since the base the trailer `Evalock-Approved: EL212 <path>: <why>`, naming the file the finding points at"),
    SkillUnlisted => ("EL213", "skill-unlisted", Refuse,
        "a SKILL.md lies outside every `[skills] roots` glob and marketplace: an agent can load it as a skill, and nothing pins or audits it",
        "add its folder to `[skills] roots` in evalock.toml and run `evalock lock`, or, if it is no skill an agent loads (a test fixture, an example), exclude it with `[skills] exclude`"),
    SkillPluginMissing => ("EL214", "skill-plugin-missing", Refuse,
        "a marketplace lists a plugin or skill that is not a folder in this repository (a typo, a moved folder, a URL written as a path, a path that leaves the repository): nothing of it is pinned or audited",
        "correct the plugin's `source` or `skills` path in the marketplace so it names a folder here (relative to the folder that holds `.claude-plugin/`), or remove the entry"),
    GraderChangedUnversioned => ("EL301", "grader-changed-unversioned", Refuse,
        "a grader's sources or what it runs (`kind`, `command`) changed but its version did not",
        "bump the grader's `version` in evalock.toml, then run `evalock lock` and re-record baselines"),
    GraderVersionDrift => ("EL302", "grader-version-drift", Refuse,
        "a case pins a grader version that is not the current one",
        "update the case's `grader_version` (and bump the case `version`), or restore the grader version"),
    GraderCannotFail => ("EL303", "grader-cannot-fail", Error,
        "a grader passes an empty or refusal completion",
        "tighten the grader so that an empty completion and a plain refusal fail"),
    ControlPassed => ("EL304", "control-passed", Error,
        "a case's negative control (`mutate`) passes its grader",
        "the grader cannot tell the mutated case from the real one: tighten its assertions"),
    KnownGoodRejected => ("EL305", "known-good-rejected", Error,
        "a known-good completion of the case (`expect_pass`) fails its grader: the grader is stricter than the people who wrote the answer",
        "loosen the assertion that rejects it, or correct the `expect_pass` entry if the answer is no longer good"),
    CalibrationStale => ("EL306", "calibration-stale", Refuse,
        "a grader's labels calibration is not pinned in evalock.lock, or was pinned for other labels, another grader version or other counts",
        "run `evalock lock` to measure the grader against its labels again"),
    GraderUncalibrated => ("EL307", "grader-uncalibrated", Error,
        "a grader agrees with people's labels less than the floors ask (20 labels, agreement 0.8, κ 0.6): its passes cannot make a run green",
        "see what it gets wrong (`evalock calibrate --grader G`), fix the grader, bump its version and run `evalock lock`; or label more"),
    BaselineDrifted => ("EL401", "baseline-drifted", Refuse,
        "a baseline entry was recorded against another case, prompt, grader or normalizer",
        "run the suite and re-record with `evalock accept --reason \"…\"`"),
    BaselineTampered => ("EL402", "baseline-tampered", Refuse,
        "a baseline entry's digest does not match its own stored completion, or the file cannot be read as a baseline (malformed, a key twice, a directory in its place)",
        "baselines are written only by `evalock accept`: restore the file or re-record it"),
    BaselineWrittenInCi => ("EL403", "baseline-written-in-ci", Refuse,
        "a baseline or lock write was attempted with CI set",
        "record baselines and locks locally and commit them; CI only verifies"),
    BaselineMissing => ("EL404", "baseline-missing", Warn,
        "a case has no baseline yet",
        "run the suite, read the results, then `evalock accept --reason \"…\"`"),
    BaselineOrphan => ("EL405", "baseline-orphan", Warn,
        "a baseline entry names a case that no longer exists",
        "re-record the suite's baselines with `evalock accept --reason \"…\"` to drop the entry"),
    RebaselineWithoutReason => ("EL406", "rebaseline-without-reason", Refuse,
        "baseline entries or files changed or were deleted compared with the base revision, and no reason was recorded",
        "record the change with `evalock run` then `evalock accept --reason \"…\"` (an entry edited or deleted by hand is not a recording), or add a `Rebaseline-Reason:` trailer to a commit since the base"),
    MixedChange => ("EL407", "mixed-change", Warn,
        "one change edits case contracts or prompts and re-records baselines",
        "split the contract change and the re-recording into separate commits so each can be reviewed"),
    Regressed => ("EL501", "regressed", Error,
        "the case passed at baseline and fails now",
        "read the diff with `evalock review`; fix the prompt or model, or change the case contract deliberately"),
    Failing => ("EL502", "failing", Error,
        "the case fails its assertions (and did at baseline, or is new)",
        "read the reasons; fix the behaviour or the case"),
    Moved => ("EL503", "moved", Note,
        "the case still passes, but its normalized completion moved",
        "read the diff with `evalock review`; if it is good, `evalock accept --reason \"…\"`"),
    CompleterError => ("EL504", "completer-error", Error,
        "the completer (or a command grader) crashed, timed out, or produced empty, oversized or malformed output",
        "fix the completer or grader (its stderr is quoted); an error is never scored"),
    SamplesDisagree => ("EL505", "samples-disagree", Error,
        "agreement across the case's samples is below `agreement_min`",
        "the behaviour is unstable: tighten the prompt or lower the temperature before trusting this case"),
    Improved => ("EL506", "improved", Note,
        "the case failed at baseline and passes now",
        "record the new last-good completion with `evalock accept --reason \"…\"`"),
    StratumTooSmall => ("EL507", "stratum-too-small", Warn,
        "a difficulty-banded suite (strata easy, medium, stretch) has a stratum of fewer than two cases, too few to tell luck from coverage",
        "add cases to the stratum until it holds at least two"),
    StretchTooEasy => ("EL508", "stretch-too-easy", Warn,
        "the stretch stratum passes 80 % or more: the harness no longer measures anything (a note when a banded suite passes everything and has no stretch stratum)",
        "replace stretch cases that stopped stretching with harder ones that fail now, accepted with `evalock accept --include-failing`"),
    EasyFailed => ("EL509", "easy-failed", Error,
        "a case of the easy stratum fails: catastrophic, whatever the other strata do",
        "fix the behaviour before anything else; an easy case never becomes a known failure"),
    EnvelopeBreach => ("EL510", "envelope-breach", Warn,
        "the case still passes, but its size, output tokens or time grew past its pin over last-good (+10 %, +10 %, +15 % by default; growth under 16 never counts; time is pinned where last-good took 1 s or more)",
        "find what made the answer fatter or slower; if intended, `evalock accept --reason \"…\"` records the new last-good, or widen the suite's `envelope`; `[rules] EL510 = \"error\"` makes a breach fail the gate"),
    CaseFlaky => ("EL511", "case-flaky", Warn,
        "over `run --repeat`, the case's verdict flipped more often than `[policy] flaky_max` allows: it is flaky, and its verdict does not move the gate until it is fixed",
        "make the case deterministic (temperature, seeds, a completer that waits for what it reads), or fix what it depends on; then `run --repeat` again"),
    BehaviourMatrix => ("EL512", "behaviour-matrix", Note,
        "`compare --findings`: what a model, prompt or completer change did to each behaviour of a suite, on its `model` line",
        "read the matrix; each regressed case is EL501 at its line"),
    McpConfigInvalid => ("EL601", "mcp-config-invalid", Refuse,
        "a tool-server configuration or `tools/list` snapshot cannot be read: not JSON (comments and trailing commas are allowed), a server that is not an object or starts nothing, a server twice, a file that `[mcp]` or a plugin manifest names but that is missing",
        "fix the file at the reported line, then run `evalock lock`"),

    McpLaunchUnpinned => ("EL602", "mcp-launch-unpinned", Refuse,
        "a server's launch fetches code without fixing its version: `npx`/`bunx`/`npm exec` without `pkg@<exact version>`, `uvx`/`pipx run` without `==`, `docker run` without an image digest, `go run …@latest`",
        "name an exact version (`pkg@1.2.3`, `pkg==1.2.3`, `image@sha256:…`, `module@v1.2.3`), then run `evalock lock`"),
    McpInsecureRemote => ("EL603", "mcp-insecure-remote", Refuse,
        "a remote server is reached over `http://` or `ws://` on a host that is not this machine",
        "use its `https://` URL"),
    McpSecretInline => ("EL604", "mcp-secret-inline", Refuse,
        "a value in a server's `env` or `headers` (or an argument or its URL) looks like a credential; reports quote only its name",
        "reference a variable instead (`${API_TOKEN}`, `${input:token}` in VS Code), and rotate the credential: it is in the history"),
    McpLaunchDrift => ("EL605", "mcp-launch-drift", Refuse,
        "a server's launch (command, arguments, URL, transport, environment or header names) differs from the lock, or a server is not in the lock, or a locked server is gone",
        "review the change, then run `evalock lock` to pin it"),
    McpToolDrift => ("EL606", "mcp-tool-drift", Refuse,
        "a tool of a `tools/list` snapshot differs from the lock: its description or input schema changed, it is new, or it is gone",
        "read the changed description and schema (a rug pull changes them under an approved server), then run `evalock lock` to pin them"),
    McpServerChanged => ("EL607", "mcp-server-changed", Refuse,
        "compared with the base revision, a server was added, its launch changed, its environment or headers grew, or one of its tools is new or changed its description or schema",
        "review the server and its tools; if the change is intended, give a commit since the base the trailer `Evalock-Approved: EL607 <path>: <why>`, naming the file the finding points at"),
    McpHiddenInstructions => ("EL608", "mcp-hidden-instructions", Refuse,
        "a tool's description hides instructions to the model: \"ignore previous instructions\", `<IMPORTANT>` blocks, \"do not tell the user\", reading credentials, invisible characters",
        "do not approve the server: report the description to its maintainers, and remove the server until it is fixed"),
    McpToolShadowing => ("EL609", "mcp-tool-shadowing", Warn,
        "a tool's description names another server, or a tool another server offers: a tool that steers others can take them over",
        "read the description; a server should describe its own tools only"),
    McpConfigUnlisted => ("EL610", "mcp-config-unlisted", Refuse,
        "a file that starts tool servers when a client opens the project (`.mcp.json`, an editor's `mcp.json`, `.claude/settings.json`, a plugin's `plugin.json` with `mcpServers`) is not in `[mcp] configs`: nothing pins its launch",
        "add it to `[mcp] configs` in evalock.toml and run `evalock lock`, or, if no client loads it (a template, a test fixture), exclude it with `[mcp] exclude`"),
}

impl RuleId {
    /// Outcomes of a run (and baselines gone stale) that a prompt edit explains when the
    /// case's own lines did not change: their findings name the suite's prompt files.
    pub fn explained_by_prompt(self) -> bool {
        matches!(
            self,
            RuleId::Regressed
                | RuleId::Failing
                | RuleId::Moved
                | RuleId::SamplesDisagree
                | RuleId::Improved
                | RuleId::BaselineDrifted
                | RuleId::CompleterError
        )
    }

    /// Rules that guard what evalock pins: no `[rules]` severity lowers them and no
    /// debt adopts them, or the lock would guard nothing.
    pub fn is_integrity(self) -> bool {
        matches!(
            self,
            RuleId::CaseUnlocked
                | RuleId::CaseEditedInPlace
                | RuleId::CaseRemoved
                | RuleId::SkillTampered
                | RuleId::SkillChangedUnversioned
                | RuleId::GraderChangedUnversioned
                | RuleId::BaselineDrifted
                | RuleId::BaselineTampered
                | RuleId::RebaselineWithoutReason
                | RuleId::PolicyLoosened
                | RuleId::AdoptedDebt
                | RuleId::McpLaunchDrift
                | RuleId::McpToolDrift
        )
    }

    /// Refusals that guard a legitimate change: an `Evalock-Approved:` trailer on a commit
    /// since the base turns them into a note the review approves.
    pub fn is_approvable(self) -> bool {
        matches!(
            self,
            RuleId::SkillPermissionEscalation
                | RuleId::SkillChangedUnversioned
                | RuleId::PolicyLoosened
                | RuleId::McpServerChanged
        )
    }

    pub fn id(self) -> &'static str {
        self.rule().id
    }

    pub fn name(self) -> &'static str {
        self.rule().name
    }

    /// Looks a rule up by its id (`EL102`) or its name (`case-edited-in-place`).
    pub fn parse(text: &str) -> Option<RuleId> {
        RuleId::ALL
            .iter()
            .copied()
            .find(|rule_id| rule_id.id().eq_ignore_ascii_case(text) || rule_id.name() == text)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl<'de> Deserialize<'de> for RuleId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        RuleId::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown rule `{text}`")))
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// The rule table as Markdown, for the README and `evalock rules --markdown`.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| id | name | severity | what | fix |\n| --- | --- | --- | --- | --- |\n");
    for rule in RULES {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            rule.id,
            rule.name,
            rule.severity,
            rule.summary.replace('|', "\\|"),
            rule.help.replace('|', "\\|")
        ));
    }
    out
}

/// The rule table as a compact index for the README: id, name (linking to its section of
/// `docs/rules.md`, where `markdown_reference` writes it) and severity, by family.
pub fn markdown_index() -> String {
    let mut out = String::from("| id | rule | severity |\n| --- | --- | --- |\n");
    for rule in RULES {
        out.push_str(&format!(
            "| {} | [{}](docs/rules.md#{}-{}) | {} |\n",
            rule.id,
            rule.name,
            rule.id.to_ascii_lowercase(),
            rule.name,
            rule.severity
        ));
    }
    out
}

/// One section per rule, grouped by family, for `docs/rules.md`.
pub fn markdown_reference() -> String {
    let mut out = String::new();
    let mut family = "";
    for rule in RULES {
        let this_family = &rule.id[..3];
        if this_family != family {
            family = this_family;
            out.push_str(&format!("\n## {}xx: {}\n", family, family_name(family)));
        }
        out.push_str(&format!(
            "\n### {} {}\n\nSeverity: {}.\n\n{}{}.\n\nFix: {}.\n",
            rule.id,
            rule.name,
            rule.severity,
            rule.summary[..1].to_uppercase(),
            &rule.summary[1..],
            rule.help.trim_end_matches('.')
        ));
    }
    out
}

fn family_name(family: &str) -> &'static str {
    match family {
        "EL1" => "cases, prompts and the base revision",
        "EL2" => "skills",
        "EL3" => "graders",
        "EL4" => "baselines",
        "EL5" => "runs",
        "EL6" => "tool servers (MCP)",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_line_up_with_their_variants() {
        assert_eq!(RuleId::ALL.len(), RULES.len());
        for (index, rule_id) in RuleId::ALL.iter().enumerate() {
            assert_eq!(*rule_id as usize, index);
        }
        let mut ids: Vec<_> = RULES.iter().map(|rule| rule.id).collect();
        let sorted = {
            let mut copy = ids.clone();
            copy.sort();
            copy
        };
        assert_eq!(ids, sorted, "rule table must stay in id order");
        ids.dedup();
        assert_eq!(ids.len(), RULES.len(), "rule ids must be unique");
    }

    #[test]
    fn parse_accepts_id_and_name() {
        assert_eq!(RuleId::parse("EL102"), Some(RuleId::CaseEditedInPlace));
        assert_eq!(RuleId::parse("el102"), Some(RuleId::CaseEditedInPlace));
        assert_eq!(RuleId::parse("case-removed"), Some(RuleId::CaseRemoved));
        assert_eq!(RuleId::parse("EL999"), None);
    }
}
