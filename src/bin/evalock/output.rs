//! Everything the binary prints. Findings go to standard output (or `--output`),
//! errors and progress to standard error.

use std::collections::BTreeMap;
use std::io::Write;

/// Writes to standard output. A reader that stops early (`evalock check | head`) closes
/// the pipe: the rest is dropped quietly and the command still exits with its own code,
/// where `print!` would panic. Other write errors are reported once on standard error.
macro_rules! out {
    ($($arg:tt)*) => {
        emit(&mut std::io::stdout().lock(), format_args!($($arg)*))
    };
}

macro_rules! outln {
    () => { out!("\n") };
    ($($arg:tt)*) => { out!("{}\n", format_args!($($arg)*)) };
}

/// Standard error: a closed one is not worth a panic either.
macro_rules! err {
    ($($arg:tt)*) => {
        emit(&mut std::io::stderr().lock(), format_args!($($arg)*))
    };
}

macro_rules! errln {
    ($($arg:tt)*) => { err!("{}\n", format_args!($($arg)*)) };
}

fn emit(stream: &mut dyn Write, text: std::fmt::Arguments<'_>) {
    let written = stream.write_fmt(text).and_then(|()| stream.flush());
    note_write_error(written);
}

/// Standard output written piece by piece through a buffer, for output too large to be
/// worth holding whole.
fn emit_streamed(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = write(&mut buffered).and_then(|()| buffered.flush());
    note_write_error(written);
}

/// A closed pipe ends the output quietly; any other failure is said once.
fn note_write_error(written: std::io::Result<()>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static REPORTED: AtomicBool = AtomicBool::new(false);
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(error) => {
            if !REPORTED.swap(true, Ordering::Relaxed) {
                let _ = writeln!(std::io::stderr(), "error: cannot write the output: {error}");
            }
        }
    }
}

use crate::args::{ColorChoice, Format};
use evalock::commands::hook::{HookChange, HookOutcome};
use evalock::commands::{
    AcceptOutcome, AuditOutcome, AuditStatus, InitOutcome, LockOutcome, ReviewItem, RunOutcome,
};
use evalock::project::config::{Config, CONFIG_FILE};
use evalock::report::{self, Report};
use evalock::rules::{RuleId, RULES};
use std::cell::{Cell, OnceCell};
use std::io::IsTerminal;
use std::path::Path;

pub struct Printer {
    colour_stdout: bool,
    colour_stderr: bool,
    /// The project's folder as seen from where evalock was started, when that is not the
    /// project's folder itself (a hook started at the top of the work tree with `-C`).
    project_folder: OnceCell<String>,
    /// Whether that folder was named already.
    project_folder_noted: Cell<bool>,
}

fn wants_colour(choice: ColorChoice, is_terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            is_terminal && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        }
    }
}

impl Printer {
    pub fn new(choice: ColorChoice) -> Printer {
        Printer {
            colour_stdout: wants_colour(choice, std::io::stdout().is_terminal()),
            colour_stderr: wants_colour(choice, std::io::stderr().is_terminal()),
            project_folder: OnceCell::new(),
            project_folder_noted: Cell::new(false),
        }
    }

    /// Remembers where the project is from the folder evalock was started in, so that a
    /// report whose paths (`cases/a.jsonl:3`) and commands (`git add -- cases/a.jsonl`)
    /// are the project's says so when they would be read from elsewhere.
    pub fn set_project_folder(&self, started: &Path, project: &Path) {
        if let Some(folder) = relative_folder(started, project) {
            let _ = self.project_folder.set(folder);
        }
    }

    /// The line that says which folder the paths and commands printed below it are
    /// relative to, when evalock was started elsewhere: before the first output that
    /// names project files (findings, a results file, a baseline written), once.
    fn project_folder_note(&self, colour: bool) -> String {
        match self.project_folder.get() {
            Some(folder) if !self.project_folder_noted.replace(true) => {
                let note = format!(
                    "note: paths below are relative to {folder}/, the folder of {CONFIG_FILE}; run the commands there"
                );
                match colour {
                    true => format!("\x1b[2m{note}\x1b[0m\n"),
                    false => format!("{note}\n"),
                }
            }
            _ => String::new(),
        }
    }

    pub fn error(&self, message: &str) {
        if self.colour_stderr {
            errln!("\x1b[1;31merror\x1b[0m: {message}");
        } else {
            errln!("error: {message}");
        }
    }

