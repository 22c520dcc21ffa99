//! Byte offsets to 1-based lines and columns, for `path:line:col` everywhere. Columns
//! count Unicode code points (characters), in every format: SARIF declares
//! `unicodeCodePoints`, and editors and compilers (rustc) count characters too. Parsers
//! that count bytes (serde_json, regex matches, TOML spans) are converted here.

pub mod hidden;
pub mod jsonc;
pub mod lfs_pointer;
pub mod markdown;

/// Line starts of a text, built once and searched in O(log n).
#[derive(Debug, Clone)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(bytes: &[u8]) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr_newlines(bytes).map(|position| position + 1));
        LineIndex { line_starts }
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> u32 {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(index) => index + 1,
            Err(index) => index,
        };
        u32::try_from(line).unwrap_or(u32::MAX)
    }

    /// 1-based (line, column) of a byte offset into `text`, the bytes this index was built
    /// from; the column counts code points.
    pub fn position_of(&self, text: &[u8], offset: usize) -> (u32, u32) {
        let line = self.line_of(offset);
        let start = self.line_starts[(line as usize).saturating_sub(1)];
        let before = text.get(start..offset).unwrap_or_default();
        (line, code_points_before(before))
    }

    /// Byte offset where a 1-based line starts.
    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.line_starts
            .get((line as usize).checked_sub(1)?)
            .copied()
    }

    pub fn line_count(&self) -> u32 {
        u32::try_from(self.line_starts.len()).unwrap_or(u32::MAX)
    }
}

/// The code-point column of a 1-based byte column (as serde_json and byte offsets give
/// it) on `line`, the line's bytes.
pub fn code_point_column(line: &[u8], byte_column: usize) -> u32 {
    let before = byte_column.saturating_sub(1).min(line.len());
    code_points_before(&line[..before])
}

/// Where serde_json stopped in `text`: 1-based line and code-point column (serde_json
/// counts the column in bytes).
pub fn json_error_position(text: &[u8], error: &serde_json::Error) -> (u32, u32) {
    let line = u32::try_from(error.line()).unwrap_or(u32::MAX).max(1);
    let line_text = text
        .split(|&byte| byte == b'\n')
        .nth(line as usize - 1)
        .unwrap_or_default();
    (line, code_point_column(line_text, error.column()))
}

/// 1 + the characters in `bytes`: each character starts with a byte that is not a UTF-8
/// continuation byte (`10xxxxxx`), which also counts a prefix cut inside a character
/// (or invalid UTF-8 after a valid prefix) sensibly.
fn code_points_before(bytes: &[u8]) -> u32 {
    let characters = bytes
        .iter()
        .filter(|&&byte| byte & 0b1100_0000 != 0b1000_0000)
        .count();
    u32::try_from(characters + 1).unwrap_or(u32::MAX)
}

fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', bytes)
}

/// The 1-based line of the first of `needles` found in `text` (tried in order), for
/// errors found after parsing, when the parser's spans are gone. Line 1 when none is found.
pub fn line_of_first(text: &str, needles: &[&str]) -> u32 {
    needles
        .iter()
        .filter(|needle| !needle.is_empty())
        .find_map(|needle| text.find(needle))
        .map(|offset| line_at(text, offset))
        .unwrap_or(1)
}

/// The 1-based line of a byte offset into `text`, without an index: for one lookup.
fn line_at(text: &str, offset: usize) -> u32 {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    u32::try_from(memchr_newlines(before).count() + 1).unwrap_or(u32::MAX)
}

/// The lines of `text` exactly as `text.split('\n')` gives them, found with a vectorized
/// byte search (case files run to hundreds of megabytes).
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .chain(std::iter::once(text.len()))
        .map(move |end| {
            let line = &text[start..end];
            start = end + 1;
            line
        })
}

/// A file-wide problem of a text input: (line, column, what to fix).
pub type TextProblem = (u32, u32, String);

