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
    use std::time::{Duration, Instant};

    /// A fork loop could refill the tree forever; after this many rounds, give up.
    const MAX_ROUNDS: usize = 64;
    /// How long to wait for one killed orphan to become reapable.
    const REAP_GRACE: Duration = Duration::from_secs(2);

    /// The children of `parent`, from `/proc/<pid>/task/<tid>/children` (one small file
    /// per thread: a handful of reads after every command) when the kernel provides it,
    /// else from a scan of every process's `/proc/<pid>/stat`.
    fn children(parent: i32) -> Vec<i32> {
        static TASK_FILES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let task_files =
            *TASK_FILES.get_or_init(|| std::path::Path::new("/proc/thread-self/children").exists());
        if !task_files {
            return scan_children(parent);
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            return Vec::new();
        };
        let mut children = Vec::new();
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                children.extend(
                    text.split_whitespace()
                        .filter_map(|pid| pid.parse::<i32>().ok()),
                );
            }
        }
        children
    }

    fn scan_children(parent: i32) -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| stat(pid).is_some_and(|(_, ppid)| ppid == parent))
            .collect()
    }

    /// (state, ppid) of a process, from `/proc/<pid>/stat`.
    fn stat(pid: i32) -> Option<(char, i32)> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// `pid (comm) state ppid …`; comm may hold spaces and parentheses, so split at the
    /// last `)`.
    fn parse_stat(stat: &str) -> Option<(char, i32)> {
        let (_, rest) = stat.rsplit_once(')')?;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let parent = fields.next()?.parse().ok()?;
        Some((state, parent))
    }

    fn is_zombie(pid: i32) -> bool {
        stat(pid).is_some_and(|(state, _)| state == 'Z')
    }

    /// Every process below `root` by parent links, not `root` itself.
    fn descendants(root: i32) -> Vec<i32> {
        let mut found = Vec::new();
        let mut frontier = vec![root];
        while let Some(parent) = frontier.pop() {
            for pid in children(parent) {
                if !found.contains(&pid) {
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
            let alive: Vec<i32> = descendants(root)
                .into_iter()
                .filter(|&pid| !is_zombie(pid))
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
            let orphans: Vec<i32> = children(me)
                .into_iter()
                .filter(|pid| !running.contains(pid))
                .collect();
            if orphans.is_empty() {
                return;
            }
            for orphan in orphans {
                descendants(orphan).into_iter().for_each(kill);
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
            assert_eq!(parse_stat("42 (a) b (c) Z 7 42 42 0"), Some(('Z', 7)));
            assert!(parse_stat("garbage").is_none());
        }
    }
}
