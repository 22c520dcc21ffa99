//! The lock narrowed to some suites as it is read. `run --suite` of one suite of 400 needs
//! that suite's tables, the recipes and the graders, not the 200,000 case tables of the
//! others (a 32 MiB lock read whole and then cut at its tables was half of such a run's
//! time), nor the skills' and tool servers' tables, which belong to no suite. Read in
//! blocks, each line that opens a table decides whether the lines up to the next one are
//! kept; the others are never held, decoded or parsed.
//!
//! Whatever a line cannot decide alone gives up, and the whole lock is then read and
//! decides: a case header toml must read to place, a suite header with a quoted name, a
//! header after indentation, a multi-line string (which may hold a line that looks like a
//! header), a conflict (found by the markers that open and close it). A damaged table of
//! a suite that is not read goes unnoticed here: `check` reads them all.

use super::read::{case_keys, is_bare_key_byte, CASE_HEADER};
use crate::text::is_conflict_marker;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// What a lock evalock writes never holds, and what makes a line that opens with `[` more
/// or less than a header: an indented line (TOML reads `  [a]` as one) and a multi-line
/// string (which may hold one).
fn ambiguous() -> &'static regex::bytes::Regex {
    static AMBIGUOUS: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    AMBIGUOUS
        .get_or_init(|| regex::bytes::Regex::new(r#"\n[ \t]|"""|'''"#).expect("a valid pattern"))
}

/// The lines of a lock that the suites in `only` need, gathered block by block.
pub(super) struct Narrowing<'a> {
    only: &'a BTreeSet<String>,
    kept: Vec<u8>,
    /// The start of a line that the next block ends.
    partial: Vec<u8>,
    /// Whether the table the last header opened is kept (what precedes the first table,
    /// the lock's version, is).
    keeping: bool,
    given_up: bool,
}

impl<'a> Narrowing<'a> {
    pub(super) fn new(only: &'a BTreeSet<String>) -> Narrowing<'a> {
        Narrowing {
            only,
            kept: Vec::new(),
            partial: Vec::new(),
            keeping: true,
            given_up: false,
        }
    }

    /// The next block of the lock's bytes, cut anywhere.
    pub(super) fn push(&mut self, block: &[u8]) {
        if self.given_up {
            return;
        }
        let mut rest = block;
        if !self.partial.is_empty() {
            let Some(end) = memchr::memchr(b'\n', rest) else {
                self.partial.extend_from_slice(rest);
                return;
            };
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..=end]);
            self.lines(&line);
            line.clear();
            self.partial = line;
            rest = &rest[end + 1..];
        }
        let whole = memchr::memrchr(b'\n', rest).map_or(0, |end| end + 1);
        self.lines(&rest[..whole]);
        self.partial.extend_from_slice(&rest[whole..]);
    }

    /// The kept lines, or `None` when the whole lock must decide.
    pub(super) fn finish(mut self) -> Option<Vec<u8>> {
        let last = std::mem::take(&mut self.partial);
        self.lines(&last);
        (!self.given_up).then_some(self.kept)
    }

    /// Whole lines (the last may lack its newline at the end of the lock). Only the lines
    /// that open with `[`, `<` or `>` are looked at: the headers, and the markers that
    /// open and close every conflict.
    fn lines(&mut self, text: &[u8]) {
        if self.given_up || text.is_empty() {
            return;
        }
        if matches!(text[0], b' ' | b'\t') || ambiguous().is_match(text) {
            return self.give_up();
        }
        // The start of the lines kept or passed over together.
        let mut run = 0;
        for at in memchr::memchr3_iter(b'[', b'<', b'>', text) {
            if at > 0 && text[at - 1] != b'\n' {
                continue;
            }
            if text[at] != b'[' {
                let line = line_at(text, at);
                match std::str::from_utf8(line).is_ok_and(is_conflict_marker) {
                    true => return self.give_up(),
                    false => continue,
                }
            }
            if self.keeping {
                self.kept.extend_from_slice(&text[run..at]);
            }
            run = at;
            match self.keeps(text, at) {
                Some(keeps) => self.keeping = keeps,
                None => return self.give_up(),
            }
        }
        if self.keeping {
            self.kept.extend_from_slice(&text[run..]);
        }
    }

    fn give_up(&mut self) {
        self.given_up = true;
    }

    /// Whether the table the header at `at` opens is kept; `None` when the header alone
    /// cannot say. A suite's tables are kept when it is named; the skills' and tool
    /// servers' are not (they belong to no suite); the rest (recipes, graders) always are.
    fn keeps(&self, text: &[u8], at: usize) -> Option<bool> {
        let header = &text[at..];
        if let Some(keys) = header.strip_prefix(CASE_HEADER.as_bytes()) {
            // Whatever follows a bare suite name and a dot names a table of that suite's.
            let suite = match leading_bare_key(keys, b".") {
                Some(suite) => Cow::Borrowed(suite),
                None => case_keys(std::str::from_utf8(line_at(text, at)).ok()?)?.0,
            };
            return Some(self.only.contains(suite.as_ref()));
        }
        if let Some(keys) = header.strip_prefix(b"[suite.") {
            return Some(self.only.contains(leading_bare_key(keys, b".]")?));
        }
        let unowned = [b"[skill.".as_slice(), b"[skill]", b"[mcp.", b"[mcp]"];
        Some(!unowned.iter().any(|prefix| header.starts_with(prefix)))
    }
}