    pub fn report(
        &self,
        report: &Report,
        format: Format,
        output: Option<&Path>,
    ) -> evalock::Result<()> {
        let colour = output.is_none() && self.colour_stdout;
        let text = match format {
            // Written as it is serialized (see `report::json::write`).
            Format::Json => {
                let write = |out: &mut dyn Write| report::json::write(report, out);
                return match output {
                    Some(path) => evalock::source::atomic::write_atomic_from(path, write),
                    None => {
                        emit_streamed(write);
                        Ok(())
                    }
                };
            }
            Format::Human if output.is_none() && !report.findings.is_empty() => format!(
                "{}{}",
                self.project_folder_note(colour),
                report::human::render(report, colour)
            ),
            Format::Human => report::human::render(report, colour),
            Format::Sarif => report::sarif::render(report),
            Format::Junit => report::junit::render(report),
            Format::Markdown => report::markdown::render(report),
            Format::Github => report::github::render(report),
        };
        match output {
            Some(path) => evalock::source::atomic::write_atomic(path, text.as_bytes()),
            None => {
                out!("{text}");
                Ok(())
            }
        }
    }

    /// Workflow commands go to standard output (Actions reads them there); what was
    /// posted and what failed go to standard error.
    pub fn github_outcome(&self, outcome: &evalock::github::Outcome) {
        if let Some(commands) = &outcome.workflow_commands {
            out!("{commands}");
        }
        for note in &outcome.notes {
            errln!("note: {note}");
        }
        for problem in &outcome.problems {
            self.error(problem);
        }
        if let Some(posted) = &outcome.posted {
            errln!(
                "posted {} inline and {} file comment(s); {} already on the pull request; {} in the summary; resolved {}, deleted {}, left {} with replies; summary comment {}",
                posted.inline,
                posted.file_level,
                posted.already_posted,
                posted.in_summary,
                posted.resolved,
                posted.deleted,
                posted.kept_for_humans,
                match posted.summary {
                    evalock::github::SummaryAction::Created => "created",
                    evalock::github::SummaryAction::Updated => "updated",
                    evalock::github::SummaryAction::Unchanged => "unchanged",
                    evalock::github::SummaryAction::None => "not written",
                }
            );
        }
        if let Some(reason) = &outcome.fallback_reason {
            let written = if outcome.step_summary_written {
                " and the step summary"
            } else {
                ""
            };
            errln!("not posted ({reason}): findings are in the annotations above{written}");
        }
    }

    pub fn init_summary(&self, outcome: &InitOutcome) {
        outln!("wrote evalock.toml");
        for (suite, files) in &outcome.suites {
            outln!("  suite {suite}: {}", files.join(", "));
            if let Some(detected) = files.first().and_then(|file| outcome.identified.get(file)) {
                outln!(
                    "    records without `id`, read as {}: identified by `id = {}`",
                    detected.shape,
                    detected.rule
                );
            }
        }
        if outcome.suites.is_empty() {
            outln!("  no case files found: add a [[suite]] by hand");
        }
        if !outcome.prompts.is_empty() {
            outln!("  prompts found: {}", outcome.prompts.join(", "));
        }
        for (id, version) in &outcome.graders {
            outln!("  grader {id}: version {version:?}, the `grader_version` its cases pin");
        }
        for root in &outcome.skill_roots {
            outln!("  skills: {root}");
        }
        for marketplace in &outcome.marketplaces {
            outln!("  skills listed by: {marketplace}");
        }
        for config in &outcome.mcp_configs {
            outln!("  tool servers: {config}");
        }
        // Many files left out for one reason (a folder of mock responses) read as a few
        // and a count.
        let mut by_reason: std::collections::BTreeMap<(&str, String), Vec<&str>> =
            std::collections::BTreeMap::new();
        for skipped in &outcome.skipped {
            let reason = match skipped.reason.split_once(" records hold no case field") {
                Some((_, rest)) => format!("its records hold no case field{rest}"),
                None => skipped.reason.clone(),
            };
            by_reason
                .entry((skipped.kind, reason))
                .or_default()
                .push(skipped.path.as_str());
        }
        for ((kind, reason), paths) in &by_reason {
            const SHOWN: usize = 3;
            for path in paths.iter().take(if paths.len() > SHOWN + 1 {
                SHOWN
            } else {
                paths.len()
            }) {
                errln!("note: skipped {kind} `{}`: {reason}", path.escape_debug());
            }
            if paths.len() > SHOWN + 1 {
                errln!(
                    "note: skipped {} more {kind}s for the same reason",
                    paths.len() - SHOWN
                );
            }
        }
        if !outcome.adopted.is_empty() {
            let total: usize = outcome.adopted.values().sum();
            let per_rule: Vec<String> = outcome
                .adopted
                .iter()
                .map(|(rule, count)| format!("{} ×{count}", rule.id()))
                .collect();
            outln!(
                "  adopted {total} finding{} present today as debt in [debt] ({}): `evalock check` passes with a warning, and `evalock debt` lists them",
                if total == 1 { "" } else { "s" },
                per_rule.join(", ")
            );
        }
        for path in &outcome.without_ids {
            errln!(
                "note: left out `{}`: its records have no `id` (as datasets of promptfoo, OpenAI evals or deepeval); give each a stable string `id`, then run `evalock init --force`",
                path.escape_debug()
            );
        }
        outln!("next: review evalock.toml, then run `evalock lock` and commit both files");
    }

