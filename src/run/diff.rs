//! Completion diffs for people: unified diffs (similar) of a baseline completion against
//! the current one. Normalized completions are often one line, so they are laid out
//! first: JSON pretty-printed, prose one sentence per line.

use similar::TextDiff;

/// A unified diff of `baseline` -> `current`, or `None` when they are equal.
pub fn completion_diff(
    baseline: &str,
    current: &str,
    baseline_label: &str,
    current_label: &str,
) -> Option<String> {
    if baseline == current {
        return None;
    }
    let (old, new) = (display_lines(baseline), display_lines(current));
    let diff = TextDiff::from_lines(&old, &new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(baseline_label, current_label)
        .to_string();
    Some(text)
}

/// The completion laid out for reading, one unit per line, ending in a newline.
pub fn display_lines(completion: &str) -> String {
    let mut out = match serde_json::from_str::<serde_json::Value>(completion.trim()) {
        Ok(value) if value.is_object() || value.is_array() => {
            serde_json::to_string_pretty(&value).unwrap_or_default()
        }
        _ if completion.contains('\n') => completion.to_owned(),
        _ => sentences(completion),
    };
    if !out.ends_with('\n') {
        out.push('\n');
    }
    crate::text::visible_controls(&out)
}

/// One sentence per line: breaks after `.`, `?` or `!` followed by a space.
fn sentences(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous = '\0';
    for character in text.chars() {
        if character == ' ' && matches!(previous, '.' | '?' | '!') {
            out.push('\n');
        } else {
            out.push(character);
        }
        previous = character;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_diffed_key_by_key() {
        let diff = completion_diff(
            r#"{"a":1,"b":"x"}"#,
            r#"{"a":1,"b":"y"}"#,
            "baseline",
            "current",
        )
        .unwrap();
        assert!(diff.contains("--- baseline\n+++ current\n"), "{diff}");
        assert!(
            diff.contains("-  \"b\": \"x\"\n+  \"b\": \"y\"\n"),
            "{diff}"
        );
        assert!(diff.contains("   \"a\": 1,\n"), "{diff}");
    }

    #[test]
    fn prose_is_diffed_sentence_by_sentence() {
        let diff = completion_diff(
            "Hello. Your order shipped.",
            "Hello. As an AI, I think your order shipped.",
            "a",
            "b",
        )
        .unwrap();
        assert!(
            diff.contains(
                " Hello.\n-Your order shipped.\n+As an AI, I think your order shipped.\n"
            ),
            "{diff}"
        );
        assert_eq!(completion_diff("same", "same", "a", "b"), None);
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        let diff =
            completion_diff("hello fine", "hello evil\r\u{1b}[2Khello fine", "a", "b").unwrap();
        assert!(
            diff.contains("+hello evil\\r\\u{1b}[2Khello fine\n"),
            "{diff}"
        );
        assert!(!diff.contains('\r') && !diff.contains('\u{1b}'), "{diff}");
        // A move from LF to CRLF is visible, and plain text is left as it is.
        let diff = completion_diff("one\ntwo\n", "one\r\ntwo\r\n", "a", "b").unwrap();
        assert!(diff.contains("+one\\r\n+two\\r\n"), "{diff}");
        assert_eq!(display_lines("caf\u{e9}\tok\n"), "caf\u{e9}\tok\n");
        assert_eq!(display_lines("a\u{202e}b"), "a\\u{202e}b\n");
    }
}
