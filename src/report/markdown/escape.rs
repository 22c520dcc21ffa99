//! Putting untrusted text (case ids, messages, completion diffs) into Markdown so that it
//! reads as written: no accidental emphasis, links, HTML, table breaks or @-mentions.
//! Every Markdown body evalock writes (the job summary, review comments, the sticky
//! summary) escapes through here, so there is one implementation to get right.

/// Prose with `code spans` kept: outside the spans, Markdown punctuation is
/// backslash-escaped, `@` cannot mention anyone and URLs are not linked; line breaks
/// become spaces. Code spans are found as CommonMark finds them, so what is shown as code
/// is exactly what a renderer treats as code, and everything else is escaped.
pub fn inline(text: &str) -> String {
    escape_inline(text, Place::Prose)
}

/// [`inline`] for a table cell: GFM splits a row on `|` even inside a code span.
pub fn inline_cell(text: &str) -> String {
    escape_inline(text, Place::TableCell)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Prose,
    TableCell,
}

fn escape_inline(text: &str, place: Place) -> String {
    let flat = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let mut escaped = String::with_capacity(flat.len() + 8);
    for (index, piece) in pieces(&flat).into_iter().enumerate() {
        match piece {
            Piece::Prose(prose) => escape_prose(prose, index == 0, &mut escaped),
            Piece::Code(span) if place == Place::TableCell => escaped.push_str(&table_cell(span)),
            Piece::Code(span) => escaped.push_str(span),
            Piece::Backticks(count) => {
                for _ in 0..count {
                    escaped.push_str("\\`");
                }
            }
        }
    }
    escaped
}

/// A piece of inline text as CommonMark reads it.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Prose(&'a str),
    /// A whole code span, its backtick strings included.
    Code(&'a str),
    /// A backtick string that opens no code span: that many literal backticks.
    Backticks(usize),
}

/// Splits `text` into prose, code spans and unmatched backtick strings by CommonMark's
/// rule: a backtick string (a maximal run of backticks) of length N opens a code span
/// that the next backtick string of exactly length N closes; without one, it is literal
/// and reading goes on after it. Backslashes are the text's own characters (they are
/// escaped in prose), so they escape nothing here.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let runs = backtick_runs(text);
    // For each run, the next run of the same length: found once from the right, so a
    // text of many unmatched runs costs linear time, not quadratic.
    let mut next_same = vec![None; runs.len()];
    let mut last_of_length: std::collections::HashMap<usize, usize> =
        std::collections::HashMap::new();
    for (index, &(_, length)) in runs.iter().enumerate().rev() {
        next_same[index] = last_of_length.insert(length, index);
    }
    let mut pieces = Vec::new();
    let mut prose_start = 0;
    let mut index = 0;
    while index < runs.len() {
        let (start, length) = runs[index];
        if start > prose_start {
            pieces.push(Piece::Prose(&text[prose_start..start]));
        }
        match next_same[index] {
            Some(closing) => {
                let end = runs[closing].0 + length;
                pieces.push(Piece::Code(&text[start..end]));
                prose_start = end;
                index = closing + 1;
            }
            None => {
                pieces.push(Piece::Backticks(length));
                prose_start = start + length;
                index += 1;
            }
        }
    }
    if prose_start < text.len() {
        pieces.push(Piece::Prose(&text[prose_start..]));
    }
    pieces
}

/// (byte offset, length) of every maximal run of backticks.
fn backtick_runs(text: &str) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (offset, byte) in text.bytes().enumerate() {
        if byte != b'`' {
            continue;
        }
        match runs.last_mut() {
            Some((start, length)) if *start + *length == offset => *length += 1,
            _ => runs.push((offset, 1)),
        }
    }
    runs
}

/// Escapes prose; `at_start` when it begins the text, which a caller may put at the start
/// of a line, where `-`, `+` and `1.` would start a list.
fn escape_prose(text: &str, at_start: bool, out: &mut String) {
    let body = if at_start {
        escape_block_start(text, out)
    } else {
        text
    };
    for (offset, character) in body.char_indices() {
        match character {
            // GitHub links `#123` to an issue (leaving a back-reference there) in the
            // rendered text, after a backslash is gone: a zero-width space keeps the
            // number apart.
            '#' if body[offset + 1..].starts_with(|next: char| next.is_ascii_digit()) => {
                out.push_str("\\#\u{200B}");
            }
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '~' | '|' | '#' | '&' | '!' => {
                out.push('\\');
                out.push(character);
            }
            // A zero-width space after `@` keeps GitHub from notifying a user or team
            // (and from linking an e-mail address).
            '@' => out.push_str("@\u{200B}"),
            // GFM links bare `https://…` and `www.…`: a zero-width space after `:` or
            // before `.` leaves them as text.
            ':' if body[offset..].starts_with("://") => out.push_str(":\u{200B}"),
            '.' if ends_with_www(out) => out.push_str("\u{200B}."),
            _ => out.push(character),
        }
    }
}