    /// `evalock debt`: adopted findings grouped by rule, then what no longer applies.
    pub fn debt(
        &self,
        outcome: &evalock::commands::DebtOutcome,
        format: crate::args::DebtFormat,
    ) -> evalock::Result<()> {
        let adopted = &outcome.gated.adopted;
        if format == crate::args::DebtFormat::Json {
            let stale: Vec<serde_json::Value> = outcome
                .gated
                .stale
                .iter()
                .map(|entry| {
                    serde_json::json!({
                        "rule": entry.rule_id().map_or(entry.rule.get_ref().as_str(), |rule| rule.id()),
                        "path": entry.path,
                        "fingerprint": entry.fingerprint,
                        "line": entry.line,
                    })
                })
                .collect();
            let document = serde_json::json!({
                "schema": "evalock.debt/v1",
                "entries": outcome.entries,
                "adopted": adopted,
                "stale": stale,
                "returned": outcome.returned,
            });
            outln!(
                "{}",
                serde_json::to_string_pretty(&document).unwrap_or_default()
            );
            return Ok(());
        }
        if outcome.entries == 0 {
            outln!("no adopted debt: evalock.toml has no `[debt]` entries");
            return Ok(());
        }
        let mut by_rule: BTreeMap<evalock::RuleId, Vec<&evalock::Finding>> = BTreeMap::new();
        for finding in adopted {
            by_rule.entry(finding.rule).or_default().push(finding);
        }
        for (rule, findings) in &by_rule {
            outln!("{} {} ({} adopted)", rule.id(), rule.name(), findings.len());
            let mut by_subject: BTreeMap<String, Vec<&evalock::Finding>> = BTreeMap::new();
            for finding in findings {
                let subject = finding
                    .subject
                    .skill
                    .clone()
                    .or_else(|| finding.subject.suite.as_deref().map(str::to_owned))
                    .or_else(|| finding.subject.grader.clone())
                    .or_else(|| finding.subject.server.clone())
                    .unwrap_or_default();
                by_subject.entry(subject).or_default().push(finding);
            }
            for (subject, findings) in by_subject {
                if !subject.is_empty() {
                    outln!("  {subject}");
                }
                for finding in findings {
                    let at = finding
                        .location
                        .as_ref()
                        .map(|location| location.display())
                        .unwrap_or_default();
                    outln!("    {at}: {}", finding.message);
                }
            }
        }
        if !outcome.gated.stale.is_empty() {
            outln!(
                "{} {} of [debt] in evalock.toml cover no finding any more (fixed, or the file changed and the finding is judged again): delete them",
                outcome.gated.stale.len(),
                if outcome.gated.stale.len() == 1 { "entry" } else { "entries" }
            );
            for entry in &outcome.gated.stale {
                outln!(
                    "  evalock.toml:{}: {} {}",
                    entry.line,
                    entry.rule.get_ref(),
                    entry.path
                );
            }
        }
        for finding in &outcome.returned {
            let at = finding
                .location
                .as_ref()
                .map(|location| location.display())
                .unwrap_or_default();
            outln!(
                "back: {at}: {} {}: {}",
                finding.rule.id(),
                finding.rule.name(),
                finding.message
            );
        }
        outln!(
            "{} adopted {} in {} {}",
            adopted.len(),
            if adopted.len() == 1 {
                "finding"
            } else {
                "findings"
            },
            outcome.entries,
            if outcome.entries == 1 {
                "entry"
            } else {
                "entries"
            }
        );
        Ok(())
    }

    /// A rendered document on standard output, as it is (a closed pipe ends it quietly).
    pub fn text(&self, text: &str) {
        out!("{text}");
    }

    /// After a run whose baselines were recorded against another context (EL401): what
    /// the swap did to each behaviour, on standard error, before anything is re-recorded.
    pub fn drifted_matrix(&self, comparison: &evalock::run::compare::Comparison) {
        use evalock::run::compare::Verdict;
        let mark = |held: Option<bool>| match held {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "-",
        };
        let tally: Vec<String> = comparison
            .tally()
            .iter()
            .map(|(verdict, count)| format!("{count} {}", verdict.as_str()))
            .collect();
        errln!(
            "against last-good recorded in another context (EL401), this run: {}",
            tally.join(", ")
        );
        for change in &comparison.contexts_differ {
            errln!("  contexts differ: {change}");
        }
        for case in &comparison.cases {
            for row in case
                .behaviours
                .iter()
                .filter(|row| row.verdict != Verdict::Same)
            {
                errln!(
                    "  {}/{}  {}  {} -> {}  {}",
                    case.suite,
                    case.case_id,
                    row.behaviour,
                    mark(row.old),
                    mark(row.new),
                    row.verdict.as_str()
                );
            }
        }
        errln!("  (`evalock compare --base HEAD` shows the whole matrix; re-record with `evalock accept --reason \"…\"` once it reads right)");
    }

