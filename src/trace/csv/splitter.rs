//! The record splitter: the input cut into records and fields.
//!
//! Owns [`Input`] (the fast unquoted path, which finds LFs and commas eight
//! bytes at a time, and the hand-over to `csv_core` at the first quote),
//! its [`Buffer`] and the [`Fields`] of a record. Knows nothing of times or
//! keys: [`super::rules`] says what a row must hold.

use std::io::Read;

use super::lf_lines::LfLines;

/// Bytes asked of the input per read. The buffer only grows past this for a
/// line (or quoted record) longer than it.
pub(super) const BLOCK: usize = 1 << 18;

/// The most bytes one data record may hold: its fields' text and the
/// commas between them (a line's length, without quotes). A trace row is a
/// time and a few short fields; a stray quote makes one field of every
/// line up to the next quote, which without a bound read a whole 1.5 GB
/// file into memory. A longer record is refused ([`ReadError::TooLong`]),
/// on either path and wherever reads cut the input: as soon as what was
/// read of it passes the bound (so the reader holds at most about twice
/// this, and 8 bytes per field more for a record parsed by csv_core), or
/// at its end. (A time field of a million digits still fits, and is
/// refused as such.)
pub(super) const MAX_RECORD: usize = 4 << 20;

/// The same for the header, which may name 200 000 columns, or be the
/// whole of a 20 MB file of one line that is no trace: its error then
/// lists the first columns it found.
pub(super) const MAX_HEADER: usize = 32 << 20;

/// The UTF-8 byte order mark, skipped at the start of the input.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// `Buffer::quote` when no `"` has been seen.
const NO_QUOTE: usize = usize::MAX;

/// A field index for [`Input::next_line`] that no field has: no field wanted.
pub(super) const NO_FIELD: usize = usize::MAX;

/// The input cut into records exactly as the csv crate (default dialect,
/// `flexible`) cuts the output of [`LfLines`], each with the file line it
/// starts on. (The csv crate numbers a record after blank lines by the line
/// after the record before it; the test oracle corrects for that.)
///
/// Until the first `"`, every line is one record (an empty line is none) and
/// commas split it into fields: lines and fields are found eight bytes at a
/// time in a large buffer and handed out as ranges of it. From the line
/// holding the first `"` on (a record boundary, since no quote came before),
/// a `csv_core` parser reads the rest: quoting only changes anything after a
/// quote.
pub(super) struct Input<R> {
    buf: Buffer<R>,
    /// The line of the next byte: one plus the LFs consumed so far. A
    /// record's line is this at its first byte, after any blank lines.
    lines: u64,
    /// The parser, once a quote has been seen.
    general: Option<Box<General>>,
    /// The most bytes the next record may hold: [`MAX_HEADER`], then
    /// [`MAX_RECORD`].
    max_record: usize,
    /// The error of the last [`Line::TooLong`].
    too_long: Option<Box<TooLong>>,
}

struct Buffer<R> {
    src: LfLines<R>,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// The source said end of input.
    eof: bool,
    /// Anything asked of the source yet (the BOM is only looked for in the
    /// first read, as csv_core looks for it only in its first input).
    started: bool,
    /// Index in `buf` of the first `"` (at or after `pos` while the fast path
    /// runs), or [`NO_QUOTE`].
    quote: usize,
    /// The separator scan: `mask` marks (in the high bit of each byte) the
    /// LFs and commas not yet handed out in the eight bytes from `word`.
    word: usize,
    mask: u64,
}

struct General {
    core: csv_core::Reader,
    /// Whether `core` has had its first input (in which it would strip a
    /// BOM: the input's BOM, if any, is already skipped).
    started: bool,
    /// Whether `core` has had the LF that [`Input::next_general`] gives it
    /// at the end of the input.
    closed: bool,
    data: Vec<u8>,
    ends: Vec<usize>,
}

/// Why a record could not be read.
#[derive(Debug)]
pub(super) enum ReadError {
    Io(std::io::Error),
    /// The input ended inside a quoted field: the rest of the file after
    /// its opening quote would be that one field. The quote opened on
    /// `line`, at the start of field `field` (from 0) of its record.
    OpenQuote {
        line: u64,
        field: usize,
    },
    TooLong(TooLong),
}

