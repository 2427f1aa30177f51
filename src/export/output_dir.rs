//! Staged output: files go to a temporary directory beside the target, which
//! replaces the target only when the run succeeded. A failed or interrupted
//! run leaves the previous results as they were.

use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output path {0} is a file, not a directory")]
    NotADirectory(PathBuf),
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

/// A staging directory for one run's outputs.
#[derive(Debug)]
pub struct OutputDir {
    target: PathBuf,
    staging: PathBuf,
    committed: bool,
}

impl OutputDir {
    /// Checks the target can be written and creates the staging directory
    /// beside it (same filesystem, so the final move is a rename).
    pub fn stage(target: &Path) -> Result<OutputDir, OutputError> {
        if target.is_file() {
            return Err(OutputError::NotADirectory(target.to_path_buf()));
        }
        let name =
            target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "output".into());
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|source| OutputError::Create { path: parent.clone(), source })?;
        let staging = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if staging.exists() {
            let _ = fs::remove_dir_all(&staging);
        }
        fs::create_dir(&staging).map_err(|source| OutputError::Create { path: staging.clone(), source })?;
        Ok(OutputDir { target: target.to_path_buf(), staging, committed: false })
    }

    /// Where a file of this run is staged.
    pub fn path(&self, file: &str) -> PathBuf {
        self.staging.join(file)
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    pub fn write(&self, file: &str, bytes: impl AsRef<[u8]>) -> Result<(), OutputError> {
        let path = self.path(file);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)
                .map_err(|source| OutputError::Create { path: dir.to_path_buf(), source })?;
        }
        fs::write(&path, bytes).map_err(|source| OutputError::Write { path, source })
    }

    /// Replaces the target with the staged results: the old directory is
    /// moved aside, the new one renamed into place, then the old one removed.
    pub fn commit(mut self) -> Result<PathBuf, OutputError> {
        let err = |source| OutputError::Commit { path: self.target.clone(), source };
        let aside = self.staging.with_file_name(format!(
            "{}.old",
            self.staging.file_name().unwrap_or_default().to_string_lossy()
        ));
        let had_old = self.target.exists();
        if had_old {
            fs::rename(&self.target, &aside).map_err(err)?;
        }
        if let Err(e) = fs::rename(&self.staging, &self.target) {
            if had_old {
                let _ = fs::rename(&aside, &self.target);
            }
            return Err(err(e));
        }
        self.committed = true;
        if had_old {
            let _ = fs::remove_dir_all(&aside);
        }
        Ok(self.target.clone())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staging);
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
        fs::write(target.join("old.txt"), "old").unwrap();

        let staged = OutputDir::stage(&target).unwrap();
        staged.write("new.txt", "new").unwrap();
        drop(staged); // a failed run: nothing changes
        assert_eq!(fs::read_to_string(target.join("old.txt")).unwrap(), "old");
        assert!(!target.join("new.txt").exists());
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1, "staging removed");

        let staged = OutputDir::stage(&target).unwrap();
        staged.write("new.txt", "new").unwrap();
        staged.commit().unwrap();
        assert!(!target.join("old.txt").exists());
        assert_eq!(fs::read_to_string(target.join("new.txt")).unwrap(), "new");
        assert_eq!(fs::read_dir(root.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_file_in_the_way_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        fs::write(&target, "x").unwrap();
        assert!(matches!(OutputDir::stage(&target), Err(OutputError::NotADirectory(_))));
    }
}
