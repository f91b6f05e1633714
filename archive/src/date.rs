//! Calendar dates as the index writes them (`2026-12-02`, UTC): today's, and a check
//! that a given one is a real day.

use std::time::{SystemTime, UNIX_EPOCH};

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    from_days((secs / 86_400) as i64)
}

/// The date `days` after 1970-01-01 (Hinnant's `civil_from_days`).
pub fn from_days(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `text` when it is a date `YYYY-MM-DD` of a real day (so that dates compare as text).
pub fn parse(text: &str) -> Option<&str> {
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
    use super::*;

    #[test]
    fn days_since_the_epoch_are_dates() {
        assert_eq!(from_days(0), "1970-01-01");
        assert_eq!(from_days(-1), "1969-12-31");
        // 2000-02-29: 30 years of 365 days, 7 leap days, then January's 31 and 28 more.
        assert_eq!(from_days(30 * 365 + 7 + 31 + 28), "2000-02-29");
        assert_eq!(from_days(20_424), "2025-12-02");
    }

    #[test]
    fn only_real_days_parse() {
        for good in ["2026-12-02", "2024-02-29", "2000-02-29", "1999-12-31"] {
            assert_eq!(parse(good), Some(good));
        }
        for bad in [
            "2026-13-01",
            "2023-02-29",
            "1900-02-29",
            "2026-1-01",
            "2026-12-32",
            "x",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
