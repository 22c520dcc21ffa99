//! `evalock mcp audit`: a PASS/WARN/FAIL line per criterion for each server, in the
//! style of `skills audit`.

use super::rules::{check, Side};
use super::McpSet;
use crate::digest::Digest;
use crate::finding::Finding;
use crate::project::config::{Config, McpConfig};
use crate::project::lock::Lock;
use crate::rules::{RuleId, Severity};

/// PASS, WARN or FAIL, as `skills audit` says them.
pub use crate::skills::audit::AuditStatus as Status;

/// One criterion of one server.
#[derive(Debug, Clone)]
pub struct Line {
    pub status: Status,
    pub criterion: &'static str,
    pub message: String,
    pub findings: Vec<Finding>,
}

impl Line {
    pub fn headline(&self) -> String {
        format!(
            "{:5} {:12} {}",
            self.status.as_str(),
            self.criterion,
            self.message
        )
    }
}

#[derive(Debug, Clone)]
pub struct ServerAudit {
    pub config: String,
    pub name: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub servers: Vec<ServerAudit>,
    /// Findings about no single server: files that could not be read.
    pub other: Vec<Finding>,
}

impl Outcome {
    pub fn failed(&self) -> bool {
        self.servers
            .iter()
            .flat_map(|server| &server.lines)
            .any(|line| line.status == Status::Fail)
            || self
                .other
                .iter()
                .any(|finding| finding.severity >= Severity::Error)
    }
}

/// The criteria, the rules behind each, and what a PASS says.
const CRITERIA: &[(&str, &[RuleId])] = &[
    ("launch", &[RuleId::McpLaunchUnpinned]),
    ("transport", &[RuleId::McpInsecureRemote]),
    ("secrets", &[RuleId::McpSecretInline]),
    ("lock", &[RuleId::McpLaunchDrift, RuleId::McpToolDrift]),
    (
        "tools",
        &[RuleId::McpHiddenInstructions, RuleId::McpToolShadowing],
    ),
];

/// What `[debt]` of evalock.toml covers, and how to read a project file's digest (for
/// entries of the earlier form).
pub type Debt<'a> = (&'a Config, &'a dyn Fn(&str) -> Option<Digest>);

/// Audits every server of `set` against `lock`; with `debt`, a line whose findings are
/// all adopted says DEBT.
pub fn audit(
    set: &McpSet,
    config: Option<&McpConfig>,
    lock: Option<&Lock>,
    source: &str,
    debt: Option<Debt<'_>>,
) -> Outcome {
    let side = Side {
        mcp: set,
        config,
        lock,
        source,
    };
    let mut findings = check(&side, None, false);
    if lock.is_none() {
        findings.retain(|finding| {
            !matches!(finding.rule, RuleId::McpLaunchDrift | RuleId::McpToolDrift)
        });
    }
    let adopted = match debt {
        Some((config, digest_of)) => crate::gate::take_adopted(&mut findings, config, digest_of),
        None => Vec::new(),
    };
    let mut outcome = Outcome::default();
    let mut claimed = vec![false; findings.len()];
    for server in &set.servers {
        let subject = server.subject();
        let mut lines = Vec::new();
        for (criterion, rules) in CRITERIA {
            let mine: Vec<Finding> = findings
                .iter()
                .enumerate()
                .filter(|(_, finding)| finding.subject == subject && rules.contains(&finding.rule))
                .map(|(index, finding)| {
                    claimed[index] = true;
                    finding.clone()
                })
                .collect();
            let owed: Vec<Finding> = adopted
                .iter()
                .filter(|finding| finding.subject == subject && rules.contains(&finding.rule))
                .cloned()
                .collect();
            let status = match mine.iter().map(|finding| finding.severity).max() {
                Some(Severity::Refuse | Severity::Error) => Status::Fail,
                Some(_) => Status::Warn,
                None if !owed.is_empty() => Status::Debt,
                None => Status::Pass,
            };
            let message = match (status, *criterion) {
                (Status::Pass, "launch") => match (&server.command, &server.url) {
                    (None, Some(_)) => {
                        format!("remote at {}: nothing starts here", server.launch_text())
                    }
                    _ if super::launch::fetches_at_start(server) => {
                        format!("pinned: {}", server.launch_text())
                    }
                    _ => format!("fetches nothing at start: {}", server.launch_text()),
                },
                (Status::Pass, "transport") => match &server.url {
                    Some(_) => "remote over TLS or on this machine".to_owned(),
                    None => "local process (stdio)".to_owned(),
                },
                (Status::Pass, "secrets") => match server.env.len() + server.headers.len() {
                    0 => "no environment or headers".to_owned(),
                    1 => "1 name, no credential written inline".to_owned(),
                    count => format!("{count} names, no credential written inline"),
                },
                (Status::Pass, "lock") if lock.is_none() => {
                    "not compared: no evalock.lock speaks for this file".to_owned()
                }
                (Status::Pass, "lock") => "matches evalock.lock".to_owned(),
                (Status::Pass, "tools") => match set.snapshot(&server.name) {
                    Some(snapshot) => format!(
                        "{} tools pinned from {}",
                        snapshot.tools.len(),
                        snapshot.path
                    ),
                    None => "no `tools/list` snapshot pinned: its descriptions can change unseen"
                        .to_owned(),
                },
                (Status::Debt, _) => format!(
                    "adopted as debt in evalock.toml ({} finding{}, `evalock debt` lists them): {}",
                    owed.len(),
                    if owed.len() == 1 { "" } else { "s" },
                    owed[0].message
                ),
                (_, _) => format!(
                    "{} finding{}",
                    mine.len(),
                    if mine.len() == 1 { "" } else { "s" }
                ),
            };
            let mine = match status {
                Status::Debt => owed,
                _ => mine,
            };
            let status = match (status, *criterion) {
                (Status::Pass, "tools") if set.snapshot(&server.name).is_none() => Status::Warn,
                (Status::Pass, "lock") if lock.is_none() => Status::Warn,
                (status, _) => status,
            };
            lines.push(Line {
                status,
                criterion,
                message,
                findings: mine,
            });
        }
        outcome.servers.push(ServerAudit {
            config: server.config.clone(),
            name: server.name.clone(),
            lines,
        });
    }
    outcome.other = findings
        .into_iter()
        .zip(claimed)
        .filter(|(_, claimed)| !claimed)
        .map(|(finding, _)| finding)
        .collect();
    outcome
}