/// A record longer than a record may be.
#[derive(Debug)]
pub(super) struct TooLong {
    /// The line it starts on.
    pub(super) line: u64,
    /// The field (from 0) it was reading when it passed the bound, or at
    /// its end the longest.
    pub(super) field: usize,
    /// The bound passed.
    pub(super) limit: usize,
    /// When that field runs over lines (it is quoted: a stray quote, most
    /// likely): the line its quote opened on, the line it reached, and
    /// whether it closed there.
    pub(super) quoted: Option<(u64, u64, bool)>,
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// A record: the line it starts on, its fields, and whether a quoted field
/// in it holds a line break (so that it covers more than one line).
pub(super) type Record<'a> = (u64, Fields<'a>, bool);

/// One line from the fast path.
pub(super) enum Line {
    Row(FastRow),
    End,
    /// The line at `pos` holds a quote: the general parser reads from here.
    Quote,
    Failed(std::io::Error),
    /// The line is longer than a record may be: [`Input::take_too_long`]
    /// says how. (Carried in the enum, the error made the compiler return
    /// every row through memory: +14 instructions a row, callgrind.)
    TooLong,
}

/// A record from the fast path: where its time and key fields are in the
/// buffer (`None`: the record has no such field) and how many fields it has.
pub(super) struct FastRow {
    pub(super) line: u64,
    /// The line, without its LF.
    start: usize,
    end: usize,
    pub(super) time: Option<(usize, usize)>,
    pub(super) key: Option<(usize, usize)>,
    pub(super) fields: usize,
}

/// The fields of one record.
pub(super) enum Fields<'a> {
    /// A line without quotes or its LF: fields are split at commas.
    Line(&'a [u8]),
    /// Parsed by csv_core: field `i` ends at `ends[i]` in `data`.
    Parsed { data: &'a [u8], ends: &'a [usize] },
}

impl<'a> Fields<'a> {
    pub(super) fn get(&self, i: usize) -> Option<&'a [u8]> {
        match *self {
            Fields::Line(line) => line.split(|&b| b == b',').nth(i),
            Fields::Parsed { data, ends } => {
                let end = *ends.get(i)?;
                let start = if i == 0 { 0 } else { ends[i - 1] };
                Some(&data[start..end])
            }
        }
    }

    pub(super) fn len(&self) -> usize {
        match *self {
            Fields::Line(line) => line.split(|&b| b == b',').count(),
            Fields::Parsed { ends, .. } => ends.len(),
        }
    }

    /// Every field, copied: in one pass (`get` for each would take time
    /// quadratic in the number of fields, minutes for a header of 200 000).
    pub(super) fn to_vecs(&self) -> Vec<Vec<u8>> {
        match *self {
            Fields::Line(line) => line.split(|&b| b == b',').map(<[u8]>::to_vec).collect(),
            Fields::Parsed { data, ends } => {
                let mut start = 0;
                ends.iter()
                    .map(|&end| {
                        let field = data[start..end].to_vec();
                        start = end;
                        field
                    })
                    .collect()
            }
        }
    }

    /// The line breaks in quoted fields before field `i`: how many lines
    /// after the record's first that field starts.
    pub(super) fn lines_before(&self, i: usize) -> u64 {
        match *self {
            Fields::Line(_) => 0,
            Fields::Parsed { data, ends } => {
                let start = if i == 0 { 0 } else { ends.get(i - 1).copied().unwrap_or(data.len()) };
                memchr::memchr_iter(b'\n', &data[..start]).count() as u64
            }
        }
    }
}

/// The error for a record of csv_core that starts on `line`, with `data`
/// (field `i` ending at `ends[i]`) past `limit` bytes: `ended`, the whole
/// record (named by its longest field), else what was read of it (named
/// by the field being read, after the last in `ends`).
#[cold]
fn too_long(line: u64, data: &[u8], ends: &[usize], limit: usize, ended: bool) -> ReadError {
    let field = if ended {
        let lengths = ends.iter().scan(0, |start, &end| Some(end - std::mem::replace(start, end)));
        lengths.enumerate().max_by_key(|&(i, len)| (len, std::cmp::Reverse(i))).map_or(0, |(i, _)| i)
    } else {
        ends.len()
    };
    let start = if field == 0 { 0 } else { ends[field - 1] };
    let end = ends.get(field).copied().unwrap_or(data.len());
    let before = memchr::memchr_iter(b'\n', &data[..start]).count() as u64;
    let inside = memchr::memchr_iter(b'\n', &data[start..end]).count() as u64;
    // Line breaks in the field: it is quoted, and runs on over lines.
    let quoted = (inside > 0).then(|| (line + before, line + before + inside, ended));
    ReadError::TooLong(TooLong { line, field, limit, quoted })
}

