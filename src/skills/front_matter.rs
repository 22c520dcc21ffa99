//! SKILL.md front matter, per the agentskills specification: YAML between `---` lines,
//! with `name`, `description`, and optional `license`, `compatibility`, `metadata` (a
//! string map; `metadata.version`, `metadata.executables`) and `allowed-tools`. Each
//! field keeps its line so findings anchor on it.

use super::spec::split_tools;
use super::Problem;
use crate::text::LineIndex;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A value and the 1-based lines of the file it was written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub value: T,
    pub line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// `name` with whitespace around it as written (`"foo "`), when it had any; `name`
    /// holds it trimmed, as the reference loader reads it.
    pub name_as_written: Option<String>,
    pub name: Option<Located<String>>,
    pub description: Option<Located<String>>,
    pub license: Option<String>,
    pub compatibility: Option<Located<String>>,
    pub metadata: BTreeMap<String, String>,
    pub metadata_version: Option<Located<String>>,
    /// `metadata.executables`: space-separated skill-relative paths of declared scripts.
    pub metadata_executables: Option<Located<Vec<String>>>,
    pub allowed_tools: Option<Located<Vec<String>>>,
    /// The line of the closing `---`.
    pub end_line: u32,
}

#[derive(Deserialize)]
struct RawFrontMatter {
    name: Option<String>,
    description: Option<String>,
    license: Option<String>,
    compatibility: Option<String>,
    metadata: Option<BTreeMap<String, String>>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<ToolsInput>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ToolsInput {
    Text(String),
    List(Vec<String>),
}

/// Parses the front matter of a SKILL.md; the problem says where and what to fix.
pub fn parse_front_matter(bytes: &[u8]) -> Result<FrontMatter, Problem> {
    let text = front_matter_text(bytes)?;
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| line.trim_end_matches('\r'))
        .collect();
    let yaml_lines = &lines[1..=yaml_line_count(&lines)?];
    let raw = parse_yaml(&yaml_lines.join("\n"))?;
    Ok(locate_fields(raw, yaml_lines))
}

/// The file as text: UTF-8, without a byte order mark.
fn front_matter_text(bytes: &[u8]) -> Result<&str, Problem> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(Problem::at(
            1,
            1,
            "SKILL.md starts with a byte order mark; save it as UTF-8 without BOM",
        ));
    }
    std::str::from_utf8(bytes).map_err(|error| {
        let (line, column) = LineIndex::new(bytes).position_of(bytes, error.valid_up_to());
        Problem::at(line, column, "SKILL.md is not valid UTF-8")
    })
}

/// How many lines lie between the opening `---` (the first line) and the closing one.
fn yaml_line_count(lines: &[&str]) -> Result<usize, Problem> {
    if lines.first().map(|line| line.trim_end()) != Some("---") {
        return Err(Problem::at(1, 1, "SKILL.md must start with YAML front matter: a `---` line, `name:` and `description:`, then `---`"));
    }
    lines
        .iter()
        .skip(1)
        .position(|line| matches!(line.trim_end(), "---" | "..."))
        .ok_or_else(|| {
            Problem::at(
                1,
                1,
                "the front matter is never closed: add a `---` line after the last field",
            )
        })
}

/// The parsed fields with the lines that write them, `yaml_lines` being the lines
/// between the `---` lines.
fn locate_fields(raw: RawFrontMatter, yaml_lines: &[&str]) -> FrontMatter {
    let keys = top_level_keys(yaml_lines);
    let locate = |key: &str, value| {
        keys.get(key).map(|(line, end_line)| Located {
            value,
            line: *line,
            end_line: *end_line,
        })
    };
    let located_or_first = |key: &str, value| {
        locate(key, value).unwrap_or(Located {
            value: String::new(),
            line: 1,
            end_line: 1,
        })
    };
    let metadata = raw.metadata.unwrap_or_default();
    FrontMatter {
        name_as_written: raw
            .name
            .as_ref()
            .filter(|name| name.trim() != name.as_str())
            .cloned(),
        name: raw
            .name
            .map(|name| located_or_first("name", name.trim().to_owned())),
        description: raw
            .description
            .map(|description| located_or_first("description", description)),
        license: raw.license,
        compatibility: raw
            .compatibility
            .and_then(|value| locate("compatibility", value)),
        metadata_version: metadata
            .get("version")
            .map(|version| in_metadata(yaml_lines, &keys, "version", version.clone())),
        metadata_executables: metadata.get("executables").map(|paths| {
            let paths = paths.split_whitespace().map(str::to_owned).collect();
            in_metadata(yaml_lines, &keys, "executables", paths)
        }),
        metadata,
        allowed_tools: located_tools(raw.allowed_tools, keys.get("allowed-tools").copied()),
        // The closing `---` follows the opening one and the YAML.
        end_line: u32::try_from(yaml_lines.len() + 2).unwrap_or(u32::MAX),
    }
}

