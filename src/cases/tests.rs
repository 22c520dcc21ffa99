use super::*;

fn ids(parsed: &ParsedCaseFile) -> Vec<(&str, u32, u32)> {
    parsed
        .cases
        .iter()
        .map(|case| (&*case.id, case.line, case.end_line))
        .collect()
}

#[test]
fn repeated_text_is_shared_until_it_changes() {
    let mut shared = SharedText::default();
    let first = shared.share("struct-3");
    let again = shared.share("struct-3");
    assert!(Arc::ptr_eq(&first, &again));
    let other = shared.share("struct-4");
    assert_eq!(&*other, "struct-4");
    assert!(!Arc::ptr_eq(&first, &shared.share("struct-3")));
}

#[test]
fn jsonl_keeps_one_line_per_case_and_skips_blank_lines() {
    let parsed = parse_case_file(
        "a.jsonl",
        b"{\"id\":\"one\"}\n\n{\"id\":\"two\",\"version\":3}\n",
    );
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(ids(&parsed), vec![("one", 1, 1), ("two", 3, 3)]);
    assert_eq!(parsed.cases[1].version, 3);
}

#[test]
fn ids_of_every_length_are_kept_exactly_by_every_reader() {
    // Ids up to 24 bytes are stored inline in the case, longer ones on the heap: the
    // lengths on either side of that line, and multi-byte text that straddles it.
    let wanted = [
        "a".repeat(23),
        "b".repeat(24),
        "c".repeat(25),
        "3f0c9a4e-5b1d-4c7e-9a2f-8d6b1e0c7a55".to_owned(),
        "ü".repeat(12),
        format!("{}é", "d".repeat(23)),
        "東京".to_owned(),
    ];
    let jsonl: String = wanted
        .iter()
        .map(|id| format!("{{\"id\":\"{id}\"}}\n"))
        .collect();
    let array = format!("[{}]", jsonl.trim_end().replace('\n', ","));
    let yaml: String = wanted
        .iter()
        .map(|id| format!("- id: \"{id}\"\n"))
        .collect();
    for (path, text, detail) in [
        ("a.jsonl", &jsonl, CaseDetail::Summary),
        ("a.jsonl", &jsonl, CaseDetail::Full),
        ("a.json", &array, CaseDetail::Summary),
        ("a.yaml", &yaml, CaseDetail::Summary),
    ] {
        let parsed = parse_case_file_with(path, text.as_bytes(), detail);
        assert!(parsed.problems.is_empty(), "{path}: {:?}", parsed.problems);
        let ids: Vec<&str> = parsed.cases.iter().map(|case| &*case.id).collect();
        assert_eq!(ids, wanted, "{path} {detail:?}");
    }
}

#[test]
fn jsonl_bad_line_is_reported_and_the_rest_still_load() {
    let parsed = parse_case_file(
        "a.jsonl",
        b"{\"id\":\"one\"}\n{\"id\": \"x\", \"a\":1, \"a\":2}\n{\"id\":\"three\"}\n",
    );
    assert_eq!(ids(&parsed), vec![("one", 1, 1), ("three", 3, 3)]);
    assert_eq!(parsed.problems.len(), 1);
    assert_eq!(parsed.problems[0].line, 2);
    assert!(parsed.problems[0].message.contains("duplicate key"));
    // The column of the second `"a"`, not of the end of its value.
    assert_eq!(parsed.problems[0].column, 20);
}

