//! `CsvTrace` (unquoted fast path, csv_core after the first quote) against
//! `ReferenceCsvTrace` (the csv crate, as the reader was before; in
//! `tests/common/csv_reference.rs`): on any
//! input, read in pieces of any size, both must give the same arrivals and
//! the same first error, word for word, with the same counts.

use std::io::Read;

mod common;

use common::csv_reference::ReferenceCsvTrace;
use proptest::prelude::*;
use ratesim::time::TimeUnit;
use ratesim::trace::{CsvOptions, CsvTrace, KeysAt};

/// Hands out `data` in pieces whose sizes cycle through `sizes`, and fails
/// once (a plain I/O error) when the read position reaches `fail_at`.
struct Pieces {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    next: usize,
    fail_at: Option<usize>,
}

impl Read for Pieces {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.fail_at == Some(self.at) {
            self.fail_at = None;
            return Err(std::io::Error::other("disk on fire"));
        }
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let mut k = (self.data.len() - self.at).min(size).min(out.len());
        if let Some(f) = self.fail_at {
            k = k.min(f - self.at);
        }
        out[..k].copy_from_slice(&self.data[self.at..self.at + k]);
        self.at += k;
        Ok(k)
    }
}

/// Everything observable: the opening error, or the counts after opening
/// and every item (the first error ends the list).
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Refused(String),
    Read {
        rows: u64,
        out_of_order: u64,
        sorted: bool,
        items: Vec<Result<(u64, u64), String>>,
        rows_after: u64,
        /// Records over several lines, and the line of the first.
        multiline: (u64, Option<u64>),
    },
}

fn items<I: Iterator<Item = ratesim::trace::ArrivalResult>>(it: I) -> Vec<Result<(u64, u64), String>> {
    // Fused on purpose: no more items after the first error, or after `None`.
    let mut v = Vec::new();
    for r in it {
        v.push(r.map(|a| (a.time.get(), a.key)).map_err(|e| e.to_string()));
    }
    v
}

fn outcomes(input: &Case, sizes: &[usize], fail_at: Option<usize>) -> [Outcome; 3] {
    let pieces = || Pieces { data: input.data.clone(), at: 0, sizes: sizes.to_vec(), next: 0, fail_at };
    let o = &input.options;
    let reference = match ReferenceCsvTrace::from_reader(pieces(), o) {
        Err(e) => Outcome::Refused(e.to_string()),
        Ok(mut t) => {
            let (rows, out_of_order, sorted) = (t.rows(), t.out_of_order(), t.is_sorted_in_memory());
            let items = items(&mut t);
            Outcome::Read {
                rows,
                out_of_order,
                sorted,
                items,
                rows_after: t.rows(),
                multiline: t.multiline_records(),
            }
        }
    };
    let ours = |t: Result<CsvTrace<Pieces>, ratesim::trace::TraceError>| match t {
        Err(e) => Outcome::Refused(e.to_string()),
        Ok(mut t) => {
            let (rows, out_of_order, sorted) = (t.rows(), t.out_of_order(), t.is_sorted_in_memory());
            let items = items(&mut t);
            Outcome::Read {
                rows,
                out_of_order,
                sorted,
                items,
                rows_after: t.rows(),
                multiline: t.multiline_records(),
            }
        }
    };
    let fast = ours(CsvTrace::from_reader(pieces(), o));
    let general = ours(CsvTrace::from_reader_general_only(pieces(), o));
    [reference, fast, general]
}

#[derive(Clone, Debug)]
struct Case {
    data: Vec<u8>,
    options: CsvOptions,
}

/// With a key column, where a scenario would set the options is known
/// too, as in a run (the messages that name them).
fn options(unit: usize, key: bool, sort: bool) -> CsvOptions {
    CsvOptions {
        time_unit: [TimeUnit::S, TimeUnit::Ns, TimeUnit::Ms][unit],
        key_column: key.then(|| "key".to_string()),
        sort,
        keys_at: key.then(|| KeysAt {
            source: "traffic[0]".into(),
            path: "s.toml:9:8".into(),
            time_unit: Some("s.toml:10:13".into()),
            time_column: None,
            key_column: Some("s.toml:11:14".into()),
        }),
        ..CsvOptions::new("d.csv")
    }
}

/// Pieces of lines: what traces are made of, and what breaks them.
const TOKENS: &[&[u8]] = &[
    b"0",
    b"1",
    b"7",
    b"12",
    b"0.5",
    b"1.25",
    b"123456789",
    b"3.000000001",
    b".",
    b",",
    b",",
    b" ",
    b"\"",
    b"\"\"",
    b"\r",
    b"\n",
    b"\r\n",
    b"\xff",
    b"\xef\xbb\xbf",
    b"-",
    b"-0",
    b"-0.000",
    b"x",
    b"time",
    b"key",
    b"a",
    b"1e3",
    b"0.0000000001",
    b"99999999999999999999",
    b"18446744073.709551615",
    b"\t",
];

