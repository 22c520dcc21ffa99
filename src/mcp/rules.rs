//! EL6xx: tool servers against their own launch, the lock and the base revision.

use super::{launch, tools, McpSet, Server, Snapshot};
use crate::finding::{Finding, Location, Subject};
use crate::project::config::{McpConfig, CONFIG_FILE};
use crate::project::lock::mcp::ServerLock;
use crate::project::lock::Lock;
use crate::rules::RuleId;

/// What the EL6xx rules read of one snapshot of the project.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub mcp: &'a McpSet,
    /// `[mcp]` of evalock.toml, when it has one.
    pub config: Option<&'a McpConfig>,
    pub lock: Option<&'a Lock>,
    /// `working tree`, `index`, `main (1a2b3c4)`.
    pub source: &'a str,
}

/// Every tool-server rule, and EL607 against the base when it had an `[mcp]` table.
/// `whole_project` also reports locked servers that are gone (an audit of some files
/// does not).
pub fn check(project: &Side<'_>, base: Option<&Side<'_>>, whole_project: bool) -> Vec<Finding> {
    let set = project.mcp;
    let mut findings = set.problems.clone();
    for server in &set.servers {
        findings.extend(launch::judge(server));
    }
    let server_names: Vec<&str> = set
        .servers
        .iter()
        .map(|server| server.name.as_str())
        .collect();
    for snapshot in &set.snapshots {
        let subject = snapshot_subject(set, snapshot);
        findings.extend(tools::hidden_instructions(snapshot, &subject));
        let others: Vec<&Snapshot> = set
            .snapshots
            .iter()
            .filter(|other| other.server != snapshot.server)
            .collect();
        findings.extend(tools::shadowing(snapshot, &subject, &others, &server_names));
    }
    findings.extend(unlisted(set));
    let empty = Lock::new();
    let lock = project.lock.unwrap_or(&empty);
    findings.extend(against_lock(set, lock, whole_project));
    if let Some(base) = base.filter(|base| base.config.is_some()) {
        findings.extend(against_base(set, base));
    }
    findings
}

