//! Virtual time: integer nanoseconds since the start of a run.
//!
//! Nothing on the decision path uses floating point. Durations written by
//! people (`"10ms"`, `"1m30s"`) and decimal-second timestamps (`"0.995"`) are
//! parsed from their text straight to exact nanoseconds.

use std::fmt;

/// An instant or a span of virtual time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const MAX: Nanos = Nanos(u64::MAX);
    pub const PER_SECOND: u64 = 1_000_000_000;

    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * Self::PER_SECOND)
    }
    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    pub const fn from_micros(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    /// `ns` nanoseconds.
    pub const fn new(ns: u64) -> Nanos {
        Nanos(ns)
    }
    /// The count of nanoseconds.
    pub const fn get(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for charts and reports only (never for decisions).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(other.0))
    }
    pub fn checked_add(self, other: Nanos) -> Option<Nanos> {
        self.0.checked_add(other.0).map(Nanos)
    }
    pub fn saturating_add(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(other.0))
    }
    pub fn checked_sub(self, other: Nanos) -> Option<Nanos> {
        self.0.checked_sub(other.0).map(Nanos)
    }
}

/// Instant plus span. Overflow panics in debug builds, like `u64`; use
/// [`Nanos::checked_add`] where the sum can pass the end of time.
impl std::ops::Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, other: Nanos) -> Nanos {
        Nanos(self.0 + other.0)
    }
}

/// The span between two instants, or an instant moved back. Underflow
/// panics in debug builds, like `u64`; use [`Nanos::saturating_sub`] or
/// [`Nanos::checked_sub`] where it can happen.
impl std::ops::Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, other: Nanos) -> Nanos {
        Nanos(self.0 - other.0)
    }
}

impl std::ops::AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, other: Nanos) {
        self.0 += other.0;
    }
}

impl From<Nanos> for u64 {
    fn from(t: Nanos) -> u64 {
        t.0
    }
}

impl fmt::Display for Nanos {
    /// Decimal seconds with full nanosecond precision and no trailing zeros:
    /// `0.99`, `1`, `1.0000001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / Self::PER_SECOND;
        let frac = self.0 % Self::PER_SECOND;
        if frac == 0 {
            write!(f, "{secs}")
        } else {
            let mut digits = format!("{frac:09}");
            while digits.ends_with('0') {
                digits.pop();
            }
            write!(f, "{secs}.{digits}")
        }
    }
}

/// Why a duration or timestamp text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeParseError {
    #[error("empty value")]
    Empty,
    #[error(
        "`{0}` is not a duration: expected a number and a unit, like \"10ms\", \"1s\", \"250us\", \"1m\" or \"1m30s\" (units: ns, us, ms, s, m, h)"
    )]
    BadDuration(String),
    #[error("`{text}` has an unknown unit `{unit}` (units: ns, us, ms, s, m, h)")]
    UnknownUnit { text: String, unit: String },
    #[error("`{0}` has a fraction finer than one nanosecond")]
    SubNanosecond(String),
    #[error("`{0}` is too large (the limit is about 584 years of nanoseconds)")]
    Overflow(String),
    #[error("`{0}` is negative: times and durations start at 0")]
    Negative(String),
    #[error(
        "`{0}` is not a decimal number of seconds (expected digits with an optional fraction, like 0.995 or 12)"
    )]
    BadDecimal(String),
    #[error("`{0}` is not a whole number")]
    BadInteger(String),
}

/// Scale of one unit in nanoseconds.
fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// A time unit for integer timestamps in traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    /// Decimal seconds (`0.995`, `12`): the default for traces.
    S,
}

impl TimeUnit {
    pub fn parse(text: &str) -> Option<TimeUnit> {
        Some(match text {
            "ns" => TimeUnit::Ns,
            "us" | "µs" => TimeUnit::Us,
            "ms" => TimeUnit::Ms,
            "s" => TimeUnit::S,
            _ => return None,
        })
    }