/// The bare key that `keys` open with, when one of `ends` follows it.
fn leading_bare_key<'t>(keys: &'t [u8], ends: &[u8]) -> Option<&'t str> {
    let bare = keys
        .iter()
        .position(|&byte| !is_bare_key_byte(byte))
        .unwrap_or(keys.len());
    let ended = keys.get(bare).is_some_and(|byte| ends.contains(byte));
    match bare > 0 && ended {
        true => std::str::from_utf8(&keys[..bare]).ok(),
        false => None,
    }
}

/// The line that starts at `at`, without its newline.
fn line_at(text: &[u8], at: usize) -> &[u8] {
    let line = &text[at..];
    &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(text: &str, only: &[&str], block: usize) -> Option<String> {
        let only: BTreeSet<String> = only.iter().map(|suite| suite.to_string()).collect();
        let mut narrowing = Narrowing::new(&only);
        for piece in text.as_bytes().chunks(block) {
            narrowing.push(piece);
        }
        narrowing
            .finish()
            .map(|kept| String::from_utf8(kept).unwrap())
    }

    const SHARED: &str =
        "lock_version = 1\n\n[recipes]\ncase = \"case-v1\"\n\n[grader.g]\nversion = \"1\"\n\n";
    const SKILLS: &str = "[skill.\"skills/x\"]\nname = \"x\"\n\n[skill.\"skills/x\".files]\n\"SKILL.md\" = \"f\"\n\n[mcp.\".mcp.json\".docs]\ndigest = \"d\"\n";

    fn suite(name: &str) -> String {
        format!("[suite.{name}]\ndigest = \"d\"\n\n[suite.{name}.prompts]\n\"p.md\" = \"d\"\n\n")
    }

    fn case(suite: &str, id: &str) -> String {
        format!("[case.{suite}.{id}]\nversion = 1\nfile = \"{suite}.jsonl\"\n\n")
    }

    #[test]
    fn only_the_named_suites_tables_are_kept_however_the_blocks_fall() {
        let text = format!(
            "{SHARED}{}{}{}{}{}{}{SKILLS}",
            suite("a"),
            suite("b"),
            case("a", "one"),
            case("b", "one"),
            case("b", "two"),
            case("a", "three")
        );
        let expected = format!(
            "{SHARED}{}{}{}",
            suite("a"),
            case("a", "one"),
            case("a", "three")
        );
        for block in [1, 2, 3, 7, 16, 64, text.len()] {
            assert_eq!(
                narrowed(&text, &["a"], block),
                Some(expected.clone()),
                "{block}"
            );
        }
        assert_eq!(narrowed(&text, &["c"], 5).as_deref(), Some(SHARED));
        let both = text.replace(SKILLS, "");
        assert_eq!(narrowed(&text, &["a", "b"], 5), Some(both));
        assert_eq!(narrowed("", &["a"], 5).as_deref(), Some(""));
        // The last line without its newline.
        let unended = format!("{SHARED}{}", case("b", "x").trim_end());
        assert_eq!(narrowed(&unended, &["a"], 4).as_deref(), Some(SHARED));
        assert_eq!(narrowed(&unended, &["b"], 4), Some(unended.clone()));
        // A suite whose name another's begins with is a suite of its own.
        let prefixed = format!("{SHARED}{}{}", case("ab", "x"), case("a", "y"));
        let kept = format!("{SHARED}{}", case("a", "y"));
        assert_eq!(narrowed(&prefixed, &["a"], 6), Some(kept));
    }

    #[test]
    fn what_a_line_cannot_decide_alone_gives_up() {
        let skipped = case("b", "one");
        let undecided = [
            // Conflict markers in tables that are not kept.
            format!(
                "{SHARED}{skipped}<<<<<<< ours\n{}=======\n>>>>>>> theirs\n",
                case("b", "two")
            ),
            format!("{SHARED}{skipped}>>>>>>> theirs\n"),
            // A header after indentation, which TOML reads as one.
            format!("{SHARED}{skipped}  [case.a.hidden]\nversion = 1\n"),
            format!("{SHARED}{skipped}\t[case.a.hidden]\nversion = 1\n"),
            // A multi-line string may hold a line that looks like a header.
            format!("{SHARED}[case.b.x]\nfile = \"\"\"\n[case.a.y]\n\"\"\"\n"),
            format!("{SHARED}[case.b.x]\nfile = '''\n[case.a.y]\n'''\n"),
            // Headers that only toml can place.
            format!("{SHARED}[case.\"a\".\"b\" \n"),
            format!("{SHARED}[suite.\"a\"]\ndigest = \"d\"\n"),
        ];
        for text in &undecided {
            for block in [1, 3, 1024] {
                assert_eq!(
                    narrowed(text, &["a"], block),
                    None,
                    "{text:?} in blocks of {block}"
                );
            }
        }
        // A table below a named suite's is kept (the kept lines are then read as TOML,
        // which decides); quoted keys toml reads and lines like markers that are not
        // markers stay decided.
        let below = format!("{SHARED}[case.a.b.c]\nversion = 1\n");
        assert_eq!(narrowed(&below, &["a"], 3), Some(below.clone()));
        let decided = format!(
            "{SHARED}[case.\"a\".\"quoted id\"]\nversion = 1\n\n{skipped}\"=======\" = 1\n<<<<<<<x = 1\n"
        );
        assert_eq!(
            narrowed(&decided, &["a"], 3),
            Some(format!(
                "{SHARED}[case.\"a\".\"quoted id\"]\nversion = 1\n\n"
            ))
        );
    }
}
