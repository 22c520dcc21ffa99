//! Reads `evalock.lock` in the exact shape [`Lock::render`] writes, without a TOML parser:
//! a 200,000-case lock parses in a fraction of the time. The result is only used when it
//! renders back to the very same text, which proves it is what the TOML parser would
//! return (render and parse round-trip); anything else goes to the TOML parser.
//!
//! The lock is streamed, never held whole (30 MiB for 200,000 cases). Its case entries,
//! nearly all of it, are read strictly: each line must be what `render` writes for the
//! entry read so far, so the entries read render back to the text they were read from.
//! The rest of the file is kept as text and compared with the rendering of what was read
//! from it, with the entries where they stood.

use super::lock::{GraderLock, Lock, Recipes, SuiteLock};
use super::skill_lock::SkillLock;
use crate::hash::Digest;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;

mod entries;
mod lines;
#[cfg(test)]
mod tests;
mod toml_reading;

use entries::EntryReader;
use lines::{Lines, Section};
use toml_reading::{read_digest, read_key, read_string, split_assignment, split_key};

/// The lock, if `text` is exactly what `render` writes for it.
#[cfg(test)]
pub(super) fn parse_rendered(text: &str) -> Option<Lock> {
    parse_rendered_from(text.as_bytes(), None)
}

/// The lock, if what `input` yields is exactly what `render` writes for it. A suite whose
/// case entries are the same as in `known` shares them: only one suite's entries are ever
/// held twice, the one being read.
pub(super) fn parse_rendered_from(input: impl Read, known: Option<&Lock>) -> Option<Lock> {
    let mut lines = Lines::new(input);
    let parsed = read_lines(&mut lines, known);
    if lines.failed {
        return None;
    }
    let Parsed {
        mut lock,
        graders,
        skills,
        outside,
        cases_at,
    } = parsed?;
    // Graders (between the suites and the cases) and skills (last) are few: their tables
    // go through the TOML parser.
    lock.graders = toml::from_str::<GraderTables>(&graders).ok()?.grader;
    lock.skills = toml::from_str::<SkillTables>(&skills).ok()?.skill;
    let mut rendered = String::with_capacity(outside.len());
    lock.render_head_into(&mut rendered).ok()?;
    let head = rendered.len();
    lock.render_skills_into(&mut rendered).ok()?;
    (rendered == outside && cases_at.is_none_or(|at| at == head)).then_some(lock)
}

/// The `[grader.…]` tables between the suites and the cases.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GraderTables {
    #[serde(default)]
    grader: BTreeMap<String, GraderLock>,
}

/// The `[skill.…]` tables at the end of a lock.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillTables {
    #[serde(default)]
    skill: BTreeMap<String, SkillLock>,
}

/// Which table the lines being read outside the case entries belong to.
enum Table {
    Top,
    Recipes,
    Suite(String),
    SuitePrompts(String),
}

/// A table header outside the case entries, its keys decoded (borrowed when they need no
/// decoding).
enum Header<'a> {
    Recipes,
    Suite(Cow<'a, str>),
    SuitePrompts(Cow<'a, str>),
}

/// What [`read_lines`] gathers.
struct Parsed {
    /// The lock without its graders and skills.
    lock: Lock,
    /// The grader tables and the skill tables, for the TOML parser.
    graders: String,
    skills: String,
    /// Every byte of the file outside the case entries, in order.
    outside: String,
    /// Where the case entries stood in `outside`, when there are any.
    cases_at: Option<usize>,
}

fn read_lines<R: Read>(lines: &mut Lines<R>, known: Option<&Lock>) -> Option<Parsed> {
    let mut lock = Lock::new();
    let mut recipes = Recipes {
        case: String::new(),
        prompt: String::new(),
        tree: String::new(),
        suite: String::new(),
    };
    let mut lock_version = None;
    let mut table = Table::Top;
    // Placeholders until the table's `digest` line: computed once, not per suite or entry.
    let placeholder = Digest::of_bytes(b"");
    let mut entries = EntryReader::new(placeholder, known);
    let (mut graders, mut skills, mut outside) = (String::new(), String::new(), String::new());
    let mut cases_at = None;
    while let Some(line) = lines.next_line() {
        if line.section == Section::Cases {
            if cases_at.is_none() {
                // The blank line before the first entry is where the entries start.
                if !outside.ends_with("\n\n") {
                    return None;
                }
                outside.pop();
                cases_at = Some(outside.len());
            }
            if !line.newline {
                return None;
            }
            entries.line(line.text, &mut lock)?;
            continue;
        }
        // A blank line after the last entry belongs to what follows (a skill table).
        if entries.take_blank() {
            outside.push('\n');
        }
        outside.push_str(line.text);
        if line.newline {
            outside.push('\n');
        }
        let text = line.text;
        match line.section {
            Section::Graders => {
                graders.push_str(text);
                graders.push('\n');
                continue;
            }
            Section::Skills => {
                skills.push_str(text);
                skills.push('\n');
                continue;
            }
            Section::Suites | Section::Cases => {}
        }
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if let Some(header) = text.strip_prefix('[') {
            table = match read_header(header.strip_suffix(']')?)? {
                Header::Recipes => Table::Recipes,
                Header::Suite(name) => {
                    let empty = SuiteLock {
                        digest: placeholder,
                        prompt: None,
                        prompts: BTreeMap::new(),
                    };
                    lock.suites.insert(name.to_string(), empty);
                    Table::Suite(name.into_owned())
                }
                Header::SuitePrompts(name) => Table::SuitePrompts(name.into_owned()),
            };
            continue;
        }
        let (key, value) = split_assignment(text)?;
        match &table {
            Table::Top if key == "lock_version" => lock_version = Some(value.parse().ok()?),
            Table::Top => return None,
            Table::Recipes => {
                let value = read_string(value)?.into_owned();
                match key {
                    "case" => recipes.case = value,
                    "prompt" => recipes.prompt = value,
                    "tree" => recipes.tree = value,
                    "suite" => recipes.suite = value,
                    _ => return None,
                }
            }
            Table::Suite(name) => {
                let suite = lock.suites.get_mut(name)?;
                let digest = read_digest(value)?;
                match key {
                    "digest" => suite.digest = digest,
                    "prompt" => suite.prompt = Some(digest),
                    _ => return None,
                }
            }
            Table::SuitePrompts(name) => {
                let digest = read_digest(value)?;
                lock.suites
                    .get_mut(name)?
                    .prompts
                    .insert(read_key(key)?.into_owned(), digest);
            }
        }
    }
    if entries.take_blank() {
        outside.push('\n');
    }
    entries.finish(&mut lock)?;
    lock.lock_version = lock_version?;
    lock.recipes = recipes;
    Some(Parsed {
        lock,
        graders,
        skills,
        outside,
        cases_at,
    })
}

fn read_header(header: &str) -> Option<Header<'_>> {
    if header == "recipes" {
        return Some(Header::Recipes);
    }
    let (name, rest) = split_key(header.strip_prefix("suite.")?)?;
    match rest {
        None => Some(Header::Suite(name)),
        Some("prompts") => Some(Header::SuitePrompts(name)),
        Some(_) => None,
    }
}