/// serde_json counts columns in bytes; evalock's count characters, in every file kind.
#[test]
fn columns_of_parse_errors_count_characters() {
    let jsonl = parse_case_file("a.jsonl", "{\"id\": \"été\", }\n".as_bytes());
    assert_eq!((jsonl.problems[0].line, jsonl.problems[0].column), (1, 15));
    let json = parse_case_file("a.json", "[\n  {\"id\": \"été\", }\n]\n".as_bytes());
    assert_eq!((json.problems[0].line, json.problems[0].column), (2, 17));
    let yaml = parse_case_file("a.yaml", "- id: été\n  input: [é, \n".as_bytes());
    assert_eq!(yaml.problems[0].line, 2, "{:?}", yaml.problems);
    let number = parse_case_file(
        "a.jsonl",
        "{\"id\": \"é\", \"x\": 9007199254740993}\n".as_bytes(),
    );
    assert_eq!(
        (number.problems[0].line, number.problems[0].column),
        (1, 18),
        "{:?}",
        number.problems
    );
}

#[test]
fn a_duplicate_key_in_a_json_document_is_reported_on_its_own_line() {
    let text = "[\n  {\n    \"id\": \"x1\",\n    \"expect\": {\n      \"must_include\": [\"hi\"],\n      \"must_include\": [\"ho\"]\n    }\n  }\n]\n";
    let parsed = parse_case_file("cases.json", text.as_bytes());
    assert_eq!(parsed.problems.len(), 1, "{:?}", parsed.problems);
    let problem = &parsed.problems[0];
    assert_eq!((problem.line, problem.column), (6, 7), "{problem:?}");
    assert!(problem.message.contains("duplicate key `must_include`"));
}

/// A duplicate key (or a YAML NaN) refuses its own case; the document's other cases load, with the
/// digests and spans they have in a clean file (as on a JSONL line).
#[test]
fn a_duplicate_key_in_a_document_refuses_only_its_case() {
    let files = [
        (
            "a.json",
            "[\n  {\"id\": \"a\", \"x\": 1, \"x\": 2},\n  {\"id\": \"b\",\n   \"y\": {\"é\": 1, \"é\": 1}},\n  {\"id\": \"c\", \"input\": \"été\"}\n]\n",
            "[\n  {\"id\": \"a\", \"x\": 1},\n  {\"id\": \"b\",\n   \"y\": {\"é\": 1}},\n  {\"id\": \"c\", \"input\": \"été\"}\n]\n",
            [(2, 23), (4, 18)],
        ),
        (
            "k.json",
            "{\"a\": {\"x\": 1, \"x\": 2},\n \"c\": {\"input\": [1]},\n \"b\": {\"y\": {\"z\": 1,\n  \"z\": 2}}}\n",
            "{\"a\": {\"x\": 1},\n \"c\": {\"input\": [1]},\n \"b\": {\"y\": {\"z\": 1}}}\n",
            [(1, 16), (4, 3)],
        ),
        (
            "a.yaml",
            "# cases\n- id: a\n  x: 1\n  x: 2\n- id: c\n  input: {q: [1, 2]}\n-\n  id: b\n  y: {z: 1, z: 2}\n",
            "# cases\n- id: a\n  x: 1\n- id: c\n  input: {q: [1, 2]}\n-\n  id: b\n  y: {z: 1}\n",
            [(4, 3), (9, 13)],
        ),
        (
            "k.yaml",
            "a:\n  x: 1\n  x: 2\nc:\n  input: {q: [1, 2]}\n\nb:\n  y: {z: 1, z: 2}\n",
            "a:\n  x: 1\nc:\n  input: {q: [1, 2]}\n\nb:\n  y: {z: 1}\n",
            [(3, 3), (8, 13)],
        ),
        (
            "n.yaml",
            "- id: a\n  x: .nan\n- id: c\n  input: {q: [1, 2]}\n- id: b\n  y: [-.inf]\n",
            "- id: a\n  x: 1\n- id: c\n  input: {q: [1, 2]}\n- id: b\n  y: [1]\n",
            [(2, 6), (6, 7)],
        ),
    ];
    for (path, text, clean, positions) in files {
        let parsed = parse_case_file(path, text.as_bytes());
        let found: Vec<(u32, u32)> = parsed
            .problems
            .iter()
            .map(|problem| (problem.line, problem.column))
            .collect();
        assert_eq!(found, positions, "{path}: {:?}", parsed.problems);
        assert!(parsed.problems.iter().all(|problem| problem.is_malformed()));
        let loaded: Vec<&str> = parsed.cases.iter().map(|case| &*case.id).collect();
        assert_eq!(loaded, ["c"], "{path}");
        let clean = parse_case_file(path, clean.as_bytes());
        assert!(clean.problems.is_empty(), "{path}: {:?}", clean.problems);
        let clean_c = clean.cases.iter().find(|case| &*case.id == "c").expect("c");
        assert_eq!(parsed.cases[0].digest, clean_c.digest, "{path}");
        assert_eq!(parsed.cases[0].value(), clean_c.value(), "{path}");
    }
}