/// The error for a line of the fast path (`line[..]`, without its LF) past
/// `limit` bytes: `ended`, the whole line (named by its longest field),
/// else what was read of it, `fields` fields (named by the last).
#[cold]
#[inline(never)]
fn line_too_long(number: u64, line: &[u8], fields: usize, limit: usize, ended: bool) -> Box<TooLong> {
    let field = if ended {
        let lengths = line.split(|&b| b == b',').map(<[u8]>::len).enumerate();
        lengths.max_by_key(|&(i, len)| (len, std::cmp::Reverse(i))).map_or(0, |(i, _)| i)
    } else {
        fields
    };
    Box::new(TooLong { line: number, field, limit, quoted: None })
}

/// The high bit of each byte of `word` that equals `byte`.
#[inline(always)]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (u64::from(byte) * 0x0101_0101_0101_0101);
    // The high bit is set in every byte of `x` that is not zero; no carries
    // cross bytes.
    !(((x & LOW7) + LOW7) | x) & !LOW7
}

impl<R: Read> Buffer<R> {
    /// Moves the unconsumed bytes to the front (growing the buffer if they
    /// fill it) and reads more after them; sets `eof` at the end of input.
    /// Restarts the separator scan at `pos`.
    fn fill(&mut self) -> std::io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            if self.quote != NO_QUOTE {
                self.quote = self.quote.saturating_sub(self.pos);
            }
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            let len = (2 * self.buf.len()).max(BLOCK);
            self.buf.resize(len, 0);
        }
        let first = !std::mem::replace(&mut self.started, true);
        let read = self.src.read(&mut self.buf[self.end..]);
        let n = *read.as_ref().unwrap_or(&0);
        let new = self.end..self.end + n;
        if self.quote == NO_QUOTE
            && let Some(i) = memchr::memchr(b'"', &self.buf[new.clone()])
        {
            self.quote = new.start + i;
        }
        self.end = new.end;
        self.eof = n == 0 && read.is_ok();
        if first && self.buf[..n].starts_with(BOM) {
            self.pos = BOM.len();
            // csv_core strips the BOM from its first input and, when
            // nothing is left, takes the empty rest for the end of the input.
            self.eof = n == BOM.len();
        }
        self.rescan();
        read.map(|_| ())
    }

    /// Consumes the LFs at `pos` (reading more as needed) and says how many:
    /// the blank lines before a record, for the general path.
    fn skip_blank_lines(&mut self) -> std::io::Result<u64> {
        let mut skipped = 0;
        loop {
            if self.pos == self.end {
                if self.eof {
                    return Ok(skipped);
                }
                self.fill()?;
                continue;
            }
            if self.buf[self.pos] != b'\n' {
                return Ok(skipped);
            }
            self.pos += 1;
            skipped += 1;
        }
    }

    /// Restarts the separator scan at `pos`.
    fn rescan(&mut self) {
        self.word = self.pos;
        self.mask = self.separators(self.pos);
    }

    /// The LFs and commas in the eight bytes from `at` (those up to `end`).
    #[inline(always)]
    fn separators(&self, at: usize) -> u64 {
        let word = match self.buf.get(at..at + 8) {
            Some(w) if at + 8 <= self.end => u64::from_le_bytes(w.try_into().unwrap()),
            _ => {
                let mut w = [0u8; 8];
                let have = self.end.saturating_sub(at);
                w[..have].copy_from_slice(&self.buf[at..self.end]);
                u64::from_le_bytes(w)
            }
        };
        bytes_equal(word, b'\n') | bytes_equal(word, b',')
    }

    /// The next LF or comma at or after the scan's position, or `None` when
    /// there is none before `end`.
    #[inline(always)]
    fn next_separator(&mut self) -> Option<usize> {
        while self.mask == 0 {
            if self.word + 8 >= self.end {
                return None;
            }
            self.word += 8;
            self.mask = self.separators(self.word);
        }
        let at = self.word + (self.mask.trailing_zeros() / 8) as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

impl<R: Read> Input<R> {
    pub(super) fn new(src: R) -> Input<R> {
        Input {
            buf: Buffer {
                src: LfLines::new(src),
                buf: Vec::new(),
                pos: 0,
                end: 0,
                eof: false,
                started: false,
                quote: NO_QUOTE,
                word: 0,
                mask: 0,
            },
            lines: 1,
            general: None,
            max_record: MAX_HEADER,
            too_long: None,
        }
    }

    /// The error of the [`Line::TooLong`] just returned.
    #[cold]
    pub(super) fn take_too_long(&mut self) -> TooLong {
        *self.too_long.take().expect("a line too long says how")
    }

    /// Sets the most bytes a record may hold (tests use a small one).
    #[cfg(test)]
    pub(super) fn set_max_record(&mut self, bytes: usize) {
        self.max_record = bytes;
    }

    /// [`Input::new`] with every record read by csv_core, as if the input
    /// began with a quote.
    pub(super) fn general_only(src: R) -> Input<R> {
        let mut input = Input::new(src);
        input.buf.quote = 0;
        input
    }

    /// Whether the fast path still reads: no quote seen yet.
    #[inline(always)]
    pub(super) fn is_fast(&self) -> bool {
        self.general.is_none()
    }

    /// The bytes of a range from [`FastRow`], valid until the next read.
    #[inline(always)]
    pub(super) fn field(&self, range: Option<(usize, usize)>) -> Option<&[u8]> {
        // A match, not `Option::map`: LLVM stopped inlining `map` here once
        // the reader grew its record bound (callgrind: +30 instructions a row).
        match range {
            Some((a, b)) => Some(&self.buf.buf[a..b]),
            None => None,
        }
    }

    /// The fields of the first record (the header), none for an empty
    /// input, and the line it is on (1 unless blank lines come first).
    pub(super) fn header(&mut self) -> Result<(u64, Vec<Vec<u8>>), ReadError> {
        let header = match self.next_record()? {
            Some((line, fields, _)) => (line, fields.to_vecs()),
            None => (1, Vec::new()),
        };
        self.max_record = self.max_record.min(MAX_RECORD);
        Ok(header)
    }

    /// The next record of the fast path, with the ranges of fields
    /// `time_index` and `key_index` in it. Blank lines are skipped.
    ///
    /// Inlined into the source's `next`: out of line, the `Line` it returns
    /// goes through memory for every row (callgrind, 1M rows, five
    /// limiters, one thread: the reader 462M -> 427M instructions).
    #[inline(always)]
    pub(super) fn next_line(&mut self, time_index: usize, key_index: usize) -> Line {
        let b = &mut self.buf;
        'line: loop {
            let start = b.pos;
            let (mut field, mut index) = (start, 0);
            let (mut time, mut key) = (None, None);
            let end = loop {
                let Some(at) = b.next_separator() else {
                    if !b.eof {
                        if b.end - start > self.max_record {
                            self.too_long =
                                Some(line_too_long(self.lines, &[], index, self.max_record, false));
                            return Line::TooLong;
                        }
                        if let Err(e) = b.fill() {
                            return Line::Failed(e);
                        }
                        continue 'line;
                    }
                    if start == b.end {
                        return Line::End;
                    }
                    break b.end;
                };
                if index == time_index {
                    time = Some((field, at));
                }
                if index == key_index {
                    key = Some((field, at));
                }
                index += 1;
                field = at + 1;
                if b.buf[at] == b'\n' {
                    break at;
                }
            };
            if b.quote < end {
                b.pos = start;
                b.rescan();
                return Line::Quote;
            }
            if end - start > self.max_record {
                self.too_long =
                    Some(line_too_long(self.lines, &b.buf[start..end], index, self.max_record, true));
                return Line::TooLong;
            }
            if end == b.end {
                // The last line, without an LF: the field it ends.
                if index == time_index {
                    time = Some((field, end));
                }
                if index == key_index {
                    key = Some((field, end));
                }
                index += 1;
                b.pos = end;
                return Line::Row(FastRow { line: self.lines, start, end, time, key, fields: index });
            }
            b.pos = end + 1;
            let line = self.lines;
            self.lines += 1;
            if end == start {
                continue; // a blank line is no record, but counts as a line
            }
            return Line::Row(FastRow { line, start, end, time, key, fields: index });
        }
    }

    /// The next record, or `None` at the end of the input.
    pub(super) fn next_record(&mut self) -> Result<Option<Record<'_>>, ReadError> {
        if self.general.is_none() {
            match self.next_line(NO_FIELD, NO_FIELD) {
                Line::Row(row) => {
                    return Ok(Some((row.line, Fields::Line(&self.buf.buf[row.start..row.end]), false)));
                }
                Line::End => return Ok(None),
                Line::Failed(e) => return Err(e.into()),
                Line::TooLong => return Err(ReadError::TooLong(self.take_too_long())),
                Line::Quote => self.start_general(),
            }
        }
        self.next_general()
    }

    /// Hands the input, from `pos` on, to csv_core.
    #[cold]
    pub(super) fn start_general(&mut self) {
        let mut core = csv_core::Reader::new();
        core.set_line(self.lines);
        self.general = Some(Box::new(General {
            core,
            started: false,
            closed: false,
            data: vec![0; 1024],
            ends: vec![0; 32],
        }));
    }

    /// The next record from csv_core, read as `csv::Reader` reads one,
    /// except at the end of the input inside a quoted field: csv_core ends
    /// the record there, as if the quote had been closed, and so swallows
    /// every line after the quote into one field; that is an error here.
    #[cold]
    pub(super) fn next_general(&mut self) -> Result<Option<Record<'_>>, ReadError> {
        use csv_core::ReadRecordResult::*;
        let g = self.general.as_deref_mut().expect("the general parser is set up");
        let b = &mut self.buf;
        // csv_core skips blank lines before a record without a word: skip
        // them here, so that the record gets the line it starts on.
        self.lines += b.skip_blank_lines()?;
        g.core.set_line(self.lines);
        let line = self.lines;
        let (mut nout, mut nend) = (0, 0);
        loop {
            if b.pos == b.end && !b.eof {
                b.fill()?;
                continue;
            }
            let mut input = &b.buf[b.pos..b.end];
            // At the end of the input, csv_core is first given one LF of
            // ours: it ends a record as the end of the input would, is a
            // blank line between records, and is written out as data only
            // inside a quoted field, which is how an open quote is found
            // (csv_core says nothing of its state, and a clone of its
            // reader does not parse as the reader does).
            let closing = input.is_empty() && !g.closed;
            if closing {
                input = b"\n";
            }
            if !std::mem::replace(&mut g.started, true) {
                // Too short for csv_core to take it for a BOM.
                input = &input[..input.len().min(1)];
            }
            let (res, nin, o, e) = g.core.read_record(input, &mut g.data[nout..], &mut g.ends[nend..]);
            if closing {
                g.closed = nin == 1;
                if res == InputEmpty && o == 1 {
                    let start = if nend == 0 { 0 } else { g.ends[nend - 1] };
                    let breaks = memchr::memchr_iter(b'\n', &g.data[..start]).count() as u64;
                    return Err(ReadError::OpenQuote { line: line + breaks, field: nend });
                }
            } else {
                b.pos += nin;
            }
            nout += o;
            nend += e;
            // What was read of the record: its fields' text and a comma
            // after each field ended (none after the last, at its end).
            let ended = res == Record;
            if (ended || matches!(res, OutputFull | OutputEndsFull))
                && nout + nend - usize::from(ended && nend > 0) > self.max_record
            {
                return Err(too_long(line, &g.data[..nout], &g.ends[..nend], self.max_record, ended));
            }
            match res {
                InputEmpty => {}
                OutputFull => {
                    let len = 2 * g.data.len();
                    g.data.resize(len, 0);
                }
                OutputEndsFull => {
                    let len = 2 * g.ends.len();
                    g.ends.resize(len, 0);
                }
                Record => {
                    // Every LF csv_core took is counted: the record's own
                    // line end (ours at the end of the input) and the
                    // line breaks inside its quoted fields.
                    let multiline = g.core.line() > line + 1;
                    self.lines = g.core.line();
                    let fields = Fields::Parsed { data: &g.data[..nout], ends: &g.ends[..nend] };
                    return Ok(Some((line, fields, multiline)));
                }
                End => return Ok(None),
            }
        }
    }
}
