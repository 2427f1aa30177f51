//! Staged output: files go to a temporary directory beside the target, which
//! replaces the target only when the run succeeded. A failed or interrupted
//! run leaves the previous results as they were.
//!
//! The staging directory is `.<name>.tmp-<pid>-<random>` beside the target,
//! made by the `tempfile` crate. A run killed by a signal runs no destructors
//! and leaves its staging directory behind, never a half-written target; the
//! next run into the same target removes staging directories whose process is
//! gone (on Linux, where `/proc` tells).
//!
//! A program that catches Ctrl-C can do better: every staging directory not
//! yet committed is listed in a process-wide registry, and
//! [`abandon_all_staging`] removes them all. The library installs no signal
//! handler itself; the binary calls that function from its own.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tempfile::TempDir;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output path {0} is a file, not a directory")]
    NotADirectory(PathBuf),
    #[error("output path `{0}` names no folder that could be replaced: give one, like out/run1")]
    NoName(PathBuf),
    #[error(
        "output folder {target} holds {entry}, which ratesim did not write: a run replaces its output folder whole, \
so give a new or empty folder, or one an earlier run wrote"
    )]
    NotOurs { target: PathBuf, entry: PathBuf },
    #[error(
        "output folder {target} holds {input}, {what}: a run replaces its output folder whole, which would delete \
it; give another --out, or move the file out of {target}"
    )]
    HoldsInput { target: PathBuf, input: PathBuf, what: String },
    #[error("cannot write output to {target}: {file} is a file, not a directory")]
    UnderAFile { target: PathBuf, file: PathBuf },
    #[error("cannot write output to {target}: creating {staging} beside it failed")]
    Unwritable {
        target: PathBuf,
        staging: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create output directory {path}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot move results into {path}")]
    Commit {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The staging directories of this process not yet committed or dropped,
/// each with whether its target held an earlier run's results. Staging,
/// writing, committing and dropping hold the lock while they touch the
/// directory, so [`abandon_all_staging`] never runs in the middle of one.
static STAGING: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<(PathBuf, bool)>> {
    // A panic while the lock was held leaves the list itself valid.
    STAGING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Holds the staging registry locked after [`abandon_all_staging`]: while it
/// lives, any `OutputDir` in the process that tries to stage, write, commit or
/// drop waits. Keep it until the process exits, so that a run whose staging
/// was removed under it cannot go on to report that as an error or leave
/// anything behind.
#[must_use = "dropping it lets runs whose staging was removed go on and fail"]
pub struct Abandoned {
    _registry: MutexGuard<'static, Vec<(PathBuf, bool)>>,
    removed: usize,
    kept: usize,
}

impl Abandoned {
    /// How many staging directories were removed.
    pub fn removed(&self) -> usize {
        self.removed
    }

    /// How many of them were to replace an earlier run's results, which
    /// stay as they were.
    pub fn kept(&self) -> usize {
        self.kept
    }
}

/// Removes every staging directory of this process that was neither
/// committed nor dropped: what a signal handler calls before it exits, so
/// that an interrupted run leaves the previous results and nothing else. A
/// commit in progress finishes first (its renames hold the same lock), so the
/// target holds either the previous results or the complete new ones.
pub fn abandon_all_staging() -> Abandoned {
    let mut registry = registry();
    let (mut removed, mut kept) = (0, 0);
    for (dir, previous) in registry.drain(..) {
        // A file being created in it (a PNG written by path) can make one
        // pass fail with "directory not empty"; a few more finish the job.
        for _ in 0..10 {
            match fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => continue,
                _ => break,
            }
        }
        removed += 1;
        kept += usize::from(previous);
    }
    Abandoned { _registry: registry, removed, kept }
}

/// The error of an `OutputDir` used after [`abandon_all_staging`] removed it.
fn abandoned() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the run was interrupted and its staging folder removed")
}

/// A staging directory for one run's outputs.
#[derive(Debug)]
pub struct OutputDir {
    target: PathBuf,
    /// The target held an earlier run's results when staging began (a
    /// failed run keeps them).
    previous: bool,
    /// The staging directory, removed when dropped; `None` once committed.
    staging: Option<TempDir>,
}

impl OutputDir {
    /// Checks the target can be written and creates the staging directory
    /// beside it (same filesystem, so the final move is a rename).
    pub fn stage(target: &Path) -> Result<OutputDir, OutputError> {
        OutputDir::stage_apart_from(target, &[])
    }

    /// [`OutputDir::stage`] for a run that reads `inputs` (each with what
    /// it is): a target that holds one is refused ([`refuse_inputs`]).
    pub fn stage_apart_from(target: &Path, inputs: &[(PathBuf, String)]) -> Result<OutputDir, OutputError> {
        // A symbolic link is followed: the results replace the folder it
        // points to (the link stays), staged beside that folder so the
        // commit is still a rename on one filesystem.
        let resolved = resolve_links(target);
        let target = resolved.as_path();
        if target.exists() && !target.is_dir() {
            return Err(OutputError::NotADirectory(target.to_path_buf()));
        }
        // A file anywhere above the target (`/etc/passwd/x`) is named as such.
        if let Some(file) = target
            .ancestors()
            .skip(1)
            .find(|a| !a.as_os_str().is_empty() && a.symlink_metadata().is_ok() && !a.is_dir())
        {
            return Err(OutputError::UnderAFile { target: target.to_path_buf(), file: file.to_path_buf() });
        }
        // `.`, `..`, `/`, `` and `dir/.` cannot be renamed into place.
        if ends_in_dots(target) {
            return Err(OutputError::NoName(target.to_path_buf()));
        }
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| OutputError::NoName(target.to_path_buf()))?;
        refuse_inputs(target, inputs)?;
        if let Some(entry) = foreign_entry(target) {
            return Err(OutputError::NotOurs { target: target.to_path_buf(), entry });
        }
        // Anything in it is an earlier run's (foreign_entry would have said).
        let previous = fs::read_dir(target).is_ok_and(|mut d| d.next().is_some());
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|source| OutputError::Create { path: parent.clone(), source })?;
        remove_stale_staging(&parent, &name, target);
        let prefix = format!(".{name}.tmp-{}-", std::process::id());
        let mut registry = registry();
        let staging = tempfile::Builder::new().prefix(&prefix).tempdir_in(&parent).map_err(|source| {
            OutputError::Unwritable {
                target: target.to_path_buf(),
                // The random part is tempfile's; the cause names the path tried.
                staging: parent.join(format!("{prefix}*")),
                source,
            }
        })?;
        registry.push((staging.path().to_path_buf(), previous));
        Ok(OutputDir { target: target.to_path_buf(), previous, staging: Some(staging) })
    }

    fn staging(&self) -> &Path {
        self.staging.as_ref().expect("staging lives until commit").path()
    }

    /// Where a file of this run is staged.
    pub fn path(&self, file: &str) -> PathBuf {
        self.staging().join(file)
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the target held an earlier run's results when staging began.
    pub fn has_previous(&self) -> bool {
        self.previous
    }

    pub fn write(&self, file: &str, bytes: impl AsRef<[u8]>) -> Result<(), OutputError> {
        let path = self.path(file);
        // Under the lock: creating sub-folders must not bring back a staging
        // directory that abandon_all_staging removed.
        let registry = registry();
        if !registry.iter().any(|(p, _)| p == self.staging()) {
            return Err(OutputError::Write { path, source: abandoned() });
        }
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)
                .map_err(|source| OutputError::Create { path: dir.to_path_buf(), source })?;
        }
        fs::write(&path, bytes).map_err(|source| OutputError::Write { path, source })
    }

    /// Replaces the target with the staged results: the old directory is
    /// moved aside, the new one renamed into place, then the old one removed.
    /// All of it holds the registry lock, so [`abandon_all_staging`] comes
    /// either before (staging removed, target untouched) or after.
    pub fn commit(mut self) -> Result<PathBuf, OutputError> {
        let err = |source| OutputError::Commit { path: self.target.clone(), source };
        let mut registry = registry();
        let staging = self.staging();
        let Some(index) = registry.iter().position(|(p, _)| p == staging) else {
            return Err(err(abandoned()));
        };
        let aside = staging
            .with_file_name(format!("{}.old", staging.file_name().unwrap_or_default().to_string_lossy()));
        let had_old = self.target.exists();
        if had_old {
            fs::rename(&self.target, &aside).map_err(err)?;
        }
        if let Err(e) = fs::rename(staging, &self.target) {
            if had_old {
                let _ = fs::rename(&aside, &self.target);
            }
            return Err(err(e));
        }
        // The staging directory is the target now: tempfile must not remove it.
        registry.swap_remove(index);
        if let Some(dir) = self.staging.take() {
            let _ = dir.keep();
        }
        if had_old {
            let _ = fs::remove_dir_all(&aside);
        }
        Ok(self.target.clone())
    }
}