/// A case read on its own lines keeps what only looks like the next case's dash: an
/// empty item ending a list inside it, at the end of the file or before the next case.
#[test]
fn a_case_read_on_its_own_lines_keeps_its_own_trailing_dashes() {
    for (text, clean) in [
        (
            "- id: a\n  tags:\n  - x\n  -\n- id: b\n  y: 1\n  y: 2\n",
            "- id: a\n  tags:\n  - x\n  -\n- id: b\n  y: 1\n  z: 2\n",
        ),
        (
            "- id: a\n  tags:\n  - x\n  - # none\n-\n  id: b\n  y: 1\n  y: 2\n",
            "- id: a\n  tags:\n  - x\n  - # none\n-\n  id: b\n  y: 1\n  z: 2\n",
        ),
        (
            "- id: b\n  y: 1\n  y: 2\n- id: a\n  tags:\n  - x\n  -\n",
            "- id: b\n  y: 1\n  z: 2\n- id: a\n  tags:\n  - x\n  -\n",
        ),
    ] {
        let parsed = parse_case_file("a.yaml", text.as_bytes());
        assert_eq!(parsed.problems.len(), 1, "{text}: {:?}", parsed.problems);
        let clean = parse_case_file("a.yaml", clean.as_bytes());
        assert!(clean.problems.is_empty(), "{:?}", clean.problems);
        let (Some(alone), Some(whole)) = (
            parsed.cases.iter().find(|case| &*case.id == "a"),
            clean.cases.iter().find(|case| &*case.id == "a"),
        ) else {
            panic!("{text}: case `a` did not load: {:?}", parsed.problems);
        };
        assert_eq!(alone.value(), whole.value(), "{text}");
        assert_eq!(alone.digest, whole.digest, "{text}");
        assert_eq!((alone.line, alone.end_line), (whole.line, whole.end_line));
    }
}

/// When a case cannot be read on its own lines (an alias to another case's anchor,
/// several cases on one line) or the file has another fault, the whole file is refused at
/// the first problem, as before.
#[test]
fn a_document_that_cannot_be_split_into_cases_is_refused_whole() {
    for (path, text, position) in [
        (
            "a.yaml",
            "- id: a\n  input: &i {q: 1}\n  x: 1\n  x: 2\n- id: b\n  input: *i\n",
            (4, 3),
        ),
        ("b.yaml", "[{id: a, x: 1, x: 2}, {id: b}]\n", (1, 16)),
        // An item without an `id` whose value starts below its dash: on its own lines it
        // reads as a file of cases keyed by id (or as a list of cases), and its one member
        // as a case `foo` that the whole file does not have.
        (
            "c.yaml",
            "- id: a\n  y: 1\n  y: 2\n-\n  foo:\n    id: foo\n",
            (3, 3),
        ),
        (
            "d.yaml",
            "- id: a\n  y: 1\n  y: 2\n-\n  [{id: foo}]\n",
            (3, 3),
        ),
        (
            "a.json",
            "[{\"id\": \"a\", \"x\": 1, \"x\": 2},\n {\"id\": \"b\", \"x\": NaN}]\n",
            (1, 22),
        ),
        (
            "k.json",
            "{\"a\": {\"x\": 1}, \"a\": {\"x\": 2}}\n",
            (1, 17),
        ),
    ] {
        let parsed = parse_case_file(path, text.as_bytes());
        assert!(parsed.cases.is_empty(), "{path}: {:?}", parsed.cases);
        let found: Vec<(u32, u32)> = parsed
            .problems
            .iter()
            .map(|problem| (problem.line, problem.column))
            .collect();
        assert_eq!(found, [position], "{path}: {:?}", parsed.problems);
    }
}

