//! The servers one configuration file starts: `mcpServers` (Claude Code, Cursor, a
//! plugin's manifest), `servers` (VS Code) or `mcp.servers` (VS Code settings), each with
//! its launch and the line of every part of it.

use crate::finding::{Finding, Location, Subject};
use crate::rules::RuleId;
use crate::text::jsonc::{type_name, Document};
use jsonc_parser::ast::{Object, Value};
use std::fmt;

/// A string of the configuration and the line that writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub value: String,
    pub line: u32,
}

/// A value that may be a credential: held for the scan, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Secret(…)")
    }
}

/// An environment variable or header: its name, where it is written and its value when
/// the value is a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub line: u32,
    pub value: Option<Secret>,
}

/// One tool server as a configuration file starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The configuration file, project-relative.
    pub config: String,
    pub name: String,
    /// The line of the server's key.
    pub line: u32,
    pub transport: Option<Field>,
    pub command: Option<Field>,
    pub args: Vec<Field>,
    pub url: Option<Field>,
    pub env: Vec<Named>,
    pub headers: Vec<Named>,
}

impl Server {
    pub fn subject(&self) -> Subject {
        Subject::server(&self.config, &self.name)
    }

    pub fn at(&self, line: u32) -> Location {
        Location::line(&self.config, line)
    }

    /// The command line for messages: `npx -y @scope/server@1.2.3`, or the URL.
    pub fn launch_text(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => std::iter::once(command.value.as_str())
                .chain(self.args.iter().map(|arg| arg.value.as_str()))
                .map(super::secrets::redact)
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(url)) => super::secrets::redact(&url.value),
            (None, None) => String::new(),
        }
    }
}

/// What reading one configuration file found.
#[derive(Debug, Default)]
pub struct Parsed {
    pub servers: Vec<Server>,
    /// Other files a plugin manifest names for its servers (`"mcpServers": "./.mcp.json"`),
    /// project-relative, with the line that names them.
    pub references: Vec<(String, u32)>,
    /// EL601: what could not be read.
    pub problems: Vec<Finding>,
}

fn invalid(path: &str, line: u32, message: impl Into<String>) -> Finding {
    Finding::new(RuleId::McpConfigInvalid, Subject::default(), message)
        .at(Location::line(path, line))
}

/// Reads the servers of the configuration at `path` from its text.
pub fn parse(path: &str, text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let document = match Document::parse(text) {
        Ok(document) => document,
        Err(error) => {
            parsed.problems.push(
                Finding::new(
                    RuleId::McpConfigInvalid,
                    Subject::default(),
                    format!("{path} is not valid JSON: {}", error.message),
                )
                .at(Location::line(path, error.line).with_column(error.column))
                .discriminator("syntax"),
            );
            return parsed;
        }
    };
    let Value::Object(root) = &document.value else {
        parsed.problems.push(invalid(
            path,
            document.line(&document.value),
            format!(
                "{path} must hold a JSON object, not {}",
                type_name(&document.value)
            ),
        ));
        return parsed;
    };
    let nested = root.get_object("mcp");
    let tables = [
        root.get("mcpServers"),
        root.get("servers"),
        nested.and_then(|mcp| mcp.get("servers")),
    ];
    let mut any = false;
    for property in tables.into_iter().flatten() {
        any = true;
        read_table(path, &document, &property.value, &mut parsed);
    }
    // A plugin's `.mcp.json` may hold the servers themselves, without `mcpServers`.
    if !any && is_bare_server_map(root) {
        read_table(path, &document, &document.value, &mut parsed);
    }
    parsed
}

/// An object whose every value is an object that starts a server.
fn is_bare_server_map(root: &Object<'_>) -> bool {
    !root.properties.is_empty()
        && root
            .properties
            .iter()
            .all(|property| match &property.value {
                Value::Object(body) => ["command", "url", "type"]
                    .iter()
                    .any(|key| body.get(key).is_some()),
                _ => false,
            })
}

/// `mcpServers`: an object of servers, or (in a plugin manifest) the path of a file
/// that holds them, or a list of either.
fn read_table(path: &str, document: &Document<'_>, value: &Value<'_>, parsed: &mut Parsed) {
    match value {
        Value::Object(servers) => {
            for property in &servers.properties {
                let name = property.name.as_str().to_owned();
                let line = document.line(&property.name);
                match &property.value {
                    Value::Object(body) => match read_server(path, document, &name, line, body) {
                        Ok(server) => parsed.servers.push(server),
                        Err(problem) => parsed.problems.push(*problem),
                    },
                    other => parsed.problems.push(
                        invalid(
                            path,
                            line,
                            format!(
                                "server `{name}` must be an object, not {}",
                                type_name(other)
                            ),
                        )
                        .discriminator(&name),
                    ),
                }
            }
        }
        Value::StringLit(reference) => {
            let line = document.line(reference);
            match plugin_relative(path, &reference.value) {
                Some(target) => parsed.references.push((target, line)),
                None => parsed.problems.push(invalid(
                    path,
                    line,
                    format!(
                        "`mcpServers` names `{}`, which is not a path inside the plugin",
                        reference.value
                    ),
                )),
            }
        }
        Value::Array(items) => {
            for item in &items.elements {
                read_table(path, document, item, parsed);
            }
        }
        other => parsed.problems.push(invalid(
            path,
            document.line(other),
            format!(
                "the servers table must be an object of servers, not {}",
                type_name(other)
            ),
        )),
    }
}