    /// The common case without allocation or UTF-8 checks: ASCII digits, and
    /// for seconds at most one `.` followed by at most 9 digits. `None` for
    /// anything else (including overflow), which [`Self::parse_timestamp`]
    /// then parses or explains; both agree wherever this returns `Some`.
    ///
    /// Reads eight digits at a time (see `eight_digits`); decimal seconds
    /// of 8 to 17 bytes with fewer than 8 whole digits, which is what traces
    /// hold, take two 8-byte loads in all.
    #[inline]
    pub fn parse_plain(self, bytes: &[u8]) -> Option<Nanos> {
        if self == TimeUnit::S
            && bytes.len() >= 8
            && let Some(answer) = short_seconds(bytes)
        {
            return answer;
        }
        let (whole_end, frac_start) = match self {
            TimeUnit::S => match bytes.iter().position(|&b| b == b'.') {
                Some(dot) => (dot, dot + 1),
                None => (bytes.len(), bytes.len()),
            },
            _ => (bytes.len(), bytes.len()),
        };
        let frac_len = bytes.len() - frac_start;
        if (whole_end == 0 && frac_len == 0) || whole_end > 19 || frac_len > 9 {
            return None;
        }
        // At most 19 and 9 digits: neither overflows a u64.
        let whole = parse_digits(bytes, 0, whole_end)?;
        let frac = parse_digits(bytes, frac_start, bytes.len())?;
        let scale = match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => Nanos::PER_SECOND,
        };
        whole.checked_mul(scale)?.checked_add(frac * POW10[9 - frac_len]).map(Nanos)
    }

    /// Parses one timestamp in this unit.
    pub fn parse_timestamp(self, text: &str) -> Result<Nanos, TimeParseError> {
        match self {
            TimeUnit::S => parse_decimal_seconds(text),
            other => {
                let t = text.trim();
                if t.starts_with('-') {
                    return Err(TimeParseError::Negative(t.to_string()));
                }
                let v: u64 = t.parse().map_err(|_| TimeParseError::BadInteger(t.to_string()))?;
                let scale = match other {
                    TimeUnit::Ns => 1,
                    TimeUnit::Us => 1_000,
                    TimeUnit::Ms => 1_000_000,
                    TimeUnit::S => unreachable!("handled above"),
                };
                v.checked_mul(scale).map(Nanos).ok_or_else(|| TimeParseError::Overflow(t.to_string()))
            }
        }
    }
}

const POW10: [u64; 10] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

/// Eight ASCII `0`s, loaded as [`load8`] loads them.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// `TimeUnit::S.parse_plain` for a text of at least 8 bytes whose first 8
/// are not all digits (so the whole part has at most 7 and cannot overflow);
/// `None` (not decided here) when they are.
///
/// The first 8 bytes say where the first non-digit is, which must be the
/// dot, and hold the whole part; the last 8 hold the fraction's last (up to)
/// 8 digits, and a ninth comes on its own.
#[inline(always)]
fn short_seconds(text: &[u8]) -> Option<Option<Nanos>> {
    let len = text.len();
    let first = load8(text, 0);
    let dot = (non_digits(first).trailing_zeros() / 8) as usize;
    if dot == 8 {
        return None;
    }
    // Any other first non-digit, or a tenth fraction digit: not plain.
    let frac_len = len - dot - 1;
    if (first >> (8 * dot)) as u8 != b'.' || frac_len > 9 {
        return Some(None);
    }
    // The whole part's digits (known to be digits) to the top bytes, `0`s
    // below them. Two shifts, so that a leading dot shifts all 64 bits out.
    let whole = digits_value(((first << 8) << (8 * (7 - dot))) | (ZEROS >> (8 * dot)));
    let frac_ns = if frac_len == 0 {
        0
    } else {
        let last = load8(text, len - 8);
        let digits = eight_digits(if frac_len >= 8 {
            last
        } else {
            let keep = u64::MAX << (8 * (8 - frac_len));
            (last & keep) | (ZEROS & !keep)
        });
        let Some(digits) = digits else { return Some(None) };
        if frac_len == 9 {
            let d = text[dot + 1].wrapping_sub(b'0');
            if d > 9 {
                return Some(None);
            }
            u64::from(d) * 100_000_000 + digits
        } else {
            digits * POW10[9 - frac_len]
        }
    };
    // Under 10^7 s: no overflow.
    Some(Some(Nanos(whole * Nanos::PER_SECOND + frac_ns)))
}