impl Drop for OutputDir {
    /// Removes the staging directory (tempfile does) and unregisters it, under
    /// the lock so that a signal cannot exit the process halfway through.
    fn drop(&mut self) {
        if let Some(dir) = self.staging.take() {
            let mut registry = registry();
            registry.retain(|(p, _)| p != dir.path());
            drop(dir);
        }
    }
}

/// Refuses a `target` that is or holds one of the run's `inputs` (each a
/// file it reads, with what it is: "the trace of `traffic[0]`"): the run
/// replaces the target whole and would delete it. Links are followed both
/// ways: an input whose real file is in the target is refused, and so is a
/// link in the target that names an input elsewhere.
fn refuse_inputs(target: &Path, inputs: &[(PathBuf, String)]) -> Result<(), OutputError> {
    let Ok(folder) = target.canonicalize() else { return Ok(()) }; // not there yet
    for (input, what) in inputs {
        // Where the input is named (its folder resolved) and where it lies.
        let named = match (input.parent(), input.file_name()) {
            (Some(p), Some(name)) => {
                let parent = if p.as_os_str().is_empty() { Path::new(".") } else { p };
                parent.canonicalize().ok().map(|p| p.join(name))
            }
            _ => None,
        };
        let real = input.canonicalize().ok();
        if [named, real].into_iter().flatten().any(|p| p.starts_with(&folder)) {
            return Err(OutputError::HoldsInput {
                target: target.to_path_buf(),
                input: input.clone(),
                what: what.clone(),
            });
        }
    }
    Ok(())
}