/// EL610 for each configuration outside `[mcp] configs` that starts servers, and what
/// their launch is judged for (an unpinned package, a credential written inline): a
/// configuration nobody listed is where such a launch hides.
fn unlisted(set: &McpSet) -> Vec<Finding> {
    let mut findings = Vec::new();
    for config in &set.unlisted {
        let names: Vec<&str> = config
            .servers
            .iter()
            .map(|server| server.name.as_str())
            .collect();
        let line = config.servers.first().map_or(1, |server| server.line);
        let starts = match names.as_slice() {
            [] => "names other files that start tool servers".to_owned(),
            [one] => format!("starts tool server `{one}`"),
            several => format!(
                "starts tool servers {}",
                several
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        findings.push(
            Finding::new(
                RuleId::McpConfigUnlisted,
                Subject::default(),
                format!("{} {starts} when a client opens the project, but `[mcp] configs` does not name it: nothing pins what it launches", config.path),
            )
            .at(Location::line(&config.path, line))
            .help(format!(
                "add \"{}\" to `[mcp] configs` in evalock.toml and run `evalock lock`; or, if no client loads it (a template, a fixture), add it to `[mcp] exclude`",
                globset::escape(&config.path)
            ))
            .discriminator(&config.path),
        );
        for server in &config.servers {
            findings.extend(launch::judge(server));
        }
    }
    findings
}

/// The subject of a snapshot's findings: the first server of that name.
fn snapshot_subject(set: &McpSet, snapshot: &Snapshot) -> Subject {
    set.servers
        .iter()
        .find(|server| server.name == snapshot.server)
        .map_or_else(|| Subject::server("", &snapshot.server), Server::subject)
}

/// What differs between two launches, by part, with the line of the first.
fn launch_changes(
    server: &Server,
    now: &ServerLock,
    then: &ServerLock,
) -> Vec<(&'static str, u32)> {
    let mut changes = Vec::new();
    let line_of =
        |field: &Option<super::Field>| field.as_ref().map_or(server.line, |field| field.line);
    if now.transport != then.transport {
        changes.push(("transport", line_of(&server.transport)));
    }
    if now.command != then.command {
        changes.push(("command", line_of(&server.command)));
    }
    if now.args != then.args {
        let first = now
            .args
            .iter()
            .zip(&then.args)
            .position(|(a, b)| a != b)
            .unwrap_or(now.args.len().min(then.args.len()));
        let line = server
            .args
            .get(first)
            .or(server.args.last())
            .map_or(server.line, |arg| arg.line);
        changes.push(("arguments", line));
    }
    if now.url != then.url {
        changes.push(("URL", line_of(&server.url)));
    }
    if now.env != then.env {
        changes.push((
            "environment names",
            env_line(server, &now.env, &then.env, true),
        ));
    }
    if now.headers != then.headers {
        changes.push((
            "header names",
            env_line(server, &now.headers, &then.headers, false),
        ));
    }
    changes
}

/// The line of the first name in `now` that `then` lacks (of the server when a name went).
fn env_line(server: &Server, now: &[String], then: &[String], env: bool) -> u32 {
    let entries = if env { &server.env } else { &server.headers };
    now.iter()
        .find(|name| !then.contains(name))
        .and_then(|name| entries.iter().find(|entry| &entry.name == name))
        .map_or(server.line, |entry| entry.line)
}

/// EL605 and EL606: each server and tool against the lock.
fn against_lock(set: &McpSet, lock: &Lock, whole_project: bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    for server in &set.servers {
        let now = set.lock_entry(server);
        let Some(locked) = lock
            .mcp
            .get(&server.config)
            .and_then(|servers| servers.get(&server.name))
        else {
            findings.push(
                Finding::new(
                    RuleId::McpLaunchDrift,
                    server.subject(),
                    format!(
                        "server `{}` of {} is not in the lock",
                        server.name, server.config
                    ),
                )
                .at(server.at(server.line)),
            );
            continue;
        };
        let changes = launch_changes(server, &now, locked);
        if let Some((_, line)) = changes.first() {
            let parts: Vec<&str> = changes.iter().map(|(part, _)| *part).collect();
            findings.push(
                Finding::new(
                    RuleId::McpLaunchDrift,
                    server.subject(),
                    format!(
                        "server `{}` of {} changed its {} since it was locked: it now starts `{}`",
                        server.name,
                        server.config,
                        parts.join(", "),
                        server.launch_text()
                    ),
                )
                .at(server.at(*line)),
            );
        }
        findings.extend(tool_changes(
            set,
            server,
            &now,
            locked,
            RuleId::McpToolDrift,
            "since it was locked",
        ));
    }
    if whole_project {
        for (config, servers) in lock
            .mcp
            .iter()
            .filter(|(config, _)| !set.unreadable.contains(*config))
        {
            for name in servers.keys() {
                if set.server(config, name).is_none() {
                    findings.push(
                        Finding::new(
                            RuleId::McpLaunchDrift,
                            Subject::server(config, name),
                            format!("server `{name}` of {config} is locked, but no configuration starts it any more"),
                        )
                        .at(Location::file(config.clone()))
                        .help("if it was removed on purpose, run `evalock lock` to drop it"),
                    );
                }
            }
        }
    }
    findings
}

/// The tools of `server` that differ between `now` and `then`: new, described otherwise,
/// with another input schema, gone. Reported as `rule`, `when` says against what.
fn tool_changes(
    set: &McpSet,
    server: &Server,
    now: &ServerLock,
    then: &ServerLock,
    rule: RuleId,
    when: &str,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let snapshot = set.snapshot(&server.name);
    // Only the first server of a name reports its snapshot's tools.
    if set
        .servers
        .iter()
        .find(|candidate| candidate.name == server.name)
        .is_some_and(|first| first != server)
    {
        return findings;
    }
    let finding = |tool: &str, what: String, location: Location| {
        Finding::new(rule, server.subject(), what)
            .at(location)
            .discriminator(tool)
    };
    for (name, pins) in &now.tools {
        let tool = snapshot.and_then(|snapshot| snapshot.tool(name));
        let path = snapshot.map_or(CONFIG_FILE, |snapshot| snapshot.path.as_str());
        let line = |description: bool| {
            tool.map_or(1, |tool| {
                if description {
                    tool.description_line
                } else {
                    tool.line
                }
            })
        };
        match then.tools.get(name) {
            None => findings.push(finding(
                name,
                format!("server `{}` offers a new tool `{name}` {when}", server.name),
                Location::line(path, line(false)),
            )),
            Some(before) => {
                let mut what = Vec::new();
                if before.description != pins.description {
                    what.push("description");
                }
                if before.schema != pins.schema {
                    what.push("input schema");
                }
                if !what.is_empty() {
                    findings.push(finding(
                        name,
                        format!(
                            "tool `{name}` of server `{}` changed its {} {when}",
                            server.name,
                            what.join(" and ")
                        ),
                        Location::line(path, line(what[0] == "description")),
                    ));
                }
            }
        }
    }
    for name in then
        .tools
        .keys()
        .filter(|name| !now.tools.contains_key(*name))
    {
        let location = match snapshot {
            Some(snapshot) => Location::file(snapshot.path.clone()),
            None => Location::file(CONFIG_FILE),
        };
        findings.push(finding(
            name,
            format!("tool `{name}` of server `{}` is gone {when}", server.name),
            location,
        ));
    }
    findings
}

/// EL607: what a change adds to the servers the base revision started.
fn against_base(set: &McpSet, base: &Side<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let since = format!("compared with {}", base.source);
    for server in &set.servers {
        let now = set.lock_entry(server);
        let Some(base_server) = base.mcp.server(&server.config, &server.name) else {
            findings.push(
                Finding::new(
                    RuleId::McpServerChanged,
                    server.subject(),
                    format!(
                        "{} adds server `{}`, which {} did not start: it runs `{}`",
                        server.config,
                        server.name,
                        base.source,
                        server.launch_text()
                    ),
                )
                .at(server.at(server.line))
                .discriminator("added"),
            );
            continue;
        };
        let then = base.mcp.lock_entry(base_server);
        let mut changes = launch_changes(server, &now, &then);
        // Fewer names is no escalation: only grown environments and headers count.
        changes.retain(|(part, _)| match *part {
            "environment names" => now.env.iter().any(|name| !then.env.contains(name)),
            "header names" => now.headers.iter().any(|name| !then.headers.contains(name)),
            _ => true,
        });
        if let Some((_, line)) = changes.first() {
            let parts: Vec<String> = changes
                .iter()
                .map(|(part, _)| match *part {
                    "environment names" => {
                        format!("environment grew by {}", grown(&now.env, &then.env))
                    }
                    "header names" => {
                        format!("headers grew by {}", grown(&now.headers, &then.headers))
                    }
                    part => format!("{part} changed"),
                })
                .collect();
            findings.push(
                Finding::new(
                    RuleId::McpServerChanged,
                    server.subject(),
                    format!(
                        "server `{}` of {}: {} {since}; it now starts `{}`",
                        server.name,
                        server.config,
                        parts.join(", "),
                        server.launch_text()
                    ),
                )
                .at(server.at(*line))
                .discriminator("launch"),
            );
        }
        // A snapshot the base did not have pins more than before: nothing to compare.
        if then.snapshot.is_none() {
            continue;
        }
        let mut tools = tool_changes(set, server, &now, &then, RuleId::McpServerChanged, &since);
        // A tool gone is less for the model to be steered by: no approval needed.
        tools.retain(|finding| !finding.message.contains(" is gone "));
        findings.extend(tools);
    }
    findings
}

fn grown(now: &[String], then: &[String]) -> String {
    now.iter()
        .filter(|name| !then.contains(name))
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