/// `value`, at the line of `metadata.key`.
fn in_metadata<T>(
    yaml_lines: &[&str],
    keys: &BTreeMap<String, (u32, u32)>,
    key: &str,
    value: T,
) -> Located<T> {
    let line = nested_key_line(yaml_lines, keys, "metadata", key);
    Located {
        value,
        line,
        end_line: line,
    }
}

/// `allowed-tools:` with nothing after it declares no tool, on its own line: findings
/// about it (none declared) point there, not at the file's first line.
fn located_tools(
    tools: Option<ToolsInput>,
    written: Option<(u32, u32)>,
) -> Option<Located<Vec<String>>> {
    if tools.is_none() && written.is_none() {
        return None;
    }
    let list = match tools {
        Some(ToolsInput::Text(text)) => split_tools(&text),
        Some(ToolsInput::List(items)) => items.iter().flat_map(|item| split_tools(item)).collect(),
        None => Vec::new(),
    };
    let (line, end_line) = written.unwrap_or((1, 1));
    Some(Located {
        value: list,
        line,
        end_line,
    })
}

fn parse_yaml(yaml: &str) -> Result<RawFrontMatter, Problem> {
    if yaml.trim().is_empty() {
        return Err(Problem::at(
            2,
            1,
            "the front matter is empty: add `name:` and `description:`",
        ));
    }
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    serde_saphyr::from_str_with_options::<RawFrontMatter>(yaml, options).map_err(|error| {
        let (line, column) = error
            .location()
            .map(|location| (location.line() as u32, location.column() as u32))
            .unwrap_or((1, 1));
        let message = error.to_string();
        let first = message.lines().next().unwrap_or("invalid YAML");
        // The parser's own "at line L column C" counts from the YAML's first line: the
        // position is reported once, in the file's numbering, so drop it from the text.
        let first = crate::cases::documents::yaml_message_for_people(first);
        // The YAML starts on the file's second line, after the opening `---`.
        Problem::at(
            line.max(1).saturating_add(1),
            column.max(1),
            format!("invalid front matter: {first}"),
        )
    })
}

/// Top-level keys of the front matter and the file lines each spans: from the key to the
/// line before the next top-level key, without trailing blank or comment lines.
fn top_level_keys(yaml_lines: &[&str]) -> BTreeMap<String, (u32, u32)> {
    let file_line = |index: usize| u32::try_from(index + 2).unwrap_or(u32::MAX);
    let starts: Vec<(usize, String)> = yaml_lines
        .iter()
        .enumerate()
        .filter_map(|(index, line)| top_level_key(line).map(|key| (index, key.to_owned())))
        .collect();
    let mut keys = BTreeMap::new();
    for (position, (index, key)) in starts.iter().enumerate() {
        let next = starts
            .get(position + 1)
            .map_or(yaml_lines.len(), |(next_index, _)| *next_index);
        let last = (*index + 1..next)
            .rev()
            .find(|line| !is_blank_or_comment(yaml_lines[*line]))
            .unwrap_or(*index);
        keys.entry(key.clone())
            .or_insert((file_line(*index), file_line(last)));
    }
    keys
}