/// `target` with its last component followed while it is a symbolic link
/// (relative links from the link's folder), up to 40 links, as the system
/// does; `target` itself when it is no link.
fn resolve_links(target: &Path) -> PathBuf {
    let mut path = target.to_path_buf();
    for _ in 0..40 {
        if !path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            break;
        }
        let Ok(dest) = fs::read_link(&path) else { break };
        path = match path.parent() {
            Some(parent) if dest.is_relative() => parent.join(dest),
            _ => dest,
        };
    }
    path
}

/// Whether the last component of `path` as written is `.` or `..`
/// (`out/.`, `sub/..`, `out/./`): `Path` drops a `.` at the end, so
/// `out/.` would seem to name `out`, and renaming into it fails only after
/// the whole run.
fn ends_in_dots(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let trimmed = text.trim_end_matches(std::path::is_separator);
    let last = trimmed.rsplit(std::path::is_separator).next().unwrap_or("");
    matches!(last, "." | "..")
}

/// The names (without extension) of every file a run may write: its
/// tables, charts and report. The test that regenerates every shipped
/// scenario's output checks that each file it finds is named here.
const RUN_FILES: &[&str] = &[
    "report",
    "summary",
    "timeline",
    "decisions",
    "admission_curve",
    "nodes",
    "error_vs_slots",
    "load_sweep",
    "retry_policies",
    "nodes_sweep",
    "rtt_sweep",
    "sync_sweep",
    "window_count",
    "nodes_timeline",
    "burst_pair_map",
    "which_limiter",
    "retry_timeline",
    "time_to_success",
    "shaping_timeline",
    "delay_cdf",
    "windows_diagram",
];

