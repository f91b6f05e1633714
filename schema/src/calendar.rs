//! Days since 1970-01-01 as calendar dates, for the dates the runner and the archive
//! write, and the check that a `YYYY-MM-DD` is a real day (no date library: one formula,
//! tested on the awkward days).

/// (year, month 1–12, day 1–31) of a count of days since 1970-01-01 (the proleptic
/// Gregorian calendar; H. Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `text` when it is a date `YYYY-MM-DD` of a real day (so that dates compare as text).
pub fn parse_date(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) {
        return None;
    }
    if !digits(8..10) {
        return None;
    }
    let (year, month, day): (u32, u32, u32) = (
        text[..4].parse().ok()?,
        text[5..7].parse().ok()?,
        text[8..].parse().ok()?,
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&day).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::{civil_from_days, parse_date};

    #[test]
    fn days_since_the_epoch_are_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2000-02-29: 30 years of 365 days, 7 leap days, then January's 31 and 28 more.
        assert_eq!(civil_from_days(30 * 365 + 7 + 31 + 28), (2000, 2, 29));
        assert_eq!(civil_from_days(20_424), (2025, 12, 2));
    }

    #[test]
    fn only_real_days_are_dates() {
        for day in ["2024-02-29", "2000-02-29", "2026-12-31"] {
            assert_eq!(parse_date(day), Some(day));
        }
        for not in [
            "2026-02-29",
            "1900-02-29",
            "2026-13-01",
            "2026-04-31",
            "2026-1-01",
            "26-12-03",
            "",
        ] {
            assert_eq!(parse_date(not), None, "{not}");
        }
    }
}
