//! Virtual time: integer nanoseconds since the start of a run.
//!
//! Nothing on the decision path uses floating point. Durations written by
//! people (`"10ms"`, `"1m30s"`) and decimal-second timestamps (`"0.995"`) are
//! parsed from their text straight to exact nanoseconds.

use std::fmt;

use crate::shown::code;

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
/// panics in debug builds, like `u64`; use [`Nanos::saturating_sub`] where
/// it can happen.
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

/// Why a duration or timestamp text was refused. The text is quoted as
/// [`crate::shown::code`] quotes it: escaped, and cut when long.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeParseError {
    #[error("empty value")]
    Empty,
    #[error(
        "{} is not a duration: expected a number and a unit, like \"10ms\", \"1s\", \"250us\", \"1m\" or \"1m30s\" ({UNITS})",
        code(.0)
    )]
    BadDuration(String),
    #[error("{} has an unknown unit {} ({UNITS}){}", code(.text), code(.unit), meant(.unit))]
    UnknownUnit { text: String, unit: String },
    /// A character that is neither part of a number nor of a unit, such
    /// as the `-` of `"1h-1s"` or the `_` of `"1_000ms"`: `before` is the
    /// text before it.
    #[error("{} has {} after {}: {}", code(.text), code(&.found.to_string()), code(.before), stray_advice(*.found, .text))]
    Stray { text: String, found: char, before: String },
    #[error(
        "{} has {} after {}: write each unit once, from the largest down, like \"1m30s\" or \"1s500ms\"",
        code(.text),
        code(.unit),
        code(.before)
    )]
    UnitOrder { text: String, unit: String, before: String },
    #[error("{} has a fraction finer than one nanosecond", code(.0))]
    SubNanosecond(String),
    #[error("{} is too large (the limit is about 584 years of nanoseconds)", code(.0))]
    Overflow(String),
    #[error("{} is negative: times and durations start at 0", code(.0))]
    Negative(String),
    #[error(
        "{} is not a decimal number of seconds (expected digits with an optional fraction, like 0.995 or 12)",
        code(.0)
    )]
    BadDecimal(String),
    #[error("{} is not a whole number", code(.0))]
    BadInteger(String),
    #[error(
        "{} is written with an exponent: write the number out in digits (times are read exactly, to the nanosecond)",
        code(.0)
    )]
    Exponent(String),
}

/// What to write instead of the stray character `found` in the duration
/// `text`, with an example.
fn stray_advice(found: char, text: &str) -> String {
    match found {
        '_' | ',' | '\'' => {
            let without: String = text.chars().filter(|&c| c != found).collect();
            format!("write numbers without separators, like {}", crate::shown::string(&without))
        }
        '-' => "a duration cannot subtract: write the total, in parts that add up, like \"59m59s\" for an hour less a second".to_string(),
        '+' => "the parts of a duration add up with nothing between them: write them together, like \"1m30s\"".to_string(),
        _ => format!("a duration is one or more parts, each a number and a unit, written together, like \"10ms\", \"1s\" or \"1m30s\" ({UNITS})"),
    }
}

/// Whether `t` starts with a number in exponent notation (`1e30`,
/// `1.5E-3`, `1.7e+09`), with or without a unit after it: said as such
/// rather than as an unknown unit `e` or a bad number.
fn has_exponent(t: &str) -> bool {
    let Some((_, _, rest)) = split_number(t.strip_prefix('+').unwrap_or(t)) else { return false };
    let mut c = rest.chars();
    matches!(c.next(), Some('e' | 'E')) && matches!(c.next(), Some('0'..='9' | '+' | '-'))
}

/// Every unit a duration takes, each with its other spellings, for
/// messages: the micro sign (U+00B5) stands for both it and the Greek mu
/// (U+03BC), which look the same.
pub const UNITS: &str = "units: ns, us or \u{b5}s, ms, s, m or min, h, d";

/// Other ways people write the units, each with the unit it means.
const SPELLINGS: [(&str, &[&str]); 7] = [
    ("ns", &["nsec", "nsecs", "nanosec", "nanosecs", "nanosecond", "nanoseconds", "nanos"]),
    ("us", &["usec", "usecs", "microsec", "microsecs", "microsecond", "microseconds", "micros"]),
    ("ms", &["msec", "msecs", "millisec", "millisecs", "millisecond", "milliseconds", "millis"]),
    ("s", &["sec", "secs", "second", "seconds"]),
    ("m", &["mins", "minute", "minutes"]),
    ("h", &["hr", "hrs", "hour", "hours"]),
    ("d", &["day", "days"]),
];