/// Whether a run may write a file of this name: one of [`RUN_FILES`] as
/// `.csv`, `.md`, `.svg` or `.png`, directly in its output folder.
pub fn is_run_file(name: &str) -> bool {
    let path = Path::new(name);
    path.parent() == Some(Path::new(""))
        && path.extension().and_then(|e| e.to_str()).is_some_and(|e| ["csv", "md", "svg", "png"].contains(&e))
        && path.file_stem().and_then(|s| s.to_str()).is_some_and(|s| RUN_FILES.contains(&s))
}

/// What in an existing, non-empty `target` shows that no run wrote it, so
/// replacing it would lose someone's files: anything but the files a run
/// writes ([`is_run_file`]), or no `report.md`, which every run writes.
/// `None` for a folder a run wrote, an empty one, or none.
fn foreign_entry(target: &Path) -> Option<PathBuf> {
    let entries = fs::read_dir(target).ok()?;
    let mut any = None;
    let mut report = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = entry.file_type().is_ok_and(|t| t.is_file()) && name.to_str().is_some_and(is_run_file);
        if !ours {
            return Some(entry.path());
        }
        report |= name == "report.md";
        any.get_or_insert_with(|| entry.path());
    }
    if report { None } else { any }
}

/// Removes `.<name>.tmp-<pid>-<random>` directories left by runs that were
/// killed, when `/proc` shows their process is gone (`.<name>.tmp-<pid>`, the
/// name older versions used, too). A `.<name>.tmp-<pid>-<random>.old` is the
/// previous results of a run killed between the two renames of its commit:
/// it is moved back into place if the target is missing, else removed.
fn remove_stale_staging(parent: &Path, name: &str, target: &Path) {
    if !Path::new("/proc/self").exists() {
        return; // no way to tell a live run from a dead one: leave them
    }
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else { continue };
        let staging = rest.strip_suffix(".old").unwrap_or(rest);
        let pid = staging.split_once('-').map_or(staging, |(pid, _random)| pid);
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if pid != std::process::id().to_string() && !Path::new("/proc").join(pid).exists() {
            if rest.ends_with(".old") && !target.exists() {
                let _ = fs::rename(entry.path(), target);
            } else {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("report.md"), "old").unwrap();
        fs::write(target.join("summary.csv"), "old").unwrap();

        let staged = OutputDir::stage(&target).unwrap();
        staged.write("new.txt", "new").unwrap();
        drop(staged); // a failed run: nothing changes
        assert_eq!(fs::read_to_string(target.join("report.md")).unwrap(), "old");
        assert!(!target.join("new.txt").exists());
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1, "staging removed");

        let staged = OutputDir::stage(&target).unwrap();
        staged.write("new.txt", "new").unwrap();
        staged.commit().unwrap();
        assert!(!target.join("summary.csv").exists());
        assert_eq!(fs::read_to_string(target.join("new.txt")).unwrap(), "new");
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1);
    }

    /// Only a folder a run wrote (its tables, charts and report.md), an
    /// empty one or none may be replaced.
    #[test]
    fn only_a_runs_own_folder_is_replaced() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        assert_eq!(foreign_entry(&target), None);
        fs::create_dir(&target).unwrap();
        assert_eq!(foreign_entry(&target), None);
        fs::write(target.join("summary.csv"), "").unwrap();
        assert_eq!(foreign_entry(&target), Some(target.join("summary.csv")), "no report.md");
        fs::write(target.join("report.md"), "").unwrap();
        fs::write(target.join("timeline.png"), "").unwrap();
        assert_eq!(foreign_entry(&target), None);
        fs::write(target.join("notes.txt"), "").unwrap();
        assert_eq!(foreign_entry(&target), Some(target.join("notes.txt")));
        fs::remove_file(target.join("notes.txt")).unwrap();
        // A file of the user's own in an earlier run's folder, though it has
        // an extension a run writes.
        fs::write(target.join("notes.md"), "").unwrap();
        assert_eq!(foreign_entry(&target), Some(target.join("notes.md")));
        fs::remove_file(target.join("notes.md")).unwrap();
        fs::create_dir(target.join("data.csv")).unwrap();
        assert_eq!(foreign_entry(&target), Some(target.join("data.csv")), "a folder, whatever its name");
    }

    /// A run never deletes what it reads: a folder that holds one of its
    /// inputs (or a link to one) is refused, whatever path names them.
    #[test]
    fn a_folder_holding_an_input_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("decisions.csv"), "time\n1\n").unwrap();
        fs::write(root.path().join("s.toml"), "").unwrap();
        let input = |p: PathBuf| vec![(p, "the trace of `traffic[0]`".to_string())];
        let e = refuse_inputs(&out, &input(out.join("decisions.csv"))).unwrap_err().to_string();
        assert!(e.contains("holds") && e.contains("decisions.csv, the trace of `traffic[0]`"), "{e}");
        // Named through `..`, or by the folder above the target.
        assert!(refuse_inputs(&out, &input(out.join("../out/decisions.csv"))).is_err());
        assert!(refuse_inputs(root.path(), &input(root.path().join("s.toml"))).is_err());
        // A sibling, or a target not there yet, is fine.
        assert!(refuse_inputs(&out, &input(root.path().join("s.toml"))).is_ok());
        assert!(refuse_inputs(&root.path().join("new"), &input(out.join("decisions.csv"))).is_ok());
        #[cfg(unix)]
        {
            // A link in the target to an input elsewhere, and a link to the
            // target whose input is inside.
            std::os::unix::fs::symlink(root.path().join("s.toml"), out.join("link.toml")).unwrap();
            assert!(refuse_inputs(&out, &input(out.join("link.toml"))).is_err());
            std::os::unix::fs::symlink("out", root.path().join("via")).unwrap();
            assert!(refuse_inputs(&root.path().join("via"), &input(out.join("decisions.csv"))).is_err());
        }
    }

    #[test]
    fn a_file_in_the_way_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        fs::write(&target, "x").unwrap();
        assert!(matches!(OutputDir::stage(&target), Err(OutputError::NotADirectory(_))));
    }

    #[test]
    fn a_last_component_of_dots_names_no_folder() {
        for dots in [".", "..", "out/.", "out/..", "out/./", "a/b/.//", "./."] {
            assert!(ends_in_dots(Path::new(dots)), "{dots}");
            assert!(matches!(OutputDir::stage(Path::new(dots)), Err(OutputError::NoName(_))), "{dots}");
        }
        for name in ["out", "out/", "./out", "a/.b", "a/..b", "a/b.", "/"] {
            assert!(!ends_in_dots(Path::new(name)), "{name}");
        }
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;

    /// `--out link`, a symbolic link to a folder: the results go into the
    /// folder it points to, and the link stays a link.
    #[cfg(unix)]
    #[test]
    fn a_link_to_a_folder_is_followed() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        fs::create_dir(&real).unwrap();
        fs::write(real.join("report.md"), "old").unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink("real", &link).unwrap();
        // A link to the link, absolute this time.
        let link2 = root.path().join("link2");
        std::os::unix::fs::symlink(&link, &link2).unwrap();
        for (via, text) in [(&link, "new"), (&link2, "newer")] {
            let staged = OutputDir::stage(via).unwrap();
            assert_eq!(staged.staging().parent().unwrap(), root.path());
            staged.write("report.md", text).unwrap();
            assert_eq!(staged.commit().unwrap(), real);
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink(), "the link stays");
            assert_eq!(fs::read_to_string(real.join("report.md")).unwrap(), text);
            assert_eq!(fs::read_to_string(via.join("report.md")).unwrap(), text);
        }
        // Nothing else is left beside them.
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 3);
        // A link to a file is a file in the way; a dangling link is
        // followed to the folder it names, which the run creates.
        fs::write(root.path().join("f"), "x").unwrap();
        std::os::unix::fs::symlink("f", root.path().join("to_file")).unwrap();
        let e = OutputDir::stage(&root.path().join("to_file")).unwrap_err();
        assert!(matches!(e, OutputError::NotADirectory(_)), "{e}");
        std::os::unix::fs::symlink("later", root.path().join("dangling")).unwrap();
        let staged = OutputDir::stage(&root.path().join("dangling")).unwrap();
        staged.write("report.md", "x").unwrap();
        assert_eq!(staged.commit().unwrap(), root.path().join("later"));
        assert!(root.path().join("dangling/report.md").is_file());
    }

    #[test]
    fn a_file_above_the_target_is_named() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        fs::write(&file, "x").unwrap();
        let e = OutputDir::stage(&file.join("out")).unwrap_err().to_string();
        assert!(e.contains("is a file, not a directory") && e.contains(&*file.to_string_lossy()), "{e}");
    }

    #[test]
    fn staging_is_named_by_pid_with_a_random_suffix() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        let a = OutputDir::stage(&target).unwrap();
        let b = OutputDir::stage(&target).unwrap();
        let prefix = format!(".out.tmp-{}-", std::process::id());
        for s in [&a, &b] {
            let name = s.staging().file_name().unwrap().to_string_lossy().into_owned();
            let random = name.strip_prefix(&prefix).unwrap_or_else(|| panic!("{name}"));
            assert!(!random.is_empty() && random.bytes().all(|c| c.is_ascii_alphanumeric()), "{name}");
            assert_eq!(s.staging().parent().unwrap(), root.path());
        }
        // Two stagings of one target in one process do not clash.
        assert_ne!(a.staging(), b.staging());
        a.write("f", "a").unwrap();
        b.write("f", "b").unwrap();
        assert_eq!(fs::read_to_string(a.path("f")).unwrap(), "a");
        drop(a);
        drop(b);
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn stale_staging_of_dead_runs_is_removed_live_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        // No live process has pid 4294967295; pid 1 is always alive.
        let dead = root.path().join(".out.tmp-4294967295-Ab3xYz");
        let dead_old = root.path().join(".out.tmp-4294967295-Qw9rTy.old");
        let dead_legacy = root.path().join(".out.tmp-4294967295"); // before tempfile
        let live = root.path().join(".out.tmp-1-Ab3xYz");
        let live_legacy = root.path().join(".out.tmp-1");
        let other = root.path().join(".other.tmp-4294967295-Ab3xYz");
        let not_a_pid = root.path().join(".out.tmp-x4294967295-Ab3xYz");
        for d in [&dead, &dead_old, &dead_legacy, &live, &live_legacy, &other, &not_a_pid] {
            fs::create_dir(d).unwrap();
        }
        let staged = OutputDir::stage(&target).unwrap();
        assert!(!dead.exists() && !dead_old.exists() && !dead_legacy.exists());
        assert!(live.exists() && live_legacy.exists() && other.exists() && not_a_pid.exists());
        drop(staged);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn results_moved_aside_by_a_killed_commit_are_restored() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        let old = root.path().join(".out.tmp-4294967295-Qw9rTy.old");
        fs::create_dir(&old).unwrap();
        fs::write(old.join("summary.csv"), "previous").unwrap();
        let staged = OutputDir::stage(&target).unwrap();
        assert_eq!(fs::read_to_string(target.join("summary.csv")).unwrap(), "previous");
        assert!(!old.exists());
        drop(staged);
        assert_eq!(fs::read_to_string(target.join("summary.csv")).unwrap(), "previous");
    }
}