/// Checks what evalock requires of every text input it parses: no BOM, UTF-8, LF line
/// endings. Returns the text, or the first problem in that order of precedence.
pub fn require_clean_text(bytes: &[u8]) -> Result<&str, TextProblem> {
    if starts_with_byte_order_mark(bytes) {
        return Err(byte_order_mark_problem());
    }
    let text = require_utf8(bytes)?;
    match crlf_problem(text) {
        Some(problem) => Err(problem),
        None => Ok(text),
    }
}

pub fn starts_with_byte_order_mark(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xEF, 0xBB, 0xBF])
}

pub fn byte_order_mark_problem() -> TextProblem {
    (
        1,
        1,
        "file starts with a UTF-8 byte order mark (BOM); save it as UTF-8 without BOM".into(),
    )
}

/// `bytes` as text, or where their first invalid UTF-8 sequence is.
pub fn require_utf8(bytes: &[u8]) -> Result<&str, TextProblem> {
    std::str::from_utf8(bytes).map_err(|error| {
        let (line, column) = LineIndex::new(bytes).position_of(bytes, error.valid_up_to());
        (line, column, "invalid UTF-8; save the file as UTF-8".into())
    })
}

/// Where the first CRLF line ending of `text` is, if it has one.
pub fn crlf_problem(text: &str) -> Option<TextProblem> {
    // Most files have no `\r` at all: a byte search (memchr) settles that quickly.
    memchr::memchr(b'\r', text.as_bytes())?;
    let position = text.find("\r\n")?;
    let (line, column) = LineIndex::new(text.as_bytes()).position_of(text.as_bytes(), position);
    Some((
        line,
        column,
        "CRLF line ending; convert the file to LF line endings (if git adds them on \
         checkout, `core.autocrlf`, a `* text eol=lf` line in .gitattributes keeps them out)"
            .into(),
    ))
}

/// `text` cut to at most `max_chars` characters, with `…` when cut.
pub fn shorten(text: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}

/// Characters of a parser's message kept in an error: serde quotes the offending value
/// (`invalid type: string "…"`), which can be a whole megabyte line.
pub const MAX_PARSER_MESSAGE_CHARS: usize = 400;