const HEADERS: &[&[u8]] = &[
    b"time",
    b"time",
    b"time,key",
    b"key,time",
    b"id,time,key",
    b"\"time\",key",
    b"time,\"key\"",
    b"tim",
    b"",
    b" time ",
    b"time ,key",
    b"\"ti\nme\"",
    b",",
    b"\"\"",
    b"time,time",
    b"key,time,key",
];

const KEYS: &[&[u8]] = &[b"a", b"b", b" a", b"\"a\"", b"", b"a b", b"\"a,b\"", b"\xff"];

fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // A good row: time (optionally formatted oddly), key, at times extra
        // fields (an error when they pass the header's columns).
        4 => (0u64..3_000, 0usize..4, proptest::sample::select(KEYS), 0usize..3, prop_oneof![3 => Just(0usize), 1 => 1usize..3]).prop_map(
            |(t, fmt, key, layout, extra)| {
                let time = match fmt {
                    0 => format!("{t}"),
                    1 => format!("{}.{:03}", t / 1000, t % 1000),
                    2 => format!("\"{t}\""),
                    _ => format!(" {t}"),
                };
                let mut fields: Vec<Vec<u8>> = match layout {
                    0 => vec![time.into_bytes(), key.to_vec()],
                    1 => vec![key.to_vec(), time.into_bytes()],
                    _ => vec![time.into_bytes()],
                };
                fields.extend((0..extra).map(|_| b"z".to_vec()));
                fields.join(&b","[..])
            }
        ),
        2 => proptest::collection::vec(proptest::sample::select(TOKENS), 0..8).prop_map(|t| t.concat()),
        1 => Just(Vec::new()),
        1 => Just(b" ".to_vec()),
        1 => Just(b",".to_vec()),
    ]
}

fn grammar_case() -> impl Strategy<Value = Case> {
    (
        0usize..4,
        proptest::sample::select(HEADERS),
        proptest::collection::vec((line(), 0usize..6), 0..24),
        any::<bool>(),
        (0usize..3, any::<bool>(), any::<bool>()),
    )
        .prop_map(|(bom, header, lines, last_lf, (unit, key, sort))| {
            let mut data =
                [&b""[..], b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf", b"\xef\xbb"][bom].to_vec();
            data.extend_from_slice(header);
            data.push(b'\n');
            let n = lines.len();
            for (i, (l, end)) in lines.into_iter().enumerate() {
                data.extend_from_slice(&l);
                if i + 1 < n || last_lf {
                    data.extend_from_slice([&b"\n"[..], b"\n", b"\n", b"\r\n", b"\r", b"\n\n"][end]);
                }
            }
            Case { data, options: options(unit, key, sort) }
        })
}

fn raw_case() -> impl Strategy<Value = Case> {
    let byte = prop_oneof![
        3 => proptest::sample::select(b"0123456789.,\" \r\n\xff\xef\xbb\xbftimeky".to_vec()),
        1 => any::<u8>(),
    ];
    (
        proptest::sample::select(vec![&b""[..], b"time\n", b"time,key\n", b"\xef\xbb\xbftime\n"]),
        proptest::collection::vec(byte, 0..200),
        (0usize..3, any::<bool>(), any::<bool>()),
    )
        .prop_map(|(head, bytes, (unit, key, sort))| {
            let mut data = head.to_vec();
            data.extend(bytes);
            Case { data, options: options(unit, key, sort) }
        })
}

fn sizes() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        3 => proptest::collection::vec(1usize..24, 1..12),
        1 => Just(vec![usize::MAX]),
    ]
}

fn check(case: &Case, sizes: &[usize], fail_at: Option<usize>) -> Result<(), TestCaseError> {
    let [reference, fast, general] = outcomes(case, sizes, fail_at);
    prop_assert_eq!(&fast, &reference, "fast path; input {:?}", String::from_utf8_lossy(&case.data));
    prop_assert_eq!(&general, &reference, "general path; input {:?}", String::from_utf8_lossy(&case.data));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn same_as_the_csv_crate_on_trace_like_input(case in grammar_case(), sizes in sizes(), fail in 0usize..400) {
        // An I/O error somewhere in a quarter of the cases.
        let fail_at = (fail % 4 == 0).then(|| (fail / 4).min(case.data.len()));
        check(&case, &sizes, fail_at)?;
    }

    #[test]
    fn same_as_the_csv_crate_on_raw_bytes(case in raw_case(), sizes in sizes()) {
        check(&case, &sizes, None)?;
    }
}

