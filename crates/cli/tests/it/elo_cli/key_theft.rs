//! A reviewer that tries to steal the authority's key during `calibrate --record-to`: a real
//! script, run by revcal as the reviewer (as an unprivileged user, as a reviewer runs), that
//! walks its ancestors in /proc, reads their command lines, environments and open files,
//! copies every key it finds and records a forged calibration with it. It must find no
//! usable key, and the forged calibration must not count as verified.

use super::{CliAgent, json_out, keygen, revcal_command, stderr, stdout};
use crate::reviewer_user::{as_reviewer_user, tests_run_as_root};
use serde_json::Value;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The thief. Argument 1: where it leaves what it found (`log.json`, `stolen-N.key`,
/// `forgeries.json`); argument 2: the revcal binary. It prints an empty review.
const THIEF: &str = r#"
import json, os, re, stat, subprocess, sys

loot, revcal = sys.argv[1], sys.argv[2]
log, texts = [], []

def grab(what, path, limit=1 << 20):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            data = os.read(fd, limit)
        finally:
            os.close(fd)
    except OSError as error:
        log.append({"what": what, "path": path, "error": type(error).__name__})
        return None
    log.append({"what": what, "path": path, "bytes": len(data)})
    texts.append(data)
    return data

def parent(pid):
    text = open(f"/proc/{pid}/stat").read()
    return int(text[text.rfind(")") + 2:].split()[1])

revcal_args, revcal_pid = None, None
pid = os.getppid()
while pid > 1:
    cmdline = grab("cmdline", f"/proc/{pid}/cmdline")
    args = [a.decode(errors="replace") for a in (cmdline or b"").split(b"\0") if a]
    if "--record-to" in args:
        revcal_args, revcal_pid = args, pid
    for arg in args:
        for candidate in [arg] + arg.split("=", 1)[1:]:
            if os.path.isabs(candidate) and os.path.isfile(candidate):
                grab("a file named on a command line", candidate)
    grab("environ", f"/proc/{pid}/environ")
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError as error:
        log.append({"what": "fd", "path": f"/proc/{pid}/fd", "error": type(error).__name__})
        fds = []
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
            grab("an open file", path)
    grab("mem", f"/proc/{pid}/mem", 16)
    pid = parent(pid)
texts.append("\n".join(f"{k}={v}" for k, v in os.environ.items()).encode())

def flag(name):
    if revcal_args and name in revcal_args:
        return revcal_args[revcal_args.index(name) + 1]
    return None

agent, agent_key, ledger = flag("--agent"), flag("--agent-key"), flag("--record-to")
keys = set()
for text in texts:
    for found in re.findall(rb'\{[^{}]*"secret_key"[^{}]*\}', text):
        try:
            key = json.loads(found)
        except ValueError:
            continue
        if key.get("agent") != agent:
            keys.add(json.dumps(key, sort_keys=True))

plants = 40
rounds = [{"round": n, "plants": [{"file": "src/forged.rs", "line": n, "category": "off-by-one"}],
           "trials": [{"trial": 1, "statuses": ["caught"], "flagged": True,
                       "findings": [{"file": "src/forged.rs", "line": n, "body": "found it"}]}]}
          for n in range(1, plants + 1)]
forged = {"format": "revcal-calibration-record", "version": 1, "report_sha256": "ab" * 32,
          "commit": "f" * 40, "reviewer": "forged", "ts": 1767225600000, "rounds": rounds,
          "summary": {"planted_rounds": plants, "clean_rounds": 0, "reviews": plants, "plants": plants,
                      "caught": plants, "flagged_planted": plants, "flagged_clean": 0,
                      "per_category": {"off-by-one": {"caught": plants, "total": plants}}}}
with open(os.path.join(loot, "forged.json"), "w") as out:
    json.dump(forged, out)
forgeries = []
for n, key in enumerate(sorted(keys)):
    path = os.path.join(loot, f"stolen-{n}.key")
    with open(path, "w") as out:
        out.write(key)
    if agent and agent_key and ledger:
        done = subprocess.run([revcal, "elo", "record", os.path.join(loot, "forged.json"),
                               "--authority-key", path, "--agent", agent, "--agent-key", agent_key,
                               "--ledger", ledger, "--json"], capture_output=True, text=True)
        forgeries.append({"key": path, "exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr})
with open(os.path.join(loot, "log.json"), "w") as out:
    json.dump({"revcal_args": revcal_args, "revcal_pid": revcal_pid, "read": log, "keys": len(keys)}, out)
with open(os.path.join(loot, "forgeries.json"), "w") as out:
    json.dump(forgeries, out)
print(json.dumps({"findings": []}))
"#;

const MODULE: &str = "\
def with_tax(price, tax):
    return price + tax


def scaled(total, rate):
    return total * rate


def last(items, count):
    return items[count - 1]
";

const PLANTS: &str = "\
- {file: shop/pricing.py, line: 2, original: '    return price + tax', mutated: '    return price - tax', category: arithmetic}
- {file: shop/pricing.py, line: 6, original: '    return total * rate', mutated: '    return total / rate', category: arithmetic}
- {file: shop/pricing.py, line: 10, original: '    return items[count - 1]', mutated: '    return items[count]', category: off-by-one}
";

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// The repository, the plants, the thief and the keys in `d`; the ledger trusts the
/// authority. Returns (authority, reviewer).
fn setup(d: &Path) -> (CliAgent, CliAgent) {
    let repo = d.join("repo");
    std::fs::create_dir_all(repo.join("shop")).unwrap();
    std::fs::write(repo.join("README.md"), "shop\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "readme"]);
    std::fs::write(repo.join("shop/pricing.py"), MODULE).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "pricing"]);
    std::fs::write(d.join("plants.yaml"), PLANTS).unwrap();
    std::fs::write(d.join("thief.py"), THIEF).unwrap();
    std::fs::create_dir(d.join("loot")).unwrap();
    let (authority, reviewer) = (keygen(d, "authority"), keygen(d, "reviewer"));
    let file = revcal_elo::KeyFile::parse(&std::fs::read_to_string(&authority.key).unwrap()).unwrap();
    std::fs::write(d.join("authority.pub"), serde_json::to_string(&file.public_only()).unwrap()).unwrap();
    let ledger = d.join("ledger.sqlite");
    let trusted = revcal_command(d, &["elo", "trust", &authority.id, "--key-file", "authority.pub"])
        .arg("--ledger")
        .arg(&ledger)
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    (authority, reviewer)
}

/// How the authority's key reaches revcal.
enum Key<'a> {
    /// `--authority-key FILE`.
    File(&'a Path),
    /// `--authority-key -`, the key piped in.
    Stdin(&'a str),
    /// `--authority-key -`, standard input redirected from the key file.
    StdinFile(&'a Path),
    /// `--authority-key-fd 3`, the key piped in on descriptor 3.
    Descriptor(&'a str),
    /// `$REVCAL_AUTHORITY_KEY`, set for revcal alone.
    Environment(&'a str),
    /// `$REVCAL_AUTHORITY_KEY`, exported by the shell that runs revcal.
    Exported(&'a str),
}

/// `revcal calibrate --record-to` with the thief as the reviewer, run as a reviewer's user.
fn calibrate(d: &Path, reviewer: &CliAgent, key: Key<'_>) -> Output {
    calibrate_as(d, reviewer, key, true)
}

/// [`calibrate`], as the reviewer's user or as the tests' own.
fn calibrate_as(d: &Path, reviewer: &CliAgent, key: Key<'_>, reviewer_user: bool) -> Output {
    let revcal = env!("CARGO_BIN_EXE_revcal");
    let thief = format!("python3 {} {} {revcal}", d.join("thief.py").display(), d.join("loot").display());
    let ledger = d.join("ledger.sqlite");
    let agent_key = reviewer.key.to_str().unwrap().to_owned();
    let mut args = vec![
        "calibrate",
        "-C",
        "repo",
        "--review-cmd",
        &thief,
        "--plants-file",
        "plants.yaml",
        "--one-at-a-time",
        "--scorer",
        "string",
        "--quiet",
        "--jobs",
        "1",
        "--record-to",
        ledger.to_str().unwrap(),
        "--agent",
        &reviewer.id,
        "--agent-key",
        &agent_key,
    ];
    let path;
    match &key {
        Key::File(file) => {
            path = file.to_str().unwrap().to_owned();
            args.extend(["--authority-key", &path]);
        }
        Key::Stdin(_) | Key::StdinFile(_) => args.extend(["--authority-key", "-"]),
        Key::Descriptor(_) => args.extend(["--authority-key-fd", "3"]),
        Key::Environment(_) | Key::Exported(_) => {}
    }
    let mut command = revcal_command(d, &args);
    if let Key::Exported(text) = key {
        let mut shell = Command::new("sh");
        shell.arg("-c").arg("\"$@\"; exit $?").arg("sh").arg(command.get_program()).args(command.get_args());
        shell.current_dir(d).env(AUTHORITY_KEY_VARIABLE, text);
        for (name, value) in command.get_envs() {
            match value {
                Some(value) => shell.env(name, value),
                None => shell.env_remove(name),
            };
        }
        command = shell;
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
    let _hand_back = if reviewer_user { as_reviewer_user(&mut command, d) } else { None };
    let mut feed = None;
    match key {
        Key::File(_) => {}
        Key::Stdin(text) => {
            command.stdin(Stdio::piped());
            feed = Some(text.to_owned());
        }
        Key::StdinFile(file) => {
            command.stdin(std::fs::File::open(file).unwrap());
        }
        Key::Descriptor(text) => {
            let (reader, mut writer) = std::io::pipe().unwrap();
            writer.write_all(text.as_bytes()).unwrap();
            drop(writer);
            let fd = reader.as_raw_fd();
            // SAFETY: dup2 and fcntl in the child, between fork and exec: descriptor 3 reads
            // the pipe, without close-on-exec (dup2 onto itself would keep the flag), so
            // revcal inherits it; `reader` lives until the spawn returns.
            unsafe {
                command.pre_exec(move || {
                    if fd != 3 && libc::dup2(fd, 3) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let output = command.output().unwrap();
            drop(reader);
            return output;
        }
        Key::Environment(text) => {
            command.env(AUTHORITY_KEY_VARIABLE, text);
        }
        Key::Exported(_) => {}
    }
    let mut child = command.spawn().unwrap();
    if let Some(text) = feed {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

const AUTHORITY_KEY_VARIABLE: &str = "REVCAL_AUTHORITY_KEY";

/// What the thief left: its log and its forgeries.
fn loot(d: &Path) -> (Value, Value) {
    let read = |name: &str| -> Value {
        let text = std::fs::read_to_string(d.join("loot").join(name))
            .unwrap_or_else(|error| panic!("the thief left no {name}: {error}"));
        serde_json::from_str(&text).unwrap()
    };
    (read("log.json"), read("forgeries.json"))
}

/// The reviewer's verified standing: (reviews, rating).
fn verified(d: &Path, reviewer: &CliAgent) -> (u64, f64) {
    let output = revcal_command(d, &["elo", "leaderboard", "--outcomes", "verified", "--json", "--ledger"])
        .arg(d.join("ledger.sqlite"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let board = json_out(&output);
    let row = board.as_array().unwrap().iter().find(|row| row["agent"] == reviewer.id.as_str()).cloned();
    row.map_or((0, 1200.0), |row| (row["reviews"].as_u64().unwrap(), row["elo"].as_f64().unwrap()))
}

/// Every secret the thief carried away.
fn stolen_secrets(d: &Path) -> Vec<String> {
    let mut secrets = Vec::new();
    for entry in std::fs::read_dir(d.join("loot")).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_str().unwrap().starts_with("stolen-") {
            let key: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            secrets.push(key["secret_key"].as_str().unwrap_or_default().to_owned());
        }
    }
    secrets
}

/// The forgeries, shortened for a message: the key used, the exit code, the first line.
fn forgeries_text(forgeries: &Value) -> String {
    let items: Vec<String> = forgeries
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let said = format!("{}{}", f["stdout"].as_str().unwrap(), f["stderr"].as_str().unwrap());
            format!("{} exit {}: {}", f["key"], f["exit"], said.chars().take(300).collect::<String>())
        })
        .collect();
    items.join("; ")
}

/// The thief must have walked revcal's ancestry (it read revcal's command line and was
/// refused its environment and descriptors), found no key but the reviewer's own, and left
/// the ledger with the real calibration's verified reviews only: three planted rounds, each
/// approved (-60 at K 40).
fn assert_nothing_stolen(d: &Path, authority_secret: &str, reviewer: &CliAgent, output: &Output) {
    let said = format!("{}{}", stdout(output), stderr(output));
    assert_eq!(output.status.code(), Some(2), "recall 0 fails the gate, and the run is recorded: {said}");
    assert!(said.contains("recorded calibration"), "{said}");
    assert!(!said.contains(authority_secret), "{said}");
    let (log, forgeries) = loot(d);
    assert!(log["revcal_args"].is_array(), "the thief found revcal's command line: {log}");
    let revcal_pid = log["revcal_pid"].as_u64().unwrap();
    for file in ["environ", "fd", "mem"] {
        let path = format!("/proc/{revcal_pid}/{file}");
        let entry = log["read"].as_array().unwrap().iter().find(|entry| entry["path"] == path.as_str());
        assert!(
            entry.is_some_and(|entry| entry["error"] == "PermissionError"),
            "revcal is not dumpable: {path} is closed to the reviewer: {log}"
        );
    }
    assert_eq!(verified(d, reviewer), (3, 1200.0 - 3.0 * 60.0), "forgeries: {}", forgeries_text(&forgeries));
    let stolen = stolen_secrets(d);
    assert!(!stolen.iter().any(|secret| secret == authority_secret), "the authority's key was stolen: {log}");
}

/// The authority's key file's text and its secret; the file itself is removed, as a key
/// kept in a secret store would never be in a file the reviewer can read.
fn key_in_memory(authority: &CliAgent) -> (String, String) {
    let text = std::fs::read_to_string(&authority.key).unwrap();
    std::fs::remove_file(&authority.key).unwrap();
    let secret = serde_json::from_str::<Value>(&text).unwrap()["secret_key"].as_str().unwrap().to_owned();
    (text, secret)
}

#[test]
fn a_reviewer_walking_proc_finds_no_authority_key_given_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (authority, reviewer) = setup(d);
    let (text, secret) = key_in_memory(&authority);
    let output = calibrate(d, &reviewer, Key::Stdin(&text));
    assert_nothing_stolen(d, &secret, &reviewer, &output);
}

#[test]
fn a_reviewer_walking_proc_finds_no_authority_key_given_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (authority, reviewer) = setup(d);
    let (text, secret) = key_in_memory(&authority);
    let output = calibrate(d, &reviewer, Key::Environment(&text));
    assert_nothing_stolen(d, &secret, &reviewer, &output);
}

#[test]
fn a_reviewer_walking_proc_finds_no_authority_key_given_on_a_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (authority, reviewer) = setup(d);
    let (text, secret) = key_in_memory(&authority);
    let output = calibrate(d, &reviewer, Key::Descriptor(&text));
    assert_nothing_stolen(d, &secret, &reviewer, &output);
}

/// A key file the reviewer could open (named on the command line, or redirected in from a
/// path) is refused before anything runs, with the separate step named; the thief never
/// runs and the ledger is as it was.
#[test]
fn a_key_file_the_reviewer_could_open_is_refused_before_any_review() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (authority, reviewer) = setup(d);
    for key in [Key::File(&authority.key), Key::StdinFile(&authority.key)] {
        let output = calibrate(d, &reviewer, key);
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{said}");
        assert!(said.contains("revcal elo record report.json"), "the separate step is named: {said}");
        assert!(said.contains(authority.key.to_str().unwrap()), "the file is named: {said}");
        assert!(!d.join("loot/log.json").exists(), "no review ran");
        assert_eq!(verified(d, &reviewer), (0, 1200.0));
    }
    let (text, secret) = key_in_memory(&authority);
    // Exported by the shell that runs revcal: the shell's environment, which the reviewer
    // can read, holds the key.
    let output = calibrate(d, &reviewer, Key::Exported(&text));
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(said.contains("readable in the environment of process"), "{said}");
    assert!(said.contains("(sh)"), "the shell is named: {said}");
    assert!(!said.contains(&secret), "{said}");
    assert!(!d.join("loot/log.json").exists(), "no review ran");
    // Root's reviewer could read any process's memory: refused, whatever the key's source.
    if tests_run_as_root() {
        let output = calibrate_as(d, &reviewer, Key::Stdin(&text), false);
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{said}");
        assert!(said.contains("CAP_SYS_PTRACE"), "{said}");
        assert!(!d.join("loot/log.json").exists(), "no review ran");
    }
    assert_eq!(verified(d, &reviewer), (0, 1200.0));
}

/// `elo record` runs no reviewer: it takes the authority's key from a file, standard input,
/// a descriptor or `$REVCAL_AUTHORITY_KEY`, and refuses two sources at once or none.
#[test]
fn elo_record_takes_the_authority_key_from_any_source_but_only_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (authority, reviewer) = (keygen(d, "authority"), keygen(d, "reviewer"));
    let text = std::fs::read_to_string(&authority.key).unwrap();
    let record = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/elo/calibration.json"),
    )
    .unwrap();
    std::fs::write(d.join("calibration.json"), record).unwrap();
    let run = |ledger: &str, extra: &[&str], env: Option<&str>, input: Option<&str>| -> Output {
        let mut args = vec!["elo", "record", "calibration.json", "--agent", &reviewer.id, "--agent-key"];
        let agent_key = reviewer.key.to_str().unwrap().to_owned();
        args.push(&agent_key);
        args.extend(["--ledger", ledger, "--json"]);
        args.extend_from_slice(extra);
        let mut command = revcal_command(d, &args);
        if let Some(env) = env {
            command.env(AUTHORITY_KEY_VARIABLE, env);
        }
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(input.unwrap_or_default().as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let key_file = authority.key.to_str().unwrap();
    for (ledger, extra, env, input) in [
        ("file.sqlite", vec!["--authority-key", key_file], None, None),
        ("stdin.sqlite", vec!["--authority-key", "-"], None, Some(text.as_str())),
        ("env.sqlite", vec![], Some(text.as_str()), None),
    ] {
        let output = run(ledger, &extra, env, input);
        assert_eq!(output.status.code(), Some(0), "{ledger}: {}", stderr(&output));
        let recorded = json_out(&output);
        assert_eq!(recorded["authority"], authority.id.as_str(), "{ledger}");
        assert_eq!(recorded["messages"], 12, "{ledger}");
    }
    let refused = [
        (vec!["--authority-key", key_file], Some(text.as_str()), "give one"),
        (vec![], None, "the calibrating authority's key is needed"),
        (vec!["--authority-key", "-"], None, "the authority's key on standard input: not a key file"),
    ];
    for (extra, env, said) in refused {
        let output = run("refused.sqlite", &extra, env, None);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(said), "{extra:?}: {}", stderr(&output));
        assert!(!d.join("refused.sqlite").exists(), "{extra:?}");
    }
}
