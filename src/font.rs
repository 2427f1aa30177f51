//! The chart font a run may name (`--font`, `[output] font`): read here,
//! once for both, so that a file is refused for the same reasons and in the
//! same words whichever way it was named (`docs/errors.md`, `o07`, `o08`,
//! `o11`, `o17`). The binary draws with the bytes; the scenario reads them
//! only to refuse a bad font before any work is done.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::scenario::FileProblem;
use crate::shown::plain;

/// The largest font file read: fonts for whole scripts run to tens of MB,
/// and the cap keeps a huge file (`/dev/zero` cannot get this far: it is no
/// regular file) from being read into memory.
pub const MAX_FONT_BYTES: u64 = 256 << 20;

/// What keeps a file from being the chart font.
#[derive(Debug, thiserror::Error)]
pub enum FontError {
    /// Missing, a folder, unreadable, or no regular file: a FIFO would
    /// block the run forever and a device may never end.
    #[error(
        "font file {} {problem}{}",
        plain(&path.display().to_string()),
        if matches!(problem, FileProblem::NotRegular) { ": give a TrueType or OpenType font file" } else { "" }
    )]
    File { path: PathBuf, problem: FileProblem },
    #[error("font file {} is larger than {} MiB, more than any font", plain(&path.display().to_string()), MAX_FONT_BYTES >> 20)]
    TooLarge { path: PathBuf },
    /// Read whole, but not TrueType/OpenType (what the charts' font loader
    /// refuses).
    #[error("{} is not a usable TrueType/OpenType font", plain(&path.display().to_string()))]
    NotAFont { path: PathBuf },
}

/// The bytes of the font file `path`, if it is one: a regular file of at
/// most [`MAX_FONT_BYTES`] that parses as TrueType/OpenType. A file that is
/// not regular is refused unopened.
pub fn read_font(path: &Path) -> Result<Vec<u8>, FontError> {
    let file_problem = |problem| FontError::File { path: path.to_path_buf(), problem };
    if let Some(problem) = FileProblem::of(path) {
        return Err(file_problem(problem));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FONT_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| file_problem(FileProblem::Unreadable(e)))?;
    if bytes.len() as u64 > MAX_FONT_BYTES {
        return Err(FontError::TooLarge { path: path.to_path_buf() });
    }
    match ab_glyph::FontRef::try_from_slice(&bytes) {
        Ok(_) => Ok(bytes),
        Err(_) => Err(FontError::NotAFont { path: path.to_path_buf() }),
    }
}

#[cfg(test)]
mod tests {
    use super::read_font;

    #[test]
    fn what_is_no_font_is_said_alike_for_both_ways_of_naming_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let shown = |name: &str| path(name).display().to_string();
        let e = read_font(&path("nope.ttf")).unwrap_err();
        assert_eq!(e.to_string(), format!("font file {} does not exist", shown("nope.ttf")));
        let e = read_font(dir.path()).unwrap_err();
        assert_eq!(e.to_string(), format!("font file {} is a directory, not a file", dir.path().display()));
        std::fs::write(path("good.ttf"), dejavu::sans::regular()).unwrap();
        assert_eq!(read_font(&path("good.ttf")).unwrap(), dejavu::sans::regular());
        std::fs::write(path("bad.ttf"), b"junk").unwrap();
        let e = read_font(&path("bad.ttf")).unwrap_err();
        assert_eq!(e.to_string(), format!("{} is not a usable TrueType/OpenType font", shown("bad.ttf")));
        if cfg!(unix) {
            let e = read_font(std::path::Path::new("/dev/null")).unwrap_err();
            assert_eq!(
                e.to_string(),
                "font file /dev/null is not a regular file (a device, pipe or socket): give a TrueType or OpenType font file"
            );
        }
    }
}
