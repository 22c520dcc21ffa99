//! Containment of everything a completer or grader starts, beyond its process group.
//!
//! Killing the process group is not enough: a descendant may call `setsid` (or
//! `setpgid`) and leave the group, then outlive the run holding files, ports or API
//! quota. On Linux evalock therefore makes itself a *child subreaper*
//! (`PR_SET_CHILD_SUBREAPER`): a descendant orphaned by its parent's exit is re-parented
//! to evalock instead of to init, so it can still be found. At a timeout every
//! descendant of the command (found by walking `/proc` ppid links) is killed, and after
//! the command has been reaped every orphan re-parented to evalock is killed and reaped.
//!
//! Cases run on several threads, so "an orphan" must not be another thread's command:
//! every command is spawned through [`spawn`], which records its pid in a registry
//! under a lock that the sweep also holds. A child of evalock that is not in the
//! registry can only be something a command left behind. This relies on every process
//! evalock starts while commands run going through [`spawn`]; `run` starts no others.
//!
//! Elsewhere (macOS, the BSDs) there is no subreaper: only the process group is killed.

use rustix::process::Pid;
use std::process::{Child, Command};
use std::sync::Mutex;

/// Pids of the commands alive right now (one entry per spawn; a reused pid appears twice).
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Spawns `command` and records it as a running command (see the module comment).
pub fn spawn(command: &mut Command) -> std::io::Result<Child> {
    become_subreaper();
    let mut running = RUNNING.lock().unwrap_or_else(|poison| poison.into_inner());
    let child = command.spawn()?;
    if let Ok(pid) = i32::try_from(child.id()) {
        running.push(pid);
    }
    Ok(child)
}

/// Kills every descendant of the (still running) command `pid`, however it regrouped.
pub fn kill_descendants(pid: Option<Pid>) {
    #[cfg(target_os = "linux")]
    if let Some(pid) = pid {
        linux::kill_descendants(pid);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

/// Called once the command `pid` has been reaped: forgets it, then kills and reaps
/// every orphan a command left behind.
pub fn release(pid: Option<Pid>) {
    let mut running = RUNNING.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(pid) = pid {
        if let Some(index) = running
            .iter()
            .position(|&raw| raw == pid.as_raw_nonzero().get())
        {
            running.swap_remove(index);
        }
    }
    #[cfg(target_os = "linux")]
    linux::sweep_orphans(&running);
}

fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // Without it (an old kernel, a seccomp filter) orphans go to init as before and
        // only the process group is killed: containment degrades, the run does not fail.
        ONCE.call_once(|| {
            let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        });
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use rustix::process::{getpid, kill_process, waitpid, Pid, Signal, WaitOptions};
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    /// A fork loop could refill the tree forever; after this many rounds, give up.
    const MAX_ROUNDS: usize = 64;
    /// How long to wait for one killed orphan to become reapable.
    const REAP_GRACE: Duration = Duration::from_secs(2);

    struct Process {
        parent: i32,
        zombie: bool,
    }

    /// Every visible process, by pid, from `/proc/<pid>/stat`.
    fn processes() -> BTreeMap<i32, Process> {
        let mut table = BTreeMap::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return table;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            if let Some(process) = parse_stat(&stat) {
                table.insert(pid, process);
            }
        }
        table
    }

    /// `pid (comm) state ppid …`; comm may hold spaces and parentheses, so split at the
    /// last `)`.
    fn parse_stat(stat: &str) -> Option<Process> {
        let (_, rest) = stat.rsplit_once(')')?;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let parent = fields.next()?.parse().ok()?;
        Some(Process {
            parent,
            zombie: state == "Z",
        })
    }

    /// Every process below `root` by ppid links, not `root` itself.
    fn descendants(table: &BTreeMap<i32, Process>, root: i32) -> Vec<i32> {
        let mut found = Vec::new();
        let mut frontier = vec![root];
        while let Some(parent) = frontier.pop() {
            for (&pid, process) in table {
                if process.parent == parent && !found.contains(&pid) {
                    found.push(pid);
                    frontier.push(pid);
                }
            }
        }
        found
    }

    fn kill(pid: i32) {
        if let Some(pid) = Pid::from_raw(pid) {
            // ESRCH: it died on its own meanwhile, which is fine.
            let _ = kill_process(pid, Signal::KILL);
        }
    }

    pub(super) fn kill_descendants(root: Pid) {
        let root = root.as_raw_nonzero().get();
        for _ in 0..MAX_ROUNDS {
            let table = processes();
            let alive: Vec<i32> = descendants(&table, root)
                .into_iter()
                .filter(|pid| table.get(pid).is_some_and(|process| !process.zombie))
                .collect();
            if alive.is_empty() {
                return;
            }
            alive.into_iter().for_each(kill);
        }
    }

    /// Kills and reaps each child of evalock that is not a running command, with
    /// everything below it; repeats because each death re-parents its children to us.
    pub(super) fn sweep_orphans(running: &[i32]) {
        let me = getpid().as_raw_nonzero().get();
        for _ in 0..MAX_ROUNDS {
            let table = processes();
            let orphans: Vec<i32> = table
                .iter()
                .filter(|(pid, process)| process.parent == me && !running.contains(pid))
                .map(|(&pid, _)| pid)
                .collect();
            if orphans.is_empty() {
                return;
            }
            for orphan in orphans {
                descendants(&table, orphan).into_iter().for_each(kill);
                kill(orphan);
                reap(orphan);
            }
        }
    }

    fn reap(pid: i32) {
        let Some(pid) = Pid::from_raw(pid) else {
            return;
        };
        let started = Instant::now();
        while started.elapsed() < REAP_GRACE {
            match waitpid(Some(pid), WaitOptions::NOHANG) {
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                // Reaped, or not ours to reap (ECHILD): either way, done.
                Ok(Some(_)) | Err(_) => return,
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn stat_lines_with_odd_command_names_parse() {
            let process = parse_stat("42 (a) b (c) Z 7 42 42 0").unwrap();
            assert_eq!(process.parent, 7);
            assert!(process.zombie);
            assert!(parse_stat("garbage").is_none());
        }
    }
}