/// Writes the escaped list marker `text` starts with, if any, and returns the rest.
fn escape_block_start<'a>(text: &'a str, out: &mut String) -> &'a str {
    let trimmed = text.trim_start_matches(' ');
    out.push_str(&text[..text.len() - trimmed.len()]);
    if trimmed.starts_with(['-', '+']) {
        out.push('\\');
        out.push_str(&trimmed[..1]);
        return &trimmed[1..];
    }
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits > 0 && trimmed[digits..].starts_with(['.', ')']) {
        out.push_str(&trimmed[..digits]);
        out.push('\\');
        out.push_str(&trimmed[digits..=digits]);
        return &trimmed[digits + 1..];
    }
    trimmed
}

fn ends_with_www(text: &str) -> bool {
    text.len() >= 3
        && text.is_char_boundary(text.len() - 3)
        && text[text.len() - 3..].eq_ignore_ascii_case("www")
}

/// Text as one code span, whatever backticks it holds.
pub fn code(text: &str) -> String {
    let flat = text.replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_backtick_run(&flat) + 1);
    let padding = if flat.starts_with('`') || flat.ends_with('`') || flat.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{padding}{flat}{padding}{fence}")
}

/// A code span made safe inside a table row: GFM splits cells on `|` even in code.
pub fn table_cell(code_span: &str) -> String {
    code_span.replace('|', "\\|")
}

/// A fenced block long enough that the text cannot close it; `diff` when it looks like one.
pub fn fenced(text: &str) -> String {
    let fence = "`".repeat((longest_backtick_run(text) + 1).max(3));
    let is_diff = text
        .lines()
        .any(|line| line.starts_with('+') || line.starts_with('-') || line.starts_with("@@"));
    let language = if is_diff { "diff" } else { "text" };
    let body = text.trim_end_matches('\n');
    format!("{fence}{language}\n{body}\n{fence}\n")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_escapes_prose_and_keeps_code_spans() {
        assert_eq!(
            inline("case `a_b*` has *stars* and <b>"),
            "case `a_b*` has \\*stars\\* and \\<b\\>"
        );
        assert_eq!(inline("ping @octocat\nnow"), "ping @\u{200B}octocat now");
        assert_eq!(inline("odd ` tick_"), "odd \\` tick\\_");
        assert_eq!(inline("a | b"), "a \\| b");
    }

    /// Backtick strings pair by length, as CommonMark pairs them: a run of three that
    /// nothing closes is literal, so what follows it is prose and is escaped.
    #[test]
    fn unmatched_backtick_strings_cannot_unescape_what_follows() {
        let id = "`` @octocat <img src=x> **bold** [link](https://evil.example)";
        assert_eq!(
            inline(&format!("case `{id}` was edited")),
            "case \\`\\`\\` @\u{200B}octocat \\<img src=x\\> \\*\\*bold\\*\\* \\[link\\](https:\u{200B}//evil.example)\\` was edited"
        );
        // A run of two closes only at the next run of two; the single tick inside is code.
        assert_eq!(inline("a `` x ` <b> `` b"), "a `` x ` <b> `` b");
        assert_eq!(inline("` x `` <b> `"), "` x `` <b> `");
        // A span, then a run of two that nothing closes, then a lone tick.
        assert_eq!(
            inline("`a` `` <b> @team `"),
            "`a` \\`\\` \\<b\\> @\u{200B}team \\`"
        );
        // An even number of ticks that do not pair is still no code span.
        assert_eq!(
            inline("`` *x* ` *y* ` *z* `"),
            "\\`\\` \\*x\\* ` *y* ` \\*z\\* \\`"
        );
        assert_eq!(inline("`@octocat <b>`"), "`@octocat <b>`");
        assert_eq!(inline("\\`*a*`"), "\\\\`*a*`");
    }

    #[test]
    fn no_link_list_or_table_break_comes_out_of_prose() {
        assert_eq!(
            inline("see www.evil.example or http://x.test"),
            "see www\u{200B}.evil.example or http:\u{200B}//x.test"
        );
        assert_eq!(inline("a@b.example"), "a@\u{200B}b.example");
        assert_eq!(
            inline("fixes #12 and org/repo#3"),
            "fixes \\#\u{200B}12 and org/repo\\#\u{200B}3"
        );
        assert_eq!(inline("# heading #x"), "\\# heading \\#x");
        assert_eq!(inline("- item"), "\\- item");
        assert_eq!(inline("  + item"), "  \\+ item");
        assert_eq!(inline("12. x"), "12\\. x");
        assert_eq!(inline("3) x 4. y"), "3\\) x 4. y");
        assert_eq!(inline("2024 was"), "2024 was");
        assert_eq!(inline("`a|b` c|d"), "`a|b` c\\|d");
        assert_eq!(inline_cell("`a|b` c|d"), "`a\\|b` c\\|d");
    }

    #[test]
    fn code_spans_and_fences_outgrow_their_content() {
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(code("has ` tick"), "``has ` tick``");
        assert_eq!(code("`edge`"), "`` `edge` ``");
        assert_eq!(table_cell(&code("a|b")), "`a\\|b`");
        assert_eq!(fenced("-old\n+new\n"), "```diff\n-old\n+new\n```\n");
        assert_eq!(fenced("has ```` four"), "`````text\nhas ```` four\n`````\n");
    }
}