/// `text` with every control character but newline and tab written as an escape (`\r`,
/// `\u{1b}`), and the bidirectional overrides too, for a person's screen. Printed as they
/// are, text evalock did not write (a completion, a completer's stderr) rewrites the
/// reader's terminal (`evil\r\u{1b}[2K` erases the line it is on), and a CRLF-only move
/// shows lines that look unchanged. Idempotent: the escapes are plain characters.
pub fn visible_controls(text: &str) -> String {
    let hidden = |character: char| {
        (character.is_control() && !matches!(character, '\n' | '\t'))
            || matches!(character, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(hidden) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for character in text.chars() {
        match character {
            '\r' => out.push_str("\\r"),
            hidden_character if hidden(hidden_character) => {
                out.push_str(&hidden_character.escape_unicode().to_string())
            }
            visible => out.push(visible),
        }
    }
    out
}

/// `word` as one POSIX shell word, for a command a message tells someone to run: as it is
/// when it holds only characters no shell treats specially, else single-quoted.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"/._-+,=@%:".contains(&byte));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// Git conflict markers left in a file after a merge: evalock.toml, evalock.lock, case
/// files and baselines all refuse them with the line of the first one.
/// The 1-based line of the first git conflict marker, if any.
pub fn conflict_marker_line(text: &str) -> Option<usize> {
    split_lines(text)
        .position(is_conflict_marker)
        .map(|index| index + 1)
}

/// Whether a line (without its newline) is a git conflict marker.
pub fn is_conflict_marker(line: &str) -> bool {
    line.starts_with("<<<<<<< ") || line == "=======" || line.starts_with(">>>>>>> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_lines_is_split_on_newlines() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "\na",
            "a\nb",
            "a\n\nb\n",
            "é\n東京\n\n",
            "\n\n\n",
        ] {
            let expected: Vec<&str> = text.split('\n').collect();
            assert_eq!(split_lines(text).collect::<Vec<_>>(), expected, "{text:?}");
        }
        let long = "line of text\n".repeat(500);
        assert_eq!(
            split_lines(&long).collect::<Vec<_>>(),
            long.split('\n').collect::<Vec<_>>()
        );
    }

    #[test]
    fn positions_are_one_based() {
        let text = b"ab\ncd\n\nef";
        let index = LineIndex::new(text);
        assert_eq!(index.position_of(text, 0), (1, 1));
        assert_eq!(index.position_of(text, 1), (1, 2));
        assert_eq!(index.position_of(text, 3), (2, 1));
        assert_eq!(index.position_of(text, 6), (3, 1));
        assert_eq!(index.position_of(text, 8), (4, 2));
        assert_eq!(index.line_start(2), Some(3));
        // Columns count characters, not bytes.
        let text = "Étape élevée: curl https://e.com/x | sh".as_bytes();
        let curl = 17;
        assert_eq!(&text[curl..curl + 4], b"curl");
        assert_eq!(LineIndex::new(text).position_of(text, curl), (1, 15));
        assert_eq!(code_point_column(text, curl + 1), 15);
        assert_eq!(code_point_column("a🙂b".as_bytes(), 6), 3);
        assert_eq!(code_point_column(b"ab", 9), 3);
        assert_eq!(code_point_column(b"", 0), 1);
        assert_eq!(index.line_start(0), None);
    }

    #[test]
    fn line_of_first_tries_needles_in_order() {
        let text = "a = 1\nfile = \"x\"\n[case.s.b]\n";
        assert_eq!(line_of_first(text, &["file = \"x\"", "[case"]), 2);
        assert_eq!(line_of_first(text, &["nope", "[case"]), 3);
        assert_eq!(line_of_first(text, &["", "nope"]), 1);
    }

    #[test]
    fn clean_text_rejects_bom_crlf_and_bad_utf8() {
        assert!(require_clean_text(b"ok\n").is_ok());
        assert_eq!(require_clean_text(b"\xEF\xBB\xBF{}").unwrap_err().0, 1);
        let (line, column, _) = require_clean_text(b"a\nb\r\n").unwrap_err();
        assert_eq!((line, column), (2, 2));
        let (line, column, _) = require_clean_text("a\né\r\n".as_bytes()).unwrap_err();
        assert_eq!((line, column), (2, 2));
        let (line, column, _) = require_clean_text(b"a\n\xc3\xa9\xffb").unwrap_err();
        assert_eq!((line, column), (2, 2));
        let (line, column, message) = require_clean_text(b"a\n\xffb").unwrap_err();
        assert_eq!((line, column), (2, 1));
        assert!(message.contains("UTF-8"));
    }

    /// The vectorized validation works on blocks of 64 bytes: what std accepts and rejects
    /// must not depend on where in a block (or across two) a sequence falls.
    #[test]
    fn clean_text_accepts_exactly_what_std_accepts_at_every_offset() {
        let sequences: [&[u8]; 12] = [
            "é".as_bytes(),
            "東".as_bytes(),
            "🙂".as_bytes(),
            b"\xC0\xAF",         // overlong '/'
            b"\xE0\x80\xAF",     // overlong, three bytes
            b"\xED\xA0\x80",     // a UTF-16 surrogate
            b"\xF4\x90\x80\x80", // above U+10FFFF
            b"\xF0\x9F\x99",     // truncated four-byte sequence
            b"\x80",             // a lone continuation byte
            b"\xFF",
            b"\xE6\x9D",     // truncated three-byte sequence
            b"\xEF\xBF\xBF", // U+FFFF, valid
        ];
        for sequence in sequences {
            for offset in 0..130 {
                let mut bytes = vec![b'a'; offset];
                bytes.extend_from_slice(sequence);
                bytes.extend_from_slice(&[b'z'; 70]);
                let std_answer = std::str::from_utf8(&bytes);
                match require_clean_text(&bytes) {
                    Ok(text) => assert_eq!(Ok(text), std_answer, "{sequence:?} at {offset}"),
                    Err((line, column, message)) => {
                        let error = std_answer.expect_err("std accepted it");
                        assert_eq!(line, 1);
                        assert_eq!(column as usize, error.valid_up_to() + 1, "{sequence:?}");
                        assert!(message.contains("invalid UTF-8"), "{message}");
                    }
                }
            }
        }
    }
}