fn top_level_key(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', '#', '-']) {
        return None;
    }
    let (key, _) = line.split_once(':')?;
    // Any key ends the block above it, `my notes:` and `x.y:` too: YAML allows them.
    let key = key.trim().trim_matches(['"', '\'']);
    (!key.is_empty()).then_some(key)
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// The file line of `parent.key` (an indented key inside a top-level block), else the
/// parent's line.
fn nested_key_line(
    yaml_lines: &[&str],
    keys: &BTreeMap<String, (u32, u32)>,
    parent: &str,
    key: &str,
) -> u32 {
    let Some((start, end)) = keys.get(parent).copied() else {
        return 1;
    };
    (start..=end)
        .find(|line| {
            let text = yaml_lines
                .get((*line as usize).saturating_sub(2))
                .copied()
                .unwrap_or("");
            text.starts_with([' ', '\t'])
                && text
                    .trim_start()
                    .split_once(':')
                    .is_some_and(|(name, _)| name.trim().trim_matches(['"', '\'']) == key)
        })
        .unwrap_or(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "---\nname: pdf-forms\ndescription: |-\n  Fills PDF forms from JSON.\n  Use when the user mentions forms.\n\nlicense: Apache-2.0\nmetadata:\n  author: example-org\n  version: \"1.2.0\"\n  executables: scripts/fill.py scripts/check.sh\nallowed-tools: Bash(python3:*) Read\n---\n\n# PDF forms\n";

    #[test]
    fn reads_every_field_with_its_line() {
        let front = parse_front_matter(FULL.as_bytes()).unwrap();
        assert_eq!(
            front
                .name
                .as_ref()
                .map(|name| (name.value.as_str(), name.line)),
            Some(("pdf-forms", 2))
        );
        let description = front.description.unwrap();
        assert_eq!(
            description.value,
            "Fills PDF forms from JSON.\nUse when the user mentions forms."
        );
        assert_eq!((description.line, description.end_line), (3, 5));
        assert_eq!(front.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(
            front
                .metadata_version
                .map(|version| (version.value, version.line)),
            Some(("1.2.0".to_owned(), 10))
        );
        assert_eq!(
            front.metadata_executables.unwrap().value,
            ["scripts/fill.py", "scripts/check.sh"]
        );
        let tools = front.allowed_tools.unwrap();
        assert_eq!(
            (tools.value, tools.line),
            (vec!["Bash(python3:*)".to_owned(), "Read".to_owned()], 12)
        );
        assert_eq!(front.end_line, 13);
    }

    #[test]
    fn allowed_tools_may_be_a_list() {
        let text =
            "---\nname: a\ndescription: b\nallowed-tools:\n  - Read\n  - Bash(git log:*)\n---\n";
        let tools = parse_front_matter(text.as_bytes())
            .unwrap()
            .allowed_tools
            .unwrap();
        assert_eq!(tools.value, ["Read", "Bash(git log:*)"]);
        assert_eq!((tools.line, tools.end_line), (4, 6));
        // A key of any spelling ends the list's lines; blank and comment lines before it
        // are not the list's.
        for key in ["my notes", "x.y", "\"quoted key\"", "\n# a comment\n\nlast"] {
            let text =
                format!("---\nname: a\nallowed-tools:\n  - Read\n{key}: 1\ndescription: b\n---\n");
            let front = parse_front_matter(text.as_bytes()).unwrap();
            let tools = front.allowed_tools.unwrap();
            assert_eq!((tools.line, tools.end_line), (3, 4), "{key}");
        }
    }

    #[test]
    fn scalar_metadata_values_stay_text() {
        let text = "---\nname: a\ndescription: b\nmetadata:\n  version: 1.0\n---\n";
        assert_eq!(
            parse_front_matter(text.as_bytes())
                .unwrap()
                .metadata_version
                .unwrap()
                .value,
            "1.0"
        );
    }

    #[test]
    fn problems_carry_file_lines() {
        let missing = parse_front_matter(b"# Title\n").unwrap_err();
        assert_eq!(missing.line, 1);
        let unclosed = parse_front_matter(b"---\nname: a\n").unwrap_err();
        assert!(
            unclosed.message.contains("never closed"),
            "{}",
            unclosed.message
        );
        let bad_yaml =
            parse_front_matter(b"---\nname: a\ndescription: [unclosed\n---\n").unwrap_err();
        assert_eq!(bad_yaml.line, 3, "{bad_yaml:?}");
        // One numbering, the file's: the parser's own "at line" (counted from the YAML's
        // first line) is not repeated in the text.
        assert!(!bad_yaml.message.contains("at line"), "{bad_yaml:?}");
        let duplicate =
            parse_front_matter(b"---\nname: a\nallowed-tools: Read\nallowed-tools: Bash\n---\n")
                .unwrap_err();
        assert_eq!(duplicate.line, 4, "{duplicate:?}");
        assert_eq!(
            duplicate.message,
            "invalid front matter: duplicate key `allowed-tools`: keep one of them"
        );
        assert!(parse_front_matter(b"\xEF\xBB\xBF---\n").is_err());
        assert!(parse_front_matter(b"---\n\xff\n---\n").is_err());
    }

    #[test]
    fn crlf_files_parse() {
        let front =
            parse_front_matter(b"---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(front.name.unwrap().value, "a");
        assert_eq!(front.description.unwrap().value, "b");
    }
}
