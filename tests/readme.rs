//! The README is a user's document, but some of it is facts the code owns: the
//! rule reference (generated from the rule table), the test command CI runs, and the
//! flags it names on evalock command lines.

use std::path::Path;

const START: &str = "<!-- rules:start (generated from src/rules.rs: EVALOCK_BLESS=1 cargo test --test readme) -->\n";
const END: &str = "<!-- rules:end -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Checks (or, with EVALOCK_BLESS set, rewrites) the generated block of `file`.
fn check_generated(file: &str, generated: &str) {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(START)
        .unwrap_or_else(|| panic!("{file} has the rules:start marker"))
        + START.len();
    let end = text[start..]
        .find(END)
        .unwrap_or_else(|| panic!("{file} has the rules:end marker"))
        + start;
    if std::env::var_os("EVALOCK_BLESS").is_some() {
        let updated = format!("{}{}{}", &text[..start], generated, &text[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        text[start..end] == *generated,
        "{file}'s rule reference is stale: run `EVALOCK_BLESS=1 cargo test --test readme`"
    );
}

#[test]
fn readme_rule_table_matches_the_rule_table() {
    check_generated("README.md", &evalock::rules::markdown_index());
}

#[test]
fn docs_rule_reference_matches_the_rule_table() {
    let generated = format!(
        "{}{}",
        evalock::rules::markdown_table(),
        evalock::rules::markdown_reference()
    );
    check_generated("docs/rules.md", &generated);
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let command = ci
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .expect(".ci/run has a command")
        .trim();
    assert!(
        readme.contains(command),
        "README must give the command .ci/run runs: `{command}`"
    );
}

/// The commands whose flags the README and the `--help` texts may name.
const COMMANDS: &[&str] = &[
    "init",
    "lock",
    "check",
    "run",
    "accept",
    "review",
    "report",
    "github",
    "changelog",
    "skills audit",
    "hook install",
    "hook uninstall",
    "rules",
    "debt",
    "merge",
    "compare",
    "calibrate",
    "mcp audit",
];

fn help_of(command: &str) -> String {
    let mut args: Vec<&str> = command.split_whitespace().collect();
    args.push("--help");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalock"))
        .args(&args)
        .output()
        .unwrap();
    assert!(out.status.success(), "evalock {command} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// Every `--flag` written after `evalock <command>` in `text`, up to the end of that
/// command line (a closing backtick, a comment, a table cell, another command).
fn named_flags(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("evalock ") {
            rest = &rest[at + "evalock ".len()..];
            let end = rest
                .find(['`', '#', ';', '>', '('])
                .into_iter()
                .chain([" | ", "&&", "||"].iter().filter_map(|s| rest.find(s)))
                .min()
                .unwrap_or(rest.len());
            let segment = &rest[..end];
            let segment = segment.replace("\\|", "|");
            let words: Vec<&str> = segment.split_whitespace().collect();
            let Some(first) = words.first() else { continue };
            let names: Vec<String> = first
                .split('|')
                .flat_map(|name| match (name, words.get(1)) {
                    ("skills" | "hook", Some(sub)) => sub
                        .split('|')
                        .map(|sub| format!("{name} {sub}"))
                        .collect::<Vec<_>>(),
                    _ => vec![name.to_string()],
                })
                .filter(|name| COMMANDS.contains(&name.as_str()))
                .collect();
            for word in &words {
                let flag = word
                    .trim_start_matches(|c: char| c != '-')
                    .trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                let flag = flag.split('=').next().unwrap_or(flag);
                if flag.len() > 2 && flag.starts_with("--") {
                    for name in &names {
                        found.push((name.clone(), flag.to_string()));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn every_flag_the_readme_and_help_name_exists() {
    let mut texts = Vec::new();
    let mut documents = vec![root().join("README.md")];
    let mut pages: Vec<_> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    documents.extend(pages);
    for path in documents {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        texts.push((name, std::fs::read_to_string(&path).unwrap()));
    }
    let helps: Vec<(String, String)> = COMMANDS
        .iter()
        .map(|command| (command.to_string(), help_of(command)))
        .collect();
    texts.extend(
        helps
            .iter()
            .map(|(command, help)| (format!("evalock {command} --help"), help.clone())),
    );
    texts.push(("evalock --help".to_string(), help_of("")));
    let mut missing = Vec::new();
    let mut checked = 0;
    for (source, text) in &texts {
        for (command, flag) in named_flags(text) {
            checked += 1;
            let help = &helps.iter().find(|(name, _)| *name == command).unwrap().1;
            let listed = help
                .split(|c: char| c.is_whitespace() || c == ',')
                .any(|word| word == flag || word.starts_with(&format!("{flag}=")));
            if !listed {
                missing.push(format!("{source}: `evalock {command} … {flag}`"));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} flags found: is the scan still reading the README?"
    );
    assert!(
        missing.is_empty(),
        "flags named but not accepted:\n{}",
        missing.join("\n")
    );
}
