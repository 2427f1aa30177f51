//! A run that fails, is killed or is interrupted midway leaves the previous
//! results byte-identical. The big trace is generated here, never committed.

mod common;

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use common::snapshot;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GOOD_ROWS: u64 = 1_000_000;

fn bin() -> PathBuf {
    common::ratesim_path()
}

/// `rows` good rows, one every microsecond, then optionally a bad one.
fn write_trace(path: &Path, rows: u64, bad: Option<&str>) {
    let mut w = BufWriter::new(File::create(path).unwrap());
    writeln!(w, "id,time").unwrap();
    for i in 0..rows {
        writeln!(w, "{i},{}.{:06}", i / 1_000_000, i % 1_000_000).unwrap();
    }
    if let Some(b) = bad {
        writeln!(w, "{rows},{b}").unwrap();
    }
}

fn scenario(dir: &Path, file: &str, trace: &str) {
    let text = format!(
        "name = \"big\"\n[limit]\nrequests = 100\nwindow = \"10ms\"\n[[traffic]]\nkind = \"csv\"\npath = \"{trace}\"\n"
    );
    fs::write(dir.join(file), text).unwrap();
}

fn run(dir: &Path, scenario: &str) -> std::process::Output {
    Command::new(bin()).current_dir(dir).args(["run", scenario, "--out", "out", "--quiet"]).output().unwrap()
}

fn staging_dirs(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect()
}

#[test]
fn a_bad_row_at_line_1_000_002_keeps_previous_results_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_trace(&dir.join("small.csv"), 1000, None);
    scenario(dir, "good.toml", "small.csv");
    let first = run(dir, "good.toml");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let before = snapshot(&dir.join("out"));
    // Tables, report and three charts in two formats.
    assert_eq!(before.keys().count(), 10, "{:?}", before.keys());

    // One million good rows (header is line 1), then a bad row on line 1 000 002.
    write_trace(&dir.join("big.csv"), GOOD_ROWS, Some("12x"));
    scenario(dir, "bad.toml", "big.csv");
    let started = Instant::now();
    let second = run(dir, "bad.toml");
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: scenario bad.toml failed; previous results were kept"), "{stderr}");
    assert!(
        stderr.contains(
            "caused by: `traffic[0]`, big.csv, line 1000002: field `time`: `12x` is not a decimal number"
        ),
        "{stderr}"
    );
    assert_eq!(snapshot(&dir.join("out")), before, "previous results changed");
    assert!(staging_dirs(dir).is_empty(), "{:?}", staging_dirs(dir));
    eprintln!("the failing run over {GOOD_ROWS} rows took {took:?}");
}

/// SIGKILL runs no destructors: the staging directory stays behind, the
/// target does not change, and the next run removes the stale staging.
#[cfg(unix)]
#[test]
fn a_killed_run_keeps_previous_results_and_the_next_run_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_trace(&dir.join("small.csv"), 1000, None);
    scenario(dir, "good.toml", "small.csv");
    assert!(run(dir, "good.toml").status.success());
    let before = snapshot(&dir.join("out"));

    let mut child = start_a_big_run(dir, Stdio::null());
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run finished before it was killed; make the trace bigger");
    assert_eq!(snapshot(&dir.join("out")), before, "a killed run changed the results");
    let left = staging_dirs(dir);
    let prefix = format!(".out.tmp-{}-", child.id());
    assert!(left.len() == 1 && left[0].starts_with(&prefix) && left[0].len() > prefix.len(), "{left:?}");

    assert!(run(dir, "good.toml").status.success());
    assert_eq!(snapshot(&dir.join("out")), before, "same scenario, same bytes");
    #[cfg(target_os = "linux")]
    assert!(staging_dirs(dir).is_empty(), "stale staging not removed: {:?}", staging_dirs(dir));
}

/// Starts a run of a million-row trace into `dir/out` and returns as soon as
/// its staging folder exists (the run is then reading the trace, which takes
/// it far longer than the caller needs to signal it); fails if it ends first.
#[cfg(unix)]
fn start_a_big_run(dir: &Path, stderr: Stdio) -> std::process::Child {
    write_trace(&dir.join("big.csv"), GOOD_ROWS, None);
    scenario(dir, "big.toml", "big.csv");
    let mut child = Command::new(bin())
        .current_dir(dir)
        .args(["run", "big.toml", "--out", "out", "--quiet"])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while staging_dirs(dir).is_empty() {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("no staging directory appeared");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    child
}

/// Waits for the child at most `secs` seconds; kills it and fails after that.
fn wait_at_most(child: &mut std::process::Child, secs: u64) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a run of a million-row trace into `dir/out`, sends it SIGINT once
/// its staging folder exists, and returns what it said; asserts exit 130.
#[cfg(unix)]
fn interrupt_a_big_run(dir: &Path) -> String {
    use std::io::Read;

    // The handler is installed before anything is staged: once the staging
    // folder exists, a SIGINT must find it.
    let mut child = start_a_big_run(dir, Stdio::piped());
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a pid of our own child that has not been waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = wait_at_most(&mut child, 60);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();

    assert_eq!(
        status.code(),
        Some(130),
        "after SIGINT: {status:?}, stderr {stderr:?} (if the run finished first, make the trace bigger)"
    );
    stderr
}

/// Ctrl-C (SIGINT) mid-run: ratesim removes its staging folder, says so in
/// one line and exits 130; the previous results are byte-identical.
#[cfg(unix)]
#[test]
fn ctrl_c_removes_the_staging_folder_and_keeps_previous_results() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write_trace(&dir.join("small.csv"), 1000, None);
    scenario(dir, "good.toml", "small.csv");
    assert!(run(dir, "good.toml").status.success());
    let before = snapshot(&dir.join("out"));

    let stderr = interrupt_a_big_run(dir);
    assert_eq!(stderr, "interrupted; previous results kept\n");
    assert!(staging_dirs(dir).is_empty(), "staging left behind: {:?}", staging_dirs(dir));
    assert_eq!(snapshot(&dir.join("out")), before, "an interrupted run changed the results");
}

