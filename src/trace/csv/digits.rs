//! The digits fast path: a time field of plain ASCII digits (and for
//! seconds one `.`) to nanoseconds without allocation or UTF-8 checks,
//! eight digits at a time.
//!
//! Owns [`parse_plain`] and its SWAR helpers. It is the CSV reader's hot
//! path; anything it does not take (signs, spaces, bad text, overflow) goes
//! to [`TimeUnit::parse_timestamp`] in `crate::time`, the slow path that
//! explains what is wrong.

use crate::time::{Nanos, TimeUnit};

/// The common case without allocation or UTF-8 checks: ASCII digits, and
/// for seconds at most one `.` followed by at most 9 digits. `None` for
/// anything else (including overflow), which [`TimeUnit::parse_timestamp`]
/// then parses or explains; both agree wherever this returns `Some`.
///
/// Reads eight digits at a time (see `eight_digits`); decimal seconds
/// of 8 to 17 bytes with fewer than 8 whole digits, which is what traces
/// hold, take two 8-byte loads in all.
#[inline]
pub fn parse_plain(unit: TimeUnit, bytes: &[u8]) -> Option<Nanos> {
    if unit == TimeUnit::S
        && bytes.len() >= 8
        && let Some(answer) = short_seconds(bytes)
    {
        return answer;
    }
    let (whole_end, frac_start) = match unit {
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
    let scale = match unit {
        TimeUnit::Ns => 1,
        TimeUnit::Us => 1_000,
        TimeUnit::Ms => 1_000_000,
        TimeUnit::S => Nanos::PER_SECOND,
    };
    whole.checked_mul(scale)?.checked_add(frac * POW10[9 - frac_len]).map(Nanos::new)
}

const POW10: [u64; 10] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

/// Eight ASCII `0`s, loaded as [`load8`] loads them.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// [`parse_plain`] in seconds for a text of at least 8 bytes whose first 8
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
    Some(Some(Nanos::new(whole * Nanos::PER_SECOND + frac_ns)))
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

#[cfg(test)]
mod tests {
    use super::*;

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
                if let Some(fast) = parse_plain(unit, text.as_bytes()) {
                    assert_eq!(unit.parse_timestamp(text), Ok(fast), "{unit:?} {text}");
                }
            }
        }
        assert_eq!(parse_plain(TimeUnit::S, b"0.995"), Some(Nanos::new(995_000_000)));
        assert_eq!(parse_plain(TimeUnit::Ms, b"995"), Some(Nanos::new(995_000_000)));
        assert_eq!(parse_plain(TimeUnit::Ms, b"1.5"), None);
        assert_eq!(parse_plain(TimeUnit::S, b"18446744074"), None); // overflows: full parser explains
    }

    proptest::proptest! {
        #[test]
        fn plain_fast_path_never_disagrees(text in "[0-9.]{0,24}", unit in 0usize..4) {
            let unit = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns][unit];
            if let Some(fast) = parse_plain(unit, text.as_bytes()) {
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
        w.checked_mul(scale)?.checked_add(frac_ns).map(Nanos::new)
    }

    const UNITS: [TimeUnit; 4] = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns];

    fn assert_plain_matches_reference(bytes: &[u8]) {
        for unit in UNITS {
            assert_eq!(
                parse_plain(unit, bytes),
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
        assert_eq!(parse_plain(TimeUnit::S, b"18446744073.709551615"), Some(Nanos::new(u64::MAX)));
        assert_eq!(
            parse_plain(TimeUnit::Ns, b"9999999999999999999"),
            Some(Nanos::new(9_999_999_999_999_999_999))
        );
        assert_eq!(parse_plain(TimeUnit::S, b"0.000378780"), Some(Nanos::new(378_780)));
        assert_eq!(parse_plain(TimeUnit::S, b"12345678.123456789"), Some(Nanos::new(12_345_678_123_456_789)));
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
}
