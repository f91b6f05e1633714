//! Durations as people write them on a command line (`--idle-baseline 30s`): here, below
//! the runner, so that the CLI parses `mlbench run`'s arguments in every build.

use std::time::Duration;

/// A duration given as `30s`, `500ms`, `2m`, `1h` or a number of seconds (`0`, `1.5`).
///
/// # Errors
/// What is wrong with it, in words.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("`{text}`: the unit must be ms, s, m or h")),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}`: not a duration (30s, 500ms, 2m, 0)"))?;
    Duration::try_from_secs_f64(value * scale)
        .map_err(|_| format!("`{text}`: not a duration of zero or more"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_the_units_people_write() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(
            parse_duration("30 parsecs")
                .unwrap_err()
                .contains("the unit")
        );
        assert!(parse_duration("-1s").unwrap_err().contains("zero or more"));
        assert!(parse_duration("s").unwrap_err().contains("not a duration"));
        assert!(parse_duration("").unwrap_err().contains("not a duration"));
    }
}
