//! Putting untrusted text (case ids, messages, completion diffs) into Markdown so that it
//! reads as written: no accidental emphasis, links, HTML, table breaks or @-mentions.

/// Prose with `code spans` kept: outside the spans, Markdown punctuation is
/// backslash-escaped and `@` cannot mention anyone; line breaks become spaces.
pub fn inline(text: &str) -> String {
    let flat = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
    let balanced = flat.matches('`').count().is_multiple_of(2);
    let mut escaped = String::with_capacity(flat.len() + 8);
    for (index, segment) in flat.split('`').enumerate() {
        let in_code = balanced && index % 2 == 1;
        if index > 0 {
            escaped.push_str(if balanced { "`" } else { "\\`" });
        }
        if in_code {
            escaped.push_str(segment);
        } else {
            escape_prose(segment, &mut escaped);
        }
    }
    escaped
}

fn escape_prose(text: &str, out: &mut String) {
    for character in text.chars() {
        match character {
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '~' | '|' | '#' | '&' | '!' => {
                out.push('\\');
                out.push(character);
            }
            // A zero-width space after `@` keeps GitHub from notifying a user or team.
            '@' => out.push_str("@\u{200B}"),
            _ => out.push(character),
        }
    }
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