    /// `evalock compare`: the behaviour matrix of every case that changed, then counts.
    pub fn comparison(
        &self,
        comparison: &evalock::run::compare::Comparison,
        format: crate::args::CompareFormat,
        code: i32,
    ) -> evalock::Result<()> {
        use evalock::run::compare::Verdict;
        let mark = |held: Option<bool>| match held {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "-",
        };
        let tally = |tally: &evalock::run::compare::Tally| {
            tally
                .iter()
                .map(|(verdict, count)| format!("{count} {}", verdict.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let verdict = if code == 0 { "PASS" } else { "BLOCK" };
        match format {
            crate::args::CompareFormat::Json => {
                let mut document = serde_json::to_value(comparison).unwrap_or_default();
                document["verdict"] = serde_json::Value::from(verdict);
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&document).unwrap_or_default()
                );
            }
            // The caller prints SARIF from the comparison's findings.
            crate::args::CompareFormat::Sarif => {}
            crate::args::CompareFormat::Markdown => {
                outln!("## evalock compare: {verdict}\n");
                outln!("{} → {}\n", comparison.old, comparison.new);
                for change in &comparison.contexts_differ {
                    outln!("- {change}");
                }
                outln!(
                    "\n| case | behaviour | old | new | verdict |\n| --- | --- | --- | --- | --- |"
                );
                for case in comparison
                    .cases
                    .iter()
                    .filter(|case| case.verdict != Verdict::Same || !case.breaches.is_empty())
                {
                    for behaviour in case
                        .behaviours
                        .iter()
                        .filter(|row| row.verdict != Verdict::Same)
                    {
                        outln!(
                            "| {}/{}{} | {} | {} | {} | **{}** |",
                            case.suite,
                            evalock::report::markdown_escape(&case.case_id),
                            if case.critical { " (critical)" } else { "" },
                            evalock::report::markdown_escape(&behaviour.behaviour),
                            mark(behaviour.old),
                            mark(behaviour.new),
                            behaviour.verdict.as_str()
                        );
                    }
                    for breach in &case.breaches {
                        outln!(
                            "| {}/{} | {} | {} | {} | **BREACH** |",
                            case.suite,
                            evalock::report::markdown_escape(&case.case_id),
                            breach.channel,
                            breach.old,
                            breach.new
                        );
                    }
                }
                outln!();
                for (suite, rate) in &comparison.rates {
                    outln!("- suite `{suite}`: {}", rate.describe());
                }
                outln!("\n{}", tally(&comparison.tally()));
            }
            crate::args::CompareFormat::Human => {
                outln!("evalock compare: {} -> {}", comparison.old, comparison.new);
                for change in &comparison.contexts_differ {
                    outln!("  contexts differ: {change}");
                }
                let mut header = false;
                for case in &comparison.cases {
                    let rows: Vec<_> = case
                        .behaviours
                        .iter()
                        .filter(|row| row.verdict != Verdict::Same)
                        .collect();
                    if rows.is_empty() && case.breaches.is_empty() {
                        continue;
                    }
                    if !header {
                        outln!(
                            "\n  {:<40} {:<36} {:<5} {:<5} verdict",
                            "case",
                            "behaviour",
                            "old",
                            "new"
                        );
                        header = true;
                    }
                    let name = format!(
                        "{}/{}{}",
                        case.suite,
                        case.case_id,
                        if case.critical { " (critical)" } else { "" }
                    );
                    for row in rows {
                        outln!(
                            "  {:<40} {:<36} {:<5} {:<5} {}",
                            name,
                            row.behaviour,
                            mark(row.old),
                            mark(row.new),
                            row.verdict.as_str()
                        );
                    }
                    for breach in &case.breaches {
                        outln!(
                            "  {:<40} {:<36} {:<5} {:<5} BREACH (+{:.0} % allowed)",
                            name,
                            breach.channel,
                            breach.old,
                            breach.new,
                            breach.slack * 100.0
                        );
                    }
                    outln!("    at {}:{}", case.file, case.line);
                }
                outln!();
                for (suite, counts) in &comparison.per_suite {
                    match comparison.rates.get(suite) {
                        Some(rate) => {
                            outln!("  suite {suite}: {}; {}", tally(counts), rate.describe())
                        }
                        None => outln!("  suite {suite}: {}", tally(counts)),
                    }
                }
                for (stratum, counts) in &comparison.per_stratum {
                    outln!("  stratum {stratum}: {}", tally(counts));
                }
                let stable: Vec<String> = comparison
                    .stable
                    .iter()
                    .map(|(channel, (stable, total))| format!("{channel} {stable}/{total} stable"))
                    .collect();
                if !stable.is_empty() {
                    outln!("  {}", stable.join(", "));
                }
                outln!(
                    "evalock compare: {verdict} ({})",
                    tally(&comparison.tally())
                );
            }
        }
        Ok(())
    }

    /// One line of `--verbose`, on standard error.
    pub fn verbose(&self, text: &str) {
        errln!("evalock: {text}");
    }

    /// One line on standard error when the project's evalock.toml names nothing to pin,
    /// so a PASS is not read as "everything checked"; the exit code is unchanged.
    pub fn note_if_nothing_configured(&self, project_root: &Path) {
        let Ok(bytes) = std::fs::read(project_root.join(CONFIG_FILE)) else {
            return;
        };
        // A `[[suite]]` table guards something: no second parse of a large config.
        let has_a_suite = bytes
            .split(|byte| *byte == b'\n')
            .any(|line| line.trim_ascii_start().starts_with(b"[[suite]]"));
        if !has_a_suite
            && Config::parse(CONFIG_FILE, &bytes).is_ok_and(|config| config.guards_nothing())
        {
            errln!("note: {CONFIG_FILE} configures no suite, grader or skill, so evalock pins and checks nothing: add a `[[suite]]` with `name` and `cases` (or `[skills]` with `roots`), or run `evalock init --force` to detect them");
        }
    }

    pub fn lock_summary(&self, outcome: &LockOutcome) {
        outln!("{}", lock_state(outcome));
        self.lock_remaining(outcome);
    }

    /// What `evalock check` still refuses after a successful `lock`, on standard error
    /// whatever the format. `lock` exits 0 because the lock was written; its last line
    /// says so and what still blocks the gate, never a BLOCK verdict of its own that the
    /// exit code would contradict.
    pub fn lock_remaining(&self, outcome: &LockOutcome) {
        if outcome.remaining.is_empty() {
            return;
        }
        let refuses = outcome
            .remaining
            .iter()
            .any(|finding| finding.severity == evalock::Severity::Refuse);
        let (verb, code) = if refuses {
            ("refuses", 2)
        } else {
            ("fails on", 1)
        };
        err!("{}", self.project_folder_note(self.colour_stderr));
        errln!("but `evalock check` still {verb} what no lock can pin:");
        let report = Report::new(
            "check",
            outcome.report.source.clone(),
            None,
            outcome.remaining.clone(),
        );
        errln!(
            "{}",
            report::human::render_findings(&report, self.colour_stderr)
        );
        let count = outcome.remaining.len();
        errln!(
            "evalock lock ({}): {}; `evalock check` still {verb} {count} finding{} above (exit {code}) until they are fixed",
            outcome.report.source,
            lock_state(outcome),
            if count == 1 { "" } else { "s" },
        );
    }

    /// The seed article's lines (`FAIL  provenance   …`), each WARN or FAIL followed by
    /// the findings behind it; a `== path (name)` header when several skills are audited.
    pub fn skills_audit(&self, outcome: &AuditOutcome) {
        let sections = outcome.skills.iter().map(|skill| {
            let lines = skill
                .lines
                .iter()
                .map(|line| (line.status, line.headline(), line.findings.as_slice()))
                .collect();
            (format!("{} ({})", skill.path, skill.name), lines)
        });
        self.audit_sections(sections.collect(), &outcome.other);
    }

    /// `mcp audit`: the lines of each server under a `== config: name` header.
    pub fn mcp_audit(&self, outcome: &evalock::mcp::audit::Outcome) {
        let sections = outcome.servers.iter().map(|server| {
            let lines = server
                .lines
                .iter()
                .map(|line| (line.status, line.headline(), line.findings.as_slice()))
                .collect();
            (format!("{}: {}", server.config, server.name), lines)
        });
        let sections: Vec<_> = sections.collect();
        if sections.is_empty() && outcome.other.is_empty() {
            outln!("no tool server found: name configuration files, or list them under `[mcp] configs`");
        }
        self.audit_sections(sections, &outcome.other);
    }

    /// Audit lines, each WARN or FAIL followed by the findings behind it, under a header
    /// per section when there are several; then the findings of no section.
    fn audit_sections(
        &self,
        sections: Vec<(String, Vec<AuditRow<'_>>)>,
        other: &[evalock::Finding],
    ) {
        let paint = |style: &str, text: &str| {
            if self.colour_stdout {
                format!("{style}{text}\x1b[0m")
            } else {
                text.to_owned()
            }
        };
        let several = sections.len() > 1;
        for (index, (header, lines)) in sections.iter().enumerate() {
            if several {
                if index > 0 {
                    outln!();
                }
                outln!("{}", paint("\x1b[1m", &format!("== {header}")));
            }
            for (level, headline, findings) in lines {
                let style = match level {
                    AuditStatus::Pass => "\x1b[32m",
                    AuditStatus::Debt => "\x1b[36m",
                    AuditStatus::Warn => "\x1b[33m",
                    AuditStatus::Fail => "\x1b[1;31m",
                };
                let (status, rest) = headline.split_at(5);
                outln!("{}{rest}", paint(style, status));
                // Debt is listed by `evalock debt`; here its line says so and no more.
                if *level == AuditStatus::Debt {
                    continue;
                }
                for finding in *findings {
                    print_audit_finding(finding);
                }
            }
        }
        if !other.is_empty() {
            outln!();
            for finding in other {
                print_audit_finding(finding);
            }
        }
    }

    /// A one-line progress bar on standard error when it is a terminal; nothing otherwise.
    pub fn progress_bar(&self) -> ProgressBar {
        ProgressBar {
            enabled: std::io::stderr().is_terminal(),
            drawn: std::sync::Mutex::new(0),
        }
    }

    /// The tally of a run (or merge) and its next step. `project` is the folder whose
    /// `.evalock/results.json` `review` and `accept` read when started where this command
    /// was (`None`: no project there, so the next step always names the file).
    pub fn run_summary(&self, outcome: &RunOutcome, project: Option<&Path>) {
        let counts: Vec<String> = outcome
            .results
            .counts
            .iter()
            .map(|(status, count)| format!("{count} {status}"))
            .collect();
        let tally = if counts.is_empty() {
            "no cases ran".to_owned()
        } else {
            counts.join(", ")
        };
        err!("{}", self.project_folder_note(self.colour_stderr));
        errln!(
            "{} {}: {tally}; results in {}",
            outcome.results.cases.len(),
            if outcome.results.cases.len() == 1 {
                "case"
            } else {
                "cases"
            },
            outcome.results_path.display()
        );
        if !outcome.results.strata.is_empty() {
            let strata: Vec<String> = outcome
                .results
                .strata
                .iter()
                .map(|(name, rate)| format!("{name} {}/{}", rate.pass, rate.pass + rate.fail))
                .collect();
            errln!("strata (passing/judged): {}", strata.join(", "));
        }
        if let Some(stable) = evalock::run::envelope::stable_summary(&outcome.results.cases) {
            errln!("against last-good: {stable}");
        }
        for (suite, noise) in &outcome.results.noise {
            errln!(
                "noise floor of suite {suite}: A/A {:+.1} points [{:+.1}, {:+.1}] over {} cases, {} repeats: changes under {:.1} points are within noise; {} flaky",
                noise.delta,
                noise.low,
                noise.high,
                noise.cases,
                noise.repeats,
                noise.mde,
                noise.flaky
            );
        }
        use evalock::run::results::{BaselineUse, Status};
        let cases = &outcome.results.cases;
        let reviewable = cases.iter().any(|case| {
            matches!(
                case.status,
                Status::Moved | Status::Regressed | Status::Improved
            )
        });
        // Passing cases without a baseline yet: `accept` records them (nothing to review).
        let new = cases
            .iter()
            .any(|case| case.status.is_passing() && case.baseline == BaselineUse::Missing);
        // `review` and `accept` read `.evalock/results.json` unless told otherwise.
        let from = from_option(&outcome.results_path, project);
        if reviewable {
            errln!("next: `evalock review{from}` shows every moved completion; `evalock accept{from} --reason \"…\"` records passing ones");
        } else if new {
            errln!("next: `evalock accept{from} --reason \"…\"` records the passing cases that have no baseline yet");
        }
    }

    pub fn accept_summary(&self, outcome: &AcceptOutcome) {
        err!("{}", self.project_folder_note(self.colour_stderr));
        for suite in &outcome.suites {
            if suite.recorded.is_empty() && suite.dropped.is_empty() && suite.noise_floor.is_none()
            {
                errln!(
                    "{}: {} unchanged, nothing to write",
                    suite.path,
                    suite.unchanged
                );
                continue;
            }
            errln!(
                "wrote {}: {} recorded, {} unchanged, {} dropped",
                suite.path,
                suite.recorded.len(),
                suite.unchanged,
                suite.dropped.len()
            );
            for id in &suite.recorded {
                errln!("  recorded {}/{id}", suite.suite);
            }
            for id in &suite.dropped {
                errln!("  dropped {}/{id} (no such active case)", suite.suite);
            }
            if let Some(floor) = suite.noise_floor {
                errln!(
                    "  recorded the noise floor of suite {}: changes under {floor:.1} points are within noise",
                    suite.suite
                );
            }
        }
        for skipped in &outcome.skipped {
            errln!("  skipped {skipped}: only passing cases are accepted");
        }
        for suite in &outcome.gone_suites {
            errln!(
                "  skipped suite `{suite}`: it ran, but evalock.toml has no such suite any more (renamed or removed); run `evalock run` again to accept under the new name"
            );
        }
        if outcome.suites.is_empty() && outcome.gone_suites.is_empty() {
            errln!("nothing to accept: no suite in the results has a `baseline` file");
        } else if outcome.suites.is_empty() {
            errln!("nothing to accept: no suite of the results is still in evalock.toml");
        }
    }

    pub fn review(&self, items: &[ReviewItem], from: &Path) {
        if items.is_empty() {
            outln!("nothing moved, regressed or improved in {}", from.display());
            return;
        }
        for item in items {
            outln!(
                "{} {}/{} ({})",
                item.status,
                item.suite,
                item.case_id,
                item.at
            );
            if !item.reasons.is_empty() {
                outln!(
                    "  reasons: {}",
                    evalock::text::visible_controls(&item.reasons.join(", "))
                );
            }
            if let Some(trajectory) = &item.trajectory {
                outln!("  trajectory: {trajectory}");
            }
            if let Some(note) = &item.note {
                outln!("  note: {note}");
            }
            match &item.diff {
                Some(diff) => out!("{diff}"),
                None => outln!("  (no diff)"),
            }
            outln!();
        }
    }

    pub fn rules(&self, rule: Option<&str>, markdown: bool) -> evalock::Result<()> {
        if let Some(text) = rule {
            let rule_id = RuleId::parse(text).ok_or_else(|| {
                evalock::Error::Usage(format!(
                    "unknown rule `{text}`: `evalock rules` lists them all"
                ))
            })?;
            let row = rule_id.rule();
            outln!(
                "{} {} ({})\n\n{}.\n\nfix: {}",
                row.id,
                row.name,
                row.severity,
                row.summary,
                row.help
            );
            return Ok(());
        }
        if markdown {
            out!("{}", evalock::rules::markdown_table());
        } else {
            for row in RULES {
                outln!(
                    "{}  {:<28} {:<7} {}",
                    row.id,
                    row.name,
                    row.severity.as_str(),
                    row.summary
                );
            }
        }
        Ok(())
    }

    pub fn hook_outcome(&self, outcome: &HookOutcome) {
        for hook in &outcome.hooks {
            let (name, path) = (hook.name, hook.path.display());
            match &hook.change {
                HookChange::Installed => outln!("installed evalock's {name} hook: {path}"),
                HookChange::Updated => outln!("updated evalock's {name} hook: {path}"),
                HookChange::Unchanged => outln!("evalock's {name} hook is up to date: {path}"),
                HookChange::Chained { kept } => outln!(
                    "installed evalock's {name} hook: {path}\n  the {name} hook that was there runs first, from {}",
                    kept.display()
                ),
                HookChange::Replaced { kept } => outln!(
                    "installed evalock's {name} hook: {path}\n  the {name} hook that was there no longer runs; it is kept at {} and `evalock hook uninstall` puts it back",
                    kept.display()
                ),
                HookChange::Removed => outln!("removed evalock's {name} hook: {path}"),
                HookChange::Restored { from } => {
                    outln!("removed evalock's {name} hook and put back the one that was there: {path} (from {})", from.display())
                }
                HookChange::NotInstalled => outln!("no {name} hook to remove: {path}"),
                HookChange::Foreign => outln!("{path} is not evalock's hook: left alone"),
            }
        }
        let installed = outcome.hooks.iter().any(|hook| {
            matches!(
                hook.change,
                HookChange::Installed
                    | HookChange::Updated
                    | HookChange::Unchanged
                    | HookChange::Chained { .. }
                    | HookChange::Replaced { .. }
            )
        });
        if installed {
            outln!("next: every commit now runs `evalock check --staged`; to skip it once: `git commit --no-verify`");
        }
    }
}

/// `      EL206 path:line: message` and its fix, indented under an audit line.
fn print_audit_finding(finding: &evalock::Finding) {
    let message = match &finding.location {
        // Most skill messages start with the file they are about; say it once, with the
        // line and column the message itself may not carry (`SKILL.md: invalid front
        // matter` is about one line of it).
        Some(location) => match finding.message.strip_prefix(location.path.as_str()) {
            Some(rest) if !starts_with_line_number(rest) => {
                format!("{}{rest}", location.display())
            }
            Some(_) => finding.message.clone(),
            None => format!("{}: {}", location.display(), finding.message),
        },
        None => finding.message.clone(),
    };
    outln!("      {} {message}", finding.rule.id());
    outln!("        fix: {}", finding.help);
    for line in finding.detail.iter().flat_map(|detail| detail.lines()) {
        outln!("          {line}");
    }
}

/// `:12 matches …`: the message already names the line after its path.
fn starts_with_line_number(rest: &str) -> bool {
    rest.strip_prefix(':')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// A single status line, redrawn in place; only on a terminal. Workers finish out of
/// order, so only a step beyond the last one drawn is drawn.
pub struct ProgressBar {
    enabled: bool,
    drawn: std::sync::Mutex<usize>,
}

impl ProgressBar {
    pub fn update(&self, done: usize, total: usize, label: &str) {
        if !self.enabled || total == 0 {
            return;
        }
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        if done <= *drawn {
            return;
        }
        *drawn = done;
        const WIDTH: usize = 24;
        let filled = done * WIDTH / total;
        let bar = format!("{}{}", "#".repeat(filled), "-".repeat(WIDTH - filled));
        let label: String = label.chars().take(48).collect();
        err!("\r\x1b[2K[{bar}] {done}/{total} {label}");
    }

    pub fn finish(&self) {
        if self.enabled {
            err!("\r\x1b[2K");
        }
    }
}

/// `wrote evalock.lock` or `evalock.lock is up to date`.
fn lock_state(outcome: &LockOutcome) -> &'static str {
    if outcome.written {
        "wrote evalock.lock"
    } else {
        "evalock.lock is up to date"
    }
}

/// ` --from FILE` for a results file other than the one `review` and `accept` read by
/// default (`.evalock/results.json` in `project`), as an absolute path, quoted for a POSIX
/// shell when it needs to be; empty for the default.
fn from_option(results: &Path, project: Option<&Path>) -> String {
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let results = absolute(results);
    let default =
        project.map(|project| absolute(&project.join(evalock::run::results::DEFAULT_RESULTS_PATH)));
    if default.as_ref() == Some(&results) {
        return String::new();
    }
    format!(
        " --from {}",
        evalock::text::shell_word(&results.display().to_string())
    )
}

/// `project` as a relative path from `started` (`evals`, `..`, `../other`); `None` when
/// they are the same folder.
fn relative_folder(started: &Path, project: &Path) -> Option<String> {
    if started == project {
        return None;
    }
    let common = started
        .components()
        .zip(project.components())
        .take_while(|(left, right)| left == right)
        .count();
    if common == 0 {
        return Some(project.display().to_string());
    }
    let ups = started.components().count() - common;
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_owned(), ups).collect();
    parts.extend(
        project
            .components()
            .skip(common)
            .map(|part| part.as_os_str().to_string_lossy().into_owned()),
    );
    Some(parts.join("/"))
}

impl Printer {
    /// `calibrate`: per suite, the figures with their intervals and the verdict.
    pub fn changelog(
        &self,
        changelog: &evalock::commands::changelog::Changelog,
        format: crate::args::ChangelogFormat,
    ) -> evalock::Result<()> {
        match format {
            crate::args::ChangelogFormat::Json => {
                let text = serde_json::to_string_pretty(changelog)
                    .map_err(|error| evalock::Error::Internal(error.to_string()))?;
                outln!("{text}");
            }
            crate::args::ChangelogFormat::Markdown => {
                out!(
                    "{}",
                    evalock::commands::changelog::markdown::render(changelog)
                );
            }
        }
        Ok(())
    }

