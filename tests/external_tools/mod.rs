//! External tools some tests drive (python3 with `jsonschema`, actionlint), found on
//! PATH. `.ci/run` installs them from tests/requirements.txt; in CI a missing tool fails
//! the test, locally it is skipped with a loud message.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `CI` set and not `false`/`0`/empty, as evalock itself decides.
pub fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| {
        !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
    })
}

/// Panics in CI, warns loudly elsewhere; the caller then skips its test.
#[track_caller]
pub fn missing(tool: &str) {
    let message =
        format!("{tool} is not installed: python3 -m pip install -r tests/requirements.txt");
    assert!(!is_ci(), "{message} (CI must install it: see .ci/run)");
    eprintln!("\n!!!!!!!! SKIPPED: {message} !!!!!!!!\n");
}

/// An executable named `name` on PATH.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// A tool installed by pip (`tests/requirements.txt`): `$ENV_VAR`, then `name` on PATH,
/// then the interpreter's scripts folder (where pip puts it when PATH lacks that folder).
/// The wheels of actionlint and shellcheck ship only the binary: no `python3 -m` module.
/// A candidate that cannot even print its version (a pyenv shim with nothing behind it)
/// does not count.
pub fn pip_tool(name: &str, env_var: &str, version_flag: &str) -> Option<PathBuf> {
    let candidates = [
        std::env::var_os(env_var).map(PathBuf::from),
        on_path(name),
        python_scripts_dir().map(|dir| dir.join(name)),
    ];
    candidates.into_iter().flatten().find(|candidate| {
        Command::new(candidate)
            .arg(version_flag)
            .output()
            .is_ok_and(|output| output.status.success())
    })
}

fn python_scripts_dir() -> Option<PathBuf> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_path('scripts'))",
        ])
        .output()
        .ok()?;
    let dir = String::from_utf8(output.stdout).ok()?;
    output.status.success().then(|| PathBuf::from(dir.trim()))
}

pub fn actionlint() -> Option<PathBuf> {
    pip_tool("actionlint", "ACTIONLINT", "-version")
}

pub fn shellcheck() -> Option<PathBuf> {
    pip_tool("shellcheck", "SHELLCHECK", "--version")
}

/// Validates SARIF files with tests/sarif/validate.py; `None` when jsonschema is missing.
pub fn validate_sarif(files: &[&Path]) -> Option<Output> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sarif/validate.py");
    let output = Command::new("python3")
        .arg(script)
        .args(files)
        .output()
        .expect("run python3");
    if output.status.code() == Some(3) {
        missing("python3 package jsonschema");
        return None;
    }
    Some(output)
}

/// Asserts that `log` is valid SARIF 2.1.0 (skipped as [`validate_sarif`] is).
#[track_caller]
pub fn assert_valid_sarif(log: &[u8]) {
    let directory = tempfile::tempdir().expect("temp dir");
    let file = directory.path().join("log.sarif");
    std::fs::write(&file, log).expect("write sarif");
    if let Some(output) = validate_sarif(&[&file]) {
        assert!(
            output.status.success(),
            "invalid SARIF:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Parses an XML file with Python's standard library and prints the root's attributes
/// and every element's tag, one per line, so tests can assert on the structure.
pub fn parse_xml(file: &Path) -> Output {
    let script = r#"
import sys, xml.etree.ElementTree as tree
root = tree.parse(sys.argv[1]).getroot()
for element in root.iter():
    attributes = " ".join(f"{key}={value!r}" for key, value in sorted(element.attrib.items()))
    print(f"{element.tag} {attributes}".rstrip())
    if element.text and element.text.strip():
        print("  text " + repr(element.text))
"#;
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(file)
        .output()
        .expect("run python3")
}