#[test]
fn versions_stop_where_their_successor_is_still_exact() {
    for detail in [CaseDetail::Full, CaseDetail::Summary] {
        let parsed = parse_case_file_with(
            "a.jsonl",
            b"{\"id\":\"top\",\"version\":9007199254740991}\n{\"id\":\"over\",\"version\":9007199254740992}\n{\"id\":\"zero\",\"version\":0}\n",
            detail,
        );
        assert_eq!(ids(&parsed), vec![("top", 1, 1)]);
        assert_eq!(parsed.cases[0].version, MAX_CASE_VERSION);
        let lines: Vec<u32> = parsed.problems.iter().map(|problem| problem.line).collect();
        assert_eq!(lines, [2, 3], "{:?}", parsed.problems);
        assert!(parsed.problems[0]
            .message
            .contains("from 1 to 9007199254740991"));
    }
}

#[test]
fn json_array_elements_keep_their_spans() {
    let text = "[\n  {\n    \"id\": \"a\"\n  },\n  {\"id\": \"b, ]}\"}\n]\n";
    let parsed = parse_case_file("a.json", text.as_bytes());
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(ids(&parsed), vec![("a", 2, 4), ("b, ]}", 5, 5)]);
}

#[test]
fn json_object_of_objects_takes_ids_from_keys() {
    let parsed = parse_case_file(
        "a.json",
        b"{\n\"a\": {\"input\": 1},\n\"b\": {\"id\": \"b\"}\n}",
    );
    assert_eq!(ids(&parsed), vec![("a", 2, 2), ("b", 3, 3)]);
}

#[test]
fn json_single_case_object() {
    let parsed = parse_case_file(
        "case.json",
        b"{\n  \"id\": \"solo\",\n  \"version\": 3\n}\n",
    );
    // From its `{` to its `}`, not to the empty line after the file's last newline.
    assert_eq!(ids(&parsed), vec![("solo", 1, 4)]);
    let padded = parse_case_file("case.json", b"\n\n{\"id\": \"solo\"}\n\n\n");
    assert_eq!(ids(&padded), vec![("solo", 3, 3)]);
}

/// A single YAML case points at its first key, past the comments, blank lines and
/// `---` the file opens with; a file that opens with the case still points at line 1.
/// (Its span runs to the end of the file, as a single JSON case's does.)
#[test]
fn yaml_single_case_starts_at_its_first_key() {
    for (text, span) in [
        ("# the solo case\n\nid: solo\nversion: 3\n", (3, 4)),
        ("%YAML 1.2\n---\n# notes\n  # more\nid: solo\n", (5, 5)),
        ("--- # the case\nid: solo\nversion: 3\n", (2, 3)),
        ("# flow\n--- {id: solo}\n", (2, 2)),
        ("id: solo\nversion: 3\n", (1, 2)),
        ("id: solo\nversion: 3\n\n# retired notes\n\n", (1, 2)),
    ] {
        let parsed = parse_case_file("a.yaml", text.as_bytes());
        assert!(
            parsed.problems.is_empty(),
            "{text:?}: {:?}",
            parsed.problems
        );
        assert_eq!(ids(&parsed), vec![("solo", span.0, span.1)], "{text:?}");
    }
    let bad = parse_case_file("b.yaml", b"# one case\nid: solo\nx: 1\nx: 2\n");
    assert_eq!(bad.problems.len(), 1, "{:?}", bad.problems);
    assert_eq!(bad.problems[0].line, 4, "{:?}", bad.problems);
    let not_a_string = parse_case_file("c.yaml", b"# one case\n\nid: 7\n");
    assert_eq!(
        not_a_string.problems.len(),
        1,
        "{:?}",
        not_a_string.problems
    );
    assert_eq!(
        not_a_string.problems[0].line, 3,
        "{:?}",
        not_a_string.problems
    );
}