/// A path a plugin manifest gives, resolved against the plugin's root (the folder above
/// `.claude-plugin/`, or the manifest's own folder).
fn plugin_relative(manifest: &str, reference: &str) -> Option<String> {
    let folder = manifest.rsplit_once('/').map_or("", |(folder, _)| folder);
    // `.claude-plugin/`, `.codex-plugin/`, …: the manifest's folder inside the plugin.
    let is_manifest_folder = |name: &str| name.starts_with('.') && name.ends_with("-plugin");
    let root = match folder.rsplit_once('/') {
        Some((root, name)) if is_manifest_folder(name) => root,
        None if is_manifest_folder(folder) => "",
        _ => folder,
    };
    let mut parts: Vec<&str> = root.split('/').filter(|part| !part.is_empty()).collect();
    for part in reference.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    crate::digest::validate_relative_path(&joined).ok()?;
    Some(joined)
}

fn read_server(
    path: &str,
    document: &Document<'_>,
    name: &str,
    line: u32,
    body: &Object<'_>,
) -> Result<Server, Box<Finding>> {
    let problem =
        |line: u32, message: String| Box::new(invalid(path, line, message).discriminator(name));
    let string_field = |key: &str| -> Result<Option<Field>, Box<Finding>> {
        match body.get(key) {
            None => Ok(None),
            Some(property) => match &property.value {
                Value::StringLit(literal) => Ok(Some(Field {
                    value: literal.value.to_string(),
                    line: document.line(literal),
                })),
                other => Err(problem(
                    document.line(other),
                    format!(
                        "server `{name}`: `{key}` must be a string, not {}",
                        type_name(other)
                    ),
                )),
            },
        }
    };
    let transport = string_field("type")?;
    let command = string_field("command")?;
    let url = string_field("url")?.or(string_field("serverUrl")?);
    let mut args = Vec::new();
    if let Some(property) = body.get("args") {
        let Value::Array(items) = &property.value else {
            return Err(problem(
                document.line(&property.value),
                format!(
                    "server `{name}`: `args` must be an array of strings, not {}",
                    type_name(&property.value)
                ),
            ));
        };
        for item in &items.elements {
            match item {
                Value::StringLit(literal) => args.push(Field {
                    value: literal.value.to_string(),
                    line: document.line(literal),
                }),
                other => {
                    return Err(problem(
                        document.line(other),
                        format!(
                            "server `{name}`: every argument must be a string, not {}",
                            type_name(other)
                        ),
                    ))
                }
            }
        }
    }
    let env = named(path, document, name, body, "env")?;
    let headers = named(path, document, name, body, "headers")?;
    if command.is_none() && url.is_none() {
        return Err(problem(
            line,
            format!("server `{name}` starts nothing: give it a `command` or a `url`"),
        ));
    }
    Ok(Server {
        config: path.to_owned(),
        name: name.to_owned(),
        line,
        transport,
        command,
        args,
        url,
        env,
        headers,
    })
}

/// `env` or `headers`: names with their lines, and values that are strings.
fn named(
    path: &str,
    document: &Document<'_>,
    name: &str,
    body: &Object<'_>,
    key: &str,
) -> Result<Vec<Named>, Box<Finding>> {
    let Some(property) = body.get(key) else {
        return Ok(Vec::new());
    };
    let Value::Object(entries) = &property.value else {
        return Err(Box::new(
            invalid(
                path,
                document.line(&property.value),
                format!(
                    "server `{name}`: `{key}` must be an object of names and values, not {}",
                    type_name(&property.value)
                ),
            )
            .discriminator(name),
        ));
    };
    let mut names: Vec<Named> = entries
        .properties
        .iter()
        .map(|entry| Named {
            name: entry.name.as_str().to_owned(),
            line: document.line(&entry.name),
            value: match &entry.value {
                Value::StringLit(literal) => Some(Secret(literal.value.to_string())),
                _ => None,
            },
        })
        .collect();
    names.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_keep_the_lines_of_their_parts() {
        let text = "{\n  // the team's servers\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"pkg@1.0.0\"],\n      \"env\": { \"TOKEN\": \"${TOKEN}\" },\n    },\n  },\n}\n";
        let parsed = parse(".mcp.json", text);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let server = &parsed.servers[0];
        assert_eq!((server.name.as_str(), server.line), ("github", 4));
        assert_eq!(server.args[1].line, 6);
        assert_eq!(server.env[0].name, "TOKEN");
        assert_eq!(format!("{:?}", server.env[0].value), "Some(Secret(…))");
    }

    #[test]
    fn what_does_not_parse_is_a_finding_on_its_line() {
        let parsed = parse(
            ".mcp.json",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": 3}\n  }\n}\n",
        );
        assert_eq!(
            parsed.problems[0].location.as_ref().unwrap().display(),
            ".mcp.json:3"
        );
        let parsed = parse(".mcp.json", "{\n  \"mcpServers\": {\n    \"a\": \n}\n");
        assert_eq!(parsed.problems[0].rule, RuleId::McpConfigInvalid);
        assert!(parsed.problems[0].location.as_ref().unwrap().line.unwrap() >= 3);
    }

    #[test]
    fn a_plugin_servers_file_may_hold_the_servers_alone() {
        let parsed = parse(
            "p/.mcp.json",
            "{\"gh\": {\"type\": \"http\", \"url\": \"https://x\"}}",
        );
        assert_eq!(parsed.servers.len(), 1);
        let parsed = parse(
            ".claude/settings.json",
            "{\"permissions\": {\"allow\": []}}",
        );
        assert!(parsed.servers.is_empty() && parsed.problems.is_empty());
    }

    #[test]
    fn a_plugin_manifest_names_its_servers_file_from_the_plugin_root() {
        assert_eq!(
            plugin_relative("plugins/db/.claude-plugin/plugin.json", "./.mcp.json").as_deref(),
            Some("plugins/db/.mcp.json")
        );
        assert_eq!(
            plugin_relative(".claude-plugin/plugin.json", "../x.json"),
            None
        );
    }
}
