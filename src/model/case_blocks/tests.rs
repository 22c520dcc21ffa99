use super::*;
use crate::model::cases::parse_case_file_with;
use crate::model::trickle::Trickle;

/// Case files covering what a cut between blocks could change: lines of every kind,
/// blank lines, a missing last newline, and each file-wide problem alone, together and
/// at the start, middle and end.
fn case_files() -> Vec<Vec<u8>> {
    let mut lines: Vec<String> = (0..40)
        .map(|number| match number % 9 {
            0 => String::new(),
            1 => "not json".to_owned(),
            2 => format!("{{\"id\": \"dup{number}\", \"id\": \"dup{number}\"}}"),
            3 => format!("  {{\"id\": \"caf\\u00e9-{number}\", \"expect\": {{\"must_include\": [\"東京\"]}}}}"),
            4 => format!("{{\"id\": \"r{number}\", \"retired\": true, \"version\": 2}}"),
            5 => "   ".to_owned(),
            _ => format!("{{\"input\": {{\"text\": \"line {number}\"}}, \"id\": \"c{number}\"}}"),
        })
        .collect();
    lines.push(format!(
        "{{\"id\": \"long\", \"input\": \"{}\"}}",
        "x".repeat(300)
    ));
    let text = lines.join("\n");
    let with_line = |at: usize, line: &str| {
        let mut edited = lines.clone();
        edited.insert(at, line.to_owned());
        edited.join("\n")
    };
    let mut files: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"\n".to_vec(),
        b"\n\n\n".to_vec(),
        b"{\"id\": \"a\"}".to_vec(),
        text.clone().into_bytes(),
        format!("{text}\n").into_bytes(),
        format!("\u{feff}{text}").into_bytes(),
        // A zero-width no-break space at the start of a later line is just a character.
        with_line(20, "\u{feff}{\"id\": \"zw\"}").into_bytes(),
        with_line(25, "{\"id\": \"crlf\"}\r").into_bytes(),
        with_line(1, "<<<<<<< ours").into_bytes(),
        with_line(30, "=======").into_bytes(),
    ];
    for at in [0, 17, 39] {
        let mut bytes = with_line(at, "{\"id\": \"bad\"}").into_bytes();
        let position = bytes
            .windows(5)
            .position(|window| window == b"\"bad\"")
            .expect("the inserted line");
        bytes[position + 1] = 0xFF;
        files.push(bytes.clone());
        // Invalid UTF-8 outranks a CRLF and a conflict marker found before it.
        let mut problems_first = with_line(0, ">>>>>>> theirs").into_bytes();
        problems_first.splice(0..0, b"{\"id\": \"x\"}\r\n".iter().copied());
        problems_first.extend_from_slice(b"\n");
        problems_first.extend_from_slice(&bytes);
        files.push(problems_first);
    }
    // A CRLF outranks a conflict marker found before it.
    files.push(format!("{}\n{}", with_line(2, "======="), with_line(35, "{}\r")).into_bytes());
    files
}

#[test]
fn blocks_give_what_the_whole_file_gives() {
    for (index, bytes) in case_files().iter().enumerate() {
        for detail in [CaseDetail::Summary, CaseDetail::Full] {
            let whole = parse_case_file_with("evals/a.jsonl", bytes, detail);
            for block_bytes in [1, 2, 5, 64, 333, 1 << 20] {
                let from_blocks =
                    parse_in_blocks("evals/a.jsonl", bytes.as_slice(), detail, block_bytes)
                        .expect("reading a slice");
                assert_eq!(from_blocks, whole, "file {index}, blocks of {block_bytes}");
                let trickled =
                    parse_in_blocks("evals/a.jsonl", Trickle::new(bytes), detail, block_bytes)
                        .expect("reading a trickle");
                assert_eq!(
                    trickled, whole,
                    "file {index}, trickled, blocks of {block_bytes}"
                );
            }
        }
    }
}

#[test]
fn the_cases_cover_each_problem_and_plain_cases() {
    let messages: Vec<String> = case_files()
        .iter()
        .map(|bytes| parse_case_file_with("evals/a.jsonl", bytes, CaseDetail::Summary))
        .filter(|parsed| parsed.cases.is_empty())
        .filter_map(|parsed| {
            parsed
                .problems
                .first()
                .map(|problem| problem.message.clone())
        })
        .collect();
    for expected in ["byte order mark", "invalid UTF-8", "CRLF", "merge conflict"] {
        assert!(
            messages.iter().any(|message| message.contains(expected)),
            "no file yields {expected}: {messages:?}"
        );
    }
    let plain = parse_case_file_with("evals/a.jsonl", &case_files()[5], CaseDetail::Summary);
    assert!(
        plain.cases.len() > 20 && plain.problems.len() > 5,
        "{plain:?}"
    );
}

#[test]
fn blocks_are_whole_lines() {
    let text = b"one\ntwo\n\nfour is a longer line\nfive";
    let mut blocks = LineBlocks::new(Trickle::new(text), 6);
    let mut seen = Vec::new();
    while let Some(block) = blocks.next_block().expect("reading") {
        seen.push(String::from_utf8_lossy(&block).into_owned());
        // A block given back lends its buffer to the next one; one kept does not.
        if seen.len() == 1 {
            blocks.give_back(block);
        }
    }
    // Six bytes read after what the last block left: a block ends at the last newline
    // read; a longer line is read on to its end; the end of the input ends the last block.
    assert_eq!(seen, ["one\n", "two\n\n", "four is a longer line\nfive"]);
}

/// Blocks are numbered from the lines their parse counted, and a block that was only
/// checked (after a CRLF or a conflict marker) from a count of its own: the line of a
/// later problem is the whole file's.
#[test]
fn problems_after_a_checked_block_keep_their_file_lines() {
    let mut text = String::new();
    for number in 0..30 {
        text.push_str(&format!("{{\"id\": \"c{number}\"}}\n"));
        if number == 3 {
            text.push_str("<<<<<<< ours\n");
        }
    }
    let mut bytes = text.into_bytes();
    // Invalid UTF-8 on line 26 outranks the conflict marker on line 5.
    let at = bytes
        .windows(5)
        .position(|window| window == b"\"c24\"")
        .expect("the case");
    bytes[at + 1] = 0xFF;
    for block_bytes in [1, 16, 40, 1 << 20] {
        let parsed = parse_in_blocks(
            "evals/a.jsonl",
            bytes.as_slice(),
            CaseDetail::Summary,
            block_bytes,
        )
        .expect("reading a slice");
        let lines: Vec<u32> = parsed.problems.iter().map(|problem| problem.line).collect();
        assert_eq!(lines, [26], "blocks of {block_bytes}: {parsed:?}");
    }
}