#[test]
fn yaml_list_spans_run_to_the_next_case() {
    let text = "# cases\n- id: a\n  input: hi\n\n- id: b\n  input: |-\n    two\n    lines\n";
    let parsed = parse_case_file("a.yaml", text.as_bytes());
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(ids(&parsed), vec![("a", 2, 3), ("b", 5, 8)]);
    assert_eq!(parsed.cases[1].value()["input"], "two\nlines");
}

#[test]
fn yaml_and_json_of_the_same_case_hash_the_same() {
    let yaml = parse_case_file(
        "a.yaml",
        b"- id: a\n  version: 2\n  expect: {must_include: [x]}\n",
    );
    let json = parse_case_file(
        "a.jsonl",
        b"{\"expect\":{\"must_include\":[\"x\"]},\"version\":2,\"id\":\"a\"}\n",
    );
    assert_eq!(yaml.cases[0].digest, json.cases[0].digest);
}

#[test]
fn yaml_duplicate_keys_are_problems() {
    let parsed = parse_case_file("a.yaml", b"- id: a\n  input: 1\n  input: 2\n");
    assert_eq!(parsed.problems.len(), 1, "{parsed:?}");
    assert!(parsed.problems[0].line >= 2, "{:?}", parsed.problems);
}

#[test]
fn yaml_nan_is_a_problem() {
    let parsed = parse_case_file("a.yaml", b"- id: a\n  score: .nan\n");
    assert_eq!(parsed.problems.len(), 1, "{parsed:?}");
}

/// YAML reads `1e400` as Infinity: the message names the number that was written, so
/// nobody looks for an Infinity that is not in the file.
#[test]
fn a_yaml_number_past_a_doubles_range_is_named_as_such() {
    let parsed = parse_case_file("a.yaml", b"- id: a\n  threshold: 1e400\n- id: b\n");
    assert_eq!(parsed.problems.len(), 1, "{parsed:?}");
    assert_eq!(parsed.problems[0].line, 2, "{:?}", parsed.problems);
    assert!(
        parsed.problems[0]
            .message
            .contains("past a double's range (such as 1e400)"),
        "{:?}",
        parsed.problems
    );
    // Finite numbers, however long, stay quiet.
    let quiet = parse_case_file("a.yaml", b"- id: a\n  threshold: 1e300\n");
    assert!(quiet.problems.is_empty(), "{quiet:?}");
}

#[test]
fn json_nan_is_a_problem() {
    let parsed = parse_case_file("a.jsonl", b"{\"id\":\"a\",\"x\":NaN}\n");
    assert_eq!(parsed.problems.len(), 1);
    assert_eq!(parsed.problems[0].line, 1);
    assert!(
        parsed.problems[0].message.contains("NaN and Infinity"),
        "{:?}",
        parsed.problems
    );
    let parsed = parse_case_file("a.json", b"[{\"id\":\"a\",\n\"x\": -Infinity}]");
    assert_eq!(parsed.problems[0].line, 2);
    assert!(
        parsed.problems[0].message.contains("NaN and Infinity"),
        "{:?}",
        parsed.problems
    );
}

