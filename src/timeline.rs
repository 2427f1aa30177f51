//! Per-bin counts over time for every limiter.
//!
//! With a fixed bin width the bins are what the scenario asked for. Without
//! one, bins start at 1 ns and widen (1, 2, 10, 20, 100, 200 ... ns) whenever a
//! run would need more than [`AUTO_MAX_BINS`] (fewer for a run of more than
//! 5000 columns: [`max_bins`]), merging the bins already
//! filled, so a stream of unknown length still ends with at most a few thousand
//! bins of a round width.

use crate::time::Nanos;

/// The most bins an automatic width allows.
pub const AUTO_MAX_BINS: u64 = 2_000;
/// The most bins an explicit width may produce.
pub const MAX_BINS: u64 = 1_000_000;
/// The most cells (a bin of one limiter, or of one node of a limiter on
/// nodes) a run's timelines may hold together with an explicit `bin`:
/// 56 bytes each, about 560 MB, and its CSV about as large again.
pub const MAX_CELLS: u64 = 10_000_000;

/// The most bins an explicit `bin` may cut a run into when its timelines
/// hold `columns` columns (a limiter each, and a node each of every limiter
/// on nodes): [`MAX_BINS`], fewer past [`MAX_CELLS`].
pub fn max_bins(columns: u64) -> u64 {
    MAX_BINS.min(MAX_CELLS / columns.max(1)).max(1)
}

/// The most bars a chart of bins draws across its width: bars of 4 px or
/// more in a plot about 800 px wide. A timeline of more bins (2000 of 10 ms,
/// say) is drawn with its bins merged ([`Timeline::chart_factor`]); its CSV
/// keeps every bin.
pub const CHART_MAX_BINS: usize = 200;

/// The most bars a chart that keeps them a tenth of a window wide
/// ([`Timeline::boundary_bars`]) draws: bars of 2 px. Past it, narrower
/// bars blur into noise (120 s of 100 ms bins is 1200 bars in 800 px), so
/// the chart merges them like any other.
pub const CHART_MAX_NARROW_BINS: usize = 400;

/// One bin of one limiter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bin {
    pub offered: u64,
    pub admitted: u64,
    pub rejected: u64,
    /// The largest exact window count `(t - W, t]` reached inside the bin.
    pub window_peak: u64,
    /// Of the offered requests, the retries (when clients retry).
    pub retries: u64,
    /// Of the admitted requests, those delayed (by a shaping limiter).
    pub delayed: u64,
    /// Delayed requests that reached the backend in this bin.
    pub released: u64,
}

impl Bin {
    /// Requests that reached the backend in this bin: those admitted at
    /// once, and delayed ones released now.
    pub fn backend(&self) -> u64 {
        self.admitted - self.delayed + self.released
    }
}

impl Bin {
    /// Records one decision but leaves `offered` and `rejected` to
    /// [`Bin::close`] (the engine's loop knows how many arrived in the bin).
    #[inline(always)]
    pub fn record_admitted(&mut self, admitted: bool, window_count_after: u64) {
        self.admitted += u64::from(admitted);
        self.window_peak = self.window_peak.max(window_count_after);
    }

    /// Sets `offered` to the `arrivals` in the bin (recorded with
    /// [`Bin::record_admitted`]) and `rejected` to the rest of them.
    pub fn close(&mut self, arrivals: usize) {
        self.offered = arrivals as u64;
        self.rejected = self.offered - self.admitted;
    }

    fn merge(&mut self, other: &Bin) {
        self.offered += other.offered;
        self.admitted += other.admitted;
        self.rejected += other.rejected;
        self.window_peak = self.window_peak.max(other.window_peak);
        self.retries += other.retries;
        self.delayed += other.delayed;
        self.released += other.released;
    }
}