/// A time of `-0` is 0, on the fast path (which leaves signs to the full
/// parser), after a quote (csv_core) and in the reference alike; it was
/// called negative. `-0.001` still is, and `-0.0` is no whole number of ms.
#[test]
fn minus_zero_is_zero_on_every_path() {
    let data = b"time\n-0\n\"-0.000\"\n -0 \n-.0\n0.5\n-0\n".to_vec();
    let case = Case { data, options: options(0, false, true) };
    for sizes in [vec![usize::MAX], vec![1], vec![3, 5]] {
        let [reference, fast, general] = outcomes(&case, &sizes, None);
        let Outcome::Read { items, .. } = &reference else { panic!("{reference:?}") };
        let zero = Ok((0, 0));
        assert_eq!(
            items,
            &[zero.clone(), zero.clone(), zero.clone(), zero.clone(), zero.clone(), Ok((500_000_000, 0))]
        );
        assert!(fast == reference && general == reference, "sizes {sizes:?}: {fast:?} {general:?}");
    }
    for (unit, data, want) in [
        (0, &b"time\n-0.001\n"[..], "`-0.001` is negative"),
        (2, &b"time\n-0\n-0.0\n"[..], "`-0.0` is not a whole number"),
    ] {
        let case = Case { data: data.to_vec(), options: options(unit, false, false) };
        let [reference, fast, general] = outcomes(&case, &[usize::MAX], None);
        let Outcome::Read { items, .. } = &reference else { panic!("{reference:?}") };
        assert!(items.last().unwrap().as_ref().unwrap_err().contains(want), "{items:?}");
        assert!(fast == reference && general == reference, "{fast:?} {general:?}");
    }
}

/// Inputs larger than the fast path's buffer: lines and quoted records
/// across its refills and growth, a quote first seen deep in the file.
#[test]
fn same_as_the_csv_crate_on_large_inputs() {
    let mut rows = Vec::new();
    let mut t = 0u64;
    for i in 0..120_000u64 {
        t += i % 7;
        rows.push(format!("{}.{:09},k{}", t / 1000, (t % 1000) * 1_000_000, i % 13).into_bytes());
    }
    let body = |quote_at: Option<usize>, long_at: Option<usize>, blank_every: usize| {
        // A third column for the quoted fields (a row may not have more
        // fields than the header).
        let mut data = b"time,key,note\n".to_vec();
        for (i, r) in rows.iter().enumerate() {
            if Some(i) == long_at {
                // A line longer than the buffer: the key is 300 000 bytes.
                data.extend_from_slice(&r[..r.iter().position(|&b| b == b',').unwrap() + 1]);
                data.extend(std::iter::repeat_n(b'y', 300_000));
            } else if Some(i) == quote_at {
                // A quoted field over two lines, in a column not read.
                data.extend_from_slice(r);
                data.extend_from_slice(b",\"quoted,\nfield\"");
            } else {
                data.extend_from_slice(r);
            }
            data.push(b'\n');
            if blank_every > 0 && i % blank_every == 0 {
                data.push(b'\n');
            }
        }
        data.extend_from_slice(b"0\n");
        data
    };
    let inputs = [
        body(None, None, 0),
        body(Some(100_000), None, 0),
        body(None, Some(50_000), 1000),
        body(Some(90_000), Some(30_000), 77),
        body(Some(10), Some(100_000), 0),
    ];
    // A quote never closed, deep in the file, past several refills.
    let mut open = body(None, None, 0);
    let at = open.len() / 2;
    let line_start = at + open[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let line = 1 + open[..line_start].iter().filter(|&&b| b == b'\n').count();
    let eol = line_start + open[line_start..].iter().position(|&b| b == b'\n').unwrap();
    open.splice(eol..eol, b",\"never closed".iter().copied());
    for sizes in [vec![usize::MAX], vec![4093]] {
        let case = Case { data: open.clone(), options: options(0, true, false) };
        let [reference, fast, general] = outcomes(&case, &sizes, None);
        let Outcome::Read { items, .. } = &reference else { panic!("{reference:?}") };
        let want =
            format!("d.csv, line {line}: a quote `\"` opened in field `note` (column 3) is never closed");
        assert!(items.last().unwrap().as_ref().unwrap_err().starts_with(&want), "{:?}", items.last());
        assert!(fast == reference && general == reference, "open quote, sizes {sizes:?}");
    }
    for (n, data) in inputs.into_iter().enumerate() {
        for key in [false, true] {
            for sizes in [vec![usize::MAX], vec![100_000, 7, 65_536], vec![4093]] {
                let case = Case { data: data.clone(), options: options(0, key, false) };
                let [reference, fast, general] = outcomes(&case, &sizes, None);
                if let Outcome::Read { items, .. } = &reference {
                    assert!(items.len() > 1000, "input {n}: {:?}", items.last());
                }
                assert!(fast == reference, "fast path, input {n}, key {key}, sizes {sizes:?}");
                assert!(general == reference, "general path, input {n}, key {key}, sizes {sizes:?}");
            }
        }
    }
}
