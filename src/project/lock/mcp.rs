//! The tool-server entries of `evalock.lock`: one table per server of each configuration
//! file, holding its launch (never an environment value) and, when a `tools/list`
//! snapshot pins its tools, one line per tool (`create_issue = "sha256:… sha256:…"`).

use super::{toml_key, toml_string, toml_string_array};
use crate::digest::Digest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Servers by configuration file, then by name.
pub type McpLocks = BTreeMap<String, BTreeMap<String, ServerLock>>;

/// What `evalock lock` froze for one server: how it starts, and its tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerLock {
    /// `type` as the configuration writes it (`stdio`, `http`, `sse`).
    #[serde(default)]
    pub transport: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// Names of the environment variables it is given; never their values.
    #[serde(default)]
    pub env: Vec<String>,
    /// Names of the HTTP headers it is sent; never their values.
    #[serde(default)]
    pub headers: Vec<String>,
    /// The `tools/list` snapshot its tools were pinned from.
    #[serde(default)]
    pub snapshot: Option<String>,
    /// Tool name -> `"<description digest> <input schema digest>"`.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolLock>,
}

/// One pinned tool: the digest of its description and of its canonical input schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolLock {
    pub description: Digest,
    pub schema: Digest,
}

impl TryFrom<String> for ToolLock {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        let (description, schema) = text.split_once(' ').ok_or_else(|| {
            format!("tool entry `{text}` must be `sha256:<description> sha256:<schema>`")
        })?;
        Ok(ToolLock {
            description: Digest::parse(description)?,
            schema: Digest::parse(schema)?,
        })
    }
}

impl From<ToolLock> for String {
    fn from(tool: ToolLock) -> String {
        format!("{} {}", tool.description, tool.schema)
    }
}

/// Appends the server entries to a lock being rendered.
pub fn render_mcp(out: &mut String, servers: &McpLocks) {
    for (config, by_name) in servers {
        for (name, server) in by_name {
            let key = format!("mcp.{}.{}", toml_key(config), toml_key(name));
            let _ = writeln!(out, "\n[{key}]");
            let optional = [
                ("transport", &server.transport),
                ("command", &server.command),
            ];
            for (field, value) in optional {
                if let Some(value) = value {
                    let _ = writeln!(out, "{field} = {}", toml_string(value));
                }
            }
            let _ = writeln!(out, "args = {}", toml_string_array(&server.args));
            if let Some(url) = &server.url {
                let _ = writeln!(out, "url = {}", toml_string(url));
            }
            let _ = writeln!(out, "env = {}", toml_string_array(&server.env));
            let _ = writeln!(out, "headers = {}", toml_string_array(&server.headers));
            if let Some(snapshot) = &server.snapshot {
                let _ = writeln!(out, "snapshot = {}", toml_string(snapshot));
                let _ = writeln!(out, "\n[{key}.tools]");
                for (tool, pins) in &server.tools {
                    let _ = writeln!(
                        out,
                        "{} = {}",
                        toml_key(tool),
                        toml_string(&String::from(pins.clone()))
                    );
                }
            }
        }
    }
}
