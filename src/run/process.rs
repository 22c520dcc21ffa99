//! Running one external command (a completer or a command grader) under evalock's rules:
//! argv without a shell, its own process group, a scrubbed environment, one request on
//! stdin, stdout streamed into a capped buffer, and a deadline after which the whole
//! process group is killed. Nothing it starts outlives the call: descendants that left
//! the group are found and killed too (see [`super::contain`]).

use super::contain;
use rustix::process::{kill_process_group, Pid, Signal};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Environment variables no completer or grader ever sees, besides every `ACTIONS_*`.
const ALWAYS_SCRUBBED: &[&str] = &["GITHUB_TOKEN", "GH_TOKEN"];
/// How much of stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 2048;
/// How long to wait for output pipes after the process exited (a descendant that left the
/// process group may hold them open).
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// How a command is run.
#[derive(Debug, Clone)]
pub struct ProcessPolicy {
    /// The working directory (the project root); relative program paths resolve here.
    pub workdir: PathBuf,
    pub timeout: Duration,
    pub max_output_bytes: u64,
    /// Configured secrets (`policy.secrets`), removed from the environment.
    pub secrets: Vec<String>,
}

/// What a command that exited successfully printed.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    pub stdout: Vec<u8>,
    pub stderr_tail: String,
    pub duration: Duration,
}

/// Why a command produced no usable output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessFailure {
    Spawn(String),
    TimedOut(Duration),
    Oversized(u64),
    Exited { status: String, stderr_tail: String },
}

impl std::fmt::Display for ProcessFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessFailure::Spawn(message) => write!(f, "cannot start: {message}"),
            ProcessFailure::TimedOut(timeout) => {
                write!(
                    f,
                    "timed out after {}s; its process group was killed",
                    timeout.as_secs_f64()
                )
            }
            ProcessFailure::Oversized(cap) => {
                write!(f, "printed more than {cap} bytes (policy.max_output_bytes); its process group was killed")
            }
            ProcessFailure::Exited {
                status,
                stderr_tail,
            } if stderr_tail.trim().is_empty() => write!(f, "{status}"),
            ProcessFailure::Exited {
                status,
                stderr_tail,
            } => write!(f, "{status}; stderr: {}", stderr_tail.trim()),
        }
    }
}

/// Runs `argv` with `input` on stdin and returns its stdout, or why there is none.
pub fn run_process(
    argv: &[String],
    input: &[u8],
    policy: &ProcessPolicy,
) -> Result<ProcessOutput, ProcessFailure> {
    let started = Instant::now();
    let mut child = contain::spawn(&mut command(argv, policy)?)
        .map_err(|error| ProcessFailure::Spawn(format!("{}: {error}", argv[0])))?;
    let group = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());

    let request = input.to_vec();
    thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            // A completer that exits without reading its input is judged by its output.
            let _ = stdin.write_all(&request);
        }
    });
    let cap = policy.max_output_bytes;
    let stdout_result = spawn_reader(move || read_capped(stdout, cap, group));
    let stderr_result = spawn_reader(move || read_tail(stderr));
    let (exit_sender, exit_receiver) = mpsc::channel();
    thread::spawn(move || {
        let _ = exit_sender.send(child.wait());
    });

    let lost = || Err(std::io::Error::other("the process could not be waited for"));
    let (status, timed_out) = match exit_receiver.recv_timeout(policy.timeout) {
        Ok(status) => (status, false),
        Err(_) => {
            contain::kill_descendants(group);
            kill_group(group);
            (exit_receiver.recv().unwrap_or_else(|_| lost()), true)
        }
    };
    // Descendants left in the group, or orphans that left it, would hold the pipes open
    // and outlive the run.
    kill_group(group);
    contain::release(group);
    let captured = stdout_result.recv_timeout(PIPE_GRACE).ok();
    let stderr_tail = stderr_result.recv_timeout(PIPE_GRACE).unwrap_or_default();
    if captured.as_ref().is_some_and(|captured| captured.oversized) {
        return Err(ProcessFailure::Oversized(cap));
    }
    if timed_out {
        return Err(ProcessFailure::TimedOut(policy.timeout));
    }
    let Some(captured) = captured else {
        return Err(ProcessFailure::Exited {
            status: "exited, but a process that left its group kept stdout open".into(),
            stderr_tail,
        });
    };
    match status {
        Ok(status) if status.success() => Ok(ProcessOutput {
            stdout: captured.bytes,
            stderr_tail,
            duration: started.elapsed(),
        }),
        Ok(status) => Err(ProcessFailure::Exited {
            status: describe_status(status),
            stderr_tail,
        }),
        Err(error) => Err(ProcessFailure::Exited {
            status: format!("cannot wait for it: {error}"),
            stderr_tail,
        }),
    }
}

