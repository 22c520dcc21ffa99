//! Markdown as evalock reads it to judge a skill: which lines are fenced code (and in
//! which language), which are prose, what inline code and quotations a prose line holds,
//! and where the HTML comments are that a rendered page never shows. Not a renderer: a
//! reader of the few structures where a reviewer and an agent see different things.

use std::ops::Range;

/// How one line of a Markdown text is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    Prose,
    /// Inside a fenced code block (the fence lines included), with the block's language
    /// as its info string names it, lowercased (`""` when none).
    Code(String),
}

/// The kind of each line of `text` (split on `\n`). A fence is three or more backticks
/// or tildes at the start of a line, however indented (skills indent code blocks inside
/// list items); it closes on a line of the same character, at least as long.
pub fn line_kinds(text: &str) -> Vec<LineKind> {
    let mut kinds = Vec::new();
    let mut open: Option<(u8, usize, String)> = None;
    for line in text.split('\n') {
        let trimmed = line.trim_start();
        let fence = fence_of(trimmed);
        match (&open, fence) {
            (Some((character, length, language)), Some((this, this_length)))
                if this == *character
                    && this_length >= *length
                    && trimmed[this_length..].trim().is_empty() =>
            {
                kinds.push(LineKind::Code(language.clone()));
                open = None;
            }
            (Some((_, _, language)), _) => kinds.push(LineKind::Code(language.clone())),
            (None, Some((character, length))) => {
                let language = trimmed[length..]
                    .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                kinds.push(LineKind::Code(language.clone()));
                open = Some((character, length, language));
            }
            (None, None) => kinds.push(LineKind::Prose),
        }
    }
    kinds
}

/// The fence character and its run length when `trimmed` starts a fence.
fn fence_of(trimmed: &str) -> Option<(u8, usize)> {
    let character = *trimmed.as_bytes().first()?;
    if character != b'`' && character != b'~' {
        return None;
    }
    let length = trimmed
        .bytes()
        .take_while(|byte| *byte == character)
        .count();
    // A backtick fence's info string holds no backtick: "``` `x` ```" is inline code.
    let backtick_in_info = character == b'`' && trimmed[length..].contains('`');
    (length >= 3 && !backtick_in_info).then_some((character, length))
}

/// Fence languages whose code runs as a program: `eval(` there is a call, where in an
/// unlabelled block or in prose it is usually a pattern being documented.
pub fn is_program_language(language: &str) -> bool {
    const PROGRAMS: &[&str] = &[
        "js",
        "javascript",
        "jsx",
        "mjs",
        "cjs",
        "ts",
        "typescript",
        "tsx",
        "py",
        "python",
        "python3",
        "rb",
        "ruby",
        "php",
        "pl",
        "perl",
        "lua",
        "sh",
        "bash",
        "zsh",
        "shell",
        "console",
        "ps1",
        "powershell",
        "node",
    ];
    PROGRAMS.contains(&language)
}

/// The byte ranges of `line` that prose only quotes: inline code spans (a run of
/// backticks up to the next run of the same length) and double-quoted text (`"…"`,
/// `“…”`). Unclosed ones quote nothing.
pub fn quoted_ranges(line: &str) -> Vec<Range<usize>> {
    let bytes = line.as_bytes();
    let mut ranges = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'`' {
            let run = bytes[index..]
                .iter()
                .take_while(|byte| **byte == b'`')
                .count();
            match closing_backticks(bytes, index + run, run) {
                Some(end) => {
                    ranges.push(index..end + run);
                    index = end + run;
                }
                None => index += run,
            }
            continue;
        }
        let closing = match &line[index..] {
            rest if rest.starts_with('"') => Some(("\"", 1)),
            rest if rest.starts_with('\u{201c}') => Some(("\u{201d}", '\u{201c}'.len_utf8())),
            _ => None,
        };
        if let Some((close, open_length)) = closing {
            if let Some(offset) = line[index + open_length..].find(close) {
                let end = index + open_length + offset + close.len();
                ranges.push(index..end);
                index = end;
                continue;
            }
        }
        index += line[index..].chars().next().map_or(1, char::len_utf8);
    }
    ranges
}

/// Where a run of exactly `run` backticks starts at or after `from`.
fn closing_backticks(bytes: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut index = from;
    while index < bytes.len() {
        if bytes[index] == b'`' {
            let length = bytes[index..]
                .iter()
                .take_while(|byte| **byte == b'`')
                .count();
            if length == run {
                return Some(index);
            }
            index += length;
        } else {
            index += 1;
        }
    }
    None
}

