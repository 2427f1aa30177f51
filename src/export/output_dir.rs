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

/// What `path`, which is no folder, is, in words: "a file", "a device"
/// (`--out /dev/null`), "a named pipe", "a socket", or a link that leads
/// nowhere.
fn not_a_folder(path: &Path) -> &'static str {
    if fs::metadata(path).is_err() && path.symlink_metadata().is_ok() {
        return "a symbolic link that leads to no folder";
    }
    #[cfg(unix)]
    if let Ok(m) = fs::metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        let t = m.file_type();
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a file"
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output path {} is {}, not a directory", .0.display(), not_a_folder(.0))]
    NotADirectory(PathBuf),
    #[error(
        "output path {} is a symbolic link that never reaches a folder (a loop of links): give a folder, or fix the link",
        .0.display()
    )]
    LinkLoop(PathBuf),
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
    #[error("cannot write output to {target}: {} is {}, not a directory", file.display(), not_a_folder(file))]
    UnderAFile { target: PathBuf, file: PathBuf },
    #[error(
        "output folder {target} is a mount point (a filesystem or a folder is mounted there): a run replaces its output \
folder by renaming a new one into its place, which cannot be done to a mount point; give a folder inside it, like {}",
        target.join("run1").display()
    )]
    MountPoint { target: PathBuf },
    #[error("cannot write output to {target}: creating {staging} beside it failed")]
    Unwritable {
        target: PathBuf,
        staging: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The target is an earlier run's folder this user may not change: the
    /// commit could move it aside but never remove its files, which would
    /// stay behind in a hidden folder.
    #[error(
        "cannot replace output folder {}: this user cannot remove its files, so a run would leave the earlier results behind in a hidden folder; give another --out, or make it writable",
        target.display()
    )]
    NotWritable {
        target: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The new results are in place, but the previous ones, moved aside,
    /// could not be removed.
    #[error(
        "the results are in {}, but the previous results, moved aside to {}, could not be removed: remove that folder by hand",
        target.display(), aside.display()
    )]
    LeftAside {
        target: PathBuf,
        aside: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create output directory {path}")]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of the run could not be written: `path` is where it would
    /// have been once committed (it was being written to the staging folder
    /// beside it, on the same filesystem).
    #[error(
        "cannot write {path}; {}",
        if *kept { "previous results were kept" } else { "nothing was written" }
    )]
    Write {
        path: PathBuf,
        /// The target holds an earlier run's results, untouched.
        kept: bool,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot move results into {path}")]
    Commit {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The commit moved the previous results aside, could not move the new
    /// ones into place, and could not move the previous ones back either.
    #[error(
        "cannot move results into {path}, and the previous results could not be moved back ({restore}): they are \
in {}; move that folder back to {path} by hand (the next run into {path} also does)",
        aside.display()
    )]
    Stranded {
        path: PathBuf,
        aside: PathBuf,
        restore: std::io::Error,
        #[source]
        source: std::io::Error,
    },
}

/// The staging directories of this process not yet committed or dropped,
/// each with whether its target held an earlier run's results. Staging,
/// writing, committing and dropping hold the lock while they touch the
/// directory, so [`abandon_all_staging`] never runs in the middle of one.
static STAGING: Mutex<Vec<(PathBuf, bool, Vec<PathBuf>)>> = Mutex::new(Vec::new());

/// Whether any output of this process was committed (for what a Ctrl-C
/// after it says). Set under the registry lock.
static COMMITTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn registry() -> MutexGuard<'static, Vec<(PathBuf, bool, Vec<PathBuf>)>> {
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
    _registry: MutexGuard<'static, Vec<(PathBuf, bool, Vec<PathBuf>)>>,
    removed: usize,
    kept: usize,
    committed: bool,
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

    /// Whether an output of this process was committed before: its results
    /// are in place (a Ctrl-C while the summary is printed).
    pub fn committed(&self) -> bool {
        self.committed
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
    for (dir, previous, made) in registry.drain(..) {
        // A file being created in it (a PNG written by path) can make one
        // pass fail with "directory not empty"; a few more finish the job.
        for _ in 0..10 {
            match fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => continue,
                _ => break,
            }
        }
        remove_made(&made);
        removed += 1;
        kept += usize::from(previous);
    }
    let committed = COMMITTED.load(std::sync::atomic::Ordering::SeqCst);
    Abandoned { _registry: registry, removed, kept, committed }
}