    /// One line on standard error.
    pub fn note(&self, note: &str) {
        errln!("note: {note}");
    }

    pub fn calibration(
        &self,
        outcomes: &[evalock::commands::calibrate::SuiteCalibration],
        format: crate::args::CalibrateFormat,
    ) -> evalock::Result<()> {
        if format == crate::args::CalibrateFormat::Json {
            let text = serde_json::to_string_pretty(outcomes)
                .map_err(|error| evalock::Error::Internal(error.to_string()))?;
            outln!("{text}");
            return Ok(());
        }
        use evalock::graders::calibration::{Rate, MIN_AGREEMENT, MIN_KAPPA, MIN_LABELS};
        let shown = |rate: &Option<Rate>| match rate {
            Some(rate) => format!("{:.2} [{:.2}, {:.2}]", rate.value, rate.low, rate.high),
            None => "–".to_owned(),
        };
        for outcome in outcomes {
            let c = &outcome.calibration;
            let counts = &c.counts;
            outln!(
                "evalock calibrate: suite {}, grader {}, {} labels from {}",
                outcome.suite,
                outcome.grader,
                counts.n(),
                outcome.labels
            );
            outln!("  agreement       {}", shown(&c.agreement));
            outln!("  kappa           {}", shown(&c.kappa));
            outln!(
                "  false success   {}  (the grader passes {} of the {} completions people failed)",
                shown(&c.false_success),
                counts.fp,
                counts.fp + counts.tn
            );
            outln!(
                "  false failure   {}  (the grader fails {} of the {} completions people passed)",
                shown(&c.false_failure),
                counts.fn_,
                counts.fn_ + counts.tp
            );
            match c.below_floor.is_empty() {
                true => outln!(
                    "  calibrated: meets the floors ({MIN_LABELS} labels, agreement {MIN_AGREEMENT}, kappa {MIN_KAPPA})"
                ),
                false => outln!("  uncalibrated: {}", c.below_floor.join("; ")),
            }
        }
        Ok(())
    }
}

/// One audit line: its level, its text and the findings behind it.
type AuditRow<'a> = (AuditStatus, String, &'a [evalock::Finding]);