/// Ctrl-C during a run into a new folder: there were no previous results
/// to keep (it once said there were), and nothing is left behind.
#[cfg(unix)]
#[test]
fn ctrl_c_into_a_new_folder_says_nothing_was_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let stderr = interrupt_a_big_run(dir);
    assert_eq!(stderr, "interrupted; nothing was written\n");
    assert!(staging_dirs(dir).is_empty(), "staging left behind: {:?}", staging_dirs(dir));
    assert!(!dir.join("out").exists());
}

/// Ctrl-C on a terminal, with the progress bar drawn: the bar holds the
/// line, so the message first returns to its start and erases it (`\r`,
/// `ESC [2K`) and stands on a line of its own, not after the bar's text.
/// stderr is a pseudo-terminal here (its line discipline writes `\n` as
/// `\r\n`); the run, 10^8 Poisson arrivals, lasts seconds.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_on_a_terminal_erases_the_progress_line_first() {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    use std::sync::{Arc, Mutex};

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(
        dir.join("long.toml"),
        "name = \"long\"\nduration = \"100s\"\n[limit]\nrequests = 100\nwindow = \"10ms\"\n\
[[traffic]]\nkind = \"poisson\"\nrate = 1000000\n",
    )
    .unwrap();
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty(3) writes two new descriptors into the two ints; the
    // name, termios and window size may be null.
    let opened = unsafe {
        libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null())
    };
    assert_eq!(opened, 0, "openpty failed");
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (mut master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
    let said = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let said = Arc::clone(&said);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the child, the slave's last holder, has exited.
            while let Ok(n @ 1..) = master.read(&mut buf) {
                said.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let mut child = Command::new(bin())
        .current_dir(dir)
        .args(["run", "long.toml", "--out", "out", "--no-charts"])
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // The command, and its copy of the slave, are gone: the child holds the
    // only one. Wait for the progress bar (it redraws a few times a second).
    let deadline = Instant::now() + Duration::from_secs(30);
    while said.lock().unwrap().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a pid of our own child that has not been waited for.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = wait_at_most(&mut child, 60);
    reader.join().unwrap();
    let said = String::from_utf8_lossy(&said.lock().unwrap()).into_owned();
    assert_eq!(status.code(), Some(130), "after SIGINT: {status:?}, the terminal showed {said:?}");
    let message = "\r\x1b[2Kinterrupted; nothing was written\r\n";
    assert!(said.ends_with(message), "the terminal showed {said:?}");
    assert!(said.len() > message.len(), "no progress bar was drawn before the message: {said:?}");
    assert!(!dir.join("out").exists());
}

/// The library side of Ctrl-C, in this process: `abandon_all_staging`
/// removes uncommitted staging folders and nothing else; while its guard
/// lives a commit waits, and afterwards writes and commits of an abandoned
/// staging fail without bringing the folder back or touching the target.
#[test]
fn abandoned_staging_is_removed_and_can_no_longer_be_committed() {
    use ratesim::export::{OutputDir, abandon_all_staging};

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let done = OutputDir::stage(&dir.join("done")).unwrap();
    done.write("a.txt", "committed").unwrap();
    done.commit().unwrap();
    let target = dir.join("out");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("report.md"), "previous").unwrap();
    let staged = OutputDir::stage(&target).unwrap();
    staged.write("sub/new.txt", "new").unwrap();
    assert_eq!(staging_dirs(dir).len(), 1);

    let held = abandon_all_staging();
    assert_eq!((held.removed(), held.kept()), (1, 1));
    assert!(staging_dirs(dir).is_empty(), "{:?}", staging_dirs(dir));
    // A commit started now waits for the guard.
    let (tx, rx) = std::sync::mpsc::channel();
    let committer = std::thread::spawn(move || {
        assert!(staged.write("sub/late.txt", "late").is_err());
        let result = staged.commit().map_err(|e| format!("{e}: {}", std::error::Error::source(&e).unwrap()));
        tx.send(()).unwrap();
        result
    });
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "a write or commit did not wait");
    drop(held);
    let err = committer.join().unwrap().unwrap_err();
    assert!(err.contains("cannot move results into") && err.contains("interrupted"), "{err}");

    assert!(staging_dirs(dir).is_empty(), "{:?}", staging_dirs(dir));
    assert_eq!(snapshot(&target), BTreeMap::from([(PathBuf::from("report.md"), b"previous".to_vec())]));
    assert_eq!(fs::read_to_string(dir.join("done/a.txt")).unwrap(), "committed");
}