/// An explicit `output.bin` too fine for how far the run went (known only
/// when a trace, with no `duration`, reaches that far).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}`output.bin` = \"{}\" needs more than {max} bins to reach {until} s, {}{}; choose a wider `bin` (at least \"{}\" to reach it)",
    key_at.as_ref().map_or_else(String::new, |at| format!("{at}: ")),
    crate::time::format_duration(Nanos::new(*width)),
    if *reacting {
        "a time the run reached (with no `duration` it lasts until its last retry or closed client's request)"
    } else {
        "a time in the trace"
    },
    cells_note(*max, *columns),
    crate::time::format_duration(self.fitting_bin()),
)]
pub struct TooManyBins {
    pub width: u64,
    pub max: u64,
    /// The run's timeline columns, when they lower `max` below
    /// [`MAX_BINS`] (else 1).
    pub columns: u64,
    pub until: Nanos,
    /// Where the scenario sets `output.bin` (`file:line:column`), when the
    /// run knows it.
    pub key_at: Option<String>,
    /// Clients react (retries, closed clients' next requests): the run goes
    /// on past its last arrival, so `until` may be no time in the trace.
    pub reacting: bool,
}

impl TooManyBins {
    /// The narrowest of the widths automatic bins take (1, 2, 10, 20,
    /// 100 ... ns) that fits the run up to `until` in `max` bins.
    pub fn fitting_bin(&self) -> Nanos {
        let least = self.until.get() / self.max + 1;
        let mut width = 1;
        while width < least {
            width = next_width(width);
        }
        Nanos::new(width)
    }
}

/// Why a run's most bins are fewer than [`MAX_BINS`], if they are: " (the
/// timelines hold 50 columns, a limiter each and a node each of every
/// limiter on nodes, and at most 10000000 cells)".
pub fn cells_note(max: u64, columns: u64) -> String {
    if max < MAX_BINS {
        format!(
            " (the timelines hold {columns} columns, a limiter each and a node each of every limiter on nodes, and at most {MAX_CELLS} cells)"
        )
    } else {
        String::new()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    width: u64,
    auto: bool,
    /// The most bins an explicit width may make ([`max_bins`]), and the
    /// run's columns it was found for.
    max: u64,
    columns: u64,
    /// `cells[b * limiters + i]`: bin `b`, limiter `i` (bin-major, as
    /// written out), in one allocation: a new bin or a widening allocates
    /// nothing per bin.
    cells: Vec<Bin>,
    limiters: usize,
}

/// The bins of a [`Timeline`], each a row of one [`Bin`] per limiter:
/// `rows[b][i]`, `rows.len()`, `rows.iter()`.
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    cells: &'a [Bin],
    limiters: usize,
}

impl<'a> Rows<'a> {
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.limiters).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> std::slice::ChunksExact<'a, Bin> {
        self.cells.chunks_exact(self.limiters.max(1))
    }
}

impl std::ops::Index<usize> for Rows<'_> {
    type Output = [Bin];
    fn index(&self, b: usize) -> &[Bin] {
        &self.cells[b * self.limiters..(b + 1) * self.limiters]
    }
}

/// The next round width: 1, 2, 10, 20, 100, ... (each a multiple of the last).
fn next_width(w: u64) -> u64 {
    let mut decade = 1;
    while decade * 10 <= w {
        decade *= 10;
    }
    if w == decade { w * 2 } else { decade * 10 }
}

impl Timeline {
    pub fn new(width: Option<Nanos>, limiters: usize) -> Timeline {
        match width {
            Some(w) => Timeline {
                width: w.get().max(1),
                auto: false,
                max: MAX_BINS,
                columns: 1,
                cells: Vec::new(),
                limiters,
            },
            None => Timeline { width: 1, auto: true, max: MAX_BINS, columns: 1, cells: Vec::new(), limiters },
        }
    }

    /// Holds an explicit width to [`max_bins`] of the run's `columns`.
    pub fn in_run_of(mut self, columns: u64) -> Timeline {
        (self.max, self.columns) = (max_bins(columns), columns);
        self
    }

    /// Widens an automatic timeline up front when the run's end is known.
    pub fn reserve_until(&mut self, end: Nanos) -> Result<(), TooManyBins> {
        self.check_fits(end)
    }