/// The value of the at most 19 ASCII digits `text[start..end]` (none is 0);
/// `None` if any byte there is not a digit.
///
/// Eight digits at a time. The few left over at the front (`len % 8`) are
/// read one by one when they are at most two or the text is shorter than
/// 8 bytes; otherwise as one load of the 8 bytes of `text` that end with
/// them (or the first 8, shifted), with the bytes that are not theirs set
/// to `0`.
#[inline(always)]
fn parse_digits(text: &[u8], start: usize, end: usize) -> Option<u64> {
    debug_assert!(start <= end && end <= text.len() && end - start <= 19);
    let head = (end - start) % 8;
    let mut value: u64 = 0;
    if head <= 2 || text.len() < 8 {
        for &b in &text[start..start + head] {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value * 10 + u64::from(d);
        }
    } else {
        // The head's bytes become the top bytes of `window`.
        let head_end = start + head;
        let window =
            if head_end >= 8 { load8(text, head_end - 8) } else { load8(text, 0) << (8 * (8 - head_end)) };
        let keep = u64::MAX << (8 * (8 - head));
        value = eight_digits((window & keep) | (ZEROS & !keep))?;
    }
    let mut i = start + head;
    while i < end {
        value = value * 100_000_000 + eight_digits(load8(text, i))?;
        i += 8;
    }
    Some(value)
}

/// The 8 bytes of `text` from `at`, little-endian: the first in the low byte.
#[inline(always)]
fn load8(text: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(text[at..at + 8].try_into().unwrap())
}

/// Eight ASCII digits as [`load8`] loads them to their value,
/// 0..=99_999_999; `None` unless all eight are digits.
#[inline(always)]
fn eight_digits(chunk: u64) -> Option<u64> {
    (non_digits(chunk) == 0).then(|| digits_value(chunk))
}

/// Zero in every byte of `chunk` that is an ASCII digit and comes before any
/// byte that is not; not zero in every byte that is not a digit.
///
/// A byte is a digit when its high nibble is 3 and adding 6 leaves it 3
/// (0x30..=0x39). Adding 6 carries into the next byte only out of a byte of
/// 0xFA or more, which is itself not a digit, so the bytes before the first
/// non-digit are never touched by a carry.
#[inline(always)]
fn non_digits(chunk: u64) -> u64 {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    ((chunk & HIGH) | ((chunk.wrapping_add(0x0606_0606_0606_0606) & HIGH) >> 4)) ^ 0x3333_3333_3333_3333
}