/// `line` with its quoted ranges blanked (same length, so offsets and columns hold).
pub fn unquoted(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut last = 0;
    for range in quoted_ranges(line) {
        out.push_str(&line[last..range.start]);
        out.extend(std::iter::repeat_n(' ', range.len()));
        last = range.end;
    }
    out.push_str(&line[last..]);
    out
}

/// One HTML comment of a Markdown text: where `<!--` starts and what it holds (byte
/// offsets into the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    pub start: usize,
    pub content: Range<usize>,
}

/// The HTML comments of `text` outside fenced code and inline code; an unclosed one runs
/// to the end, as a browser reads it.
pub fn comments(text: &str) -> Vec<Comment> {
    match text.contains("<!--") {
        true => comments_in(text, &line_kinds(text)),
        false => Vec::new(),
    }
}

/// [`comments`], with the text's [`line_kinds`] worked out already.
pub fn comments_in(text: &str, kinds: &[LineKind]) -> Vec<Comment> {
    let mut found = Vec::new();
    let mut offset = 0;
    let mut resume_at = 0;
    for (line, kind) in text.split('\n').zip(kinds) {
        let line_start = offset;
        offset += line.len() + 1;
        if *kind != LineKind::Prose || line_start + line.len() < resume_at {
            continue;
        }
        let quoted = quoted_ranges(line);
        let mut search = resume_at.saturating_sub(line_start);
        while let Some(found_at) = line.get(search..).and_then(|rest| rest.find("<!--")) {
            let at = search + found_at;
            search = at + 4;
            if quoted
                .iter()
                .any(|range| range.contains(&at) && line.as_bytes()[range.start] == b'`')
            {
                continue;
            }
            let start = line_start + at;
            let content_start = start + 4;
            let end = text[content_start..]
                .find("-->")
                .map_or(text.len(), |end| content_start + end);
            found.push(Comment {
                start,
                content: content_start..end,
            });
            resume_at = (end + 3).min(text.len());
            if resume_at > line_start + line.len() {
                break;
            }
            search = resume_at - line_start;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_blocks_are_code_with_their_language() {
        let text = "# Title\n```python\neval(x)\n```\nprose\n   ~~~~\n   indented\n   ~~~~\nafter";
        let kinds = line_kinds(text);
        assert_eq!(kinds[0], LineKind::Prose);
        assert_eq!(kinds[1], LineKind::Code("python".into()));
        assert_eq!(kinds[2], LineKind::Code("python".into()));
        assert_eq!(kinds[3], LineKind::Code("python".into()));
        assert_eq!(kinds[4], LineKind::Prose);
        assert_eq!(kinds[5], LineKind::Code(String::new()));
        assert_eq!(kinds[6], LineKind::Code(String::new()));
        assert_eq!(kinds[8], LineKind::Prose);
        // A shorter run does not close a longer fence; inline code is no fence.
        let kinds = line_kinds("````\n```\nstill code\n````\n``` `x` ```");
        assert_eq!(kinds[2], LineKind::Code(String::new()));
        assert_eq!(kinds[4], LineKind::Prose);
    }

    #[test]
    fn inline_code_and_double_quotes_are_quoted() {
        let line = r#"Say "ignore this" or run `rm -rf /` then “that” and ``a ` b``, not 'single' or `open"#;
        let blanked = unquoted(line);
        assert_eq!(blanked.len(), line.len());
        assert!(!blanked.contains("ignore this"));
        assert!(!blanked.contains("rm -rf"));
        assert!(!blanked.contains("that"));
        assert!(!blanked.contains("a ` b"));
        assert!(blanked.contains("'single'"));
        assert!(blanked.contains("`open"));
    }

    #[test]
    fn comments_outside_code_are_found_across_lines() {
        let text = "a <!-- one --> b\n```\n<!-- in code -->\n```\n`<!-- inline -->`\n<!--\ntwo\n-->\n<!-- open";
        let found: Vec<&str> = comments(text)
            .iter()
            .map(|comment| text[comment.content.clone()].trim())
            .collect();
        assert_eq!(found, ["one", "two", "open"]);
        assert_eq!(comments(text)[0].start, 2);
    }
}
