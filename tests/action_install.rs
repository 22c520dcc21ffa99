//! How the action installs evalock (`scripts/install-evalock.sh`), against a local fake
//! release server: the release's archive is downloaded and checked against its
//! SHA256SUMS, a checksum that does not match refuses the install, and without a release
//! (no tag, nothing published) evalock is built with cargo.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

const REPOSITORY: &str = "evalock/evalock";
const TAG: &str = "v9.8.7";
const ARCHIVE: &str = "evalock-x86_64-unknown-linux-gnu.tar.gz";

/// Serves fixed bytes by path; every other path is 404. Records the paths asked for.
struct ReleaseServer {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl ReleaseServer {
    fn start(files: BTreeMap<String, Vec<u8>>) -> ReleaseServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                // The headers, up to the blank line.
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|read| read > 2) {
                    header.clear();
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                seen.lock().unwrap().push(path.clone());
                let (status, body) = match files.get(&path) {
                    Some(body) => ("200 OK", body.clone()),
                    None => ("404 Not Found", b"not found".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            }
        });
        ReleaseServer { url, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// A release archive holding a stand-in `evalock` that prints its name.
fn archive(dir: &Path) -> Vec<u8> {
    let content = dir.join("content");
    std::fs::create_dir_all(&content).unwrap();
    std::fs::write(
        content.join("evalock"),
        "#!/bin/sh\necho evalock from the release\n",
    )
    .unwrap();
    let tarball = dir.join(ARCHIVE);
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(&content)
        .arg("evalock")
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(tarball).unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

fn release(checksum: &str, bytes: Vec<u8>) -> BTreeMap<String, Vec<u8>> {
    let base = format!("/{REPOSITORY}/releases/download/{TAG}");
    BTreeMap::from([
        (
            format!("{base}/SHA256SUMS"),
            format!("{checksum}  evalock-aarch64-apple-darwin.tar.gz\n{checksum}  {ARCHIVE}\n")
                .into_bytes(),
        ),
        (format!("{base}/{ARCHIVE}"), bytes),
    ])
}

struct Install {
    code: i32,
    log: String,
    root: PathBuf,
    /// What the stand-in `cargo` was asked to do, if it ran.
    cargo: Option<String>,
    _dir: tempfile::TempDir,
}

/// Runs the install script as the action's step does, with a stand-in `cargo` on PATH.
fn install(server: &ReleaseServer, action_ref: &str, version: &str) -> Install {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let stub_bin = dir.path().join("stub-bin");
    std::fs::create_dir_all(&stub_bin).unwrap();
    let cargo_log = dir.path().join("cargo.log");
    std::fs::write(
        stub_bin.join("cargo"),
        format!("#!/bin/sh\necho \"$@\" > '{}'\n", cargo_log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        stub_bin.join("cargo"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        stub_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/install-evalock.sh");
    let output = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .env("PATH", path)
        .env("INSTALL_ROOT", &root)
        .env("RUNNER_OS_NAME", "Linux")
        .env("RUNNER_ARCH_NAME", "X64")
        .env("EVALOCK_VERSION", version)
        .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
        .env("GITHUB_ACTION_REF", action_ref)
        .env("GITHUB_ACTION_REPOSITORY", REPOSITORY)
        .env("GITHUB_SERVER_URL", &server.url)
        .output()
        .unwrap();
    Install {
        code: output.status.code().unwrap_or(-1),
        log: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
        root,
        cargo: std::fs::read_to_string(&cargo_log).ok(),
        _dir: dir,
    }
}

#[test]
fn the_release_binary_is_installed_when_its_checksum_matches() {
    let scratch = tempfile::tempdir().unwrap();
    let bytes = archive(scratch.path());
    let server = ReleaseServer::start(release(&sha256(&bytes), bytes));
    let done = install(&server, TAG, "");
    assert_eq!(done.code, 0, "{}", done.log);
    assert!(
        done.log
            .contains("installed evalock v9.8.7 (x86_64-unknown-linux-gnu)"),
        "{}",
        done.log
    );
    assert!(done.cargo.is_none(), "no build: {:?}", done.cargo);
    let run = Command::new(done.root.join("bin/evalock"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "evalock from the release\n"
    );
    // `evalock-version` picks the release of that version.
    let pinned = install(&server, "main", "9.8.7");
    assert_eq!(pinned.code, 0, "{}", pinned.log);
    assert!(pinned.root.join("bin/evalock").is_file());
}

#[test]
fn a_checksum_that_does_not_match_refuses_the_install() {
    let scratch = tempfile::tempdir().unwrap();
    let bytes = archive(scratch.path());
    let mut tampered = bytes.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    let server = ReleaseServer::start(release(&sha256(&bytes), tampered));
    let refused = install(&server, TAG, "");
    assert_eq!(refused.code, 1, "{}", refused.log);
    assert!(
        refused
            .log
            .contains("does not match its SHA-256 in SHA256SUMS"),
        "{}",
        refused.log
    );
    assert!(refused.log.contains("refusing to install it"));
    assert!(
        !refused.root.join("bin/evalock").exists(),
        "nothing installed"
    );
    assert!(
        refused.cargo.is_none(),
        "a mismatch never falls back to a build"
    );
}

#[test]
fn without_a_release_evalock_is_built_with_cargo() {
    let server = ReleaseServer::start(BTreeMap::new());
    // A tag with nothing published.
    let unpublished = install(&server, TAG, "");
    assert_eq!(unpublished.code, 0, "{}", unpublished.log);
    assert!(unpublished
        .log
        .contains("no prebuilt evalock-x86_64-unknown-linux-gnu.tar.gz in release v9.8.7"));
    let cargo = unpublished.cargo.expect("cargo ran");
    assert!(cargo.starts_with("install --locked --path "), "{cargo}");
    assert!(!server.requests().is_empty(), "the release was asked for");
    // A branch is no release: nothing is downloaded.
    let asked = server.requests().len();
    let branch = install(&server, "main", "");
    assert_eq!(branch.code, 0, "{}", branch.log);
    assert!(branch
        .cargo
        .expect("cargo ran")
        .starts_with("install --locked --path "));
    assert_eq!(server.requests().len(), asked, "no download for a branch");
    // A version with nothing published is built from crates.io.
    let version = install(&server, "main", "9.9.9");
    assert_eq!(
        version.cargo.expect("cargo ran").trim(),
        format!(
            "install --locked evalock --version 9.9.9 --root {}",
            version.root.display()
        )
    );
}
