//! The output, trace and run rows of docs/errors.md whose tests live here
//! rather than in `tests/cli_errors.rs` (its consistency test reads both
//! files): where a run's results go and what is left when that fails, a
//! runaway trace record, FIFOs given as inputs, Ctrl-C before anything is
//! staged, and the memory budget of delayed requests.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The scenario every error row changes (docs/errors.md shows it).
const BASE: &str = common::ERROR_BASE;

/// A temporary folder holding `s.toml` and any other files.
struct Case {
    dir: TempDir,
}

impl Case {
    fn new(scenario: &str) -> Case {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("s.toml"), scenario).unwrap();
        Case { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The names in the folder, hidden ones (staging) included, sorted.
    fn names(&self, name: &str) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.path(name))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn command(&self, args: &[&str], dir: &str) -> Command {
        let mut c = Command::new(common::ratesim_path());
        c.current_dir(self.path(dir)).args(args).env_remove("RUST_BACKTRACE");
        c
    }

    /// Runs ratesim in `dir` (relative to the case's folder).
    fn run_in(&self, dir: &str, args: &[&str]) -> Output {
        self.command(args, dir).output().unwrap()
    }

    fn ok(&self, args: &[&str]) {
        let out = self.run_in("", args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Asserts a readable failure of `out`: exit 1, `error:` first, the
    /// words, no panic, nothing on stdout; returns stderr.
    fn failed(out: Output, args: &[&str], words: &[&str]) -> String {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
        for w in words {
            assert!(stderr.contains(w), "{args:?}: missing {w:?} in:\n{stderr}");
        }
        stderr
    }

    fn fails_in(&self, dir: &str, args: &[&str], words: &[&str]) -> String {
        Case::failed(self.run_in(dir, args), args, words)
    }

    fn fails(&self, args: &[&str], words: &[&str]) -> String {
        self.fails_in("", args, words)
    }

    /// Like `fails`, but kills a run that has not ended within 20 s and
    /// fails the test: for inputs that once made ratesim wait forever.
    fn fails_soon(&self, args: &[&str], words: &[&str]) -> String {
        let mut child = self.command(args, "").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("{args:?} hung");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Case::failed(child.wait_with_output().unwrap(), args, words)
    }
}

/// The folder's files and their bytes.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    common::snapshot(dir)
}

// ---- output errors ---------------------------------------------------------

/// `--out` naming the target through itself: `../real` from inside `real`,
/// or `real/../real`. The commit moved `real` aside first, after which the
/// staging path, made through `real`, led nowhere: the run failed with
/// "cannot move results into ../real", `real` was gone, its contents sat in
/// a hidden `.real.tmp-*.old` and the staging folder was left. Both now
/// replace `real`, and leave nothing beside it.
#[test]
fn o13_out_through_the_target_itself() {
    let c = Case::new(BASE);
    c.ok(&["run", "s.toml", "--out", "real", "-q", "--no-charts", "--seed", "1"]);
    let out = c.run_in("real", &["run", "../s.toml", "--out", "../real", "-q", "--no-charts", "--seed", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(c.names(""), ["real", "s.toml"], "nothing left beside it");
    assert!(common::read(&c.path("real"), "report.md").contains("--seed 2"));
    c.ok(&["run", "s.toml", "--out", "real/../real", "-q", "--no-charts", "--seed", "3"]);
    assert_eq!(c.names(""), ["real", "s.toml"]);
    assert!(common::read(&c.path("real"), "report.md").contains("--seed 3"));
    // With no `real` yet: `real/..` (and `new/..`) name where they would
    // be; nothing is created for them, by a failed run or a good one.
    fs::remove_dir_all(c.path("real")).unwrap();
    fs::write(c.path("trace.csv"), "time\n0.1\nx\n").unwrap();
    fs::write(c.path("bad.toml"), "name = \"b\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"csv\"\npath = \"trace.csv\"\n").unwrap();
    c.fails(
        &["run", "bad.toml", "--out", "real/../real"],
        &["error: scenario bad.toml failed; nothing was written"],
    );
    assert_eq!(c.names(""), ["bad.toml", "s.toml", "trace.csv"], "a failed run created something");
    c.ok(&["run", "s.toml", "--out", "new/../real", "-q", "--no-charts"]);
    assert_eq!(c.names(""), ["bad.toml", "real", "s.toml", "trace.csv"]);
    // A failed run through the target keeps the previous results.
    let before = snapshot(&c.path("real"));
    c.fails_in("real", &["run", "../bad.toml", "--out", "../real"], &["previous results were kept"]);
    assert_eq!(snapshot(&c.path("real")), before);
    assert_eq!(c.names(""), ["bad.toml", "real", "s.toml", "trace.csv"]);
}

/// A folder that holds the scenario deeper down (`--out /tmp` with the
/// scenario in `/tmp/rw/o/`) named it as given, as if it lay in the
/// folder itself: `output folder /tmp holds s.toml`.
#[test]
fn o14_out_holds_an_input_deeper_down() {
    let c = Case::new(BASE);
    fs::create_dir_all(c.path("rw/o")).unwrap();
    fs::rename(c.path("s.toml"), c.path("rw/o/s.toml")).unwrap();
    let top = c.dir.path().to_str().unwrap().to_string();
    let inside = format!("{top}/rw/o/s.toml");
    c.fails_in(
        "rw/o",
        &["run", "s.toml", "--out", &top],
        &[&format!("error: output folder {top} holds {inside}, the scenario file: a run replaces its output folder whole")],
    );
    c.fails_in(
        "rw/o",
        &["run", "s.toml", "--out", "../../rw"],
        &["output folder ../../rw holds ../../rw/o/s.toml, the scenario file"],
    );
    assert!(c.path("rw/o/s.toml").is_file());
}

/// Sets the child's largest file size (`RLIMIT_FSIZE`) and ignores the
/// signal past it, so that writing past it fails with EFBIG ("File too
/// large"), as a full disk fails with ENOSPC: no root, no small filesystem.
#[cfg(target_os = "linux")]
fn with_file_size_limit(c: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A file that cannot be written (a full disk) once said only `cannot
/// write decisions` / `No space left on device`, or named the hidden
/// staging folder, gone by the time the message is read. It names the
/// file where it would have been, and what became of the output folder.
#[cfg(target_os = "linux")]
#[test]
fn o15_a_file_that_cannot_be_written_is_named() {
    let c =
        Case::new(&BASE.replace("count = 20", "count = 20000").replace("span = \"10ms\"", "span = \"1s\""));
    let run = |args: &[&str], limit: u64| {
        let mut cmd = c.command(args, "");
        with_file_size_limit(&mut cmd, limit);
        cmd.output().unwrap()
    };
    // decisions.csv, streamed as the run goes: 20 000 requests, 3 limiters.
    let args = ["run", "s.toml", "--out", "out", "--decisions", "--no-charts"];
    let err = Case::failed(
        run(&args, 256 << 10),
        &args,
        &[
            "error: cannot write out/decisions.csv; nothing was written\n",
            "caused by: File too large (os error 27)",
        ],
    );
    assert!(!err.contains(".tmp-"), "the staging folder is no use to the reader: {err}");
    assert_eq!(c.names(""), ["s.toml"], "nothing written, nothing staged left");
    // A table, with an earlier run's results in place: they stay.
    c.ok(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    let before = snapshot(&c.path("out"));
    let args = ["run", "s.toml", "--out", "out", "--no-charts", "--seed", "2"];
    Case::failed(
        run(&args, 4 << 10),
        &args,
        &["error: cannot write out/", "; previous results were kept\n", "File too large"],
    );
    assert_eq!(snapshot(&c.path("out")), before);
    assert_eq!(c.names(""), ["out", "s.toml"]);
    // A PNG chart: the cause in plain words (it once came out as the
    // drawing library's nested error values, `BackendError(DrawingError(
    // ImageError(IoError(Custom { kind: Other, ...`).
    fs::write(c.path("s.toml"), format!("{BASE}\n[output]\nbin = \"1s\"\n")).unwrap();
    let args = ["run", "s.toml", "--out", "png", "--format", "png"];
    let err = Case::failed(
        run(&args, 24 << 10),
        &args,
        &[
            "error: cannot write png/",
            ".png; nothing was written\n",
            "caused by: File too large (os error 27)",
        ],
    );
    assert!(!err.contains("BackendError"), "{err}");
    assert!(!c.path("png").exists());
}

/// A mount point as `--out` ran the whole simulation, then failed with
/// `cannot move results into small: Device or resource busy`: a mount
/// point cannot be renamed. It is refused before any work. `/proc` is one
/// everywhere; as root, a bind mount of a folder of the same filesystem
/// (same device) is found in /proc/self/mountinfo.
#[cfg(target_os = "linux")]
#[test]
fn o16_out_is_a_mount_point() {
    let c = Case::new(BASE);
    c.fails(
        &["run", "s.toml", "--out", "/proc"],
        &["error: output folder /proc is a mount point (a filesystem or a folder is mounted there): a run replaces its \
output folder by renaming a new one into its place, which cannot be done to a mount point; give a folder inside it, \
like /proc/run1"],
    );
    fs::create_dir(c.path("src")).unwrap();
    fs::create_dir(c.path("small")).unwrap();
    let bound = Command::new("mount").args(["--bind", "src", "small"]).current_dir(c.dir.path()).output();
    if !bound.is_ok_and(|o| o.status.success()) {
        eprintln!("o16: no bind mount (not root?): only /proc checked");
        return;
    }
    let out = c.run_in("", &["run", "s.toml", "--out", "small"]);
    let _ = Command::new("umount").arg(c.path("small")).status();
    Case::failed(out, &[], &["error: output folder small is a mount point", "like small/run1"]);
    assert_eq!(c.names(""), ["s.toml", "small", "src"], "nothing staged");
}

/// `--font FIFO` waited forever for a writer (`[output] font` refuses
/// anything but a regular file); so did a FIFO as the scenario, for
/// `check` and `run`. Both are refused before they are opened.
#[cfg(unix)]
#[test]
fn o17_a_fifo_as_font_or_scenario() {
    let c = Case::new(BASE);
    let fifo = c.path("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    c.fails_soon(
        &["run", "s.toml", "--out", "out", "--font", "fifo"],
        &[
            "error: cannot load the chart font\n",
            "caused by: font file fifo is not a regular file (a device, pipe or socket): give a TrueType or OpenType font file",
        ],
    );
    // A device too, as for `[output] font`.
    c.fails_soon(
        &["run", "s.toml", "--out", "out", "--font", "/dev/null"],
        &["font file /dev/null is not a regular file"],
    );
    for command in ["check", "run"] {
        c.fails_soon(
            &[command, "fifo"],
            &["error: scenario fifo is not a regular file (a pipe): reading it would wait for whatever writes into it; save the scenario to a file"],
        );
    }
    assert!(!c.path("out").exists());
}

/// Makes `path` unchangeable for this user: `chattr +i` as root (whom
/// permission bits do not stop), mode 555 otherwise. False where neither
/// holds (a filesystem without the attribute), and the caller skips.
#[cfg(target_os = "linux")]
fn lock(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let as_root = Command::new("chattr").arg("+i").arg(path).output().is_ok_and(|o| o.status.success());
    if !as_root {
        fs::set_permissions(path, fs::Permissions::from_mode(0o555)).unwrap();
    }
    tempfile::tempfile_in(path).is_err()
}

#[cfg(target_os = "linux")]
fn unlock(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = Command::new("chattr").arg("-i").arg(path).output();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// An earlier run's folder this user may not write was moved aside by the
/// commit (its parent allowed that), its files could not be removed, and
/// the run said nothing: they stayed in a hidden `.out.tmp-*.old`. It is
/// refused before any work, and the folder is left as it was.
#[cfg(target_os = "linux")]
#[test]
fn o18_out_is_a_folder_this_user_cannot_change() {
    let c = Case::new(BASE);
    c.ok(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    let before = snapshot(&c.path("out"));
    if !lock(&c.path("out")) {
        unlock(&c.path("out"));
        eprintln!("o18: cannot make a folder unwritable here: skipped");
        return;
    }
    let out = c.run_in("", &["run", "s.toml", "--out", "out", "--no-charts", "--seed", "2"]);
    unlock(&c.path("out"));
    Case::failed(
        out,
        &[],
        &[
            "error: cannot replace output folder out: this user cannot remove its files, so a run would leave the \
earlier results behind in a hidden folder; give another --out, or make it writable\n",
            "caused by: ",
        ],
    );
    assert_eq!(snapshot(&c.path("out")), before);
    assert_eq!(c.names(""), ["out", "s.toml"], "nothing staged");
}

/// Where the earlier results, moved aside, cannot be removed (a file in
/// them made immutable), the new results are in place and the run says
/// where the old ones are, instead of leaving them unmentioned. Only root
/// can make a file its folder's owner cannot delete: skipped otherwise.
#[cfg(target_os = "linux")]
#[test]
fn o19_earlier_results_that_cannot_be_removed_are_named() {
    let c = Case::new(BASE);
    c.ok(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    let pinned = c.path("out/summary.csv");
    if !Command::new("chattr").arg("+i").arg(&pinned).output().is_ok_and(|o| o.status.success()) {
        eprintln!("o19: no immutable files here (not root?): skipped");
        return;
    }
    let out = c.run_in("", &["run", "s.toml", "--out", "out", "--no-charts", "--seed", "2"]);
    let aside: Vec<String> = c.names("").into_iter().filter(|n| n.ends_with(".old")).collect();
    let _ = Command::new("chattr").arg("-i").arg(&pinned).output();
    for a in &aside {
        let _ = Command::new("chattr").arg("-i").arg(c.path(&format!("{a}/summary.csv"))).output();
        fs::remove_dir_all(c.path(a)).unwrap();
    }
    let err = Case::failed(
        out,
        &[],
        &[
            "error: the results are in out, but the previous results, moved aside to ",
            ", could not be removed: \
remove that folder by hand\n",
        ],
    );
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(aside[0].starts_with(".out.tmp-") && err.contains(&aside[0]), "{err}");
    assert!(c.path("out/summary.md").is_file(), "the new results are in place");
}

/// A folder made private stays private: the new results take the earlier
/// folder's mode (they came out 755, whatever the old one had).
#[cfg(unix)]
#[test]
fn a_rerun_keeps_the_output_folders_mode() {
    use std::os::unix::fs::PermissionsExt;
    let c = Case::new(BASE);
    c.ok(&["run", "s.toml", "--out", "out", "-q", "--no-charts"]);
    fs::set_permissions(c.path("out"), fs::Permissions::from_mode(0o700)).unwrap();
    c.ok(&["run", "s.toml", "--out", "out", "-q", "--no-charts", "--seed", "2"]);
    assert_eq!(fs::metadata(c.path("out")).unwrap().permissions().mode() & 0o777, 0o700);
}

/// `--help` or `--version` into a full disk said nothing and exited 0, as
/// if it had been written; it is an error (exit 1) naming the cause, while
/// a closed pipe (`--help | head -1`) still exits 0 quietly.
#[cfg(target_os = "linux")]
#[test]
fn help_that_cannot_be_written_is_an_error() {
    let c = Case::new(BASE);
    for (flag, what) in [("--help", "help"), ("--version", "version"), ("-h", "help")] {
        let out = c.command(&[flag], "").stdout(fs::File::create("/dev/full").unwrap()).output().unwrap();
        Case::failed(
            out,
            &[flag],
            &[&format!("error: cannot write the {what}\n  caused by: No space left on device (os error 28)")],
        );
    }
    let mut child = c.command(&["--help"], "").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Standard output on a full disk (`> /dev/full`): the run's terminal
/// table after its results were written (they stay, whole), `check`'s
/// summary and `completions`' script are errors naming the cause, exit 1;
/// a closed pipe (`| head -1`) exits 0 quietly in every case.
#[cfg(target_os = "linux")]
#[test]
fn standard_output_that_cannot_be_written_is_an_error() {
    let c = Case::new(BASE);
    let full = "  caused by: No space left on device (os error 28)";
    let run = ["run", "s.toml", "--out", "out", "--no-charts"];
    let cases: [(&[&str], &str); 3] = [
        (&run, "error: the results were written to out, but the summary could not be printed"),
        (
            &["check", "s.toml"],
            "error: the scenario is valid, but its summary could not be written to standard output",
        ),
        (&["completions", "bash"], "error: cannot write to standard output"),
    ];
    for (args, said) in cases {
        let out = c.command(args, "").stdout(fs::File::create("/dev/full").unwrap()).output().unwrap();
        let stderr = Case::failed(out, args, &[said, full]);
        assert_eq!(stderr, format!("{said}\n{full}\n"), "{args:?}");
    }
    let written = common::snapshot(&c.path("out"));
    assert!(written.keys().any(|f| f.ends_with("summary.csv")), "{:?}", written.keys());
    c.ok(&["run", "s.toml", "--out", "again", "-q", "--no-charts"]);
    assert_eq!(common::snapshot(&c.path("again")), written, "the results of the run that could not print");
    for (args, _) in cases {
        let mut child = c.command(args, "").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

// ---- trace errors ----------------------------------------------------------

/// A stray quote read the rest of the file into one field: `check` and
/// `run --memory 64MiB` reached 2.1 GB on a 1.5 GB trace. A record is
/// bounded (4 MiB) and past it the trace is refused, naming the line the
/// record began on and where the quote opened. Here 6 MB of rows after
/// the quote; also a line of 6 MB with no quote at all.
#[test]
fn t37_a_stray_quote_runs_on_past_the_record_bound() {
    let c = Case::new(
        "name = \"q\"\n[limit]\nrequests = 10\nwindow = \"1s\"\n[[traffic]]\nkind = \"csv\"\npath = \"trace.csv\"\n",
    );
    let row = format!("0.2,{}\n", "x".repeat(90));
    fs::write(c.path("trace.csv"), format!("time,ua\n0.1,ok\n0.15,\"abc\n{}", row.repeat(64_000))).unwrap();
    let message = "`traffic[0]`, trace.csv, line 3: a quoted field ran on for more than 4.0 MiB: a stray quote? A quote \
`\"` opened in field `ua` (column 2) on line 3 is not closed by line ";
    let e = c.fails(&["check", "s.toml"], &[&format!("error: {message}")]);
    assert!(e.contains(", so every line after it is read as part of that field; ratesim reads at most 4.0 MiB into one row"), "{e}");
    c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "64MiB"],
        &["error: scenario s.toml failed; nothing was written\n", &format!("caused by: {message}")],
    );
    assert!(!c.path("out").exists());
    fs::write(c.path("trace.csv"), format!("time,ua\n0.1,{}\n", "y".repeat(6_000_000))).unwrap();
    c.fails(
        &["check", "s.toml"],
        &["error: `traffic[0]`, trace.csv, line 2: the row is longer than 4.0 MiB, in field `ua` (column 2): a trace \
row holds a time and a few short fields; is this a CSV trace?"],
    );
}

// ---- the memory budget of delayed requests ---------------------------------

/// Guava's `acquire()` at 3 x L for 1000 s under `--memory 64KiB` once
/// stopped with its queue at 597.4 KiB, 9 times the budget: the budget was
/// checked every 262 144 arrivals. Runs with a shaping limiter and a small
/// budget are checked every quarter budget's worth of delayed requests,
/// so the queue stops within twice the budget. And `--memory 100B` on the
/// shipped shaping scenario said "keeps 0 delayed requests waiting … its
/// queue holds 3.3 KiB": the count was of those waiting at the check, the
/// bytes of the most that ever waited (plus 2.8 KiB of links the first
/// request allocated). The message gives the most that waited.
#[test]
fn mb01_a_delay_queue_stops_within_twice_the_budget() {
    let c = Case::new(
        "name = \"t\"\nduration = \"1000s\"\n\n[limit]\nrequests = 100\nwindow = \"1s\"\n\n[[traffic]]\nkind = \
         \"poisson\"\nload = 3.0\n\n[[limiter]]\nkind = \"guava\"\n",
    );
    let err = c.fails(
        &["run", "s.toml", "--out", "out", "--memory", "64KiB"],
        &[
            "error: scenario s.toml failed; nothing was written\n",
            "caused by: `guava` had up to ",
            " delayed requests waiting for the backend at once: its queue holds 80.0 KiB for them",
            "that passes the 64.0 KiB the run may use (--memory)",
        ],
    );
    let peak: u64 = err.split("had up to ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((2048..=4096).contains(&peak), "80 KiB at 20 bytes a place: {peak}");
    let shaping = common::scenario("shaping.toml");
    c.fails(
        &["run", shaping.to_str().unwrap(), "--out", "out", "--memory", "100B"],
        &["caused by: `leaky_bucket(burst=20;delay=0)` had up to 20 delayed requests waiting for the backend at once (14 wait now): its queue holds 640 B for them"],
    );
}

// ---- Ctrl-C ----------------------------------------------------------------

/// Ctrl-C before anything is staged (here `check` reading a large trace)
/// printed a bare `interrupted`, none of the lines docs/errors.md lists.
#[cfg(unix)]
#[test]
fn ctrl_c_before_anything_is_staged_says_nothing_was_written() {
    use std::io::Write;
    let c = Case::new(
        "name = \"big\"\n[limit]\nrequests = 100\nwindow = \"10ms\"\n[[traffic]]\nkind = \"csv\"\npath = \"big.csv\"\n",
    );
    let mut rows = 4_000_000u64;
    for _ in 0..3 {
        let mut w = std::io::BufWriter::new(fs::File::create(c.path("big.csv")).unwrap());
        writeln!(w, "time").unwrap();
        for i in 0..rows {
            writeln!(w, "{}.{:06}", i / 1_000_000, i % 1_000_000).unwrap();
        }
        drop(w);
        let child =
            c.command(&["check", "s.toml"], "").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        // The handler is installed first thing; the trace takes seconds.
        std::thread::sleep(Duration::from_millis(400));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        if out.status.code() == Some(0) {
            rows *= 4; // done before the signal: a machine this fast needs more
            continue;
        }
        assert_eq!(out.status.code(), Some(130));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "interrupted; nothing was written\n");
        return;
    }
    panic!("check always finished before the signal");
}
