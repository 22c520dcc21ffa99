//! The pictures evalock draws, looked at in a real browser: Debian's chromium, headless
//! (installed by tests/install-tools.sh). `review --format html` renders with no console
//! message and screenshots as a page with content, and the Mermaid charts of `report
//! --trend` are rendered by the real Mermaid (npm, tests/npm), as GitHub renders them.

mod common;

use common::{manifest_dir, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs headless chromium on `page` with its own profile; its standard output and error.
fn chromium(page: &Path, extra: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().expect("temp dir");
    let output = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect(
            "chromium is not installed: run tests/install-tools.sh (Debian's chromium package)",
        );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// What the page printed to its console: chromium logs each message as `CONSOLE`.
fn console_messages(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .collect()
}

/// The demo after a model swap that lost a rule: two cases regressed, one of them now
/// calling a tool last-good did not.
fn regressed_demo() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first baselines"])
        .assert_code(0);
    repo.commit_all("baselines");
    repo.replace(
        "evalock.toml",
        "\"completers/stub.py\"]",
        "\"completers/stub.py\", \"regressed\"]",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(1);
    repo
}

#[test]
fn the_html_review_renders_in_chromium_without_a_console_message() {
    let repo = regressed_demo();
    repo.evalock(&["review", "--format", "html", "--output", "review.html"])
        .assert_code(0);
    let page = repo.join("review.html");
    let (dom, stderr) = chromium(&page, &["--dump-dom"]);
    for shown in [
        "<h2>Pass rates</h2>",
        "<h2>Behaviour against last-good</h2>",
        "REGRESSED</span> support/refund-no-order-id",
        "<strong>trajectory</strong>: at step 1 last-good had stopped calling tools; now create_refund",
        "<td class=\"del\">  \"status\": \"needs_clarification\",</td><td class=\"ins\">  \"status\": \"refunded\",</td>",
    ] {
        assert!(dom.contains(shown), "the rendered page lacks {shown}:\n{dom}");
    }
    assert_eq!(console_messages(&stderr), Vec::<&str>::new(), "{stderr}");

    // The check sees a console message when there is one: the same page with a script
    // error, written without evalock's content security policy.
    let broken = repo.join("broken.html");
    let text = std::fs::read_to_string(&page)
        .unwrap()
        .replace(
            "<meta http-equiv=\"Content-Security-Policy\"",
            "<meta name=\"x\"",
        )
        .replace("</body>", "<script>missingFunction();</script></body>");
    std::fs::write(&broken, text).unwrap();
    let (_, stderr) = chromium(&broken, &["--dump-dom"]);
    assert_eq!(console_messages(&stderr).len(), 1, "{stderr}");
    // And the policy holds: a script that got into the page is not run, and says so.
    let injected = repo.join("injected.html");
    let text = std::fs::read_to_string(&page)
        .unwrap()
        .replace("</body>", "<script>document.title = 'ran';</script></body>");
    std::fs::write(&injected, text).unwrap();
    let (dom, stderr) = chromium(&injected, &["--dump-dom"]);
    assert!(!dom.contains("<title>ran</title>"), "{dom}");
    assert!(
        console_messages(&stderr)
            .iter()
            .any(|line| line.contains("Content Security Policy")),
        "{stderr}"
    );
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

fn screenshot(page: &Path, out: &Path) -> Vec<u8> {
    let (_, stderr) = chromium(
        page,
        &[
            &format!("--screenshot={}", out.display()),
            "--window-size=1200,1600",
            "--hide-scrollbars",
        ],
    );
    std::fs::read(out).unwrap_or_else(|_| panic!("no screenshot written: {stderr}"))
}

#[test]
fn a_screenshot_of_the_html_review_shows_a_page_with_content() {
    let repo = regressed_demo();
    repo.evalock(&["review", "--format", "html", "--output", "review.html"])
        .assert_code(0);
    let shot = screenshot(&repo.join("review.html"), &repo.join("review.png"));
    assert_eq!(png_size(&shot), (1200, 1600));
    // A blank page of the same size compresses to a fraction of one with tables, colour
    // and text: the review is drawn, not left empty.
    repo.write("blank.html", "<!DOCTYPE html><html><body></body></html>\n");
    let blank = screenshot(&repo.join("blank.html"), &repo.join("blank.png"));
    assert_eq!(png_size(&blank), (1200, 1600));
    assert!(
        shot.len() > 5 * blank.len(),
        "review {} bytes, blank page {} bytes",
        shot.len(),
        blank.len()
    );
}

fn mermaid_js() -> PathBuf {
    let path = manifest_dir().join("tests/npm/node_modules/mermaid/dist/mermaid.min.js");
    assert!(
        path.exists(),
        "mermaid is not installed: run tests/install-tools.sh (npm ci --prefix tests/npm)"
    );
    path
}

/// Renders each chart with the real Mermaid in chromium: `rendered` or the error, one line each.
fn render_charts(folder: &Path, charts: &[String]) -> Vec<String> {
    let page = folder.join("charts.html");
    let script = format!(
        "mermaid.initialize({{startOnLoad: false}});\n\
         const charts = {};\n\
         (async () => {{\n\
           const out = [];\n\
           for (const [index, text] of charts.entries()) {{\n\
             try {{ const {{svg}} = await mermaid.render('chart' + index, text); out.push(svg.includes('<svg') ? 'rendered' : 'empty'); }}\n\
             catch (error) {{ out.push('error: ' + String(error.message).split('\\n')[0]); }}\n\
           }}\n\
           document.getElementById('result').textContent = out.join('\\n');\n\
         }})();",
        serde_json::to_string(charts).unwrap()
    );
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><body><pre id=\"result\">pending</pre><script src=\"file://{}\"></script><script>{script}</script></body></html>\n",
            mermaid_js().display()
        ),
    )
    .unwrap();
    let (dom, stderr) = chromium(&page, &["--virtual-time-budget=20000", "--dump-dom"]);
    let result = dom
        .split("<pre id=\"result\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("no result in the page: {dom}\n{stderr}"));
    result.lines().map(str::to_owned).collect()
}

/// The ```mermaid blocks of a Markdown text.
fn mermaid_blocks(markdown: &str) -> Vec<String> {
    markdown
        .split("```mermaid\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_pass_rate_charts_of_the_step_summary_render_in_mermaid() {
    let repo = regressed_demo();
    let summary = repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "markdown",
        "--trend",
        "10",
    ]);
    summary
        .assert_code(0)
        .assert_contains("### Pass rate along the first-parent history")
        .assert_contains("| `support` | tone | – | 100 % | 0 % |");
    let charts = mermaid_blocks(&summary.stdout);
    assert_eq!(
        charts.len(),
        1,
        "only the suite that moved is charted: {}",
        summary.stdout
    );
    assert!(charts[0].contains("line [100.0, 81.8]"), "{}", charts[0]);
    let mut rendered = render_charts(repo.path(), &charts);
    assert_eq!(rendered, vec!["rendered"]);
    // The renderer refuses what it cannot draw: the check above can fail.
    rendered = render_charts(
        repo.path(),
        &["xychart-beta\n  x-axis [broken\n".to_owned()],
    );
    assert!(rendered[0].starts_with("error: "), "{rendered:?}");

    // The same charts reach `evalock github` through the merged JSON report.
    repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--trend",
        "10",
        "--format",
        "json",
        "--output",
        "evalock.json",
    ])
    .assert_code(0);
    let saved = repo.read("evalock.json");
    assert!(saved.contains("\"trend\""), "{saved}");
    repo.evalock(&["report", "--from", "evalock.json", "--format", "markdown"])
        .assert_code(0)
        .assert_contains("```mermaid\nxychart-beta");
    // Without --trend nothing reads history.
    repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "markdown",
    ])
    .assert_code(0)
    .assert_not_contains("```mermaid");
}