fn command(argv: &[String], policy: &ProcessPolicy) -> Result<Command, ProcessFailure> {
    let Some(program) = argv.first() else {
        return Err(ProcessFailure::Spawn("empty command".into()));
    };
    let program_path = Path::new(program);
    // A relative path with a directory part names a file in the project, not on PATH.
    let program = if program.contains('/') && program_path.is_relative() {
        policy.workdir.join(program_path)
    } else {
        program_path.to_path_buf()
    };
    let mut command = Command::new(program);
    command
        .args(&argv[1..])
        .current_dir(&policy.workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if is_scrubbed(name, &policy.secrets) {
            command.env_remove(name);
        }
    }
    Ok(command)
}

/// Whether an environment variable is withheld from completers and graders.
pub fn is_scrubbed(name: &str, secrets: &[String]) -> bool {
    ALWAYS_SCRUBBED.contains(&name)
        || name.starts_with("ACTIONS_")
        || secrets.iter().any(|secret| secret == name)
}

fn kill_group(group: Option<Pid>) {
    if let Some(group) = group {
        // ESRCH (nothing left to kill) is the common, fine outcome.
        let _ = kill_process_group(group, Signal::KILL);
    }
}

fn spawn_reader<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let _ = sender.send(read());
    });
    receiver
}

struct Captured {
    bytes: Vec<u8>,
    oversized: bool,
}

/// Streams stdout into memory up to `cap` bytes; one byte more kills the process group,
/// so a runaway printer costs at most `cap` bytes of memory.
fn read_capped(stdout: Option<impl Read>, cap: u64, group: Option<Pid>) -> Captured {
    let mut captured = Captured {
        bytes: Vec::new(),
        oversized: false,
    };
    let Some(mut stdout) = stdout else {
        return captured;
    };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => {
                if captured.bytes.len() as u64 + read as u64 > cap {
                    captured.oversized = true;
                    kill_group(group);
                    break;
                }
                captured.bytes.extend_from_slice(&chunk[..read]);
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    captured
}

/// Drains stderr, keeping only its last bytes.
fn read_tail(stderr: Option<impl Read>) -> String {
    let Some(mut stderr) = stderr else {
        return String::new();
    };
    let mut tail: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => {
                tail.extend_from_slice(&chunk[..read]);
                if tail.len() > STDERR_TAIL_BYTES {
                    tail.drain(..tail.len() - STDERR_TAIL_BYTES);
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&tail).into_owned()
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "exited abnormally".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(timeout: Duration, cap: u64) -> ProcessPolicy {
        ProcessPolicy {
            workdir: std::env::temp_dir(),
            timeout,
            max_output_bytes: cap,
            secrets: vec!["ACME_KEY".into()],
        }
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn echoes_stdin_to_stdout() {
        let output = run_process(
            &["cat".to_owned()],
            b"hello",
            &policy(Duration::from_secs(10), 100),
        )
        .unwrap();
        assert_eq!(output.stdout, b"hello");
    }

    #[test]
    fn non_zero_exit_reports_status_and_stderr() {
        let failure = run_process(
            &sh("echo broken >&2; exit 3"),
            b"",
            &policy(Duration::from_secs(10), 100),
        )
        .unwrap_err();
        assert_eq!(
            failure,
            ProcessFailure::Exited {
                status: "exited with status 3".into(),
                stderr_tail: "broken\n".into()
            }
        );
    }

    #[test]
    fn output_over_the_cap_is_refused() {
        let failure =
            run_process(&sh("yes"), b"", &policy(Duration::from_secs(30), 4096)).unwrap_err();
        assert_eq!(failure, ProcessFailure::Oversized(4096));
    }

    #[test]
    fn missing_program_is_a_spawn_failure() {
        let failure = run_process(
            &["/nonexistent/evalock-completer".to_owned()],
            b"",
            &policy(Duration::from_secs(5), 10),
        )
        .unwrap_err();
        assert!(matches!(failure, ProcessFailure::Spawn(_)), "{failure:?}");
    }

    #[test]
    fn secrets_and_tokens_are_scrubbed() {
        assert!(is_scrubbed("GITHUB_TOKEN", &[]));
        assert!(is_scrubbed("ACTIONS_RUNTIME_TOKEN", &[]));
        assert!(is_scrubbed("ACME_KEY", &["ACME_KEY".into()]));
        assert!(!is_scrubbed("PATH", &["ACME_KEY".into()]));
    }
}