/// The value of eight ASCII digits as [`load8`] loads them (all checked to
/// be digits), in three multiply-and-shift steps: pairs, fours, all eight.
#[inline(always)]
fn digits_value(chunk: u64) -> u64 {
    debug_assert_eq!(non_digits(chunk), 0);
    // Each byte now 0..=9, the first (most significant) digit lowest.
    let v = chunk - ZEROS;
    // Low byte of every 16-bit lane: 10 * its first digit + its second.
    let v = (v * 10 + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    // Low half of every 32-bit lane: 100 * its first pair + its second.
    // (Products past bit 63 are the unwanted top lanes: wrapping drops them.)
    let v = (v.wrapping_mul(1 + (100 << 16)) >> 16) & 0x0000_FFFF_0000_FFFF;
    // 10_000 * the first four + the last four.
    v.wrapping_mul(1 + (10_000 << 32)) >> 32
}

/// Parses `digits[.digits]` scaled by `scale` nanoseconds, exactly.
fn parse_scaled_decimal(whole: &str, frac: &str, scale: u64, text: &str) -> Result<u64, TimeParseError> {
    let overflow = || TimeParseError::Overflow(text.to_string());
    let mut value: u64 = 0;
    for c in whole.bytes() {
        value =
            value.checked_mul(10).and_then(|v| v.checked_add(u64::from(c - b'0'))).ok_or_else(overflow)?;
    }
    let mut total = value.checked_mul(scale).ok_or_else(overflow)?;
    // Each fractional digit contributes digit * scale / 10^k, which must be whole.
    let mut place = scale;
    for c in frac.bytes() {
        let d = u64::from(c - b'0');
        if !place.is_multiple_of(10) {
            if d != 0 {
                return Err(TimeParseError::SubNanosecond(text.to_string()));
            }
            continue;
        }
        place /= 10;
        total = total.checked_add(d * place).ok_or_else(overflow)?;
    }
    Ok(total)
}

/// Splits `123.45rest` into (`123`, `45`, `rest`); None when no digits lead.
fn split_number(s: &str) -> Option<(&str, &str, &str)> {
    let whole_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let whole = &s[..whole_end];
    let rest = &s[whole_end..];
    let (frac, rest) = if let Some(after_dot) = rest.strip_prefix('.') {
        let frac_end = after_dot.find(|c: char| !c.is_ascii_digit()).unwrap_or(after_dot.len());
        (&after_dot[..frac_end], &after_dot[frac_end..])
    } else {
        ("", rest)
    };
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    Some((whole, frac, rest))
}

/// Parses a human duration: one or more `<number><unit>` parts, such as
/// `"10ms"`, `"1.5s"`, `"250us"`, `"1m30s"`. The result is exact.
pub fn parse_duration(text: &str) -> Result<Nanos, TimeParseError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(TimeParseError::Empty);
    }
    if t.starts_with('-') {
        return Err(TimeParseError::Negative(t.to_string()));
    }
    let mut rest = t;
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let (whole, frac, after) =
            split_number(rest).ok_or_else(|| TimeParseError::BadDuration(t.to_string()))?;
        let unit_end = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let unit = after[..unit_end].trim();
        if unit.is_empty() {
            return Err(TimeParseError::BadDuration(t.to_string()));
        }
        let scale = unit_nanos(unit)
            .ok_or_else(|| TimeParseError::UnknownUnit { text: t.to_string(), unit: unit.to_string() })?;
        let part = parse_scaled_decimal(whole, frac, scale, t)?;
        total = total.checked_add(part).ok_or_else(|| TimeParseError::Overflow(t.to_string()))?;
        rest = &after[unit_end..];
    }
    Ok(Nanos(total))
}

/// Parses decimal seconds (`"0.995"`, `"12"`, `".5"`) to exact nanoseconds.
pub fn parse_decimal_seconds(text: &str) -> Result<Nanos, TimeParseError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(TimeParseError::Empty);
    }
    if t.starts_with('-') {
        return Err(TimeParseError::Negative(t.to_string()));
    }
    let t_unsigned = t.strip_prefix('+').unwrap_or(t);
    match split_number(t_unsigned) {
        Some((whole, frac, "")) => parse_scaled_decimal(whole, frac, Nanos::PER_SECOND, t).map(Nanos),
        _ => Err(TimeParseError::BadDecimal(t.to_string())),
    }
}

