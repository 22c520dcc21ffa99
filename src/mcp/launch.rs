//! How a server starts, judged on its own: a package fetched without an exact version
//! (EL602), a remote reached in clear text (EL603), a credential written inline (EL604).

use super::secrets::{holds_token, is_credential};
use super::servers::{Field, Server};
use crate::finding::Finding;
use crate::rules::RuleId;
use crate::skills::spec::is_semver;

/// EL602, EL603 and EL604 for one server.
pub fn judge(server: &Server) -> Vec<Finding> {
    let mut findings: Vec<Finding> = unpinned(server).into_iter().collect();
    findings.extend(insecure_remote(server));
    findings.extend(inline_secrets(server));
    findings
}

/// The basename of a command, without a Windows `.cmd`/`.exe`.
fn program(command: &str) -> &str {
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    base.strip_suffix(".cmd")
        .or_else(|| base.strip_suffix(".exe"))
        .unwrap_or(base)
}

/// The command and arguments as one list: `npx`, `-y`, `pkg`.
fn words(server: &Server) -> Vec<&Field> {
    server.command.iter().chain(&server.args).collect()
}

/// What a launcher fetches when the server starts: whether its version floats, the
/// launcher's name, the package's word and how to pin it. `None`: nothing is fetched.
fn fetched(server: &Server) -> Option<(bool, &str, &Field, &'static str)> {
    let words = words(server);
    let first = words.first()?;
    let rest = &words[1..];
    let (what, launcher, package, fix) = match program(&first.value) {
        "npx" | "bunx" => {
            let package = npm_package(rest)?;
            (
                npm_unpinned(&package.value),
                program(&first.value),
                package,
                "name an exact version: `pkg@1.2.3`",
            )
        }
        "npm" | "pnpm" | "yarn"
            if rest
                .first()
                .is_some_and(|word| matches!(word.value.as_str(), "exec" | "dlx")) =>
        {
            let package = npm_package(&rest[1..])?;
            (
                npm_unpinned(&package.value),
                program(&first.value),
                package,
                "name an exact version: `pkg@1.2.3`",
            )
        }
        "uvx" => {
            let package = python_package(rest)?;
            (
                python_unpinned(&package.value),
                "uvx",
                package,
                "name an exact version: `pkg==1.2.3`",
            )
        }
        "uv" if rest.len() > 1 && rest[0].value == "tool" && rest[1].value == "run" => {
            let package = python_package(&rest[2..])?;
            (
                python_unpinned(&package.value),
                "uv tool run",
                package,
                "name an exact version: `pkg==1.2.3`",
            )
        }
        "pipx" if rest.first().is_some_and(|word| word.value == "run") => {
            let package = python_package(&rest[1..])?;
            (
                python_unpinned(&package.value),
                "pipx run",
                package,
                "name an exact version: `pkg==1.2.3`",
            )
        }
        "docker" | "podman" if rest.first().is_some_and(|word| word.value == "run") => {
            let image = docker_image(&rest[1..])?;
            (!image.value.contains("@sha256:"), program(&first.value), image, "pin the image by digest: `image:tag@sha256:<digest>` (`docker buildx imagetools inspect image:tag` prints it)")
        }
        "go" if rest.first().is_some_and(|word| word.value == "run") => {
            let module = rest[1..].iter().find(|word| !word.value.starts_with('-'))?;
            let floating = module.value.rsplit_once('@').is_some_and(|(_, version)| {
                matches!(version, "latest" | "master" | "main" | "HEAD")
            });
            (
                floating,
                "go run",
                *module,
                "name a released version: `module@v1.2.3`",
            )
        }
        _ => return None,
    };
    Some((what, launcher, package, fix))
}

/// Whether the server's command fetches a package when it starts (`npx`, `uvx`,
/// `docker run`, `go run`…).
pub fn fetches_at_start(server: &Server) -> bool {
    fetched(server).is_some()
}

/// EL602: the package a launcher fetches on every start, when nothing fixes its version.
fn unpinned(server: &Server) -> Option<Finding> {
    let (floating, launcher, package, fix) = fetched(server)?;
    if !floating {
        return None;
    }
    let fix = match git_spec(&package.value) {
        Some(_) => "pin the repository at a full commit id: `git+https://…@<40-hex commit>` (`github:owner/repo#<commit>` for npm)",
        None => fix,
    };
    let shown = super::secrets::redact(&package.value);
    Some(
        Finding::new(
            RuleId::McpLaunchUnpinned,
            server.subject(),
            format!(
                "server `{}` starts `{shown}` through `{launcher}` without an exact version: every start may run other code than was reviewed",
                server.name
            ),
        )
        .at(server.at(package.line))
        .help(format!("{fix}, then run `evalock lock`"))
        .discriminator(&shown),
    )
}