    pub fn width(&self) -> Nanos {
        Nanos::new(self.width)
    }

    pub fn bins(&self) -> Rows<'_> {
        Rows { cells: &self.cells, limiters: self.limiters }
    }

    /// Bins so far.
    fn len(&self) -> usize {
        self.bins().len()
    }

    fn check_fits(&mut self, t: Nanos) -> Result<(), TooManyBins> {
        // An automatic width keeps to the cells too (fewer bins past 5000
        // columns).
        let max = if self.auto { AUTO_MAX_BINS.min(self.max) } else { self.max };
        while t.get() / self.width >= max {
            if !self.auto {
                return Err(TooManyBins {
                    width: self.width,
                    max,
                    columns: self.columns,
                    until: t,
                    key_at: None,
                    reacting: false,
                });
            }
            self.widen();
        }
        Ok(())
    }

    fn widen(&mut self) {
        let new = next_width(self.width);
        let factor = (new / self.width) as usize;
        let (rows, l) = (self.len(), self.limiters);
        // In place: new row `r` is old rows `r * factor ..` merged, all at
        // or after it, so no row is overwritten before it is read.
        let merged_rows = rows.div_ceil(factor);
        for r in 0..merged_rows {
            let first = r * factor;
            for i in 0..l {
                let mut m = self.cells[first * l + i];
                for k in first + 1..(first + factor).min(rows) {
                    m.merge(&self.cells[k * l + i]);
                }
                self.cells[r * l + i] = m;
            }
        }
        self.cells.truncate(merged_rows * l);
        self.width = new;
    }

    /// Makes sure the bin holding `t` exists and returns its index. New bins
    /// start with the window count each limiter carries into them, given by
    /// `carry(limiter, bin_start)`.
    #[inline]
    pub fn bin_for(
        &mut self,
        t: Nanos,
        mut carry: impl FnMut(usize, Nanos) -> u64,
    ) -> Result<usize, TooManyBins> {
        let idx = t.get() / self.width;
        if (idx as usize) < self.len() {
            return Ok(idx as usize);
        }
        self.check_fits(t)?;
        let idx = (t.get() / self.width) as usize;
        while self.len() <= idx {
            let start = Nanos::new(self.len() as u64 * self.width);
            for i in 0..self.limiters {
                self.cells.push(Bin { window_peak: carry(i, start), ..Bin::default() });
            }
        }
        Ok(idx)
    }

    /// Joins single-limiter timelines (as the engine's lanes keep them, all
    /// fed the same arrivals, so of one width and length) into one.
    pub fn from_columns(columns: Vec<Timeline>) -> Timeline {
        let width = columns.first().map_or(1, |c| c.width);
        let auto = columns.first().is_some_and(|c| c.auto);
        let (max, run_columns) = columns.first().map_or((MAX_BINS, 1), |c| (c.max, c.columns));
        let len = columns.iter().map(Timeline::len).max().unwrap_or(0);
        debug_assert!(columns.iter().all(|c| c.width == width && c.len() == len && c.limiters == 1));
        let cells = (0..len)
            .flat_map(|b| columns.iter().map(move |c| c.cells.get(b).copied().unwrap_or_default()))
            .collect();
        Timeline { width, auto, max, columns: run_columns, cells, limiters: columns.len() }
    }

    /// How many bins a chart merges into one bar: 1, 2, 5, 10, 20, 50 ...,
    /// the least that leaves at most [`CHART_MAX_BINS`] bars, but none that
    /// makes a bar wider than `widest` (when the bins are not already):
    /// a chart that must show something as short as a tenth of a window
    /// keeps bars that narrow.
    pub fn chart_factor(&self, widest: Option<Nanos>) -> usize {
        let bins = self.len();
        let mut f: usize = 1;
        while bins.div_ceil(f) > CHART_MAX_BINS {
            // 1, 2, 5, 10, 20, 50, ...: f times 2, 2.5, 2.
            let mut lead = f;
            while lead >= 10 {
                lead /= 10;
            }
            let next = if lead == 2 { f / 2 * 5 } else { f * 2 };
            if widest.is_some_and(|w| (next as u64).saturating_mul(self.width) > w.get()) {
                break;
            }
            f = next;
        }
        f
    }

    /// The widest bar a chart of retries may draw ([`Self::chart_factor`]):
    /// a tenth of `window` when the bins are that narrow, so that retries a
    /// header sends back together still stand out at window boundaries.
    /// `None` too when bars that narrow would be more than
    /// [`CHART_MAX_NARROW_BINS`]: too thin to see at all.
    pub fn boundary_bars(&self, window: Nanos) -> Option<Nanos> {
        let widest =
            (self.width.saturating_mul(10) <= window.get()).then(|| Nanos::new(window.get() / 10))?;
        (self.len().div_ceil(self.chart_factor(Some(widest))) <= CHART_MAX_NARROW_BINS).then_some(widest)
    }

    /// This timeline with every `factor` bins merged into one, from time 0
    /// (the last may cover fewer), for drawing: bins `factor` times wider.
    pub fn merged(&self, factor: usize) -> Timeline {
        let factor = factor.max(1);
        let (rows, l) = (self.len(), self.limiters);
        let mut cells = Vec::with_capacity(rows.div_ceil(factor) * l);
        for r in 0..rows.div_ceil(factor) {
            for i in 0..l {
                let mut m = Bin::default();
                for k in r * factor..((r + 1) * factor).min(rows) {
                    m.merge(&self.cells[k * l + i]);
                }
                cells.push(m);
            }
        }
        Timeline {
            width: self.width.saturating_mul(factor as u64),
            auto: self.auto,
            max: self.max,
            columns: self.columns,
            cells,
            limiters: l,
        }
    }

    /// Adds counts gathered elsewhere into a bin.
    pub fn add(&mut self, bin: usize, limiter: usize, counts: &Bin) {
        self.cells[bin * self.limiters + limiter].merge(counts);
    }

    /// Adds empty bins so the timeline covers `[0, end)`.
    pub fn extend_to(
        &mut self,
        end: Nanos,
        carry: impl FnMut(usize, Nanos) -> u64,
    ) -> Result<(), TooManyBins> {
        if end.get() == 0 {
            return Ok(());
        }
        self.bin_for(Nanos::new(end.get() - 1), carry).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bars a tenth of a 1 s window wide: kept while there are at most 400
    /// of them (20 s of 10 ms bins, 200 bars of 100 ms; 40 s, 400), not past
    /// that (40.01 s: 401; 120 s of 100 ms bins: 1200), nor when the bins
    /// are already wider.
    #[test]
    fn boundary_bars_stay_only_while_they_can_be_seen() {
        let ms = |m: u64| Nanos::from_millis(m);
        let bars = |bin: u64, run_ms: u64| {
            let mut tl = Timeline::new(Some(ms(bin)), 1);
            tl.extend_to(ms(run_ms), |_, _| 0).unwrap();
            tl.boundary_bars(ms(1000))
        };
        assert_eq!(bars(10, 20_000), Some(ms(100)));
        assert_eq!(bars(10, 40_000), Some(ms(100)));
        assert_eq!(bars(10, 40_010), None);
        assert_eq!(bars(100, 40_000), Some(ms(100)));
        assert_eq!(bars(100, 120_000), None);
        assert_eq!(bars(200, 1_000), None);
    }

    /// A timeline of 2000 bins of 10 ms is drawn as 200 bars of 100 ms; 300
    /// as 150 of 20 ms; 132 as they are. A chart that must keep bars within
    /// 100 ms merges no further, and the CSV's bins are untouched.
    #[test]
    fn charts_merge_bins_into_bars_wide_enough_to_see() {
        let ms = |m: u64| Nanos::from_millis(m);
        let mut tl = Timeline::new(Some(ms(10)), 2);
        for b in 0..2000u64 {
            let i = tl.bin_for(Nanos::new(b * 10_000_000), |_, _| 0).unwrap();
            tl.add(i, 0, &Bin { offered: 1, admitted: 1, ..Bin::default() });
            tl.add(i, 1, &Bin { offered: 1, rejected: 1, ..Bin::default() });
        }
        assert_eq!(tl.chart_factor(None), 10);
        let m = tl.merged(10);
        assert_eq!((m.width(), m.bins().len()), (ms(100), 200));
        assert_eq!(m.bins()[0][0], Bin { offered: 10, admitted: 10, ..Bin::default() });
        assert_eq!(m.bins()[199][1], Bin { offered: 10, rejected: 10, ..Bin::default() });
        assert_eq!(tl.bins().len(), 2000);
        assert_eq!(tl.chart_factor(Some(ms(50))), 5);
        assert_eq!(tl.chart_factor(Some(ms(5))), 1);
        for (bins, factor) in [(300, 2), (132, 1), (200, 1), (201, 2), (1353, 10), (600, 5), (5001, 50)] {
            let mut tl = Timeline::new(Some(ms(10)), 1);
            tl.extend_to(Nanos::new(bins * 10_000_000), |_, _| 0).unwrap();
            assert_eq!(tl.chart_factor(None), factor, "{bins} bins");
            let merged = tl.merged(factor).bins().len();
            assert!(merged <= CHART_MAX_BINS && merged == (bins as usize).div_ceil(factor), "{bins}");
        }
        // The last bar may cover fewer bins.
        let mut tl = Timeline::new(Some(ms(10)), 1);
        for b in 0..3u64 {
            let i = tl.bin_for(Nanos::new(b * 10_000_000), |_, _| 0).unwrap();
            tl.add(i, 0, &Bin { offered: 1, ..Bin::default() });
        }
        let offered: Vec<u64> = tl.merged(2).bins().iter().map(|r| r[0].offered).collect();
        assert_eq!(offered, [2, 1]);
    }

    #[test]
    fn widths_are_round_multiples() {
        let mut w = 1;
        let mut seen = vec![];
        for _ in 0..7 {
            seen.push(w);
            w = next_width(w);
        }
        assert_eq!(seen, [1, 2, 10, 20, 100, 200, 1000]);
    }

    #[test]
    fn auto_width_keeps_bins_few_and_merges_counts() {
        let mut tl = Timeline::new(None, 1);
        let b = tl.bin_for(Nanos::new(5), |_, _| 0).unwrap();
        tl.add(b, 0, &Bin { offered: 1, admitted: 1, window_peak: 1, ..Bin::default() });
        let b = tl.bin_for(Nanos::new(2_999_999_999), |_, _| 0).unwrap();
        tl.add(b, 0, &Bin { offered: 1, rejected: 1, window_peak: 7, ..Bin::default() });
        // 3 s over at most 2000 bins: 1.5 ms would do, the next round width is 2 ms.
        assert_eq!(tl.width(), Nanos::new(2_000_000));
        assert_eq!(tl.bins().len(), 1500);
        assert_eq!(tl.bins()[0][0], Bin { offered: 1, admitted: 1, window_peak: 1, ..Bin::default() });
        assert_eq!(tl.bins()[1499][0], Bin { offered: 1, rejected: 1, window_peak: 7, ..Bin::default() });
    }

    #[test]
    fn explicit_width_refuses_too_many_bins() {
        let mut tl = Timeline::new(Some(Nanos::new(1)), 1);
        let e = tl.bin_for(Nanos::new(MAX_BINS), |_, _| 0).unwrap_err();
        // 1 ns bins reach 999 999 ns in 1 000 000 bins; 2 ns bins (the
        // next width automatic bins take) reach 1 000 000.
        assert_eq!(e.fitting_bin(), Nanos::new(2));
        assert_eq!(
            TooManyBins {
                width: 1_000_000,
                max: 1_000_000,
                columns: 1,
                until: Nanos::new(2_000_000_000_000),
                key_at: None,
                reacting: false,
            }
            .fitting_bin(),
            Nanos::new(10_000_000),
            "2000 s in a million bins needs more than 2 ms; the next width after 2 ms is 10 ms"
        );
    }

    /// 52 columns (a limiter on 50 nodes, with the reference) hold an
    /// explicit width to 10^7 / 52 = 192 307 bins; one or two columns to a
    /// million. The error says why the most is lower.
    #[test]
    fn many_columns_hold_an_explicit_width_to_fewer_bins() {
        assert_eq!(max_bins(1), MAX_BINS);
        assert_eq!(max_bins(10), MAX_BINS);
        assert_eq!(max_bins(52), 192_307);
        assert_eq!(max_bins(20_000_000), 1);
        let mut tl = Timeline::new(Some(Nanos::new(1)), 1).in_run_of(52);
        assert!(tl.bin_for(Nanos::new(192_306), |_, _| 0).is_ok());
        let e = tl.bin_for(Nanos::new(192_307), |_, _| 0).unwrap_err();
        assert_eq!((e.max, e.columns), (192_307, 52));
        assert!(e.to_string().contains("(the timelines hold 52 columns,"), "{e}");
        // Automatic widths are not refused: they widen, to at most 2000
        // bins, and to fewer past 5000 columns (10^7 cells): 500 at 20 000.
        let mut auto = Timeline::new(None, 1).in_run_of(52);
        assert!(auto.bin_for(Nanos::new(1_000_000_000), |_, _| 0).is_ok());
        assert_eq!((auto.width, auto.len()), (1_000_000, 1001));
        let mut wide = Timeline::new(None, 1).in_run_of(20_000);
        assert!(wide.bin_for(Nanos::new(1_000_000_000), |_, _| 0).is_ok());
        assert_eq!((wide.width, wide.len()), (10_000_000, 101));
    }

    #[test]
    fn new_bins_carry_the_window_count_in() {
        let mut tl = Timeline::new(Some(Nanos::new(10)), 2);
        tl.bin_for(Nanos::new(25), |i, start| i as u64 * 100 + start.get()).unwrap();
        let peaks: Vec<u64> = tl.bins().iter().map(|r| r[1].window_peak).collect();
        assert_eq!(peaks, [100, 110, 120]);
    }

    /// Widening merges each run of `factor` bins limiter by limiter, in
    /// place: the same bins as merging copies of the rows by hand.
    #[test]
    fn widening_in_place_merges_rows_limiter_by_limiter() {
        let mut tl = Timeline::new(None, 3);
        let mut expected: Vec<[Bin; 3]> = Vec::new();
        // 1999 bins of 1 ns (the most before the first widening), each
        // limiter's counts distinct.
        for b in 0..1999u64 {
            let idx = tl.bin_for(Nanos::new(b), |i, _| b + i as u64).unwrap();
            assert_eq!(idx, b as usize);
            let mut row = [Bin::default(); 3];
            for (i, cell) in row.iter_mut().enumerate() {
                let c = Bin {
                    offered: b + 1,
                    admitted: b % 7,
                    rejected: i as u64,
                    retries: b * 3,
                    ..Bin::default()
                };
                tl.add(idx, i, &c);
                *cell = Bin { window_peak: b + i as u64, ..c };
            }
            expected.push(row);
        }
        // Time 2000 needs a 2 ns width: bins merge in pairs (1999 is alone).
        tl.bin_for(Nanos::new(2000), |_, _| 0).unwrap();
        assert_eq!(tl.width(), Nanos::new(2));
        let rows = tl.bins();
        assert_eq!(rows.len(), 1001);
        for (r, pair) in expected.chunks(2).enumerate() {
            for i in 0..3 {
                let mut m = pair[0][i];
                if let Some(next) = pair.get(1) {
                    m.merge(&next[i]);
                }
                assert_eq!(rows[r][i], m, "bin {r}, limiter {i}");
            }
        }
        assert_eq!(rows[1000], [Bin::default(); 3]);
    }
}