/// Formats a duration the way people write it: `1s`, `10ms`, `1.5s`, `250us`.
pub fn format_duration(d: Nanos) -> String {
    let n = d.0;
    const UNITS: [(u64, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    if n == 0 {
        return "0s".to_string();
    }
    for (scale, unit) in UNITS {
        if n.is_multiple_of(scale) {
            return format!("{}{}", n / scale, unit);
        }
    }
    unreachable!("every integer is a whole number of nanoseconds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_exactly() {
        assert_eq!(parse_duration("1s"), Ok(Nanos(1_000_000_000)));
        assert_eq!(parse_duration("10ms"), Ok(Nanos(10_000_000)));
        assert_eq!(parse_duration("250us"), Ok(Nanos(250_000)));
        assert_eq!(parse_duration("1m"), Ok(Nanos(60_000_000_000)));
        assert_eq!(parse_duration("1m30s"), Ok(Nanos(90_000_000_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Nanos(1_500_000_000)));
        assert_eq!(parse_duration("0.001ms"), Ok(Nanos(1_000)));
        assert_eq!(parse_duration("7ns"), Ok(Nanos(7)));
        assert_eq!(parse_duration(" 2h "), Ok(Nanos(7_200_000_000_000)));
        assert_eq!(parse_duration("0s"), Ok(Nanos(0)));
    }

    #[test]
    fn bad_durations_are_refused_with_reason() {
        assert!(matches!(parse_duration(""), Err(TimeParseError::Empty)));
        assert!(matches!(parse_duration("10"), Err(TimeParseError::BadDuration(_))));
        assert!(matches!(parse_duration("ms"), Err(TimeParseError::BadDuration(_))));
        assert!(matches!(parse_duration("-1s"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_duration("3 days"), Err(TimeParseError::UnknownUnit { .. })));
        assert!(matches!(parse_duration("1.5ns"), Err(TimeParseError::SubNanosecond(_))));
        assert!(matches!(parse_duration("99999999999h"), Err(TimeParseError::Overflow(_))));
        assert!(matches!(parse_duration("18446744073709551616ns"), Err(TimeParseError::Overflow(_))));
    }

    #[test]
    fn decimal_seconds_have_no_float_round_trip() {
        // 0.995 is not representable in binary floating point; we keep it exact.
        assert_eq!(parse_decimal_seconds("0.995"), Ok(Nanos(995_000_000)));
        assert_eq!(parse_decimal_seconds("12"), Ok(Nanos(12_000_000_000)));
        assert_eq!(parse_decimal_seconds(".5"), Ok(Nanos(500_000_000)));
        assert_eq!(parse_decimal_seconds("1.000000001"), Ok(Nanos(1_000_000_001)));
        assert_eq!(parse_decimal_seconds("1.0000000010"), Ok(Nanos(1_000_000_001)));
        assert!(matches!(parse_decimal_seconds("1.0000000001"), Err(TimeParseError::SubNanosecond(_))));
        assert!(matches!(parse_decimal_seconds("-0.1"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_decimal_seconds("1e3"), Err(TimeParseError::BadDecimal(_))));
        assert!(matches!(parse_decimal_seconds("abc"), Err(TimeParseError::BadDecimal(_))));
        assert!(matches!(parse_decimal_seconds("."), Err(TimeParseError::BadDecimal(_))));
    }

    #[test]
    fn integer_units() {
        assert_eq!(TimeUnit::Ms.parse_timestamp("995"), Ok(Nanos(995_000_000)));
        assert_eq!(TimeUnit::Us.parse_timestamp("3"), Ok(Nanos(3_000)));
        assert_eq!(TimeUnit::Ns.parse_timestamp("3"), Ok(Nanos(3)));
        assert!(TimeUnit::Ms.parse_timestamp("1.5").is_err());
        assert!(TimeUnit::Ms.parse_timestamp("-1").is_err());
    }

    #[test]
    fn plain_fast_path_agrees_with_the_full_parser() {
        for unit in [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns] {
            for text in [
                "0",
                "12",
                "0.995",
                ".5",
                "5.",
                "1.000000001",
                "1.0000000001",
                "18446744073",
                "18446744074",
                "18446744073709551615",
                "18446744073709551616",
                "99999999999999999999",
                "-1",
                "+1",
                " 1",
                "1e3",
                "",
                ".",
                "1.2.3",
                "0.1234567890",
            ] {
                if let Some(fast) = unit.parse_plain(text.as_bytes()) {
                    assert_eq!(unit.parse_timestamp(text), Ok(fast), "{unit:?} {text}");
                }
            }
        }
        assert_eq!(TimeUnit::S.parse_plain(b"0.995"), Some(Nanos(995_000_000)));
        assert_eq!(TimeUnit::Ms.parse_plain(b"995"), Some(Nanos(995_000_000)));
        assert_eq!(TimeUnit::Ms.parse_plain(b"1.5"), None);
        assert_eq!(TimeUnit::S.parse_plain(b"18446744074"), None); // overflows: full parser explains
    }

    proptest::proptest! {
        #[test]
        fn plain_fast_path_never_disagrees(text in "[0-9.]{0,24}", unit in 0usize..4) {
            let unit = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns][unit];
            if let Some(fast) = unit.parse_plain(text.as_bytes()) {
                proptest::prop_assert_eq!(unit.parse_timestamp(&text), Ok(fast));
            }
        }
    }

    /// `parse_plain` as it was before the eight-digit steps: one digit at a
    /// time. The fast version must answer exactly as this does.
    fn reference_parse_plain(unit: TimeUnit, bytes: &[u8]) -> Option<Nanos> {
        let (whole, frac) = match unit {
            TimeUnit::S => match bytes.iter().position(|&b| b == b'.') {
                Some(dot) => (&bytes[..dot], &bytes[dot + 1..]),
                None => (bytes, &[][..]),
            },
            _ => (bytes, &[][..]),
        };
        if (whole.is_empty() && frac.is_empty()) || whole.len() > 19 || frac.len() > 9 {
            return None;
        }
        let mut w: u64 = 0;
        for &b in whole {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            w = w * 10 + u64::from(d);
        }
        let mut f: u64 = 0;
        for &b in frac {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            f = f * 10 + u64::from(d);
        }
        let scale = match unit {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => Nanos::PER_SECOND,
        };
        let frac_ns = f * 10u64.pow(9 - frac.len() as u32);
        w.checked_mul(scale)?.checked_add(frac_ns).map(Nanos)
    }

    const UNITS: [TimeUnit; 4] = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns];

    fn assert_plain_matches_reference(bytes: &[u8]) {
        for unit in UNITS {
            assert_eq!(
                unit.parse_plain(bytes),
                reference_parse_plain(unit, bytes),
                "{unit:?} {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn eight_digits_takes_exactly_the_ascii_digits() {
        // Every byte value at every position, among digits.
        for at in 0..8 {
            for b in 0..=255u8 {
                let mut text = *b"31415926";
                text[at] = b;
                let expected = std::str::from_utf8(&text)
                    .ok()
                    .and_then(|t| t.bytes().all(|c| c.is_ascii_digit()).then(|| t.parse::<u64>().unwrap()));
                assert_eq!(eight_digits(u64::from_le_bytes(text)), expected, "{text:?}");
            }
        }
        assert_eq!(eight_digits(u64::from_le_bytes(*b"00000000")), Some(0));
        assert_eq!(eight_digits(u64::from_le_bytes(*b"99999999")), Some(99_999_999));
        assert_eq!(eight_digits(u64::from_le_bytes(*b"12345678")), Some(12_345_678));
        assert_eq!(eight_digits(u64::from_le_bytes(*b"00000001")), Some(1));
        assert_eq!(eight_digits(u64::from_le_bytes(*b"10000000")), Some(10_000_000));
        // A carry out of a byte of 0xFA or more must not make a digit of the next.
        assert_eq!(eight_digits(u64::from_le_bytes([0xFF, 0x2F, b'0', b'0', b'0', b'0', b'0', b'0'])), None);
        assert_eq!(eight_digits(u64::from_le_bytes([0xFA, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39, 0x39])), None);
    }

    #[test]
    fn plain_fast_path_matches_the_reference_at_the_edges() {
        for text in [
            "",
            ".",
            "..",
            "0",
            "0.",
            ".0",
            "00000000",
            "12345678",
            "123456789",
            "1234567.8",
            "12345678.",
            "12345678.123456789",
            "12345678.1234567890",
            "1234567890123456789",
            "12345678901234567890",
            "9999999999999999999",
            "0000000000000000001",
            "0000000000000000001.000000001",
            "18446744073",
            "18446744074",
            "18446744073.709551615",
            "18446744073.709551616",
            "18446744073.70955161",
            "18446744073.70955162",
            "18446744073709551",
            "18446744073709551615",
            "18446744073709",
            "18446744073710",
            "18446744073709551.615",
            "1234567/",
            "1234567:",
            "12345678/",
            "/1234567",
            "1.2345678/",
            "1234.5678.9",
            "0.000378780",
            "6668.578616622",
        ] {
            assert_plain_matches_reference(text.as_bytes());
        }
        assert_eq!(TimeUnit::S.parse_plain(b"18446744073.709551615"), Some(Nanos(u64::MAX)));
        assert_eq!(TimeUnit::Ns.parse_plain(b"9999999999999999999"), Some(Nanos(9_999_999_999_999_999_999)));
        assert_eq!(TimeUnit::S.parse_plain(b"0.000378780"), Some(Nanos(378_780)));
        assert_eq!(TimeUnit::S.parse_plain(b"12345678.123456789"), Some(Nanos(12_345_678_123_456_789)));
    }

    proptest::proptest! {
        /// Any bytes at all, mostly not digits.
        #[test]
        fn plain_fast_path_matches_the_reference_on_any_bytes(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
        ) {
            assert_plain_matches_reference(&bytes);
        }

        /// Digits and dots with the odd byte next to the digits or past the
        /// nibble check's edges, so most texts are nearly plain.
        #[test]
        fn plain_fast_path_matches_the_reference_on_near_digits(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => b'0'..=b'9',
                    1 => proptest::sample::select(
                        vec![b'.', b'/', b':', b'+', b'-', b' ', b'e', 0x00, 0x3A, 0x3F, 0xB0, 0xB9, 0xF9, 0xFA, 0xFF]),
                ],
                0..32,
            ),
        ) {
            assert_plain_matches_reference(&bytes);
        }

        /// Every length 0..=30 of one digit string, with no dot and with a
        /// dot at every place, for all four units. Digits lean to 0 and 9 so
        /// that long texts still reach the overflow edges.
        #[test]
        fn plain_fast_path_matches_the_reference_on_digit_strings(
            digits in proptest::collection::vec(
                proptest::prop_oneof![
                    2 => b'0'..=b'9',
                    1 => proptest::sample::select(vec![b'0', b'9']),
                ],
                30,
            ),
        ) {
            for len in 0..=30 {
                let text = &digits[..len];
                assert_plain_matches_reference(text);
                for dot in 0..=len {
                    let mut dotted = text.to_vec();
                    dotted.insert(dot, b'.');
                    assert_plain_matches_reference(&dotted);
                }
            }
        }
    }

    #[test]
    fn display_is_exact_decimal_seconds() {
        assert_eq!(Nanos(995_000_000).to_string(), "0.995");
        assert_eq!(Nanos(1_000_000_000).to_string(), "1");
        assert_eq!(Nanos(1_000_000_001).to_string(), "1.000000001");
        assert_eq!(Nanos(0).to_string(), "0");
    }

    #[test]
    fn durations_format_back() {
        for text in ["1s", "10ms", "250us", "1m", "7ns", "2h"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
        assert_eq!(format_duration(Nanos(1_500_000_000)), "1500ms");
    }
}