#[test]
fn missing_or_non_string_ids_are_problems() {
    let parsed = parse_case_file(
        "a.jsonl",
        b"{\"input\":1}\n{\"id\":7}\n{\"id\":\"a\\nb\"}\n[1]\n",
    );
    let lines: Vec<u32> = parsed.problems.iter().map(|problem| problem.line).collect();
    assert_eq!(lines, vec![1, 2, 3, 4]);
    assert!(parsed.cases.is_empty());
}

#[test]
fn bom_and_crlf_are_problems() {
    assert_eq!(
        parse_case_file("a.jsonl", b"\xEF\xBB\xBF{\"id\":\"a\"}\n")
            .problems
            .len(),
        1
    );
    let crlf = parse_case_file("a.jsonl", b"{\"id\":\"a\"}\r\n");
    assert_eq!(crlf.problems[0].line, 1);
    assert!(crlf.problems[0].message.contains("CRLF"));
}

#[test]
fn retiring_does_not_move_the_contract_digest() {
    let live = parse_case_file("a.jsonl", b"{\"id\":\"a\",\"version\":2}\n")
        .cases
        .remove(0);
    let retired = parse_case_file(
        "a.jsonl",
        b"{\"id\":\"a\",\"version\":2,\"retired\":true}\n",
    )
    .cases
    .remove(0);
    assert!(retired.retired);
    assert_ne!(live.digest, retired.digest);
    assert_eq!(live.contract_digest(), retired.contract_digest());
}

#[test]
fn bad_versions_are_problems() {
    let parsed = parse_case_file(
        "a.jsonl",
        b"{\"id\":\"a\",\"version\":0}\n{\"id\":\"b\",\"version\":\"2\"}\n",
    );
    assert_eq!(parsed.problems.len(), 2);
}

/// An id a reviewer cannot tell from another (a zero-width space, a bidirectional
/// override) is refused; visible non-ASCII ids are ordinary ids.
#[test]
fn invisible_characters_in_an_id_are_refused_and_visible_ones_are_not() {
    for id in [
        "refund\\u200b",
        "\\u202eabc",
        "a\\u2066b\\u2069",
        "\\ufeffid",
        "soft\\u00adhyphen",
    ] {
        let line = format!("{{\"id\":\"{id}\"}}\n");
        let parsed = parse_case_file("a.jsonl", line.as_bytes());
        assert_eq!(parsed.problems.len(), 1, "{id}: {parsed:?}");
        assert!(
            parsed.problems[0].message.contains("invisible characters"),
            "{id}: {:?}",
            parsed.problems
        );
    }
    for id in ["remboursé-commande", "注文-返金", "emoji-🙂", "a b"] {
        let line = format!("{{\"id\":\"{id}\"}}\n");
        let parsed = parse_case_file("a.jsonl", line.as_bytes());
        assert!(parsed.problems.is_empty(), "{id}: {parsed:?}");
    }
}

#[test]
fn files_named_in_vars_are_found_on_every_path_and_nowhere_else() {
    let text = b"{\"id\":\"a\",\"vars\":{\"doc\":\"file://docs/a.md\",\"many\":[\"file://b.txt\",\"x\"],\"q\":\"hi\"}}\n{\"id\":\"b\",\"vars\":{\"q\":\"file: not a reference\"}}\n{\"id\":\"c\",\"input\":\"file://not/vars.md\"}\n";
    for detail in [CaseDetail::Summary, CaseDetail::Full] {
        let parsed = parse_case_file_with("a.jsonl", text, detail);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        let named: Vec<Option<Vec<String>>> = parsed
            .cases
            .iter()
            .map(|case| case.var_files.as_deref().map(|files| files.0.clone()))
            .collect();
        assert_eq!(
            named,
            [
                Some(vec!["docs/a.md".to_owned(), "b.txt".to_owned()]),
                None,
                None
            ],
            "{detail:?}"
        );
    }
    let yaml = parse_case_file("a.yaml", b"- id: a\n  vars:\n    doc: file://a.md\n");
    assert!(yaml.cases[0].var_files.is_some());
}