/// The error of an `OutputDir` used after [`abandon_all_staging`] removed it.
fn abandoned() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the run was interrupted and its staging folder removed")
}

/// A staging directory for one run's outputs.
#[derive(Debug)]
pub struct OutputDir {
    /// The target as given (a link in its last component followed): what
    /// messages and the caller see.
    target: PathBuf,
    /// The same folder as an absolute path with no `.` or `..`, its parent's
    /// links resolved ([`real_path`]): what the commit renames. The staging
    /// folder is beside it, so neither path goes through the target, which
    /// the commit moves.
    real: PathBuf,
    /// The target held an earlier run's results when staging began (a
    /// failed run keeps them).
    previous: bool,
    /// The staging directory, removed when dropped; `None` once committed.
    staging: Option<TempDir>,
    /// Folders above the target that staging created, deepest first:
    /// removed with the staging folder, when empty.
    made: Vec<PathBuf>,
}

/// Removes the folders a run created above its target (`made`, deepest
/// first) while they are empty: a failed run leaves none behind.
fn remove_made(made: &[PathBuf]) {
    for folder in made {
        if fs::remove_dir(folder).is_err() {
            break;
        }
    }
}

impl OutputDir {
    /// Checks the target can be written and creates the staging directory
    /// beside it (same filesystem, so the final move is a rename).
    pub fn stage(target: &Path) -> Result<OutputDir, OutputError> {
        OutputDir::stage_apart_from(target, &[])
    }

    /// [`OutputDir::stage`] for a run that reads `inputs` (each with what
    /// it is): a target that holds one is refused (`refuse_inputs`).
    pub fn stage_apart_from(target: &Path, inputs: &[(PathBuf, String)]) -> Result<OutputDir, OutputError> {
        // A symbolic link is followed: the results replace the folder it
        // points to (the link stays), staged beside that folder so the
        // commit is still a rename on one filesystem.
        let resolved = resolve_links(target)?;
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
        // `--out real/../real`, or `--out ../real` from inside `real`: the
        // commit moves the target aside, after which a path through it no
        // longer leads anywhere. Every path the commit uses is made from the
        // real parent instead.
        let real =
            real_path(target).map_err(|source| OutputError::Create { path: target.to_path_buf(), source })?;
        let parent =
            real.parent().expect("an absolute path with a last component has a parent").to_path_buf();
        if real.is_dir() && is_mount_point(&real) {
            return Err(OutputError::MountPoint { target: target.to_path_buf() });
        }
        refuse_inputs(target, inputs)?;
        if let Some(entry) = foreign_entry(target) {
            return Err(OutputError::NotOurs { target: target.to_path_buf(), entry });
        }
        // Anything in it is an earlier run's (foreign_entry would have said).
        let previous = fs::read_dir(&real).is_ok_and(|mut d| d.next().is_some());
        // The commit removes the earlier run's files: a folder this user may
        // not write is refused now (its parent may still let the commit move
        // it, and its files would then stay behind, aside).
        if real.is_dir() {
            tempfile::tempfile_in(&real)
                .map_err(|source| OutputError::NotWritable { target: target.to_path_buf(), source })?;
        }
        // The folders above the target this run creates, deepest first: a
        // run that fails or is interrupted removes them again (when empty).
        let made: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && a.symlink_metadata().is_err())
            .map(Path::to_path_buf)
            .collect();
        fs::create_dir_all(&parent).map_err(|source| {
            remove_made(&made);
            OutputError::Create { path: parent.clone(), source }
        })?;
        remove_stale_staging(&parent, &name, &real);
        let prefix = format!(".{name}.tmp-{}-", std::process::id());
        let mut registry = registry();
        let staging = tempfile::Builder::new().prefix(&prefix).tempdir_in(&parent).map_err(|source| {
            remove_made(&made);
            OutputError::Unwritable {
                target: target.to_path_buf(),
                // The random part is tempfile's; the cause names the path tried.
                staging: parent.join(format!("{prefix}*")),
                source,
            }
        })?;
        registry.push((staging.path().to_path_buf(), previous, made.clone()));
        Ok(OutputDir { target: target.to_path_buf(), real, previous, staging: Some(staging), made })
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