/// The package `npx` runs: `--package X` / `-p X` when given, else the first word that is
/// not an option.
fn npm_package<'a>(words: &[&'a Field]) -> Option<&'a Field> {
    let mut index = 0;
    while index < words.len() {
        let word = &words[index].value;
        if word == "--package" || word == "-p" {
            return words.get(index + 1).copied();
        }
        if word.starts_with("--package=") {
            return Some(words[index]);
        }
        if word == "--" {
            return words.get(index + 1).copied();
        }
        if !word.starts_with('-') {
            return Some(words[index]);
        }
        index += 1;
    }
    None
}

/// A package spec without an exact version: `pkg`, `pkg@latest`, `@scope/pkg@^1`. A
/// local path or URL is not a registry package.
fn npm_unpinned(spec: &str) -> bool {
    let spec = spec.strip_prefix("--package=").unwrap_or(spec);
    if let Some(repository) = git_spec(spec) {
        return !pins_commit(repository.rsplit_once('#').map(|(_, rev)| rev));
    }
    if spec.starts_with(['.', '/', '~']) || spec.contains("://") || spec.starts_with("file:") {
        return false;
    }
    let after_scope = match spec.strip_prefix('@') {
        Some(rest) => rest.split_once('/').map_or("", |(_, name)| name),
        None => spec,
    };
    match after_scope.rsplit_once('@') {
        Some((_, version)) => !is_semver(version),
        None => true,
    }
}

/// The package `uvx`/`pipx run` runs: `--from X` / `--spec X` when given, else the first
/// word that is not an option.
fn python_package<'a>(words: &[&'a Field]) -> Option<&'a Field> {
    for (index, word) in words.iter().enumerate() {
        match word.value.as_str() {
            "--from" | "--spec" => return words.get(index + 1).copied(),
            value if value.starts_with("--from=") || value.starts_with("--spec=") => {
                return Some(word)
            }
            _ => {}
        }
    }
    first_operand(
        words,
        &["--with", "--python", "-p", "--index-url", "--index"],
    )
}

/// The first word that is neither an option nor the value of one of `value_options`.
fn first_operand<'a>(words: &[&'a Field], value_options: &[&str]) -> Option<&'a Field> {
    let mut index = 0;
    while index < words.len() {
        let word = words[index].value.as_str();
        if value_options.contains(&word) {
            index += 2;
            continue;
        }
        if !word.starts_with('-') {
            return Some(words[index]);
        }
        index += 1;
    }
    None
}

/// A requirement without `==` (or uv's `pkg@1.2.3`); a local path or URL is not one.
fn python_unpinned(spec: &str) -> bool {
    let spec = spec
        .split_once('=')
        .filter(|(flag, _)| flag.starts_with("--"))
        .map_or(spec, |(_, value)| value);
    if let Some(repository) = git_spec(spec) {
        let revision = repository
            .rsplit_once('@')
            .filter(|(before, _)| before.contains('/'))
            .map(|(_, rev)| rev.split('#').next().unwrap_or(rev));
        return !pins_commit(revision);
    }
    if spec.starts_with(['.', '/', '~']) || spec.contains("://") {
        return false;
    }
    let exact = spec
        .split_once("==")
        .or_else(|| spec.split_once('@'))
        .is_some_and(|(_, version)| {
            !version.is_empty()
                && version
                    .chars()
                    .all(|character| character.is_ascii_alphanumeric() || character == '.')
                && version.chars().next().is_some_and(|c| c.is_ascii_digit())
        });
    !exact
}

/// A package fetched from a git repository (`git+https://…`, `github:owner/repo`), which
/// only a commit pins: a branch or tag moves.
fn git_spec(spec: &str) -> Option<&str> {
    let spec = spec.split_once(" @ ").map_or(spec, |(_, url)| url);
    (spec.starts_with("git+") || spec.starts_with("github:") || spec.starts_with("git://"))
        .then_some(spec)
}

