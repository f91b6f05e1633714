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

/// The date `days` after 1970-01-01.
pub fn from_days(days: i64) -> String {
    let (year, month, day) = mlbench_schema::calendar::civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `text` when it is a date `YYYY-MM-DD` of a real day (so that dates compare as text).
pub fn parse(text: &str) -> Option<&str> {
    mlbench_schema::calendar::parse_date(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_since_the_epoch_are_dates_as_text() {
        assert_eq!(from_days(-1), "1969-12-31");
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