    /// Where a file of this run will be once committed: what errors about
    /// it name (the staging folder is gone by the time the user reads them).
    pub fn final_path(&self, file: &str) -> PathBuf {
        self.target.join(file)
    }

    /// The error for a file of this run that could not be written.
    pub fn write_error(&self, file: &str, source: io::Error) -> OutputError {
        OutputError::Write { path: self.final_path(file), kept: self.previous, source }
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
        if !registry.iter().any(|(p, _, _)| p == self.staging()) {
            return Err(self.write_error(file, abandoned()));
        }
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|source| self.write_error(file, source))?;
        }
        fs::write(&path, bytes).map_err(|source| self.write_error(file, source))
    }

    /// Replaces the target with the staged results: the old directory is
    /// moved aside, the new one renamed into place, then the old one removed.
    /// All of it holds the registry lock, so [`abandon_all_staging`] comes
    /// either before (staging removed, target untouched) or after.
    pub fn commit(mut self) -> Result<PathBuf, OutputError> {
        let err = |source| OutputError::Commit { path: self.target.clone(), source };
        let mut registry = registry();
        let staging = self.staging();
        let Some(index) = registry.iter().position(|(p, _, _)| p == staging) else {
            return Err(err(abandoned()));
        };
        // Both beside the real target, by paths that do not go through it.
        let aside = staging
            .with_file_name(format!("{}.old", staging.file_name().unwrap_or_default().to_string_lossy()));
        let had_old = self.real.symlink_metadata().is_ok();
        // The new folder keeps the old one's permissions and, where this user
        // may set it, its owner: a folder made private stays private.
        if let Ok(old) = fs::metadata(&self.real) {
            fs::set_permissions(staging, old.permissions()).map_err(err)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                let _ = std::os::unix::fs::chown(staging, Some(old.uid()), Some(old.gid()));
            }
        }
        swap_into_place(staging, &self.real, had_old.then_some(aside.as_path()), &|from, to| {
            fs::rename(from, to)
        })
        .map_err(|e| match e {
            (source, None) => err(source),
            // Never silently: the previous results are only in `aside` now.
            (source, Some(restore)) => {
                OutputError::Stranded { path: self.target.clone(), aside: aside.clone(), restore, source }
            }
        })?;
        // The staging directory is the target now: tempfile must not remove it.
        registry.swap_remove(index);
        COMMITTED.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(dir) = self.staging.take() {
            let _ = dir.keep();
        }
        if had_old {
            fs::remove_dir_all(&aside).map_err(|source| OutputError::LeftAside {
                target: self.target.clone(),
                aside: aside.clone(),
                source,
            })?;
        }
        Ok(self.target.clone())
    }
}

/// Renames `staging` to `target`, moving the `target` there was aside to
/// `aside` first (`None`: there is none). On failure the old target is
/// moved back; the error is the failed rename's, with the error of moving
/// it back when that failed too (the old target is then in `aside`).
fn swap_into_place(
    staging: &Path,
    target: &Path,
    aside: Option<&Path>,
    rename: &dyn Fn(&Path, &Path) -> io::Result<()>,
) -> Result<(), (io::Error, Option<io::Error>)> {
    if let Some(aside) = aside {
        rename(target, aside).map_err(|e| (e, None))?;
    }
    rename(staging, target).map_err(|e| match aside.map(|aside| rename(aside, target)) {
        Some(Err(restore)) => (e, Some(restore)),
        _ => (e, None),
    })
}