/// A unit people write that no duration takes, with what to write instead.
const NO_SUCH_UNIT: [(&[&str], &str); 1] =
    [(&["w", "wk", "wks", "week", "weeks"], "there is no week unit: write 7d for a week")];

/// "; did you mean `s` (seconds)?" for an unknown unit that is one in
/// another case (`S`, `MS`) or another spelling of one (`sec`, `msec`,
/// `hours`); empty for any other.
fn meant(unit: &str) -> String {
    let lower = unit.to_lowercase();
    if let Some((_, instead)) = NO_SUCH_UNIT.iter().find(|(spellings, _)| spellings.contains(&lower.as_str()))
    {
        return format!("; {instead}");
    }
    let scale = unit_nanos(&lower).or_else(|| {
        let (meant, _) = SPELLINGS.iter().find(|(_, other)| other.contains(&lower.as_str()))?;
        unit_nanos(meant)
    });
    let Some((_, name)) = scale.and_then(|n| UNIT_NAMES.iter().find(|(s, _)| *s == n)) else {
        return String::new();
    };
    let words = match *name {
        "d" => "days",
        "h" => "hours",
        "m" => "minutes",
        "s" => "seconds",
        "ms" => "milliseconds",
        "us" => "microseconds",
        _ => "nanoseconds",
    };
    format!("; did you mean `{name}` ({words})?")
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
        "d" => DAY,
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
    /// What a timestamp in this unit looks like, for messages: "a time in
    /// decimal seconds, like 0.995 or 12".
    pub fn expected(self) -> &'static str {
        match self {
            TimeUnit::S => "a time in decimal seconds, like 0.995 or 12",
            TimeUnit::Ms => "a time in whole milliseconds, like 995",
            TimeUnit::Us => "a time in whole microseconds, like 995000",
            TimeUnit::Ns => "a time in whole nanoseconds, like 995000000",
        }
    }

    /// A `time_unit` as a scenario writes it. Microseconds are `us`, or
    /// `µs` with either character a keyboard gives for the mu: the micro
    /// sign U+00B5 or the Greek small letter mu U+03BC, as in durations.
    pub fn parse(text: &str) -> Option<TimeUnit> {
        Some(match text {
            "ns" => TimeUnit::Ns,
            "us" | "\u{b5}s" | "\u{3bc}s" => TimeUnit::Us,
            "ms" => TimeUnit::Ms,
            "s" => TimeUnit::S,
            _ => return None,
        })
    }

    /// Parses one timestamp in this unit, or says why it cannot. The CSV
    /// reader tries its digits fast path (`trace::parse_plain`) first and
    /// comes here for everything else.
    pub fn parse_timestamp(self, text: &str) -> Result<Nanos, TimeParseError> {
        match self {
            TimeUnit::S => parse_decimal_seconds(text),
            other => {
                let t = text.trim();
                // `-0` is 0, not below it; `-0.0` is no whole number, as
                // `0.0` is not.
                let unsigned = match t.strip_prefix('-') {
                    Some(zero) if is_minus_zero(t) => zero,
                    Some(_) => return Err(TimeParseError::Negative(t.to_string())),
                    None => t,
                };
                let digits = unsigned.strip_prefix('+').unwrap_or(unsigned);
                let v: u64 = unsigned.parse().map_err(|_| {
                    if has_exponent(t) {
                        TimeParseError::Exponent(t.to_string())
                    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                        // A whole number past u64: too large in any unit.
                        TimeParseError::Overflow(t.to_string())
                    } else {
                        TimeParseError::BadInteger(t.to_string())
                    }
                })?;
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

/// Whether `t` is a zero number written with a minus sign and nothing
/// else: `-0`, `-000`, `-0.000`, `-.0` (digits all 0, at most one `.`).
/// It is 0, not below it.
fn is_minus_zero(t: &str) -> bool {
    let Some(number) = t.strip_prefix('-') else { return false };
    matches!(split_number(number), Some((whole, frac, "")) if (whole.bytes().chain(frac.bytes())).all(|b| b == b'0'))
}

/// Parses a human duration: one or more `<number><unit>` parts, such as
/// `"10ms"`, `"1.5s"`, `"250us"`, `"1m30s"`. The result is exact.
pub fn parse_duration(text: &str) -> Result<Nanos, TimeParseError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(TimeParseError::Empty);
    }
    if let Some(unsigned) = t.strip_prefix('-') {
        // `-0s` is zero, not below it: keys that take 0 take it, and the
        // others say they need more than 0.
        // (One sign at most: no recursion on `----...`.)
        // A zero with no unit (`-0`, `-0.0`) lacks its unit as `0` does:
        // the sign is not what is wrong with it.
        return match (unsigned.trim_start().starts_with('-'), parse_duration(unsigned)) {
            (false, Ok(Nanos::ZERO)) => Ok(Nanos::ZERO),
            (false, Err(TimeParseError::BadDuration(_))) if is_minus_zero(t) => {
                Err(TimeParseError::BadDuration(t.to_string()))
            }
            _ => Err(TimeParseError::Negative(t.to_string())),
        };
    }
    let mut rest = t;
    let mut total: u64 = 0;
    // The scale of the part before: each part must use a smaller unit.
    let mut previous: Option<(u64, &str)> = None;
    while !rest.is_empty() {
        if has_exponent(rest) {
            return Err(TimeParseError::Exponent(t.to_string()));
        }
        let (whole, frac, after) =
            split_number(rest).ok_or_else(|| TimeParseError::BadDuration(t.to_string()))?;
        let unit_end = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let unit = after[..unit_end].trim();
        if unit.is_empty() {
            return Err(TimeParseError::BadDuration(t.to_string()));
        }
        // A unit is letters: a sign, a separator or a symbol in it is the
        // problem, not an unknown unit.
        if let Some((i, found)) =
            after[..unit_end].char_indices().find(|&(_, c)| !c.is_alphabetic() && !c.is_whitespace())
        {
            // `after` is a suffix of `t`.
            let at = t.len() - after.len() + i;
            return Err(TimeParseError::Stray { text: t.to_string(), found, before: t[..at].to_string() });
        }
        let scale = unit_nanos(unit)
            .ok_or_else(|| TimeParseError::UnknownUnit { text: t.to_string(), unit: unit.to_string() })?;
        if let Some((before, before_unit)) = previous
            && scale >= before
        {
            return Err(TimeParseError::UnitOrder {
                text: t.to_string(),
                unit: unit.to_string(),
                before: before_unit.to_string(),
            });
        }
        previous = Some((scale, unit));
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
    // `-0` and `-0.000` are 0, not below it.
    if is_minus_zero(t) {
        return Ok(Nanos::ZERO);
    }
    if t.starts_with('-') {
        return Err(TimeParseError::Negative(t.to_string()));
    }
    let t_unsigned = t.strip_prefix('+').unwrap_or(t);
    match split_number(t_unsigned) {
        Some((whole, frac, "")) => parse_scaled_decimal(whole, frac, Nanos::PER_SECOND, t).map(Nanos),
        _ if has_exponent(t) => Err(TimeParseError::Exponent(t.to_string())),
        _ => Err(TimeParseError::BadDecimal(t.to_string())),
    }
}

/// A day in nanoseconds: `"1d"` is 24 hours (no calendar: no leap seconds
/// or daylight-saving days), for daily quotas like 1000 requests per day.
pub const DAY: u64 = 86_400_000_000_000;

/// Every unit a duration takes by its scale, largest first, for "did you
/// mean": [`DURATION_UNITS`] and the day, which durations are not written
/// back in (a day is shown as `24h`, as it always was).
const UNIT_NAMES: [(u64, &str); 7] = [
    (DAY, "d"),
    (3_600_000_000_000, "h"),
    (60_000_000_000, "m"),
    (1_000_000_000, "s"),
    (1_000_000, "ms"),
    (1_000, "us"),
    (1, "ns"),
];

/// The units durations are written in, largest first, with their length in ns.
pub const DURATION_UNITS: [(u64, &str); 6] = [
    (3_600_000_000_000, "h"),
    (60_000_000_000, "m"),
    (1_000_000_000, "s"),
    (1_000_000, "ms"),
    (1_000, "us"),
    (1, "ns"),
];

/// Formats a duration the way people write it: `1s`, `10ms`, `1.5s`, `250us`.
pub fn format_duration(d: Nanos) -> String {
    let n = d.0;
    if n == 0 {
        return "0s".to_string();
    }
    for (scale, unit) in DURATION_UNITS {
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
        // A day is 24 hours, for daily quotas; it is shown back as hours.
        assert_eq!(parse_duration("1d"), Ok(Nanos(86_400_000_000_000)));
        assert_eq!(parse_duration("1d12h"), Ok(Nanos(129_600_000_000_000)));
        assert_eq!(parse_duration("0.5d"), Ok(Nanos(43_200_000_000_000)));
        assert_eq!(format_duration(parse_duration("1d").unwrap()), "24h");
    }

    /// The largest day count that fits in u64 nanoseconds is taken; one more
    /// day, or a day added to it, is too large, never a wrapped value.
    #[test]
    fn days_at_the_end_of_time() {
        let most = u64::MAX / DAY;
        assert_eq!(most, 213_503);
        assert_eq!(parse_duration(&format!("{most}d")), Ok(Nanos(most * DAY)));
        for text in [format!("{}d", most + 1), format!("{most}d24h"), "99999999999999999999d".to_string()] {
            assert_eq!(parse_duration(&text), Err(TimeParseError::Overflow(text.clone())), "{text}");
        }
        // Each unit once, from the largest down: a day after an hour is not.
        assert!(matches!(parse_duration("1h1d"), Err(TimeParseError::UnitOrder { .. })));
        assert!(matches!(parse_duration("1d1d"), Err(TimeParseError::UnitOrder { .. })));
    }

    #[test]
    fn bad_durations_are_refused_with_reason() {
        assert!(matches!(parse_duration(""), Err(TimeParseError::Empty)));
        assert!(matches!(parse_duration("10"), Err(TimeParseError::BadDuration(_))));
        assert!(matches!(parse_duration("ms"), Err(TimeParseError::BadDuration(_))));
        assert!(matches!(parse_duration("-1s"), Err(TimeParseError::Negative(_))));
        // Minus zero is zero; a second sign, or anything else, is not.
        assert_eq!(parse_duration("-0s"), Ok(Nanos::ZERO));
        assert_eq!(parse_duration("-0ms0ns"), Ok(Nanos::ZERO));
        assert!(matches!(parse_duration("--0s"), Err(TimeParseError::Negative(_))));
        // A zero with no unit lacks the unit, as `0` does: not negative.
        for text in ["-0", "-000", "-0.0", "-.0"] {
            assert_eq!(parse_duration(text), Err(TimeParseError::BadDuration(text.to_string())), "{text}");
        }
        assert!(matches!(parse_duration("-1"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_duration("-0.1"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_duration("-1ns"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_duration("3 days"), Err(TimeParseError::UnknownUnit { .. })));
        assert!(matches!(parse_duration("1w"), Err(TimeParseError::UnknownUnit { .. })));
        // An exponent is named as one, not as the unit `e`.
        for text in ["1e30s", "1E3ms", "1.5e-3s", "1s1e3ms", "2e+2"] {
            assert_eq!(parse_duration(text), Err(TimeParseError::Exponent(text.to_string())), "{text}");
        }
        // A unit that starts with e is still a unit.
        assert!(matches!(parse_duration("1eons"), Err(TimeParseError::UnknownUnit { .. })));
        for text in ["1.7e+09", "1e3", "+1E2"] {
            assert_eq!(
                parse_decimal_seconds(text),
                Err(TimeParseError::Exponent(text.to_string())),
                "{text}"
            );
        }
        assert_eq!(TimeUnit::Ms.parse_timestamp("1e3"), Err(TimeParseError::Exponent("1e3".to_string())));
        assert_eq!(TimeUnit::Ms.parse_timestamp("12x"), Err(TimeParseError::BadInteger("12x".to_string())));
        assert!(matches!(parse_duration("1.5ns"), Err(TimeParseError::SubNanosecond(_))));
        // Parts go from the largest unit down, each unit once: "1s1s" or
        // "1ms1s" is most likely a typo, not a sum.
        for (text, unit, before) in
            [("1s1s", "s", "s"), ("1ms1s", "s", "ms"), ("1m 2h", "h", "m"), ("1us2µs", "µs", "us")]
        {
            let want =
                TimeParseError::UnitOrder { text: text.into(), unit: unit.into(), before: before.into() };
            assert_eq!(parse_duration(text), Err(want), "{text}");
        }
        // A character that is no part of a number or a unit is named.
        for (text, found, before) in [
            ("1h-1s", '-', "1h"),
            ("1_000ms", '_', "1"),
            ("1\u{1b}[2Js", '\u{1b}', "1"),
            ("1s+2ms", '+', "1s"),
        ] {
            let want = TimeParseError::Stray { text: text.into(), found, before: before.into() };
            assert_eq!(parse_duration(text), Err(want), "{text}");
        }
        assert_eq!(
            parse_duration("1_000ms").unwrap_err().to_string(),
            "`1_000ms` has `_` after `1`: write numbers without separators, like \"1000ms\""
        );
        // Quoted escaped, and by their start when long.
        assert_eq!(
            parse_duration("1\u{200b}s").unwrap_err().to_string(),
            "`1\\u{200b}s` has `\\u{200b}` after `1`: a duration is one or more parts, each a number and a unit, written together, like \"10ms\", \"1s\" or \"1m30s\" (units: ns, us or µs, ms, s, m or min, h, d)"
        );
        let long = format!("1{}", "x".repeat(100));
        assert_eq!(
            parse_duration(&long).unwrap_err().to_string(),
            format!(
                "`1{}...` (101 bytes) has an unknown unit `{}...` (100 bytes) (units: ns, us or µs, ms, s, m or min, h, d)",
                "x".repeat(39),
                "x".repeat(40)
            )
        );
        assert_eq!(parse_duration("1h2m3s4ms5us6ns"), Ok(Nanos(3_723_004_005_006)));
        assert!(matches!(parse_duration("99999999999h"), Err(TimeParseError::Overflow(_))));
        assert!(matches!(parse_duration("18446744073709551616ns"), Err(TimeParseError::Overflow(_))));
    }

    /// An unknown unit in another case, or spelt another common way, is
    /// met with the unit it means; the list names every unit taken.
    #[test]
    fn unknown_units_say_the_unit_they_mean() {
        for (text, unit, meant) in [
            ("1S", "S", "s` (seconds"),
            ("1MS", "MS", "ms` (milliseconds"),
            ("1Ms", "Ms", "ms` (milliseconds"),
            ("1H", "H", "h` (hours"),
            ("1MIN", "MIN", "m` (minutes"),
            ("1NS", "NS", "ns` (nanoseconds"),
            ("1\u{39c}S", "\u{39c}S", "us` (microseconds"),
            ("1sec", "sec", "s` (seconds"),
            ("1Secs", "Secs", "s` (seconds"),
            ("2 seconds", "seconds", "s` (seconds"),
            ("1msec", "msec", "ms` (milliseconds"),
            ("5 millis", "millis", "ms` (milliseconds"),
            ("1usec", "usec", "us` (microseconds"),
            ("1nsec", "nsec", "ns` (nanoseconds"),
            ("1hr", "hr", "h` (hours"),
            ("2 hours", "hours", "h` (hours"),
            ("3 minutes", "minutes", "m` (minutes"),
            ("1m30sec", "sec", "s` (seconds"),
            ("1D", "D", "d` (days"),
            ("1day", "day", "d` (days"),
            ("3 days", "days", "d` (days"),
        ] {
            let e = parse_duration(text).unwrap_err();
            assert_eq!(e, TimeParseError::UnknownUnit { text: text.into(), unit: unit.into() }, "{text}");
            assert!(
                e.to_string().ends_with(&format!(
                    "has an unknown unit `{unit}` (units: ns, us or µs, ms, s, m or min, h, d); did you mean `{meant})?"
                )),
                "{e}"
            );
        }
        assert_eq!(
            parse_duration("1 fortnight").unwrap_err().to_string(),
            "`1 fortnight` has an unknown unit `fortnight` (units: ns, us or µs, ms, s, m or min, h, d)"
        );
        // No week unit: a week is said in days.
        for text in ["1w", "2 weeks", "1WK"] {
            assert!(
                parse_duration(text)
                    .unwrap_err()
                    .to_string()
                    .ends_with("; there is no week unit: write 7d for a week"),
                "{text}"
            );
        }
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
        assert!(matches!(parse_decimal_seconds("-0.0000000001"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_decimal_seconds("-+0"), Err(TimeParseError::Negative(_))));
        assert!(matches!(parse_decimal_seconds("--0"), Err(TimeParseError::Negative(_))));
        // Minus zero is zero, in seconds and in every whole unit.
        for text in ["-0", "-000", "-0.000", "-.0", "-0.", " -0 "] {
            assert_eq!(parse_decimal_seconds(text), Ok(Nanos::ZERO), "{text}");
        }
        for unit in [TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns] {
            assert_eq!(unit.parse_timestamp("-0"), Ok(Nanos::ZERO));
            assert_eq!(unit.parse_timestamp("-000"), Ok(Nanos::ZERO));
            assert_eq!(unit.parse_timestamp("-0.0"), Err(TimeParseError::BadInteger("-0.0".into())));
            assert_eq!(unit.parse_timestamp("-1"), Err(TimeParseError::Negative("-1".into())));
            assert_eq!(unit.parse_timestamp("-+0"), Err(TimeParseError::Negative("-+0".into())));
        }
        assert!(matches!(parse_decimal_seconds("1e3"), Err(TimeParseError::Exponent(_))));
        assert!(matches!(parse_decimal_seconds("1x3"), Err(TimeParseError::BadDecimal(_))));
        assert!(matches!(parse_decimal_seconds("abc"), Err(TimeParseError::BadDecimal(_))));
        assert!(matches!(parse_decimal_seconds("."), Err(TimeParseError::BadDecimal(_))));
    }

    /// `time_unit` takes the same spellings of micro as a duration's unit:
    /// `us`, the micro sign (U+00B5) and the Greek mu (U+03BC).
    #[test]
    fn micro_is_spelt_three_ways_in_time_unit_as_in_durations() {
        for text in ["us", "\u{b5}s", "\u{3bc}s"] {
            assert_eq!(TimeUnit::parse(text), Some(TimeUnit::Us), "{text}");
            assert_eq!(parse_duration(&format!("250{text}")), Ok(Nanos(250_000)), "{text}");
        }
        assert_eq!(TimeUnit::parse("\u{3bc}"), None);
        assert_eq!(TimeUnit::parse("sec"), None);
    }

    #[test]
    fn integer_units() {
        assert_eq!(TimeUnit::Ms.parse_timestamp("995"), Ok(Nanos(995_000_000)));
        assert_eq!(TimeUnit::Us.parse_timestamp("3"), Ok(Nanos(3_000)));
        assert_eq!(TimeUnit::Ns.parse_timestamp("3"), Ok(Nanos(3)));
        assert!(TimeUnit::Ms.parse_timestamp("1.5").is_err());
        assert!(TimeUnit::Ms.parse_timestamp("-1").is_err());
    }

    /// A whole number too large is said to be too large in every unit, as
    /// in seconds: past u64 itself, or past it once scaled to nanoseconds.
    #[test]
    fn integer_units_too_large() {
        for unit in [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S] {
            for text in ["99999999999999999999", "18446744073709551616", "+18446744073709551616"] {
                assert_eq!(
                    unit.parse_timestamp(text),
                    Err(TimeParseError::Overflow(text.to_string())),
                    "{text}"
                );
            }
        }
        assert_eq!(
            TimeUnit::Ms.parse_timestamp("18446744073709552"),
            Err(TimeParseError::Overflow("18446744073709552".to_string()))
        );
        assert_eq!(TimeUnit::Ns.parse_timestamp("18446744073709551615"), Ok(Nanos::MAX));
        assert_eq!(TimeUnit::Ms.parse_timestamp("+"), Err(TimeParseError::BadInteger("+".to_string())));
    }

    #[test]
    fn display_is_exact_decimal_seconds() {
        assert_eq!(Nanos(995_000_000).to_string(), "0.995");
        assert_eq!(Nanos(1_000_000_000).to_string(), "1");
        assert_eq!(Nanos(1_000_000_001).to_string(), "1.000000001");
        assert_eq!(Nanos(0).to_string(), "0");
    }

    proptest::proptest! {
        /// A duration of days and smaller parts is their exact sum in
        /// nanoseconds when it fits in u64, and `Overflow` when it does not:
        /// never a wrapped value. What it gives formats back to itself.
        #[test]
        fn days_and_parts_add_up_exactly(
            days in 0u64..300_000,
            hours in 0u64..24,
            ns in 0u64..1_000_000_000,
        ) {
            let text = format!("{days}d{hours}h{ns}ns");
            let exact = u128::from(days) * u128::from(DAY) + u128::from(hours) * 3_600_000_000_000 + u128::from(ns);
            match u64::try_from(exact) {
                Ok(n) => {
                    proptest::prop_assert_eq!(parse_duration(&text), Ok(Nanos(n)));
                    proptest::prop_assert_eq!(parse_duration(&format_duration(Nanos(n))), Ok(Nanos(n)));
                }
                Err(_) => proptest::prop_assert_eq!(parse_duration(&text), Err(TimeParseError::Overflow(text.clone()))),
            }
        }
    }

    #[test]
    fn durations_format_back() {
        for text in ["1s", "10ms", "250us", "1m", "7ns", "2h"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
        assert_eq!(format_duration(Nanos(1_500_000_000)), "1500ms");
    }
}
