//! Days since 1970-01-01 as calendar dates, for the dates the runner and the archive
//! write (no date library: one formula, tested on the awkward days).

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

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn days_since_the_epoch_are_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2000-02-29: 30 years of 365 days, 7 leap days, then January's 31 and 28 more.
        assert_eq!(civil_from_days(30 * 365 + 7 + 31 + 28), (2000, 2, 29));
        assert_eq!(civil_from_days(20_424), (2025, 12, 2));
    }
}