impl Drop for OutputDir {
    /// Removes the staging directory (tempfile does) and unregisters it, under
    /// the lock so that a signal cannot exit the process halfway through.
    fn drop(&mut self) {
        if let Some(dir) = self.staging.take() {
            let mut registry = registry();
            registry.retain(|(p, _, _)| p != dir.path());
            drop(dir);
            remove_made(&self.made);
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
        // An input directly in the target is named as given; one deeper
        // down by where it lies in the target, under the target's own name
        // (`--out /tmp` from `/tmp/rw/o` holds `/tmp/rw/o/s.toml`, not an
        // `s.toml` that seems to be in /tmp).
        let inside = [named, real]
            .into_iter()
            .flatten()
            .find_map(|p| p.strip_prefix(&folder).ok().map(Path::to_path_buf));
        if let Some(rest) = inside {
            let shown = if rest.components().count() > 1 { target.join(rest) } else { input.clone() };
            return Err(OutputError::HoldsInput {
                target: target.to_path_buf(),
                input: shown,
                what: what.clone(),
            });
        }
    }
    Ok(())
}

/// `target` (not `.` or `..` at its end) as an absolute path with no `.` or
/// `..` in it: its longest existing ancestor as the system resolves it
/// (links included), then the rest of it, which does not exist yet and so
/// holds no link, read lexically (`new/..` is the folder `new` is in, as
/// it would be once `new` was created). The target's own last component
/// is kept as it is: [`resolve_links`] has followed it if it was a link.
fn real_path(target: &Path) -> io::Result<PathBuf> {
    let name =
        target.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no folder name"))?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let absolute = std::path::absolute(parent)?;
    let parts: Vec<std::path::Component> = absolute.components().collect();
    // The root always resolves, so some prefix does.
    let (mut real, rest) = (0..=parts.len())
        .rev()
        .find_map(|k| {
            let prefix: PathBuf = parts[..k].iter().collect();
            let resolved = if prefix.as_os_str().is_empty() { None } else { prefix.canonicalize().ok() };
            resolved.map(|r| (r, &parts[k..]))
        })
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no folder above it exists"))?;
    for part in rest {
        match part {
            std::path::Component::ParentDir => {
                real.pop();
            }
            std::path::Component::Normal(n) => real.push(n),
            _ => {}
        }
    }
    real.push(name);
    Ok(real)
}

/// Whether the folder `dir` (an absolute path, links resolved) is a mount
/// point: on another device than its parent, or listed as one in
/// `/proc/self/mountinfo` (a bind mount of a folder of the same
/// filesystem). Renaming a mount point fails (`Device or resource busy`),
/// and only after the whole run.
fn is_mount_point(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(here), Some(Ok(above))) = (fs::metadata(dir), dir.parent().map(fs::metadata))
            && here.dev() != above.dev()
        {
            return true;
        }
    }
    let Ok(table) = fs::read_to_string("/proc/self/mountinfo") else { return false };
    mount_points(&table).any(|m| m == dir)
}

/// The mount points of a `/proc/self/mountinfo` table (its fifth field,
/// with the octal escapes `\040` of spaces, tabs, newlines and
/// backslashes undone).
fn mount_points(table: &str) -> impl Iterator<Item = PathBuf> + '_ {
    table.lines().filter_map(|line| {
        let field = line.split(' ').nth(4)?;
        let (bytes, mut out, mut i) = (field.as_bytes(), Vec::new(), 0);
        while i < bytes.len() {
            let code = bytes
                .get(i + 1..i + 4)
                .and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok());
            match (bytes[i], code) {
                (b'\\', Some(c)) => {
                    out.push(c);
                    i += 4;
                }
                (b, _) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
        }
        #[cfg(not(unix))]
        {
            Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
        }
    })
}

