//! Counts in words, for messages: `1 entry`, `2 entries`.

/// `n` followed by the noun for it: `one` when `n` is 1, `many` otherwise.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        let words = [0, 1, 2, 11].map(|n| count(n, "entry", "entries"));
        assert_eq!(words, ["0 entries", "1 entry", "2 entries", "11 entries"]);
    }
}
