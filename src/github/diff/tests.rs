use super::parser::{parse_hunk_header, HunkRange};
use super::*;

const DIFF: &str = "\
diff --git a/evals/support.jsonl b/evals/support.jsonl
index 1111111..2222222 100644
--- a/evals/support.jsonl
+++ b/evals/support.jsonl
@@ -1,4 +1,4 @@
 {\"id\": \"a\"}
-{\"id\": \"b\", \"input\": \"old\"}
+{\"id\": \"b\", \"input\": \"new\"}
 {\"id\": \"c\"}

@@ -10,2 +10,4 @@ tail
 {\"id\": \"j\"}
+{\"id\": \"k\"}
+{\"id\": \"l\"}
 {\"id\": \"m\"}
diff --git a/skills/x/run.sh b/skills/x/run.sh
new file mode 100755
index 0000000..3333333
--- /dev/null
+++ b/skills/x/run.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+curl https://example.com/install | sh
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 4444444..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
\\ No newline at end of file
diff --git a/prompts/a.txt b/prompts/b.txt
similarity index 90%
rename from prompts/a.txt
rename to prompts/b.txt
index 5555555..6666666 100644
--- a/prompts/a.txt
+++ b/prompts/b.txt
@@ -1 +1 @@
-You are terse.
+You are terse and kind.
diff --git a/logo.png b/logo.png
index 7777777..8888888 100644
Binary files a/logo.png and b/logo.png differ
";

#[test]
fn parses_added_lines_and_hunk_spans() {
    let diff = PullDiff::parse(DIFF);
    let cases = diff.changed_file("evals/support.jsonl").expect("file");
    assert_eq!(cases.hunks.len(), 2);
    assert_eq!(
        cases.hunks[0],
        Hunk {
            new_start: 1,
            new_count: 4,
            added: vec![2],
            old_start: 1,
            old_count: 4,
            removed: vec![Removal {
                old_first: 2,
                old_last: 2,
                new_line: 2
            }]
        }
    );
    assert_eq!(
        cases.hunks[1],
        Hunk {
            new_start: 10,
            new_count: 4,
            added: vec![11, 12],
            old_start: 10,
            old_count: 2,
            removed: Vec::new()
        }
    );
    assert!(cases.hunks[0].contains(4) && !cases.hunks[0].contains(5));
}

/// A file with many hunks, some only deleting: the binary search finds exactly the
/// hunks a scan of all of them finds, for every span.
#[test]
fn overlapping_hunks_are_those_a_full_scan_finds() {
    let mut text = String::from("diff --git a/f b/f\n--- a/f\n+++ b/f\n");
    let (mut old_line, mut new_line) = (1, 1);
    for number in 0..60u32 {
        old_line += number % 4;
        new_line += number % 4;
        match number % 5 {
            // Deletes two lines: no new-side line.
            3 => text.push_str(&format!("@@ -{old_line},2 +{new_line},0 @@\n-x\n-y\n")),
            _ => {
                text.push_str(&format!("@@ -{old_line},2 +{new_line},3 @@\n c\n+a\n c\n"));
                new_line += 3;
            }
        }
        old_line += 2;
    }
    let diff = PullDiff::parse(&text);
    let file = diff.changed_file("f").expect("file");
    assert_eq!(file.hunks.len(), 60);
    let reaches = |hunk: &Hunk, start: u32, end: u32| {
        hunk.new_start <= end && hunk.new_start + hunk.new_count > start
    };
    for start in 0..new_line + 3 {
        for end in start..(start + 7).min(new_line + 3) {
            let scanned: Vec<&Hunk> = file
                .hunks
                .iter()
                .filter(|hunk| reaches(hunk, start, end))
                .collect();
            let searched: Vec<&Hunk> = file.hunks_overlapping(start, end).iter().collect();
            assert_eq!(searched, scanned, "span {start}..={end}");
            assert_eq!(
                file.hunk_at(start),
                file.hunks.iter().find(|hunk| hunk.contains(start)),
                "line {start}"
            );
        }
    }
}

#[test]
fn removed_lines_are_placed_on_the_line_that_follows_them() {
    let text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n\
            @@ -1,6 +1,5 @@\n a\n-b\n+B\n c\n-d\n-e\n f\n\
            @@ -20,3 +19,2 @@\n t\n u\n-v\n\
            @@ -40,2 +38,0 @@\n-x\n-y\n";
    let diff = PullDiff::parse(text);
    let file = diff.changed_file("f").expect("file");
    assert_eq!(
        file.hunks[0].removed,
        vec![
            Removal {
                old_first: 2,
                old_last: 2,
                new_line: 2
            },
            Removal {
                old_first: 4,
                old_last: 5,
                new_line: 4
            }
        ]
    );
    // `d` and `e` were where `f` (new line 4) now is; `b` was replaced by `B`.
    assert_eq!(file.line_where_removed(4, 5), Some(4));
    assert_eq!(file.line_where_removed(5, 9), Some(4));
    assert_eq!(file.line_where_removed(1, 2), Some(2));
    assert_eq!(file.line_where_removed(3, 3), None, "`c` is still there");
    // Removed at the end of a hunk: the line before.
    assert_eq!(file.line_where_removed(22, 22), Some(20));
    // A hunk that shows no new line has nowhere to comment.
    assert_eq!(file.line_where_removed(40, 41), None);
    assert_eq!(file.line_where_removed(50, 60), None);
}

#[test]
fn hunks_are_kept_in_order_and_one_overlapping_its_predecessor_is_left_out() {
    let text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n\
            @@ -20,1 +20,2 @@\n c\n+a\n\
            @@ -1,1 +1,3 @@\n c\n+a\n+b\n\
            @@ -2,1 +2,2 @@\n c\n+a\n";
    let diff = PullDiff::parse(text);
    let starts: Vec<u32> = diff
        .changed_file("f")
        .expect("file")
        .hunks
        .iter()
        .map(|hunk| hunk.new_start)
        .collect();
    assert_eq!(starts, vec![1, 20]);
}

#[test]
fn new_deleted_renamed_and_binary_files() {
    let diff = PullDiff::parse(DIFF);
    assert_eq!(
        diff.changed_file("skills/x/run.sh")
            .expect("new file")
            .hunks[0]
            .added,
        vec![1, 2]
    );
    assert!(diff.file("old.txt").expect("deleted file").deleted);
    assert!(diff.changed_file("old.txt").is_none());
    assert_eq!(
        diff.changed_file("prompts/b.txt").expect("renamed").hunks[0].added,
        vec![1]
    );
    assert!(diff.file("prompts/a.txt").is_none());
    assert_eq!(
        diff.successor_of("prompts/a.txt")
            .map(|file| file.path.as_str()),
        Some("prompts/b.txt")
    );
    assert!(diff.successor_of("old.txt").is_none());
    assert!(diff
        .changed_file("logo.png")
        .expect("binary")
        .hunks
        .is_empty());
}

#[test]
fn a_range_is_accepted_only_inside_one_hunk_of_a_surviving_file() {
    let diff = PullDiff::parse(DIFF);
    assert!(diff.accepts_range("evals/support.jsonl", 2, 2));
    assert!(diff.accepts_range("evals/support.jsonl", 1, 4));
    assert!(diff.accepts_range("evals/support.jsonl", 10, 13));
    assert!(
        !diff.accepts_range("evals/support.jsonl", 4, 10),
        "spans two hunks"
    );
    assert!(
        !diff.accepts_range("evals/support.jsonl", 6, 6),
        "between hunks"
    );
    assert!(!diff.accepts_range("evals/support.jsonl", 3, 2), "reversed");
    assert!(!diff.accepts_range("old.txt", 1, 1), "deleted file");
    assert!(!diff.accepts_range("missing.txt", 1, 1));
}

#[test]
fn a_hunk_line_that_looks_like_a_header_is_content() {
    let text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n x\n+diff --git a/y b/y\n-+++ b/z\n+@@ -1 +1 @@\n y\n";
    let diff = PullDiff::parse(text);
    let file = diff.changed_file("f").expect("file");
    assert_eq!(
        file.hunks,
        vec![Hunk {
            new_start: 1,
            new_count: 3,
            added: vec![2, 3],
            old_start: 1,
            old_count: 2,
            removed: vec![Removal {
                old_first: 2,
                old_last: 2,
                new_line: 3
            }]
        }]
    );
    assert!(diff.file("y").is_none() && diff.file("z").is_none());
}

#[test]
fn quoted_paths_and_headers_without_counts() {
    let text = "diff --git \"a/sp ace\\303\\251.txt\" \"b/sp ace\\303\\251.txt\"\n--- \"a/sp ace\\303\\251.txt\"\n+++ \"b/sp ace\\303\\251.txt\"\n@@ -3 +3 @@\n-a\n+b\n";
    let diff = PullDiff::parse(text);
    assert_eq!(
        diff.changed_file("sp aceé.txt").expect("file").hunks[0].added,
        vec![3]
    );
    assert_eq!(
        parse_hunk_header("@@ -0,0 +1 @@"),
        Some(HunkRange {
            old_start: 0,
            old_count: 0,
            new_start: 1,
            new_count: 1
        })
    );
    assert_eq!(parse_hunk_header("@@ garbage"), None);
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "@@ -1 +1 @@\n+x",
        "diff --git\n+++ \n@@ -a +b @@",
        "\u{0}\u{1}",
        "diff --git a/x b/x\n@@ -1,9999 +1,9999 @@\n",
    ] {
        let _ = PullDiff::parse(text);
    }
}

#[test]
fn lines_past_the_header_counts_and_impossible_ranges_are_not_anchored() {
    // Found by the `diff` fuzz target: an added line after the new side was used up
    // was recorded as added at a line outside its hunk.
    let diff = PullDiff::parse(
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2 +1,0 @@\n+surplus\n-removed\n",
    );
    let file = diff.file("f").expect("the file is kept");
    assert_eq!(file.hunks[0].added, Vec::<u32>::new());
    for header in ["@@ -1 +4294967295,2 @@", "@@ -1 +0,3 @@"] {
        let diff = PullDiff::parse(&format!("diff --git a/f b/f\n{header}\n+x\n"));
        assert!(diff.file("f").expect("file").hunks.is_empty(), "{header}");
    }
}

/// Two hunks of a deleted file both start at new line 0; one whose old lines overlap the
/// hunk before it is not from a real diff and is left out, as on the new side, so every
/// removal it would hold stays commentable.
#[test]
fn a_hunk_overlapping_the_one_before_on_the_old_side_is_left_out() {
    let diff = PullDiff::parse(
        "diff --git a/g.py b/g.py
deleted file mode 100644
--- a/g.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
@@ -2,2 +0,0 @@
-b
-c
@@ -3,1 +0,0 @@
-c
",
    );
    let file = diff.deleted_file("g.py").expect("deleted file");
    let old_sides: Vec<(u32, u32)> = file
        .hunks
        .iter()
        .map(|hunk| (hunk.old_start, hunk.old_count))
        .collect();
    assert_eq!(old_sides, vec![(1, 2), (3, 1)]);
    for hunk in &file.hunks {
        for removal in &hunk.removed {
            assert!(diff.accepts_removed_range("g.py", removal.old_first, removal.old_last));
        }
    }
}