/// `target` with its last component followed while it is a symbolic link
/// (relative links from the link's folder), up to 40 links, as the system
/// does; `target` itself when it is no link. A link still after 40 is a
/// loop, refused (it was replaced by a folder).
fn resolve_links(target: &Path) -> Result<PathBuf, OutputError> {
    let mut path = target.to_path_buf();
    for hop in 0..=40 {
        if !path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            break;
        }
        if hop == 40 {
            // The 40 links the kernel follows, and a link still: a loop.
            return Err(OutputError::LinkLoop(target.to_path_buf()));
        }
        let Ok(dest) = fs::read_link(&path) else { break };
        path = match path.parent() {
            Some(parent) if dest.is_relative() => parent.join(dest),
            _ => dest,
        };
    }
    Ok(path)
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
    "seed_sweep",
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

/// Whether a run may write a file of this name: one of `RUN_FILES` as
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

#[cfg(test)]
mod path_tests {
    use super::*;

    /// `--out real/../real` (or `../real` from inside `real`) once lost the
    /// previous results: the commit moved `real` aside, after which the
    /// staging path, made through `real`, led nowhere; the rename failed
    /// and so did the silent restore. Every path is now made from the real
    /// parent.
    #[test]
    fn a_target_named_through_itself_is_replaced() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        fs::create_dir(&real).unwrap();
        fs::write(real.join("report.md"), "old").unwrap();
        let through = real.join("..").join("real");
        let staged = OutputDir::stage(&through).unwrap();
        assert_eq!(staged.staging().parent().unwrap(), root.path().canonicalize().unwrap());
        assert_eq!(staged.target(), through, "messages name the folder as given");
        staged.write("report.md", "new").unwrap();
        assert_eq!(staged.commit().unwrap(), through);
        assert_eq!(fs::read_to_string(real.join("report.md")).unwrap(), "new");
        let names: Vec<_> = fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["real"], "no staging or .old folder left");
    }

    /// With no `real` yet, `real/..` and `new/..` are where `real` and
    /// `new` would be: nothing is created for them (`create_dir_all` of
    /// `real/..` once created an empty `real`), before or after a failure.
    #[test]
    fn dots_through_folders_not_there_create_nothing() {
        let root = tempfile::tempdir().unwrap();
        for via in ["real/../real", "new/../real", "new/./x/../../real"] {
            let staged = OutputDir::stage(&root.path().join(via)).unwrap();
            assert_eq!(staged.real, root.path().canonicalize().unwrap().join("real"), "{via}");
            staged.write("report.md", "x").unwrap();
            drop(staged); // a failed run
            assert_eq!(fs::read_dir(root.path()).unwrap().count(), 0, "{via}: something was created");
        }
        let staged = OutputDir::stage(&root.path().join("new/../real")).unwrap();
        staged.write("report.md", "x").unwrap();
        staged.commit().unwrap();
        assert!(root.path().join("real/report.md").is_file());
        assert!(!root.path().join("new").exists());
    }

    #[test]
    fn real_path_resolves_the_parent_and_keeps_the_name() {
        let root = tempfile::tempdir().unwrap();
        let canon = root.path().canonicalize().unwrap();
        fs::create_dir(root.path().join("a")).unwrap();
        assert_eq!(real_path(&root.path().join("a/../b")).unwrap(), canon.join("b"));
        assert_eq!(real_path(&root.path().join("a/./b")).unwrap(), canon.join("a/b"));
        assert_eq!(real_path(&root.path().join("x/y/../../b")).unwrap(), canon.join("b"));
        #[cfg(unix)]
        {
            // A link in the parent is the system's to follow: `link/..` is
            // the folder above where the link points, not the link's folder.
            fs::create_dir_all(root.path().join("deep/er")).unwrap();
            std::os::unix::fs::symlink(root.path().join("deep/er"), root.path().join("a/link")).unwrap();
            assert_eq!(real_path(&root.path().join("a/link/../out")).unwrap(), canon.join("deep/out"));
        }
    }

    /// A commit whose second rename fails and whose restore fails too says
    /// where the previous results are; one whose restore works says only
    /// what failed.
    #[test]
    fn a_failed_restore_is_reported_with_where_the_results_are() {
        use std::cell::Cell;
        let counter = Cell::new(0);
        let calls = &counter;
        let failing_after = |ok: usize| {
            move |_: &Path, _: &Path| {
                calls.set(calls.get() + 1);
                if calls.get() <= ok { Ok(()) } else { Err(io::Error::from(io::ErrorKind::NotFound)) }
            }
        };
        let (staging, target, aside) = (Path::new("s"), Path::new("t"), Path::new("t.old"));
        let e = swap_into_place(staging, target, Some(aside), &failing_after(1)).unwrap_err();
        assert!(e.1.is_some(), "the failed restore is kept");
        calls.set(0);
        let ok_restore = |from: &Path, _: &Path| {
            calls.set(calls.get() + 1);
            if from == staging { Err(io::Error::from(io::ErrorKind::NotFound)) } else { Ok(()) }
        };
        let e = swap_into_place(staging, target, Some(aside), &ok_restore).unwrap_err();
        assert!(e.1.is_none());
        assert_eq!(calls.get(), 3, "moved aside, failed, moved back");
        let message = OutputError::Stranded {
            path: "out".into(),
            aside: "/x/.out.tmp-1-a.old".into(),
            restore: io::Error::from(io::ErrorKind::NotFound),
            source: io::Error::from(io::ErrorKind::NotFound),
        }
        .to_string();
        assert!(
            message.contains("they are in /x/.out.tmp-1-a.old; move that folder back to out"),
            "{message}"
        );
    }

    /// A folder that holds an input deeper down names it where it lies,
    /// by the target's own name (it once named the input as given, as if
    /// it were directly in the target).
    #[test]
    fn an_input_deep_in_the_target_is_named_where_it_lies() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("rw/o")).unwrap();
        fs::write(root.path().join("rw/o/s.toml"), "").unwrap();
        let input = vec![(root.path().join("rw/o/s.toml"), "the scenario file".to_string())];
        let e = refuse_inputs(root.path(), &input).unwrap_err().to_string();
        let shown = root.path().join("rw/o/s.toml");
        assert!(e.contains(&format!("holds {}, the scenario file", shown.display())), "{e}");
    }

    /// A file that cannot be written is named where it would be once
    /// committed, not in the staging folder, which is gone by then.
    #[test]
    fn a_write_error_names_the_final_path() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        let staged = OutputDir::stage(&target).unwrap();
        staged.write("sub", "a file where a folder is needed").unwrap();
        let e = staged.write("sub/x.csv", "x").unwrap_err();
        let message = e.to_string();
        assert_eq!(
            message,
            format!("cannot write {}; nothing was written", target.join("sub/x.csv").display())
        );
        let e = staged.write_error("decisions.csv", io::Error::from(io::ErrorKind::StorageFull)).to_string();
        assert!(e.starts_with(&format!("cannot write {}", target.join("decisions.csv").display())), "{e}");
    }

    #[test]
    fn mount_points_are_read_with_their_escapes() {
        let table = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                     40 22 8:1 /x /mnt/my\\040disk rw - ext4 /dev/sda1 rw\n\
                     41 22 8:1 /y /mnt/back\\134slash rw - ext4 /dev/sda1 rw\n";
        let points: Vec<PathBuf> = mount_points(table).collect();
        assert_eq!(points, [PathBuf::from("/proc"), "/mnt/my disk".into(), "/mnt/back\\slash".into()]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_mount_point_is_refused_before_anything_is_staged() {
        assert!(is_mount_point(Path::new("/proc")));
        let root = tempfile::tempdir().unwrap();
        assert!(!is_mount_point(&root.path().canonicalize().unwrap()));
        let e = OutputDir::stage(Path::new("/proc")).unwrap_err();
        assert!(matches!(e, OutputError::MountPoint { .. }), "{e}");
        assert!(e.to_string().contains("give a folder inside it, like /proc/run1"), "{e}");
    }
}