/// Whether a revision is a full commit id.
fn pins_commit(revision: Option<&str>) -> bool {
    revision.is_some_and(|rev| rev.len() == 40 && rev.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

/// Options of `docker run` that take a value as the next word.
const DOCKER_VALUE_OPTIONS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "--mount",
    "--name",
    "-p",
    "--publish",
    "--network",
    "--net",
    "-w",
    "--workdir",
    "-u",
    "--user",
    "--entrypoint",
    "-l",
    "--label",
    "--platform",
    "--pull",
    "--add-host",
    "--cap-add",
    "--cap-drop",
    "-m",
    "--memory",
    "--cpus",
    "-h",
    "--hostname",
    "--security-opt",
    "--tmpfs",
    "--ulimit",
    "--device",
    "--runtime",
    "--shm-size",
    "--dns",
    "--ipc",
    "--pid",
    "--log-driver",
    "--log-opt",
    "--restart",
    "--gpus",
];

/// The image of `docker run [options] IMAGE [command]`.
fn docker_image<'a>(words: &[&'a Field]) -> Option<&'a Field> {
    first_operand(words, DOCKER_VALUE_OPTIONS)
}

/// Whether a URL's host is this machine.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host.split('.').next() == Some("127") && host.split('.').count() == 4
}

/// EL603: an `http://` or `ws://` URL to another machine.
fn insecure_remote(server: &Server) -> Option<Finding> {
    let url = server.url.as_ref()?;
    let lower = url.value.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("ws://"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host_port.starts_with('[') {
        host_port.split(']').next().map_or(host_port, |host| host)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    if is_loopback(host) {
        return None;
    }
    Some(
        Finding::new(
            RuleId::McpInsecureRemote,
            server.subject(),
            format!(
                "server `{}` is reached over clear text at `{}`: anyone on the path reads its credentials and can rewrite its tools",
                server.name,
                super::secrets::redact(&url.value)
            ),
        )
        .at(server.at(url.line)),
    )
}

/// EL604: a credential in `env`, `headers`, the arguments or the URL. Only its name (or
/// the argument's position) is quoted.
fn inline_secrets(server: &Server) -> Vec<Finding> {
    let mut findings = Vec::new();
    let kinds = [
        ("environment variable", &server.env),
        ("header", &server.headers),
    ];
    for (kind, entries) in kinds {
        for entry in entries {
            let Some(value) = &entry.value else { continue };
            if is_credential(&value.0) {
                findings.push(
                    Finding::new(
                        RuleId::McpSecretInline,
                        server.subject(),
                        format!(
                            "server `{}` writes the value of {kind} `{}` inline, and it looks like a credential",
                            server.name, entry.name
                        ),
                    )
                    .at(server.at(entry.line))
                    .discriminator(&format!("{kind} {}", entry.name)),
                );
            }
        }
    }
    for (index, arg) in server.args.iter().enumerate() {
        if holds_token(&arg.value) {
            findings.push(
                Finding::new(
                    RuleId::McpSecretInline,
                    server.subject(),
                    format!(
                        "server `{}` passes a credential as argument {}",
                        server.name,
                        index + 1
                    ),
                )
                .at(server.at(arg.line))
                .discriminator(&format!("argument {index}")),
            );
        }
    }
    if let Some(url) = server.url.as_ref().filter(|url| holds_token(&url.value)) {
        findings.push(
            Finding::new(
                RuleId::McpSecretInline,
                server.subject(),
                format!("server `{}` writes a credential into its URL", server.name),
            )
            .at(server.at(url.line))
            .discriminator("url"),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_specs_are_pinned_only_by_an_exact_version() {
        assert!(npm_unpinned("@modelcontextprotocol/server-github"));
        assert!(npm_unpinned("server-x@latest"));
        assert!(npm_unpinned("@scope/x@^1.2.0"));
        assert!(!npm_unpinned("@scope/x@1.2.0"));
        assert!(!npm_unpinned("./local-server.js"));
        assert!(npm_unpinned("github:acme/server"));
        assert!(!npm_unpinned(
            "github:acme/server#0123456789abcdef0123456789abcdef01234567"
        ));
    }

    #[test]
    fn python_specs_are_pinned_by_double_equals() {
        assert!(python_unpinned("mcp-server-fetch"));
        assert!(python_unpinned("mcp-server-fetch>=1.0"));
        assert!(!python_unpinned("mcp-server-fetch==2025.1.17"));
        assert!(!python_unpinned("--from=mcp-server-fetch==1.0"));
        assert!(python_unpinned("git+https://github.com/acme/server"));
        assert!(python_unpinned("git+https://github.com/acme/server@main"));
        assert!(!python_unpinned(
            "git+https://github.com/acme/server@0123456789abcdef0123456789abcdef01234567"
        ));
    }

    #[test]
    fn loopback_hosts_are_this_machine() {
        for host in ["localhost", "127.0.0.1", "[::1]", "api.localhost"] {
            assert!(is_loopback(host), "{host}");
        }
        assert!(!is_loopback("10.0.0.7"));
        assert!(!is_loopback("mcp.example.com"));
    }
}
